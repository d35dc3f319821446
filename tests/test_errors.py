"""The error family (proagent.errors), its one mapping to exit codes (proagent.cli._errors),
the threshold rule shared by the CLI and the task, and calibration statistics."""

from __future__ import annotations

import click
import numpy as np
import pytest
from click.testing import CliRunner

from proagent.agent.calibration import calibrate, separates
from proagent.agent.solvers import check_threshold
from proagent.cli import cli
from proagent.cli._errors import EXIT_DATA, EXIT_INTERRUPTED, EXIT_RUN, EXIT_USAGE, click_error
from proagent.errors import DataError, ProagentError, Resume, RunError, UsageError


def session(n: int = 6, t0: float = 1717377997.0) -> list[dict]:
    return [
        {
            "observation": {"time": str(t0 + 20 * i), "event": f"The user edits main.py, step {i}."},
            "agent_response": {"candidate_task": [f"Offer to refactor step {i}"]},
            "task_status": i % 3 == 2,
        }
        for i in range(n)
    ]


def test_the_family_and_its_fields():
    d, u = DataError("a.json", "not JSON"), UsageError("--window", "0s: too short")
    assert isinstance(d, ValueError) and isinstance(u, ValueError) and isinstance(d, ProagentError)
    assert (d.path, d.problem, str(d)) == ("a.json", "not JSON", "a.json: not JSON")
    assert (u.option, u.problem) == ("--window", "0s: too short")
    r = RunError("run did not finish (boom)", resume=Resume.SAME_COMMAND, folder="logs/x")
    assert str(r) == "run did not finish (boom); re-run the same command to resume from logs/x"
    other = RunError("logs/x holds a run with other options", resume=Resume.SAME_OPTIONS_OR_NEW_FOLDER)
    assert str(other).endswith("or use another folder")
    assert other.describe("--log-dir").endswith("re-run those exact options to resume it, or choose a new --log-dir")
    assert (
        str(RunError("run did not finish: n_ctx=16")) == "run did not finish: n_ctx=16"
    )  # no hint: it would fail again


def test_each_kind_has_its_exit_code():
    codes = {EXIT_DATA, EXIT_USAGE, EXIT_RUN, EXIT_INTERRUPTED}
    assert len(codes) == 4 and EXIT_USAGE == 2 and EXIT_INTERRUPTED == 130
    assert click_error(DataError("a", "b")).exit_code == EXIT_DATA
    assert isinstance(click_error(UsageError("--x", "y")), click.BadParameter)
    assert click_error(UsageError("--x", "y")).exit_code == EXIT_USAGE
    assert click_error(RunError("stopped")).exit_code == EXIT_RUN
    assert click_error(RunError("stopped", interrupted=True)).exit_code == EXIT_INTERRUPTED


def test_every_command_maps_the_family():
    def walk(cmd: click.Command):
        yield cmd
        for sub in getattr(cmd, "commands", {}).values():
            yield from walk(sub)

    unmapped = [
        c.name for c in walk(cli) if c.callback is not None and not getattr(c.callback, "_proagent_errors", False)
    ]
    assert not unmapped


def test_a_usage_error_of_the_shared_threshold_rule_exits_2_with_the_usage_line(tmp_path):
    (tmp_path / "s.json").write_text(__import__("json").dumps(session()), "utf-8")
    r = CliRunner().invoke(
        cli, ["eval", "--data", str(tmp_path), "--model", "mockllm/model", "--threshold", "0.5", "--method", "sc"]
    )
    assert r.exit_code == 2, r.output
    assert (
        "Usage: cli eval" in r.output and "Invalid value for --threshold: needs --method zero-shot or cot" in r.output
    )


