"""Build When/How-to-Assist samples from events (ProAgentBench sections 3 and 5).

Two kinds of source:

* **Labelled** sources (ProactiveBench) label every event: one sample per event,
  label = ``task_status``, the current state is the event itself, the context is
  the earlier events of the session inside the window, and the How-to-Assist
  references are the candidate tasks.
* **LifeTrace / ProAgentBench** logs mark LLM-use events. Positives are the
  moments t at which an LLM-use event starts; the model sees what came before
  (the event in progress just before t as the current state, earlier events in
  the window as context), never the LLM event itself. The reference query is the
  first user query of the conversation, the intention its annotation.
  Hard negatives are other app switches that look like assistance moments but
  are not: the previous event is real activity (>= 3 s, has a screenshot), no
  LLM event starts within ``gap_seconds`` after t, and among such candidates the
  ones most similar (same app, overlapping title words) to the positives'
  current states are chosen. Idle stretches and the moments just before a real
  LLM event are never negatives.

Per-user isolation: samples carry their user and nothing crosses users. The
split is time-based within each user: the earliest ``train_fraction`` of a
user's moments are ``train``, the rest ``test``. Everything is deterministic for
a seed.
"""

from __future__ import annotations

import functools
import math
import random
import re
from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..errors import DataError, UsageError
from ..records import MIN_EVENT_SECONDS, Event, Sample, context_reach, window_context

__all__ = [
    "WINDOWS",
    "SampleConfig",
    "build_samples",
    "candidate_moments",
    "context_reach",
    "moment_events",
    "no_samples_reason",
    "parse_window",
    "window_context",
]

WINDOWS = (10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
"""Context windows of the paper's ablation in seconds (10 s, 30 s, 1, 2, 5, 10 min;
ProAgentBench section 6)."""


def parse_window(text: str | float | int, *, what: str | None = "window", option: str = "--window") -> float:
    """Parse a window such as ``10s``, ``5m``, ``1h`` or ``300`` into seconds.

    ``what`` names the value in the error message (``window '0s': ...``; ``None``: no name);
    ``option`` is the option (or task argument) that gave it (``--idle``, ``--windows``).

    Raises:
        proagent.errors.UsageError: unreadable text, or a window outside 1 s .. 24 h (its
            ``option`` is ``option``; a ``ValueError``).
    """
    name = f"{what} " if what else ""
    if isinstance(text, (int, float)):
        seconds = float(text)
    else:
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h)?\s*", str(text).lower())
        if not m:
            raise UsageError(option, f"{name}{text!r}: expected e.g. 10s, 30s, 1m, 5m, 10m")
        seconds = float(m.group(1)) * {None: 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}[m.group(2)]
    if not 1 <= seconds <= 86400:
        raise UsageError(option, f"{name}{text!r}: must be between 1 s and 24 h")
    return seconds


@dataclass(frozen=True)
class SampleConfig:
    """How samples are made. Defaults follow ProAgentBench (section 5, Appendix B.3; window ablation section 6.4)."""

    window_seconds: float = 300.0
    """Context window before t, seconds (paper default 5 min)."""
    train_fraction: float = 0.5
    """Earliest share of each user's moments assigned to ``train`` (0-1)."""
    min_event_seconds: float = MIN_EVENT_SECONDS
    """Shorter events are not real activity (seconds)."""
    gap_seconds: float = 120.0
    """A negative moment must have no LLM event starting within this many seconds after it."""
    negatives_per_positive: float = 1.0
    """Hard negatives drawn per positive, per user."""
    seed: int = 0
    """Seed for tie-breaking among equally hard negatives."""


def _split(samples: list[Sample], fraction: float) -> list[Sample]:
    from dataclasses import replace

    ordered = sorted(samples, key=lambda s: (s.time, s.id))
    n_train = int(math.floor(fraction * len(ordered)))
    return [replace(s, split="train" if i < n_train else "test") for i, s in enumerate(ordered)]


def _labelled(events: list[Event], cfg: SampleConfig) -> list[Sample]:
    out = []
    reach = context_reach(events)
    for i, e in enumerate(events):
        out.append(
            Sample(
                id=f"{e.id}:labelled",
                user=e.user,
                time=e.start,
                label=1 if e.needs_help else 0,
                split="test",
                kind="labelled",
                context=window_context(events, i, e.start, cfg.window_seconds, reach=reach),
                current=e,
                window_seconds=cfg.window_seconds,
                reference_queries=e.candidate_tasks,
                event_id=e.id,
            )
        )
    return out


def moment_events(events: list[Event], cfg: SampleConfig) -> list[Event]:
    """The events moments are made of: real activity (:meth:`Event.is_activity` with
    ``cfg.min_event_seconds``) and LLM use with a recorded conversation (ProAgentBench B.3)."""
    return [e for e in events if e.is_activity(cfg.min_event_seconds) or e.is_llm_use]


