"""A replay where a person waits (issue 36): decisions.jsonl written as it goes (an interrupted
replay keeps them and resumes, at another --speed too), long gaps between sessions skipped and
said, and progress lines when the output is piped. On a real dev session (code_13)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_live import CODE13, needs_dev

from proagent.cli import cli
from proagent.live import (
    REPLAY_SKIP_GAP_SECONDS,
    FeedbackStore,
    LiveOptions,
    RestraintConfig,
    ScriptedDecider,
    run_replay,
)

pytestmark = needs_dev


def _opts() -> LiveOptions:
    return LiveOptions(
        notify=("none",), every_seconds=0.0, restraint=RestraintConfig(min_gap_seconds=0, one_per_app_session=False)
    )


def _session(tmp_path: Path, n: int, *, gap_after: int | None = None, gap_s: float = 0.0) -> Path:
    """The first ``n`` observations of code_13, those after index ``gap_after`` moved ``gap_s`` later."""
    rows = json.loads(CODE13.read_text())[:n]
    if gap_after is not None:
        for r in rows[gap_after + 1 :]:
            r["observation"]["time"] = f"{float(r['observation']['time']) + gap_s:.3f}"
    p = tmp_path / "code_13.json"
    p.write_text(json.dumps(rows))
    return p


def test_decisions_file_grows_as_it_goes_and_an_interrupted_replay_resumes_at_another_speed(tmp_path: Path) -> None:
    data = _session(tmp_path, 12)
    stop = threading.Event()
    seen: list[int] = []
    out = tmp_path / "run"

    def on_decision(d) -> None:  # noqa: ANN001
        seen.append(len((out / "decisions.jsonl").read_text().splitlines()))
        if len(seen) == 5:
            stop.set()  # as Ctrl-C does

    res = run_replay(data, out, ScriptedDecider(yes=set()), _opts(), speed=0, stop=stop, on_decision=on_decision)
    assert res.interrupted and seen == [1, 2, 3, 4, 5]  # each decision is on disk before the next one
    assert (out / "decisions.jsonl").stat().st_mode & 0o777 == 0o600
    # resumed at another speed: the same run, not "other options (speed)"
    again = run_replay(data, out, ScriptedDecider(yes=set()), _opts(), speed=1e6)
    assert len(again.decisions) == 7 and not again.interrupted
    lines = [json.loads(x) for x in (out / "decisions.jsonl").read_text().splitlines()]
    assert [r["id"] for r in lines] == [r["id"] for r in FeedbackStore(out).decisions()] and len(lines) == 12
    assert "speed" not in json.loads((out / "run.json").read_text())


def test_an_older_run_json_with_its_speed_still_resumes(tmp_path: Path) -> None:
    data = _session(tmp_path, 4)
    out = tmp_path / "run"
    run_replay(data, out, ScriptedDecider(yes=set()), _opts(), speed=0)
    record = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**record, "speed": 60.0}))  # as the code before wrote it
    assert run_replay(data, out, ScriptedDecider(yes=set()), _opts(), speed=30).decisions == []


def test_a_long_gap_between_sessions_is_skipped_and_said(tmp_path: Path) -> None:
    rows = json.loads(CODE13.read_text())[:4]
    span = float(rows[3]["observation"]["time"]) - float(rows[0]["observation"]["time"])
    data = _session(tmp_path, 4, gap_after=1, gap_s=10 * 3600)  # a night between moments 2 and 3
    speed = span / 1.0  # the moments themselves in about a second; the 10 h gap would take 10 h * 3600 / speed
    said: list[str] = []
    progress = []
    t0 = time.monotonic()
    res = run_replay(
        data,
        tmp_path / "run",
        ScriptedDecider(yes=set()),
        _opts(),
        speed=speed,
        on_status=said.append,
        on_progress=progress.append,
        progress_seconds=0.2,
    )
    wall = time.monotonic() - t0
    assert len(res.decisions) == 4 and wall < 10 < 10 * 3600 / speed
    assert len(said) == 1 and said[0].startswith("skipping a 10.0 h gap in the log") and "instead of waiting" in said[0]
    assert f"gaps over {REPLAY_SKIP_GAP_SECONDS / 60:g} min" in said[0]
    last = progress[-1]
    assert (last.done, last.total) == (4, 4) and last.left_seconds is not None and last.left_seconds < 5
    # the loop's clock still went through the gap: the last decision is 10 h after the second
    from datetime import datetime

    moments = [datetime.fromisoformat(r["moment"]) for r in FeedbackStore(tmp_path / "run").decisions()]
    assert (moments[2] - moments[1]).total_seconds() >= 10 * 3600
    assert any(p.done < 4 and p.left_seconds is not None and p.clock is not None for p in progress)


def test_cli_replay_prints_progress_lines_when_piped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from proagent.cli import _progress

    monkeypatch.setattr(_progress, "PLAIN_EVERY_SECONDS", 0.5)
    rows = json.loads(CODE13.read_text())[:6]
    span = float(rows[5]["observation"]["time"]) - float(rows[0]["observation"]["time"])
    data = _session(tmp_path, 6)
    yes = tmp_path / "yes.txt"
    yes.write_text("")
    r = CliRunner().invoke(
        cli,
        [
            "live",
            "--replay",
            str(data),
            "--yes-at",
            str(yes),
            "--model",
            "none",
            "--speed",
            f"{span / 2.5:g}",
            "--notify",
            "none",
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.output.splitlines() if ln.startswith("replay: ")]
    assert len(lines) >= 2, r.output
    assert all(" of 6 moments, replay clock 2024-06-0" in ln and " elapsed" in ln for ln in lines), lines
    assert any("left" in ln for ln in lines[:-1]), lines
    assert lines[-1].startswith("replay: 6 of 6 moments")
    assert "6 moments decided" in r.output


def test_cli_replay_at_speed_0_prints_no_progress_line(tmp_path: Path) -> None:
    data = _session(tmp_path, 4)
    yes = tmp_path / "yes.txt"
    yes.write_text("")
    r = CliRunner().invoke(
        cli,
        [
            "live",
            "--replay",
            str(data),
            "--yes-at",
            str(yes),
            "--model",
            "none",
            "--speed",
            "0",
            "--notify",
            "none",
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert r.exit_code == 0 and "replay: " not in r.output, r.output  # shorter than the interval: nothing to say
