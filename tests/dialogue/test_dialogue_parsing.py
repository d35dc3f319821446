"""Parsing of judge, agent and user answers; memory window; leak and passive-opening probes."""

from __future__ import annotations

import pytest

from proagent.dialogue.analysis import density, leaks, passive_opening
from proagent.dialogue.parsing import (
    clean_message,
    parse_guidance_judgement,
    parse_judgement,
    parse_mentioned,
    parse_plan,
    parse_reached,
)
from proagent.dialogue.prompting import render, render_history, window
from proagent.dialogue.records import DIMENSIONS, Turn


@pytest.mark.parametrize(
    "text, score",
    [
        ("Reasoning: close to the reference.\nScore: 8", 8),
        ("The plan is good.\n**Score:** 9/10", 9),
        ("Scale is 1-10. The candidate misses the need.\nScore: 3", 3),  # the scale restated first
        ("reasoning...\nFinal score = 10", 10),
        ("It deserves 7/10 overall.", 7),
        ("Reasoning: ok\nScore: 6.5", 6.5),
        ("Reasoning: ok\nRating: [4]", 4),
        ("Reasoning: the assistant never connected the forecast ... The assistant's score is 1.", 1),  # real answer
        ("... is better than the reference target. The score: 9", 9),  # real answer
    ],
)
def test_judgement_scores(text, score):
    j = parse_judgement(text)
    assert j.parsed and j.score == score
    assert "Score" not in j.reasoning or "scale" in j.reasoning.lower()


@pytest.mark.parametrize(
    "text",
    ["", None, "I think it is fine.", "Score: 0", "Score: 11", "Score: excellent", "Score: 15/10", "!!!\x00"],
)
def test_judgement_unparsed(text):
    j = parse_judgement(text)
    assert not j.parsed and j.score is None


def test_judgement_reasoning_before_score():
    j = parse_judgement("Reasoning: The candidate is personal.\nScore: 9")
    assert j.reasoning == "The candidate is personal."


def test_guidance_judgement():
    text = (
        "Reasoning: gentle and personal.\nEffectiveness: 7\nPersonalization: **8**\nTone: 9\n"
        "Engagement: 6\nNaturalness: 5\nScore: 7"
    )
    j = parse_guidance_judgement(text)
    assert j.score == 7 and j.dimensions == dict(zip(DIMENSIONS, [7, 8, 9, 6, 5]))
    assert j.reasoning == "gentle and personal."
    # no overall line: mean of the five dimensions
    j2 = parse_guidance_judgement(text.rsplit("\n", 1)[0])
    assert j2.score == 7.0
    # a dimension line alone is not the overall score
    j3 = parse_guidance_judgement("Reasoning: x\nTone: 9")
    assert j3.score is None and j3.dimensions["tone"] == 9 and j3.dimensions["effectiveness"] is None
    assert parse_guidance_judgement("garbage").score is None


@pytest.mark.parametrize(
    "text, verdict",
    [
        ("The user agreed.\nReached: yes", True),
        ("Not yet.\nReached: No", False),
        ("**Reached**: YES", True),
        ("reached: no ... wait, Reached: yes", True),
        ("Yes", True),
        ("The user is still thinking.", None),
        ("", None),
        # real answers of Qwen2.5-Coder-1.5B without the verdict line
        ("The user has not accepted or acted on the forecast, so the target is not reached.", False),
        (
            "The target is reached when the user has clearly accepted or acted on it (not merely heard it). The user "
            "asked for a recommendation and the assistant has provided one. Therefore, the target is reached.",
            True,
        ),
        (
            "The target is reached when the user has clearly accepted or acted on it (not merely heard it). The user "
            "asked for a recommendation and the assistant has provided one.",
            None,
        ),  # only the rule restated
        ('Reasoning: x\nReached: yes" or "Reached: no', False),  # the format echoed: the last one wins
    ],
)
def test_reached(text, verdict):
    assert parse_reached(text) is verdict


