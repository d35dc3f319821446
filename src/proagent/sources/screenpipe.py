"""Reader for screenpipe's database (``~/.screenpipe/db.sqlite``) and its video chunks.

screenpipe records the screens into MP4 *video chunks* (``~/.screenpipe/data/<monitor>_<time>.mp4``)
and writes one ``frames`` row per captured window and cycle, with the OCR text in ``ocr_text``
(``crates/screenpipe-db/src/migrations``):

* ``video_chunks(id, file_path, device_name, fps)``;
* ``frames(id, video_chunk_id, offset_index, timestamp, name, browser_url, app_name, window_name,
  focused, device_name)``: ``offset_index`` is the frame's index in its chunk, ``name`` the chunk's
  file, ``device_name`` the monitor, ``timestamp`` UTC (RFC 3339 text);
* ``ocr_text(frame_id, text, text_json, app_name, window_name, focused, ocr_engine, ...)``; before
  2025-02 the app and window names lived only here, and the reader takes them from either table.

How rows become proagent events (judgement calls are marked *):

* The foreground is the frames marked ``focused`` (of any monitor); when no frame is marked (an
  older database, one monitor), every frame*. Frames come in time order (then id).
* A new event starts when the app changes, LifeTrace's rule (ProAgentBench section 5.1), or when
  a browser's page moves to another site or page kind (the tab rule of :mod:`proagent.pages`,
  from ``browser_url``, else the window name), or an editor's or terminal's window name names
  another document (:mod:`proagent.documents`); off with ``split_on_tab=False`` or
  ``PROAGENT_SPLIT_IN_APP=0`` (earlier ``PROAGENT_SPLIT_ON_TAB=0``). Its id
  is its first frame's id, its title that frame's window name, its ``url`` the first browser URL
  of its frames; it ends where the next event starts (the last event at its last frame)*.
* Each focused frame is a :class:`~proagent.records.Screenshot` (id = frame id) with the OCR text
  of its ``ocr_text`` rows (row order, blank and repeated texts dropped, as for LifeTrace). Its
  ``path`` is ``None``: the image is a frame inside a video chunk; :func:`video_frame` reads it
  (OpenCV), and :attr:`ScreenpipeLog.frames` says where each one is (the chunk resolved by file
  name against ``<db folder>/data``, then its recorded path, when it exists here).
* Times are UTC; they become naive local time. A malformed time is a :class:`DataError` naming the
  file, table, row id and column; the database is opened read-only and read in one transaction.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from ..errors import DataError
from ..pages import EventSplit, tab_rule_default
from ..records import Event, Screenshot
from ._foreign import ActivityLog, bad_cell, local_from_iso, table_columns
from .lifetrace import _no_cycle_collection
from .lifetrace_schema import SQLITE_READ_ERRORS, connect_read_only, sqlite_problem

__all__ = ["DB_NAME", "ScreenpipeLog", "VideoFrame", "is_screenpipe_db", "load_screenpipe", "video_frame"]

DB_NAME = "db.sqlite"
"""The name of screenpipe's database in its folder (``~/.screenpipe``)."""

_REQUIRED = {
    "frames": {"id", "video_chunk_id", "offset_index", "timestamp"},
    "video_chunks": {"id", "file_path"},
    "ocr_text": {"frame_id", "text"},
}


@dataclass(frozen=True)
class VideoFrame:
    """Where a frame's image is: a frame index of an MP4 chunk."""

    video: Path
    """The chunk, on this machine."""
    offset_index: int
    """The frame's index in the chunk (``frames.offset_index``)."""
    device_name: str
    """The monitor it shows (``frames.device_name``, e.g. ``monitor_1``)."""


@dataclass(frozen=True)
class ScreenpipeLog(ActivityLog):
    """A screenpipe database read in full (``kind`` ``screenpipe``)."""

    frames: dict[int, VideoFrame] = field(default_factory=dict)
    """Frame id -> its place in a video chunk found here (frames of missing chunks are absent)."""


def is_screenpipe_db(conn: sqlite3.Connection) -> bool:
    """True when an open database has screenpipe's ``frames`` and ``video_chunks`` tables (its
    signature; :func:`load_screenpipe` then names whatever else it lacks, e.g. ``ocr_text``)."""
    t = table_columns(conn)
    return "frames" in t and "video_chunks" in t


def _missing(t: dict[str, frozenset[str]]) -> str | None:
    """What a screenpipe database lacks of :data:`_REQUIRED` (``table ocr_text``, ``columns of
    frames: timestamp``), ``None`` when nothing."""
    for name, cols in _REQUIRED.items():
        if name not in t:
            return f"table {name} ({', '.join(sorted(cols))})"
        if not cols <= t[name]:
            return f"columns of {name}: {', '.join(sorted(cols - t[name]))}"
    return None


