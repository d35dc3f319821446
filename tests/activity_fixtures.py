"""ActivityWatch and screenpipe logs for the reader tests, written as those projects write them.

* aw-server (Python): the real ``aw_datastore`` storages of the ``aw-core`` package
  (``SqliteStorage``, ``PeeweeStorage``) write the database.
* aw-server-rust: its tables as ``aw-datastore/src/datastore.rs`` creates them (schema version 5:
  ``buckets`` with ``data``, ``events`` with nanosecond ``starttime``/``endtime``, ``key_value``),
  written with plain SQL here since the Rust server is no Python package.
* The JSON export, in the shape of ``aw-models`` ``BucketsExport``.
* screenpipe: its ``frames``, ``video_chunks`` and ``ocr_text`` tables as its migrations leave them
  (``crates/screenpipe-db/src/migrations``), timestamps as sqlx writes a ``DateTime<Utc>`` (RFC 3339),
  and MP4 chunks written with OpenCV.

One scenario (UTC times of 2026-03-02) serves every format: see :data:`WINDOW`, :data:`AFK`, :data:`WEB`.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

__all__ = [
    "AFK",
    "WEB",
    "WINDOW",
    "local",
    "utc",
    "write_aw_core",
    "write_aw_export",
    "write_aw_rust",
    "write_screenpipe",
]


def utc(h: int, m: int, s: float = 0) -> datetime:
    return datetime(2026, 3, 2, h, m, tzinfo=timezone.utc) + timedelta(seconds=s)


def local(t: datetime) -> datetime:
    """A UTC time as the readers give it: naive local time of this machine."""
    return t.astimezone().replace(tzinfo=None)


# (start, seconds, data)
WINDOW = [
    (utc(10, 0, 0), 30.0, {"app": "Code", "title": "main.py - Code"}),
    (utc(10, 0, 31), 19.0, {"app": "Code", "title": "● main.py - Code"}),  # unsaved marker, same file: merged
    (utc(10, 0, 50), 50.0, {"app": "Firefox", "title": "ChatGPT — Mozilla Firefox"}),
    (utc(10, 1, 40), 20.0, {"app": "Terminal", "title": "bash"}),
    (utc(10, 5, 0), 60.0, {"app": "Slack", "title": "general"}),  # while away: dropped
    (utc(10, 6, 0), 60.0, {"app": "Code", "title": "main.py - Code"}),  # clipped to 10:06:10
]
AFK = [
    (utc(10, 0, 0), 240.0, {"status": "not-afk"}),
    (utc(10, 4, 0), 130.0, {"status": "afk"}),
    (utc(10, 6, 10), 110.0, {"status": "not-afk"}),
]
WEB = [
    (
        utc(10, 0, 50),
        50.0,
        {"url": "https://chatgpt.com/c/1", "title": "ChatGPT", "audible": False, "incognito": False, "tabCount": 3},
    ),
    (
        utc(10, 1, 0),
        5.0,
        {"url": "https://example.org/", "title": "Example", "audible": False, "incognito": False, "tabCount": 3},
    ),  # title not in the window title: no URL
]
BUCKETS = (
    ("aw-watcher-window_host", "currentwindow", "aw-watcher-window", WINDOW),
    ("aw-watcher-afk_host", "afkstatus", "aw-watcher-afk", AFK),
    ("aw-watcher-web-firefox_host", "web.tab.current", "aw-client-web", WEB),
)


def write_aw_core(path: Path, storage: str = "sqlite", buckets=BUCKETS) -> Path:  # noqa: ANN001
    """An aw-server (Python) database written by aw-core's own storage class."""
    from aw_core.models import Event
    from aw_datastore.storages import PeeweeStorage, SqliteStorage

    cls = {"sqlite": SqliteStorage, "peewee": PeeweeStorage}[storage]
    st = cls(testing=True, filepath=str(path))
    for bid, kind, client, events in buckets:
        st.create_bucket(bid, kind, client, "host", utc(9, 0).isoformat())
        st.insert_many(bid, [Event(timestamp=t, duration=d, data=data) for t, d, data in events])
    if hasattr(st, "commit"):
        st.commit()
    if hasattr(st, "conn"):
        st.conn.close()
    else:
        st.db.close()
    return path


