"""The When/How-to-Assist scorer and its inspect metrics.

One scorer reads the method's parsed prediction (``state.metadata["prediction"]``)
and records per-sample terms in the score value: ``correct`` (When accuracy),
``label``, ``predicted``, ``intention`` and ``similarity``. Above this module every
term that has no value is ``None`` (a :class:`proagent.records.Score`); inside
inspect's score value it is a numeric sentinel (see :func:`score_value`). The metrics
aggregate those terms with :mod:`proagent.bench.metrics`, so ``inspect eval`` and
``proagent eval`` report the same numbers.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import asdict
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import TaskState

from ..agent.parsing import parse_answer, to_prediction
from ..records import Prediction
from ..records import Score as ProScore
from . import metrics as M
from .similarity import best_similarity

__all__ = ["assist_scorer", "sample_prediction", "score_value", "to_proagent_score"]

_UNPARSED, _NO_INTENTION, _NOT_SCORED = -1, -1, -2.0


def score_value(
    label: int, predicted: int | None, intention_correct: bool | None, similarity: float | None
) -> dict[str, int | float]:
    """The one place "no value" becomes a number: the terms of a sample as inspect's score value.

    inspect passes every score value through its epoch reducer, which turns each dict entry
    into a float (``value_to_float``: ``None`` becomes 0.0 with a warning), so a missing term
    cannot be ``None`` there without being counted as a wrong or zero answer. Inside the
    value, an unparsed decision is ``predicted = -1``, a sample without an intention label
    ``intention = -1``, a sample not scored for How to Assist ``similarity = -2``;
    :func:`to_proagent_score` reads them back as ``None``.

    Args:
        label: ground truth B_t (0/1).
        predicted: the decision (0/1), ``None`` when unparsed.
        intention_correct: intention accuracy term, ``None`` without an intention label.
        similarity: best cosine of the predicted query (-1..1), ``None`` when not scored.

    Returns:
        ``{"correct", "label", "predicted", "intention", "similarity"}``, all numeric.
    """
    return {
        "correct": int(predicted == label),
        "label": int(label),
        "predicted": _UNPARSED if predicted is None else int(predicted),
        "intention": _NO_INTENTION if intention_correct is None else int(intention_correct),
        "similarity": _NOT_SCORED if similarity is None else float(similarity),
    }


def to_proagent_score(
    sample_id: str, value: dict, seconds: float | None = None, tokens: int | None = None, cached: int = 0
) -> ProScore:
    """Turn a score value written by :func:`assist_scorer` (:func:`score_value`) into a record."""
    pred = int(value["predicted"])
    inten = int(value["intention"])
    sim = float(value["similarity"])
    return ProScore(
        sample_id=sample_id,
        label=int(value["label"]),
        predicted=None if pred == _UNPARSED else pred,
        intention_correct=None if inten == _NO_INTENTION else bool(inten),
        semantic_similarity=None if sim == _NOT_SCORED else sim,
        seconds=seconds,
        tokens=tokens,
        extra={"cached_tokens": cached},
    )


def sample_prediction(sample: Any) -> Prediction | None:
    """The parsed prediction :func:`assist_scorer` recorded for one eval-log sample
    (``EvalSample``); ``None`` when it has none."""
    score = next(iter((sample.scores or {}).values()), None)
    pred = (score.metadata or {}).get("prediction") if score else None
    return Prediction.from_json(pred) if pred else None


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
    """How-to-Assist intention accuracy over labelled positives; NaN when none is labelled (inspect
    prints NaN as ``n/a``, as proagent's table does: 0 would claim every intention was wrong)."""

    def compute(scores: list[SampleScore]) -> float:
        v = [s.intention_correct for s in _records(scores) if s.intention_correct is not None]
        return sum(v) / len(v) if v else math.nan

    return compute


@metric
def semantic_similarity() -> Metric:
    """How-to-Assist mean best cosine over positives with references; NaN when none has one (``n/a``)."""

    def compute(scores: list[SampleScore]) -> float:
        v = [s.semantic_similarity for s in _records(scores) if s.semantic_similarity is not None]
        return _nan_to_zero(sum(v) / len(v)) if v else math.nan

    return compute


@scorer(metrics=[accuracy(), precision(), recall(), f1(), intention_accuracy(), semantic_similarity(), unparsed_rate()])
def assist_scorer(threshold: float | None = None):  # noqa: ANN201
    """Score When to Assist (decision) and How to Assist (intention, query).

    Args:
        threshold: When set, the decision is ``p_yes >= threshold`` for answers
            that carry ``p_yes`` (calibrated decisions, :mod:`proagent.agent.calibration`).
    """

    async def score(state: TaskState, target: Target) -> Score:
        md = state.metadata
        if md.get("prediction") is not None:
            pred = Prediction.from_json(md["prediction"])
        else:  # a solver that did not parse: parse the completion here
            text = state.output.completion if state.output else ""
            pred = to_prediction(state.sample_id, text, parse_answer(text))
        label = int(md["label"])
        needs = pred.needs_help
        if threshold is not None and pred.p_yes is not None:
            needs = pred.p_yes >= threshold
        predicted = None if needs is None else int(bool(needs))
        intention = None
        if label == 1 and md.get("intention"):
            intention = pred.intention == md["intention"]
        similarity = None
        refs = md.get("reference_queries") or []
        if label == 1 and refs:
            # off the event loop: embedding is CPU work that would stall other samples
            similarity = await asyncio.to_thread(best_similarity, pred.query or "", refs)
        return Score(
            value=score_value(label, predicted, intention, similarity),
            answer=("unparsed" if predicted is None else ("yes" if predicted else "no")),
            explanation=pred.parse_method,
            metadata={"prediction": asdict(pred), **({"decider": md["decider"]} if "decider" in md else {})},
        )

    return score
