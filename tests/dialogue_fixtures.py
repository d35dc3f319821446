"""Three ProactiveEval environments (one per domain) for the dialogue tests."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["ITEMS", "write_items"]

ITEMS = [
    {
        "id": f"{d}-1",
        "domain": d,
        "topic": "t",
        "environment": {"user_information": "u", "trigger_factor": "t"},
        "target": "g",
        "sub_target": ["a", "b"],
    }
    for d in ("recommendation", "persuasion", "glasses_assistant")
]


def write_items(folder: Path) -> Path:
    """``folder/envs.jsonl`` holding :data:`ITEMS`, one JSON object a line."""
    p = folder / "envs.jsonl"
    p.write_text("".join(json.dumps(i) + "\n" for i in ITEMS), "utf-8")
    return p
