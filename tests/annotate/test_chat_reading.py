"""Chat reading beyond right-aligned bubbles (issue 34): labelled transcripts, avatars, input echo,
terminal LLM clients, and the refusal of people writing to each other."""

from __future__ import annotations

from proagent.annotate.conversation import EventChat, OcrLine, event_chat, read_chat, read_screen
from proagent.annotate.platforms import PlatformHit, detect_platform
from proagent.annotate.task import _not_an_ai_chat

W, H = 1280, 800


def _chrome(url: str) -> list[OcrLine]:
    return [
        OcrLine("Tab ×", 16, 11, 142, 34),
        OcrLine(f"← → C ① {url}", 13, 49, 300, 72),
        OcrLine("New chat", 12, 156, 98, 186),
        OcrLine("Recent", 13, 194, 78, 219),
    ]


def test_a_labelled_transcript_is_read_line_by_line():
    lines = _chrome("chatgpt.com/share/6820") + [
        OcrLine("This is a copy of a conversation between ChatGPT & Anonymous.", 160, 130, 700, 152),
        OcrLine("You: What is the capital of Australia?", 160, 170, 520, 192),
        OcrLine("ChatGPT: Canberra, chosen in 1908 as a compromise", 160, 210, 640, 232),
        OcrLine("between Sydney and Melbourne.", 160, 236, 420, 258),
        OcrLine("You said: And its population?", 160, 280, 450, 302),
        OcrLine("ChatGPT said: About 470,000 people.", 160, 320, 480, 342),
    ]
    chat = read_chat(lines, W, H)
    assert chat is not None and chat.kind == "labels"
    assert chat.user_turns == ("What is the capital of Australia?", "And its population?")
    assert chat.reply == "About 470,000 people."
    assert "Canberra, chosen in 1908 as a compromise between Sydney and Melbourne." in [t.text for t in chat.turns]
    assert any(t.startswith("ChatGPT") for t in chat.frame)  # the label names the AI outside the turn's words


def test_a_left_aligned_question_beside_an_avatar_is_the_users():
    lines = _chrome("gemini.google.com/app/3be1") + [
        OcrLine("A", 297, 132, 319, 154),
        OcrLine("Suggest three names for a bakery.", 337, 129, 700, 156),
        OcrLine("1. Crumb & Crust 2. The Rising Loaf", 337, 188, 700, 214),  # the reply, same edge, a turn's gap below
        OcrLine("Ask Gemini", 347, 696, 445, 723),
        OcrLine("Gemini can make mistakes, so double-check it", 328, 757, 612, 777),
    ]
    chat = read_chat(lines, W, H)
    assert chat is not None and chat.kind == "avatar"
    assert (chat.last_query, chat.reply) == ("Suggest three names for a bakery.", "1. Crumb & Crust 2. The Rising Loaf")
    # without the avatar nothing marks the question: no conversation from this screen alone
    assert read_chat([ln for ln in lines if ln.text != "A"], W, H) is None


def test_the_text_typed_into_the_input_box_marks_the_turn_once_sent():
    typed = read_screen(
        _chrome("claude.ai/chat/9d2e")
        + [
            OcrLine("Good afternoon, Alice", 286, 268, 636, 312),
            OcrLine("Rewrite this more formally: we gotta ship by friday.", 348, 697, 900, 725),
        ],
        W,
        H,
    )
    sent = read_screen(
        _chrome("claude.ai/chat/9d2e")
        + [
            OcrLine("Rewrite this more formally: we gotta ship by friday.", 346, 137, 900, 163),
            OcrLine("We need to deliver it by Friday.", 286, 202, 602, 231),
            OcrLine("Reply to Claude...", 349, 699, 495, 726),
        ],
        W,
        H,
    )
    assert typed.typed == "Rewrite this more formally: we gotta ship by friday." and not typed.user_turns
    assert not sent.user_turns  # the question's indent is too small for a right bubble, no avatar was read
    got = event_chat([typed, sent])
    assert got is not None and got.kind == "echo"
    assert (got.queries, got.replies) == (
        ("Rewrite this more formally: we gotta ship by friday.",),
        ("We need to deliver it by Friday.",),
    )
    assert event_chat([sent, sent]) is None  # nothing typed before: no echo


