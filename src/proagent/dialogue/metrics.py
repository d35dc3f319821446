"""Aggregates of judge scores, shared by the inspect metrics and ``results.json``.

A per-sample score value is a dict with at least ``score`` (1-10, or
:data:`UNSCORED` inside inspect's score value when the agent's answer or the judge's
answer could not be read; :func:`read_value` turns it into ``None`` for everything
above). Unscored samples are left out of means and counted in the unparsed rates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from statistics import mean
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, metric

from .records import DIMENSIONS

__all__ = [
    "SENTINEL_KEYS",
    "UNSCORED",
    "read_value",
    "by_domain",
    "by_domain_agreeableness",
    "group_means",
    "judge_mean",
    "judge_unparsed_rate",
    "mean_of",
    "rate_of",
    "scored",
    "reach_rate",
    "mean_turns",
    "leak_rate",
    "passive_rate",
    "density_mean",
    "first_density_mean",
]

UNSCORED = -1.0
"""Score value of a sample whose answer or judgement could not be read (inside inspect's
score value only: its epoch reducer would turn ``None`` into 0)."""

SENTINEL_KEYS = ("score", *DIMENSIONS, "density", "first_density")
"""The score-value keys that hold :data:`UNSCORED` when there is no value."""


def read_value(value: Mapping[str, Any]) -> dict[str, Any]:
    """A per-sample score value as read from inspect, with :data:`UNSCORED` in
    :data:`SENTINEL_KEYS` replaced by ``None`` (the one place the sentinel is read)."""
    return {k: (None if k in SENTINEL_KEYS and v == UNSCORED else v) for k, v in value.items()}


def scored(values: Iterable[Mapping[str, Any]], key: str = "score") -> list[float]:
    """The readable values of ``key`` (>= 1) among per-sample dicts."""
    out = []
    for v in values:
        x = v.get(key)
        if isinstance(x, (int, float)) and x >= 1:
            out.append(float(x))
    return out


def mean_of(values: Iterable[Mapping[str, Any]], key: str = "score") -> float | None:
    """Mean of the readable values of ``key``, None when there is none."""
    s = scored(values, key)
    return round(mean(s), 3) if s else None


def group_means(
    rows: Sequence[Mapping[str, Any]], keys: Sequence[str], value: str = "score"
) -> dict[str, dict[str, Any]]:
    """Mean, count and unscored count per group; the group name joins the ``keys`` values with ``/``."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        groups.setdefault("/".join(str(r.get(k)) for k in keys), []).append(r)
    return {
        g: {"mean": mean_of(rs, value), "n": len(rs), "unscored": len(rs) - len(scored(rs, value))}
        for g, rs in sorted(groups.items())
    }


def _values(scores: list[SampleScore]) -> list[dict[str, Any]]:
    out = []
    for s in scores:
        if isinstance(s.score.value, dict):
            row = read_value(s.score.value)
            row.update({k: v for k, v in (s.sample_metadata or {}).items() if k in ("domain", "agreeableness")})
            out.append(row)
    return out


@metric
def judge_mean() -> Metric:
    """Mean judge score 1-10 over samples with a readable score (0 when none)."""

    def compute(scores: list[SampleScore]) -> float:
        return mean_of(_values(scores)) or 0.0

    return compute


@metric
def judge_unparsed_rate() -> Metric:
    """Share of samples without a readable score (agent answer or judge answer unreadable)."""

    def compute(scores: list[SampleScore]) -> float:
        v = _values(scores)
        return (len(v) - len(scored(v))) / len(v) if v else 0.0

    return compute


@metric
def by_domain() -> Metric:
    """Mean judge score per domain."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return {
            g: (r["mean"] if r["mean"] is not None else 0.0)
            for g, r in group_means(_values(scores), ["domain"]).items()
        }

    return compute


@metric
def by_domain_agreeableness() -> Metric:
    """Mean judge score per domain and agreeableness (``domain/level``)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        rows = _values(scores)
        return {
            g: (r["mean"] if r["mean"] is not None else 0.0)
            for g, r in group_means(rows, ["domain", "agreeableness"]).items()
        }

    return compute


def rate_of(values: Iterable[Mapping[str, Any]], key: str) -> float | None:
    """Mean of a 0/1 (or count) ``key`` over per-sample dicts that have it, None when none has."""
    v = [float(x[key]) for x in values if isinstance(x.get(key), (int, float)) and x[key] >= 0]
    return round(mean(v), 3) if v else None


def _rate_metric(key: str, doc: str) -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        r = rate_of(_values(scores), key)
        return 0.0 if r is None else r

    compute.__doc__ = doc
    return compute


@metric
def reach_rate() -> Metric:
    """Share of dialogues where the termination judge saw the target reached."""
    return _rate_metric("reached", reach_rate.__doc__ or "")


@metric
def mean_turns() -> Metric:
    """Mean number of turns (an agent message and the user's reply)."""
    return _rate_metric("turns", "")


@metric
def leak_rate() -> Metric:
    """Share of dialogues whose agent messages leak plan metadata ("sub-target 1", "turn 2")."""
    return _rate_metric("leak", "")


@metric
def passive_rate() -> Metric:
    """Share of dialogues with a passive opening ("It sounds like ...")."""
    return _rate_metric("passive_opening", "")


@metric
def density_mean() -> Metric:
    """Mean sub-targets per agent message (extraction judge)."""
    return _rate_metric("density", "")


@metric
def first_density_mean() -> Metric:
    """Mean sub-targets in the first agent message (extraction judge)."""
    return _rate_metric("first_density", "")
