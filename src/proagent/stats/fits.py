"""Power-law fits of inter-event times (Clauset, Shalizi and Newman 2009) with
``powerlaw`` 2.0.0.

* ``xmin`` minimises the Kolmogorov-Smirnov distance between the data above it
  and the fitted power law (every distinct value but the largest is tried);
* ``alpha`` is the maximum-likelihood exponent of the continuous power law
  ``p(x) ~ x^-alpha`` above ``xmin``, with standard error
  ``(alpha - 1) / sqrt(n_tail)``;
* the power law is compared with an exponential, a lognormal and a truncated
  power law (power law with exponential cut-off) by the normalised
  log-likelihood ratio ``R`` (Vuong's test; ``R > 0`` favours the power law)
  and its p-value (two-sided normal for the non-nested exponential and
  lognormal, chi-squared with one degree of freedom for the nested truncated
  power law, as ``powerlaw`` does).

``powerlaw`` bounds ``alpha`` to ``[0, 3]`` by default, which silently caps
steep tails at 3: here the power law's ``alpha`` lies in ``(1, inf)`` (a
continuous power law needs ``alpha > 1`` to be normalisable) and the
truncated power law's in ``(0, inf)`` (its cut-off makes any ``alpha``
normalisable).

Data with more than :data:`MAX_XMIN_CANDIDATES` distinct values would make
``powerlaw``'s exhaustive ``xmin`` search slow (one fit per value); then the
same KS criterion (analytic continuous MLE per candidate) is evaluated with
numpy on that many candidates evenly spaced in rank, and ``powerlaw`` fits
with the chosen ``xmin`` fixed (``xmin_search`` says which was used).

Because the KS-optimal ``xmin`` of exponential-like data often sits in the far
tail, where a steep power law fits a few points as well as an exponential, the
tail test can be inconclusive for plainly non-bursty data; the comparison
over the whole range (``xmin`` = the smallest positive value) is given beside
it as ``full_range``.

With too little data (fewer than :data:`MIN_POINTS` positive values, or fewer
than three distinct ones) no fit is made and :attr:`PowerLawResult.reason`
says why; zero gaps (simultaneous events) cannot enter a power law and are
counted apart.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["ALTERNATIVES", "MIN_POINTS", "PowerLawResult", "fit_power_law"]

MIN_POINTS = 10
"""Fewest positive values a fit is attempted on."""
SMALL_TAIL = 50
"""Below this many points above ``xmin`` the result is flagged ``small_sample``
(Clauset et al. find ``xmin``/``alpha`` unreliable below roughly 50)."""
MAX_XMIN_CANDIDATES = 1500
"""Above this many distinct values, ``xmin`` is searched on a rank grid."""
ALTERNATIVES = ("exponential", "lognormal", "truncated_power_law")
"""Distributions the power law is compared with."""

_PL_RANGES = {"alpha": [1.0, None]}
_TPL_RANGES = {"alpha": [0.0, None], "Lambda": [0.0, None]}


@dataclass
class PowerLawResult:
    """A power-law fit and its comparisons, or why there is none."""

    n: int
    """Values given (zeros included)."""
    n_positive: int
    """Values > 0 (those a power law can describe)."""
    ok: bool = False
    """True when a fit was made."""
    reason: str | None = None
    """Why no fit was made (``ok`` false)."""
    xmin: float | None = None
    """Lower bound of the power-law regime (KS-optimal)."""
    alpha: float | None = None
    """MLE exponent above ``xmin``."""
    alpha_se: float | None = None
    """Standard error of ``alpha``: ``(alpha - 1) / sqrt(n_tail)``."""
    n_tail: int | None = None
    """Values >= ``xmin``."""
    ks_distance: float | None = None
    """KS distance D between the tail and the fitted power law."""
    small_sample: bool = False
    """True when ``n_tail`` < :data:`SMALL_TAIL`."""
    comparisons: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Alternative name -> ``{"R", "p", "favours", "significant", "nested",
    "parameters"}``; ``R`` is normalised, > 0 favours the power law; the
    preference is significant at p < 0.1 (Clauset et al.'s threshold)."""
    llr: dict[str, float | None] = field(default_factory=dict)
    """Alternative name -> raw (unnormalised) log-likelihood ratio, the number
    ProAgentBench reports (2951.48 human, -59.36 synthetic vs exponential)."""
    full_range: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The same comparisons with ``xmin`` fixed at the smallest positive value
    (``alpha``, ``alpha_se`` and per alternative ``R``, ``p``, ``llr``,
    ``favours``, ``significant``)."""
    xmin_search: str = ""
    """How ``xmin`` was chosen: ``powerlaw`` (every distinct value),
    ``rank-grid`` (numpy KS scan on a grid, see the module docstring) or
    ``fixed``."""
    notes: list[str] = field(default_factory=list)
    """Warnings raised by ``powerlaw`` during the fit (deduplicated)."""
    fit: Any = field(default=None, repr=False)
    """The ``powerlaw.Fit`` object (for plotting; not serialised)."""

    def to_dict(self) -> dict[str, Any]:
        """Every number, JSON-ready (no ``fit`` object)."""
        d = {k: v for k, v in self.__dict__.items() if k != "fit"}
        d["comparisons"] = {k: dict(v) for k, v in self.comparisons.items()}
        d["full_range"] = {k: (dict(v) if isinstance(v, dict) else v) for k, v in self.full_range.items()}
        d["notes"] = list(self.notes)
        return d


def _finite(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def fit_power_law(values: Any, *, min_points: int = MIN_POINTS, xmin: float | None = None) -> PowerLawResult:
    """Fit a continuous power law to ``values`` and compare it with the
    alternatives (see the module docstring).

    Args:
        values: Inter-event times (or any positive sizes); zeros and negative
            values are not fitted.
        min_points: Fewest positive values to attempt a fit.
        xmin: Fix ``xmin`` instead of choosing it by KS distance.

    Returns:
        A :class:`PowerLawResult`; ``ok`` false with a ``reason`` when the data
        are too few or the fit fails. Never raises on small or degenerate data.
    """

    x = np.asarray(values, dtype=float).ravel()
    x = x[np.isfinite(x)]
    pos = x[x > 0]
    res = PowerLawResult(n=int(x.size), n_positive=int(pos.size))
    if pos.size < min_points:
        res.reason = f"only {pos.size} positive values (a fit needs at least {min_points})"
        return res
    if np.unique(pos).size < 3:
        res.reason = f"only {np.unique(pos).size} distinct positive values (a fit needs at least 3)"
        return res
    notes: dict[str, None] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if xmin is not None:
                res.xmin_search = "fixed"
            elif np.unique(pos).size > MAX_XMIN_CANDIDATES:
                xmin = _ks_xmin_grid(pos, MAX_XMIN_CANDIDATES)
                res.xmin_search = f"rank-grid ({MAX_XMIN_CANDIDATES} candidates)"
            else:
                res.xmin_search = "powerlaw"
            fit, comps, llr = _fit(pos, xmin)
            alpha = _finite(fit.power_law.alpha)
            if alpha is None or _finite(fit.xmin) is None:
                res.reason = "powerlaw found no valid xmin (the tail is too short or degenerate)"
                return res
            pl = fit.power_law
            res.ok = True
            res.xmin = float(fit.xmin)
            res.alpha = alpha
            res.n_tail = int(fit.n)
            res.alpha_se = _finite(pl.standard_err)
            res.ks_distance = _finite(pl.D)
            res.small_sample = res.n_tail < SMALL_TAIL
            res.fit = fit
            res.comparisons, res.llr = comps, llr
            full, fcomps, fllr = _fit(pos, float(pos.min()))
            res.full_range = {
                "xmin": float(pos.min()),
                "n": int(full.n),
                "alpha": _finite(full.power_law.alpha),
                "alpha_se": _finite(full.power_law.standard_err),
                **{
                    k: {**{kk: v[kk] for kk in ("R", "p", "favours", "significant")}, "llr": fllr[k]}
                    for k, v in fcomps.items()
                },
            }
        except Exception as e:  # noqa: BLE001 - powerlaw/scipy failures on odd data are reported, not raised
            res.ok = False
            res.reason = f"fit failed: {type(e).__name__}: {e}"
            res.fit = None
        finally:
            for w in caught:
                if not issubclass(w.category, DeprecationWarning):
                    notes.setdefault(str(w.message).strip(), None)
    res.notes = list(notes)
    if res.ok and res.small_sample:
        res.notes.insert(0, f"only {res.n_tail} values above xmin: alpha and the tests are indicative only")
    return res


def _fit(pos: np.ndarray, xmin: float | None) -> tuple[Any, dict[str, dict[str, Any]], dict[str, float | None]]:
    """One ``powerlaw.Fit`` and its comparisons (normalised R, p; raw LLR)."""
    import powerlaw

    fit = powerlaw.Fit(pos, xmin=xmin, parameter_ranges=_PL_RANGES, verbose=0)
    _ = fit.power_law.alpha
    comps: dict[str, dict[str, Any]] = {}
    llr: dict[str, float | None] = {}
    for alt in ALTERNATIVES:
        # the truncated power law gets its own ranges: Fit.parameter_ranges is
        # read when a distribution is first accessed
        fit.parameter_ranges = _TPL_RANGES if alt == "truncated_power_law" else _PL_RANGES
        nested = alt == "truncated_power_law"
        r, p = fit.distribution_compare("power_law", alt, nested=nested, normalized_ratio=True)
        raw, _p = fit.distribution_compare("power_law", alt, nested=nested, normalized_ratio=False)
        dist = getattr(fit, alt)
        r, p = _finite(r), _finite(p)
        comps[alt] = {
            "R": r,
            "p": p,
            "favours": None if r is None or r == 0 else ("power_law" if r > 0 else alt),
            "significant": p is not None and p < 0.1,
            "nested": nested,
            "parameters": {k: _finite(getattr(dist, k, None)) for k in dist.parameter_names},
            "noise_flag": bool(getattr(dist, "noise_flag", False)),
        }
        llr[alt] = _finite(raw)
    fit.parameter_ranges = _PL_RANGES
    return fit, comps, llr


def _ks_xmin_grid(pos: np.ndarray, n_candidates: int) -> float:
    """KS-optimal ``xmin`` over ``n_candidates`` distinct values evenly spaced in
    rank (continuous power law, analytic MLE ``alpha = 1 + m / sum(ln(x/xmin))``,
    empirical CDF ``i/m`` as ``powerlaw`` computes it); candidates leave at
    least :data:`MIN_POINTS` values in the tail."""
    x = np.sort(pos)
    u = np.unique(x)[:-1]
    first = np.searchsorted(x, u, side="left")
    keep = (x.size - first) >= MIN_POINTS
    u, first = u[keep], first[keep]
    idx = np.unique(np.linspace(0, u.size - 1, min(n_candidates, u.size)).round().astype(int))
    logs = np.log(x)
    suffix = np.concatenate([np.cumsum(logs[::-1])[::-1], [0.0]])
    best, best_d = float(u[0]), np.inf
    for j in idx:
        i0, xm = first[j], u[j]
        m = x.size - i0
        denom = suffix[i0] - m * np.log(xm)
        if denom <= 0:
            continue
        alpha = 1 + m / denom
        tail = x[i0:]
        model = 1 - (tail / xm) ** (1 - alpha)
        d = float(np.max(np.abs(np.arange(m) / m - model)))
        if d < best_d:
            best_d, best = d, float(xm)
    return best
