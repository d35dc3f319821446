"""Prompting methods as inspect_ai solvers (ProAgentBench section 6.2), in one registry.

* ``zero-shot`` (:func:`zero_shot`): one answer at temperature 0.
* ``cot`` (:func:`chain_of_thought`): the paper's four steps (describe, analyse needs,
  judge yes/no, classify intention) before the final answer lines.
* ``sc`` (:func:`self_consistency`): ``n`` sampled answers (chain of thought
  by default) at temperature > 0; majority vote on Need help, the vote fraction
  kept as the confidence (Wang et al. 2023).

A method is one entry of :data:`METHODS`, declared beside its solver with
:func:`register_method`: its instruction (a file in ``agent/prompts/``), its answer
budget and whether it records ``p_yes`` (:mod:`proagent.agent.calibration`; such a method
also takes ``--threshold``). ``eval --method``, ``ablate --methods`` and the ``assist``
task read the registry, so a new method is one decorated solver here.

The sample input is the observation (:func:`~proagent.agent.prompting.observation_prompt`,
the same for every method); each solver adds the system message, its own instruction at
the end of the user message, and the current screenshot when ``images=True`` (or the
sample's ``modality`` is ``image``) and the file exists. Every solver leaves its parsed
:class:`~proagent.records.Prediction` (as a dict) in ``state.metadata["prediction"]`` for
the scorer.
"""

from __future__ import annotations

import inspect
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
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
from inspect_ai.util import materialize_media

from ..errors import UsageError
from ..records import Prediction, Sample
from ..taxonomy import load_taxonomy
from .calibration import p_yes_from_logprobs
from .parsing import parse_answer, to_prediction
from .prompting import instruction_text, observation_prompt, system_prompt

__all__ = [
    "METHODS",
    "Method",
    "MethodOptions",
    "chain_of_thought",
    "check_method",
    "check_threshold",
    "method_solver",
    "register_method",
    "self_consistency",
    "user_prompt",
    "vote",
    "zero_shot",
]


@dataclass(frozen=True)
class MethodOptions:
    """What ``proagent eval`` lets the user set for a method; a method's solver takes those
    of its parameters it names (``images``, ``n``, ``temperature``)."""

    images: bool = False
    """Attach the current screenshot to the prompt (vision models)."""
    n: int = 5
    """Answers sampled per moment (``--sc-samples``; self-consistency)."""
    temperature: float = 0.7
    """Sampling temperature (``--sc-temperature``; self-consistency, > 0)."""


@dataclass(frozen=True)
class Method:
    """One prompting method: everything the task and the commands need to know about it."""

    name: str
    """As ``eval --method`` takes it (``zero-shot``)."""
    solver: Callable[..., Solver]
    """Its ``@solver`` factory (parameters among those of :class:`MethodOptions`)."""
    prompt: str
    """Its instruction, a file in ``agent/prompts/``, put at the end of the user message."""
    max_tokens: int
    """Answer budget per generation, tokens (three answer lines; four CoT steps + lines)."""
    p_yes: bool
    """It records ``p_yes`` when the task asks for log-probabilities, so ``--threshold``
    can decide with it (:func:`proagent.agent.solvers.check_threshold`)."""

    def build(self, options: MethodOptions = MethodOptions()) -> Solver:
        """The method's solver with the ``options`` its factory takes."""
        names = inspect.signature(self.solver).parameters
        return self.solver(**{k: v for k, v in asdict(options).items() if k in names})


METHODS: dict[str, Method] = {}
"""The prompting methods by name (``eval --method`` choices, in registration order),
filled by :func:`register_method`."""


def register_method(
    name: str, *, prompt: str, max_tokens: int, p_yes: bool = False
) -> Callable[[Callable[..., Solver]], Callable[..., Solver]]:
    """Register a prompting method: decorate its ``@solver`` factory (above ``@solver``).

    Example::

        @register_method("my-method", prompt="my_method.txt", max_tokens=200)
        @solver
        def my_method(images: bool = False) -> Solver: ...

    Raises:
        ValueError: ``name`` is taken by another solver, or the prompt file does not exist.
    """

    def add(factory: Callable[..., Solver]) -> Callable[..., Solver]:
        old = METHODS.get(name)
        if old is not None and old.solver is not factory:
            raise ValueError(f"method {name!r} is already registered")
        instruction_text(prompt)  # a missing prompt file is refused here, not at the first sample
        METHODS[name] = Method(name, factory, prompt, int(max_tokens), bool(p_yes))
        return factory

    return add


def check_threshold(threshold: float | str, method: str, *, decider: object = None) -> float:
    """A P(Yes) threshold as a task takes it: a number in [0, 1], for a method that records
    ``p_yes`` (its ``p_yes`` in :data:`METHODS`: ``zero-shot``, ``cot``;
    self-consistency decides by its vote fraction), and not together with a decider (both
    decide When to Assist). Used by ``proagent eval --threshold`` and the ``assist`` task; it lives beside the
    registry whose ``p_yes`` flags it reads.

    Raises:
        proagent.errors.UsageError: the value, the method or the decider rules it out.
    """
    if decider:
        raise UsageError("--decider", "--decider and --threshold both decide When to Assist; give one")
    entry = METHODS.get(method)
    if entry is not None and not entry.p_yes:
        able = [m.name for m in METHODS.values() if m.p_yes]
        names = " or ".join([", ".join(able[:-1]), able[-1]] if len(able) > 1 else able)
        raise UsageError("--threshold", f"needs --method {names} ({method} records no P(Yes))")
    try:
        t = float(threshold)
    except (TypeError, ValueError):
        t = math.nan
    if not 0.0 <= t <= 1.0:
        raise UsageError("--threshold", f"{threshold!r}: expected a number in [0, 1]")
    return t


