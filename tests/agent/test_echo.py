"""An echoed instruction or template is no answer (issue 21): the When/How parser and
annotate's parser mask the prompt's own wording and count what is left."""

from __future__ import annotations

import pytest

from proagent.agent.echo import TemplateEcho, when_echo
from proagent.agent.parsing import parse_answer
from proagent.agent.prompting import instruction_text
from proagent.agent.solvers import METHODS


@pytest.mark.parametrize(
    "text",
    [
        # SmolLM2-135M's whole answer at one moment of the desktop trial
        "Decide whether the user needs help... If yes, write the question...",
        instruction_text(METHODS["zero-shot"].prompt),  # the whole instruction repeated
        instruction_text(METHODS["cot"].prompt),
        "Step 3 (Judge): say Yes if the user needs help from an AI assistant at this moment, otherwise No.",
        "If yes, pick the intention category and write the question the user would ask the AI assistant.",
    ],
)
def test_an_echoed_instruction_is_unparsed(text):
    got = parse_answer(text)
    assert got.needs_help is None and got.method == "unparsed" and got.query is None


@pytest.mark.parametrize(
    "text,needs",
    [
        ("Need help: Yes\nIntention: Code Programming\nQuery: How do I fix it?", True),
        ("Decide whether the user needs help... The user is stuck on a traceback.\nNeed help: Yes", True),
        ("Yes, the user needs help.", True),
        ("The user does not need help.", False),
        ("Step 3 (Judge): No, they are reading calmly.", False),
    ],
)
def test_an_answer_beside_the_echo_still_counts(text, needs):
    assert parse_answer(text).needs_help is needs


def test_echo_spans_are_runs_of_template_words_on_one_line():
    echo = TemplateEcho(["Pick one category name from the list.\nThen stop $now please go on"])
    text = "I will pick one category name from the list: Translation"
    ((s, e),) = echo.spans(text)
    assert text[s:e].casefold() == "pick one category name from the list"
    assert echo.mask(text).endswith(": Translation") and len(echo.mask(text)) == len(text)
    assert not echo.spans("the list then stop now please")  # line ends and $placeholders break runs
    assert echo.is_echo("one category name from the list") and not echo.is_echo("Translation of a paragraph")
    assert when_echo().is_echo("the question the user would ask the AI assistant")
