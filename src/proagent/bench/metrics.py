"""When/How-to-Assist metrics over per-sample scores (ProAgentBench section 5.3).

When to Assist: accuracy, precision, recall, F1 of the binary decision (positive
class = needs help). One rule for an unparsed answer in every metric
(:data:`UNPARSED_RULE`): it is a wrong decision, i.e. the opposite of the truth: a
false positive where the truth is No (it lowers precision) and a miss where the
truth is Yes (it lowers recall), so a run cannot score above a baseline by not
answering. It is also counted on its own (``unparsed_rate``), so a model that
cannot follow the format is not mistaken for one that judges badly.

How to Assist: intention accuracy over the 16 categories (positive samples with
an intention label; a missing prediction is wrong) and semantic similarity: the
cosine between the embedding of the predicted query and the best-matching
reference (positive samples with references; a missing query scores 0).

Confidence intervals: 95% percentile bootstrap over samples (``scipy.stats.bootstrap``,
1000 resamples, fixed seed). Baselines: always-yes and always-no on the same
labels.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from ..records import Score

__all__ = [
    "BUDGET_PER_HOUR",
    "HEADLINE",
    "UNPARSED_RULE",
    "baseline",
    "bootstrap_ci",
    "decisions",
    "percentile",
    "precision_at_budget",
    "summarize",
    "when_metrics",
]

BUDGET_PER_HOUR = 4
"""The offer budget precision is reported at unless told otherwise: ``proagent live --max-per-hour``'s default."""

UNPARSED_RULE = "wrong"
"""How an unparsed When-to-Assist answer is scored, the same in accuracy,
precision, recall and F1: as the wrong decision (Yes where the truth is No, No
where it is Yes). Recorded in ``results.json`` as ``unparsed_rule``."""

HEADLINE = ("accuracy", "precision", "recall", "f1", "intention_accuracy", "semantic_similarity")
"""Metrics reported with bootstrap intervals."""


def when_metrics(labels: Sequence[int], predicted: Sequence[int | None]) -> dict[str, float]:
    """Accuracy, precision, recall and F1 of When to Assist.

    ``None`` predictions (unparsed) are the wrong decision in every metric
    (:data:`UNPARSED_RULE`). Precision of a run that never says yes is 0
    (sklearn ``zero_division=0``). The last few inputs are remembered: inspect
    calls the four When metrics (:mod:`proagent.bench.scorers`) on the same
    scores one after the other, several times per run, and each sklearn call
    costs milliseconds.
    """
    key = (tuple(int(t) for t in labels), tuple(None if p is None else int(p) for p in predicted))
    return dict(_when_metrics(*key))


@lru_cache(maxsize=8)
def _when_metrics(labels: tuple[int, ...], predicted: tuple[int | None, ...]) -> dict[str, float]:
    from sklearn.metrics import (  # slow import: lazy
        accuracy_score,
        f1_score,
        precision_score,
        recall_score,
    )

    y = np.asarray(labels, dtype=int)
    if y.size == 0:
        return {"accuracy": math.nan, "precision": math.nan, "recall": math.nan, "f1": math.nan}
    p_bin = decisions(y, predicted)
    return {
        "accuracy": float(accuracy_score(y, p_bin)),
        "precision": float(precision_score(y, p_bin, zero_division=0)),
        "recall": float(recall_score(y, p_bin, zero_division=0)),
        "f1": float(f1_score(y, p_bin, zero_division=0)),
    }


def decisions(y: np.ndarray, predicted: Sequence[int | None]) -> np.ndarray:
    """Decisions with each unparsed one (``None``) replaced by the wrong decision, ``1 - label``
    (:data:`UNPARSED_RULE`); ``y`` are the labels (0/1), the result is an int array of the same length."""
    return np.asarray([1 - int(t) if p is None else int(p) for t, p in zip(y, predicted)], dtype=int)


def baseline(labels: Sequence[int], answer: int) -> dict[str, float]:
    """When metrics of a baseline that always answers ``answer`` (1 = yes)."""
    return when_metrics(labels, [answer] * len(labels))


