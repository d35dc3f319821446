"""Files written so that a crash never leaves half of one: the project's one atomic writer.

Every stage that writes a result, a manifest, a cache entry or a report writes it through
:func:`write_atomic` (bytes or text) or :func:`write_json_atomic`: the content goes to a
temporary file in the same folder, is flushed and fsync'ed, gets its permissions, and is
renamed over the target in one step (``os.replace``), so a reader sees the old file or the
new one, never a mix, and an interrupted write leaves the good file in place.

:func:`folder_lock` is the run lock: a log or output folder written by one proagent process
is refused at once to any other (an OS file lock on ``<folder>/.proagent.lock``, released by
the kernel on any exit, kills included, so a lock left by a dead process is never in the way).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from filelock import FileLock, Timeout

from .errors import DataError

__all__ = [
    "FLATTEN",
    "LOCK_NAME",
    "OMIT",
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "FolderBusy",
    "built_aside",
    "check_output_folder",
    "folder_lock",
    "slug",
    "swap_in",
    "to_jsonable",
    "write_atomic",
    "write_json_atomic",
]

PRIVATE_DIR_MODE = 0o700
"""Permission bits of a folder holding one person's screen data (capture, curate, annotate
outputs): only its owner can list or enter it."""
PRIVATE_FILE_MODE = 0o600
"""Permission bits of a file holding one person's screen data (databases, screenshots, logs)."""

LOCK_NAME = ".proagent.lock"
"""The run lock's file inside a locked folder (holds the owner's process id; ignored by
the checks that want a folder new or empty)."""

OMIT = {"omit_if_none": True}
"""Dataclass field metadata for :func:`to_jsonable`: the key is left out when the value is
``None`` (blocks only some runs have, so every other file keeps its key set)."""

FLATTEN = {"omit_if_none": True, "flatten": True}
"""Dataclass field metadata for :func:`to_jsonable`: the fields of this (dataclass) value are
written in its place, at the level of the record holding it; nothing when it is ``None``."""


