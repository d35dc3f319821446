"""Paired effects of an ablation: each memory against no memory on the same samples.

The difference of a When metric (accuracy or F1, unparsed answers scored by
:data:`proagent.bench.metrics.UNPARSED_RULE`, as in every other figure) or of the mean
semantic similarity, with a paired percentile bootstrap 95% interval
(``scipy.stats.bootstrap``: the same resampled sample ids on both sides, 1000
resamples, fixed seed) and the share of resamples where the difference is <= 0.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..bench.metrics import decisions
from ..records import Score
from .grid import Cell

__all__ = ["EFFECT_COLUMNS", "EFFECT_METRICS", "Effect", "MemoryEffect", "memory_effects", "paired_effect"]

EFFECT_METRICS = ("accuracy", "f1", "semantic_similarity")
"""The metrics whose memory effects ``effects.csv`` holds."""


@dataclass(frozen=True)
class Effect:
    """Run ``b`` against run ``a`` on one metric."""

    delta: float
    """``b - a`` on the samples both scored."""
    ci_low: float
    """Paired percentile bootstrap 95% interval of ``delta``."""
    ci_high: float
    n: int
    """Samples compared."""
    p_le_0: float
    """Share of bootstrap resamples with ``delta <= 0``."""


@dataclass(frozen=True)
class MemoryEffect:
    """One row of ``effects.csv``: a memory against ``none`` at one grid point."""

    model: str
    method: str
    window: str
    memory: str
    decider: str
    metric: str
    delta: float
    ci_low: float
    ci_high: float
    p_le_0: float
    n: int


EFFECT_COLUMNS = (
    "model",
    "method",
    "window",
    "memory",
    "decider",
    "metric",
    "delta",
    "ci_low",
    "ci_high",
    "p_le_0",
    "n",
)
"""Columns of ``effects.csv`` (the fields of :class:`MemoryEffect`)."""


def _when(metric: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Accuracy or F1 along the last axis of label and decision arrays (F1 of no positives at all is 0)."""
    if metric == "accuracy":
        return lambda y, p: np.mean(y == p, axis=-1)

    def f1(y: np.ndarray, p: np.ndarray) -> np.ndarray:
        tp = np.sum(y * p, axis=-1)
        den = np.sum(p, axis=-1) + np.sum(y, axis=-1)
        return np.divide(2 * tp, den, out=np.zeros(np.shape(den), dtype=float), where=den > 0)

    return f1


def paired_effect(
    a: Sequence[Score], b: Sequence[Score], metric: str, n_resamples: int = 1000, seed: int = 0
) -> Effect | None:
    """Effect of run ``b`` against run ``a`` on the samples both scored.

    Args:
        a, b: per-sample scores of the two runs (matched by ``sample_id``).
        metric: ``accuracy`` or ``f1`` (When to Assist), or ``semantic_similarity``
            (samples where both runs have one).
        n_resamples: bootstrap resamples.
        seed: seed of the resampling (``numpy.random.default_rng``).

    Returns:
        The effect, or ``None`` with fewer than 2 shared samples.
    """
    from scipy.stats import bootstrap

    sa = {s.sample_id: s for s in a}
    sb = {s.sample_id: s for s in b}
    ids = [i for i in sb if i in sa]
    if metric == "semantic_similarity":
        ids = [i for i in ids if sa[i].semantic_similarity is not None and sb[i].semantic_similarity is not None]
        d = np.asarray([sb[i].semantic_similarity - sa[i].semantic_similarity for i in ids], dtype=float)

        def diff(idx: np.ndarray) -> np.ndarray:
            return np.mean(d[idx], axis=-1)
    else:
        y = np.asarray([sa[i].label for i in ids], dtype=int)
        pa = decisions(y, [sa[i].predicted for i in ids])
        pb = decisions(y, [sb[i].predicted for i in ids])
        when = _when(metric)

        def diff(idx: np.ndarray) -> np.ndarray:
            return when(y[idx], pb[idx]) - when(y[idx], pa[idx])

    n = len(ids)
    if n < 2:
        return None
    with warnings.catch_warnings():  # degenerate resamples (all equal) are expected on small runs
        warnings.simplefilter("ignore")
        res = bootstrap(
            (np.arange(n),),
            lambda i, axis=-1: diff(i.astype(int)),
            n_resamples=n_resamples,
            confidence_level=0.95,
            method="percentile",
            vectorized=True,
            random_state=np.random.default_rng(seed),
        )
    lo, hi = res.confidence_interval
    boots = res.bootstrap_distribution
    return Effect(
        delta=float(diff(np.arange(n))), ci_low=float(lo), ci_high=float(hi), n=n, p_le_0=float(np.mean(boots <= 0))
    )


def memory_effects(grid: Sequence[Cell], scores: Mapping[str, Sequence[Score]]) -> list[MemoryEffect]:
    """Each memory cell against its ``memory = none`` cell on :data:`EFFECT_METRICS`.

    Args:
        grid: the cells in run order.
        scores: per-sample scores by cell slug (finished cells only; a pair missing a side is skipped).
    """
    rows = []
    for cell in grid:
        ref = cell.without_memory()
        if cell.memory == "none" or cell.slug not in scores or ref.slug not in scores:
            continue
        for m in EFFECT_METRICS:
            e = paired_effect(scores[ref.slug], scores[cell.slug], m)
            if e is not None:
                rows.append(
                    MemoryEffect(
                        cell.model,
                        cell.method,
                        cell.window,
                        cell.memory,
                        cell.decider,
                        m,
                        e.delta,
                        e.ci_low,
                        e.ci_high,
                        e.p_le_0,
                        e.n,
                    )
                )
    return rows
