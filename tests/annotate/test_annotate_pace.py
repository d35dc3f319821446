"""The time left of an annotation run comes from the events that finished, on this machine now
(issue 47 item 4: "about 6 min left" while 3 model calls did not finish in 45 min), and the run
says something as it starts and while a slow event runs."""

from __future__ import annotations

import time

from proagent.annotate.pace import Pace


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_the_estimate_is_the_measured_pace_without_the_model_loading():
    c = Clock()
    p = Pace(5, clock=c)
    p.start()
    assert p.left() is None  # nothing measured yet: no figure rather than the plan's
    c.t = 300.0  # the model loaded for 4 min, then the first event took 1 min
    p.finished()
    assert p.per_event() == 300.0
    c.t = 360.0
    p.finished()
    c.t = 420.0
    p.finished()
    assert p.per_event() == 60.0  # the loading is not counted once two events are measured
    assert p.left() == 120.0  # two events at 60 s


def test_the_estimate_grows_while_an_event_outlives_the_pace():
    c = Clock()
    p = Pace(3, clock=c)
    p.start()
    c.t = 30.0
    p.finished()
    c.t = 60.0
    p.finished()
    assert p.left() == 30.0
    c.t = 60.0 + 600  # the machine got loaded: the last event has run 10 min
    assert p.left() >= 60.0  # not "0 s left": the running event counts at its own pace
    p2 = Pace(4, clock=c)
    p2.start()
    c.t = 1000.0
    p2.finished()
    c.t = 1030.0
    p2.finished()
    before = p2.left()
    c.t = 1030.0 + 900
    assert p2.left() > 10 * before  # the remaining events count at the slow event's time


def test_the_run_says_it_started_and_keeps_talking_while_an_event_runs(monkeypatch, capsys):
    from proagent.cli import annotate as cmd

    monkeypatch.setattr(cmd, "HEARTBEAT_SECONDS", 0.05)
    lines = cmd._EventLines()
    lines.task_start(3)
    first = capsys.readouterr().err.splitlines()
    assert first == [first[0]] and first[0].startswith("annotate: 0 of 3 events, loading the model")
    time.sleep(0.3)
    lines.sample_end(1)
    time.sleep(0.2)
    lines.task_end()
    out = capsys.readouterr().err.splitlines()
    assert sum(ln.startswith("annotate: 0 of 3") for ln in out) >= 2  # heartbeats before the first event
    one = [ln for ln in out if ln.startswith("annotate: 1 of 3 events")]
    assert one and "s per event measured" in one[0] and " left" in one[0]
