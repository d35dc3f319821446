"""Features of one moment t, from what an agent can observe at t only.

A :class:`~proagent.records.Sample` gives the current state (``current``: the
event in progress just before t) and the context window (``context``: earlier
events overlapping [t - window, t)). Features read only:

* the text of those events (application, window title, summary, description),
* their start times (and, for the context events and a LifeTrace current state,
  their end times, which lie at or before t),
* ``is_llm_event`` of **context** events (a LifeTrace log records that the user
  used an LLM earlier: observable on screen),
* the moment time t itself.

Never ``needs_help``, ``candidate_tasks``, ``intention`` or ``conversation`` of
any event (those are labels or come from the label), never the label, never
anything at or after t. ``tests/agent/test_decider.py`` checks this on a fixture
where reading a past label or a future event would flip the decision.

Groups (:data:`FEATURE_GROUPS`), in this order:

* ``embedding``: e5 embedding of the current event's text (384) and the unit
  mean of the context events' embeddings (384, zeros without context);
* ``similarity``: cosine of the current event to the previous one, max and
  mean cosine to the context;
* ``behaviour``: log(1 + seconds since the previous event), log(1 + dwell time
  of the current state up to t), log(1 + context events), events per minute in
  the window, application switches in the window (applications derived from the
  sentence where the source has none,
  :func:`proagent.agent.memory.derive_fields`), LLM use in the window and
  log(1 + seconds since the last one) (LifeTrace);
* ``keywords``: whether the current event is a search, typing, error, reading,
  opening, clicking, switching, scrolling, saving/running event, and the share of
  context events with each flag;
* ``clock``: hour of day as sine and cosine; ``weekday``: day of week as sine
  and cosine (both off by default: on a handful of sessions they name the session);
* ``boundary`` (opt-in, issue 33 item 3): task boundaries, where offers are taken up more
  (OASIS/Attelia, Iqbal & Bailey: deferring to breakpoints cut frustration): log(1 + seconds the
  previous app was in front) when the current event switched app (0 otherwise), a save / commit /
  push / build / test-run end in the current event's text, an idle gap (>= 60 s) just ended;
* ``struggle`` (opt-in): log(1 + search events in the window), log(1 + earlier window events
  showing the same window title as now: revisits), log(1 + consecutive error events ending now:
  an error that stays);
* ``intensity`` (opt-in): activity against the person's own recent baseline (FlowLight, Zuger
  et al. 2017: keyboard and mouse rate relative to the person's own): log of events per minute
  in the last 60 s over events per minute in the whole window, and log of the current dwell over
  the median dwell of the window's events.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...errors import UsageError
from ...records import Event, Sample
from ..memory import derive_fields
from ._embedding import EMBEDDING_DIM, EmbeddingCache

__all__ = [
    "DEFAULT_GROUPS",
    "FEATURE_GROUPS",
    "FEATURE_VERSION",
    "KEYWORDS",
    "FeatureConfig",
    "event_text",
    "feature_names",
    "moment_features",
    "moment_texts",
    "parse_feature_groups",
]

FEATURE_VERSION = 1
"""Bumped whenever a feature's definition or order changes: a decider saved with
another version is refused on load."""

FEATURE_GROUPS = (
    "embedding",
    "similarity",
    "behaviour",
    "keywords",
    "clock",
    "weekday",
    "boundary",
    "struggle",
    "intensity",
)
"""Feature groups, in column order."""

DEFAULT_GROUPS = ("embedding", "similarity", "behaviour", "keywords")
"""Groups used unless told otherwise (``clock`` and ``weekday`` are opt-in: on a handful of
sessions the hour or weekday names the session rather than the moment)."""

KEYWORDS: dict[str, re.Pattern[str]] = {
    "search": re.compile(r"\bsearch|google|bing|baidu|looks? up|query|搜索", re.I),
    "typing": re.compile(r"\btyp(e|es|ed|ing)\b|\bwrit(e|es|ing)\b|\benter(s|ed)?\b|\bedit|输入|编辑", re.I),
    "error": re.compile(r"\berror|exception|fail|bug|traceback|warning|crash|报错|错误", re.I),
    "reading": re.compile(r"\bread(s|ing)?\b|\breview|\bbrows|\bview(s|ing)?\b|\blooks? at|阅读|浏览", re.I),
    "opening": re.compile(r"\bopen(s|ed|ing)?\b|\bstart(s|ed|ing)?\b|\blaunch|\bcreat|\bnew\b|打开|新建", re.I),
    "clicking": re.compile(r"\bclick|\bselect|\bpress", re.I),
    "switching": re.compile(r"\bswitch|\breturn|\bgoes back|\bback to|切换", re.I),
    "scrolling": re.compile(r"\bscroll", re.I),
    "saving": re.compile(r"\bsav(e|es|ed|ing)\b|\brun(s|ning)?\b|\bexecut|\bcompil|\bdebug|保存|运行", re.I),
}
"""Keyword flags of an event's text (English and Chinese)."""

