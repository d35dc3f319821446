"""The solver step that puts memory into the prompt."""

from __future__ import annotations

from inspect_ai.solver import Generate, Solver, TaskState, solver

from ...records import Sample
from ..prompting import memory_block, with_memory
from ._base import Memory
from .records import query_for

__all__ = ["memory_context"]


@solver
def memory_context(memory: Memory, samples: dict[str, Sample]) -> Solver:
    """Prepend the memory block of each moment to its user message.

    Runs before the method's solver. For every sample it (once per user) lets the
    memory finish its build with the evaluated model (personas), looks the moment
    up (only its user, only records known strictly before t) and records the item
    ids in ``state.metadata["memory"]``."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        sample = samples.get(str(state.sample_id))
        if sample is None:
            return state
        await memory.prepare(sample.user)
        items = memory.lookup(query_for(sample))
        block = memory_block(memory.source, [it.text for it in items])
        for i, m in enumerate(state.messages):
            if m.role == "user" and isinstance(m.content, str):
                m.content = with_memory(m.content, block)
                state.messages[i] = m
                break
        state.metadata["memory"] = {
            "kind": memory.name,
            "items": [it.id for it in items],
            "known_at": [it.known_at.isoformat() for it in items],
        }
        return state

    return solve
