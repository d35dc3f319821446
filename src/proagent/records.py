"""Typed records shared by every stage of proagent.

Readers (``proagent.sources``) produce :class:`Event` and :class:`Screenshot`
records; ``proagent.bench`` turns them into :class:`Sample` records; methods
(``proagent.agent``) turn samples into :class:`Prediction` records; scorers
turn predictions into :class:`Score` records.

All records are frozen dataclasses so they can be hashed, cached and shared
between threads. Times are naive local ``datetime`` values, as LifeTrace
stores them (ProAgentBench section 5.1, Appendix B; docs/architecture.md, formats); durations are seconds.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from itertools import accumulate
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "Conversation",
    "Event",
    "Label",
    "MIN_EVENT_SECONDS",
    "Prediction",
    "Sample",
    "Score",
    "Screenshot",
    "context_reach",
    "window_context",
]

MIN_EVENT_SECONDS = 3.0
"""Events shorter than this are not real activity (seconds; ProAgentBench Appendix B.3:
events under 3 s are excluded)."""

Label = Literal[0, 1]
"""When-to-Assist ground truth: 1 = the user needs help now, 0 = not."""


@dataclass(frozen=True)
class Screenshot:
    """One 1 Hz screen capture (LifeTrace ``screenshots`` row)."""

    id: int
    """Row id in the source database."""
    time: datetime
    """Capture time (naive local time)."""
    app_name: str
    """Foreground application at capture time."""
    window_title: str
    """Foreground window title at capture time."""
    file_name: str
    """File name (``screen_{screen_id}_{YYYYmmdd_HHMMSS_mmm}.png``); the capture-side
    directory is dropped."""
    path: Path | None = None
    """Local file, resolved by file name against the screenshots folder; ``None``
    when the file is missing on this machine."""
    ocr_text: str = ""
    """OCR text of the screenshot (joined ``ocr_results`` rows), possibly empty."""
    width: int | None = None
    """Width in pixels, when recorded."""
    height: int | None = None
    """Height in pixels, when recorded."""
    file_hash: str | None = None
    """Content hash recorded by the capture app (SHA-256 in ProAgentBench)."""
    focused: bool | None = None
    """True when this screen held the focused window at capture time (``proagent capture``'s
    ``screenshots.focused`` column, one screen per tick); ``None`` when not recorded (a
    LifeTrace or ProAgentBench log, an older capture): see :attr:`Event.focused_screenshots`."""


@dataclass(frozen=True)
class Conversation:
    """What the user asked an LLM during an LLM-use event (ProAgentBench
    ``events.conversation`` JSON)."""

    user_queries: tuple[str, ...] = ()
    """The user's messages to the LLM, in order. The first is the How-to-Assist
    reference query."""
    llm_responses: tuple[str, ...] = ()
    """The LLM's replies, in order."""
    full_conversation: str = ""
    """The whole conversation as recorded (free text or JSON text)."""

    @property
    def is_empty(self) -> bool:
        """True when no user query was recorded."""
        return not any(q.strip() for q in self.user_queries)


