"""Sparse questions (issue 33 item 2, `proagent live --ask-rate N`): at a quiet moment the learner is
unsure of, the page or the terminal asks "Would help have been useful just now?"; the answer is stored
in feedback.db, learned before the next decision and by `train when --feedback`; the day's budget holds
across restarts; off by default nothing is asked."""

from __future__ import annotations

import io
import json
import sqlite3
import time
import urllib.error
import urllib.request
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from test_live_implicit import DAY, _ev, _learning, _moments  # noqa: F401
from test_live_learning import OPEN, decider_dir  # noqa: F401  (the module-scoped decider fixture)

from proagent.bench.samples import SampleConfig
from proagent.live import (
    FeedbackStore,
    LiveAgent,
    OfferPage,
    PageNotifier,
    ReplayClock,
    Restraint,
    RestraintConfig,
    TerminalNotifier,
    feedback_samples,
    label_summary,
    moment_sample,
    reset_learning,
)
from proagent.live._ask import ASK_UNCERTAINTY, uncertainty
from proagent.live._notify import ANSWER_HINT


class Fixed:
    """A When decider that is always equally unsure: P(help) 0.3 against the threshold 1/3 (costs 1:2)."""

    threshold = 1 / 3

    def __call__(self, sample) -> float:  # noqa: ANN001
        return 0.3


class Person:
    """Answers every question at once (``answer``), or never (``None``); shows no offers."""

    name = "person"

    def __init__(self, store: FeedbackStore, answer: str | None = "yes") -> None:
        self.store, self.answer, self.asked = store, answer, []

    def show(self, offer) -> None:  # noqa: ANN001
        pass

    def ask(self, q) -> None:  # noqa: ANN001
        self.asked.append(q)
        if self.answer is not None:
            assert self.store.answer_question(q.id, self.answer, q.asked_at, "test")

    def close(self) -> None:
        pass


def _agent(
    folder: Path,
    when,
    store: FeedbackStore,
    notifiers,
    rate: int,
    *,
    implicit: bool = False,  # noqa: ANN001
    restraint: RestraintConfig = OPEN,
) -> tuple[LiveAgent, ReplayClock]:
    clock = ReplayClock(0)
    return LiveAgent(
        folder,
        when,
        notifiers=notifiers,
        clock=clock,
        feedback=store,
        restraint=Restraint(restraint),
        implicit=implicit,
        ask_rate=rate,
    ), clock


def _questions(folder: Path) -> list[tuple]:
    conn = sqlite3.connect(folder / "feedback.db")
    try:
        return conn.execute(
            "SELECT q.id, q.sample_id, q.asked_at, q.p_help, q.risk, a.answer, a.source FROM questions q "
            "LEFT JOIN question_answers a ON a.question_id = q.id ORDER BY q.id"
        ).fetchall()
    finally:
        conn.close()


def test_uncertainty_is_the_decisions_expected_cost_share() -> None:
    t = 1 / 3
    assert uncertainty(t, t) == pytest.approx(1.0)
    assert uncertainty(0.0, t) == 0.0 and uncertainty(1.0, t) == 0.0
    assert uncertainty(0.25, t) == pytest.approx(0.75) and uncertainty(0.5, t) == pytest.approx(0.75)
    assert uncertainty(0.2, t) < ASK_UNCERTAINTY < uncertainty(0.3, t)
    assert uncertainty(0.5, 0.0) == 0.0 and uncertainty(0.5, 1.0) == 0.0


