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
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import DataError

__all__ = ["CaptureError", "CapturePlatform", "ScreenGrabber", "ScreenSource", "WindowInfo", "WindowProbe", "check_session",
           "open_screen_source", "open_window_probe", "platforms", "register_platform", "session_platform",
           "x11_fullscreen"]


class CaptureError(DataError):
    """Capture cannot run here (unsupported session, missing dependency, bad folder); the message
    is one line saying why and what to do (``path``: the folder at fault, when one is)."""

    def __init__(self, problem: str, path: object = None, *, option: str | None = None) -> None:
        super().__init__(path, problem, option=option)


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


def _process_name(pid: int | None) -> str | None:
    if not pid:
        return None
    try:
        import psutil

        return psutil.Process(pid).name() or None
    except Exception:  # noqa: BLE001 - process gone or not ours: fall back to the window class
        return None


class X11Probe:
    """Foreground window on an X11 display through python-xlib (see the module docstring)."""

    def __init__(self, display: str | None = None) -> None:
        try:
            from Xlib import X, display as xdisplay, error
        except ImportError:
            raise CaptureError("python-xlib is not installed: pip install 'proagent[capture]'") from None
        try:
            self._d = xdisplay.Display(display)
        except Exception as e:  # noqa: BLE001 - Xlib raises several kinds
            raise CaptureError(f"cannot open X display {display or os.environ.get('DISPLAY')!r}: {e}") from None
        self._X, self._XError = X, error.XError
        self._root = self._d.screen().root
        atom = self._d.intern_atom
        self._active = atom("_NET_ACTIVE_WINDOW")
        self._net_name = atom("_NET_WM_NAME")
        self._utf8 = atom("UTF8_STRING")
        self._pid = atom("_NET_WM_PID")
        self._has_ss = self._d.has_extension("MIT-SCREEN-SAVER")

    def _prop(self, win: Any, atom: int, kind: int | None = None) -> Any:
        p = win.get_full_property(atom, kind if kind is not None else self._X.AnyPropertyType)
        return p.value if p is not None else None

    def _window(self) -> Any:
        wid = self._prop(self._root, self._active)
        if wid is not None and len(wid) and int(wid[0]):
            return self._d.create_resource_object("window", int(wid[0]))
        # no EWMH window manager: the input focus, up to the first window with a name or class
        win = self._d.get_input_focus().focus
        if isinstance(win, int):  # X.NONE / PointerRoot
            return None
        while win is not None and win.id != self._root.id:
            if win.get_wm_name() or win.get_wm_class():
                return win
            win = win.query_tree().parent
        return None

    def foreground(self) -> WindowInfo:
        """See :meth:`WindowProbe.foreground`."""
        try:
            win = self._window()
            if win is None:
                return UNKNOWN_WINDOW
            raw = self._prop(win, self._net_name, self._utf8)
            if raw is not None:
                title = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
            else:
                name = win.get_wm_name()
                title = name.decode("latin-1") if isinstance(name, bytes) else (name or "")
            pid_v = self._prop(win, self._pid)
            pid = int(pid_v[0]) if pid_v is not None and len(pid_v) else None
            cls = win.get_wm_class()
            app = _process_name(pid) or (cls[1] if cls else None) or "unknown"
            return WindowInfo(app, title, pid, self._bounds(win))
        except self._XError:
            return UNKNOWN_WINDOW  # the window closed while we read it

    def _bounds(self, win: Any) -> tuple[int, int, int, int] | None:
        """The window's rectangle in root-window coordinates (its origin translated to the root)."""
        try:
            g = win.get_geometry()
            origin = self._root.translate_coords(win, 0, 0)
            return (int(origin.x), int(origin.y), int(g.width), int(g.height))
        except self._XError:
            return None

    def fullscreen(self) -> bool:
        """Whether the foreground window (the one :meth:`foreground` reads) is full-screen: EWMH
        ``_NET_WM_STATE_FULLSCREEN`` in its ``_NET_WM_STATE``; ``False`` when no window has the focus."""
        try:
            win = self._window()
            state = self._prop(win, self._d.intern_atom("_NET_WM_STATE")) if win is not None else None
            return state is not None and self._d.intern_atom("_NET_WM_STATE_FULLSCREEN") in list(state)
        except self._XError:
            return False  # the window closed while we read it

    def idle_seconds(self) -> float | None:
        """See :meth:`WindowProbe.idle_seconds` (MIT-SCREEN-SAVER ``idle``)."""
        if not self._has_ss:
            return None
        try:
            return self._root.screensaver_query_info().idle / 1000.0
        except Exception:  # noqa: BLE001
            return None

    def close(self) -> None:
        """See :meth:`WindowProbe.close`."""
        self._d.close()


