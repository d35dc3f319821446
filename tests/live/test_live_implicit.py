"""Implicit labels (issue 33 item 1): a quiet moment followed by the person's own LLM use is learned
as a miss, one followed by steady work in the same app as a weak negative; both are stored in
feedback.db with their evidence, change the next decision, and reach `train when --feedback`."""

from __future__ import annotations

import json
import sqlite3
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from test_live_learning import OPEN, decider_dir  # noqa: F401  (the module-scoped decider fixture)

from proagent.agent.decider import LearnConfig, load_decider
from proagent.live import FeedbackStore, LearningWhen, LiveAgent, Moment, ReplayClock, Restraint, feedback_samples
from proagent.live._implicit import FOCUS_WEIGHT, HORIZON_SECONDS, ImplicitLabeller, label_summary, llm_use
from proagent.records import Event, Screenshot

T0 = datetime(2026, 12, 3, 10, 0, 0)


def _ev(i: int, app: str, title: str, at: float, seconds: float = 60.0) -> Event:
    start = T0 + timedelta(seconds=at)
    shot = Screenshot(id=i, time=start + timedelta(seconds=1), app_name=app, window_title=title, file_name=f"{i}.png")
    return Event(
        id=str(i),
        user="me",
        start=start,
        end=start + timedelta(seconds=seconds),
        app_name=app,
        window_title=title,
        summary=title,
        screenshots=(shot,),
    )


CODE, TERM, CHAT = "Visual Studio Code", "xterm", "Chromium"
DAY = [  # a scripted morning: edit, a failing test run, edit again, then the person opens a chat page on their own
    _ev(1, CODE, "parser.py - proj - Visual Studio Code", 0),
    _ev(2, TERM, "pytest tests/test_parser.py: 1 failed, error", 60),
    _ev(3, CODE, "parser.py - proj - Visual Studio Code", 120),
    _ev(4, CHAT, "ChatGPT - Chromium", 180),  # chatgpt page: annotate's platform detection (title)
    _ev(5, CODE, "parser.py - proj - Visual Studio Code", 240),
    _ev(6, TERM, "pytest tests/test_parser.py: 1 failed, error", 300),
]


def _moments(events: list[Event]) -> list[Moment]:
    return [
        Moment(e.start, e.user, "event", tuple(events[: i + 1]), e, time.perf_counter()) for i, e in enumerate(events)
    ]


def _run(folder: Path, when, events: list[Event], *, implicit: bool = True) -> list:  # noqa: ANN001
    store = FeedbackStore(folder)
    clock = ReplayClock(0)
    agent = LiveAgent(folder, when, clock=clock, feedback=store, restraint=Restraint(OPEN), implicit=implicit)
    out = agent.replay(_moments(events), clock)
    store.close()
    return out


def _learning(decider_dir: Path, threshold: float, method: str = "prior-shift") -> LearningWhen:  # noqa: F811
    return LearningWhen(load_decider(decider_dir), LearnConfig(method=method), threshold, (1.0, 2.0))


def test_llm_use_is_read_from_titles_and_flags() -> None:
    assert llm_use(DAY[3]).startswith("platform:ChatGPT")
    assert llm_use(DAY[0]) is None
    assert (
        llm_use(
            _ev(9, "Firefox", "notes", 0).__class__(**{**_ev(9, "Firefox", "notes", 0).__dict__, "is_llm_event": True})
        )
        == "is_llm_event"
    )


@pytest.mark.parametrize("method", ["prior-shift", "knn"])
def test_chat_after_a_quiet_moment_is_a_stored_miss_and_changes_the_next_decision(
    decider_dir: Path,  # noqa: F811
    tmp_path: Path,
    method: str,
) -> None:
    fixed = _run(tmp_path / "pop", _learning(decider_dir, 1.0, method), DAY, implicit=False)
    decided = [d for d in fixed if d.p_help is not None]
    threshold = max(d.p_help for d in decided) + 1e-3  # every moment quiet without learning
    assert all(d.outcome == "no" for d in decided)

    when = _learning(decider_dir, threshold, method)
    live = _run(tmp_path / "live", when, DAY)
    conn = sqlite3.connect(tmp_path / "live" / "feedback.db")
    rows = conn.execute("SELECT id, decision_id, sample_id, response, label, weight, evidence FROM implicit").fetchall()
    conn.close()
    missed = [r for r in rows if r[3] == "missed"]
    # the moments within 120 s before the chat page came to the front (at 10:01 and 10:02) are misses
    assert {r[2] for r in missed} == {"me:2:candidate", "me:3:candidate"}, rows
    for r in missed:
        ev = json.loads(r[6])
        assert r[4] == 1 and r[5] == 1.0 and ev["llm_event_id"] == "4" and ev["why"].startswith("platform:ChatGPT")
        assert ev["seconds_after"] <= HORIZON_SECONDS and "4" in ev["event_ids"] and r[1] is not None
    # learned before the next decision (the one at the chat page's own event row, then the one after):
    # both are decided on a higher P(help); the ones before are untouched
    chat = next(i for i, d in enumerate(live) if d.moment == DAY[3].start)
    after = chat + 1
    assert live[chat].p_help > fixed[chat].p_help + 1e-6 and live[after].p_help > fixed[after].p_help + 1e-6
    assert [d.p_help for d in live[:chat]] == pytest.approx([d.p_help for d in fixed[:chat]])
    m = json.loads((tmp_path / "live" / "learning" / "manifest.json").read_text())
    assert m["last_implicit_id"] == len(rows) and {r["response"] for r in m["learned_from"]} >= {"missed"}
    assert all("implicit_id" in r and r["event_ids"] for r in m["learned_from"])
    # the labels reach `train when --feedback` and the summary
    s = feedback_samples(tmp_path / "live")
    assert {x.id for x in s if x.label == 1} == {"implicit:missed:me:2:candidate", "implicit:missed:me:3:candidate"}
    lab = label_summary(tmp_path / "live")
    assert lab["missed"] == 2 and lab["offers"] == sum(d.outcome == "offer" for d in live)
    if method == "prior-shift":  # two misses raise the person's base rate past the threshold: the agent now speaks
        assert live[after].outcome == "offer" and live[after].p_help >= threshold


