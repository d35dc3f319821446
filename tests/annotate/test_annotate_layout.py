"""Reading a chat from positioned OCR lines (``proagent.annotate.conversation``), and the
rule that a model's quote which is not on the screen is never stored (issue 21)."""

from __future__ import annotations

import json
import sqlite3

from click.testing import CliRunner
from lifetrace_fixtures import make_participant
from mock_openai import MockOpenAI

from proagent.annotate.conversation import OcrLine, event_conversation, on_screen, read_chat
from proagent.annotate.parsing import AnswerError, parse_annotation, parse_intent
from proagent.cli import cli

W, H = 1920, 1080


def _browser_chat(*turns, typed: str = "") -> list[OcrLine]:
    """A ChatGPT-like 1080p browser window: tab strip and address bar, sidebar, right-aligned
    user bubbles, replies at the column's left, input box and small print."""
    lines = [
        OcrLine("ChatGPT ×", 20, 10, 200, 34),
        OcrLine("← → C ⓘ chatgpt.com/c/68a1", 10, 50, 420, 76),
        OcrLine("ChatGPT", 24, 110, 160, 140),
        OcrLine("New chat", 24, 160, 150, 184),
        OcrLine("What is the latest news on Debian.org?", 24, 200, 330, 222),
    ]  # a history title
    y = 130
    for role, text in turns:
        x0 = 1100 if role == "user" else 560
        lines.append(OcrLine(text, x0, y, min(1700, x0 + 12 * len(text)), y + 26))
        y += 70
    lines += [
        OcrLine(typed or "Message ChatGPT", 600, 960, 900, 986),
        OcrLine("ChatGPT can make mistakes. Check important info.", 760, 1040, 1160, 1060),
    ]
    return lines


def test_the_chat_region_is_cut_out_by_layout():
    chat = read_chat(
        _browser_chat(
            ("user", "Why does my test fail with KeyError?"),
            ("assistant", "The dict has no key 'id': use d.get('id')."),
            ("user", "How do I print the traceback?"),
            ("assistant", "Use traceback.print_exc() in the except block."),
        ),
        W,
        H,
    )
    assert chat is not None and chat.address.endswith("chatgpt.com/c/68a1")
    assert chat.user_turns == ("Why does my test fail with KeyError?", "How do I print the traceback?")
    assert chat.last_query == "How do I print the traceback?"
    assert chat.reply == "Use traceback.print_exc() in the except block."
    texts = " ".join(t.text for t in chat.turns)
    assert "Debian" not in texts and "New chat" not in texts and "mistakes" not in texts and "ⓘ" not in texts


def test_role_labels_mark_turns_where_nothing_is_indented():
    lines = [
        OcrLine("You", 300, 100, 340, 120),
        OcrLine("translate 你好 into English", 300, 125, 700, 150),
        OcrLine("ChatGPT", 300, 180, 380, 200),
        OcrLine("Hello.", 300, 205, 360, 230),
    ]
    chat = read_chat(lines, 1280, 800)
    assert chat is not None and (chat.last_query, chat.reply) == ("translate 你好 into English", "Hello.")


def test_a_page_without_a_user_turn_has_no_conversation():
    article = [
        OcrLine("Tech News", 80, 60, 300, 90),
        OcrLine("DeepSeek released a new model; analysts compare it with ChatGPT.", 80, 120, 1100, 146),
        OcrLine("Shares of chip makers fell 3%.", 80, 150, 600, 176),
    ]
    assert read_chat(article, 1280, 800) is None
    assert read_chat([], 1280, 800) is None


def test_the_event_query_is_the_turn_asked_during_the_event():
    before = read_chat(
        _browser_chat(
            ("user", "What is a lambda?"), ("assistant", "An anonymous function."), typed="How do I sort by a key?"
        ),
        W,
        H,
    )
    after = read_chat(
        _browser_chat(
            ("user", "What is a lambda?"),
            ("assistant", "An anonymous function."),
            ("user", "How do I sort by a key?"),
            ("assistant", "sorted(xs, key=f)"),
        ),
        W,
        H,
    )
    assert before.user_turns == ("What is a lambda?",)  # the typed text in the input box is no turn
    assert event_conversation([before, after]) == (("How do I sort by a key?",), ("sorted(xs, key=f)",))
    # reading only (nothing new asked): the last user turn shown, its reply
    assert event_conversation([after, after]) == (("How do I sort by a key?",), ("sorted(xs, key=f)",))
    assert event_conversation([None, None]) is None


def test_on_screen_tolerates_ocr_spacing_but_not_invention():
    screen = (
        "ChatGPT\nsqlite3.OperationalError: database is locked怎么解决?\n这个错误通常是因为另一个连接正在写入数据库。"
    )
    assert on_screen("sqlite3.OperationalError: database is locked 怎么解决?", screen)
    assert not on_screen("I'm sorry, but I can't assist with that.", screen)