@pytest.mark.parametrize("interrupted, code", [(False, EXIT_RUN), (True, EXIT_INTERRUPTED)])
def test_a_run_error_exits_3_or_130_with_its_resume_hint(tmp_path, monkeypatch, interrupted, code):
    import json

    from proagent.bench import running

    (tmp_path / "s.json").write_text(json.dumps(session()), "utf-8")

    def stop(task, log_dir, *a, **k):  # noqa: ANN001, ANN002, ANN003
        raise RunError(
            "run did not finish (the model went away)",
            resume=Resume.SAME_COMMAND,
            folder=log_dir,
            interrupted=interrupted,
        )

    monkeypatch.setattr(running, "_run", stop)
    r = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(tmp_path),
            "--model",
            "mockllm/model",
            "--log-dir",
            str(tmp_path / "logs"),
            "--display",
            "none",
        ],
    )
    assert r.exit_code == code, r.output
    errors = [line for line in r.output.splitlines() if line.startswith("Error")]
    assert errors == [
        f"Error: run did not finish (the model went away); re-run the same command to resume from {tmp_path / 'logs'}"
    ]


def test_check_threshold_is_one_rule_for_cli_and_task():
    assert check_threshold("0.25", "cot") == 0.25 and check_threshold(1, "zero-shot") == 1.0
    for value, method, option in (
        (1.5, "cot", "--threshold"),
        ("high", "cot", "--threshold"),
        (0.5, "sc", "--threshold"),
    ):
        with pytest.raises(UsageError) as e:
            check_threshold(value, method)
        assert e.value.option == option
    with pytest.raises(UsageError) as e:
        check_threshold(0.5, "cot", decider="deciders/dev")
    assert e.value.option == "--decider"
    from proagent.bench.tasks import assist

    with pytest.raises(UsageError, match="expected a number in"):  # the task refuses the same value the same way
        assist(data="nowhere", threshold=2.0)


def test_calibrate_reports_balanced_accuracy_and_auc():
    rng = np.random.default_rng(0)
    y = [int(v) for v in rng.integers(0, 2, 60)]
    p = [float(np.clip(0.5 + 0.3 * (2 * b - 1) + rng.normal(0, 0.25), 0, 1)) for b in y]
    cal = calibrate(p, y)
    t = cal["threshold"]
    tpr = sum(a >= t for a, b in zip(p, y) if b) / sum(y)
    tnr = sum(a < t for a, b in zip(p, y) if not b) / (len(y) - sum(y))
    assert cal["balanced_accuracy"] == pytest.approx((tpr + tnr) / 2)
    pairs = sum((a > c) + 0.5 * (a == c) for a, b in zip(p, y) if b for c, d in zip(p, y) if not d)
    assert cal["auc"] == pytest.approx(pairs / (sum(y) * (len(y) - sum(y))))
    assert (cal["n_train"], cal["n_train_positive"]) == (60, sum(y)) and separates(cal)
    assert not separates({**cal, "n_train": 19}) and not separates({**cal, "auc": 0.5})
    with pytest.raises(ValueError, match="no readable P"):
        calibrate([], [])


def test_a_log_axis_without_positive_values_is_drawn_linear(tmp_path):
    from proagent.stats.figures import _plt, _save

    plt = _plt()
    fig, ax = plt.subplots()
    with np.errstate(invalid="ignore"):  # the NaN bars are this test's input: numpy's warning about them is expected
        ax.hist(
            np.array([5.0, 5.0]), bins=np.logspace(np.log10(5), np.log10(5.5), 30), density=True
        )  # every bar 0 or NaN
    ax.set_xscale("log")
    ax.set_yscale("log")
    assert _save(fig, tmp_path, "flat") == {"png": "flat.png", "svg": "flat.svg"}
    assert (tmp_path / "flat.png").stat().st_size > 0 and ax.get_yscale() == "linear"
    fig, ax = plt.subplots()
    ax.loglog([1, 10, 100], [1, 0.1, 0.01], "o")
    _save(fig, tmp_path, "ccdf")
    assert ax.get_xscale() == ax.get_yscale() == "log"  # a drawable log axis stays log
