"""The help an accepted offer gives, as an inspect task: ``proagent/help`` (issue 32, item 6).

At every LLM-use event of a log whose conversation was recorded (``proagent annotate`` output,
ProAgentBench's processed database), the moment before the person's own query is the live
agent's sample for that event (:func:`help_moments`); the target is the reply the person actually
got on screen. The solver is ``proagent live``'s help (:mod:`proagent.live._help`: the same context,
prompt files and ``--send-screen`` redaction), asked one of three ways (``condition``):

* ``predicted``: the How call's predicted query first (:func:`proagent.live.how_prompt`, the offer's
  query), then the help to it: what the person gets after Accept;
* ``real``: the help to the person's real query (the upper bound: a perfect prediction);
* ``context-free``: the predicted query with no screen, events or app (what grounding adds).

Scorers: :func:`help_similarity` (cosine of multilingual-e5-small embeddings of the help and the
reply, :func:`proagent.embedding.embed`) and :func:`help_judge` (a 1-10 score from the ``judge``
model role, default the task model, with the rubric ``prompts/help_judge.txt``; a 1.5B judge is a
weak signal). ``benchmarks/help.py`` runs the same pieces with the local model's streaming timed.

    inspect eval proagent/help -T data=LOG [-T annotations=FILE] [-T condition=real] \\
        --model local/qwen2.5-coder-1.5b [--model-role judge=MODEL]
"""

from __future__ import annotations

import json
import re
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.dataset import Sample as InspectSample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, GenerateConfig, get_model
from inspect_ai.scorer import Metric, SampleScore, Score, Target, mean, metric, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver

from ..agent.parsing import to_prediction
from ..agent.prompting import observation_prompt, system_prompt
from ..bench.options import parse_window_option
from ..bench.running import task_input_errors
from ..bench.samples import SampleConfig
from ..prompt_files import prompt_template
from ..records import Event, Sample
from ._agent import how_prompt
from ._help import HELP_MAX_TOKENS, context_free_messages, help_context, help_messages
from ._moments import moment_sample
from ._privacy import check_send_screen, default_send_screen, outgoing, sent_digest

__all__ = [
    "CONDITIONS",
    "HOW_MAX_TOKENS",
    "help_judge",
    "help_moments",
    "help_similarity",
    "help_solver",
    "help_task",
    "judge_prompt",
    "parse_judge_score",
    "reply_similarity",
]

CONDITIONS: tuple[str, ...] = ("predicted", "real", "context-free")
"""What the help answers: the predicted query with the moment's context, the person's real query
with it, the predicted query without it."""
HOW_MAX_TOKENS = 96
"""The How call's answer budget, tokens (:class:`proagent.live.HowModel`'s)."""
UNPARSED = -1.0
"""The judge score of an answer naming no score (left out of :func:`judged_mean`, counted by :func:`unparsed`)."""


def help_moments(events: list[Event], config: SampleConfig = SampleConfig()) -> list[tuple[Sample, str, str]]:
    """``(sample, true query, reply)`` at every LLM-use event whose conversation records a query and
    a reply: the live agent's sample at the event's start (:func:`proagent.live.moment_sample`, the
    new event in front: the moment before the person's own query), oldest first."""
    out = []
    for i, e in enumerate(events):
        c = e.conversation
        if not e.is_llm_event or c is None or not c.user_queries or not c.llm_responses:
            continue
        s = moment_sample(events[: i + 1], e.start, config, new_event=e)
        if s is not None and c.user_queries[0].strip() and c.llm_responses[0].strip():
            out.append((s, c.user_queries[0], c.llm_responses[0]))
    return out


def reply_similarity(text: str, reply: str) -> float:
    """Cosine (-1..1) of the e5 embeddings of ``text`` and ``reply`` (:func:`proagent.embedding.embed`);
    0.0 for an empty ``text``."""
    from ..embedding import embed

    if not text.strip():
        return 0.0
    v = embed([text, reply])
    return float(v[0] @ v[1])


