"""Where live moments come from: a LifeTrace database that grows (follower) or a
recorded log played back in accelerated time (replay)."""

from __future__ import annotations

import sqlite3
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

from ..errors import DataError
from ..records import Event
from ..sources.lifetrace import load_lifetrace
from ..sources.lifetrace_schema import (
    connect_read_only,
    find_lifetrace_db,
    opens_immutable,
    read_schema,
    sqlite_problem,
)
from ..sources.load import load_events

__all__ = [
    "MAX_SPEED",
    "MIN_SPEED",
    "REPLAY_SKIP_GAP_SECONDS",
    "Clock",
    "DatabaseFollower",
    "LifeTraceFollower",
    "Moment",
    "ReplayClock",
    "WallClock",
    "replay_moments",
]

MIN_SPEED = 1e-3
"""Slowest replay accepted (times real time; slower would wait beyond what sleep can hold)."""
MAX_SPEED = 1e6
"""Fastest replay accepted other than 0 (no waiting)."""
REPLAY_SKIP_GAP_SECONDS = 1800.0
"""A replay does not wait out a gap between moments longer than this (log seconds: 30 min, e.g.
a night between two sessions, 10 h = 10 min of waiting at ``--speed 60``): its clock jumps to the
next moment and the replay says so. Log time still passes (an open offer counts as ignored after
it, as it would have), only the waiting is skipped; every gap this long is past the default
``--ignore-after`` (10 min), so no answer could have come in it."""


@dataclass(frozen=True)
class Moment:
    """A point at which the live loop decides When to Assist."""

    t: datetime
    """The moment (naive local time of the log)."""
    user: str
    """Whose moment it is."""
    trigger: Literal["event", "tick"]
    """A new event row started at ``t``, or ``--every`` seconds passed within one."""
    history: tuple[Event, ...]
    """The user's events known at ``t`` (at least the context window), oldest first."""
    new_event: Event | None
    """The event whose row started the moment (``trigger="event"``)."""
    noticed: float
    """``time.perf_counter()`` when the row was read (latency is measured from here)."""
    row_id: int | None = None
    """Row id of ``new_event`` in the followed database (``None`` in a replay)."""
    front: bool = False
    """The moment was decided once its window settled in front (:mod:`._settle`): the event in
    front (``new_event``, or the last of ``history`` for a tick) is the current state, not the
    event before it (issue 32)."""
    settled: bool = True
    """``False``: the screen of the window in front never paused for ``--settle`` seconds before
    the next moment (typing, scrolling); the moment is recorded as skipped (``settle``)."""


class WallClock:
    """The loop's clock live: local wall time."""

    def now(self) -> datetime:
        return datetime.now()


class ReplayClock:
    """The loop's clock in a replay: log time, running ``speed`` times faster
    than wall time from the first moment (``speed=0``: no waiting at all, the
    clock stands at the latest moment played)."""

    def __init__(self, speed: float) -> None:
        if not (speed == 0 or MIN_SPEED <= speed <= MAX_SPEED):  # NaN fails both
            raise ValueError(f"speed {speed}: must be 0 or between {MIN_SPEED:g} and {MAX_SPEED:g}")
        self.speed = float(speed)
        self._origin: tuple[datetime, float] | None = None
        self._at: datetime | None = None

    def now(self) -> datetime:
        if self._origin is None:
            return self._at or datetime.now()
        if self.speed == 0:
            return self._at or self._origin[0]
        return self._origin[0] + timedelta(seconds=(time.monotonic() - self._origin[1]) * self.speed)

    def skip_to(self, t: datetime) -> float:
        """Jump the clock forward to ``t`` without waiting (a gap longer than
        :data:`REPLAY_SKIP_GAP_SECONDS`); returns the log seconds skipped (0 when ``t`` is not
        ahead, before the first moment, or at ``speed=0``, which never waits)."""
        if self._origin is None or self.speed == 0:
            return 0.0
        ahead = (t - self.now()).total_seconds()
        if ahead <= 0:
            return 0.0
        self._origin = (t, time.monotonic())
        return ahead

    def wait_until(self, t: datetime, stop: object | None = None) -> None:
        """Sleep (in wall time) until the clock reaches ``t``; ``stop``, a
        :class:`threading.Event`, ends the wait early."""
        if self._origin is None:
            self._origin = (t, time.monotonic())
        self._at = t
        if self.speed == 0:
            return
        delay = (t - self.now()).total_seconds() / self.speed
        if delay > 0:
            if stop is not None:
                stop.wait(delay)  # type: ignore[attr-defined]
            else:
                time.sleep(delay)


