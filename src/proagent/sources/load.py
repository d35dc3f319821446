"""Open any supported activity log by path, detecting its format.

* a ProactiveBench session file, or a folder of them;
* a LifeTrace SQLite database (any schema variant), or a ProAgentBench folder
  holding one database per participant (``<participant>/lifetrace_privacy_processed.db``
  or any ``*.db`` one level down);
* an ActivityWatch database (aw-server-rust's ``sqlite.db``, aw-server's ``*.db``) or JSON
  export (:mod:`.activitywatch`), or a screenpipe ``db.sqlite`` (:mod:`.screenpipe`), alone or
  in a folder (directly or one level down, one per participant folder), also mixed with
  LifeTrace databases. Which reader a database needs is told from its tables
  (:func:`activity_log_kind`).

The other recorders' formats are a registry (:data:`READERS`, filled by :func:`register_reader`
below, in the order they are tried); LifeTrace is the fallback, whose reader names what is
wrong with a foreign file. A new recorder's format is one :func:`register_reader` entry here
(its reader module in ``sources/`` aside): folder search, detection, ``--data``, ``annotate``'s
LifeTrace copy and ``live --watch`` follow it.
"""

from __future__ import annotations

import os
import sqlite3
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from ..errors import DataError
from ..live_files import LIVE_NAMES
from ..records import Event
from ._foreign import ActivityLog
from .activitywatch import activitywatch_flavour, is_activitywatch_export, load_activitywatch
from .annotations import Annotations, load_annotations, normalise_event_id, normalise_user
from .lifetrace import load_lifetrace
from .lifetrace_schema import SQLITE_READ_ERRORS, connect_read_only, sqlite_problem
from .proactivebench import is_proactivebench_file, read_proactivebench
from .screenpipe import DB_NAME as SCREENPIPE_DB
from .screenpipe import is_screenpipe_db, load_screenpipe

__all__ = [
    "LIFETRACE",
    "READERS",
    "LogReader",
    "activity_log_kind",
    "databases_by_user",
    "find_databases",
    "is_sqlite_file",
    "load_activity_log",
    "load_events",
    "recorder_folder_db",
    "register_reader",
]

_SQLITE_MAGIC = b"SQLite format 3\x00"

LIFETRACE = "lifetrace"
""":func:`activity_log_kind` of a file no registered reader claims: read as LifeTrace."""


class ReadLog(Protocol):
    """A reader's entry function: the whole log at ``path``.

    Raises:
        DataError: the log is corrupt, foreign or incomplete (naming file, table, row, column).
    """

    def __call__(self, path: Path, *, user: str | None = None, since: datetime | None = None) -> ActivityLog: ...


@dataclass(frozen=True)
class LogReader:
    """One recorder's log format (not LifeTrace's, the fallback), as :func:`register_reader` keeps it."""

    name: str
    """The format's name: :func:`activity_log_kind`'s answer, the ``kind`` of its :class:`ActivityLog`."""
    title: str
    """The format with its article, as messages say it (``an ActivityWatch``)."""
    read: ReadLog
    """Reads one log: ``read(path, *, user=None, since=None) -> ActivityLog`` (``user``: the
    participant, default the folder's name; ``since``: events ending after this local time only)."""
    sqlite: Callable[[sqlite3.Connection], bool] | None = None
    """Tells a SQLite database of this format from its tables (a read-only connection), or ``None``."""
    file: Callable[[Path], bool] | None = None
    """Tells a non-SQLite file of this format (an export) from its content, or ``None``."""
    finds: tuple[str, ...] = ()
    """File-name patterns of its logs in a folder besides ``*.db`` (directly or one level down;
    a match counts when it is a file that :attr:`file`, if set, claims)."""
    folder_db: str | None = None
    """The database's name in the recorder's own data folder (``db.sqlite`` in ``~/.screenpipe``):
    that folder is read as its database."""


READERS: dict[str, LogReader] = {}
"""The registered formats by name, in the order :func:`activity_log_kind` tries them. Messages
that name the formats are built from it when raised, so a reader registered later is named too."""

