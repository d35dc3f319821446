"""Burstiness of event sequences (Goh and Barabasi 2008) and inter-event times.

``B = (sigma - mu) / (sigma + mu)`` of the inter-event times: -1 for a
perfectly periodic sequence (sigma = 0), about 0 for a Poisson process
(exponential gaps, sigma = mu), towards +1 for bursty, heavy-tailed gaps.
``sigma`` is the population standard deviation (``ddof=0``), as in the paper's
definition. Kim and Jo (2016)'s finite-size corrected ``B_n`` is given
beside it, because ``B`` of a few dozen gaps is biased towards -1.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime

import numpy as np

from ..records import Event

__all__ = ["burstiness", "burstiness_finite_size", "inter_event_times", "seconds"]


def burstiness(intervals: Iterable[float]) -> float | None:
    """Goh-Barabasi burstiness ``(sigma - mu) / (sigma + mu)`` of inter-event times.

    Returns:
        ``None`` with fewer than 2 intervals or when all intervals are 0
        (``sigma + mu = 0``, undefined).

    Raises:
        ValueError: an interval is negative or not finite.
    """
    x = np.asarray(list(intervals), dtype=float)
    if x.size and (not np.all(np.isfinite(x)) or np.any(x < 0)):
        raise ValueError("inter-event times must be finite and >= 0")
    if x.size < 2:
        return None
    mu, sigma = float(x.mean()), float(x.std())
    if sigma + mu == 0:
        return None
    return (sigma - mu) / (sigma + mu)


def burstiness_finite_size(intervals: Iterable[float]) -> float | None:
    """Kim and Jo (2016) burstiness corrected for ``n`` intervals:
    ``B_n = (sqrt(n+1) r - sqrt(n-1)) / ((sqrt(n+1) - 2) r + sqrt(n-1))`` with
    ``r = sigma / mu``; equals ``B`` as ``n`` grows. ``None`` when undefined."""
    x = np.asarray(list(intervals), dtype=float)
    if x.size < 2 or x.mean() == 0:
        return None
    n = x.size
    r = float(x.std() / x.mean())
    a, b = math.sqrt(n + 1), math.sqrt(n - 1)
    den = (a - 2) * r + b
    return None if den == 0 else (a * r - b) / den


def inter_event_times(events: Iterable[Event], select: Callable[[Event], bool] | None = None) -> np.ndarray:
    """Seconds between consecutive selected events' starts, within each user,
    pooled over users (gaps never cross users). Users are taken in sorted
    order, events by start time; ties give 0-second gaps.

    Args:
        events: Events of any users, any order.
        select: Keep only events for which this is true (default: all).
    """
    by_user: dict[str, list[float]] = defaultdict(list)
    for e in events:
        if select is None or select(e):
            by_user[e.user].append(seconds(e.start))
    out = []
    for user in sorted(by_user):
        t = np.sort(np.asarray(by_user[user], dtype=float))
        out.append(np.diff(t))
    return np.concatenate(out) if out else np.zeros(0)


_EPOCH = datetime(1970, 1, 1)


def seconds(t: datetime) -> float:
    """Seconds since 1970-01-01 of a naive datetime read as wall-clock time (no
    time zone or DST applied, so differences are exact wall-clock gaps); an
    aware datetime gives its POSIX timestamp."""
    return t.timestamp() if t.tzinfo is not None else (t - _EPOCH).total_seconds()
