"""A helper child process that exits when its parent dies, ``kill -9`` included.

proagent's long-lived children (the llama.cpp engine of ``local/...`` models, capture's OCR worker)
run in a process group of their own, so a terminal's Ctrl-C reaches only their parent, which stops
them. When the parent is killed outright nobody stops them: :func:`exit_when_orphaned` does, from a
daemon thread that polls :func:`os.getppid` (POSIX re-parents an orphan, so the id changes) and
ends the process with :func:`os._exit`. A thread, not a check in the child's own loop: the loop's
work (an OCR pass, a generation) runs in C with the GIL released and may take many seconds on a
loaded machine, more so at the OCR worker's lowered priority (measured: 11-12 s after the recorder's
``kill -9`` with four busy loops on two cores, while the worker still held the recorder's stderr).
"""

from __future__ import annotations

import os
import threading
import time

__all__ = ["PARENT_POLL_S", "exit_when_orphaned"]

PARENT_POLL_S = 0.5
"""Seconds between the checks that the parent is alive: the most a child outlives it."""


def exit_when_orphaned(parent: int, *, poll_s: float = PARENT_POLL_S, code: int = 0) -> threading.Thread:
    """Start a daemon thread that ends this process (``os._exit(code)``, no clean-up: a SQLite
    transaction in flight is rolled back by SQLite) within ``poll_s`` seconds of the process
    ``parent`` no longer being its parent. Returns the thread. A ``parent`` that is already gone
    ends the process at the first check."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(code)

    t = threading.Thread(target=watch, name="exit-when-orphaned", daemon=True)
    t.start()
    return t
