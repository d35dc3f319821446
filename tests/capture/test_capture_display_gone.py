"""``proagent capture`` whose X server goes away mid-run (Xvfb killed): one ``Error:`` line, exit 3,
no traceback (it was 84 lines), and what it recorded stays in the folder, the open event closed."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from system import require_binary


def test_capture_stops_cleanly_when_its_display_goes_away(tmp_path: Path) -> None:
    require_binary("Xvfb", "openbox")
    from xsession import XSession

    out = tmp_path / "cap"
    with XSession(320, 240, wm=False) as xs:
        env = {**xs.env, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "proagent.cli", "capture", "--out", str(out), "--no-ocr", "--interval", "0.5"]
            + ["--duration", "60s"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            t0 = time.monotonic()
            while time.monotonic() - t0 < 60 and not (out / "screenshots").is_dir():
                time.sleep(0.2)
            time.sleep(2.0)  # a few ticks recorded
            xs.procs[0].kill()  # the X server goes away
            xs.procs[0].wait(10)
            text = proc.communicate(timeout=60)[0]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 3, text
    assert "Traceback" not in text
    errors = [ln for ln in text.splitlines() if ln.startswith("Error")]
    assert len(errors) == 1 and "went away" in errors[0] and str(out) in errors[0], text
    con = sqlite3.connect(out / "lifetrace.db")
    try:
        n, open_ = con.execute("SELECT count(*), sum(end_time IS NULL) FROM events").fetchone()
    finally:
        con.close()
    assert n >= 1 and not open_  # kept, and the open event closed
