"""LifeTrace schema variants: opening a database read-only and detecting which
variant it holds (see :mod:`proagent.sources.lifetrace` for the variants)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import DataError
from ..live_files import LIVE_NAMES

__all__ = [
    "DB_NAMES",
    "EVENT_REQUIRED",
    "INTENTION_COLUMNS",
    "OCR_REQUIRED",
    "SCREENSHOT_REQUIRED",
    "SchemaInfo",
    "Variant",
    "connect_read_only",
    "opens_immutable",
    "detect_schema",
    "find_lifetrace_db",
    "read_schema",
    "SQLITE_READ_ERRORS",
    "sqlite_problem",
]

Variant = Literal["2025-09", "2025-10", "2025-11", "processed"]
"""Schema variant names, oldest first (``2025-09`` covers 2025-08 and 2025-09)."""

DB_NAMES = ("lifetrace_privacy_processed.db", "lifetrace.db")
"""File names looked for when a folder is given instead of a database file."""

EVENT_REQUIRED = ("id", "app_name", "window_title", "start_time", "end_time")
"""Columns every ``events`` table must have."""
SCREENSHOT_REQUIRED = ("id", "file_path", "created_at", "event_id")
"""Columns every ``screenshots`` table must have."""
OCR_REQUIRED = ("screenshot_id", "text_content")
"""Columns an ``ocr_results`` table must have when present."""

_AI_COLUMNS = frozenset({"ai_title", "ai_summary"})
_V1_EVENT_COLUMNS = frozenset({"status", "task_id", "auto_association_attempted", "updated_at", "deleted_at"})
_V1_SCREENSHOT_COLUMNS = frozenset({"file_deleted", "updated_at", "deleted_at"})
_PROCESSED_COLUMNS = frozenset({"is_llm_event", "event_summary", "detailed_description", "conversation"})
_SUMMARY_COLUMNS = ("event_summary", "ai_summary", "ai_title")
INTENTION_COLUMNS = ("user_intention", "intention")
"""Event columns read as the intention, in order of preference."""
_NON_SUMMARY_TITLES = frozenset({"window_title"})


@dataclass(frozen=True)
class SchemaInfo:
    """What a LifeTrace database holds, from ``sqlite_master`` and
    ``PRAGMA table_info``."""

    path: Path
    """The database file."""
    variant: Variant
    """Detected schema variant (the newest whose columns are present)."""
    tables: tuple[str, ...]
    """All tables, sorted."""
    event_columns: frozenset[str]
    """Columns of ``events``."""
    screenshot_columns: frozenset[str]
    """Columns of ``screenshots``."""
    ocr_columns: frozenset[str] = frozenset()
    """Columns of ``ocr_results`` (empty when the table is absent)."""

    @property
    def has_ocr(self) -> bool:
        """True when an ``ocr_results`` table exists."""
        return bool(self.ocr_columns)

    @property
    def has_ai_fields(self) -> bool:
        """True when events carry ``ai_title``/``ai_summary`` (2025-10 and later)."""
        return bool(self.event_columns & _AI_COLUMNS)

    @property
    def has_soft_delete(self) -> bool:
        """True when events or screenshots carry ``deleted_at`` (2025-11)."""
        return "deleted_at" in self.event_columns or "deleted_at" in self.screenshot_columns

    @property
    def has_file_deleted(self) -> bool:
        """True when screenshots carry ``file_deleted`` (2025-11)."""
        return "file_deleted" in self.screenshot_columns

    @property
    def is_processed(self) -> bool:
        """True for a ProAgentBench processed database."""
        return bool(self.event_columns & _PROCESSED_COLUMNS)

    @property
    def has_conversation(self) -> bool:
        """True when events carry the ``conversation`` JSON column."""
        return "conversation" in self.event_columns

    @property
    def has_llm_flag(self) -> bool:
        """True when events carry ``is_llm_event``."""
        return "is_llm_event" in self.event_columns

    @property
    def summary_columns(self) -> tuple[str, ...]:
        """Event columns tried, in order, for ``Event.summary``."""
        known = [c for c in _SUMMARY_COLUMNS if c in self.event_columns]
        extra_s = sorted(c for c in self.event_columns if c.endswith("_summary") and c not in known)
        extra_t = sorted(
            c for c in self.event_columns if c.endswith("_title") and c not in known and c not in _NON_SUMMARY_TITLES
        )
        return tuple(known + extra_s + extra_t)


def find_lifetrace_db(path: str | Path) -> Path:
    """The database file for ``path``: the path itself, or, for a folder, the
    first of :data:`DB_NAMES` in it, else its only ``*.db`` file.

    Raises:
        DataError: nothing exists at ``path``, or the folder holds no (or
            several candidate) databases.
    """
    path = Path(path)
    if path.is_dir():
        for name in DB_NAMES:
            if (path / name).is_file():
                return path / name
        dbs = sorted(p for p in path.glob("*.db") if p.is_file() and p.name not in LIVE_NAMES)  # not live's feedback.db
        if len(dbs) == 1:
            return dbs[0]
        if not dbs:
            raise DataError(path, "folder holds no LifeTrace database (*.db)")
        raise DataError(path, "folder holds several databases: " + ", ".join(p.name for p in dbs))
    if not path.exists():
        raise DataError(path, "file not found")
    if not path.is_file():
        raise DataError(path, "not a regular file")
    return path


def _is_wal_mode(path: Path) -> bool:
    """True when the SQLite header says WAL mode (read/write versions 2)."""
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError:
        return False
    return len(head) == 20 and head.startswith(b"SQLite format 3\x00") and head[18:20] == b"\x02\x02"


def _is_plain_sqlite(path: Path) -> bool:
    """True when the file starts with the plain SQLite header (not SQLCipher's random salt)."""
    try:
        with open(path, "rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def opens_immutable(path: str | Path) -> bool:
    """True when :func:`connect_read_only` opens ``path`` ``immutable=1``: a WAL-mode database
    with no ``-wal`` file beside it (no writer has it open, nothing un-checkpointed), so that
    reading it creates no ``-wal``/``-shm`` file. An encrypted database's header is encrypted
    too, so its journal mode cannot be read from it: as ``capture --encrypt``, its only writer,
    always uses WAL, one in a vault folder (:func:`proagent.vault.vault_of`) counts as WAL."""
    from ..vault import vault_of

    path = Path(path)
    wal = _is_wal_mode(path) or (vault_of(path) is not None and not _is_plain_sqlite(path))
    return wal and not Path(str(path) + "-wal").exists()


def connect_read_only(path: str | Path, *, follow: bool = False) -> sqlite3.Connection:
    """Open a LifeTrace database read-only: the input is never written. Rows come
    as :class:`sqlite3.Row`, text is decoded as UTF-8 with replacement.

    A WAL-mode database opened ``mode=ro`` would still get empty ``-wal`` and
    ``-shm`` files created next to it (and left there: a read-only connection cannot
    remove them); when it has no ``-wal`` file (no writer, nothing un-checkpointed)
    it is opened ``immutable=1`` instead, which creates nothing
    (:func:`opens_immutable`). With a ``-wal`` file (a live capture) its content is
    read, which needs the ``-shm`` index (SQLite may create it). ``follow=True`` (a
    connection kept open on a log that grows, :mod:`proagent.live`): the connection
    may be used from another thread, and one opened ``immutable`` sees no later
    write, so its holder opens it again once a ``-wal`` file appears or the file
    changes (:class:`proagent.live.DatabaseFollower` does).

    An encrypted capture's database (:mod:`proagent.vault`) is opened with its key, and, as
    its writer (``capture --encrypt``) always uses WAL, taken as WAL mode (its header is
    encrypted): without a ``-wal`` file it is opened ``immutable=1`` as well.

    Raises:
        sqlite3.DatabaseError: SQLite cannot open the file (see :func:`sqlite_problem`).
        DataError: an encrypted database whose key is missing or wrong.
    """
    from ..vault import connect  # an encrypted capture (capture --encrypt): SQLCipher with its key, read alike

    path = Path(path)
    uri = path.resolve().as_uri() + "?mode=ro"
    if opens_immutable(path):
        uri += "&immutable=1"

    conn = connect(uri, uri=True, timeout=5.0, check_same_thread=not follow)  # a follower may poll from a worker thread
    conn.text_factory = lambda b: b.decode("utf-8", "replace")
    conn.row_factory = sqlite3.Row
    return conn


SQLITE_READ_ERRORS = (sqlite3.DatabaseError, UnicodeDecodeError)
"""What reading a damaged database raises: SQLite's own errors, and ``UnicodeDecodeError`` when
SQLite's error message quotes damaged bytes (a flipped byte in ``sqlite_master``'s schema text makes
``malformed database schema (...)`` carry them, and Python cannot decode the message). A reader
catches these and raises :class:`~proagent.errors.DataError` with :func:`sqlite_problem`'s text."""


def sqlite_problem(e: sqlite3.DatabaseError | UnicodeDecodeError, path: Path) -> str:
    """The problem text of a :class:`~proagent.errors.DataError` for an SQLite
    error on ``path`` (not a database, corrupt, a hot journal, ...), or for an error message
    of SQLite's that is not UTF-8 (damaged bytes quoted from the schema: :data:`SQLITE_READ_ERRORS`)."""
    if isinstance(e, UnicodeDecodeError):
        return "corrupt SQLite database (SQLite's error message quotes damaged bytes of its schema)"
    msg = str(e)
    if "not a database" in msg:
        return f"not a SQLite database ({msg})"
    if "malformed" in msg or "corrupt" in msg:
        return f"corrupt SQLite database ({msg})"
    if Path(str(path) + "-journal").exists():
        return (
            f"cannot read SQLite database ({msg}); a hot journal {path.name}-journal is present: "
            "open the database once read-write (e.g. with the sqlite3 shell) to recover it"
        )
    return f"cannot read SQLite database ({msg})"


def _columns(conn: sqlite3.Connection, table: str) -> frozenset[str]:
    rows = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
    return frozenset(str(r["name"]).lower() for r in rows)


def read_schema(conn: sqlite3.Connection, path: Path) -> SchemaInfo:
    """The :class:`SchemaInfo` of an open database (``path`` names it in errors).

    Raises:
        DataError: as :func:`detect_schema`.
        sqlite3.DatabaseError: SQLite cannot read the file.
    """
    tables = tuple(
        sorted(
            str(r["name"])
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
            if not str(r["name"]).startswith("sqlite_")
        )
    )
    lower = {t.lower(): t for t in tables}
    has_events, has_shots = "events" in lower, "screenshots" in lower
    if not has_events and not has_shots:
        if not tables:
            raise DataError(
                path, "an empty database (no tables): not an activity log of LifeTrace, ActivityWatch or screenpipe"
            )
        raise DataError(
            path,
            f"not an activity log proagent reads: no LifeTrace events or screenshots table, nor "
            f"ActivityWatch's or screenpipe's tables (tables: {', '.join(tables)})",
        )
    if not has_events or not has_shots:
        missing = "events" if not has_events else "screenshots"
        raise DataError(path, f"incomplete LifeTrace database: no {missing} table (tables: {', '.join(tables)})")
    ev = _columns(conn, lower["events"])
    sc = _columns(conn, lower["screenshots"])
    for table, cols, required in (("events", ev, EVENT_REQUIRED), ("screenshots", sc, SCREENSHOT_REQUIRED)):
        lack = [c for c in required if c not in cols]
        if lack:
            raise DataError(path, f"incomplete LifeTrace database: table {table} lacks column(s) {', '.join(lack)}")
    ocr = _columns(conn, lower["ocr_results"]) if "ocr_results" in lower else frozenset()
    lack = [c for c in OCR_REQUIRED if ocr and c not in ocr]
    if lack:
        raise DataError(path, f"incomplete LifeTrace database: table ocr_results lacks column(s) {', '.join(lack)}")
    variant: Variant
    if ev & _PROCESSED_COLUMNS:
        variant = "processed"
    elif ev & _V1_EVENT_COLUMNS or sc & _V1_SCREENSHOT_COLUMNS:
        variant = "2025-11"
    elif ev & _AI_COLUMNS:
        variant = "2025-10"
    else:
        variant = "2025-09"
    return SchemaInfo(path, variant, tables, ev, sc, ocr)


def detect_schema(path: str | Path) -> SchemaInfo:
    """Detect the schema variant of a LifeTrace database (or participant folder).

    Raises:
        DataError: the file is missing, not a SQLite database or corrupt, from
            another application (no ``events``/``screenshots`` tables; the
            message lists the tables it has), or incomplete (a required table
            or column is missing; the message names it).
    """
    path = find_lifetrace_db(path)
    try:
        conn = connect_read_only(path)
        try:
            return read_schema(conn, path)
        finally:
            conn.close()
    except SQLITE_READ_ERRORS as e:
        raise DataError(path, sqlite_problem(e, path)) from None
