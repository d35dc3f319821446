"""The capture folder: ``DIR/lifetrace.db`` (LifeTrace 2025-11 schema, WAL) and ``DIR/screenshots/``.

* The tables come from :func:`proagent.sources.lifetrace_write.lifetrace_ddl` (the one copy of
  LifeTrace's DDL); times are naive local ``YYYY-MM-DD HH:MM:SS.ffffff``.
* WAL journal mode with ``synchronous=NORMAL``: readers (``proagent.sources``, LifeTrace's tools,
  ``proagent live``) never block the writer and see every committed row; a killed process loses no
  committed transaction and leaves a database that passes ``PRAGMA integrity_check``.
* Each write is its own short transaction; the open event's ``updated_at`` is refreshed every tick,
  so after a crash :meth:`Store.recover` closes it at its last heartbeat (at most one tick lost).
* A new database is created complete (all tables) under a temporary name and renamed into place.
* An image file is written (atomically, :func:`proagent.io.write_atomic`) before its row, so a row
  never names a missing file.
* Private to the user: the capture folder and ``screenshots/`` are ``0700``, the database (and
  its WAL files, which SQLite creates with the database's mode) and every screenshot ``0600``
  (:data:`DIR_MODE`, :data:`FILE_MODE`), made so on every start (a folder of an older run too).
* The focused screen: ``screenshots.focused`` (:data:`FOCUSED_COLUMN`, proagent's addition to
  LifeTrace's table, which LifeTrace's tools ignore) is 1 for the screen that held the focused
  window at that tick, 0 for the others, NULL when the platform did not tell; added to the
  database of an older run on start (its rows stay NULL).
* Retention (:meth:`Store.enforce_retention`): screenshots older than ``max_days`` and, oldest
  first, those over ``max_bytes`` have their file removed and ``file_deleted = 1`` set; the row
  and its OCR stay, as in LifeTrace 1.0.
"""

from __future__ import annotations

import os
import signal
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

from ..errors import DataError
from ..io import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, built_aside, write_atomic
from ..sources.lifetrace_schema import detect_schema
from ..sources.lifetrace_write import FOCUSED_COLUMN, TIMESTAMP_FORMAT, lifetrace_ddl
from ._probe import CaptureError

__all__ = [
    "DB_NAME",
    "DIR_MODE",
    "EXCLUDED_APP",
    "FILE_MODE",
    "FINISH_SIGNAL",
    "OCR_REGION_COLUMN",
    "PENDING_WHERE",
    "SHOTS_DIR",
    "Store",
    "connect",
    "pending_count",
    "screenshot_name",
    "ts",
]

DB_NAME = "lifetrace.db"
"""Database file name in the capture folder (LifeTrace's own name)."""
SHOTS_DIR = "screenshots"
"""Screenshot folder name in the capture folder."""
DIR_MODE = PRIVATE_DIR_MODE
"""Permission bits of the capture folder and ``screenshots/``."""
FILE_MODE = PRIVATE_FILE_MODE
"""Permission bits of ``lifetrace.db`` and of each screenshot."""
EXCLUDED_APP = "[excluded]"
"""``app_name`` of an event covering an excluded window: its real app and title are not stored."""
FINISH_SIGNAL = getattr(signal, "SIGUSR1", None)
"""The signal that tells the worker to finish (read what is waiting at full speed, then exit);
``None`` where the platform has none (Windows): the worker is then stopped as it is."""

OCR_REGION_COLUMN = "ocr_region TEXT"
"""``screenshots.ocr_region`` (proagent's addition, which LifeTrace's tools ignore): ``"x,y,w,h"``,
the focused window's rectangle in the screenshot's pixels, the part the OCR worker reads
(:mod:`._ocr`); NULL: the whole screen (the window's rectangle unknown, another screen than the
focused one, ``--ocr-region screen``, or a row of an older run)."""

PENDING_WHERE = "COALESCE(is_processed, 0) = 0 AND COALESCE(file_deleted, 0) = 0 AND deleted_at IS NULL"
"""Screenshots the OCR worker (:mod:`._ocr`) has still to read (unprocessed, file kept, not deleted)."""


def pending_count(con: sqlite3.Connection) -> int:
    """How many screenshots the worker has still to read (the OCR backlog)."""
    return int(con.execute(f"SELECT COUNT(*) FROM screenshots WHERE {PENDING_WHERE}").fetchone()[0])


def ts(t: datetime) -> str:
    """``t`` as LifeTrace stores it (naive local ``YYYY-MM-DD HH:MM:SS.ffffff``)."""
    return t.strftime(TIMESTAMP_FORMAT)


