"""The decider as the first stage of the hierarchical pipeline (ProAgentBench section 3).

:func:`decider_gate` wraps the How-to-Assist solvers: at each moment the decider
decides When; at a No the moment is answered "Need help: No" with **no model
call**; at a Yes the wrapped solvers run (memory context, then the prompting
method) and their intention and query are kept, with the decision set to Yes.
The decision, its probability and its latency go to ``state.metadata["decider"]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace

from inspect_ai.solver import Generate, Solver, TaskState, solver

from ...records import Prediction, Sample
from ._model import Decider

__all__ = ["decider_gate"]


@solver
def decider_gate(decider: Decider, samples: Mapping[str, Sample], inner: Sequence[Solver]) -> Solver:
    """Decide When with ``decider``; run ``inner`` (How to Assist) only at Yes moments.

    Args:
        decider: a loaded decider.
        samples: the task's samples by id (the decider reads the moment, not the prompt).
        inner: the solvers to run at Yes moments, in order.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        sample = samples[str(state.sample_id)]
        d = decider.decide(sample)
        state.metadata["decider"] = {
            "p_yes": d.p_yes,
            "needs_help": d.needs_help,
            "threshold": d.threshold,
            "latency_ms": d.latency_ms,
        }
        if not d.needs_help:
            pred = Prediction(
                str(state.sample_id),
                False,
                parse_method="decider",
                p_yes=d.p_yes,
                raw="Need help: No (decided by the When-to-Assist decider; no model call)",
            )
            state.metadata["prediction"] = asdict(pred)
            return state
        for s in inner:
            state = await s(state, generate)
        how = state.metadata.get("prediction") or {}
        pred = Prediction(
            str(state.sample_id),
            True,
            intention=how.get("intention"),
            query=how.get("query"),
            confidence=how.get("confidence"),
            parse_method="decider",
            raw=how.get("raw", ""),
            p_yes=d.p_yes,
        )
        state.metadata["prediction"] = asdict(replace(pred))
        return state

    return solve
