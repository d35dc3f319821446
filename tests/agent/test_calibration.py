"""Calibrated When-to-Assist: P(Yes) from token log-probabilities, the threshold
chosen on the train split, and the scorer deciding by it."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from inspect_ai import eval as inspect_eval
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    Logprob,
    Logprobs,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    TopLogprob,
    modelapi,
)

from proagent.agent.calibration import p_yes_from_logprobs, youden_threshold
from proagent.bench.tasks import assist
from proagent.cli import cli

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "proactivebench"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data/proactivebench not present")


def _lp(tokens: list[tuple[str, float, dict[str, float]]]) -> Logprobs:
    return Logprobs(
        content=[
            Logprob(token=t, logprob=lp, top_logprobs=[TopLogprob(token=k, logprob=v) for k, v in top.items()])
            for t, lp, top in tokens
        ]
    )


def _answer(decision: str, p_yes: float) -> Logprobs:
    """'Need help: <decision>' with P(' Yes') = p_yes and P(' No') = 1 - p_yes (minus a little mass elsewhere)."""
    top = {
        " Yes": math.log(max(p_yes, 1e-9) * 0.9),
        " No": math.log(max(1 - p_yes, 1e-9) * 0.9),
        " Maybe": math.log(0.1),
    }
    return _lp(
        [
            ("Need", -0.01, {}),
            (" help", -0.01, {}),
            (":", -0.01, {}),
            (f" {decision}", top[f" {decision}"], top),
            ("\n", -0.1, {}),
        ]
    )


def test_p_yes_is_the_normalised_yes_mass():
    assert p_yes_from_logprobs(_answer("Yes", 0.7)) == pytest.approx(0.7)
    assert p_yes_from_logprobs(_answer("No", 0.2)) == pytest.approx(0.2)
    # casing and markdown variants of the same answer add up
    lp = _lp(
        [
            ("**Need help:**", -0.1, {}),
            (" yes", math.log(0.5), {" yes": math.log(0.5), " YES": math.log(0.1), " no": math.log(0.2)}),
        ]
    )
    assert p_yes_from_logprobs(lp) == pytest.approx(0.6 / 0.8)


def test_p_yes_is_none_without_a_decision():
    assert p_yes_from_logprobs(None) is None
    assert p_yes_from_logprobs(Logprobs(content=[])) is None
    no_label = _lp(
        [
            ("The", -0.1, {}),
            (" user", -0.1, {}),
            (" needs", -0.1, {}),
            (" help", -0.1, {}),
            (" now", -0.1, {" now": -0.1}),
        ]
    )
    assert p_yes_from_logprobs(no_label) is None
    not_yes_no = _lp(
        [("Need", 0, {}), (" help", 0, {}), (":", 0, {}), (" Unclear", -0.1, {" Unclear": -0.1, " Yes": -3})]
    )
    assert p_yes_from_logprobs(not_yes_no) is None


def test_p_yes_takes_the_last_decision_and_reads_chinese():
    first = _answer("No", 0.1).content
    last = _answer("Yes", 0.8).content
    assert p_yes_from_logprobs(Logprobs(content=first + [Logprob(token="\n", logprob=0)] + last)) == pytest.approx(0.8)
    zh = _lp(
        [("需要帮助", -0.1, {}), ("：", -0.1, {}), ("否", math.log(0.75), {"否": math.log(0.75), "是": math.log(0.25)})]
    )
    assert p_yes_from_logprobs(zh) == pytest.approx(0.25)


def test_choose_threshold_separates_and_refuses_one_class():
    p = [0.91, 0.92, 0.95, 0.97, 0.93, 0.96, 0.98, 0.99]
    y = [0, 0, 1, 1, 0, 1, 1, 1]
    t = youden_threshold(p, y)
    assert all((a >= t) == bool(b) for a, b in zip(p, y))  # perfectly separable: balanced accuracy 1
    with pytest.raises(ValueError, match="both positive and negative"):
        youden_threshold([0.2, 0.9], [1, 1])
    with pytest.raises(ValueError, match="labels"):
        youden_threshold([0.2], [1, 0])


# --------------------------------------------------------------------------- through inspect and the CLI


def _p_for(prompt: str) -> float:
    """A deterministic P(Yes) in [0.55, 0.95] per prompt: the text answer is always Yes."""
    return 0.55 + 0.4 * hashlib.sha256(prompt.encode()).digest()[0] / 255


def _sent(observation: str) -> str:
    """The user message the zero-shot solver sends for a sample input (its instruction last)."""
    from proagent.agent.prompting import instruction_text
    from proagent.agent.solvers import METHODS

    return f"{observation}\n\n{instruction_text(METHODS['zero-shot'].prompt)}"


@modelapi(name="yesman")
class YesManAPI(ModelAPI):
    """Always answers Yes in text, with a prompt-dependent P(Yes) in its log-probabilities."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args,
    ) -> None:  # noqa: ANN003
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input: list[ChatMessage], tools, tool_choice, config) -> ModelOutput:  # noqa: A002, ANN001
        text = "Need help: Yes\nIntention: Code Programming\nQuery: how do I fix this?"
        lp = _answer("Yes", _p_for(input[-1].text)) if config.logprobs else None
        return ModelOutput(
            model=self.model_name,
            choices=[
                ChatCompletionChoice(
                    message=ChatMessageAssistant(content=text, model=self.model_name), stop_reason="stop", logprobs=lp
                )
            ],
            usage=ModelUsage(input_tokens=100, output_tokens=20, total_tokens=120),
        )


