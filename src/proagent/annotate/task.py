"""Event annotation as an inspect task, so a run resumes like ``proagent eval``.

:func:`plan_annotation` reads a LifeTrace log (any schema variant; one database
or a folder of participant folders; an ActivityWatch or screenpipe log through its
LifeTrace copy), runs the cheap first pass
(:mod:`proagent.annotate.platforms`) and the OCR of the sampled screenshots;
:func:`annotate_events` turns the candidate events into inspect samples, one per
event, answered by :func:`annotator`:

* the conversation is first read from the screen by layout
  (:mod:`proagent.annotate.conversation`, on the positioned OCR lines of the
  sampled screenshots): the user's last turn (the turns new during the event)
  as the query and the reply as shown. When it is found on a candidate's
  screen, the model is asked only the intention, among the 3 categories nearest
  to the question (:mod:`proagent.annotate.intent`; ``intent.txt``: a few hundred characters in,
  a one-key JSON object out), the summary is the question as shown (``asked ChatGPT: ...``, 20
  words), and the conversation stored is the screen's,
  never the model's; a candidate whose screens were read and show no chat turn
  (a page that only mentions an AI product) is not LLM use and no model is
  asked, except the AI product's own chat page (``app`` or ``domain`` evidence) showing a reply
  whose question is off the screen on every screenshot: LLM use, its query the chat's title or
  unknown (:func:`~proagent.annotate.conversation.off_screen_chat`, ``query_source`` ``title`` /
  ``none``); nor is a conversation of people writing to each other, or one whose AI product the
  screen names only inside the turns, where no LLM app or address names it (:func:`_not_an_ai_chat`);
* text mode, where no layout could be read (``--ocr db``, images missing): the
  OCR text of the first 3 + last 3 screenshots (500 characters each) and the
  metadata, to any text model (the local Qwen by default); queries and replies
  it gives that do not stand in the screen text are dropped (left unknown);
* vlm mode: the same text plus the screenshots themselves as images
  (``ContentImage``), to a vision model (any OpenAI-compatible endpoint).

Whatever the model answers, nothing invented is stored and no fact is erased (:func:`_settle`):
its summary, description and rationale only where they stand on the event's screens or record
(:mod:`proagent.annotate.grounding`), the first pass's platform unless the model's is better
supported on the event (:func:`_platform`).

Each event gets up to ``attempts`` model calls (the first at temperature 0, the
rest at 0.7 with new seeds) until an answer parses; a request's own model error (an HTTP
400: a prompt over the context, a filtered request) counts as a failed attempt, while the
endpoint's failure (retries exhausted on HTTP 5xx or a dropped connection, an unreachable API, a
refused key: :func:`proagent.bench.running.endpoint_failure`) fails the run with one line and
writes nothing (re-running the same command resumes). When all attempts fail,
the event gets the default annotation (:func:`~proagent.annotate.parsing.default_fields`)
and the error is recorded: no event is skipped silently. The scorer's mean is
the success rate (paper: 97.6% on 100 checked events), counting an answer only when it was read
and, for LLM use, left the platform and the intention known
(:func:`~proagent.annotate.summary.is_complete`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
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

from ..bench.running import api_error_line, endpoint_failure, task_input_errors
from ..errors import DataError, UsageError
from ..records import Event
from ..sources.lifetrace import LifeTraceLog, load_lifetrace
from ..sources.lifetrace_convert import write_lifetrace_copy
from ..sources.load import LIFETRACE, activity_log_kind, databases_by_user, find_databases, load_activity_log
from ..taxonomy import load_taxonomy
from .conversation import PEOPLE_LINES, EventChat, event_chat, off_screen_chat, on_screen, read_screen
from .grounding import Grounding
from .intent import shortlist
from .parsing import SUMMARY_WORDS, AnswerError, _cut_words, default_fields, parse_annotation, parse_intent
from .platforms import EVIDENCE_KINDS, TERMINALS, PlatformHit, _app_key, detect_platform, event_platform, load_platforms
from .prompting import event_prompt, intent_prompt, intent_system_prompt, system_prompt
from .screens import OcrReader, sample_screenshots
from .summary import is_complete

__all__ = ["MODES", "AnnotationPlan", "PlannedEvent", "annotate_events", "annotator", "find_logs", "plan_annotation"]

MODES = ("text", "vlm")
"""Annotator modes: OCR text only, or text plus the screenshots as images."""
MAX_TOKENS = 700
"""Answer budget per call, tokens (the JSON object with a few queries and replies)."""
INTENT_MAX_TOKENS = 40
"""Answer budget of the intention prompt, tokens (a category name in a one-key JSON object: about
15 Qwen2.5 tokens; the summary is the question itself, :func:`_screen_fields`, not generated: on 2
CPU cores each generated token of the 1.5B model costs about a tenth of a second, issue 47)."""
REPLY_CHARS = 1000
"""Characters of the reply as shown kept in the annotation."""


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
    chat: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    """``(user_queries, llm_responses)`` read from the screen by layout, ``None`` when none was found."""
    layout_read: bool = False
    """True when the positioned OCR lines of a sampled screenshot were read (the layout decides)."""
    screen: str = ""
    """The whole OCR text of the sampled screenshots (what the model's quotes are checked against)."""
    reason: str = ""
    """Why the model is not asked (for events with ``ask`` False)."""
    query_source: str = "screen"
    """Where ``chat``'s query comes from: ``screen``, ``title`` (the chat's title: its question is off
    the screen) or ``none`` (unknown, no query; :attr:`~proagent.annotate.conversation.EventChat.query_source`)."""


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
    if activity_log_kind(db) == LIFETRACE:
        return load_lifetrace(db)
    import tempfile

    if plan.converted is None:
        plan.converted = tempfile.TemporaryDirectory(prefix="proagent-annotate-")
    copy = write_lifetrace_copy(load_activity_log(db, user=user), Path(plan.converted.name) / user)
    return load_lifetrace(copy, user=user)


def plan_annotation(
    data: str | Path,
    *,
    all_events: bool = False,
    ocr: str = "auto",
    ocr_cache: str | Path | None = None,
    progress: Callable[[int], None] | None = None,
) -> AnnotationPlan:
    """Read ``data`` and decide which events the model sees (the cheap first pass).

    Args:
        data: See :func:`find_logs`.
        all_events: Ask the model about every event, not only candidates.
        ocr: ``auto`` (OCR rows, else read the image), ``db`` or ``image``
            (see :class:`~proagent.annotate.screens.OcrReader`).
        ocr_cache: JSON cache of texts read from images.
        progress: Called with the number of events read so far after each event (progress lines).

    Raises:
        DataError: unreadable data (see :func:`~proagent.sources.lifetrace.load_lifetrace`).
        DataError: images must be read and RapidOCR is not installed (no file at fault).
        UsageError: an unknown ``ocr`` mode.
    """
    logs = find_logs(data)
    key = (
        str(Path(data).resolve()),
        bool(all_events),
        ocr,
        tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in logs.values()),
    )
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
                # the first pass reads every sampled screen's whole text (the prompt's cut to OCR_CHARS
                # dropped an assistant panel's "Message Copilot" at the bottom: issue 47) plus any OCR
                # row of the event
                hit = event_platform(
                    e,
                    [reader.text(s) for s in shots]
                    + [s.ocr_text for s in e.focused_screenshots]
                    + ([e.url] if e.url else []),
                )
                ask = all_events or hit is not None
                chat, layout_read, reason = None, False, ""
                got: EventChat | None = None
                if ask and reader.mode != "db":
                    layouts = [reader.layout(s) for s in shots]
                    layout_read = any(lay is not None for lay in layouts)
                    app = _app_key(e.app_name)
                    terminal = True if app in TERMINALS else None if not app else False
                    screens = [
                        read_screen(lay.lines, lay.width, lay.height, terminal=terminal) if lay else None
                        for lay in layouts
                    ]
                    got = event_chat(screens)
                    if got is None and hit is not None and hit.evidence in ("app", "domain") and not terminal:
                        # the AI product's own page showing a reply, its question off the screen (issue 47)
                        got = off_screen_chat(screens, e.window_title, _product_titles())
                    refused = _not_an_ai_chat(got, hit)
                    chat = None if got is None or refused else (got.queries, got.replies)
                    if chat is not None and hit is None and not chat[1]:
                        chat = None  # no platform named: indented lines without a reply (code) are no chat
                    if layout_read and chat is None and not all_events:  # --all: every event, chat on screen or not
                        ask, reason = (
                            False,
                            (
                                (f"first pass: {hit.evidence} names {hit.platform}, " if hit else "")
                                + (refused or "but no screenshot shows a chat turn (layout)")
                            ),
                        )
                    elif chat is not None and hit is None and not all_events:
                        ask, reason = False, "a chat layout but no LLM platform named"
                plan.events.append(
                    PlannedEvent(
                        event=e,
                        hit=hit,
                        texts=texts,
                        images=tuple(str(s.path) for s in shots if s.path is not None and Path(s.path).is_file()),
                        ask=ask,
                        chat=chat,
                        layout_read=layout_read,
                        reason=reason,
                        query_source=got.query_source if chat is not None and got is not None else "screen",
                        screen="\n".join(reader.text(s) for s in shots),
                    )
                )
                if progress is not None:
                    progress(len(plan.events))
    finally:
        reader.save()
    _PLANS.clear()
    _PLANS[key] = plan
    return plan


