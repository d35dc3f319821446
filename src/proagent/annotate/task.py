"""Event annotation as an inspect task, so a run resumes like ``proagent eval``.

:func:`plan_annotation` reads a LifeTrace log (any schema variant; one database
or a folder of participant folders; an ActivityWatch or screenpipe log through its
LifeTrace copy), runs the cheap first pass
(:mod:`proagent.annotate.platforms`) and the OCR of the sampled screenshots;
:func:`annotate_events` turns the candidate events into inspect samples, one per
event, answered by :func:`annotator`:

* text mode: the OCR text of the first 3 + last 3 screenshots (500 characters
  each) and the metadata, to any text model (the local Qwen by default);
* vlm mode: the same text plus the screenshots themselves as images
  (``ContentImage``), to a vision model (any OpenAI-compatible endpoint).

Each event gets up to ``attempts`` model calls (the first at temperature 0, the
rest at 0.7 with new seeds) until an answer parses; a model error (an HTTP
failure, a prompt over the context) counts as a failed attempt. When all fail,
the event gets the default annotation (:func:`~proagent.annotate.parsing.default_fields`)
and the error is recorded: no event is skipped silently. The scorer's mean is
the success rate (paper: 97.6% on 100 checked events).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.dataset import Sample as InspectSample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ContentImage, ContentText, GenerateConfig, get_model
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import materialize_media

from ..errors import DataError
from ..records import Event
from ..sources.lifetrace import LifeTraceLog, load_lifetrace
from ..sources.lifetrace_convert import write_lifetrace_copy
from ..sources.load import activity_log_kind, databases_by_user, find_databases, load_activity_log
from ..taxonomy import load_taxonomy
from .parsing import AnswerError, default_fields, parse_annotation
from .platforms import PlatformHit, event_platform
from .prompting import event_prompt, system_prompt
from .screens import OcrReader, sample_screenshots

__all__ = ["MODES", "AnnotationPlan", "PlannedEvent", "annotate_events", "annotator", "find_logs", "plan_annotation"]

MODES = ("text", "vlm")
"""Annotator modes: OCR text only, or text plus the screenshots as images."""
MAX_TOKENS = 700
"""Answer budget per call, tokens (the JSON object with a few queries and replies)."""


@dataclass(frozen=True)
class PlannedEvent:
    """One event with what the annotator will see of it."""

    event: Event
    """The event as read."""
    hit: PlatformHit | None
    """First-pass evidence (``None``: no platform named anywhere)."""
    texts: tuple[str, ...]
    """OCR texts of the sampled screenshots (500 characters each)."""
    images: tuple[str, ...]
    """Files of the sampled screenshots that exist here."""
    ask: bool
    """True when the model is asked about this event (a candidate, or ``--all``)."""


@dataclass
class AnnotationPlan:
    """A log read for annotation: every event of every user, in order."""

    logs: dict[str, LifeTraceLog]
    """User -> the database read (the readers' user names: participant folder names)."""
    events: list[PlannedEvent] = field(default_factory=list)
    """Every event, by user then time."""
    converted: Any = None
    """The temporary folder (a ``tempfile.TemporaryDirectory``, removed with the plan) of the
    LifeTrace copies of ActivityWatch and screenpipe logs (:mod:`proagent.sources.lifetrace_convert`)."""

    @property
    def asked(self) -> list[PlannedEvent]:
        """The events the model is asked about."""
        return [p for p in self.events if p.ask]


def find_logs(data: str | Path) -> dict[str, Path]:
    """User -> database of a LifeTrace log: a database file, a folder holding one
    (a capture folder), or a folder of participant folders; ActivityWatch databases and
    exports and screenpipe databases alike (:func:`~proagent.sources.load.find_databases`). Users are named as
    the readers name them (the folder holding each database).

    Raises:
        DataError: nothing there, no database, or two databases for one user.
    """
    data = Path(data)
    if not data.exists():
        raise DataError(data, "no such file or folder")
    dbs = [data] if data.is_file() else find_databases(data)
    if not dbs:
        raise DataError(data, "no LifeTrace database (*.db) here or one level down")
    return databases_by_user(dbs)


def _lifetrace_log(db: Path, user: str, plan: AnnotationPlan) -> LifeTraceLog:
    """The LifeTrace log of ``db``; an ActivityWatch or screenpipe log is read through a LifeTrace
    copy in the plan's temporary folder (so the processed copy is written as for LifeTrace)."""
    if activity_log_kind(db) == "lifetrace":
        return load_lifetrace(db)
    import tempfile

    if plan.converted is None:
        plan.converted = tempfile.TemporaryDirectory(prefix="proagent-annotate-")
    copy = write_lifetrace_copy(load_activity_log(db, user=user), Path(plan.converted.name) / user)
    return load_lifetrace(copy, user=user)


def plan_annotation(data: str | Path, *, all_events: bool = False, ocr: str = "auto",
                    ocr_cache: str | Path | None = None) -> AnnotationPlan:
    """Read ``data`` and decide which events the model sees (the cheap first pass).

    Args:
        data: See :func:`find_logs`.
        all_events: Ask the model about every event, not only candidates.
        ocr: ``auto`` (OCR rows, else read the image), ``db`` or ``image``
            (see :class:`~proagent.annotate.screens.OcrReader`).
        ocr_cache: JSON cache of texts read from images.

    Raises:
        DataError: unreadable data (see :func:`~proagent.sources.lifetrace.load_lifetrace`).
        RuntimeError: images must be read and RapidOCR is not installed.
    """
    logs = find_logs(data)
    key = (str(Path(data).resolve()), bool(all_events), ocr,
           tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in logs.values()))
    if key in _PLANS:  # the command and the task it builds read the log once
        return _PLANS[key]
    reader = OcrReader(ocr, ocr_cache)
    plan = AnnotationPlan(logs={})
    try:
        for user, db in logs.items():
            log = _lifetrace_log(db, user, plan)
            plan.logs[user] = log
            for e in log.events:
                shots = sample_screenshots(e)
                texts = tuple(reader.texts(shots))
                # the first pass reads every sampled screen text plus any OCR row of the event
                hit = event_platform(e, list(texts) + [s.ocr_text for s in e.screenshots] + ([e.url] if e.url else []))
                plan.events.append(PlannedEvent(
                    event=e, hit=hit, texts=texts,
                    images=tuple(str(s.path) for s in shots if s.path is not None and Path(s.path).is_file()),
                    ask=all_events or hit is not None))
    finally:
        reader.save()
    _PLANS.clear()
    _PLANS[key] = plan
    return plan


