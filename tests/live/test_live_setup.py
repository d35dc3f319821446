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
    assert (e.value.option, e.value.problem) == ("--cost-false-alarm/--cost-miss",
                                                 "cost of a miss must be a positive number (got -1.0)")
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
