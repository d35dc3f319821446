"""Tests for the ProAgentBench answer-parsing cascade (proagent.agent.parsing)."""

from __future__ import annotations

import random

import pytest

from proagent.agent import parsing
from proagent.agent.parsing import PARSE_STEPS, ParsedAnswer, parse_answer, to_prediction
from proagent.records import Prediction
from proagent.taxonomy import load_taxonomy

# (id, answer text, needs_help, intention, query, method)
CORPUS: list[tuple[str, str, bool | None, str | None, str | None, str]] = [
    (
        "clean_zero_shot_yes",
        "Need help: Yes\nIntention: Code Programming\nQuery: How do I read a CSV file with pandas?",
        True,
        "Code Programming",
        "How do I read a CSV file with pandas?",
        "explicit",
    ),
    (
        "clean_zero_shot_no",
        "Need help: No\nIntention: N/A\nQuery: N/A",
        False,
        None,
        None,
        "explicit",
    ),
    (
        "markdown_bold_labels",
        "**Need help:** no\n**Intention:** Writing Polish & Editing\n**Query:** \"Can you proofread my cover letter?\"",
        False,
        "Writing Polish & Editing",
        "Can you proofread my cover letter?",
        "explicit",
    ),
    (
        "markdown_headings_bullets",
        "### Answer\n- **Need Help**: YES\n- **Intention**: *Debugging & Error Resolution*\n"
        "- **Query**: `Why does npm install fail with EACCES?`",
        True,
        "Debugging & Error Resolution",
        "Why does npm install fail with EACCES?",
        "explicit",
    ),
    (
        "dash_separator_upper",
        "Need Help - YES\nCategory - Translation\nUser query - Translate this paragraph into German",
        True,
        "Translation",
        "Translate this paragraph into German",
        "explicit",
    ),
    (
        "needs_assistance_label",
        "Needs assistance: yes\nIntent: data analysis\nPredicted query: how to make a pivot table by month",
        True,
        "Data Analysis",
        "how to make a pivot table by month",
        "explicit",
    ),
    (
        "template_echo_only",
        "Need help: Yes|No\nIntention: <one of the 16 category names>\n"
        "Query: <the question the user would ask an AI assistant now>",
        None,
        None,
        None,
        "unparsed",
    ),
    (
        "template_echo_slash_truncated",
        "Sure! Here is my answer in the requested format:\n\nNeed help: Yes/No\nIntention: <one of",
        None,
        None,
        None,
        "unparsed",
    ),
    (
        "template_echo_then_answer",
        "Format:\nNeed help: Yes|No\nIntention: <one of the 16 category names>\nQuery: <...>\n\n"
        "Need help: No\nIntention: Information Retrieval\nQuery: none",
        False,
        "Information Retrieval",
        None,
        "explicit",
    ),
    (
        "restated_last_wins",
        "Need help: Yes\nIntention: Knowledge Q&A\nQuery: What is a monad?\n\n"
        "Hmm, on reflection the user is just reading the article calmly.\n\n"
        "Need help: No\nIntention: Knowledge Q&A\nQuery: N/A",
        False,
        "Knowledge Q&A",
        "What is a monad?",
        "explicit",
    ),
    (
        "final_answer_overrides",
        "Need help: Yes\nThe user has been scrolling the same Stack Overflow page for a while, "
        "but they just found the fix and are typing it in.\n\nFinal answer: No",
        False,
        None,
        None,
        "explicit",
    ),
    (
        "final_answer_need_help_prefix",
        "Let me reason. The spreadsheet has formula errors (#REF!).\nFinal answer - Need help: yes\n"
        "Intention: Data Analysis\nQuery: Why does my VLOOKUP return #REF!?",
        True,
        "Data Analysis",
        "Why does my VLOOKUP return #REF!?",
        "explicit",
    ),
    (
        "chinese_explicit_yes",
        "需要帮助：是\n意图：Translation\n查询：请把这段话翻译成英文",
        True,
        "Translation",
        "请把这段话翻译成英文",
        "explicit",
    ),
    (
        "chinese_explicit_no",
        "需要帮助：否（用户正在专注地写作）\n意图：无\n查询：无",
        False,
        None,
        None,
        "explicit",
    ),
    (
        "chinese_buxuyao_value",
        "是否需要帮助：不需要\n意图：Content Generation",
        False,
        "Content Generation",
        None,
        "explicit",
    ),
    (
        "chinese_keyword_only",
        "根据截图，用户正在浏览新闻网站，没有遇到任何困难，因此不需要帮助。",
        False,
        None,
        None,
        "keyword",
    ),
    (
        "json_fence",
        'Here is my answer:\n```json\n{\n  "need_help": true,\n  "intention": "Summarization",\n'
        '  "query": "Summarize this 40-page PDF in 5 bullet points"\n}\n```',
        True,
        "Summarization",
        "Summarize this 40-page PDF in 5 bullet points",
        "json",
    ),
    (
        "json_trailing_comma_yes_string",
        '{"needs_help": "Yes", "category": "math & calculation", "user_query": "What is 17% of 2,340?",}',
        True,
        "Math & Calculation",
        "What is 17% of 2,340?",
        "json",
    ),
    (
        "json_single_quotes_python",
        "{'need_assistance': False, 'intention': None, 'question': None}",
        False,
        None,
        None,
        "json",
    ),
    (
        "json_nested_wins_over_text",
        'The user needs help, I think. Final output:\n{"answer": {"help": "no", "intention": "Uncategorized"}}',
        False,
        "Uncategorized",
        None,
        "json",
    ),
    (
        "json_truncated",
        '```json\n{"need_help": true, "intention": "Planning & Scheduling", "query": "Find a free 30-minute slot',
        True,
        "Planning & Scheduling",
        "Find a free 30-minute slot",
        "json",
    ),
    (
        "json_last_object_wins",
        'Example: {"need_help": false, "intention": "Translation"}\n'
        'My answer: {"need_help": true, "intention": "Code Programming", "query": "fix my regex"}',
        True,
        "Code Programming",
        "fix my regex",
        "json",
    ),
    (
        "json_without_help_key_falls_through",
        'Context: {"app": "Excel", "window": "Q3 budget.xlsx"}\nNeed help: yes\nIntention: Data Analysis',
        True,
        "Data Analysis",
        None,
        "explicit",
    ),
    (
        "cot_full",
        "Step 1 (Describe): The user is in VS Code; the terminal shows a red traceback "
        "`ModuleNotFoundError: No module named 'torch'`.\n"
        "Step 2 (Analyse needs): They re-ran the script three times without changes.\n"
        "Step 3 (Judge): Yes - they seem stuck.\n"
        "Step 4 (Classify intention): Debugging & Error Resolution\n\n"
        "Need help: Yes\nIntention: Debugging & Error Resolution\n"
        "Query: How do I fix ModuleNotFoundError: No module named 'torch'?",
        True,
        "Debugging & Error Resolution",
        "How do I fix ModuleNotFoundError: No module named 'torch'?",
        "explicit",
    ),
    (
        "cot_truncated_after_step3_no",
        "Step 1 (Describe): A Word document titled 'Thesis chapter 2' is open.\n"
        "Step 2 (Analyse needs): The user is typing continuously; no errors.\n"
        "Step 3 (Judge): No. The user is making steady progress and an interruption would",
        False,
        None,
        None,
        "cot_step3",
    ),
    (
        "cot_truncated_after_step4",
        "**Step 1 (Describe):** Chrome shows a Google Flights search.\n"
        "**Step 2 (Analyse needs):** Comparing several itineraries back and forth.\n"
        "**Step 3 (Judge):** yes, the user would benefit from assistance comparing prices.\n"
        "**Step 4 (Classify intention):** Recommendation & Decision Support\n\nNeed he",
        True,
        "Recommendation & Decision Support",
        None,
        "cot_step3",
    ),
    (
        "cot_step3_no_leading_token",
        "Step 1 (Describe): Slack chat.\nStep 2 (Analyse needs): casual chatting.\n"
        "Step 3 (Judge): The user is chatting with a colleague and does not need help at the moment.\n"
        "Step 4 (Classify intention): Uncategorized",
        False,
        "Uncategorized",
        None,
        "cot_step3",
    ),
    (
        "cot_step3_template_echo",
        "Step 1 (Describe): ...\nStep 2 (Analyse needs): ...\nStep 3 (Judge): Yes/No ...\n"
        "Step 4 (Classify intention): ...",
        None,
        None,
        None,
        "unparsed",
    ),
    (
        "keyword_doesnt_need",
        "Looking at the screenshots, the user is watching a YouTube video. "
        "They doesn't need anything from an assistant; they are relaxing.",
        False,
        None,
        None,
        "keyword",
    ),
    (
        "keyword_negated_beats_positive",
        "The user does not need help. They are just browsing.",
        False,
        None,
        None,
        "keyword",
    ),
    (
        "keyword_later_mention_wins",
        "At first glance it looks like the user does not need help, but the error dialog has "
        "been open for two minutes, so they probably need help now.",
        True,
        None,
        None,
        "keyword",
    ),
    (
        "keyword_would_benefit",
        "The user has opened the same Python docs page five times. "
        "They would benefit from assistance with list comprehensions, a Learning & Tutoring need.",
        True,
        "Learning & Tutoring",
        None,
        "keyword",
    ),
    (
        "keyword_should_not_interrupt",
        "The user is in a video meeting presenting slides. We should not interrupt them now.",
        False,
        None,
        None,
        "keyword",
    ),
    (
        "keyword_no_help_needed",
        "No help needed - the user is simply reading email.",
        False,
        None,
        None,
        "keyword",
    ),
    (
        "keyword_i_dont_think",
        "Hmm. I don't think the user needs help here; they just opened Spotify.",
        False,
        None,
        None,
        "keyword",
    ),
    (
        "keyword_question_then_bare_no",
        "Hmm, does the user need help? No, they are steadily filling out the form.",
        False,
        None,
        None,
        "keyword",
    ),
    (
        "question_label_line_is_explicit",
        "Does the user need help? No, they are steadily filling out the form.",
        False,
        None,
        None,
        "explicit",
    ),
    (
        "ramble_question_only",
        "Does the user need help? To decide whether the user needs help, I should look at the "
        "screen. The user is in Excel and there is no error visible and",
        None,
        None,
        None,
        "unparsed",
    ),
    (
        "bare_no_inside_prose_not_decisive",
        "The screen shows a terminal with no errors and a browser with no open dialogs",
        None,
        None,
        None,
        "unparsed",
    ),
    (
        "bare_yes_answer",
        "Based on the repeated failed compilation attempts, I'd say yes.",
        True,
        None,
        None,
        "keyword",
    ),
    (
        "reasoning_model_think_block",
        "<think>The user typed an error into Google. Maybe they need help? Or not.</think>\n\n"
        "Need help: Yes\nIntention: Information Retrieval\nQuery: What does HTTP 502 Bad Gateway mean?",
        True,
        "Information Retrieval",
        "What does HTTP 502 Bad Gateway mean?",
        "explicit",
    ),
    (
        "think_truncated_no_tail",
        "<think>The user is coding. The compiler shows an error. I think the user needs help",
        True,
        None,
        None,
        "keyword",
    ),
    (
        "collapsed_one_line",
        "Need help: Yes Intention: Content Generation Query: Write a LinkedIn post announcing my new job",
        True,
        "Content Generation",
        "Write a LinkedIn post announcing my new job",
        "explicit",
    ),
    (
        "query_on_next_line",
        "Need help: yes\nIntention: Code Programming\nQuery:\n```\nHow do I reverse a linked list in Python?\n```",
        True,
        "Code Programming",
        "How do I reverse a linked list in Python?",
        "explicit",
    ),
    (
        "unknown_intention_label",
        "Need help: yes\nIntention: Shopping help\nQuery: Which laptop should I buy under $800?",
        True,
        None,
        "Which laptop should I buy under $800?",
        "explicit",
    ),
    (
        "bare_category_prefers_later",
        "This could look like Information Retrieval, but really it is Document Understanding of a "
        "contract.\nNeed help: yes",
        True,
        "Document Understanding",
        None,
        "explicit",
    ),
    (
        "lowercase_single_word_not_a_category",
        "Need help: no. The user is reading the translation of a poem.",
        False,
        None,
        None,
        "explicit",
    ),
    (
        "hedged_value",
        "Need help: probably not (the user is idle)\nIntention: Uncategorized",
        False,
        "Uncategorized",
        None,
        "explicit",
    ),
    (
        "value_is_sentence",
        "Need help: The user clearly needs help with the failing build.\nIntention: Debugging & Error Resolution",
        True,
        "Debugging & Error Resolution",
        None,
        "explicit",
    ),
    (
        "truncated_value",
        "Need help: Ye",
        None,
        None,
        None,
        "unparsed",
    ),
    (
        "query_placeholder_none_paren",
        "Need help: No\nIntention: none\nQuery: None (user does not need help)",
        False,
        None,
        None,
        "explicit",
    ),
    (
        "query_starting_with_none_word_kept",
        "Need help: Yes\nIntention: Debugging & Error Resolution\nQuery: None of my imports resolve in PyCharm, why?",
        True,
        "Debugging & Error Resolution",
        "None of my imports resolve in PyCharm, why?",
        "explicit",
    ),
    (
        "yaml_like_keys",
        "need_help: true\nintention: Math & Calculation\nquery: 'convert 5 miles to km'",
        True,
        "Math & Calculation",
        "convert 5 miles to km",
        "explicit",
    ),
    (
        "value_on_next_line",
        "**Need help:**\n**Yes**\n\n**Intention:** Translation",
        True,
        "Translation",
        None,
        "explicit",
    ),
    (
        "zero_shot_prompt_echo",
        "Answer with exactly three lines and nothing else:\nNeed help: Yes or No\n"
        "Intention: one category name from the list\nQuery: the user's question to the AI assistant",
        None,
        None,
        None,
        "unparsed",
    ),
    (
        "cot_prompt_echo",
        "Step 1 (Describe): describe what the user is doing.\n"
        "Step 2 (Analyse needs): analyse what the user may need now.\n"
        "Step 3 (Judge): say Yes if the user needs help from an AI assistant at this moment, otherwise No.\n"
        "Step 4 (Classify intention): pick one category name from the list.\n\n"
        "Need help: Yes or No\nIntention: one category name from the list\n"
        "Query: the user's question to the AI assistant",
        None,
        None,
        None,
        "unparsed",
    ),
    ("empty", "", None, None, None, "unparsed"),
    ("whitespace", "   \n\t  \n", None, None, None, "unparsed"),
    ("none_word", "None", None, None, None, "unparsed"),
    (
        "curly_apostrophe",
        "The user doesn\u2019t need help \u2014 they\u2019re watching a movie.",
        False,
        None,
        None,
        "keyword",
    ),
    (
        "explicit_beats_later_keyword",
        "Need help: No\n\nExplanation: Even though the user needs help sometimes, right now they are fine.",
        False,
        None,
        None,
        "explicit",
    ),
]