Clock = WallClock | ReplayClock
"""Either clock: ``now()`` gives the loop's current time."""


def replay_moments(
    data: str | Path, *, every_seconds: float = 0.0, users: set[str] | None = None, settle_seconds: float | None = None
) -> Iterator[Moment]:
    """Every moment of a recorded log in time order: the start of each event and,
    with ``every_seconds > 0`` on activity logs, a tick every that many seconds
    within an event until the user's next event starts (labelled logs such as
    ProactiveBench get no ticks: each of their events is one observation).

    ``settle_seconds`` (activity logs; ``None``: the benchmark's candidate moments, each at
    its event's start with the event before it as current state): each event that is not
    recorded LLM use is decided once it settled in front (:func:`~._settle.settled_at`: a
    screenshot, then no screen change for ``settle_seconds``) before the next event starts,
    with itself as the current state (``front``); a tick waits for such a pause before the next
    tick. A moment whose screen never paused in time keeps its time and is marked
    ``settled=False`` (the loop records it skipped, ``settle``).

    ``data`` is anything :func:`proagent.sources.load.load_events` reads
    (ProactiveBench sessions, LifeTrace databases or folders).

    Raises:
        DataError: the data cannot be read.
    """
    from ._settle import settled_at

    events = load_events(data)
    by_user: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        if users is None or e.user in users:
            by_user[e.user].append(e)
    timeline: list[tuple[datetime, int, str, int, Literal["event", "tick"], bool, bool]] = []
    for user, evs in by_user.items():
        evs.sort(key=lambda e: e.start)
        labelled = all(e.needs_help is not None for e in evs)
        for i, e in enumerate(evs):
            nxt = evs[i + 1].start if i + 1 < len(evs) else None
            if settle_seconds is None or labelled or e.is_llm_event:
                timeline.append((e.start, 0, user, i, "event", False, True))
            else:
                t = settled_at(e, e.start, nxt or e.end, settle_seconds)
                timeline.append((t or e.start, 0, user, i, "event", True, t is not None))
            if every_seconds > 0 and not labelled:
                stop = nxt if nxt is not None else (e.end or e.start)
                t = e.start + timedelta(seconds=every_seconds)
                while t < stop:
                    if settle_seconds is None:
                        timeline.append((t, 1, user, i, "tick", False, True))
                    else:
                        until = min(stop, t + timedelta(seconds=every_seconds))
                        ts = settled_at(e, t, until, settle_seconds)
                        timeline.append((ts or t, 1, user, i, "tick", True, ts is not None and ts < until))
                    t += timedelta(seconds=every_seconds)
    timeline.sort(key=lambda x: (x[0], x[1], x[2], x[3]))
    for t, _, user, i, trigger, front, settled in timeline:
        evs = by_user[user]
        upto = i + 1  # events started by t (ties: the order of the log)
        yield Moment(
            t=t,
            user=user,
            trigger=trigger,
            history=tuple(evs[:upto]),
            new_event=evs[i] if trigger == "event" else None,
            noticed=time.perf_counter(),
            front=front,
            settled=settled,
        )


