"""What a decider-gated run adds to ``results.json``: the ``decider`` block.

Keys: ``path``, ``threshold``, ``latency_ms_p50`` / ``latency_ms_p95`` (wall
milliseconds per decision), ``moments``, ``yes`` (moments the decider sent to
the model), ``llm_calls`` (model calls recorded in the log, all moments),
``moments_with_llm_call``, ``auc`` (ROC AUC of the decider's probability against
the labels; ``None`` with one class) and ``precision_at_recall_0_8`` (the
highest precision at any threshold reaching recall >= 0.8, from
``precision_recall_curve``), ``precision_at_budget``: of the Yes moments an offer budget of
:data:`proagent.bench.metrics.BUDGET_PER_HOUR` an hour per user lets through (``proagent live
--max-per-hour``'s default), the share wanted (:func:`proagent.bench.metrics.precision_at_budget`;
moments ordered by their ``time`` metadata).
"""

from __future__ import annotations

from typing import Any

__all__ = ["decider_line", "decider_results", "precision_at_recall"]


def precision_at_recall(labels: list[int], scores: list[float], recall: float = 0.8) -> float | None:
    """Highest precision among thresholds with recall >= ``recall``; ``None`` without positives."""
    from sklearn.metrics import precision_recall_curve

    if not any(labels):
        return None
    p, r, _ = precision_recall_curve(labels, scores)
    ok = [float(pi) for pi, ri in zip(p, r) if ri + 1e-12 >= recall]
    return max(ok) if ok else None


def decider_results(log: Any, folder: str) -> dict:
    """The ``decider`` block of a gated run's log (see the module docstring)."""
    from datetime import datetime

    import numpy as np
    from sklearn.metrics import roc_auc_score

    from ..bench.metrics import precision_at_budget

    labels, probs, lat, times, users, yes_at = [], [], [], [], [], []
    yes = calls = with_call = 0
    threshold = None
    for s in log.samples or []:
        score = next(iter((s.scores or {}).values()), None)
        d = ((score.metadata or {}).get("decider") if score else None) or {}
        n_calls = sum(1 for e in (s.events or []) if getattr(e, "event", None) == "model")
        calls += n_calls
        with_call += n_calls > 0
        if not d:
            continue
        labels.append(int(s.metadata["label"]))
        probs.append(float(d["p_yes"]))
        lat.append(float(d["latency_ms"]))
        yes += bool(d["needs_help"])
        yes_at.append(int(bool(d["needs_help"])))
        md = s.metadata or {}
        times.append(datetime.fromisoformat(md["time"]).timestamp() if md.get("time") else 0.0)
        users.append(str(md.get("user", "")))
        threshold = d.get("threshold")
    auc = float(roc_auc_score(labels, probs)) if 0 < sum(labels) < len(labels) else None
    return {
        "path": folder,
        "threshold": threshold,
        "moments": len(labels),
        "yes": yes,
        "llm_calls": calls,
        "moments_with_llm_call": with_call,
        "latency_ms_p50": float(np.percentile(lat, 50)) if lat else None,
        "latency_ms_p95": float(np.percentile(lat, 95)) if lat else None,
        "auc": auc,
        "precision_at_recall_0_8": precision_at_recall(labels, probs, 0.8) if labels else None,
        "precision_at_budget": precision_at_budget(labels, yes_at, times, users),
    }


def decider_line(block: dict) -> str:
    """One line for the results table: latency, model calls vs moments, AUC, precision at recall 0.8."""

    def f(v: float | None, fmt: str = ".3f") -> str:
        return "n/a" if v is None else format(v, fmt)

    return (
        f"decider {block['path']} (P >= {f(block['threshold'], '.3f')}): latency p50 {f(block['latency_ms_p50'], '.1f')} ms "
        f"(p95 {f(block['latency_ms_p95'], '.1f')}); LLM calls {block['llm_calls']} for {block['moments']} moments "
        f"({block['yes']} Yes); AUC {f(block['auc'])}; precision at recall 0.8 {f(block['precision_at_recall_0_8'])}"
        + (
            f"; precision at {b['per_hour']} offers/hour {f(b['precision'])} ({b['offers']} offers)"
            if (b := block.get("precision_at_budget"))
            else ""
        )
    )
