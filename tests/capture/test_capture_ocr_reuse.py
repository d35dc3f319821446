"""Capture's OCR worker reuses the bands of a screen that did not change since the previous
screenshot of the same screen (issue 24: text-aware dedup stores many near-identical screens), and
skips bands of one colour: the lines it writes are those of reading every band."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("rapidocr")

from proagent.capture._ocr import BandStats, OcrEngine, read_bands, read_bands_reusing  # noqa: E402
from proagent.ocr import load_ocr  # noqa: E402

MONO = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"


def _screen(lines: list[str], blank_bottom: bool = False):  # noqa: ANN202
    import numpy as np
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(MONO, 18) if os.path.exists(MONO) else ImageFont.load_default(18)
    img = Image.new("RGB", (760, 480), (250, 250, 250))
    d = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        d.text((20, 12 + 50 * i), line, fill=(10, 10, 10), font=font)
    if blank_bottom:
        d.rectangle((0, 240, 760, 480), fill=(30, 30, 60))
    return np.asarray(img)


LINES = [f"line {i:02d}: loss = criterion(model(x{i}), y) + {i}.5" for i in range(9)]


def test_unchanged_bands_are_reused_and_the_lines_are_those_of_a_full_read() -> None:
    engine = load_ocr(1, lean=True)
    first = _screen(LINES)
    edited = list(LINES)
    edited[0] = "line 00: total = sum(losses) / len(batch)"  # the top band only (rows 0-120 + 40)
    second = _screen(edited)
    _, _, reads = read_bands_reusing(engine, first, rows=120, overlap=40)
    stats = BandStats()
    txts, scores, _ = read_bands_reusing(engine, second, reads, rows=120, overlap=40, stats=stats)
    full_txts, full_scores = read_bands(engine, second, rows=120, overlap=40)
    assert (txts, scores) == (full_txts, full_scores)
    assert txts[0].replace(" ", "") == edited[0].replace(" ", "")
    assert stats.read == 1 and stats.reused == 3 and stats.blank == 0  # 4 bands of 120 rows; band 2 starts at 200 > 160
    # the same screen again: nothing read; another screen's bands are never taken (sizes differ)
    again = BandStats()
    assert read_bands_reusing(engine, second, _, rows=120, overlap=40, stats=again)[0] == txts
    assert again.read == 0 and again.reused == 4


def test_bands_of_one_colour_are_skipped_and_would_show_no_text() -> None:
    import numpy as np

    engine = load_ocr(1, lean=True)
    assert engine(np.full((200, 760, 3), (30, 30, 60), np.uint8)).boxes is None  # what the skip relies on
    stats = BandStats()
    txts, _, _ = read_bands_reusing(engine, _screen(LINES, blank_bottom=True), rows=120, overlap=40, stats=stats)
    assert stats.blank == 1 and stats.read == 3  # rows 320-480 are one colour; 240-320 reach into band 2
    assert [t.replace(" ", "") for t in txts] == [t.replace(" ", "") for t in LINES[:5]]


def test_worker_keeps_previous_bands_per_screen(tmp_path) -> None:  # noqa: ANN001
    from PIL import Image

    a, b = tmp_path / "a.png", tmp_path / "b.png"
    Image.fromarray(_screen(LINES)).save(a)
    Image.fromarray(_screen(LINES[:3])).save(b)
    eng = OcrEngine(1)
    text_a, conf = eng.read(a, screen=0)
    assert conf is not None and text_a.count("\n") == len(LINES) - 1
    assert eng.stats.reused == 0
    eng.read(b, screen=1)  # another screen: its own first screenshot, nothing reused
    assert eng.stats.reused == 0
    assert eng.read(a, screen=0)[0] == text_a  # screen 0's bands again: all reused (480 rows: 2 bands)
    assert eng.stats.reused == 2
