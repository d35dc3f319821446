"""The ``proagent`` command line, through click's CliRunner (in process, no network).

The end-to-end run uses inspect's ``mockllm/model`` provider, so no local model
is loaded; its default answer is not in the answer format, so every sample is
unparsed."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from proagent.cli import cli
from proagent.sources.fetch import PROACTIVEBENCH_FILES

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "proactivebench"

needs_shared = pytest.mark.skipif(
    not (SHARED / "code_11.json").is_file(),
    reason=f"real ProactiveBench sessions not found at {SHARED} (expected <root>/shared beside <root>/main)",
)

HEADLINE_KEYS = (
    "accuracy",
    "precision",
    "recall",
    "f1",
    "intention_accuracy",
    "semantic_similarity",
    "unparsed_rate",
    "n",
)


pytestmark = pytest.mark.usefixtures("in_tmp_path")  # working folder and caches in tmp_path (conftest)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def _ok(result) -> None:
    assert result.exit_code == 0, (result.output, result.exception)


def _clean_error(result, *needles: str) -> None:
    assert result.exit_code != 0
    assert isinstance(result.exception, SystemExit), repr(result.exception)  # handled, not a crash
    assert "Traceback" not in result.output
    for n in needles:
        assert n in result.output, (n, result.output)


# --------------------------------------------------------------------------- help


def test_help(runner):
    r = runner.invoke(cli, ["--help"])
    _ok(r)
    for cmd in ("eval", "data", "models"):
        assert cmd in r.output
    r = runner.invoke(cli, ["-h"])
    _ok(r)


def test_eval_help(runner):
    r = runner.invoke(cli, ["eval", "--help"])
    _ok(r)
    for opt in ("--data", "--method", "--model", "--window", "--split", "--limit", "--log-dir", "--seed"):
        assert opt in r.output
    for method in ("zero-shot", "cot", "sc"):
        assert method in r.output


def test_live_help(runner):
    r = runner.invoke(cli, ["live", "--help"])
    _ok(r)
    for opt in (
        "--watch",
        "--replay",
        "--capture",
        "--decider",
        "--model",
        "--notify",
        "--every",
        "--min-gap",
        "--block-app",
        "--block-title",
        "--settle",
        "--quiet-hours",
        "--duration",
    ):
        assert opt in r.output, opt
    assert "--settle FLOAT RANGE" in r.output and "[default: 3.0; 0<=x<=600]" in r.output
    assert "Ctrl-C prints the summary and exits with 130" in " ".join(r.output.split())
    for opt in ("--watch", "--model", "--model-base-url", "--notify", "--send-screen"):
        assert opt in r.output
    for choice in ("never", "redacted", "raw"):
        assert choice in r.output
    assert "follow-up" in " ".join(r.output.split())  # accepting gives the answer; follow-ups and ratings


def test_version(runner):
    r = runner.invoke(cli, ["--version"])
    _ok(r)
    assert "version" in r.output


# --------------------------------------------------------------------------- eval errors


def test_eval_missing_path(runner, tmp_path):
    missing = tmp_path / "no_such_data"
    r = runner.invoke(cli, ["eval", "--data", str(missing), "--model", "mockllm/model"])
    _clean_error(r, "Error", str(missing))
    assert not (tmp_path / "logs").exists()


def test_eval_requires_data(runner):
    r = runner.invoke(cli, ["eval"])
    assert r.exit_code == 2 and "--data" in r.output


@pytest.mark.parametrize(
    "name, content",
    [
        ("session.json", '[{"observation": {"time": "1717377997.0", "event": "x"}'),  # truncated
        ("session.json", '[{"observation": {"time": "soon", "event": "x"}, "task_status": true}]'),
        ("notes.json", '{"hello": '),
        ("capture.db", b"SQLite format 3\x00" + b"\x01" * 200),
        ("capture.db", bytes(range(256)) * 4),
    ],
    ids=["truncated_json", "bad_time", "foreign_json", "broken_sqlite", "random_db"],
)
def test_eval_corrupt_file(runner, tmp_path, name, content):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, "utf-8")
    r = runner.invoke(cli, ["eval", "--data", str(path), "--model", "mockllm/model"])
    _clean_error(r, "Error", name)


def test_eval_folder_without_data(runner, tmp_path):
    (tmp_path / "empty").mkdir()
    r = runner.invoke(cli, ["eval", "--data", str(tmp_path / "empty"), "--model", "mockllm/model"])
    _clean_error(r, "empty")


@pytest.mark.parametrize("window", ["7x", "0s", "25h", "soon"])
def test_eval_bad_window(runner, tmp_path, window):
    r = runner.invoke(cli, ["eval", "--data", str(tmp_path), "--window", window, "--model", "mockllm/model"])
    assert r.exit_code == 2
    assert "Traceback" not in r.output
    assert "--window" in r.output and window in r.output


def test_eval_bad_method(runner, tmp_path):
    r = runner.invoke(cli, ["eval", "--data", str(tmp_path), "--method", "magic"])
    assert r.exit_code == 2 and "--method" in r.output


# --------------------------------------------------------------------------- data fetch


@needs_shared
def test_data_fetch_from_mirror(runner, tmp_path):
    dest = tmp_path / "pb"
    r = runner.invoke(cli, ["data", "fetch", "proactivebench", "--from", str(SHARED), "--dest", str(dest)])
    _ok(r)
    assert "6 session files verified" in r.output
    assert sorted(p.name for p in dest.glob("*.json")) == sorted(PROACTIVEBENCH_FILES)
    # again: nothing to do, still fine
    _ok(runner.invoke(cli, ["data", "fetch", "proactivebench", "--from", str(SHARED), "--dest", str(dest)]))


@needs_shared
def test_data_fetch_tampered_mirror(runner, tmp_path):
    mirror = tmp_path / "mirror"
    shutil.copytree(SHARED, mirror)
    (mirror / "code_11.json").write_text("[]", "utf-8")
    r = runner.invoke(cli, ["data", "fetch", "proactivebench", "--from", str(mirror), "--dest", str(tmp_path / "pb")])
    _clean_error(r, "Error", "code_11.json", "SHA-256")
    assert not (tmp_path / "pb" / "code_11.json").exists()


def test_data_fetch_without_network_fails_cleanly(runner, tmp_path, monkeypatch):
    import urllib.error
    import urllib.request

    def fail(url, timeout=None):
        raise urllib.error.URLError("offline")

    monkeypatch.setattr(urllib.request, "urlopen", fail)
    r = runner.invoke(cli, ["data", "fetch", "proactivebench", "--dest", str(tmp_path / "pb")])
    _clean_error(r, "Error", "--from")


def test_data_fetch_unknown_dataset(runner):
    r = runner.invoke(cli, ["data", "fetch", "imagenet"])
    assert r.exit_code == 2


def test_data_fetch_missing_mirror_folder(runner, tmp_path):
    r = runner.invoke(cli, ["data", "fetch", "proactivebench", "--from", str(tmp_path / "nope")])
    assert r.exit_code == 2 and "--from" in r.output


# --------------------------------------------------------------------------- models


def test_models_list(runner):
    r = runner.invoke(cli, ["models", "list"])
    _ok(r)
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert lines and all(x.startswith("local/") for x in lines)
    assert any("qwen2.5-coder-1.5b" in x for x in lines)


def test_models_list_says_ready_only_for_a_verified_file(runner, tmp_path, monkeypatch):
    from proagent.models.catalog import MODELS

    spec = MODELS["qwen2.5-coder-1.5b"]
    monkeypatch.setenv("PROAGENT_CACHE_DIR", str(tmp_path))
    qwen = next(x for x in runner.invoke(cli, ["models", "list"]).output.splitlines() if "qwen" in x)
    assert "ready" not in qwen and ("installed; assembled on first use" in qwen or "not installed" in qwen)
    gguf = tmp_path / "models" / "qwen2.5-coder-1.5b.gguf"
    gguf.parent.mkdir()
    gguf.write_bytes(b"GGUF")
    gguf.with_suffix(".gguf.sha256").write_text("0" * 64)  # a marker that does not match: not ready
    qwen = next(x for x in runner.invoke(cli, ["models", "list"]).output.splitlines() if "qwen" in x)
    assert "ready" not in qwen
    gguf.with_suffix(".gguf.sha256").write_text(spec.sha256)
    qwen = next(x for x in runner.invoke(cli, ["models", "list"]).output.splitlines() if "qwen" in x)
    assert qwen == f"local/qwen2.5-coder-1.5b: ready ({gguf})"


# --------------------------------------------------------------------------- end to end (mockllm)


@needs_shared
def test_eval_end_to_end_with_mockllm(runner, tmp_path):
    log_dir = tmp_path / "run"
    args = [
        "eval",
        "--data",
        str(SHARED),
        "--model",
        "mockllm/model",
        "--limit",
        "4",
        "--log-dir",
        str(log_dir),
        "--display",
        "none",
    ]
    r = runner.invoke(cli, args)
    _ok(r)
    results = json.loads((log_dir / "results.json").read_text("utf-8"))
    for key in HEADLINE_KEYS:
        assert key in results, key
    assert results["n"] == 4
    assert results["unparsed_rate"] == 1.0  # "Default output from mockllm/model" is no answer
    assert results["accuracy"] == 0.0 and results["recall"] == 0.0
    assert results["intention_accuracy"] is None  # ProactiveBench has no intention labels
    assert set(results["baselines"]) == {"always_yes", "always_no"}
    assert results["run"]["model"] == "mockllm/model"
    assert "accuracy" in r.output and "always-yes" in r.output
    logs = sorted(p.name for p in log_dir.glob("*.eval"))
    assert len(logs) == 1

    # the same command again reuses the finished log
    r2 = runner.invoke(cli, args)
    _ok(r2)
    assert sorted(p.name for p in log_dir.glob("*.eval")) == logs
    again = json.loads((log_dir / "results.json").read_text("utf-8"))
    assert {k: again[k] for k in HEADLINE_KEYS} == {k: results[k] for k in HEADLINE_KEYS}
    assert not list(log_dir.glob(".results.json.*"))  # no temporary files left


@needs_shared
@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--model", "local/does-not-exist"], "not a bundled model"),
        (["--model", "bogusprovider/x"], "not recognized"),
        (["--model", "local/smollm2-135m", "--model-arg", "n_ctx=abc"], "n_ctx='abc': expected a whole number"),
        (["--limit", "0"], "0 is not in the range"),
        (["--limit", "-1"], "-1 is not in the range"),
    ],
)
def test_eval_rejects_bad_model_and_limit_before_running(runner, tmp_path, extra, expected):
    args = ["eval", "--data", str(SHARED), "--log-dir", str(tmp_path / "run"), *extra]
    if "--model" not in extra:
        args += ["--model", "mockllm/model"]
    result = runner.invoke(cli, args)
    assert result.exit_code != 0
    assert expected in result.output
    assert "Traceback" not in result.output
    assert not list((tmp_path / "run").glob("*.eval"))  # nothing ran


@needs_shared
def test_eval_log_dir_that_is_a_file_is_refused(runner, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("keep me")
    result = runner.invoke(cli, ["eval", "--data", str(SHARED), "--model", "mockllm/model", "--log-dir", str(blocker)])
    assert result.exit_code != 0 and "cannot write there" in result.output
    assert blocker.read_text() == "keep me"


@needs_shared
def test_eval_refuses_to_mix_runs_with_other_options(runner, tmp_path):
    log_dir = tmp_path / "run"
    base = [
        "eval",
        "--data",
        str(SHARED),
        "--model",
        "mockllm/model",
        "--limit",
        "2",
        "--log-dir",
        str(log_dir),
        "--display",
        "none",
    ]
    assert runner.invoke(cli, base).exit_code == 0
    result = runner.invoke(cli, [*base, "--window", "1m"])
    assert result.exit_code != 0
    assert "holds a run with other options" in result.output


def test_interrupted_run_says_how_to_resume(tmp_path, monkeypatch):
    """inspect's eval_set returns no log when Ctrl-C stops it before the log is final."""
    import click
    import inspect_ai

    from proagent.cli._util import run_eval_set

    monkeypatch.setattr(inspect_ai, "eval_set", lambda *a, **k: (False, []))
    with pytest.raises(click.ClickException, match="interrupted; re-run the same command to resume"):
        run_eval_set(object(), tmp_path, "mockllm/model")


def test_window_spellings_share_the_default_log_dir():
    from proagent.bench.samples import parse_window
    from proagent.cli._util import window_slug

    assert {window_slug(parse_window(w)) for w in ("5m", "5 M", "300", "300s", "5min")} == {"300s"}


def test_no_help_prints_an_unbounded_range_as_none():
    """``live --help`` and ``capture --help`` printed ``x<=None`` for every finite float option without
    bounds (click's range text of ``Finite()``); no command's help says ``None`` as a bound."""
    import click

    from proagent.cli import cli

    def helps(cmd: click.Command, path: list[str]):  # noqa: ANN202
        ctx = click.Context(cmd, info_name=" ".join(path))
        yield " ".join(path), cmd.get_help(ctx)
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                yield from helps(sub, [*path, name])

    bad = [name for name, text in helps(cli, ["proagent"]) if re.search(r"x[<>]=?None|None[<>]=?x", text)]
    assert not bad, bad
