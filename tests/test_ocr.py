"""The one OCR loader (proagent.ocr): one engine per thread setting, the project's settings."""

import pytest

pytest.importorskip("rapidocr")

from proagent.ocr import OCR_PARAMS, load_ocr  # noqa: E402


def test_load_ocr_is_cached_per_thread_setting():
    default, one = load_ocr(), load_ocr(1)
    assert load_ocr() is default and load_ocr(1) is one
    assert one is not default
    assert OCR_PARAMS == {"Global.log_level": "error"}
