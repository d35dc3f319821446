"""The one shim over inspect_ai's internals (``proagent.bench._inspect_hooks``): every internal
it uses still has the shape it expects, and each shim does its job in a real ``eval_set`` run."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import Generate, TaskState, solver

import proagent
from proagent.bench import _inspect_hooks as hooks
from proagent.bench.running import run_task
from proagent.errors import Resume, RunError
from proagent.models.local import LocalModelError

SRC = Path(proagent.__file__).resolve().parent


def test_the_internals_used_have_the_expected_shape() -> None:
    from inspect_ai._eval import evalset

    hooks.hook_folder_check()
    validate = evalset.validate_eval_set_prerequisites
    original = getattr(validate, "__wrapped__", None) or validate
    assert list(inspect.signature(validate).parameters) == [
        "resolved_tasks",
        "all_logs",
        "log_dir_allow_dirty",
        "eval_set_args",
    ]
    assert callable(original)
    assert issubclass(hooks.prerequisite_error(), Exception)
    from inspect_ai.log._recorders.buffer.buffer import cleanup_sample_buffers_for_log

    assert list(inspect.signature(cleanup_sample_buffers_for_log).parameters) == ["location"]
    from inspect_ai.log import EvalError

    assert {"message", "traceback"} <= set(EvalError.model_fields)
    from inspect_ai.model import _model

    assert hooks.hook_retry_progress(3) is True
    original = _model.log_model_retry.__wrapped__
    assert inspect.iscoroutinefunction(original)
    assert list(inspect.signature(original).parameters)[:2] == ["model_name", "retry_state"]
    assert re.search(r"partial\(\s*log_model_retry\b", inspect.getsource(_model.Model._generate))  # looked up per call
    from inspect_ai.model import ModelAPI, _retry

    assert hooks.hook_retry_wait(None) is True
    assert list(inspect.signature(ModelAPI.retry_wait.__wrapped__).parameters) == ["self"]
    assert "wait=self.api.retry_wait()" in inspect.getsource(_model.Model._generate)  # asked per call
    assert "wait_exponential_jitter(initial=3, max=(30 * 60), jitter=3)" in inspect.getsource(
        _retry
    )  # the curve scaled
    from inspect_ai._display.core import results

    assert hooks.hook_retry_wait(None) is True
    assert hooks.hook_no_retry_advice() is True
    assert "task_can_retry(profile)" in inspect.getsource(results.task_interrupted)  # looked up per call


def test_a_configured_retry_wait_scales_inspects_curve_and_unset_is_inspects_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PROAGENT_API_RETRY_WAIT (bench.running.api_limits): the first wait of a provider with none of its
    own is that many seconds (plus up to as much jitter), then doubling; unset, inspect's None (3 s)."""
    from inspect_ai.model import get_model
    from tenacity import RetryCallState, Retrying

    from proagent.bench.running import api_limits

    monkeypatch.setenv("OPENAI_API_KEY", "k")
    api = get_model("openai/gpt-4o-mini", base_url="http://127.0.0.1:9/v1").api
    monkeypatch.setenv("PROAGENT_API_RETRY_WAIT", "0.25")
    api_limits()
    wait = api.retry_wait()
    state = RetryCallState(Retrying(), None, (), {})
    firsts = []
    for k in (1, 2):
        state.attempt_number = k
        firsts.append(wait(state))
    assert 0.25 <= firsts[0] <= 0.5 and 0.5 <= firsts[1] <= 0.75, firsts
    monkeypatch.delenv("PROAGENT_API_RETRY_WAIT")
    api_limits()
    assert api.retry_wait() is None  # inspect's own wait_exponential_jitter(initial=3, ...)
    for bad in ("0", "-1", "abc", "nan", "61"):
        monkeypatch.setenv("PROAGENT_API_RETRY_WAIT", bad)
        with pytest.raises(RunError, match="PROAGENT_API_RETRY_WAIT=.*expected seconds in"):
            api_limits()
    assert hooks.retry_line(
        "m", type("S", (), {"outcome": None, "attempt_number": 1, "upcoming_sleep": 0.34})(), 3
    ).endswith("retrying in 0.3 s")


def test_no_logs_is_not_success() -> None:
    from inspect_ai._eval import evalset

    assert hooks.hook_folder_check() is True
    assert evalset.all_evals_succeeded([]) is False


