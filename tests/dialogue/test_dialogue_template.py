"""ProactiveEval problems a new user found: a plan that echoes the prompt's JSON
template is unparsed (never judged), the run header counts what ``--limit``
keeps, and ``dialogue kappa`` says "1 id" / "N ids".

Models are inspect's mockllm with scripted outputs (no real model, no network).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from dialogue_fixtures import ITEMS, write_items
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from proagent.cli.dialogue import dialogue
from proagent.dialogue.parsing import is_plan_placeholder, parse_plan, plan_placeholders
from proagent.dialogue.planning import dialogue_plan
from proagent.dialogue.prompting import template_text
from proagent.jsontext import json_objects

# what SmolLM2-135M answered to plan_user: the template, verbatim
SMOLLM_ECHO = (
    '{"target": "one sentence: what you will proactively help the user achieve", '
    '"sub_target": ["first step of the conversation", "second step", "third step"]}'
)


def _template_json(name: str) -> dict:
    """The JSON answer template shown in ``prompts/<name>.txt`` (read from the file)."""
    [found] = [f for f in json_objects(template_text(name)) if isinstance(f.value, dict)]
    return found.value


@pytest.fixture(autouse=True)
def _in_tmp(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def data(tmp_path):
    return write_items(tmp_path)


def _snapshot(root):
    return sorted((str(p.relative_to(root)), p.stat().st_mtime_ns) for p in root.rglob("*"))


# --------------------------------------------------------------------------- the plan parser


def test_placeholders_are_read_from_the_prompt_files():
    tpl = _template_json("plan_user")
    texts = [tpl["target"], *tpl["sub_target"]]
    assert len(texts) >= 3
    for t in texts:
        assert t.lower() in plan_placeholders()
        assert is_plan_placeholder(t) and is_plan_placeholder(f'  "{t.upper()}." ')
    merge = _template_json("gen_target_merge")
    assert is_plan_placeholder(merge["target"]) and all(is_plan_placeholder(s) for s in merge["sub_target"])
    for real in ("Help the user book a table for tonight", "Ask about the budget", "second step: book the hotel"):
        assert not is_plan_placeholder(real)


@pytest.mark.parametrize(
    "answer",
    [
        SMOLLM_ECHO,
        json.dumps(_template_json("plan_user")),  # the template exactly as the prompt file shows it
        "```json\n" + SMOLLM_ECHO + "\n```",
        '{"target": "what you will proactively help the user achieve", "sub_target": ["a", "b"]}',  # label dropped
        '{"target": "Help them plan the trip", "sub_target": ["first step of the conversation", "second step"]}',
        json.dumps(_template_json("gen_target_merge")),  # {"target": "...", "sub_target": ["...", "..."]}
        "Target: one sentence: what you will proactively help the user achieve\n- first step of the conversation\n"
        "- second step\n- third step",
        '{"target": "Help them plan the trip", "sub_target": ["Ask the dates", "..."]}',
    ],
)
def test_echoed_template_is_unparsed(answer):
    plan = parse_plan(answer)
    assert not plan.parsed and plan.target is None and plan.parse_method == "unparsed"


def test_real_plan_after_an_echo_is_read():
    plan = parse_plan(SMOLLM_ECHO + '\nHere is mine:\n{"target": "Book a table", "sub_target": ["ask the time"]}')
    assert plan.parsed and plan.target == "Book a table" and plan.sub_target == ("ask the time",)
    plan = parse_plan(
        "Target: one sentence: what you will proactively help the user achieve\nTarget: Book a table\n- ask the time"
    )
    assert plan.target == "Book a table" and plan.parse_method == "lines"
    # a real plan with ordinary steps is untouched
    plan = parse_plan('{"target": "Book a table", "sub_target": ["first, ask the time", "then the place"]}')
    assert plan.parsed and plan.sub_target == ("first, ask the time", "then the place")


# --------------------------------------------------------------------------- the planning task


def _out(text: str) -> ModelOutput:
    o = ModelOutput.from_content(model="mockllm", content=text)
    o.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return o


def test_echoed_plan_is_scored_unparsed_and_never_judged(data, tmp_path):
    from proagent.dialogue.report import DialogueResults
    from proagent.report.results import results_from_log

    judge_calls = []

    def judge(input, tools, tool_choice, config):  # noqa: ANN001, ANN202
        judge_calls.append(input)
        return _out("Reasoning: excellent.\nScore: 10")

    agent = get_model("mockllm/model", custom_outputs=lambda *a: _out(SMOLLM_ECHO))
    [log] = inspect_eval(
        dialogue_plan(data=str(data)),
        model=agent,
        model_roles={"judge": get_model("mockllm/model", custom_outputs=judge)},
        display="none",
        log_dir=str(tmp_path / "logs"),
        limit=2,
    )
    assert log.status == "success", log.error
    for s in log.samples:
        assert s.scores["plan_judge"].value == {"score": -1.0, "plan_parsed": 0, "judge_parsed": 0}
        assert s.metadata["plan"]["target"] is None
    assert judge_calls == []  # the echo never reached the judge (which would have given 10)
    res = results_from_log(log, DialogueResults)
    assert res.n == 2 and res.score is None and res.plan.plan_unparsed_rate == 1.0 and res.unparsed_rate == 1.0


# --------------------------------------------------------------------------- the run header


@pytest.mark.parametrize("limit, shown", [(2, "2 samples,"), (1, "1 sample,"), (9, "3 samples,")])
def test_header_counts_what_limit_keeps(data, tmp_path, limit, shown):
    log_dir = tmp_path / "run"
    r = CliRunner().invoke(
        dialogue,
        [
            "plan",
            "--data",
            str(data),
            "--model",
            "mockllm/model",
            "--limit",
            str(limit),
            "--log-dir",
            str(log_dir),
            "--display",
            "none",
        ],
    )
    assert r.exit_code == 0, (r.output, r.exception)
    [header] = [line for line in r.stderr.splitlines() if line.startswith("proagent dialogue plan:")]
    assert f"plan: {shown} agent mockllm/model" in header, header
    res = json.loads((log_dir / "results.json").read_text("utf-8"))
    assert res["n"] == min(limit, len(ITEMS))


# --------------------------------------------------------------------------- kappa wording


def _kappa(tmp_path, human: str, samples: list[dict]):
    (tmp_path / "h.csv").write_text(human, "utf-8")
    (tmp_path / "results.json").write_text(json.dumps({"samples": samples}), "utf-8")
    before = _snapshot(tmp_path)
    r = CliRunner().invoke(
        dialogue,
        [
            "kappa",
            "--human",
            str(tmp_path / "h.csv"),
            "--results",
            str(tmp_path / "results.json"),
            "--out",
            str(tmp_path / "k.json"),
        ],
    )
    return r, before


@pytest.mark.parametrize(
    "human, phrase", [("id,human\na,8\nb,3\n", "only 1 id has both"), ("id,human\nx,8\ny,3\n", "only 0 ids have both")]
)
def test_kappa_too_few_common_ids(tmp_path, human, phrase):
    r, before = _kappa(tmp_path, human, [{"id": "a", "score": 8}, {"id": "z", "score": 5}])
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), (r.output, r.exception)
    errors = [line for line in r.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and phrase in errors[0] and "kappa needs at least 2" in errors[0], r.output
    assert "1 ids" not in r.output and "Traceback" not in r.output
    assert _snapshot(tmp_path) == before and not (tmp_path / "k.json").exists()


def test_kappa_unmatched_counts(tmp_path):
    r, _ = _kappa(
        tmp_path,
        "id,human\na,8\nb,3\nc,4\n",
        [{"id": "a", "score": 8}, {"id": "b", "score": 3}, {"id": "z", "score": 5}],
    )
    assert r.exit_code == 0, r.output
    assert "unmatched: 1 human-only, 1 judge-only id\n" in r.output
    r, _ = _kappa(
        tmp_path,
        "id,human\na,8\nb,3\n",
        [{"id": "a", "score": 8}, {"id": "b", "score": 3}, {"id": "y", "score": 5}, {"id": "z", "score": 5}],
    )
    assert r.exit_code == 0, r.output
    assert "unmatched: 0 human-only, 2 judge-only ids\n" in r.output
