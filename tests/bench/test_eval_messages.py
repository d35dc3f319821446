"""What ``proagent eval`` says about the moments it evaluates (issue 21): a warning and
results.json's ``one_class`` when they hold one label only, and a "no samples" line
that names the cause (events that make no moment, what curation excluded, the split)."""

from __future__ import annotations

import json
import sqlite3

from click.testing import CliRunner
from lifetrace_fixtures import make_participant

from proagent.bench.samples import SampleConfig, build_samples, no_samples_reason
from proagent.cli import cli
from proagent.sources.load import load_events


def _eval(data, log_dir, *extra):
    return CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(data),
            "--model",
            "mockllm/model",
            "--split",
            "all",
            "--log-dir",
            str(log_dir),
            "--display",
            "none",
            *extra,
        ],
    )


def test_one_class_moments_are_flagged_and_warned(tmp_path):
    make_participant(tmp_path / "data", "P01")
    samples = build_samples(load_events(tmp_path / "data"))
    assert {s.label for s in samples} == {0, 1}
    first = sorted(samples, key=lambda s: (s.user, s.time, s.id))[0]
    r = _eval(tmp_path / "data", tmp_path / "one", "--limit", "1")
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "one" / "results.json").read_text())
    assert res["one_class"] is True and res["n"] == 1
    which = "positive" if first.label else "negative"
    assert f"all 1 evaluated moments are {which} (one class only)" in r.output
    r = _eval(tmp_path / "data", tmp_path / "both")
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "both" / "results.json").read_text())
    assert res["one_class"] is False and 0 < res["n_positive"] < res["n"]
    assert "one class only" not in r.output


def test_no_samples_line_names_what_curation_and_the_labels_leave(tmp_path):
    fx = make_participant(tmp_path / "data", "P01")
    with sqlite3.connect(fx.path) as db:  # nobody used an LLM: no positive moment can exist
        db.execute("UPDATE events SET is_llm_event = 0")
    curation = [
        {
            "user": "P01",
            "event_id": 90,
            "decision": "excluded",
            "reason": "duplicate of screenshot 1 (SHA-256)",
            "screenshot_id": 7,
        },
        {"user": "P01", "event_id": 90, "decision": "excluded", "reason": "no valid screenshot"},
        {"user": "P01", "event_id": 91, "decision": "excluded", "reason": "shorter than 3 s (1.2 s)"},
    ]
    (tmp_path / "data" / "curation.jsonl").write_text("".join(json.dumps(c) + "\n" for c in curation))
    r = _eval(tmp_path / "data", tmp_path / "logs")
    assert r.exit_code != 0 and "Traceback" not in r.output
    line = r.output.strip().splitlines()[-1]
    assert ": no samples: " in line and "LLM-use events: 0" in line and "no positive moment" in line, line
    assert (
        "curation excluded 2 event(s): 1 no valid screenshot, 1 shorter than 3 s "
        "(1 of their screenshots dropped as duplicates of earlier ones)"
    ) in line, line


def test_no_samples_reason_names_the_split(tmp_path):
    make_participant(tmp_path / "data", "P01")
    events = load_events(tmp_path / "data")
    samples = build_samples(events, SampleConfig())
    why = no_samples_reason(events, samples, "test")
    n_events = len(events)
    assert f"of {n_events} events make a moment" in why and "none in the test split" in why and "--split all" in why
    shotless = [e for e in events if not e.screenshots]
    assert f"{len(shotless)} without a screenshot" in why
