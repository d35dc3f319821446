"""proagent capture: unit tests of the pure parts, then real captures of a real X session
(Xvfb + openbox + xterm/xmessage windows, focus switched with xdotool)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from system import require_binary

from proagent.capture import (
    EXCLUDED_APP,
    CaptureError,
    Exclusions,
    Segmenter,
    Store,
    WindowInfo,
    open_window_probe,
    screenshot_name,
)
from proagent.cli import cli
from proagent.sources.lifetrace import load_lifetrace
from proagent.sources.lifetrace_schema import detect_schema
from proagent.sources.lifetrace_write import lifetrace_ddl
from proagent.sources.load import load_events

# ------------------------------------------------------------------ pure parts (no X needed)


def test_segmenter_splits_on_app_and_optionally_title() -> None:
    seg = Segmenter()
    a1, a2, b = WindowInfo("gimp", "one"), WindowInfo("gimp", "two"), WindowInfo("firefox", "x")
    assert seg.step(seg.key(a1)) == (False, True)  # first window opens an event
    assert seg.step(seg.key(a2)) == (False, False)  # same app (neither browser, editor nor terminal), other title
    assert seg.step(seg.key(b)) == (True, True)  # app change: close + open
    assert seg.step(seg.key(None)) == (True, False)  # idle/paused: close, nothing open
    assert seg.step(seg.key(None)) == (False, False)
    seg = Segmenter(split_on_title=True)
    seg.step(seg.key(a1))
    assert seg.step(seg.key(a2)) == (True, True)
    assert seg.step(seg.key(a2, excluded=True)) == (True, True)  # an excluded stretch is its own event
    assert seg.step(seg.key(b, excluded=True)) == (False, False)  # ... whatever is behind it


def test_segmenter_tab_rule_splits_a_browser_on_site_changes_only() -> None:
    """Default: a browser's page moving to another site or kind is a new event (issue 34 item 3);
    an unread count, a renamed chat or the titles of an app that is neither a browser, an editor
    nor a terminal are not; ``split_on_tab=False`` is LifeTrace's app rule."""

    def w(title: str, app: str = "chromium") -> WindowInfo:
        return WindowInfo(app, f"{title} - Chromium" if app == "chromium" else title)

    seq = [
        w("New Tab"),
        w("Inbox (3) - a@gmail.com - Gmail"),
        w("Inbox (4) - a@gmail.com - Gmail"),
        w("Gemini"),
        w("Gemini"),
        w("Flask fix"),
        w("Inbox (4) - a@gmail.com - Gmail"),
        w("vim a.py", "gimp"),
        w("vim b.py", "gimp"),
        w("Kimi - AI"),
    ]
    for seg, want in (
        (
            Segmenter(),
            [
                (False, True),
                (False, False),
                (False, False),
                (True, True),
                (False, False),
                (False, False),
                (True, True),
                (True, True),
                (False, False),
                (True, True),
            ],
        ),
        (
            Segmenter(split_on_tab=False),
            [(False, True)] + [(False, False)] * 6 + [(True, True), (False, False), (True, True)],
        ),
    ):
        assert [seg.step(seg.key(x)) for x in seq] == want
    seg = Segmenter()
    seg.step(seg.key(w("Inbox - a@gmail.com - Gmail")))
    assert seg.step(seg.key(w("Gemini"), excluded=True)) == (True, True)
    assert seg.step(seg.key(None)) == (True, False)


def test_default_exclusions_cover_private_windows_and_password_managers() -> None:
    ex = Exclusions.build()
    for win in [
        WindowInfo("firefox", "GitHub — Mozilla Firefox Private Browsing"),
        WindowInfo("chrome", "New Tab - Google Chrome (Incognito)"),
        WindowInfo("msedge.exe", "New InPrivate tab - Microsoft Edge"),
        WindowInfo("keepassxc", "Passwords.kdbx"),
        WindowInfo("Bitwarden", "Vault"),
        WindowInfo("chrome", "1Password – Password Manager"),
    ]:
        assert ex.excludes(win), win
    assert not ex.excludes(WindowInfo("xterm", "alpha-notes"))
    assert not Exclusions.build(defaults=False).excludes(WindowInfo("keepassxc", "x"))
    mine = Exclusions.build(["Signal"], [r"bank\s+of"], defaults=False)
    assert mine.excludes(WindowInfo("signal", "chat")) and mine.excludes(WindowInfo("chrome", "Bank  of Mars"))
    with pytest.raises(ValueError, match="--exclude-title"):
        Exclusions.build(titles=["(unclosed"])