_PLANS: dict[tuple, AnnotationPlan] = {}


@functools.cache
def _product_titles() -> tuple[str, ...]:
    """The titles naming an LLM product (the bundled ``llm_platforms.json``), read once."""
    return tuple(n for p in load_platforms() for n in p.titles)


def _not_an_ai_chat(chat: EventChat | None, hit: PlatformHit | None) -> str:
    """Why a conversation read from the screen is people writing to each other or a page that only
    mentions an AI product, not LLM use ('' when it may be LLM use). Only where the platform comes
    from the window title or the screen text: an LLM app or an LLM site's address is the AI itself.

    * people-marking lines (mail headers, "... wrote:", Quote / Reply buttons, a messenger's
      per-message times; :data:`~proagent.annotate.conversation.PEOPLE_LINES` or more on a screenshot);
    * the screen text alone names the product, and only inside the turns (a friend's message
      "did you ask ChatGPT?"), not around them (the sidebar, the input box, a role label).
    """
    if chat is None or hit is None or hit.evidence in ("app", "domain") or chat.kind == "terminal":
        return ""
    if chat.people >= PEOPLE_LINES:
        return (
            f"but the screen shows people writing to each other ({chat.people} mail, forum or messenger "
            "marks: headers, 'wrote:', Quote/Reply, per-message times)"
        )
    if hit.evidence == "screen" and detect_platform("", "", [chat.frame]) is None:
        return "but the screen names it only inside the conversation, not around it (no AI chat)"
    return ""


