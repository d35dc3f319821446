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


BAD = [  # (script, a bad value of one of its options, what the error line says)
    ("activity_read", ["--events", "0"], "--events: 0 must be > 0"),
    ("annotate", ["--threads", "-1"], "--threads: -1 must be > 0"),
    ("capture", ["--replay", "-1"], "--replay: -1 must be >= 0"),
    ("chat_layouts", ["--limit-s", "nan"], "--limit-s: nan must be > 0"),
    ("curate", ["--pii-every", "-1"], "--pii-every: -1 must be >= 0"),
    ("decider", ["--data", "/nonexistent/pb"], "--data: /nonexistent/pb does not exist"),
    ("desktop_day", ["--timeout", "0"], "--timeout: 0.0 must be > 0"),
    ("disk_cache", ["--entries", "0"], "--entries: 0 must be > 0"),
    ("dismissed_similarity", ["--data", "/nonexistent/pb"], "does not exist"),
    ("eval_build", ["--repeats", "0"], "--repeats: 0 must be > 0"),
    ("finetune_real_vs_synthetic", ["--epochs", "nan"], "--epochs: nan must be > 0"),
    ("gguf_round_trip", ["--threads", "0"], "--threads: 0 must be > 0"),
    ("harness_overhead", ["--concurrency", "1,x"], "--concurrency: 'x' is not a number"),
    ("help", ["--log", "/nonexistent/log"], "--log: /nonexistent/log does not exist"),
    ("help_quality", ["--max-tokens", "0"], "--max-tokens: 0 must be > 0"),
    ("help_quality", ["--data", "/nonexistent/pb"], "--data: /nonexistent/pb does not exist"),
    ("how_behind_help", ["--accepts", "-1"], "--accepts: -1 must be >= 0"),
    ("how_behind_help", ["--dwell", "-1"], "--dwell: -1.0 must be >= 0"),
    ("how_behind_help", ["--against", "main"], "--against needs --accepts N"),
    ("how_behind_help", ["--accepts", "1", "--beside-capture"], "--beside-capture needs --against REF"),
    ("live", ["--poll", "-1"], "--poll: -1.0 must be > 0"),
    ("live", ["--lag", "-1"], "--lag: -1.0 must be >= 0"),
    ("live", ["--how-gap", "nan"], "--how-gap: nan must be >= 0"),
    ("mcp_latency", ["--calls", "0"], "--calls: 0 must be > 0"),
    ("mcp_latency", ["--events", "0"], "--events: 0 must be > 0"),
    ("mcp_latency", ["--cap", "-5"], "--cap: -5 must be > 0"),
    ("memory_latency", ["--sizes", "300,-1"], "--sizes: 300,-1 must be > 0"),
    ("ocr_worker", ["--min-interval", "-1"], "--min-interval: -1.0 must be >= 0"),
    ("personalise", ["--cost-miss", "-1"], "--cost-miss: -1.0 must be >= 0"),
    ("population", ["--data", "/nonexistent/pb"], "does not exist"),
    ("prefix_reuse", ["--n", "0"], "--n: 0 must be > 0"),
    ("render_results", ["/nonexistent/results"], "/nonexistent/results does not exist"),
    ("scale", ["--sizes", "10"], "--sizes: '10' is none of smoke, 100k, 1m"),
    ("scale_out", ["--workers", "0"], "--workers: 0 must be > 0"),
    ("soak", ["--minutes", "0"], "--minutes: 0.0 must be > 0"),
    ("startup", ["--limit", "0"], "--limit: 0 must be > 0"),
]


def test_every_benchmark_with_numeric_or_path_options_is_in_the_table() -> None:
    """A script whose options take numbers or paths (``type=int|float|Path``, or a comma list of
    numbers) is listed in :data:`BAD`: it declares them to ``parse_args``."""
    listed = {name for name, _, _ in BAD}
    bare = {"pii_corpus", "privacy", "tab_split", "title_split"}  # only --json/--keep (written) and flags
    scripts = {p.stem for p in BENCH.glob("*.py") if not p.stem.startswith("_")}
    assert scripts - listed == bare


@pytest.mark.parametrize(("script", "argv", "needle"), BAD, ids=[f"{b[0]}{b[1][0]}" for b in BAD])
def test_each_benchmark_refuses_a_bad_value_at_once(script: str, argv: list[str], needle: str, tmp_path: Path) -> None:
    """Exit 2 with argparse's one ``error:`` line before any work (well under a few seconds, no
    temporary folder made), never a traceback."""
    env = {**os.environ, "PYTHONPATH": str(BENCH.parent / "src"), "TMPDIR": str(tmp_path)}
    r = subprocess.run(
        [sys.executable, str(BENCH / f"{script}.py"), *argv], capture_output=True, text=True, timeout=120, env=env
    )
    assert r.returncode == 2, (r.returncode, r.stdout[-1000:], r.stderr[-2000:])
    assert "Traceback" not in r.stderr
    errors = [ln for ln in r.stderr.splitlines() if "error:" in ln]
    assert len(errors) == 1 and needle in errors[0], r.stderr[-2000:]
    assert not list(tmp_path.iterdir())
