"""Issue 43: population deciders that do not learn which session a moment is from: session weights
(every session weighs the same, its classes half each), a pairwise ranking model on within-session
differences, calibration folds grouped by session; each saved and loaded as a decider folder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from shared_data import DEV

from proagent.agent.decider import load_decider
from proagent.cli import cli
from proagent.train import WhenConfig, fit_when
from proagent.train.when import session_weights


def _sessions(seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Six sessions whose base rates differ and whose one 'topic' column names the session's rate (the
    trap of issue 43), while a second column ranks the moments within every session."""
    rng = np.random.default_rng(seed)
    xs, ys, gs = [], [], []
    for s, rate in enumerate((0.6, 0.3, 0.25, 0.4, 0.5, 0.1)):
        n = 30
        y = (rng.random(n) < rate).astype(int)
        y[:2] = (1, 0)
        signal = y + rng.normal(0, 1.0, n)  # within the session: higher for the positives
        topic = np.full(n, -rate) + rng.normal(0, 0.01, n)  # names the session, inversely to its rate
        xs.append(np.c_[signal, topic, rng.normal(size=(n, 3))])
        ys.append(y)
        gs += [f"s{s}"] * n
    return np.vstack(xs), np.concatenate(ys), gs


def test_session_weights_make_every_session_and_class_weigh_the_same() -> None:
    y = np.array([1, 0, 0, 0, 1, 1, 0, 0])
    g = ["a", "a", "a", "a", "b", "b", "b", "c"]
    w = session_weights(y, g)
    assert w.sum() == pytest.approx(len(y))
    by = {(s, c): w[(np.array(g) == s) & (y == c)].sum() for s in "ab" for c in (0, 1)}
    assert len({round(v, 9) for v in by.values()}) == 1  # each class of each two-class session: the same
    assert w[7] == pytest.approx(by[("a", 0)])  # a one-class session: its half


@pytest.mark.parametrize("config", [WhenConfig(weights="session"), WhenConfig(model="rank")])
def test_session_neutral_recipes_rank_a_held_out_session_by_the_within_session_signal(config: WhenConfig) -> None:
    """Leave one session out: the recipe ranks the held-out session's moments by the signal that separates
    moments within a session, not by the topic column that only separates sessions."""
    from sklearn.metrics import roc_auc_score

    x, y, g = _sessions()
    ga = np.array(g)
    within = []
    for h in sorted(set(g)):
        tr, te = ga != h, ga == h
        m, _, _ = fit_when(x[tr], y[tr], list(ga[tr]), config)
        p = m.predict_proba(x[te])[:, 1]
        within.append(roc_auc_score(y[te], p))
    assert np.mean(within) > 0.7, within
    m, _, _ = fit_when(x, y, g, config)
    coef = m.steps[-1][1].coef_[0]
    assert coef[0] > 0 and abs(coef[0]) > 3 * abs(coef[1])  # the within-session signal, not the topic


@pytest.mark.skipif(DEV is None, reason="ProactiveBench dev sessions not present")
@pytest.mark.parametrize(
    "options",
    [
        ("--model", "rank"),
        ("--weights", "session"),
        ("--calibration-folds", "sessions"),
        ("--calibration-folds", "none"),
    ],
)
def test_train_when_saves_and_loads_each_recipe(tmp_path: Path, options: tuple[str, str]) -> None:
    code = tmp_path / "code"  # three sessions: enough for folds grouped by session, and fast
    code.mkdir()
    for f in DEV.glob("code_*.json"):
        (code / f.name).write_bytes(f.read_bytes())
    r = CliRunner().invoke(
        cli,
        [
            "train",
            "when",
            "--data",
            str(code),
            "--features",
            "behaviour,keywords",
            *options,
            "--out",
            str(tmp_path / "d"),
        ],
    )
    assert r.exit_code == 0, r.output
    manifest = json.loads((tmp_path / "d" / "manifest.json").read_text())
    assert manifest["config"]["weights"] == ("session" if options[0] == "--weights" else "balanced")
    assert manifest["config"]["calibration_folds"] == (options[1] if options[0] == "--calibration-folds" else "moments")
    assert manifest["config"]["calibration"] == ("none" if options[1] == "none" else "sigmoid")
    d = load_decider(tmp_path / "d")
    from proagent.train import load_split_moments

    samples, _ = load_split_moments(DEV / "code_11.json", "all")
    p = d.probabilities(samples)
    assert p.shape == (len(samples),) and ((0 < p) & (p < 1)).all() and len(set(np.round(p, 6))) > 1


@pytest.mark.parametrize("config", [WhenConfig(), WhenConfig(weights="session"), WhenConfig(model="rank")])
def test_uncalibrated_model_is_the_fit_itself(config: WhenConfig) -> None:
    """``calibration="none"`` (issue 43 round 3): no sigmoid step; the decider's probability is the fitted
    linear model's own (logreg: scikit-learn's balanced logistic regression; session weights and rank:
    the weights of :func:`_linear`, unscaled), and the threshold is still chosen out of fold."""
    from dataclasses import replace

    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from proagent.train.when import _linear

    x, y, g = _sessions()
    cfg = replace(config, calibration="none")
    m, thr, cv = fit_when(x, y, g, cfg)
    assert 0 < thr < 1 and 0 <= cv["auc"] <= 1
    if config.model == "logreg" and config.weights == "balanced":
        ref = make_pipeline(StandardScaler(), LogisticRegression(C=cfg.c, class_weight="balanced", max_iter=5000))
        expected = ref.fit(x, y).predict_proba(x)[:, 1]
    else:
        z = StandardScaler().fit_transform(x)
        w, b = _linear(z, y, g, cfg)
        expected = 1 / (1 + np.exp(-(z @ w + b)))
    np.testing.assert_allclose(m.predict_proba(x)[:, 1], expected, rtol=1e-6, atol=1e-9)