_LIFETRACE_TITLE = "LifeTrace"
"""The fallback format as messages name it."""


def register_reader(
    name: str,
    *,
    title: str,
    sqlite: Callable[[sqlite3.Connection], bool] | None = None,
    file: Callable[[Path], bool] | None = None,
    finds: tuple[str, ...] = (),
    folder_db: str | None = None,
) -> Callable[[ReadLog], ReadLog]:
    """Register the decorated function as the reader of the format ``name`` (fields as :class:`LogReader`).

    Raises:
        ValueError: ``name`` is registered already, is ``lifetrace``, or the entry can tell
            none of its files (neither ``sqlite`` nor ``file``).
    """
    if name in READERS or name == LIFETRACE:
        raise ValueError(f"reader {name!r} is already registered")
    if sqlite is None and file is None:
        raise ValueError(f"reader {name!r}: give sqlite= or file= (how its logs are told apart)")

    def add(read: ReadLog) -> ReadLog:
        READERS[name] = LogReader(name, title, read, sqlite, file, tuple(finds), folder_db)
        return read

    return add


@register_reader(
    "activitywatch",
    title="an ActivityWatch",
    sqlite=lambda conn: activitywatch_flavour(conn) is not None,
    file=is_activitywatch_export,
    finds=("*.json",),
)
def _read_activitywatch(path: Path, *, user: str | None = None, since: datetime | None = None) -> ActivityLog:
    return load_activitywatch(path, user=user, since=since)


@register_reader(
    "screenpipe", title="a screenpipe", sqlite=is_screenpipe_db, finds=(SCREENPIPE_DB,), folder_db=SCREENPIPE_DB
)
def _read_screenpipe(path: Path, *, user: str | None = None, since: datetime | None = None) -> ActivityLog:
    return load_screenpipe(path, user=user, since=since)


def _bare(title: str) -> str:
    """A reader's title without its article (``an ActivityWatch`` -> ``ActivityWatch``)."""
    first, _, rest = title.partition(" ")
    return rest if first in ("a", "an") and rest else title


