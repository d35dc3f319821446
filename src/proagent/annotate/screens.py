"""What the annotator sees of an event: the first 3 and last 3 screenshots and
the first 500 characters of the OCR text of each (ProAgentBench Appendix B.5).

The OCR text is the database's ``ocr_results`` rows when the screenshot has
them; otherwise the image file is read with RapidOCR (``pip install
'proagent[ocr]'``, PP-OCRv6 models shipped in the wheel, so nothing is
downloaded). Texts read from images are kept in a JSON cache (file name +
size + mtime -> text) so a resumed run does not read them again.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..io import write_json_atomic
from ..ocr import load_ocr
from ..records import Event, Screenshot

__all__ = ["FIRST_LAST", "OCR_CHARS", "OcrReader", "sample_screenshots"]

FIRST_LAST = 3
"""Screenshots taken from each end of an event (paper: first 3 and last 3)."""
OCR_CHARS = 500
"""OCR characters kept per screenshot (paper: first 500)."""


def sample_screenshots(event: Event, k: int = FIRST_LAST) -> tuple[Screenshot, ...]:
    """The first ``k`` and last ``k`` screenshots of ``event`` (all of them when it has
    at most ``2k``), oldest first."""
    shots = event.screenshots
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
        ValueError: unknown mode.
    """

    def __init__(self, mode: str = "auto", cache: str | Path | None = None) -> None:
        if mode not in ("auto", "db", "image"):
            raise ValueError(f"OCR mode {mode!r}: choose auto, db or image")
        self.mode = mode
        self.cache_path = Path(cache) if cache else None
        self._cache: dict[str, str] = {}
        if self.cache_path and self.cache_path.is_file():
            try:
                self._cache = {str(k): str(v) for k, v in json.loads(self.cache_path.read_text("utf-8")).items()}
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

    def _ocr(self, path: Path) -> str:
        if self._engine is None:
            try:
                self._engine = load_ocr()
            except ImportError as e:
                raise RuntimeError("reading screenshots needs RapidOCR: pip install 'proagent[ocr]' "
                                   "(or --ocr db to use only the database's OCR rows)") from e
        try:
            from ..vault import is_encrypted_file, open_image

            if is_encrypted_file(path):  # a screenshot of an encrypted capture: decrypted in memory
                import numpy as np

                with open_image(path) as im:
                    result = self._engine(np.asarray(im.convert("RGB")))
            else:
                result = self._engine(str(path))
        except DataError:
            raise
        except Exception:  # noqa: BLE001 - PIL / OpenCV / RapidOCR raise many kinds on a bad image
            # a 0-byte, truncated or corrupt file (a fresh capture's file still being written,
            # a damaged copy): it shows no text, like a screenshot whose OCR found none
            self.n_unreadable += 1
            return ""
        return "\n".join(t for t in (result.txts or ()) if t and t.strip())

    def text(self, shot: Screenshot) -> str:
        """The OCR text of one screenshot (possibly empty)."""
        if self.mode != "image" and (shot.ocr_text.strip() or self.mode == "db"):
            return shot.ocr_text
        if shot.path is None or not Path(shot.path).is_file():
            return shot.ocr_text
        key = self._key(Path(shot.path))
        with self._lock:
            if key not in self._cache:
                self._cache[key] = self._ocr(Path(shot.path))
                self.n_read += 1
            return self._cache[key]

    def texts(self, shots: Sequence[Screenshot], chars: int = OCR_CHARS) -> list[str]:
        """The first ``chars`` characters of each screenshot's OCR text."""
        return [" ".join(self.text(s).split())[:chars] for s in shots]

    def save(self) -> None:
        """Write the cache (atomically) when there is one."""
        if self.cache_path is not None and self._cache:
            write_json_atomic(self.cache_path, self._cache, indent=None, mode=0o600)  # raw screen text: private
