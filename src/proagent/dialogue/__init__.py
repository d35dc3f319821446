"""The ProactiveEval track (Liu et al. 2025, arXiv 2508.20973): proactive dialogue.

* :mod:`.records`, :mod:`.io`: environments (ProactiveEval items), JSON/JSONL and
  the published ``dataset/{domain}/{fair,hard}.json`` layout.
* :mod:`.planning`: target planning task ``proagent/dialogue_plan``.
* :mod:`.guidance`: dialogue guidance task ``proagent/dialogue_guide``.
* :mod:`.judges`, :mod:`.parsing`, :mod:`.prompting`: judges, simulated user,
  answer parsing, prompt templates (``prompts/*.txt``).
* :mod:`.analysis`, :mod:`.kappa`: target density, leaks, passive openings,
  judge-human agreement.
* :mod:`.generator`: new environments (``proagent dialogue generate``).
* :mod:`.report`: ``results.json``, tables, HTML.
* :mod:`proagent.cli.dialogue`: the ``dialogue`` click group.
"""

from . import records
from .io import read_environments, write_environments, write_layout
from .records import *  # noqa: F403  (the records' names, listed once in records.__all__)

__all__ = [*records.__all__, "read_environments", "write_environments", "write_layout"]