BOUNDARY_WORDS = re.compile(
    r"\bsav(e|es|ed|ing)\b|\bcommit|\bpush(es|ed)?\b|\bmerg|\bbuil(d|t)\b|\bpass(ed|es)?\b|"
    r"\bfail(ed|s)?\b|\bfinish|\bcomplet|\bdone\b|\bsubmit|\bdeploy|\btests? (run|ran)|"
    r"保存|提交|完成",
    re.I,
)
"""A save, commit, push, build, test-run end or submission in an event's text (``boundary`` group)."""


@dataclass(frozen=True)
class FeatureConfig:
    """Which feature groups a decider uses (recorded in its manifest)."""

    groups: tuple[str, ...] = DEFAULT_GROUPS
    """Feature groups (see :data:`FEATURE_GROUPS`), kept in :data:`FEATURE_GROUPS` order."""

    def __post_init__(self) -> None:
        bad = [g for g in self.groups if g not in FEATURE_GROUPS]
        if bad or not self.groups:
            raise ValueError(f"feature groups {', '.join(bad) or '(none)'}: choose from {', '.join(FEATURE_GROUPS)}")
        object.__setattr__(self, "groups", tuple(g for g in FEATURE_GROUPS if g in self.groups))


def parse_feature_groups(text: str | None) -> FeatureConfig:
    """``train when --features``: comma-separated feature groups (``None``: :data:`DEFAULT_GROUPS`).

    Raises:
        proagent.errors.UsageError: an unknown group, or none (``--features``).
    """
    try:
        return FeatureConfig(tuple(g.strip() for g in text.split(",") if g.strip()) if text else DEFAULT_GROUPS)
    except ValueError as e:
        raise UsageError("--features", str(e)) from None


def event_text(e: Event) -> str:
    """What an event shows: ``app | title | summary | description``, empty parts dropped."""
    return " | ".join(p.strip() for p in (e.app_name, e.window_title, e.summary, e.description) if p and p.strip())


def moment_texts(s: Sample) -> list[str]:
    """The texts embedded for a moment: the current event, then the context events."""
    return [event_text(s.current)] + [event_text(e) for e in s.context]


def _app(e: Event) -> str:
    if e.app_name:
        return e.app_name

    return derive_fields(e.summary or e.window_title)[0]


def _flags(text: str) -> list[float]:
    return [1.0 if rx.search(text) else 0.0 for rx in KEYWORDS.values()]


def feature_names(config: FeatureConfig = FeatureConfig()) -> list[str]:
    """Column names, in order, for ``config``."""
    names: list[str] = []
    for g in config.groups:
        if g == "embedding":
            names += [f"e5_current_{i}" for i in range(EMBEDDING_DIM)] + [
                f"e5_window_{i}" for i in range(EMBEDDING_DIM)
            ]
        elif g == "similarity":
            names += ["cos_previous", "cos_window_max", "cos_window_mean"]
        elif g == "behaviour":
            names += [
                "log_seconds_since_previous",
                "log_dwell_seconds",
                "log_window_events",
                "events_per_minute",
                "app_switches",
                "llm_use_in_window",
                "log_seconds_since_llm_use",
            ]
        elif g == "keywords":
            names += [f"is_{k}" for k in KEYWORDS] + [f"window_share_{k}" for k in KEYWORDS]
        elif g == "clock":
            names += ["hour_sin", "hour_cos"]
        elif g == "weekday":
            names += ["weekday_sin", "weekday_cos"]
        elif g == "boundary":
            names += ["log_focus_seconds_before_switch", "is_boundary_word", "idle_gap_ended"]
        elif g == "struggle":
            names += ["log_window_searches", "log_title_revisits", "log_error_run"]
        elif g == "intensity":
            names += ["log_rate_last_minute_over_window", "log_dwell_over_window_median"]
    return names


