"""`proagent train when --target help-or-candidates`: the reference agent's candidate tasks as an
auxiliary training target (never a feature), thresholds still on the help label."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from shared_data import DEV

from proagent.cli import cli
from proagent.train import load_split_moments
from proagent.train.when import training_target

pytestmark = pytest.mark.skipif(DEV is None, reason="ProactiveBench dev sessions not present")


def test_training_target_adds_candidate_moments() -> None:
    samples, _ = load_split_moments(DEV / "code_13.json", "all")
    y = np.array([s.label for s in samples])
    cand = np.array([bool(s.current.candidate_tasks) for s in samples])
    t = training_target(samples, "help-or-candidates")
    assert (training_target(samples) == y).all()
    assert (t == (y | cand)).all() and t.sum() > y.sum()
    bare = [replace(s, current=replace(s.current, candidate_tasks=())) for s in samples]
    with pytest.raises(ValueError, match="no moment has candidate tasks"):
        training_target(bare, "help-or-candidates")


def test_train_when_target_option(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    for f in DEV.glob("code_*.json"):
        (code / f.name).write_bytes(f.read_bytes())
    r = CliRunner().invoke(
        cli,
        [
            "train",
            "when",
            "--data",
            str(code),
            "--features",
            "behaviour,keywords",
            "--cv",
            "moments",
            "--target",
            "help-or-candidates",
            "--out",
            str(tmp_path / "d"),
        ],
    )
    assert r.exit_code == 0, r.output
    m = json.loads((tmp_path / "d" / "manifest.json").read_text())
    assert m["config"]["target"] == "help-or-candidates" and m["n_positive"] == sum(
        s.label for s in load_split_moments(code, "train")[0]
    )  # counts are of the help label


def test_target_without_candidates_is_one_error_line(tmp_path: Path) -> None:
    rows = json.loads((DEV / "code_13.json").read_text())
    for r in rows:
        r["agent_response"]["candidate_task"] = []
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "code_13.json").write_text(json.dumps(rows))
    r = CliRunner().invoke(
        cli,
        [
            "train",
            "when",
            "--data",
            str(tmp_path / "data"),
            "--features",
            "behaviour,keywords",
            "--target",
            "help-or-candidates",
            "--out",
            str(tmp_path / "d"),
        ],
    )
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert [ln for ln in r.output.splitlines() if ln.startswith("Error:")] == [
        "Error: target help-or-candidates: no moment has candidate tasks (ProactiveBench sessions have them)"
    ]
    assert not (tmp_path / "d" / "manifest.json").exists()
