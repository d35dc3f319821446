"""Window rectangles on a grabbed screen: the focused window's region (what the OCR worker reads)
and the masking of excluded windows that show behind or beside the focused one.

Coordinates: a window's ``bounds`` are ``(x, y, width, height)`` in pixels of the whole desktop
(all monitors, as X11's root window and sway's tree give them); a screen's rectangle is its place
on that desktop (``mss``'s monitor, sway's output ``rect``). The screenshot of a screen may be
larger than its rectangle (a scaled Wayland output): desktop pixels are then scaled by
``image width / rectangle width`` (and the same for heights).

Masking (issue 46: a block rule applies to screen regions, not only to events): over the windows
of a screen from the bottom of the stacking order to the top, a pixel belongs to the topmost window
covering it; the pixels whose topmost window is excluded are filled with :data:`MASK_FILL` before
the screenshot is stored, so that no OCR, search or model ever sees them. Where the platform does
not list the visible windows (the desktop portal, Windows, macOS), nothing is masked: see
``docs/guides/privacy.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ._platform import WindowInfo

__all__ = ["MASK_FILL", "Rect", "mask_windows", "parse_region", "window_region"]

Rect = tuple[int, int, int, int]
"""``(x, y, width, height)`` in pixels."""

MASK_FILL = (0, 0, 0)
"""RGB of the pixels of an excluded window (one colour: the OCR worker skips such bands unread)."""

MIN_REGION = 16
"""Pixels a focused region must have on each side to be read alone; a smaller one (a window
minimised to a strip, a tooltip taking the focus) leaves the whole screen to read."""


def _scaled(bounds: Rect, screen: Rect, size: tuple[int, int]) -> Rect | None:
    """``bounds`` (desktop pixels) clipped to ``screen`` and mapped to the pixels of a screenshot of
    ``size``; ``None`` when they do not meet."""
    x, y, w, h = bounds
    sx, sy, sw, sh = screen
    if sw <= 0 or sh <= 0:
        return None
    fx, fy = size[0] / sw, size[1] / sh
    x0, y0 = max(x, sx), max(y, sy)
    x1, y1 = min(x + w, sx + sw), min(y + h, sy + sh)
    if x1 <= x0 or y1 <= y0:
        return None
    ix0, iy0 = round((x0 - sx) * fx), round((y0 - sy) * fy)
    ix1, iy1 = min(size[0], round((x1 - sx) * fx)), min(size[1], round((y1 - sy) * fy))
    return (ix0, iy0, ix1 - ix0, iy1 - iy0) if ix1 > ix0 and iy1 > iy0 else None


def window_region(window: WindowInfo | None, screen: Rect | None, size: tuple[int, int]) -> Rect | None:
    """The part of ``window`` on the screen ``screen`` (its rectangle on the desktop), in pixels of
    that screen's screenshot of ``size`` ``(width, height)``; ``None`` (read the whole screen) when
    the window's or the screen's rectangle is unknown, the window is not on that screen, or the part
    is under :data:`MIN_REGION` pixels on a side."""
    if window is None or window.bounds is None or screen is None:
        return None
    r = _scaled(window.bounds, screen, size)
    if r is None or r[2] < MIN_REGION or r[3] < MIN_REGION:
        return None
    return r


def parse_region(value: object) -> Rect | None:
    """The ``(x, y, width, height)`` of a stored ``screenshots.ocr_region`` (``"x,y,w,h"``); ``None``
    for NULL or a value that is not four non-negative integers with a positive size."""
    if not isinstance(value, str):
        return None
    parts = value.split(",")
    if len(parts) != 4 or not all(p.strip().isdigit() for p in parts):
        return None
    x, y, w, h = (int(p) for p in parts)
    return (x, y, w, h) if w > 0 and h > 0 else None


def mask_windows(
    img: Any, windows: Sequence[WindowInfo], excluded: Callable[[WindowInfo], bool], screen: Rect | None
) -> tuple[Any, int]:
    """``img`` (a PIL RGB screenshot of the screen at ``screen`` on the desktop) with the visible
    pixels of every excluded window filled with :data:`MASK_FILL`, and how many pixels were filled.

    Args:
        img: the screenshot (not changed; a new image is returned when something is masked).
        windows: the visible windows, bottom of the stacking order first, with their ``bounds``
            (a window without bounds is skipped).
        excluded: whether a window must not be recorded (:meth:`~._exclude.Exclusions.excludes`).
        screen: the screen's rectangle on the desktop; ``None``: nothing is masked.

    Returns:
        ``(image, pixels masked)``; the image is ``img`` itself when no pixel is masked.
    """
    if screen is None or not windows:
        return img, 0
    import numpy as np

    size = (int(img.width), int(img.height))
    owner: Any = None  # per pixel: True where the topmost window so far is excluded
    for win in windows:
        if win.bounds is None:
            continue
        r = _scaled(win.bounds, screen, size)
        if r is None:
            continue
        block = excluded(win)
        if owner is None:
            if not block:
                continue  # nothing excluded below it yet
            owner = np.zeros((size[1], size[0]), dtype=bool)
        x, y, w, h = r
        owner[y : y + h, x : x + w] = block
    if owner is None:
        return img, 0
    n = int(np.count_nonzero(owner))
    if not n:
        return img, 0
    from PIL import Image

    arr = np.array(img.convert("RGB"))
    arr[owner] = MASK_FILL
    return Image.fromarray(arr), n
