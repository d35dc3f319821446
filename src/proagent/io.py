"""Files written so that a crash never leaves half of one: the project's one atomic writer.

Every stage that writes a result, a manifest, a cache entry or a report writes it through
:func:`write_atomic` (bytes or text) or :func:`write_json_atomic`: the content goes to a
temporary file in the same folder, is flushed and fsync'ed, gets its permissions, and is
renamed over the target in one step (``os.replace``), so a reader sees the old file or the
new one, never a mix, and an interrupted write leaves the good file in place.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Literal

__all__ = ["slug", "to_jsonable", "write_atomic", "write_json_atomic"]


def slug(text: str, limit: int = 80) -> str:
    """A file-name-safe form of ``text``: runs of characters other than ``A-Za-z0-9._-``
    become ``_``, leading/trailing ``_`` are dropped, at most ``limit`` characters; used for
    every folder name proagent derives from options (log dirs, ablation cells, stats folders)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:limit]


def write_atomic(path: str | Path, data: bytes | str, *, mode: int = 0o644) -> Path:
    """Write ``data`` (bytes, or text as UTF-8) to ``path`` atomically.

    Args:
        path: the target file; its folder is created when missing.
        data: the whole content.
        mode: permission bits of the written file (``0o600`` for private data).

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        OSError: the folder cannot be created or written (the target is left as it was).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
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


def to_jsonable(obj: Any, *, nan: Literal["null", "error"] = "null") -> Any:
    """``obj`` with numpy scalars and arrays, paths, sets and tuples turned into JSON types.

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
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "tolist") and not isinstance(obj, (str, bytes)):  # numpy arrays and scalars
        return to_jsonable(obj.tolist(), nan=nan)
    if isinstance(obj, float) and not math.isfinite(obj):
        if nan == "error":
            raise ValueError(f"non-finite number {obj!r} cannot be written as JSON")
        return None
    return obj


def write_json_atomic(path: str | Path, data: Any, *, indent: int | None = 2,
                      nan: Literal["null", "error"] = "null", mode: int = 0o644) -> Path:
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
