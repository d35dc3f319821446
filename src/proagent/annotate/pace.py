"""The pace of an annotation run, for its progress lines (issue 47 item 4: a run's estimate said
"about 6 min left" while 3 model calls did not finish in 45 min at load 10-18).

The time left comes from the calls that finished, measured on this machine now: seconds per event
are the time from the first event's end to the last one's over the events between them (the first
event's own time holds the model's loading and is used only while it is the only one), and an
event running longer than that pace raises it (the machine got slower: the estimate grows while
nothing finishes, instead of holding a figure the run has already outlived).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

__all__ = ["Pace"]


@dataclass
class Pace:
    """Seconds per finished event and the estimate of the time left.

    ``start()`` when the model run starts, ``finished()`` after each event; ``clock`` is
    :func:`time.monotonic` unless a test passes another.
    """

    total: int
    """Events the run asks the model about."""
    clock: object = time.monotonic
    started: float | None = None
    ends: list[float] = field(default_factory=list)

    def _now(self) -> float:
        return float(self.clock())  # type: ignore[operator]

    def start(self) -> None:
        """The run started (the model is being loaded)."""
        self.started = self._now()
        self.ends.clear()

    def finished(self) -> None:
        """One more event finished."""
        self.ends.append(self._now())

    @property
    def done(self) -> int:
        """Events finished so far."""
        return len(self.ends)

    def per_event(self) -> float | None:
        """Measured seconds per event (``None`` before the first event ends)."""
        if not self.ends or self.started is None:
            return None
        if len(self.ends) == 1:
            return self.ends[0] - self.started
        return (self.ends[-1] - self.ends[0]) / (len(self.ends) - 1)

    def running(self) -> float:
        """Seconds the event now being annotated has run (since the last one ended, or the start)."""
        since = self.ends[-1] if self.ends else self.started
        return 0.0 if since is None else self._now() - since

    def left(self) -> float | None:
        """Seconds still to go at the measured pace, ``None`` before the first event ends; 0 when
            all are done. The events still to start count at the larger of the pace and the running
        event's time so far."""
        per = self.per_event()
        if per is None:
            return None
        todo = self.total - self.done
        if todo <= 0:
            return 0.0
        run = self.running()
        pace = max(per, run)
        # the running event: what its pace leaves of it (a tenth of the pace once it outlived it)
        return max(per - run, 0.1 * pace) + pace * (todo - 1)
