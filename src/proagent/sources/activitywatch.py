"""Reader for ActivityWatch data: its SQLite database and its JSON export.

ActivityWatch keeps *buckets* of *events* (``timestamp``, ``duration``, a JSON ``data`` object),
one bucket per watcher. Three on-disk layouts exist, all read here (detected from the tables):

``aw-server-rust`` (the default server since v0.12, ``.../aw-server-rust/sqlite.db``)
    ``buckets(id INTEGER, name TEXT UNIQUE, type, client, hostname, created, data)``,
    ``events(id, bucketrow -> buckets.id, starttime, endtime, data)``, times in UTC
    nanoseconds since the epoch (``aw-datastore/src/datastore.rs``); the bucket id string is
    ``buckets.name``.
``aw-server-sqlite`` (aw-server, Python, ``aw_datastore`` ``SqliteStorage``)
    ``buckets(rowid, id TEXT UNIQUE, name, type, client, hostname, created, datastr)``,
    ``events(id, bucketrow -> buckets.rowid, starttime, endtime, datastr)``, UTC microseconds.
``aw-server-peewee`` (aw-server, Python, ``aw_datastore`` ``PeeweeStorage``, the older default)
    ``bucketmodel(key, id, created, name, type, client, hostname, datastr)``,
    ``eventmodel(id, bucket_id -> bucketmodel.key, timestamp, duration, datastr)``, the
    timestamp an ISO string with a UTC offset, the duration in seconds.

The export (web UI "Export all buckets as JSON", ``GET /api/0/export``) is
``{"buckets": {"<bucket id>": {"id", "type", "client", "hostname", "created", "data",
"events": [{"id", "timestamp", "duration", "data"}, ...]}}}``.

How buckets become proagent events (judgement calls are marked *):

* Window events (bucket type ``currentwindow``, ``data.app`` and ``data.title``) are the
  activity. ActivityWatch starts a new window event on every title change; LifeTrace and
  ``proagent capture`` start one on an app switch (ProAgentBench section 5.1), so consecutive
  window events of one app no more than :data:`MERGE_GAP_SECONDS` apart are one event*, with
  the id of its first row and the title at its start; a browser's window events are another
  event when its page moves to another site or page kind (the tab rule of
  :mod:`proagent.pages`, from the matched web event's URL, else the title), an editor's or
  terminal's when its title names another document (:mod:`proagent.documents`; off with
  ``split_on_tab=False`` or ``PROAGENT_SPLIT_IN_APP=0``, earlier ``PROAGENT_SPLIT_ON_TAB=0``).
* AFK events (type ``afkstatus``, ``data.status`` ``afk``/``not-afk``): when an AFK bucket
  exists, each window event is clipped to the not-AFK time it overlaps (from the first
  overlap's start to the last one's end*), and one with no not-AFK time is dropped (counted as
  ``afk_dropped``). Without an AFK bucket every window event is kept.
* Web events (type ``web.tab.current``, ``data.url`` and ``data.title``) give a window event
  its ``url``: the web event overlapping it longest whose tab title is part of the window title
  (browsers put the tab title in the window title)*.
* Every bucket type is read across hosts alike (one person's devices)*; other bucket types are
  ignored (counted as ``other_events``).
* No screen is recorded: events carry no screenshots and ``screen_recorded=False``, so the
  valid-event rule asks only for the duration (:meth:`proagent.records.Event.is_activity`).
* Times are UTC; they become naive local time of this machine, as LifeTrace stores them.
  A malformed time, duration or data object is a :class:`DataError` naming the file, table (or
  bucket), row id and column; the database is opened read-only and read in full first.
"""

from __future__ import annotations

import json
import os
import sqlite3
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..pages import EventSplit, tab_rule_default
from ..records import Event
from ._foreign import (
    MAX_EVENT_SECONDS,
    ActivityLog,
    bad_cell,
    event_seconds,
    local_from_epoch,
    local_from_iso,
    table_columns,
)
from .lifetrace import _no_cycle_collection
from .lifetrace_schema import SQLITE_READ_ERRORS, connect_read_only, sqlite_problem

__all__ = [
    "AFK_TYPE",
    "FLAVOURS",
    "MERGE_GAP_SECONDS",
    "WEB_TYPE",
    "WINDOW_TYPE",
    "activitywatch_flavour",
    "is_activitywatch_export",
    "load_activitywatch",
]

WINDOW_TYPE = "currentwindow"
"""Bucket type of aw-watcher-window (``data.app``, ``data.title``)."""
AFK_TYPE = "afkstatus"
"""Bucket type of aw-watcher-afk (``data.status``: ``afk`` or ``not-afk``)."""
WEB_TYPE = "web.tab.current"
"""Bucket type of aw-watcher-web (``data.url``, ``data.title``)."""
MERGE_GAP_SECONDS = 5.0
"""Window events of one app at most this far apart (seconds) are one event (this project's
choice: aw-watcher-window polls every second and merges heartbeats within its pulse time)."""

