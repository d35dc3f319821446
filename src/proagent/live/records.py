"""Typed records of the live agent: moments decided, offers shown, responses, a run's summary."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

__all__ = ["RESPONSES", "DecisionSummary", "Latency", "LiveDecision", "Offer", "Response"]

Response = Literal["accepted", "dismissed", "not_now", "ignored"]
"""What the user did with an offer: accepted it, dismissed it, asked for it
later ("not now"), or let it expire unanswered (``ignored``)."""

RESPONSES: tuple[str, ...] = ("accepted", "dismissed", "not_now", "ignored")
"""Every :data:`Response`, in that order."""


@dataclass(frozen=True)
class Offer:
    """A help offer made to the user (How to Assist output, shown by a notifier)."""

    id: int
    """Row id in ``feedback.db`` (``offers.id``)."""
    sample_id: str
    """The moment the offer answers (:attr:`proagent.records.Sample.id`)."""
    moment: datetime
    """The moment t (naive local time of the activity log)."""
    text: str
    """The short offer shown to the user (one or two sentences)."""
    query: str | None = None
    """The question the model expects the user would ask (How to Assist)."""
    intention: str | None = None
    """Predicted intention category (one of the taxonomy), when given."""
    p_help: float | None = None
    """The decider's probability that help is needed now (0-1)."""
    app_name: str = ""
    """Foreground application of the moment's current state."""


@dataclass(frozen=True)
class LiveDecision:
    """One When-to-Assist decision of the live loop, as written to ``decisions.jsonl``."""

    sample_id: str
    """The moment decided (:attr:`proagent.records.Sample.id`)."""
    moment: datetime
    """The moment t (naive local time of the activity log)."""
    trigger: Literal["event", "tick"]
    """``event``: a new event row started at t; ``tick``: ``--every`` seconds
    passed within a long event."""
    outcome: Literal["offer", "no", "held", "skipped", "no_offer"]
    """``offer``: an offer was shown; ``no``: the decider said No; ``held``:
    the decider said Yes but restraint held the offer back (``reason``);
    ``skipped``: not decided at all (paused, quiet hours, blocked or
    call/full-screen app, no context; ``reason``); ``no_offer``: the decider
    said Yes but the How model wrote no usable offer."""
    reason: str = ""
    """Why a moment was held or skipped (e.g. ``max_per_hour``, ``cooldown``, ``stale``,
    ``quiet_hours``, ``blocked_app``, ``call_app``, ``paused``, ``no_context``)."""
    p_help: float | None = None
    """The decider's probability that help is needed (0-1); ``None`` when skipped."""
    decide_seconds: float | None = None
    """Latency from the moment being noticed (new row read) to the When
    decision, seconds; includes building the sample."""
    how_seconds: float | None = None
    """Seconds spent in the How model call (``None`` without one)."""
    offer_id: int | None = None
    """``feedback.db`` offer id when an offer was made."""
    notification: str | None = None
    """The text shown (or, in replay, that would be shown)."""
    label: int | None = None
    """Ground truth of the moment when the log has one (replay), else ``None``."""


@dataclass(frozen=True)
class Latency:
    """Percentiles of one latency over a run's decisions (seconds)."""

    p50: float
    """Median (numpy's linear percentile)."""
    p95: float
    """95th percentile."""
    n: int
    """Decisions measured."""


@dataclass(frozen=True)
class DecisionSummary:
    """What a run decided, for the command's last lines (:func:`proagent.live.summarise`)."""

    moments: int
    """Moments decided."""
    outcomes: Mapping[str, int]
    """Decisions by outcome (``offer``, ``no``, ``held``, ...), in first-seen order."""
    reasons: Mapping[str, int]
    """Held or skipped decisions by reason (restraint rule, pause, ...), in first-seen order."""
    decide_seconds: Latency | None
    """Time of the When decision; ``None`` when none was measured."""
    how_seconds: Latency | None
    """Time of the How call; ``None`` when none was made."""
    offer_seconds: Latency | None
    """Decision plus How call of the offers shown; ``None`` when none was."""
