"""A resumed ``proagent eval`` says how many samples it reuses before it reprints the table
(issue 36: a resumed eval reprinted its table after 27 s without a word)."""

from __future__ import annotations

from click.testing import CliRunner
from memory_fixtures import write_sessions

from proagent.bench.running import finished_samples
from proagent.cli import cli


def test_a_resumed_eval_says_what_it_reuses(tmp_path):
    data = write_sessions(tmp_path / "sessions", n=2)
    log_dir = tmp_path / "run"
    assert finished_samples(log_dir) == 0
    argv = [
        "eval",
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
    r = CliRunner().invoke(cli, argv)
    assert r.exit_code == 0, r.output
    assert "proagent eval: 2 samples, method" in r.output and "reused" not in r.output
    assert finished_samples(log_dir) == 2
    r = CliRunner().invoke(cli, argv)
    assert r.exit_code == 0, r.output
    assert "proagent eval: 2 samples (2 of 2 finished earlier, reused; 0 to run), method zero-shot" in r.output