def test_terminal_llm_clients_are_read_by_their_prompt():
    ollama = [
        OcrLine("alice@laptop:~$ ollama run llama3.2", 14, 14, 400, 36),
        OcrLine(">>> How do I list the ten largest files?", 14, 40, 480, 62),
        OcrLine("Use du and sort:", 14, 66, 200, 88),
        OcrLine("du -ah . | sort -rh | head -n 10", 14, 92, 360, 114),
        OcrLine(">>>", 14, 144, 50, 166),
        OcrLine("Send a message (/? for help)", 60, 144, 360, 166),
    ]
    chat = read_chat(ollama, W, H)
    assert chat is not None and chat.kind == "terminal" and chat.client == "Ollama"
    assert (chat.last_query, chat.reply) == (
        "How do I list the ten largest files?",
        "Use du and sort: du -ah . | sort -rh | head -n 10",
    )
    one_shot = [
        OcrLine('alice@laptop:~/notes$ llm "Translate good morning into Spanish"', 14, 14, 600, 36),
        OcrLine("Buenos días.", 14, 40, 140, 62),
        OcrLine("alice@laptop:~/notes$", 14, 66, 240, 88),
    ]
    chat = read_chat(one_shot, W, H)
    assert chat is not None and (chat.last_query, chat.reply, chat.client) == (
        "Translate good morning into Spanish",
        "Buenos días.",
        "llm CLI",
    )
    # the first pass: a terminal's screen text counts only where it starts an LLM client
    assert detect_platform("xterm", "alice@laptop: ~", ["alice@laptop:~$ ollama run llama3.2"]).platform == "Ollama"
    assert detect_platform("xterm", "alice@laptop: ~", ["$ pytest -q  # compare with ChatGPT later"]) is None
    assert read_chat([OcrLine("$ ls", 14, 14, 60, 36), OcrLine("notes.md", 14, 40, 120, 62)], W, H) is None


def test_people_writing_to_each_other_are_not_llm_use():
    messenger = read_screen(
        _chrome("web.whatsapp.com")
        + [
            OcrLine("Bob Martin", 300, 124, 400, 146),
            OcrLine("online", 300, 150, 350, 166),
            OcrLine("Did you try asking ChatGPT about the visa form?", 300, 190, 700, 212),
            OcrLine("10:41", 640, 216, 680, 230),
            OcrLine("Not yet, I will look at it tonight", 880, 260, 1200, 282),
            OcrLine("10:42 ✓✓", 1140, 286, 1200, 300),
        ],
        W,
        H,
    )
    got = event_chat([messenger])
    assert got is not None and got.people >= 2
    assert "people writing" in _not_an_ai_chat(got, PlatformHit("ChatGPT", "screen", "ChatGPT"))
    # the AI named only inside a turn, nothing else marking people: still no AI chat
    quiet = EventChat(
        ("Not yet",), ("Did you try asking ChatGPT?",), "bubbles", frame="Bob Martin\nType a message", people=0
    )
    assert "only inside the conversation" in _not_an_ai_chat(quiet, PlatformHit("ChatGPT", "screen", "ChatGPT"))
    named = EventChat(("Not yet",), ("x",), "bubbles", frame="Message ChatGPT\nChatGPT can make mistakes", people=0)
    assert _not_an_ai_chat(named, PlatformHit("ChatGPT", "screen", "ChatGPT")) == ""
    # an LLM site's address or app decides: its page is the AI itself
    assert _not_an_ai_chat(got, PlatformHit("ChatGPT", "domain", "chatgpt.com")) == ""


def test_a_client_command_or_a_label_inside_a_reply_changes_nothing():
    lines = _chrome("chatgpt.com/c/1") + [
        OcrLine("How do I run a local model?", 900, 130, 1200, 152),
        OcrLine("Install ollama, then type:", 300, 190, 600, 212),
        OcrLine("$ ollama run llama3.2", 320, 216, 560, 238),
        OcrLine("You: Hello there, model!", 320, 242, 600, 264),
    ]
    chat = read_screen(lines, W, H, terminal=False)  # a browser: the page's code block is no terminal client
    assert chat.kind == "bubbles" and chat.last_query == "How do I run a local model?"
    assert chat.reply.startswith("Install ollama") and "You: Hello there" in chat.reply  # no labelled transcript
    assert read_screen(_chrome("x") + [OcrLine("just text", 300, 300, 400, 320)], W, H, terminal=True) is None
