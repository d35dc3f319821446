"""What the annotator sees of an event: the first 3 and last 3 screenshots and
the first 500 characters of the OCR text of each (ProAgentBench Appendix B.5).

The OCR text is the database's ``ocr_results`` rows when the screenshot has
them; otherwise the image file is read with RapidOCR (``pip install
'proagent[ocr]'``, PP-OCRv6 models shipped in the wheel, so nothing is
downloaded). Texts read from images are kept in a JSON cache (file name +
size + mtime -> text) so a resumed run does not read them again.

:meth:`OcrReader.layout` reads an image's text lines *with their positions*
(always from the image, since database OCR rows carry none; cached the same
way) for :mod:`proagent.annotate.conversation`, which cuts the chat out of the
window by layout; the image is then read once for both.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DataError, UsageError
from ..io import write_json_atomic
from ..ocr import load_ocr
from ..records import Event, Screenshot
from .conversation import OcrLine, lines_from_ocr

__all__ = ["FIRST_LAST", "OCR_CHARS", "OcrReader", "ScreenLayout", "sample_screenshots"]

FIRST_LAST = 3
"""Screenshots taken from each end of an event (paper: first 3 and last 3)."""
OCR_CHARS = 500
"""OCR characters kept per screenshot (paper: first 500)."""


@dataclass(frozen=True)
class ScreenLayout:
    """The OCR lines of one image with their boxes, and its size in pixels."""

    width: int
    height: int
    lines: tuple[OcrLine, ...]


def sample_screenshots(event: Event, k: int = FIRST_LAST) -> tuple[Screenshot, ...]:
    """The first ``k`` and last ``k`` screenshots of ``event`` (all of them when it has
    at most ``2k``), oldest first; of the focused screen when the log records it
    (:attr:`~proagent.records.Event.focused_screenshots`)."""
    shots = event.focused_screenshots
    if len(shots) <= 2 * k:
        return tuple(shots)
    return tuple(shots[:k]) + tuple(shots[-k:])


class OcrReader:
    """OCR text of screenshots: the database's rows, else RapidOCR on the image.

    Args:
        mode: ``auto`` (database rows, else read the image), ``db`` (database
            rows only) or ``image`` (always read the image when it exists).
        cache: JSON file of texts read from images (``None``: no cache).

    Raises:
        proagent.errors.UsageError: unknown mode (``--ocr``).
    """

    def __init__(self, mode: str = "auto", cache: str | Path | None = None) -> None:
        if mode not in ("auto", "db", "image"):
            raise UsageError("--ocr", f"OCR mode {mode!r}: choose auto, db or image")
        self.mode = mode
        self.cache_path = Path(cache) if cache else None
        self._cache: dict[str, Any] = {}
        if self.cache_path and self.cache_path.is_file():
            try:
                self._cache = {
                    str(k): v
                    for k, v in json.loads(self.cache_path.read_text("utf-8")).items()
                    if isinstance(v, (str, dict))
                }
            except (ValueError, AttributeError):
                self._cache = {}  # a damaged cache is rebuilt, never trusted
        self._engine: Any = None
        self._lock = threading.Lock()
        self.n_read = 0
        """Images read with RapidOCR in this process."""
        self.n_unreadable = 0
        """Image files RapidOCR could not read (0-byte, truncated, not an image): no text."""

    def _key(self, path: Path) -> str:
        st = path.stat()
        return f"{path.name}:{st.st_size}:{int(st.st_mtime)}"

    def _engine_ready(self) -> Any:
        if self._engine is None:
            try:
                self._engine = load_ocr()
            except ImportError as e:
                raise DataError(
                    None,
                    "reading screenshots needs RapidOCR: pip install 'proagent[ocr]' "
                    "(or --ocr db to use only the database's OCR rows)",
                ) from e
        return self._engine

    def _ocr_image(self, path: Path) -> tuple[int, int, Any] | None:
        """Size and RapidOCR result of one image (decrypted in memory when it is a screenshot of
        an encrypted capture); ``None`` for a 0-byte, truncated or corrupt file."""
        engine = self._engine_ready()
        try:
            from PIL import Image

            from ..vault import is_encrypted_file, open_image

            if is_encrypted_file(path):
                import numpy as np

                with open_image(path) as im:
                    w, h = im.size
                    return w, h, engine(np.asarray(im.convert("RGB")))
            with Image.open(path) as im:
                w, h = im.size
            return w, h, engine(str(path))
        except DataError:
            raise
        except Exception:  # noqa: BLE001 - PIL / OpenCV / RapidOCR raise many kinds on a bad image
            # a fresh capture's file still being written, a damaged copy: it shows no text,
            # like a screenshot whose OCR found none
            return None

    def _read(self, path: Path) -> dict[str, Any]:
        """OCR of one image: ``{"w", "h", "lines": [[text, x0, y0, x1, y1], ...]}``, from the cache or
        RapidOCR (an unreadable image: no lines, size 0, counted in ``n_unreadable``, not cached)."""
        key = "layout:" + self._key(path)
        with self._lock:
            hit = self._cache.get(key)
            if isinstance(hit, dict):
                return hit
            got = self._ocr_image(path)
            if got is None:
                self.n_unreadable += 1
                return {"w": 0, "h": 0, "lines": []}
            w, h, result = got
            lines = lines_from_ocr(result)
            hit = {"w": w, "h": h, "lines": [[ln.text, ln.x0, ln.y0, ln.x1, ln.y1] for ln in lines]}
            self._cache[key] = hit
            self.n_read += 1
            return hit

    def layout(self, shot: Screenshot) -> ScreenLayout | None:
        """The positioned OCR lines of a screenshot's image, ``None`` in ``db`` mode, when the
        image is not here, or when it cannot be read."""
        if self.mode == "db" or shot.path is None or not Path(shot.path).is_file():
            return None
        d = self._read(Path(shot.path))
        if not d["w"]:
            return None
        return ScreenLayout(int(d["w"]), int(d["h"]), tuple(lines_from_ocr(d["lines"])))

    def text(self, shot: Screenshot) -> str:
        """The OCR text of one screenshot (possibly empty)."""
        if self.mode != "image" and (shot.ocr_text.strip() or self.mode == "db"):
            return shot.ocr_text
        if shot.path is None or not Path(shot.path).is_file():
            return shot.ocr_text
        key = self._key(Path(shot.path))
        with self._lock:
            if isinstance(self._cache.get(key), str):  # a text-only entry of an older cache
                return self._cache[key]
        return "\n".join(row[0] for row in self._read(Path(shot.path))["lines"])

    def texts(self, shots: Sequence[Screenshot], chars: int = OCR_CHARS) -> list[str]:
        """The first ``chars`` characters of each screenshot's OCR text."""
        return [" ".join(self.text(s).split())[:chars] for s in shots]

    def save(self) -> None:
        """Write the cache (atomically) when there is one."""
        if self.cache_path is not None and self._cache:
            write_json_atomic(self.cache_path, self._cache, indent=None, mode=0o600)  # raw screen text: private