def slug(text: str, limit: int = 80) -> str:
    """A file-name-safe form of ``text``: runs of characters other than ``A-Za-z0-9._-``
    become ``_``, leading/trailing ``_`` are dropped, at most ``limit`` characters; used for
    every folder name proagent derives from options (log dirs, ablation cells, stats folders)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:limit]


def check_output_folder(
    out: str | Path,
    *,
    marker: str,
    run: str,
    data: str | Path | None = None,
    data_name: str = "the input",
    writable_parent: bool = False,
    recognise: Callable[[Path], bool] | None = None,
    option: str | None = None,
) -> None:
    """Refuse an output folder a command must not write into, before any work.

    ``out`` may be new, empty (the run lock's file aside), or the output of an earlier run of
    the same command, recognised by its ``marker`` file (e.g. ``simulate.json``).

    Args:
        out: the output folder.
        marker: the file an earlier output of this command holds.
        run: the command's name, for the message (``annotate``, ``simulate``, ``synth``).
        data: the input, when the output replaces a folder beside it: ``out`` may neither
            hold it nor lie inside it.
        data_name: how the message names ``data`` (``the log``, ``the human data``).
        writable_parent: also check that the nearest existing parent of ``out`` is a writable
            folder (the output is built beside ``out`` and swapped in, :func:`swap_in`).
        recognise: for a marker with a common name (``manifest.json``): true when the marker
            file at the given path is really this command's (a user's own file of that name
            does not make the folder an earlier output).
        option: the command-line option that named ``out`` (``--out``): the refusal's message
            starts with it (:attr:`proagent.errors.DataError.option`).

    Raises:
        DataError: ``out`` is a file, a non-empty folder without ``marker`` (or whose marker
            ``recognise`` refuses), holds ``data``,
            lies inside ``data``, or (``writable_parent``) cannot be created or written.
    """
    out = Path(out)
    out_abs = Path(os.path.abspath(out))
    if data is not None:
        data_abs = Path(os.path.abspath(data))
        if data_abs.is_relative_to(out_abs):
            raise DataError(out, f"would replace {data_name} itself; choose another output folder", option=option)
        if data_abs.is_dir() and out_abs.is_relative_to(data_abs):
            raise DataError(
                out,
                f"is inside {data_name} folder, where readers would mix the two; choose a folder outside it",
                option=option,
            )
    if out.exists() and (
        not out.is_dir() or (any(p.name != LOCK_NAME for p in out.iterdir()) and not (out / marker).is_file())
    ):
        raise DataError(
            out,
            f"exists, is not empty and is not the output of an earlier {run} run (no {marker}); "
            "choose a new or empty folder",
            option=option,
        )
    if recognise is not None and (out / marker).is_file() and not recognise(out / marker):
        raise DataError(
            out,
            f"exists, is not empty and is not the output of an earlier {run} run (its {marker} "
            f"is not one {run} wrote); choose a new or empty folder",
            option=option,
        )
    if writable_parent:
        parent = out_abs.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
            raise DataError(
                out,
                f"cannot be written: {parent} is not a writable folder (checked before the model runs)",
                option=option,
            )


def swap_in(built: str | Path, target: str | Path, old: str | Path | None = None) -> Path:
    """Put the folder ``built`` (finished beside ``target``) in place of ``target`` in two renames.

    The previous ``target``, if any, is renamed to ``old`` (default: ``.<name>.old`` beside it) and
    removed only after ``built`` is in place, so a crash leaves either folder whole, never a mix.

    Raises:
        OSError: a rename failed (``built`` and the old ``target`` are left as they were).
    """
    built, target = Path(built), Path(target)
    old = Path(old) if old is not None else target.parent / f".{target.name}.old"
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        os.replace(target, old)
    os.replace(built, target)
    shutil.rmtree(old, ignore_errors=True)
    return target


def write_atomic(path: str | Path, data: bytes | str, *, mode: int = PRIVATE_FILE_MODE) -> Path:
    """Write ``data`` (bytes, or text as UTF-8) to ``path`` atomically.

    Args:
        path: the target file; its folder is created when missing.
        data: the whole content.
        mode: permission bits of the written file (default :data:`PRIVATE_FILE_MODE`: what
            proagent writes may hold window titles or screen text, so it is private unless a
            caller says otherwise); missing folders are created :data:`PRIVATE_DIR_MODE`.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        OSError: the folder cannot be created or written (the target is left as it was).
    """
    path = Path(path)
    path.parent.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


@contextmanager
def built_aside(path: str | Path, *, mode: int | None = None, suffix: str = ".tmp") -> Iterator[Path]:
    """A temporary file beside ``path`` for a file another library builds (a SQLite database,
    a model assembled from parts): when the ``with`` block ends without an error the file is
    fsync'ed, gets ``mode`` and is renamed over ``path`` in one step; on any error (or an
    interrupt) it is removed and ``path`` is left as it was.

    Args:
        path: the target file; its folder is created when missing.
        mode: permission bits of the finished file (``None``: ``0o600``, private from its
            first byte, as :func:`tempfile.mkstemp` creates it).
        suffix: how the temporary file's name ends (``.eval`` for a library that picks the
            format by the extension).

    Yields:
        The temporary file's path (it exists, empty; SQLite opens an empty file as a new database).

    Raises:
        OSError: the folder cannot be created or written.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def to_jsonable(obj: Any, *, nan: Literal["null", "error"] = "null") -> Any:
    """``obj`` with numpy scalars and arrays, paths, sets, tuples, other sequences and
    dataclass records turned into JSON types: the project's one JSON converter.

    A dataclass field's metadata :data:`OMIT` leaves its key out when the value is ``None``;
    :data:`FLATTEN` writes the fields of its (dataclass) value in its place (the blocks of
    ``results.json``, :mod:`proagent.report.results`).

    Keys that start with ``_`` hold in-memory helpers (raw series, fitted objects) and are
    left out. Other objects JSON does not know are written as ``str(obj)`` by the writers.

    Args:
        obj: nested dicts, lists and scalars.
        nan: what a non-finite float becomes: ``"null"`` (``None``) or ``"error"``
            (``ValueError``), so no file ever holds the non-standard ``NaN`` token.
    """
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v, nan=nan) for k, v in obj.items() if not str(k).startswith("_")}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [to_jsonable(v, nan=nan) for v in obj]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            if f.name.startswith("_") or (v is None and f.metadata.get("omit_if_none")):
                continue
            if f.metadata.get("flatten"):
                out.update(to_jsonable(v, nan=nan))
            else:
                out[f.name] = to_jsonable(v, nan=nan)
        return out
    if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes, bytearray)):  # e.g. an event's lazy screenshots
        return [to_jsonable(v, nan=nan) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "tolist") and not isinstance(obj, (str, bytes)):  # numpy arrays and scalars
        return to_jsonable(obj.tolist(), nan=nan)
    if isinstance(obj, float) and not math.isfinite(obj):
        if nan == "error":
            raise ValueError(f"non-finite number {obj!r} cannot be written as JSON")
        return None
    return obj


