"""What the readers of other recorders' data share: their result record (and the base record of
every reader's, :class:`EventLog`), UTC times turned into
proagent's naive local times, and cell errors that name the file, table, row and column (the
LifeTrace reader's rule)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..records import Event
from ._lifetrace_values import EARLIEST, LATEST

__all__ = [
    "MAX_EVENT_SECONDS",
    "ActivityLog",
    "EventLog",
    "bad_cell",
    "event_seconds",
    "local_from_epoch",
    "local_from_iso",
    "table_columns",
]

MAX_EVENT_SECONDS = 7 * 24 * 3600.0
"""Longest event a reader accepts (seconds; a week). ProAgentBench reviews events over an hour
(section B.3), and an ActivityWatch window or AFK event longer than a week is a unit mistake
(milliseconds or nanoseconds read as seconds), not a person's activity."""

_FRACTION = re.compile(r"(\.\d{6})\d+")


@dataclass(frozen=True)
class EventLog:
    """What every reader returns: one log read in full, the events plus what was dropped."""

    path: Path
    """The database or export file."""
    user: str
    """User the events were assigned to (the folder holding the file)."""
    events: tuple[Event, ...]
    """Events, oldest first (excluded ones removed)."""
    excluded: Mapping[str, str] = field(default_factory=dict)
    """Event id -> exclusion reason, for events dropped by annotations."""


@dataclass(frozen=True, kw_only=True)
class ActivityLog(EventLog):
    """One recorder's log (ActivityWatch, screenpipe) read in full."""

    kind: str
    """Which format: ``activitywatch`` (with its flavour, e.g. ``activitywatch/aw-server-rust``) or ``screenpipe``."""
    counts: Mapping[str, int] = field(default_factory=dict)
    """What was read and skipped, by name (e.g. ``afk_dropped``, ``frames``)."""


def local_from_epoch(value: Any, per_second: int) -> datetime:
    """A UTC epoch count (``per_second`` units per second: 10**9 for nanoseconds) as naive local time.

    Raises:
        ValueError: not an integer, or out of range.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{value!r} is not an integer epoch time")
    try:
        secs, rest = divmod(value, per_second)
        t = datetime.fromtimestamp(secs).replace(microsecond=rest * 1_000_000 // per_second)
    except (OverflowError, OSError, ValueError):
        raise ValueError(f"{value} is out of range as a time") from None
    return _plausible(t, value)


def local_from_iso(value: Any) -> datetime:
    """An ISO 8601 time with an offset (``Z`` or ``+00:00``; ``T`` or space; up to 9 fraction
    digits, extra ones truncated) as naive local time. A time with no offset is refused: these
    recorders write UTC, and a naive one would be silently shifted.

    Raises:
        ValueError: not such a time.
    """
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a time string")
    text = _FRACTION.sub(r"\1", value.strip())
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO 8601 time") from None
    if t.tzinfo is None:
        raise ValueError(f"{value!r} has no UTC offset")
    try:
        local = t.astimezone().replace(tzinfo=None)
    except (OverflowError, OSError, ValueError):  # 9999-12-31Z east of UTC
        raise ValueError(f"{value!r} is out of range as a time") from None
    return _plausible(local, value)


def event_seconds(value: Any) -> float:
    """A duration in seconds, as the readers accept it: a finite number from 0 to
    :data:`MAX_EVENT_SECONDS` (a number written as a string too).

    Raises:
        ValueError: anything else (``1e300`` overflowed the end time's arithmetic).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{value!r} is not a number of seconds")
    try:
        s = float(value)
    except (ValueError, OverflowError):
        raise ValueError(f"{value!r} is not a number of seconds") from None
    if not 0 <= s <= MAX_EVENT_SECONDS:
        raise ValueError(f"{value!r} is not a duration from 0 to {MAX_EVENT_SECONDS:.0f} seconds (a week)")
    return s


def _plausible(t: datetime, value: object) -> datetime:
    """``t`` when it is within the readers' one range of times (:data:`EARLIEST` .. :data:`LATEST`,
    the LifeTrace and ProactiveBench rule)."""
    if not EARLIEST <= t < LATEST:
        raise ValueError(f"time {value!r} is outside {EARLIEST.year}-{LATEST.year}")
    return t


def bad_cell(path: Path, table: str, row_id: Any, column: str, problem: str) -> DataError:
    """The error of one bad cell, worded as the LifeTrace reader words it."""
    return DataError(path, f"table {table}, row id {row_id}, column {column}: {problem}")


def table_columns(conn: sqlite3.Connection) -> dict[str, frozenset[str]]:
    """Table name -> its column names (lower case) of an open database."""
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {n: frozenset(str(r[1]).lower() for r in conn.execute(f'PRAGMA table_info("{n}")')) for n in names}
