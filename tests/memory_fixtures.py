"""Small data sets for the memory tests (ProactiveBench-shaped session files).

Every event sentence carries a unique marker ``evtNN`` (in a quoted, window-like
phrase) so a test can tell exactly which past moment reached a prompt, and a
per-user word (``alpha``, ``beta``) so a test can tell whose memory it was.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

__all__ = ["MARK", "write_session", "write_sessions"]

MARK = re.compile(r"evt(\d+)", re.IGNORECASE)
"""Finds the event index markers in prompt text."""

_STEPS = [
    ("The user edits '{w}_evt{i:02d}.py' in Visual Studio Code.", True),
    ("The user searches Google for '{w} error evt{i:02d}'.", False),
    ("The user reads a Stack Overflow answer on '{w} parsing evt{i:02d}'.", True),
    ("The user switches to the web browser and opens '{w} docs evt{i:02d}'.", False),
]


def write_session(folder: Path, name: str, word: str, n: int = 12, t0: float = 1717377997.0) -> Path:
    """One session file of ``n`` steps, 30 s apart, labels cycling over four kinds."""
    items = []
    for i in range(n):
        text, label = _STEPS[i % len(_STEPS)]
        items.append(
            {
                "observation": {"time": str(t0 + 30 * i), "event": text.format(w=word, i=i)},
                "agent_response": {"candidate_task": [f"Help with {word} step evt{i:02d}"] * 5 if label else []},
                "task_status": label,
            }
        )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(items), "utf-8")
    return path


def write_sessions(folder: Path, n: int = 12) -> Path:
    """Two users: ``alpha_1`` and ``beta_1`` (same times, different words)."""
    write_session(folder, "alpha_1", "alpha", n)
    write_session(folder, "beta_1", "beta", n)
    return folder
