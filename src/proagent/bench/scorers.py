"""The When/How-to-Assist scorer and its inspect metrics.

One scorer reads the method's parsed prediction (``state.metadata["prediction"]``)
and records per-sample terms in the score value: ``correct`` (When accuracy),
``label``, ``predicted`` (1, 0 or -1 for unparsed), ``intention`` (1/0, or -1
when the sample has no intention label) and ``similarity`` (cosine, or -2 when
the sample is not scored for How to Assist). The metrics aggregate those terms
with :mod:`proagent.bench.metrics`, so ``inspect eval`` and ``proagent eval``
report the same numbers.
"""

from __future__ import annotations

import asyncio
import math

from inspect_ai.scorer import Metric, SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import TaskState

from ..agent.parsing import parse_answer, to_prediction
from ..records import Score as ProScore
from . import metrics as M
from .similarity import best_similarity

__all__ = ["assist_scorer", "to_proagent_score"]

NO_INTENTION = -1
NOT_SCORED = -2.0


def to_proagent_score(sample_id: str, value: dict, seconds: float | None = None, tokens: int | None = None, cached: int = 0) -> ProScore:
    """Turn a score value written by :func:`assist_scorer` into a record."""
    pred = int(value["predicted"])
    inten = int(value["intention"])
    sim = float(value["similarity"])
    return ProScore(
        sample_id=sample_id,
        label=int(value["label"]),
        predicted=None if pred < 0 else pred,
        intention_correct=None if inten == NO_INTENTION else bool(inten),
        semantic_similarity=None if sim == NOT_SCORED else sim,
        seconds=seconds,
        tokens=tokens,
        extra={"cached_tokens": cached},
    )


def _records(scores: list[SampleScore]) -> list[ProScore]:
    return [to_proagent_score(str(s.sample_id), s.score.value) for s in scores if isinstance(s.score.value, dict)]


def _nan_to_zero(x: float | None) -> float:
    return 0.0 if x is None or math.isnan(x) else float(x)


def _when(key: str) -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        r = _records(scores)
        return M.when_metrics([s.label for s in r], [s.predicted for s in r])[key] if r else 0.0

    return compute


@metric
def accuracy() -> Metric:
    """When-to-Assist accuracy (unparsed counts as wrong)."""
    return _when("accuracy")


@metric
def precision() -> Metric:
    """When-to-Assist precision (positive class: needs help)."""
    return _when("precision")


@metric
def recall() -> Metric:
    """When-to-Assist recall."""
    return _when("recall")


@metric
def f1() -> Metric:
    """When-to-Assist F1."""
    return _when("f1")


@metric
def unparsed_rate() -> Metric:
    """Share of answers with no readable decision."""

    def compute(scores: list[SampleScore]) -> float:
        r = _records(scores)
        return sum(s.predicted is None for s in r) / len(r) if r else 0.0

    return compute


@metric
def intention_accuracy() -> Metric:
    """How-to-Assist intention accuracy over labelled positives (0 when none)."""

    def compute(scores: list[SampleScore]) -> float:
        v = [s.intention_correct for s in _records(scores) if s.intention_correct is not None]
        return sum(v) / len(v) if v else 0.0

    return compute


@metric
def semantic_similarity() -> Metric:
    """How-to-Assist mean best cosine over positives with references."""

    def compute(scores: list[SampleScore]) -> float:
        v = [s.semantic_similarity for s in _records(scores) if s.semantic_similarity is not None]
        return _nan_to_zero(sum(v) / len(v)) if v else 0.0

    return compute


@scorer(
    metrics=[accuracy(), precision(), recall(), f1(), intention_accuracy(), semantic_similarity(), unparsed_rate()]
)
def assist_scorer(threshold: float | None = None):  # noqa: ANN201
    """Score When to Assist (decision) and How to Assist (intention, query).

    Args:
        threshold: When set, the decision is ``p_yes >= threshold`` for answers
            that carry ``p_yes`` (calibrated decisions, :mod:`proagent.agent.calibration`).
    """

    async def score(state: TaskState, target: Target) -> Score:
        md = state.metadata
        pred = md.get("prediction")
        if pred is None:  # a solver that did not parse: parse the completion here
            text = state.output.completion if state.output else ""
            from dataclasses import asdict

            pred = asdict(to_prediction(state.sample_id, text, parse_answer(text)))
        label = int(md["label"])
        needs = pred.get("needs_help")
        if threshold is not None and pred.get("p_yes") is not None:
            needs = pred["p_yes"] >= threshold
        predicted = -1 if needs is None else int(bool(needs))
        intention = NO_INTENTION
        if label == 1 and md.get("intention"):
            intention = int(pred.get("intention") == md["intention"])
        similarity = NOT_SCORED
        refs = md.get("reference_queries") or []
        if label == 1 and refs:
            # off the event loop: embedding is CPU work that would stall other samples
            similarity = await asyncio.to_thread(best_similarity, pred.get("query") or "", refs)
        return Score(
            value={
                "correct": int(predicted == label),
                "label": label,
                "predicted": predicted,
                "intention": intention,
                "similarity": similarity,
            },
            answer=("unparsed" if predicted < 0 else ("yes" if predicted else "no")),
            explanation=pred.get("parse_method", ""),
            metadata={"prediction": pred, **({"decider": md["decider"]} if "decider" in md else {})},
        )

    return score