def _whole(value: Any, path: Path, table: str, rid: Any, column: str) -> int:
    """An integer cell (a whole number written as text too), else the reader's one cell error.

    Raises:
        DataError: naming the file, table, row id and column (was ``invalid literal for int()``
            naming only the folder).
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    raise bad_cell(path, table, rid, column, f"{value!r} is not a whole number")


def _file_name(p: str) -> str:
    return (PureWindowsPath(p) if "\\" in p else PurePosixPath(p)).name


def _chunk_path(recorded: str, folder: Path) -> Path | None:
    name = _file_name(recorded)
    for cand in (folder / "data" / name, folder / name, Path(recorded)):
        if name and cand.is_file():
            return cand
    return None


def _flag(v: Any) -> bool:
    return v in (1, True, "1", "true", "TRUE", "True")


def load_screenpipe(
    path: str | Path, *, user: str | None = None, since: datetime | None = None, split_on_tab: bool | None = None
) -> ScreenpipeLog:
    """Read a screenpipe database (see the module docstring for the rules).

    Args:
        path: ``db.sqlite``, or the folder holding it (``~/.screenpipe``).
        user: User id for the events (default: the name of the folder holding the database).
        since: Read only frames at or after this naive local time (a follower of a growing
            database reads its recent window this way); the first event may then be cut.
        split_on_tab: Apply the tab rule (:mod:`proagent.pages`): a browser's frames start
            another event when its page moves to another site or page kind (``browser_url``,
            else the window name), and an editor's or terminal's on another document.
            ``None``: :func:`proagent.pages.tab_rule_default` (on unless
            ``PROAGENT_SPLIT_IN_APP=0``).

    Returns:
        A :class:`ScreenpipeLog`; ``counts`` holds ``frames`` (all rows read), ``focused_frames``
        (those making the events) and ``missing_chunks`` (focused frames whose chunk is not here).

    Raises:
        DataError: missing, unreadable, corrupt or foreign database; a malformed timestamp (the
            message names the table, row id and column).
    """
    with _no_cycle_collection():  # many short-lived acyclic objects, as in the LifeTrace reader
        return _load(Path(path), user, since, tab_rule_default() if split_on_tab is None else split_on_tab)


def _load(path: Path, user: str | None, since: datetime | None, tabs: bool = True) -> ScreenpipeLog:
    if path.is_dir():
        path = path / DB_NAME
    if not path.is_file():
        raise DataError(path, "file not found" if not path.exists() else "not a regular file")
    if user is None:
        user = Path(os.path.abspath(path)).parent.name or path.stem
    try:
        conn = connect_read_only(path)
        try:
            t = table_columns(conn)
            if not is_screenpipe_db(conn):
                raise DataError(path, "not a screenpipe database (no frames/video_chunks/ocr_text tables)")
            if (lacks := _missing(t)) is not None:
                raise DataError(path, f"a screenpipe database without {lacks}, which proagent reads")
            conn.execute("BEGIN")
            rows, ocr, chunks = _read(conn, t, since, path)
            conn.execute("COMMIT")
        finally:
            conn.close()
    except SQLITE_READ_ERRORS as e:
        raise DataError(path, sqlite_problem(e, path)) from None

    frames: list[dict[str, Any]] = []
    for r in rows:
        rid = int(r["id"])
        try:
            t_ = local_from_iso(r["timestamp"])
        except ValueError as e:
            raise bad_cell(path, "frames", rid, "timestamp", str(e)) from None
        if since is not None and t_ < since:
            continue
        o = ocr.get(rid, {})
        frames.append(
            dict(
                id=rid,
                time=t_,
                chunk=r["video_chunk_id"],
                offset=_whole(r["offset_index"] or 0, path, "frames", rid, "offset_index"),
                app=(r["app_name"] or o.get("app_name") or "").strip(),
                window=(r["window_name"] or o.get("window_name") or "").strip(),
                url=(r["browser_url"] or "").strip() or None,
                focused=_flag(r["focused"]) or _flag(o.get("focused")),
                device=(r["device_name"] or "").strip(),
                text="\n".join(o.get("texts", ())),
            )
        )
    n_all = len(frames)
    if any(f["focused"] for f in frames):
        frames = [f for f in frames if f["focused"]]
    frames.sort(key=lambda f: (f["time"], f["id"]))

    resolved: dict[Any, Path | None] = {}
    where: dict[int, VideoFrame] = {}
    missing = 0
    for f in frames:
        c = f["chunk"]
        if c not in resolved:
            resolved[c] = _chunk_path(chunks[c], path.parent) if c in chunks and chunks[c] else None
        if resolved[c] is None:
            missing += 1
        else:
            where[f["id"]] = VideoFrame(resolved[c], f["offset"], f["device"])  # type: ignore[arg-type]

    runs: list[list[dict[str, Any]]] = []
    split = EventSplit(tabs)
    for f in frames:
        if split.starts(f["app"], f["window"], f["url"]):
            runs.append([f])
        else:
            runs[-1].append(f)
    events: list[Event] = []
    for i, run in enumerate(runs):
        first = run[0]
        end = runs[i + 1][0]["time"] if i + 1 < len(runs) else run[-1]["time"]
        shots = tuple(
            Screenshot(
                id=f["id"],
                time=f["time"],
                app_name=f["app"],
                window_title=f["window"],
                file_name=_file_name(chunks.get(f["chunk"]) or "") + f"#{f['offset']}",
                ocr_text=f["text"],
            )
            for f in run
        )
        events.append(
            Event(
                id=str(first["id"]),
                user=user,
                start=first["time"],
                end=end,
                app_name=first["app"],
                window_title=first["window"],
                url=next((f["url"] for f in run if f["url"]), None),
                screenshots=shots,
            )
        )
    return ScreenpipeLog(
        path=path,
        user=user,
        kind="screenpipe",
        events=tuple(events),
        counts={"frames": n_all, "focused_frames": len(frames), "missing_chunks": missing},
        frames=where,
    )


def _read(
    conn: sqlite3.Connection, t: dict[str, frozenset[str]], since: datetime | None, path: Path
) -> tuple[list[sqlite3.Row], dict[int, dict[str, Any]], dict[Any, str]]:
    fc, oc = t["frames"], t["ocr_text"]
    opt = ", ".join(
        f'"{c}"' if c in fc else f'NULL AS "{c}"'
        for c in ("app_name", "window_name", "browser_url", "focused", "device_name")
    )
    sql = f'SELECT id, video_chunk_id, offset_index, timestamp, {opt} FROM frames'
    args: tuple[Any, ...] = ()
    if since is not None:
        # timestamps are UTC text with "T" (sqlx) or " " between date and time: rows at or after the
        # bound in the "T" form, or on its day in the " " form (" " < "T" sorts them before any "T"
        # row of that day); both ranges use the index on timestamp, the reader drops what is
        # before ``since`` afterwards
        bound = since.astimezone(timezone.utc) - timedelta(minutes=1)
        day = bound.strftime("%Y-%m-%d")
        sql += " WHERE timestamp >= ? OR (timestamp >= ? AND timestamp < ?)"
        args = (bound.strftime("%Y-%m-%dT%H:%M:%S"), bound.strftime("%Y-%m-%d %H:%M:%S"), day + "T")
    rows = conn.execute(sql, args).fetchall()
    ids = {int(r["id"]) for r in rows}
    ocols = ", ".join(f'"{c}"' if c in oc else f'NULL AS "{c}"' for c in ("app_name", "window_name", "focused"))
    ocr: dict[int, dict[str, Any]] = {}
    lo = min(ids, default=0)  # only the OCR of the frames read (indexed by frame_id)
    for r in conn.execute(
        f"SELECT rowid, frame_id, text, {ocols} FROM ocr_text WHERE frame_id >= ? ORDER BY rowid", (lo,)
    ):
        fid = r["frame_id"]
        if fid is None:
            continue
        fid = _whole(fid, path, "ocr_text", r["rowid"], "frame_id")
        if fid not in ids:
            continue
        o = ocr.setdefault(fid, {"texts": []})
        text = (r["text"] or "").strip()
        if text and text not in o["texts"]:
            o["texts"].append(text)
        for k in ("app_name", "window_name", "focused"):
            if r[k] not in (None, "") and k not in o:
                o[k] = r[k]
    chunks = {r["id"]: r["file_path"] for r in conn.execute("SELECT id, file_path FROM video_chunks")}
    return rows, ocr, chunks


def video_frame(frame: VideoFrame) -> Any:
    """The image of one frame, read from its MP4 chunk with OpenCV.

    Returns:
        An ``H x W x 3`` uint8 array, BGR (OpenCV's order).

    Raises:
        DataError: the chunk cannot be opened or has no frame at ``offset_index``.
        RuntimeError: OpenCV is not installed (``pip install 'proagent[curate]'``).
    """
    try:
        import cv2
    except ImportError:
        raise RuntimeError("reading screenpipe video frames needs OpenCV: pip install 'proagent[curate]'") from None
    cap = cv2.VideoCapture(str(frame.video))
    try:
        if not cap.isOpened():
            raise DataError(frame.video, "cannot open this video chunk")
        cap.set(cv2.CAP_PROP_POS_FRAMES, frame.offset_index)
        ok, img = cap.read()
    finally:
        cap.release()
    if not ok or img is None:
        raise DataError(frame.video, f"has no frame {frame.offset_index}")
    return img
