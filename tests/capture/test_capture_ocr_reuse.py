"""Capture's OCR worker reads again only the rows of a screen that changed since the previous
screenshot of the same screen (issue 24: text-aware dedup stores many near-identical screens), and
skips bands of one colour: the lines it writes are those of reading the whole screen."""

from __future__ import annotations

import os

from system import require_module

require_module("rapidocr")

from proagent.capture._ocr import BandStats, OcrEngine, read_bands, read_screen  # noqa: E402
from proagent.ocr import load_ocr  # noqa: E402

MONO = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
LINES = [f"line {i:02d}: loss = criterion(model(x{i}), y) + {i}.5" for i in range(9)]


def _screen(lines: list[str], blank_bottom: bool = False, clock: str = ""):  # noqa: ANN202
    import numpy as np
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(MONO, 18) if os.path.exists(MONO) else ImageFont.load_default(18)
    img = Image.new("RGB", (760, 480), (250, 250, 250))
    d = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        d.text((20, 12 + 50 * i), line, fill=(10, 10, 10), font=font)
    if clock:
        d.text((600, 12), clock, fill=(10, 10, 10), font=font)  # beside line 00, on the same row
    if blank_bottom:
        d.rectangle((0, 240, 760, 480), fill=(30, 30, 60))
    return np.asarray(img)


def _bare(txts: list[str]) -> list[str]:
    return [t.replace(" ", "") for t in txts]


def test_only_changed_rows_are_read_and_the_lines_are_those_of_a_full_read() -> None:
    engine = load_ocr(1, lean=True)
    edited = list(LINES)
    edited[4] = "line 04: total = sum(losses) / len(batch)"  # rows 212-234, inside the second 120-row band
    second = _screen(edited)
    _, _, first = read_screen(engine, _screen(LINES), rows=120, overlap=40)
    stats = BandStats()
    txts, scores, again = read_screen(engine, second, first, rows=120, overlap=40, margin=20, stats=stats)
    full_txts, full_scores = read_bands(engine, second, rows=120, overlap=40)
    assert _bare(txts) == _bare(full_txts) == _bare(edited)
    assert txts == full_txts and len(scores) == len(full_scores)  # confidences differ a little: other context rows
    assert stats.lines_reused == len(LINES) - 1 and stats.read == 1 and stats.rows_read < 100
    # the same screen again: nothing read, every line reused
    same = BandStats()
    assert read_screen(engine, second, again, rows=120, overlap=40, stats=same)[0] == txts
    assert same.read == 0 and same.lines_reused == len(LINES)


def test_a_line_partly_changed_is_read_whole_and_keeps_its_place() -> None:
    engine = load_ocr(1, lean=True)
    _, _, first = read_screen(engine, _screen(LINES, clock="09:00"), rows=120, overlap=40)
    stats = BandStats()
    txts, _, _ = read_screen(engine, _screen(LINES, clock="09:01"), first, rows=120, overlap=40, stats=stats)
    full, _ = read_bands(engine, _screen(LINES, clock="09:01"), rows=120, overlap=40)
    assert _bare(txts) == _bare(full) and any("09:01" in t for t in txts) and not any("09:00" in t for t in txts)
    assert stats.read == 1 and stats.lines_reused >= len(LINES) - 2


def test_bands_of_one_colour_are_skipped_and_would_show_no_text() -> None:
    import numpy as np

    engine = load_ocr(1, lean=True)
    assert engine(np.full((200, 760, 3), (30, 30, 60), np.uint8)).boxes is None  # what the skip relies on
    stats = BandStats()
    txts, _, _ = read_screen(engine, _screen(LINES, blank_bottom=True), rows=120, overlap=40, stats=stats)
    assert stats.blank == 1 and stats.read == 3  # rows 320-480 are one colour; 240-320 reach into band 2
    assert _bare(txts) == _bare(LINES[:5])