FLAVOURS = ("aw-server-rust", "aw-server-sqlite", "aw-server-peewee")
"""The database layouts read (see the module docstring)."""

_TYPES = (WINDOW_TYPE, AFK_TYPE, WEB_TYPE)


@dataclass(frozen=True)
class _Raw:
    row_id: int
    type: str
    start: datetime
    end: datetime
    data: dict[str, Any]


def activitywatch_flavour(conn: sqlite3.Connection) -> str | None:
    """Which of :data:`FLAVOURS` an open database is, or ``None`` when it is no ActivityWatch database."""
    t = table_columns(conn)
    ev, bk = t.get("events", frozenset()), t.get("buckets", frozenset())
    if {"bucketrow", "starttime", "endtime"} <= ev and {"type", "hostname"} <= bk:
        if "data" in ev and "name" in bk:
            return "aw-server-rust"
        if "datastr" in ev:
            return "aw-server-sqlite"
    if {"bucket_id", "timestamp", "duration", "datastr"} <= t.get("eventmodel", frozenset()) and {
        "key",
        "type",
    } <= t.get("bucketmodel", frozenset()):
        return "aw-server-peewee"
    return None


def is_activitywatch_export(path: Path) -> bool:
    """True when ``path`` is a ``.json`` file whose object starts with a ``"buckets"`` key (the
    first 4 KiB are read).

    Raises:
        DataError: the file cannot be read.
    """
    if path.suffix.lower() != ".json" or not path.is_file():
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(4096).decode("utf-8", "replace").removeprefix("\ufeff").lstrip()
    except OSError as e:
        raise DataError(path, f"cannot read ({e.strerror or e})") from None
    return head.startswith("{") and head[1:].lstrip().startswith('"buckets"')


# --------------------------------------------------------------------------- reading rows


