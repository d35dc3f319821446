"""Change detection for capture: is a new grab a duplicate of the last stored screenshot?

LifeTrace's rule alone (pHash Hamming distance <= 5 is a duplicate) hardly sees text: a 64-bit
DCT hash of a 32x32 thumbnail of the whole screen does not move when a terminal prints one more
line or a chat page gets one more reply, so most text changes were never stored nor OCRed
(issue 21: an xterm printing a line a second for 15 s stored 4 of 15 screens). A second, cheap
test sees them: the grey screen is compared with the last stored one pixel by pixel; the screens
differ when more than :data:`MIN_CHANGED_PIXELS` pixels differ by more than :data:`PIXEL_DELTA`
grey levels and those pixels span more than :data:`CARET_COLUMNS` columns. One changed digit of
13 px text changes about 30 such pixels over 5-7 columns; a blinking text caret (a 1-2 px wide
line) changes 10-20 pixels in 1-2 columns, so a focused input box is still a duplicate. On a
1920x1080 screen the test costs a few ms (numpy), less than the pHash (see
``benchmarks/desktop_day.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["CARET_COLUMNS", "MIN_CHANGED_PIXELS", "PIXEL_DELTA", "Frame", "changed_pixels", "frame", "is_duplicate"]

PIXEL_DELTA = 40
"""Grey levels (0-255) by which a pixel must differ to count as changed (anti-aliasing and
lossy-encoding noise stay below it)."""
MIN_CHANGED_PIXELS = 8
"""Changed pixels at or below which two screens are the same (one changed digit: about 30)."""
CARET_COLUMNS = 3
"""A change within at most this many pixel columns is a caret's blink, not new content."""


@dataclass(frozen=True)
class Frame:
    """What change detection keeps of one grabbed screen."""

    phash: Any
    """imagehash 64-bit perceptual hash (``a.phash - b.phash`` is the Hamming distance)."""
    grey: np.ndarray | None
    """Grey image (uint8, shape (h, w)); ``None`` when only the pHash is used."""


def frame(img: Any, *, text: bool = True) -> Frame:
    """The :class:`Frame` of a PIL image (``text=False``: the pHash only, LifeTrace's rule)."""
    import imagehash

    grey_img = img.convert("L")
    grey = np.asarray(grey_img, dtype=np.uint8) if text else None
    return Frame(imagehash.phash(grey_img), grey)  # the grey image: imagehash would convert it again


def changed_pixels(a: Frame, b: Frame) -> int:
    """Pixels that differ by more than :data:`PIXEL_DELTA`, counted as 0 when they all lie within
    :data:`CARET_COLUMNS` columns (a caret); every pixel when the screens differ in size; 0 when
    a frame has no grey image."""
    if a.grey is None or b.grey is None:
        return 0
    if a.grey.shape != b.grey.shape:
        return int(max(a.grey.size, b.grey.size))
    # |a - b| in uint8 as max - min (no int16 copies of two 1080p screens)
    mask = np.maximum(a.grey, b.grey) - np.minimum(a.grey, b.grey) > PIXEL_DELTA
    n = int(np.count_nonzero(mask))
    if n and int(np.count_nonzero(mask.any(axis=0))) <= CARET_COLUMNS:
        return 0
    return n


def is_duplicate(new: Frame, stored: Frame, dedup_distance: int) -> bool:
    """``True`` when ``new`` shows the same screen as ``stored``: pHash distance at most
    ``dedup_distance`` bits and (when both frames carry a grey image) at most
    :data:`MIN_CHANGED_PIXELS` changed pixels outside a caret."""
    if new.phash - stored.phash > dedup_distance:
        return False
    return changed_pixels(new, stored) <= MIN_CHANGED_PIXELS
