"""A real X session for tests and benchmarks: Xvfb on a free display, openbox, real X windows.

Usage::

    with XSession(800, 600) as xs:
        xs.xterm("alpha-notes", "HELLO ALPHA", geometry="60x12+0+0")
        xs.activate("alpha-notes")
        subprocess.run([...], env=xs.env)

Xvfb picks a free display itself (``-displayfd``); openbox provides EWMH
(``_NET_ACTIVE_WINDOW``). Every process started is ended on exit (by its own pid).
Needs the Debian packages xvfb, openbox, xterm, xdotool, x11-utils (xmessage), xfonts-base.
"""

from __future__ import annotations

import os
import subprocess
import time

__all__ = ["XSession"]


class XSession:
    """Xvfb + openbox on a free display; open windows and switch the focus with xdotool."""

    def __init__(self, width: int = 800, height: int = 600, *, wm: bool = True) -> None:
        self.size = (width, height)
        self.wm = wm
        self.procs: list[subprocess.Popen[bytes]] = []
        self.display = ""
        self.env: dict[str, str] = {}

    def __enter__(self) -> XSession:
        r, w = os.pipe()
        xvfb = subprocess.Popen(
            [
                "Xvfb",
                "-displayfd",
                str(w),
                "-screen",
                "0",
                f"{self.size[0]}x{self.size[1]}x24",
                "-nolisten",
                "tcp",
                "-noreset",
            ],  # without a window manager the last client leaving would reset the server mid-test
            pass_fds=(w,),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(w)
        self.procs.append(xvfb)
        with os.fdopen(r) as f:
            num = f.readline().strip()
        if not num:
            self.__exit__(None, None, None)
            raise RuntimeError("Xvfb did not start")
        self.display = f":{num}"
        self.env = {**os.environ, "DISPLAY": self.display}
        self.env.pop("WAYLAND_DISPLAY", None)
        self.env["XDG_SESSION_TYPE"] = "x11"
        if not self.wm:
            return self
        self._spawn(["openbox"])
        self._wait(
            lambda: "_NET_SUPPORTING_WM_CHECK(WINDOW)" in self._out(["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"])
        )
        return self

    def __exit__(self, *exc: object) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for p in reversed(self.procs):
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs.clear()

    def _spawn(self, cmd: list[str]) -> subprocess.Popen[bytes]:
        p = subprocess.Popen(
            cmd, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.procs.append(p)
        return p

    def _out(self, cmd: list[str]) -> str:
        return subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=10).stdout

    @staticmethod
    def _wait(cond, timeout: float = 60.0) -> None:  # noqa: ANN001
        end = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > end:
                raise TimeoutError("X session: condition not met in time")
            time.sleep(0.05)

    def window_id(self, title: str, *, viewable: bool = False) -> str | None:
        """X id of the (first) window named exactly ``title``, ``None`` when none; with ``viewable``,
        only a window that is mapped and shown (xdotool's ``--onlyvisible``)."""
        flags = ["--onlyvisible"] if viewable else []
        out = self._out(["xdotool", "search", *flags, "--name", f"^{title}$"]).split()
        return out[0] if out else None

    def focus(self, title: str) -> None:
        """Set the X input focus to the window titled ``title`` (no window manager needed)."""
        wid = self.window_id(title)
        if wid is None:
            raise LookupError(f"no window titled {title!r}")
        subprocess.run(
            ["xdotool", "windowfocus", "--sync", wid], env=self.env, check=True, timeout=10, capture_output=True
        )

    def xterm(
        self, title: str, text: str, geometry: str = "60x12+0+0", *, shell: bool = False
    ) -> subprocess.Popen[bytes]:
        """An xterm titled ``title`` showing ``text`` (waits until it has the focus); with ``shell``
        it then runs an interactive ``sh`` (typed commands run), else it just shows the text."""
        rest = "exec sh -i" if shell else "exec sleep 600"
        p = self._spawn(["xterm", "-T", title, "-geometry", geometry, "-e", "sh", "-c", f"echo '{text}'; {rest}"])
        self._settle(title)
        return p

    def xmessage(self, title: str, text: str, geometry: str = "400x150+350+380") -> subprocess.Popen[bytes]:
        """An xmessage window (application ``Xmessage``) titled ``title`` showing ``text``."""
        p = self._spawn(["xmessage", "-title", title, "-geometry", geometry, text])
        self._settle(title)
        return p

    def wait_still(self, quiet: float = 0.5, timeout: float = 15.0) -> None:
        """Wait until the screen has not changed for ``quiet`` seconds (windows painted their text, a
        focus change redrew the cursor and the decorations): a test that counts screenshots must not
        start while the clients are still drawing (on a loaded machine they draw late)."""
        import hashlib

        import mss

        with mss.MSS(display=self.display) as sct:

            def grab() -> str:
                return hashlib.sha256(sct.grab(sct.monitors[0]).rgb).hexdigest()

            end = time.monotonic() + timeout
            last = grab()
            while time.monotonic() < end:
                time.sleep(quiet)
                now = grab()
                if now == last:
                    return
                last = now
        raise TimeoutError(f"X session: the screen kept changing for {timeout} s")

    def active_id(self) -> str:
        """X id (decimal) of the active window, ``""`` when none."""
        return self._out(["xdotool", "getactivewindow"]).strip()

    def _settle(self, title: str) -> None:
        """Wait until the new window is shown and the window manager has given it the focus (openbox
        focuses new windows; a later activate() must not race with that). Shown, not only named:
        xterm names its window before mapping it, and X refuses the focus to a window not yet
        viewable (BadMatch from SetInputFocus; a CI run without a window manager)."""
        self._wait(lambda: self.window_id(title, viewable=True) is not None)
        wid = self.window_id(title)
        if not self.wm:
            return
        try:
            self._wait(lambda: self.active_id() == wid, timeout=5.0)
        except TimeoutError:
            pass

    def activate(self, title: str) -> None:
        """Give the focus to the window titled ``title`` (raised; waits until it is active)."""
        wid = self.window_id(title)
        if wid is None:
            raise LookupError(f"no window titled {title!r}")
        for _ in range(5):
            subprocess.run(
                ["xdotool", "windowactivate", "--sync", wid], env=self.env, check=True, timeout=10, capture_output=True
            )
            if self.active_id() == wid:
                return
            time.sleep(0.1)
        raise RuntimeError(f"window {title!r} did not become active")

    def type(self, text: str, delay_ms: int = 30) -> None:
        """Type ``text`` into the focused window."""
        subprocess.run(
            ["xdotool", "type", "--delay", str(delay_ms), text],
            env=self.env,
            check=True,
            timeout=60,
            capture_output=True,
        )
