"""Why the population When decider ranks a new session's moments backwards, and which fix wins (issue 43 item 1).

Protocol: leave-one-session-out on the six ProactiveBench dev sessions (112 moments): each candidate
recipe is fitted on five sessions and scores the sixth; nothing is tuned on the held-out session
(every hyper-parameter is the product's default or fixed below before the run).

Figures per candidate, each with a 95% percentile bootstrap interval (1000 resamples of the moments,
drawn within each session so every session keeps its size):

* ``pooled AUC``: the AUC over the 112 held-out scores pooled across the six folds (the issue's
  figure, 0.33 today). Pooling compares scores of different folds' models: a fold whose training
  sessions hold fewer positives scores its held-out session lower, so a session's base rate and its
  scores can move apart (pooled leave-one-out AUC is biased low: Parker, Gunter & Bedo 2007; Airola et
  al. 2011).
* ``within-session AUC``: the share of (positive, negative) pairs *of the same session* ordered
  correctly (ties half), pooled over sessions: how well the model ranks one person's moments, which
  is what ``proagent live`` uses on day one (it offers at the person's highest-ranked moments).

**The rule, written before the run** (:func:`choose`): among the candidates the product can train
(``product`` True: ``proagent train when`` options), the winner has the highest pooled AUC among
those whose within-session AUC is at least the baseline's; pooled AUCs within 0.01 are a tie, broken
by the higher within-session AUC, then by the earlier (simpler) candidate in :data:`CANDIDATES` order.
The other candidates are diagnostics (they say where the inversion comes from) and are reported
beside. The winner then replaces ``train when``'s default only if the quick start's decider is no
worse (``--quick-start``: time split, 57 test moments, accuracy and F1 of the decider alone).

**Round 2** (``--round 2``, designed after round 1 on the same six sessions, so its choice is a
selection on the dev sessions; the six held-out sessions are the independent test). Round 1 found the
mechanism: today's sigmoid calibration (3 folds over *moments*) flips the ranking (within-session AUC
0.584 uncalibrated, 0.408 calibrated), and its winner by the rule (``help-or-candidates target``, pooled
0.560) made the quick start's decider worse (accuracy 0.439, F1 0.484 against 0.544, 0.606), so by the
rule it did not replace the default. Round 2 adds calibration on folds grouped by session
(``WhenConfig(calibration="sessions")``) to today's recipe and to the round-1 product candidates.
**Round 2's rule, written before its run** (:func:`choose_round2`): the default becomes the candidate
with the highest within-session AUC (what ``live``'s day one uses: it ranks the person's own recent
moments; after day one the learner's offset sets the person's level) among those whose pooled AUC is at
least today's and whose quick-start accuracy and F1 are both at least today's (point estimates);
within-session AUCs within 0.01 tie, broken by the higher pooled AUC; none qualifies: today's stays.

**Round 3** (``--round 3``, designed after rounds 1-2 on the same six sessions: a selection on the dev
sessions). Candidates: no calibration at all (``WhenConfig(calibration="none")``, the threshold still
chosen on grouped out-of-fold probabilities), alone and with session weights or the ranking loss; each
feature standardised, or rank-transformed, *within its session* against the session's earlier moments
(causal: what ``live`` holds of the person's recent moments; shrunk to the training population by 5
pseudo-moments, so the first moment of a session gets the population's mean and scale), with and
without calibration; fewer general features (similarity, behaviour, keywords; logistic, C=0.1); and
each default feature group dropped in turn from the standardised recipe (the measured effect of each
group). Every AUC has two 95% intervals: moments resampled within sessions (as rounds 1-2), and sessions
resampled with replacement, then their moments (``sessions``: the wider one, six sessions).
**Round 3's rule, written before its run** (:func:`choose_round3`): eligible are the candidates with the
default features (``kind`` ``option`` or ``transform``) whose pooled AUC is at least 0.60 (the issue's
target), whose within-session AUC is at least the baseline's, and whose quick-start accuracy and F1 are
both at least the baseline's (point estimates, the same run); the winner has the highest pooled AUC,
within 0.01 a tie broken by the higher within-session AUC, then by :data:`CANDIDATES_3` order; none
eligible: today's stays. A ``transform`` winner (a per-session feature transform) needs the person's
earlier moments at prediction time (the decider, ``eval`` and ``live``), so it becomes the default only
with that product work; an ``option`` winner is a ``proagent train when`` recipe and becomes the default.

    python benchmarks/population.py [--data ../shared/data/proactivebench] [--json docs/results/population.json]
        [--quick-start] [--smoke] [--round 2]
"""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