_PLANS: dict[tuple, AnnotationPlan] = {}


def _sample(p: PlannedEvent, mode: str) -> InspectSample:
    e = p.event
    shots = sample_screenshots(e)
    hit = p.hit
    return InspectSample(
        id=f"{e.user}:{e.id}",
        input=event_prompt(e, shots, p.texts, hit, images=mode == "vlm"),
        metadata={
            "user": e.user,
            "event_id": e.id,
            "evidence": f"{hit.evidence}: {hit.matched}" if hit else "",
            "images": list(p.images) if mode == "vlm" else [],
            "default": {k: list(v) if isinstance(v, tuple) else v for k, v in default_fields(e, hit).items()},
        },
    )


@solver
def annotator(attempts: int = 3, retry_temperature: float = 0.7) -> Solver:
    """Ask the model for the event's annotation, up to ``attempts`` times, and leave
    the result in ``state.metadata["annotation"]`` (fields of
    :class:`~proagent.annotate.records.EventAnnotation` plus ``status``,
    ``attempts`` and ``error``).

    Raises:
        ValueError: ``attempts`` < 1.
    """
    if attempts < 1:
        raise ValueError("annotation needs attempts >= 1")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.messages.insert(0, ChatMessageSystem(content=system_prompt(load_taxonomy())))
        images = [p for p in state.metadata.get("images") or [] if Path(p).is_file()]
        if images:
            for i, m in enumerate(state.messages):
                if m.role == "user" and isinstance(m.content, str):
                    state.messages[i] = ChatMessageUser(
                        content=[ContentText(text=m.content), *[ContentImage(image=await materialize_media(p)) for p in images]])
                    break
        model = get_model()
        base = model.config.seed if model.config.seed is not None else 0
        errors: list[str] = []
        result: dict[str, Any] | None = None
        n = 0
        for n in range(1, attempts + 1):
            cfg = GenerateConfig() if n == 1 else GenerateConfig(temperature=retry_temperature, seed=base + n)
            try:
                out = await model.generate(state.messages, config=cfg)
            except Exception as e:  # noqa: BLE001 - any model failure is this event's failed attempt
                errors.append(f"attempt {n}: model error: {' '.join(str(e).split())[:300] or type(e).__name__}")
                continue
            state.output = out
            try:
                result = parse_annotation(out.completion)
                break
            except AnswerError as e:
                errors.append(f"attempt {n}: {e}")
        if result is None:
            result = dict(state.metadata["default"], status="default", error="; ".join(errors))
        else:
            result = {**result, "status": "annotated", "error": "; ".join(errors)}
        result["attempts"] = n
        result = {k: list(v) if isinstance(v, tuple) else v for k, v in result.items()}
        state.metadata["annotation"] = result
        return state

    return solve


