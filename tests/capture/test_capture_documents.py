"""``proagent capture`` with default options on real xterm windows (issue 47 item 2): two xterms
whose titles the shell sets (``printf '\\033]0;TITLE\\007'``), switched four times, are five
events although the application stays ``xterm`` (the document rule, :mod:`proagent.documents`),
and ``proagent stats`` counts them; a third xterm whose title is a running command's progress
counter (title noise) stays one event across its title changes. Before issue 47 all of it was one
``xterm`` event (LifeTrace's app rule)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner
from system import require_binary

from proagent.cli import cli

VIM = "vim cart.py"
PROMPT = "li@lap: ~/shop"


def _rows(db: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(db.resolve().as_uri() + "?mode=ro", uri=True, timeout=5)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _wait(cond, timeout: float = 30.0, what: str = "condition") -> None:  # noqa: ANN001
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_switches_between_two_terminals_are_events_and_title_noise_is_not(tmp_path: Path) -> None:
    require_binary("Xvfb", "openbox", "xterm", "xdotool", "xprop")
    from xsession import XSession

    out = tmp_path / "cap"
    db = out / "lifetrace.db"
    with XSession(640, 480) as xs:

        def term(title_cmd: str, pattern: str, geometry: str) -> str:
            """An xterm running ``title_cmd``; its X id once its title matches ``pattern`` (xdotool's regex)."""
            xs._spawn(["xterm", "-geometry", geometry, "-e", "sh", "-c", title_cmd])
            found: list[str] = []
            _wait(
                lambda: found.extend(xs._out(["xdotool", "search", "--name", pattern]).split()) or found, what=pattern
            )
            return found[0]

        ids = {
            VIM: term(f"printf '\\033]0;{VIM}\\007'; exec sleep 600", f"^{VIM}$", "40x8+0+0"),
            PROMPT: term(f"printf '\\033]0;{PROMPT}\\007'; exec sleep 600", f"^{PROMPT}$", "40x8+300+0"),
        }
        # a running command's progress in the title: pytest - shop 0% .. 98% .., every 0.3 s
        counter = "i=0; while :; do printf '\\033]0;pytest - shop %s%%\\007' $i; i=$(((i+7)%100)); sleep 0.3; done"
        noisy = term(counter, "^pytest - shop", "40x8+0+250")

        def activate(wid: str) -> None:
            subprocess.run(["xdotool", "windowactivate", "--sync", wid], env=xs.env, check=True, timeout=10)
            _wait(lambda: xs.active_id() == wid, timeout=10, what="focus")

        activate(ids[VIM])
        proc = subprocess.Popen(
            [sys.executable, "-m", "proagent.cli", "capture", "--out", str(out), "--interval", "0.25", "--no-ocr"],
            env=xs.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            _wait(lambda: db.exists() and _rows(db, "SELECT COUNT(*) FROM screenshots")[0][0] >= 1, what="capture")
            for title in (PROMPT, VIM, PROMPT, VIM):  # four switches
                time.sleep(0.8)
                activate(ids[title])
            time.sleep(0.8)
            activate(noisy)
            seen = set()
            for _ in range(8):  # ~8 ticks while the counter moves
                seen.add(xs._out(["xdotool", "getwindowname", noisy]).strip())
                time.sleep(0.25)
        finally:
            r = CliRunner().invoke(cli, ["capture", "stop", str(out)])
            text, _ = proc.communicate(timeout=30)
        assert r.exit_code == 0 and proc.returncode == 0, text

    events = _rows(db, "SELECT id, app_name, window_title FROM events ORDER BY id")
    assert [e[1] for e in events] == ["xterm"] * 6, events
    assert [e[2] for e in events[:5]] == [VIM, PROMPT, VIM, PROMPT, VIM], events
    assert events[5][2].startswith("pytest - shop ")
    assert len(seen) >= 3, seen  # the title moved while the event went on: noise, one event

    r = CliRunner().invoke(cli, ["stats", str(out), "--out", str(tmp_path / "stats"), "--no-similarity"])
    assert r.exit_code == 0, r.output
    assert ", 6 events," in r.output and "apps: 1 distinct: xterm (6)" in r.output, r.output


def test_segmenter_splits_two_windows_of_one_terminal_and_not_on_noise() -> None:
    """Capture's segmentation key carries the window id (X11, sway): the same prompt title in two
    xterm windows is two events; a counter in one window's title is not; --no-split-in-app is
    LifeTrace's app rule."""
    from proagent.capture import Segmenter, WindowInfo

    seq = [
        WindowInfo("xterm", "li@lap: ~/shop", 10, window_id=1),
        WindowInfo("xterm", "li@lap: ~/shop", 11, window_id=2),
        WindowInfo("xterm", "pytest - shop 14%", 11, window_id=2),
        WindowInfo("xterm", "pytest - shop 21%", 11, window_id=2),
        WindowInfo("code", "● cart.py - shop - Visual Studio Code", 12, window_id=3),
        WindowInfo("code", "cart.py - shop - Visual Studio Code", 12, window_id=3),
        WindowInfo("code", "views.py - shop - Visual Studio Code", 12, window_id=3),
    ]
    seg = Segmenter()
    assert [seg.step(seg.key(w))[1] for w in seq] == [True, True, True, False, True, False, True]
    seg = Segmenter(split_on_tab=False)
    assert [seg.step(seg.key(w))[1] for w in seq] == [True, False, False, False, True, False, False]
