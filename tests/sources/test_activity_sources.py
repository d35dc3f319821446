"""ActivityWatch and screenpipe readers: databases written by aw-core's own storages, the
aw-server-rust and screenpipe schemas, the JSON export, MP4 chunks; detection by ``load_events``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from activity_fixtures import (
    add_aw_rust_bucket,
    add_aw_rust_event,
    create_aw_rust,
    local,
    utc,
    write_aw_core,
    write_aw_export,
    write_aw_rust,
    write_screenpipe,
)
from system import require_module

from proagent.errors import DataError
from proagent.sources.activitywatch import load_activitywatch
from proagent.sources.load import activity_log_kind, load_activity_log, load_events
from proagent.sources.screenpipe import load_screenpipe, video_frame

require_module("aw_datastore")

EXPECTED = [  # (app, title, start, end, url) of the scenario in activity_fixtures
    ("Code", "main.py - Code", utc(10, 0, 0), utc(10, 0, 50), None),
    ("Firefox", "ChatGPT — Mozilla Firefox", utc(10, 0, 50), utc(10, 1, 40), "https://chatgpt.com/c/1"),
    ("Terminal", "bash", utc(10, 1, 40), utc(10, 2, 0), None),
    ("Code", "main.py - Code", utc(10, 6, 10), utc(10, 7, 0), None),
]


def _writers(tmp: Path) -> dict[str, Path]:
    return {
        "aw-server-sqlite": write_aw_core(tmp / "aw-sqlite.db", "sqlite"),
        "aw-server-peewee": write_aw_core(tmp / "aw-peewee.db", "peewee"),
        "aw-server-rust": write_aw_rust(tmp / "sqlite.db"),
        "export": write_aw_export(tmp / "aw-buckets-export.json"),
    }


@pytest.mark.parametrize("flavour", ["aw-server-sqlite", "aw-server-peewee", "aw-server-rust", "export"])
def test_activitywatch_buckets_merge_into_events(tmp_path: Path, flavour: str) -> None:
    path = _writers(tmp_path)[flavour]
    log = load_activitywatch(path)
    assert log.kind == f"activitywatch/{flavour}"
    got = [(e.app_name, e.window_title, e.start, e.end, e.url) for e in log.events]
    assert got == [(a, t, local(s), local(e), u) for a, t, s, e, u in EXPECTED]
    assert log.counts["afk_dropped"] == 1  # the Slack event while away
    assert all(e.user == tmp_path.name and not e.screenshots and not e.screen_recorded for e in log.events)
    assert [e.is_activity() for e in log.events] == [True, True, True, True]
    assert len({e.id for e in log.events}) == 4
    assert [e.app_name for e in load_events(path)] == [x[0] for x in EXPECTED]


def test_without_afk_bucket_every_window_event_is_kept(tmp_path: Path) -> None:
    from activity_fixtures import BUCKETS

    path = write_aw_core(tmp_path / "w.db", "sqlite", buckets=[BUCKETS[0]])
    apps = [e.app_name for e in load_activitywatch(path).events]
    assert apps == ["Code", "Firefox", "Terminal", "Slack", "Code"]  # Slack then Code: two apps, 0 s apart


def test_activitywatch_detection_and_folders(tmp_path: Path) -> None:
    paths = _writers(tmp_path)
    assert {activity_log_kind(p) for p in paths.values()} == {"activitywatch"}
    for user in ("alice", "bob"):
        (tmp_path / "many" / user).mkdir(parents=True)
    write_aw_rust(tmp_path / "many" / "alice" / "sqlite.db")
    write_aw_export(tmp_path / "many" / "bob" / "export.json")
    events = load_events(tmp_path / "many")
    assert sorted({e.user for e in events}) == ["alice", "bob"] and len(events) == 8


def test_activitywatch_bad_cells_name_the_row(tmp_path: Path) -> None:
    db = write_aw_rust(tmp_path / "sqlite.db")
    conn = sqlite3.connect(db)
    conn.execute("UPDATE events SET data = 'not json' WHERE id = 3")
    conn.commit()
    conn.close()
    with pytest.raises(DataError, match=r"table events, row id 3, column data: not JSON"):
        load_events(db)
    doc = json.loads(write_aw_export(tmp_path / "e.json").read_text())
    doc["buckets"]["aw-watcher-window_host"]["events"][1]["timestamp"] = "2026-03-02 10:00:31"
    (tmp_path / "e.json").write_text(json.dumps(doc))
    with pytest.raises(DataError, match=r"bucket aw-watcher-window_host, row id 2, column timestamp: .*no UTC offset"):
        load_events(tmp_path / "e.json")


def test_activitywatch_since_reads_the_recent_window(tmp_path: Path) -> None:
    db = write_aw_rust(tmp_path / "sqlite.db")
    evs = load_activitywatch(db, since=local(utc(10, 1, 45))).events
    assert [e.app_name for e in evs] == ["Terminal", "Code"]


def test_annotations_apply_to_activitywatch(tmp_path: Path) -> None:
    db = write_aw_rust(tmp_path / "sqlite.db")
    ids = [e.id for e in load_events(db)]
    ann = tmp_path / "ann.jsonl"
    ann.write_text(
        json.dumps(
            {"user": tmp_path.name, "event_id": ids[1], "user_intention": "Code Programming", "llm_platform": "ChatGPT"}
        )
        + "\n"
        + json.dumps({"user": tmp_path.name, "event_id": ids[2], "excluded": "test"})
        + "\n"
    )
    evs = load_events(db, annotations=[ann])
    assert [e.id for e in evs] == [ids[0], ids[1], ids[3]]
    assert evs[1].intention == "Code Programming" and evs[1].llm_platform == "ChatGPT"


def test_screenpipe_frames_become_events(tmp_path: Path) -> None:
    db = write_screenpipe(tmp_path / ".screenpipe")
    assert activity_log_kind(db) == "screenpipe"
    log = load_screenpipe(tmp_path / ".screenpipe")  # the folder works too
    got = [(e.app_name, e.window_title, e.start, e.end, e.url, len(e.screenshots)) for e in log.events]
    assert got == [
        ("Code", "main.py - Code", local(utc(10, 0, 0)), local(utc(10, 0, 6)), None, 3),
        (
            "Firefox",
            "ChatGPT — Mozilla Firefox",
            local(utc(10, 0, 6)),
            local(utc(10, 0, 12)),
            "https://chatgpt.com/c/1",
            3,
        ),
        ("Terminal", "bash", local(utc(10, 0, 12)), local(utc(10, 0, 14)), None, 2),
    ]  # the unfocused second monitor (Mail) makes no event
    assert log.counts == {"frames": 16, "focused_frames": 8, "missing_chunks": 0}
    shot = log.events[2].screenshots[1]
    assert shot.ocr_text == "$ pytest\n3 passed" and shot.path is None
    # the frame's image comes from its MP4 chunk: frame i of monitor_1 has a bar (i+1)*4 pixels wide
    img = video_frame(log.frames[shot.id])
    row = img[24, :, 0]
    assert img.shape == (48, 64, 3) and abs(int(row[:28].mean()) - 60) < 8 and int(row[36:].max()) < 8
    assert [e.app_name for e in load_events(tmp_path / ".screenpipe")] == ["Code", "Firefox", "Terminal"]


def test_screenpipe_without_video_and_old_schema(tmp_path: Path) -> None:
    db = write_screenpipe(tmp_path / "sp", second_monitor=False, video=False)
    conn = sqlite3.connect(db)  # before 2025-02 app and window lived in ocr_text only
    conn.execute(
        "UPDATE ocr_text SET app_name = (SELECT app_name FROM frames WHERE frames.id = ocr_text.frame_id), "
        "window_name = (SELECT window_name FROM frames WHERE frames.id = ocr_text.frame_id)"
    )
    conn.execute("UPDATE frames SET app_name = NULL, window_name = NULL, focused = NULL")
    conn.commit()
    conn.close()
    log = load_screenpipe(db)
    assert [e.app_name for e in log.events] == ["Code", "Firefox", "Terminal"]
    assert log.counts["missing_chunks"] == 8 and not log.frames


def test_screenpipe_bad_timestamp_names_the_row(tmp_path: Path) -> None:
    db = write_screenpipe(tmp_path / "sp", video=False)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE frames SET timestamp = 'yesterday' WHERE id = 5")
    conn.commit()
    conn.close()
    with pytest.raises(DataError, match=r"table frames, row id 5, column timestamp"):
        load_events(db)


def test_foreign_databases_are_refused_clearly(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    sqlite3.connect(db).executescript("CREATE TABLE notes (id INTEGER, body TEXT);")
    assert activity_log_kind(db) == "lifetrace"  # LifeTrace's reader then names what it lacks
    with pytest.raises(DataError, match="not an ActivityWatch or screenpipe log"):
        load_activity_log(db)
    with pytest.raises(DataError):
        load_events(db)


def test_live_writer_rows_are_read_while_open(tmp_path: Path) -> None:
    """A WAL database another process keeps open (as aw-server-rust does) is read, and not written."""
    db = tmp_path / "sqlite.db"
    conn = create_aw_rust(db)
    b = add_aw_rust_bucket(conn, "aw-watcher-window_host", "currentwindow", "aw-watcher-window")
    add_aw_rust_event(conn, b, utc(10, 0), 10.0, {"app": "Code", "title": "a"})
    conn.commit()
    before = db.stat().st_mtime_ns
    assert [e.app_name for e in load_events(db)] == ["Code"]
    assert db.stat().st_mtime_ns == before
    conn.close()


def test_text_that_is_not_utf8_is_read_with_replacement(tmp_path: Path) -> None:
    db = tmp_path / "sqlite.db"
    conn = create_aw_rust(db)
    b = add_aw_rust_bucket(conn, "aw-watcher-window_host", "currentwindow", "aw-watcher-window")
    add_aw_rust_event(conn, b, utc(10, 0), 10.0, {"app": "Code", "title": "x"})
    conn.execute(
        """UPDATE events SET data = CAST(x'7b22617070223a2022436f6465222c20227469746c65223a202261ff62227d' AS TEXT)"""
    )
    conn.commit()
    conn.close()
    (e,) = load_activitywatch(db).events
    assert e.app_name == "Code" and e.window_title == "a\ufffdb"


@pytest.mark.parametrize("sep", ["T", " "])
def test_screenpipe_since_reads_from_the_bound(tmp_path: Path, sep: str) -> None:
    db = write_screenpipe(tmp_path / "sp", second_monitor=False, video=False)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE frames SET timestamp = replace(timestamp, 'T', ?)", (sep,))
    conn.commit()
    conn.close()
    log = load_screenpipe(db, since=local(utc(10, 0, 7)))
    assert [(e.app_name, len(e.screenshots)) for e in log.events] == [("Firefox", 2), ("Terminal", 2)]
    assert log.counts["frames"] == 4


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("timestamp", "2200-01-01T00:00:00Z", "outside 1990-2100"),
        ("timestamp", "1971-01-01T00:00:00Z", "outside 1990-2100"),
        ("timestamp", "2099-12-31T23:00:00Z", None),  # the last accepted year
        ("duration", 1e300, "not a duration"),
        ("duration", 200 * 365 * 86400, "not a duration"),
        ("duration", float("nan"), "not a duration"),
    ],
)
def test_activitywatch_export_times_and_durations_are_plausible(
    tmp_path: Path, field: str, value: object, needle: str | None
) -> None:
    """ActivityWatch times and durations follow the readers' one rule (1990-2100, at most a week):
    events in 2200, 1971 or lasting 200 years were accepted; 1e300 s was an OverflowError traceback."""
    doc = json.loads(write_aw_export(tmp_path / "e.json").read_text())
    doc["buckets"]["aw-watcher-window_host"]["events"][1][field] = value
    (tmp_path / "e.json").write_text(json.dumps(doc))
    if needle is None:
        load_events(tmp_path / "e.json")
        return
    with pytest.raises(DataError, match=rf"bucket aw-watcher-window_host, row id 2, column {field}: .*{needle}"):
        load_events(tmp_path / "e.json")


@pytest.mark.parametrize(
    ("start", "end"), [(2**63 - 1, 2**63 - 1), (0, 10**9), (1_700_000_000 * 10**9, 8_000_000_000 * 10**9)]
)
def test_aw_server_rust_times_are_plausible(tmp_path: Path, start: int, end: int) -> None:
    """int64 max, 1970 and a 200-year event in aw-server-rust's nanosecond columns are refused by row."""
    db = write_aw_rust(tmp_path / "sqlite.db")
    conn = sqlite3.connect(db)
    conn.execute("UPDATE events SET starttime = ?, endtime = ? WHERE id = 3", (start, end))
    conn.commit()
    conn.close()
    with pytest.raises(DataError, match=r"table events, row id 3, column (starttime|endtime)"):
        load_events(db)