@scorer(metrics=[mean()])
def annotation_scorer():  # noqa: ANN201
    """1 when the model's answer was read (``annotated``), 0 for a default annotation:
    the mean is the annotation success rate."""

    async def score(state: TaskState, target: Target) -> Score:
        ann = state.metadata.get("annotation") or {}
        ok = ann.get("status") == "annotated"
        return Score(value=1.0 if ok else 0.0, answer="llm" if ann.get("is_llm_event") else "not llm",
                     explanation=ann.get("error") or None)

    return score


@task
def annotate_events(data: str, mode: str = "text", all_events: bool = False, ocr: str = "auto",
                    ocr_cache: str | None = None, attempts: int = 3, seed: int = 0,
                    max_tokens: int = MAX_TOKENS) -> Task:
    """Annotate the events of a LifeTrace log (ProAgentBench section 5.3, Appendix B.5).

    Args:
        data: LifeTrace database, capture folder or folder of participant folders.
        mode: ``text`` (OCR text) or ``vlm`` (text plus screenshots as images).
        all_events: Ask about every event, not only first-pass candidates.
        ocr: OCR source (see :func:`plan_annotation`).
        ocr_cache: JSON cache of texts read from images.
        attempts: Model calls per event before the default annotation.
        seed: Generation seed.
        max_tokens: Answer budget per call, tokens.

    Raises:
        ValueError: unknown mode, or no event to ask about.
        proagent.errors.DataError: unreadable data.
    """
    if mode not in MODES:
        raise ValueError(f"unknown annotator mode {mode!r}; choose from {', '.join(MODES)}")
    plan = plan_annotation(data, all_events=bool(all_events), ocr=ocr, ocr_cache=ocr_cache)
    asked = plan.asked
    if not asked:
        raise ValueError(f"{data}: no event names an LLM platform in its app, title or screen text; "
                         "nothing to ask the model (use --all to ask about every event)")
    return Task(
        dataset=MemoryDataset([_sample(p, mode) for p in asked], name="annotate"),
        solver=annotator(attempts=int(attempts)),
        scorer=annotation_scorer(),
        config=GenerateConfig(temperature=0.0, max_tokens=int(max_tokens), seed=int(seed)),
        metadata={"mode": mode, "all_events": bool(all_events), "n_events": len(plan.events), "n_asked": len(asked)},
    )
