"""The one OCR engine loader: RapidOCR (PP-OCR detection, direction and recognition ONNX
models shipped inside the ``rapidocr`` wheel, so nothing downloads at run time), used by
capture's background worker, curation's privacy screener and annotation's screen text."""

from __future__ import annotations

import functools
import os
from typing import Any

from .errors import UsageError

__all__ = ["LEAN_PARAMS", "OCR_PARAMS", "OCR_THREADS_ENV", "load_ocr", "ocr_threads_from_env"]

OCR_THREADS_ENV = "PROAGENT_OCR_THREADS"
"""Environment variable: onnxruntime intra-op threads of every engine loaded without an explicit
``threads`` (a whole number >= 1). Unset: onnxruntime's default (one thread per core). The
benchmarks' ``--smoke`` set it to 1 for their children (issue 45): on two cores shared by two test
workers a second thread mostly spin-waits (``benchmarks/privacy.py --smoke``: 25.4 s of CPU with
the default, 19.1 s with one thread, and less wall time too)."""

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


def ocr_threads_from_env() -> int | None:
    """The thread count :data:`OCR_THREADS_ENV` gives (``None``: unset or empty).

    Raises:
        UsageError: the variable is set to something other than a whole number >= 1.
    """
    raw = os.environ.get(OCR_THREADS_ENV, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise UsageError(OCR_THREADS_ENV, f"{raw!r} is not a whole number of threads >= 1")
    return int(raw)


def load_ocr(threads: int | None = None, lean: bool = False) -> Any:
    """A RapidOCR engine with :data:`OCR_PARAMS`, loaded once per ``threads`` and ``lean`` value.

    Args:
        threads: onnxruntime intra-op threads (with one inter-op thread), to bound
            the CPU a background worker takes; ``None``: :data:`OCR_THREADS_ENV` when set, else
            onnxruntime's default.
        lean: add :data:`LEAN_PARAMS` (less memory; the lines read are the same on screens).

    Returns:
        The ``rapidocr.RapidOCR`` engine: call it on an image path or an RGB/BGR array.

    Raises:
        ImportError: ``rapidocr`` is not installed (``pip install 'proagent[ocr]'``).
        UsageError: ``threads`` is ``None`` and :data:`OCR_THREADS_ENV` is not a whole number >= 1.
    """
    return _load_ocr(ocr_threads_from_env() if threads is None else threads, lean)


@functools.lru_cache(maxsize=4)
def _load_ocr(threads: int | None, lean: bool) -> Any:
    """:func:`load_ocr`'s engine, one per (``threads``, ``lean``)."""
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
