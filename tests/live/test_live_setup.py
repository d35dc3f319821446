"""``proagent live``'s decider set-up in the live package (issue 38): the rules raise
``UsageError`` / ``DataError`` naming the option where they live, the command converts nothing."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from proagent.agent.decider import cost_threshold
from proagent.errors import DataError, UsageError
from proagent.live import ScriptedDecider, learned_counts, parse_quiet_hours, scripted_decider, set_up_decider

SRC = Path(__file__).resolve().parents[2] / "src" / "proagent"


def test_a_script_is_a_scripted_decider_and_learns_nothing(tmp_path):
    f = tmp_path / "yes.txt"
    f.write_text("# ids\ns1\n\n7\n", "utf-8")
    got = set_up_decider(None, f)
    assert isinstance(got.when, ScriptedDecider) and got.when.yes == {"s1", "7"}
    assert got.name == f"scripted:{f}" and got.learn_method is None
    assert learned_counts(got.when) is None


def test_a_data_file_as_a_script_is_a_usage_error(tmp_path):
    f = tmp_path / "data.json"
    f.write_text('[{"observation": {}}]', "utf-8")
    with pytest.raises(UsageError) as e:
        scripted_decider(f)
    assert e.value.option == "--yes-at" and "not a data file" in e.value.problem


def test_costs_and_quiet_hours_are_usage_errors_where_their_rules_live(tmp_path):
    with pytest.raises(UsageError) as e:
        cost_threshold(1.0, -1.0)
    assert (e.value.option, e.value.problem) == (
        "--cost-false-alarm/--cost-miss",
        "cost of a miss must be a positive number (got -1.0)",
    )
    with pytest.raises(UsageError) as e:
        set_up_decider(tmp_path, costs=(0.0, 2.0))
    assert e.value.option == "--cost-false-alarm/--cost-miss"
    with pytest.raises(UsageError) as e:
        parse_quiet_hours("22-8")
    assert e.value.option == "--quiet-hours"


def test_a_folder_that_is_no_decider_is_a_data_error_naming_decider(tmp_path):
    with pytest.raises(DataError) as e:
        set_up_decider(tmp_path, learn=True)
    assert e.value.option == "--decider" and e.value.path == str(tmp_path)
    assert str(e.value).startswith(f"--decider {tmp_path}: not a decider folder")


@pytest.mark.parametrize("name", ["eval.py", "live.py"])
def test_the_commands_convert_no_value_error(name):
    """The rules raise proagent's errors; the commands catch no ``ValueError`` to re-word it."""
    tree = ast.parse((SRC / "cli" / name).read_text("utf-8"))
    caught = [ast.unparse(h.type) for h in ast.walk(tree) if isinstance(h, ast.ExceptHandler) and h.type is not None]
    assert not [c for c in caught if "ValueError" in c], caught


def test_eval_parses_its_window_once_at_the_edge():
    """cli/eval.py parses no window itself (bench.options does, once) and builds no task from strings."""
    text = (SRC / "cli" / "eval.py").read_text("utf-8")
    for name in ("window_seconds", "parse_window", "assist(**", "window_slug"):
        assert name not in text, name


def test_live_options_are_parsed_once_into_values():
    from proagent.live import LiveCommandOptions, parse_live_options

    o = parse_live_options(
        notify="terminal, page",
        window="2m",
        every="off",
        cooldown="0",
        ignore_after="90s",
        duration="1h",
        min_gap=2.5,
        quiet_hours="22:00-08:00",
        model="local/x",
        model_args={"n": "1"},
        cost_false_alarm=1.0,
        cost_miss=3.0,
    )
    assert isinstance(o, LiveCommandOptions)
    assert o.run.notify == ("terminal", "page") and o.run.window_seconds == 120.0 and o.run.every_seconds == 0.0
    assert o.run.restraint.cooldown_seconds == 0.0 and o.run.restraint.min_gap_seconds == 150.0
    assert o.run.restraint.quiet_hours is not None and o.run.ignore_after_seconds == 90.0
    assert o.duration_seconds == 3600.0 and o.costs == (1.0, 3.0) and o.model == "local/x" and o.run.model == "local/x"
    none = parse_live_options(model="none")
    assert none.model is None and none.run.model == ""


@pytest.mark.parametrize(
    ("kw", "option", "problem"),
    [
        ({"notify": "pigeon"}, "--notify", "'pigeon': choose from terminal, desktop, page, none"),
        ({"speed": -3.0}, "--speed", "-3: must be 0 (no waiting) or between 0.001 and 1e+06"),
        ({"speed": float("nan")}, "--speed", "nan: must be 0 (no waiting) or between 0.001 and 1e+06"),
        ({"block_title": ("(",)}, "--block-title", "'(': missing ), unterminated subpattern at position 0"),
        (
            {"ask_rate": 2, "yes_at": Path("y")},
            "--ask-rate",
            "2: a scripted decider (--yes-at) has no uncertainty to ask about; give --decider",
        ),
        (
            {"ask_rate": 2, "notify": "desktop"},
            "--ask-rate",
            "2: questions are shown by --notify terminal or page, not desktop",
        ),
        ({"settle": float("nan")}, "--settle", "nan: seconds from 0 to 600"),
        ({"window": "0s"}, "--window", "'0s': must be between 1 s and 24 h"),
        ({"every": "x"}, "--every", "'x': expected e.g. 10s, 30s, 1m, 5m, 10m"),
        ({"duration": "99h"}, "--duration", "'99h': must be between 1 s and 24 h"),
    ],
)
def test_a_bad_live_option_is_one_usage_error(kw, option, problem):
    from proagent.live import parse_live_options

    if "notify" in kw and kw["notify"] == "pigeon":
        from proagent.live import NOTIFIERS

        problem = f"'pigeon': choose from {', '.join(NOTIFIERS)}"
    with pytest.raises(UsageError) as e:
        parse_live_options(**kw)
    assert (e.value.option, e.value.problem) == (option, problem)