CANDIDATES = (
    ("baseline", True, "today's default: e5 + similarity + behaviour + keywords, logreg, balanced classes, Platt"),
    ("uncalibrated", False, "the same logreg without sigmoid calibration (does calibration flip it?)"),
    ("no class weights", False, "logreg without class weights, Platt"),
    ("session-balanced", True, "--weights session: every session weighs the same, half positives, half negatives"),
    ("ranking", True, "--model rank: pairwise logistic loss on within-session (positive - negative) differences"),
    ("help-or-candidates target", True, "--target help-or-candidates (today's option)"),
    ("session-balanced, help-or-candidates", True, "--weights session --target help-or-candidates"),
    ("ranking, help-or-candidates", True, "--model rank --target help-or-candidates"),
    ("fewer features", True, "--features similarity,behaviour,keywords (no embeddings), logreg C=0.1"),
    ("fewer features, ranking", True, "--features similarity,behaviour,keywords --model rank --c 0.1"),
    ("names masked", False, "e5 of the texts with quoted strings, file names, URLs and capitalised names masked"),
    (
        "per-session standardised",
        False,
        "features z-scored against the session's earlier moments (5 pseudo-moments of the population)",
    ),
    ("label horizon 60 s", False, "trained on 'help now or at the next moment within 60 s'"),
    ("duplicates dropped", False, "training moments whose current text repeats an earlier one dropped"),
)
"""(name, trainable by the product, what it is), in the rule's tie-break order."""


CANDIDATES_2 = (
    ("baseline", "today's default (calibration folds over moments)"),
    ("grouped calibration", "calibration folds grouped by session (--calibration sessions)"),
    ("grouped calibration, session-balanced", "--calibration sessions --weights session"),
    ("grouped calibration, help-or-candidates", "--calibration sessions --target help-or-candidates"),
    ("ranking", "--model rank (its calibration is on session-grouped out-of-fold scores already)"),
    ("session-balanced", "--weights session (likewise)"),
)
"""Round 2's candidates (module docstring), each a ``proagent train when`` recipe."""


CANDIDATES_3 = (
    # (name, kind, config kwargs, transform, feature groups or None for the default, what)
    ("baseline", "option", {}, None, None, "today's default (logreg, balanced classes, Platt over moments)"),
    ("uncalibrated", "option", {"calibration": "none"}, None, None, "--calibration-folds none"),
    (
        "session-balanced, uncalibrated",
        "option",
        {"weights": "session", "calibration": "none"},
        None,
        None,
        "--weights session --calibration-folds none",
    ),
    (
        "ranking, uncalibrated",
        "option",
        {"model": "rank", "calibration": "none"},
        None,
        None,
        "--model rank --calibration-folds none",
    ),
    ("standardised", "transform", {}, "z", None, "features z-scored within the session, today's Platt"),
    ("standardised, uncalibrated", "transform", {"calibration": "none"}, "z", None, "z-scored, no calibration"),
    (
        "standardised, session-balanced, uncalibrated",
        "transform",
        {"weights": "session", "calibration": "none"},
        "z",
        None,
        "z-scored, session weights, no calibration",
    ),
    (
        "standardised, ranking, uncalibrated",
        "transform",
        {"model": "rank", "calibration": "none"},
        "z",
        None,
        "z-scored, ranking loss, no calibration",
    ),
    ("ranks, uncalibrated", "transform", {"calibration": "none"}, "rank", None, "within-session ranks, no calibration"),
    (
        "ranks, ranking, uncalibrated",
        "transform",
        {"model": "rank", "calibration": "none"},
        "rank",
        None,
        "within-session ranks, ranking loss, no calibration",
    ),
    (
        "few general features, standardised, uncalibrated",
        "features",
        {"calibration": "none", "c": 0.1},
        "z",
        ("similarity", "behaviour", "keywords"),
        "similarity, behaviour, keywords z-scored within the session; logistic C=0.1, no calibration",
    ),
    *(
        (
            f"standardised, uncalibrated, without {g}",
            "features",
            {"calibration": "none"},
            "z",
            tuple(x for x in ("embedding", "similarity", "behaviour", "keywords") if x != g),
            f"the standardised, uncalibrated recipe without the {g} group",
        )
        for g in ("embedding", "similarity", "behaviour", "keywords")
    ),
)
"""Round 3's candidates (module docstring), in the rule's tie-break order. ``kind``: ``option`` (a
``proagent train when`` recipe), ``transform`` (default features transformed within the session: needs
product work), ``features`` (not the default features: the measured effect of a feature choice)."""


def choose_round3(rows: list[dict], quick: dict[str, dict], target: float = 0.60) -> str:
    """Round 3's rule (module docstring): among default-feature candidates with pooled AUC >= ``target``,
    within-session AUC >= the baseline's and quick-start accuracy and F1 >= the baseline's, the highest
    pooled AUC (within 0.01 a tie: higher within-session AUC, then earlier in :data:`CANDIDATES_3`);
    none: ``baseline``."""
    base = next(r for r in rows if r["candidate"] == "baseline")
    qb = quick["baseline"]
    ok = [
        r
        for r in rows
        if r["kind"] in ("option", "transform")
        and r["pooled"]["auc"] >= target - 1e-12
        and r["within"]["auc"] >= base["within"]["auc"] - 1e-12
        and quick[r["candidate"]]["accuracy"] >= qb["accuracy"] - 1e-12
        and quick[r["candidate"]]["f1"] >= qb["f1"] - 1e-12
    ]
    if not ok:
        return "baseline"
    top = max(r["pooled"]["auc"] for r in ok)
    tied = [r for r in ok if r["pooled"]["auc"] >= top - 0.01]
    return max(tied, key=lambda r: (r["within"]["auc"], -rows.index(r)))["candidate"]


