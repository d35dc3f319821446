"""``proagent live --watch`` on a ``proagent capture`` folder decides nothing once the recorder
stops (issue 21), not even within the last ``--every`` when the log was still growing."""

from __future__ import annotations

import threading
import time
from datetime import datetime
from pathlib import Path

from test_live import Writer, _heartbeat, _opts

from proagent.capture._control import FolderLock
from proagent.live import ScriptedDecider
from proagent.live._run import run_watch


def _watch(cap: Path, out: Path, *, lock: bool, every: float = 0.5) -> list[float]:
    """Ticks every ``every`` s while a writer adds a screenshot every 0.05 s for 1.2 s (holding the
    recorder's lock when ``lock``); returns each decided moment's seconds after the writer stopped."""
    Writer(cap, 2, gap=0.0).run()
    rec = FolderLock(cap)
    if lock:
        rec.acquire()
    stop = threading.Event()
    beat = _heartbeat(cap, 2, stop)
    moments: list[datetime] = []
    stopped_at: list[datetime] = []

    def halt() -> None:
        time.sleep(1.2)
        stop.set()
        beat.join(5)
        rec.release()  # what capture does last on stop: capture.pid removed, lock dropped
        stopped_at.append(datetime.now())

    th = threading.Thread(target=halt, daemon=True)
    th.start()
    run_watch(
        cap,
        out,
        ScriptedDecider(set()),
        _opts(every_seconds=every, settle_seconds=0),
        poll_seconds=0.02,
        duration=3.0,
        on_decision=lambda d: moments.append(d.moment),
    )
    th.join(5)
    return [(m - stopped_at[0]).total_seconds() for m in moments]


def test_no_tick_after_the_recorder_stops(tmp_path: Path) -> None:
    after = _watch(tmp_path / "c", tmp_path / "live", lock=True)
    assert after and min(after) < 0, "ticks while capture ran"
    assert max(after) <= 0.02, after  # a tick's moment is its clock time: none after the stop


def test_no_tick_after_the_recorder_stops_before_any_tick_was_due(tmp_path: Path) -> None:
    # events every few seconds keep ticks from being due while capture runs: the recorder is
    # known from the start, so the first due tick after the stop is not decided either
    after = _watch(tmp_path / "c", tmp_path / "live", lock=True, every=1.5)
    assert all(a <= 0.02 for a in after), after


def test_a_log_without_a_recorder_still_ticks_while_it_grows(tmp_path: Path) -> None:
    # a LifeTrace written by another program (no capture.lock holder): the commit rule alone
    after = _watch(tmp_path / "c", tmp_path / "live", lock=False)
    assert after and max(after) <= 0.5 + 0.15, after  # up to one --every after the last commit