def test_ddl_is_detected_as_its_variant(tmp_path: Path) -> None:
    for variant in ("2025-09", "2025-10", "2025-11"):
        db = tmp_path / f"{variant}.db"
        con = sqlite3.connect(db)
        con.executescript(lifetrace_ddl(variant))
        con.executescript(lifetrace_ddl(variant))  # IF NOT EXISTS: runs twice on one file
        con.close()
        assert detect_schema(db).variant == variant
    with pytest.raises(ValueError, match="unknown LifeTrace variant"):
        lifetrace_ddl("2024-01")


def test_store_retention_by_size_removes_oldest_files(tmp_path: Path) -> None:
    st = Store(tmp_path)
    ev = st.open_event("xterm", "t", datetime(2026, 1, 1, 9, 0, 0))
    for k in range(5):
        t = datetime(2026, 1, 1, 9, 0, k)
        data = bytes([k]) * 1000
        st.add_screenshot(
            event_id=ev,
            screen_id=0,
            t=t,
            data=data,
            ext="png",
            file_hash=hashlib.sha256(data).hexdigest(),
            width=1,
            height=1,
            app="xterm",
            title="t",
        )
    assert st.stored_bytes == 5000
    assert st.enforce_retention(datetime(2026, 1, 1, 9, 1), max_days=None, max_bytes=2500) == 3
    rows = st.con.execute("SELECT file_path, file_deleted FROM screenshots ORDER BY id").fetchall()
    assert [r[1] for r in rows] == [1, 1, 1, 0, 0]
    assert [Path(r[0]).exists() for r in rows] == [False, False, False, True, True]
    assert st.enforce_retention(datetime(2026, 1, 20), max_days=7, max_bytes=None) == 2
    st.close_event(ev, datetime(2026, 1, 1, 9, 0, 5))
    st.close()
    log = load_lifetrace(tmp_path / "lifetrace.db")
    assert [s.path for s in log.events[0].screenshots] == [None] * 5  # rows (and OCR) stay, files gone
    assert screenshot_name(2, datetime(2026, 1, 2, 3, 4, 5, 678901)) == "screen_2_20260102_030405_678.png"


def test_unsupported_sessions_get_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    with pytest.raises(CaptureError, match="Wayland"):
        open_window_probe()
    monkeypatch.delenv("WAYLAND_DISPLAY")
    monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
    with pytest.raises(CaptureError, match="no X display"):
        open_window_probe()
    r = CliRunner().invoke(cli, ["capture", "--out", str(Path(os.environ.get("TMPDIR", "/tmp")) / "pa-cap-nodisp")])
    assert r.exit_code == 1 and r.output.strip().startswith("Error: no X display") and "Traceback" not in r.output


def test_control_commands_without_a_running_capture(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["capture", "stop", str(tmp_path)])
    assert r.exit_code == 1 and "no capture is running there" in r.output
    r = CliRunner().invoke(cli, ["capture"])
    assert r.exit_code == 2 and "give --out DIR" in r.output


# ------------------------------------------------------------------ a real X session


@pytest.fixture(scope="module")
def xs():
    require_binary("Xvfb", "openbox", "xterm", "xdotool", "xmessage", "xprop")
    from xsession import XSession

    with XSession(800, 600) as session:
        session.xterm("alpha-notes", "HELLO ALPHA 4217", geometry="50x10+0+0")
        session.xmessage("bravo-msg", "BRAVO MESSAGE 58")
        session.xterm("charlie-notes", "CHARLIE 9 LINES", geometry="40x8+380+40")
        session.xterm("my secret diary", "TOPSECRET PLANS", geometry="40x8+200+250")
        yield session


