"""Does a dialogue run fit its local models' context? Checked before any model work.

``proagent dialogue guide`` with a 2048-token model (SmolLM2's default ``n_ctx``) failed after
114 s, at the guidance judge's prompt, which holds the whole dialogue. Every prompt of a
ProactiveEval sample is bounded before the run: the fixed text (templates and the
environment, measured in characters) plus the generated text it can hold (each agent and
user message at most its answer budget, tokens) plus the call's own answer budget. The
longest call of each role (agent, simulated user, judge) is compared with the context of
the local model playing it; a run that cannot fit is refused in one line that names the
call, the estimate, and what to pass instead.

Tokens of fixed text are estimated as ``ceil(characters / CHARS_PER_TOKEN)`` rather than with
the model's tokenizer: reading a tokenizer from the GGUF file (``transformers``) took 15 s for
SmolLM2 and 34 s for Qwen, longer than the check is meant to take.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from .guidance import AGENT_MAX_TOKENS, USER_MAX_TOKENS
from .judges import FOLLOWUP_MAX_TOKENS, JUDGE_MAX_TOKENS
from .planning import PLAN_MAX_TOKENS, env_from_metadata
from .prompting import AGREEABLENESS_TEXT, env_values, render, render_sub_targets
from .records import Environment

__all__ = ["CHARS_PER_TOKEN", "MESSAGE_TOKENS", "Call", "check_context", "guide_calls", "plan_calls", "text_tokens"]

CHARS_PER_TOKEN = 3.5
"""Characters per token used to bound a fixed text's tokens. Measured on the 84 fixed prompts of
the 12 seed environments (``/work/shared/data/proactiveeval-seed``: plan, guide, user and judge
templates, each filled) with the models' own tokenizers: SmolLM2-135M 3.70 to 5.03 characters
per token (mean 4.37), Qwen2.5-Coder 4.01 to 5.15 (mean 4.62). 3.5 is below every one of them,
so the estimate is at least the true count for those prompts (by 6% or more)."""

MESSAGE_TOKENS = 8
"""Tokens a chat template adds around one message (ChatML: ``<|im_start|>role\\n`` ...
``<|im_end|>\\n``, 5 with Qwen and SmolLM2), rounded up."""

DEFAULT_SYSTEM_TOKENS = 24
"""Qwen2.5's chat template inserts its own system message (about 20 tokens) when a call has none."""

TURN_LABEL_TOKENS = 6
"""``Assistant: `` and ``User: `` with their line breaks, per turn of a rendered history."""


@dataclass(frozen=True)
class Call:
    """The longest call of one role for one sample: prompt plus answer budget, tokens."""

    role: str
    """``agent``, ``user`` or ``judge`` (the inspect model role that answers it)."""
    what: str
    """What the call is, for the message (e.g. ``the guidance judge's follow-up over 6 turns``)."""
    sample: str
    """The sample's id."""
    tokens: int
    """Prompt (estimated) plus answer budget."""


