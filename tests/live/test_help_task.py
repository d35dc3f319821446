"""The ``proagent/help`` inspect task (issue 32, item 6): at each LLM-use event with a recorded
reply, live's help (the same context and prompt files) is asked, and scored by e5 similarity to
the reply the person got and by a judge; inspect's mock model stands in for the model and the judge."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, get_model
from lifetrace_fixtures import make_lifetrace_db

from proagent.live.tasks import help_moments, help_task, judge_prompt, parse_judge_score
from proagent.sources.load import load_events

HOW = "Need help: Yes\nIntention: Debugging & Error Resolution\nQuery: How do I fix this error?"


def _mock(text: str):  # noqa: ANN202
    return get_model(
        "mockllm/model", custom_outputs=(ModelOutput.from_content("mockllm/model", text) for _ in itertools.count())
    )


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("help-task")
    fx = make_lifetrace_db(root / "P01" / "lifetrace.db", n_events=14, n_llm=3)
    return fx.path


def test_moments_are_the_llm_events_with_a_reply(log: Path) -> None:
    events = load_events(log)
    ms = help_moments(events)
    llm = [
        e
        for e in events
        if e.is_llm_event and e.conversation and e.conversation.user_queries and e.conversation.llm_responses
    ]
    assert ms and len(ms) <= len(llm)
    for s, q, reply in ms:
        e = next(x for x in llm if x.id == s.event_id)
        assert q == e.conversation.user_queries[0] and reply == e.conversation.llm_responses[0]
        assert s.time == e.start and all(c.start < e.start for c in s.context)  # before the person's own query


@pytest.mark.parametrize("condition", ["predicted", "real", "context-free"])
def test_help_task_scores_each_condition(log: Path, tmp_path: Path, condition: str) -> None:
    task = help_task(data=str(log), condition=condition)
    [res] = inspect_eval(
        task,
        model=_mock(HOW),
        model_roles={"judge": _mock("Score: 7 - specific and correct.")},
        display="none",
        log_dir=str(tmp_path / "logs"),
        max_samples=1,
    )
    assert res.status == "success", res.error
    ms = help_moments(load_events(log))
    assert len(res.samples) == len(ms)
    for sample in res.samples:
        s, true_q, reply = next(m for m in ms if m[0].id == sample.id)
        assert sample.target == reply
        sim = sample.scores["help_similarity"].value
        assert -1.0 <= sim <= 1.0 and sim != 0.0
        assert sample.scores["help_judge"].value == 7.0
        user = [m.text for m in sample.messages if m.role == "user"][0]
        md = sample.metadata
        if condition == "real":
            assert md["query"] == f"Question: {true_q}" and md["predicted_query"] is None
        else:
            assert (
                md["predicted_query"] == "How do I fix this error?"
                and md["query"] == "Question: How do I fix this error?"
            )
        if condition == "context-free":
            assert user == md["query"]  # no screen, events or app
        else:
            assert user.endswith(md["query"]) and (s.current.app_name or "(unknown)") in user  # live's help context
        assert md["send_screen"] == "raw" and len(md["sent"]["sha256"]) == 64
    metrics = {k: v.value for s in res.results.scores for k, v in s.metrics.items() if s.name == "help_judge"}
    assert metrics == {"judged_mean": 7.0, "unparsed": 0.0}


def test_judge_prompt_and_score_parsing() -> None:
    p = judge_prompt("CTX", "the question?", "the reply", "the help")
    assert "CTX" in p and "the question?" in p and "the reply" in p and "the help" in p
    assert parse_judge_score("Score: 8 - good") == 8 and parse_judge_score("I'd say 10/10") == 10
    assert parse_judge_score("no idea") is None


def test_bad_arguments(log: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="condition"):
        help_task(data=str(log), condition="guessed")
    with pytest.raises(ValueError, match="send_screen"):
        help_task(data=str(log), send_screen="sometimes")
    fx = make_lifetrace_db(tmp_path / "P02" / "lifetrace.db", n_events=12, n_llm=0)
    with pytest.raises(ValueError, match="no LLM-use event"):
        help_task(data=str(fx.path))
