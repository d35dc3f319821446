"""Whether a ``--out`` folder may receive a capture: empty, missing, or a capture folder of
proagent's own (a LifeTrace 2025-11 ``lifetrace.db`` and the files capture keeps beside it, and
those ``proagent live`` writes there: :data:`proagent.live_files.LIVE_NAMES`, since live's default
``--out`` is the folder of the log it watches).

Checked before anything is created, so a refused ``proagent capture`` leaves the disk as it was
(no lock, no ``screenshots/``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import ProagentError
from ..live_files import LIVE_NAMES
from ._probe import CaptureError

__all__ = ["CAPTURE_NAMES", "check_capture_folder", "check_encryption", "removed_if_refused"]

CAPTURE_NAMES = frozenset(
    {
        "lifetrace.db",
        "lifetrace.db-wal",
        "lifetrace.db-shm",
        "lifetrace.db-journal",
        ".lifetrace.db.new",
        "screenshots",
        "capture.lock",
        "capture.pid",
        "capture.control",
        "capture.status",
        ".proagent.lock",
        "vault.json",
    }
)
"""Names a capture folder holds (the database and its WAL files, screenshots, the recorder's lock,
pid, control and status files, proagent's run lock, the encrypted store's record (no key in it))."""


def check_capture_folder(out: Path) -> bool:
    """Refuse an ``--out`` that is a file or a non-empty folder that is not a capture folder.

    Returns:
        ``True`` when ``out`` is already a capture folder to continue, ``False`` when it is missing
        or empty (a new capture).

    Raises:
        CaptureError: ``out`` is a file, cannot be listed, holds other files than capture's and
            live's (the message names one), or holds a ``lifetrace.db`` that is not a LifeTrace 2025-11 capture log.
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
    other = [n for n in names if n not in CAPTURE_NAMES and n not in LIVE_NAMES]
    db = out / "lifetrace.db"
    if other or not db.is_file():
        shown = other[0] if other else names[0]
        raise CaptureError(
            f"--out {out}: not empty and not a capture folder (it holds {shown}"
            f"{' and more' if len(other) > 1 else ''}); choose an empty or new folder"
        )
    try:
        info = detect_schema(db)
    except DataError as e:
        raise CaptureError(f"--out {db}: cannot continue this database ({e.problem}); choose another --out") from None
    if info.variant != "2025-11" or info.is_processed:
        raise CaptureError(
            f"--out {db}: a LifeTrace {info.variant} database, not a 2025-11 capture log; choose another --out"
        )
    return True


def check_encryption(out: Path, encrypt: bool, continued: bool) -> None:
    """With ``--encrypt``, refuse to continue a plain capture folder (its screens are already on
    disk in the clear); for an encrypted folder (with or without ``--encrypt``), check that its
    key is at hand, so a missing or wrong key is one line before anything starts.

    Raises:
        CaptureError: ``--encrypt`` on a plain capture folder, or the encryption libraries missing.
        DataError: the folder's key is missing or wrong (:func:`proagent.vault.key_for`).
    """
    from ..vault import key_for, vault_of

    vault = vault_of(out) if continued else None
    if vault is not None:
        key_for(vault)
        return
    if encrypt and continued:
        raise CaptureError(f"--encrypt: {out} is a plain (unencrypted) capture folder; encrypt a new folder instead")
    if encrypt:
        try:
            import cryptography  # noqa: F401
            import sqlcipher3  # noqa: F401
        except ImportError:
            raise CaptureError("--encrypt needs cryptography and sqlcipher3: pip install 'proagent[encrypt]'") from None
        import os

        from ..vault import PASSPHRASE_ENV, _keyring

        if not os.environ.get(PASSPHRASE_ENV) and _keyring() is None:
            raise CaptureError(
                f"--encrypt: no OS keyring is available to keep the key; set {PASSPHRASE_ENV} "
                "to derive it from a passphrase instead"
            )


@contextmanager
def removed_if_refused(out: Path, *, continued: bool, missing: list[Path] | None = None) -> Iterator[None]:
    """Run a new capture into ``out``; when a proagent error (:class:`CaptureError`,
    :class:`~proagent.errors.DataError`, ...) refuses it before anything is recorded, remove what
    it made: ``out`` and the folders above it that were missing (``missing``: those listed, taken
    before the caller created ``out``; ``None``: those missing on entry), or, when ``out`` existed
    (empty), the files capture puts in it. A ``continued`` folder (see :func:`check_capture_folder`)
    is never touched, nor one that got an event or a screenshot.

    Raises:
        proagent.errors.ProagentError: the refusal, re-raised after the clean-up.
    """
    if missing is None:
        missing = [d for d in (out, *out.parents) if not d.exists()]
    try:
        yield
    except ProagentError:
        if not continued:  # refused before the first tick: leave no half-made folder behind
            _remove_new_capture(out, missing)
        raise


def _remove_new_capture(out: Path, missing: list[Path]) -> None:
    """Remove what a refused new capture made in ``out`` (``out`` and the folders above it in
    ``missing`` when it made them), unless a screenshot or event got recorded."""
    import shutil
    import sqlite3

    from ..errors import DataError
    from ..sources.lifetrace_schema import connect_read_only
    from ._store import DB_NAME, SHOTS_DIR

    db = out / DB_NAME
    if db.exists():
        try:
            con = connect_read_only(db)
            try:
                if con.execute("SELECT (SELECT COUNT(*) FROM events) + (SELECT COUNT(*) FROM screenshots)").fetchone()[
                    0
                ]:
                    return
            finally:
                con.close()
        except (sqlite3.Error, DataError):  # unreadable or an encrypted one without its key: keep it
            return
    if missing:
        shutil.rmtree(out, ignore_errors=True)
        for d in missing[1:]:  # the parents it made, deepest first, while empty
            try:
                d.rmdir()
            except OSError:
                break
        return
    shutil.rmtree(out / SHOTS_DIR, ignore_errors=True)
    for name in (
        DB_NAME,
        DB_NAME + "-wal",
        DB_NAME + "-shm",
        "capture.lock",
        "capture.pid",
        "capture.control",
        "capture.status",
        "vault.json",
    ):
        (out / name).unlink(missing_ok=True)
