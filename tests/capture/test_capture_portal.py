"""The GNOME/KDE Wayland path (xdg-desktop-portal's Screenshot interface over D-Bus) against a
loopback mock: a private ``dbus-daemon`` and a portal service written with jeepney that answers
like xdg-desktop-portal does (a request object path, then a ``Response`` signal on it). A real
GNOME or KDE portal (and its consent dialog) cannot run here; this checks proagent's side of the
protocol only."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest
from system import require_binary

jeepney = pytest.importorskip("jeepney")
from jeepney import DBusAddress, HeaderFields, MessageType, new_method_return, new_signal  # noqa: E402
from jeepney.bus_messages import message_bus  # noqa: E402
from jeepney.io.blocking import open_dbus_connection  # noqa: E402

from proagent.capture import CaptureError, open_screen_source, open_window_probe  # noqa: E402
from proagent.capture._wayland import PORTAL_NAME, PORTAL_PATH  # noqa: E402


class Bus:
    """A private session bus (``dbus-daemon --session``), stopped on close."""

    def __init__(self) -> None:
        require_binary("dbus-daemon")
        self.proc = subprocess.Popen(
            ["dbus-daemon", "--session", "--nofork", "--print-address=1"], stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        self.address = self.proc.stdout.readline().strip()

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(5)


class MockPortal(threading.Thread):
    """``org.freedesktop.portal.Desktop`` with a Screenshot method: writes a 320x200 PNG and
    answers ``Response(code, {"uri": file://...})`` on the request path (code 1: the user refused)."""

    def __init__(self, address: str, folder: Path, code: int = 0) -> None:
        super().__init__(daemon=True)
        self.conn = open_dbus_connection(bus=address)
        assert self.conn.send_and_get_reply(message_bus.RequestName(PORTAL_NAME)).body[0] == 1
        self.folder, self.code = folder, code
        self.calls: list[tuple] = []
        self.stop = threading.Event()

    def run(self) -> None:
        from PIL import Image

        while not self.stop.is_set():
            try:
                msg = self.conn.receive(timeout=0.2)
            except TimeoutError:
                continue
            h = msg.header
            if h.message_type != MessageType.method_call or h.fields.get(HeaderFields.member) != "Screenshot":
                continue
            parent, options = msg.body
            self.calls.append((h.fields.get(HeaderFields.interface), parent, options))
            sender = h.fields[HeaderFields.sender].lstrip(":").replace(".", "_")
            path = f"{PORTAL_PATH}/request/{sender}/{options['handle_token'][1]}"
            self.conn.send(new_method_return(msg, "o", (path,)))
            shot = self.folder / f"Screenshot-{len(self.calls)}.png"
            Image.new("RGB", (320, 200), (10, 200, 30)).save(shot)
            self.conn.send(
                new_signal(
                    DBusAddress(path, interface="org.freedesktop.portal.Request"),
                    "Response",
                    "ua{sv}",
                    (self.code, {"uri": ("s", shot.as_uri())} if self.code == 0 else {}),
                )
            )

    def close(self) -> None:
        self.stop.set()
        self.join(5)
        self.conn.close()


@pytest.fixture()
def gnome(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    bus = Bus()
    for k in ("SWAYSOCK", "DISPLAY"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
    monkeypatch.setenv("XDG_CURRENT_DESKTOP", "GNOME")
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus.address)
    yield bus
    bus.close()


def test_portal_screenshot_through_the_session_bus(gnome, tmp_path: Path) -> None:  # noqa: ANN001
    portal = MockPortal(gnome.address, tmp_path)
    portal.start()
    try:
        probe = open_window_probe()
        assert type(probe).__name__ == "PortalProbe" and probe.foreground().app_name == "unknown"
        screens = open_screen_source()
        assert type(screens).__name__ == "PortalGrabber"
        for n in (1, 2):
            ((sid, img),) = screens.grab()
            assert sid == 0 and img.size == (320, 200) and img.getpixel((5, 5)) == (10, 200, 30)
            assert not (tmp_path / f"Screenshot-{n}.png").exists()  # the portal's file is not left behind
        iface, parent, options = portal.calls[0]
        assert iface == "org.freedesktop.portal.Screenshot" and parent == ""
        assert options["interactive"] == ("b", False) and options["handle_token"][1].startswith("proagent")
        screens.close()
    finally:
        portal.close()


def test_a_refused_screenshot_is_one_clear_error(gnome, tmp_path: Path) -> None:  # noqa: ANN001
    portal = MockPortal(gnome.address, tmp_path, code=1)
    portal.start()
    try:
        with pytest.raises(CaptureError, match="refused the screenshot"):
            open_screen_source().grab()
    finally:
        portal.close()


def test_a_wayland_session_without_portal_or_sway_is_refused(gnome) -> None:  # noqa: ANN001
    with pytest.raises(CaptureError, match="Wayland session without xdg-desktop-portal"):
        open_window_probe()


def test_one_platform_class_per_session(monkeypatch: pytest.MonkeyPatch) -> None:
    from proagent.capture._probe import session_platform

    for k in ("WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "SWAYSOCK"):
        monkeypatch.delenv(k, raising=False)
    assert session_platform().name == "x11"
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert session_platform().name == "portal"
    monkeypatch.setenv("SWAYSOCK", "/nonexistent/sway-ipc.sock")
    monkeypatch.setattr("shutil.which", lambda name: f"/usr/bin/{name}")
    assert session_platform().name == "sway"


HYPRCTL = """#!/bin/sh
# stand-in for Hyprland's hyprctl: prints the JSON shape Hyprland documents for -j queries
case "$2" in
  version) echo '{"branch": "main", "tag": "v0.45.0"}' ;;
  activewindow) cat "$(dirname "$0")/active.json" ;;
  monitors) echo '[{"id": 0, "name": "DP-1", "width": 1920, "height": 1080, "x": 0, "y": 0, "focused": false,
                    "disabled": false},
                   {"id": 1, "name": "HDMI-A-1", "width": 1280, "height": 1024, "x": 1920, "y": 0, "focused": true,
                    "disabled": false},
                   {"id": 2, "name": "eDP-1", "focused": false, "disabled": true}]' ;;
  *) exit 1 ;;
esac
"""


def test_hyprland_probe_and_monitors_through_hyprctl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hyprland is not packaged here: a stand-in hyprctl prints its JSON; only the parsing is tested."""
    import json
    import os

    from proagent.capture._probe import session_platform
    from proagent.capture._wayland import hyprland_outputs

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "hyprctl").write_text(HYPRCTL)
    os.chmod(bin_dir / "hyprctl", 0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.delenv("SWAYSOCK", raising=False)
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-1")
    monkeypatch.setenv("HYPRLAND_INSTANCE_SIGNATURE", "abc_123")
    platform = session_platform()
    assert platform.name == "hyprland"
    (bin_dir / "active.json").write_text(
        json.dumps(
            {
                "address": "0x55d0",
                "mapped": True,
                "hidden": False,
                "workspace": {"id": 1, "name": "1"},
                "monitor": 1,
                "class": "org.wezfurlong.wezterm",
                "title": "vim notes.md",
                "initialClass": "org.wezfurlong.wezterm",
                "pid": os.getpid(),
                "xwayland": False,
            }
        )
    )
    probe = platform.window_probe()
    w = probe.foreground()
    assert (w.app_name, w.window_title, w.pid) == ("org.wezfurlong.wezterm", "vim notes.md", os.getpid())
    (bin_dir / "active.json").write_text("{}")  # an empty workspace has the focus
    assert probe.foreground().app_name == "unknown"
    assert [(m["name"], m["focused"]) for m in hyprland_outputs()] == [("DP-1", False), ("HDMI-A-1", True)]
