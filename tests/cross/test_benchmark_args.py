"""Benchmark arguments (benchmarks/_common.parse_args): a bad value is argparse's one ``error:``
line and exit 2 before any work (no traceback, not after a long run), and ``--smoke`` keeps a value
given explicitly and says so instead of overriding it in silence."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

from _common import parse_args  # noqa: E402


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="bench")
    ap.add_argument("--events", type=int, default=40)
    ap.add_argument("--gap", type=float, default=0.5)
    ap.add_argument("--concurrency", default="1,8")
    ap.add_argument("--model", default="big")
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--smoke", action="store_true")
    return ap


SMOKE = {"events": 3, "model": "small", "gap": 0.1}


def test_smoke_sets_its_values_and_keeps_explicit_ones(capsys: pytest.CaptureFixture[str]) -> None:
    a = parse_args(_parser(), ["--smoke"], smoke=SMOKE)
    assert (a.events, a.model, a.gap) == (3, "small", 0.1)
    assert capsys.readouterr().err == ""
    a = parse_args(_parser(), ["--smoke", "--ev", "7", "--model=mine"], smoke=SMOKE)  # an abbreviation too
    assert (a.events, a.model, a.gap) == (7, "mine", 0.1)
    assert "--smoke: keeping --events 7, --model mine as given" in capsys.readouterr().err
    a = parse_args(_parser(), ["--events", "9"], smoke=SMOKE)  # no --smoke: nothing applied
    assert (a.events, a.model) == (9, "big")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--events", "-1"], "--events: -1 must be > 0"),
        (["--events", "0"], "--events: 0 must be > 0"),
        (["--gap", "nan"], "--gap: nan must be >= 0"),
        (["--gap", "-0.5"], "must be >= 0"),
        (["--concurrency", "1,x"], "'x' is not a number"),
        (["--concurrency", "4,-2"], "must be > 0"),
        (["--data", "/nonexistent/x"], "does not exist"),
    ],
)
def test_bad_values_are_one_error_line(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        parse_args(_parser(), argv, positive=("events", "concurrency"), non_negative=("gap",), existing=("data",))
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err
    assert len([ln for ln in err.splitlines() if "error:" in ln]) == 1


@pytest.mark.parametrize("argv", [["--events", "-3"], ["--gap", "nan"], ["--data", "/nonexistent"], ["--threads", "0"]])
def test_the_live_benchmark_refuses_bad_arguments_at_once(argv: list[str], tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(BENCH.parent / "src"), "TMPDIR": str(tmp_path)}
    r = subprocess.run(
        [sys.executable, str(BENCH / "live.py"), *argv], capture_output=True, text=True, timeout=120, env=env
    )
    assert r.returncode == 2, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and "error:" in r.stderr
    assert not list(tmp_path.iterdir())  # no temporary folder left behind


def test_the_live_benchmark_leaves_no_temporary_folder_and_no_traceback(tmp_path: Path) -> None:
    """A run stopped by a refusal after its temporary folder was made (a --decider folder that is
    none) removes the folder and says why in one Error line."""
    from shared_data import DEV

    if DEV is None:
        pytest.skip("ProactiveBench dev sessions not present")
    (tmp_path / "t").mkdir()
    (tmp_path / "dec").mkdir()
    env = {**os.environ, "PYTHONPATH": str(BENCH.parent / "src"), "TMPDIR": str(tmp_path / "t")}
    one = sorted(DEV.glob("*.json"))[0]  # one session: the refusal comes at once
    argv = ["--smoke", "--data", str(one), "--decider", str(tmp_path / "dec")]
    r = subprocess.run(
        [sys.executable, str(BENCH / "live.py"), *argv], capture_output=True, text=True, timeout=300, env=env
    )
    assert r.returncode == 1, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and "Error: " in r.stderr and "not a decider folder" in r.stderr
    assert not list((tmp_path / "t").iterdir())