def create_aw_rust(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE IF NOT EXISTS buckets (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE NOT NULL,
            type TEXT NOT NULL, client TEXT NOT NULL, hostname TEXT NOT NULL, created TEXT NOT NULL,
            data TEXT NOT NULL DEFAULT '{}');
        CREATE INDEX IF NOT EXISTS bucket_id_index ON buckets(id);
        CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY AUTOINCREMENT, bucketrow INTEGER NOT NULL,
            starttime INTEGER NOT NULL, endtime INTEGER NOT NULL, data TEXT NOT NULL,
            FOREIGN KEY (bucketrow) REFERENCES buckets(id));
        CREATE INDEX IF NOT EXISTS events_bucketrow_index ON events(bucketrow);
        CREATE INDEX IF NOT EXISTS events_bucketrow_starttime_endtime_index ON events(bucketrow, starttime DESC, endtime);
        CREATE TABLE IF NOT EXISTS key_value (key TEXT PRIMARY KEY, value TEXT, last_modified NUMBER NOT NULL);
        PRAGMA user_version = 5;
        PRAGMA journal_mode = WAL;
    """)
    return conn


def _ns(t: datetime) -> int:
    return int(t.timestamp()) * 10**9 + t.microsecond * 1000


def add_aw_rust_bucket(conn: sqlite3.Connection, bid: str, kind: str, client: str) -> int:
    cur = conn.execute(
        "INSERT INTO buckets (name, type, client, hostname, created, data) VALUES (?, ?, ?, ?, ?, '{}')",
        (bid, kind, client, "host", utc(9, 0).isoformat()),
    )
    return int(cur.lastrowid)


def add_aw_rust_event(conn: sqlite3.Connection, bucketrow: int, t: datetime, seconds: float, data: dict) -> int:
    cur = conn.execute(
        "INSERT INTO events (bucketrow, starttime, endtime, data) VALUES (?, ?, ?, ?)",
        (bucketrow, _ns(t), _ns(t) + int(seconds * 10**9), json.dumps(data)),
    )
    return int(cur.lastrowid)


def write_aw_rust(path: Path, buckets=BUCKETS) -> Path:  # noqa: ANN001
    """An aw-server-rust ``sqlite.db`` with the scenario, events interleaved in time as watchers write them."""
    conn = create_aw_rust(path)
    rows = {bid: add_aw_rust_bucket(conn, bid, kind, client) for bid, kind, client, _ in buckets}
    timeline = sorted((t, bid, d, data) for bid, _, _, evs in buckets for t, d, data in evs)
    for t, bid, d, data in timeline:
        add_aw_rust_event(conn, rows[bid], t, d, data)
    conn.commit()
    conn.close()
    return path


def write_aw_export(path: Path, buckets=BUCKETS) -> Path:  # noqa: ANN001
    """The JSON export (``GET /api/0/export``) of the scenario."""
    n = 0
    doc: dict = {"buckets": {}}
    for bid, kind, client, evs in buckets:
        out = []
        for t, d, data in evs:
            n += 1
            out.append({"id": n, "timestamp": t.isoformat().replace("+00:00", "Z"), "duration": d, "data": data})
        doc["buckets"][bid] = {
            "id": bid,
            "created": utc(9, 0).isoformat(),
            "name": None,
            "type": kind,
            "client": client,
            "hostname": "host",
            "data": {},
            "events": out,
        }
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- screenpipe

SCREENPIPE_DDL = """
CREATE TABLE video_chunks (id INTEGER PRIMARY KEY AUTOINCREMENT, file_path TEXT NOT NULL,
    device_name TEXT NOT NULL DEFAULT '', sync_id TEXT, machine_id TEXT, synced_at DATETIME,
    fps REAL NOT NULL DEFAULT 0.5);
CREATE TABLE frames (id INTEGER PRIMARY KEY AUTOINCREMENT, video_chunk_id INTEGER NOT NULL,
    offset_index INTEGER NOT NULL, timestamp TIMESTAMP NOT NULL, name TEXT, sync_id TEXT, machine_id TEXT,
    synced_at DATETIME, device_name TEXT NOT NULL DEFAULT '', browser_url TEXT DEFAULT NULL,
    app_name TEXT DEFAULT NULL, window_name TEXT DEFAULT NULL, focused BOOLEAN DEFAULT NULL,
    FOREIGN KEY (video_chunk_id) REFERENCES video_chunks(id));
