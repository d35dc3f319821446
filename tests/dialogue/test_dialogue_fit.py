"""The context pre-check of ``proagent dialogue`` (:mod:`proagent.dialogue.fit`): a run whose longest
call cannot fit a local model's context is refused in seconds, before any model is loaded, with
advice that works (a larger ``n_ctx`` or fewer ``--max-turns`` passes the same check)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from proagent.dialogue.fit import CHARS_PER_TOKEN, check_context, guide_calls, text_tokens
from proagent.dialogue.guidance import dialogue_guide
from proagent.dialogue.planning import dialogue_plan
from proagent.errors import UsageError

SMOL = "local/smollm2-135m"
ENV = {
    "id": "rec-001",
    "domain": "recommendation",
    "topic": "hobbies/cycling",
    "environment": {
        "user_information": "A commuter whose tyre went flat twice this month. " * 4,
        "trigger_factor": "It is Saturday morning and the bike shop opens at nine.",
    },
    "target": "Recommend puncture-resistant tyres.",
    "sub_target": ["Ask about the route", "Suggest tyres"],
}


@pytest.fixture
def envs(tmp_path: Path) -> Path:
    p = tmp_path / "envs.jsonl"
    p.write_text(json.dumps(ENV) + "\n", "utf-8")
    return p


def _guide(envs: Path, **kw):  # noqa: ANN202
    opts = {"max_turns": 6, "memory_turns": 3, "give_target": True, "density": False, **kw}
    return dialogue_guide(data=str(envs), agreeableness="low", **opts), opts


def test_a_guide_over_the_context_is_refused_with_advice_that_works(envs: Path) -> None:
    task, opts = _guide(envs)
    with pytest.raises(UsageError) as e:
        check_context(task, SMOL, {}, {"judge": SMOL, "user": SMOL}, **opts)  # SmolLM2's default n_ctx: 2048
    assert e.value.option == "--model-arg n_ctx"
    m = re.search(
        r"the guidance judge's follow-up over 6 turns \(sample rec-001:low\) needs about (\d+) tokens, more "
        r"than the 2048-token context of local/smollm2-135m: pass --model-arg n_ctx=(\d+) or --max-turns (\d)",
        str(e.value),
    )
    assert m, str(e.value)
    need, n_ctx, turns = map(int, m.groups())
    assert 2048 < need <= n_ctx
    check_context(task, SMOL, {"n_ctx": str(n_ctx)}, {"judge": SMOL, "user": SMOL}, **opts)  # the advice passes
    fewer, opts_fewer = _guide(envs, max_turns=turns)
    check_context(fewer, SMOL, {}, {"judge": SMOL, "user": SMOL}, **opts_fewer)
    more, opts_more = _guide(envs, max_turns=turns + 1)
    with pytest.raises(UsageError):  # and it is the most that fits
        check_context(more, SMOL, {}, {"judge": SMOL, "user": SMOL}, **opts_more)


def test_the_estimate_grows_with_the_turns_and_the_answer_budgets(envs: Path) -> None:
    from proagent.dialogue.guidance import AGENT_MAX_TOKENS, USER_MAX_TOKENS
    from proagent.dialogue.planning import env_from_metadata

    task, _ = _guide(envs)
    env = env_from_metadata(list(task.dataset)[0].metadata)
    one, two = (
        {
            c.what.split(" over")[0]: c.tokens
            for c in guide_calls(env, "low", "s", max_turns=t, memory_turns=3, give_target=True, density=False)
        }
        for t in (1, 2)
    )
    assert (
        two["the guidance judge's follow-up"] - one["the guidance judge's follow-up"]
        >= AGENT_MAX_TOKENS + USER_MAX_TOKENS
    )
    assert text_tokens("x" * 35) == 10 and CHARS_PER_TOKEN == 3.5


def test_other_models_and_fitting_runs_pass(envs: Path, tmp_path: Path) -> None:
    task, opts = _guide(envs)
    check_context(task, "mockllm/model", {}, {"judge": "mockllm/model"}, **opts)  # not local: its context is unknown
    check_context(task, "local/qwen2.5-coder-1.5b", {}, {"judge": "local/qwen2.5-coder-1.5b"}, **opts)  # 4096
    check_context(dialogue_plan(data=str(envs)), SMOL, {}, {"judge": SMOL})  # planning fits 2048
    with pytest.raises(UsageError) as e:  # a judge of its own: --model-arg does not reach it
        check_context(task, "mockllm/model", {"n_ctx": "8192"}, {"judge": SMOL, "user": "mockllm/model"}, **opts)
    assert e.value.option == "--judge" and "choose a judge model with a larger context" in str(e.value)
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "old.eval").write_bytes(b"")
    with pytest.raises(UsageError) as e:  # an earlier run there: another n_ctx needs another folder
        check_context(task, SMOL, {}, {"judge": SMOL}, log_dir=logs, **opts)
    assert f"{logs} holds logs of an earlier run: with another n_ctx choose a new --log-dir" in str(e.value)


def test_the_command_refuses_in_seconds_and_leaves_nothing(envs: Path, tmp_path: Path, monkeypatch) -> None:
    from proagent.cli import cli

    monkeypatch.chdir(tmp_path)
    t0 = time.monotonic()
    r = CliRunner().invoke(cli, ["dialogue", "guide", "--data", str(envs), "--model", SMOL, "--limit", "1"])
    seconds = time.monotonic() - t0
    assert r.exit_code == 2 and r.output.count("Error:") == 1, r.output
    assert "--model-arg n_ctx" in r.output and "pass --model-arg n_ctx=4096" in r.output
    assert seconds < 30 and not (tmp_path / "logs").exists()  # no model loaded, no folder made (114 s before)


@pytest.mark.slow
def test_the_chars_per_token_bound_holds_for_the_models_tokenizers() -> None:
    """Every fixed prompt of the seed environments has at most ``text_tokens`` tokens with
    SmolLM2's own tokenizer (read from its GGUF file by transformers, the train extra)."""
    pytest.importorskip("transformers")
    pytest.importorskip("gguf")
    from shared_data import DEV
    from transformers import AutoTokenizer

    from proagent.dialogue.io import read_environments
    from proagent.dialogue.prompting import AGREEABLENESS_TEXT, env_values, render
    from proagent.models.catalog import resolve_gguf

    seed = DEV.parent / "proactiveeval-seed" if DEV else None
    if seed is None or not seed.exists():
        pytest.skip("seed environments not present")
    gguf = resolve_gguf("smollm2-135m")
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    for e in read_environments(seed):
        v = env_values(e)
        for text in (
            render("plan_user", **v),
            render("guide_agent", **v),
            render("user_sim", **v, agreeableness=AGREEABLENESS_TEXT["low"]),
            render("guide_judge", **v, agreeableness="low", history=""),
            render("plan_judge", **v, candidate_target="", candidate_sub_target=""),
        ):
            assert len(tok.encode(text, add_special_tokens=False)) <= text_tokens(text), text[:80]