def _screen_fields(p: PlannedEvent) -> dict[str, Any]:
    """The annotation of an event whose conversation was read from the screen (no intention yet)."""
    assert p.chat is not None
    queries, replies = p.chat
    replies = tuple(r[:REPLY_CHARS] for r in replies)
    turns = [f"User: {q}" for q in queries] + [f"Assistant: {r}" for r in replies]
    base = default_fields(p.event, p.hit)
    platform = p.hit.platform if p.hit else "an AI assistant"
    if p.query_source == "screen":
        asked, how = f"asked {platform}: {' '.join(queries[-1].split())}", "conversation read from the screen by layout"
    elif queries:  # the chat's title stands for its question, which is off the screen
        asked = f"read {platform}'s answer in the chat titled {' '.join(queries[-1].split())}"
        how = "the question is off the screen: the chat's title (window title) stands for it; the reply as shown"
    else:
        asked = f"read {platform}'s answer: {' '.join(replies[0].split()) if replies else ''}"
        how = "the question is off the screen and the title names no subject: the query is unknown; the reply as shown"
    return {
        **base,
        "event_summary": _cut_words(asked, SUMMARY_WORDS),
        "is_llm_event": True,
        "user_queries": list(queries),
        "llm_responses": list(replies),
        "full_conversation": "\n".join(turns),
        "query_source": p.query_source,
        "rationale": how + (f"; {p.hit.evidence} names {p.hit.platform}" if p.hit else ""),
    }


def _sample(p: PlannedEvent, mode: str) -> InspectSample:
    e = p.event
    shots = sample_screenshots(e)
    hit = p.hit
    meta: dict[str, Any] = {
        "user": e.user,
        "event_id": e.id,
        "evidence": f"{hit.evidence}: {hit.matched}" if hit else "",
        "screen": p.screen,
        "record": [e.app_name, e.window_title, e.url or ""],
        "hit": [hit.platform, hit.evidence] if hit else None,
    }
    if p.chat is not None:  # the screen gave the conversation: ask only the intention
        queries, replies = p.chat
        query = (
            queries[-1]
            if p.query_source == "screen"
            else f"(not on the screen; the chat is titled: {queries[-1]})"
            if queries
            else "(not on the screen)"
        )
        return InspectSample(
            id=f"{e.user}:{e.id}",
            input=intent_prompt(
                e,
                hit.platform if hit else None,
                query,
                replies[0] if replies else None,
                shortlist(queries[-1] if queries else (replies[0] if replies else "")),
            ),
            metadata={**meta, "kind": "intent", "images": [], "default": _screen_fields(p)},
        )
    return InspectSample(
        id=f"{e.user}:{e.id}",
        input=event_prompt(e, shots, p.texts, hit, images=mode == "vlm"),
        metadata={
            **meta,
            "kind": "full",
            "images": list(p.images) if mode == "vlm" else [],
            "default": {k: list(v) if isinstance(v, tuple) else v for k, v in default_fields(e, hit).items()},
        },
    )


