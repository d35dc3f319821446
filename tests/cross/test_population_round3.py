"""benchmarks/population.py round 3 (issue 43 item 1): the per-session transforms read only a session's
earlier moments, and the pre-written rule picks only a default-feature recipe that meets the target and
keeps the quick start's decider."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import population  # noqa: E402


@pytest.mark.parametrize("kind", ["z", "rank"])
def test_session_transform_is_causal_and_starts_at_the_population(kind: str) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(9, 3)) + np.repeat([[0.0], [5.0], [-5.0]], 3, axis=0)  # three sessions, three levels
    users = np.repeat(["a", "b", "c"], 3)
    fit = np.arange(6)  # the population: sessions a and b
    out = population.session_transform(x, users, fit, kind)
    later = x.copy()
    later[8] += 100.0  # the new person's (session c's) last moment changes; the population does not
    out2 = population.session_transform(later, users, fit, kind)
    np.testing.assert_allclose(out[:8], out2[:8])  # no moment reads a later one of its session
    pop = x[fit]
    if kind == "z":
        np.testing.assert_allclose(out[6], (x[6] - pop.mean(axis=0)) / pop.std(axis=0))  # first: the population's
    else:
        np.testing.assert_allclose(out[6], (pop < x[6]).mean(axis=0) - 0.5)
    # a session's level is taken out: session c (5 below the population) ends near the population's centre
    assert abs(out[8].mean()) < abs((x[8] - pop.mean(axis=0)).mean())


def _row(name: str, kind: str, pooled: float, within: float) -> dict:
    return {"candidate": name, "kind": kind, "pooled": {"auc": pooled}, "within": {"auc": within}}


def test_round3_rule_needs_the_target_the_baseline_within_and_the_quick_start() -> None:
    rows = [
        _row("baseline", "option", 0.33, 0.41),
        _row("fast", "option", 0.65, 0.60),  # meets the target but worsens the quick start
        _row("features only", "features", 0.70, 0.70),  # not the default features
        _row("low within", "transform", 0.62, 0.40),  # within-session below the baseline's
        _row("good", "transform", 0.61, 0.58),
        _row("good too", "option", 0.605, 0.59),  # tied with "good" (0.01), higher within-session
    ]
    quick = {r["candidate"]: {"accuracy": 0.6, "f1": 0.65} for r in rows}
    quick["baseline"] = {"accuracy": 0.544, "f1": 0.606}
    quick["fast"] = {"accuracy": 0.50, "f1": 0.70}
    assert population.choose_round3(rows, quick) == "good too"
    assert population.choose_round3(rows[:4], quick) == "baseline"  # none eligible: today's stays
