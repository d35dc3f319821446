"""What this machine can do: one :class:`Check` per capability proagent needs, with what to install
for each missing one (``proagent doctor``).

The checks ask the same code the commands use (``capture.check_session`` for the display,
``models.catalog`` for the bundled models, ``vault.keyring_backend`` for the keyring), so doctor
says "ok" exactly when the command would start. Nothing is written, nothing is downloaded, no
model is loaded; each probe is bounded (the portal's D-Bus call by capture's own 5 s timeout).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

__all__ = [
    "CHROMIUM_PROGRAMS",
    "MIN_FREE_BYTES",
    "Check",
    "Status",
    "as_dicts",
    "format_checks",
    "gguf_magic_ok",
    "run_checks",
]

Status = Literal["ok", "missing", "low", "n/a"]
"""``ok``: usable; ``missing``: not usable here (``fix`` says what to install or do); ``low``:
usable but short (free disk); ``n/a``: does not apply to this session (a portal on X11)."""

MIN_FREE_BYTES = 2 * 1024**3
"""Free disk below which doctor says ``low`` (bytes): the default model assembled once takes
1.1 GB (22 PyPI parts, ``models.catalog``) and a capture stores its screenshots beside it."""

CHROMIUM_PROGRAMS = ("chromium", "chromium-browser", "google-chrome")
"""Chromium programs looked up on PATH, first found wins: the test and benchmark pages are rendered
with Chromium through Playwright (``executable_path``; no browser download), scripts/system-packages.txt.
Not :data:`proagent.pages.BROWSERS` (the application names a screen recording counts as web
browsers): this is the one engine Playwright drives here."""

_SYSTEM_PACKAGES = "sudo scripts/system-packages.sh"


@dataclass(frozen=True)
class Check:
    """One capability of this machine."""

    name: str
    """What was checked: ``display``, ``capture``, ``wayland portal``, ``model <name>``, ``ocr``,
    ``keyring``, ``encryption``, ``disk``, ``ray``, ``chromium``, ``notifications``."""
    status: Status
    """See :data:`Status`."""
    detail: str
    """What was found (one line; never screen text or secrets)."""
    fix: str = ""
    """What to install or do when ``status`` is not ``ok`` (empty otherwise)."""


def _module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


X_PROBE_SECONDS = 2.0
"""How long :func:`x_server_unreachable` waits for an X server's socket to accept (seconds)."""


def x_server_unreachable(display: str) -> str | None:
    """Why nothing listens for the X display ``display`` (``[host]:N[.S]``), or ``None`` when its
    socket accepts a connection within :data:`X_PROBE_SECONDS` (X11R7 Xlib rules: no host or
    ``unix`` is the local socket ``/tmp/.X11-unix/XN``, Linux's abstract one first; a host is TCP
    port 6000+N). Only the connection is tried: nothing is sent, no authorisation is read."""
    import socket

    host, sep, rest = display.rpartition(":")
    num = rest.split(".", 1)[0]
    if not sep or not num.isdigit():
        return "not a display name like :0 or host:0"
    n = int(num)
    if host.startswith("/"):  # launchd-style path (macOS XQuartz): the socket is the name itself
        paths = [display.split(":", 1)[0]]
    elif host in ("", "unix"):
        path = f"/tmp/.X11-unix/X{n}"
        paths = (["\0" + path] if sys.platform.startswith("linux") else []) + [path]
    else:
        try:
            socket.create_connection((host, 6000 + n), timeout=X_PROBE_SECONDS).close()
            return None
        except OSError as e:
            return e.strerror or str(e) or e.__class__.__name__
    why = "no socket"
    for addr in paths:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(X_PROBE_SECONDS)
                sock.connect(addr)
            return None
        except OSError as e:
            why = e.strerror or str(e) or e.__class__.__name__
    return why


def _display() -> Check:
    if sys.platform == "win32":
        return Check("display", "ok", "Windows desktop (capture written to the documented APIs, untested)")
    if sys.platform == "darwin":
        return Check("display", "ok", "macOS desktop (capture untested; needs the Screen Recording permission)")
    wayland = os.environ.get("WAYLAND_DISPLAY") or os.environ.get("XDG_SESSION_TYPE") == "wayland"
    x11 = os.environ.get("DISPLAY")
    if wayland:
        also = f", XWayland DISPLAY={x11}" if x11 else ""
        return Check("display", "ok", f"Wayland (WAYLAND_DISPLAY={os.environ.get('WAYLAND_DISPLAY', '?')}{also})")
    if x11:
        why = x_server_unreachable(x11)
        if why is not None:
            return Check(
                "display",
                "missing",
                f"DISPLAY={x11} but no X server answers there ({why})",
                "start the X server of that display (on a server: Xvfb :1 & export DISPLAY=:1), or unset DISPLAY",
            )
        return Check("display", "ok", f"X11 (DISPLAY={x11})")
    return Check(
        "display",
        "missing",
        "no display server (neither DISPLAY nor WAYLAND_DISPLAY is set)",
        "run proagent in a desktop session, or start one on a server: Xvfb :1 & export DISPLAY=:1 "
        f"(Xvfb and openbox: {_SYSTEM_PACKAGES}); eval, stats, annotate and live --replay need no display",
    )


