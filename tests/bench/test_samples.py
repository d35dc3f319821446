"""Samples of When/How to Assist: windows, ProactiveBench labelled moments, LifeTrace
positives and hard negatives, time-based split, determinism and per-user isolation."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from lifetrace_fixtures import make_participant, write_annotations

from proagent.bench.samples import WINDOWS, SampleConfig, build_samples, parse_window
from proagent.errors import DataError
from proagent.records import Conversation, Event, Sample, Screenshot
from proagent.sources.load import load_events
from proagent.sources.proactivebench import read_proactivebench

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "proactivebench"

needs_shared = pytest.mark.skipif(
    not (SHARED / "code_11.json").is_file(),
    reason=f"real ProactiveBench sessions not found at {SHARED} (expected <root>/shared beside <root>/main)",
)

# --------------------------------------------------------------------------- windows


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("10s", 10),
        ("30s", 30),
        ("1m", 60),
        ("2m", 120),
        ("5m", 300),
        ("10m", 600),
        ("300", 300),
        (" 5 min ", 300),
        ("10sec", 10),
        ("1h", 3600),
        ("1.5m", 90),
        ("5M", 300),
        (45, 45),
        (2.5, 2.5),
    ],
)
def test_parse_window(text, seconds):
    assert parse_window(text) == seconds


def test_paper_windows():
    assert tuple(parse_window(w) for w in ("10s", "30s", "1m", "2m", "5m", "10m")) == WINDOWS


@pytest.mark.parametrize("bad", ["", "abc", "5x", "-5s", "0s", "0", "25h", "5 m s", "1e3", "m", "5m30s", 0, -3, 90000])
def test_parse_window_rejects(bad):
    with pytest.raises(ValueError, match="window"):
        parse_window(bad)


def test_train_fraction_range():
    with pytest.raises(ValueError, match="train.fraction"):
        build_samples([], SampleConfig(train_fraction=1.0))
    with pytest.raises(ValueError, match="train.fraction"):
        build_samples([], SampleConfig(train_fraction=-0.1))


# --------------------------------------------------------------------------- helpers


def _check_split(samples: list[Sample], fraction: float) -> None:
    by_user: dict[str, list[Sample]] = defaultdict(list)
    for s in samples:
        by_user[s.user].append(s)
    for user, ss in by_user.items():
        train = [s for s in ss if s.split == "train"]
        test = [s for s in ss if s.split == "test"]
        assert len(train) + len(test) == len(ss)
        assert len(train) == math.floor(fraction * len(ss)), user
        if train and test:
            assert max(s.time for s in train) <= min(s.time for s in test), user


# --------------------------------------------------------------------------- ProactiveBench


@pytest.fixture(scope="module")
def pb_events() -> list[Event]:
    if not (SHARED / "code_11.json").is_file():
        pytest.skip(f"real ProactiveBench sessions not found at {SHARED}")
    return read_proactivebench(SHARED)


@needs_shared
def test_proactivebench_one_sample_per_event(pb_events):
    samples = build_samples(pb_events, SampleConfig(window_seconds=300))
    assert len(samples) == len(pb_events) == 112
    by_id = {e.id: e for e in pb_events}
    assert sorted(s.event_id for s in samples) == sorted(by_id)
    assert len({s.id for s in samples}) == 112
    assert sum(s.label for s in samples) == 38
    for s in samples:
        e = by_id[s.event_id]
        assert s.kind == "labelled"
        assert s.label == (1 if e.needs_help else 0)
        assert s.current == e
        assert s.time == e.start
        assert s.user == e.user
        assert s.reference_queries == e.candidate_tasks
        assert s.window_seconds == 300
    # sorted by (user, time)
    assert [(s.user, s.time) for s in samples] == sorted((s.user, s.time) for s in samples)


def _check_context(samples: list[Sample], events: list[Event], window: float) -> None:
    by_user: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        by_user[e.user].append(e)
    for s in samples:
        lo = s.time - timedelta(seconds=window)
        ids = [c.id for c in s.context]
        assert s.current.id not in ids, s.id
        assert len(set(ids)) == len(ids)
        assert [c.start for c in s.context] == sorted(c.start for c in s.context), "oldest first"
        for c in s.context:
            assert c.user == s.user, "context crossed sessions"
            assert c.start <= s.time
            assert (c.end or c.start) >= lo, f"{s.id}: {c.id} lies wholly before the window"
        # every other event of the session that starts inside [t - window, t) is there
        for e in by_user[s.user]:
            if e.id != s.current.id and lo <= e.start < s.time:
                assert e.id in ids, f"{s.id}: {e.id} missing from context"


@needs_shared
def test_proactivebench_context_window(pb_events):
    small = build_samples(pb_events, SampleConfig(window_seconds=parse_window("10s")))
    large = build_samples(pb_events, SampleConfig(window_seconds=parse_window("10m")))
    _check_context(small, pb_events, 10)
    _check_context(large, pb_events, 600)
    assert [s.id for s in small] == [s.id for s in large]
    for a, b in zip(small, large):
        assert {c.id for c in a.context} <= {c.id for c in b.context}
    assert sum(len(s.context) for s in large) > sum(len(s.context) for s in small)
    assert max(len(s.context) for s in large) > max(len(s.context) for s in small)
    # the first step of each session has nothing before it
    firsts = [s for s in large if s.event_id.endswith(":0")]
    assert len(firsts) == 6 and all(s.context == () for s in firsts)


@needs_shared
@pytest.mark.parametrize("fraction", [0.0, 0.25, 0.5, 0.8])
def test_proactivebench_time_split(pb_events, fraction):
    samples = build_samples(pb_events, SampleConfig(train_fraction=fraction))
    _check_split(samples, fraction)
    if fraction == 0.0:
        assert {s.split for s in samples} == {"test"}


@needs_shared
def test_proactivebench_deterministic(pb_events):
    cfg = SampleConfig(window_seconds=120, train_fraction=0.5, seed=3)
    assert build_samples(pb_events, cfg) == build_samples(list(pb_events), cfg)
    # one session alone gives the same samples as inside the folder
    alone = build_samples([e for e in pb_events if e.user == "code_12"], cfg)
    assert alone == [s for s in build_samples(pb_events, cfg) if s.user == "code_12"]


# --------------------------------------------------------------------------- LifeTrace


@pytest.fixture(scope="module")
def lt(tmp_path_factory):
    """Two participants (same activity, different users) with annotations, built once."""
    root = tmp_path_factory.mktemp("participants")
    fx = {u: make_participant(root, u) for u in ("P01", "P02")}
    ann = write_annotations(list(fx.values()), root.parent / f"{root.name}-ann.jsonl")
    events = load_events(root, annotations=[ann])
    return fx, events


def _llm_starts(fx) -> list[datetime]:
    return [fx.starts[e] for e in fx.llm_event_ids]


def test_lifetrace_positives(lt):
    fx, events = lt
    samples = build_samples(events)
    by_user = defaultdict(dict)
    for e in events:
        by_user[e.user][e.id] = e
    for user, f in fx.items():
        pos = [s for s in samples if s.user == user and s.kind == "positive"]
        assert {s.event_id for s in pos} == set(f.llm_event_ids)
        for s in pos:
            eid = s.event_id
            assert s.label == 1
            assert s.id == f"{user}:{eid}:positive"
            assert s.time == f.starts[eid]  # the start of the LLM event
            # the model never sees the LLM event, nor anything from t on
            seen = (s.current,) + s.context
            assert all(e.id != eid for e in seen)
            assert all(e.start < s.time for e in seen)
            assert s.current.end is not None and s.current.end <= s.time
            assert not s.current.is_llm_event
            assert s.current.id not in {c.id for c in s.context}
            # How to Assist ground truth from the conversation and its annotation
            assert s.reference_queries == (f.conversations[eid]["user_queries"][0],)
            assert s.intention == f.expected_intentions[eid]
            assert s.intention == by_user[user][eid].intention


def test_lifetrace_positive_context_within_window(lt):
    _, events = lt
    for w in (30.0, 600.0):
        samples = build_samples(events, SampleConfig(window_seconds=w))
        for s in samples:
            lo = s.time - timedelta(seconds=w)
            for c in s.context:
                assert c.user == s.user
                assert (c.end or c.start) >= lo and c.start < s.current.start
    small = build_samples(events, SampleConfig(window_seconds=30))
    large = build_samples(events, SampleConfig(window_seconds=600))
    assert sum(len(s.context) for s in large) > sum(len(s.context) for s in small)


@pytest.mark.parametrize("gap", [120.0, 600.0])
def test_lifetrace_hard_negatives(lt, gap):
    fx, events = lt
    samples = build_samples(events, SampleConfig(gap_seconds=gap))
    for user, f in fx.items():
        llm = set(f.llm_event_ids)
        starts = _llm_starts(f)
        neg = [s for s in samples if s.user == user and s.kind == "hard_negative"]
        assert neg
        for s in neg:
            assert s.label == 0
            assert s.event_id not in llm and s.current.id not in llm
            assert not s.current.is_llm_event
            assert s.time == f.starts[s.event_id]
            assert not any(s.time <= t < s.time + timedelta(seconds=gap) for t in starts), s.id
            assert s.current.duration is not None and s.current.duration >= 3
            assert s.current.id not in f.short_event_ids
            assert len(s.current.screenshots) >= 1
            assert s.current.start < s.time
            assert all(c.start < s.time and c.user == user for c in s.context)
            assert s.reference_queries == () and s.intention is None


@pytest.mark.parametrize("ratio, expected", [(1.0, 8), (0.5, 4), (0.25, 2)])
def test_negatives_per_positive(lt, ratio, expected):
    fx, events = lt
    samples = build_samples(events, SampleConfig(negatives_per_positive=ratio))
    for user in fx:
        kinds = Counter(s.kind for s in samples if s.user == user)
        assert kinds["positive"] == 8
        assert kinds["hard_negative"] == expected


def test_negatives_capped_by_candidates(lt):
    fx, events = lt
    many = build_samples(events, SampleConfig(negatives_per_positive=100))
    one = build_samples(events, SampleConfig(negatives_per_positive=1))
    for user in fx:
        n_many = {s.event_id for s in many if s.user == user and s.label == 0}
        n_one = {s.event_id for s in one if s.user == user and s.label == 0}
        assert n_one <= n_many
        assert len(n_many) < 100 * 8  # capped at the candidates, no duplicates
        assert len([s for s in many if s.user == user and s.label == 0]) == len(n_many)


def test_lifetrace_split_and_determinism(lt):
    _, events = lt
    cfg = SampleConfig(train_fraction=0.5, seed=11)
    a = build_samples(events, cfg)
    assert a == build_samples(list(reversed(events)), cfg)  # input order does not matter
    _check_split(a, 0.5)
    positives = {s.id for s in a if s.label == 1}
    for seed in range(5):
        other = build_samples(events, replace(cfg, seed=seed))
        assert {s.id for s in other if s.label == 1} == positives  # the seed only moves negatives


def test_lifetrace_per_user_isolation(lt):
    fx, events = lt
    both = build_samples(events)
    for user in fx:
        mine = [s for s in both if s.user == user]
        for s in mine:
            assert s.id.startswith(f"{user}:")
            assert s.current.user == user
            assert all(c.user == user for c in s.context)
        # the other user's log changes nothing
        alone = build_samples([e for e in events if e.user == user])
        assert alone == mine


def test_no_ground_truth_is_data_error(tmp_path):
    f = make_participant(tmp_path, "P09", variant="2025-10")
    events = load_events(f.path)
    assert events and all(e.is_llm_event is None and e.needs_help is None for e in events)
    with pytest.raises(DataError) as ei:
        build_samples(events)
    assert "P09" in str(ei.value) and "ground truth" in str(ei.value)


def test_partially_labelled_without_llm_flags_is_data_error():
    t0 = datetime(2024, 6, 3, 9)
    evs = [
        Event(
            id=f"s:{i}",
            user="s",
            start=t0 + timedelta(seconds=10 * i),
            end=None,
            summary="x",
            needs_help=(True if i == 0 else None),
        )
        for i in range(3)
    ]
    with pytest.raises(DataError, match="ground truth"):
        build_samples(evs)


# --------------------------------------------------------------------------- synthetic: ties and LLM flags

T0 = datetime(2025, 3, 3, 9, 0, 0)
EDITOR = ("Editor", "main.py - Code")
TERM = ("Terminal", "zsh - Terminal")
MUSIC = ("Music", "Spotify Premium")
CHAT = ("ChatGPT", "ChatGPT")


def _ev(
    i: int, at: float, app: tuple[str, str], *, llm: bool = False, conv: bool = True, dur: float = 60, user: str = "U"
) -> Event:
    st = T0 + timedelta(seconds=at)
    return Event(
        id=str(i),
        user=user,
        start=st,
        end=st + timedelta(seconds=dur),
        app_name=app[0],
        window_title=app[1],
        screenshots=(Screenshot(i, st, app[0], app[1], f"screen_0_{i}.png"),),
        is_llm_event=llm,
        conversation=Conversation((f"question {i}?",)) if (llm and conv) else None,
    )


def _tie_log() -> tuple[list[Event], set[str], set[str]]:
    """Two positives with the Editor as current state; four equally hard
    candidates (Editor before them) and several easy ones."""
    evs = [_ev(1, 0, EDITOR), _ev(2, 60, CHAT, llm=True), _ev(3, 120, TERM)]
    at = 1000.0
    for k, app in enumerate([EDITOR, TERM, EDITOR, MUSIC, EDITOR, TERM, EDITOR, MUSIC, TERM, MUSIC, TERM]):
        evs.append(_ev(10 + k, at, app))
        at += 60
    evs += [_ev(40, 3000, EDITOR), _ev(41, 3060, CHAT, llm=True), _ev(42, 3120, MUSIC)]
    hard = {str(10 + k + 1) for k, app in enumerate(evs[3:14]) if app.app_name == "Editor"}
    positives = {"2", "41"}
    return evs, hard, positives


def test_seed_changes_choice_only_among_ties():
    evs, hard, positives = _tie_log()
    assert len(hard) == 4
    chosen = set()
    for seed in range(12):
        s = build_samples(evs, SampleConfig(negatives_per_positive=1, seed=seed))
        assert {x.event_id for x in s if x.label == 1} == positives
        neg = frozenset(x.event_id for x in s if x.label == 0)
        assert len(neg) == 2 and neg <= hard, (seed, neg)  # always the hardest ones
        assert s == build_samples(evs, SampleConfig(negatives_per_positive=1, seed=seed))
        chosen.add(neg)
    assert len(chosen) > 1, "the seed never changed the choice among equally hard candidates"
    # with room for more, all the hard ones come first, whatever the seed
    for seed in range(4):
        s = build_samples(evs, SampleConfig(negatives_per_positive=3, seed=seed))
        neg = {x.event_id for x in s if x.label == 0}
        assert len(neg) == 6 and hard <= neg


def test_gap_excludes_moments_just_before_llm_event():
    evs, _, _ = _tie_log()
    s = build_samples(evs, SampleConfig(negatives_per_positive=100))
    neg_times = [x.time for x in s if x.label == 0]
    llm = [e.start for e in evs if e.is_llm_event]
    assert neg_times
    assert not any(t <= u < t + timedelta(seconds=120) for t in neg_times for u in llm)
    assert "40" not in {x.event_id for x in s}  # 60 s before the second LLM event


def test_llm_event_without_conversation_is_never_a_negative():
    """An LLM-use event whose conversation was not recorded is still an LLM moment:
    it is not a negative, the moment before it is not one, nor is it a current state."""
    evs = [
        _ev(1, 0, EDITOR),
        _ev(2, 60, CHAT, llm=True),
        _ev(3, 120, MUSIC),
        _ev(4, 1000, EDITOR),
        _ev(5, 1060, CHAT, llm=True, conv=False),
        _ev(6, 1120, MUSIC),
        _ev(7, 1180, TERM),
        _ev(8, 2000, MUSIC),
        _ev(9, 2060, EDITOR),
        _ev(10, 2120, TERM),
    ]
    s = build_samples(evs, SampleConfig(negatives_per_positive=100))
    assert {x.event_id for x in s if x.label == 1} == {"2"}
    neg = [x for x in s if x.label == 0]
    assert neg
    assert all(x.event_id != "5" and x.current.id != "5" for x in neg)
    assert "4" not in {x.event_id for x in neg}  # 60 s before the LLM event 5


def test_follow_up_llm_event_is_not_a_second_positive():
    evs = [
        _ev(1, 0, EDITOR),
        _ev(2, 60, CHAT, llm=True),
        _ev(3, 120, CHAT, llm=True),
        _ev(4, 180, TERM),
        _ev(5, 2000, MUSIC),
        _ev(6, 2060, TERM),
    ]
    s = build_samples(evs)
    assert {x.event_id for x in s if x.label == 1} == {"2"}
    assert all(x.current.id not in {"2", "3"} for x in s)


def test_short_or_screenless_current_never_used():
    evs = [_ev(1, 0, EDITOR), _ev(2, 60, TERM, dur=2), _ev(3, 62, CHAT, llm=True)]
    evs += [
        _ev(4, 1000, MUSIC),
        replace(_ev(5, 1060, EDITOR), screenshots=()),
        _ev(6, 1120, TERM),
        _ev(7, 2000, MUSIC),
        _ev(8, 2060, TERM),
    ]
    s = build_samples(evs, SampleConfig(negatives_per_positive=100))
    for x in s:
        assert x.current.duration >= 3 and x.current.screenshots, x.id
    # a 2 s flicker before the LLM event is skipped: the current state is the real activity before it
    pos = [x for x in s if x.label == 1]
    assert [(x.event_id, x.current.id) for x in pos] == [("3", "1")]
    assert all(c.id != "2" for x in s for c in x.context)


def test_user_without_positives_gives_no_samples():
    evs = [_ev(1, 0, EDITOR), _ev(2, 60, TERM), _ev(3, 120, MUSIC)]
    assert build_samples(evs) == []
