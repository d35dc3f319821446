"""The one disk cache: a bounded ``key -> bytes`` store in one folder, on ``diskcache``.

Used by the three caches that keep work across runs: a local model's answers
(:mod:`proagent.models._answers`, ``~/.cache/proagent/answers``), the decider's text
embeddings (:mod:`proagent.agent.decider._embedding`, ``~/.cache/proagent/embeddings/e5-small``)
and the long-term memories' per-user artefacts (:class:`proagent.agent.memory.MemoryCache`,
``~/.cache/proagent/memory``). Each folder is one ``diskcache.Cache`` (a SQLite database,
``cache.db``, with its WAL files): safe across threads and processes, and bounded: when a
write takes the folder past its size limit, the least recently stored entries are dropped
(diskcache's ``least-recently-stored`` eviction). Before, each cache was one file per entry
with no bound.

Size limit: :data:`DEFAULT_SIZE_LIMIT` (1 GiB, diskcache's own default) per folder, or
``$PROAGENT_CACHE_SIZE_MB`` megabytes (2**20 bytes). An entry larger than the limit is not
kept.

Privacy: the entries describe a person's activity, so the folder (and any parent this module
creates) is ``0700`` and ``cache.db`` is created ``0600`` before SQLite opens it (SQLite gives
its ``-wal`` and ``-shm`` files the database's permissions); every value is kept inside the
database (``disk_min_file_size`` above any entry), so no other file is made. Values are bytes,
stored as they are (never pickled).

A cache that cannot be opened, read or written (read-only folder, a damaged database) only
makes runs slower: reads miss, writes are dropped.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

from .io import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE

__all__ = ["DEFAULT_SIZE_LIMIT", "DiskCache", "size_limit"]

DEFAULT_SIZE_LIMIT = 1 << 30
"""Bytes one cache folder may hold (1 GiB) unless ``$PROAGENT_CACHE_SIZE_MB`` says otherwise."""

_DB = "cache.db"
_IN_DATABASE = 1 << 40
"""``disk_min_file_size``: values below this many bytes stay in SQLite (all of them)."""


def size_limit() -> int:
    """The size limit of each cache folder in bytes: ``$PROAGENT_CACHE_SIZE_MB`` MiB, else
    :data:`DEFAULT_SIZE_LIMIT` (an unreadable or non-positive value is ignored)."""
    text = os.environ.get("PROAGENT_CACHE_SIZE_MB", "").strip()
    try:
        mb = float(text) if text else 0.0
    except ValueError:
        mb = 0.0
    return int(mb * (1 << 20)) if mb > 0 else DEFAULT_SIZE_LIMIT


def _private_folder(root: Path) -> None:
    """``root`` and the parents it lacks, each made ``0700`` (``os.makedirs`` gives the
    parents the default mode)."""
    missing = []
    p = root
    while not p.exists():
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        d.mkdir(mode=PRIVATE_DIR_MODE, exist_ok=True)


class DiskCache:
    """A bounded ``str -> bytes`` store in ``root`` (see the module docstring), opened on first use.

    Args:
        root: the cache folder.
        limit: bytes it may hold (default :func:`size_limit`).
    """

    def __init__(self, root: str | Path, limit: int | None = None) -> None:
        self.root = Path(root)
        self.limit = int(limit) if limit is not None else size_limit()
        self._cache: Any = None
        self._pid = 0
        self._broken = False
        self._lock = threading.Lock()

    def _open(self) -> Any:
        """The ``diskcache.Cache`` of this process (reopened after a fork), or ``None`` when
        the folder cannot hold one."""
        if self._broken:
            return None
        if self._cache is not None and self._pid == os.getpid():
            return self._cache
        with self._lock:
            if self._cache is not None and self._pid == os.getpid():
                return self._cache
            import diskcache

            try:
                _private_folder(self.root)
                db = self.root / _DB
                if not db.exists():  # SQLite creates its -wal/-shm files with the database's mode
                    os.close(os.open(db, os.O_WRONLY | os.O_CREAT, PRIVATE_FILE_MODE))
                self._cache = diskcache.Cache(
                    str(self.root),
                    size_limit=self.limit,
                    disk_min_file_size=_IN_DATABASE,
                    eviction_policy="least-recently-stored",
                )
                self._pid = os.getpid()
            except (OSError, sqlite3.Error):
                self._broken = True
                return None
            return self._cache

    def get(self, key: str) -> bytes | None:
        """The value stored under ``key``, or ``None`` (not stored, evicted, unreadable)."""
        cache = self._open()
        if cache is None:
            return None
        try:
            value = cache.get(key)
        except (OSError, sqlite3.Error):
            return None
        return value if isinstance(value, bytes) else None

    def set(self, key: str, value: bytes) -> None:
        """Store ``value`` under ``key`` (dropped when it cannot be written or exceeds the limit)."""
        cache = self._open()
        if cache is None or len(value) > self.limit:
            return
        try:
            cache.set(key, bytes(value))
        except (OSError, sqlite3.Error):
            pass  # a cache that cannot be written only makes runs slower

    def __contains__(self, key: str) -> bool:
        cache = self._open()
        if cache is None:
            return False
        try:
            return key in cache
        except (OSError, sqlite3.Error):
            return False

    def volume(self) -> int:
        """Bytes the cache holds now (diskcache's estimate: database pages), 0 when closed."""
        cache = self._open()
        try:
            return int(cache.volume()) if cache is not None else 0
        except (OSError, sqlite3.Error):
            return 0

    def close(self) -> None:
        """Close this process's connection (it reopens on the next use)."""
        if self._cache is not None and self._pid == os.getpid():
            self._cache.close()
        self._cache = None
