"""Controlling a running recorder through its folder: ``pause``, ``resume``, ``stop``.

The recorder holds an exclusive lock on ``DIR/capture.lock`` (a ``filelock.FileLock``, as
:func:`proagent.io.folder_lock`: ``flock`` on Unix, ``msvcrt.locking`` on Windows, released by the
kernel when the process dies, even by kill -9) and writes its pid to ``DIR/capture.pid``. A
command is written atomically to ``DIR/capture.control`` as JSON ``{"command": ..., "at": ...}``;
the recorder checks that file's modification time once per tick and acts on a new command within
one tick. SIGINT (Ctrl-C) and SIGTERM stop it too.

While it stops, the recorder writes ``DIR/capture.status`` (JSON, counts only, no screen text):
``{"state": "finishing-ocr", "unread": N, "total": N0, "until": EPOCH}`` while its OCR worker
finishes the backlog, then ``{"state": "stopped", "unread": N, ...}``. :func:`send_command` waits
for a ``stop`` past its ``wait`` while the recorder says it is finishing (until ``until`` + ``wait``)
and hands on its progress; :func:`read_status` gives the last status.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from filelock import FileLock, Timeout

from ..io import PRIVATE_FILE_MODE, write_json_atomic
from ._probe import CaptureError

__all__ = [
    "COMMANDS",
    "ControlFile",
    "FolderLock",
    "read_status",
    "recorder_pid",
    "send_command",
    "started_by",
    "write_status",
]

COMMANDS = ("pause", "resume", "stop")
"""Commands a running recorder understands."""
Command = Literal["pause", "resume", "stop"]

CONTROL_NAME = "capture.control"
LOCK_NAME = "capture.lock"
PID_NAME = "capture.pid"
STATUS_NAME = "capture.status"


def write_status(folder: Path, **status: object) -> None:
    """Write the recorder's status (atomically; see the module docstring)."""
    write_json_atomic(Path(folder) / STATUS_NAME, dict(status))


def read_status(folder: Path) -> dict[str, Any]:
    """The recorder's last status (``{}`` when none was written or it is unreadable)."""
    try:
        got = json.loads((Path(folder) / STATUS_NAME).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return got if isinstance(got, dict) else {}


def _file_lock(path: Path) -> FileLock:
    """A lock on ``path`` taken without waiting; each call makes its own (a probe in the
    recorder's own process sees the recorder's lock as held); the file is kept on release."""
    return FileLock(
        path, mode=PRIVATE_FILE_MODE, blocking=False, thread_local=False, is_singleton=False, preserve_lock_file=True
    )


class FolderLock:
    """The exclusive lock a recorder holds on its folder while it runs."""

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / LOCK_NAME
        self._lock: FileLock | None = None

    def acquire(self) -> None:
        """Take the lock and write ``capture.pid``.

        Raises:
            CaptureError: another recorder runs in this folder (the message gives its pid).
        """
        lock = _file_lock(self.path)
        try:
            lock.acquire()
        except Timeout:
            raise CaptureError(
                f"{self.path.parent}: a capture is already running there "
                f"(pid {_read_pid(self.path.parent)}); stop it with: proagent capture stop "
                f"{self.path.parent}"
            ) from None
        self._lock = lock
        (self.path.parent / PID_NAME).write_text(f"{os.getpid()}\n")

    def release(self) -> None:
        """Remove ``capture.pid`` and drop the lock."""
        (self.path.parent / PID_NAME).unlink(missing_ok=True)
        if self._lock is not None:
            self._lock.release()
            self._lock = None


def _read_pid(folder: Path) -> int | None:
    try:
        return int((Path(folder) / PID_NAME).read_text().strip())
    except (OSError, ValueError):
        return None


def started_by(folder: Path, pid: int) -> bool:
    """Whether the recorder of process ``pid`` has taken ``folder``: its ``capture.pid`` names
    ``pid`` (written only once that recorder holds the lock). Reads the file only, so it cannot
    get in the way of a recorder taking the lock, as a probe of the lock (:func:`recorder_pid`) could."""
    return _read_pid(folder) == pid


def recorder_pid(folder: Path) -> int | None:
    """Pid of the recorder running in ``folder``, ``None`` when none runs (a stale pid file
    left by kill -9 does not count: its lock is free)."""
    folder = Path(folder)
    pid = _read_pid(folder)
    if pid is None:
        return None
    probe = _file_lock(folder / LOCK_NAME)
    try:
        probe.acquire()
    except Timeout:
        return pid  # held: the recorder runs
    except OSError:  # the lock file cannot be opened (the folder removed, no permission)
        return None
    probe.release()
    return None


def send_command(
    folder: Path, command: Command, *, wait: float = 10.0, progress: Callable[[dict[str, Any]], None] | None = None
) -> int:
    """Tell the recorder in ``folder`` to ``command``; for ``stop`` wait up to ``wait`` seconds
    for it to exit, longer while it says it finishes its OCR backlog (up to that time limit +
    ``wait``); ``progress`` is called with each new status it writes meanwhile. Returns its pid.

    Raises:
        CaptureError: no recorder runs in ``folder``, or it did not stop in time.
    """
    folder = Path(folder)
    pid = recorder_pid(folder)
    if pid is None:
        raise CaptureError(f"{folder}: no capture is running there (no live capture.lock holder)")
    write_json_atomic(folder / CONTROL_NAME, {"command": command, "at": datetime.now().isoformat()})
    if command == "stop":
        end = time.monotonic() + wait
        seen: dict[str, Any] = {}
        while recorder_pid(folder) is not None:
            status = read_status(folder)
            if status.get("state") == "finishing-ocr":
                try:  # the recorder's own time limit, as wall-clock seconds from now
                    end = max(end, time.monotonic() + float(status["until"]) - time.time() + wait)
                except (KeyError, TypeError, ValueError):
                    pass
                if status != seen and progress is not None:
                    progress(status)
                seen = status
            if time.monotonic() > end:
                raise CaptureError(f"{folder}: capture (pid {pid}) did not stop within {wait:g} s")
            time.sleep(0.1)
    return pid


class ControlFile:
    """The recorder's side: new commands from ``capture.control`` (cheap ``stat`` per call)."""

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / CONTROL_NAME
        self.path.unlink(missing_ok=True)  # commands meant for an earlier run do not apply
        (self.path.parent / STATUS_NAME).unlink(missing_ok=True)  # nor the status of one
        self._stamp: tuple[int, int] | None = None

    def changed(self) -> bool:
        """Whether a command was written since the last :meth:`poll` (not consumed)."""
        try:
            st = self.path.stat()
        except OSError:
            return False
        return (st.st_ino, st.st_mtime_ns) != self._stamp

    def poll(self) -> Command | None:
        """The command written since the last call, or ``None``."""
        try:
            st = self.path.stat()
        except OSError:
            return None
        stamp = (st.st_ino, st.st_mtime_ns)  # each command is a new file (atomic replace)
        if stamp == self._stamp:
            return None
        self._stamp = stamp
        try:
            cmd = json.loads(self.path.read_text("utf-8")).get("command")
        except (OSError, ValueError, AttributeError):
            return None
        return cmd if cmd in COMMANDS else None