def x11_fullscreen() -> bool | None:
    """Whether the foreground window of the X display ``$DISPLAY`` is full-screen
    (:meth:`X11Probe.fullscreen`, the same foreground read as capture's); ``None`` when there
    is no X display or python-xlib is missing. Used by live's restraint (no offer over a
    full-screen video or slide show)."""
    if not os.environ.get("DISPLAY"):
        return None
    try:
        probe = X11Probe()
    except CaptureError:
        return None
    try:
        return probe.fullscreen()
    finally:
        probe.close()


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
        for w in q.CGWindowListCopyWindowInfo(q.kCGWindowListOptionOnScreenOnly | q.kCGWindowListExcludeDesktopElements,
                                              q.kCGNullWindowID) or []:
            if int(w.get("kCGWindowOwnerPID", -1)) == pid and int(w.get("kCGWindowLayer", 1)) == 0:
                title = str(w.get("kCGWindowName") or "")
                break
        return WindowInfo(str(app.localizedName() or "unknown"), title, pid)

    def idle_seconds(self) -> float | None:
        """See :meth:`WindowProbe.idle_seconds` (``CGEventSourceSecondsSinceLastEventType``)."""
        q = self._quartz
        return float(q.CGEventSourceSecondsSinceLastEventType(q.kCGEventSourceStateHIDSystemState,
                                                               q.kCGAnyInputEventType))

    def close(self) -> None:
        """See :meth:`WindowProbe.close`."""


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


def register_platform(cls: type) -> type:
    """Register a :class:`CapturePlatform` class (a decorator). Platforms are tried in
    registration order, those with ``fallback = True`` (X11: it says what is missing) last.

    Raises:
        ValueError: its ``name`` is taken by another class.
    """
    if _PLATFORMS.get(cls.name, cls) is not cls:
        raise ValueError(f"capture platform {cls.name!r} is already registered")
    _PLATFORMS[cls.name] = cls
    return cls


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
            raise CaptureError("Wayland session without X11: proagent capture reads screens and the foreground "
                               "window through X11 only; log in to an X11 session (Wayland is not supported)")
        raise CaptureError("no X display (DISPLAY is not set): proagent capture needs an X11 session "
                           "(on a server: Xvfb :1 & DISPLAY=:1 proagent capture ...)")
    if os.environ.get("XDG_SESSION_TYPE") == "wayland":
        raise CaptureError("Wayland session: X11 (XWayland) shows neither the foreground window nor the screen of "
                           "native Wayland apps; log in to an X11 session (Wayland is not supported)")


class ScreenGrabber:
    """Every monitor as a PIL RGB image, through ``mss``."""

    def __init__(self) -> None:
        try:
            import mss
        except ImportError:
            raise CaptureError("mss is not installed: pip install 'proagent[capture]'") from None
        try:
            self._sct = mss.mss()
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
            out.append((i, Image.frombytes("RGB", shot.size, shot.bgra, "raw", "BGRX")))
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

    def close(self) -> None:
        """Release the display connection."""
        self._sct.close()
