"""Online personalisation of the When-to-Assist decider: learn *this* user from their answers.

A population decider (``proagent train when`` on other people's sessions) gives
P(help) for a moment; every answered offer of the user is a label for that
moment. A :class:`PersonalModel` combines the two, refitted after every answer
(a handful to a few hundred labelled moments: milliseconds to tens of
milliseconds). Methods (:data:`LEARNING_METHODS`), all on the decider's own feature rows:

* ``prior-shift``: the population logit plus the user's own offset ``b``
  (a prior shift of the base rate, Saerens et al. 2002), ``b`` the MAP estimate
  under ``b ~ N(0, prior_sd^2)`` from the user's labels;
* ``refit``: a logistic regression refitted, warm-started, on the population's
  training moments plus the user's own, each own moment weighted ``own_weight``;
* ``knn``: a memory of the user's own labelled moments; P(help) is the
  population probability pulled towards the similarity-weighted labels of the
  ``k`` nearest own moments (cosine of the e5 current-event embedding), with the
  population counting as ``knn_prior`` pseudo-neighbours;
* ``pooled``: hierarchical pooling, a logistic model whose prior mean is the
  population model: ``logit p = a * logit p_pop(x) + b + v . z(x)`` with
  ``a ~ N(1, prior_sd^2)`` (how far this user follows the population),
  ``b ~ N(0, prior_sd^2)``, ``v ~ N(0, tau^2 I)`` and ``z`` the standardised
  features; MAP by L-BFGS. With no answers it is the population model; with
  many, ``a`` and ``v`` move it towards the user's own decision boundary (also
  away from a population model that ranks this user's moments backwards);
* ``ensemble``: the mean of the ``prior-shift`` and ``knn`` probabilities (the base-rate
  shift, which carries most of what a person's answers teach, and the memory of similar
  moments; issue 33 asked for it beside each learner: ``benchmarks/personalise.py``).

The hyper-parameters (:class:`LearnConfig`) are fixed a priori, not tuned on
the sessions the benchmark evaluates on (``benchmarks/personalise.py``).

The threshold comes from the costs of the two errors (decision theory, as in
PRISM and BusyBody, Horvitz et al.): offer when the expected cost of staying
quiet, ``p * c_miss``, exceeds that of offering, ``(1 - p) * c_fa``, i.e. at
``p >= c_fa / (c_fa + c_miss)`` (:func:`cost_threshold`) on a calibrated ``p``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from ...errors import UsageError
from ._embedding import EMBEDDING_DIM

__all__ = ["LEARNING_METHODS", "LearnConfig", "PersonalModel", "cost_threshold", "population_scaler"]

LEARNING_METHODS = ("prior-shift", "refit", "knn", "pooled", "ensemble")
"""Online learning methods (module docstring)."""

ENSEMBLE_PARTS = ("prior-shift", "knn")
"""The learners the ``ensemble`` method averages (equal weights)."""

_EPS = 1e-4


def cost_threshold(cost_false_alarm: float, cost_miss: float) -> float:
    """The Bayes-optimal threshold on a calibrated P(help): ``c_fa / (c_fa + c_miss)``.

    Args:
        cost_false_alarm: cost of an offer the user did not need (any unit, > 0).
        cost_miss: cost of staying quiet when help was needed (same unit, > 0).

    Raises:
        proagent.errors.UsageError: a cost that is not a positive finite number (``live
            --cost-false-alarm/--cost-miss``, exit 2).
    """
    for name, c in (("cost of a false alarm", cost_false_alarm), ("cost of a miss", cost_miss)):
        if not (isinstance(c, (int, float)) and math.isfinite(c) and c > 0):
            raise UsageError("--cost-false-alarm/--cost-miss", f"{name} must be a positive number (got {c!r})")
    return float(cost_false_alarm) / float(cost_false_alarm + cost_miss)


@dataclass(frozen=True)
class LearnConfig:
    """How a :class:`PersonalModel` learns (recorded in the learning manifest)."""

    method: str = "knn"
    """One of :data:`LEARNING_METHODS` (``knn`` here; ``proagent live``'s default is ``ensemble``, chosen by
    issue 43's pre-written rule in live's setting: ``benchmarks/personalise.py --live-setting``)."""
    prior_sd: float = 1.0
    """Prior SD of the user's logit offset ``b`` (prior-shift, pooled): an offset of one
    logit is plausible, five is not."""
    tau: float = 0.05
    """Prior SD of each of the user's weight deviations ``v`` on standardised features (pooled);
    small because there are ~800 features and a few dozen answers."""
    own_weight: float = 5.0
    """Weight of each own moment against one population moment (refit)."""
    c: float = 0.003
    """Inverse L2 strength of the refit's logistic regression (``proagent train when``'s default)."""
    k: int = 5
    """Neighbours (knn)."""
    knn_prior: float = 2.0
    """Pseudo-neighbours the population probability counts as (knn)."""

    def __post_init__(self) -> None:
        if self.method not in LEARNING_METHODS:
            raise ValueError(f"learning method {self.method!r}: choose from {', '.join(LEARNING_METHODS)}")


def population_scaler(model: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """(mean, scale) of the first StandardScaler inside a fitted decider model, or None."""
    from sklearn.preprocessing import StandardScaler

    def find(m: Any) -> Any:
        if isinstance(m, StandardScaler):
            return m
        for attr in ("calibrated_classifiers_", "steps"):
            for part in getattr(m, attr, None) or []:
                part = part[1] if isinstance(part, tuple) else part
                got = find(getattr(part, "estimator", part))
                if got is not None:
                    return got
        return None

    s = find(model)
    return (np.asarray(s.mean_, float), np.where(s.scale_ > 0, s.scale_, 1.0)) if s is not None else None


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, float), _EPS, 1 - _EPS)
    return np.log(p / (1 - p))


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


class PersonalModel:
    """The population decider's model personalised by one user's labelled moments.

    Args:
        population: the fitted population classifier (``predict_proba``), e.g. ``Decider.model``.
        config: method and hyper-parameters.
        population_data: ``(X, y)`` the population was trained on; needed by ``refit`` only.
        embedding_columns: whether the first 384 feature columns are the e5 current-event
            embedding (the decider's ``embedding`` group); ``knn`` uses them, else all
            standardised columns.

    Raises:
        ValueError: ``refit`` without ``population_data``.
    """

    def __init__(
        self,
        population: Any,
        config: LearnConfig = LearnConfig(),
        population_data: tuple[np.ndarray, np.ndarray] | None = None,
        embedding_columns: bool = True,
    ) -> None:
        if config.method == "refit" and population_data is None:
            raise ValueError("the refit method needs the population's training moments")
        self.population = population
        self.config = config
        self.population_data = population_data
        self.embedding_columns = embedding_columns
        self.scaler = population_scaler(population)
        self.x = np.zeros((0, 0))
        self.y = np.zeros(0)
        self.w = np.zeros(0)
        self._a, self._b = 1.0, 0.0
        self._v: np.ndarray | None = None
        self._refit: Any = None
        self._parts = (
            [
                PersonalModel(population, replace(config, method=m), population_data, embedding_columns)
                for m in ENSEMBLE_PARTS
            ]
            if config.method == "ensemble"
            else []
        )

    @property
    def n(self) -> int:
        """Own labelled moments learned from."""
        return len(self.y)

    # ------------------------------------------------------------------ learning
    def fit(self, x: np.ndarray, y: Sequence[int], weight: Sequence[float] | None = None) -> "PersonalModel":
        """Learn from the user's labelled moments (replaces what was learned before).

        Args:
            x: feature rows, shape ``(n, n_features)``.
            y: labels (1 = help was needed), shape ``(n,)``.
            weight: per-moment weights (default 1).
        """
        x = np.asarray(x, float).reshape(len(y), -1) if len(y) else np.zeros((0, 0))
        self.x, self.y = x, np.asarray(y, float)
        self.w = np.ones(len(y)) if weight is None else np.asarray(weight, float)
        self._a, self._b, self._v = 1.0, 0.0, None
        for part in self._parts:
            part.fit(x, y, weight)
        if self.n == 0:
            self._refit = None
            return self
        m = self.config.method
        if m == "prior-shift":
            self._b = self._offset(_logit(self._pop(x)))
        elif m == "pooled":
            self._fit_pooled()
        elif m == "refit":
            self._fit_refit()
        return self

    def update(self, x: np.ndarray, y: int, weight: float = 1.0) -> "PersonalModel":
        """Learn one more labelled moment (``x`` shape ``(n_features,)``)."""
        x = np.asarray(x, float).reshape(1, -1)
        xs = x if self.n == 0 else np.vstack([self.x, x])
        return self.fit(xs, list(self.y) + [int(y)], list(self.w) + [float(weight)])

    def _pop(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.population.predict_proba(x)[:, 1], float)

    def _z(self, x: np.ndarray) -> np.ndarray:
        if self.scaler is None:
            return x
        mean, scale = self.scaler
        return np.clip((x - mean) / scale, -5, 5)

    def _offset(self, base: np.ndarray) -> float:
        """MAP of ``b`` in ``logit p = base + b`` under ``b ~ N(0, prior_sd^2)`` (Newton)."""
        b, prec = 0.0, 1.0 / self.config.prior_sd**2
        for _ in range(50):
            p = _sigmoid(base + b)
            g = float(np.sum(self.w * (p - self.y))) + prec * b
            h = float(np.sum(self.w * p * (1 - p))) + prec
            step = g / h
            b -= step
            if abs(step) < 1e-8:
                break
        return b

    def _fit_pooled(self) -> None:
        from scipy.optimize import minimize

        base = _logit(self._pop(self.x))
        z = self._z(self.x)
        d = z.shape[1]
        pb, pv = 1.0 / self.config.prior_sd**2, 1.0 / self.config.tau**2

        def f(theta: np.ndarray) -> tuple[float, np.ndarray]:
            a, b, v = theta[0], theta[1], theta[2:]
            s = a * base + b + z @ v
            p = _sigmoid(s)
            ll = np.sum(self.w * (np.logaddexp(0, s) - self.y * s))
            r = self.w * (p - self.y)
            grad = np.concatenate([[r @ base + pb * (a - 1), r.sum() + pb * b], z.T @ r + pv * v])
            return float(ll + 0.5 * pb * ((a - 1) ** 2 + b * b) + 0.5 * pv * float(v @ v)), grad

        res = minimize(
            f, np.concatenate([[1.0, 0.0], np.zeros(d)]), jac=True, method="L-BFGS-B", options={"maxiter": 200}
        )
        self._a, self._b, self._v = float(res.x[0]), float(res.x[1]), res.x[2:]

    def _fit_refit(self) -> None:
        from sklearn.linear_model import LogisticRegression

        px, py = self.population_data  # type: ignore[misc]
        x = self._z(np.vstack([px, self.x]))
        y = np.concatenate([py, self.y]).astype(int)
        w = np.concatenate([np.ones(len(py)), self.config.own_weight * self.w])
        if len(set(y)) < 2:
            self._refit = None
            return
        prev = self._refit
        m = LogisticRegression(C=self.config.c, max_iter=5000, tol=1e-8, warm_start=True)  # converged: same answer cold
        if prev is not None and prev.coef_.shape[1] == x.shape[1]:
            m.coef_, m.intercept_, m.classes_ = prev.coef_.copy(), prev.intercept_.copy(), prev.classes_
        m.fit(x, y, sample_weight=w)
        self._refit = m

    # ------------------------------------------------------------------ deciding
    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """Personal P(help) of each feature row, shape ``(len(x),)``."""
        x = np.asarray(x, float)
        if x.ndim == 1:
            x = x.reshape(1, -1)
        pop = self._pop(x)
        m = self.config.method
        if self.n == 0 or m == "refit" and self._refit is None:
            return pop
        if self._parts:
            return np.mean([part.probabilities(x) for part in self._parts], axis=0)
        if m == "prior-shift":
            return _sigmoid(_logit(pop) + self._b)
        if m == "pooled":
            return _sigmoid(self._a * _logit(pop) + self._b + self._z(x) @ self._v)
        if m == "refit":
            return np.asarray(self._refit.predict_proba(self._z(x))[:, 1], float)
        return self._knn(x, pop)

    def _vectors(self, x: np.ndarray) -> np.ndarray:
        v = x[:, :EMBEDDING_DIM] if self.embedding_columns else self._z(x)
        n = np.linalg.norm(v, axis=1, keepdims=True)
        return v / np.where(n > 0, n, 1.0)

    def _knn(self, x: np.ndarray, pop: np.ndarray) -> np.ndarray:
        sim = np.clip(self._vectors(x) @ self._vectors(self.x).T, 0.0, None)  # (m, n)
        out = np.empty(len(x))
        k = min(self.config.k, self.n)
        for i in range(len(x)):
            top = np.argsort(-sim[i])[:k]
            s = sim[i, top] * self.w[top]
            out[i] = (float(s @ self.y[top]) + self.config.knn_prior * pop[i]) / (
                float(s.sum()) + self.config.knn_prior
            )
        return out

    def describe(self) -> dict[str, Any]:
        """What was learned, for the manifest: the method's parameters and counts."""
        d: dict[str, Any] = {
            "config": asdict(self.config),
            "n": self.n,
            "n_positive": int(self.y.sum()) if self.n else 0,
        }
        if self.config.method in ("prior-shift", "pooled"):
            d["offset"] = self._b
        if self._v is not None:
            d["population_weight"] = self._a
            d["deviation_norm"] = float(np.linalg.norm(self._v))
        if self._parts:
            d["parts"] = {part.config.method: part.describe() for part in self._parts}
        return d