def test_worker_keeps_the_previous_screenshot_per_screen(tmp_path) -> None:  # noqa: ANN001
    from PIL import Image

    a, b = tmp_path / "a.png", tmp_path / "b.png"
    Image.fromarray(_screen(LINES)).save(a)
    Image.fromarray(_screen(LINES[:3])).save(b)
    eng = OcrEngine(1)
    text_a, conf = eng.read(a, screen=0)
    assert conf is not None and text_a.count("\n") == len(LINES) - 1
    eng.read(b, screen=1)  # another screen: its own first screenshot, nothing reused
    assert eng.stats.lines_reused == 0
    assert eng.read(a, screen=0)[0] == text_a  # screen 0 unchanged since its previous screenshot
    assert eng.stats.lines_reused == len(LINES)


def test_regions_widen_once_to_whole_lines_and_stop_at_the_screen_edges() -> None:
    from proagent.capture._ocr import ScreenLine, ScreenRead, _changed_rects

    h = 100
    rows = tuple(bytes([i]) for i in range(h))
    lines = (
        ScreenLine("top", 0.9, 0, -3, -3.5, 12, 0, 4),
        ScreenLine("a", 0.9, 0, 40, 40, 52, 0, 46),
        ScreenLine("b", 0.9, 0, 51, 51, 63, 0, 57),  # touches "a": no chain reaction down the page
        ScreenLine("bottom", 0.9, 0, 88, 88, 100.7, 0, 94),
    )
    changed = tuple(b"x" if i in (5, 45, 95) else r for i, r in enumerate(rows))
    core, regions = _changed_rects(ScreenRead((h, 10, 3), rows, lines), changed, h, 2)
    assert core == [(3, 8, 0, 10), (43, 48, 0, 10), (93, 98, 0, 10)]  # no column digests: the whole width
    assert regions == [(0, 13, 0, 10), (40, 53, 0, 10), (88, 100, 0, 10)]


def test_a_scrolled_screen_reuses_the_lines_that_moved() -> None:
    """A terminal printing output or a page scrolled moves every row: the lines that moved with the
    content are reused at their new place (issue 42: OCR that keeps up), only the new ones are read."""
    from proagent.capture._ocr import scroll_shift

    engine = load_ocr(1, lean=True)
    _, _, first = read_screen(engine, _screen(LINES), rows=120, overlap=40)
    new = ["line 09: optimizer.step() after 12 batches", "line 10: print(f'epoch {e} loss {l:.4f}')"]
    scrolled = _screen(LINES[2:] + new)  # up by two lines (100 px), two new ones at the bottom
    stats = BandStats()
    txts, _, _ = read_screen(engine, scrolled, first, rows=120, overlap=40, margin=20, stats=stats)
    assert _bare(txts) == _bare(LINES[2:] + new) == _bare(read_bands(engine, scrolled, rows=120, overlap=40)[0])
    assert stats.shifts == 1 and stats.lines_reused >= len(LINES) - 3 and stats.rows_read < 200
    from proagent.capture._ocr import _row_digests

    assert scroll_shift(first, _row_digests(scrolled)) == 100
    assert scroll_shift(first, _row_digests(_screen(LINES))) == 0  # unmoved


def test_the_recogniser_reads_only_the_lines_a_band_keeps() -> None:
    """Issue 42 (capture within 10% of a core): the detector sees each band with context rows above
    and below, whose lines belong to the neighbouring band (or are reused); they are not recognised,
    and the lines read are those of recognising every box."""
    engine = load_ocr(1, lean=True)
    crops: list[int] = []
    rec = engine.recognize_txt

    def counted(imgs):  # noqa: ANN001, ANN202
        crops.append(len(imgs))
        return rec(imgs)

    engine.recognize_txt = counted
    try:
        stats = BandStats()
        txts, _, _ = read_screen(engine, _screen(LINES), rows=120, overlap=40, stats=stats)
    finally:
        del engine.recognize_txt
    assert _bare(txts) == _bare(LINES)
    assert sum(crops) == len(LINES)  # every box recognised once: none of the context rows' boxes
    assert stats.boxes_skipped >= 4 and stats.read == 4