def session_transform(
    x: np.ndarray, users: np.ndarray, fit_rows: np.ndarray, kind: str, prior: float = 5.0
) -> np.ndarray:
    """Each row of ``x`` (sorted by session, then time) transformed against its session's *earlier* rows,
    shrunk to the population of ``fit_rows`` (the training rows) by ``prior`` pseudo-moments.

    ``kind`` ``z``: (x - mean) / SD with mean and variance ``(n * session + prior * population) / (n + prior)``
    over the n earlier rows. ``rank``: the share of values below (ties half), session's and population's
    mixed the same way, minus 0.5. Causal: no row reads a later row of its session."""
    pop = x[fit_rows]
    m0, v0 = pop.mean(axis=0), pop.var(axis=0)
    out = np.zeros_like(x, dtype=float)
    for u in sorted(set(users)):
        idx = np.flatnonzero(users == u)
        for j, i in enumerate(idx):
            prev = x[idx[:j]]
            n = len(prev)
            if kind == "z":
                mean = (n * prev.mean(axis=0) + prior * m0) / (n + prior) if n else m0
                var = (n * prev.var(axis=0) + prior * v0) / (n + prior) if n else v0
                sd = np.sqrt(var)
                out[i] = (x[i] - mean) / np.where(sd > 0, sd, 1.0)
            else:
                fp = ((pop < x[i]).sum(axis=0) + 0.5 * (pop == x[i]).sum(axis=0)) / len(pop)
                fs = ((prev < x[i]).sum(axis=0) + 0.5 * (prev == x[i]).sum(axis=0)) / n if n else fp
                out[i] = (n * fs + prior * fp) / (n + prior) - 0.5
    return out


def _features_3(data: dict, groups: tuple[str, ...] | None) -> np.ndarray:
    """The dev moments' features of ``groups`` (columns cut from the default features' matrix)."""
    from proagent.agent.decider import DEFAULT_GROUPS, FeatureConfig, feature_names

    if groups is None:
        return data["x"]
    names = feature_names(FeatureConfig(DEFAULT_GROUPS))
    keep = set(feature_names(FeatureConfig(groups)))
    return data["x"][:, [i for i, n in enumerate(names) if n in keep]]


def loso_scores_3(name: str, data: dict) -> np.ndarray:
    """Held-out scores of every dev moment under round 3's candidate ``name`` (leave-one-session-out;
    a transform's population is the training sessions of the fold)."""
    from proagent.train import WhenConfig, fit_when

    _, _, kw, transform, groups, _ = next(c for c in CANDIDATES_3 if c[0] == name)
    x0, y, users = _features_3(data, groups), data["y"], data["users"]
    p = np.zeros(len(y))
    for h in sorted(set(users)):
        tr, te = np.flatnonzero(users != h), np.flatnonzero(users == h)
        x = session_transform(x0, users, tr, transform) if transform else x0
        m, _, _ = fit_when(x[tr], y[tr], list(users[tr]), WhenConfig(**kw))
        p[te] = m.predict_proba(x[te])[:, 1]
    return p


def quick_start_3(data_dir: str, names: list[str]) -> dict[str, dict]:
    """The quick start's decider (train split -> the later 57 moments) of each round-3 candidate; a
    transform reads each session's earlier moments of both splits, its population the train split."""
    from decider import _row

    from proagent.agent.decider import EmbeddingCache, FeatureConfig, moment_features
    from proagent.train import WhenConfig, fit_when, load_split_moments

    allm, _ = load_split_moments(data_dir, "all")
    allm.sort(key=lambda s: (s.user, s.time))
    cache = EmbeddingCache()
    y = np.array([s.label for s in allm])
    users = np.array([s.user for s in allm])
    tr = np.array([i for i, s in enumerate(allm) if s.split == "train"])
    te = np.array([i for i, s in enumerate(allm) if s.split == "test"])
    out = {}
    for name in names:
        _, _, kw, transform, groups, _ = next(c for c in CANDIDATES_3 if c[0] == name)
        x = moment_features(allm, cache, FeatureConfig(groups) if groups else FeatureConfig())
        if transform:
            x = session_transform(x, users, tr, transform)
        m, thr, _ = fit_when(x[tr], y[tr], list(users[tr]), WhenConfig(**kw))
        p = m.predict_proba(x[te])[:, 1]
        out[name] = {**_row(name, y[te], (p >= thr).astype(int), p), "threshold": thr}
    return out


