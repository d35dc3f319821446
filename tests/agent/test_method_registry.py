"""The prompting-method registry (issue 25 item 3): a method is one ``register_method``
entry beside its ``@solver``; the commands' choices, the ``assist`` task, the answer budget,
the threshold rule and the prompt all read it."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.solver import Solver, solver
from shared_data import DEV

from proagent.agent.prompting import instruction_text, observation_prompt
from proagent.agent.solvers import METHODS, _single, check_threshold, method_solver, register_method, user_prompt
from proagent.bench.scorers import assist_scorer
from proagent.bench.tasks import assist, to_inspect_samples
from proagent.cli import cli
from proagent.cli._options import method_names
from proagent.errors import UsageError


@pytest.fixture
def new_method():
    """A method added through the registry alone (and removed again)."""

    @register_method("terse-cot", prompt="cot.txt", max_tokens=123)
    @solver
    def terse_cot(images: bool = False) -> Solver:
        return _single("terse-cot", images)

    yield METHODS["terse-cot"]
    del METHODS["terse-cot"]


def test_builtin_methods_declare_prompt_budget_and_p_yes() -> None:
    assert list(METHODS)[:3] == ["zero-shot", "cot", "sc"]
    assert [(m.prompt, m.max_tokens, m.p_yes) for m in list(METHODS.values())[:3]] == [
        ("zero_shot.txt", 96, True),
        ("cot.txt", 400, True),
        ("cot.txt", 400, False),
    ]


def test_a_registered_method_is_a_choice_of_the_commands_and_the_task(new_method) -> None:
    assert "terse-cot" in method_names()
    r = CliRunner().invoke(cli, ["eval", "--help"])
    assert r.exit_code == 0 and "terse-cot" in r.output
    # the threshold rule reads its p_yes flag (not declared: refused)
    with pytest.raises(UsageError, match="needs --method zero-shot or cot"):
        check_threshold(0.5, "terse-cot")
    if DEV is None:
        pytest.skip("no ProactiveBench dev sessions")
    task = assist(data=str(DEV / "code_13.json"), method="terse-cot", split="all")
    assert task.config.max_tokens == 123 and task.metadata["method"] == "terse-cot"


def test_an_unknown_method_is_a_usage_error() -> None:
    with pytest.raises(UsageError) as e:
        method_solver("magic")
    assert e.value.option == "--method" and "zero-shot" in e.value.problem
    r = CliRunner().invoke(cli, ["eval", "--data", ".", "--method", "magic"])
    assert r.exit_code == 2 and "--method" in r.output


def test_a_taken_name_or_a_missing_prompt_is_refused() -> None:
    with pytest.raises(ValueError, match="already registered"):
        register_method("cot", prompt="cot.txt", max_tokens=1)(lambda: None)
    with pytest.raises(FileNotFoundError):
        register_method("no-prompt", prompt="no_such_prompt.txt", max_tokens=1)(lambda: None)
    assert "no-prompt" not in METHODS


def _sent_user_messages(method: str, samples) -> list[str]:
    seen: list[str] = []

    def answer(messages, tools, tool_choice, config):
        seen.append(next(m.text for m in messages if m.role == "user"))
        out = ModelOutput.from_content(model="mockllm", content="Need help: No\nIntention: Uncategorized\nQuery: N/A")
        out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return out

    task = Task(
        dataset=MemoryDataset(to_inspect_samples(samples)),
        solver=method_solver(method, sc_samples=2),
        scorer=assist_scorer(),
    )
    logs = eval(
        task,
        model=get_model("mockllm/model", custom_outputs=answer),
        display="none",
        log_dir="logs",
        log_format="json",
        max_samples=1,
    )
    assert logs[0].status == "success", logs[0].error
    return seen


@pytest.mark.parametrize("method", ["zero-shot", "cot", "sc"])
def test_each_solver_sends_its_own_instruction_after_the_observation(method, tmp_path, monkeypatch) -> None:
    """chain_of_thought sends the four steps, zero-shot the task alone: the dataset is the
    observation, each method's solver adds its declared instruction (what user_prompt renders)."""
    from proagent.bench.samples import SampleConfig, build_samples
    from proagent.sources.load import load_events

    if DEV is None:
        pytest.skip("no ProactiveBench dev sessions")
    monkeypatch.chdir(tmp_path)
    samples = build_samples(load_events(str(DEV / "code_13.json")), SampleConfig())[:2]
    sent = _sent_user_messages(method, samples)
    assert len(sent) == len(samples) * (2 if method == "sc" else 1)
    want = [user_prompt(s, method) for s in samples]
    assert sorted(set(sent)) == sorted(want)
    steps = "Step 1 (Describe)" in sent[0]
    assert steps is (method != "zero-shot")
    for s, text in zip(samples, want):
        assert text == f"{observation_prompt(s)}\n\n{instruction_text(METHODS[method].prompt)}"


def _help(*argv: str) -> str:
    r = CliRunner().invoke(cli, [*argv, "--help"])
    assert r.exit_code == 0, r.output
    return " ".join(r.output.split())


def test_ablate_help_lists_a_method_and_a_memory_registered_later(new_method) -> None:
    """``ablate --methods``/``--memory`` help is built from the registries when shown (issue 38 item 1)."""
    from proagent.agent.memory import MEMORIES, RagMemory, memory_names, register_memory

    assert "Comma-separated methods: zero-shot, cot, sc, terse-cot." in _help("ablate")

    class Diary(RagMemory):
        name = "diary"

    register_memory(Diary)
    try:
        assert memory_names()[-1] == "diary"
        assert "Comma-separated memories: none, rag, kg, persona, diary." in _help("ablate")
        r = CliRunner().invoke(cli, ["eval", "--data", ".", "--memory", "nope"])
        assert r.exit_code == 2 and "diary" in r.output
    finally:
        del MEMORIES["diary"]
    assert "diary" not in _help("ablate")