def _keep_on_screen(result: dict[str, Any], screen: str) -> dict[str, Any]:
    """A full answer with the queries and replies that do not stand in the screen text dropped
    (:func:`~proagent.annotate.conversation.on_screen`): unknown rather than invented."""
    queries = tuple(q for q in result["user_queries"] if on_screen(q, screen))
    replies = tuple(r for r in result["llm_responses"] if on_screen(r, screen))
    dropped = len(result["user_queries"]) - len(queries) + len(result["llm_responses"]) - len(replies)
    if not dropped:
        return {**result, "query_source": "model" if queries else "none"}
    turns = [f"User: {q}" for q in queries] + [f"Assistant: {r}" for r in replies]
    return {
        **result,
        "user_queries": queries,
        "llm_responses": replies,
        "full_conversation": "\n".join(turns),
        "query_source": "model" if queries else "none",
        "rationale": (result.get("rationale") or "") + f" [{dropped} quoted text(s) not on the screen dropped]",
    }


def _platform(model: str | None, meta: dict[str, Any]) -> str | None:
    """The platform stored for an LLM event: the first pass's (from the app, the address, the title or
    the screen) unless the model names a known platform with stronger evidence on this event's record
    or screens; a platform named nowhere is not stored (issue 34: a weak model's empty answer erased
    ``domain: chatgpt.com``)."""
    hit = meta.get("hit")
    support = None
    if model:
        known = tuple(p for p in load_platforms() if p.name == model)
        app, title, url = (list(meta.get("record") or []) + ["", "", ""])[:3]
        support = detect_platform(app, f"{title} {url}", [meta.get("screen") or ""], platforms=known) if known else None
    if hit is None:
        return support.platform if support else None
    rank = EVIDENCE_KINDS.index
    return support.platform if support and rank(support.evidence) < rank(hit[1]) else hit[0]


def _settle(result: dict[str, Any], meta: dict[str, Any], intent: bool) -> dict[str, Any]:
    """A parsed answer with nothing invented and no fact erased: the model's summary, description
    and rationale kept only where they stand on the event's screens or record
    (:class:`~proagent.annotate.grounding.Grounding`; else the first pass's summary, an empty
    description or rationale), and the platform of :func:`_platform`."""
    g = Grounding([meta.get("screen") or "", *(meta.get("record") or [])])
    default = meta["default"]
    out = dict(result)
    dropped = []
    if out.get("event_summary") and not g.check(out["event_summary"]):
        out["event_summary"] = default["event_summary"]
        dropped.append("summary")
    elif not out.get("event_summary"):  # none given (or only the template's slot echoed): the first pass's
        out["event_summary"] = default["event_summary"]
    if not intent:
        for key, name in (("detailed_description", "description"), ("rationale", "rationale")):
            if out.get(key) and not g.check(out[key]):
                out[key] = ""
                dropped.append(name)
        if out.get("is_llm_event"):
            out["llm_platform"] = _platform(out.get("llm_platform"), meta)
    if dropped:
        out["rationale"] = (
            (out.get("rationale") or "") + f" [the model's {', '.join(dropped)} not on the screen: dropped]"
        ).strip()
    return out


_QUOTE = 16
"""Characters in a row that an error's message shares with the prompt for :func:`_request_error`
to withhold it (shorter runs, e.g. ``"message": ``, are common to any JSON)."""


def _request_error(ex: BaseException, messages: list[Any]) -> str:
    """One line for a request the model API refused on its own (e.g. ``BadRequestError: Error
    code: 400 - {...}``, :func:`proagent.bench.running.api_error_line`: the provider's error, not
    inspect's request dump), recorded in ``annotations.jsonl``. A message that quotes the prompt
    (``_QUOTE`` characters of it in a row; the prompt holds screen text) is withheld: the class alone."""
    line = api_error_line(ex)
    name, _, message = line.partition(": ")
    prompt = "\n".join(m.text for m in messages)
    if any(message[i : i + _QUOTE] in prompt for i in range(len(message) - _QUOTE + 1)):
        return f"{name}: (its message quotes the prompt; withheld)"
    return line


