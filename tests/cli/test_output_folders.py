"""``train when --out`` and ``ablate --out`` refuse a folder that is not new, empty or their own
earlier output (as synth/simulate/annotate/curate do), and ``train when`` warns about a decider
that is no better than chance on its cross-validated training data."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from memory_fixtures import write_sessions
from refusal import one_error, tree

from proagent.cli import cli
from proagent.errors import DataError
from proagent.io import LOCK_NAME, check_output_folder
from proagent.train.when import WhenConfig, cv_warning, fit_when

SHARED = Path(os.environ.get("PROAGENT_SHARED") or Path(__file__).resolve().parents[3] / "shared") / "data"
SYNTHETIC = SHARED / "proactivebench-synthetic"


pytestmark = pytest.mark.usefixtures("in_tmp_path")  # working folder and caches in tmp_path (conftest)


def _user_folder(tmp_path: Path) -> Path:
    """A data folder holding sessions and the user's own report.md and manifest.json."""
    folder = write_sessions(tmp_path / "mine", n=12)
    (folder / "report.md").write_text("# my notes\n", "utf-8")
    (folder / "manifest.json").write_text('{"mine": true}\n', "utf-8")
    return folder


TRAIN = ["train", "when", "--features", "behaviour,keywords"]


# ---- train when --out ----------------------------------------------------------------------------


def test_train_when_refuses_a_data_folder(tmp_path):
    data = write_sessions(tmp_path / "sessions", n=12)
    before = tree(data)
    r = CliRunner().invoke(cli, [*TRAIN, "--data", str(data), "--out", str(data)])
    one_error(r, 1, "--out", str(data), "train when", "manifest.json")
    assert tree(data) == before and not (data / LOCK_NAME).exists()


def test_train_when_does_not_replace_a_users_report_and_manifest(tmp_path):
    data = write_sessions(tmp_path / "sessions", n=12)
    mine = _user_folder(tmp_path)
    before = tree(mine)
    r = CliRunner().invoke(cli, [*TRAIN, "--data", str(data), "--out", str(mine)])
    one_error(r, 1, str(mine), "is not one train when wrote")
    assert tree(mine) == before


def test_train_when_refuses_a_file_as_out(tmp_path):
    data = write_sessions(tmp_path / "sessions", n=12)
    f = tmp_path / "out.txt"
    f.write_text("x", "utf-8")
    r = CliRunner().invoke(cli, [*TRAIN, "--data", str(data), "--out", str(f)])
    one_error(r, 1, str(f))
    assert f.read_text("utf-8") == "x"


def test_train_when_retrains_into_its_own_folder_and_an_empty_one(tmp_path):
    data = write_sessions(tmp_path / "sessions", n=12)
    out = tmp_path / "dec"
    out.mkdir()  # an empty folder is fine
    r = CliRunner().invoke(cli, [*TRAIN, "--data", str(data), "--out", str(out)])
    assert r.exit_code == 0, r.output
    first = json.loads((out / "manifest.json").read_text("utf-8"))
    assert first["format"] == "proagent-decider" and "yes_rate" in first["cv"] and "warning" in first
    r = CliRunner().invoke(cli, [*TRAIN, "--data", str(data), "--out", str(out), "--seed", "1"])  # re-train
    assert r.exit_code == 0, r.output
    assert json.loads((out / "manifest.json").read_text("utf-8"))["seed"] == 1
    assert sorted(p.name for p in out.iterdir() if p.name != LOCK_NAME) == ["manifest.json", "model.skops", "report.md"]


# ---- the warning ---------------------------------------------------------------------------------


def test_cv_warning_rule():
    good = {"auc": 0.8, "yes_rate": 0.4}
    assert cv_warning(good) is None
    assert "AUC 0.271" in cv_warning({"auc": 0.271, "yes_rate": 0.9})
    assert "AUC 0.500" in cv_warning({"auc": 0.5, "yes_rate": 0.5})
    assert "always-yes" in cv_warning({"auc": 0.7, "yes_rate": 1.0})
    assert "always-no" in cv_warning({"auc": 0.7, "yes_rate": 0.0})
    assert "\n" not in cv_warning({"auc": 0.2, "yes_rate": 1.0})


def test_fit_when_reports_the_yes_rate():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 4))
    y = (x[:, 0] > 0).astype(int)
    users = [f"u{i % 4}" for i in range(60)]
    _, threshold, cv = fit_when(x, y, users, WhenConfig())
    assert 0 < cv["yes_rate"] < 1 and cv_warning(cv) is None
    _, _, noise = fit_when(rng.normal(size=(60, 4)), y, users, WhenConfig())  # features unrelated to the labels
    assert 0 <= noise["yes_rate"] <= 1