def _one(s: Sample, vecs: np.ndarray, config: FeatureConfig) -> list[float]:
    t = s.time
    cur_vec, ctx_vecs = vecs[0], vecs[1:]
    ctx = list(s.context)
    window = max(float(s.window_seconds), 1.0)
    row: list[float] = []
    for g in config.groups:
        if g == "embedding":
            mean = ctx_vecs.mean(axis=0) if len(ctx_vecs) else np.zeros(EMBEDDING_DIM, np.float32)
            norm = float(np.linalg.norm(mean))
            row += list(cur_vec) + list(mean / norm if norm else mean)
        elif g == "similarity":
            cos = ctx_vecs @ cur_vec if len(ctx_vecs) else np.zeros(0)
            row += [
                float(cos[-1]) if len(cos) else 0.0,
                float(cos.max()) if len(cos) else 0.0,
                float(cos.mean()) if len(cos) else 0.0,
            ]
        elif g == "behaviour":
            prev = ctx[-1].start if ctx else None
            since = (t - prev).total_seconds() if prev is not None else window
            dwell = max((t - s.current.start).total_seconds(), 0.0)
            apps = [_app(e) for e in ctx] + [_app(s.current)]
            switches = sum(1 for a, b in zip(apps, apps[1:]) if a and b and a != b)
            llm = [e for e in ctx if e.is_llm_event]
            since_llm = (t - max(e.start for e in llm)).total_seconds() if llm else window
            row += [
                math.log1p(max(since, 0.0)),
                math.log1p(dwell),
                math.log1p(len(ctx)),
                60.0 * len(ctx) / window,
                float(switches),
                1.0 if llm else 0.0,
                math.log1p(max(since_llm, 0.0)),
            ]
        elif g == "keywords":
            cur = _flags(event_text(s.current))
            if ctx:
                share = np.mean([_flags(event_text(e)) for e in ctx], axis=0).tolist()
            else:
                share = [0.0] * len(KEYWORDS)
            row += cur + share
        elif g == "clock":
            h = (t.hour + t.minute / 60.0) / 24.0 * 2 * math.pi
            row += [math.sin(h), math.cos(h)]
        elif g == "weekday":
            d = t.weekday() / 7.0 * 2 * math.pi
            row += [math.sin(d), math.cos(d)]
        elif g == "boundary":
            row += _boundary(s, ctx)
        elif g == "struggle":
            row += _struggle(s, ctx)
        elif g == "intensity":
            row += _intensity(s, ctx, window)
    return row


def _boundary(s: Sample, ctx: list[Event]) -> list[float]:
    focus = 0.0
    if ctx and _app(ctx[-1]) and _app(s.current) and _app(ctx[-1]) != _app(s.current):
        app, start = _app(ctx[-1]), ctx[-1].start
        for e in reversed(ctx):
            if _app(e) != app:
                break
            start = e.start
        focus = math.log1p(max((s.current.start - start).total_seconds(), 0.0))
    gap = (s.current.start - ctx[-1].start).total_seconds() if ctx else 0.0
    return [focus, 1.0 if BOUNDARY_WORDS.search(event_text(s.current)) else 0.0, 1.0 if gap >= 60.0 else 0.0]


def _struggle(s: Sample, ctx: list[Event]) -> list[float]:
    search = KEYWORDS["search"]
    error = KEYWORDS["error"]
    searches = sum(1 for e in ctx + [s.current] if search.search(event_text(e)))
    title = (s.current.window_title or s.current.summary).strip().casefold()
    revisits = sum(1 for e in ctx if title and (e.window_title or e.summary).strip().casefold() == title)
    run = 0
    for e in [*ctx, s.current][::-1]:
        if not error.search(event_text(e)):
            break
        run += 1
    return [math.log1p(searches), math.log1p(revisits), math.log1p(run)]


def _intensity(s: Sample, ctx: list[Event], window: float) -> list[float]:
    t = s.time
    last = sum(1 for e in ctx + [s.current] if (t - e.start).total_seconds() <= 60.0)
    rate_window = (len(ctx) + 1) / max(window / 60.0, 1e-9)
    starts = [e.start for e in ctx] + [s.current.start]
    dwells = [(b - a).total_seconds() for a, b in zip(starts, starts[1:])]
    dwell = max((t - s.current.start).total_seconds(), 0.0)
    med = float(np.median(dwells)) if dwells else dwell
    return [math.log((last + 1.0) / (rate_window + 1.0)), math.log1p(dwell) - math.log1p(max(med, 0.0))]


def moment_features(
    samples: Sequence[Sample], cache: EmbeddingCache, config: FeatureConfig = FeatureConfig(), progress=None
) -> np.ndarray:  # noqa: ANN001
    """The feature matrix of ``samples``, shape ``(len(samples), len(feature_names(config)))``, float64.

    Args:
        samples: moments (any source); only their observable parts are read (module docstring).
        cache: where embeddings come from.
        config: feature groups.
        progress: optional ``callable(n)`` called after each batch of ``n`` newly embedded texts.
    """
    need_vecs = any(g in config.groups for g in ("embedding", "similarity"))
    rows = []
    for s in samples:
        texts = moment_texts(s)
        vecs = cache.get(texts, progress=progress) if need_vecs else np.zeros((len(texts), EMBEDDING_DIM), np.float32)
        rows.append(_one(s, vecs, config))
    width = len(feature_names(config))
    return np.asarray(rows, dtype=np.float64).reshape(len(samples), width)
