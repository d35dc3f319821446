"""``proagent dialogue`` through click's CliRunner: help, errors, plan/guide end to end
with mockllm (offline), kappa from a CSV."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from dialogue_fixtures import ITEMS, write_items

from proagent.cli.dialogue import dialogue
from proagent.dialogue.kappa import quadratic_kappa

pytestmark = pytest.mark.usefixtures("in_tmp_path")  # working folder and caches in tmp_path (conftest)


@pytest.fixture
def data(tmp_path):
    return write_items(tmp_path)


def _ok(r) -> None:
    assert r.exit_code == 0, (r.output, r.exception)


def _clean_error(r, *needles: str) -> None:
    assert r.exit_code != 0 and isinstance(r.exception, SystemExit), (r.output, r.exception)
    assert "Traceback" not in r.output
    for n in needles:
        assert n in r.output, (n, r.output)


def test_help():
    r = CliRunner().invoke(dialogue, ["--help"])
    _ok(r)
    for cmd in ("plan", "guide", "kappa"):
        assert cmd in r.output
    r = CliRunner().invoke(dialogue, ["guide", "--help"])
    _ok(r)
    for opt in (
        "--judge",
        "--user-model",
        "--agreeableness",
        "--no-target",
        "--max-turns",
        "--memory-turns",
        "--limit",
    ):
        assert opt in r.output


def test_plan_end_to_end_and_resume(data, tmp_path):
    log_dir = tmp_path / "run"
    args = [
        "plan",
        "--data",
        str(data),
        "--model",
        "mockllm/model",
        "--limit",
        "2",
        "--log-dir",
        str(log_dir),
        "--display",
        "none",
    ]
    r = CliRunner().invoke(dialogue, args)
    _ok(r)
    res = json.loads((log_dir / "results.json").read_text("utf-8"))
    assert res["task"] == "plan" and res["n"] == 2 and res["score"] is None
    assert res["unparsed_rate"] == 1.0 and res["plan_unparsed_rate"] == 1.0  # mockllm's default answer is no plan
    assert set(res["by_domain"]) == {"recommendation", "persuasion"}  # --limit covers domains first
    assert res["run"]["model_roles"] == {"judge": "mockllm/model"}
    assert "ProactiveEval target planning" in r.output and "recommendation" in r.output
    assert (log_dir / "results.html").read_text("utf-8").startswith("<!doctype html>")
    logs = sorted(log_dir.glob("*.eval"))
    _ok(CliRunner().invoke(dialogue, args))  # again: the finished log is reused
    assert sorted(log_dir.glob("*.eval")) == logs


def test_guide_end_to_end(data, tmp_path):
    log_dir = tmp_path / "g"
    r = CliRunner().invoke(
        dialogue,
        [
            "guide",
            "--data",
            str(data),
            "--model",
            "mockllm/model",
            "--agreeableness",
            "low,high",
            "--max-turns",
            "2",
            "--limit",
            "2",
            "--log-dir",
            str(log_dir),
            "--display",
            "none",
        ],
    )
    _ok(r)
    res = json.loads((log_dir / "results.json").read_text("utf-8"))
    assert res["task"] == "guide" and res["n"] == 2 and res["mean_turns"] == 2.0
    assert set(res["by_domain_agreeableness"]) == {"recommendation/low", "recommendation/high"}
    assert res["termination_unparsed"] == 4 and res["unparsed_rate"] == 1.0
    assert len(res["samples"][0]["dialogue"]) == 4
    assert "dialogue guidance" in r.output and "low" in r.output and "high" in r.output


def test_errors(tmp_path, data):
    _clean_error(
        CliRunner().invoke(dialogue, ["plan", "--data", str(tmp_path / "nope.jsonl"), "--model", "mockllm/model"]),
        "nope.jsonl",
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**ITEMS[0], "sub_target": "x"}) + "\n", "utf-8")
    _clean_error(
        CliRunner().invoke(dialogue, ["guide", "--data", str(bad), "--model", "mockllm/model"]),
        "bad.jsonl",
        "recommendation-1",
        "sub_target",
    )
    r = CliRunner().invoke(dialogue, ["guide", "--data", str(data), "--agreeableness", "grumpy"])
    assert r.exit_code == 2 and "--agreeableness" in r.output
    _clean_error(
        CliRunner().invoke(dialogue, ["plan", "--data", str(data), "--domains", "nope", "--model", "mockllm/model"]),
        "no environments",
    )
    assert not (tmp_path / "logs").exists()


def test_kappa(tmp_path):
    human = tmp_path / "human.csv"
    human.write_text("id,human,judge\na,8,7\nb,3,3\nc,5,6\nd,9,9\n", "utf-8")
    r = CliRunner().invoke(dialogue, ["kappa", "--human", str(human), "--out", str(tmp_path / "k.json")])
    _ok(r)
    k = json.loads((tmp_path / "k.json").read_text("utf-8"))
    assert k["n"] == 4 and k["kappa_quadratic"] == round(quadratic_kappa([8, 3, 5, 9], [7, 3, 6, 9]), 4)
    assert 0.8 < k["kappa_quadratic"] <= 1.0 and "quadratic weighted kappa" in r.output
    # judge scores from a results.json, matched by id (unscored samples are left out)
    results = tmp_path / "results.json"
    results.write_text(
        json.dumps(
            {
                "samples": [
                    {"id": "a", "score": 8},
                    {"id": "b", "score": 3},
                    {"id": "c", "score": -1},
                    {"id": "z", "score": 5},
                ]
            }
        ),
        "utf-8",
    )
    h2 = tmp_path / "h2.csv"
    h2.write_text("sample_id,score\na,8\nb,3\nc,4\n", "utf-8")
    r = CliRunner().invoke(dialogue, ["kappa", "--human", str(h2), "--results", str(tmp_path)])
    _ok(r)
    assert "1.000 over 2 items" in r.output and "1 human-only, 1 judge-only" in r.output


@pytest.mark.parametrize(
    "text, needle",
    [
        ("name,value\na,1\n", "id column"),
        ("id,human\na,eleven\n", "line 2"),
        ("id,human\na,0\n", "outside 1-10"),
        ("id,human\na,1\na,2\n", "duplicate"),
        ("id,human\n", "no rows"),
    ],
)
def test_kappa_bad_csv(tmp_path, text, needle):
    p = tmp_path / "h.csv"
    p.write_text(text, "utf-8")
    _clean_error(CliRunner().invoke(dialogue, ["kappa", "--human", str(p)]), "h.csv", needle)


def test_kappa_needs_judge_scores(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("id,human\na,1\nb,2\n", "utf-8")
    r = CliRunner().invoke(dialogue, ["kappa", "--human", str(p)])
    assert r.exit_code == 2 and "--results" in r.output
