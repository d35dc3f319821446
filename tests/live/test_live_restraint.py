"""Live offers after issue 21: a minimum gap between offers, one offer per app session
unless the user accepted it, the app in front named at decision time, a Yes without a
query shown as a generic offer, and no decisions once the watched log stops growing."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

from test_live import Writer, _heartbeat, _opts

from proagent.live import FeedbackStore, LiveAgent, ReplayClock, Restraint, RestraintConfig, ScriptedDecider
from proagent.live._run import run_watch
from proagent.live._sources import Moment
from proagent.records import Event, Prediction, Screenshot

T0 = datetime(2026, 3, 2, 10, 0)


def _ev(app: str, start: datetime, eid: str, seconds: float = 30.0) -> Event:
    shot = Screenshot(
        id=int(eid),
        time=start + timedelta(seconds=1),
        app_name=app,
        window_title=f"{app} window",
        file_name="x.png",
        ocr_text=f"{app} screen text",
    )
    return Event(
        id=eid,
        user="u",
        start=start,
        end=start + timedelta(seconds=seconds),
        app_name=app,
        window_title=f"{app} window",
        screenshots=(shot,),
    )


def _day(apps: list[tuple[str, float]]) -> list[Event]:
    """Consecutive events (app, seconds), one after the other from T0."""
    out, t = [], T0
    for i, (app, secs) in enumerate(apps, 1):
        out.append(_ev(app, t, str(i), secs))
        t += timedelta(seconds=secs)
    return out


def _moments(events: list[Event]) -> list[Moment]:
    return [Moment(e.start, "u", "event", tuple(events[:i]), e, time.perf_counter()) for i, e in enumerate(events) if i]


def _agent(tmp_path: Path, config: RestraintConfig, how=None, notifiers=()):  # noqa: ANN001, ANN202
    store = FeedbackStore(tmp_path)
    return LiveAgent(
        tmp_path,
        ScriptedDecider(yes={str(i) for i in range(1, 100)}),
        how=how,
        notifiers=list(notifiers),
        restraint=Restraint(config, folder=tmp_path),
        clock=ReplayClock(0),
        feedback=store,
    ), store


def test_min_gap_and_one_offer_per_app_session(tmp_path: Path) -> None:
    # xterm 4 x 5 min (one app session), then Chromium; every moment is a Yes
    events = _day([("xterm", 300)] * 4 + [("chromium", 300)] * 3)
    agent, _ = _agent(tmp_path, RestraintConfig(max_per_hour=100, min_gap_seconds=240))
    out = [agent.decide(m) for m in _moments(events)]
    offers = [d for d in out if d.outcome == "offer"]
    assert [d.sample_id.split(":")[1] for d in offers] == ["2", "5"]  # one in the xterm session, one in Chromium's
    assert all((b.moment - a.moment).total_seconds() >= 240 for a, b in zip(offers, offers[1:]))
    held = {d.sample_id.split(":")[1]: d.reason for d in out if d.outcome == "held"}
    assert held == {"3": "app_session", "4": "app_session", "6": "app_session", "7": "app_session"}


def test_min_gap_holds_offers_closer_than_the_gap(tmp_path: Path) -> None:
    events = _day([("xterm", 60), ("chromium", 60), ("mail", 60), ("editor", 600), ("xterm", 60)])
    agent, _ = _agent(tmp_path, RestraintConfig(max_per_hour=100, min_gap_seconds=300))
    out = [agent.decide(m) for m in _moments(events)]
    assert [(d.outcome, d.reason) for d in out] == [
        ("offer", ""),
        ("held", "min_gap"),
        ("held", "min_gap"),
        ("offer", ""),
    ]


def test_an_accepted_offer_allows_another_in_the_same_session(tmp_path: Path) -> None:
    r = Restraint(RestraintConfig(max_per_hour=100, min_gap_seconds=0))
    s = ("xterm", T0)
    r.offered(T0, s)
    assert r.after(T0 + timedelta(minutes=1), s) == "app_session"
    assert r.after(T0 + timedelta(minutes=1), ("chromium", T0 + timedelta(minutes=1))) is None
    r.responded("accepted", T0 + timedelta(minutes=1))
    assert r.after(T0 + timedelta(minutes=2), s) is None
    r = Restraint(RestraintConfig(min_gap_seconds=600))
    r.offered(T0)
    assert r.after(T0 + timedelta(minutes=9, seconds=59)) == "min_gap" and r.after(T0 + timedelta(minutes=10)) is None


def test_the_offer_names_the_app_in_front_and_a_query_less_yes_is_a_generic_offer(tmp_path: Path) -> None:
    events = _day([("xterm", 120), ("chromium", 120)])
    shown = []

    class Show:
        name = "test"

        def show(self, offer):  # noqa: ANN001, ANN202
            shown.append(offer)

        def close(self):  # noqa: ANN202
            pass

    no_query = lambda sample: Prediction(sample_id=sample.id, needs_help=None, parse_method="unparsed", raw="...")  # noqa: E731
    agent, store = _agent(
        tmp_path, RestraintConfig(max_per_hour=100, min_gap_seconds=0), how=no_query, notifiers=[Show()]
    )
    d = agent.decide(_moments(events)[0])  # the user just switched from xterm to Chromium
    assert d.outcome == "offer" and d.reason == "no_query"
    assert shown and "chromium" in shown[0].text and "xterm" not in shown[0].text and shown[0].app_name == "chromium"
    assert store.decisions()[-1]["reason"] == "no_query"


def test_no_decisions_after_the_watched_log_stops_growing(tmp_path: Path) -> None:
    cap = tmp_path / "c"
    w = Writer(cap, 2, gap=0.0)
    w.run()
    stop = threading.Event()
    beat = _heartbeat(cap, w.ids[-1], stop)
    times: list[float] = []
    stopped_at: list[float] = []

    def halt() -> None:  # capture stops after 1.2 s
        time.sleep(1.2)
        stop.set()
        beat.join(5)
        stopped_at.append(time.monotonic())

    th = threading.Thread(target=halt, daemon=True)
    th.start()
    res = run_watch(
        cap,
        tmp_path / "live",
        ScriptedDecider(set()),
        _opts(every_seconds=0.2),
        poll_seconds=0.02,
        duration=3.0,
        on_decision=lambda d: times.append(time.monotonic()),
    )
    th.join(5)
    assert res.decisions and all(d.trigger == "tick" for d in res.decisions)
    assert max(times) <= stopped_at[0] + 0.2 + 0.15, max(times) - stopped_at[0]  # one tick interval at most