def config_2(name: str):  # noqa: ANN201
    """The :class:`~proagent.train.WhenConfig` of a round-2 candidate."""
    from proagent.train import WhenConfig

    return {
        "baseline": WhenConfig(),
        "grouped calibration": WhenConfig(calibration="sessions"),
        "grouped calibration, session-balanced": WhenConfig(calibration="sessions", weights="session"),
        "grouped calibration, help-or-candidates": WhenConfig(calibration="sessions", target="help-or-candidates"),
        "ranking": WhenConfig(model="rank"),
        "session-balanced": WhenConfig(weights="session"),
    }[name]


def choose_round2(rows: list[dict], quick: dict[str, dict]) -> str:
    """Round 2's rule (module docstring): highest within-session AUC among the candidates whose pooled AUC
    and quick-start accuracy and F1 are at least the baseline's; within 0.01 a tie, broken by pooled AUC."""
    base = next(r for r in rows if r["candidate"] == "baseline")
    qb = quick["baseline"]
    ok = [
        r
        for r in rows
        if r["pooled"]["auc"] >= base["pooled"]["auc"] - 1e-12
        and quick[r["candidate"]]["accuracy"] >= qb["accuracy"] - 1e-12
        and quick[r["candidate"]]["f1"] >= qb["f1"] - 1e-12
    ]
    top = max(r["within"]["auc"] for r in ok)
    return max((r for r in ok if r["within"]["auc"] >= top - 0.01), key=lambda r: r["pooled"]["auc"])["candidate"]


def _auc_pairs(y: np.ndarray, p: np.ndarray, users: np.ndarray | None = None) -> float | None:
    """AUC over (positive, negative) pairs, all of them, or (``users``) only pairs of the same session."""
    from scipy.stats import rankdata

    groups = [np.arange(len(y))] if users is None else [np.flatnonzero(users == u) for u in sorted(set(users))]
    num = den = 0.0
    for g in groups:
        yy, pp = y[g], p[g]
        n1 = int(yy.sum())
        n0 = len(yy) - n1
        if n1 == 0 or n0 == 0:
            continue
        r = rankdata(pp)
        num += r[yy == 1].sum() - n1 * (n1 + 1) / 2
        den += n1 * n0
    return float(num / den) if den else None


def auc_with_ci(
    y: np.ndarray, p: np.ndarray, users: np.ndarray, within: bool, n: int = 1000, seed: int = 0, sessions: bool = False
) -> dict:
    """AUC (pooled, or within sessions) and its 95% bootstrap interval over moments resampled within sessions;
    ``sessions``: also ``ci95_sessions``, sessions resampled with replacement (a session drawn twice counts as
    two), then the moments of each drawn session (two-stage cluster bootstrap, Davison & Hinkley 1997 s. 3.8)."""
    rng = np.random.default_rng(seed)
    idx = [np.flatnonzero(users == u) for u in sorted(set(users))]
    vals = []
    for _ in range(n):
        i = np.concatenate([g[rng.integers(0, len(g), len(g))] for g in idx])
        v = _auc_pairs(y[i], p[i], users[i] if within else None)
        if v is not None:
            vals.append(v)
    out = {
        "auc": _auc_pairs(y, p, users if within else None),
        "ci95": [float(np.percentile(vals, 2.5)), float(np.percentile(vals, 97.5))],
    }
    if sessions:
        vals = []
        for _ in range(n):
            picks = rng.integers(0, len(idx), len(idx))
            parts = [idx[k][rng.integers(0, len(idx[k]), len(idx[k]))] for k in picks]
            i = np.concatenate(parts)
            g = np.concatenate([np.full(len(part), j) for j, part in enumerate(parts)])
            v = _auc_pairs(y[i], p[i], g if within else None)
            if v is not None:
                vals.append(v)
        out["ci95_sessions"] = [float(np.percentile(vals, 2.5)), float(np.percentile(vals, 97.5))]
    return out


_MASK = (
    re.compile(r"'[^']*'|\"[^\"]*\"|“[^”]*”"),
    re.compile(
        r"https?://\S+|\b[\w.-]+\.(?:com|org|io|net|py|rb|js|ts|md|txt|docx?|pdf|html|json|cpp|java|c|h)\b", re.I
    ),
    re.compile(r"(?<=\w )[A-Z][\w.+#-]*"),
)


def mask_names(text: str) -> str:
    """``text`` with quoted strings, URLs and file names, and capitalised words after the first replaced by ``X``."""
    for rx in _MASK:
        text = rx.sub("X", text)
    return text


def _masked(samples: list) -> list:
    def ev(e):  # noqa: ANN001, ANN202
        return replace(e, summary=mask_names(e.summary), window_title=mask_names(e.window_title))

    return [replace(s, current=ev(s.current), context=tuple(ev(e) for e in s.context)) for s in samples]