def test_train_when_prints_the_warning_on_stderr(tmp_path, monkeypatch):
    import proagent.train.when as when

    monkeypatch.setattr(when, "cv_warning", lambda cv: "cross-validated AUC 0.271 is no better than chance")
    data = write_sessions(tmp_path / "sessions", n=12)
    r = CliRunner().invoke(cli, [*TRAIN, "--data", str(data), "--out", str(tmp_path / "dec")])
    assert r.exit_code == 0, r.output
    warnings = [line for line in r.stderr.splitlines() if line.startswith("Warning:")]
    assert warnings == ["Warning: cross-validated AUC 0.271 is no better than chance"]
    assert "Warning" not in r.stdout
    assert "Warning" in (tmp_path / "dec" / "report.md").read_text("utf-8")
    r = CliRunner().invoke(cli, [*TRAIN, "--data", str(data), "--out", str(tmp_path / "dec")])
    assert r.exit_code == 0 and "Warning:" in r.stderr  # the manifest holds it: printed again


@pytest.mark.skipif(not SYNTHETIC.is_dir(), reason="../shared/data/proactivebench-synthetic not present")
def test_train_when_warns_on_the_synthetic_traces(tmp_path):
    """The new user's case: the synthetic traces give a cross-validated AUC below chance."""
    r = CliRunner().invoke(cli, ["train", "when", "--train-data", str(SYNTHETIC), "--out", str(tmp_path / "syn")])
    assert r.exit_code == 0, r.output
    m = json.loads((tmp_path / "syn" / "manifest.json").read_text("utf-8"))
    assert m["cv"]["auc"] <= 0.5 and m["warning"]
    warnings = [line for line in r.stderr.splitlines() if line.startswith("Warning:")]
    assert len(warnings) == 1 and f"AUC {m['cv']['auc']:.3f}" in warnings[0]


# ---- ablate --out --------------------------------------------------------------------------------

ABLATE = [
    "ablate",
    "--methods",
    "zero-shot",
    "--memory",
    "none",
    "--windows",
    "5m",
    "--models",
    "mockllm/model",
    "--limit",
    "2",
]


def test_ablate_refuses_a_data_folder_and_a_users_folder(tmp_path):
    data = write_sessions(tmp_path / "sessions", n=10)
    before = tree(data)
    r = CliRunner().invoke(cli, [*ABLATE, "--data", str(data), "--out", str(data)])
    one_error(r, 1, "--out", str(data), "ablate", "ablate.json")
    assert tree(data) == before and not (data / LOCK_NAME).exists()
    mine = _user_folder(tmp_path)
    (mine / "results.csv").write_text("a,b\n1,2\n", "utf-8")
    before = tree(mine)
    r = CliRunner().invoke(cli, [*ABLATE, "--data", str(data), "--out", str(mine)])
    one_error(r, 1, str(mine))
    assert tree(mine) == before


def test_ablate_marks_its_folder_and_resumes_into_it(tmp_path):
    import glob

    data = write_sessions(tmp_path / "sessions", n=10)
    out = tmp_path / "abl"
    out.mkdir()  # an empty folder is fine
    args = [*ABLATE, "--data", str(data), "--out", str(out)]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, (r.output, r.exception)
    marker = json.loads((out / "ablate.json").read_text("utf-8"))
    assert marker["format"] == "proagent-ablation" and marker["memories"] == ["none"]
    logs = sorted(glob.glob(str(out / "cells" / "*" / "*.eval")))
    assert len(logs) == 1
    r = CliRunner().invoke(cli, args)  # the earlier ablation's --out: resumes
    assert r.exit_code == 0, (r.output, r.exception)
    assert sorted(glob.glob(str(out / "cells" / "*" / "*.eval"))) == logs


# ---- the helper ----------------------------------------------------------------------------------


def test_check_output_folder_recognise(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    (out / "manifest.json").write_text('{"format": "x"}', "utf-8")
    ours = lambda p: json.loads(p.read_text("utf-8")).get("format") == "x"  # noqa: E731
    check_output_folder(out, marker="manifest.json", run="r", recognise=ours)
    check_output_folder(out, marker="manifest.json", run="r")  # without recognise: the name is enough
    with pytest.raises(DataError, match="is not one r wrote"):
        check_output_folder(out, marker="manifest.json", run="r", recognise=lambda p: False)
    check_output_folder(tmp_path / "new", marker="manifest.json", run="r", recognise=lambda p: False)


def test_ablate_resumes_a_grid_written_before_the_marker(tmp_path):
    """A grid folder from before ``ablate.json`` existed (only ``cells/`` and the grid's own
    files) is resumed, not refused; a folder with anything else in it still is."""
    from proagent.errors import DataError
    from proagent.report.ablation import check_out

    old = tmp_path / "old"
    (old / "cells" / "m__zero-shot__none__300s").mkdir(parents=True)
    (old / "results.csv").write_text("x\n")
    check_out(old)
    (old / "notes.txt").write_text("mine")
    with pytest.raises(DataError, match="not the output of an earlier ablate run"):
        check_out(old)
