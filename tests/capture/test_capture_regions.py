"""Capture reads the focused window's region (issue 42: OCR that keeps up on 2 cores), newest
screenshot first, and masks excluded windows shown beside the focused one before a screenshot is
stored (issue 46: a block rule applies to screen regions, not only to events)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
from system import require_binary

from proagent.capture._ocr import ocr_pending
from proagent.capture._platform import WindowInfo
from proagent.capture._regions import MASK_FILL, mask_windows, parse_region, window_region
from proagent.capture._store import Store

MONO = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"


def test_mask_fills_only_the_visible_pixels_of_an_excluded_window() -> None:
    from PIL import Image

    img = Image.new("RGB", (200, 100), (250, 250, 250))
    blocked = WindowInfo("keepassxc", "vault", bounds=(10, 10, 100, 60))
    dialog = WindowInfo("xmessage", "saved", bounds=(60, 30, 100, 50))  # over the blocked window's right part
    below = WindowInfo("xterm", "shell", bounds=(0, 0, 200, 100))  # under both
    out, n = mask_windows(img, [below, blocked, dialog], lambda w: w.app_name == "keepassxc", (0, 0, 200, 100))
    px = out.load()
    assert px[20, 20] == MASK_FILL  # the blocked window, uncovered
    assert px[80, 50] == (250, 250, 250)  # the dialog over it stays
    assert px[150, 5] == (250, 250, 250)  # the window below, beside it
    assert n == 100 * 60 - 50 * 40  # its rectangle less the dialog's part over it
    # a second screen at x = 200 on the desktop: the same window lies on the first screen only
    assert mask_windows(img, [blocked], lambda w: True, (200, 0, 200, 100)) == (img, 0)
    # no excluded window, or no screen rectangle: the image itself
    assert mask_windows(img, [below, dialog], lambda w: False, (0, 0, 200, 100)) == (img, 0)
    assert mask_windows(img, [blocked], lambda w: True, None) == (img, 0)


def test_window_region_on_its_screen_in_image_pixels() -> None:
    win = WindowInfo("xterm", "t", bounds=(2000, 100, 400, 300))
    assert window_region(win, (1920, 0, 1920, 1080), (1920, 1080)) == (80, 100, 400, 300)
    assert window_region(win, (1920, 0, 1920, 1080), (3840, 2160)) == (160, 200, 800, 600)  # a scaled output
    assert window_region(win, (0, 0, 1920, 1080), (1920, 1080)) is None  # another screen
    assert window_region(WindowInfo("xterm", "t"), (0, 0, 1920, 1080), (1920, 1080)) is None  # no bounds
    assert window_region(WindowInfo("x", "t", bounds=(0, 0, 8, 300)), (0, 0, 800, 600), (800, 600)) is None  # a strip
    assert parse_region("80,100,400,300") == (80, 100, 400, 300)
    assert parse_region(None) is None and parse_region("1,2,0,4") is None and parse_region("a,b,c,d") is None


class _Recorder:
    """Stands in for the engine: records what ocr_pending asked to read."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def read(self, path: Path, screen: object = None, region: object = None) -> tuple[str, float | None]:
        self.calls.append((path.name, region))
        return "text", 0.9


def test_newest_screenshot_first_and_its_region(tmp_path: Path) -> None:
    st = Store(tmp_path)
    ev = st.open_event("xterm", "t", datetime(2026, 1, 1, 9))
    for k in range(3):
        st.add_screenshot(
            event_id=ev,
            screen_id=0,
            t=datetime(2026, 1, 1, 9, 0, k),
            data=b"png",
            ext="png",
            file_hash=str(k),
            width=800,
            height=600,
            app="xterm",
            title="t",
            focused=True,
            ocr_region=(10, 20, 300, 200) if k == 2 else None,
        )
    eng = _Recorder()
    assert ocr_pending(st.con, eng, st.shots)  # type: ignore[arg-type]
    assert eng.calls == [("screen_0_20260101_090002_000.png", (10, 20, 300, 200))]  # the newest, its region
    assert ocr_pending(st.con, eng, st.shots) and ocr_pending(st.con, eng, st.shots)  # type: ignore[arg-type]
    assert [c[0][-14:-4] for c in eng.calls] == ["090002_000", "090001_000", "090000_000"]
    assert not ocr_pending(st.con, eng, st.shots)  # type: ignore[arg-type]
    st.close()


def test_the_engine_reads_only_the_region(tmp_path: Path) -> None:
    pytest.importorskip("rapidocr")
    from PIL import Image, ImageDraw, ImageFont

    from proagent.capture._ocr import OcrEngine

    font = ImageFont.truetype(MONO, 18) if os.path.exists(MONO) else ImageFont.load_default(18)
    img = Image.new("RGB", (900, 500), (250, 250, 250))
    d = ImageDraw.Draw(img)
    d.text((20, 40), "FOCUSED WINDOW LINE 3141", fill=(10, 10, 10), font=font)
    d.text((500, 400), "BACKGROUND WINDOW LINE 2718", fill=(10, 10, 10), font=font)
    path = tmp_path / "s.png"
    img.save(path)
    eng = OcrEngine()
    text, _ = eng.read(path, screen=0, region=(0, 0, 420, 120))
    assert "3141" in text and "2718" not in text
    assert "2718" in eng.read(path, screen=1)[0]  # no region: the whole screen


# ------------------------------------------------------------------ a real X session


