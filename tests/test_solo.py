"""tests/solo.py, the lock that gives a real-time stretch the machine to itself under xdist:
three processes with one run id (as two xdist workers and a third would have)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent

_CHILD = """
import sys, time
sys.path.insert(0, sys.argv[1])
import solo
role, log = sys.argv[2], sys.argv[3]
def note(what):
    with open(log, "a") as f:
        f.write(f"{time.monotonic():.4f} {role} {what}\\n")
with solo.shared():
    if role == "alone":
        with solo.alone():
            note("in"); time.sleep(0.8); note("out")
    else:
        note("in"); time.sleep(0.8); note("out")
"""


def _start(role: str, log: Path, run: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(HERE), role, str(log)], env={**os.environ, "PYTEST_XDIST_TESTRUNUID": run}
    )


def test_alone_waits_for_the_running_test_and_holds_back_the_next(tmp_path: Path) -> None:
    run, log = uuid.uuid4().hex, tmp_path / "log"
    first = _start("first", log, run)
    time.sleep(0.3)  # "first" holds the shared lock
    lone = _start("alone", log, run)
    time.sleep(0.3)  # "alone" waits for "first"; "later" must not slip in before it
    later = _start("later", log, run)
    for p in (first, lone, later):
        assert p.wait(30) == 0
    order = [line.split()[1:] for line in sorted(log.read_text().splitlines(), key=lambda x: float(x.split()[0]))]
    assert order == [
        ["first", "in"],
        ["first", "out"],
        ["alone", "in"],
        ["alone", "out"],
        ["later", "in"],
        ["later", "out"],
    ]


def test_without_xdist_both_are_no_ops(monkeypatch) -> None:  # noqa: ANN001
    import solo

    monkeypatch.delenv("PYTEST_XDIST_TESTRUNUID", raising=False)
    monkeypatch.setattr(solo, "_FDS", {})
    with solo.shared(), solo.alone():
        pass
    assert solo._FDS == {}
