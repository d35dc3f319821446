"""``proagent live --watch`` on a growing ActivityWatch (aw-server-rust schema) or screenpipe database."""

from __future__ import annotations

import sqlite3
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from activity_fixtures import (
    add_aw_rust_bucket,
    add_aw_rust_event,
    create_aw_rust,
    create_screenpipe,
    sp_time,
    write_aw_export,
)
from click.testing import CliRunner

from proagent.cli import cli
from proagent.live import ActivityLogFollower, FeedbackStore, LiveOptions, RestraintConfig, ScriptedDecider, run_watch

APPS = [("Code", "main.py - Code"), ("Firefox", "Docs — Mozilla Firefox"), ("Terminal", "bash")]


class Recording(ScriptedDecider):
    def __init__(self) -> None:
        super().__init__(yes=set())
        self.samples = []

    def __call__(self, sample):  # noqa: ANN001, ANN204
        self.samples.append(sample)
        return super().__call__(sample)


class AwWriter(threading.Thread):
    """aw-server-rust as its watchers drive it: a window event per app, heartbeats extending the
    newest row in place, a title change within one app (a new row, no new event), not-afk time."""

    def __init__(self, db: Path, t0: datetime, start: int, n: int, gap: float = 0.15) -> None:
        super().__init__(daemon=True)
        self.db, self.t0, self.start_i, self.n, self.gap = db, t0, start, n, gap
        self.ids: list[int] = []

    def run(self) -> None:
        conn = sqlite3.connect(self.db, timeout=10)
        win, afk = (
            conn.execute("SELECT id FROM buckets WHERE type = ?", (k,)).fetchone()[0]
            for k in ("currentwindow", "afkstatus")
        )
        for i in range(self.start_i, self.start_i + self.n):
            app, title = APPS[i % len(APPS)]
            t = self.t0 + timedelta(seconds=20 * i)
            rid = add_aw_rust_event(conn, win, t, 1.0, {"app": app, "title": title})
            add_aw_rust_event(conn, afk, t, 20.0, {"status": "not-afk"})
            conn.commit()
            self.ids.append(rid)
            time.sleep(self.gap)
            conn.execute("UPDATE events SET endtime = starttime + 9000000000 WHERE id = ?", (rid,))  # heartbeat
            add_aw_rust_event(conn, win, t + timedelta(seconds=10), 10.0, {"app": app, "title": title + " *"})
            conn.commit()
            time.sleep(self.gap)
        conn.close()


def _aw_db(tmp: Path) -> Path:
    db = tmp / "aw-server-rust" / "sqlite.db"
    db.parent.mkdir(parents=True)
    conn = create_aw_rust(db)
    add_aw_rust_bucket(conn, "aw-watcher-window_host", "currentwindow", "aw-watcher-window")
    add_aw_rust_bucket(conn, "aw-watcher-afk_host", "afkstatus", "aw-watcher-afk")
    conn.commit()
    conn.close()
    return db


def _opts() -> LiveOptions:
    return LiveOptions(notify=("none",), every_seconds=0.0, restraint=RestraintConfig())


def test_watch_a_growing_activitywatch_database(tmp_path: Path) -> None:
    db = _aw_db(tmp_path)
    t0 = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(minutes=10)
    AwWriter(db, t0, 0, 2, gap=0.0).run()  # present before the agent starts: history
    d = Recording()
    w = AwWriter(db, t0, 2, 3)
    got = []
    th = threading.Thread(
        target=lambda: got.extend(
            run_watch(db, tmp_path / "live", d, _opts(), poll_seconds=0.02, max_moments=3, duration=30).decisions
        )
    )
    th.start()
    for _ in range(200):
        if (tmp_path / "live" / "feedback.db").exists():
            break
        time.sleep(0.02)
    time.sleep(0.5)
    w.start()
    th.join(30)
    w.join(30)
    assert not th.is_alive() and len(got) == 3
    rows = FeedbackStore(tmp_path / "live").decisions()
    assert [r["row_id"] for r in rows] == w.ids  # each new app once; heartbeats and title rows are no moment
    # each moment has its new app's event in front as current (issue 32: no screen to settle, so at once),
    # and the previous one, grown by its heartbeats and merged title row, last in its context
    for s, i in zip(d.samples, range(2, 5)):
        assert s.current.app_name == APPS[i % len(APPS)][0] and s.current.end is None
        assert s.context[-1].app_name == APPS[(i - 1) % len(APPS)][0]
        assert s.context[-1].duration == 20.0 and s.context[-1].url is None