def per_session_standardised(x: np.ndarray, users: np.ndarray, prior: float = 5.0) -> np.ndarray:
    """Each row z-scored against its session's earlier rows, shrunk to the other sessions' mean and SD by
    ``prior`` pseudo-moments (causal: nothing later in the session is read)."""
    out = np.zeros_like(x)
    for u in sorted(set(users)):
        idx = np.flatnonzero(users == u)
        pop = x[users != u]
        m0, v0 = pop.mean(axis=0), pop.var(axis=0)
        for j, i in enumerate(idx):
            prev = x[idx[:j]]
            n = len(prev)
            mean = (n * prev.mean(axis=0) + prior * m0) / (n + prior) if n else m0
            var = (n * prev.var(axis=0) + prior * v0) / (n + prior) if n else v0
            sd = np.sqrt(var)
            out[i] = (x[i] - mean) / np.where(sd > 0, sd, 1.0)
    return out


def horizon_target(y: np.ndarray, users: np.ndarray, times: np.ndarray, seconds: float = 60.0) -> np.ndarray:
    """1 where help is needed at the moment or at the session's next moment within ``seconds``."""
    out = y.copy()
    for i in range(len(y) - 1):
        if users[i + 1] == users[i] and times[i + 1] - times[i] <= seconds and y[i + 1]:
            out[i] = 1
    return out


def _plain_model(calibrated: bool, balanced: bool):  # noqa: ANN202
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    base = make_pipeline(
        StandardScaler(), LogisticRegression(C=0.003, class_weight="balanced" if balanced else None, max_iter=5000)
    )
    return CalibratedClassifierCV(base, method="sigmoid", cv=3) if calibrated else base


def loso_scores(name: str, data: dict) -> np.ndarray:
    """Held-out scores of every moment under candidate ``name`` (leave-one-session-out)."""
    from proagent.train import WhenConfig, fit_when

    x, y, users = data["x"], data["y"], data["users"]
    p = np.zeros(len(y))
    for h in sorted(set(users)):
        tr, te = np.flatnonzero(users != h), np.flatnonzero(users == h)
        g = list(users[tr])
        if name.startswith("2:"):
            cfg = config_2(name[2:])
            yf = data["aux"] if cfg.target == "help-or-candidates" else y
            m, _, _ = fit_when(x[tr], y[tr], g, cfg, yf[tr])
            p[te] = m.predict_proba(x[te])[:, 1]
            continue
        if name in ("uncalibrated", "no class weights"):
            m = _plain_model(name != "uncalibrated", name == "uncalibrated").fit(x[tr], y[tr])
            p[te] = m.predict_proba(x[te])[:, 1]
            continue
        xx, yf, cfg = x, y, WhenConfig()
        if name == "session-balanced":
            cfg = WhenConfig(weights="session")
        elif name == "ranking":
            cfg = WhenConfig(model="rank")
        elif name == "help-or-candidates target":
            yf = data["aux"]
        elif name == "session-balanced, help-or-candidates":
            yf, cfg = data["aux"], WhenConfig(weights="session")
        elif name == "ranking, help-or-candidates":
            yf, cfg = data["aux"], WhenConfig(model="rank")
        elif name == "fewer features":
            xx, cfg = data["xc"], WhenConfig(c=0.1)
        elif name == "fewer features, ranking":
            xx, cfg = data["xc"], WhenConfig(model="rank", c=0.1)
        elif name == "names masked":
            xx = data["xm"]
        elif name == "per-session standardised":
            xx = data["xs"]
        elif name == "label horizon 60 s":
            yf = data["horizon"]
        elif name == "duplicates dropped":
            keep = [i for i in tr if i in data["first"]]
            tr = np.array(keep)
            g = list(users[tr])
        m, _, _ = fit_when(xx[tr], y[tr], g, cfg, yf[tr])
        p[te] = m.predict_proba(xx[te])[:, 1]
    return p


def choose(rows: list[dict]) -> str:
    """The pre-written rule (module docstring): the product-trainable candidate with the highest pooled
    AUC among those whose within-session AUC is at least the baseline's; pooled AUCs within 0.01 tie,
    broken by the higher within-session AUC, then by :data:`CANDIDATES` order."""
    base = next(r for r in rows if r["candidate"] == "baseline")["within"]["auc"]
    ok = [r for r in rows if r["product"] and r["within"]["auc"] >= base - 1e-12]
    top = max(r["pooled"]["auc"] for r in ok)
    tied = [r for r in ok if r["pooled"]["auc"] >= top - 0.01]
    best = max(tied, key=lambda r: (r["within"]["auc"], -rows.index(r)))
    return best["candidate"]


def load(data_dir: str, sessions: str | None = None, masked: bool = True) -> dict:
    """Features and labels of the dev sessions (and the candidates' variants)."""
    from proagent.agent.decider import EmbeddingCache, FeatureConfig, event_text, moment_features
    from proagent.train import load_split_moments

    real, _ = load_split_moments(data_dir, "all")
    if sessions:
        keep = {s.strip() for s in sessions.split(",")}
        real = [s for s in real if s.user in keep]
    real.sort(key=lambda s: (s.user, s.time))
    cache = EmbeddingCache()
    x = moment_features(real, cache, FeatureConfig())
    users = np.array([s.user for s in real])
    y = np.array([s.label for s in real])
    times = np.array([s.time.timestamp() for s in real])
    seen: dict[str, int] = {}
    for i, s in enumerate(real):
        seen.setdefault(event_text(s.current), i)
    return {
        "samples": real,
        "x": x,
        "y": y,
        "users": users,
        "aux": np.maximum(y, [1 if s.current.candidate_tasks else 0 for s in real]),
        "xc": moment_features(real, cache, FeatureConfig(("similarity", "behaviour", "keywords"))),
        "xm": moment_features(_masked(real), cache, FeatureConfig()) if masked else x,
        "xs": per_session_standardised(x, users),
        "horizon": horizon_target(y, users, times),
        "first": set(seen.values()),
    }