def user_prompt(sample: Sample, method: str = "zero-shot", modality: str = "text") -> str:
    """The whole user message for one sample and a method of :data:`METHODS` (``zero-shot``,
    ``cot``, ...): the observation (:func:`~proagent.agent.prompting.observation_prompt`) and,
    last, the method's instruction, as its solver sends it.

    Raises:
        KeyError: unknown method.
    """
    return f"{observation_prompt(sample, modality)}\n\n{instruction_text(METHODS[method].prompt)}"


async def _prepare(state: TaskState, method: str, images: bool) -> None:
    """The system message, the method's instruction after the observation, the screenshot."""
    if not any(m.role == "system" for m in state.messages):
        state.messages.insert(0, ChatMessageSystem(content=system_prompt(load_taxonomy())))
    shot = state.metadata.get("screenshot")
    attach = (images or state.metadata.get("modality") == "image") and shot and Path(shot).is_file()
    for i, m in enumerate(state.messages):
        if m.role == "user" and isinstance(m.content, str):
            text = f"{m.content}\n\n{instruction_text(METHODS[method].prompt)}"
            # providers take inline images only: the trusted local file becomes a data URI
            content = [ContentText(text=text), ContentImage(image=await materialize_media(shot))] if attach else text
            state.messages[i] = ChatMessageUser(content=content)
            break


def _finish(state: TaskState, pred: Prediction) -> TaskState:
    state.metadata["prediction"] = asdict(pred)
    return state


def _single(method: str, images: bool) -> Solver:
    """One answer with ``method``'s instruction, parsed by the cascade, with ``p_yes``."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await _prepare(state, method, images)
        state = await generate(state)
        text = state.output.completion if state.output else ""
        pred = to_prediction(state.sample_id, text, parse_answer(text))
        # P(Yes) only where the text gives a decision: an unparsed answer stays unparsed
        if (
            pred.needs_help is not None
            and state.output
            and state.output.choices
            and state.output.choices[0].logprobs is not None
        ):
            pred = replace(pred, p_yes=p_yes_from_logprobs(state.output.choices[0].logprobs))
        return _finish(state, pred)

    return solve


@register_method("zero-shot", prompt="zero_shot.txt", max_tokens=96, p_yes=True)
@solver
def zero_shot(images: bool = False) -> Solver:
    """Zero-shot prompting: the task and one answer in the three-line format."""
    return _single("zero-shot", images)


@register_method("cot", prompt="cot.txt", max_tokens=400, p_yes=True)
@solver
def chain_of_thought(images: bool = False) -> Solver:
    """Chain-of-thought prompting: the paper's four steps, then the three answer lines."""
    return _single("cot", images)


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


@register_method("sc", prompt="cot.txt", max_tokens=400)
@solver
def self_consistency(n: int = 5, temperature: float = 0.7, images: bool = False) -> Solver:
    """Self-consistency: ``n`` chain-of-thought samples at ``temperature`` (> 0), majority vote.

    Each sample uses its own seed (base seed + i), so results are reproducible
    with a seeded model and the cache keeps them apart.

    Raises:
        proagent.errors.UsageError: ``n`` < 1 or ``temperature`` <= 0.
    """
    if n < 1:
        raise UsageError("--sc-samples", "self-consistency needs n >= 1")
    if temperature <= 0:
        raise UsageError("sc_temperature", "self-consistency needs temperature > 0")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await _prepare(state, "sc", images)
        model = get_model()
        base = model.config.seed if model.config.seed is not None else 0
        answers = []
        for i in range(n):
            out = await model.generate(state.messages, config=GenerateConfig(temperature=temperature, seed=base + i))
            answers.append(out.completion)
            state.output = out
        pred = vote(state.sample_id, answers)
        return _finish(state, pred)

    return solve


def check_method(method: str) -> str:
    """``method`` when it is a registered method (:data:`METHODS`, read at each call): the one
    check of ``eval --method`` and the ``assist`` task's ``method`` argument.

    Raises:
        proagent.errors.UsageError: unknown method (``--method``, exit 2).
    """
    if method not in METHODS:
        raise UsageError("--method", f"unknown method {method!r}; choose from {', '.join(METHODS)}")
    return method


def method_solver(method: str, *, sc_samples: int = 5, sc_temperature: float = 0.7, images: bool = False) -> Solver:
    """The solver of a method in :data:`METHODS`, with the options its factory takes.

    Raises:
        proagent.errors.UsageError: unknown method (``--method``).
    """
    return METHODS[check_method(method)].build(
        MethodOptions(images=bool(images), n=int(sc_samples), temperature=float(sc_temperature))
    )