def _moment(
    valid: list[Event],
    i: int,
    kind: str,
    label: int,
    cfg: SampleConfig,
    reach: list[datetime],
    queries: tuple[str, ...] = (),
    intention: str | None = None,
) -> Sample:
    """The sample of the moment ``valid[i]`` starts: the event before it is the current state."""
    e = valid[i]
    return Sample(
        id=f"{e.user}:{e.id}:{kind}",
        user=e.user,
        time=e.start,
        label=label,  # type: ignore[arg-type]
        split="test",
        kind=kind,  # type: ignore[arg-type]
        context=window_context(valid, i - 1, e.start, cfg.window_seconds, reach=reach),
        current=valid[i - 1],
        window_seconds=cfg.window_seconds,
        reference_queries=tuple(q for q in queries if q.strip()),
        intention=intention,
        event_id=e.id,
    )


_WORD = re.compile(r"[\w\u4e00-\u9fff]+")


def _words(e: Event) -> set[str]:
    return {w.lower() for w in _WORD.findall(e.window_title) if len(w) > 1}


def _lifetrace(events: list[Event], cfg: SampleConfig) -> list[Sample]:
    valid = moment_events(events, cfg)
    reach = context_reach(valid)
    # every flagged LLM-use event, also one whose conversation was not recorded (time order)
    llm_starts = [e.start for e in events if e.is_llm_event]
    gap = timedelta(seconds=cfg.gap_seconds)
    positives: list[Sample] = []
    candidates: list[int] = []
    for i in range(1, len(valid)):
        e, prev = valid[i], valid[i - 1]
        if e.is_llm_use:
            if prev.is_llm_event or not prev.is_activity(cfg.min_event_seconds):
                continue  # consecutive LLM events: the moment of turning to the LLM is the first one
            queries = e.conversation.user_queries[:1] if e.conversation else ()  # none where no screen is recorded
            positives.append(_moment(valid, i, "positive", 1, cfg, reach, queries, e.intention))
            continue
        if (
            e.is_llm_event
            or prev.is_llm_event
            or not e.is_activity(cfg.min_event_seconds)
            or not prev.is_activity(cfg.min_event_seconds)
        ):
            continue
        j = bisect_left(llm_starts, e.start)
        if j < len(llm_starts) and llm_starts[j] < e.start + gap:
            continue  # just before a real LLM event: not a negative
        candidates.append(i)
    if not positives:
        return []
    pos_apps: dict[str, int] = defaultdict(int)
    for p in positives:
        pos_apps[p.current.app_name] += 1
    pos_words = list(dict.fromkeys(frozenset(_words(p.current)) for p in positives))
    rng = random.Random(f"{cfg.seed}:{positives[0].user}")

    @functools.cache
    def overlap(w: frozenset[str]) -> float:
        """Highest Jaccard similarity of title words ``w`` to a positive's."""
        return max((len(w & pw) / len(w | pw) for pw in pos_words if w | pw), default=0.0)

    def hardness(i: int) -> tuple[float, float]:
        prev = valid[i - 1]
        return (pos_apps.get(prev.app_name, 0) / len(positives) + overlap(frozenset(_words(prev))), rng.random())

    ranked = sorted(candidates, key=hardness, reverse=True)
    k = min(len(ranked), max(1, round(cfg.negatives_per_positive * len(positives))))
    return positives + [_moment(valid, i, "hard_negative", 0, cfg, reach) for i in ranked[:k]]


def _lifetrace_candidates(events: list[Event], cfg: SampleConfig) -> list[Sample]:
    """Every app switch after real activity, labelled by whether an LLM event starts there."""
    valid = moment_events(events, cfg)
    reach = context_reach(valid)
    out = []
    for i in range(1, len(valid)):
        e, prev = valid[i], valid[i - 1]
        if not prev.is_activity(cfg.min_event_seconds) or prev.is_llm_event:
            continue  # the moment of turning to an LLM is the first LLM event of a run
        if e.is_llm_event:
            queries = e.conversation.user_queries[:1] if e.conversation else ()
            out.append(_moment(valid, i, "candidate", 1, cfg, reach, queries, e.intention))
        else:
            out.append(_moment(valid, i, "candidate", 0, cfg, reach))
    return out


def _per_user(events: list[Event], config: SampleConfig, lifetrace) -> list[Sample]:  # noqa: ANN001
    if not 0 <= config.train_fraction < 1:
        raise UsageError("--train-fraction", f"{config.train_fraction}: must be in [0, 1)")
    by_user: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        by_user[e.user].append(e)
    out: list[Sample] = []
    for user in sorted(by_user):
        evs = sorted(by_user[user], key=lambda e: e.start)  # stable: ties keep source order
        if all(e.needs_help is not None for e in evs):
            made = _labelled(evs, config)
        elif any(e.is_llm_event is not None for e in evs):
            made = lifetrace(evs, config)
        else:
            raise DataError(
                user,
                "events have no ground truth: neither per-event help labels nor LLM-use "
                "annotations (is_llm_event); annotate the log first",
            )
        out.extend(_split(made, config.train_fraction))
    return sorted(out, key=lambda s: (s.user, s.time, s.id))