def test_a_far_future_time_east_of_utc_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """9999-12-31Z under TZ=Asia/Tokyo overflowed while turned into local time (OverflowError)."""
    import time

    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        doc = json.loads(write_aw_export(tmp_path / "e.json").read_text())
        doc["buckets"]["aw-watcher-window_host"]["events"][1]["timestamp"] = "9999-12-31T23:59:59Z"
        (tmp_path / "e.json").write_text(json.dumps(doc))
        with pytest.raises(DataError, match=r"row id 2, column timestamp: .*out of range"):
            load_events(tmp_path / "e.json")
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_screenpipe_databases_that_lack_something_say_what(tmp_path: Path) -> None:
    """A screenpipe database without ocr_text, or of 0 bytes, was called "not a LifeTrace database";
    a text in an integer column was "invalid literal for int()" naming only the folder."""
    db = write_screenpipe(tmp_path / "a", video=False)
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE ocr_text")
    conn.commit()
    conn.close()
    with pytest.raises(DataError, match=r"a screenpipe database without table ocr_text \(frame_id, text\)"):
        load_events(db)
    empty = tmp_path / "b" / "db.sqlite"
    empty.parent.mkdir()
    empty.write_bytes(b"")
    with pytest.raises(DataError, match=r"an empty database \(no tables\)"):
        load_events(empty.parent)
    db = write_screenpipe(tmp_path / "c", video=False)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE frames SET offset_index = 'x7' WHERE id = 2")
    conn.execute("UPDATE ocr_text SET frame_id = 'three' WHERE rowid = 3")
    conn.commit()
    conn.close()
    with pytest.raises(
        DataError,
        match=r"table (frames, row id 2, column offset_index|ocr_text, row id 3, column frame_id)"
        r": '(x7|three)' is not a whole number",
    ) as e:
        load_events(db)
    assert str(db) in str(e.value)