@dataclass(frozen=True)
class Event:
    """A stretch of activity in one foreground application (LifeTrace ``events``
    row, or one ProactiveBench observation)."""

    id: str
    """Event id, unique within its user (the database row id as text, or
    ``{session}:{index}`` for ProactiveBench)."""
    user: str
    """Participant or session the event belongs to."""
    start: datetime
    """Start time (naive local time)."""
    end: datetime | None
    """End time; ``None`` for the still-open last event of a live capture."""
    app_name: str = ""
    """Foreground application (empty when the source has none)."""
    window_title: str = ""
    """Window title at the start of the event (empty when the source has none)."""
    summary: str = ""
    """One-line description of the screen or activity (``event_summary``, an
    AI summary, or the ProactiveBench event sentence)."""
    description: str = ""
    """Longer description (ProAgentBench ``detailed_description``)."""
    screenshots: Sequence[Screenshot] = ()
    """Screenshots of the event, oldest first; soft-deleted rows are excluded. A tuple, or
    from the LifeTrace reader a read-only sequence equal to one that makes its records on
    first use (``len`` needs none)."""
    is_llm_event: bool | None = None
    """True when the user turned to an LLM in this event; ``None`` when unknown."""
    conversation: Conversation | None = None
    """The LLM conversation of an LLM-use event, when recorded."""
    intention: str | None = None
    """Intention category of the LLM use (one of the 16 categories of ProAgentBench section 3, ``data/intentions.json``)."""
    intention_confidence: float | None = None
    """Annotator confidence in ``intention`` (0-1), when given."""
    llm_platform: str | None = None
    """LLM product used (e.g. ``ChatGPT``), when annotated."""
    needs_help: bool | None = None
    """Ground-truth help need at this moment, when the source labels every event
    (ProactiveBench ``task_status``)."""
    candidate_tasks: tuple[str, ...] = ()
    """Reference help offers for this moment (ProactiveBench ``candidate_task``)."""
    url: str | None = None
    """Browser URL of the event's page, when the source records one (ActivityWatch's web
    watcher, screenpipe's ``browser_url``)."""
    screen_recorded: bool = True
    """False for sources that record no screen at all (ActivityWatch: app, title and URL only):
    :meth:`is_activity` then asks only for the duration, since no screenshot can exist."""

    @property
    def focused_screenshots(self) -> tuple[Screenshot, ...]:
        """The screenshots of the screen that held the focused window, oldest first: those
        marked ``focused`` when the log records it (multi-monitor capture), else all of them.
        Where one screen is shown (the prompt's current screen, annotate's samples), it is this."""
        shots = tuple(self.screenshots)
        if not any(s.focused for s in shots):
            return shots  # not recorded: every screen
        return tuple(s for s in shots if s.focused)

    @property
    def duration(self) -> float | None:
        """Duration in seconds, or ``None`` while the event is open."""
        if self.end is None:
            return None
        return (self.end - self.start).total_seconds()

    def is_activity(self, min_seconds: float = MIN_EVENT_SECONDS) -> bool:
        """True for real activity, the one valid-event rule of ProAgentBench Appendix B.3:
        at least ``min_seconds`` long (or still open) and at least one screenshot (none needed
        from a source that records no screen, ``screen_recorded=False``)."""
        d = self.duration
        return (d is None or d >= min_seconds) and (len(self.screenshots) >= 1 or not self.screen_recorded)

    @property
    def is_llm_use(self) -> bool:
        """True for an LLM-use event with a recorded, non-empty conversation (B.3 keeps
        only such LLM events; a flagged one without it marks LLM use but shows no query).

        A source that records no screen (``screen_recorded`` false: ActivityWatch) can never
        record the conversation: there a flagged event (LLM platform in its title or URL) is LLM
        use without one, a When-to-Assist positive with no How-to-Assist reference."""
        if not self.is_llm_event:
            return False
        if not self.screen_recorded:
            return True
        return self.conversation is not None and not self.conversation.is_empty


@dataclass(frozen=True)
class Sample:
    """One evaluated moment t of one user: When-to-Assist label and How-to-Assist
    references, with the observation O_1:t the model sees."""

    id: str
    """Stable id, unique within a dataset (``{user}:{event_id}:{kind}``)."""
    user: str
    """User or session id (per-user isolation: memory never crosses users)."""
    time: datetime
    """The moment t being judged."""
    label: Label
    """When-to-Assist ground truth B_t."""
    split: Literal["train", "test"]
    """Time-based split within the user."""
    kind: Literal["positive", "hard_negative", "negative", "labelled", "candidate"]
    """How the sample was made: the start of an LLM-use event, a hard negative, a
    plain negative, a moment labelled by the source (ProactiveBench), or any
    candidate time point of a LifeTrace log (synthetic baseline)."""
    context: tuple[Event, ...]
    """Events before t within the context window, oldest first (never the LLM
    event being predicted)."""
    current: Event
    """The current state: the event in progress just before t."""
    window_seconds: float
    """Context window in seconds used to select ``context``."""
    reference_queries: tuple[str, ...] = ()
    """How-to-Assist references: the real user query, or the candidate tasks."""
    intention: str | None = None
    """How-to-Assist intention ground truth, when known."""
    event_id: str | None = None
    """Id of the event the label comes from (the LLM event for positives)."""


