"""Typed records of the live agent: moments decided, offers shown, responses, a run's summary."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

__all__ = [
    "ANSWERS",
    "IMPLICIT_RESPONSES",
    "RESPONSES",
    "Question",
    "DecisionSummary",
    "Latency",
    "LearningManifest",
    "LiveDecision",
    "Offer",
    "Response",
]

Response = Literal["accepted", "dismissed", "not_now", "ignored"]
"""What the user did with an offer: accepted it, dismissed it, asked for it
later ("not now"), or let it expire unanswered (``ignored``)."""

RESPONSES: tuple[str, ...] = ("accepted", "dismissed", "not_now", "ignored")
"""Every :data:`Response`, in that order."""

IMPLICIT_RESPONSES: tuple[str, ...] = ("missed", "quiet_focus")
"""Labels of quiet moments read from what the person did next (``feedback.db`` table ``implicit``,
:mod:`proagent.live._implicit`): ``missed`` (they turned to an LLM on their own: help was needed)
and ``quiet_focus`` (they kept working in the same app: a weak "not needed")."""

ANSWERS: tuple[str, ...] = ("yes", "no")
"""Answers to a sparse question "Would help have been useful just now?" (``--ask-rate``,
:mod:`proagent.live._ask`; ``feedback.db`` table ``question_answers``)."""


@dataclass(frozen=True)
class Question:
    """A sparse question asked about a quiet moment (``proagent live --ask-rate``)."""

    id: int
    """Row id in ``feedback.db`` (``questions.id``)."""
    sample_id: str
    """The moment asked about (:attr:`proagent.records.Sample.id`)."""
    moment: datetime
    """The moment t (naive local time of the activity log)."""
    asked_at: datetime
    """When it was asked (the loop's clock; the per-day budget counts these)."""
    app_name: str = ""
    """The app in front at the moment."""
    p_help: float | None = None
    """The learner's P(help) at the moment (0-1)."""


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
    said Yes and the How model, answering within the offer wait, said No (an answer
    after the offer was shown leaves it shown: ``offer`` with reason ``how_said_no``)."""
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
    offer_seconds: float | None = None
    """Latency from the moment being noticed to its offer being shown, seconds (an offer
    shown before its How answer came: less than ``decide_seconds + how_seconds``)."""
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


@dataclass(frozen=True)
class LearningManifest:
    """What the live decider learned from a folder's answers (``learning/manifest.json``,
    written by :class:`proagent.live.LearningWhen` and :func:`proagent.live.reset_learning`).

    :meth:`to_json` writes the keys in the order proagent always wrote them: the learner's
    settings (``method`` .. ``costs``) only when a learner wrote the file (a reset of a folder
    that never learned has none), ``model`` only when one was fitted (a reset drops it).
    """

    last_response_id: int = 0
    """Highest ``responses.id`` of ``feedback.db`` already learned from (or skipped)."""
    reset_after_response_id: int = 0
    """Answers up to this ``responses.id`` are forgotten (``proagent live reset-learning``)."""
    n: int = 0
    """Answers learned from."""
    n_positive: int = 0
    """Of those, accepted offers (help was needed)."""
    last_implicit_id: int = 0
    """Highest ``implicit.id`` of ``feedback.db`` already learned from (or skipped)."""
    reset_after_implicit_id: int = 0
    """Implicit labels up to this ``implicit.id`` are forgotten (``proagent live reset-learning``)."""
    last_answer_id: int = 0
    """Highest ``question_answers.id`` of ``feedback.db`` already learned from (sparse questions)."""
    reset_after_answer_id: int = 0
    """Answers to questions up to this ``question_answers.id`` are forgotten (``proagent live reset-learning``)."""
    learned_from: tuple[Mapping[str, Any], ...] = ()
    """Each answer learned from: its response and offer ids, ``label`` (1 accepted, 0 not) and ``weight``."""
    updated: str = ""
    """UTC time of the write, ISO 8601 (seconds)."""
    method: str | None = None
    """The learning method (:class:`proagent.agent.decider.LearnConfig`), ``None`` when no learner wrote it."""
    config: Mapping[str, Any] | None = None
    """The learner's settings (``LearnConfig`` as a JSON object)."""
    decider: Mapping[str, Any] | None = None
    """The population decider learned on: ``path``, ``model_sha256``, ``n_features``."""
    threshold: float | None = None
    """Offer at P(help) >= this (0-1)."""
    costs: Mapping[str, float] | None = None
    """``false_alarm`` and ``miss`` costs the threshold came from, ``None`` when given directly."""
    model: Mapping[str, Any] | None = None
    """The personal model's description (:meth:`proagent.agent.decider.PersonalModel.describe`)."""
    regime: Mapping[str, Any] | None = None
    """How the decider offers now: ``regime`` (``rank`` on day one, then ``cost``), ``labels``,
    ``day_one_labels``, ``max_per_hour`` and ``text`` (:attr:`proagent.live.LearningWhen.regime`)."""
    format: str = "proagent-live-learning"
    """:data:`proagent.live.LEARNING_FORMAT`."""

    def to_json(self) -> dict[str, Any]:
        """The ``learning/manifest.json`` object (see the class docstring for which keys)."""
        d: dict[str, Any] = {"format": self.format}
        if self.method is not None:
            d.update(
                method=self.method,
                config=None if self.config is None else dict(self.config),
                decider=None if self.decider is None else dict(self.decider),
                threshold=self.threshold,
                costs=None if self.costs is None else dict(self.costs),
            )
        d.update(last_response_id=self.last_response_id, reset_after_response_id=self.reset_after_response_id)
        if self.last_implicit_id or self.reset_after_implicit_id:  # files without implicit labels read as before
            d.update(last_implicit_id=self.last_implicit_id, reset_after_implicit_id=self.reset_after_implicit_id)
        if self.last_answer_id or self.reset_after_answer_id:  # likewise for answers to sparse questions
            d.update(last_answer_id=self.last_answer_id, reset_after_answer_id=self.reset_after_answer_id)
        d.update(n=self.n, n_positive=self.n_positive)
        if self.model is not None:
            d["model"] = dict(self.model)
        if self.regime is not None:
            d["regime"] = dict(self.regime)
        d.update(learned_from=[dict(r) for r in self.learned_from], updated=self.updated)
        return d

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LearningManifest:
        """The record of a parsed manifest (unknown keys are ignored; a missing one reads as its default).

        Raises:
            TypeError, ValueError: a field has the wrong type.
        """
        return cls(
            last_response_id=int(data.get("last_response_id") or 0),
            reset_after_response_id=int(data.get("reset_after_response_id") or 0),
            last_implicit_id=int(data.get("last_implicit_id") or 0),
            reset_after_implicit_id=int(data.get("reset_after_implicit_id") or 0),
            last_answer_id=int(data.get("last_answer_id") or 0),
            reset_after_answer_id=int(data.get("reset_after_answer_id") or 0),
            n=int(data.get("n") or 0),
            n_positive=int(data.get("n_positive") or 0),
            learned_from=tuple(dict(r) for r in data.get("learned_from") or ()),
            updated=str(data.get("updated") or ""),
            method=data.get("method"),
            config=data.get("config"),
            decider=data.get("decider"),
            threshold=data.get("threshold"),
            costs=data.get("costs"),
            model=data.get("model"),
            regime=data.get("regime") if isinstance(data.get("regime"), Mapping) else None,
            format=str(data.get("format") or "proagent-live-learning"),
        )
