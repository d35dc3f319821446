"""Following a growing ActivityWatch or screenpipe database (``proagent live --watch``), as
:class:`~._sources.LifeTraceFollower` follows a LifeTrace one, and the choice between them."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path

from ..errors import DataError
from ..records import Event
from ..sources.lifetrace_schema import DB_NAMES, detect_schema, find_lifetrace_db
from ..sources.load import LIFETRACE, activity_log_kind, load_activity_log, recorder_folder_db
from ._feedback import FEEDBACK_DB
from ._sources import DatabaseFollower, LifeTraceFollower, Moment

__all__ = ["ActivityLogFollower", "open_follower", "watched_log"]

MARGIN_SECONDS = 600.0
"""How far before the context window a re-read starts (seconds): an event that began before the
window but still overlaps it is read whole (this project's choice)."""


def watched_log(watch: str | Path) -> tuple[Path, str]:
    """The database ``--watch`` names and its kind (``lifetrace``, ``activitywatch``,
    ``screenpipe``): a file, or a recorder's own folder (a registered reader's ``folder_db``:
    screenpipe's ``db.sqlite``), or a folder holding one LifeTrace /
    ActivityWatch database. Checked read-only.

    Raises:
        DataError: nothing there, a foreign or unreadable database, or an ActivityWatch JSON
            export (a file that does not grow: ``--replay`` it).
    """
    p = Path(watch)
    own = recorder_folder_db(p) if p.is_dir() else None  # a recorder's own folder (~/.screenpipe), from the readers
    if own is not None:
        db = own
    elif p.is_dir() and not any((p / n).is_file() for n in DB_NAMES):
        # the agent's own feedback.db sits beside the log it watches (--out defaults to its folder)
        dbs = sorted(x for x in p.glob("*.db") if x.is_file() and x.name != FEEDBACK_DB)
        db = dbs[0] if len(dbs) == 1 else find_lifetrace_db(p)
    else:
        db = find_lifetrace_db(p)
    if db.suffix.lower() == ".json":
        raise DataError(db, "an ActivityWatch export does not grow; play it with --replay, or --watch the database")
    kind = activity_log_kind(db)
    if kind == LIFETRACE:
        detect_schema(db)
    else:
        load_activity_log(db, since=datetime.now())  # tables and cells readable
    return db, kind


class ActivityLogFollower(DatabaseFollower):
    """Follows an ActivityWatch or screenpipe database another process keeps writing.

    Read-only and WAL-safe (:class:`~._sources.DatabaseFollower`): when a writer committed, the recent
    window is read again with the project's reader (:func:`~proagent.sources.load.load_activity_log`
    with ``since``) and every event whose id (its first row's id) is above the last handled one is
    a moment, in id order. ActivityWatch extends its newest row in place with every heartbeat, so
    an event is decided when it starts, not again as it grows.

    Args:
        db: The database file.
        last_id: Event id already handled (restart); ``None`` starts at the events present now.
        window_seconds, user: as :class:`~._sources.DatabaseFollower`.

    Raises:
        DataError: missing, foreign or unreadable database.
    """

    def __init__(
        self, db: str | Path, *, last_id: int | None = None, window_seconds: float = 300.0, user: str | None = None
    ) -> None:
        super().__init__(Path(db), window_seconds=window_seconds, user=user)
        self._since: datetime | None = None
        if last_id is None:
            evs = self._read()  # one full read: where the log stands now
            self.last_id = max((int(e.id) for e in evs), default=0)
            self._advance(evs)
        else:
            self.last_id = int(last_id)  # the first poll reads everything once, then the window

    def _read(self, since: datetime | None = None) -> list[Event]:
        return sorted(
            load_activity_log(self.path, user=self.user, since=since).events, key=lambda e: (e.start, int(e.id))
        )

    def _advance(self, evs: list[Event]) -> None:
        handled = [e.start for e in evs if int(e.id) <= self.last_id]
        if handled:
            since = max(handled) - timedelta(seconds=self.window_seconds + MARGIN_SECONDS)
            self._since = since if self._since is None else max(self._since, since)

    def _events_from(self, event_id: int) -> list[Event]:
        return self._read(self._since)

    def poll(self) -> list[Moment]:
        """Moments of the events committed since the last poll (none while idle)."""
        if not self.changed():
            return []
        noticed = time.perf_counter()
        since = self._since
        evs = self._read(since)
        # the first event read from a bound may be cut at it (its first rows unread): never new
        fresh = [
            e for e in evs if int(e.id) > self.last_id and (since is None or e.start >= since + timedelta(seconds=60))
        ]
        out = []
        for e in sorted(fresh, key=lambda e: int(e.id)):
            hist = tuple(x for x in evs if x.start <= e.start)
            out.append(
                Moment(
                    t=e.start,
                    user=e.user,
                    trigger="event",
                    history=hist,
                    new_event=e,
                    noticed=noticed,
                    row_id=int(e.id),
                )
            )
            self.last_id = max(self.last_id, int(e.id))
        self._advance(evs)
        return out

    def tick(self, now: datetime) -> Moment | None:
        """A moment at ``now`` within the event in progress (``--every``), or ``None`` when the
        log has no events."""
        noticed = time.perf_counter()
        evs = [e for e in self._read(now - timedelta(seconds=self.window_seconds + MARGIN_SECONDS)) if e.start <= now]
        if not evs:
            return None
        return Moment(t=now, user=evs[-1].user, trigger="tick", history=tuple(evs), new_event=None, noticed=noticed)


def open_follower(
    db: str | Path, *, last_id: int | None = None, window_seconds: float = 300.0, user: str | None = None
) -> LifeTraceFollower | ActivityLogFollower:
    """The follower for ``db``'s kind (:func:`watched_log`).

    Raises:
        DataError: as :func:`watched_log`.
    """
    path, kind = watched_log(db)
    cls = LifeTraceFollower if kind == LIFETRACE else ActivityLogFollower
    return cls(path, last_id=last_id, window_seconds=window_seconds, user=user)
