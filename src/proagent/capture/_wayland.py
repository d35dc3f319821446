"""Wayland capture: wlroots compositors (sway) and GNOME / KDE through xdg-desktop-portal.

Each platform is one :class:`~._platform.CapturePlatform` class (:class:`SwayPlatform`,
:class:`PortalPlatform`) handing out one class per job, behind the same two interfaces as X11
(:class:`~._platform.WindowProbe` for the foreground window, :class:`~._platform.ScreenSource` for the
screens):

* **sway** (and other wlroots compositors for the screens): :class:`SwayProbe` reads the focused
  window from sway's IPC (``swaymsg -t get_tree``: ``app_id`` of a native Wayland window, the X11
  class of an XWayland one, its ``name`` as the title, ``pid``); :class:`GrimGrabber` captures each
  active output with ``grim -o NAME -`` (the wlr-screencopy protocol), ``screen_id`` 0, 1, ... in
  sway's output order, and tells which output holds the focus. Tested under a real headless sway
  (``WLR_BACKENDS=headless``) with ``foot`` windows.
* **Hyprland**: :class:`HyprlandProbe` (``hyprctl -j activewindow``: ``class``, ``title``,
  ``pid``) and :class:`GrimGrabber` over ``hyprctl -j monitors``. Written to Hyprland's
  documented JSON and tested only against a stand-in ``hyprctl`` (no Hyprland package here).
* **GNOME, KDE** (and any desktop with xdg-desktop-portal): :class:`PortalGrabber` asks the
  portal's ``org.freedesktop.portal.Screenshot.Screenshot`` method over D-Bus (jeepney) and reads
  the file its ``Response`` signal names. The desktop asks the user for consent the first time
  (GNOME: "Allow <app> to take screenshots?", remembered in the permission store; KDE: a dialog
  each time unless allowed in System Settings > Applications > Permissions); a refusal is a
  :class:`~._platform.CaptureError`. The portal captures the whole desktop as one image
  (``screen_id`` 0). No portal tells a client the focused window, so :class:`PortalProbe` says
  ``unknown`` (one event per active stretch) unless an X11 display (XWayland) shows the focused
  X11 window. Tested only against a loopback D-Bus mock of the portal (a private ``dbus-daemon``
  with a jeepney service), not against a real GNOME or KDE session.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ._platform import UNKNOWN_WINDOW, CaptureError, WindowInfo, _process_name, register_platform

__all__ = [
    "GrimGrabber",
    "HyprlandPlatform",
    "HyprlandProbe",
    "PortalGrabber",
    "PortalPlatform",
    "PortalProbe",
    "SwayPlatform",
    "SwayProbe",
    "hyprland_outputs",
    "is_sway_session",
    "portal_available",
    "sway_outputs",
    "wayland_kind",
]

_TIMEOUT = 5.0
"""Seconds a compositor or portal call may take before capture gives up on it."""


def wayland_kind() -> str | None:
    """``sway``, ``hyprland``, ``portal`` or ``None`` (not a Wayland session): which Wayland platform
    this is. ``sway`` needs ``SWAYSOCK`` and ``swaymsg``; ``hyprland`` needs
    ``HYPRLAND_INSTANCE_SIGNATURE`` and ``hyprctl``; ``portal`` is any other Wayland session."""
    if not (os.environ.get("WAYLAND_DISPLAY") or os.environ.get("XDG_SESSION_TYPE") == "wayland"):
        return None
    if is_sway_session():
        return "sway"
    if os.environ.get("HYPRLAND_INSTANCE_SIGNATURE") and shutil.which("hyprctl") is not None:
        return "hyprland"
    return "portal"


def is_sway_session() -> bool:
    """True when sway's IPC socket is named (``SWAYSOCK``) and ``swaymsg`` is installed."""
    return bool(os.environ.get("SWAYSOCK")) and shutil.which("swaymsg") is not None


def _ipc_json(cmd: list[str]) -> Any:
    """The JSON a compositor's IPC tool prints (``swaymsg -t get_tree -r``, ``hyprctl -j activewindow``)."""
    what = " ".join(cmd)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CaptureError(f"{what} failed: {e}") from None
    if r.returncode != 0:
        raise CaptureError(f"{what} failed: {(r.stderr or r.stdout).strip()[:200]}")
    try:
        return json.loads(r.stdout or "null")
    except ValueError:
        raise CaptureError(f"{what} printed no JSON: {r.stdout.strip()[:200]}") from None


def _swaymsg(kind: str) -> Any:
    return _ipc_json(["swaymsg", "-t", kind, "-r"])


