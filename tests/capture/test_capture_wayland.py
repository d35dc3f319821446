"""Wayland capture under a real headless sway (foot windows, grim, sway's IPC), one and two
outputs; the GNOME/KDE portal path against a loopback D-Bus mock (see test_capture_portal.py)."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from waysession import SwaySession

from proagent.capture import EXCLUDED_APP
from proagent.cli import cli
from proagent.sources.lifetrace import load_lifetrace


@pytest.fixture(scope="module")
def sway():  # noqa: ANN201
    s = SwaySession(outputs=1)
    s.open("alpha", "alpha-notes", "HELLO ALPHA")
    s.open("bravo", "bravo-msg", "BRAVO MESSAGE")
    s.open("vault", "secret-vault", "PASSWORDS")
    yield s
    s.close()


def _rows(db: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(db.resolve().as_uri() + "?mode=ro", uri=True, timeout=5)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _wait(cond, timeout: float = 20.0, what: str = "condition"):  # noqa: ANN001, ANN202
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _with_env(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    for k in ("SWAYSOCK", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "XDG_SESSION_TYPE"):
        monkeypatch.setenv(k, env[k])
    monkeypatch.delenv("DISPLAY", raising=False)


def test_sway_probe_reads_the_focused_window(sway, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    from proagent.capture import open_screen_source, open_window_probe

    _with_env(monkeypatch, sway.env)
    probe, screens = open_window_probe(), open_screen_source()
    assert type(probe).__name__ == "SwayProbe" and type(screens).__name__ == "GrimGrabber"
    sway.focus("alpha")
    win = probe.foreground()
    assert (win.app_name, win.window_title) == ("alpha", "alpha-notes") and win.pid
    sway.focus("bravo")
    assert probe.foreground().app_name == "bravo"
    shots = screens.grab()
    assert [(sid, img.size) for sid, img in shots] == [(0, (800, 600))]


def test_capture_records_a_sway_session(sway, tmp_path: Path) -> None:  # noqa: ANN001
    out = tmp_path / "cap"
    db = out / "lifetrace.db"
    sway.focus("alpha")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "proagent.cli",
            "capture",
            "--out",
            str(out),
            "--interval",
            "0.25",
            "--no-ocr",
            "--exclude-app",
            "vault",
        ],
        env=sway.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _wait(lambda: db.exists() and _rows(db, "SELECT COUNT(*) FROM screenshots")[0][0] >= 1, what="first screenshot")
        time.sleep(1.0)
        for app in ("bravo", "vault", "alpha"):
            sway.focus(app)
            time.sleep(1.2)
    finally:
        r = CliRunner().invoke(cli, ["capture", "stop", str(out)])
        text, _ = proc.communicate(timeout=20)
    assert r.exit_code == 0 and proc.returncode == 0, text
    evs = load_lifetrace(db).events
    assert [(e.app_name, e.window_title) for e in evs] == [
        ("alpha", "alpha-notes"),
        ("bravo", "bravo-msg"),
        (EXCLUDED_APP, ""),
        ("alpha", "alpha-notes"),
    ]
    for a, b in zip(evs, evs[1:]):
        assert a.end == b.start  # split on the focus change
    assert not evs[2].screenshots  # the excluded window: no screenshot, no title
    assert all(e.screenshots for e in (evs[0], evs[1], evs[3]))
    for fp, fh, w, h, sc in _rows(db, "SELECT file_path, file_hash, width, height, screen_id FROM screenshots"):
        assert hashlib.sha256(Path(fp).read_bytes()).hexdigest() == fh and (w, h, sc) == (800, 600, 0)


def test_two_outputs_give_two_screen_ids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = SwaySession(outputs=2)
    try:
        s.open("left", "left-win", "LEFT", output="HEADLESS-1")
        s.open("right", "right-win", "RIGHT", output="HEADLESS-2")
        _with_env(monkeypatch, s.env)
        from proagent.capture._wayland import GrimGrabber, SwayProbe

        g = GrimGrabber()
        assert [(sid, img.size) for sid, img in g.grab()] == [(0, (800, 600)), (1, (640, 480))]
        assert g.focused_screen() == 1 and SwayProbe().foreground().app_name == "right"
        s.focus("left")
        g.grab()
        assert g.focused_screen() == 0
        out = tmp_path / "cap"
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "proagent.cli",
                "capture",
                "--out",
                str(out),
                "--interval",
                "0.25",
                "--no-ocr",
                "--duration",
                "2s",
            ],
            env=s.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 0, r.stdout + r.stderr
        got = _rows(
            out / "lifetrace.db", "SELECT DISTINCT screen_id, width, height FROM screenshots ORDER BY screen_id"
        )
        assert got == [(0, 800, 600), (1, 640, 480)]
        names = [p.name for p in (out / "screenshots").iterdir()]
        assert any(n.startswith("screen_0_") for n in names) and any(n.startswith("screen_1_") for n in names)
    finally:
        s.close()


def test_an_excluded_sway_window_beside_the_focused_one_is_masked(sway, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Issue 46: a block rule applies to screen regions: the vault window tiled beside the focused
    one is filled black in the stored screenshot (sway's get_tree rectangles)."""
    import numpy as np
    from PIL import Image

    from proagent.capture._regions import MASK_FILL
    from proagent.capture._wayland import SwayProbe

    _with_env(monkeypatch, sway.env)
    sway.focus("alpha")
    wins = {w.app_name: w for w in SwayProbe().visible_windows()}
    assert {"alpha", "bravo", "vault"} <= set(wins) and all(w.bounds for w in wins.values())
    out = tmp_path / "cap"
    db = out / "lifetrace.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "proagent.cli", "capture", "--out", str(out), "--interval", "0.25", "--no-ocr"]
        + ["--exclude-app", "vault"],
        env=sway.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _wait(lambda: db.exists() and _rows(db, "SELECT COUNT(*) FROM screenshots")[0][0] >= 1, what="first screenshot")
    finally:
        r = CliRunner().invoke(cli, ["capture", "stop", str(out)])
        text, _ = proc.communicate(timeout=20)
    assert r.exit_code == 0 and proc.returncode == 0, text
    (fp, region), *_ = _rows(db, "SELECT file_path, ocr_region FROM screenshots")
    arr = np.asarray(Image.open(fp).convert("RGB"))
    x, y, w, h = wins["vault"].bounds
    assert (arr[y : y + h, x : x + w] == MASK_FILL).all()  # the excluded window: every pixel filled
    x, y, w, h = wins["alpha"].bounds
    assert not (arr[y : y + h, x : x + w] == MASK_FILL).all()  # the focused one: shown
    assert region == ",".join(map(str, wins["alpha"].bounds))  # and it is what OCR reads