def _post(url: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(
        url, method="POST", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


class PagePerson(Person):
    """Answers each question through the local page's /respond route, as the page's Yes button does."""

    def __init__(self, store: FeedbackStore, page: OfferPage, answer: str) -> None:
        super().__init__(store, answer)
        self.page = page

    def ask(self, q) -> None:  # noqa: ANN001
        self.asked.append(q)
        base = f"http://127.0.0.1:{self.page.port}"
        got = json.loads(urllib.request.urlopen(f"{base}/offers?token={self.page.token}", timeout=5).read())
        assert [x["id"] for x in got["questions"]] == [q.id] and got["questions"][0]["answer"] is None
        assert _post(f"{base}/respond?token={self.page.token}", {"question": q.id, "answer": self.answer}) == (
            200,
            {"ok": True},
        )


@pytest.mark.parametrize("answer", ["yes", "no"])
def test_an_uncertain_quiet_moment_is_asked_answered_on_the_page_and_changes_the_next_decision(
    decider_dir: Path,  # noqa: F811
    tmp_path: Path,
    answer: str,
) -> None:
    fixed = _run_day(tmp_path / "pop", _learning(decider_dir, 1.0), rate=0)
    decided = [d for d in fixed if d.p_help is not None]
    threshold = max(d.p_help for d in decided) + 1e-3  # every moment quiet; the highest is the most uncertain
    base = _run_day(tmp_path / "base", _learning(decider_dir, threshold), rate=0)
    assert all(d.outcome == "no" for d in base if d.p_help is not None) and not _questions(tmp_path / "base")

    store = FeedbackStore(tmp_path / "ask")
    page = OfferPage(store, datetime.now)
    try:
        person = PagePerson(store, page, answer)
        when = _learning(decider_dir, threshold)
        agent, clock = _agent(tmp_path / "ask", when, store, [PageNotifier(page), person], rate=1)
        live = agent.replay(_moments(DAY), clock)
    finally:
        page.close()
        store.close()
    (q,) = _questions(tmp_path / "ask")  # at most one a day
    i = next(k for k, d in enumerate(live) if d.sample_id == q[1])
    assert uncertainty(live[i].p_help, threshold) >= ASK_UNCERTAINTY and live[i].outcome == "no"
    assert q[5] == answer and q[6] == "page" and q[3] == pytest.approx(live[i].p_help)
    assert len(person.asked) == 1
    # learned before the next decision: P(help) moves the answer's way from there on, not before
    assert [d.p_help for d in live[: i + 1]] == pytest.approx([d.p_help for d in base[: i + 1]])
    nxt = next(k for k in range(i + 1, len(live)) if live[k].p_help is not None)
    if answer == "yes":
        assert live[nxt].p_help > base[nxt].p_help + 1e-6
    else:
        assert live[nxt].p_help < base[nxt].p_help - 1e-6
    m = json.loads((tmp_path / "ask" / "learning" / "manifest.json").read_text())
    assert m["last_answer_id"] == 1 and [r["response"] for r in m["learned_from"]] == [f"question_{answer}"]
    assert m["learned_from"][0]["question_id"] == q[0]
    # train when --feedback learns it too; the summary counts it; reset-learning forgets it
    (s,) = feedback_samples(tmp_path / "ask")
    assert s.id == f"question:{answer}:{q[1]}" and s.label == (answer == "yes")
    lab = label_summary(tmp_path / "ask")
    assert lab["asked"] == 1 and lab[f"asked_{answer}"] == 1
    assert reset_learning(tmp_path / "ask") == 1
    m = json.loads((tmp_path / "ask" / "learning" / "manifest.json").read_text())
    assert m["reset_after_answer_id"] == 1 and m["learned_from"] == []


def _run_day(folder: Path, when, rate: int, notifiers=None, events=DAY):  # noqa: ANN001
    store = FeedbackStore(folder)
    agent, clock = _agent(folder, when, store, notifiers or [Person(store)], rate)
    out = agent.replay(_moments(events), clock)
    store.close()
    return out


def test_the_budget_holds_per_day_and_across_a_restart(tmp_path: Path) -> None:
    store = FeedbackStore(tmp_path)
    person = Person(store, "no")
    agent, clock = _agent(tmp_path, Fixed(), store, [person], rate=2)
    agent.replay(_moments(DAY[:4]), clock)
    store.close()
    assert len(_questions(tmp_path)) == 2  # every moment qualifies (P 0.3 at threshold 1/3): the budget stops it
    store = FeedbackStore(tmp_path)  # a restart on the same day asks nothing more
    person = Person(store, "no")
    agent, clock = _agent(tmp_path, Fixed(), store, [person], rate=2)
    agent.replay(_moments(DAY)[4:], clock)
    assert person.asked == [] and len(_questions(tmp_path)) == 2
    tomorrow = [_ev(10 + i, e.app_name, e.window_title, 86400 + 60 * i) for i, e in enumerate(DAY)]
    agent.replay(_moments(tomorrow), clock)
    store.close()
    qs = _questions(tmp_path)
    assert len(person.asked) == 2 and len(qs) == 4
    by_day: dict[str, int] = {}
    for q in qs:
        by_day[q[2][:10]] = by_day.get(q[2][:10], 0) + 1
    assert by_day == {"2026-12-03": 2, "2026-12-04": 2}


def test_an_open_question_or_a_recent_offer_holds_the_next_one(tmp_path: Path) -> None:
    store = FeedbackStore(tmp_path / "open")
    person = Person(store, None)  # never answers
    agent, clock = _agent(tmp_path / "open", Fixed(), store, [person], rate=5)
    agent.replay(_moments(DAY), clock)
    store.close()
    assert len(person.asked) == 1  # the day spans 5 minutes, under the 10 minutes a question stays open
    gap = RestraintConfig(
        max_per_hour=10_000, min_gap_seconds=600, one_per_app_session=False, cooldown_seconds=0, not_now_seconds=0
    )
    store = FeedbackStore(tmp_path / "gap")
    person = Person(store, "no")
    agent, clock = _agent(tmp_path / "gap", Fixed(), store, [person], rate=5, restraint=gap)
    agent.replay(_moments(DAY), clock)
    store.close()
    assert len(person.asked) == 1  # answered at once, but the next comes only after --min-gap


def test_off_by_default_and_without_a_channel_nothing_is_asked(tmp_path: Path) -> None:
    store = FeedbackStore(tmp_path / "off")
    person = Person(store)
    clock = ReplayClock(0)
    agent = LiveAgent(
        tmp_path / "off", Fixed(), notifiers=[person], clock=clock, feedback=store, restraint=Restraint(OPEN)
    )
    agent.replay(_moments(DAY), clock)
    store.close()
    assert person.asked == [] and _questions(tmp_path / "off") == []
    assert label_summary(tmp_path / "off")["asked"] == 0

    class Mute(Person):
        ask = None  # a notifier that cannot show a question (desktop, none)

    store = FeedbackStore(tmp_path / "mute")
    agent, clock = _agent(tmp_path / "mute", Fixed(), store, [Mute(store)], rate=3)
    assert agent.asker is None
    agent.replay(_moments(DAY), clock)
    store.close()
    assert _questions(tmp_path / "mute") == []


def test_no_question_right_after_a_dismissal_nor_at_a_sure_moment(tmp_path: Path) -> None:
    store = FeedbackStore(tmp_path)
    from proagent.live import Asker

    s = moment_sample(DAY[:2], DAY[1].start, SampleConfig(), new_event=DAY[1])
    a = Asker(store, 3, lambda: DAY[1].start)
    assert a.consider(s, p=0.3, threshold=1 / 3, outcome="held", reason="cooldown", app_name="x") is None
    assert a.consider(s, p=0.3, threshold=1 / 3, outcome="offer", reason="", app_name="x") is None
    assert a.consider(s, p=0.05, threshold=1 / 3, outcome="no", reason="", app_name="x") is None
    assert a.consider(s, p=0.9, threshold=1 / 3, outcome="held", reason="max_per_hour", app_name="x") is None
    q = a.consider(s, p=0.4, threshold=1 / 3, outcome="held", reason="max_per_hour", app_name="x")
    assert q is not None and q.p_help == 0.4 and a.asked_today() == 1
    store.close()


def test_the_terminal_asks_and_reads_q_n_yes_or_no(tmp_path: Path) -> None:
    store = FeedbackStore(tmp_path)
    s = moment_sample(DAY[:2], DAY[1].start, SampleConfig(), new_event=DAY[1])
    q = store.add_question(s, asked_at=DAY[1].start, p_help=0.3, threshold=1 / 3, risk=0.9, app_name="xterm")
    out = io.StringIO()
    term = TerminalNotifier(
        store,
        datetime.now,
        out=out,
        answers=io.StringIO(f"q {q.id} yes\nq 99 no\nq {q.id} maybe\nn {q.id}\nq {q.id} n\n"),
    )
    term._thread.join(5)
    term.ask(q)
    lines = out.getvalue().splitlines()
    assert lines[:2] == [f"question {q.id}: yes", "question 99: no such question"]
    assert (
        f"offer {q.id}: no such offer" in lines and f"question {q.id}: no" in lines
    )  # `n N` stays "not now" for offers
    assert lines[2] == f"not understood: 'q {q.id} maybe'; {ANSWER_HINT}"  # a typo is said, not dropped
    assert lines[-1] == (
        f"question {q.id} at 10:01:00 in xterm: Would help have been useful just now?   "
        f"(q {q.id} y = yes, q {q.id} n = no)"
    )
    assert [(a[1], a[2]) for a in store.answers_since(0)] == [(q.id, "yes"), (q.id, "no")]  # the latest counts
    assert store.questions(open_only=True) == []
    store.close()


def test_the_page_lists_open_questions_and_refuses_bad_answers(tmp_path: Path) -> None:
    store = FeedbackStore(tmp_path)
    s = moment_sample(DAY[:2], DAY[1].start, SampleConfig(), new_event=DAY[1])
    q = store.add_question(s, asked_at=DAY[1].start, p_help=0.3, threshold=1 / 3, risk=0.9, app_name="xterm")
    page = OfferPage(store, datetime.now)
    try:
        base = f"http://127.0.0.1:{page.port}"
        for body in (
            {"question": q.id, "answer": "maybe"},
            {"question": 99, "answer": "yes"},
            {"question": "x"},
            {"question": q.id},
        ):
            code, got = _post(f"{base}/respond?token={page.token}", body)
            assert code == 400, (body, got)
        assert _post(f"{base}/respond?token=wrong", {"question": q.id, "answer": "yes"})[0] == 403
        got = json.loads(urllib.request.urlopen(f"{base}/offers?token={page.token}", timeout=5).read())
        assert got["offers"] == [] and got["questions"][0]["id"] == q.id
        assert got["questions"][0]["text"].startswith("Would help have been useful just now?")
        assert _post(f"{base}/respond?token={page.token}", {"question": q.id, "answer": "no"}) == (200, {"ok": True})
        got = json.loads(urllib.request.urlopen(f"{base}/offers?token={page.token}", timeout=5).read())
        assert got["questions"] == []
    finally:
        page.close()
    assert [(a[2]) for a in store.answers_since(0)] == ["no"]
    store.close()


def test_the_pages_yes_button_in_chromium_answers_the_question(tmp_path: Path) -> None:
    from system import require_binary
    from test_live_page import CHROMIUM_ARGS

    chromium = require_binary("chromium")["chromium"]
    sync_api = pytest.importorskip("playwright.sync_api")
    store = FeedbackStore(tmp_path)
    s = moment_sample(DAY[:2], DAY[1].start, SampleConfig(), new_event=DAY[1])
    q = store.add_question(s, asked_at=DAY[1].start, p_help=0.3, threshold=1 / 3, risk=0.9, app_name="xterm")
    page = OfferPage(store, datetime.now)
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            try:
                tab = browser.new_page()
                tab.goto(page.url)
                tab.wait_for_selector(f"#question-{q.id} button.answer-yes")
                assert "Would help have been useful just now?" in tab.inner_text(f"#question-{q.id}")
                tab.click(f"#question-{q.id} button.answer-yes")
                tab.wait_for_selector(f"#question-{q.id}", state="detached")
            finally:
                browser.close()
    finally:
        page.close()
    deadline = time.monotonic() + 5
    while not store.answers_since(0) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [(a[1], a[2]) for a in store.answers_since(0)] == [(q.id, "yes")]
    store.close()


def test_feedback_samples_reads_answered_questions_only(tmp_path: Path) -> None:
    store = FeedbackStore(tmp_path)
    made = []
    for i, e in enumerate(DAY[1:4], start=1):
        s = moment_sample(DAY[: i + 1], e.start, SampleConfig(), new_event=e)
        made.append(
            store.add_question(
                s, asked_at=e.start + timedelta(seconds=1), p_help=0.3, threshold=1 / 3, risk=0.9, app_name=e.app_name
            )
        )
    store.answer_question(made[0].id, "yes", DAY[2].start)
    store.answer_question(made[1].id, "yes", DAY[2].start)
    store.answer_question(made[1].id, "no", DAY[3].start)  # changed their mind: the latest answer counts
    store.close()
    got = {(x.id.split(":")[1], x.label) for x in feedback_samples(tmp_path)}
    assert got == {("yes", 1), ("no", 0)}


def test_the_command_records_the_rate_and_prints_the_questions_line(decider_dir: Path, tmp_path: Path) -> None:  # noqa: F811
    from click.testing import CliRunner
    from shared_data import DEV

    from proagent.cli import cli

    if DEV is None:
        pytest.skip("ProactiveBench dev sessions not present")
    args = [
        "live",
        "--replay",
        str(DEV / "writing_12.json"),
        "--decider",
        str(decider_dir),
        "--model",
        "none",
        "--speed",
        "0",
        "--notify",
        "page",
        "--out",
        str(tmp_path / "o"),
        "--min-gap",
        "0",
    ]
    r = CliRunner().invoke(cli, [*args, "--ask-rate", "2"])
    assert r.exit_code == 0, r.output
    asked = _questions(tmp_path / "o")
    assert 1 <= len(asked) <= 2  # unanswered, each holds the next for --ignore-after (10 min) of the log's time
    line = next(x for x in r.output.splitlines() if x.startswith("questions (--ask-rate 2 a day): "))
    assert line.endswith(f"{len(asked)} asked, 0 yes, 0 no, {len(asked)} unanswered")
    assert json.loads((tmp_path / "o" / "run.json").read_text())["ask_rate"] == 2
    r = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "dflt")])  # on by default: 3 a day, the first 7 days
    assert r.exit_code == 0, r.output
    assert "questions (3 a day for the first 7 days): " in r.output and 1 <= len(_questions(tmp_path / "dflt")) <= 3
    assert "ask_rate" not in json.loads((tmp_path / "dflt" / "run.json").read_text())  # earlier folders resume
    r = CliRunner().invoke(cli, [*args, "--ask-rate", "0", "--out", str(tmp_path / "off")])  # 0: never
    assert r.exit_code == 0 and "questions (" not in r.output and _questions(tmp_path / "off") == []
    assert "ask_rate" not in json.loads((tmp_path / "off" / "run.json").read_text())


def test_default_questions_stop_after_the_first_days(tmp_path: Path) -> None:
    from datetime import datetime, timedelta

    from proagent.live import ASK_DAYS, DEFAULT_ASK_RATE, Asker

    class Store:
        def __init__(self, first):  # noqa: ANN001
            self.first = first

        def first_moment(self):  # noqa: ANN202
            return self.first

    t0 = datetime(2026, 1, 5, 9, 0)
    now = [t0]
    asker = Asker(Store(t0), None, lambda: now[0])
    assert asker.daily_rate() == DEFAULT_ASK_RATE
    now[0] = t0 + timedelta(days=ASK_DAYS, minutes=1)
    assert asker.daily_rate() == 0
    assert Asker(Store(t0), 5, lambda: now[0]).daily_rate() == 5  # an explicit --ask-rate has no end
    assert Asker(Store(None), None, lambda: now[0]).daily_rate() == DEFAULT_ASK_RATE  # a new folder starts now