@pytest.mark.parametrize(
    "text,needs_help,intention,query,method",
    [pytest.param(*row[1:], id=row[0]) for row in CORPUS],
)
def test_corpus(text, needs_help, intention, query, method):
    got = parse_answer(text)
    assert got == ParsedAnswer(needs_help, intention, query, method)


def test_corpus_is_large_and_ids_unique():
    ids = [row[0] for row in CORPUS]
    assert len(ids) >= 40
    assert len(set(ids)) == len(ids)


def test_methods_and_canonical_names():
    tax = load_taxonomy()
    for _, text, *_rest in CORPUS:
        got = parse_answer(text)
        assert got.method in PARSE_STEPS
        assert (got.method == "unparsed") == (got.needs_help is None)
        assert got.intention is None or got.intention in tax.names


@pytest.mark.parametrize("value", [None, b"Need help: yes", 42, ["no"]])
def test_non_string_input_never_raises(value):
    got = parse_answer(value)  # type: ignore[arg-type]
    assert isinstance(got, ParsedAnswer)


def test_bytes_input_is_decoded():
    assert parse_answer(b"Need help: yes").needs_help is True  # type: ignore[arg-type]


def test_custom_taxonomy(tmp_path):
    f = tmp_path / "tax.json"
    f.write_text('{"categories": [{"name": "Cooking"}, {"name": "Other Stuff"}]}', "utf-8")
    tax = load_taxonomy(f)
    got = parse_answer("Need help: yes\nIntention: cooking\nQuery: how long to boil an egg", tax)
    assert got == ParsedAnswer(True, "Cooking", "how long to boil an egg", "explicit")
    assert parse_answer("Need help: yes\nIntention: Code Programming", tax).intention is None


