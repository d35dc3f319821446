"""Issue 24's live UX: a Yes whose How answer is slow is shown at once, naming the app, and its
query is filled in when the answer comes; a fast answer still makes one offer with its query."""

from __future__ import annotations

import io
import threading
import time
from pathlib import Path

import pytest
from test_live_restraint import _day, _moments

from proagent.live import FeedbackStore, LiveAgent, ReplayClock, Restraint, RestraintConfig, ScriptedDecider
from proagent.live._notify import TerminalNotifier
from proagent.records import Prediction

ANSWER = Prediction(
    sample_id="s",
    needs_help=True,
    intention="Knowledge Q&A",
    query="How do I split a string in Ruby?",
    parse_method="strict",
    raw="...",
)


class Recorder:
    """A notifier that records when each offer was shown and updated, and what it read."""

    name = "rec"

    def __init__(self) -> None:
        self.events: list[tuple[str, float, int, str, str | None]] = []

    def show(self, offer) -> None:  # noqa: ANN001
        self.events.append(("show", time.perf_counter(), offer.id, offer.text, offer.query))

    def update(self, offer) -> None:  # noqa: ANN001
        self.events.append(("update", time.perf_counter(), offer.id, offer.text, offer.query))

    def close(self) -> None:
        pass


class SlowHow:
    """A How model that answers ``pred`` after ``seconds``; records when it returned."""

    def __init__(self, seconds: float, pred: Prediction = ANSWER) -> None:
        self.seconds, self.pred, self.returned = seconds, pred, None
        self.started = threading.Event()

    def __call__(self, sample):  # noqa: ANN001, ANN204
        self.started.set()
        time.sleep(self.seconds)
        self.returned = time.perf_counter()
        return self.pred


def _agent(tmp_path: Path, how, wait, notifiers):  # noqa: ANN001, ANN202
    store = FeedbackStore(tmp_path)
    agent = LiveAgent(
        tmp_path,
        ScriptedDecider(yes={str(i) for i in range(1, 100)}),
        how=how,
        notifiers=notifiers,
        restraint=Restraint(RestraintConfig(max_per_hour=100, min_gap_seconds=0), folder=tmp_path),
        clock=ReplayClock(0),
        feedback=store,
        offer_wait_seconds=wait,
    )
    return agent, store


def test_slow_answer_the_offer_is_shown_first_and_its_query_filled_in(tmp_path: Path) -> None:
    rec, out = Recorder(), io.StringIO()
    how = SlowHow(1.0)
    terminal = TerminalNotifier(FeedbackStore(tmp_path / "terminal"), lambda: None, out=out)
    agent, store = _agent(tmp_path, how, 0.05, [rec, terminal])
    m = _moments(_day([("xterm", 60), ("chromium", 60)]))[0]
    d = agent.decide(m)
    (kind1, t_show, id1, text1, q1), (kind2, t_upd, id2, text2, q2) = rec.events
    assert (kind1, kind2) == ("show", "update") and id1 == id2 == d.offer_id
    # shown before the answer came, naming the app in front; then the answer's query
    assert t_show < how.returned <= t_upd
    assert "chromium" in text1 and q1 is None
    assert q2 == ANSWER.query and ANSWER.query in text2
    assert d.outcome == "offer" and d.reason == "" and d.notification == text2
    assert d.offer_seconds is not None and d.how_seconds is not None and d.offer_seconds < 0.5 <= d.how_seconds
    row = store.offers()[0]
    assert (row["query"], row["intention"], row["text"]) == (ANSWER.query, ANSWER.intention, text2)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"offer {d.offer_id} ") and "chromium" in lines[0]
    assert lines[1].startswith(f"offer {d.offer_id} [Knowledge Q&A]: ") and ANSWER.query in lines[1]


def test_fast_answer_one_offer_with_its_query(tmp_path: Path) -> None:
    rec = Recorder()
    agent, store = _agent(tmp_path, SlowHow(0.0), 5.0, [rec])
    d = agent.decide(_moments(_day([("xterm", 60), ("chromium", 60)]))[0])
    assert [e[0] for e in rec.events] == ["show"] and rec.events[0][4] == ANSWER.query
    assert d.outcome == "offer" and store.offers()[0]["query"] == ANSWER.query


def test_wait_none_waits_for_the_answer(tmp_path: Path) -> None:
    rec = Recorder()
    how = SlowHow(0.3)
    agent, _ = _agent(tmp_path, how, None, [rec])
    d = agent.decide(_moments(_day([("xterm", 60), ("chromium", 60)]))[0])
    assert [e[0] for e in rec.events] == ["show"] and rec.events[0][1] >= how.returned
    assert d.offer_seconds >= d.how_seconds


@pytest.mark.parametrize(("seconds", "outcome", "shown"), [(0.6, "offer", 1), (0.0, "no_offer", 0)])
def test_how_says_no(tmp_path: Path, seconds: float, outcome: str, shown: int) -> None:
    """An answer of No after the offer was shown leaves it shown (generic, reason how_said_no);
    a No within the wait makes no offer, as before."""
    rec = Recorder()
    no = Prediction(sample_id="s", needs_help=False, parse_method="strict", raw="Need help: No")
    agent, store = _agent(tmp_path, SlowHow(seconds, no), 0.05, [rec])
    d = agent.decide(_moments(_day([("xterm", 60), ("chromium", 60)]))[0])
    assert (d.outcome, d.reason) == (outcome, "how_said_no")
    assert len(rec.events) == shown and len(store.offers()) == shown
    if shown:
        assert store.offers()[0]["query"] is None and "chromium" in store.offers()[0]["text"]


def test_a_failing_how_call_raises_in_the_loop(tmp_path: Path) -> None:
    def broken(sample):  # noqa: ANN001, ANN202
        time.sleep(0.2)
        raise RuntimeError("model gone")

    agent, _ = _agent(tmp_path, broken, 0.05, [Recorder()])
    with pytest.raises(RuntimeError, match="model gone"):
        agent.decide(_moments(_day([("xterm", 60), ("chromium", 60)]))[0])
