"""The opt-in signal groups of issue 33 item 3 (boundary, struggle, intensity): one named column each,
read from the moment and its past only."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pytest

from proagent.agent.decider import EmbeddingCache, FeatureConfig, feature_names, moment_features
from proagent.records import Event, Sample

T = datetime(2026, 12, 3, 10, 0)


def _ev(i: int, app: str, title: str, at: float) -> Event:
    return Event(
        id=str(i),
        user="u",
        start=T + timedelta(seconds=at),
        end=T + timedelta(seconds=at + 5),
        app_name=app,
        window_title=title,
        summary=title,
    )


def _sample(ctx: list[Event], cur: Event, t: float) -> Sample:
    return Sample(
        id="s",
        user="u",
        time=T + timedelta(seconds=t),
        label=0,
        split="test",
        kind="candidate",
        context=tuple(ctx),
        current=cur,
        window_seconds=300.0,
    )


def test_signal_groups() -> None:
    fc = FeatureConfig(("boundary", "struggle", "intensity"))
    names = feature_names(fc)
    ctx = [
        _ev(1, "Code", "parser.py", 0),
        _ev(2, "Code", "parser.py", 50),
        _ev(3, "Firefox", "search: error KeyError", 100),
        _ev(4, "Firefox", "search: error KeyError fix", 110),
    ]
    cur = _ev(5, "xterm", "pytest: 1 failed, KeyError", 200)
    x = moment_features([_sample(ctx, cur, 205)], EmbeddingCache(embed=lambda t: np.zeros((len(t), 384))), fc)[0]
    row = dict(zip(names, x))
    assert len(names) == x.shape[0] == 8
    assert row["log_focus_seconds_before_switch"] > 0  # Firefox in front since 100 s, then a switch to xterm
    assert row["is_boundary_word"] == 1.0 and row["idle_gap_ended"] == 1.0  # 'failed'; 90 s since the last event
    # log1p over a feature column may take numpy's SIMD path, which differs from the scalar call in the last bit
    # (1.0986122886681096 vs ...098 was seen): equal to 1e-12 relative is equal here
    assert row["log_window_searches"] == pytest.approx(np.log1p(2), rel=1e-12)
    assert row["log_error_run"] == pytest.approx(np.log1p(3), rel=1e-12)
    # a future event never changes the row: only the context and the current event are read
    later = _sample(ctx, cur, 205)
    assert np.array_equal(moment_features([later], EmbeddingCache(embed=lambda t: np.zeros((len(t), 384))), fc)[0], x)
