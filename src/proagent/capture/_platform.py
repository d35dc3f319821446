"""The capture platform interface, apart from the probes (so :mod:`._wayland` and
:mod:`._probe` both build on it without importing each other): :class:`CaptureError`,
:class:`WindowInfo`, the :class:`WindowProbe`, :class:`ScreenSource` and
:class:`CapturePlatform` protocols, and the platform registry (:func:`register_platform`;
:func:`._probe.platforms` reads it once every platform module is imported).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from ..errors import DataError, RunError

__all__ = [
    "UNKNOWN_WINDOW",
    "CaptureError",
    "CapturePlatform",
    "DisplayGone",
    "ScreenSource",
    "WindowInfo",
    "WindowProbe",
    "register_platform",
]


class CaptureError(DataError):
    """Capture cannot run here (unsupported session, missing dependency, bad folder); the message
    is one line saying why and what to do (``path``: the folder at fault, when one is)."""

    def __init__(self, problem: str, path: object = None, *, option: str | None = None) -> None:
        super().__init__(path, problem, option=option)


class DisplayGone(RunError):
    """The display being recorded went away while capture ran (its X server stopped, the session
    ended): capture stops as at a stop request, keeping what it recorded, and says so in one line."""

    def __init__(self, display: str, why: str) -> None:
        super().__init__(f"the display {display} went away ({why})")


@dataclass(frozen=True)
class WindowInfo:
    """The foreground window at one moment."""

    app_name: str
    """Application: the process name (``xterm``, ``chrome.exe``, ``Safari``), else the window class."""
    window_title: str
    """Window title as the window manager shows it (may be empty)."""
    pid: int | None = None
    """Process id owning the window, when the platform tells it."""
    bounds: tuple[int, int, int, int] | None = field(default=None, compare=False)
    """``(x, y, width, height)`` of the window in pixels of the whole desktop (all monitors), when
    the platform tells it (X11); it picks the focused screen (:meth:`ScreenGrabber.focused_screen`).
    Not compared: moving a window is not another window."""
    window_id: int | None = field(default=None, compare=False)
    """The window's id (X11 window, sway container), when the platform tells it: two windows of one
    editor or terminal are two events (:func:`proagent.pages.in_app_key`). Not compared (the
    title, app and pid say what the window shows)."""


UNKNOWN_WINDOW = WindowInfo("unknown", "")
"""What a probe returns when no window has the focus (or it vanished while being read)."""


class WindowProbe(Protocol):
    """Reads the foreground window and the input idle time."""

    def foreground(self) -> WindowInfo:
        """The foreground window now (:data:`UNKNOWN_WINDOW` when there is none)."""
        ...

    def idle_seconds(self) -> float | None:
        """Seconds since the last keyboard or mouse input, ``None`` when not available."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...


class ScreenSource(Protocol):
    """Captures every screen of the session."""

    def grab(self) -> list[tuple[int, Any]]:
        """``[(screen_id, PIL.Image RGB), ...]``, one per screen."""
        ...

    def focused_screen(self, window: WindowInfo | None = None) -> int | None:
        """``screen_id`` of the screen holding the focused ``window`` at the last :meth:`grab`
        (from the compositor, or from ``window.bounds``), ``None`` when it cannot tell."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...


class CapturePlatform(Protocol):
    """One kind of session capture can record: a platform is one class (X11, Windows, macOS here;
    sway and the desktop portal in :mod:`._wayland`), picked by :func:`session_platform`."""

    name: str
    """Short name (``x11``, ``sway``, ...)."""

    def detected(self) -> bool:
        """True when this session is of this kind."""
        ...

    def window_probe(self) -> WindowProbe:
        """The foreground-window probe (raises :class:`CaptureError` when it cannot run here)."""
        ...

    def screen_source(self) -> ScreenSource:
        """The screen source (raises :class:`CaptureError` when it cannot run here)."""
        ...


_PLATFORMS: dict[str, type] = {}
"""The platform classes by name, in the order they are tried, filled by :func:`register_platform`."""


_Platform = TypeVar("_Platform", bound="type[CapturePlatform]")


def register_platform(cls: _Platform) -> _Platform:
    """Register a :class:`CapturePlatform` class (a decorator). Platforms are tried in
    registration order, those with ``fallback = True`` (X11: it says what is missing) last.

    Raises:
        ValueError: its ``name`` is taken by another class.
    """
    if _PLATFORMS.get(cls.name, cls) is not cls:
        raise ValueError(f"capture platform {cls.name!r} is already registered")
    _PLATFORMS[cls.name] = cls
    return cls


def _process_name(pid: int | None) -> str | None:
    if not pid:
        return None
    try:
        import psutil

        return psutil.Process(pid).name() or None
    except Exception:  # noqa: BLE001 - process gone or not ours: fall back to the window class
        return None
