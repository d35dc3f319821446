"""Online personalisation of When to Assist, measured prequentially on the real dev sessions.

Protocol (issue 22): for each of the six ProactiveBench dev sessions, the
population decider (``proagent train when``'s default: e5 + behaviour + keyword
features, class-weighted logistic regression, sigmoid calibration) is trained
on the other five; the held-out session is replayed in time order; each moment
is decided *before* its label is revealed, then the label is given to the
learner as the user's answer to that moment (full feedback: every moment is
answered). Nothing is tuned on the held-out session: the learners'
hyper-parameters are fixed in :class:`proagent.agent.decider.LearnConfig`, the
threshold is ``c_fa / (c_fa + c_miss)`` from the costs given on the command
line (default 1 and 1).

Rows: always-yes, always-no, the population model alone (at its F1 threshold
chosen on the five training sessions, and at the cost threshold), and each
online method (:data:`proagent.agent.decider.LEARNING_METHODS`) at the cost threshold.
The LLM zero-shot is not re-run: Qwen2.5-Coder-1.5B said Yes at every dev
moment (docs/results.md), so it is the always-yes row.

Figures over the 112 pooled moments: accuracy, precision, recall, F1 (95%
bootstrap intervals, ``proagent.bench.metrics.bootstrap_ci``), AUC (percentile
bootstrap), offers per hour of session time, the share of offers accepted
(= precision), expected cost per hour (``c_fa * FP + c_miss * FN`` over the
sessions' hours), and the same metrics over the moments decided after at least
10 answers. The learning curve (accuracy and F1 by the number of answers
already given, in bins of 5) is written as a PNG.

Feedback modes (``--feedback``, default every one; issue 33 item 4): ``all`` (every
moment answered), ``offered`` (only the offers, as ``proagent live --no-implicit``),
``offered+misses`` (plus a quiet positive moment revealed as a miss with probability
``--reveal``, default 0.5: the person seeks help on their own; known 60 s later, half the
implicit horizon) and ``offered+implicit`` (plus the weak negatives of
:mod:`proagent.live._implicit`: a quiet moment followed by 120 s in the same derived app,
weight 0.25, known 120 s later; live's default). ProactiveBench holds no LLM use, so the
misses are simulated with the stated probability; the weak negatives follow the live rule on
the sessions' own times and apps. ``offered+both-simulated`` (added after the first run showed
that the live rule finds no weak negative in these sessions, whose derived app changes every
half minute; not part of the pre-written rule): a quiet negative moment is revealed as a weak
negative with the same probability ``--reveal``, weight 0.25, 120 s later: the two-sided replay
the issue describes.

Learners: each of :data:`proagent.agent.decider.LEARNING_METHODS`, including ``ensemble``
(the mean of prior-shift and knn). **The default learner is chosen by a rule written before
the run** (:func:`select_default`): rank the learners in each (mode, session) cell of the
modes live can run in (:data:`RANKED_MODES`: ``offered`` and ``offered+implicit``) by the
session's expected cost at the costs given (``--cost-miss 2``: live's default), lowest mean
rank wins, ties to the simpler learner. Every table also gives the precision at an offer
budget (``--max-per-hour``, default 4, live's default): of the Yes decisions a budget lets
through, the share wanted (:func:`budget_precision`), beside always-yes at the same budget
and the base rate.

``--signals``: leave-one-session-out AUC of population-model variants (item 3
of issue 22) on the same six sessions: compact features (no embeddings),
gradient boosting on them, compact features normalised within the user's own
earlier moments, and the auxiliary target (the reference agent proposed
candidate tasks) as the training label.

    python benchmarks/personalise.py [--data ../shared/data/proactivebench]
        [--cost-false-alarm 1] [--cost-miss 1] [--figure runs/personalise-curve.png]
        [--out runs/personalise.json] [--signals] [--quick-start]
        [--feedback all,offered,offered+misses,offered+implicit] [--reveal 0.5] [--max-per-hour 4]
        [--history-signals]

``--history-signals`` (issue 33 item 3): leave-one-session-out AUC of the default and compact
population models with the person's recent responses beside their features
(:func:`history_features`: time since the last offer, offers dismissed in the last 15 minutes),
the history taken from the population model's own offers at the cost threshold (what ``live``
would see) and from every earlier moment (always-yes: the most these signals could carry).

``--quick-start``: the quick start's setting instead (time split within the same
sessions) for each training target, at the trained and the cost threshold.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BINS = ((0, 5), (5, 10), (10, 15), (15, 20), (20, 10_000))


def _hours(samples: list) -> float:
    by: dict[str, list] = {}
    for s in samples:
        by.setdefault(s.user, []).append(s.time)
    return sum((max(t) - min(t)).total_seconds() for t in by.values()) / 3600.0


def _metrics(
    name: str,
    y: np.ndarray,
    pred: np.ndarray,
    p: np.ndarray | None,
    hours: float,
    c_fa: float,
    c_miss: float,
    k: np.ndarray,
) -> dict:
    from decider import _row  # benchmarks/decider.py: metrics with bootstrap intervals

    row = _row(name, y, pred, None)
    if p is not None:
        row["auc"], row["ci95"]["auc"] = _auc_ci(y, p)
    fp = int(np.sum((pred == 1) & (y == 0)))
    fn = int(np.sum((pred == 0) & (y == 1)))
    row["offers_per_hour"] = float(pred.sum()) / hours
    row["accepted_share"] = float(np.mean(y[pred == 1])) if pred.sum() else None
    row["cost_per_hour"] = (c_fa * fp + c_miss * fn) / hours
    late = k >= 10
    if late.sum() >= 2:
        r10 = _row(name, y[late], pred[late], None)
        from proagent.bench.metrics import when_metrics as _wm

        row["after10"] = {
            "n": int(late.sum()),
            "yes": int(pred[late].sum()),
            "ci95": r10["ci95"],
            "always_yes_f1": _wm(list(y[late]), [1] * int(late.sum()))["f1"],
            "always_no_accuracy": float(np.mean(y[late] == 0)),
            **{m: r10[m] for m in ("accuracy", "precision", "recall", "f1")},
        }
    row["curve"] = []
    for lo, hi in BINS:
        sel = (k >= lo) & (k < hi)
        if sel.any():
            from proagent.bench.metrics import when_metrics

            row["curve"].append(
                {
                    "answers": f"{lo}-{hi - 1}" if hi < 10_000 else f"{lo}+",
                    "n": int(sel.sum()),
                    **when_metrics(list(y[sel]), list(pred[sel])),
                }
            )
    return row


MODES = ("all", "offered", "offered+misses", "offered+implicit", "offered+both-simulated")
"""Feedback modes: which labels the learner hears, and when (module docstring)."""

RANKED_MODES = ("offered", "offered+implicit")
"""The modes ``proagent live`` can run in (answers only; answers + implicit labels, its default):
the pre-written rule ranks learners over these."""


def _revealed(
    feedback: str,
    i: int,
    p: float,
    threshold: float,
    y: np.ndarray,
    times: np.ndarray,
    apps: np.ndarray,
    te: np.ndarray,
    draw: np.ndarray,
    reveal: float,
    focus_weight: float,
    horizon: float,
    idle: float,
) -> tuple[int, float, float] | None:
    """What moment ``i`` (decided with P(help) ``p``) teaches under ``feedback``: ``(label, weight, delay in
    seconds)`` or ``None``. An offer is answered at once with the true label; a quiet positive is revealed
    as a miss with probability ``reveal`` (the person seeks help on their own: ``draw[i] < reveal``), known
    half a horizon later; a quiet moment otherwise, followed by ``horizon`` seconds in the same derived app
    (:func:`proagent.live._implicit` rule: next moment within ``idle`` after it), is a weak negative of
    ``focus_weight``, known a horizon later."""
    if feedback == "all":
        return int(y[i]), 1.0, 0.0
    if p >= threshold:
        return int(y[i]), 1.0, 0.0
    if feedback == "offered":
        return None
    if y[i] == 1 and draw[i] < reveal:
        return 1, 1.0, horizon / 2
    if feedback == "offered+both-simulated":  # the two-sided replay of the issue: a quiet negative revealed alike
        return (0, focus_weight, horizon) if y[i] == 0 and draw[i] < reveal else None
    if feedback != "offered+implicit" or not apps[i]:
        return None
    later = [j for j in te if times[j] > times[i]]
    within = [j for j in later if times[j] <= times[i] + horizon]
    settle = [j for j in later if times[j] >= times[i] + horizon]
    if not settle or times[settle[0]] > times[i] + horizon + idle or any(apps[j] != apps[i] for j in within):
        return None
    return 0, focus_weight, horizon


def prequential(
    x: np.ndarray,
    y: np.ndarray,
    users: np.ndarray,
    threshold: float,
    feedback: str = "all",
    y_fit: np.ndarray | None = None,
    target: str = "help",
    times: np.ndarray | None = None,
    apps: np.ndarray | None = None,
    reveal: float = 0.5,
    seed: int = 0,
    embedding_columns: bool = True,
    methods: tuple[str, ...] | None = None,
    history: bool = False,
    day_one: int | None = None,
    max_per_hour: int | None = None,
    ask_rate: int = 0,
) -> dict[str, dict]:
    """Leave-one-session-out prequential replay: P(help) of every moment (in the
    order given, which is time order within each session) for every method.
    ``feedback`` (:data:`MODES`): ``"all"``: every moment's label is revealed after its decision;
    ``"offered"``: only the moments the method offered at (as in ``proagent live``,
    where only an offer gets an answer); ``"offered+misses"``: also a quiet positive moment,
    with probability ``reveal`` (the person went to an LLM on their own), learned half the implicit
    horizon later; ``"offered+implicit"``: also the weak negatives of :mod:`proagent.live._implicit`
    (quiet, then the horizon spent in the same app; ``times`` in seconds and ``apps`` needed),
    a horizon later. The draws are the same for every method (``seed``). ``history``: the person's
    recent responses (:func:`history_features`) beside the features: the population model is trained
    with the history of its own offers (a first model without them, in-sample, at ``threshold``) and
    each learner decides with the history of its own offers and their answers in the held-out
    session. The population model is fitted on ``y_fit`` (the training target; default ``y``), its threshold and everything else on ``y``.

    Live's setting (issue 43): ``day_one`` (K): until the learner has heard K labels of weight >= 0.5, it
    offers by rank among the session's moments of the last hour, filling ``max_per_hour``
    (:func:`proagent.live.rank_threshold`, as ``proagent live``), then at ``threshold``; ``max_per_hour``
    also caps the offers of any hour (live's restraint). ``ask_rate``: at most this many questions per
    session (one session is a day's worth here) at quiet moments whose :func:`proagent.live.uncertainty`
    is at least :data:`proagent.live.ASK_UNCERTAINTY` (as ``proagent live --ask-rate``); the answer is the
    moment's label, weight 1, learned at once.

    Returns:
        ``{name: {"p": (n,), "pred": (n,), "k": (n,)}}`` where ``k`` is how many of
        the user's labels the decision had learned from.
    """
    from proagent.agent.decider import LEARNING_METHODS, LearnConfig, PersonalModel
    from proagent.live import ASK_UNCERTAINTY, rank_threshold, uncertainty
    from proagent.live._implicit import FOCUS_WEIGHT, HORIZON_SECONDS, IDLE_SECONDS
    from proagent.train import WhenConfig, fit_when

    if feedback not in MODES:
        raise ValueError(f"feedback {feedback!r}: choose from {', '.join(MODES)}")
    n = len(y)
    times = np.zeros(n) if times is None else np.asarray(times, float)
    apps = np.array([""] * n, dtype=object) if apps is None else apps
    draw = np.random.default_rng(seed).random(n)
    methods = LEARNING_METHODS if methods is None else methods
    out = {
        name: {"p": np.zeros(n), "pred": np.zeros(n, int)}
        for name in ("population (F1 threshold)", "population", *methods)
    }
    k = np.zeros(n, int)
    for h in sorted(set(users)):
        tr, te = np.flatnonzero(users != h), np.flatnonzero(users == h)
        yf = y if y_fit is None else y_fit
        xs = x
        if history:
            m0, _, _ = fit_when(x[tr], y[tr], list(users[tr]), WhenConfig(target=target), yf[tr])
            xs = np.hstack([x, history_features(times, users, (m0.predict_proba(x)[:, 1] >= threshold).astype(int), y)])
        model, thr, _ = fit_when(xs[tr], y[tr], list(users[tr]), WhenConfig(target=target), yf[tr])
        pop = model.predict_proba(xs[te])[:, 1]
        out["population (F1 threshold)"]["p"][te] = pop
        out["population (F1 threshold)"]["pred"][te] = pop >= thr
        out["population"]["p"][te] = pop
        out["population"]["pred"][te] = pop >= threshold
        k[te] = np.arange(len(te))
        for m in methods:
            pm = PersonalModel(
                model, LearnConfig(method=m), population_data=(xs[tr], yf[tr]), embedding_columns=embedding_columns
            )
            queue: list[tuple[float, int, int, float]] = []  # (known at, moment, label, weight)
            learned = strong = asked = 0
            scores: list[tuple[float, float]] = []
            offered_at: list[float] = []
            mine = np.zeros(n, int)  # this learner's own offers (history)
            xi = xs.copy()
            t0 = time.perf_counter()
            for i in te:  # decide, then reveal what this mode reveals, when it is known
                due = [q for q in queue if q[0] <= times[i]]
                if due:
                    queue = [q for q in queue if q[0] > times[i]]
                    for _, j, lab, w in due:
                        pm.update(xi[j], lab, w)
                        strong += w >= 0.5
                    learned += len(due)
                out[m].setdefault("k", np.zeros(n, int))[i] = learned
                if history:  # the person's responses to this learner's offers so far in the session
                    xi[i, -2:] = history_features(times[te], users[te], mine[te], y[te])[list(te).index(i)]
                p = float(pm.probabilities(xi[i])[0])
                thr = threshold
                if day_one is not None and strong < day_one:
                    scores = [(t, q) for t, q in scores if times[i] - t <= 3600.0] + [(times[i], p)]
                    thr = rank_threshold(scores, int(max_per_hour or 0))
                offer = p >= thr
                if offer and max_per_hour:
                    offer = sum(1 for t in offered_at if times[i] - t < 3600.0) < max_per_hour
                if offer:
                    offered_at.append(times[i])
                mine[i] = int(offer)
                out[m]["p"][i] = p
                out[m]["pred"][i] = offer
                if not offer and asked < ask_rate and uncertainty(p, thr) >= ASK_UNCERTAINTY:
                    asked += 1
                    pm.update(xi[i], int(y[i]), 1.0)
                    learned += 1
                    strong += 1
                    out[m]["questions"] = out[m].get("questions", 0) + 1
                    continue
                got = _revealed(
                    feedback,
                    i,
                    1.0 if offer else 0.0,
                    0.5,
                    y,
                    times,
                    apps,
                    te,
                    draw,
                    reveal,
                    FOCUS_WEIGHT,
                    HORIZON_SECONDS,
                    IDLE_SECONDS,
                )
                if got is not None:
                    lab, w, delay = got
                    if delay == 0:
                        pm.update(xi[i], lab, w)
                        learned += 1
                        strong += w >= 0.5
                    else:
                        queue.append((times[i] + delay, i, lab, w))
                    kind = "answers" if offer or feedback == "all" else ("misses" if lab else "weak_negatives")
                    out[m].setdefault(kind, 0)
                    out[m][kind] += 1
            out[m].setdefault("seconds", 0.0)
            out[m]["seconds"] += time.perf_counter() - t0
        print(f"  {h}: {len(te)} moments replayed", file=sys.stderr, flush=True)
    for v in out.values():
        v.setdefault("k", k)
    return out


def budget_precision(y: np.ndarray, pred: np.ndarray, times: np.ndarray, users: np.ndarray, per_hour: int) -> dict:
    """Precision at an offer budget (:func:`proagent.bench.metrics.precision_at_budget`): of the Yes
    decisions ``--max-per-hour`` lets through in each session, the share wanted, with a 95% bootstrap interval."""
    from proagent.bench.metrics import precision_at_budget

    return precision_at_budget(list(y), list(pred), list(times), list(users), per_hour)


def session_costs(y: np.ndarray, pred: np.ndarray, users: np.ndarray, c_fa: float, c_miss: float) -> dict[str, float]:
    """Expected cost ``c_fa * FP + c_miss * FN`` of each session's decisions."""
    return {
        h: float(
            c_fa * np.sum((pred == 1) & (y == 0) & (users == h))
            + c_miss * np.sum((pred == 0) & (y == 1) & (users == h))
        )
        for h in sorted(set(users))
    }


SIMPLER_FIRST = ("prior-shift", "knn", "ensemble", "pooled", "refit")
"""Tie-break of the pre-written rule: the learner with fewer parameters first."""


def select_default(costs: dict[str, dict[str, dict[str, float]]]) -> tuple[str, dict[str, float]]:
    """The pre-written rule (issue 33 item 4, fixed before the benchmark was run): in every cell
    (feedback mode of :data:`RANKED_MODES` x session), rank the learners by the session's expected
    cost (``c_fa * FP + c_miss * FN`` at the costs given; lower is better; ties share the mean rank);
    the default is the learner with the lowest mean rank over all cells; a tie goes to the simpler
    learner (:data:`SIMPLER_FIRST`). ``costs[mode][learner][session]``.

    Returns:
        (the chosen learner, its mean rank and every other learner's).
    """
    from scipy.stats import rankdata

    learners = sorted({m for by in costs.values() for m in by}, key=SIMPLER_FIRST.index)
    ranks: dict[str, list[float]] = {m: [] for m in learners}
    for by in costs.values():
        for h in sorted(next(iter(by.values()))):
            r = rankdata([by[m][h] for m in learners])
            for m, v in zip(learners, r):
                ranks[m].append(float(v))
    mean = {m: float(np.mean(v)) for m, v in ranks.items()}
    best = min(learners, key=lambda m: (mean[m], SIMPLER_FIRST.index(m)))
    return best, mean


def select_default_43(rows: list[dict], costs: dict[str, dict[str, float]]) -> tuple[str, str]:
    """Issue 43's rule for the default learner of a new person, fixed before the run: in live's
    setting (``--live-setting``: offered + implicit labels, costs 1:2, day one by rank filling 4 offers
    an hour until 10 labels, questions at live's default rate), the learners that beat both baselines on
    all held-out moments at once (accuracy above always-no's and F1 above always-yes's, point
    estimates) are eligible; among them the lowest mean rank of per-session expected cost wins
    (:func:`select_default`'s ranking). When none beats both, the safest is kept: the lowest mean rank of
    per-session expected cost over every learner. Ties go to the simpler learner (:data:`SIMPLER_FIRST`).

    Returns:
        (learner, why: ``"beats both"`` or ``"none beats both: the safest (lowest expected cost)"``).
    """
    yes_f1 = next(r["f1"] for r in rows if r["run"].startswith("always-yes"))
    no_acc = next(r["accuracy"] for r in rows if r["run"] == "always-no")
    learners = [m for m in SIMPLER_FIRST if m in costs]
    both = [
        m for m in learners if (r := next(r for r in rows if r["run"] == m))["f1"] > yes_f1 and r["accuracy"] > no_acc
    ]
    pool = both or learners
    best, _ = select_default({"live": {m: costs[m] for m in pool}})
    return best, "beats both" if both else "none beats both: the safest (lowest expected cost)"


CURVE_BINS = ((0, 5), (5, 10), (10, 15), (15, 20), (20, 10_000))
"""Labels heard before the moment, binned for the published learning curve."""


def learning_curve(y: np.ndarray, pred: np.ndarray, k: np.ndarray) -> list[dict]:
    """Accuracy and F1 of the decisions made after ``lo``..``hi - 1`` labels (:data:`CURVE_BINS`), each with
    its 95% bootstrap interval (:func:`proagent.bench.metrics.bootstrap_ci`), beside always-no's accuracy
    and always-yes's F1 on the same moments."""
    from proagent.bench.metrics import bootstrap_ci, when_metrics
    from proagent.records import Score

    out = []
    for lo, hi in CURVE_BINS:
        sel = (k >= lo) & (k < hi)
        if sel.sum() < 2:
            continue
        yy, pp = y[sel], pred[sel]
        m = when_metrics(list(yy), list(pp))
        ci = bootstrap_ci([Score(str(i), int(a), int(b)) for i, (a, b) in enumerate(zip(yy, pp))], 1000, seed=0)
        out.append(
            {
                "labels": f"{lo}-{hi - 1}" if hi < 10_000 else f"{lo}+",
                "n": int(sel.sum()),
                "accuracy": m["accuracy"],
                "accuracy_ci95": ci["accuracy"],
                "f1": m["f1"],
                "f1_ci95": ci["f1"],
                "always_no_accuracy": float(np.mean(yy == 0)),
                "always_yes_f1": when_metrics(list(yy), [1] * len(yy))["f1"],
            }
        )
    return out


def _auc_ci(y: np.ndarray, p: np.ndarray, seed: int = 0, n: int = 1000) -> tuple[float, tuple[float, float] | None]:
    """AUC (Mann-Whitney: mean rank of the positives, ties averaged; equal to sklearn's roc_auc_score) and
    its 95% percentile bootstrap interval over ``n`` resamples of the moments (benchmarks/decider.py's
    interval, computed with ranks: sklearn's call per resample dominated the run time)."""
    from scipy.stats import rankdata

    def auc(yy: np.ndarray, pp: np.ndarray) -> float | None:
        n1 = int(yy.sum())
        n0 = len(yy) - n1
        if n1 == 0 or n0 == 0:
            return None
        r = rankdata(pp)
        return float((r[yy == 1].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))

    rng = np.random.default_rng(seed)
    vals = [v for _ in range(n) if (v := auc(y[(i := rng.integers(0, len(y), len(y)))], p[i])) is not None]
    return auc(y, p), ((float(np.percentile(vals, 2.5)), float(np.percentile(vals, 97.5))) if vals else None)


def _answers_to_beat(y: np.ndarray, pred: np.ndarray, k: np.ndarray, most: int = 15) -> dict[str, int | None]:
    """The fewest answers ``a`` (0..``most``) such that, over the moments decided after at least
    ``a`` answers, the decisions beat always-yes F1, always-no accuracy, and both, on those same moments
    (``None``: not within ``most``)."""
    from proagent.bench.metrics import when_metrics

    out: dict[str, int | None] = {"always_yes_f1": None, "always_no_accuracy": None, "both": None}
    for a in range(most + 1):
        sel = k >= a
        if sel.sum() < 10:
            break
        m = when_metrics(list(y[sel]), list(pred[sel]))
        f1_yes = when_metrics(list(y[sel]), [1] * int(sel.sum()))["f1"]
        acc_no = float(np.mean(y[sel] == 0))
        beats = {"always_yes_f1": m["f1"] > f1_yes, "always_no_accuracy": m["accuracy"] > acc_no}
        beats["both"] = beats["always_yes_f1"] and beats["always_no_accuracy"]
        for key, ok in beats.items():
            if ok and out[key] is None:
                out[key] = a
    return out


def _compact(samples: list, cache) -> tuple[np.ndarray, list[str]]:  # noqa: ANN001
    from proagent.agent.decider import FeatureConfig, feature_names, moment_features

    fc = FeatureConfig(("similarity", "behaviour", "keywords"))
    return moment_features(samples, cache, fc), feature_names(fc)


def _user_normalised(x: np.ndarray, users: np.ndarray) -> np.ndarray:
    """Each row z-scored against the same user's *earlier* rows (0 before two of them)."""
    out = np.zeros_like(x)
    for u in set(users):
        idx = np.flatnonzero(users == u)
        for j, i in enumerate(idx):
            prev = x[idx[:j]]
            if len(prev) >= 2:
                sd = prev.std(axis=0)
                out[i] = (x[i] - prev.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    return out


HISTORY_WINDOW_SECONDS = 900.0
"""Recent dismissals are counted over this many seconds before the moment (restraint's cool-down, 15 min)."""

HISTORY_CAP_MINUTES = 60.0
"""Time since the last offer is capped here (and is this before the first offer of a session)."""


def history_features(times: np.ndarray, users: np.ndarray, offered: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The person's recent responses as features (issue 33 item 3), from what happened *before* each
    moment in its own session: ``log1p`` of the minutes since the last offer (capped at
    :data:`HISTORY_CAP_MINUTES`, the cap before the first) and the number of offers dismissed
    (offered, label 0) within :data:`HISTORY_WINDOW_SECONDS` before it. An offer is answered at once
    with the moment's label (an accepted offer = help was needed). Shape ``(n, 2)``."""
    out = np.zeros((len(y), 2))
    for u in set(users):
        idx = np.flatnonzero(users == u)
        idx = idx[np.argsort(times[idx], kind="stable")]
        for j, i in enumerate(idx):
            prev = idx[:j]
            offers = prev[offered[prev] == 1]
            mins = (
                min((times[i] - times[offers[-1]]) / 60.0, HISTORY_CAP_MINUTES) if len(offers) else HISTORY_CAP_MINUTES
            )
            recent = offers[times[offers] >= times[i] - HISTORY_WINDOW_SECONDS]
            out[i] = (np.log1p(mins), float(np.sum(y[recent] == 0)))
    return out


def history_auc(
    x: np.ndarray, y: np.ndarray, users: np.ndarray, times: np.ndarray, threshold: float, cfg, policy: str
) -> np.ndarray:  # noqa: ANN001
    """Leave-one-session-out P(help) of a population model given :func:`history_features` beside ``x``.
    ``policy``: whose offers the history holds: ``"always-yes"`` (every earlier moment offered and
    answered: what the signals could carry at most) or ``"population"`` (the offers the population
    model without them makes at ``threshold``: in-sample on the training sessions, out-of-sample on
    the held-out one, as ``proagent live`` would have offered)."""
    from proagent.train import fit_when

    p = np.zeros(len(y))
    for h in sorted(set(users)):
        tr, te = users != h, users == h
        if policy == "always-yes":
            offered = np.ones(len(y), int)
        else:
            m0, _, _ = fit_when(x[tr], y[tr], list(users[tr]), cfg)
            offered = (m0.predict_proba(x)[:, 1] >= threshold).astype(int)
        xh = np.hstack([x, history_features(times, users, offered, y)])
        m, _, _ = fit_when(xh[tr], y[tr], list(users[tr]), cfg)
        p[te] = m.predict_proba(xh[te])[:, 1]
    return p


def signals(
    samples: list,
    x: np.ndarray,
    y: np.ndarray,
    users: np.ndarray,
    cache,
    times: np.ndarray | None = None,  # noqa: ANN001
    threshold: float = 0.5,
    only_history: bool = False,
) -> list[dict]:
    """Leave-one-session-out AUC of population-model variants (``only_history``: the default and
    compact models and their variants with :func:`history_features` only)."""
    from sklearn.metrics import roc_auc_score

    from proagent.train import WhenConfig, fit_when

    xc, _ = _compact(samples, cache)
    aux = np.array([1 if s.current.candidate_tasks else 0 for s in samples])
    variants = {
        "default features, logreg (population model)": (x, y, WhenConfig()),
        "compact features (no embeddings), logreg": (xc, y, WhenConfig(c=0.1)),
        "compact features, gradient boosting": (xc, y, WhenConfig(model="gbm")),
        "compact + normalised within the user's earlier moments, logreg": (
            np.hstack([xc, _user_normalised(xc, users)]),
            y,
            WhenConfig(c=0.1),
        ),
        "default features, trained on the auxiliary target (candidate tasks proposed)": (x, aux, WhenConfig()),
        "default features, trained on help or candidate tasks (train when --target help-or-candidates)": (
            x,
            np.maximum(y, aux),
            WhenConfig(),
        ),
    }
    from proagent.agent.decider import FeatureConfig, moment_features

    if only_history:
        variants = {
            k: v for k, v in variants.items() if k.startswith(("default features, logreg", "compact features (no"))
        }
    else:
        extra = {g: moment_features(samples, cache, FeatureConfig((g,))) for g in ("boundary", "struggle", "intensity")}
        for (
            g,
            xg,
        ) in extra.items():  # issue 33 item 3: each new signal group beside the default and the compact features
            variants[f"default + {g}, logreg"] = (np.hstack([x, xg]), y, WhenConfig())
            variants[f"compact + {g}, logreg"] = (np.hstack([xc, xg]), y, WhenConfig(c=0.1))
        allx = np.hstack(list(extra.values()))
        variants["default + boundary + struggle + intensity, logreg"] = (np.hstack([x, allx]), y, WhenConfig())
        variants["compact + boundary + struggle + intensity, logreg"] = (np.hstack([xc, allx]), y, WhenConfig(c=0.1))
        variants["boundary + struggle + intensity alone, logreg"] = (allx, y, WhenConfig(c=0.1))
    if times is not None:  # time since the last offer and recent dismissals (history_features), two offer policies
        for policy in ("population", "always-yes"):
            variants[f"default + history ({policy} offers), logreg"] = ((x, policy), y, WhenConfig())
            variants[f"compact + history ({policy} offers), logreg"] = ((xc, policy), y, WhenConfig(c=0.1))
    rows = []
    for name, (xv, target, cfg) in variants.items():
        p = np.zeros(len(y))
        if isinstance(xv, tuple):
            p = history_auc(xv[0], target, users, times, threshold, cfg, xv[1])
        else:
            for h in sorted(set(users)):
                tr, te = users != h, users == h
                m, _, _ = fit_when(xv[tr], target[tr], list(users[tr]), cfg)
                p[te] = m.predict_proba(xv[te])[:, 1]
        auc, ci = _auc_ci(y, p)
        within = float(
            np.mean(
                [
                    roc_auc_score(y[users == h], p[users == h])
                    for h in sorted(set(users))
                    if 0 < y[users == h].sum() < (users == h).sum()
                ]
            )
        )
        rows.append({"variant": name, "auc": auc, "ci95": ci, "auc_within_session": within})
        print(f"  {name}: AUC {auc:.3f}", file=sys.stderr, flush=True)
    return rows


def quick_start_rows(data: str, cache) -> list[dict]:  # noqa: ANN001
    """The quick start's setting (train on the earlier half of every session, test on the later
    57 moments) for each training target, at the trained F1 threshold and at the cost threshold 1/3."""
    from proagent.agent.decider import FeatureConfig, moment_features
    from proagent.train import WhenConfig, fit_when, load_split_moments
    from proagent.train.when import training_target

    tr, _ = load_split_moments(data, "train")
    te, _ = load_split_moments(data, "test")
    fc = FeatureConfig()
    xtr, xte = moment_features(tr, cache, fc), moment_features(te, cache, fc)
    ytr, yte = np.array([s.label for s in tr]), np.array([s.label for s in te])
    from decider import _row

    rows = []
    for target in ("help", "help-or-candidates"):
        model, thr, _ = fit_when(xtr, ytr, [s.user for s in tr], WhenConfig(target=target), training_target(tr, target))
        p = model.predict_proba(xte)[:, 1]
        for name, t in ((f"F1 threshold {thr:.3f}", thr), ("cost threshold 1/3", 1 / 3)):
            rows.append(_row(f"--target {target}, {name}", yte, (p >= t).astype(int), p))
    return rows


def _figure(rows: list[dict], path: Path, threshold: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, metric in zip(axes, ("accuracy", "f1")):
        for r in rows:
            xs = [c["answers"] for c in r["curve"]]
            style = "--" if r["run"].startswith(("always", "population")) else "-"
            ax.plot(xs, [c[metric] for c in r["curve"]], style, marker="o", label=r["run"])
        ax.set_xlabel("answers the user had given before the moment")
        ax.set_ylabel(metric if metric == "accuracy" else "F1")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    n = [c["n"] for c in rows[0]["curve"]]
    axes[0].set_title(f"accuracy (moments per bin: {', '.join(map(str, n))})", fontsize=9)
    axes[1].set_title(f"F1 of 'needs help' (threshold {threshold:.2f} from the costs)", fontsize=9)
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="center right")
    fig.suptitle("Prequential learning curve, 6 ProactiveBench dev sessions (leave-one-session-out)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 0.78, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _f(v: float | None, ci=None) -> str:  # noqa: ANN001
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def table(rows: list[dict], per_hour: int = 4) -> str:
    out = [
        "| decider | accuracy [95% CI] | precision | recall | F1 [95% CI] | AUC [95% CI] | offers/hour | share accepted | "
        f"cost/hour | precision at {per_hour} offers/hour [95% CI] (offers) | after 10 labels: accuracy / precision / F1 (n) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        ci = r["ci95"]
        a = r.get("after10")
        b = r["budget"]
        late = (
            (
                f"{_f(a['accuracy'], a['ci95']['accuracy'])} / {_f(a['precision'], a['ci95']['precision'])} / "
                f"{_f(a['f1'], a['ci95']['f1'])} ({a['n']})"
            )
            if a
            else "-"
        )
        out.append(
            f"| {r['run']} | {_f(r['accuracy'], ci['accuracy'])} | {_f(r['precision'], ci['precision'])} | "
            f"{_f(r['recall'], ci['recall'])} | {_f(r['f1'], ci['f1'])} | {_f(r.get('auc'), ci.get('auc'))} | "
            f"{r['offers_per_hour']:.1f} | {_f(r['accepted_share'])} | {r['cost_per_hour']:.1f} | "
            f"{_f(b['precision'], b['ci95'])} ({b['offers']}) | {late} |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/proactivebench"))
    ap.add_argument("--cost-false-alarm", type=float, default=1.0)
    ap.add_argument("--cost-miss", type=float, default=1.0)
    ap.add_argument("--figure", default=str(ROOT / "runs" / "personalise-curve.png"))
    ap.add_argument("--out", default=None, help="Also write every row as JSON here.")
    ap.add_argument(
        "--json", default=None, help="Write the run for render_results.py here (docs/results/personalise.json)."
    )
    ap.add_argument(
        "--feedback",
        default=None,
        help=f"Comma-separated feedback modes to run: {', '.join(MODES)} (module docstring).",
    )
    ap.add_argument(
        "--reveal",
        type=float,
        default=0.5,
        help="Probability that a quiet moment where help was needed is revealed as a miss (0-1).",
    )
    ap.add_argument("--max-per-hour", type=int, default=4, help="Offer budget for the precision at a budget.")
    ap.add_argument("--methods", default=None, help="Only these learners (comma-separated; default every one).")
    ap.add_argument(
        "--sessions", default=None, help="Only these sessions (comma-separated; a small setting for tests)."
    )
    ap.add_argument("--features", default=None, help="Feature groups (default: the decider's default).")
    ap.add_argument(
        "--target",
        choices=("help", "help-or-candidates"),
        default="help",
        help="Training target of the population model (proagent train when --target).",
    )
    ap.add_argument(
        "--quick-start",
        action="store_true",
        help="Also the quick start's time split (earlier half of each session -> later 57 moments) per --target.",
    )
    ap.add_argument("--signals", action="store_true", help="Also measure population-model variants (LOSO AUC).")
    ap.add_argument(
        "--history",
        action="store_true",
        help="Prequential modes with the person's recent responses as features (time since the last "
        "offer, recent dismissals; history_features).",
    )
    ap.add_argument(
        "--history-signals",
        action="store_true",
        help="Only the signals of the person's recent responses (time since the last offer, recent "
        "dismissals) beside the default and compact models, LOSO AUC (no prequential modes run "
        "unless --feedback is given).",
    )
    ap.add_argument(
        "--live-setting",
        action="store_true",
        help="Issue 43: live's setting only (offered + implicit labels, costs 1:2, day one by rank filling "
        "--max-per-hour until --day-one labels, then the learner), with and without questions "
        "(--ask-rate); the default learner by select_default_43, the learning curve with intervals.",
    )
    ap.add_argument("--day-one", type=int, default=None, help="Labels of day one by rank (live: DAY_ONE_LABELS).")
    ap.add_argument(
        "--ask-rate", type=int, default=None, help="Questions per session with questions on (live's default rate)."
    )
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest setting (CI): two sessions (code_11, writing_11), the prior-shift learner, "
        "live's setting with and without questions",
    )
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _common import parse_args

    args = parse_args(
        ap,
        argv,
        smoke={"sessions": "code_11,writing_11", "methods": "prior-shift", "live_setting": True},
        positive=("max_per_hour",),
        non_negative=("cost_false_alarm", "cost_miss", "reveal", "day_one", "ask_rate"),
        existing=("data",),
    )
    if args.live_setting:
        from proagent.live import DAY_ONE_LABELS, DEFAULT_ASK_RATE

        args.cost_miss = 2.0 if args.cost_miss == 1.0 else args.cost_miss
        args.day_one = DAY_ONE_LABELS if args.day_one is None else args.day_one
        args.ask_rate = DEFAULT_ASK_RATE if args.ask_rate is None else args.ask_rate
        args.feedback = "offered+implicit"
    if args.feedback is None:
        args.feedback = "" if args.history_signals else ",".join(MODES)
    modes = [m.strip() for m in args.feedback.split(",") if m.strip()]
    if (not modes and not args.history_signals) or any(m not in MODES for m in modes):
        ap.error(f"--feedback {args.feedback!r}: choose from {', '.join(MODES)}")
    from proagent.agent.decider import LEARNING_METHODS

    if args.methods and any(m not in LEARNING_METHODS for m in args.methods.split(",")):
        ap.error(f"--methods {args.methods!r}: choose from {', '.join(LEARNING_METHODS)}")
    if not 0.0 <= args.reveal <= 1.0:
        ap.error("--reveal must be between 0 and 1")
    warnings.filterwarnings("ignore")

    from _common import guard_network, machine_note, write_result

    from proagent.agent.decider import EmbeddingCache, FeatureConfig, cost_threshold, moment_features
    from proagent.agent.memory import derive_fields
    from proagent.io import write_json_atomic
    from proagent.train import load_split_moments

    guard_network()
    note, machine = machine_note()
    print(note, file=sys.stderr)
    c_fa, c_miss = args.cost_false_alarm, args.cost_miss
    threshold = cost_threshold(c_fa, c_miss)
    real, _ = load_split_moments(args.data, "all")
    if args.sessions:
        keep = {x.strip() for x in args.sessions.split(",")}
        real = [s for s in real if s.user in keep]
    real.sort(key=lambda s: (s.user, s.time))
    cache = EmbeddingCache()
    fc = FeatureConfig(tuple(args.features.split(","))) if args.features else FeatureConfig()
    x = moment_features(real, cache, fc)
    y = np.array([s.label for s in real])
    users = np.array([s.user for s in real])
    times = np.array([s.time.timestamp() for s in real])
    apps = np.array(
        [s.current.app_name or derive_fields(s.current.summary or s.current.window_title)[0] for s in real],
        dtype=object,
    )
    hours = _hours(real)
    print(
        f"{len(real)} moments, {len(set(users))} sessions, {hours * 60:.1f} minutes; threshold {threshold:.3f} "
        f"(cost of a false alarm {c_fa:g}, of a miss {c_miss:g}); modes: {', '.join(modes)} (misses revealed with "
        f"probability {args.reveal:g}); population target: {args.target}; base rate {y.mean():.3f}",
        file=sys.stderr,
    )
    from proagent.train.when import training_target

    result: dict = {
        "threshold": threshold,
        "cost_false_alarm": c_fa,
        "cost_miss": c_miss,
        "hours": hours,
        "reveal": args.reveal,
        "max_per_hour": args.max_per_hour,
        "base_rate": float(y.mean()),
        "target": args.target,
        "modes": {},
    }
    costs: dict[str, dict[str, dict[str, float]]] = {}
    rows: list[dict] = []
    if args.live_setting:
        return _live_setting(args, x, y, users, times, apps, real, hours, threshold, fc, machine, write_result)
    for mode in modes:
        print(f"\n## feedback: {mode}", flush=True)
        runs = prequential(
            x,
            y,
            users,
            threshold,
            mode,
            training_target(real, args.target),
            args.target,
            times,
            apps,
            args.reveal,
            embedding_columns="embedding" in fc.groups,
            methods=tuple(args.methods.split(",")) if args.methods else None,
            history=args.history,
        )
        k = runs["population"]["k"]
        rows = [
            _metrics("always-yes (= LLM zero-shot, quoted)", y, np.ones_like(y), None, hours, c_fa, c_miss, k),
            _metrics("always-no", y, np.zeros_like(y), None, hours, c_fa, c_miss, k),
        ]
        for name, r in runs.items():
            row = _metrics(name, y, r["pred"], r["p"], hours, c_fa, c_miss, r["k"])
            row["answers_to_beat"] = _answers_to_beat(y, r["pred"], r["k"])
            row["session_cost"] = session_costs(y, r["pred"], users, c_fa, c_miss)
            for kind in ("answers", "misses", "weak_negatives"):
                if kind in r:
                    row[kind] = r[kind]
            if "seconds" in r:
                row["update_ms"] = 1000 * r["seconds"] / len(y)
                costs.setdefault(mode, {})[name] = row["session_cost"]
            rows.append(row)
        for row in rows:
            pred = next((r["pred"] for n, r in runs.items() if n == row["run"]), None)
            if pred is None:
                pred = np.ones_like(y) if row["run"].startswith("always-yes") else np.zeros_like(y)
            row["budget"] = budget_precision(y, pred, times, users, args.max_per_hour)
        print(table(rows, args.max_per_hour))
        for r in rows:
            if "update_ms" in r:
                b = r["answers_to_beat"]
                heard = ", ".join(
                    f"{r.get(kind, 0)} {kind.replace('_', ' ')}" for kind in ("answers", "misses", "weak_negatives")
                )
                print(
                    f"{r['run']}: heard {heard}; {r['update_ms']:.1f} ms per decision + update; labels before it "
                    f"beats always-yes F1: {b['always_yes_f1']}, always-no accuracy: {b['always_no_accuracy']}, "
                    f"both: {b['both']}"
                    + (
                        f"; after 10 labels (n={a['n']}): F1 {a['f1']:.3f} vs always-yes "
                        f"{a['always_yes_f1']:.3f}, accuracy {a['accuracy']:.3f} vs always-no "
                        f"{a['always_no_accuracy']:.3f}"
                        if (a := r.get('after10'))
                        else ""
                    )
                )
        result["modes"][mode] = rows
    ranked = {m: costs[m] for m in RANKED_MODES if m in costs}
    if len(ranked) == len(RANKED_MODES):
        best, mean = select_default(ranked)
        result["default"] = {
            "learner": best,
            "mean_rank": mean,
            "rule": select_default.__doc__.split("Returns:")[0].strip(),
        }
        print(
            f"\npre-written rule (mean rank of per-session expected cost over {', '.join(RANKED_MODES)}): "
            + ", ".join(f"{m} {v:.2f}" for m, v in sorted(mean.items(), key=lambda kv: kv[1]))
            + f" -> default: {best}"
        )
    if args.signals or args.history_signals:
        result["signals"] = signals(real, x, y, users, cache, times, threshold, only_history=args.history_signals)
        print(
            "\n| population-model variant (leave-one-session-out) | AUC [95% CI] | AUC within session |\n| --- | --- | --- |"
        )
        for s in result["signals"]:
            print(f"| {s['variant']} | {_f(s['auc'], s['ci95'])} | {_f(s['auc_within_session'])} |")
    if args.quick_start:
        result["quick_start"] = quick_start_rows(args.data, cache)
        print(
            "\n| time split (quick start), population decider | n | accuracy [95% CI] | precision | recall | "
            "F1 [95% CI] | AUC [95% CI] | Yes |\n| --- | --- | --- | --- | --- | --- | --- | --- |"
        )
        for r in result["quick_start"]:
            ci = r["ci95"]
            print(
                f"| {r['run']} | {r['n']} | {_f(r['accuracy'], ci['accuracy'])} | {_f(r['precision'])} | "
                f"{_f(r['recall'])} | {_f(r['f1'], ci['f1'])} | {_f(r['auc'], ci['auc'])} | {r['yes']} |"
            )
    if modes:
        _figure(rows, Path(args.figure), threshold)
        print(f"\nlearning curve ({modes[-1]}): {args.figure}")
    if args.out:
        write_json_atomic(args.out, result)
    table_rows = []
    for mode, mrows in result["modes"].items():
        for r in mrows:
            ci = r["ci95"]
            table_rows.append(
                {
                    "feedback": mode,
                    "run": r["run"],
                    "accuracy": _f(r["accuracy"], ci["accuracy"]),
                    "f1": _f(r["f1"], ci["f1"]),
                    "auc": _f(r.get("auc"), ci.get("auc")),
                    "offers_per_hour": r["offers_per_hour"],
                    "cost_per_hour": r["cost_per_hour"],
                    "update_ms": r.get("update_ms"),
                    "baseline": r["run"].startswith("always-"),
                }
            )
    write_result(
        args.json,
        benchmark="personalise",
        machine=machine,
        rows=table_rows,
        columns=[
            ("feedback", "feedback", ""),
            ("run", "learner", ""),
            ("accuracy", "accuracy [95% CI]", ""),
            ("f1", "F1 [95% CI]", ""),
            ("auc", "AUC [95% CI]", ""),
            ("offers_per_hour", "offers / h", ".1f"),
            ("cost_per_hour", "cost / h", ".1f"),
            ("update_ms", "ms per decision + update", ".1f"),
        ],
        baseline="always-yes (what the LLM zero-shot does on these sessions, quoted) and always-no on the same moments",
        note=f"the six dev sessions replayed in time order, each with the population decider trained on the "
        f"other five; threshold {threshold:.3f} (costs {c_fa:g}:{c_miss:g}); "
        + (
            f"default learner by the pre-written rule: {result['default']['learner']}"
            if "default" in result
            else "no default chosen (not every ranked mode ran)"
        ),
        conditions=", ".join(
            [f"--feedback {args.feedback} only"] * (set(modes) != set(MODES))
            + [f"--sessions {args.sessions}"] * bool(args.sessions)
            + [f"--methods {args.methods}"] * bool(args.methods)
        ),
        figures={k: v for k, v in result.items() if k != "modes"},
    )
    return 0


def _live_setting(args, x, y, users, times, apps, real, hours, threshold, fc, machine, write_result) -> int:  # noqa: ANN001
    """Issue 43's run (``--live-setting``): every learner in live's setting without and with questions."""
    from proagent.train.when import training_target

    c_fa, c_miss = args.cost_false_alarm, args.cost_miss
    live_q = f"questions ({args.ask_rate} a session)"
    settings = {  # label: (feedback, day one labels, offer cap an hour, questions a session)
        "no questions": ("offered+implicit", args.day_one, args.max_per_hour, 0),
        live_q: ("offered+implicit", args.day_one, args.max_per_hour, args.ask_rate),
        "every moment answered (upper bound)": ("all", None, None, 0),
    }
    result: dict = {
        "threshold": threshold,
        "costs": [c_fa, c_miss],
        "day_one_labels": args.day_one,
        "max_per_hour": args.max_per_hour,
        "ask_rate": args.ask_rate,
        "base_rate": float(y.mean()),
        "settings": {},
    }
    table_rows, curve_rows = [], []
    for label, (feedback, day_one, cap, rate) in settings.items():
        print(f"\n## live's setting, {label}", flush=True)
        runs = prequential(
            x,
            y,
            users,
            threshold,
            feedback,
            training_target(real, args.target),
            args.target,
            times,
            apps,
            args.reveal,
            embedding_columns="embedding" in fc.groups,
            methods=tuple(args.methods.split(",")) if args.methods else None,
            day_one=day_one,
            max_per_hour=cap,
            ask_rate=rate,
        )
        k = runs["population"]["k"]
        rows = [
            _metrics("always-yes (= LLM zero-shot, quoted)", y, np.ones_like(y), None, hours, c_fa, c_miss, k),
            _metrics("always-no", y, np.zeros_like(y), None, hours, c_fa, c_miss, k),
        ]
        costs: dict[str, dict[str, float]] = {}
        for name, r in runs.items():
            if name == "population (F1 threshold)":
                continue
            row = _metrics(name, y, r["pred"], r["p"], hours, c_fa, c_miss, r["k"])
            row["answers_to_beat"] = _answers_to_beat(y, r["pred"], r["k"])
            row["questions"] = r.get("questions", 0)
            row["curve"] = learning_curve(y, r["pred"], r["k"])
            if "seconds" in r:
                costs[name] = session_costs(y, r["pred"], users, c_fa, c_miss)
            rows.append(row)
        best, why = select_default_43(rows, costs) if costs else (None, "")
        result["settings"][label] = {"rows": rows, "default": best, "why": why}
        for r in rows:
            a = r.get("after10") or {}
            b = r.get("answers_to_beat") or {}
            ci = r["ci95"]
            table_rows.append(
                {
                    "setting": label,
                    "run": r["run"] + (" (default)" if r["run"] == best and label == live_q else ""),
                    "accuracy": _f(r["accuracy"], ci["accuracy"]),
                    "f1": _f(r["f1"], ci["f1"]),
                    "after10": (
                        f"{_f(a['accuracy'], a['ci95']['accuracy'])} / {_f(a['f1'], a['ci95']['f1'])} (n={a['n']})"
                        if a
                        else "-"
                    ),
                    "beat": "-" if not b else ("not within 15" if b["both"] is None else str(b["both"])),
                    "questions": r.get("questions"),
                    "cost_per_hour": r["cost_per_hour"],
                    "baseline": r["run"].startswith("always-"),
                }
            )
            print(
                f"{label} | {r['run']}: accuracy {_f(r['accuracy'], ci['accuracy'])}, F1 {_f(r['f1'], ci['f1'])}, "
                f"after 10 labels {table_rows[-1]['after10']}, labels to beat both {table_rows[-1]['beat']}, "
                f"questions {r.get('questions')}, cost/h {r['cost_per_hour']:.1f}"
            )
        print(f"{label}: issue 43's rule -> {best} ({why})")
    default_label = live_q  # live's default: questions on
    best = result["settings"][default_label]["default"]
    result["default"] = {
        "learner": best,
        "why": result["settings"][default_label]["why"],
        "rule": select_default_43.__doc__,
    }
    for label in settings:
        row = next((r for r in result["settings"][label]["rows"] if r["run"] == best), None)
        for c in (row or {}).get("curve", []):
            curve_rows.append(
                {
                    "setting": label,
                    "labels": c["labels"],
                    "n": c["n"],
                    "accuracy": _f(c["accuracy"], c["accuracy_ci95"]),
                    "f1": _f(c["f1"], c["f1_ci95"]),
                    "always_no": c["always_no_accuracy"],
                    "always_yes": c["always_yes_f1"],
                }
            )
            print(
                f"curve, {best}, {label}, labels {c['labels']} (n={c['n']}): accuracy {curve_rows[-1]['accuracy']} "
                f"vs always-no {c['always_no_accuracy']:.3f}, F1 {curve_rows[-1]['f1']} vs always-yes {c['always_yes_f1']:.3f}"
            )
    if args.out:
        from proagent.io import write_json_atomic

        write_json_atomic(args.out, result)
    write_result(
        args.json,
        benchmark="personalise",
        machine=machine,
        rows=table_rows,
        columns=[
            ("setting", "questions", ""),
            ("run", "learner", ""),
            ("accuracy", "accuracy [95% CI]", ""),
            ("f1", "F1 [95% CI]", ""),
            ("after10", "after 10 labels: accuracy / F1 [95% CI]", ""),
            ("beat", "labels before it beats both", ""),
            ("questions", "questions asked", ""),
            ("cost_per_hour", "cost / h", ".1f"),
        ],
        tables=[
            {
                "title": f"Learning curve of the default learner ({best}): accuracy and F1 by the labels the person had "
                "given before the moment, beside always-no's accuracy and always-yes's F1 on the same moments",
                "columns": [
                    ("setting", "questions", ""),
                    ("labels", "labels given", ""),
                    ("n", "moments", ""),
                    ("accuracy", "accuracy [95% CI]", ""),
                    ("always_no", "always-no accuracy", ".3f"),
                    ("f1", "F1 [95% CI]", ""),
                    ("always_yes", "always-yes F1", ".3f"),
                ],
                "rows": curve_rows,
            }
        ],
        baseline="always-yes (what the LLM zero-shot does on these sessions, quoted) and always-no on the same moments",
        note=f"live's setting: the six dev sessions replayed in time order, each with the population decider trained "
        f"on the other five; offers answered, implicit labels of quiet moments (misses revealed with probability "
        f"{args.reveal:g}); day one by rank filling {args.max_per_hour} offers an hour until {args.day_one} labels, then "
        f"the cost threshold {threshold:.3f} (costs {c_fa:g}:{c_miss:g}); questions by uncertainty; default learner by "
        f"issue 43's pre-written rule: {best} ({result['default']['why']})",
        conditions=", ".join(
            [f"--sessions {args.sessions}"] * bool(args.sessions) + [f"--methods {args.methods}"] * bool(args.methods)
        ),
        figures={k: v for k, v in result.items() if k != "settings"},
    )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    raise SystemExit(main())