def test_only_the_shim_imports_inspect_internals() -> None:
    """``inspect_ai._...`` and ``inspect_ai.x._y`` are imported by the shim module alone."""
    offenders = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            )
            for n in names:
                if n.startswith("inspect_ai") and any(part.startswith("_") for part in n.split(".")):
                    offenders.append(f"{path.relative_to(SRC)}: {n}")
    assert offenders and all(o.startswith("bench/_inspect_hooks.py") for o in offenders), offenders


@solver
def _fails_like_llama():  # noqa: ANN202
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        raise LocalModelError("the prompt (900 tokens) exceeds the available context size (n_ctx=512)")

    return solve


@task
def _two(marker: str = "a") -> Task:
    return Task(dataset=MemoryDataset([Sample(input="hi", target="x", id=1)]), solver=_fails_like_llama())


def test_failure_types_tell_a_refused_request_by_its_class(tmp_path: Path) -> None:
    with pytest.raises(RunError) as e:
        run_task(_two(), tmp_path / "logs", "mockllm/model", display="none")
    assert e.value.resume is None and "n_ctx=512" in e.value.problem  # no resume hint: it would fail again
    from inspect_ai.log import list_eval_logs, read_eval_log

    log = read_eval_log(list_eval_logs(str(tmp_path / "logs"))[0])
    assert "LocalModelError" in hooks.failure_types(log.error)
    assert hooks.failure_types(None) == set()


def test_a_folder_of_another_run_is_refused_by_type_and_on_start_waits_for_the_check(tmp_path: Path) -> None:
    from inspect_ai import Task as T
    from inspect_ai.solver import generate

    @task
    def ok(marker: str = "a") -> T:
        return T(dataset=MemoryDataset([Sample(input="hi", target="x", id=1)]), solver=generate())

    calls: list[str] = []
    run_task(ok(marker="a"), tmp_path / "logs", "mockllm/model", display="none", on_start=lambda: calls.append("a"))
    assert calls == ["a"]
    with pytest.raises(RunError) as e:
        run_task(ok(marker="b"), tmp_path / "logs", "mockllm/model", display="none", on_start=lambda: calls.append("b"))
    assert e.value.resume is Resume.SAME_OPTIONS_OR_NEW_FOLDER and "holds a run with other options" in e.value.problem
    assert calls == ["a"]  # refused before it started
    assert issubclass(hooks.OtherRunInFolder, RunError)


def _task_functions() -> list[tuple[str, list[str]]]:
    """``(module:function, decorator names)`` of every function under src/ decorated ``@task``."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.FunctionDef):
                names = [ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list]
                if "task" in names:
                    found.append((f"{path.relative_to(SRC)}:{node.name}", names))
    return found


def test_every_registered_task_refuses_its_arguments_in_one_line() -> None:
    """Each ``@task`` has shim 9 right beneath it (so ``inspect eval proagent/X`` refuses a bad ``-T`` in one line)."""
    tasks = _task_functions()
    assert len(tasks) >= 5, tasks
    assert all(names[names.index("task") + 1 :][:1] == ["task_input_errors"] for _, names in tasks), tasks


@pytest.mark.parametrize("name", ["help", "dialogue_plan"])
def test_inspect_eval_with_a_missing_data_path_is_one_line(tmp_path: Path, name: str) -> None:
    """Issue 35: ``inspect eval proagent/help -T data=/missing`` printed inspect's traceback."""
    import subprocess
    import sys

    missing = tmp_path / "missing"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "inspect_ai",
            "eval",
            f"proagent/{name}",
            "-T",
            f"data={missing}",
            "--model",
            "mockllm/model",
            "--log-dir",
            str(tmp_path / "logs"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**__import__("os").environ, "COLUMNS": "400"},
    )
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert "Traceback" not in out, out
    assert [line for line in out.splitlines() if line.strip()] == [f"Error: {missing}: no such file or folder"], out


def test_outside_inspects_command_line_the_error_is_unchanged(tmp_path: Path) -> None:
    from proagent.errors import DataError
    from proagent.live.tasks import help_task

    with pytest.raises(DataError) as e:
        help_task(data=str(tmp_path / "missing"))
    assert type(e.value) is DataError


