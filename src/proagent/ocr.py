"""The one OCR engine loader: RapidOCR (PP-OCR detection, direction and recognition ONNX
models shipped inside the ``rapidocr`` wheel, so nothing downloads at run time), used by
capture's background worker, curation's privacy screener and annotation's screen text."""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["LEAN_PARAMS", "OCR_PARAMS", "load_ocr"]

OCR_PARAMS: dict[str, Any] = {"Global.log_level": "error", "Global.use_cls": False}
"""RapidOCR settings every caller uses: quiet (no per-image log lines) and no text-direction
classifier. Screen text is upright, and the classifier turns lines it takes for upside down: on the
desktop day (issue 21) it turned a long line of a chat reply in DejaVu Sans at 18-19 px, which then
read "Tes s , et" instead of "The session has no 'user_id' key when the login view redirects before
setting it. Set" (annotate stored that as the reply's start; curate's PII screen would miss a value
on such a line). ``tests/test_ocr.py`` renders that case."""
LEAN_PARAMS: dict[str, Any] = {
    "Global.use_cls": False,
    "Rec.rec_batch_num": 1,
    "Det.limit_type": "max",
    "Det.limit_side_len": 2000,
}
"""What capture's background worker adds (issue 24, its resident memory): no text-direction
classifier (as :data:`OCR_PARAMS`; kept here so the lean set stands alone), one
text line per recognition batch (a batch is padded to its widest line, and the recogniser's
activations grow with batch x width), and the detector at the image's own scale up to 2000 pixels
a side (the default scales an image up until its shorter side is 736 pixels, which would blow a
horizontal band of a screen, :func:`proagent.capture._ocr.read_bands`, up 1.6 times; RapidOCR itself
scales any image down to 2000 pixels a side, ``Global.max_side_len``)."""


@functools.lru_cache(maxsize=4)
def load_ocr(threads: int | None = None, lean: bool = False) -> Any:
    """A RapidOCR engine with :data:`OCR_PARAMS`, loaded once per ``threads`` and ``lean`` value.

    Args:
        threads: onnxruntime intra-op threads (with one inter-op thread), to bound
            the CPU a background worker takes; ``None`` leaves onnxruntime's default.
        lean: add :data:`LEAN_PARAMS` (less memory; the lines read are the same on screens).

    Returns:
        The ``rapidocr.RapidOCR`` engine: call it on an image path or an RGB/BGR array.

    Raises:
        ImportError: ``rapidocr`` is not installed (``pip install 'proagent[ocr]'``).
    """
    from rapidocr import RapidOCR

    params = dict(OCR_PARAMS) | (LEAN_PARAMS if lean else {})
    if threads is not None:
        params.update(
            {
                "EngineConfig.onnxruntime.intra_op_num_threads": int(threads),
                "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            }
        )
    return RapidOCR(params=params)
