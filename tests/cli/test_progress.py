"""The progress display of long commands (issue 36 item 5): plain lines at most every interval when
piped (the last one by close() only after earlier lines), a rich bar on a terminal."""

from __future__ import annotations

import io
import time

from proagent.bench.progress import duration_text, estimate_left
from proagent.cli._progress import ProgressDisplay, SampleLines


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_at_most_every_interval_with_elapsed_and_estimate():
    out = io.StringIO()
    d = ProgressDisplay("replay", 10, unit="moments", every=0.2, stream=out)
    d.update(1, "replay clock 2024-06-02 11:49:29", 30.0)
    assert out.getvalue() == ""  # not yet: the interval has not passed
    time.sleep(0.25)
    d.update(2, "replay clock 2024-06-02 11:50:00", 200.0)
    d.update(3, "", 100.0)  # within the interval again: kept for close()
    d.close()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(
        "replay: 2 of 10 moments, replay clock 2024-06-02 11:50:00, 0 s elapsed, about 3 min left"
    )
    assert lines[1].startswith("replay: 3 of 10 moments, ") and len(lines) == 2


def test_a_command_shorter_than_the_interval_prints_nothing():
    out = io.StringIO()
    d = ProgressDisplay("replay", 3, unit="moments", every=60, stream=out)
    d.update(3, "", 0.0)
    d.close()
    assert out.getvalue() == ""


def test_no_estimate_once_done():
    d = ProgressDisplay("x", 2, every=0, stream=io.StringIO())
    assert "left" not in d.line(2, "", 5.0) and "about 5 s left" in d.line(1, "", 5.0)


def test_rich_bar_on_a_terminal_and_plain_when_told():
    tty = Tty()
    d = ProgressDisplay("cell", None, unit="samples", stream=tty)
    d.total = 4
    d.update(3, left=12.0)
    d.say("a line of its own")
    d.close()
    text = tty.getvalue()
    assert "3/4" in text and "a line of its own" in text and "about 12 s left" in text
    forced = Tty()
    p = ProgressDisplay("annotate", 4, unit="events", rich=False, every=0, stream=forced)
    p.update(1, left=3.0)
    p.close()
    assert forced.getvalue().startswith("annotate: 1 of 4 events, ")


def test_sample_lines_estimate_from_the_pace_so_far():
    out = io.StringIO()
    lines = SampleLines("cell", "samples", rich=False)
    lines.task_start(4)
    lines.display.stream, lines.display.every = out, 0
    lines.display.start -= 10  # 10 s into the task
    lines.sample_end(2)
    lines.task_end()
    assert "cell: 2 of 4 samples, 10 s elapsed, about 10 s left" in out.getvalue()
    assert estimate_left(10, 0, 4) is None and estimate_left(10, 2, None) is None
    assert [duration_text(x) for x in (42, 720, 12600)] == ["42 s", "12 min", "3.5 h"]