def candidate_moments(events: list[Event], config: SampleConfig = SampleConfig()) -> list[Sample]:
    """Every candidate time point of the human log, one sample each, sorted by (user, time).

    These are the points at which the synthetic baseline (ProAgentBench section
    4.2) asks a model whether the user would turn to an LLM now: for labelled
    sources (ProactiveBench) every event; for LifeTrace logs every app switch
    whose previous event is real activity (>= ``min_event_seconds`` with a
    screenshot) and not itself LLM use. ``label`` is the human's choice (1 = an
    LLM event starts here), ``kind`` is ``labelled`` or ``candidate``,
    ``event_id`` names the event that starts at the point. Unlike
    :func:`build_samples` there is no negative sampling.

    Raises:
        DataError: the events carry no labels (see :func:`build_samples`).
        ValueError: ``train_fraction`` outside [0, 1).
    """
    return _per_user(events, config, _lifetrace_candidates)


def build_samples(events: list[Event], config: SampleConfig = SampleConfig()) -> list[Sample]:
    """Turn events into samples, sorted by (user, time).

    Args:
        events: Events of one or more users (any order).
        config: Window, split and negative-sampling settings.

    Returns:
        Samples of every user, with ``split`` set.

    Raises:
        DataError: the events carry neither per-event labels (ProactiveBench) nor
            LLM-use annotations (``is_llm_event``), so no ground truth exists.
    """
    return _per_user(events, config, _lifetrace)


def _curation_excluded(curation: list[dict]) -> str:
    """``curation.jsonl`` records as one clause: excluded events by reason, and the
    screenshots dropped as duplicates from them."""
    from collections import Counter

    dropped = {
        (r.get("user"), str(r.get("event_id")))
        for r in curation
        if r.get("decision") == "excluded" and r.get("screenshot_id") is None
    }
    if not dropped:
        return ""
    reasons = Counter(
        re.sub(r"\s*\([^)]*\)$", "", str(r.get("reason") or ""))
        for r in curation
        if r.get("decision") == "excluded" and r.get("screenshot_id") is None
    )
    dups = sum(
        1
        for r in curation
        if r.get("decision") == "excluded"
        and r.get("screenshot_id") is not None
        and (r.get("user"), str(r.get("event_id"))) in dropped
        and "duplicate" in str(r.get("reason"))
    )
    text = f"curation excluded {len(dropped)} event(s): " + ", ".join(f"{n} {why}" for why, n in reasons.most_common())
    if dups:
        text += f" ({dups} of their screenshots dropped as duplicates of earlier ones)"
    return text


def no_samples_reason(
    events: list[Event],
    samples: list[Sample],
    split: str,
    config: SampleConfig = SampleConfig(),
    curation: list[dict] | None = None,
) -> str:
    """Why ``split`` holds no sample, in one line: how many events make moments (real
    activity, LLM use with a recorded query), how many moments of each label the
    log gives, what the split leaves, and what curation excluded (``curation``: the
    records of a curated folder's ``curation.jsonl``), e.g. ``0 of 6 events make a
    moment (real activity >= 3 s with a screenshot: 0, ...); curation excluded 2
    event(s): 2 no valid screenshot (2 of their screenshots dropped as duplicates ...)``."""
    n = len(events)
    with_shot = sum(1 for e in events if e.screenshots)
    active = sum(1 for e in events if e.is_activity(config.min_event_seconds))
    llm = sum(1 for e in events if e.is_llm_event)
    llm_use = sum(1 for e in events if e.is_llm_use)
    made = len(moment_events(events, config))
    pos = sum(s.label == 1 for s in samples)
    parts = [
        f"{made} of {n} events make a moment (real activity >= {config.min_event_seconds:g} s with a screenshot: "
        f"{active}; {n - with_shot} without a screenshot; LLM-use events: {llm}, {llm_use} with a recorded query)"
    ]
    if samples:
        parts.append(
            f"{len(samples)} moment(s) in all ({pos} positive, {len(samples) - pos} negative), none in the "
            f"{split} split (train fraction {config.train_fraction:g}; try --split all)"
        )
    elif llm_use == 0:
        parts.append(
            "no LLM-use event with a recorded query, so no positive moment (annotate the log, or check its annotations)"
        )
    else:
        parts.append(
            "no LLM-use event follows real activity, so no positive moment (a moment needs the activity just before it)"
        )
    cur = _curation_excluded(curation or [])
    if cur:
        parts.append(cur)
    return "; ".join(parts)
