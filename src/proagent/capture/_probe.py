"""Screen and foreground-window probes behind one small interface.

* :class:`ScreenSource` implementations: :class:`ScreenGrabber`, every monitor with ``mss``
  (``screen_id`` 0, 1, ... in ``mss``'s monitor order, the virtual all-monitors screen left out);
  on Wayland :class:`~._wayland.GrimGrabber` (wlroots) and :class:`~._wayland.PortalGrabber`
  (xdg-desktop-portal), see :mod:`._wayland`.
* :class:`WindowProbe` implementations: :class:`X11Probe` (python-xlib: EWMH
  ``_NET_ACTIVE_WINDOW`` of the root window, which needs a window manager; without one the X
  input focus, walked up to the nearest window with a name; process name from ``_NET_WM_PID``
  via psutil, else ``WM_CLASS``; input idle time from the MIT-SCREEN-SAVER extension),
  :class:`WindowsProbe` (ctypes: ``GetForegroundWindow``, ``GetWindowTextW``,
  ``GetWindowThreadProcessId``, psutil; ``GetLastInputInfo``) and :class:`MacProbe` (pyobjc:
  NSWorkspace frontmost application, Quartz ``CGWindowListCopyWindowInfo`` for the title).
  Only the X11 probe is tested (Xvfb + openbox); the Windows and macOS probes are written to
  their documented APIs and untested here.

:class:`CapturePlatform`: a platform is one class handing out its probe and its screen source,
registered with :func:`register_platform` (:class:`X11Platform`, :class:`WindowsPlatform`,
:class:`MacPlatform`; ``SwayPlatform``, ``HyprlandPlatform`` and ``PortalPlatform`` in
:mod:`._wayland`); :func:`session_platform` picks this session's, and
:func:`open_window_probe` and :func:`open_screen_source` use it, or raise :class:`CaptureError`
with one line (no display, missing optional dependency).

The interface (:class:`CaptureError`, :class:`WindowInfo`, the protocols, :func:`register_platform`)
lives in :mod:`._platform` and the X11 probe in :mod:`._x11`, re-exported here; :mod:`._wayland`
imports those two, not this module (no import cycle).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from ._platform import (
    _PLATFORMS,
    UNKNOWN_WINDOW,
    CaptureError,
    CapturePlatform,
    ScreenSource,
    WindowInfo,
    WindowProbe,
    _process_name,
    register_platform,
)
from ._x11 import X11Probe, x11_fullscreen

__all__ = [
    "CaptureError",
    "CapturePlatform",
    "ScreenGrabber",
    "ScreenSource",
    "WindowInfo",
    "WindowProbe",
    "check_session",
    "open_screen_source",
    "open_window_probe",
    "platforms",
    "register_platform",
    "session_platform",
    "x11_fullscreen",
]


class WindowsProbe:  # pragma: no cover - untested: no Windows here
    """Foreground window on Windows through ctypes (user32, kernel32) and psutil."""

    def __init__(self) -> None:
        import ctypes
        from ctypes import wintypes

        self._c, self._w = ctypes, wintypes
        self._user32 = ctypes.windll.user32
        self._kernel32 = ctypes.windll.kernel32

    def foreground(self) -> WindowInfo:
        """See :meth:`WindowProbe.foreground`."""
        hwnd = self._user32.GetForegroundWindow()
        if not hwnd:
            return UNKNOWN_WINDOW
        n = self._user32.GetWindowTextLengthW(hwnd)
        buf = self._c.create_unicode_buffer(n + 1)
        self._user32.GetWindowTextW(hwnd, buf, n + 1)
        pid = self._w.DWORD()
        self._user32.GetWindowThreadProcessId(hwnd, self._c.byref(pid))
        return WindowInfo(_process_name(pid.value) or "unknown", buf.value, pid.value or None)

    def idle_seconds(self) -> float | None:
        """See :meth:`WindowProbe.idle_seconds` (``GetLastInputInfo``)."""

        class LASTINPUTINFO(self._c.Structure):
            _fields_ = [("cbSize", self._w.UINT), ("dwTime", self._w.DWORD)]

        info = LASTINPUTINFO()
        info.cbSize = self._c.sizeof(info)
        if not self._user32.GetLastInputInfo(self._c.byref(info)):
            return None
        return max(0, self._kernel32.GetTickCount() - info.dwTime) / 1000.0

    def close(self) -> None:
        """See :meth:`WindowProbe.close`."""


class MacProbe:  # pragma: no cover - untested: no macOS here
    """Frontmost application (NSWorkspace) and its front window title (Quartz) through pyobjc."""

    def __init__(self) -> None:
        try:
            import AppKit
            import Quartz
        except ImportError:
            raise CaptureError("macOS capture needs pyobjc: pip install 'proagent[capture,capture-macos]'") from None
        self._appkit, self._quartz = AppKit, Quartz

    def foreground(self) -> WindowInfo:
        """See :meth:`WindowProbe.foreground`."""
        app = self._appkit.NSWorkspace.sharedWorkspace().frontmostApplication()
        if app is None:
            return UNKNOWN_WINDOW
        pid = int(app.processIdentifier())
        q = self._quartz
        title = ""
        for w in (
            q.CGWindowListCopyWindowInfo(
                q.kCGWindowListOptionOnScreenOnly | q.kCGWindowListExcludeDesktopElements, q.kCGNullWindowID
            )
            or []
        ):
            if int(w.get("kCGWindowOwnerPID", -1)) == pid and int(w.get("kCGWindowLayer", 1)) == 0:
                title = str(w.get("kCGWindowName") or "")
                break
        return WindowInfo(str(app.localizedName() or "unknown"), title, pid)

    def idle_seconds(self) -> float | None:
        """See :meth:`WindowProbe.idle_seconds` (``CGEventSourceSecondsSinceLastEventType``)."""
        q = self._quartz
        return float(
            q.CGEventSourceSecondsSinceLastEventType(q.kCGEventSourceStateHIDSystemState, q.kCGAnyInputEventType)
        )

    def close(self) -> None:
        """See :meth:`WindowProbe.close`."""


@register_platform
class X11Platform:
    """Linux/BSD X11: :class:`X11Probe` and ``mss`` (also the fallback that says what is missing)."""

    name = "x11"
    fallback = True

    def detected(self) -> bool:
        return sys.platform not in ("win32", "darwin")

    def window_probe(self) -> WindowProbe:
        _check_x11_session()
        return X11Probe()

    def screen_source(self) -> ScreenSource:
        return ScreenGrabber()


@register_platform
class WindowsPlatform:  # pragma: no cover - untested: no Windows here
    """Windows: :class:`WindowsProbe` and ``mss``."""

    name = "windows"

    def detected(self) -> bool:
        return sys.platform == "win32"

    def window_probe(self) -> WindowProbe:
        return WindowsProbe()

    def screen_source(self) -> ScreenSource:
        return ScreenGrabber()


@register_platform
class MacPlatform:  # pragma: no cover - untested: no macOS here
    """macOS: :class:`MacProbe` and ``mss``."""

    name = "macos"

    def detected(self) -> bool:
        return sys.platform == "darwin"

    def window_probe(self) -> WindowProbe:
        return MacProbe()

    def screen_source(self) -> ScreenSource:
        return ScreenGrabber()


def platforms() -> tuple[CapturePlatform, ...]:
    """Every registered platform, most specific first (the first detected one is used; the
    fallback X11 comes last): Windows, macOS, then sway, Hyprland and the portal
    (:mod:`._wayland`), then X11."""
    from . import _wayland  # noqa: F401  (registers the Wayland platforms)

    return tuple(cls() for cls in sorted(_PLATFORMS.values(), key=lambda c: bool(getattr(c, "fallback", False))))


def session_platform() -> CapturePlatform:
    """The platform of this session (see :func:`platforms`)."""
    return next(p for p in platforms() if p.detected())


def open_window_probe() -> WindowProbe:
    """The window probe for this session: X11, sway (:class:`~._wayland.SwayProbe`), another
    Wayland desktop through the portal (:class:`~._wayland.PortalProbe`), Windows or macOS.

    Raises:
        CaptureError: no X display on Linux/BSD, a Wayland session with neither sway nor a portal,
            or a missing optional dependency (the message says which).
    """
    return session_platform().window_probe()


def open_screen_source() -> ScreenSource:
    """The screen source for this session: ``grim`` on sway, the desktop portal on another
    Wayland desktop, else ``mss`` (X11, Windows, macOS).

    Raises:
        CaptureError: as :func:`open_window_probe`; ``grim`` or jeepney missing.
    """
    return session_platform().screen_source()


def check_session(option: str | None = None) -> None:
    """Refuse, before anything is created, a session capture cannot record: the same checks as
    :func:`open_window_probe` (and, on X11 and sway, asking the display once).

    ``option`` is the command-line option that asked for the capture (live's ``--capture``);
    the refusal names it.

    Raises:
        CaptureError: as :func:`open_window_probe` (with ``option``).
    """
    try:
        open_window_probe().close()
    except CaptureError as e:
        if option is None:
            raise
        raise CaptureError(e.problem, e.path, option=option) from None


def _check_x11_session() -> None:
    if not os.environ.get("DISPLAY"):
        if os.environ.get("WAYLAND_DISPLAY") or os.environ.get("XDG_SESSION_TYPE") == "wayland":
            raise CaptureError(
                "Wayland session without X11: proagent capture reads screens and the foreground "
                "window through X11 only; log in to an X11 session (Wayland is not supported)"
            )
        raise CaptureError(
            "no X display (DISPLAY is not set): proagent capture needs an X11 session "
            "(on a server: Xvfb :1 & DISPLAY=:1 proagent capture ...)"
        )
    if os.environ.get("XDG_SESSION_TYPE") == "wayland":
        raise CaptureError(
            "Wayland session: X11 (XWayland) shows neither the foreground window nor the screen of "
            "native Wayland apps; log in to an X11 session (Wayland is not supported)"
        )


class ScreenGrabber:
    """Every monitor as a PIL RGB image, through ``mss``."""

    def __init__(self) -> None:
        try:
            import mss
        except ImportError:
            raise CaptureError("mss is not installed: pip install 'proagent[capture]'") from None
        try:
            self._sct = mss.MSS()
        except Exception as e:  # noqa: BLE001 - ScreenShotError and friends
            raise CaptureError(f"cannot read the screen: {e}") from None
        self._monitors: list[dict[str, int]] = []

    def grab(self) -> list[tuple[int, Any]]:
        """``[(screen_id, PIL.Image RGB), ...]`` for each monitor, in ``mss`` order."""
        from PIL import Image

        out = []
        self._monitors = self._sct.monitors[1:]
        for i, mon in enumerate(self._monitors):
            shot = self._sct.grab(mon)
            # shot.raw, not shot.bgra: bgra is a bytes copy of the 8 MB buffer (10% of the loop's CPU at 1080p)
            out.append((i, Image.frombytes("RGB", shot.size, shot.raw, "raw", "BGRX")))
        return out

    def focused_screen(self, window: WindowInfo | None = None) -> int | None:
        """The monitor (of the last :meth:`grab`) that shows most of ``window.bounds``; with one
        monitor, 0; ``None`` when the window's rectangle is unknown or on no monitor."""
        mons = self._monitors
        if len(mons) == 1:
            return 0
        if window is None or window.bounds is None or not mons:
            return None
        x, y, w, h = window.bounds

        def overlap(m: dict[str, int]) -> int:
            dx = min(x + w, m["left"] + m["width"]) - max(x, m["left"])
            dy = min(y + h, m["top"] + m["height"]) - max(y, m["top"])
            return max(dx, 0) * max(dy, 0)

        areas = [overlap(m) for m in mons]
        best = max(range(len(mons)), key=areas.__getitem__)
        return best if areas[best] > 0 else None

    def screen_rect(self, screen_id: int) -> tuple[int, int, int, int] | None:
        """``(x, y, width, height)`` of monitor ``screen_id`` on the desktop at the last :meth:`grab`
        (``None``: no such monitor)."""
        if not 0 <= screen_id < len(self._monitors):
            return None
        m = self._monitors[screen_id]
        return (int(m["left"]), int(m["top"]), int(m["width"]), int(m["height"]))

    def close(self) -> None:
        """Release the display connection."""
        self._sct.close()
