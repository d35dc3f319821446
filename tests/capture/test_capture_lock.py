"""The recorder's run lock (``capture/_control.py``) is a ``filelock.FileLock``: one recorder per
folder, a second one refused naming the first's pid, ``capture stop`` finding the recorder by it,
a lock left by kill -9 free again; no ``fcntl`` import (the Windows platform module imports)."""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import proagent
from proagent.capture import CaptureError, recorder_pid, send_command
from proagent.capture._control import LOCK_NAME, PID_NAME, FolderLock

SRC = Path(proagent.__file__).resolve().parent

HOLDER = (
    "import sys, time\nfrom pathlib import Path\nfrom proagent.capture._control import FolderLock\n"
    "lock = FolderLock(Path(sys.argv[1]))\nlock.acquire()\nprint('held', flush=True)\ntime.sleep(60)\n"
)


@pytest.fixture
def holder(tmp_path: Path):  # noqa: ANN201
    """Another process that holds the recorder's lock on tmp_path/cap (as a running capture)."""
    folder = tmp_path / "cap"
    folder.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC.parent), os.environ.get("PYTHONPATH", "")])}
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "held"
        yield folder, p
    finally:
        p.kill()
        p.wait()


def test_a_second_recorder_is_refused_naming_the_first(holder) -> None:  # noqa: ANN001
    folder, p = holder
    assert recorder_pid(folder) == p.pid
    with pytest.raises(
        CaptureError,
        match=rf"a capture is already running there \(pid {p.pid}\); stop it with: "
        rf"proagent capture stop",
    ):
        FolderLock(folder).acquire()
    assert (folder / PID_NAME).read_text().strip() == str(p.pid)  # the refused one left the pid file alone


def test_kill_9_leaves_a_free_lock_and_a_stale_pid(holder) -> None:  # noqa: ANN001
    folder, p = holder
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert (folder / PID_NAME).exists()  # stale: its lock is free, so no recorder runs
    assert recorder_pid(folder) is None
    with pytest.raises(CaptureError, match="no capture is running there"):
        send_command(folder, "stop")
    lock = FolderLock(folder)
    lock.acquire()  # a new capture takes the folder over
    try:
        assert recorder_pid(folder) == os.getpid()
    finally:
        lock.release()


def test_the_recorder_process_itself_sees_its_lock_held(tmp_path: Path) -> None:
    lock = FolderLock(tmp_path)
    lock.acquire()
    try:
        assert recorder_pid(tmp_path) == os.getpid()  # a probe is its own lock, not the recorder's re-entered
        with pytest.raises(CaptureError, match="already running"):
            FolderLock(tmp_path).acquire()
    finally:
        lock.release()
    assert recorder_pid(tmp_path) is None
    assert not (tmp_path / PID_NAME).exists() and (tmp_path / LOCK_NAME).exists()  # the lock file is kept
    assert (tmp_path / LOCK_NAME).stat().st_mode & 0o077 == 0  # private, as every file capture writes


def test_no_capture_module_imports_fcntl() -> None:
    """filelock picks the OS lock (flock, msvcrt.locking); capture imports no Unix-only module,
    so the Windows platform module can import."""
    for path in sorted((SRC / "capture").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            assert "fcntl" not in names, path.name
    code = (
        "import sys, warnings\nwarnings.simplefilter('ignore')\nsys.modules['fcntl'] = None\n"
        "from proagent.capture._probe import WindowsPlatform\nimport proagent.capture._control\nprint('ok')\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC.parent), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert r.stdout.strip() == "ok", r.stderr