def test_echoed_answer_templates_are_no_annotation():
    echo = (
        '{"is_llm_interaction": true, "llm_platform": "the AI product\'s name, or null", '
        '"user_queries": ["each message the user typed to the AI, verbatim from the screen, in order"], '
        '"user_intention": "one intention category name from the list, or null"}'
    )
    got = parse_annotation(echo)
    assert got["user_queries"] == () and got["llm_platform"] is None and got["user_intention"] is None
    try:
        parse_annotation('{"is_llm_interaction": "true or false"}')
        raise AssertionError("the echoed flag was read")
    except AnswerError:
        pass
    for bad in ('{"user_intention": "the category name that fits the user\'s question"}', "I think so."):
        try:
            parse_intent(bad)
            raise AssertionError(f"read an intention from {bad!r}")
        except AnswerError:
            pass
    assert (
        parse_intent('```json\n{"user_intention": "translation", "event_summary": "x"}\n```')["user_intention"]
        == "Translation"
    )


def test_a_reply_the_model_invents_is_never_stored(tmp_path, monkeypatch):
    """Without a readable layout (--ocr db) the whole-window prompt is asked; its quotes are kept
    only where they stand in the screen text."""
    fx = make_participant(tmp_path / "curated", "P01")
    with sqlite3.connect(fx.path) as db:
        ids = [r[0] for r in db.execute("SELECT id FROM screenshots WHERE event_id = ?", (int(fx.llm_event_ids[0]),))]
        db.executemany(
            "INSERT INTO ocr_results (screenshot_id, text_content) VALUES (?, ?)",
            [(i, "User: how do I undo git commit? Assistant: use git reset --soft HEAD~1") for i in ids],
        )
    answer = json.dumps(
        {
            "is_llm_interaction": True,
            "llm_platform": "ChatGPT",
            "user_queries": ["how do I undo git commit?", "What is the latest news on Debian.org?"],
            "llm_responses": ["I'm sorry, but I can't assist with that."],
            "user_intention": "Code Programming",
        }
    )
    with MockOpenAI(lambda body: answer) as srv:
        srv.env(monkeypatch)
        r = CliRunner().invoke(
            cli,
            [
                "annotate",
                str(tmp_path / "curated"),
                "--annotator",
                "openai-api/mock/m",
                "--ocr",
                "db",
                "--log-dir",
                str(tmp_path / "logs"),
                "--display",
                "none",
                "--model-base-url",
                srv.base_url,
            ],
        )
    assert r.exit_code == 0, r.output
    recs = {str(x["event_id"]): x for x in map(json.loads, (tmp_path / "curated" / "annotations.jsonl").open())}
    shown = recs[str(fx.llm_event_ids[0])]
    assert shown["user_queries"] == ["how do I undo git commit?"] and shown["llm_responses"] == []
    assert shown["query_source"] == "model" and "not on the screen dropped" in shown["rationale"]
    others = [x for k, x in recs.items() if x["status"] == "annotated" and k != str(fx.llm_event_ids[0])]
    assert others and all(
        x["user_queries"] == [] and x["llm_responses"] == [] and x["query_source"] == "none" for x in others
    )
    with sqlite3.connect(fx.path) as db:
        convs = [json.loads(c) for (c,) in db.execute("SELECT conversation FROM events WHERE conversation IS NOT NULL")]
    assert not any("I'm sorry" in r for c in convs for r in c["llm_responses"])


def test_a_tab_title_that_looks_like_a_url_does_not_hide_the_address_bar():
    lines = _browser_chat(("user", "帮我把这段话翻译成英文"), ("assistant", "Translate this paragraph into English."))
    lines[0] = OcrLine("Kimi.ai - 帮你看更大的世界 ×", 20, 10, 300, 34)  # a tab title with a domain in it
    chat = read_chat(lines, W, H)
    assert chat is not None and "chatgpt.com" in chat.address
    assert (chat.last_query, chat.reply) == ("帮我把这段话翻译成英文", "Translate this paragraph into English.")


def test_a_platform_label_above_the_reply_is_not_part_of_it():
    lines = [
        OcrLine("DeepSeek", 20, 20, 120, 44),
        OcrLine("销售数据分析", 20, 60, 140, 84),
        OcrLine("帮我分析这份销售数据的趋势", 480, 40, 800, 66),  # the user's bubble, indented
        OcrLine("DeepSeek", 302, 100, 400, 124),
        OcrLine("销售额在第三季度增长了12%。", 302, 130, 700, 156),
    ]
    chat = read_chat(lines, 1280, 800)
    assert chat is not None and (chat.last_query, chat.reply) == (
        "帮我分析这份销售数据的趋势",
        "销售额在第三季度增长了12%。",
    )