def _capture(xs, out: Path, *args: str, wait: bool = True) -> subprocess.Popen[str]:  # noqa: ANN001
    """Start `proagent capture --out OUT ARGS` in the X session; with ``wait``, return once the
    first screenshot is in the database."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "proagent.cli", "capture", "--out", str(out), *args],
        env=xs.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    db = out / "lifetrace.db"
    if wait:
        _wait(lambda: db.exists() and _rows(db, "SELECT COUNT(*) FROM screenshots")[0][0] >= 1, what="first screenshot")
    return proc


def _wait(cond, timeout: float = 20.0, what: str = "condition"):  # noqa: ANN001, ANN202
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _rows(db: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(db.resolve().as_uri() + "?mode=ro", uri=True, timeout=5)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _stop(proc: subprocess.Popen[str], out: Path) -> str:
    r = CliRunner().invoke(cli, ["capture", "stop", str(out)])
    assert r.exit_code == 0, r.output
    assert "stopped" in r.output
    text, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0, text
    return text


def test_capture_events_dedup_ocr_and_readers(xs, tmp_path: Path) -> None:  # noqa: ANN001
    out = tmp_path / "cap"
    db = out / "lifetrace.db"
    xs.activate("alpha-notes")
    xs.wait_still(quiet=1.0)  # the first test of the session: windows may still be drawing (CI saw late repaints twice)
    # LifeTrace's app rule (--no-split-in-app): two xterm windows are one event, so raising charlie
    # tests dedup inside an event (the default splits them: test_capture_documents.py)
    proc = _capture(xs, out, "--interval", "0.25", "--ocr-interval", "0.25", "--no-split-in-app")
    time.sleep(1.5)  # alpha, unchanged: ~6 ticks, one screenshot
    xs.activate("bravo-msg")
    time.sleep(1.5)
    xs.activate("alpha-notes")
    time.sleep(1.0)
    xs.activate("charlie-notes")  # same app (xterm), app rule: the event goes on
    time.sleep(1.0)

    # the log is readable while capture runs, OCR included
    def ocr_ready():  # noqa: ANN202
        evs = load_events(db)
        by_title = {(s.window_title, s.ocr_text) for e in evs for s in e.screenshots}
        done = any(t == "alpha-notes" and "HELLO ALPHA" in x for t, x in by_title) and any(
            t == "bravo-msg" and "BRAVO MESSAGE" in x for t, x in by_title
        )
        return evs if done else None

    events = _wait(ocr_ready, timeout=60, what="OCR of the alpha and bravo screenshots")
    assert proc.poll() is None
    text = _stop(proc, out)
    assert "capture stopped" in text

    assert _rows(db, "PRAGMA integrity_check") == [("ok",)]
    assert detect_schema(db).variant == "2025-11"
    log = load_lifetrace(db)
    evs = log.events
    assert [(e.app_name, e.window_title) for e in evs] == [
        ("xterm", "alpha-notes"),
        ("Xmessage", "bravo-msg"),
        ("xterm", "alpha-notes"),
    ]
    assert all(e.end is not None for e in evs)
    for a, b in zip(evs, evs[1:]):
        assert a.end == b.start  # an event ends where the next starts (the switch)
    # screenshot rows carry the window of their moment; raising charlie (already fully visible) changed
    # the screen by less than 5 pHash bits, so it was a duplicate, not a new screenshot
    assert {s.window_title for s in evs[1].screenshots} == {"bravo-msg"}
    assert {s.window_title for s in evs[2].screenshots} <= {"alpha-notes", "charlie-notes"}
    # dedup: alpha stayed unchanged for >= 6 ticks but is stored once
    ticks = _rows(db, "SELECT (julianday(end_time) - julianday(start_time)) * 86400 FROM events ORDER BY id")
    assert ticks[0][0] >= 1.5 and len(evs[0].screenshots) == 1
    n_shots = _rows(db, "SELECT COUNT(*) FROM screenshots")[0][0]
    assert n_shots <= 6
    for sid, fp, fh, size, w, h, sc in _rows(
        db, "SELECT id, file_path, file_hash, file_size, width, height, screen_id FROM screenshots"
    ):
        data = Path(fp).read_bytes()
        assert hashlib.sha256(data).hexdigest() == fh and len(data) == size and (w, h, sc) == (800, 600, 0)
        assert Path(fp).parent == out / "screenshots" and Path(fp).name.startswith("screen_0_")
    ocr = {(s.window_title, s.ocr_text) for e in evs for s in e.screenshots if s.ocr_text}
    assert any(t == "alpha-notes" and "HELLO ALPHA 4217" in x for t, x in ocr)
    assert any(t == "bravo-msg" and "BRAVO MESSAGE" in x for t, x in ocr)
    assert events  # read while running
    # stats and eval read the raw log
    r = CliRunner().invoke(cli, ["stats", str(db), "--out", str(tmp_path / "stats"), "--no-similarity"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "stats" / "stats.json").is_file()
    r = CliRunner().invoke(
        cli, ["eval", "--data", str(db), "--model", "mockllm/model", "--log-dir", str(tmp_path / "ev")]
    )
    assert r.exit_code == 1 and "no ground truth" in r.output and "annotate" in r.output, r.output


def test_exclusions_split_on_title_and_pause(xs, tmp_path: Path) -> None:  # noqa: ANN001
    out = tmp_path / "cap"
    db = out / "lifetrace.db"
    xs.activate("alpha-notes")
    proc = _capture(xs, out, "--interval", "0.25", "--no-ocr", "--split-on-title", "--exclude-title", "SECRET")
    xs.activate("charlie-notes")
    time.sleep(1.0)
    xs.activate("my secret diary")
    time.sleep(1.0)
    xs.activate("alpha-notes")
    time.sleep(1.0)
    r = CliRunner().invoke(cli, ["capture", "pause", str(out)])
    assert r.exit_code == 0, r.output
    time.sleep(0.6)
    n_paused = _rows(db, "SELECT COUNT(*) FROM screenshots")[0][0]
    xs.activate("charlie-notes")  # not recorded: paused
    time.sleep(1.0)
    assert _rows(db, "SELECT COUNT(*) FROM screenshots")[0][0] == n_paused
    CliRunner().invoke(cli, ["capture", "resume", str(out)])
    _wait(lambda: _rows(db, "SELECT COUNT(*) FROM events")[0][0] == 5, what="the event after resume")
    xs.activate("bravo-msg")
    time.sleep(1.0)
    text = _stop(proc, out)
    assert "capture paused" in text and "capture resumed" in text
    evs = _rows(db, "SELECT id, app_name, window_title, end_time FROM events ORDER BY id")
    assert [(a, t) for _, a, t, _ in evs] == [
        ("xterm", "alpha-notes"),
        ("xterm", "charlie-notes"),
        (EXCLUDED_APP, None),
        ("xterm", "alpha-notes"),
        ("xterm", "charlie-notes"),
        ("Xmessage", "bravo-msg"),
    ]  # paused: closed alpha; resumed: charlie has the focus
    assert all(e[3] is not None for e in evs)
    excluded_id = evs[2][0]
    assert _rows(db, f"SELECT COUNT(*) FROM screenshots WHERE event_id = {excluded_id}") == [(0,)]
    assert _rows(db, "SELECT COUNT(*) FROM screenshots WHERE window_title LIKE '%secret%'") == [(0,)]
    names = {Path(p).name for (p,) in _rows(db, "SELECT file_path FROM screenshots")}
    assert names == {p.name for p in (out / "screenshots").iterdir()}  # no image of the excluded window on disk
    assert _rows(db, "SELECT COUNT(*) FROM ocr_results") == [(0,)]  # --no-ocr


def test_kill_9_leaves_a_readable_db_and_restart_continues(xs, tmp_path: Path) -> None:  # noqa: ANN001
    import psutil

    out = tmp_path / "cap"
    db = out / "lifetrace.db"
    xs.activate("alpha-notes")
    proc = _capture(xs, out, "--interval", "0.2", "--ocr-interval", "5")
    xs.activate("bravo-msg")
    _wait(lambda: _rows(db, "SELECT COUNT(*) FROM events")[0][0] >= 2, what="second event")
    time.sleep(0.7)
    ocr_kids = psutil.Process(proc.pid).children()
    assert ocr_kids, "the OCR worker runs as a child process"
    os.kill(proc.pid, signal.SIGKILL)
    killed_at = datetime.now()
    proc.communicate(timeout=10)
    _wait(
        lambda: not any(k.is_running() and k.status() != psutil.STATUS_ZOMBIE for k in ocr_kids),
        timeout=10,
        what="the OCR worker to exit after its parent was killed",
    )
    assert _rows(db, "PRAGMA integrity_check") == [("ok",)]
    evs = load_events(db)  # readable, the open event included
    assert [e.app_name for e in evs] == ["xterm", "Xmessage"] and evs[-1].end is None
    # a restart in the same folder continues it (the stale pid file does not block it)
    xs.activate("alpha-notes")
    proc = _capture(xs, out, "--interval", "0.2", "--no-ocr", "--duration", "2s", wait=False)
    text, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, text
    assert _rows(db, "PRAGMA integrity_check") == [("ok",)]
    rows = _rows(db, "SELECT id, app_name, end_time FROM events ORDER BY id")
    assert [r[1] for r in rows] == ["xterm", "Xmessage", "xterm"]
    recovered_end = datetime.strptime(rows[1][2], "%Y-%m-%d %H:%M:%S.%f")
    assert abs((killed_at - recovered_end).total_seconds()) <= 1.0  # at most the last second lost
    assert all(r[2] is not None for r in rows)
    # other moments: during start-up (folder new or not yet written) and mid-run
    for folder, delay in ((tmp_path / "early", 0.4), (out, 1.2)):
        p = _capture(xs, folder, "--interval", "0.1", "--no-ocr", wait=False)
        time.sleep(delay)
        os.kill(p.pid, signal.SIGKILL)
        p.communicate(timeout=10)
        if (folder / "lifetrace.db").exists():
            assert _rows(folder / "lifetrace.db", "PRAGMA integrity_check") == [("ok",)]
            load_events(folder / "lifetrace.db")
    n_before = len(load_events(db))
    p = _capture(xs, out, "--interval", "0.2", "--no-ocr", "--duration", "1s", wait=False)
    assert p.communicate(timeout=30)[0] and p.returncode == 0
    evs = load_events(db)
    assert len(evs) > n_before and all(e.end is not None for e in evs)


def test_idle_closes_the_open_event_and_activity_reopens(xs, tmp_path: Path) -> None:  # noqa: ANN001
    out = tmp_path / "cap"
    db = out / "lifetrace.db"
    xs.activate("alpha-notes")
    proc = _capture(xs, out, "--interval", "0.2", "--no-ocr", "--idle", "1s", "--format", "webp")
    # no input, no screen or window change: closed after ~1 s while capture goes on
    _wait(
        lambda: _rows(db, "SELECT end_time FROM events WHERE id = 1")[0][0] is not None,
        timeout=5,
        what="idle to close the event",
    )
    assert proc.poll() is None
    xs.activate("bravo-msg")  # activity again
    _wait(lambda: _rows(db, "SELECT COUNT(*) FROM events")[0][0] >= 2, timeout=5, what="a new event after idle")
    _stop(proc, out)
    (s1, e1), (s2, _e2) = _rows(db, "SELECT start_time, end_time FROM events ORDER BY id")[:2]
    fmt = "%Y-%m-%d %H:%M:%S.%f"
    took = (datetime.strptime(e1, fmt) - datetime.strptime(s1, fmt)).total_seconds()
    assert 0.9 <= took <= 2.5 and s2 > e1  # idle time belongs to no event
    files = [Path(p).name for (p,) in _rows(db, "SELECT file_path FROM screenshots")]
    assert files and all(f.endswith(".webp") for f in files)
    assert [e.app_name for e in load_events(db)][:2] == ["xterm", "Xmessage"]


def test_capture_refuses_a_folder_holding_another_database(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "lifetrace.db").write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(CaptureError, match="cannot continue this database"):
        Store(tmp_path / "a")
    (tmp_path / "b").mkdir()
    con = sqlite3.connect(tmp_path / "b" / "lifetrace.db")
    con.executescript(lifetrace_ddl("2025-09"))
    con.close()
    with pytest.raises(CaptureError, match="LifeTrace 2025-09 database"):
        Store(tmp_path / "b")
    Store(tmp_path / "c").close()
    Store(tmp_path / "c").close()  # its own log: continued


def test_a_capture_folder_live_also_wrote_in_is_still_a_capture_folder(tmp_path: Path) -> None:
    """`proagent live`'s default --out is the log's own folder: what it writes there (its names,
    taken from live itself) does not stop `proagent capture --out` from continuing the folder."""
    from proagent import live
    from proagent.capture import check_capture_folder
    from proagent.live_files import LIVE_NAMES

    cap = tmp_path / "cap"
    Store(cap).close()
    assert {live.FEEDBACK_DB, live.LEARNING_DIR, live.PAUSE_FILE, live.BLOCKED_APPS_FILE} <= LIVE_NAMES
    (cap / live.LEARNING_DIR).mkdir()
    (cap / live.LEARNING_DIR / "manifest.json").write_text("{}")
    for name in sorted(LIVE_NAMES - {live.LEARNING_DIR}):
        (cap / name).write_text("x")
    assert check_capture_folder(cap) is True
    (cap / "notes.txt").write_text("mine")  # anything else still refuses it, naming that file
    with pytest.raises(CaptureError, match=r"not a capture folder \(it holds notes\.txt\)"):
        check_capture_folder(cap)
    (cap / "notes.txt").unlink()
    (cap / "lifetrace.db").unlink()  # live's files alone do not make a capture folder
    with pytest.raises(CaptureError, match="not a capture folder"):
        check_capture_folder(cap)


def test_without_a_window_manager_the_input_focus_is_used() -> None:
    require_binary("Xvfb", "xterm", "xdotool")
    from xsession import XSession

    from proagent.capture._probe import X11Probe

    with XSession(640, 480, wm=False) as bare:
        bare.xterm("plain-one", "ONE", geometry="30x5+0+0")
        bare.xterm("plain-two", "TWO", geometry="30x5+300+200")
        probe = X11Probe(bare.display)
        try:
            for title in ("plain-one", "plain-two"):
                bare.focus(title)
                _wait(lambda t=title: probe.foreground().window_title == t, timeout=5, what=f"focus on {title}")
                win = probe.foreground()
                assert win.app_name == "xterm" and win.pid is not None
        finally:
            probe.close()


def _backlog(xs, out: Path, *args: str) -> subprocess.Popen[str]:  # noqa: ANN001
    """A capture whose OCR worker reads one screenshot every 30 s, and five window switches
    (five screenshots stored): a backlog at stop."""
    xs.activate("alpha-notes")
    proc = _capture(xs, out, "--interval", "0.25", "--ocr-interval", "30", *args)
    for title in ("bravo-msg", "charlie-notes", "alpha-notes", "bravo-msg", "alpha-notes"):
        xs.activate(title)
        time.sleep(0.6)
    return proc


def test_stop_finishes_the_ocr_backlog_and_says_so(xs, tmp_path: Path) -> None:  # noqa: ANN001
    """Issue 34 item 6: at stop the worker reads what it had not reached (no rate limit), with
    progress, and the stop lines give the count left unread (0)."""
    out = tmp_path / "cap"
    db = out / "lifetrace.db"
    proc = _backlog(xs, out)
    waiting = _rows(db, "SELECT COUNT(*) FROM screenshots WHERE is_processed = 0")[0][0]
    assert waiting >= 3
    r = CliRunner().invoke(cli, ["capture", "stop", str(out)])
    assert r.exit_code == 0, r.output
    assert r.output.strip().endswith("stopped; 0 screenshots unread by OCR"), r.output
    text, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, text
    import re

    m = re.search(r"capture stopping: OCR has (\d+) screenshots to read; reading them \(up to 60 s", text)
    assert m and int(m[1]) >= waiting - 1, text  # one may have been read meanwhile
    assert f"OCR: {m[1]} of {m[1]} read in" in text, text
    assert "screenshots unread by OCR" in text.splitlines()[-1] and "; 0 screenshots unread by OCR" in text, text
    assert _rows(db, "SELECT COUNT(*) FROM screenshots WHERE is_processed = 0") == [(0,)]
    assert _rows(db, "SELECT COUNT(*) FROM ocr_results")[0][0] == _rows(db, "SELECT COUNT(*) FROM screenshots")[0][0]


def test_stop_without_finishing_names_what_curate_will_read(xs, tmp_path: Path) -> None:  # noqa: ANN001
    out = tmp_path / "cap"
    db = out / "lifetrace.db"
    proc = _backlog(xs, out, "--ocr-finish", "0")
    proc.send_signal(signal.SIGINT)  # Ctrl-C
    text, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, text
    left = _rows(db, "SELECT COUNT(*) FROM screenshots WHERE is_processed = 0")[0][0]
    assert left >= 3 and "capture stopping" not in text
    assert text.splitlines()[-1].endswith(
        f"; {left} screenshots unread by OCR (curate reads each of them with a whole-screen OCR pass of its own)"
    ), text
    assert json.loads((out / "capture.status").read_text())["unread"] == left


def test_a_second_ctrl_c_stops_the_ocr_finish_at_once(xs, tmp_path: Path) -> None:  # noqa: ANN001
    out = tmp_path / "cap"
    db = out / "lifetrace.db"
    proc = _backlog(xs, out)
    proc.send_signal(signal.SIGINT)
    _wait(
        lambda: (
            json.loads((out / "capture.status").read_text()).get("state") == "finishing-ocr"
            if (out / "capture.status").exists()
            else False
        ),
        timeout=20,
        what="the OCR finish",
    )
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)  # Ctrl-C again: stop now
    text, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, text
    assert time.monotonic() - t0 < 10, text  # not the 60 s limit
    left = _rows(db, "SELECT COUNT(*) FROM screenshots WHERE is_processed = 0")[0][0]
    assert left >= 1 and f"(told to stop; {left} left)" in text, text
    assert text.splitlines()[-1].endswith(
        f"; {left} screenshots unread by OCR (curate reads each of them with a whole-screen OCR pass of its own)"
    ), text
