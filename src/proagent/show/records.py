"""Typed records of ``proagent show``: one recorded day as the page shows it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

__all__ = ["Day", "ShownAnnotation", "ShownEvent", "ShownLabel", "ShownOffer", "ShownShot"]


@dataclass(frozen=True)
class ShownShot:
    """One screenshot of an event."""

    id: int
    """Index of the screenshot in :attr:`Day.images` (the page's ``/img/<id>``)."""
    time: datetime
    """When it was taken (naive local time, as the log stores it)."""
    ocr_text: str = ""
    """The text read from it, as recorded (shown through :meth:`Day.shown`), empty when none was read."""
    image: bool = False
    """Whether its image can be shown (a file is there; screenpipe's video frames are not)."""
    curated: bool = False
    """The image shown is the curated copy (``--curated``), blurred where curate blurred."""
    removed: bool = False
    """``--curated`` holds no copy of it: curate deleted it (or the event), so no image is shown."""


@dataclass(frozen=True)
class ShownAnnotation:
    """What ``proagent annotate`` recorded for an event in ``annotations.jsonl``."""

    status: str
    """``annotated``, ``default`` (every attempt failed) or ``not_candidate``."""
    confidence: float | None = None
    """The annotator's confidence, 0-1."""
    rationale: str = ""
    """Why, in the model's words (or the first pass's evidence)."""
    evidence: str = ""
    """What made the event a candidate (``title: chatgpt.com``)."""
    error: str = ""
    """Why every attempt failed (``status == "default"``)."""


@dataclass(frozen=True)
class ShownOffer:
    """An offer ``proagent live`` made (``feedback.db``), with the person's answer."""

    id: int
    """Row id in ``feedback.db``."""
    moment: datetime
    """The moment it answers (naive local time of the log)."""
    text: str
    """The offer shown."""
    query: str | None = None
    """The question the model expected."""
    intention: str | None = None
    """Predicted intention category."""
    p_help: float | None = None
    """The decider's P(help), 0-1."""
    app_name: str = ""
    """The app in front."""
    response: str | None = None
    """The latest answer (``accepted``, ``dismissed``, ...), ``None`` while unanswered."""


@dataclass(frozen=True)
class ShownLabel:
    """A label ``proagent live`` read or asked for at a quiet moment: an implicit label
    (``missed``, ``quiet_focus``) or the answer to a sparse question (``yes``, ``no``, ``None``)."""

    kind: str
    """``implicit`` or ``question``."""
    moment: datetime
    """The moment labelled."""
    response: str | None
    """``missed`` / ``quiet_focus`` (implicit), ``yes`` / ``no`` / ``None`` unanswered (question)."""
    label: int | None = None
    """1 help was needed, 0 not, ``None`` unknown."""
    weight: float | None = None
    """The implicit label's weight, 0-1."""


@dataclass(frozen=True)
class ShownEvent:
    """One event of the day, with what every stage found about it."""

    index: int
    """Position in :attr:`Day.events` (start order)."""
    id: str
    """The log's event id."""
    user: str
    """Participant (the folder name)."""
    start: datetime
    """Start (naive local time)."""
    end: datetime | None
    """End; ``None`` while open."""
    app: str
    """Foreground application."""
    title: str
    """Window title, as recorded (shown through :meth:`Day.shown`, as every text here)."""
    url: str | None = None
    """The page's address where the recorder knew it."""
    summary: str = ""
    """The event's summary (annotate's, or the recorder's)."""
    description: str = ""
    """A longer description (annotate's)."""
    llm: bool = False
    """An LLM-use event (annotate's ``is_llm_event``, or a recorded conversation)."""
    platform: str | None = None
    """The LLM product used."""
    intention: str | None = None
    """The intention category (a taxonomy name)."""
    queries: tuple[str, ...] = ()
    """The person's messages to the LLM."""
    responses: tuple[str, ...] = ()
    """The LLM's replies."""
    annotation: ShownAnnotation | None = None
    """``annotations.jsonl``'s record, when the folder has one."""
    shots: tuple[ShownShot, ...] = ()
    """Its screenshots, oldest first."""
    offers: tuple[ShownOffer, ...] = ()
    """Live's offers at moments within the event."""
    labels: tuple[ShownLabel, ...] = ()
    """Live's implicit labels and questions at moments within the event."""

    @property
    def seconds(self) -> float:
        """Duration in seconds (0 while open with no screenshot after its start)."""
        end = self.end or (self.shots[-1].time if self.shots else self.start)
        return max(0.0, (end - self.start).total_seconds())


@dataclass(frozen=True)
class Day:
    """One recorded day of a log, as the page shows it."""

    path: Path
    """The log shown (folder or file)."""
    kind: str
    """The log's format (``lifetrace``, ``activitywatch/...``, ``screenpipe``)."""
    day: date
    """The day shown."""
    days: tuple[date, ...]
    """Every day the log holds events on, oldest first."""
    events: tuple[ShownEvent, ...]
    """The day's events, in start order."""
    images: tuple[Path | None, ...] = ()
    """Image file of each :attr:`ShownShot.id` (``None``: none to show)."""
    live: Path | None = None
    """The ``feedback.db`` read, when there was one."""
    annotations: Path | None = None
    """The ``annotations.jsonl`` read, when there was one."""
    curated: Path | None = None
    """The curate output whose images were shown (``--curated``)."""
    unplaced: tuple[ShownOffer, ...] = field(default=())
    """Offers of the day at moments no event of the day holds."""
    redactor: Callable[[str], str] | None = field(default=None, compare=False, repr=False)
    """``--redact``'s redactor (curate's PII recognizers, remembering its answers), ``None``: raw."""

    @property
    def redacted(self) -> bool:
        """Whether texts are shown redacted (``--redact``)."""
        return self.redactor is not None

    def shown(self, text: str) -> str:
        """``text`` as the page shows it: redacted with ``--redact``, else as recorded."""
        return text if self.redactor is None else self.redactor(text)