def _wide_screen(status: str, clock: str, typed: str = ""):  # noqa: ANN202
    """A 1600x330 terminal-like screen: a status line at the left and a clock at the right of the
    top row, code lines below, ``typed`` at the end of the last one."""
    import numpy as np
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(MONO, 18) if os.path.exists(MONO) else ImageFont.load_default(18)
    img = Image.new("RGB", (1600, 330), (250, 250, 250))
    d = ImageDraw.Draw(img)
    d.text((20, 12), status, fill=(10, 10, 10), font=font)
    d.text((1450, 12), clock, fill=(10, 10, 10), font=font)
    for i, line in enumerate(LINES[:5]):
        d.text((20, 62 + 50 * i), line + (typed if i == 4 else ""), fill=(10, 10, 10), font=font)
    return np.asarray(img)


def _counting(engine):  # noqa: ANN001, ANN202
    """Wrap ``engine``: the widths of the images it is given and the crops it recognises."""
    widths: list[int] = []
    crops: list[int] = []
    pre, rec = engine.preprocess_img, engine.recognize_txt

    def pre_counted(img):  # noqa: ANN001, ANN202
        widths.append(int(img.shape[1]))
        return pre(img)

    def rec_counted(imgs):  # noqa: ANN001, ANN202
        crops.append(len(imgs))
        return rec(imgs)

    engine.preprocess_img, engine.recognize_txt = pre_counted, rec_counted
    return widths, crops


def test_a_change_is_read_in_a_strip_of_its_columns_and_the_lines_beside_it_are_reused() -> None:
    """Issue 42 (capture within 10% of a core): a clock ticking at the right of a row, or a word
    typed at the end of a line, is read in a strip of the columns that changed (the lines reaching
    into it whole), not across the screen's width; the lines beside it in the same rows are reused,
    and the text is that of a whole read, the changed lines read again (curate trusts them)."""
    engine = load_ocr(1, lean=True)
    _, _, first = read_screen(engine, _wide_screen("user@host: ~/proagent (main)", "09:00"), rows=120, overlap=40)
    widths, crops = _counting(engine)
    try:
        stats = BandStats()
        after = _wide_screen("user@host: ~/proagent (main)", "09:01", typed=" # fixed")
        txts, _, _ = read_screen(engine, after, first, rows=120, overlap=40, stats=stats)
    finally:
        del engine.preprocess_img, engine.recognize_txt
    full, _ = read_bands(engine, after, rows=120, overlap=40)
    assert _bare(txts) == _bare(full)
    assert any("09:01" in t for t in txts) and not any("09:00" in t for t in txts)
    assert any(t.replace(" ", "").endswith("#fixed") for t in txts)
    assert widths and max(widths) < 1600  # every strip narrower than the screen
    assert sum(crops) == 2  # the clock and the typed line: the status line beside the clock reused
    assert stats.lines_reused == len(full) - 2


def test_a_window_switched_back_to_is_read_against_its_own_last_read(tmp_path) -> None:  # noqa: ANN001
    """Issue 42: shell -> another window -> the shell again, one line changed: the worker keeps
    several reads per screen and reads the shell against its own (one line read, the rest reused;
    its unchanged return costs no engine run), not against the window shown in between."""
    from PIL import Image

    shell, other = _screen(LINES), _screen([f"Parameter {i}: weight (Tensor, optional) {i}" for i in range(7)])
    edited = list(LINES)
    edited[6] = "line 06: print(loss.item(), flush=True)"
    paths = {}
    for name, arr in (("shell", shell), ("other", other), ("edited", _screen(edited))):
        paths[name] = tmp_path / f"{name}.png"
        Image.fromarray(arr).save(paths[name])
    eng = OcrEngine(1)
    eng.read(paths["shell"], screen=0)
    eng.read(paths["other"], screen=0)
    assert not eng.needs_engine(paths["shell"], screen=0)  # the shell as it was: every line reused
    reused = eng.stats.lines_reused
    widths, crops = _counting(eng._engine)
    try:
        text, _ = eng.read(paths["edited"], screen=0)
    finally:
        del eng._engine.preprocess_img, eng._engine.recognize_txt
    full, _ = read_bands(load_ocr(1, lean=True), _screen(edited))
    assert _bare(text.split("\n")) == _bare(full) == _bare(edited)
    assert eng.stats.lines_reused - reused == len(LINES) - 1 and sum(crops) == 1
    assert eng.stats.references == 1
