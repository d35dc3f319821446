"""Whether a ``--out`` folder may receive a capture: empty, missing, or a capture folder of
proagent's own (a LifeTrace 2025-11 ``lifetrace.db`` and the files capture keeps beside it).

Checked before anything is created, so a refused ``proagent capture`` leaves the disk as it was
(no lock, no ``screenshots/``).
"""

from __future__ import annotations

from pathlib import Path

from ._probe import CaptureError

__all__ = ["CAPTURE_NAMES", "check_capture_folder"]

CAPTURE_NAMES = frozenset({
    "lifetrace.db", "lifetrace.db-wal", "lifetrace.db-shm", "lifetrace.db-journal", ".lifetrace.db.new",
    "screenshots", "capture.lock", "capture.pid", "capture.control", ".proagent.lock", "keys.json",
})
"""Names a capture folder holds (the database and its WAL files, screenshots, the recorder's lock,
pid and control files, proagent's run lock, the encrypted store's key file)."""


def check_capture_folder(out: Path) -> bool:
    """Refuse an ``--out`` that is a file or a non-empty folder that is not a capture folder.

    Returns:
        ``True`` when ``out`` is already a capture folder to continue, ``False`` when it is missing
        or empty (a new capture).

    Raises:
        CaptureError: ``out`` is a file, cannot be listed, holds other files (the message names
            one), or holds a ``lifetrace.db`` that is not a LifeTrace 2025-11 capture log.
    """
    from ..errors import DataError
    from ..sources.lifetrace_schema import detect_schema

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise CaptureError(f"--out {out}: not a folder")
    if not out.exists():
        return False
    try:
        names = sorted(p.name for p in out.iterdir())
    except OSError as e:
        raise CaptureError(f"--out {out}: cannot read the folder ({e.strerror or e})") from None
    if not names or names == [".proagent.lock"]:
        return False
    other = [n for n in names if n not in CAPTURE_NAMES]
    db = out / "lifetrace.db"
    if other or not db.is_file():
        shown = other[0] if other else names[0]
        raise CaptureError(f"--out {out}: not empty and not a capture folder (it holds {shown}"
                           f"{' and more' if len(other) > 1 else ''}); choose an empty or new folder")
    try:
        info = detect_schema(db)
    except DataError as e:
        raise CaptureError(f"--out {db}: cannot continue this database ({e.problem}); choose another --out") from None
    if info.variant != "2025-11" or info.is_processed:
        raise CaptureError(f"--out {db}: a LifeTrace {info.variant} database, not a 2025-11 capture log; "
                           "choose another --out")
    return True
