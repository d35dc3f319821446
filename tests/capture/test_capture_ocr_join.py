"""Capture's OCR worker joins the short boxes of one text row before the recogniser (issue 42 item
2): RapidOCR pads every box to a 320-pixel line, so the columns of an ``ls -la`` listing, read box by
box, cost most of a read. Joined, the listing is read in far fewer recognitions with its words."""

from __future__ import annotations

import os
from collections import Counter

from system import require_module

require_module("rapidocr")

from proagent.capture._ocr import BandStats, read_screen  # noqa: E402
from proagent.ocr import load_ocr  # noqa: E402

MONO = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
NAMES = ["adduser", "alsa-topology-conf", "apt", "base-files", "bash", "coreutils", "dbus", "findutils"]
LISTING = [
    f"{'drwxr-xr-x' if i % 3 else '-rw-r--r--'}  {2 + i % 5} root root  {4096 * (1 + i % 3):>5} "
    f"{['Jun', 'May', 'Dec'][i % 3]} {1 + 3 * i:>2}  2025 {name}"
    for i, name in enumerate(NAMES)
]


def _listing():  # noqa: ANN202
    import numpy as np
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(MONO, 15) if os.path.exists(MONO) else ImageFont.load_default(15)
    img = Image.new("RGB", (720, 60 + 24 * len(LISTING)), (255, 255, 255))
    d = ImageDraw.Draw(img)
    for i, line in enumerate(LISTING):
        d.text((10, 20 + 24 * i), line, fill=(0, 0, 0), font=font)
    return np.asarray(img)


def test_a_listing_is_read_in_fewer_recognitions_with_its_words() -> None:
    engine = load_ocr(1, lean=True)
    arr = _listing()
    boxes = len(engine(arr).boxes)  # the detector's boxes: what a box-by-box read recognises
    assert boxes >= 2 * len(LISTING)  # the detector splits each row at its column gaps
    recognised = []
    rec = engine.recognize_txt
    engine.recognize_txt = lambda imgs: (recognised.extend(imgs), rec(imgs))[1]
    try:
        stats = BandStats()
        txts, scores, _ = read_screen(engine, arr, None, stats=stats)
    finally:
        del engine.recognize_txt
    assert len(recognised) <= min(boxes // 2, 3 * len(LISTING) // 2)  # about one recognition a row
    assert stats.boxes_joined == boxes - len(recognised)
    truth, got = Counter(" ".join(LISTING).split()), Counter(" ".join(txts).split())
    assert sum((truth & got).values()) >= 0.95 * sum(truth.values())
    assert len(scores) == len(txts) and all(0 < s <= 1 for s in scores)


def _grid():  # noqa: ANN202
    """``seq 1 40 | paste - - - -`` in a terminal's small font and tight rows: the detector boxes
    each column of numbers upright, and RapidOCR turns such a crop before reading it."""
    import numpy as np
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(MONO, 11) if os.path.exists(MONO) else ImageFont.load_default(11)
    img = Image.new("RGB", (420, 170), (255, 255, 255))
    d = ImageDraw.Draw(img)
    for r in range(10):
        for c in range(4):
            d.text((8 + 48 * c, 8 + 12 * r), str(1 + 4 * r + c), fill=(0, 0, 0), font=font)
    return np.asarray(img)


def test_upright_boxes_are_not_joined() -> None:
    import numpy as np

    engine = load_ocr(1, lean=True)
    arr = _grid()
    out = engine(arr)
    assert all(np.ptp(b[:, 1]) >= 1.5 * np.ptp(b[:, 0]) for b in out.boxes)  # four upright columns
    whole = "".join(out.txts or ())
    txts, _, _ = read_screen(engine, arr, None)
    digits = Counter("".join(str(i) for i in range(1, 41)))
    assert sum((digits & Counter("".join(txts))).values()) >= 0.6 * sum(digits.values())
    assert len("".join(txts).replace(" ", "")) >= 0.8 * len(whole.replace(" ", ""))