def quick_start(data_dir: str, configs: dict) -> list[dict]:
    """The quick start's decider (train split -> the later 57 moments) for each named WhenConfig."""
    from decider import _row

    from proagent.agent.decider import EmbeddingCache, FeatureConfig, moment_features
    from proagent.train import fit_when, load_split_moments
    from proagent.train.when import training_target

    tr, _ = load_split_moments(data_dir, "train")
    te, _ = load_split_moments(data_dir, "test")
    cache = EmbeddingCache()
    ytr, yte = np.array([s.label for s in tr]), np.array([s.label for s in te])
    rows = []
    for name, (cfg, groups) in configs.items():
        fc = FeatureConfig(groups)
        xtr, xte = moment_features(tr, cache, fc), moment_features(te, cache, fc)
        m, thr, _ = fit_when(xtr, ytr, [s.user for s in tr], cfg, training_target(tr, cfg.target))
        p = m.predict_proba(xte)[:, 1]
        rows.append({**_row(name, yte, (p >= thr).astype(int), p), "threshold": thr})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/proactivebench"))
    ap.add_argument("--json", default=None, help="Write the run for render_results.py here.")
    ap.add_argument("--quick-start", action="store_true", help="Also the quick start's decider, today vs the winner.")
    ap.add_argument("--smoke", action="store_true", help="CI: three sessions, the baseline and the ranking candidate.")
    ap.add_argument("--round", type=int, choices=(1, 2, 3), default=2, help="Round 1's, 2's or 3's candidates.")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _common import parse_args

    args = parse_args(ap, argv, existing=("data",))
    warnings.filterwarnings("ignore")
    from _common import guard_network, machine_note, write_result

    guard_network()
    note, machine = machine_note()
    print(note, file=sys.stderr)
    names = [c[0] for c in CANDIDATES]
    sessions = None
    if args.smoke:
        names, sessions = ["baseline", "ranking"], "code_11,code_12,writing_11"
    data = load(args.data, sessions, masked=not args.smoke and args.round == 1)
    y, users = data["y"], data["users"]
    rows = []
    if args.round == 2:
        return _round2(args, data, machine, write_result, smoke=args.smoke)
    if args.round == 3:
        return _round3(args, data, machine, write_result, smoke=args.smoke)
    for name, product, what in CANDIDATES:
        if name not in names:
            continue
        p = loso_scores(name, data)
        per = {
            u: _auc_pairs(y[users == u], p[users == u])
            for u in sorted(set(users))
            if 0 < y[users == u].sum() < (users == u).sum()
        }
        rows.append(
            {
                "candidate": name,
                "product": product,
                "what": what,
                "pooled": auc_with_ci(y, p, users, within=False),
                "within": auc_with_ci(y, p, users, within=True),
                "per_session": per,
                "session_mean_score": {u: float(p[users == u].mean()) for u in sorted(set(users))},
            }
        )
        r = rows[-1]
        print(
            f"{name}: pooled AUC {r['pooled']['auc']:.3f} [{r['pooled']['ci95'][0]:.2f}, {r['pooled']['ci95'][1]:.2f}], "
            f"within-session {r['within']['auc']:.3f} [{r['within']['ci95'][0]:.2f}, {r['within']['ci95'][1]:.2f}]",
            file=sys.stderr,
            flush=True,
        )
    winner = choose(rows)
    rates = {u: float(y[users == u].mean()) for u in sorted(set(users))}
    print(
        "\n| candidate | product option | pooled LOSO AUC [95% CI] | within-session AUC [95% CI] |\n| --- | --- | --- | --- |"
    )
    for r in rows:
        print(
            f"| {r['candidate']} | {'yes' if r['product'] else 'diagnostic'} | {r['pooled']['auc']:.3f} "
            f"[{r['pooled']['ci95'][0]:.2f}, {r['pooled']['ci95'][1]:.2f}] | {r['within']['auc']:.3f} "
            f"[{r['within']['ci95'][0]:.2f}, {r['within']['ci95'][1]:.2f}] |"
        )
    print(f"\nsession help rates: {', '.join(f'{u} {v:.2f}' for u, v in rates.items())}")
    print(f"pre-written rule -> {winner}")
    result: dict = {"candidates": rows, "winner": winner, "session_rates": rates, "rule": choose.__doc__}
    if args.quick_start:
        from proagent.agent.decider import DEFAULT_GROUPS
        from proagent.train import WhenConfig

        cfgs = {"today (logreg, balanced classes)": (WhenConfig(), DEFAULT_GROUPS)}
        if winner != "baseline":
            cfgs[f"winner ({winner})"] = _config_of(winner)
        result["quick_start"] = quick_start(args.data, cfgs)
        for r in result["quick_start"]:
            ci = r["ci95"]
            print(
                f"quick start, {r['run']}: accuracy {r['accuracy']:.3f} [{ci['accuracy'][0]:.2f}, {ci['accuracy'][1]:.2f}], "
                f"F1 {r['f1']:.3f} [{ci['f1'][0]:.2f}, {ci['f1'][1]:.2f}], AUC {r['auc']:.3f}, threshold {r['threshold']:.3f}"
            )
    write_result(
        args.json,
        benchmark="population",
        machine=machine,
        rows=[
            {
                "candidate": r["candidate"],
                "kind": "product option" if r["product"] else "diagnostic",
                "pooled": f"{r['pooled']['auc']:.3f} [{r['pooled']['ci95'][0]:.2f}, {r['pooled']['ci95'][1]:.2f}]",
                "within": f"{r['within']['auc']:.3f} [{r['within']['ci95'][0]:.2f}, {r['within']['ci95'][1]:.2f}]",
                "baseline": r["candidate"] == "baseline",
            }
            for r in rows
        ],
        columns=[
            ("candidate", "population model", ""),
            ("kind", "", ""),
            ("pooled", "pooled LOSO AUC [95% CI]", ""),
            ("within", "within-session AUC [95% CI]", ""),
        ],
        baseline="today's population decider (baseline row) on the same folds",
        note=f"leave-one-session-out on the dev sessions; winner by the pre-written rule: {winner}",
        conditions="--smoke" if args.smoke else "",
        figures={k: v for k, v in result.items() if k != "candidates"},
    )
    return 0