def screenshot_name(screen_id: int, t: datetime, ext: str = "png") -> str:
    """``screen_{screen_id}_{YYYYmmdd_HHMMSS_mmm}.{ext}`` (LifeTrace's file names)."""
    return f"screen_{screen_id}_{t.strftime('%Y%m%d_%H%M%S')}_{t.microsecond // 1000:03d}.{ext}"


def connect(db: Path) -> sqlite3.Connection:
    """A read-write connection in WAL mode (autocommit; each statement group is one short
    transaction), waiting up to 5 s for the other writer (the OCR worker). In an encrypted
    capture folder (:mod:`proagent.vault`) it is a SQLCipher connection with the folder's key."""
    from ..vault import connect as vault_connect

    con = vault_connect(db, timeout=5.0, isolation_level=None, check_same_thread=False)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA synchronous = NORMAL")
    con.execute("PRAGMA busy_timeout = 5000")
    return con


class Store:
    """Writes events and screenshots of one capture folder (created when new).

    Raises (on construction):
        CaptureError: the folder holds a ``lifetrace.db`` that is corrupt, not SQLite, or not a
            2025-11 log (e.g. a ProAgentBench or older LifeTrace database).
    """

    def __init__(self, folder: Path) -> None:
        from ..vault import connect as vault_connect
        from ..vault import key_for, vault_of

        self.folder = Path(folder)
        self.shots = self.folder / SHOTS_DIR
        self.shots.mkdir(parents=True, exist_ok=True)
        for d in (self.folder, self.shots):
            os.chmod(d, DIR_MODE)
        self.db = self.folder / DB_NAME
        vault = vault_of(self.folder)
        self.key = key_for(vault) if vault is not None else None
        """The folder's key when it is an encrypted capture (``capture --encrypt``), else ``None``."""
        if self.db.exists():
            self._check_existing()
        else:  # created complete under another name, so a reader never sees it empty
            with built_aside(self.db, mode=FILE_MODE) as tmp:  # private from its first byte (mkstemp)
                con = vault_connect(tmp, self.key) if self.key is not None else sqlite3.connect(tmp)
                con.executescript(lifetrace_ddl("2025-11"))
                con.close()
        for f in (self.db, self.db.with_name(DB_NAME + "-wal"), self.db.with_name(DB_NAME + "-shm")):
            if f.exists():
                os.chmod(f, FILE_MODE)
        self.con = connect(self.db)
        self.con.executescript(lifetrace_ddl("2025-11"))  # IF NOT EXISTS: completes a folder of an older run
        cols = {r[1] for r in self.con.execute('PRAGMA table_info("screenshots")')}
        if "focused" not in cols:
            self.con.execute(f"ALTER TABLE screenshots ADD COLUMN {FOCUSED_COLUMN}")
        if "ocr_region" not in cols:
            self.con.execute(f"ALTER TABLE screenshots ADD COLUMN {OCR_REGION_COLUMN}")
        self.stored_bytes = int(
            self.con.execute(
                "SELECT COALESCE(SUM(file_size), 0) FROM screenshots WHERE COALESCE(file_deleted, 0) = 0"
            ).fetchone()[0]
        )
        """Bytes of the screenshot files still on disk (kept up to date as files come and go)."""

    def _check_existing(self) -> None:
        """Refuse a ``lifetrace.db`` that is not a capture log proagent can continue."""
        try:
            info = detect_schema(self.db)
        except DataError as e:
            raise CaptureError(
                f"{self.db}: cannot continue this database ({e.problem}); choose another --out"
            ) from None
        if info.variant != "2025-11" or info.is_processed:
            raise CaptureError(
                f"{self.db}: a LifeTrace {info.variant} database, not a 2025-11 capture log; choose another --out"
            ) from None

    def recover(self) -> int:
        """Close events a crash left open (``end_time`` NULL) at their last heartbeat
        (``updated_at``, else their last screenshot, else their start). Returns how many."""
        rows = self.con.execute("SELECT id FROM events WHERE end_time IS NULL AND deleted_at IS NULL").fetchall()
        self.con.execute(
            "UPDATE events SET end_time = COALESCE(updated_at, (SELECT MAX(s.created_at) FROM screenshots s "
            "WHERE s.event_id = events.id), start_time), status = 'new' WHERE end_time IS NULL AND deleted_at IS NULL"
        )
        return len(rows)

    def open_event(self, app: str, title: str | None, t: datetime) -> int:
        """Insert an open event (``end_time`` NULL) starting at ``t``; returns its id."""
        s = ts(t)
        cur = self.con.execute(
            "INSERT INTO events (app_name, window_title, start_time, end_time, created_at, status, "
            "auto_association_attempted, updated_at) VALUES (?, ?, ?, NULL, ?, 'new', 0, ?)",
            (app, title, s, s, s),
        )
        return int(cur.lastrowid)  # type: ignore[arg-type]  # sqlite3 sets it on every INSERT

    def heartbeat(self, event_id: int, t: datetime) -> None:
        """Record that ``event_id`` is still going at ``t`` (crash recovery ends it there)."""
        self.con.execute("UPDATE events SET updated_at = ? WHERE id = ?", (ts(t), event_id))

    def close_event(self, event_id: int, t: datetime) -> None:
        """Set ``end_time`` of ``event_id`` to ``t``."""
        self.con.execute("UPDATE events SET end_time = ?, updated_at = ? WHERE id = ?", (ts(t), ts(t), event_id))

    def add_screenshot(
        self,
        *,
        event_id: int,
        screen_id: int,
        t: datetime,
        data: bytes,
        ext: str,
        file_hash: str,
        width: int,
        height: int,
        app: str,
        title: str,
        focused: bool | None = None,
        ocr_region: tuple[int, int, int, int] | None = None,
    ) -> int:
        """Write the image file, then its row (``is_processed = 0`` until OCR; ``focused``: this
        screen held the focused window, ``None`` unknown; ``ocr_region``: ``(x, y, w, h)`` of the
        focused window in the image's pixels, the part OCR reads, ``None`` the whole screen,
        :data:`OCR_REGION_COLUMN`); returns the row id."""
        name = screenshot_name(screen_id, t, ext)
        path = self.shots / name
        n = 0
        while path.exists():  # same millisecond twice (a tick faster than 1 ms never happens; be safe)
            n += 1
            path = self.shots / name.replace(f".{ext}", f"_{n}.{ext}")
        if self.key is not None:
            from ..vault import encrypt

            data = encrypt(self.key, data, path.name)
        write_atomic(path, data, mode=FILE_MODE)
        s = ts(t)
        cur = self.con.execute(
            "INSERT INTO screenshots (file_path, file_hash, file_size, width, height, screen_id, app_name, window_title, "
            "created_at, processed_at, is_processed, event_id, file_deleted, updated_at, focused, ocr_region) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 0, ?, 0, ?, ?, ?)",
            (
                str(path.resolve()),
                file_hash,
                len(data),
                width,
                height,
                screen_id,
                app,
                title,
                s,
                event_id,
                s,
                None if focused is None else int(focused),
                None if ocr_region is None else ",".join(str(int(v)) for v in ocr_region),
            ),
        )
        self.stored_bytes += len(data)
        return int(cur.lastrowid)  # type: ignore[arg-type]  # sqlite3 sets it on every INSERT

    def enforce_retention(self, now: datetime, *, max_days: float | None, max_bytes: int | None) -> int:
        """Remove screenshot files past the limits, oldest first; returns how many were removed."""
        removed = 0
        if max_days is not None:
            cutoff = ts(now - timedelta(days=max_days))
            rows = self.con.execute(
                "SELECT id, file_path, file_size FROM screenshots WHERE COALESCE(file_deleted, 0) = 0 "
                "AND created_at < ? ORDER BY created_at, id",
                (cutoff,),
            ).fetchall()
            removed += self._delete_files(rows, now)
        while max_bytes is not None and self.stored_bytes > max_bytes:
            rows = self.con.execute(
                "SELECT id, file_path, file_size FROM screenshots WHERE COALESCE(file_deleted, 0) = 0 "
                "ORDER BY created_at, id LIMIT 200"
            ).fetchall()
            if not rows:
                break
            over = self.stored_bytes - max_bytes
            take, acc = [], 0
            for r in rows:
                take.append(r)
                acc += int(r[2] or 0)
                if acc >= over:
                    break
            removed += self._delete_files(take, now)
        return removed

    def _delete_files(self, rows: list[tuple], now: datetime) -> int:
        for sid, file_path, size in rows:
            p = self.shots / Path(str(file_path)).name
            p.unlink(missing_ok=True)
            self.con.execute("UPDATE screenshots SET file_deleted = 1, updated_at = ? WHERE id = ?", (ts(now), sid))
            self.stored_bytes -= int(size or 0)
        return len(rows)

    def close(self) -> None:
        """Checkpoint the WAL into the database file and close."""
        try:
            self.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.OperationalError:
            pass  # a reader holds the WAL: it is checkpointed next time
        self.con.close()
