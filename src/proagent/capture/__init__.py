"""Record a real activity log: 1 Hz screenshots, foreground app and window title, events, OCR,
written in LifeTrace's 2025-11 (v1.0) format so proagent's readers (and LifeTrace's tools) read it
while it grows.

Parts: probes (:mod:`._probe`: screens with mss; the foreground window on X11 via python-xlib,
on Windows via ctypes and on macOS via pyobjc, the last two untested; Wayland in :mod:`._wayland`:
sway through its IPC and grim, GNOME/KDE screens through xdg-desktop-portal), the event segmenter and
capture loop (:mod:`._recorder`), storage (:mod:`._store`: WAL SQLite, pHash dedup, SHA-256
``file_hash``, retention), the background OCR worker (:mod:`._ocr`, RapidOCR), exclusions
(:mod:`._exclude`) and pause/resume/stop through the capture folder (:mod:`._control`).
The command is ``proagent capture`` (:mod:`proagent.cli.capture`).
"""

from ._control import COMMANDS, read_status, recorder_pid, send_command, started_by
from ._exclude import Exclusions, default_exclusions
from ._folder import CAPTURE_NAMES, check_capture_folder, check_encryption, removed_if_refused
from ._probe import (
    CaptureError,
    ScreenGrabber,
    ScreenSource,
    WindowInfo,
    WindowProbe,
    check_session,
    open_screen_source,
    open_window_probe,
    session_platform,
    x11_fullscreen,
)
from ._recorder import CaptureConfig, CaptureStats, Segmenter, record
from ._regions import parse_region
from ._store import DB_NAME, EXCLUDED_APP, SHOTS_DIR, Store, screenshot_name
from ._wayland import portal_available

__all__ = [
    "CAPTURE_NAMES",
    "COMMANDS",
    "DB_NAME",
    "EXCLUDED_APP",
    "SHOTS_DIR",
    "CaptureConfig",
    "CaptureError",
    "CaptureStats",
    "Exclusions",
    "ScreenGrabber",
    "ScreenSource",
    "Segmenter",
    "Store",
    "WindowInfo",
    "WindowProbe",
    "check_capture_folder",
    "check_encryption",
    "check_session",
    "default_exclusions",
    "open_screen_source",
    "open_window_probe",
    "parse_region",
    "portal_available",
    "read_status",
    "record",
    "removed_if_refused",
    "recorder_pid",
    "started_by",
    "screenshot_name",
    "send_command",
    "session_platform",
    "x11_fullscreen",
]
