"""The one OCR engine loader: RapidOCR (PP-OCR detection, direction and recognition ONNX
models shipped inside the ``rapidocr`` wheel, so nothing downloads at run time), used by
capture's background worker, curation's privacy screener and annotation's screen text."""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["OCR_PARAMS", "load_ocr"]

OCR_PARAMS: dict[str, Any] = {"Global.log_level": "error"}
"""RapidOCR settings every caller uses (quiet: no per-image log lines)."""


@functools.lru_cache(maxsize=4)
def load_ocr(threads: int | None = None) -> Any:
    """A RapidOCR engine with :data:`OCR_PARAMS`, loaded once per ``threads`` value.

    Args:
        threads: onnxruntime intra-op threads (with one inter-op thread), to bound
            the CPU a background worker takes; ``None`` leaves onnxruntime's default.

    Returns:
        The ``rapidocr.RapidOCR`` engine: call it on an image path or an RGB/BGR array.

    Raises:
        ImportError: ``rapidocr`` is not installed (``pip install 'proagent[ocr]'``).
    """
    from rapidocr import RapidOCR

    params = dict(OCR_PARAMS)
    if threads is not None:
        params.update({
            "EngineConfig.onnxruntime.intra_op_num_threads": int(threads),
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
        })
    return RapidOCR(params=params)