def _browsing(tmp_path: Path, urls: bool) -> Path:
    """Window events of one Chromium window switching tabs (mail, an LLM chat, mail), with the web
    watcher's tabs when ``urls``."""

    def web(t: str, u: str) -> dict:
        return {"url": u, "title": t}

    win = [
        (utc(10, 0, 0), 20.0, {"app": "chromium", "title": "Inbox (3) - a@gmail.com - Gmail - Chromium"}),
        (utc(10, 0, 20), 10.0, {"app": "chromium", "title": "Inbox (4) - a@gmail.com - Gmail - Chromium"}),
        (utc(10, 0, 30), 30.0, {"app": "chromium", "title": "Google Gemini - Chromium"}),
        (utc(10, 1, 0), 15.0, {"app": "chromium", "title": "Trip to Lisbon - Chromium"}),
        (utc(10, 1, 15), 15.0, {"app": "chromium", "title": "Inbox (4) - a@gmail.com - Gmail - Chromium"}),
    ]
    tabs = [
        (utc(10, 0, 0), 30.0, web("Inbox (4) - a@gmail.com - Gmail", "https://mail.google.com/mail/u/0/")),
        (utc(10, 0, 30), 30.0, web("Google Gemini", "https://gemini.google.com/app")),
        (utc(10, 1, 0), 15.0, web("Trip to Lisbon", "https://chatgpt.com/c/1")),
        (utc(10, 1, 15), 15.0, web("Inbox (4) - a@gmail.com - Gmail", "https://mail.google.com/mail/u/0/")),
    ]
    buckets = [("aw-watcher-window_h", "currentwindow", "aw-watcher-window", win)]
    if urls:
        buckets.append(("aw-watcher-web-chrome_h", "web.tab.current", "aw-client-web", tabs))
    return write_aw_export(tmp_path / f"tabs-{urls}.json", buckets=buckets)