def _round2(args, data: dict, machine: dict, write_result, smoke: bool = False) -> int:  # noqa: ANN001
    from proagent.agent.decider import DEFAULT_GROUPS

    y, users = data["y"], data["users"]
    names = [c[0] for c in CANDIDATES_2][: 2 if smoke else None]
    rows = []
    for name in names:
        p = loso_scores("2:" + name, data)
        rows.append(
            {
                "candidate": name,
                "what": dict(CANDIDATES_2)[name],
                "pooled": auc_with_ci(y, p, users, within=False),
                "within": auc_with_ci(y, p, users, within=True),
                "per_session": {
                    u: _auc_pairs(y[users == u], p[users == u])
                    for u in sorted(set(users))
                    if 0 < y[users == u].sum() < (users == u).sum()
                },
                "session_mean_score": {u: float(p[users == u].mean()) for u in sorted(set(users))},
            }
        )
        r = rows[-1]
        print(
            f"{name}: pooled AUC {r['pooled']['auc']:.3f} {r['pooled']['ci95']}, within {r['within']['auc']:.3f} "
            f"{r['within']['ci95']}",
            file=sys.stderr,
            flush=True,
        )
    quick = {
        r["run"]: r
        for r in (quick_start(args.data, {n: (config_2(n), DEFAULT_GROUPS) for n in names}) if not smoke else [])
    }
    if smoke:
        quick = {n: {"accuracy": 0.0, "f1": 0.0} for n in names}
    winner = choose_round2(rows, quick)
    print(
        "\n| candidate | pooled LOSO AUC [95% CI] | within-session AUC [95% CI] | quick start accuracy [95% CI] | "
        "quick start F1 [95% CI] |\n| --- | --- | --- | --- | --- |"
    )
    out_rows = []
    for r in rows:
        q = quick[r["candidate"]]
        qa = (
            f"{q['accuracy']:.3f} [{q['ci95']['accuracy'][0]:.2f}, {q['ci95']['accuracy'][1]:.2f}]"
            if "ci95" in q
            else "-"
        )
        qf = f"{q['f1']:.3f} [{q['ci95']['f1'][0]:.2f}, {q['ci95']['f1'][1]:.2f}]" if "ci95" in q else "-"
        pooled = f"{r['pooled']['auc']:.3f} [{r['pooled']['ci95'][0]:.2f}, {r['pooled']['ci95'][1]:.2f}]"
        within = f"{r['within']['auc']:.3f} [{r['within']['ci95'][0]:.2f}, {r['within']['ci95'][1]:.2f}]"
        print(f"| {r['candidate']} | {pooled} | {within} | {qa} | {qf} |")
        out_rows.append(
            {
                "candidate": r["candidate"],
                "pooled": pooled,
                "within": within,
                "qa": qa,
                "qf": qf,
                "baseline": r["candidate"] == "baseline",
            }
        )
    print(f"\nround 2's pre-written rule -> {winner}")
    write_result(
        args.json,
        benchmark="population",
        machine=machine,
        rows=out_rows,
        columns=[
            ("candidate", "population model (train when recipe)", ""),
            ("pooled", "pooled LOSO AUC [95% CI]", ""),
            ("within", "within-session AUC [95% CI]", ""),
            ("qa", "quick start accuracy [95% CI]", ""),
            ("qf", "quick start F1 [95% CI]", ""),
        ],
        baseline="today's population decider (baseline row) on the same folds and the same 57 quick-start moments",
        note=f"leave-one-session-out on the six dev sessions; round 2's pre-written rule chose: {winner}",
        conditions="--smoke" if smoke else "",
        figures={"winner": winner, "rule": choose_round2.__doc__, "candidates": rows, "quick_start": quick},
    )
    return 0