def precision_at_budget(
    labels: Sequence[int],
    yes: Sequence[int | bool],
    times: Sequence[float],
    users: Sequence[str],
    per_hour: int = BUDGET_PER_HOUR,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict:
    """Precision at an offer budget (issue 33 item 5): within each user's moments in time order, a
    Yes becomes an offer only while fewer than ``per_hour`` offers were let through in the 60
    minutes before it (``proagent live --max-per-hour``); of the offers let through, the share
    that was wanted (label 1). That is what a person experiences under the budget.

    Args:
        labels: 1 = help was needed.
        yes: the decisions (1 = offer).
        times: the moments, seconds (any origin; only differences count).
        users: whose moment each is.
        per_hour: the budget (offers in any 60 minutes).

    Returns:
        ``{"per_hour", "offers", "precision", "ci95"}``: ``precision`` ``None`` when no offer got
        through; ``ci95`` a 95% percentile bootstrap over the offers let through (``n_resamples``,
        fixed ``seed``), ``None`` below two offers.
    """
    order = sorted(range(len(labels)), key=lambda i: (str(users[i]), float(times[i])))
    passed: list[int] = []
    shown: dict[str, list[float]] = {}
    for i in order:
        if not yes[i]:
            continue
        past = shown.setdefault(str(users[i]), [])
        if sum(1 for t in past if float(times[i]) - t < 3600.0) < per_hour:
            past.append(float(times[i]))
            passed.append(int(labels[i]))
    out: dict = {"per_hour": int(per_hour), "offers": len(passed), "precision": None, "ci95": None}
    if passed:
        a = np.asarray(passed, float)
        out["precision"] = float(a.mean())
        if len(a) >= 2:
            rng = np.random.default_rng(seed)
            boots = a[rng.integers(0, len(a), (n_resamples, len(a)))].mean(axis=1)
            out["ci95"] = (float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5)))
    return out


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100) or ``None`` for no values."""
    v = [x for x in values if x is not None]
    return float(np.percentile(v, q)) if v else None


def _headline(scores: Sequence[Score]) -> dict[str, float]:
    m = when_metrics([s.label for s in scores], [s.predicted for s in scores])
    ints = [s.intention_correct for s in scores if s.intention_correct is not None]
    sims = [s.semantic_similarity for s in scores if s.semantic_similarity is not None]
    m["intention_accuracy"] = float(np.mean(ints)) if ints else math.nan
    m["semantic_similarity"] = float(np.mean(sims)) if sims else math.nan
    return m


def bootstrap_ci(
    scores: Sequence[Score], n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> dict[str, tuple[float, float] | None]:
    """95% percentile bootstrap interval of each headline metric.

    Resamples whole samples (so precision and recall move together) with
    ``scipy.stats.bootstrap``; ``None`` where the metric is undefined or there
    are fewer than 2 samples.
    """
    from scipy.stats import bootstrap

    out: dict[str, tuple[float, float] | None] = {k: None for k in HEADLINE}
    if len(scores) < 2:
        return out
    y = np.asarray([s.label for s in scores], dtype=float)
    pb = decisions(y.astype(int), [s.predicted for s in scores]).astype(float)
    ic = np.asarray([np.nan if s.intention_correct is None else float(s.intention_correct) for s in scores])
    ss = np.asarray([np.nan if s.semantic_similarity is None else s.semantic_similarity for s in scores])

    def ratio(a: float, b: float) -> float:
        return a / b if b else 0.0

    def stat(i: np.ndarray, key: str) -> float:
        i = i.astype(int)
        yi, pbi = y[i], pb[i]
        tp = float(np.sum(yi * pbi))
        if key == "accuracy":
            return float(np.mean(yi == pbi))
        if key == "precision":
            return ratio(tp, float(np.sum(pbi)))
        if key == "recall":
            return ratio(tp, float(np.sum(yi)))
        if key == "f1":
            return ratio(2 * tp, float(np.sum(pbi) + np.sum(yi)))
        v = (ic if key == "intention_accuracy" else ss)[i]
        v = v[~np.isnan(v)]
        return float(np.mean(v)) if v.size else math.nan

    idx = np.arange(len(scores), dtype=float)
    for key in HEADLINE:
        base = idx
        if key in ("intention_accuracy", "semantic_similarity"):
            # resample only the samples the metric is defined on: a resample of all
            # samples may hold none of them, which would make the interval NaN
            base = idx[~np.isnan(ic if key == "intention_accuracy" else ss)]
            if base.size < 2:
                continue
        if math.isnan(stat(base, key)):
            continue
        with warnings.catch_warnings():  # degenerate resamples (all equal) are expected on small runs
            warnings.simplefilter("ignore")
            res = bootstrap(
                (base,),
                lambda i, key=key: stat(i, key),
                n_resamples=n_resamples,
                confidence_level=confidence,
                method="percentile",
                vectorized=False,
                random_state=np.random.default_rng(seed),
            )
        lo, hi = res.confidence_interval
        out[key] = None if (math.isnan(lo) or math.isnan(hi)) else (float(lo), float(hi))
    return out


def summarize(scores: Sequence[Score], *, n_resamples: int = 1000, seed: int = 0) -> dict:
    """Every figure of a run: headline metrics, unparsed rate and rule, n, seconds per
    sample (p50, p95), tokens, bootstrap intervals and the baselines.

    Headline values that are undefined for the data (e.g. intention accuracy on
    a source without intention labels) are ``None``.
    """
    head = _headline(scores)
    secs = [s.seconds for s in scores if s.seconds is not None]
    toks = [s.tokens for s in scores if s.tokens is not None]
    labels = [s.label for s in scores]
    out: dict = {k: (None if math.isnan(v) else v) for k, v in head.items()}
    out.update(
        unparsed_rate=(sum(s.predicted is None for s in scores) / len(scores)) if scores else None,
        unparsed_rule=UNPARSED_RULE,
        n=len(scores),
        n_positive=int(sum(labels)),
        n_intention=sum(s.intention_correct is not None for s in scores),
        n_similarity=sum(s.semantic_similarity is not None for s in scores),
        seconds_p50=percentile(secs, 50),
        seconds_p95=percentile(secs, 95),
        tokens_total=int(sum(toks)) if toks else 0,
        tokens_per_sample=(float(np.mean(toks)) if toks else None),
        cached_tokens_total=int(sum(s.extra.get("cached_tokens", 0) for s in scores)),
        ci95=bootstrap_ci(scores, n_resamples=n_resamples, seed=seed) if scores else {},
        baselines={"always_yes": baseline(labels, 1), "always_no": baseline(labels, 0)} if scores else {},
    )
    return out
