"""Judges of the ProactiveEval track and the simulated user's model.

Model roles (inspect ``model_roles``): the task model is the agent; ``judge``
scores and decides termination; ``user`` plays the simulated user and falls back
to the judge (as in the paper, where the judge also plays the user), which
falls back to the task model. Judges and the user run at temperature 0.

Every judge writes its reasoning before its score. Small judges often reason
until the token budget runs out and never reach the score lines; when the
planning or guidance judgement has no score, or was cut off by its budget (a
number read there may be the scale being restated), the judge is asked once
more, in the same conversation, for the score lines only (``prompts/judge_followup_*.txt``,
at most ``FOLLOWUP_MAX_TOKENS``); both answers are kept in ``raw``, separated by
``FOLLOWUP_MARK``. The scores then come from the follow-up alone (labelled
lines, else bare numbers in the asked order), the reasoning from the first
answer. A judgement still unreadable after that is recorded as unparsed, never
raised.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
)

from .parsing import (
    parse_guidance_judgement,
    parse_judgement,
    parse_mentioned,
    parse_reached,
)
from .prompting import env_values, render, render_history, render_sub_targets
from .records import DIMENSIONS, Environment, GuidanceJudgement, Judgement, Plan, Turn

__all__ = [
    "FOLLOWUP_MARK",
    "FOLLOWUP_MAX_TOKENS",
    "JUDGE_MAX_TOKENS",
    "ask",
    "extract_mentioned",
    "judge_guidance",
    "judge_model",
    "judge_plan",
    "judge_reached",
    "user_model",
]

JUDGE_MAX_TOKENS = {"plan": 256, "guide": 320, "reached": 80, "density": 24}
"""Answer budget of each judge, tokens."""

FOLLOWUP_MAX_TOKENS = 60
"""Answer budget of the score-only follow-up, tokens (six short lines)."""

FOLLOWUP_MARK = "\n[score follow-up]\n"
"""Separates the first answer from the follow-up answer in a judgement's ``raw``."""


def judge_model() -> Model:
    """The ``judge`` role, or the task model when no judge is given."""
    return get_model(role="judge")


def user_model() -> Model:
    """The ``user`` role, else the judge, else the task model."""
    return get_model(role="user", default=judge_model())


async def ask(
    model: Model,
    prompt: str,
    *,
    max_tokens: int = 320,
    system: str | None = None,
    temperature: float = 0.0,
    seed: int | None = None,
) -> tuple[str, bool]:
    """One generation of the track's judges, simulated user and environment generator.

    Args:
        model: the inspect model (a role: :func:`judge_model`, :func:`user_model`, or a generator model).
        prompt: the user message.
        max_tokens: the answer budget, tokens (the generator's prompts use the default; each judge
            passes its own from :data:`JUDGE_MAX_TOKENS`).
        system: an optional system message placed first.
        temperature: sampling temperature (0: greedy, as every judge runs).
        seed: sampling seed, for providers that take one.

    Returns:
        The answer text (``""`` when the model gave none) and whether the budget cut it off.
    """
    msgs: list[ChatMessageSystem | ChatMessageUser] = [ChatMessageSystem(content=system)] if system else []
    msgs.append(ChatMessageUser(content=prompt))
    out = await model.generate(msgs, config=GenerateConfig(temperature=temperature, seed=seed, max_tokens=max_tokens))
    return out.completion or "", out.stop_reason == "max_tokens"


def _bare_numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"(?<![\d.])(10|[1-9])(?![\d.])", text)]


def _followup_scores(text: str, guidance: bool) -> GuidanceJudgement | Judgement:
    """Scores of a follow-up answer: labelled lines, else bare numbers in the asked order."""
    if guidance:
        j = parse_guidance_judgement(text)
        if j.score is None:
            nums = _bare_numbers(text)
            if len(nums) >= len(DIMENSIONS):
                dims = dict(zip(DIMENSIONS, nums))
                score = (
                    nums[len(DIMENSIONS)] if len(nums) > len(DIMENSIONS) else round(sum(dims.values()) / len(dims), 1)
                )
                j = GuidanceJudgement(score=score, reasoning="", raw=text, dimensions=dims)
        return j
    j = parse_judgement(text)
    if j.score is None:
        nums = _bare_numbers(text)
        if len(nums) == 1:
            j = Judgement(score=nums[0], reasoning="", raw=text)
    return j


async def _judge_with_followup(model: Model, prompt: str, max_tokens: int, guidance: bool, followup: str):  # noqa: ANN202
    parse = parse_guidance_judgement if guidance else parse_judgement
    first, truncated = await ask(model, prompt, max_tokens=max_tokens)
    parsed = parse(first)
    if parsed.score is not None and not truncated:
        return parsed
    # cut off (a score read there may be the scale being restated) or no score: ask for the score lines only
    messages = [
        ChatMessageUser(content=prompt),
        ChatMessageAssistant(content=first or "(no answer)"),
        ChatMessageUser(content=render(followup)),
    ]
    out = await model.generate(messages, config=GenerateConfig(temperature=0.0, max_tokens=FOLLOWUP_MAX_TOKENS))
    scores = _followup_scores(out.completion or "", guidance)
    if scores.score is None:
        scores = parsed  # the follow-up said nothing readable: keep what the first answer had
    # the first answer is the reasoning as a whole (numbers in it are not the scores)
    reasoning = re.sub(r"^\s*(?:reasoning|reason|analysis)\s*[:：]\s*", "", first.strip(), flags=re.IGNORECASE)
    raw = first + FOLLOWUP_MARK + (out.completion or "")
    if guidance:
        return GuidanceJudgement(
            score=scores.score, reasoning=reasoning, raw=raw, dimensions=dict(getattr(scores, "dimensions", {}) or {})
        )
    return Judgement(score=scores.score, reasoning=reasoning, raw=raw)


async def judge_plan(model: Model, env: Environment, plan: Plan) -> Judgement:
    """Reference-based judgement of a target plan (1-10, 10 = better than the reference)."""
    prompt = render(
        "plan_judge",
        **env_values(env),
        candidate_target=plan.target or "",
        candidate_sub_target=render_sub_targets(plan.sub_target) or "(none)",
    )
    return await _judge_with_followup(model, prompt, JUDGE_MAX_TOKENS["plan"], False, "judge_followup_plan")


async def judge_reached(model: Model, env: Environment, turns: Sequence[Turn]) -> tuple[bool | None, str]:
    """Whether the dialogue has reached the target: (verdict or None if unreadable, raw answer)."""
    prompt = render("termination_judge", **env_values(env), history=render_history(turns))
    raw, _ = await ask(model, prompt, max_tokens=JUDGE_MAX_TOKENS["reached"])
    return parse_reached(raw), raw


async def judge_guidance(
    model: Model, env: Environment, turns: Sequence[Turn], agreeableness: str
) -> GuidanceJudgement:
    """Five dimensions and an overall 1-10 score for a whole dialogue."""
    prompt = render("guide_judge", **env_values(env), agreeableness=agreeableness, history=render_history(turns))
    return await _judge_with_followup(model, prompt, JUDGE_MAX_TOKENS["guide"], True, "judge_followup_guide")


async def extract_mentioned(model: Model, env: Environment, message: str) -> list[int] | None:
    """Numbers (1-based) of the reference sub-targets a message raises; None if unreadable."""
    prompt = render("density_judge", sub_target=render_sub_targets(env.sub_target, numbered=True), message=message)
    text, _ = await ask(model, prompt, max_tokens=JUDGE_MAX_TOKENS["density"])
    return parse_mentioned(text, len(env.sub_target))
