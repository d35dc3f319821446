"""Capture's OCR worker reads a screen band by band (issue 24: bounded memory): every line once, in
reading order, the same lines as one pass over the whole frame, lines on a band border included."""

from __future__ import annotations

from system import require_module

require_module("rapidocr")

from proagent.capture._ocr import read_bands  # noqa: E402
from proagent.ocr import LEAN_PARAMS, load_ocr  # noqa: E402

MONO = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
LINES = [f"line {i:02d}: loss = criterion(model(x{i}), y) + {i}.5" for i in range(9)]


def _screen():  # noqa: ANN202
    import numpy as np
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(MONO, 18) if __import__("os").path.exists(MONO) else ImageFont.load_default(18)
    img = Image.new("RGB", (760, 480), (250, 250, 250))
    d = ImageDraw.Draw(img)
    for i, line in enumerate(LINES):  # 50 px apart: with 120-row bands, lines 2, 4 and 7 sit across a border
        d.text((20, 12 + 50 * i), line, fill=(10, 10, 10), font=font)
    return np.asarray(img)


def test_bands_read_every_line_once_in_order_like_the_whole_frame() -> None:
    engine = load_ocr(1, lean=True)
    arr = _screen()
    whole = list(engine(arr).txts or ())
    txts, scores = read_bands(engine, arr, rows=120, overlap=40)
    assert txts == whole
    assert [t.replace(" ", "") for t in txts] == [t.replace(" ", "") for t in LINES]
    assert len(scores) == len(txts) and all(0 < s <= 1 for s in scores)
    assert LEAN_PARAMS["Global.use_cls"] is False and LEAN_PARAMS["Rec.rec_batch_num"] == 1
    assert load_ocr(1, lean=True) is engine and load_ocr(1) is not engine
