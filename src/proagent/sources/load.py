"""Open any supported activity log by path, detecting its format.

* a ProactiveBench session file, or a folder of them;
* a LifeTrace SQLite database (any schema variant), or a ProAgentBench folder
  holding one database per participant (``<participant>/lifetrace_privacy_processed.db``
  or any ``*.db`` one level down).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import DataError
from ..records import Event
from .proactivebench import is_proactivebench_file, read_proactivebench

__all__ = ["find_databases", "is_sqlite_file", "load_events"]

_SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite_file(path: Path) -> bool:
    """True when ``path`` starts with the SQLite file header."""
    with open(path, "rb") as f:
        return f.read(16) == _SQLITE_MAGIC


def find_databases(folder: Path) -> list[Path]:
    """SQLite databases directly in ``folder`` or one level down, sorted."""
    found = [p for p in sorted(folder.glob("*.db")) if p.is_file()]
    found += [p for p in sorted(folder.glob("*/*.db")) if p.is_file()]
    return found


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
        if is_proactivebench_file(path):
            return read_proactivebench(path)
        if is_sqlite_file(path) or path.suffix in {".db", ".sqlite", ".sqlite3"}:
            return _lifetrace([path], annotations)
        raise DataError(path, "not a ProactiveBench session (.json) nor a LifeTrace SQLite database")
    dbs = find_databases(path)
    if any(is_proactivebench_file(p) for p in path.iterdir()):
        if dbs:
            raise DataError(path, f"holds both ProactiveBench sessions and SQLite databases ({dbs[0].name}, ...); "
                                  "point --data at one kind")
        return read_proactivebench(path)
    if dbs:
        return _lifetrace(dbs, annotations)
    raise DataError(path, "no ProactiveBench session files or LifeTrace databases (*.db) found here")


def _lifetrace(dbs: list[Path], annotations: list[str | Path] | None) -> list[Event]:
    from .annotations import load_annotations
    from .lifetrace import read_lifetrace

    ann = load_annotations(annotations) if annotations else None
    events: list[Event] = []
    for db in dbs:
        events.extend(read_lifetrace(db, annotations=ann))
    return events