def test_activitywatch_tab_switches_in_one_browser_are_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34 item 3: mail -> Gemini -> ChatGPT -> mail in one Chromium window, no app change."""
    monkeypatch.delenv("PROAGENT_SPLIT_ON_TAB", raising=False)
    by_title = load_activitywatch(_browsing(tmp_path, urls=False)).events
    # titles alone: the renamed ChatGPT chat ("Trip to Lisbon") stays in the Gemini event
    assert [e.window_title.split(" - ")[0] for e in by_title] == ["Inbox (3)", "Google Gemini", "Inbox (4)"]
    by_url = load_activitywatch(_browsing(tmp_path, urls=True)).events
    assert [(e.window_title.split(" - ")[0], e.url) for e in by_url] == [
        ("Inbox (3)", "https://mail.google.com/mail/u/0/"),
        ("Google Gemini", "https://gemini.google.com/app"),
        ("Trip to Lisbon", "https://chatgpt.com/c/1"),
        ("Inbox (4)", "https://mail.google.com/mail/u/0/"),
    ]
    assert by_url[1].start == local(utc(10, 0, 30)) and by_url[1].end == local(utc(10, 1, 0))
    assert len(load_activitywatch(_browsing(tmp_path, urls=True), split_on_tab=False).events) == 1
    monkeypatch.setenv("PROAGENT_SPLIT_ON_TAB", "0")  # the readers' one switch
    assert len(load_activitywatch(_browsing(tmp_path, urls=True)).events) == 1
    assert len(load_events(_browsing(tmp_path, urls=True))) == 1


def test_screenpipe_tab_switches_in_one_browser_are_events(tmp_path: Path) -> None:
    frames = [
        (
            0,
            "Google Chrome",
            "Inbox (3) - a@gmail.com - Gmail - Google Chrome",
            "https://mail.google.com/mail/u/0/",
            "Inbox",
        ),
        (
            2,
            "Google Chrome",
            "Inbox (4) - a@gmail.com - Gmail - Google Chrome",
            "https://mail.google.com/mail/u/0/",
            "Inbox",
        ),
        (4, "Google Chrome", "Claude - Google Chrome", "https://claude.ai/new", "How can I help?"),
        (6, "Google Chrome", "Flask fix - Claude - Google Chrome", "https://claude.ai/chat/1", "Flask"),
        (8, "Terminal", "bash", None, "$ ls"),
    ]
    write_screenpipe(tmp_path / "sp", frames=frames, second_monitor=False, video=False)
    log = load_screenpipe(tmp_path / "sp")
    assert [(e.window_title, len(e.screenshots)) for e in log.events] == [
        ("Inbox (3) - a@gmail.com - Gmail - Google Chrome", 2),
        ("Claude - Google Chrome", 2),
        ("bash", 1),
    ]
    assert [len(e.screenshots) for e in load_screenpipe(tmp_path / "sp", split_on_tab=False).events] == [4, 1]


def test_readers_split_editor_files_and_terminals_not_their_noise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 47 item 2: the readers apply the document rule (proagent.documents) as capture does:
    another file in VS Code and another terminal title are events; an unsaved marker and a progress
    counter are not; PROAGENT_SPLIT_IN_APP=0 is the app rule."""
    monkeypatch.delenv("PROAGENT_SPLIT_IN_APP", raising=False)
    monkeypatch.delenv("PROAGENT_SPLIT_ON_TAB", raising=False)
    win = [
        (utc(10, 0, 0), 10.0, {"app": "Code", "title": "cart.py - shop - Visual Studio Code"}),
        (utc(10, 0, 10), 10.0, {"app": "Code", "title": "● cart.py - shop - Visual Studio Code"}),
        (utc(10, 0, 20), 10.0, {"app": "Code", "title": "views.py - shop - Visual Studio Code"}),
        (utc(10, 0, 30), 10.0, {"app": "gnome-terminal-server", "title": "pytest - shop 14%"}),
        (utc(10, 0, 40), 10.0, {"app": "gnome-terminal-server", "title": "pytest - shop 93%"}),
        (utc(10, 0, 50), 10.0, {"app": "gnome-terminal-server", "title": "li@lap: ~/shop"}),
    ]
    aw = write_aw_export(
        tmp_path / "docs.json", buckets=[("aw-watcher-window_h", "currentwindow", "aw-watcher-window", win)]
    )
    assert [e.window_title for e in load_activitywatch(aw).events] == [
        "cart.py - shop - Visual Studio Code",
        "views.py - shop - Visual Studio Code",
        "pytest - shop 14%",
        "li@lap: ~/shop",
    ]
    frames = [(2 * i, d["app"], d["title"], None, "text") for i, (_, _, d) in enumerate(win)]
    write_screenpipe(tmp_path / "sp", frames=frames, second_monitor=False, video=False)
    assert [len(e.screenshots) for e in load_screenpipe(tmp_path / "sp").events] == [2, 1, 2, 1]
    monkeypatch.setenv("PROAGENT_SPLIT_IN_APP", "0")
    assert len(load_activitywatch(aw).events) == 2
    assert [len(e.screenshots) for e in load_screenpipe(tmp_path / "sp").events] == [3, 3]