def test_to_prediction():
    text = "Need help: Yes\nIntention: Translation\nQuery: Translate to Spanish"
    parsed = parse_answer(text)
    pred = to_prediction("u1:42:positive", text, parsed, confidence=0.8)
    assert pred == Prediction(
        sample_id="u1:42:positive",
        needs_help=True,
        intention="Translation",
        query="Translate to Spanish",
        confidence=0.8,
        parse_method="explicit",
        raw=text,
    )
    assert not pred.unparsed
    lazy = to_prediction("s", "garbled ###")
    assert lazy.unparsed and lazy.parse_method == "unparsed" and lazy.raw == "garbled ###"


def _random_text(rng: random.Random) -> str:
    pieces = [
        "Need help:",
        "需要帮助：",
        "Yes",
        "No",
        "yes|no",
        "{",
        "}",
        '"need_help":',
        "true",
        "Step 3 (Judge):",
        "Step 4",
        "Intention:",
        "Query:",
        "```json",
        "<think>",
        "</think>",
        "does not need help",
        "needs help",
        "\n",
        "**",
        "'",
        '"',
        "\\",
        "::",
        "Code Programming",
    ]
    out = []
    for _ in range(rng.randint(0, 40)):
        r = rng.random()
        if r < 0.4:
            out.append(rng.choice(pieces))
        elif r < 0.7:
            out.append("".join(chr(rng.randint(0, 0x10FFFF)) for _ in range(rng.randint(1, 8))))
        else:
            out.append("".join(chr(rng.randint(32, 0x2FFF)) for _ in range(rng.randint(1, 12))))
        if rng.random() < 0.5:
            out.append(" ")
    return "".join(out)


