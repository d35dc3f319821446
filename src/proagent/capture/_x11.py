"""The X11 foreground-window probe (python-xlib), apart from :mod:`._probe` so that
:mod:`._wayland` (XWayland's windows) uses it without importing the platform list."""

from __future__ import annotations

import os
from typing import Any

from ._platform import UNKNOWN_WINDOW, CaptureError, DisplayGone, WindowInfo, _process_name

__all__ = ["X11Probe", "x11_fullscreen"]


class X11Probe:
    """Foreground window on an X11 display through python-xlib (see the module docstring)."""

    def __init__(self, display: str | None = None) -> None:
        try:
            from Xlib import X, error
            from Xlib import display as xdisplay
        except ImportError:
            raise CaptureError("python-xlib is not installed: pip install 'proagent[capture]'") from None
        try:
            self._d = xdisplay.Display(display)
        except Exception as e:  # noqa: BLE001 - Xlib raises several kinds
            raise CaptureError(f"cannot open X display {display or os.environ.get('DISPLAY')!r}: {e}") from None
        self._X, self._XError = X, error.XError
        self._gone = (error.ConnectionClosedError, error.DisplayError, OSError)
        self._name = str(display or os.environ.get("DISPLAY") or "")
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
        """See :meth:`~._platform.WindowProbe.foreground`."""
        try:
            win = self._window()
            if win is None:
                return UNKNOWN_WINDOW
            return self._info(win, self._bounds(win))
        except self._XError:
            return UNKNOWN_WINDOW  # the window closed while we read it
        except self._gone as e:  # the X server stopped: the recording ends here
            raise DisplayGone(self._name, str(e).strip().splitlines()[0][:120] or e.__class__.__name__) from None

    def visible_windows(self) -> list[WindowInfo]:
        """The windows shown now, bottom of the stacking order first, each with its ``bounds``
        including its window-manager frame (``_NET_FRAME_EXTENTS``: the title bar shows the title):
        EWMH ``_NET_CLIENT_LIST_STACKING`` where a window manager keeps it, else the root window's
        children (X's own stacking order). Unmapped and minimised (``_NET_WM_STATE_HIDDEN``) windows
        are left out; a window that closes while it is read is skipped. Used to mask excluded
        windows (:func:`~._regions.mask_windows`).

        Raises:
            DisplayGone: the X server stopped (as :meth:`foreground`).
        """
        try:
            return self._visible_windows()
        except self._gone as e:  # the X server stopped: the recording ends here
            raise DisplayGone(self._name, str(e).strip().splitlines()[0][:120] or e.__class__.__name__) from None

    def _visible_windows(self) -> list[WindowInfo]:
        try:
            ids = self._prop(self._root, self._d.get_atom("_NET_CLIENT_LIST_STACKING"))
            if ids is not None and len(ids):
                wins = [self._d.create_resource_object("window", int(w)) for w in ids]
            else:
                wins = list(self._root.query_tree().children)
        except self._XError:
            return []
        hidden = self._d.get_atom("_NET_WM_STATE_HIDDEN")
        state_atom = self._d.get_atom("_NET_WM_STATE")
        extents_atom = self._d.get_atom("_NET_FRAME_EXTENTS")
        out = []
        for win in wins:
            try:
                if win.get_attributes().map_state != self._X.IsViewable:
                    continue
                state = self._prop(win, state_atom)
                if state is not None and hidden in list(state):
                    continue
                b = self._bounds(win)
                if b is None:
                    continue
                ext = self._prop(win, extents_atom)
                if ext is not None and len(ext) == 4:
                    left, right, top, bottom = (int(v) for v in ext)
                    b = (b[0] - left, b[1] - top, b[2] + left + right, b[3] + top + bottom)
                out.append(self._info(win, b))
            except self._XError:
                continue
        return out

    def _info(self, win: Any, bounds: tuple[int, int, int, int] | None) -> WindowInfo:
        """The :class:`WindowInfo` of ``win`` (raises the X error of a window that closed)."""
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
        return WindowInfo(app, title, pid, bounds, int(win.id))

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
            state = self._prop(win, self._d.get_atom("_NET_WM_STATE")) if win is not None else None
            return state is not None and self._d.get_atom("_NET_WM_STATE_FULLSCREEN") in list(state)
        except self._XError:
            return False  # the window closed while we read it

    def idle_seconds(self) -> float | None:
        """See :meth:`~._platform.WindowProbe.idle_seconds` (MIT-SCREEN-SAVER ``idle``)."""
        if not self._has_ss:
            return None
        try:
            return self._root.screensaver_query_info().idle / 1000.0
        except Exception:  # noqa: BLE001
            return None

    def close(self) -> None:
        """See :meth:`~._platform.WindowProbe.close` (a display already gone closes quietly)."""
        try:
            self._d.close()
        except Exception:  # noqa: BLE001 - Xlib raises its own kinds on a dead connection
            pass


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
