"""Capture change detection that sees text (issue 21 item 7), and private capture folders
(issue 21 item 8 / issue 26 item 4): pure parts on rendered screens, then a real xterm in Xvfb
printing a new line every 0.5 s."""

from __future__ import annotations

import hashlib
import stat
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

from system import require_binary, require_module

require_module("imagehash")

from proagent.capture import Store  # noqa: E402
from proagent.capture._change import MIN_CHANGED_PIXELS, changed_pixels, frame, is_duplicate  # noqa: E402


def _terminal(lines: list[str], caret: tuple[int, int] | None = None):  # noqa: ANN202
    """A 1280x800 dark terminal-like screen with ``lines`` of 13 px DejaVu Sans Mono."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", (1280, 800), (20, 20, 20))
    d = ImageDraw.Draw(img)
    try:
        font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", 13)
    except OSError:
        font = ImageFont.load_default()
    for i, line in enumerate(lines):
        d.text((8, 8 + 16 * i), line, fill=(220, 220, 220), font=font)
    if caret is not None:
        d.line([caret, (caret[0], caret[1] + 14)], fill=(220, 220, 220), width=1)
    return img


def test_a_new_line_of_text_is_a_change_the_phash_alone_misses() -> None:
    base = [f"$ make test  # step {i}: collected 12 items, 12 passed in 0.{i}1s" for i in range(48)]
    a, b = _terminal(base), _terminal(base[1:] + ["Traceback (most recent call last): KeyError: 'user_id'"])
    fa, fb = frame(a), frame(b)
    assert fa.phash - fb.phash <= 5, "the scenario this fixes: pHash calls the two screens equal"
    assert is_duplicate(frame(a, text=False), frame(b, text=False), 5)  # LifeTrace's rule: a duplicate
    assert changed_pixels(fa, fb) > MIN_CHANGED_PIXELS
    assert not is_duplicate(fb, fa, 5)  # text-aware: stored


def test_one_changed_digit_is_seen_and_a_caret_is_not() -> None:
    lines = [f"row {i}: collected 12 items, 12 passed in 0.41s" for i in range(48)]
    other = list(lines)
    other[30] = other[30].replace("12 passed", "11 passed")
    assert frame(_terminal(other)).phash - frame(_terminal(lines)).phash <= 5
    assert not is_duplicate(frame(_terminal(other)), frame(_terminal(lines)), 5)
    assert is_duplicate(frame(_terminal(lines, caret=(600, 400))), frame(_terminal(lines)), 5)
    assert is_duplicate(frame(_terminal(lines)), frame(_terminal(lines)), 5)


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_store_makes_folder_database_and_screenshots_private(tmp_path: Path) -> None:
    folder = tmp_path / "cap"
    folder.mkdir(mode=0o755)
    st = Store(folder)
    ev = st.open_event("xterm", "t", datetime(2026, 1, 1, 9, 0, 0))
    data = b"\x89PNG not really"
    st.add_screenshot(
        event_id=ev,
        screen_id=0,
        t=datetime(2026, 1, 1, 9, 0, 1),
        data=data,
        ext="png",
        file_hash=hashlib.sha256(data).hexdigest(),
        width=1,
        height=1,
        app="xterm",
        title="t",
    )
    st.close_event(ev, datetime(2026, 1, 1, 9, 0, 5))
    assert _mode(folder) == 0o700 and _mode(folder / "screenshots") == 0o700
    for f in [folder / "lifetrace.db", *(folder / "screenshots").iterdir(), *folder.glob("lifetrace.db-*")]:
        assert _mode(f) == 0o600, f
    st.close()
    (folder / "lifetrace.db").chmod(0o644)  # an older run's world-readable log is made private on start
    Store(folder).close()
    assert _mode(folder / "lifetrace.db") == 0o600


def test_xterm_printing_a_line_every_half_second_is_stored_each_time(tmp_path: Path) -> None:
    require_binary("Xvfb", "openbox", "xterm", "xdotool", "xprop")
    from xsession import XSession

    counts = {}
    with XSession(800, 600) as xs:
        xs.xterm("ticker", "start", geometry="80x30+0+0", shell=True)
        xs.activate("ticker")
        for text_change in (False, True):
            out = tmp_path / f"cap-{text_change}"
            code = (
                "import sys; from pathlib import Path; from proagent.capture import CaptureConfig, record; "
                f"record(CaptureConfig(out=Path(sys.argv[1]), interval=0.5, ocr=False, duration=7.0, "
                f"text_change={text_change}))"
            )
            proc = subprocess.Popen(
                [sys.executable, "-c", code, str(out)],
                env=xs.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            time.sleep(1.5)
            for i in range(8):  # one short line every 0.5 s
                xs.type(f"echo line {i}\n", delay_ms=5)
                time.sleep(0.5)
            text, _ = proc.communicate(timeout=30)
            assert proc.returncode == 0, text
            import sqlite3

            con = sqlite3.connect(out / "lifetrace.db")
            counts[text_change] = con.execute("SELECT COUNT(*) FROM screenshots").fetchone()[0]
            con.close()
    assert counts[True] >= 6, counts  # (nearly) every new line stored
    assert counts[True] > counts[False], counts
