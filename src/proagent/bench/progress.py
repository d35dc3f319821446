"""How far an inspect run got, for the progress lines of ``annotate`` and ``ablate`` (issue 36
item 5: inspect's display shows ``Steps: 3/21`` with no estimate, and ``ablate`` runs its cells
with no display at all).

Through inspect_ai's public hooks (``inspect_ai.hooks``: ``on_task_start``, ``on_sample_end``,
``on_task_end``), registered once, on the first :func:`sample_progress`, and enabled only while
one is active. Runs on a Ray cluster (``--ray``) run their samples in other processes and report
nothing here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

__all__ = ["SampleListener", "duration_text", "estimate_left", "sample_progress"]


def duration_text(seconds: float) -> str:
    """``42 s``, ``12 min``, ``3.5 h``: a duration as a person reads it in a progress line."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def estimate_left(elapsed: float, done: int, total: int | None) -> float | None:
    """Seconds still to go at the mean pace so far (``elapsed / done`` per item); ``None`` before
    the first item or without a total."""
    if not done or total is None:
        return None
    return max(0.0, elapsed / done * (total - done))


class SampleListener(Protocol):
    """What :func:`sample_progress` tells: a task started (its sample count, ``None`` when
    inspect does not say), a sample ended (samples ended so far in this task), the task ended."""

    def task_start(self, total: int | None) -> None: ...

    def sample_end(self, done: int) -> None: ...

    def task_end(self) -> None: ...


_active: list[SampleListener] = []
_lock = threading.Lock()
_registered = False
_done: dict[str, int] = {}


def _total(spec: Any) -> int | None:
    """Samples the task will run: the data set's, cut by ``limit`` (a count or a range), times epochs."""
    n = getattr(getattr(spec, "dataset", None), "samples", None)
    config = getattr(spec, "config", None)
    limit = getattr(config, "limit", None)
    if isinstance(limit, int):
        n = limit if n is None else min(n, limit)
    elif isinstance(limit, (tuple, list)) and len(limit) == 2:
        n = max(0, int(limit[1]) - int(limit[0]))
    epochs = getattr(config, "epochs", None) or 1
    return None if n is None else int(n) * int(epochs)


def _register() -> None:
    global _registered
    with _lock:
        if _registered:
            return
        _registered = True
    from inspect_ai.hooks import Hooks, SampleEnd, TaskEnd, TaskStart, hooks

    @hooks(name="proagent_progress", description="proagent's progress lines (annotate, ablate)")
    class _Progress(Hooks):
        def enabled(self) -> bool:
            return bool(_active)

        async def on_task_start(self, data: TaskStart) -> None:
            _done[data.eval_id] = 0
            for listener in list(_active):
                listener.task_start(_total(data.spec))

        async def on_sample_end(self, data: SampleEnd) -> None:
            _done[data.eval_id] = _done.get(data.eval_id, 0) + 1
            for listener in list(_active):
                listener.sample_end(_done[data.eval_id])

        async def on_task_end(self, data: TaskEnd) -> None:
            _done.pop(data.eval_id, None)
            for listener in list(_active):
                listener.task_end()


@contextmanager
def sample_progress(listener: SampleListener) -> Iterator[SampleListener]:
    """While inside, ``listener`` hears of every inspect task run in this process: its start, each
    sample's end, its end (from inspect's event loop: keep the calls short)."""
    _register()
    _active.append(listener)
    try:
        yield listener
    finally:
        _active.remove(listener)
