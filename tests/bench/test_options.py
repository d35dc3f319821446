"""``proagent eval``'s options parsed once (issue 38): one parser for the command line and
``inspect eval -T``, the same one line for a bad value on both paths, and the task (a Ray shard's
included) built from the parsed record, never from strings parsed again."""

from __future__ import annotations

import functools
import pickle
from pathlib import Path

import pytest
from click.testing import CliRunner
from shared_data import DEV

from proagent.bench import options as options_mod
from proagent.bench.options import AssistOptions, Window, parse_assist_options, parse_eval_options
from proagent.cli import cli
from proagent.errors import UsageError

BAD = [  # (task argument, value, the option named, the message's problem)
    ("window", "0s", "--window", "window '0s': must be between 1 s and 24 h"),
    ("window", "abc", "--window", "window 'abc': expected e.g. 10s, 30s, 1m, 5m, 10m"),
    ("memory", "nope", "--memory", "unknown memory 'nope'; choose from none, rag, kg, persona"),
    ("threshold", "2", "--threshold", "'2': expected a number in [0, 1]"),
    ("modality", "video", "--modality", "'video': choose text or image"),
]


def _session(tmp_path: Path) -> Path:
    import shutil

    if DEV is None:
        pytest.skip("the ProactiveBench dev sessions are not here")
    out = tmp_path / "pb"
    out.mkdir()
    shutil.copy(DEV / "code_11.json", out / "code_11.json")
    return out


@pytest.mark.parametrize(("arg", "value", "option", "problem"), BAD)
def test_a_bad_value_is_one_usage_error_naming_its_option(arg, value, option, problem):
    with pytest.raises(UsageError) as e:
        parse_assist_options("data", **{arg: value})
    assert (e.value.option, e.value.problem) == (option, problem)


@pytest.mark.parametrize(("arg", "value", "option", "problem"), BAD)
def test_eval_and_inspect_task_args_refuse_a_bad_value_with_the_same_line(tmp_path, arg, value, option, problem):
    from inspect_ai import eval as inspect_eval

    data = _session(tmp_path)
    r = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(data),
            "--model",
            "mockllm/model",
            f"--{arg}",
            value,
            "--log-dir",
            str(tmp_path / "logs"),
        ],
    )
    assert r.exit_code == 2, r.output
    assert f"Error: Invalid value for {option}: {problem}" in r.output
    with pytest.raises(UsageError) as e:  # inspect eval proagent/assist -T window=0s: the task's own parser
        inspect_eval(
            "proagent/assist",
            task_args={"data": str(data), arg: value},
            model="mockllm/model",
            log_dir=str(tmp_path / "inspect"),
            display="none",
        )
    assert (e.value.option, e.value.problem) == (option, problem)
    assert not (tmp_path / "logs").exists()


def test_threshold_auto_needs_the_test_split_and_the_method_rules_hold():
    common = dict(
        data="d",
        method="zero-shot",
        model="mockllm/model",
        window="5m",
        split="train",
        train_fraction=0.5,
        seed=0,
        sc_samples=5,
        annotations=(),
        memory="none",
        modality="text",
        images=False,
        decider=None,
        limit=None,
        log_dir=None,
        display=None,
        ray_address=None,
    )
    with pytest.raises(UsageError, match="needs --split test") as e:
        parse_eval_options(**{**common, "threshold": "auto"})
    assert e.value.option == "--threshold"
    with pytest.raises(UsageError, match="sc records no P") as e:
        parse_eval_options(**{**common, "split": "test", "method": "sc", "threshold": "auto"})
    opts = parse_eval_options(**{**common, "split": "test", "threshold": "auto"})
    assert opts.calibrate and opts.task.threshold is None and not opts.task.logprobs
    assert opts.log_dir == Path("logs/d-zero-shot-model-300s-test-seed0-thr-auto")
    train = opts.train_task()
    assert (train.split, train.logprobs, train.threshold) == ("train", True, None)
    fixed = opts.with_threshold(0.25)
    assert fixed.task.threshold == 0.25 and fixed.task.logprobs and not fixed.calibrate


