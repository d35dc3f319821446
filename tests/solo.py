"""The machine to itself for a stretch of real time, under pytest-xdist.

``scripts/test.sh`` runs test files side by side (two pytest-xdist workers; three with ``--all``). A test that
measures real time or a real rate (the scripted desktop day's capture keeping OCR up at
1 per 2 s, the soak's events and memory) would then share the two cores with whatever the
other workers run, and be slower than it is alone. Every test holds a shared lock while it
runs (``tests/conftest.py``); :func:`alone` (or the ``solo`` marker, for a whole test)
takes it exclusively: it waits until the other workers' current tests end, keeps the other
workers from starting their next tests, and gives the lock back afterwards.

The locks are ``flock`` on two files named by xdist's run id (``PYTEST_XDIST_TESTRUNUID``)
in the temporary folder: ``main`` (shared by tests, exclusive for :func:`alone`) and
``turnstile`` (taken briefly before a shared lock, held while an exclusive one is waited
for, so a waiting :func:`alone` is not starved). Without xdist both are no-ops.
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


def waited_s() -> float:
    """Seconds this process has spent waiting for the locks so far (a :func:`shared` lock held back
    by another worker's :func:`alone`, an :func:`alone` waiting for the other worker's test)."""
    return _WAITED[0]


def _lock(fd: int, how: int) -> None:
    t0 = time.monotonic()
    fcntl.flock(fd, how)
    _WAITED[0] += time.monotonic() - t0


def _fd(name: str) -> int | None:
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run:
        return None
    if name not in _FDS:
        path = Path(tempfile.gettempdir()) / f"proagent-tests-{run}.{name}.lock"
        _FDS[name] = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    return _FDS[name]


@contextlib.contextmanager
def shared() -> Iterator[None]:
    """Hold the shared lock (what every test does while it runs; waits while another
    worker is :func:`alone`)."""
    main, turn = _fd("main"), _fd("turnstile")
    if main is None or turn is None:
        yield
        return
    _lock(turn, fcntl.LOCK_EX)
    _lock(main, fcntl.LOCK_SH)
    fcntl.flock(turn, fcntl.LOCK_UN)
    try:
        yield
    finally:
        fcntl.flock(main, fcntl.LOCK_UN)


@contextlib.contextmanager
def alone() -> Iterator[None]:
    """Run the body while no other worker runs a test (from inside a test or its fixture,
    which hold the shared lock: it is given up first, so two workers asking at once take
    turns instead of waiting on each other)."""
    main, turn = _fd("main"), _fd("turnstile")
    if main is None or turn is None:
        yield
        return
    fcntl.flock(main, fcntl.LOCK_UN)
    _lock(turn, fcntl.LOCK_EX)
    try:
        _lock(main, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(main, fcntl.LOCK_SH)
    finally:
        fcntl.flock(turn, fcntl.LOCK_UN)
