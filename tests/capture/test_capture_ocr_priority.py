"""capture's OCR child yields the CPU to the person's programs and to live's answer (issue 42)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from proagent.capture import Store
from proagent.capture._ocr import OCR_NICENESS

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.mark.skipif(not hasattr(os, "nice"), reason="POSIX priorities")
def test_the_ocr_child_runs_below_the_recorders_priority(tmp_path: Path) -> None:
    store = Store(tmp_path / "cap")
    db = store.db
    store.close()
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen(
        [sys.executable, "-m", "proagent.capture._ocr", str(db), "--parent", str(os.getpid())],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        want = min(19, mine + OCR_NICENESS)
        deadline = time.monotonic() + 60
        seen = mine
        while time.monotonic() < deadline and child.poll() is None:
            seen = os.getpriority(os.PRIO_PROCESS, child.pid)
            if seen == want:
                break
            time.sleep(0.05)
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        assert seen == want, (seen, want)
    finally:
        child.terminate()
        child.wait(10)
