"""tests/solo.py, the locks that give a real-time stretch the machine (or all but ``beside`` workers)
under xdist: processes with one run id, each playing one xdist worker running tests in turn."""

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
log = sys.argv[2]
def note(name, what):
    with open(log, "a") as f:
        f.write(f"{time.monotonic():.4f} {name} {what}\\n")
for spec in sys.argv[3:]:  # one test each: NAME:SECONDS or NAME:SECONDS:BESIDE (a stretch alone)
    name, secs, *beside = spec.split(":")
    with solo.shared():
        if beside:
            with solo.alone(beside=int(beside[0])):
                note(name, "in"); time.sleep(float(secs)); note(name, "out")
        else:
            note(name, "in"); time.sleep(float(secs)); note(name, "out")
"""


def _start(worker: int, workers: int, log: Path, run: str, *tests: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "PYTEST_XDIST_TESTRUNUID": run,
        "PYTEST_XDIST_WORKER": f"gw{worker}",
        "PYTEST_XDIST_WORKER_COUNT": str(workers),
        "TMPDIR": str(log.parent),  # the lock files
    }
    return subprocess.Popen([sys.executable, "-c", _CHILD, str(HERE), str(log), *tests], env=env)


def _events(log: Path) -> list[tuple[float, str, str]]:
    rows = [line.split() for line in log.read_text().splitlines()]
    return sorted((float(t), name, what) for t, name, what in rows)


def _wait_for(log: Path, names: set[str]) -> None:
    """Until each of ``names`` has noted "in" (a child's start takes a moment on a loaded machine)."""
    end = time.monotonic() + 30
    while time.monotonic() < end:
        if log.exists() and names <= {name for _, name, what in _events(log) if what == "in"}:
            return
        time.sleep(0.02)
    raise AssertionError(f"{names} never started")


def _wait_held(folder: Path, run: str, name: str) -> None:
    """Until :mod:`solo`'s lock ``name`` of ``run`` is held by a child (taken exclusively)."""
    import fcntl

    path, end = folder / f"proagent-tests-{run}.{name}.lock", time.monotonic() + 30
    while time.monotonic() < end:
        if path.exists():
            with path.open("rb") as f:
                try:
                    fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except BlockingIOError:
                    return
        time.sleep(0.02)
    raise AssertionError(f"{name} was never taken")


def test_alone_waits_for_the_running_test_and_holds_back_the_next(tmp_path: Path) -> None:
    run, log = uuid.uuid4().hex, tmp_path / "log"
    first = _start(0, 3, log, run, "first:0.8")
    _wait_for(log, {"first"})  # "first" holds its worker's lock
    lone = _start(1, 3, log, run, "alone:0.8:0")
    _wait_held(log.parent, run, "alone")  # "alone" waits for "first"; "later" must not slip in before it
    later = _start(2, 3, log, run, "later:0.8")
    for p in (first, lone, later):
        assert p.wait(30) == 0
    order = [(name, what) for _, name, what in _events(log)]
    assert order == [
        ("first", "in"),
        ("first", "out"),
        ("alone", "in"),
        ("alone", "out"),
        ("later", "in"),
        ("later", "out"),
    ]


def test_beside_one_holds_back_the_first_worker_to_finish_and_lets_the_other_go_on(tmp_path: Path) -> None:
    """Three workers: gw0 runs a long test then a short one, gw1 a short one then another; gw2's
    stretch with ``beside=1`` holds back gw1 (its test ended first) and lets gw0 start its next test
    during the stretch; gw1's next test waits for the stretch's end."""
    run, log = uuid.uuid4().hex, tmp_path / "log"
    w0 = _start(0, 3, log, run, "long:3", "next0:0.3")
    w1 = _start(1, 3, log, run, "short:0.3", "next1:0.3")
    _wait_for(log, {"long", "short"})  # both hold their workers' locks
    lone = _start(2, 3, log, run, "alone:3:1")
    for p in (w0, w1, lone):
        assert p.wait(30) == 0
    at = {(name, what): t for t, name, what in _events(log)}
    assert at[("alone", "in")] >= at[("short", "out")]  # waited for gw1's test, not for gw0's
    assert at[("alone", "in")] < at[("long", "out")]
    assert at[("alone", "in")] < at[("next0", "in")] < at[("alone", "out")]  # gw0 went on beside it
    assert at[("next1", "in")] >= at[("alone", "out")]  # gw1 was held back


def test_two_stretches_take_turns(tmp_path: Path) -> None:
    """Two workers asking for a stretch at once (each from inside a test) run one after the other."""
    run, log = uuid.uuid4().hex, tmp_path / "log"
    a = _start(0, 2, log, run, "a:0.5:0")
    b = _start(1, 2, log, run, "b:0.5:0")
    for p in (a, b):
        assert p.wait(30) == 0
    ev = _events(log)
    assert [what for _, _, what in ev] == ["in", "out", "in", "out"]
    assert ev[0][1] == ev[1][1] != ev[2][1] == ev[3][1]


def test_without_xdist_both_are_no_ops(monkeypatch) -> None:  # noqa: ANN001
    import solo

    monkeypatch.delenv("PYTEST_XDIST_TESTRUNUID", raising=False)
    monkeypatch.setattr(solo, "_FDS", {})
    with solo.shared(), solo.alone(), solo.alone(beside=1):
        pass
    assert solo._FDS == {}