def test_steady_work_is_a_weak_negative_and_idle_or_a_switch_is_nothing(tmp_path: Path) -> None:
    store = FeedbackStore(tmp_path)
    lab = ImplicitLabeller(store)
    code = [_ev(i, CODE, "parser.py - proj - Visual Studio Code", 30 * i, 30) for i in range(1, 9)]
    from proagent.bench.samples import SampleConfig
    from proagent.live import moment_sample

    s1 = moment_sample(code[:2], code[1].start, SampleConfig(), new_event=code[1])
    lab.quiet(7, s1, code[1])
    assert lab.observe(code[4].start, code[:5]) == []  # 90 s on: not settled yet
    (qid,) = lab.observe(code[6].start, code[:7])  # 150 s on, same app all along, activity goes on
    (row,) = store.implicit_since(0)
    assert row["id"] == qid and row["response"] == "quiet_focus" and row["label"] == 0
    assert (
        row["weight"] == FOCUS_WEIGHT
        and row["decision_id"] == 7
        and row["evidence"]["event_ids"] == ["3", "4", "5", "6"]
    )
    # a switch to another app (no LLM use) labels nothing; so does an idle stop
    lab.quiet(8, s1, code[1])
    other = code[:3] + [_ev(20, TERM, "bash", 100, 30)]
    assert lab.observe(code[1].start + timedelta(seconds=150), other) == [] and not lab.pending
    lab.quiet(9, s1, code[1])
    assert lab.observe(code[1].start + timedelta(seconds=400), code[:2]) == [] and not lab.pending
    # misses only (the benchmark's offered+misses): no weak negatives are stored
    only = ImplicitLabeller(store, focus_weight=0.0)
    only.quiet(10, s1, code[1])
    assert only.observe(code[6].start, code[:7]) == [] and len(store.implicit_since(0)) == 1
    store.close()


def test_an_ignored_offer_stays_unlabelled(decider_dir: Path, tmp_path: Path) -> None:  # noqa: F811
    when = _learning(decider_dir, 0.0)  # every moment offered, nobody answers
    out = _run(tmp_path / "run", when, DAY)
    assert {d.outcome for d in out if d.p_help is not None} == {"offer"}
    store = FeedbackStore(tmp_path / "run")
    assert store.implicit_since(0) == []
    store.close()
    assert [x for x in feedback_samples(tmp_path / "run")] == []


def test_quiet_moments_awaiting_their_horizon_survive_a_restart(decider_dir: Path, tmp_path: Path) -> None:  # noqa: F811
    when = _learning(decider_dir, 1.0)  # every moment quiet
    folder = tmp_path / "run"
    store = FeedbackStore(folder)
    clock = ReplayClock(0)
    agent = LiveAgent(folder, when, clock=clock, feedback=store, restraint=Restraint(OPEN))
    agent.replay(_moments(DAY)[:3], clock)  # stopped at 10:02, before the chat page came to the front
    store.close()
    st = FeedbackStore(folder)
    waiting = st.pending()
    assert {p["sample"].id for p in waiting} >= {"me:2:candidate", "me:3:candidate"} and st.implicit_since(0) == []
    assert label_summary(folder)["pending"] == len(waiting)
    st.close()
    # a new process, a new agent: the moments left waiting are resumed and labelled by the chat page
    store = FeedbackStore(folder)
    agent = LiveAgent(folder, _learning(decider_dir, 1.0), clock=clock, feedback=store, restraint=Restraint(OPEN))
    assert {p.sample.id for p in agent.implicit.pending} == {p["sample"].id for p in waiting}
    agent.replay(_moments(DAY)[3:], clock)
    missed = {r["sample_id"] for r in store.implicit_since(0) if r["response"] == "missed"}
    assert missed == {"me:2:candidate", "me:3:candidate"}
    # labelled moments leave the waiting table in the same transaction; nothing is labelled twice
    assert not {p["sample"].id for p in store.pending()} & missed
    store.close()
    store = FeedbackStore(folder)
    LiveAgent(folder, _learning(decider_dir, 1.0), clock=clock, feedback=store, restraint=Restraint(OPEN)).replay(
        _moments(DAY)[5:], clock
    )
    assert sorted(r["sample_id"] for r in store.implicit_since(0) if r["response"] == "missed") == sorted(missed)
    store.close()


def test_without_the_waiting_table_a_restart_would_forget_them(decider_dir: Path, tmp_path: Path) -> None:  # noqa: F811
    """The control of the test above: a store that keeps no waiting moments labels nothing after the restart."""
    folder = tmp_path / "run"
    store = FeedbackStore(folder)
    clock = ReplayClock(0)
    LiveAgent(folder, _learning(decider_dir, 1.0), clock=clock, feedback=store, restraint=Restraint(OPEN)).replay(
        _moments(DAY)[:3], clock
    )
    store.close()
    conn = sqlite3.connect(folder / "feedback.db")
    conn.execute("DELETE FROM implicit_pending")
    conn.commit()
    conn.close()
    store = FeedbackStore(folder)
    LiveAgent(folder, _learning(decider_dir, 1.0), clock=clock, feedback=store, restraint=Restraint(OPEN)).replay(
        _moments(DAY)[3:], clock
    )
    assert [r for r in store.implicit_since(0) if r["response"] == "missed"] == []
    store.close()
