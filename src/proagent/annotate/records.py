"""Typed records of the annotation stage: what was decided about one event, and a run's summary."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = ["STATUSES", "AnnotationSummary", "EventAnnotation", "Status"]

Status = Literal["annotated", "default", "not_candidate"]
"""How an annotation came about: the model's parsed answer (``annotated``), the
default annotation after every attempt failed (``default``, with ``error``), or
the cheap first pass found no LLM platform so no model was asked (``not_candidate``)."""
STATUSES = ("annotated", "default", "not_candidate")
"""Every :data:`Status`."""


@dataclass(frozen=True)
class EventAnnotation:
    """The annotation of one event (ProAgentBench section 5.3, Appendix B.5): the
    processed columns written into the database plus the external fields of
    ``annotations.jsonl``."""

    user: str
    """Participant (the folder name, as the readers name users)."""
    event_id: str
    """Event id (the ``events`` row id as text)."""
    is_llm_event: bool
    """True when the user interacted with an LLM in this event."""
    status: Status
    """How the annotation came about (see :data:`Status`)."""
    llm_platform: str | None = None
    """LLM product used (a name of ``data/llm_platforms.json`` where the model's
    answer matches one), ``None`` for non-LLM events."""
    event_summary: str = ""
    """What happened, at most 20 words (paper: summary <= 20 words)."""
    detailed_description: str = ""
    """A longer description of the screens."""
    user_queries: tuple[str, ...] = ()
    """The user's messages to the LLM, in order (the first is the How-to-Assist reference)."""
    llm_responses: tuple[str, ...] = ()
    """The LLM's replies, in order."""
    full_conversation: str = ""
    """The conversation as one text (``User: ...`` / ``Assistant: ...`` lines)."""
    user_intention: str | None = None
    """Intention category of the LLM use (a taxonomy name), ``None`` for non-LLM events."""
    confidence: float | None = None
    """The annotator's confidence in the annotation, 0-1."""
    rationale: str = ""
    """Why (the model's words; for first-pass decisions, the evidence)."""
    evidence: str = ""
    """What made the event a candidate (``title: chatgpt.com``), empty when none."""
    attempts: int = 0
    """Model calls made for this event (0 when none was asked)."""
    error: str = ""
    """Why every attempt failed (``status == "default"``), else empty."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Further values kept in ``annotations.jsonl`` (e.g. the model name)."""

    @property
    def conversation(self) -> dict[str, Any] | None:
        """The ``conversation`` column as a JSON-ready object (``None`` for non-LLM events)."""
        if not self.is_llm_event:
            return None
        return {
            "user_queries": list(self.user_queries),
            "llm_responses": list(self.llm_responses),
            "full_conversation": self.full_conversation,
        }

    def to_json(self) -> dict[str, Any]:
        """The ``annotations.jsonl`` record (keys the annotation reader understands,
        :mod:`proagent.sources.annotations`, plus the processed fields)."""
        d = asdict(self)
        d.pop("extra")
        d["user_queries"], d["llm_responses"] = list(self.user_queries), list(self.llm_responses)
        return {**d, **self.extra}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> EventAnnotation:
        """Inverse of :meth:`to_json` (unknown keys go to ``extra``)."""
        names = set(cls.__dataclass_fields__) - {"extra"}
        kw = {k: d[k] for k in names if k in d}
        kw["user_queries"] = tuple(kw.get("user_queries") or ())
        kw["llm_responses"] = tuple(kw.get("llm_responses") or ())
        kw["event_id"] = str(kw["event_id"])
        return cls(**kw, extra={k: v for k, v in d.items() if k not in names})


@dataclass(frozen=True)
class AnnotationSummary:
    """What one ``proagent annotate`` run did (ProAgentBench section 5.3), as written beside the
    annotations (``annotate.json`` of an ``--out`` copy); :meth:`to_json` keeps its keys in order."""

    data: str
    """The annotated log."""
    annotator: str
    """``text:MODEL`` or ``vlm:MODEL``."""
    events: int
    """Events of the log (those decided and those pending)."""
    llm_events: int
    """Events annotated as LLM use."""
    asked: int
    """Candidate events asked about, pending ones included."""
    annotated: int
    """Of those, the model's answer parsed."""
    default: int
    """Default annotations after failed answers."""
    not_candidate: int
    """Events not asked (no LLM platform named, or no chat turn on screen)."""
    pending: int
    """Candidate events not asked yet (``--limit``)."""
    complete: int
    """Of the ``annotated``, those complete: read as not LLM use, or LLM use with the platform and
    the intention known (:func:`proagent.annotate.summary.is_complete`)."""
    success_rate: float | None
    """``complete`` over the asked events decided (0-1); ``None`` when none was asked. An answer
    that was read but left the platform or the intention unknown is no success."""
    log: str | None
    """The inspect log of the run, ``None`` when no event was asked."""

    def to_json(self) -> dict[str, Any]:
        """The JSON object, fields in order."""
        return asdict(self)