class DatabaseFollower:
    """What every follower of a database another process keeps writing shares: one read-only,
    WAL-safe connection kept open (:func:`~proagent.sources.lifetrace_schema.connect_read_only`
    with ``follow``: ``mode=ro``; ``immutable`` while no writer has it open, then opened again
    when one appears, so following a stopped capture leaves no ``-wal``/``-shm``) that asks SQLite
    whether anything was committed since the last look (``PRAGMA data_version``, no table read
    while idle).

    Args:
        path: The database file.
        window_seconds: Context window the moments need (seconds).
        user: User name of the events (default: the reader's, the folder name).

    Raises:
        DataError: missing, foreign or unreadable database.
    """

    def __init__(self, path: Path, *, window_seconds: float, user: str | None) -> None:
        self.path = path
        self.user = user
        self.window_seconds = float(window_seconds)
        self._open()
        self._version: int | None = None
        self.last_change: float | None = None
        """``time.monotonic()`` when a writer's commit was last seen (``None``: none since the start)."""
        self._refreshed: tuple[int | None, str, Moment] | None = None

    def _open(self) -> None:
        """(Re)open the connection. A WAL database with no writer (no ``-wal`` file) is opened
        ``immutable`` (:func:`~proagent.sources.lifetrace_schema.opens_immutable`): following a
        capture that is not recording then leaves no ``-wal``/``-shm`` beside it (a read-only
        connection creates them and cannot remove them; an encrypted capture's too). Such a
        connection sees no later write: :meth:`changed` opens it again once a ``-wal`` file
        appears or the file itself changes (a writer that came and went)."""
        self._immutable = opens_immutable(self.path)
        self._stat = self._file_state()
        try:
            conn = connect_read_only(self.path, follow=True)
        except sqlite3.DatabaseError as e:
            raise DataError(self.path, sqlite_problem(e, self.path)) from None
        old, self._conn = getattr(self, "_conn", None), conn
        if old is not None:
            old.close()
        try:
            self._opened()
        except sqlite3.DatabaseError as e:
            raise DataError(self.path, sqlite_problem(e, self.path)) from None

    def _file_state(self) -> tuple[int, int, int] | None:
        """The database file's inode, size and modification time (ns); ``None`` when it is gone."""
        try:
            st = self.path.stat()
        except OSError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    def _opened(self) -> None:
        """Checks on the open connection (a subclass reads the schema); SQLite errors are mapped."""

    def close(self) -> None:
        self._conn.close()

    def changed(self) -> bool:
        """True when a writer committed since the last call (cheap: no table is read)."""
        if self._immutable and (Path(str(self.path) + "-wal").exists() or self._file_state() != self._stat):
            self._open()  # a writer started (or came and went): read what it wrote from now on
            self._version = None if self._version is None else -1  # the new connection's count is not comparable
        v = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
        changed = v != self._version
        if changed and self._version is not None:  # the first look only sets the baseline
            self.last_change = time.monotonic()
        self._version = v
        return changed

    def growing(self, within_seconds: float) -> bool:
        """True when a writer committed within the last ``within_seconds`` (a capture that
        stopped, or writes nothing while the user is idle, is not growing)."""
        return self.last_change is not None and time.monotonic() - self.last_change < within_seconds

    def refresh(self, m: Moment) -> Moment:
        """``m`` with its events as the log holds them now (the event in front with the
        screenshots and screen text written since), for a moment waiting to settle in front.
        The log is read again only after a writer committed (``PRAGMA data_version``)."""
        front = m.new_event or (m.history[-1] if m.history else None)
        if front is None:
            return m
        cached = self._refreshed
        if cached is not None and cached[0] == self._version and cached[1] == front.id:
            return replace(cached[2], t=m.t, trigger=m.trigger, noticed=m.noticed)
        evs = self._events_from(int(front.id))
        e = next((x for x in evs if x.id == front.id), None)
        if e is None:  # soft-deleted meanwhile: as it was
            return m
        fresh = replace(m, history=tuple(evs), new_event=e if m.new_event is not None else None)
        self._refreshed = (self._version, front.id, fresh)
        return fresh

    def _events_from(self, event_id: int) -> list[Event]:
        """The user's events of the context window that reaches back from event ``event_id`` on."""
        return []

    def recorder_stopped(self) -> bool:
        """True once the recorder writing the log was seen running and has stopped (a moment
        still waiting to settle then is not decided: nothing after the stop is known)."""
        return False