def _hyprctl(kind: str) -> Any:
    return _ipc_json(["hyprctl", "-j", kind])


def _focused(node: dict[str, Any]) -> dict[str, Any] | None:
    if node.get("focused") and node.get("type") in ("con", "floating_con"):
        return node
    for child in (node.get("nodes") or []) + (node.get("floating_nodes") or []):
        hit = _focused(child)
        if hit is not None:
            return hit
    return None


def _rect(r: Any) -> tuple[int, int, int, int] | None:
    """``(x, y, width, height)`` of a sway ``rect`` dict; ``None`` when it is not one."""
    try:
        return (int(r["x"]), int(r["y"]), int(r["width"]), int(r["height"]))
    except (KeyError, TypeError, ValueError):
        return None


def _views(node: dict[str, Any], out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The window nodes under ``node`` that sway shows (``visible``), tiled before floating (sway
    draws floating windows over the tiled ones)."""
    kids = node.get("nodes") or []
    floating = node.get("floating_nodes") or []
    if node.get("type") in ("con", "floating_con") and not kids and not floating:
        if node.get("visible") and (node.get("pid") or node.get("app_id") or node.get("window_properties")):
            out.append(node)
        return out
    for child in kids:
        _views(child, out)
    for child in floating:
        _views(child, out)
    return out


def _sway_window(node: dict[str, Any]) -> WindowInfo:
    pid = node.get("pid") or None
    props = node.get("window_properties") or {}
    app = node.get("app_id") or props.get("class") or _process_name(pid) or "unknown"
    wid = node.get("id")
    return WindowInfo(
        str(app), str(node.get("name") or ""), pid, _rect(node.get("rect")), wid if isinstance(wid, int) else None
    )


class SwayProbe:
    """Foreground window of a sway session from its IPC tree (see the module docstring)."""

    def __init__(self) -> None:
        if not is_sway_session():
            raise CaptureError("sway session not found: SWAYSOCK is not set or swaymsg is not installed")
        _swaymsg("get_version")  # the socket answers

    def foreground(self) -> WindowInfo:
        """See :meth:`~._platform.WindowProbe.foreground`."""
        node = _focused(_swaymsg("get_tree"))
        if node is None:  # an empty workspace has the focus
            return UNKNOWN_WINDOW
        return _sway_window(node)

    def visible_windows(self) -> list[WindowInfo]:
        """The windows sway shows now (``visible`` in its tree), tiled first, floating over them,
        each with its ``rect`` (title bar included) as ``bounds``; used to mask excluded windows."""
        return [_sway_window(n) for n in _views(_swaymsg("get_tree"), [])]

    def idle_seconds(self) -> float | None:
        """See :meth:`~._platform.WindowProbe.idle_seconds`: sway's IPC does not tell it (``None``)."""
        return None

    def close(self) -> None:
        """See :meth:`~._platform.WindowProbe.close`."""


def sway_outputs() -> list[dict[str, Any]]:
    """sway's active outputs, in its order (``name``, ``focused``, ...)."""
    return [o for o in _swaymsg("get_outputs") if o.get("active")]


def hyprland_outputs() -> list[dict[str, Any]]:
    """Hyprland's enabled monitors, in its order (``name``, ``focused``, ...)."""
    return [m for m in _hyprctl("monitors") or [] if not m.get("disabled")]


class HyprlandProbe:
    """Foreground window of a Hyprland session from ``hyprctl -j activewindow`` (``class``, ``title``,
    ``pid``; written to Hyprland's documented JSON, tested only against a stand-in ``hyprctl``)."""

    def __init__(self) -> None:
        if shutil.which("hyprctl") is None:
            raise CaptureError("hyprctl is not installed: it reads Hyprland's focused window")
        _hyprctl("version")

    def foreground(self) -> WindowInfo:
        """See :meth:`~._platform.WindowProbe.foreground`."""
        w = _hyprctl("activewindow")
        if not isinstance(w, dict) or not (w.get("class") or w.get("title")):  # no window has the focus: {}
            return UNKNOWN_WINDOW
        pid = w.get("pid") if isinstance(w.get("pid"), int) and w.get("pid", 0) > 0 else None
        return WindowInfo(str(w.get("class") or _process_name(pid) or "unknown"), str(w.get("title") or ""), pid)

    def idle_seconds(self) -> float | None:
        """See :meth:`~._platform.WindowProbe.idle_seconds`: not told by ``hyprctl`` (``None``)."""
        return None

    def close(self) -> None:
        """See :meth:`~._platform.WindowProbe.close`."""


class GrimGrabber:
    """Every active output of a wlroots compositor through ``grim``.

    Args:
        outputs: Lists the compositor's outputs (dicts with ``name`` and ``focused``):
            :func:`sway_outputs` (default) or :func:`hyprland_outputs`.
    """

    def __init__(self, outputs: Callable[[], list[dict[str, Any]]] | None = None) -> None:
        if shutil.which("grim") is None:
            raise CaptureError("grim is not installed (Debian: apt install grim): it captures wlroots screens")
        self._list = outputs or sway_outputs
        self._outputs: list[dict[str, Any]] = []

    def outputs(self) -> list[dict[str, Any]]:
        """The compositor's outputs now, in its order."""
        self._outputs = self._list()
        return self._outputs

    def grab(self) -> list[tuple[int, Any]]:
        """``[(screen_id, PIL.Image RGB), ...]``, one per active output."""
        from io import BytesIO

        from PIL import Image

        out = []
        for i, o in enumerate(self.outputs()):
            try:
                r = subprocess.run(
                    ["grim", "-o", str(o["name"]), "-"], capture_output=True, timeout=_TIMEOUT, check=False
                )
            except (OSError, subprocess.TimeoutExpired) as e:
                raise CaptureError(f"grim failed: {e}") from None
            if r.returncode != 0:
                raise CaptureError(f"grim -o {o['name']} failed: {r.stderr.decode('utf-8', 'replace').strip()[:200]}")
            out.append((i, Image.open(BytesIO(r.stdout)).convert("RGB")))
        return out

    def focused_screen(self, window: WindowInfo | None = None) -> int | None:
        """``screen_id`` of the output holding the focus at the last :meth:`grab`, else ``None``."""
        return next((i for i, o in enumerate(self._outputs) if o.get("focused")), None)

    def screen_rect(self, screen_id: int) -> tuple[int, int, int, int] | None:
        """``(x, y, width, height)`` of output ``screen_id`` on the desktop (its ``rect``) at the
        last :meth:`grab`; ``None`` when the compositor did not tell."""
        if not 0 <= screen_id < len(self._outputs):
            return None
        return _rect(self._outputs[screen_id].get("rect"))

    def close(self) -> None:
        """Nothing to release."""


PORTAL_NAME = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"


def portal_available(bus: str = "SESSION") -> bool:
    """True when the session bus has (or can start) ``org.freedesktop.portal.Desktop``; False also
    when jeepney is missing or the bus cannot be reached."""
    try:
        from jeepney.bus_messages import message_bus
        from jeepney.io.blocking import open_dbus_connection
    except ImportError:
        return False
    try:
        with open_dbus_connection(bus=bus) as conn:
            if conn.send_and_get_reply(message_bus.NameHasOwner(PORTAL_NAME), timeout=_TIMEOUT).body[0]:
                return True
            return PORTAL_NAME in conn.send_and_get_reply(message_bus.ListActivatableNames(), timeout=_TIMEOUT).body[0]
    except Exception:  # noqa: BLE001 - no bus, refused auth, timeout: no portal
        return False


class PortalGrabber:
    """The whole desktop through xdg-desktop-portal's Screenshot interface (see the module docstring).

    Args:
        bus: D-Bus address (default: the session bus, ``DBUS_SESSION_BUS_ADDRESS``).
        timeout: Seconds to wait for the portal's answer (the first call may wait for the user's consent).
    """

    def __init__(self, bus: str = "SESSION", timeout: float = 60.0) -> None:
        try:
            from jeepney.io.blocking import open_dbus_connection
        except ImportError:
            raise CaptureError(
                "Wayland capture through the desktop portal needs jeepney: pip install 'proagent[capture]'"
            ) from None
        try:
            self._conn = open_dbus_connection(bus=bus)
        except Exception as e:  # noqa: BLE001 - no bus, refused auth: one line
            raise CaptureError(f"cannot reach the D-Bus session bus for the desktop portal: {e}") from None
        self.timeout = float(timeout)

    def grab(self) -> list[tuple[int, Any]]:
        """``[(0, PIL.Image RGB)]``: one image of the whole desktop.

        Raises:
            CaptureError: the portal is missing, the user refused, or no answer came in time.
        """
        from jeepney import DBusAddress, MatchRule, new_method_call
        from jeepney.bus_messages import message_bus
        from PIL import Image

        token = "proagent" + secrets.token_hex(6)
        sender = self._conn.unique_name.lstrip(":").replace(".", "_")
        request = f"{PORTAL_PATH}/request/{sender}/{token}"
        rule = MatchRule(type="signal", interface="org.freedesktop.portal.Request", member="Response", path=request)
        self._conn.send_and_get_reply(message_bus.AddMatch(rule), timeout=_TIMEOUT)
        try:
            with self._conn.filter(rule) as queue:  # subscribed before asking: the answer cannot be missed
                call = new_method_call(
                    DBusAddress(PORTAL_PATH, bus_name=PORTAL_NAME, interface="org.freedesktop.portal.Screenshot"),
                    "Screenshot",
                    "sa{sv}",
                    ("", {"handle_token": ("s", token), "interactive": ("b", False)}),
                )
                reply = self._conn.send_and_get_reply(call, timeout=_TIMEOUT)
                if reply.header.message_type.name == "error":
                    raise CaptureError(
                        f"the desktop portal has no Screenshot interface ({reply.body[0] if reply.body else reply})"
                    )
                answer = self._conn.recv_until_filtered(queue, timeout=self.timeout)
        except TimeoutError:
            raise CaptureError("the desktop portal did not answer the screenshot request in time") from None
        finally:
            self._conn.send_and_get_reply(message_bus.RemoveMatch(rule), timeout=_TIMEOUT)
        code, results = answer.body
        if code != 0:
            raise CaptureError(
                "the desktop refused the screenshot (consent denied or cancelled); allow proagent "
                "to take screenshots in the desktop's privacy settings"
            )
        uri = results.get("uri", ("s", ""))[1]
        path = Path(unquote(urlparse(uri).path))
        try:
            with Image.open(path) as img:
                image = img.convert("RGB")
        except OSError as e:
            raise CaptureError(f"cannot read the portal's screenshot {path}: {e}") from None
        finally:
            path.unlink(missing_ok=True)  # the portal leaves it in the user's Pictures folder
        return [(0, image)]

    def focused_screen(self, window: WindowInfo | None = None) -> int | None:
        """The portal's one image is the whole desktop: screen 0."""
        return 0

    def close(self) -> None:
        """Close the bus connection."""
        self._conn.close()


class PortalProbe:
    """Foreground window on GNOME / KDE Wayland: the X11 probe's answer through XWayland when a
    display is there (X11 apps only), else ``unknown`` (no portal tells a client the focused window)."""

    def __init__(self) -> None:
        self._x11 = None
        if os.environ.get("DISPLAY"):
            try:
                from ._x11 import X11Probe

                self._x11 = X11Probe()
            except CaptureError:
                self._x11 = None

    def foreground(self) -> WindowInfo:
        """See :meth:`~._platform.WindowProbe.foreground`."""
        return self._x11.foreground() if self._x11 is not None else UNKNOWN_WINDOW

    def idle_seconds(self) -> float | None:
        """See :meth:`~._platform.WindowProbe.idle_seconds` (X11's, else ``None``)."""
        return self._x11.idle_seconds() if self._x11 is not None else None

    def close(self) -> None:
        """See :meth:`~._platform.WindowProbe.close`."""
        if self._x11 is not None:
            self._x11.close()


@register_platform
class SwayPlatform:
    """sway: :class:`SwayProbe` and :class:`GrimGrabber`."""

    name = "sway"

    def detected(self) -> bool:
        return wayland_kind() == "sway"

    def window_probe(self) -> SwayProbe:
        return SwayProbe()

    def screen_source(self) -> GrimGrabber:
        return GrimGrabber()


@register_platform
class HyprlandPlatform:
    """Hyprland: :class:`HyprlandProbe` and :class:`GrimGrabber` over its monitors."""

    name = "hyprland"

    def detected(self) -> bool:
        return wayland_kind() == "hyprland"

    def window_probe(self) -> HyprlandProbe:
        return HyprlandProbe()

    def screen_source(self) -> GrimGrabber:
        return GrimGrabber(hyprland_outputs)


@register_platform
class PortalPlatform:
    """Any other Wayland desktop (GNOME, KDE): :class:`PortalProbe` and :class:`PortalGrabber`."""

    name = "portal"

    def detected(self) -> bool:
        return wayland_kind() == "portal"

    def window_probe(self) -> PortalProbe:
        self._check()
        return PortalProbe()

    def screen_source(self) -> PortalGrabber:
        self._check()
        return PortalGrabber()

    @staticmethod
    def _check() -> None:
        if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
            raise CaptureError(
                "Wayland session without a D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set): "
                "proagent capture reads GNOME/KDE screens through xdg-desktop-portal over D-Bus; "
                "on sway set SWAYSOCK (and install swaymsg, grim)"
            )
        if not portal_available():
            raise CaptureError(
                "Wayland session without xdg-desktop-portal on the session bus: install "
                "xdg-desktop-portal-gnome or -kde (or, on sway, set SWAYSOCK and install swaymsg, grim)"
            )