def _rows(db: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(db.resolve().as_uri() + "?mode=ro", uri=True, timeout=5)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_a_blocked_window_behind_a_dialog_is_masked_before_storing_and_ocr(tmp_path: Path) -> None:
    require_binary("Xvfb", "openbox", "xterm", "xdotool", "xmessage")
    pytest.importorskip("rapidocr")
    from xsession import XSession

    from proagent.ocr import load_ocr

    planted = "LEDGER PIN 73915"
    out = tmp_path / "cap"
    db = out / "lifetrace.db"
    with XSession(800, 600) as xs:
        xs.xterm("ledger", planted, geometry="60x16+20+20")  # blocked: --exclude-app xterm
        xs.xmessage("saved-dialog", "SAVED DIALOG 58", geometry="380x140+300+200")  # in front, over its lower right
        xs.activate("saved-dialog")
        xs.wait_still()
        proc = subprocess.Popen(
            [sys.executable, "-m", "proagent.cli", "capture", "--out", str(out), "--interval", "0.25"]
            + ["--ocr-interval", "0.25", "--exclude-app", "xterm", "--ocr-region", "screen", "--duration", "60s"],
            env=xs.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        end = time.monotonic() + 60
        while time.monotonic() < end and not (
            db.exists() and _rows(db, "SELECT COUNT(*) FROM ocr_results WHERE text_content LIKE '%DIALOG%'")[0][0]
        ):
            time.sleep(0.2)
        subprocess.run([sys.executable, "-m", "proagent.cli", "capture", "stop", str(out)], env=xs.env, check=True)
        text, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, text
    shots = _rows(
        db,
        "SELECT s.file_path, s.app_name, o.text_content FROM screenshots s JOIN ocr_results o "
        "ON o.screenshot_id = s.id",
    )
    assert shots and all(app != "xterm" for _, app, _ in shots)
    assert any("SAVED DIALOG" in t for _, _, t in shots)  # the dialog's own text is read
    assert not any("73915" in t or "LEDGER" in t for _, _, t in shots)  # the blocked window's line is not
    engine = load_ocr(1, lean=True)
    for fp, _, _ in shots:  # nor is it in the stored image, read whole here
        res = engine(str(fp))
        assert not any("73915" in t for t in (res.txts or ())), res.txts


def test_screenshots_whose_lines_are_all_reused_are_not_rate_limited(tmp_path: Path) -> None:
    """A page changing beside a still window stores a screenshot a second: the worker reads those
    whose focused region did not change at once (no engine pass), not one per --ocr-interval."""
    pytest.importorskip("rapidocr")
    import io

    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(MONO, 18) if os.path.exists(MONO) else ImageFont.load_default(18)
    st = Store(tmp_path)
    ev = st.open_event("xterm", "t", datetime(2026, 1, 1, 9))
    for k in range(4):
        img = Image.new("RGB", (800, 400), (250, 250, 250))
        d = ImageDraw.Draw(img)
        d.text((20, 30), "STILL TERMINAL LINE 6021", fill=(10, 10, 10), font=font)
        # beside the region (within REGION_MARGIN of its right edge), changing on every screenshot
        d.text((412, 60), f"{k * 37} ticker", fill=(10, 10, 10), font=font)
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        st.add_screenshot(
            event_id=ev,
            screen_id=0,
            t=datetime(2026, 1, 1, 9, 0, k),
            data=buf.getvalue(),
            ext="png",
            file_hash=str(k),
            width=800,
            height=400,
            app="xterm",
            title="t",
            focused=True,
            ocr_region=(0, 0, 400, 120),
        )
    st.close()
    db = tmp_path / "lifetrace.db"
    worker = subprocess.Popen(
        [sys.executable, "-m", "proagent.capture._ocr", str(db), "--min-interval", "60"],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        end = time.monotonic() + 120
        while time.monotonic() < end and _rows(db, "SELECT COUNT(*) FROM ocr_results")[0][0] < 1:
            time.sleep(0.1)
        first = time.monotonic()
        while time.monotonic() < first + 20 and _rows(db, "SELECT COUNT(*) FROM ocr_results")[0][0] < 4:
            time.sleep(0.1)
    finally:
        worker.terminate()
        worker.wait(30)
    texts = [r[0] for r in _rows(db, "SELECT text_content FROM ocr_results ORDER BY screenshot_id")]
    assert len(texts) == 4, "the screenshots with the same region waited for the rate limit"
    assert all("6021" in t and "ticker" not in t for t in texts)


def test_switching_back_to_a_window_reuses_its_lines(tmp_path: Path) -> None:
    """Two windows of different sizes in front in turn: back on the first, unchanged, no engine pass."""
    pytest.importorskip("rapidocr")
    from PIL import Image, ImageDraw, ImageFont

    from proagent.capture._ocr import OcrEngine

    font = ImageFont.truetype(MONO, 18) if os.path.exists(MONO) else ImageFont.load_default(18)
    img = Image.new("RGB", (900, 500), (250, 250, 250))
    d = ImageDraw.Draw(img)
    d.text((20, 40), "EDITOR LINE 1618", fill=(10, 10, 10), font=font)
    d.text((500, 300), "TERMINAL LINE 1414", fill=(10, 10, 10), font=font)
    path = tmp_path / "s.png"
    img.save(path)
    eng = OcrEngine()
    editor, terminal = (0, 0, 420, 120), (480, 260, 400, 200)
    assert "1618" in eng.read(path, screen=0, region=editor)[0]
    assert "1414" in eng.read(path, screen=0, region=terminal)[0]
    passes = eng.stats.read
    assert "1618" in eng.read(path, screen=0, region=editor)[0]
    assert eng.stats.read == passes  # its lines reused: nothing run through the engine
