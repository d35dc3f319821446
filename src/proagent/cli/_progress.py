"""Progress of a long command where a person waits (issue 36 item 5): a rich bar on a terminal,
a plain line every :data:`PLAIN_EVERY_SECONDS` when the output is piped or logged (as ``eval``
does through inspect's display), each with the time elapsed and an estimate of the time left.

Used by ``live --replay`` (moments played), ``annotate`` and ``ablate`` (samples of the inspect
run; :mod:`proagent.bench.progress` counts them).
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

import click

from ..bench.progress import duration_text, estimate_left

__all__ = ["PLAIN_EVERY_SECONDS", "ProgressDisplay", "SampleLines"]

PLAIN_EVERY_SECONDS = 30.0
"""Seconds between two plain progress lines (piped output); the last line always comes."""


class ProgressDisplay:
    """How far a long command got: ``update(done, detail, left)`` as often as convenient.

    ``rich=None`` picks a rich bar when ``stream`` is a terminal and plain lines otherwise;
    ``rich=False`` forces plain lines (a terminal where something else reads answers or draws its
    own display, e.g. inspect's). Plain lines are printed at most every ``every`` seconds (and by
    :meth:`close` when something was left unsaid after earlier lines); each reads
    ``WHAT: DONE of TOTAL UNIT[, DETAIL], ELAPSED elapsed[, about LEFT left]``.
    """

    def __init__(
        self,
        what: str,
        total: int | None,
        *,
        unit: str = "",
        rich: bool | None = None,
        every: float | None = None,
        stream: TextIO | None = None,
    ) -> None:
        self.what, self.total, self.unit = what, total, unit
        self.stream = stream if stream is not None else sys.stderr
        self.every = PLAIN_EVERY_SECONDS if every is None else every
        self.start = time.monotonic()
        self._last_line = self.start
        self._unsaid: str | None = None
        self._said = False
        self._lock = threading.Lock()
        tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar: Any = None
        if tty if rich is None else rich and tty:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(unit),
                TimeElapsedColumn(),
                TextColumn("{task.fields[left]}"),
                console=Console(file=self.stream),
                transient=True,
            )
            self._task = self._bar.add_task(what, total=total, left="")
            self._bar.start()

    def line(self, done: int, detail: str = "", left: float | None = None) -> str:
        """The plain line for this state (see the class)."""
        of = f" of {self.total}" if self.total is not None else ""
        text = f"{self.what}: {done}{of}{' ' + self.unit if self.unit else ''}"
        if detail:
            text += f", {detail}"
        text += f", {duration_text(time.monotonic() - self.start)} elapsed"
        if left is not None and (self.total is None or done < self.total):
            text += f", about {duration_text(left)} left"
        return text

    def update(self, done: int, detail: str = "", left: float | None = None, *, force: bool = False) -> None:
        """Show ``done`` (of ``total``); ``force``: print the plain line now whatever the interval."""
        with self._lock:
            if self._bar is not None:
                self._bar.update(
                    self._task,
                    completed=done,
                    total=self.total,
                    description=f"{self.what}{': ' + detail if detail else ''}",
                    left=f"about {duration_text(left)} left"
                    if left is not None and (self.total is None or done < self.total)
                    else "",
                )
                return
            text = self.line(done, detail, left)
            now = time.monotonic()
            if force or now - self._last_line >= self.every:
                click.echo(text, file=self.stream)
                self._last_line, self._unsaid, self._said = now, None, True
            else:
                self._unsaid = text

    def say(self, text: str) -> None:
        """One line of its own (above the bar on a terminal)."""
        with self._lock:
            if self._bar is not None:
                self._bar.console.print(text, markup=False, highlight=False)
            else:
                click.echo(text, file=self.stream)

    def close(self) -> None:
        """Stop the bar; plain output gets its last line if one was left unsaid (only after earlier
        lines: a command shorter than the interval prints none)."""
        with self._lock:
            if self._bar is not None:
                self._bar.stop()
                self._bar = None
            elif self._unsaid is not None and self._said:
                click.echo(self._unsaid, file=self.stream)
                self._unsaid = None


class SampleLines:
    """A :class:`~proagent.bench.progress.SampleListener` that shows each inspect task's samples
    as a :class:`ProgressDisplay` (``WHAT: 3 of 21 UNIT, 2 min elapsed, about 9 min left``)."""

    def __init__(self, what: str, unit: str, *, rich: bool | None = None, total: int | None = None) -> None:
        self.what, self.unit, self.rich, self.total = what, unit, rich, total
        self.display: ProgressDisplay | None = None

    def task_start(self, total: int | None) -> None:
        self.task_end()
        self.display = ProgressDisplay(
            self.what, self.total if self.total is not None else total, unit=self.unit, rich=self.rich
        )

    def sample_end(self, done: int) -> None:
        d = self.display
        if d is not None:
            d.update(done, left=estimate_left(time.monotonic() - d.start, done, d.total))

    def task_end(self) -> None:
        if self.display is not None:
            self.display.close()
            self.display = None