def _or_list(items: list[str]) -> str:
    """``a, b or c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def _not_a_log_file() -> str:
    """What a file that no reader takes is not, from the registry as it is now (exports: readers
    with ``file=``, SQLite: LifeTrace and readers with ``sqlite=``)."""
    exports = [f"{r.title} export ({', '.join(f.lstrip('*') for f in r.finds)})" for r in READERS.values() if r.file]
    sqlite = [_LIFETRACE_TITLE, *(_bare(r.title) for r in READERS.values() if r.sqlite)]
    return f"not {', '.join(['a ProactiveBench session (.json)', *exports])} nor a {_or_list(sqlite)} SQLite database"


def _nothing_found() -> str:
    """What a ``--data`` folder holding no log lacks, from the registry as it is now: ``*.db``
    databases (LifeTrace's and those of readers whose ``finds`` are exports or absent), the
    database names of readers whose ``finds`` are databases, the exports."""
    readers = list(READERS.values())
    star_db = [_LIFETRACE_TITLE, *(_bare(r.title) for r in readers if r.sqlite and (r.file or not r.finds))]
    named = [f"{_bare(r.title)} {' '.join(r.finds)}" for r in readers if r.file is None and r.finds]
    exports = [f"{_bare(r.title)} exports" for r in readers if r.file]
    return (
        f"no {_or_list(['ProactiveBench session files', f'{_or_list(star_db)} databases (*.db)', *named, *exports])} "
        "found here"
    )


def recorder_folder_db(folder: Path) -> Path | None:
    """The database of a recorder's own data folder (``~/.screenpipe/db.sqlite``): the first
    registered reader's :attr:`LogReader.folder_db` that is a file in ``folder``, else ``None``."""
    return next(
        (folder / r.folder_db for r in READERS.values() if r.folder_db and (folder / r.folder_db).is_file()), None
    )


def _claims_file(reader: LogReader, path: Path) -> bool:
    return reader.file is not None and reader.file(path)


def is_sqlite_file(path: Path) -> bool:
    """True when ``path`` starts with the SQLite file header."""
    with open(path, "rb") as f:
        return f.read(16) == _SQLITE_MAGIC


def find_databases(folder: Path) -> list[Path]:
    """SQLite databases (``*.db``, but not those ``proagent live`` writes:
    :data:`proagent.live_files.LIVE_NAMES`) and the files of each registered reader (:attr:`LogReader.finds`:
    screenpipe's ``db.sqlite``, ActivityWatch exports, ``*.json`` starting with ``"buckets"``)
    directly in ``folder`` or one level down, sorted within each pattern.

    Raises:
        DataError: two paths lead to the same database (e.g. a symlinked
            participant folder), which would count one participant twice.
    """
    found: list[Path] = []
    for pattern in ("", "*/"):
        # live's own database (feedback.db, live --watch writes it into the capture folder) is no activity log
        found += sorted(p for p in folder.glob(pattern + "*.db") if p.is_file() and p.name not in LIVE_NAMES)
        for reader in READERS.values():
            for name in reader.finds:
                found += [
                    p
                    for p in sorted(folder.glob(pattern + name))
                    if p.is_file() and (reader.file is None or reader.file(p))
                ]
    seen: dict[Path, Path] = {}
    for p in found:
        first = seen.setdefault(p.resolve(), p)
        if first is not p:
            raise DataError(p, f"is the same database as {first} (a link?); one participant would count twice")
    return found


def databases_by_user(dbs: list[Path]) -> dict[str, Path]:
    """Participant name -> database: the name of the folder holding each database (the file stem
    for a database with no folder name), as ProAgentBench's ``P01/lifetrace_privacy_processed.db``.

    Raises:
        DataError: two databases belong to one participant folder.
    """
    users: dict[str, Path] = {}
    for db in dbs:
        user = Path(os.path.abspath(db)).parent.name or db.stem
        if user in users:
            raise DataError(db, f"a second database for user {user!r} ({users[user].name}); one per participant folder")
        users[user] = db
    return users


def load_events(path: str | Path, annotations: list[str | Path] | None = None) -> list[Event]:
    """Read every event under ``path``.

    Args:
        path: A session file, database, or folder of either.
        annotations: External annotation JSON/JSONL files (LifeTrace only).

    Raises:
        DataError: the path does not exist, holds nothing readable, or a file in
            it is corrupt, foreign or incomplete.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(path, "no such file or folder")
    if path.is_file():
        if not os.access(path, os.R_OK):
            raise DataError(path, "cannot read (permission denied)")
        if is_proactivebench_file(path):
            return _proactivebench(path, annotations)
        if (
            any(_claims_file(r, path) for r in READERS.values())
            or is_sqlite_file(path)
            or path.suffix in {".db", ".sqlite", ".sqlite3"}
        ):
            return _lifetrace([path], annotations)
        raise DataError(path, _not_a_log_file())
    if not path.is_dir():  # /dev/null, a FIFO, a socket
        raise DataError(path, "not a regular file or folder")
    try:
        dbs = find_databases(path)
        entries = list(path.iterdir())
    except OSError as e:
        raise DataError(path, f"cannot read this folder ({e.strerror or e})") from None
    if any(is_proactivebench_file(p) for p in entries):
        if dbs:
            raise DataError(
                path,
                f"holds both ProactiveBench sessions and SQLite databases ({dbs[0].name}, ...); "
                "point --data at one kind",
            )
        return _proactivebench(path, annotations)
    if dbs:
        return _lifetrace(dbs, annotations)
    raise DataError(path, _nothing_found())


def _proactivebench(path: Path, annotations: list[str | Path] | None) -> list[Event]:
    if annotations:
        raise DataError(
            path,
            "annotation files apply to LifeTrace databases only; ProactiveBench sessions carry "
            "their own labels (drop --annotations)",
        )
    return read_proactivebench(path)


def _lifetrace(dbs: list[Path], annotations: list[str | Path] | None) -> list[Event]:
    ann = load_annotations(annotations) if annotations else None
    events: list[Event] = []
    known: set[tuple[str, str]] = set()
    for db in dbs:
        log: Any
        if activity_log_kind(db) == LIFETRACE:
            log = load_lifetrace(db, annotations=ann)
        else:
            log = load_activity_log(db, annotations=ann)
        events.extend(log.events)
        user = normalise_user(log.user)
        known.update((user, normalise_event_id(e.id)) for e in log.events)
        known.update((user, normalise_event_id(eid)) for eid in log.excluded)
    if ann:
        ids = {eid for _, eid in known}
        unmatched = [
            r
            for r in ann
            if ((normalise_user(r.user), r.event_id) not in known if r.user is not None else r.event_id not in ids)
        ]
        if unmatched:
            r = unmatched[0]
            warnings.warn(
                f"{len(unmatched)} of {len(ann)} annotation records match no event of the data "
                f"(first: user {r.user!r}, event {r.event_id!r}); check user names (participant folder names) "
                f"and event ids",
                stacklevel=2,
            )
    return events


def activity_log_kind(path: Path) -> str:
    """Which reader a log file needs: the name of the first registered reader (:data:`READERS`)
    that claims it, ``activitywatch`` (a database of any aw-server or an export) or
    ``screenpipe`` (also its folder), else ``lifetrace`` (:data:`LIFETRACE`; its reader says what
    is wrong with a foreign one).

    Raises:
        DataError: the file cannot be read.
    """
    path = Path(path)
    if path.is_dir():  # a recorder's own folder (~/.screenpipe)
        path = recorder_folder_db(path) or path
    for reader in READERS.values():
        if _claims_file(reader, path):
            return reader.name
    if not path.is_file() or not is_sqlite_file(path):
        return LIFETRACE
    try:
        conn = connect_read_only(path)
        try:
            for reader in READERS.values():
                if reader.sqlite is not None and reader.sqlite(conn):
                    return reader.name
        finally:
            conn.close()
    except SQLITE_READ_ERRORS as e:
        raise DataError(path, sqlite_problem(e, path)) from None
    return LIFETRACE


def load_activity_log(
    path: str | Path, *, user: str | None = None, since: datetime | None = None, annotations: Annotations | None = None
) -> ActivityLog:
    """Read the log of a registered reader (an ActivityWatch or screenpipe log;
    :func:`activity_log_kind` tells which), with external annotations applied as the LifeTrace
    reader applies them: excluded events dropped, the intention mapped to the taxonomy
    (unrecognised text to its fallback), the LLM platform.

    Raises:
        DataError: as the reader (:func:`~.activitywatch.load_activitywatch`,
            :func:`~.screenpipe.load_screenpipe`); the file is a LifeTrace database.
    """
    path = Path(path)
    kind = activity_log_kind(path)
    if kind == LIFETRACE:
        titles = [r.title for r in READERS.values()]
        raise DataError(path, f"not {_or_list([titles[0], *map(_bare, titles[1:])])} log")
    log: ActivityLog = READERS[kind].read(path, user=user, since=since)
    if annotations is None:
        return log
    from ..taxonomy import load_taxonomy

    taxonomy = load_taxonomy()
    kept = []
    excluded: dict[str, str] = {}
    for e in log.events:
        a = annotations.get(log.user, e.id)
        if a is None:
            kept.append(e)
        elif a.excluded is not None:
            excluded[e.id] = a.excluded
        else:
            raw = a.intention
            intention = (taxonomy.canonical(raw) or taxonomy.fallback) if raw and raw.strip() else e.intention
            kept.append(
                replace(
                    e,
                    intention=intention,
                    intention_confidence=a.confidence,
                    llm_platform=a.llm_platform if a.llm_platform is not None else e.llm_platform,
                )
            )
    return replace(log, events=tuple(kept), excluded=excluded)