@solver
def annotator(attempts: int = 3, retry_temperature: float = 0.7) -> Solver:
    """Ask the model for the event's annotation, up to ``attempts`` times, and leave
    the result in ``state.metadata["annotation"]`` (fields of
    :class:`~proagent.annotate.records.EventAnnotation` plus ``status``,
    ``attempts`` and ``error``).

    Raises:
        proagent.errors.UsageError: ``attempts`` < 1 (``--attempts``).
    """
    if attempts < 1:
        raise UsageError("--attempts", "annotation needs attempts >= 1")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        intent = state.metadata.get("kind") == "intent"
        state.messages.insert(
            0, ChatMessageSystem(content=(intent_system_prompt if intent else system_prompt)(load_taxonomy()))
        )
        images = [p for p in state.metadata.get("images") or [] if Path(p).is_file()]
        if images:
            for i, m in enumerate(state.messages):
                if m.role == "user" and isinstance(m.content, str):
                    state.messages[i] = ChatMessageUser(
                        content=[
                            ContentText(text=m.content),
                            *[ContentImage(image=await materialize_media(p)) for p in images],
                        ]
                    )
                    break
        model = get_model()
        base = model.config.seed if model.config.seed is not None else 0
        errors: list[str] = []
        result: dict[str, Any] | None = None
        n = 0
        for n in range(1, attempts + 1):
            cfg = GenerateConfig() if n == 1 else GenerateConfig(temperature=retry_temperature, seed=base + n)
            if intent:
                cfg = cfg.merge(GenerateConfig(max_tokens=INTENT_MAX_TOKENS))
            try:
                out = await model.generate(state.messages, config=cfg)
            except Exception as e:  # noqa: BLE001 - a request's own failure is this event's failed attempt
                if endpoint_failure(e):  # the endpoint's (down, refusing the key): the run fails, resumable,
                    raise  # rather than every event written with the default annotation
                errors.append(f"attempt {n}: model error: {_request_error(e, state.messages)}")
                continue
            state.output = out
            try:
                if intent:
                    got = parse_intent(out.completion)
                    result = {
                        **state.metadata["default"],
                        "user_intention": got["user_intention"],
                        "event_summary": got["event_summary"] or state.metadata["default"]["event_summary"],
                    }
                    result = _settle(result, state.metadata, intent)
                else:
                    result = _keep_on_screen(
                        _settle(parse_annotation(out.completion), state.metadata, intent),
                        state.metadata.get("screen") or "",
                    )
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
    """1 when the model's answer was read (``annotated``) and, for LLM use, the platform and the
    intention are known (:func:`~proagent.annotate.summary.is_complete`); 0 otherwise: the mean is
    the annotation success rate."""

    async def score(state: TaskState, target: Target) -> Score:
        ann = state.metadata.get("annotation") or {}
        ok = is_complete(
            ann.get("status") or "", bool(ann.get("is_llm_event")), ann.get("llm_platform"), ann.get("user_intention")
        )
        return Score(
            value=1.0 if ok else 0.0,
            answer="llm" if ann.get("is_llm_event") else "not llm",
            explanation=ann.get("error") or None,
        )

    return score


@task
@task_input_errors
def annotate_events(
    data: str,
    mode: str = "text",
    all_events: bool = False,
    ocr: str = "auto",
    ocr_cache: str | None = None,
    attempts: int = 3,
    seed: int = 0,
    max_tokens: int = MAX_TOKENS,
) -> Task:
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
        proagent.errors.UsageError: unknown mode (``--annotator``).
        proagent.errors.DataError: no event to ask about.
        proagent.errors.DataError: unreadable data.
    """
    if mode not in MODES:
        raise UsageError("--annotator", f"unknown annotator mode {mode!r}; choose from {', '.join(MODES)}")
    plan = plan_annotation(data, all_events=bool(all_events), ocr=ocr, ocr_cache=ocr_cache)
    asked = plan.asked
    if not asked:
        raise DataError(
            data,
            "no event names an LLM platform in its app, title or screen text; "
            "nothing to ask the model (use --all to ask about every event)",
        )
    return Task(
        dataset=MemoryDataset([_sample(p, mode) for p in asked], name="annotate"),
        solver=annotator(attempts=int(attempts)),
        scorer=annotation_scorer(),
        config=GenerateConfig(temperature=0.0, max_tokens=int(max_tokens), seed=int(seed)),
        metadata={"mode": mode, "all_events": bool(all_events), "n_events": len(plan.events), "n_asked": len(asked)},
    )