def test_follow_a_growing_screenpipe_database(tmp_path: Path) -> None:
    folder = tmp_path / ".screenpipe"
    folder.mkdir()
    conn = create_screenpipe(folder / "db.sqlite")
    chunk = conn.execute(
        "INSERT INTO video_chunks (file_path, device_name) VALUES ('data/m.mp4', 'monitor_1')"
    ).lastrowid
    t0 = datetime.now(timezone.utc) - timedelta(minutes=5)

    def frames(i0: int, n: int) -> None:
        for i in range(i0, i0 + n):
            app, title = APPS[(i // 3) % len(APPS)]  # three frames per app, 2 s apart
            fid = conn.execute(
                "INSERT INTO frames (video_chunk_id, offset_index, timestamp, name, app_name, window_name,"
                " focused, device_name) VALUES (?, ?, ?, 'data/m.mp4', ?, ?, 1, 'monitor_1')",
                (chunk, i, sp_time(t0 + timedelta(seconds=2 * i)), app, title),
            ).lastrowid
            conn.execute("INSERT INTO ocr_text (frame_id, text) VALUES (?, ?)", (fid, f"text {i}"))
        conn.commit()

    frames(0, 4)  # Code x3, Firefox x1: history
    f = ActivityLogFollower(folder / "db.sqlite")
    assert f.poll() == [] and f.last_id == 4
    frames(4, 5)  # Firefox x2 (same event), Terminal x3 (a new one)
    ms = f.poll()
    assert [(m.row_id, m.new_event.app_name) for m in ms] == [(7, "Terminal")]
    assert [e.app_name for e in ms[0].history] == ["Code", "Firefox", "Terminal"]
    assert ms[0].history[1].screenshots[-1].ocr_text == "text 5" and not f.changed()
    assert f.poll() == []
    tick = f.tick(datetime.now())
    assert tick is not None and tick.history[-1].app_name == "Terminal"
    f.close()
    conn.close()


def test_watch_refuses_an_export_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "yes.txt").write_text("")
    r = CliRunner().invoke(
        cli,
        [
            "live",
            "--watch",
            str(write_aw_export(tmp_path / "e.json")),
            "--model",
            "none",
            "--yes-at",
            str(tmp_path / "yes.txt"),
        ],
    )
    assert r.exit_code == 1 and "does not grow" in r.output
    assert "Traceback" not in r.output and not (tmp_path / "feedback.db").exists()


def test_follow_a_database_aw_core_writes(tmp_path: Path) -> None:
    """aw-server's own storage class (aw-core) writing while the follower polls."""
    import pytest

    pytest.importorskip("aw_datastore")
    from aw_core.models import Event as AwEvent
    from aw_datastore.storages import SqliteStorage

    db = tmp_path / "aw-server" / "sqlite.v1.db"
    db.parent.mkdir()
    st = SqliteStorage(testing=True, filepath=str(db), enable_lazy_commit=False)
    st.create_bucket(
        "aw-watcher-window_host", "currentwindow", "aw-watcher-window", "host", "2026-03-02T09:00:00+00:00"
    )
    t0 = datetime.now(timezone.utc) - timedelta(minutes=5)
    st.insert_one("aw-watcher-window_host", AwEvent(timestamp=t0, duration=20, data={"app": "Code", "title": "a"}))
    st.commit()
    f = ActivityLogFollower(db)
    assert f.poll() == [] and f.last_id == 1
    for i, (app, title) in enumerate(APPS[1:], 1):
        st.insert_one(
            "aw-watcher-window_host",
            AwEvent(timestamp=t0 + timedelta(seconds=20 * i), duration=20, data={"app": app, "title": title}),
        )
    st.commit()
    ms = f.poll()
    assert [(m.row_id, m.new_event.app_name) for m in ms] == [(2, "Firefox"), (3, "Terminal")]
    assert [e.app_name for e in ms[1].history] == ["Code", "Firefox", "Terminal"]
    f.close()
    st.conn.close()
