"""The summary of one annotation run: counts by outcome and the success rate (ProAgentBench section 5.3)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .records import AnnotationSummary, EventAnnotation

__all__ = ["annotation_summary", "is_complete"]


def is_complete(status: str, is_llm_event: bool, platform: str | None, intention: str | None) -> bool:
    """True when an asked event counts as a success: the model's answer was read (``annotated``)
    and, for LLM use, both the platform and the intention are known (issue 34: a run whose weak
    annotator left them empty still reported a success rate of 1.000); an answer read as "not LLM
    use" is complete."""
    return status == "annotated" and (not is_llm_event or bool(platform and intention))


def annotation_summary(
    data: str | Path, annotator: str, annotations: Sequence[EventAnnotation], pending: int, log_location: str | None
) -> AnnotationSummary:
    """What ``proagent annotate`` did, as written beside the annotations.

    Args:
        data: The annotated log.
        annotator: ``text:MODEL`` or ``vlm:MODEL``.
        annotations: One per event decided (annotated, default or not a candidate).
        pending: Candidate events not asked yet (``--limit``).
        log_location: The inspect log of the run, or ``None`` when no event was asked.

    Returns:
        The run's counts and success rate.
    """
    asked = [a for a in annotations if a.status != "not_candidate"]
    ok = sum(a.status == "annotated" for a in asked)
    known = sum(is_complete(a.status, a.is_llm_event, a.llm_platform, a.user_intention) for a in asked)
    return AnnotationSummary(
        data=str(data),
        annotator=annotator,
        events=len(annotations) + pending,
        llm_events=sum(a.is_llm_event for a in annotations),
        asked=len(asked) + pending,
        annotated=ok,
        default=sum(a.status == "default" for a in asked),
        not_candidate=sum(a.status == "not_candidate" for a in annotations),
        pending=pending,
        complete=known,
        success_rate=known / len(asked) if asked else None,
        log=log_location,
    )
