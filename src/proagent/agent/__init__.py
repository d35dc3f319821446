"""The assistant that answers each moment: prompts (:mod:`.prompting`, ``prompts/*.txt``), the
answer-parsing cascade (:mod:`.parsing`), the prompting methods as inspect solvers
(:mod:`.solvers`: zero-shot, chain of thought, self-consistency), P(Yes) calibration
(:mod:`.calibration`), template-echo detection (:mod:`.echo`), long-term memory
(:mod:`.memory`) and the learned When decider (:mod:`.decider`).

Import from the modules: importing this package loads nothing (the solvers pull in inspect_ai,
the decider sklearn), so ``agent.memory`` or ``agent.prompting`` stay cheap on their own.
"""

__all__ = ["calibration", "decider", "echo", "memory", "parsing", "prompting", "solvers"]