@pytest.mark.parametrize(
    "text, n, want",
    [
        ("Mentioned: 1, 3", 4, [1, 3]),
        ("Mentioned: none", 4, []),
        ("Mentioned: 2, 9", 3, [2]),
        ("Mentioned: []", 3, []),
        ("The message covers one.", 3, None),
        ("Mentioned: maybe", 3, None),
    ],
)
def test_mentioned(text, n, want):
    assert parse_mentioned(text, n) == want


@pytest.mark.parametrize(
    "text, target, subs, method",
    [
        ('{"target": "T", "sub_target": ["a", "b"]}', "T", ("a", "b"), "json"),
        ('Here:\n```json\n{"target": "T", "sub_targets": ["a"]}\n```', "T", ("a",), "json"),
        ('{"Target": "T", "Sub-target": "only one"}', "T", ("only one",), "json"),
        ('{"target": "T", "sub_target": ["a", "b",', "T", ("a", "b"), "json-repair"),
        ('{"target": "T", "sub_target": ["a", "b"],}', "T", ("a", "b"), "json-repair"),
        (
            "Target: Help them sleep\nSub-targets:\n1. notice\n2. suggest",
            "Help them sleep",
            ("notice", "suggest"),
            "lines",
        ),
    ],
)
def test_plan(text, target, subs, method):
    p = parse_plan(text)
    assert (p.target, p.sub_target, p.parse_method) == (target, subs, method)


@pytest.mark.parametrize("text", ["", None, "no idea", '{"sub_target": ["a"]}', '{"target": ""}', "[1, 2]"])
def test_plan_unparsed(text):
    assert not parse_plan(text).parsed


def test_clean_message():
    assert clean_message('Assistant: "Hello there."') == "Hello there."
    assert clean_message("Hi!\nUser: sure\nAssistant: great") == "Hi!"
    assert clean_message("User: no thanks", "user") == "no thanks"
    assert clean_message(None) == ""


def _turns(n: int) -> list[Turn]:
    out = []
    for i in range(1, n + 1):
        out += [Turn("assistant", f"agent {i}"), Turn("user", f"user {i}")]
    return out


def test_memory_window():
    assert window([], 3) == []
    assert window(_turns(2), 3) == _turns(2)
    w = window(_turns(5), 3)
    assert [t.content for t in w] == ["agent 3", "user 3", "agent 4", "user 4", "agent 5", "user 5"]
    assert window(_turns(5), 0) == []
    assert "not started" in render_history([])
    assert render_history(_turns(1)) == "Assistant: agent 1\nUser: user 1"


def test_leaks_and_passive_opening():
    clean = [Turn("assistant", "Morning! Your tyre went flat twice this month; want options?"), Turn("user", "ok")]
    assert leaks(clean) == [] and not passive_opening(clean)
    leaky = [
        Turn("assistant", "Sub-target 1: ask about tyres. How are they?"),
        Turn("user", "turn 2"),
        Turn("assistant", "(Turn 2) Here are options.\nTarget: sell tyres"),
    ]
    found = leaks(leaky)
    assert any("Sub-target 1" in f for f in found) and any("Turn 2" in f for f in found)
    assert len(found) == 3  # the user's "turn 2" is not the agent's leak
    for opening in [
        "It sounds like you're busy.",
        "Hi there, it seems like the build failed.",
        "How can I help you today?",
        "I understand you want to save.",
    ]:
        assert passive_opening([Turn("assistant", opening)]), opening
    assert not passive_opening([Turn("assistant", "It's 1:40 a.m.; shall we let the build run overnight?")])


def test_density():
    assert density([[1, 2], [], None, [3]]) == {"per_message": 1.0, "first": 2, "unparsed": 1}
    assert density([None]) == {"per_message": None, "first": None, "unparsed": 1}
    assert density([]) == {"per_message": None, "first": None, "unparsed": 0}


def test_templates_render_and_name_missing_values():
    text = render("plan_user", user_information="U", trigger_factor="T")
    assert "U" in text and "T" in text and '"sub_target"' in text
    with pytest.raises(KeyError):
        render("plan_user", user_information="U")
