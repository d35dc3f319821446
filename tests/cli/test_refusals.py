"""Refused commands create nothing: each case asserts the exit code, one ``Error:`` line naming
the file or option, no header line before it, and that no file or folder appeared or changed
(not even an empty output folder or a lock file)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from refusal import refused

from proagent.cli import cli


def _session(n: int = 6, t0: float = 1717377997.0) -> list[dict]:
    return [
        {
            "observation": {
                "time": str(t0 + 20 * i),
                "event": f"The user edits main.py in Visual Studio Code, step {i}.",
            },
            "agent_response": {"candidate_task": [f"Offer to refactor step {i}"]},
            "task_status": i % 3 == 2,
        }
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    from proagent.synth.generator import SynthConfig, generate

    w = tmp_path_factory.mktemp("refusals")
    (w / "pb").mkdir()
    for name in ("code_1", "writing_1"):
        (w / "pb" / f"{name}.json").write_text(json.dumps(_session()), "utf-8")
    generate(w / "lt", SynthConfig(users=1, days=1, seed=1))
    (w / "empty").mkdir()
    (w / "x.db").write_text("garbage, not SQLite\n")
    return w


@pytest.fixture
def ws(template, tmp_path, monkeypatch) -> Path:
    import shutil

    w = tmp_path / "w"
    shutil.copytree(template, w)
    monkeypatch.chdir(w)
    for var in [v for v in os.environ if v.startswith("PROAGENT_") and v != "PROAGENT_ANSWER_CACHE"]:
        monkeypatch.delenv(var)
    return w


def _refused(ws: Path, argv: list[str], code: int, needle: str, *, outside: Path | None = None) -> str:
    return refused(ws, argv, code, needle, outside=outside)


# ---------------------------------------------------------------- 1. simulate --limit


def test_simulate_refuses_a_limit_that_decides_no_user_before_the_model(ws):
    # each session has 6 candidate points: --limit 2 can complete no user; refused before any model work
    line = _refused(
        ws, ["simulate", "pb", "--out", "OUT", "--model", "local/nosuch-model", "--limit", "2"], 2, "--limit"
    )
    assert "raise --limit to at least 6" in line


def test_check_limit_accepts_a_limit_that_completes_one_user():
    from proagent.bench.simulate import CandidatePoint, check_limit
    from proagent.errors import UsageError

    points = [CandidatePoint("a", str(i)) for i in range(3)] + [CandidatePoint("b", str(i)) for i in range(5)]
    check_limit(points, None)
    check_limit(points, 3)  # user a complete
    check_limit(points, 100)
    with pytest.raises(UsageError) as e:
        check_limit(points, 2)
    assert e.value.option == "--limit" and "'a'" in e.value.problem and "at least 3" in e.value.problem


# ---------------------------------------------------------------- 2. stats


def test_stats_of_a_folder_without_databases_creates_no_out(ws):
    _refused(ws, ["stats", "empty", "--out", "ST"], 1, "empty", outside=ws / "ST")


def test_stats_of_a_corrupt_database_creates_no_out(ws):
    _refused(ws, ["stats", "x.db", "--out", "ST"], 1, "x.db", outside=ws / "ST")


def test_stats_compare_with_an_unreadable_side_creates_no_out(ws):
    _refused(ws, ["stats", "--compare", "pb", "empty", "--out", "ST"], 1, "empty", outside=ws / "ST")
    _refused(ws, ["stats", "--compare", "x.db", "pb", "--out", "ST"], 1, "x.db", outside=ws / "ST")


def test_stats_compare_with_one_path_says_it_needs_two(ws):
    line = _refused(ws, ["stats", "--compare", "pb", "--out", "X"], 2, "--compare", outside=ws / "X")
    assert "two paths" in line and "does not exist" not in line


# ---------------------------------------------------------------- 3. curate


def test_curate_a_corrupt_database_says_so_and_creates_no_out(ws):
    line = _refused(ws, ["curate", "x.db", "--out", str(ws / "cur2")], 1, "not a SQLite database", outside=ws / "cur2")
    assert "outside the raw input" not in line


def test_curate_out_beside_a_database_file_is_not_inside_it(ws):
    from proagent.curate._pipeline import _check_out
    from proagent.errors import DataError

    db = next((ws / "lt").rglob("*.db"))
    _check_out(db, db.parent / "cur")  # beside the file: fine
    _check_out(db, ws / "elsewhere" / "cur")  # elsewhere: fine
    for bad in (db.parent, ws / "lt", db):  # holds the file, or is it
        with pytest.raises(DataError, match="the raw input"):
            _check_out(db, bad)
    with pytest.raises(DataError, match="the raw input"):
        _check_out(ws / "lt", ws / "lt" / "sub")  # a folder input: nothing inside it


# ---------------------------------------------------------------- 4. data fetch


@pytest.mark.parametrize("dataset", ["proactivebench", "proactivebench-synthetic"])
def test_fetch_offline_leaves_no_empty_dest(ws, dataset):
    # the suite is offline (conftest): the download fails
    _refused(ws, ["data", "fetch", dataset, "--dest", "F2/sub"], 1, "download failed", outside=ws / "F2")


def test_fetch_into_a_file_is_refused_first(ws):
    _refused(ws, ["data", "fetch", "proactivebench", "--dest", "x.db/sub"], 1, "--dest")


# ---------------------------------------------------------------- 5. annotate, eval


@pytest.mark.parametrize("annotator", ["text:local/nosuch", "foo"])
def test_annotate_with_an_unusable_model_creates_no_log_folder(ws, annotator):
    _refused(ws, ["annotate", "lt", "--annotator", annotator], 1, "--annotator", outside=ws / "logs")


def test_eval_into_a_folder_of_other_options_prints_no_header(ws):
    base = ["eval", "--data", "pb", "--model", "mockllm/model", "--log-dir", "L", "--display", "none", "--limit", "2"]
    r = CliRunner().invoke(cli, base)
    assert r.exit_code == 0, r.output
    assert "proagent eval: 2 samples" in r.output  # the header still comes when the folder is accepted
    line = _refused(ws, [*base, "--window", "30s"], 3, "other options")
    assert "--log-dir" in line


# ---------------------------------------------------------------- 6. messages


def test_annotations_with_a_control_character_say_it_once(ws):
    from proagent.errors import DataError
    from proagent.sources.annotations import load_annotations

    for name, text in (("a.json", '{"user": "a\tb"}'), ("a.jsonl", '{"user": "a\tb"}\n')):
        (ws / name).write_text(text)
        with pytest.raises(DataError) as e:
            load_annotations(ws / name)
        assert "Invalid control character at column" in str(e.value) and "at at" not in str(e.value)
