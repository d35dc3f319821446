"""Other recorders' logs written as a LifeTrace database, so that every LifeTrace tool
(``proagent annotate`` and its processed copy, ``curate``, ``simulate``) takes them as they are.

The copy is LifeTrace 2025-11 (:func:`~.lifetrace_write.lifetrace_ddl`) plus two event columns
the LifeTrace reader reads back: ``url`` and ``screen_recorded`` (0 for ActivityWatch, which
records no screen). Event and screenshot ids are the source reader's (the first row's id), so
annotations keyed by ``(user, event_id)`` fit the source and the copy alike. A screenpipe frame
becomes a screenshot row named ``screen_{screen_id}_{YYYYmmdd_HHMMSS_mmm}.png`` (the screen id
is the number in its monitor's name), with its image taken from the MP4 chunk when the chunk is
here (OpenCV), and its OCR text as an ``ocr_results`` row.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from pathlib import Path

from ._foreign import ActivityLog
from .lifetrace_write import TIMESTAMP_FORMAT, lifetrace_ddl
from .screenpipe import ScreenpipeLog, video_frame

__all__ = ["CONVERTED_COLUMNS", "write_lifetrace_copy"]

CONVERTED_COLUMNS = ("url VARCHAR(2000)", "screen_recorded BOOLEAN")
"""Event columns a converted log adds to LifeTrace's."""


def _screen_id(device: str) -> int:
    m = re.search(r"(\d+)\s*$", device or "")
    return int(m.group(1)) if m else 0


def write_lifetrace_copy(log: ActivityLog, folder: str | Path) -> Path:
    """Write ``log`` as ``folder/lifetrace.db`` (+ ``folder/screenshots/`` for screenpipe frames).

    Args:
        log: An ActivityWatch or screenpipe log (:func:`proagent.sources.load.load_activity_log`).
        folder: An empty or new folder.

    Returns:
        The database written.

    Raises:
        FileExistsError: ``folder/lifetrace.db`` exists.
        DataError: a video chunk cannot be read.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "lifetrace.db"
    if db.exists():
        raise FileExistsError(db)
    frames = log.frames if isinstance(log, ScreenpipeLog) else {}
    conn = sqlite3.connect(db)
    try:
        conn.executescript(lifetrace_ddl("2025-11", extra_event_columns=CONVERTED_COLUMNS))
        names: set[str] = set()
        with conn:
            for e in log.events:
                ts = lambda t: t.strftime(TIMESTAMP_FORMAT) if t is not None else None  # noqa: E731
                conn.execute(
                    "INSERT INTO events (id, app_name, window_title, start_time, end_time, created_at, status, url, "
                    "screen_recorded) VALUES (?, ?, ?, ?, ?, ?, 'new', ?, ?)",
                    (
                        int(e.id),
                        e.app_name,
                        e.window_title,
                        ts(e.start),
                        ts(e.end),
                        ts(e.start),
                        e.url,
                        int(e.screen_recorded),
                    ),
                )
                for s in e.screenshots:
                    vf = frames.get(s.id)
                    sid = _screen_id(vf.device_name) if vf else 0
                    name = f"screen_{sid}_{s.time.strftime('%Y%m%d_%H%M%S')}_{s.time.microsecond // 1000:03d}.png"
                    if name in names:
                        name = name.replace(".png", f"_{s.id}.png")
                    names.add(name)
                    digest, width, height = "", 0, 0
                    if vf is not None:
                        import cv2

                        img = video_frame(vf)
                        ok, png = cv2.imencode(".png", img)
                        if ok:
                            data = png.tobytes()
                            (folder / "screenshots").mkdir(exist_ok=True)
                            (folder / "screenshots" / name).write_bytes(data)
                            digest, (height, width) = hashlib.sha256(data).hexdigest(), img.shape[:2]
                    conn.execute(
                        "INSERT INTO screenshots (id, file_path, file_hash, file_size, width, height, screen_id, app_name, "
                        "window_title, created_at, is_processed, event_id, file_deleted) "
                        "VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, 1, ?, 0)",
                        (s.id, name, digest, width, height, sid, s.app_name, s.window_title, ts(s.time), int(e.id)),
                    )
                    if s.ocr_text:
                        conn.execute(
                            "INSERT INTO ocr_results (screenshot_id, text_content, created_at) VALUES (?, ?, ?)",
                            (s.id, s.ocr_text, ts(s.time)),
                        )
    finally:
        conn.close()
    return db