def test_fuzz_never_raises():
    rng = random.Random(20260204)
    tax = load_taxonomy()
    for _ in range(1500):
        text = _random_text(rng)
        # the inner cascade itself (without the public safety net) must not raise
        got = parsing._parse(text, tax)
        assert got.method in PARSE_STEPS
        assert got.intention is None or got.intention in tax.names
        assert parse_answer(text) is not None


def test_pathological_inputs_are_fast_and_safe():
    tax = load_taxonomy()
    for text in [
        "{" * 5000,
        "{'a': " * 2000,
        '{"need_help": ' + "[" * 3000,
        "Need help: " + "yes|" * 3000,
        "no " * 20000,
        "\x00\ud800\udfff" * 100,
        "Step 3" * 5000,
    ]:
        got = parsing._parse(text, tax)
        assert got.method in PARSE_STEPS


def test_a_raising_parse_step_is_counted_and_logged_not_silently_unparsed(monkeypatch, caplog):
    """Issue 38 item 5: a bug in the cascade is ``parser_error`` (counted apart, one warning per
    kind, no answer text in the log), not an ``unparsed`` answer scored as a wrong decision."""

    def broken(text, taxonomy):
        raise KeyError("boom")

    monkeypatch.setattr(parsing, "_parse", broken)
    monkeypatch.setattr(parsing, "PARSER_ERRORS", type(parsing.PARSER_ERRORS)())
    secret = "Need help: Yes  screen text: card 4111 1111 1111 1111"
    with caplog.at_level("WARNING", logger="proagent.agent.parsing"):
        got = [parse_answer(secret) for _ in range(3)]
    assert {g.method for g in got} == {parsing.PARSER_ERROR} and all(g.needs_help is None for g in got)
    assert parsing.PARSER_ERROR not in PARSE_STEPS
    ((kind, n),) = parsing.PARSER_ERRORS.items()
    assert n == 3 and kind.startswith("KeyError at test_parsing.py:")
    warnings = [r for r in caplog.records if r.name == "proagent.agent.parsing"]
    assert len(warnings) == 1 and "KeyError" in warnings[0].getMessage()
    assert "4111" not in caplog.text and "Need help" not in caplog.text
    assert to_prediction("s1", secret, got[0]).parse_method == parsing.PARSER_ERROR
    monkeypatch.undo()
    assert parse_answer(secret).method == "explicit"  # the real cascade
