"""Two monitors on X11 (issue 27): a real Xvfb desktop split into two RandR 1.5 monitors with
``xrandr --setmonitor`` (what ``mss`` reads), a window on each, the focus switched with xdotool:
capture stores both screens with their ``screen_id``, marks the one holding the focused window
(``screenshots.focused``), deduplicates each screen on its own, and the readers and the prompt
pick the focused screen. Old databases without the column still read (``focused`` None)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from system import require_binary
from test_capture import _rows, _stop, _wait

from proagent.records import Event, Screenshot
from proagent.sources.lifetrace import load_lifetrace


@pytest.fixture(scope="module")
def two_monitors():
    require_binary("Xvfb", "openbox", "xterm", "xmessage", "xdotool", "xprop", "xrandr")
    from xsession import XSession

    with XSession(1600, 600) as xs:
        for name, geometry, output in (
            ("LEFT", "800/211x600/159+0+0", "screen"),
            ("RIGHT", "800/211x600/159+800+0", "none"),
        ):
            subprocess.run(
                ["xrandr", "--setmonitor", name, geometry, output],
                env=xs.env,
                check=True,
                timeout=10,
                capture_output=True,
            )
        xs.xterm("left-notes", "LEFT SCREEN 1111", geometry="50x10+20+20")
        xs.xmessage("right-msg", "RIGHT SCREEN 2222", geometry="400x150+900+40")  # another app: its own event
        yield xs


def test_mss_sees_two_monitors_and_the_focused_one(two_monitors, monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in two_monitors.env.items():
        monkeypatch.setenv(k, v)
    from proagent.capture._probe import ScreenGrabber, X11Probe

    two_monitors.activate("right-msg")
    g, probe = ScreenGrabber(), X11Probe()
    try:
        assert [(sid, img.size) for sid, img in g.grab()] == [(0, (800, 600)), (1, (800, 600))]
        win = probe.foreground()
        assert win.window_title == "right-msg" and win.bounds is not None and win.bounds[0] >= 800
        assert g.focused_screen(win) == 1
        two_monitors.activate("left-notes")
        win = probe.foreground()
        assert g.focused_screen(win) == 0 and win.window_title == "left-notes"
        assert g.focused_screen(None) is None  # two screens, no window: cannot tell
    finally:
        g.close()
        probe.close()


def test_capture_marks_the_focused_screen_and_dedups_each(two_monitors, tmp_path: Path) -> None:
    xs = two_monitors
    out, db = tmp_path / "cap", tmp_path / "cap" / "lifetrace.db"
    xs.activate("left-notes")
    xs.wait_still()  # both screens painted before the first tick (a late repaint is a second screenshot)
    proc = subprocess.Popen(
        [sys.executable, "-m", "proagent.cli", "capture", "--out", str(out), "--interval", "0.25", "--no-ocr"],
        env=xs.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    _wait(lambda: db.exists() and _rows(db, "SELECT COUNT(*) FROM screenshots")[0][0] >= 2, what="first screenshots")
    time.sleep(1.5)  # ~6 ticks of unchanged screens: each stored once
    xs.activate("right-msg")
    time.sleep(1.5)
    _stop(proc, out)

    rows = _rows(db, "SELECT event_id, screen_id, focused, width, file_path FROM screenshots ORDER BY id")
    assert {r[1] for r in rows} == {0, 1} and {r[3] for r in rows} == {800}
    assert all(Path(fp).name.startswith(f"screen_{sid}_") for _, sid, _, _, fp in rows)
    events = _rows(db, "SELECT id, window_title FROM events ORDER BY id")
    assert [t for _, t in events] == ["left-notes", "right-msg"]
    for (eid, title), focused_sid in zip(events, (0, 1)):
        mine = [r for r in rows if r[0] == eid]
        # per-screen dedup: the unchanged screens of one event are stored once each
        assert sorted(r[1] for r in mine) == [0, 1], mine
        assert {(r[1], r[2]) for r in mine} == {(focused_sid, 1), (1 - focused_sid, 0)}, (title, mine)
    # the reader carries the flag; the prompt's screen is the focused one
    log = load_lifetrace(db)
    for e, sid in zip(log.events, (0, 1)):
        assert [s.file_name.split("_")[1] for s in e.focused_screenshots] == [str(sid)]
        assert {s.focused for s in e.screenshots} == {True, False}


def _shot(i: int, t: datetime, screen: int, focused: bool | None, text: str) -> Screenshot:
    return Screenshot(
        id=i,
        time=t,
        app_name="xterm",
        window_title="w",
        file_name=f"screen_{screen}_{i}.png",
        ocr_text=text,
        focused=focused,
    )


def test_the_prompt_shows_the_focused_screen_else_the_latest() -> None:
    from proagent.agent.solvers import user_prompt
    from proagent.records import Sample

    t = datetime(2025, 6, 3, 10, 0, 0)
    shots = (
        _shot(1, t, 0, True, "EDITOR ON THE LEFT"),
        _shot(2, t + timedelta(seconds=1), 1, False, "CHAT ON THE RIGHT"),
    )
    ev = Event(
        id="1", user="u", start=t, end=t + timedelta(seconds=30), app_name="xterm", window_title="w", screenshots=shots
    )
    sample = Sample(
        id="u-1",
        user="u",
        time=t + timedelta(seconds=30),
        label=0,
        split="test",
        kind="negative",
        context=(),
        current=ev,
        window_seconds=300,
    )
    text = user_prompt(sample)
    assert "EDITOR ON THE LEFT" in text and "CHAT ON THE RIGHT" not in text
    unknown = tuple(_shot(s.id, s.time, int(s.file_name[7]), None, s.ocr_text) for s in shots)  # an older log
    from dataclasses import replace

    text = user_prompt(replace(sample, current=replace(ev, screenshots=unknown)))
    assert "CHAT ON THE RIGHT" in text  # not recorded: the latest screenshot, as before


def test_a_database_without_the_column_reads_and_a_capture_adds_it(tmp_path: Path) -> None:
    from proagent.capture import Store
    from proagent.sources.lifetrace_write import lifetrace_ddl

    folder = tmp_path / "old"
    folder.mkdir()
    con = sqlite3.connect(folder / "lifetrace.db")
    con.executescript(lifetrace_ddl("2025-11"))
    con.execute(
        "INSERT INTO events (id, app_name, window_title, start_time, end_time, created_at) VALUES "
        "(1, 'xterm', 'w', '2025-06-03 10:00:00.000000', '2025-06-03 10:00:30.000000', '2025-06-03 10:00:00.000000')"
    )
    con.execute(
        "INSERT INTO screenshots (id, file_path, file_hash, file_size, width, height, screen_id, created_at, "
        "event_id) VALUES (1, '/x/screen_0_20250603_100001_000.png', 'h', 1, 800, 600, 0, "
        "'2025-06-03 10:00:01.000000', 1)"
    )
    con.commit()
    con.close()
    (shot,) = load_lifetrace(folder / "lifetrace.db").events[0].screenshots
    assert shot.focused is None
    Store(folder).con.close()  # a capture continuing this folder adds the column; old rows stay unknown
    cols = [r[1] for r in _rows(folder / "lifetrace.db", "PRAGMA table_info(screenshots)")]
    assert "focused" in cols
    assert load_lifetrace(folder / "lifetrace.db").events[0].screenshots[0].focused is None
