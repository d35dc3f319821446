"""proagent.orphan: a child whose main thread is busy still exits when its parent is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

SRC = Path(__file__).resolve().parents[1] / "src"

# the parent starts the child and prints its pid; the child arms the watch, says so on its
# stdout, then blocks its main thread for a minute (a stand-in for an OCR pass or a generation)
PARENT = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", sys.argv[1]], stdout=sys.stdout)
print(child.pid, flush=True)
child.wait()
"""
CHILD = """
import os, sys, time
from proagent.orphan import exit_when_orphaned
exit_when_orphaned(os.getppid(), poll_s=0.1, code=7)
print("armed", flush=True)
time.sleep(60)
"""


def test_a_busy_child_exits_soon_after_its_parent_is_killed() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, CHILD], env=env, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert parent.stdout is not None
        child = psutil.Process(int(parent.stdout.readline()))
        assert parent.stdout.readline().strip() == "armed"
        assert child.is_running()
        os.kill(parent.pid, signal.SIGKILL)
        t0 = time.monotonic()
        try:
            child.wait(timeout=10)
        except psutil.NoSuchProcess:
            pass  # reaped by init already
        gone = time.monotonic() - t0
        assert gone < 3.0, f"the child outlived its parent by {gone:.1f} s"
        assert parent.stdout.read() == ""  # the pipe it held is closed: EOF, nothing else printed
    finally:
        if parent.poll() is None:
            parent.kill()
        parent.wait()


def test_a_parent_already_gone_ends_the_child_at_once() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    code = "from proagent.orphan import exit_when_orphaned\nimport time\nexit_when_orphaned(-1)\ntime.sleep(60)\n"
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-c", code], env=env, timeout=30)
    assert r.returncode == 0 and time.monotonic() - t0 < 20