def _capture() -> list[Check]:
    """The capture platform of this session and, on Wayland, the portal."""
    if not _module("mss"):
        return [Check("capture", "missing", "the capture extra is not installed", "pip install 'proagent[capture]'")]
    from .capture import CaptureError, check_session, portal_available, session_platform

    platform = session_platform().name
    try:
        check_session()
        cap = Check("capture", "ok", f"proagent capture can record this session (platform {platform})")
    except CaptureError as e:
        cap = Check(
            "capture", "missing", f"platform {platform}: {e.problem}", "the reason above says what capture needs"
        )
    if platform != "portal":
        return [cap, Check("wayland portal", "n/a", f"not needed on {platform}")]
    if portal_available():
        return [cap, Check("wayland portal", "ok", "org.freedesktop.portal.Desktop on the session bus")]
    return [
        cap,
        Check(
            "wayland portal",
            "missing",
            "no xdg-desktop-portal on the session bus",
            "install xdg-desktop-portal-gnome or -kde (on sway: set SWAYSOCK, install swaymsg and grim)",
        ),
    ]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def gguf_magic_ok(path: Path) -> bool:
    """True when ``path`` starts with the GGUF magic ``b"GGUF"`` (the GGUF specification's first
    four bytes, ggml/docs/gguf.md)."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"GGUF"
    except OSError:
        return False


def _models(verify: bool) -> list[Check]:
    from .models.catalog import MODELS, assembled_gguf, cache_dir, parts_installed, resolve_gguf

    out = []
    folder = cache_dir() / "models"
    blocked = next((p for p in (cache_dir(), folder) if p.exists() and not p.is_dir()), None)
    for name, spec in MODELS.items():
        label = f"model {name}"
        if spec.relative_file is None and blocked is not None:  # assembly would fail: say why
            out.append(
                Check(
                    label,
                    "missing",
                    f"the model cache {blocked} is a file, not a folder: no model can be assembled there",
                    f"move {blocked} away, or set PROAGENT_CACHE_DIR to a folder",
                )
            )
            continue
        if spec.relative_file is None:  # split into PyPI parts, assembled into the cache
            path = assembled_gguf(spec)
            if path is None:
                if parts_installed(spec):
                    out.append(
                        Check(
                            label,
                            "missing",
                            "parts installed, not assembled yet",
                            f"proagent models prepare {name} (or it is assembled on first use)",
                        )
                    )
                else:
                    out.append(Check(label, "missing", "not installed", spec.install_hint))
                continue
            size = f"{path.stat().st_size / 1e9:.2f} GB"
            if not verify:
                out.append(Check(label, "ok", f"{path} ({size}; SHA-256 verified when assembled)"))
            elif _sha256(path) == spec.sha256:
                out.append(Check(label, "ok", f"{path} ({size}; SHA-256 verified now)"))
            else:
                out.append(
                    Check(
                        label,
                        "missing",
                        f"{path}: SHA-256 does not match the catalog",
                        f"delete {path} and run proagent models prepare {name}",
                    )
                )
            continue
        try:
            path = resolve_gguf(name)
        except (FileNotFoundError, ValueError):
            out.append(Check(label, "missing", "not installed", spec.install_hint))
            continue
        if gguf_magic_ok(path):
            out.append(Check(label, "ok", f"{path} ({path.stat().st_size / 1e6:.0f} MB, a GGUF file)"))
        else:
            out.append(Check(label, "missing", f"{path}: not a GGUF file", f"reinstall: {spec.install_hint}"))
    return out


def _keyring() -> list[Check]:
    from .vault import PASSPHRASE_ENV, keyring_backend

    if not (_module("sqlcipher3") and _module("cryptography") and _module("keyring")):
        return [
            Check(
                "encryption",
                "missing",
                "capture --encrypt needs sqlcipher3, cryptography and keyring",
                "pip install 'proagent[encrypt]'",
            )
        ]
    enc = Check("encryption", "ok", "capture --encrypt available (SQLCipher 4, AES-256-GCM)")
    kr = keyring_backend()
    if kr is not None:
        return [enc, Check("keyring", "ok", f"OS keyring: {type(kr).__module__}.{type(kr).__name__}")]
    if os.environ.get(PASSPHRASE_ENV):
        return [
            enc,
            Check(
                "keyring", "ok", f"no OS keyring; {PASSPHRASE_ENV} is set, so capture --encrypt derives the key from it"
            ),
        ]
    return [
        enc,
        Check(
            "keyring",
            "missing",
            "no usable OS keyring (capture --encrypt has nowhere to keep its key)",
            f"unlock a Secret Service keyring (gnome-keyring, KWallet) in this session, or set {PASSPHRASE_ENV}",
        ),
    ]


def _disk(folder: Path) -> list[Check]:
    import psutil

    from .models.catalog import cache_dir

    out = []
    seen: set[int] = set()
    cache = cache_dir()
    while not cache.exists() and cache != cache.parent:
        cache = cache.parent
    for label, where in (("here", folder), ("model cache", cache)):
        dev = where.stat().st_dev
        if dev in seen:
            continue
        seen.add(dev)
        free = psutil.disk_usage(str(where)).free
        detail = f"{free / 1e9:.1f} GB free at {where} ({label})"
        if free < MIN_FREE_BYTES:
            out.append(
                Check(
                    "disk",
                    "low",
                    detail,
                    f"free at least {MIN_FREE_BYTES / 1e9:.1f} GB "
                    "(the default model takes 1.1 GB; captures grow with their screenshots)",
                )
            )
        else:
            out.append(Check("disk", "ok", detail))
    return out


def _ray() -> Check:
    if not _module("ray"):
        return Check(
            "ray", "missing", "--ray (eval, ablate, curate, annotate) needs Ray", "pip install 'proagent[ray]'"
        )
    return Check("ray", "ok", f"Ray {importlib.metadata.version('ray')} (--ray local, or a cluster's address)")


def _ocr() -> Check:
    if _module("rapidocr") and _module("onnxruntime"):
        return Check("ocr", "ok", "RapidOCR (capture, curate, annotate read screens offline)")
    return Check(
        "ocr",
        "missing",
        "RapidOCR is not installed (annotate and curate cannot read screenshots)",
        "pip install 'proagent[ocr]'",
    )


def _browser() -> Check:
    for name in CHROMIUM_PROGRAMS:
        path = shutil.which(name)
        if path:
            return Check("chromium", "ok", f"{path} (renders the review and offers pages in the tests and benchmarks)")
    return Check(
        "chromium",
        "missing",
        "no Chromium on PATH: the page tests and annotate's rendered chat pages are skipped; "
        "the review and offers pages still open in any browser",
        f"apt install chromium, or {_SYSTEM_PACKAGES}",
    )


def _notifications() -> Check:
    if shutil.which("notify-send"):
        return Check("notifications", "ok", "notify-send (live --notify desktop)")
    return Check(
        "notifications",
        "missing",
        "no notify-send: live --notify desktop cannot show offers (terminal and page still work)",
        "apt install libnotify-bin",
    )


def run_checks(folder: Path | str = ".", *, verify: bool = False) -> list[Check]:
    """Every check, in the order ``proagent doctor`` prints them.

    Args:
        folder: where you will write captures and runs; its file system's free space is checked
            (and that of the model cache, ``models.catalog.cache_dir``, when it is another one).
        verify: recompute the SHA-256 of each assembled model (about 1 s per GB) instead of
            trusting the marker written when it was assembled and verified.

    Raises:
        FileNotFoundError: ``folder`` does not exist.
    """
    folder = Path(folder).expanduser().resolve()
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: not a folder")
    return [
        _display(),
        *_capture(),
        *_models(verify),
        _ocr(),
        *_keyring(),
        *_disk(folder),
        _ray(),
        _browser(),
        _notifications(),
    ]


def format_checks(checks: list[Check]) -> list[str]:
    """The lines ``proagent doctor`` prints: one per check (``name  status  detail``, then ``->
    fix`` on the next line when there is one), and a last line counting them."""
    width = max(len(c.name) for c in checks)
    lines = []
    for c in checks:
        lines.append(f"{c.name:<{width}}  {c.status:<7}  {c.detail}")
        if c.fix:
            lines.append(f"{'':<{width}}  {'':<7}  -> {c.fix}")
    missing = [c.name for c in checks if c.status in ("missing", "low")]
    ok = sum(c.status == "ok" for c in checks)
    lines.append(f"{ok} ok, {len(missing)} to fix" + (f": {', '.join(missing)}" if missing else ""))
    return lines


def as_dicts(checks: list[Check]) -> list[dict[str, str]]:
    """The checks as JSON-ready dicts (``proagent doctor --json``)."""
    return [asdict(c) for c in checks]