def test_task_args_are_those_eval_always_passed():
    """inspect records the task's arguments in the log and matches a resumed run by them: the
    record gives back exactly what cli/eval.py passed before it had a record."""
    o = parse_assist_options(
        "/d",
        window="5m",
        annotations=("a.jsonl", "b.jsonl"),
        memory="rag",
        modality="image",
        threshold="0.3",
        finetuned="/ft",
    )
    assert o.window == Window(300.0, "5m")
    assert list(o.task_args().items()) == [
        ("data", "/d"),
        ("method", "zero-shot"),
        ("window", "5m"),
        ("split", "test"),
        ("train_fraction", 0.5),
        ("seed", 0),
        ("sc_samples", 5),
        ("images", False),
        ("annotations", "a.jsonl,b.jsonl"),
        ("memory", "rag"),
        ("modality", "image"),
        ("finetuned", "/ft"),
        ("threshold", 0.3),
    ]
    gated = parse_assist_options("/d", decider=Path("/dec"))
    assert gated.decider == "/dec" and gated.task_args()["decider"] == "/dec"
    train = AssistOptions(data="/d", split="train", logprobs=True)
    assert train.task_args()["logprobs"] is True and "threshold" not in train.task_args()
    assert parse_assist_options(**AssistOptions(data="/d").task_args()) == AssistOptions(data="/d")


def test_a_shard_builds_from_the_record_without_parsing(tmp_path, monkeypatch):
    """What eval --ray sends a worker (a partial over the parsed record) pickles, and building
    from it parses nothing: a parser that fails when called does not stop it."""
    from proagent.bench import tasks
    from proagent.bench.tasks import build_assist

    data = _session(tmp_path)
    opts = parse_assist_options(str(data), window="90s", split="all")
    build = pickle.loads(pickle.dumps(functools.partial(build_assist, opts)))

    def no_parsing(*a, **k):
        raise AssertionError("parsed again")

    monkeypatch.setattr(tasks, "parse_assist_options", no_parsing)
    monkeypatch.setattr(options_mod, "parse_window_option", no_parsing)
    task = build()
    assert task.metadata["window_seconds"] == 90.0 and len(task.dataset) > 0
    with pytest.raises(AssertionError, match="parsed again"):  # a direct call (inspect -T) goes through the parser
        tasks.assist(data=str(data), window="90s")


def test_a_shard_job_carries_the_record_not_strings(tmp_path, monkeypatch):
    """run_sharded_eval hands each worker the callable it was given: the parsed record inside."""
    from proagent.bench.tasks import build_assist
    from proagent.scale import _pool, evaluate

    jobs = []

    def run_jobs(js, workers):
        jobs.extend(js)
        raise KeyboardInterrupt  # stop before running anything

    monkeypatch.setattr(_pool, "run_jobs", run_jobs)
    opts = parse_assist_options("d", window="2m")
    with pytest.raises(KeyboardInterrupt):
        evaluate.run_sharded_eval(
            functools.partial(build_assist, opts),
            ["a", "b"],
            tmp_path,
            "mockllm/model",
            workers=2,
            echo=lambda _m: None,
        )
    assert len(jobs) == 2
    for job in jobs:
        build = job.args[0]
        assert build.args == (opts,) and build.args[0].window == Window(120.0, "2m")


def test_the_help_task_parses_its_window_with_the_same_parser(tmp_path):
    """inspect eval proagent/help -T window=0s: assist's window rule and message."""
    from proagent.live.tasks import help_task

    with pytest.raises(UsageError) as e:
        help_task(data=str(_session(tmp_path)), window="0s")
    assert (e.value.option, e.value.problem) == ("--window", "window '0s': must be between 1 s and 24 h")


NOT_NUMBERS = [  # (task argument, value, the option named, the message's problem)
    ("train_fraction", "abc", "--train-fraction", "'abc': expected a finite number"),
    ("train_fraction", "nan", "--train-fraction", "'nan': expected a finite number"),
    ("seed", "abc", "--seed", "'abc': expected an integer >= 0"),
    ("seed", -1, "--seed", "-1: expected an integer >= 0"),
    ("seed", 1.5, "--seed", "1.5: expected an integer >= 0"),
    ("sc_samples", "abc", "--sc-samples", "'abc': expected an integer"),
    ("sc_temperature", float("inf"), "--sc-temperature", "inf: expected a finite number"),
]


@pytest.mark.parametrize(("arg", "value", "option", "problem"), NOT_NUMBERS)
def test_a_value_that_is_not_a_number_is_a_usage_error_naming_its_option(arg, value, option, problem):
    with pytest.raises(UsageError) as e:
        parse_assist_options("data", **{arg: value})
    assert (e.value.option, e.value.problem) == (option, problem)


def test_numbers_given_as_text_are_read():
    opts = parse_assist_options("data", train_fraction="0.25", seed="7", sc_samples=3, sc_temperature="0.5")
    assert (opts.train_fraction, opts.seed, opts.sc_samples, opts.sc_temperature) == (0.25, 7, 3, 0.5)
