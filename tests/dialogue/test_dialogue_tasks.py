"""The planning and guidance tasks, driven by mockllm with scripted, role-aware outputs.

Every scripted ModelOutput carries its usage, so mockllm never counts tokens with
tiktoken (which would download); a socket guard fails any network access.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from proagent.dialogue.guidance import dialogue_guide
from proagent.dialogue.planning import dialogue_plan

ENVS = [
    {
        "id": f"{d}-1",
        "domain": d,
        "topic": "t",
        "environment": {"user_information": f"info about {d} user", "trigger_factor": f"trigger in {d}"},
        "target": f"TARGET-{d}",
        "sub_target": ["first step", "second step", "third step"],
    }
    for d in ("recommendation", "persuasion")
]


@pytest.fixture
def data(tmp_path):
    p = tmp_path / "envs.jsonl"
    p.write_text("".join(json.dumps(e) + "\n" for e in ENVS), "utf-8")
    return str(p)


def out(text: str) -> ModelOutput:
    o = ModelOutput.from_content(model="mockllm", content=text)
    o.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return o


def kind(messages) -> str:
    """Which prompt a scripted model is answering."""
    text = "\n".join(m.text for m in messages)
    if "did not end with" in messages[-1].text:
        return "followup"
    for key, name in (
        ("Reply with JSON only", "plan"),
        ("Now judge this case", "plan_judge"),
        ('"Reached: yes"', "reached"),
        ("Answer in this format", "guide_judge"),
        ("Mentioned:", "density"),
        ("role-playing", "user"),
        ("Write your next message", "agent"),
    ):
        if key in text:
            return name
    raise AssertionError(f"unknown prompt: {text[:200]}")


class Script:
    """A role-aware scripted model: ``answers[kind]`` is a string or a function of the call number."""

    def __init__(self, **answers: str | Callable[[int], str]) -> None:
        self.answers = answers
        self.calls: dict[str, list] = {}

    def __call__(self, input, tools, tool_choice, config):  # noqa: ANN001
        k = kind(input)
        self.calls.setdefault(k, []).append(input)
        if k not in self.answers:
            raise AssertionError(f"this model should not get {k} prompts")
        a = self.answers[k]
        return out(a(len(self.calls[k])) if callable(a) else a)

    def model(self):
        return get_model("mockllm/model", custom_outputs=self)


def run(task, agent: Script, judge: Script | None = None, user: Script | None = None, **kw):
    roles = {}
    if judge:
        roles["judge"] = judge.model()
    if user:
        roles["user"] = user.model()
    [log] = inspect_eval(
        task, model=agent.model(), model_roles=roles or None, display="none", log_dir=kw.pop("log_dir"), **kw
    )
    assert log.status == "success", log.error
    return log


def metrics(log, scorer: str = None) -> dict:
    s = next(s for s in log.results.scores if scorer is None or s.name == scorer)
    return {k: v.value for k, v in s.metrics.items()}


# --------------------------------------------------------------------------- planning


def test_plan_scores_per_domain(data, tmp_path):
    agent = Script(plan='{"target": "T", "sub_target": ["a", "b"]}')
    judge = Script(plan_judge=lambda n: f"Reasoning: compared with the reference.\nScore: {[8, 4][n - 1]}")
    log = run(dialogue_plan(data=data), agent, judge, log_dir=str(tmp_path))
    m = metrics(log)
    assert m["judge_mean"] == 6.0 and m["judge_unparsed_rate"] == 0.0
    assert m["recommendation"] == 8.0 and m["persuasion"] == 4.0
    # the judge saw the reference and the candidate
    first = "\n".join(x.text for x in judge.calls["plan_judge"][0])
    assert "TARGET-recommendation" in first and "Candidate target: T" in first and "Example 1" in first


def test_plan_unparsed_plan_and_unparsed_judge(data, tmp_path):
    agent = Script(plan=lambda n: "I would help them." if n == 1 else '{"target": "T", "sub_target": []}')
    judge = Script(plan_judge="The candidate is decent but I will not give a number.", followup="No.")
    log = run(dialogue_plan(data=data), agent, judge, log_dir=str(tmp_path))
    vals = {s.id: s.scores["plan_judge"].value for s in log.samples}
    assert vals["recommendation-1"] == {"score": -1.0, "plan_parsed": 0, "judge_parsed": 0}
    assert vals["persuasion-1"] == {"score": -1.0, "plan_parsed": 1, "judge_parsed": 0}
    assert len(judge.calls["plan_judge"]) == 1  # an unreadable plan is not sent to the judge
    assert len(judge.calls["followup"]) == 1  # the unreadable judgement was asked once more, in vain
    assert metrics(log)["judge_unparsed_rate"] == 1.0


def test_judge_that_rambles_is_asked_for_the_score_lines(data, tmp_path):
    agent = Script(plan='{"target": "T", "sub_target": ["a"]}')
    ramble = "Reasoning: " + "The candidate addresses the need. " * 20  # cut off before any score
    judge = Script(plan_judge=ramble, followup="Score: 7")
    log = run(dialogue_plan(data=data), agent, judge, log_dir=str(tmp_path))
    assert metrics(log)["judge_mean"] == 7.0 and metrics(log)["judge_unparsed_rate"] == 0.0
    follow = judge.calls["followup"][0]
    assert [m.role for m in follow] == ["user", "assistant", "user"] and follow[1].text == ramble
    # a judgement that parses the first time is not followed up
    judge2 = Script(plan_judge="Reasoning: fine.\nScore: 5")
    run(dialogue_plan(data=data), agent, judge2, log_dir=str(tmp_path / "b"))
    assert "followup" not in judge2.calls


# --------------------------------------------------------------------------- guidance


GOOD_JUDGE = (
    "Reasoning: personal and gentle.\nEffectiveness: 8\nPersonalization: 7\nTone: 9\nEngagement: 6\n"
    "Naturalness: 8\nScore: 8"
)


def agent_script() -> Script:
    return Script(agent=lambda n: f"Assistant: message {n}")


def test_early_termination(data, tmp_path):
    agent = agent_script()
    judge = Script(
        reached=lambda n: "The user agreed.\nReached: yes" if n == 2 else "Not yet.\nReached: no",
        user=lambda n: f"reply {n}",
        guide_judge=GOOD_JUDGE,
    )
    log = run(
        dialogue_guide(data=data, agreeableness="high", domains="recommendation"), agent, judge, log_dir=str(tmp_path)
    )
    [s] = log.samples
    assert s.metadata["turns"] == 2 and s.metadata["reached"] is True
    assert [t["content"] for t in s.metadata["dialogue"]] == ["message 1", "reply 1", "message 2", "reply 2"]
    v = s.scores["guide_judge"].value
    assert v["score"] == 8 and v["tone"] == 9 and v["reached"] == 1 and v["turns"] == 2
    assert v["leak"] == 0 and v["passive_opening"] == 0
    # user role falls back to the judge, at temperature 0
    assert len(judge.calls["user"]) == 2 and "agent" not in judge.calls
    m = metrics(log)
    assert m["recommendation/high"] == 8.0 and m["reach_rate"] == 1.0 and m["mean_turns"] == 2.0


def test_turn_limit_and_memory_window(data, tmp_path):
    agent = agent_script()
    judge = Script(reached="Reasoning: no agreement.\nReached: no", guide_judge=GOOD_JUDGE)
    user = Script(user=lambda n: f"reply {n}")
    log = run(
        dialogue_guide(data=data, agreeableness="low", domains="recommendation"),
        agent,
        judge,
        user,
        log_dir=str(tmp_path),
    )
    [s] = log.samples
    assert s.metadata["turns"] == 6 and s.metadata["reached"] is False
    assert len(agent.calls["agent"]) == 6 and len(user.calls["user"]) == 6 and "user" not in judge.calls
    # the agent's view at turn 5 holds turns 2-4 only; the user sees everything
    seen = "\n".join(m.text for m in agent.calls["agent"][4])
    assert "message 1" not in seen and "reply 1" not in seen
    assert all(f"message {i}" in seen and f"reply {i}" in seen for i in (2, 3, 4))
    assert "TARGET-recommendation" in seen  # the target is given
    user_view = "\n".join(m.text for m in user.calls["user"][5])
    assert "message 1" in user_view and "message 6" in user_view and "low agreeableness" in user_view
    assert "TARGET" not in user_view  # the simulated user does not know the target
    # the agent's view is stored for inspection
    assert s.metadata["agent_inputs"][0].startswith("(The conversation has not started")


def test_turn_and_memory_options(data, tmp_path):
    agent = agent_script()
    judge = Script(reached="Reached: no", user="ok", guide_judge=GOOD_JUDGE)
    log = run(
        dialogue_guide(data=data, agreeableness="medium", domains="persuasion", max_turns=2, memory_turns=1),
        agent,
        judge,
        log_dir=str(tmp_path),
    )
    [s] = log.samples
    assert s.metadata["turns"] == 2
    seen = "\n".join(m.text for m in agent.calls["agent"][1])
    assert "message 1" in seen


def test_unreadable_verdicts_and_judge(data, tmp_path):
    agent = Script(agent="Sub-target 1: It sounds like you need tyres.")
    judge = Script(
        reached="Hmm, hard to say.",
        user="fine",
        guide_judge="The dialogue was okay overall, I guess.",
        followup="It was fine.",
    )
    log = run(
        dialogue_guide(data=data, agreeableness="low,high", domains="recommendation", max_turns=3),
        agent,
        judge,
        log_dir=str(tmp_path),
    )
    assert sorted(s.id for s in log.samples) == ["recommendation-1:high", "recommendation-1:low"]
    for s in log.samples:
        v = s.scores["guide_judge"].value
        assert s.metadata["turns"] == 3 and s.metadata["reached"] is None  # unreadable: not terminated
        assert v["termination_unparsed"] == 3 and v["score"] == -1.0 and v["judge_parsed"] == 0
        assert v["leak"] == 1 and v["passive_opening"] == 0  # "Sub-target 1:" comes first
    m = metrics(log)
    assert m["judge_unparsed_rate"] == 1.0 and m["judge_mean"] == 0.0 and m["leak_rate"] == 1.0


def test_no_target_variant_and_density(data, tmp_path):
    agent = agent_script()
    judge = Script(
        reached=lambda n: "Reached: yes", user="sure", guide_judge=GOOD_JUDGE, density=lambda n: "Mentioned: 1, 2"
    )
    log = run(
        dialogue_guide(data=data, agreeableness="high", give_target=False, density=True, domains="persuasion"),
        agent,
        judge,
        log_dir=str(tmp_path),
    )
    seen = "\n".join(m.text for m in agent.calls["agent"][0])
    assert "TARGET" not in seen and "first step" not in seen
    # the judges still see the reference target
    assert "TARGET-persuasion" in "\n".join(m.text for m in judge.calls["guide_judge"][0])
    [s] = log.samples
    assert s.scores["target_density"].value == {"density": 2.0, "first_density": 2, "density_unparsed": 0}
    assert metrics(log, "target_density")["density_mean"] == 2.0


def test_bad_agreeableness(data):
    with pytest.raises(ValueError, match="agreeableness"):
        dialogue_guide(data=data, agreeableness="grumpy")
    with pytest.raises(ValueError, match="no environments"):
        dialogue_guide(data=data, domains="nope")


def test_guidance_judge_follow_up_reads_the_dimensions(data, tmp_path):
    agent = Script(agent="Hi! Shall we look at your options together?")
    judge = Script(
        reached="Reached: yes",
        user="Sure.",
        guide_judge="Reasoning: " + "It was gentle. " * 30,
        followup=GOOD_JUDGE.split("\n", 1)[1],
    )
    log = run(
        dialogue_guide(data=data, agreeableness="medium", domains="recommendation"), agent, judge, log_dir=str(tmp_path)
    )
    [s] = log.samples
    v = s.scores["guide_judge"].value
    assert v["judge_parsed"] == 1 and v["score"] == 8.0 and v["tone"] == 9.0 and v["engagement"] == 6.0


def _outputs(*items):
    """mockllm outputs; an item (text, True) was cut off by the token budget."""
    res = []
    for it in items:
        text, cut = it if isinstance(it, tuple) else (it, False)
        o = out(text)
        if cut:
            o.choices[0].stop_reason = "max_tokens"
        res.append(o)
    return get_model("mockllm/model", custom_outputs=res)


@pytest.mark.parametrize(
    "first, followup, score",
    [
        (("Reasoning: a score of 10 is for plans better than the reference; this one", True), "Score: 4", 4.0),
        ("Reasoning: decent.", "4", 4.0),  # a bare number answers "Score:" too
        ("Reasoning: decent.", "I cannot say.", None),
        ("Reasoning: decent.\nScore: 6", None, 6.0),  # complete: no follow-up asked
    ],
)
def test_plan_judge_follow_up_cases(data, first, followup, score):
    import asyncio

    from proagent.dialogue import read_environments
    from proagent.dialogue.judges import judge_plan
    from proagent.dialogue.parsing import parse_plan

    env = read_environments(data)[0]
    model = _outputs(first, *([followup] if followup is not None else []))
    j = asyncio.run(judge_plan(model, env, parse_plan('{"target": "T", "sub_target": ["a"]}')))
    assert j.score == score
    assert "[score follow-up]" not in j.reasoning


def test_guidance_follow_up_scores_replace_numbers_in_the_reasoning(data):
    import asyncio

    from proagent.dialogue import read_environments
    from proagent.dialogue.judges import judge_guidance
    from proagent.dialogue.records import Turn

    env = read_environments(data)[0]
    turns = [Turn("assistant", "Hi"), Turn("user", "Hello")]
    first = ("Reasoning: Tone: 7 because it was warm; Effectiveness: 9 at first glance, but", True)
    j = asyncio.run(judge_guidance(_outputs(first, "3\n2\n5\n4\n2\n3"), env, turns, "medium"))
    assert j.score == 3.0 and j.dimensions == {
        "effectiveness": 3.0,
        "personalization": 2.0,
        "tone": 5.0,
        "engagement": 4.0,
        "naturalness": 2.0,
    }
    assert j.reasoning.startswith("Tone: 7") and "[score follow-up]" in j.raw