def _ci(r: dict) -> str:
    return (
        f"{r['auc']:.3f} [{r['ci95'][0]:.2f}, {r['ci95'][1]:.2f}]; sessions [{r['ci95_sessions'][0]:.2f}, "
        f"{r['ci95_sessions'][1]:.2f}]"
    )


def _round3(args, data: dict, machine: dict, write_result, smoke: bool = False) -> int:  # noqa: ANN001
    y, users = data["y"], data["users"]
    names = [c[0] for c in CANDIDATES_3][: 2 if smoke else None]
    rows = []
    for name in names:
        p = loso_scores_3(name, data)
        kind, what = next((c[1], c[5]) for c in CANDIDATES_3 if c[0] == name)
        rows.append(
            {
                "candidate": name,
                "kind": kind,
                "what": what,
                "pooled": auc_with_ci(y, p, users, within=False, sessions=True),
                "within": auc_with_ci(y, p, users, within=True, sessions=True),
                "per_session": {
                    u: _auc_pairs(y[users == u], p[users == u])
                    for u in sorted(set(users))
                    if 0 < y[users == u].sum() < (users == u).sum()
                },
                "session_mean_score": {u: float(p[users == u].mean()) for u in sorted(set(users))},
            }
        )
        r = rows[-1]
        print(f"{name}: pooled {_ci(r['pooled'])}, within {_ci(r['within'])}", file=sys.stderr, flush=True)
    quick = quick_start_3(args.data, names) if not smoke else {n: {"accuracy": 0.0, "f1": 0.0} for n in names}
    winner = choose_round3(rows, quick)
    out_rows = []
    for r in rows:
        q = quick[r["candidate"]]
        has = "ci95" in q
        out_rows.append(
            {
                "candidate": r["candidate"],
                "kind": {"option": "train when option", "transform": "per-session transform", "features": "features"}[
                    r["kind"]
                ],
                "pooled": _ci(r["pooled"]),
                "within": _ci(r["within"]),
                "qa": f"{q['accuracy']:.3f} [{q['ci95']['accuracy'][0]:.2f}, {q['ci95']['accuracy'][1]:.2f}]"
                if has
                else "-",
                "qf": f"{q['f1']:.3f} [{q['ci95']['f1'][0]:.2f}, {q['ci95']['f1'][1]:.2f}]" if has else "-",
                "baseline": r["candidate"] == "baseline",
            }
        )
        o = out_rows[-1]
        print(f"| {' | '.join(str(o[k]) for k in ('candidate', 'kind', 'pooled', 'within', 'qa', 'qf'))} |")
    print(f"\nround 3's pre-written rule -> {winner}")
    write_result(
        args.json,
        benchmark="population",
        machine=machine,
        rows=out_rows,
        columns=[
            ("candidate", "population model", ""),
            ("kind", "", ""),
            ("pooled", "pooled LOSO AUC [95% CI, moments; sessions]", ""),
            ("within", "within-session AUC [95% CI, moments; sessions]", ""),
            ("qa", "quick start accuracy [95% CI]", ""),
            ("qf", "quick start F1 [95% CI]", ""),
        ],
        baseline="today's population decider (baseline row) on the same folds and the same 57 quick-start moments",
        note=f"leave-one-session-out on the six dev sessions; round 3's pre-written rule chose: {winner}",
        conditions="--smoke" if smoke else "",
        figures={"winner": winner, "rule": choose_round3.__doc__, "candidates": rows, "quick_start": quick},
    )
    return 0


def _config_of(name: str):  # noqa: ANN202
    from proagent.agent.decider import DEFAULT_GROUPS
    from proagent.train import WhenConfig

    few = ("similarity", "behaviour", "keywords")
    return {
        "session-balanced": (WhenConfig(weights="session"), DEFAULT_GROUPS),
        "ranking": (WhenConfig(model="rank"), DEFAULT_GROUPS),
        "help-or-candidates target": (WhenConfig(target="help-or-candidates"), DEFAULT_GROUPS),
        "session-balanced, help-or-candidates": (
            WhenConfig(weights="session", target="help-or-candidates"),
            DEFAULT_GROUPS,
        ),
        "ranking, help-or-candidates": (WhenConfig(model="rank", target="help-or-candidates"), DEFAULT_GROUPS),
        "fewer features": (WhenConfig(c=0.1), few),
        "fewer features, ranking": (WhenConfig(model="rank", c=0.1), few),
    }.get(name, (WhenConfig(), DEFAULT_GROUPS))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    raise SystemExit(main())
