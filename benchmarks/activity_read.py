"""Reading ActivityWatch and screenpipe logs: proagent's readers against the recorders' own reading.

* **ActivityWatch**: an aw-server (Python) database written by aw-core's ``SqliteStorage`` with
  ``--events`` window events (10 s each, three apps cycling, titles varying), one AFK event over all
  and a web event per browser event. Timed: :func:`proagent.sources.activitywatch.load_activitywatch`
  (all buckets merged into events), its windowed read (``since``: the last 15 minutes, what the
  live follower reads per change), and, as the baseline, aw-core's own ``SqliteStorage.get_events``
  of the window bucket alone (rows to ``aw_core.models.Event``, no merging).
* **screenpipe**: a ``db.sqlite`` of ``--frames`` focused frames (2 s apart) with OCR rows, in
  screenpipe's schema. Timed: :func:`proagent.sources.screenpipe.load_screenpipe` and its windowed
  read; baseline: the plain SQL join of frames and their OCR text into tuples (what any reader pays
  at least).

Each figure is the best of ``--repeat`` runs. Prints the machine's load first.

    python benchmarks/activity_read.py [--events 100000] [--frames 50000] [--repeat 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import guard_network, machine_note, parse_args, render_table, run_main, watchdog, write_result  # noqa: E402

APPS = [("Code", "main.py - Code"), ("Firefox", "ChatGPT — Mozilla Firefox"), ("Terminal", "bash")]


def best(fn, repeat: int) -> tuple[float, object]:  # noqa: ANN001
    out, times = None, []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def aw_database(path: Path, n: int) -> datetime:
    from aw_core.models import Event
    from aw_datastore.storages import SqliteStorage

    st = SqliteStorage(testing=True, filepath=str(path))
    t0 = datetime(2026, 1, 5, 8, tzinfo=timezone.utc)
    st.create_bucket("aw-watcher-window_h", "currentwindow", "aw-watcher-window", "h", t0.isoformat())
    st.create_bucket("aw-watcher-afk_h", "afkstatus", "aw-watcher-afk", "h", t0.isoformat())
    st.create_bucket("aw-watcher-web-firefox_h", "web.tab.current", "aw-client-web", "h", t0.isoformat())
    win, web = [], []
    for i in range(n):
        app, title = APPS[i % 3]
        t = t0 + timedelta(seconds=10 * i)
        win.append(Event(timestamp=t, duration=9.5, data={"app": app, "title": f"{title} {i % 40}"}))
        if app == "Firefox":
            web.append(
                Event(timestamp=t, duration=9.5, data={"url": f"https://chatgpt.com/c/{i % 40}", "title": "ChatGPT"})
            )
    st.insert_many("aw-watcher-window_h", win)
    st.insert_many("aw-watcher-web-firefox_h", web)
    st.insert_one("aw-watcher-afk_h", Event(timestamp=t0, duration=10.0 * n, data={"status": "not-afk"}))
    st.commit()
    st.conn.close()
    return (t0 + timedelta(seconds=10 * n)).astimezone().replace(tzinfo=None)


def sp_database(folder: Path, n: int) -> datetime:
    folder.mkdir(parents=True)
    conn = sqlite3.connect(folder / "db.sqlite")
    conn.executescript("""
        CREATE TABLE video_chunks (id INTEGER PRIMARY KEY AUTOINCREMENT, file_path TEXT NOT NULL,
            device_name TEXT NOT NULL DEFAULT '', fps REAL NOT NULL DEFAULT 0.5);
        CREATE TABLE frames (id INTEGER PRIMARY KEY AUTOINCREMENT, video_chunk_id INTEGER NOT NULL,
            offset_index INTEGER NOT NULL, timestamp TIMESTAMP NOT NULL, name TEXT, device_name TEXT NOT NULL DEFAULT '',
            browser_url TEXT DEFAULT NULL, app_name TEXT DEFAULT NULL, window_name TEXT DEFAULT NULL,
            focused BOOLEAN DEFAULT NULL);
        CREATE INDEX idx_frames_timestamp ON frames(timestamp);
        CREATE TABLE ocr_text (frame_id INTEGER NOT NULL, text TEXT NOT NULL, text_json TEXT,
            app_name TEXT NOT NULL DEFAULT '', ocr_engine TEXT NOT NULL DEFAULT 'unknown', window_name TEXT,
            focused BOOLEAN DEFAULT FALSE, text_length INTEGER);
        CREATE INDEX idx_ocr_text_frame_id ON ocr_text(frame_id);
    """)
    conn.execute("INSERT INTO video_chunks (file_path, device_name) VALUES ('data/monitor_1.mp4', 'monitor_1')")
    t0 = datetime(2026, 1, 5, 8, tzinfo=timezone.utc)
    rows, ocr = [], []
    for i in range(n):
        app, title = APPS[(i // 5) % 3]
        t = t0 + timedelta(seconds=2 * i)
        rows.append(
            (
                i + 1,
                1,
                i % 1000,
                t.strftime("%Y-%m-%dT%H:%M:%S.%f") + "000+00:00",
                "data/monitor_1.mp4",
                app,
                title,
                1,
                "monitor_1",
            )
        )
        ocr.append((i + 1, f"screen text {i % 97} of {app}", "tesseract"))
    conn.executemany(
        "INSERT INTO frames (id, video_chunk_id, offset_index, timestamp, name, app_name, window_name, "
        "focused, device_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    conn.executemany("INSERT INTO ocr_text (frame_id, text, ocr_engine) VALUES (?, ?, ?)", ocr)
    conn.commit()
    conn.close()
    return (t0 + timedelta(seconds=2 * n)).astimezone().replace(tzinfo=None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--frames", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--smoke", action="store_true", help="the smallest setting (CI): 2000 events, 1000 frames, once")
    a = parse_args(
        ap, smoke={"events": 2000, "frames": 1000, "repeat": 1}, positive=("events", "frames", "repeat", "timeout")
    )
    guard_network()
    watchdog(a.timeout)
    line, info = machine_note()
    print(line)
    from aw_datastore.storages import SqliteStorage

    from proagent.sources.activitywatch import load_activitywatch
    from proagent.sources.screenpipe import load_screenpipe

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "aw.db"
        end = aw_database(db, a.events)
        secs, log = best(lambda: load_activitywatch(db), a.repeat)
        rows.append(
            {
                "what": "ActivityWatch: proagent, whole log merged",
                "rows": a.events,
                "events": len(log.events),
                "seconds": secs,
            }
        )
        secs, log = best(lambda: load_activitywatch(db, since=end - timedelta(minutes=15)), a.repeat)
        rows.append(
            {
                "what": "ActivityWatch: proagent, last 15 min (follower)",
                "rows": a.events,
                "events": len(log.events),
                "seconds": secs,
            }
        )

        def aw_core() -> list:
            st = SqliteStorage(testing=True, filepath=str(db))
            try:
                return st.get_events("aw-watcher-window_h", limit=-1)
            finally:
                st.conn.close()

        secs, evs = best(aw_core, a.repeat)
        rows.append(
            {
                "what": "ActivityWatch: aw-core get_events (window bucket, baseline)",
                "rows": a.events,
                "events": len(evs),
                "seconds": secs,
            }
        )

        folder = Path(tmp) / "sp"
        end = sp_database(folder, a.frames)
        secs, log = best(lambda: load_screenpipe(folder), a.repeat)
        rows.append(
            {"what": "screenpipe: proagent, whole log", "rows": a.frames, "events": len(log.events), "seconds": secs}
        )
        secs, log = best(lambda: load_screenpipe(folder, since=end - timedelta(minutes=15)), a.repeat)
        rows.append(
            {
                "what": "screenpipe: proagent, last 15 min (follower)",
                "rows": a.frames,
                "events": len(log.events),
                "seconds": secs,
            }
        )

        def plain_sql() -> list:
            conn = sqlite3.connect(folder / "db.sqlite")
            try:
                return conn.execute(
                    "SELECT f.id, f.timestamp, f.app_name, f.window_name, o.text FROM frames f "
                    "LEFT JOIN ocr_text o ON o.frame_id = f.id ORDER BY f.timestamp"
                ).fetchall()
            finally:
                conn.close()

        secs, got = best(plain_sql, a.repeat)
        rows.append(
            {"what": "screenpipe: plain SQL join (baseline)", "rows": a.frames, "events": len(got), "seconds": secs}
        )
    for r in rows:
        r["rows_per_s"] = r["rows"] / r["seconds"] if r["seconds"] else None
    for r in rows:
        r["baseline"] = "baseline" in r["what"]
    columns = [
        ("what", "read", ""),
        ("rows", "rows", ""),
        ("events", "out", ""),
        ("seconds", "seconds", ".3f"),
        ("rows_per_s", "db rows/s", ",.0f"),
    ]
    print(render_table(rows, columns))
    note = (
        "rows: window events (ActivityWatch) or focused frames (screenpipe) in the database; out: proagent events, "
        f"or the baseline's rows; best of {a.repeat}"
    )
    print(note)
    if a.json:
        write_result(
            a.json,
            benchmark="activity_read",
            rows=rows,
            columns=columns,
            machine=info,
            note=note,
            baseline="aw-core's own SqliteStorage.get_events of the window bucket; the plain SQL join of "
            "screenpipe's frames and OCR text",
        )


if __name__ == "__main__":
    run_main(main)
