"""Intention names in the languages the default model answers in (issue 47 item 4): Qwen2.5
asked in English often names the category in Chinese (``"user_intention": "数据分析"``), which
was read as no category (the intention prompt failed its attempts, the full prompt stored the
fallback)."""

from __future__ import annotations

import pytest

from proagent.annotate.parsing import parse_annotation, parse_intent
from proagent.taxonomy import load_taxonomy

CHINESE = {
    "信息检索": "Information Retrieval",
    "知识问答": "Knowledge Q&A",
    "数据分析": "Data Analysis",
    "代码编程": "Code Programming",
    "调试与错误解决": "Debugging & Error Resolution",
    "内容生成": "Content Generation",
    "写作润色与编辑": "Writing Polish & Editing",
    "翻译": "Translation",
    "总结": "Summarization",
    "文档理解": "Document Understanding",
    "学习与辅导": "Learning & Tutoring",
    "数学与计算": "Math & Calculation",
    "规划与日程": "Planning & Scheduling",
    "设计与图像生成": "Design & Image Generation",
    "推荐与决策支持": "Recommendation & Decision Support",
    "未分类": "Uncategorized",
}


def test_every_category_has_a_chinese_name():
    assert set(CHINESE.values()) == set(load_taxonomy().names)


@pytest.mark.parametrize("zh,name", CHINESE.items())
def test_a_chinese_category_name_maps_to_its_intention(zh, name):
    tax = load_taxonomy()
    assert tax.canonical(zh) == name
    assert tax.canonical(f"「{zh}」。") == name  # punctuation around it ignored
    assert parse_intent(f'{{"user_intention": "{zh}", "event_summary": "asked"}}')["user_intention"] == name


def test_a_chinese_name_inside_a_sentence_and_other_scripts():
    tax = load_taxonomy()
    assert tax.canonical("用户的意图是数据分析") == "Data Analysis"
    assert tax.canonical("類別：程式設計") == "Code Programming"  # traditional characters
    assert tax.canonical("翻訳") == "Translation"  # Japanese
    assert tax.canonical("code programming（代码编程）") == "Code Programming"
    # a short common word inside a sentence names nothing (a 2-character name counts only as the whole answer)
    assert tax.canonical("我需要翻译一下") is None
    assert tax.canonical("今天天气很好") is None


def test_the_full_answer_stores_the_chinese_named_intention():
    got = parse_annotation(
        '{"is_llm_interaction": true, "llm_platform": "ChatGPT", "user_intention": "调试与错误解决"}'
    )
    assert got["user_intention"] == "Debugging & Error Resolution"


def test_the_intention_prompt_asks_only_the_category_and_the_summary_is_the_question():
    """Issue 47 item 4 (speed): on 2 CPU cores each generated token of the 1.5B model costs about a
    tenth of a second; the intention answer is one key, the summary the question as shown."""
    from datetime import datetime

    from proagent.annotate.platforms import PlatformHit
    from proagent.annotate.prompting import intent_prompt
    from proagent.annotate.task import INTENT_MAX_TOKENS, PlannedEvent, _screen_fields
    from proagent.records import Event

    e = Event(id="1", user="P01", start=datetime(2026, 1, 5, 9), end=None, app_name="firefox", window_title="ChatGPT")
    prompt = intent_prompt(e, "ChatGPT", "How do I reverse a list in Python?", "Use slicing.", ["Code Programming"])
    assert "event_summary" not in prompt and INTENT_MAX_TOKENS <= 40
    p = PlannedEvent(
        event=e,
        hit=PlatformHit("ChatGPT", "title", "ChatGPT"),
        texts=(),
        images=(),
        ask=True,
        chat=(("How do I reverse a list in Python?",), ("Use slicing.",)),
    )
    assert _screen_fields(p)["event_summary"] == "asked ChatGPT: How do I reverse a list in Python?"