def text_tokens(text: str) -> int:
    """Estimated tokens of a fixed text: ``ceil(len / CHARS_PER_TOKEN)`` (see :data:`CHARS_PER_TOKEN`)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _messages(*texts: str, generated: int = 0, system: bool = True) -> int:
    """Tokens of a call's messages: the fixed texts, ``generated`` tokens of earlier answers held
    in them, the template's tokens per message and, with no system message, Qwen's default one."""
    return (
        sum(text_tokens(t) for t in texts)
        + generated
        + MESSAGE_TOKENS * len(texts)
        + (0 if system else DEFAULT_SYSTEM_TOKENS)
    )


def plan_calls(env: Environment, sample: str) -> list[Call]:
    """Target planning: the agent's plan and the judge's judgement with its follow-up (the
    candidate plan in the judge's prompt is at most :data:`PLAN_MAX_TOKENS`)."""
    v = env_values(env)
    agent = _messages(render("plan_system"), render("plan_user", **v)) + PLAN_MAX_TOKENS
    judge_prompt = render("plan_judge", **v, candidate_target="", candidate_sub_target="")
    first = _messages(judge_prompt, generated=PLAN_MAX_TOKENS, system=False)
    follow = (
        first
        + JUDGE_MAX_TOKENS["plan"]
        + MESSAGE_TOKENS
        + _messages(render("judge_followup_plan"))
        + FOLLOWUP_MAX_TOKENS
    )
    return [
        Call("agent", "the agent's plan", sample, agent),
        Call("judge", "the planning judge's follow-up", sample, max(first + JUDGE_MAX_TOKENS["plan"], follow)),
    ]


def guide_calls(
    env: Environment, level: str, sample: str, *, max_turns: int, memory_turns: int, give_target: bool, density: bool
) -> list[Call]:
    """Dialogue guidance at its longest (``max_turns`` turns, every message at its answer budget;
    every prompt grows with the turns, so the last turn's are the longest): the agent's message,
    the simulated user's reply, the termination judge, the guidance judge and its follow-up, and
    (``density``) the extraction judge."""
    v = env_values(env)
    turn = AGENT_MAX_TOKENS + USER_MAX_TOKENS + TURN_LABEL_TOKENS
    seen = min(max_turns - 1, memory_turns)
    agent = (
        _messages(
            render("guide_agent" if give_target else "guide_agent_no_target", **v),
            render("guide_agent_turn", history=""),
            generated=seen * turn,
        )
        + AGENT_MAX_TOKENS
    )
    user = (
        _messages(
            render("user_sim", **v, agreeableness=AGREEABLENESS_TEXT.get(level, "")),
            render("user_sim_turn", history=""),
            generated=(max_turns - 1) * turn + AGENT_MAX_TOKENS + TURN_LABEL_TOKENS,
        )
        + USER_MAX_TOKENS
    )
    reached = (
        _messages(render("termination_judge", **v, history=""), generated=max_turns * turn, system=False)
        + JUDGE_MAX_TOKENS["reached"]
    )
    judged = _messages(
        render("guide_judge", **v, agreeableness=level, history=""), generated=max_turns * turn, system=False
    )
    follow = (
        judged
        + JUDGE_MAX_TOKENS["guide"]
        + MESSAGE_TOKENS
        + _messages(render("judge_followup_guide"))
        + FOLLOWUP_MAX_TOKENS
    )
    t = f"{max_turns} turn{'' if max_turns == 1 else 's'}"
    calls = [
        Call("agent", f"the agent's message after {seen} seen turns", sample, agent),
        Call("user", f"the simulated user's reply at turn {max_turns}", sample, user),
        Call("judge", f"the termination judge over {t}", sample, reached),
        Call("judge", f"the guidance judge's follow-up over {t}", sample, follow),
    ]
    if density:
        d = (
            _messages(
                render("density_judge", sub_target=render_sub_targets(env.sub_target, numbered=True), message=""),
                generated=AGENT_MAX_TOKENS,
                system=False,
            )
            + JUDGE_MAX_TOKENS["density"]
        )
        calls.append(Call("judge", "the density judge", sample, d))
    return calls


def _calls(task: Any, limit: int | None, options: Mapping[str, Any]) -> list[Call]:
    """The calls of the samples a run of ``task`` evaluates (the first ``limit``)."""
    samples = list(task.dataset)[:limit] if limit else list(task.dataset)
    out: list[Call] = []
    for s in samples:
        env = env_from_metadata(s.metadata)
        if (task.metadata or {}).get("task") == "plan":
            out += plan_calls(env, str(s.id))
        else:
            out += guide_calls(env, s.metadata.get("agreeableness", ""), str(s.id), **options)
    return out


def _local_context(model: str, model_args: Mapping[str, Any]) -> tuple[int, int] | None:
    """``(n_ctx, trained context)`` of a ``local/...`` model with these arguments, without loading it
    (the catalogue's defaults: :mod:`proagent.models.catalog`); ``None`` for other models, or an
    ``n_ctx`` that is not a number (the model's creation reports that)."""
    if not model.startswith("local/"):
        return None
    from ..models.catalog import MODELS

    spec = MODELS.get(model.removeprefix("local/"))
    raw = model_args.get("n_ctx")
    try:
        n_ctx = int(str(raw).strip()) if raw else (spec.n_ctx if spec else 4096)
    except ValueError:
        return None
    return n_ctx, (spec.n_ctx_train if spec else 131072)


def check_context(
    task: Any,
    model: str,
    model_args: Mapping[str, Any],
    roles: Mapping[str, str],
    *,
    limit: int | None = None,
    log_dir: Any = None,
    **options: Any,
) -> list[Call]:
    """Refuse a dialogue run whose longest call (:func:`plan_calls`, :func:`guide_calls`) cannot fit
    the context of the local model playing its role, before any model is loaded.

    Args:
        task: the ``dialogue_plan`` or ``dialogue_guide`` task (its samples and ``metadata["task"]``).
        model: the agent's model; ``model_args`` its arguments (``n_ctx``).
        roles: the model of each other role (``judge``, ``user``); a role naming ``model`` gets
            ``model_args`` too (as the command passes them).
        limit: the samples the run evaluates (the first ``limit``).
        log_dir: the run's log folder; when it already holds logs, the advice adds that a larger
            ``n_ctx`` needs a new ``--log-dir`` (model arguments are part of a run's options).
        options: ``max_turns``, ``memory_turns``, ``give_target``, ``density`` of a guide task.

    Returns:
        The longest call of each role (for a caller that reports them).

    Raises:
        UsageError: (``--model-arg n_ctx``, or ``--judge``/``--user-model`` for another model) naming
            the call, the estimate, the context, and an ``n_ctx`` or a number of turns that fits.
    """
    from pathlib import Path

    who = {"agent": model, **roles}
    longest: dict[str, Call] = {}
    for c in _calls(task, limit, options):
        if c.role not in longest or c.tokens > longest[c.role].tokens:
            longest[c.role] = c
    for role, call in longest.items():
        spec = who.get(role) or model
        ctx = _local_context(spec, model_args if spec == model else {})
        if ctx is None or call.tokens <= ctx[0]:
            continue
        n_ctx, top = ctx
        own = spec == model
        option = "--model-arg n_ctx" if own else {"judge": "--judge", "user": "--user-model"}[role]
        fixes = []
        bigger = max(1024, 2 ** math.ceil(math.log2(call.tokens)))
        if own and bigger <= top:
            fixes.append(f"pass --model-arg n_ctx={bigger}")
        elif not own:
            fixes.append(
                f"choose a {role} model with a larger context (its n_ctx is {n_ctx}; --model-arg sets the agent's)"
            )
        if "max_turns" in options:  # guide: fewer turns is the other way
            fit = _turns_that_fit(task, limit, options, role, n_ctx)
            if fit:
                fixes.append(f"--max-turns {fit}")
        if not fixes:
            fixes.append(f"a model with a context above {top} tokens")
        folder = ""
        if log_dir is not None and any(Path(log_dir).glob("*.eval")):
            folder = f"; {log_dir} holds logs of an earlier run: with another n_ctx choose a new --log-dir"
        raise UsageError(
            option,
            f"{call.what} (sample {call.sample}) needs about {call.tokens} tokens, more than "
            f"the {n_ctx}-token context of {spec}: {' or '.join(fixes)}{folder}",
        )
    return list(longest.values())


def _turns_that_fit(task: Any, limit: int | None, options: Mapping[str, Any], role: str, n_ctx: int) -> int:
    """The most turns (below ``max_turns``) whose ``role`` calls all fit ``n_ctx``; 0 when none does."""
    for turns in range(int(options["max_turns"]) - 1, 0, -1):
        if all(c.tokens <= n_ctx for c in _calls(task, limit, {**options, "max_turns": turns}) if c.role == role):
            return turns
    return 0
