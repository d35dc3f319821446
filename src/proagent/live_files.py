"""The names ``proagent live`` writes in its ``--out`` folder.

``live``'s default ``--out`` is the folder of the log it watches, so a capture folder often
holds these too; :func:`proagent.capture.check_capture_folder` accepts them there. They live
in this small module, outside :mod:`proagent.live`, because ``live`` imports ``capture``:
capture reads the list here, and ``live`` takes each name from here too (one source).
"""

from __future__ import annotations

__all__ = [
    "BLOCKED_APPS_FILE",
    "DECISIONS_FILE",
    "FEEDBACK_DB",
    "LEARNING_DIR",
    "LIVE_NAMES",
    "PAGE_URL_FILE",
    "PAUSE_FILE",
    "RUN_FILE",
]

FEEDBACK_DB = "feedback.db"
"""Offers, responses and decisions (SQLite, WAL, 0600)."""

LEARNING_DIR = "learning"
"""Folder, beside ``feedback.db``, of what the live decider learned."""

PAUSE_FILE = "live.paused"
"""Name of the file in the live folder whose presence pauses the agent."""

BLOCKED_APPS_FILE = "blocked-apps.json"
"""Apps blocked from the page, in the live folder: ``{"apps": ["xterm", ...]}`` (0600)."""

RUN_FILE = "run.json"
"""The options a run was started with; a later run into the same folder must match them."""

DECISIONS_FILE = "decisions.jsonl"
"""One JSON line per decided moment."""

PAGE_URL_FILE = "page-url"
"""The offer page's address (with its token), for ``proagent live open``."""

LIVE_NAMES = frozenset(
    {
        FEEDBACK_DB,
        FEEDBACK_DB + "-wal",
        FEEDBACK_DB + "-shm",
        FEEDBACK_DB + "-journal",
        LEARNING_DIR,
        PAUSE_FILE,
        BLOCKED_APPS_FILE,
        RUN_FILE,
        DECISIONS_FILE,
        PAGE_URL_FILE,
    }
)
"""Every name above, with ``feedback.db``'s SQLite side files."""