CREATE INDEX idx_frames_timestamp ON frames(timestamp);
CREATE TABLE ocr_text (frame_id INTEGER NOT NULL, text TEXT NOT NULL, text_json TEXT,
    app_name TEXT NOT NULL DEFAULT '', ocr_engine TEXT NOT NULL DEFAULT 'unknown', window_name TEXT,
    focused BOOLEAN DEFAULT FALSE, text_length INTEGER, sync_id TEXT, synced_at DATETIME);
CREATE INDEX idx_ocr_text_frame_id ON ocr_text(frame_id);
"""

# (seconds after 10:00 UTC, app, window, url, text) of the focused monitor; one frame per 2 s (fps 0.5)
FRAMES = [
    (0, "Code", "main.py - Code", None, "def main():"),
    (2, "Code", "main.py - Code", None, "def main():\n    run()"),
    (4, "Code", "● main.py - Code", None, "def main():\n    run()\n    helper()"),  # unsaved: the same file
    (6, "Firefox", "ChatGPT — Mozilla Firefox", "https://chatgpt.com/c/1", "How do I sort a dict?"),
    (8, "Firefox", "ChatGPT — Mozilla Firefox", "https://chatgpt.com/c/1", "How do I sort a dict?"),
    (10, "Firefox", "ChatGPT — Mozilla Firefox", "https://chatgpt.com/c/1", "sorted(d.items())"),
    (12, "Terminal", "bash", None, "$ pytest"),
    (14, "Terminal", "bash", None, "$ pytest\n3 passed"),
]


def sp_time(t: datetime) -> str:
    """A UTC time as sqlx writes ``DateTime<Utc>`` on SQLite (RFC 3339, nanoseconds, ``+00:00``)."""
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f") + "000+00:00"


def create_screenpipe(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path)
    conn.executescript(SCREENPIPE_DDL + "PRAGMA journal_mode = WAL;")
    return conn


def write_screenpipe(folder: Path, frames=FRAMES, *, second_monitor: bool = True, video: bool = True) -> Path:  # noqa: ANN001
    """``folder/db.sqlite`` (+ ``folder/data/*.mp4`` when ``video``): the focused monitor's frames, and
    when ``second_monitor`` an unfocused monitor showing a mail app at the same times."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data").mkdir(exist_ok=True)
    conn = create_screenpipe(folder / "db.sqlite")
    monitors = ["monitor_1"] + (["monitor_2"] if second_monitor else [])
    chunk_ids = {}
    for m in monitors:
        name = str(folder / "data" / f"{m}_2026-03-02_10-00-00.mp4")
        chunk_ids[m] = conn.execute(
            "INSERT INTO video_chunks (file_path, device_name, fps) VALUES (?, ?, 0.5)", (name, m)
        ).lastrowid
        if video:
            _write_video(Path(name), len(frames), 60 if m == "monitor_1" else 200)
    for i, (sec, app, window, url, text) in enumerate(frames):
        for m in monitors:
            focused = m == "monitor_1"
            a, w, u, tx = (app, window, url, text) if focused else ("Mail", "Inbox", None, "3 unread")
            fid = conn.execute(
                "INSERT INTO frames (video_chunk_id, offset_index, timestamp, name, browser_url, app_name, window_name,"
                " focused, device_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    chunk_ids[m],
                    i,
                    sp_time(utc(10, 0, sec)),
                    str(folder / "data" / f"{m}_2026-03-02_10-00-00.mp4"),
                    u,
                    a,
                    w,
                    focused,
                    m,
                ),
            ).lastrowid
            conn.execute(
                "INSERT INTO ocr_text (frame_id, text, text_json, ocr_engine, text_length) VALUES (?, ?, ?, ?, ?)",
                (fid, tx, "[]", "tesseract", len(tx)),
            )
    conn.commit()
    conn.close()
    return folder / "db.sqlite"


def _write_video(path: Path, n: int, shade: int) -> None:
    """An MP4 chunk of ``n`` 64x48 frames; frame i has brightness ``shade`` in a bar i*4 pixels wide."""
    import cv2
    import numpy as np

    out = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 0.5, (64, 48))
    assert out.isOpened(), "OpenCV cannot write mp4v here"
    for i in range(n):
        img = np.zeros((48, 64, 3), np.uint8)
        img[:, : (i + 1) * 4] = shade
        out.write(img)
    out.release()