def judge_prompt(context: str, query: str, reply: str, help_text: str) -> str:
    """The judge's prompt: ``prompts/help_judge.txt`` with the moment's context, the real query, the
    reply the person got and the help."""
    return prompt_template("live", "help_judge.txt").substitute(
        context=context, query=query, reply=reply, help=help_text
    )


def parse_judge_score(text: str) -> int | None:
    """The 1-10 score of a judge's answer (``Score: N`` or ``N/10``), ``None`` when it names none."""
    m = re.search(r"score\s*[:=]?\s*(10|[1-9])\b", text, re.IGNORECASE) or re.search(r"\b(10|[1-9])\s*/\s*10\b", text)
    return int(m.group(1)) if m else None


def _chat(messages: list[dict[str, str]]) -> list[Any]:
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    return [kinds[m["role"]](content=m["content"]) for m in messages]


@solver
def help_solver(
    moments: dict[str, tuple[Sample, str]], condition: str = "predicted", send_screen: str | None = None
) -> Solver:
    """``proagent live``'s help at each moment (``moments``: sample id -> ``(sample, true query)``).

    For ``predicted`` and ``context-free`` the task model first writes the offer's query (the How
    call, :func:`proagent.live.how_prompt`); the help's messages are :func:`proagent.live.help_messages`
    (``context-free``: :func:`~proagent.live._help.context_free_messages`). Both prompts go out as
    ``send_screen`` says (default by the model: raw for ``local/``, redacted for any other).
    Metadata: ``query`` (the question answered), ``predicted_query``, ``send_screen``, ``sent``
    (SHA-256 and placeholder counts of the help prompt)."""
    if condition not in CONDITIONS:
        raise ValueError(f"condition {condition!r}: choose from {', '.join(CONDITIONS)}")
    if send_screen is not None:
        check_send_screen(send_screen)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        sample, true_q = moments[str(state.sample_id)]
        model = get_model()
        mode = send_screen or default_send_screen(str(model))
        predicted = None
        if condition != "real":
            how = [
                ChatMessageSystem(content=system_prompt()),
                ChatMessageUser(content=how_prompt(sample, mode).texts[0]),
            ]
            out = await model.generate(how, config=GenerateConfig(temperature=0.0, max_tokens=HOW_MAX_TOKENS, seed=0))
            pred = to_prediction(sample.id, out.completion)
            predicted = (pred.query or "").strip() or None
        ctx = help_context(sample, true_q if condition == "real" else predicted, mode)
        messages = context_free_messages(ctx) if condition == "context-free" else help_messages(ctx)
        state.messages = _chat(messages)
        state.metadata.update(
            query=ctx.question,
            predicted_query=predicted,
            send_screen=mode,  # as LiveHelp records it
            sent={
                "sha256": sent_digest(json.dumps(messages, ensure_ascii=False)),
                "placeholders": dict(ctx.placeholders),
            },
        )
        return await generate(state)

    return solve


@metric
def judged_mean() -> Metric:
    """Mean judge score over the answers the judge scored (1-10; unparsed ones left out; NaN for none)."""

    def m(scores: list[SampleScore]) -> float:
        xs = [s.score.as_float() for s in scores if s.score.as_float() >= 1]
        return sum(xs) / len(xs) if xs else float("nan")

    return m


@metric
def unparsed() -> Metric:
    """How many judge answers named no score."""

    def m(scores: list[SampleScore]) -> float:
        return float(sum(s.score.as_float() == UNPARSED for s in scores))

    return m


@scorer(metrics=[mean(), stderr()])
def help_similarity():  # noqa: ANN201
    """e5 cosine of the help and the reply the person got (the target): :func:`reply_similarity`."""

    async def score(state: TaskState, target: Target) -> Score:
        text = state.output.completion if state.output else ""
        return Score(value=reply_similarity(text, target.text), answer=text)

    return score


