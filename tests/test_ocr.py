"""The one OCR loader (proagent.ocr): one engine per thread setting, the project's settings."""

import pytest
from system import require_module

require_module("rapidocr")

from proagent.ocr import OCR_PARAMS, load_ocr  # noqa: E402


def test_load_ocr_is_cached_per_thread_setting(monkeypatch):
    monkeypatch.delenv("PROAGENT_OCR_THREADS", raising=False)  # scripts/test.sh sets it to 1
    default, one = load_ocr(), load_ocr(1)
    assert load_ocr() is default and load_ocr(1) is one
    assert one is not default
    assert OCR_PARAMS == {"Global.log_level": "error", "Global.use_cls": False}


def test_the_environment_gives_the_threads_of_an_engine_loaded_without_them(monkeypatch):
    """``PROAGENT_OCR_THREADS`` (the benchmarks' ``--smoke`` set it to 1, issue 45): the engine of
    ``load_ocr()`` is that of ``load_ocr(N)``; an explicit count wins; a bad value is one clear error."""
    from proagent.errors import UsageError

    monkeypatch.setenv("PROAGENT_OCR_THREADS", "1")
    assert load_ocr() is load_ocr(1) and load_ocr(2) is not load_ocr(1)
    for bad in ("0", "two", "-1", "1.5"):
        monkeypatch.setenv("PROAGENT_OCR_THREADS", bad)
        with pytest.raises(UsageError, match=f"PROAGENT_OCR_THREADS: '{bad}' is not a whole number of threads >= 1"):
            load_ocr()
    monkeypatch.setenv("PROAGENT_OCR_THREADS", "")
    assert load_ocr() is not load_ocr(1)  # empty: onnxruntime's default


LONG_LINE = "The session has no 'user_id' key when the login view redirects before setting it. Set"
"""A line of the desktop day's chat reply (tests/scenarios/desktop.py) that RapidOCR's text-direction
classifier turned upside down at 18-19 px, reading "Tes s , et" (issue 21)."""


@pytest.mark.parametrize("size", [18, 19, 20])
def test_a_long_upright_screen_line_is_read_as_written(size):
    import numpy as np
    from PIL import Image, ImageDraw, ImageFont

    try:
        font = ImageFont.truetype("DejaVuSans.ttf", size)
    except OSError:
        pytest.skip("DejaVu Sans is not installed (fonts-dejavu-core)")
    im = Image.new("RGB", (1280, 120), "white")
    ImageDraw.Draw(im).text((300, 40), LONG_LINE, fill=(31, 31, 31), font=font)
    got = " ".join(load_ocr()(np.asarray(im)).txts or ())
    assert " ".join(got.split()) == LONG_LINE