@needs_shared
def test_scorer_decides_by_threshold(tmp_path):
    task = assist(str(SHARED), threshold=0.75, split="all")
    [log] = inspect_eval(task, model="yesman/x", limit=12, display="none", log_dir=str(tmp_path))
    prompts = {s.id: s.input for s in task.dataset}
    for s in log.samples:
        pred = s.scores["assist_scorer"].metadata["prediction"]
        assert pred["needs_help"] is True  # the text says Yes ...
        assert pred["p_yes"] == pytest.approx(_p_for(_sent(prompts[s.id])))
        assert s.scores["assist_scorer"].value["predicted"] == int(pred["p_yes"] >= 0.75)  # ... the threshold decides
    assert len({s.scores["assist_scorer"].value["predicted"] for s in log.samples}) == 2


@needs_shared
def test_eval_threshold_auto_chooses_on_train_and_applies_to_test(tmp_path):
    log_dir = tmp_path / "run"
    r = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(SHARED),
            "--model",
            "yesman/x",
            "--threshold",
            "auto",
            "--log-dir",
            str(log_dir),
            "--display",
            "none",
        ],
    )
    assert r.exit_code == 0, r.output
    res = json.loads((log_dir / "results.json").read_text())
    cal = res["calibration"]
    # the threshold is the balanced-accuracy choice over the train split's P(Yes)
    train = assist(str(SHARED), split="train")
    labels = [s.metadata["label"] for s in train.dataset]
    assert cal["threshold"] == pytest.approx(youden_threshold([_p_for(_sent(s.input)) for s in train.dataset], labels))
    assert cal["n_train"] == len(labels) and res["run"]["task_args"]["threshold"] == pytest.approx(cal["threshold"])
    assert "P(Yes) >=" in r.output
    assert res["recall"] < 1.0  # no longer the always-yes answer
    assert (tmp_path / "run-calibration").is_dir() and not (log_dir / "calibration").exists()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--threshold", "1.5"], "expected a number in [0, 1]"),
        (["--threshold", "high"], "expected a number in [0, 1]"),
        (["--threshold", "0.5", "--method", "sc"], "zero-shot or cot"),
        (["--threshold", "auto", "--split", "train"], "needs --split test"),
    ],
)
def test_eval_threshold_is_checked_before_running(tmp_path, extra, message):
    r = CliRunner().invoke(cli, ["eval", "--data", str(tmp_path), "--model", "yesman/x", *extra])
    assert r.exit_code != 0 and message in r.output


@needs_shared
def test_auto_threshold_without_logprobs_is_a_clear_error(tmp_path):
    r = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(SHARED),
            "--model",
            "mockllm/model",
            "--threshold",
            "auto",
            "--limit",
            "3",
            "--log-dir",
            str(tmp_path / "l"),
            "--display",
            "none",
        ],
    )
    assert r.exit_code != 0 and "no readable P(Yes)" in r.output


def test_local_provider_converts_llama_cpp_logprobs():
    from proagent.models.local import _logprobs

    raw = {
        "content": [
            {
                "id": 1,
                "token": " Yes",
                "bytes": [32],
                "logprob": -0.2,
                "top_logprobs": [
                    {"id": 1, "token": " Yes", "logprob": -0.2},
                    {"id": 2, "token": " No", "logprob": -1.7},
                ],
            }
        ]
    }
    lp = _logprobs(raw)
    assert [t.token for t in lp.content] == [" Yes"] and lp.content[0].logprob == -0.2
    assert [(a.token, a.logprob) for a in lp.content[0].top_logprobs] == [(" Yes", -0.2), (" No", -1.7)]
    assert _logprobs(None) is None and _logprobs({"content": []}) is None


def test_echoed_template_underflow_and_json_label():
    echo = _lp(
        [
            ("Need", 0, {}),
            (" help", 0, {}),
            (":", 0, {}),
            (" Yes", -0.3, {" Yes": -0.3, " No": -1.5}),
            (" or", -0.1, {}),
            (" No", -0.1, {}),
        ]
    )
    assert p_yes_from_logprobs(echo) is None  # the template, not a decision
    tiny = _lp([("Need help:", 0, {}), (" Yes", -800, {" Yes": -800, " No": -900})])
    assert p_yes_from_logprobs(tiny) is None  # no crash when every probability underflows
    js = _lp(
        [
            ('{"', 0, {}),
            ("Need", 0, {}),
            (" help", 0, {}),
            ('":', 0, {}),
            (' "', 0, {}),
            ("No", math.log(0.6), {"No": math.log(0.6), "Yes": math.log(0.4)}),
        ]
    )
    assert p_yes_from_logprobs(js) == pytest.approx(0.4)


def test_choose_threshold_never_returns_the_never_yes_point():
    # sklearn's first ROC threshold is +inf ("never Yes"); clamped to 1.0 it would call p = 1.0 Yes
    assert youden_threshold([1.0, 0.0], [0, 1]) == 0.0
    t = youden_threshold([1.0, 1.0, 0.2, 0.9], [1, 1, 0, 0])
    assert 0.9 < t <= 1.0