def _data(path: Path, table: str, rid: Any, column: str, value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    try:
        data = json.loads(value) if isinstance(value, (str, bytes)) else None
    except ValueError as e:
        raise bad_cell(path, table, rid, column, f"not JSON ({e})") from None
    if not isinstance(data, dict):
        raise bad_cell(path, table, rid, column, "not a JSON object")
    return data


_FIELDS = ("app", "title", "status", "url")
"""The ``data`` keys the merge reads (window: app, title; AFK: status; web: url, title)."""


def _json_columns(col: str) -> str:
    """SQL taking :data:`_FIELDS` out of a JSON column in SQLite's C code (JSON1), with the
    column's JSON type (``invalid`` when it is not JSON) to check it."""
    parts = [f"CASE WHEN json_valid({col}) THEN json_type({col}) ELSE 'invalid' END"]
    parts += [
        f"CASE WHEN json_valid({col}) THEN CASE WHEN json_type({col}) = 'object' "
        f"THEN json_extract({col}, '$.{k}') END END"
        for k in _FIELDS
    ]
    return ", ".join(parts)


def _rows(conn: sqlite3.Connection, path: Path, flavour: str, since: datetime | None) -> tuple[list[_Raw], int]:
    """The window, AFK and web rows (ending at or after ``since``), and the count of other rows."""
    kinds = ", ".join("?" * len(_TYPES))
    args: tuple[Any, ...] = _TYPES
    if flavour == "aw-server-peewee":
        table, col, join = "eventmodel", "datastr", "eventmodel e JOIN bucketmodel b ON e.bucket_id = b.key"
        sql = (
            f"SELECT e.id, b.type, e.timestamp, e.duration, {_json_columns('e.datastr')} FROM {join} "
            f"WHERE b.type IN ({kinds})"
        )
    else:
        per = 10**9 if flavour == "aw-server-rust" else 10**6
        key, col = ("id", "data") if flavour == "aw-server-rust" else ("rowid", "datastr")
        table, join = "events", f'events e JOIN buckets b ON e.bucketrow = b."{key}"'
        sql = (
            f'SELECT e.id, b.type, e.starttime, e.endtime, {_json_columns(f"e.{col}")} FROM {join} '
            f"WHERE b.type IN ({kinds})"
        )
        if since is not None:
            sql, args = sql + " AND e.endtime >= ?", _TYPES + (int(since.timestamp() * per),)
    out: list[_Raw] = []
    for rid, kind, a, b, jtype, *values in conn.execute(sql + " ORDER BY e.id", args):
        if jtype != "object":
            raise bad_cell(path, table, rid, col, "not JSON" if jtype == "invalid" else "not a JSON object")
        if flavour == "aw-server-peewee":
            start = _cell(local_from_iso, a, path, table, rid, "timestamp")
            end = start + timedelta(seconds=_cell(event_seconds, b, path, table, rid, "duration"))
            if since is not None and end < since:
                continue
        else:
            start = _cell(lambda v: local_from_epoch(v, per), a, path, table, rid, "starttime")
            end = _cell(lambda v: local_from_epoch(v, per), b, path, table, rid, "endtime")
            if end < start:
                raise bad_cell(path, table, rid, "endtime", "ends before it starts")
            if (end - start).total_seconds() > MAX_EVENT_SECONDS:
                raise bad_cell(
                    path, table, rid, "endtime", f"lasts longer than {MAX_EVENT_SECONDS:.0f} seconds (a week)"
                )
        out.append(_Raw(int(rid), str(kind), start, end, {k: v for k, v in zip(_FIELDS, values) if v is not None}))
    other = conn.execute(f"SELECT count(*) FROM {join} WHERE b.type NOT IN ({kinds})", _TYPES).fetchone()[0]
    return out, int(other)


def _cell(parse: Any, value: Any, path: Path, table: str, rid: Any, column: str) -> Any:
    try:
        return parse(value)
    except ValueError as e:
        raise bad_cell(path, table, rid, column, str(e)) from None


def _export_rows(path: Path, since: datetime | None) -> tuple[list[_Raw], int]:
    try:
        doc = json.loads(path.read_bytes().decode("utf-8-sig"))
    except OSError as e:
        raise DataError(path, f"cannot read ({e.strerror or e})") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise DataError(path, f"not a JSON ActivityWatch export ({e})") from None
    buckets = doc.get("buckets") if isinstance(doc, dict) else None
    if not isinstance(buckets, dict):
        raise DataError(path, 'not an ActivityWatch export: no "buckets" object')
    found: list[tuple[str, Any, str, Any]] = []  # (bucket, event id, type, event)
    other = 0
    for name in sorted(buckets):
        b = buckets[name]
        if not isinstance(b, dict) or not isinstance(b.get("events", []), list):
            raise DataError(path, f'bucket {name!r}: not an object with an "events" list')
        kind = str(b.get("type", ""))
        for ev in b.get("events") or []:
            if kind in _TYPES:
                found.append((name, ev.get("id") if isinstance(ev, dict) else None, kind, ev))
            else:
                other += 1
    ids = [f[1] for f in found]
    own = all(isinstance(i, int) and not isinstance(i, bool) for i in ids) and len(set(ids)) == len(ids)
    out: list[_Raw] = []
    for n, (name, eid, kind, ev) in enumerate(found, 1):
        rid = eid if own else n
        where = f"bucket {name}"
        if not isinstance(ev, dict):
            raise DataError(path, f"{where}, event {rid}: not an object")
        start = _cell(local_from_iso, ev.get("timestamp"), path, where, rid, "timestamp")
        end = start + timedelta(seconds=_cell(event_seconds, ev.get("duration", 0), path, where, rid, "duration"))
        if since is not None and end < since:
            continue
        out.append(_Raw(int(rid), kind, start, end, _data(path, where, rid, "data", ev.get("data", {}))))
    return out, other


# --------------------------------------------------------------------------- merging


def _data_text(d: dict[str, Any], key: str) -> str:
    v = d.get(key)
    return v.strip() if isinstance(v, str) else ""


def _active_intervals(afk: list[_Raw]) -> list[tuple[datetime, datetime]]:
    spans = sorted((r.start, r.end) for r in afk if _data_text(r.data, "status") == "not-afk")
    merged: list[list[datetime]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return [(s, e) for s, e in merged]


def _clip(
    start: datetime, end: datetime, active: list[tuple[datetime, datetime]], starts: list[datetime]
) -> tuple[datetime, datetime] | None:
    """``[start, end]`` clipped to the span of the not-AFK intervals it overlaps, or ``None``."""
    lo = max(0, bisect_right(starts, start) - 1)
    hi = bisect_left(starts, end)
    over = [(s, e) for s, e in active[lo : hi + 1] if s < end and e > start]
    if not over:
        return None
    return max(start, over[0][0]), min(end, over[-1][1])


def _merge(raws: list[_Raw], user: str, tabs: bool = True) -> tuple[list[Event], dict[str, int]]:
    win = sorted((r for r in raws if r.type == WINDOW_TYPE), key=lambda r: (r.start, r.row_id))
    afk = [r for r in raws if r.type == AFK_TYPE]
    web = sorted((r for r in raws if r.type == WEB_TYPE), key=lambda r: (r.start, r.row_id))
    counts = {"window_events": len(win), "afk_events": len(afk), "web_events": len(web), "afk_dropped": 0}
    active = _active_intervals(afk) if afk else None
    act_starts = [s for s, _ in active or ()]
    web_starts = [r.start for r in web]
    web_reach: list[datetime] = []  # running max of web ends: stop scanning back once below a start
    for r in web:
        web_reach.append(max(web_reach[-1], r.end) if web_reach else r.end)

    pieces: list[tuple[_Raw, datetime, datetime, str | None]] = []
    for r in win:
        s, e = r.start, r.end
        if active is not None:
            clipped = _clip(s, e, active, act_starts)
            if clipped is None:
                counts["afk_dropped"] += 1
                continue
            s, e = clipped
        title = _data_text(r.data, "title")
        url, best = None, timedelta(0)
        j = bisect_left(web_starts, e) - 1
        while j >= 0 and web_reach[j] > s:
            w = web[j]
            overlap = min(e, w.end) - max(s, w.start)
            wt, wu = _data_text(w.data, "title"), _data_text(w.data, "url")
            if overlap > best and wu and wt and wt in title:
                url, best = wu, overlap
            j -= 1
        pieces.append((r, s, e, url))

    events: list[Event] = []
    runs: list[list[Any]] = []
    gap = timedelta(seconds=MERGE_GAP_SECONDS)
    split = EventSplit(tabs)
    for r, s, e, url in pieces:
        app = _data_text(r.data, "app")
        if not split.starts(app, _data_text(r.data, "title"), url, force=bool(runs) and s - runs[-1][3] > gap):
            run = runs[-1]
            run[3] = max(run[3], e)
            run[5] = run[5] or url
        else:
            runs.append([r.row_id, app, s, e, _data_text(r.data, "title"), url])
    for rid, app, s, e, title, url in runs:
        events.append(
            Event(
                id=str(rid), user=user, start=s, end=e, app_name=app, window_title=title, url=url, screen_recorded=False
            )
        )
    return events, counts


def load_activitywatch(
    path: str | Path, *, user: str | None = None, since: datetime | None = None, split_on_tab: bool | None = None
) -> ActivityLog:
    """Read an ActivityWatch database or JSON export (see the module docstring for the rules).

    Args:
        path: The database file (any of :data:`FLAVOURS`) or the ``.json`` export.
        user: User id for the events (default: the name of the folder holding the file).
        since: Read only events ending at or after this naive local time (a follower of a growing
            database reads its recent window this way, :mod:`proagent.live`); the first event
            read may then be cut at ``since``.
        split_on_tab: Apply the tab rule (:mod:`proagent.pages`): a browser's window events are
            another event when its page moves to another site or page kind (the URL of the
            matched web event, else the title), and an editor's or terminal's when its title
            names another document (:mod:`proagent.documents`). ``None``:
            :func:`proagent.pages.tab_rule_default` (on unless ``PROAGENT_SPLIT_IN_APP=0``).

    Returns:
        An :class:`~._foreign.ActivityLog` (``kind`` ``activitywatch/<flavour>`` or
        ``activitywatch/export``) with the events oldest first; ``counts`` holds
        ``window_events``, ``afk_events``, ``web_events``, ``afk_dropped``, ``other_events``.

    Raises:
        DataError: missing, unreadable, corrupt or foreign file; a malformed time, duration or
            data object (the message names the table or bucket, row id and column).
    """
    with _no_cycle_collection():  # many short-lived acyclic objects, as in the LifeTrace reader
        return _load(Path(path), user, since, tab_rule_default() if split_on_tab is None else split_on_tab)


def _load(path: Path, user: str | None, since: datetime | None, tabs: bool = True) -> ActivityLog:
    if not path.is_file():
        raise DataError(path, "file not found" if not path.exists() else "not a regular file")
    if user is None:
        user = Path(os.path.abspath(path)).parent.name or path.stem
    if path.suffix.lower() == ".json":
        raws, other = _export_rows(path, since)
        kind = "activitywatch/export"
    else:
        try:
            conn = connect_read_only(path)
            try:
                flavour = activitywatch_flavour(conn)
                if flavour is None:
                    raise DataError(path, "not an ActivityWatch database (no buckets/events tables of aw-server)")
                conn.execute("BEGIN")
                conn.text_factory = str  # decoded in C; text that is not UTF-8 is read again, with replacement
                try:
                    raws, other = _rows(conn, path, flavour, since)
                except sqlite3.OperationalError as e:
                    if "decode" not in str(e).lower():
                        raise
                    conn.text_factory = lambda b: b.decode("utf-8", "replace")
                    raws, other = _rows(conn, path, flavour, since)
                conn.execute("COMMIT")
            finally:
                conn.close()
        except SQLITE_READ_ERRORS as e:
            raise DataError(path, sqlite_problem(e, path)) from None
        kind = f"activitywatch/{flavour}"
    events, counts = _merge(raws, user, tabs)
    counts["other_events"] = other
    return ActivityLog(path=path, user=user, kind=kind, events=tuple(events), counts=counts)
