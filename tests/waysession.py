"""A real headless sway session for the Wayland capture tests.

sway refuses to run as root, so under root it runs as an unprivileged user (created once,
``proagent-sway``) through ``runuser``, with its own ``XDG_RUNTIME_DIR`` (mode 0700) and the
headless wlroots backend (``WLR_BACKENDS=headless WLR_LIBINPUT_NO_DEVICES=1 WLR_RENDERER=pixman``).
Clients (``foot`` windows) are started by sway itself (``swaymsg exec``); tests talk to it through
``SWAYSOCK`` and ``WAYLAND_DISPLAY`` (root may connect to the user's sockets).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from system import require_binary

__all__ = ["SwaySession", "USER"]

USER = "proagent-sway"


class SwaySession:
    """A headless sway with one 800x600 output (``outputs=2``: a second one of 640x480)."""

    def __init__(self, outputs: int = 1) -> None:
        bins = require_binary("sway", "swaymsg", "grim", "foot")
        self.root = Path(tempfile.mkdtemp(prefix="pa-sway-"))
        self.run_dir = self.root / "run"
        self.run_dir.mkdir(mode=0o700)
        conf = self.root / "sway.conf"
        conf.write_text(
            "output HEADLESS-1 resolution 800x600 position 0 0\ndefault_border none\nfocus_follows_mouse no\n",
            encoding="utf-8",
        )
        os.chmod(self.root, 0o755)
        os.chmod(conf, 0o644)
        env = {
            "PATH": "/usr/bin:/bin",
            "XDG_RUNTIME_DIR": str(self.run_dir),
            "WLR_BACKENDS": "headless",
            "WLR_LIBINPUT_NO_DEVICES": "1",
            "WLR_RENDERER": "pixman",
            "LANG": "C.UTF-8",
        }
        cmd = [bins["sway"], "-c", str(conf)]
        if os.geteuid() == 0:
            bins.update(require_binary("runuser", "useradd"))
            if subprocess.run(["id", "-u", USER], capture_output=True).returncode != 0:
                subprocess.run(
                    [bins["useradd"], "--system", "--create-home", "--shell", "/usr/sbin/nologin", USER],
                    check=True,
                    capture_output=True,
                )
            shutil.chown(self.run_dir, USER)
            env["HOME"] = str(Path("~" + USER).expanduser())
            cmd = [bins["runuser"], "-u", USER, "--", "/usr/bin/env", "-i", *(f"{k}={v}" for k, v in env.items()), *cmd]
        else:
            env["HOME"] = os.environ.get("HOME", str(self.root))
        self.log = open(self.root / "sway.log", "w")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(cmd, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        sock = self._wait(lambda: next(iter(self.run_dir.glob("sway-ipc.*.sock")), None), "sway's IPC socket")
        display = self._wait(
            lambda: next((p.name for p in self.run_dir.glob("wayland-*") if not p.name.endswith(".lock")), None),
            "the Wayland socket",
        )
        self.env = {
            **os.environ,
            "SWAYSOCK": str(sock),
            "WAYLAND_DISPLAY": display,
            "XDG_RUNTIME_DIR": str(self.run_dir),
            "XDG_SESSION_TYPE": "wayland",
        }
        self.env.pop("DISPLAY", None)
        for _ in range(outputs - 1):
            self.msg("create_output")
        if outputs > 1:
            self.msg("output HEADLESS-2 resolution 640x480 position 800 0")

    def _wait(self, cond, what: str, timeout: float = 20.0):  # noqa: ANN001, ANN202
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            v = cond()
            if v:
                return v
            if self.proc.poll() is not None:
                raise RuntimeError(f"sway exited: {(self.root / 'sway.log').read_text()[-2000:]}")
            time.sleep(0.05)
        raise RuntimeError(f"timed out waiting for {what}")

    def msg(self, *args: str, kind: str | None = None) -> object:
        """``swaymsg [-t kind] args`` in this session, parsed JSON."""
        cmd = ["swaymsg", "-r"] + (["-t", kind] if kind else []) + list(args)
        r = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=10, check=True)
        return json.loads(r.stdout) if r.stdout.strip() else None

    def windows(self) -> list[dict]:
        out: list[dict] = []

        def walk(n: dict) -> None:
            if n.get("type") in ("con", "floating_con") and (n.get("app_id") or n.get("window_properties")):
                out.append(n)
            for c in (n.get("nodes") or []) + (n.get("floating_nodes") or []):
                walk(c)

        walk(self.msg(kind="get_tree"))  # type: ignore[arg-type]
        return out

    def open(self, app_id: str, title: str, text: str, output: str | None = None) -> None:
        """A ``foot`` window with ``app_id`` and ``title`` showing ``text`` (on ``output``)."""
        if output:
            self.msg(f"focus output {output}")
        self.msg(f"exec foot --app-id={app_id} --title={title} sh -c 'printf \"{text}\\n\"; exec sleep 600'")
        self._wait(lambda: any(w.get("app_id") == app_id for w in self.windows()), f"window {app_id}")

    def focus(self, app_id: str) -> None:
        self.msg(f'[app_id="{app_id}"] focus')

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.msg("exit")
            except (subprocess.SubprocessError, OSError):
                pass
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(5)
        self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)
