"""Prompting methods as inspect_ai solvers (ProAgentBench section 6.2).

* ``zero_shot()``: one answer at temperature 0.
* ``chain_of_thought()``: the paper's four steps (describe, analyse needs,
  judge yes/no, classify intention) before the final answer lines.
* ``self_consistency(n, temperature)``: ``n`` sampled answers (chain of thought
  by default) at temperature > 0; majority vote on Need help, the vote fraction
  kept as the confidence (Wang et al. 2023).

When the task requests token log-probabilities, zero-shot and chain of thought
also record ``p_yes`` (:mod:`proagent.agent.calibration`).

Every solver leaves its parsed :class:`~proagent.records.Prediction` (as a dict)
in ``state.metadata["prediction"]`` for the scorer. The user prompt (already
rendered for the method) is the sample input; the solver adds the system
message, and the current screenshot when ``images=True`` and the file exists.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, replace
from pathlib import Path

from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from ..records import Prediction
from ..taxonomy import load_taxonomy
from .calibration import p_yes_from_logprobs
from .parsing import parse_answer, to_prediction
from .prompting import system_prompt

__all__ = ["METHODS", "chain_of_thought", "method_solver", "self_consistency", "vote", "zero_shot"]

METHODS = ("zero-shot", "cot", "sc")
"""Names accepted by ``proagent eval --method``."""


def _prepare(state: TaskState, images: bool) -> None:
    if not any(m.role == "system" for m in state.messages):
        state.messages.insert(0, ChatMessageSystem(content=system_prompt(load_taxonomy())))
    shot = state.metadata.get("screenshot")
    if images and shot and Path(shot).is_file():
        for i, m in enumerate(state.messages):
            if m.role == "user" and isinstance(m.content, str):
                state.messages[i] = ChatMessageUser(content=[ContentText(text=m.content), ContentImage(image=shot)])
                break


def _finish(state: TaskState, pred: Prediction) -> TaskState:
    state.metadata["prediction"] = asdict(pred)
    return state


def _single(images: bool) -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        _prepare(state, images)
        state = await generate(state)
        text = state.output.completion if state.output else ""
        pred = to_prediction(state.sample_id, text, parse_answer(text))
        # P(Yes) only where the text gives a decision: an unparsed answer stays unparsed
        if pred.needs_help is not None and state.output and state.output.choices and state.output.choices[0].logprobs is not None:
            pred = replace(pred, p_yes=p_yes_from_logprobs(state.output.choices[0].logprobs))
        return _finish(state, pred)

    return solve


@solver
def zero_shot(images: bool = False) -> Solver:
    """Zero-shot prompting: one answer in the three-line format."""
    return _single(images)


@solver
def chain_of_thought(images: bool = False) -> Solver:
    """Chain-of-thought prompting with the paper's four steps (the input must be
    rendered with the ``cot`` instruction)."""
    return _single(images)


def vote(sample_id: object, answers: list[str]) -> Prediction:
    """Majority vote over raw answers.

    Unparsed answers do not vote. Ties go to Yes (the costlier miss for a
    proactive agent is silence when help was needed). The intention is the most
    common one among the answers on the winning side; the query is the first one
    on that side. Confidence = winning votes / parsed answers.
    """
    parsed = [parse_answer(a) for a in answers]
    votes = [p.needs_help for p in parsed if p.needs_help is not None]
    raw = "\n\n---\n\n".join(answers)
    if not votes:
        return Prediction(str(sample_id), None, parse_method="unparsed", raw=raw)
    yes = sum(votes)
    decision = yes * 2 >= len(votes)
    side = [p for p in parsed if p.needs_help is decision]
    intents = Counter(p.intention for p in side if p.intention)
    query = next((p.query for p in side if p.query), None)
    return Prediction(
        sample_id=str(sample_id),
        needs_help=decision,
        intention=intents.most_common(1)[0][0] if intents else None,
        query=query,
        confidence=(yes if decision else len(votes) - yes) / len(votes),
        parse_method="vote",
        raw=raw,
    )


@solver
def self_consistency(n: int = 5, temperature: float = 0.7, images: bool = False) -> Solver:
    """Self-consistency: ``n`` samples at ``temperature`` (> 0), majority vote.

    Each sample uses its own seed (base seed + i), so results are reproducible
    with a seeded model and the cache keeps them apart.
    """
    if n < 1:
        raise ValueError("self-consistency needs n >= 1")
    if temperature <= 0:
        raise ValueError("self-consistency needs temperature > 0")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        _prepare(state, images)
        model = get_model()
        base = model.config.seed if model.config.seed is not None else 0
        answers = []
        for i in range(n):
            out = await model.generate(
                state.messages, config=GenerateConfig(temperature=temperature, seed=base + i)
            )
            answers.append(out.completion)
            state.output = out
        pred = vote(state.sample_id, answers)
        return _finish(state, pred)

    return solve


def method_solver(method: str, *, sc_samples: int = 5, sc_temperature: float = 0.7, images: bool = False) -> Solver:
    """The solver for a method name in :data:`METHODS`.

    Raises:
        ValueError: unknown method.
    """
    if method == "zero-shot":
        return zero_shot(images=images)
    if method == "cot":
        return chain_of_thought(images=images)
    if method == "sc":
        return self_consistency(n=sc_samples, temperature=sc_temperature, images=images)
    raise ValueError(f"unknown method {method!r}; choose from {', '.join(METHODS)}")