@dataclass(frozen=True)
class Prediction:
    """A method's answer for one sample, parsed."""

    sample_id: str
    """The sample this answers."""
    needs_help: bool | None
    """Predicted B_t; ``None`` when the answer could not be parsed."""
    intention: str | None = None
    """Predicted intention category, when given and recognised."""
    query: str | None = None
    """Predicted user query (How to Assist), when given."""
    confidence: float | None = None
    """Confidence in ``needs_help`` (self-consistency vote fraction), 0-1."""
    parse_method: str = ""
    """Which step of the parsing cascade produced ``needs_help`` (``explicit``,
    ``cot_step3``, ``keyword``, ``json``) or ``unparsed``."""
    raw: str = ""
    """The model's raw answer text."""
    p_yes: float | None = None
    """P(Yes) / (P(Yes) + P(No)) at the decision token, from token log-probabilities
    (:mod:`proagent.agent.calibration`); ``None`` when they were not requested or
    the answer has no ``Need help:`` decision."""

    @property
    def unparsed(self) -> bool:
        """True when no When-to-Assist decision could be read from the answer."""
        return self.needs_help is None

    @classmethod
    def from_json(cls, data: Prediction | Mapping[str, Any]) -> Prediction:
        """The record from its JSON form (``dataclasses.asdict``, as a solver stores it in the
        sample metadata and the scorer in an eval log); a record is returned as is. Keys
        that are not fields are ignored; missing fields take their defaults.

        Raises:
            TypeError: ``data`` has no ``sample_id`` or ``needs_help``.
        """
        if isinstance(data, Prediction):
            return data
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class Score:
    """Per-sample scores of one prediction."""

    sample_id: str
    """The sample scored."""
    label: Label
    """Ground truth B_t."""
    predicted: Label | None
    """Predicted B_t, ``None`` when unparsed."""
    intention_correct: bool | None = None
    """Intention accuracy term; ``None`` when the sample has no intention label."""
    semantic_similarity: float | None = None
    """Cosine similarity (-1..1) of the predicted query to the best reference;
    ``None`` when the sample has no reference or no query was predicted on a
    positive sample (then it counts as 0 in the mean)."""
    seconds: float | None = None
    """Wall time spent on the sample, in seconds."""
    tokens: int | None = None
    """Tokens used on the sample (input + output)."""
    extra: dict[str, float] = field(default_factory=dict)
    """Further per-sample values (e.g. cached input tokens)."""


def context_reach(events: list[Event]) -> list[datetime]:
    """For time-ordered ``events``: the latest end (or start, for an open event) of
    ``events[: i + 1]`` at each ``i``, so :func:`window_context` can skip the events
    that end before a window without looking at them."""
    return list(accumulate((e.end or e.start for e in events), max))


def window_context(
    events: list[Event], upto: int, t: datetime, window: float, *, reach: list[datetime] | None = None
) -> tuple[Event, ...]:
    """The context of moment ``t``: events before index ``upto`` (of time-ordered
    ``events``) that overlap [t - window, t); ``window`` in seconds (ProAgentBench section
    5.1's context window; the benchmark's samples and the synthetic traces' share one rule). ``reach``
    (:func:`context_reach` of ``events``) makes it O(log n + window) instead of O(upto)."""
    lo = t - timedelta(seconds=window)
    first = bisect_left(reach, lo, 0, upto) if reach is not None and upto > 0 else 0
    return tuple(e for e in events[first:upto] if (e.end or e.start) >= lo)