@scorer(metrics=[judged_mean(), unparsed()])
def help_judge(moments: dict[str, tuple[Sample, str]], send_screen: str | None = None):  # noqa: ANN201
    """The judge's 1-10 score of the help (model role ``judge``, else the task model): the rubric
    ``prompts/help_judge.txt`` with the moment's context (as the help to the real query sees it),
    the real query, the reply (the target) and the help; the judge's prompt is redacted as
    ``send_screen`` says (default by the judge model). ``-1`` (:data:`UNPARSED`) when its answer names
    no score."""

    async def score(state: TaskState, target: Target) -> Score:
        sample, true_q = moments[str(state.sample_id)]
        judge = get_model(role="judge")
        mode = send_screen or default_send_screen(str(judge))
        text = state.output.completion if state.output else ""
        ctx = help_context(sample, true_q, "raw")
        prompt = outgoing([judge_prompt(ctx.text, true_q, target.text, text)], mode).texts[0]
        out = await judge.generate(
            [ChatMessageUser(content=prompt)], config=GenerateConfig(temperature=0.0, max_tokens=64, seed=0)
        )
        n = parse_judge_score(out.completion)
        return Score(value=UNPARSED if n is None else float(n), answer=text, explanation=out.completion)

    return score


@task(name="help")
@task_input_errors
def help_task(
    data: str,
    annotations: str | None = None,
    condition: str = "predicted",
    window: str = "5m",
    send_screen: str | None = None,
    judge: bool = True,
    seed: int = 0,
) -> Task:
    """The help after Accept, at every LLM-use event of ``data`` with a recorded reply.

    Args:
        data: A log with LLM-use events and their conversations (LifeTrace/ProAgentBench database or
            folder, ``proagent annotate`` output).
        annotations: Comma-separated external annotation files (LifeTrace).
        condition: ``predicted`` (the How call's query, then the help), ``real`` (the person's real
            query; not ``true``, which inspect's ``-T`` reads as a boolean) or ``context-free`` (the predicted query without the moment's context).
        window: Context window of each moment (as ``proagent/assist``'s; default ``5m``).
        send_screen: ``never``, ``redacted`` or ``raw`` for the prompts (default by model).
        judge: Also score with the judge (:func:`help_judge`).
        seed: Generation seed.

    Raises:
        ValueError: an unknown condition or send_screen, or no LLM-use event with a recorded
            reply in ``data``.
        proagent.errors.UsageError: a bad window (``proagent/assist``'s parser,
            :func:`proagent.bench.options.parse_window_option`).
        proagent.errors.DataError: unreadable data.
    """
    from ..sources.load import load_events

    if condition not in CONDITIONS:
        raise ValueError(f"condition {condition!r}: choose from {', '.join(CONDITIONS)}")
    if send_screen is not None:
        check_send_screen(send_screen)
    ann = [a for a in annotations.split(",") if a] if annotations else None
    cfg = SampleConfig(window_seconds=parse_window_option(window).seconds)
    moments = help_moments(load_events(data, annotations=ann), cfg)
    if not moments:
        raise ValueError(
            f"{data}: no LLM-use event with a recorded query and reply (annotate the log first: proagent annotate)"
        )
    by_id = {s.id: (s, q) for s, q, _ in moments}
    samples = [
        InspectSample(
            id=s.id,
            input=observation_prompt(s),
            target=reply,
            metadata={"true_query": q, "event_id": s.event_id, "user": s.user, "time": s.time.isoformat()},
        )
        for s, q, reply in moments
    ]
    scorers = [help_similarity()] + ([help_judge(by_id, send_screen)] if judge else [])
    return Task(
        dataset=MemoryDataset(samples, name="help"),
        solver=help_solver(by_id, condition, send_screen),
        scorer=scorers,
        config=GenerateConfig(temperature=0.0, max_tokens=HELP_MAX_TOKENS, seed=int(seed)),
        metadata={"condition": condition, "window": window},
    )
