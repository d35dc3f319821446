"""The key set of every ``results.json`` proagent writes, pinned (nested keys as dotted
paths): ``proagent eval`` on real ProactiveBench sessions, an ``ablate`` cell, and
``dialogue plan|guide``, all with inspect's ``mockllm/model``. A restructuring must
not add, drop or rename a key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from memory_fixtures import write_sessions

from proagent.cli import cli
from proagent.cli.dialogue import dialogue

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "proactivebench"

# values whose keys depend on the installed packages or the arguments given, not on proagent
OPEN = {
    "run.versions",
    "run.task_args",
    "run.model_args",
    "run.generate_config",
    "samples",
    "by_domain",
    "by_domain_agreeableness",
    "by_agreeableness",
    "cell.memory_derived",
}

RUN = {
    "run",
    "run.task",
    "run.task_args",
    "run.model",
    "run.model_args",
    "run.generate_config",
    "run.status",
    "run.created",
    "run.log",
    "run.versions",
    "run.git_sha",
}
HEADLINE = ("accuracy", "precision", "recall", "f1", "intention_accuracy", "semantic_similarity")
ASSIST = {
    *HEADLINE,
    "unparsed_rate",
    "unparsed_rule",
    "one_class",
    "n",
    "n_positive",
    "n_intention",
    "n_similarity",
    "seconds_p50",
    "seconds_p95",
    "tokens_total",
    "tokens_per_sample",
    "cached_tokens_total",
    "ci95",
    *(f"ci95.{k}" for k in HEADLINE),
    "baselines",
    "baselines.always_yes",
    "baselines.always_no",
    *(f"baselines.{b}.{m}" for b in ("always_yes", "always_no") for m in ("accuracy", "precision", "recall", "f1")),
    *RUN,
}
CELL = {
    "cell",
    "cell.model",
    "cell.method",
    "cell.memory",
    "cell.window",
    "cell.decider",
    "cell.memory_derived",
    "cell.memory_build_seconds",
}
DIALOGUE = {
    "task",
    "n",
    "score",
    "unparsed_rate",
    "by_domain",
    "seconds_p50",
    "seconds_p95",
    "tokens_per_sample",
    "samples",
    *RUN,
    "run.model_roles",
    "run.model_roles.judge",
}
PLAN = DIALOGUE | {"plan_unparsed_rate", "judge_unparsed_rate"}
GUIDE = DIALOGUE | {
    "by_domain_agreeableness",
    "by_agreeableness",
    "dimensions",
    "reach_rate",
    "mean_turns",
    "leak_rate",
    "passive_opening_rate",
    "termination_unparsed",
    *(f"dimensions.{d}" for d in ("effectiveness", "personalization", "tone", "engagement", "naturalness")),
    "run.model_roles.user",
}


def keys(d: dict, prefix: str = "") -> set[str]:
    """Dotted paths of every key of a JSON object (not descending into :data:`OPEN` values)."""
    out = set()
    for k, v in d.items():
        p = f"{prefix}{k}"
        out.add(p)
        if isinstance(v, dict) and p not in OPEN:
            out |= keys(v, p + ".")
    return out


pytestmark = pytest.mark.usefixtures("in_tmp_path")  # working folder and caches in tmp_path (conftest)


def _ok(r) -> None:
    assert r.exit_code == 0, (r.output, r.exception)


@pytest.mark.skipif(not (SHARED / "code_11.json").is_file(), reason=f"ProactiveBench sessions not found at {SHARED}")
def test_eval_results_keys(tmp_path):
    log_dir = tmp_path / "run"
    _ok(
        CliRunner().invoke(
            cli,
            [
                "eval",
                "--data",
                str(SHARED),
                "--model",
                "mockllm/model",
                "--limit",
                "3",
                "--log-dir",
                str(log_dir),
                "--display",
                "none",
            ],
        )
    )
    res = json.loads((log_dir / "results.json").read_text("utf-8"))
    assert keys(res) == ASSIST


def test_ablate_cell_results_keys(tmp_path):
    data = write_sessions(tmp_path / "sessions", n=6)
    out = tmp_path / "ablate"
    _ok(
        CliRunner().invoke(
            cli,
            [
                "ablate",
                "--data",
                str(data),
                "--methods",
                "zero-shot",
                "--memory",
                "none",
                "--windows",
                "5m",
                "--models",
                "mockllm/model",
                "--limit",
                "3",
                "--out",
                str(out),
            ],
        )
    )
    res = json.loads((out / "cells" / "model__zero-shot__none__5m" / "results.json").read_text("utf-8"))
    assert keys(res) == ASSIST | CELL


ITEMS = [
    {
        "id": f"{d}-1",
        "domain": d,
        "topic": "t",
        "environment": {"user_information": "u", "trigger_factor": "t"},
        "target": "g",
        "sub_target": ["a", "b"],
    }
    for d in ("recommendation", "persuasion")
]


@pytest.mark.parametrize("task", ["plan", "guide"])
def test_dialogue_results_keys(tmp_path, task):
    data = tmp_path / "envs.jsonl"
    data.write_text("".join(json.dumps(i) + "\n" for i in ITEMS), "utf-8")
    extra = ["--max-turns", "1"] if task == "guide" else []
    _ok(
        CliRunner().invoke(
            dialogue,
            [
                task,
                "--data",
                str(data),
                "--model",
                "mockllm/model",
                "--limit",
                "2",
                "--log-dir",
                str(tmp_path / "d"),
                "--display",
                "none",
                *extra,
            ],
        )
    )
    res = json.loads((tmp_path / "d" / "results.json").read_text("utf-8"))
    assert keys(res) == (PLAN if task == "plan" else GUIDE)
    assert set(res["samples"][0]) >= {"id", "domain", "tier", "score", "tokens", "seconds"}
    # mockllm's answers are never scored: "no value" is null in the file, not the -1 of inspect's score value
    assert all(r["score"] is None for r in res["samples"])


@pytest.mark.parametrize("how", ["option", "environment"])
def test_eval_records_the_endpoint_not_the_key(tmp_path, monkeypatch, how):
    """An OpenAI-compatible run records where the model was reached (``run.model_base_url``), from
    ``--model-base-url`` or ``<SERVICE>_BASE_URL``, and never the key (issue 36)."""
    from mock_openai import MockOpenAI

    data = write_sessions(tmp_path / "sessions", n=2)
    log_dir = tmp_path / "run"
    with MockOpenAI(lambda body: "Need help: No") as srv:
        monkeypatch.setenv("MOCK_API_KEY", "sk-test-secret-4711")
        extra = ["--model-base-url", srv.base_url] if how == "option" else []
        if how == "environment":
            monkeypatch.setenv("MOCK_BASE_URL", srv.base_url)
        else:
            monkeypatch.delenv("MOCK_BASE_URL", raising=False)
        _ok(
            CliRunner().invoke(
                cli,
                [
                    "eval",
                    "--data",
                    str(data),
                    "--model",
                    "openai-api/mock/assistant",
                    *extra,
                    "--limit",
                    "2",
                    "--log-dir",
                    str(log_dir),
                    "--display",
                    "none",
                ],
            )
        )
    text = (log_dir / "results.json").read_text("utf-8")
    res = json.loads(text)
    assert res["run"]["model_base_url"] == srv.base_url and len(srv.requests) >= 1
    assert keys(res) == ASSIST | {"run.model_base_url"}
    assert "sk-test-secret-4711" not in text
