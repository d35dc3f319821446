"""The machine to itself, or nearly, for a stretch of real time under pytest-xdist.

``scripts/test.sh`` runs test files side by side (two pytest-xdist workers; three with ``--all``). A test that
measures real time or a real rate (the scripted desktop day's capture keeping OCR up at
1 per 2 s, the soak's events and memory) would then share the two cores with whatever the
other workers run, and be slower than it is alone. Every test holds its worker's lock, shared,
while it runs (``tests/conftest.py``); :func:`alone` (or the ``solo`` marker, for a whole test)
holds back the other workers: each one as soon as its current test ends, none starting its next
test until the stretch is over. ``alone(beside=1)`` holds back all but one of them (the first
ones whose tests end are held, the rest go on): for a real-time stretch that leaves most of the
cores idle (the desktop day's capture and script: 80-97% idle on 2 cores in a CI rehearsal), one
other worker goes on beside it instead of the machine idling, which is also how a person runs
capture: beside other work.

The locks are ``flock`` on files named by xdist's run id (``PYTEST_XDIST_TESTRUNUID``) and worker
ids (``PYTEST_XDIST_WORKER``, ``gw0`` ..., of ``PYTEST_XDIST_WORKER_COUNT``) in the temporary
folder: per worker, ``w-<id>`` (shared by its test; exclusive while it is held back) and
``t-<id>`` (taken briefly before the shared lock, held while it is held back, so a held worker
waits at its next test's start instead of racing for its lock); and one ``alone`` lock,
exclusive, so two stretches take turns. Without xdist all are no-ops.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["alone", "shared", "waited_s"]

_FDS: dict[str, int] = {}
_WAITED = [0.0]
_POLL_S = 0.05
"""How often a stretch waiting to hold back other workers looks again whose test has ended, s."""


def waited_s() -> float:
    """Seconds this process has spent waiting for the locks so far (held back by another
    worker's :func:`alone`, or an :func:`alone` waiting for the other workers' tests)."""
    return _WAITED[0]


def _lock(fd: int, how: int) -> None:
    t0 = time.monotonic()
    fcntl.flock(fd, how)
    _WAITED[0] += time.monotonic() - t0


def _run() -> tuple[str, str, list[str]] | None:
    """(run id, this worker's id, the other workers' ids), or None without xdist."""
    run, me = os.environ.get("PYTEST_XDIST_TESTRUNUID"), os.environ.get("PYTEST_XDIST_WORKER")
    if not run or not me:
        return None
    n = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    return run, me, [f"gw{i}" for i in range(n) if f"gw{i}" != me]


def _fd(run: str, name: str) -> int:
    if name not in _FDS:
        path = Path(tempfile.gettempdir()) / f"proagent-tests-{run}.{name}.lock"
        _FDS[name] = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    return _FDS[name]


@contextlib.contextmanager
def shared() -> Iterator[None]:
    """Hold this worker's lock, shared (what every test does while it runs; waits while another
    worker's :func:`alone` holds this worker back)."""
    ids = _run()
    if ids is None:
        yield
        return
    run, me, _ = ids
    mine, turn = _fd(run, f"w-{me}"), _fd(run, f"t-{me}")
    _lock(turn, fcntl.LOCK_EX)
    _lock(mine, fcntl.LOCK_SH)
    fcntl.flock(turn, fcntl.LOCK_UN)
    try:
        yield
    finally:
        fcntl.flock(mine, fcntl.LOCK_UN)


def _try(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextlib.contextmanager
def alone(beside: int = 0) -> Iterator[None]:
    """Run the body while at most ``beside`` other workers run tests (from inside a test or its
    fixture, which hold this worker's shared lock: it is given up first, so two workers asking at
    once take turns instead of waiting on each other).

    Every other worker is stopped at its next test's start at once; as soon as all but ``beside``
    of them have ended their current tests, those are held and the others let go on.
    """
    ids = _run()
    if ids is None:
        yield
        return
    run, me, others = ids
    mine = _fd(run, f"w-{me}")
    fcntl.flock(mine, fcntl.LOCK_UN)
    gate = _fd(run, "alone")
    _lock(gate, fcntl.LOCK_EX)
    turned: list[str] = []  # the workers stopped at their next test's start
    held: list[str] = []  # ... and whose current test has ended
    try:
        t0 = time.monotonic()
        want = max(0, len(others) - max(0, beside))
        for o in others:
            fcntl.flock(_fd(run, f"t-{o}"), fcntl.LOCK_EX)
            turned.append(o)
        while len(held) < want:
            for o in turned:
                if len(held) < want and o not in held and _try(_fd(run, f"w-{o}")):
                    held.append(o)
            if len(held) < want:
                time.sleep(_POLL_S)
        for o in [o for o in turned if o not in held]:  # the rest go on beside the stretch
            fcntl.flock(_fd(run, f"t-{o}"), fcntl.LOCK_UN)
            turned.remove(o)
        _WAITED[0] += time.monotonic() - t0
        yield
    finally:
        for o in held:
            fcntl.flock(_fd(run, f"w-{o}"), fcntl.LOCK_UN)
        for o in turned:
            fcntl.flock(_fd(run, f"t-{o}"), fcntl.LOCK_UN)
        fcntl.flock(mine, fcntl.LOCK_SH)
        fcntl.flock(gate, fcntl.LOCK_UN)
