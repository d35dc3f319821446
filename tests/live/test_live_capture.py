"""`proagent live --capture`: the agent runs `proagent capture` itself in a real X session
(Xvfb + openbox + xterm windows, focus switched with xdotool) and decides the events it records."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from system import require_binary


def test_live_capture_decides_the_events_it_records(tmp_path: Path) -> None:
    require_binary("Xvfb", "openbox", "xterm", "xdotool", "xprop")
    from xsession import XSession

    out = tmp_path / "activity"
    yes = tmp_path / "yes.txt"
    yes.write_text("\n".join(str(i) for i in range(1, 50)) + "\n")  # Yes at every event id
    with XSession(800, 600) as xs:
        xs.xterm("alpha-notes", "HELLO ALPHA 4217", geometry="50x10+0+0")
        xs.xterm("bravo-notes", "BRAVO NOTES 58", geometry="40x8+380+40")
        xs.activate("alpha-notes")
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "proagent.cli",
                "live",
                "--capture",
                str(out),
                "--capture-option=--no-ocr",
                "--capture-option=--split-on-title",
                "--yes-at",
                str(yes),
                "--model",
                "none",
                "--notify",
                "terminal",
                "--every",
                "0",
                "--duration",
                "25s",
                "--max-per-hour",
                "100",
                "--no-quiet-apps",
            ],
            env=xs.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        db = out / "lifetrace.db"
        end = time.monotonic() + 20
        while not (out / "feedback.db").exists() and time.monotonic() < end:
            time.sleep(0.2)
        time.sleep(4)  # real activity (>= 3 s with screenshots) before each switch
        for name in ("bravo-notes", "alpha-notes", "bravo-notes"):
            xs.activate(name)
            time.sleep(4)
        text, _ = proc.communicate(timeout=90)
    assert proc.returncode == 0, text
    con = sqlite3.connect(f"file:{out / 'feedback.db'}?mode=ro", uri=True)
    rows = con.execute("SELECT sample_id, outcome, row_id FROM decisions ORDER BY id").fetchall()
    con.close()
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    events = [r[0] for r in con.execute("SELECT id FROM events ORDER BY id")]
    con.close()
    assert len(events) >= 3, text
    decided = [r[2] for r in rows]
    # every event row after the first (recorded when the agent started) decided once, in order
    assert decided == sorted(set(decided)) and set(decided) >= set(events[2:]), (rows, events)
    assert any(o == "offer" for _, o, _ in rows), rows
    assert "offer 1 at" in text and "moments decided" in text


def test_x11_fullscreen_probe(monkeypatch) -> None:  # noqa: ANN001
    require_binary("Xvfb", "openbox", "xterm", "xdotool", "xprop")
    from xsession import XSession

    from proagent.live import x11_fullscreen

    with XSession(640, 480) as xs:
        xs.xterm("plain-term", "PLAIN", geometry="40x8+0+0")
        xs.activate("plain-term")
        monkeypatch.setenv("DISPLAY", xs.display)
        assert x11_fullscreen() is False
        wid = xs.window_id("plain-term")
        # EWMH full-screen request to the window manager, as a video player or slide show makes it
        from Xlib import X, display, protocol

        dpy = display.Display(xs.display)
        state, full = dpy.intern_atom("_NET_WM_STATE"), dpy.intern_atom("_NET_WM_STATE_FULLSCREEN")
        win = dpy.create_resource_object("window", int(wid, 0))
        ev = protocol.event.ClientMessage(window=win, client_type=state, data=(32, [1, full, 0, 1, 0]))
        dpy.screen().root.send_event(ev, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
        dpy.flush()
        end = time.monotonic() + 10
        while not x11_fullscreen() and time.monotonic() < end:
            time.sleep(0.1)
        assert x11_fullscreen() is True
    monkeypatch.delenv("DISPLAY")
    assert x11_fullscreen() is None


def test_live_capture_continues_its_folder_and_stops_when_capture_refuses(tmp_path: Path) -> None:
    """`live --capture CAP` run again on its own folder continues it; while a recorder holds CAP,
    live stops with capture's own reason (one line, exit 1) instead of watching a folder nothing
    records into."""
    require_binary("Xvfb", "openbox", "xterm", "xdotool", "xprop")
    from xsession import XSession

    from proagent.capture._control import FolderLock

    out = tmp_path / "activity"
    yes = tmp_path / "yes.txt"
    yes.write_text("1\n")

    def live(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "proagent.cli", "live", "--capture", str(out), "--capture-option=--no-ocr"]
            + ["--yes-at", str(yes), "--model", "none", "--notify", "none", "--no-quiet-apps", *extra],
            env=xs.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=60,
        )

    with XSession(640, 480) as xs:
        xs.xterm("alpha-notes", "HELLO ALPHA", geometry="50x10+0+0")
        xs.activate("alpha-notes")
        for _ in range(2):  # the second run finds feedback.db and the rest of live's files there
            done = live("--duration", "3s")
            assert done.returncode == 0 and "not a capture folder" not in done.stdout, done.stdout
            assert (out / "feedback.db").is_file()
        held = FolderLock(out)  # a recorder already running there
        held.acquire()
        try:
            t0 = time.monotonic()
            done = live()  # no --duration: before the fix this watched forever
            took = time.monotonic() - t0
        finally:
            held.release()
    errors = [ln for ln in done.stdout.splitlines() if ln.startswith("Error:")]
    assert done.returncode == 1, done.stdout
    assert len(errors) == 1 and "a capture is already running there" in errors[0], done.stdout
    assert "proagent capture exited" in errors[0] and "watching" not in done.stdout, done.stdout
    assert took < 40