def _inspect_eval(tmp_path: Path, name: str, args: list[str]) -> tuple[int, list[str]]:
    """``inspect eval proagent/NAME -T ARG ...`` in a subprocess: its exit code and non-blank lines."""
    import os
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", f"proagent/{name}"]
        + [x for a in args for x in ("-T", a)]
        + ["--model", "mockllm/model", "--log-dir", str(tmp_path / "logs")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "400"},
    )
    return r.returncode, [line for line in (r.stdout + r.stderr).splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("name", "args", "line"),
    [
        ("help", [], "Error: -T data=...: missing (a required argument of this task)"),
        ("help", ["data=missing", "seed=abc"], "Error: -T seed=abc: expected an integer"),
        ("help", ["data=missing", "send_screen=bad"], "Error: send_screen 'bad': choose from never, redacted, raw"),
        ("annotate_events", ["data=missing", "attempts=abc"], "Error: -T attempts=abc: expected an integer"),
        ("assist", ["data=missing", "seed=-1"], "Error: --seed: -1: expected an integer >= 0"),  # the parser's line
        # issue 46 item 11: inspect warned and ran without it (exit 0)
        ("assist", ["data=missing", "foo=1"], "Error: -T foo=...: not an argument of proagent/assist"),
        ("help", ["data=missing", "seeds=3"], "Error: -T seeds=...: not an argument of proagent/help"),
    ],
)
def test_inspect_eval_with_a_missing_or_malformed_argument_is_one_line(
    tmp_path: Path, name: str, args: list[str], line: str
) -> None:
    """A missing ``-T data=``, a non-numeric ``-T seed=abc`` and a ValueError while the task is
    built printed inspect's traceback."""
    code, lines = _inspect_eval(tmp_path, name, args)
    assert code != 0
    assert lines == [line], lines


def test_outside_inspects_command_line_arguments_are_not_bound_first() -> None:
    from proagent.live.tasks import help_task

    with pytest.raises(TypeError):  # Python's own error for a Python caller
        help_task()
    with pytest.raises(ValueError) as e:
        help_task(data="missing", send_screen="bad")
    assert type(e.value) is ValueError


def test_a_provider_error_is_read_from_under_inspects_request_dump() -> None:
    """Shim 10: ``ModelGenerateError``'s text is the request (the prompt); its line is the provider's error's."""
    from inspect_ai.model import _model

    try:
        try:
            raise ValueError("Error code: 400 - {'error': {'message': 'too long'}}")
        except ValueError as cause:
            raise _model.ModelGenerateError('\nRequest:\n{"messages": "the screen"}\n\nValueError()') from cause
    except RuntimeError as e:
        line = hooks.error_line(e)
    assert line == "ValueError: Error code: 400 - {'error': {'message': 'too long'}}"


def test_mockllm_needs_no_network_and_its_failure_is_not_an_apis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 46 item 11 (shim 11): inspect's mockllm counted tokens with tiktoken's table, downloaded on
    first use: offline, ``proagent eval --model mockllm/model`` failed and blamed "the model API".
    With no tiktoken cache and the network refused (the suite's guard), it runs."""
    import json

    from click.testing import CliRunner
    from inspect_ai.model import ModelAPI
    from inspect_ai.model._providers.mockllm import MockLLM

    from proagent.bench.running import endpoint_problem, remote_model
    from proagent.cli import cli

    monkeypatch.setattr(MockLLM, "count_text_tokens", ModelAPI.count_text_tokens)  # undo the suite's stand-in
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "no-tiktoken-cache"))
    monkeypatch.chdir(tmp_path)
    steps = [
        {
            "observation": {"time": str(1717377997.0 + 20 * i), "event": f"The user edits main.py, step {i}."},
            "agent_response": {"candidate_task": [f"Offer to refactor step {i}"]},
            "task_status": i % 3 == 2,
        }
        for i in range(6)
    ]
    (tmp_path / "s.json").write_text(json.dumps(steps))
    argv = ["eval", "--data", "s.json", "--model", "mockllm/model", "--split", "all", "--limit", "1"]
    r = CliRunner().invoke(cli, [*argv, "--log-dir", "logs"])
    assert r.exit_code == 0, r.output
    assert not remote_model("mockllm/model") and not remote_model("local/qwen2.5-coder-1.5b")
    assert remote_model("openai-api/vllm/m") and endpoint_problem({"APIConnectionError"}, "", "h", None)


def test_shims_11_and_12_find_what_they_patch() -> None:
    from inspect_ai._eval import registry
    from inspect_ai.model._providers.mockllm import MockLLM

    assert hooks.hook_mock_token_count() is True and getattr(MockLLM.count_text_tokens, "_proagent", False)
    assert "not used by task '{name}'" in inspect.getsource(registry.task_create)
    assert hooks.hook_unknown_task_args() is True
    assert any(getattr(f, "_proagent", False) for f in registry.logger.filters)