class LifeTraceFollower(DatabaseFollower):
    """Follows a LifeTrace database that another process (LifeTrace,
    ``proagent capture``) keeps writing.

    Read-only and WAL-safe: one connection is kept open (``mode=ro``, as
    :class:`DatabaseFollower`) only to ask SQLite whether anything was committed since the
    last look (``PRAGMA data_version``, no table read while idle); when it was,
    the new event rows are found by id (``id > last seen``) and the recent window
    is read with the project's reader (:func:`~proagent.sources.lifetrace.load_lifetrace`
    with ``min_event_id``), so schema variants, soft deletes and OCR follow the
    same rules as offline. Every new row becomes one moment, in id order.

    Args:
        db: The database, or a folder holding it (a capture folder).
        last_id: Row id already handled (restart: pass what was stored; the
            moments of rows written while the loop was down are all produced);
            ``None`` starts at the rows present now (history is not re-decided).
        window_seconds, user: as :class:`DatabaseFollower`.

    Raises:
        DataError: missing, foreign or unreadable database (or not LifeTrace).
    """

    def __init__(
        self, db: str | Path, *, last_id: int | None = None, window_seconds: float = 300.0, user: str | None = None
    ) -> None:
        super().__init__(find_lifetrace_db(db), window_seconds=window_seconds, user=user)
        self.last_id = self._max_id() if last_id is None else int(last_id)
        self._lo: int | None = None
        self._recorder_seen = self._recorder_running()
        """A ``proagent capture`` recorder was seen running in the database's folder."""

    def _opened(self) -> None:
        self.schema = read_schema(self._conn, self.path)

    def _max_id(self) -> int:
        row = self._conn.execute('SELECT max(id) FROM "events"').fetchone()
        return int(row[0] or 0)

    def growing(self, within_seconds: float) -> bool:
        """:meth:`DatabaseFollower.growing` and, in a ``proagent capture`` folder whose recorder
        was seen running, that recorder still runs (its ``capture.lock`` is held): once capture
        stops nothing more is decided, not even within the last ``within_seconds`` (issue 21:
        no decision after capture stops)."""
        if not super().growing(within_seconds):
            return False
        running = self._recorder_running()
        self._recorder_seen = self._recorder_seen or running
        return running or not self._recorder_seen

    def recorder_stopped(self) -> bool:
        """:meth:`DatabaseFollower.recorder_stopped`: a ``proagent capture`` recorder of this
        folder was seen running and no longer holds its lock."""
        if not self._recorder_seen:
            self._recorder_seen = self._recorder_running()
            return False
        return not self._recorder_running()

    def _recorder_running(self) -> bool:
        """A ``proagent capture`` recorder holds the lock of the database's folder."""
        from ..capture import recorder_pid  # only here: live reads logs of any writer

        return recorder_pid(self.path.parent) is not None

    def _window(self, newest: datetime | None, first_new: int | None = None) -> list[Event]:
        """Events from the start of the context window on (row ids >= a bound that
        is widened until the first event read lies before the window of the
        oldest moment needed: ``newest``, or the start of row ``first_new``)."""
        top = self._max_id()
        lo = self._lo if self._lo is not None else max(1, min(self.last_id + 1, top) - 64)
        if first_new is not None:
            lo = min(lo, max(1, first_new - 1))
        while True:
            evs = list(load_lifetrace(self.path, user=self.user, min_event_id=lo, resolve_files=False).events)
            if lo <= 1 or not evs:
                break
            first = min(evs, key=lambda e: e.start)
            need = next((e.start for e in evs if first_new is not None and int(e.id) >= first_new), None)
            ref = newest or need or max(e.start for e in evs)
            if first.start < ref - timedelta(seconds=self.window_seconds):
                break
            lo = max(1, lo - max(64, top - lo))
        ref = newest or (max(e.start for e in evs) if evs else None)
        if ref is not None:
            # the next read starts at the oldest event still overlapping the window
            keep = [int(e.id) for e in evs if (e.end or ref) >= ref - timedelta(seconds=self.window_seconds)]
            self._lo = max(lo, min(keep) - 1) if keep else lo
        return evs

    def _events_from(self, event_id: int) -> list[Event]:
        return self._window(None, event_id)

    def poll(self) -> list[Moment]:
        """Moments of the event rows committed since the last poll (none while idle)."""
        if not self.changed():
            return []
        noticed = time.perf_counter()
        new_ids = [
            int(r[0]) for r in self._conn.execute('SELECT id FROM "events" WHERE id > ? ORDER BY id', (self.last_id,))
        ]
        if not new_ids:
            return []
        evs = self._window(None, new_ids[0])
        by_id = {int(e.id): e for e in evs}
        out = []
        for rid in new_ids:
            e = by_id.get(rid)
            if e is not None:  # soft-deleted or excluded rows are no moment
                hist = tuple(x for x in evs if x.start <= e.start)
                out.append(
                    Moment(
                        t=e.start, user=e.user, trigger="event", history=hist, new_event=e, noticed=noticed, row_id=rid
                    )
                )
            self.last_id = max(self.last_id, rid)
        return out

    def tick(self, now: datetime) -> Moment | None:
        """A moment at ``now`` within the event in progress (``--every``), or ``None``
        when the log has no events."""
        noticed = time.perf_counter()
        evs = self._window(now)
        evs = [e for e in evs if e.start <= now]
        if not evs:
            return None
        return Moment(t=now, user=evs[-1].user, trigger="tick", history=tuple(evs), new_event=None, noticed=noticed)
