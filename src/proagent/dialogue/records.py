"""Typed records of the ProactiveEval track (Liu et al. 2025, arXiv 2508.20973).

An :class:`Environment` is one benchmark item: what the assistant knows about a
user, the event that triggers it, and the reference target with its
sub-targets. A :class:`Plan` is an agent's answer to target planning, a
:class:`Judgement` a judge's verdict, a :class:`Turn` one message of a guided
dialogue; a :class:`GenerationYield` what an environment-generation run kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "AGREEABLENESS",
    "DIMENSIONS",
    "DOMAINS",
    "TIERS",
    "Environment",
    "GenerationYield",
    "GuidanceJudgement",
    "Judgement",
    "Plan",
    "RoundYield",
    "Turn",
]

DOMAINS = (
    "recommendation",
    "persuasion",
    "ambiguous_instruction",
    "long_term_follow_up",
    "system_operation",
    "glasses_assistant",
)
"""ProactiveEval's six domains. Other domain names are accepted (your own domain)."""

TIERS = ("fair", "hard")
"""Difficulty tiers of generated environments (a reasoner found the target / none did)."""

AGREEABLENESS = ("low", "medium", "high")
"""Agreeableness levels of the simulated user."""

DIMENSIONS = ("effectiveness", "personalization", "tone", "engagement", "naturalness")
"""The five dimensions of the dialogue-guidance judge."""


@dataclass(frozen=True)
class Environment:
    """One ProactiveEval item."""

    id: str
    """Unique item id (generated as ``{domain}-{tier}-{index}`` when the file has none)."""
    domain: str
    """Domain, one of :data:`DOMAINS` or a user-defined one."""
    topic: str
    """Topic path in the topic tree, e.g. ``hobbies/outdoor/cycling`` (may be empty)."""
    user_information: str
    """What the assistant knows about the user (``environment.user_information``)."""
    trigger_factor: str
    """The event that makes the assistant act now (``environment.trigger_factor``)."""
    target: str
    """Reference target: what the assistant should proactively achieve."""
    sub_target: tuple[str, ...]
    """Reference sub-targets, the steps toward the target, in order."""
    tier: str | None = None
    """``fair`` or ``hard`` when known (from the file name or the item), else None."""
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    """Other fields of the item, kept so that writing it back loses nothing."""

    def to_item(self) -> dict[str, Any]:
        """The item in the published JSON format (extra fields included)."""
        item: dict[str, Any] = dict(self.extra)
        item.update(
            {
                "id": self.id,
                "domain": self.domain,
                "topic": self.topic,
                "environment": {"user_information": self.user_information, "trigger_factor": self.trigger_factor},
                "target": self.target,
                "sub_target": list(self.sub_target),
            }
        )
        if self.tier:
            item["tier"] = self.tier
        return item


@dataclass(frozen=True)
class Plan:
    """An agent's answer to target planning."""

    target: str | None
    """The proposed target, or None when the answer could not be parsed."""
    sub_target: tuple[str, ...] = ()
    """The proposed sub-targets."""
    parse_method: str = "unparsed"
    """How the answer was read: ``json``, ``json-repair``, ``lines`` or ``unparsed``."""

    @property
    def parsed(self) -> bool:
        """Whether a target was found."""
        return self.target is not None


@dataclass(frozen=True)
class Judgement:
    """A judge's reasoning and 1-10 score."""

    score: float | None
    """Score 1-10, or None when the judge's answer had no readable score (counted as unparsed)."""
    reasoning: str
    """The judge's reasoning (the text before the score)."""
    raw: str = ""
    """The judge's whole answer."""

    @property
    def parsed(self) -> bool:
        """Whether a score was found."""
        return self.score is not None


@dataclass(frozen=True)
class GuidanceJudgement(Judgement):
    """The dialogue-guidance judge's verdict: overall score plus five dimensions."""

    dimensions: dict[str, float | None] = field(default_factory=dict)
    """Score 1-10 per dimension of :data:`DIMENSIONS` (None where unreadable)."""


@dataclass(frozen=True)
class Turn:
    """One message of a guided dialogue."""

    role: Literal["assistant", "user"]
    """``assistant`` (the proactive agent) or ``user`` (the simulated user)."""
    content: str
    """The message text."""


@dataclass(frozen=True)
class RoundYield:
    """One difficulty round of environment generation: the topics judged in it and their verdicts."""

    round: int
    """Round number (0: the environment as written; later rounds obfuscated and noised)."""
    tested: int
    """Topics judged in this round."""
    easy: int
    """Of those, judged easy (a reasoner found the target without effort)."""
    fair: int
    """Judged fair."""
    hard: int
    """Judged hard (no reasoner found the target)."""


@dataclass(frozen=True)
class GenerationYield:
    """What an environment-generation run yielded (``yield.json``,
    :func:`proagent.dialogue.generator.generate`); :meth:`to_json` keeps the file's old keys."""

    topics: int
    """Topics in the tree."""
    per_round: tuple[RoundYield, ...]
    """Each round, from round 0 to ``max_rounds``."""
    status: dict[str, int]
    """Topics by final status (``kept``, ``dropped: ...``, ``failed: ...``, ``unfinished``), in first-seen order."""
    kept_fair: int
    """Kept environments of the fair tier."""
    kept_hard: int
    """Kept environments of the hard tier."""

    def to_json(self) -> dict[str, Any]:
        """``{"topics", "per_round": [{"round", "tested", "easy", "fair", "hard"}], "status", "kept": {"fair", "hard"}}``."""
        return {
            "topics": self.topics,
            "per_round": [vars(r).copy() for r in self.per_round],
            "status": dict(self.status),
            "kept": {"fair": self.kept_fair, "hard": self.kept_hard},
        }
