"""Analyses of guided dialogues (ProactiveEval section 5).

* **Metadata leaks**: the agent writes its plan's scaffolding into the dialogue
  ("sub-target 1:", "turn 2", "Target:"), found by :data:`LEAK_RE`.
* **Passive opening**: the opening message reacts as if the user had spoken
  ("It sounds like...", "How can I help?") instead of starting proactively,
  found by :data:`PASSIVE_RE`.
* **Target density**: sub-targets raised per agent message, and in the first
  message, read by an extraction judge (:func:`proagent.dialogue.judges.extract_mentioned`);
  the judge's answers are aggregated here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from statistics import mean

from .records import Turn

__all__ = ["LEAK_RE", "PASSIVE_RE", "density", "leaks", "passive_opening"]

LEAK_RE = re.compile(
    r"\bsub[\s_-]?targets?\b(?:\s*#?\s*\d+)?"
    r"|\bturn\s*#?\s*\d+\b"
    r"|(?:^|\n)\s*[*_]*\s*(?:target|goal|plan)\s*[*_]*\s*:"
    r"|\[\s*(?:turn|step|sub)[^\]]*\]",
    re.IGNORECASE,
)
"""Plan scaffolding that should never reach the user."""

PASSIVE_RE = re.compile(
    r"^\W*(?:(?:hi|hello|hey)(?:\s+there)?\W+)?(?:"
    r"it\s+(?:sounds|seems|looks)\s+like|sounds\s+like|that\s+sounds|i\s+understand|i\s+hear\s+(?:you|that)"
    r"|thanks?\s+(?:you\s+)?for\s+(?:sharing|asking|reaching|telling)|how\s+(?:can|may)\s+i\s+(?:help|assist)"
    r"|what\s+can\s+i\s+(?:do|help)|is\s+there\s+anything\s+i\s+can"
    r")",
    re.IGNORECASE,
)
"""An opening that answers a request nobody made."""


def leaks(turns: Sequence[Turn]) -> list[str]:
    """Every leak found in the agent's messages (empty when clean)."""
    return [m.group(0).strip() for t in turns if t.role == "assistant" for m in LEAK_RE.finditer(t.content)]


def passive_opening(turns: Sequence[Turn]) -> bool:
    """Whether the agent's first message is a passive opening."""
    first = next((t.content for t in turns if t.role == "assistant"), "")
    return bool(PASSIVE_RE.search(first))


def density(mentioned: Sequence[list[int] | None]) -> dict[str, float | int | None]:
    """Target density from the extraction judge's answer per agent message.

    Returns ``per_message`` (mean sub-targets per readable message), ``first``
    (sub-targets in the first message, None if unreadable) and ``unparsed``
    (messages whose extraction was unreadable).
    """
    readable = [len(m) for m in mentioned if m is not None]
    return {
        "per_message": round(mean(readable), 3) if readable else None,
        "first": (len(mentioned[0]) if mentioned and mentioned[0] is not None else None),
        "unparsed": sum(m is None for m in mentioned),
    }
