"""Capture platforms are one registry (issue 25 item 3): a platform is one
``CapturePlatform`` class with ``@register_platform`` (in ``capture/_probe.py`` or
``capture/_wayland.py``); the session's platform is the first registered one that detects
itself, the X11 fallback last."""

from __future__ import annotations

import pytest

from proagent.capture import _probe
from proagent.capture._probe import platforms, register_platform, session_platform


def test_the_builtin_platforms_in_the_order_they_are_tried() -> None:
    assert [p.name for p in platforms()] == ["windows", "macos", "sway", "hyprland", "portal", "x11"]


def test_a_registered_platform_is_chosen_when_it_detects_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []

    class Probe:
        def foreground(self):  # noqa: ANN202
            return None

        def idle_seconds(self) -> float | None:
            return None

        def close(self) -> None:
            opened.append("closed")

    @register_platform
    class Fake:
        name = "fake"

        def detected(self) -> bool:
            return True

        def window_probe(self) -> Probe:
            opened.append("probe")
            return Probe()

        def screen_source(self):  # noqa: ANN202
            raise AssertionError("not asked")

    try:
        assert [p.name for p in platforms()][-2:] == ["fake", "x11"]  # before the fallback
        monkeypatch.setattr("sys.platform", "linux")
        monkeypatch.delenv("SWAYSOCK", raising=False)
        monkeypatch.delenv("HYPRLAND_INSTANCE_SIGNATURE", raising=False)
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
        assert session_platform().name == "fake"
        _probe.check_session()  # the same check capture runs before it creates anything
        assert opened == ["probe", "closed"]
        with pytest.raises(ValueError, match="already registered"):
            register_platform(type("Other", (), {"name": "fake"}))
    finally:
        del _probe._PLATFORMS["fake"]
    assert "fake" not in [p.name for p in platforms()]