def write_json_atomic(
    path: str | Path,
    data: Any,
    *,
    indent: int | None = 2,
    nan: Literal["null", "error"] = "null",
    mode: int = PRIVATE_FILE_MODE,
) -> Path:
    """Write ``data`` as strict UTF-8 JSON (newline-terminated) to ``path`` atomically.

    Args:
        path: the target file.
        data: anything :func:`to_jsonable` accepts.
        indent: JSON indentation (``None``: one line).
        nan: policy for non-finite floats (see :func:`to_jsonable`).
        mode: permission bits of the written file.

    Raises:
        OSError: the file cannot be written (the old one is kept).
        ValueError: ``nan="error"`` and the data holds a non-finite float.
    """
    text = json.dumps(to_jsonable(data, nan=nan), indent=indent, ensure_ascii=False, allow_nan=False, default=str)
    return write_atomic(path, text + "\n", mode=mode)


class FolderBusy(DataError):
    """Another process holds :func:`folder_lock` on the folder (``path``)."""

    def __init__(self, folder: Path, pid: int | None, *, option: str | None = None) -> None:
        self.folder = folder
        """The locked folder."""
        self.pid = pid
        """Process id of the holder as it wrote it (``None`` when unreadable)."""
        who = f"process {pid}" if pid else "another process"
        super().__init__(
            folder, f"in use by {who} (another proagent run); wait for it to finish, or stop it", option=option
        )


_HELD: dict[Path, int] = {}


@contextmanager
def folder_lock(folder: str | Path, *, tidy: Sequence[Path] = (), option: str | None = None) -> Iterator[int | None]:
    """Hold the run lock on ``folder`` (created if missing) for the ``with`` block.

    The lock is a ``filelock.FileLock`` on ``<folder>/.proagent.lock`` (an OS lock:
    ``flock`` on Unix, ``msvcrt.locking`` on Windows, released by the kernel on any
    exit), taken without waiting; it is re-entrant within one process (a command and
    the run inside it share it). The file is emptied on release and kept, except when the run
    left nothing else in ``folder`` and this call created the file: then it is
    removed (while still locked) and so are the folders in ``tidy`` (those the
    caller created, deepest first, when empty), so a refused command leaves the
    disk as it was; a block that raised removes the file it created even beside other files. A pid found in the file while the lock is free was left by a
    process that died (a stale lock), and is simply replaced.

    ``option`` is the command-line option that named ``folder`` (``--out``); a refusal names it.

    Yields:
        The pid of a stale lock that was taken over, else ``None``.

    Raises:
        FolderBusy: another process holds the lock (the message names its pid, and ``option``).
        OSError: the folder or the lock file cannot be created.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    key = folder.resolve()
    if key in _HELD:
        _HELD[key] += 1
        try:
            yield None
        finally:
            _HELD[key] -= 1
        return
    path = folder / LOCK_NAME
    made = not path.exists()
    previous = _read_pid(path)  # read while the lock is free: a pid left by a process that died

    def stamp(fd: int) -> None:  # the holder's pid, for the message of a refused second run
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"{os.getpid()}\n".encode())

    lock = FileLock(
        path, mode=PRIVATE_FILE_MODE, blocking=False, thread_local=False, preserve_lock_file=True, on_acquired=stamp
    )
    try:
        lock.acquire()
    except Timeout:
        raise FolderBusy(folder, _read_pid(path), option=option) from None
    try:
        _HELD[key] = 1
        failed = True
        try:
            yield previous if previous != os.getpid() else None
            failed = False
        finally:
            del _HELD[key]
            with contextlib.suppress(OSError):
                os.truncate(path, 0)
            if made:
                _tidy(folder, path, tidy, failed=failed)
    finally:
        lock.release()


def _tidy(folder: Path, lock: Path, made: Sequence[Path], *, failed: bool = False) -> None:
    """Remove ``lock`` (held) when the run left nothing else in ``folder`` or ``failed`` (a command
    refused after it took the lock, e.g. ``live`` on a damaged ``feedback.db``, left its lock file
    beside the files that were there), then the folders ``made`` that are empty."""
    try:
        if not failed and [p.name for p in folder.iterdir()] != [lock.name]:
            return
        lock.unlink()
    except OSError:
        return
    for d in sorted(made, key=lambda p: len(p.parts), reverse=True):
        try:
            d.rmdir()
        except OSError:
            return


def _read_pid(path: Path) -> int | None:
    """The pid written in the lock file ``path`` (``None``: none, unreadable or gone)."""
    try:
        with open(path, "rb") as f:
            text = f.read(32).decode("ascii", "replace").strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None
