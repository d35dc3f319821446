"""Chat layouts beyond right-aligned bubbles, rendered as real pages by headless Chromium (issue 34).

Seven ways an LLM conversation looks on a screen, and three pages of people writing to each other
that name an LLM product (the first pass finds a platform in their title or text) and must not be
taken for LLM use:

========================  ===============================================================
``bubbles``               ChatGPT-like: the user's right-aligned bubble, the reply at the left
``gemini-avatar``         Gemini-like: the question left-aligned beside the user's initial
                          (an avatar), the reply below it beside a drawn (textless) icon
``claude-avatar``         Claude-like: the question in a left-aligned bubble with a two-letter
                          avatar, the reply below at the column's left
``deepseek-zh``           Kimi/DeepSeek-like, Chinese: right bubbles, Chinese input hints
``labelled``              a labelled transcript: ``You: ...`` / ``ChatGPT: ...`` lines
``terminal-ollama``       ``ollama run llama3.2`` in a terminal: ``>>> question``, the reply
``terminal-llm``          the ``llm`` CLI, one shot: ``$ llm "question"``, the reply below
``mail``                  (not LLM use) a mail thread whose subject names ChatGPT, a quoted reply
``forum``                 (not LLM use) a forum thread titled with Claude and ChatGPT, quoted posts
``messenger``             (not LLM use) a messenger chat between two people, right and left
                          bubbles, one message naming ChatGPT
``side-panel``            Copilot's side panel beside a Word page in Edge, and Copilot Chat in
                          VS Code: the window title names the document (issue 47)
``heading-answer``        Perplexity-like: the question set as the page heading, Answer /
                          Sources tabs, source cards, the answer, Related questions
``greeting``              a fresh ChatGPT / Claude chat: the greeting above a centred input box
                          with the question typed, then the chat
``scrolled``              a long ChatGPT answer scrolled: the question leaves the screen during
                          the event, or was off-screen on both captures (never shown), the tab
                          titled by the chat's subject, or ``ChatGPT`` (no subject)
``docs-rail``             (look-alike) GitHub Docs on Copilot Chat, a right "In this article" rail
``question-heading``      (look-alike) a blog post headed by a question with Sources, a Stack
                          Overflow question with its answer and a Related list
``help-form``             (look-alike) a help centre: "How can we help?", a search typed, results
``pricing``               (look-alike) chatgpt.com/pricing: three plan columns
``start-page``            (look-alike) Gemini's start page: a greeting, suggestion cards side by
                          side, the input box, no chat
========================  ===============================================================

The last nine (:data:`BEYOND`) are one to three events each, written from what these products look like.

Each LLM layout has three conversations (three events): two with two 1280x800 captures, the
question typed (in the input box, or after the terminal prompt), then sent and answered, and one
only read (both captures answered: no typed text to echo, the layout alone must tell the user's
turn). The pages of people have two conversations each, a message typed, then sent. Pages are rendered with
Playwright driving Debian's Chromium (``/usr/bin/chromium``), Chinese text in the bundled Noto
Sans CJK font, and written into a raw LifeTrace database (2025-09 schema, no OCR rows: RapidOCR
reads the images), one event per conversation.

``build_layouts(root, keys=None)`` writes ``root/P01/lifetrace.db`` + ``screenshots/`` and returns
the labels by event id. Used by ``tests/annotate/test_chat_layouts.py`` and
``benchmarks/chat_layouts.py``.
"""

from __future__ import annotations

import hashlib
import html
import shutil
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

__all__ = ["BEYOND", "LAYOUTS", "LLM_LAYOUTS", "LOOKALIKES", "Convo", "build_layouts", "select_layouts"]

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
]


@dataclass(frozen=True)
class Convo:
    """One labelled event of a layout."""

    layout: str
    """Layout key (see the module docstring)."""
    app: str
    title: str
    platform: str | None
    """LLM platform the event shows, ``None`` for the pages of people."""
    query: str
    """The question (or the message typed, for the pages of people)."""
    answer: str
    """The reply (or the other person's message)."""
    url: str = ""
    history: tuple[tuple[str, str], ...] = ()
    """Earlier exchanges shown above."""
    typed_first: bool = True
    """The first capture shows the question typed, not sent (False: both show it answered, a
    conversation only read, so nothing was typed to echo)."""


def _c(layout, app, title, platform, url, pairs):  # noqa: ANN001, ANN202 - table helper
    return tuple(Convo(layout, app, title, platform, q, a, url, history=h) for q, a, h in pairs)


# LLM use beyond a chat page's right bubbles (issue 47 item 4), and a look-alike page for each
BEYOND: tuple[Convo, ...] = (
    # an assistant's side panel beside another page; the window title names the page, not the assistant
    Convo(
        "side-panel",
        "Microsoft Edge",
        "Quarterly report - Word - Microsoft Edge",
        "Copilot",
        "Summarize this document in two sentences",
        "Revenue grew 12% in the third quarter on European subscriptions. Costs rose 4% with two new hires.",
        "contoso.sharepoint.com/:w:/r/sites/finance/Quarterly%20report.docx",
    ),
    Convo(
        "side-panel",
        "code",
        "orders.py - shop - Visual Studio Code",
        "Copilot",
        "Why does total_price return None for an empty cart?",
        "The loop never runs for an empty list, so the function reaches its end without a return. Return 0 before the loop.",
    ),
    # an answer engine: the question set as the page's heading above Sources / Answer
    Convo(
        "heading-answer",
        "Google Chrome",
        "Perplexity - Google Chrome",
        "Perplexity",
        "How do I share a pytest fixture between test files?",
        "Put the fixture in a conftest.py file; every test in that folder and below can use it by naming it as an argument.",
        "perplexity.ai/search/how-do-i-share-a-pytest-k2Qx",
    ),
    Convo(
        "heading-answer",
        "Google Chrome",
        "Perplexity - Google Chrome",
        "Perplexity",
        "What is the difference between a process and a thread?",
        "A process has its own memory space; threads run inside a process and share its memory, which makes them cheaper to start.",
        "perplexity.ai/search/what-is-the-difference-bet-7Hq",
        typed_first=False,
    ),
    # a fresh chat: the greeting above (or beside) a centred input box, then the question sent
    Convo(
        "greeting",
        "Google Chrome",
        "ChatGPT - Google Chrome",
        "ChatGPT",
        "How do I undo the last git commit but keep my changes?",
        "Run git reset --soft HEAD~1: the commit is removed and its changes stay staged.",
        "chatgpt.com",
    ),
    Convo(
        "greeting",
        "Google Chrome",
        "Claude - Google Chrome",
        "Claude",
        "Write a short toast for my sister's wedding",
        "To Emma and Sam: may your home be full of laughter, your arguments short and your holidays long. Cheers!",
        "claude.ai/new",
    ),
    # a long chat scrolled: the question leaves the screen (during the event, or before it began)
    Convo(
        "scrolled",
        "Google Chrome",
        "ChatGPT - Google Chrome",
        "ChatGPT",
        "Compare PostgreSQL and MySQL for a small web shop",
        "Both work well for a small shop. PostgreSQL has stricter SQL and richer types; MySQL is simpler to host.",
        "chatgpt.com/c/68a1-5d2f",
        typed_first=False,
    ),
    # opened already scrolled: ChatGPT titles the tab by the chat's subject (the window title holds it)
    Convo(
        "scrolled",
        "Google Chrome",
        "Nightly home folder backup script - Google Chrome",
        "ChatGPT",
        "Write a bash script that backs up my home folder every night",
        "Save this as backup.sh, make it executable and add it to cron with crontab -e.",
        "chatgpt.com/c/71f0-a9b3",
        typed_first=False,
    ),
    # ... and a chat whose title names no subject (a temporary chat keeps "ChatGPT"): the query is unknown
    Convo(
        "scrolled",
        "Google Chrome",
        "ChatGPT - Google Chrome",
        "ChatGPT",
        "Explain what a Python generator is",
        "Use a generator when the values are needed one at a time.",
        "chatgpt.com/c/8b42-0e7d",
        typed_first=False,
    ),
    # look-alikes: not LLM use
    Convo(
        "docs-rail",
        "Google Chrome",
        "About GitHub Copilot Chat - GitHub Docs - Google Chrome",
        None,
        "",
        "",
        "docs.github.com/en/copilot/about-github-copilot-chat",
        typed_first=False,
    ),
    Convo(
        "question-heading",
        "Google Chrome",
        "Can ChatGPT write your unit tests? - The Test Blog - Google Chrome",
        None,
        "",
        "",
        "thetestblog.com/2026/chatgpt-unit-tests",
        typed_first=False,
    ),
    Convo(
        "question-heading",
        "Google Chrome",
        "How do I stream ChatGPT API responses in Python? - Stack Overflow - Google Chrome",
        None,
        "",
        "",
        "stackoverflow.com/questions/7812345/how-do-i-stream-chatgpt-api-responses",
        typed_first=False,
    ),
    Convo(
        "help-form",
        "Google Chrome",
        "Help Center - Google Chrome",
        None,
        "How do I cancel my ChatGPT Plus subscription?",
        "",
        "help.openai.com/en",
    ),
    Convo(
        "pricing",
        "Google Chrome",
        "ChatGPT Pricing - Google Chrome",
        None,
        "",
        "",
        "chatgpt.com/pricing",
        typed_first=False,
    ),
    # the AI's own start page: a greeting, suggestion cards side by side, the input box (no reply shown)
    Convo(
        "start-page",
        "Google Chrome",
        "Google Gemini - Google Chrome",
        None,
        "",
        "",
        "gemini.google.com/app",
        typed_first=False,
    ),
)
"""Issue 47 item 4's layouts: four kinds of LLM use beyond right bubbles (``side-panel``,
``heading-answer``, ``greeting``, ``scrolled``) and a look-alike page for each that is not LLM use
(``docs-rail``, ``question-heading``, ``help-form``, ``pricing``), and Gemini's start page (``start-page``: the
AI's own page with an input box but no chat, against a chat opened already scrolled)."""

LAYOUTS: tuple[Convo, ...] = (
    *_c(
        "bubbles",
        "Google Chrome",
        "ChatGPT - Google Chrome",
        "ChatGPT",
        "chatgpt.com/c/6820a1f3",
        (
            (
                "How do I remove duplicate rows from a pandas DataFrame?",
                "Use df.drop_duplicates(). Pass subset=['col'] to compare only some columns.",
                (),
            ),
            (
                "Why is my Docker container exiting immediately after it starts?",
                "The main process finished. Run a foreground command, for example CMD [\"nginx\", \"-g\", \"daemon off;\"].",
                (("What is a Dockerfile?", "A text file with the steps that build an image."),),
            ),
        ),
    ),
    *_c(
        "gemini-avatar",
        "Google Chrome",
        "Google Gemini - Google Chrome",
        "Gemini",
        "gemini.google.com/app/3be1",
        (
            (
                "Suggest three names for a small bakery that sells sourdough bread.",
                "1. Crumb & Crust 2. The Rising Loaf 3. Wild Yeast Bakery",
                (),
            ),
            (
                "Explain the difference between TCP and UDP in two sentences.",
                "TCP is connection-based and guarantees ordered delivery. UDP sends datagrams without guarantees, which is faster.",
                (("What port does HTTPS use?", "HTTPS uses port 443 by default."),),
            ),
        ),
    ),
    *_c(
        "claude-avatar",
        "Google Chrome",
        "Claude - Google Chrome",
        "Claude",
        "claude.ai/chat/9d2e",
        (
            (
                "Rewrite this sentence to sound more formal: we gotta ship the report by friday.",
                "We need to deliver the report by Friday.",
                (),
            ),
            (
                "Draft a polite reply declining a meeting invitation for next Tuesday.",
                "Thank you for the invitation. Unfortunately I am unavailable next Tuesday; could we find another time?",
                (
                    (
                        "Is 'regards' too informal for an email to a client?",
                        "No, 'Kind regards' is a safe, polite closing.",
                    ),
                ),
            ),
        ),
    ),
    *_c(
        "deepseek-zh",
        "Google Chrome",
        "DeepSeek - 探索未至之境 - Google Chrome",
        "DeepSeek",
        "chat.deepseek.com/a/chat/s/4f1e",
        (
            (
                "如何用 Python 读取一个很大的 CSV 文件而不占满内存？",
                "可以使用 pandas.read_csv 的 chunksize 参数分块读取，每次只处理一部分数据。",
                (),
            ),
            (
                "帮我写一个正则表达式匹配中国大陆手机号",
                "可以使用 ^1[3-9]\\d{9}$ 匹配十一位的手机号码。",
                (("正则表达式里的 \\d 是什么意思？", "\\d 匹配任意一个数字字符。"),),
            ),
        ),
    ),
    *_c(
        "labelled",
        "Firefox",
        "ChatGPT - Shared conversation — Mozilla Firefox",
        "ChatGPT",
        "chatgpt.com/share/6820-aa",
        (
            (
                "What is the capital of Australia and why was it chosen?",
                "Canberra. It was chosen in 1908 as a compromise between Sydney and Melbourne.",
                (),
            ),
            (
                "Give me a regular expression that matches an ISO date like 2026-12-03.",
                "Use ^\\d{4}-\\d{2}-\\d{2}$ to match four digits, a dash, two digits, a dash and two digits.",
                (("What does ISO 8601 define?", "A standard way to write dates and times."),),
            ),
        ),
    ),
    *_c(
        "terminal-ollama",
        "xterm",
        "alice@laptop: ~",
        "Ollama",
        "",
        (
            (
                "How do I list the ten largest files in a folder?",
                "Use du and sort: du -ah . | sort -rh | head -n 10",
                (),
            ),
            (
                "What does the git stash command do?",
                "It saves your uncommitted changes and cleans the working tree; git stash pop brings them back.",
                (),
            ),
        ),
    ),
    *_c(
        "terminal-llm",
        "gnome-terminal-server",
        "alice@laptop: ~/notes",
        "llm CLI",
        "",
        (
            (
                "Summarize the rules of chess castling in one sentence",
                "Castling moves the king two squares toward a rook that then jumps over it, allowed only if neither piece "
                "has moved and the king is not in check.",
                (),
            ),
            ("Translate good morning everyone into Spanish", "Buenos días a todos.", ()),
        ),
    ),
    # read only: both captures show the answered question (no text typed into the input box to echo)
    *(
        Convo(layout, app, title, platform, q, a, url, typed_first=False)
        for layout, app, title, platform, url, q, a in (
            (
                "bubbles",
                "Google Chrome",
                "ChatGPT - Google Chrome",
                "ChatGPT",
                "chatgpt.com/c/77b0",
                "What is the boiling point of water at the top of Mount Everest?",
                "About 70 degrees Celsius, because the air pressure is low.",
            ),
            (
                "gemini-avatar",
                "Google Chrome",
                "Google Gemini - Google Chrome",
                "Gemini",
                "gemini.google.com/app/81c4",
                "Plan a three-day trip to Kyoto with one temple per day.",
                "Day 1: Kinkaku-ji. Day 2: Fushimi Inari. Day 3: Kiyomizu-dera.",
            ),
            (
                "claude-avatar",
                "Google Chrome",
                "Claude - Google Chrome",
                "Claude",
                "claude.ai/chat/a7f0",
                "Check this SQL for errors: SELECT name FROM users WHERE age > 30 ORDER name;",
                "The ORDER clause needs BY: SELECT name FROM users WHERE age > 30 ORDER BY name;",
            ),
            (
                "deepseek-zh",
                "Google Chrome",
                "DeepSeek - 探索未至之境 - Google Chrome",
                "DeepSeek",
                "chat.deepseek.com/a/chat/s/9a2b",
                "给我推荐三本关于机器学习的入门书",
                "可以阅读《机器学习》周志华、《统计学习方法》李航和《动手学深度学习》。",
            ),
            (
                "labelled",
                "Firefox",
                "ChatGPT - Shared conversation — Mozilla Firefox",
                "ChatGPT",
                "chatgpt.com/share/71c2-bd",
                "How many minutes should I boil an egg for a soft yolk?",
                "About six minutes in boiling water, then cool it in cold water.",
            ),
            (
                "terminal-ollama",
                "xterm",
                "alice@laptop: ~",
                "Ollama",
                "",
                "Write a haiku about autumn rain",
                "Cold rain on the roof, / red leaves drift along the road, / the kettle whistles.",
            ),
            (
                "terminal-llm",
                "gnome-terminal-server",
                "alice@laptop: ~/notes",
                "llm CLI",
                "",
                "Name three prime numbers larger than one hundred",
                "101, 103 and 107 are prime numbers larger than one hundred.",
            ),
        )
    ),
    # people writing to each other, naming an LLM product: not LLM use
    *_c(
        "mail",
        "Google Chrome",
        "Re: ChatGPT Team licence - alice@example.com - Mail - Google Chrome",
        None,
        "mail.example.com/inbox/1843",
        (
            (
                "Thanks Bob, I will forward the quote to finance today.",
                "Hi Alice, the ChatGPT Team licence costs 25 euros per seat. Can you approve ten seats?",
                (),
            ),
            (
                "Sounds good, let us discuss it on Thursday.",
                "Alice, should we compare ChatGPT with Gemini before we buy anything?",
                (),
            ),
        ),
    ),
    *_c(
        "forum",
        "Google Chrome",
        "Is Claude better than ChatGPT for refactoring? - DevTalk Forum - Google Chrome",
        None,
        "forum.devtalk.example/t/4412",
        (
            (
                "I agree, the tests matter more than the tool.",
                "I tried Claude and ChatGPT on a legacy Java project. Both helped, but I still had to write the tests.",
                (),
            ),
            (
                "Same experience here with a Django codebase.",
                "ChatGPT renamed half of my variables without being asked.",
                (),
            ),
        ),
    ),
    *_c(
        "messenger",
        "Google Chrome",
        "WhatsApp - Google Chrome",
        None,
        "web.whatsapp.com",
        (
            ("Not yet, I will look at it tonight", "Did you try asking ChatGPT about the visa form?", ()),
            (
                "Sure, see you at the station at seven",
                "Can you bring the printed tickets? ChatGPT said we need them.",
                (),
            ),
        ),
    ),
    *BEYOND,
)
"""Every event of the set, in order (three per LLM layout, two per page of people, then :data:`BEYOND`)."""
LLM_LAYOUTS = (
    "bubbles",
    "gemini-avatar",
    "claude-avatar",
    "deepseek-zh",
    "labelled",
    "terminal-ollama",
    "terminal-llm",
    "side-panel",
    "heading-answer",
    "greeting",
    "scrolled",
)
"""The layouts that are LLM use (the others are people writing to each other, or look-alikes)."""
LOOKALIKES = ("docs-rail", "question-heading", "help-form", "pricing", "start-page")
"""Pages that look like :data:`BEYOND`'s LLM layouts but are no LLM use."""

_BASE = """@font-face{font-family:"NotoCJK";src:url("FONT");font-display:block}
body{margin:0;font-family:"NotoCJK",sans-serif;font-size:17px;color:#1f1f1f;background:#fff}
.chrome{position:fixed;left:0;right:0;top:0;height:84px;background:#dee1e6;font-size:14px;color:#333}
.tab{position:absolute;left:8px;top:6px;width:240px;height:30px;background:#fff;border-radius:8px 8px 0 0;padding:7px 12px;box-sizing:border-box;white-space:nowrap;overflow:hidden}
.addr{position:absolute;left:0;right:0;top:38px;height:46px;background:#fff;padding:12px 16px;box-sizing:border-box}
.side{position:fixed;left:0;top:84px;bottom:0;width:250px;background:#f4f4f5;padding:18px;box-sizing:border-box}
.brand{font-size:22px;font-weight:bold;margin-bottom:24px}.side div.item{margin:10px 0;color:#555}
.main{margin-left:290px;margin-right:60px;padding-top:124px}
.input{position:fixed;left:330px;right:120px;bottom:60px;border:1px solid #bbb;border-radius:24px;padding:16px 22px;color:#777}
.typed{color:#1f1f1f}
.foot{position:fixed;left:330px;bottom:24px;font-size:13px;color:#777}
"""
_LAYOUT_CSS = {
    "bubbles": ".row{display:flex;justify-content:flex-end;margin-bottom:26px}"
    ".user{max-width:62%;background:#ececf1;border-radius:16px;padding:14px 18px}.bot{line-height:1.6;margin-bottom:30px}",
    "deepseek-zh": ".row{display:flex;justify-content:flex-end;margin-bottom:26px}"
    ".user{max-width:62%;background:#eff6ff;border-radius:14px;padding:12px 16px}.bot{line-height:1.7;margin-bottom:30px}",
    "gemini-avatar": ".turn{display:flex;align-items:center;margin-bottom:28px}"
    ".av{width:34px;height:34px;border-radius:50%;background:#7b1fa2;color:#fff;display:flex;"
    "align-items:center;justify-content:center;font-size:17px;margin-right:18px;flex:none}"
    ".bot{display:flex;margin-bottom:34px;line-height:1.6}"
    ".spark{width:30px;height:30px;margin-right:22px;flex:none;border-radius:50%;"
    "background:radial-gradient(circle,#4285f4 20%,#9b72cb 60%,#fff 62%)}",
    "claude-avatar": ".turn{display:flex;align-items:flex-start;background:#f0eee6;border-radius:14px;padding:12px 16px;"
    "margin-bottom:24px;max-width:80%}"
    ".av{width:30px;height:30px;border-radius:50%;background:#3d3d3a;color:#fff;display:flex;"
    "align-items:center;justify-content:center;font-size:13px;margin-right:14px;flex:none}"
    ".bot{line-height:1.65;margin-bottom:30px;font-family:Georgia,'NotoCJK',serif}",
    "labelled": ".main{margin-left:160px;margin-right:160px}.line{margin:0 0 18px;line-height:1.6}"
    ".who{font-weight:bold}",
}


def _chrome(c: Convo) -> str:
    esc = html.escape
    return (
        f"<div class='chrome'><div class='tab'>{esc(c.title.rsplit(' - ', 1)[0][:28])} &nbsp; ×</div>"
        f"<div class='addr'>← &nbsp; → &nbsp; C &nbsp; ⓘ &nbsp; {esc(c.url)}</div></div>"
    )


def _page(c: Convo, font: str, sent: bool, shot: int = 0) -> str:
    """The page of capture ``shot`` (0 or 1): ``sent=False`` is the question typed, not sent yet."""
    esc = html.escape
    css = _BASE.replace("FONT", Path(font).as_uri())
    if c.layout in _BEYOND_KEYS:
        return _beyond_page(c, css, sent, shot)
    kind = c.layout
    pairs = list(c.history) + ([(c.query, c.answer)] if sent else [])
    typed = "" if sent else c.query
    if kind.startswith("terminal"):
        lines = []
        if kind == "terminal-ollama":
            lines.append("alice@laptop:~$ ollama run llama3.2")
            for q, a in pairs:
                head, _, tail = a.partition(": ")  # "Use du and sort:" then the command on its own line
                lines += [f">>> {q}", *([f"{head}:", tail] if tail else [a]), ""]
            lines.append(f">>> {typed}" if typed else ">>> Send a message (/? for help)")
        else:
            lines += ["alice@laptop:~/notes$ ls", "ideas.md  todo.txt", f"alice@laptop:~/notes$ llm \"{c.query}\""]
            if sent:
                words, row = c.answer.split(), ""
                for w in words:  # the terminal wraps at about 80 columns
                    if len(row) + len(w) > 78:
                        lines.append(row)
                        row = ""
                    row = f"{row} {w}".strip()
                lines += [row, "alice@laptop:~/notes$"]
        body = "".join(f"<div>{esc(x) or '&nbsp;'}</div>" for x in lines)
        return (
            f"<html><head><meta charset='utf-8'><style>{css}body{{background:#111;color:#e8e8e8;"
            f"font-family:'DejaVu Sans Mono',monospace;font-size:17px;padding:14px;line-height:1.45}}</style></head>"
            f"<body>{body}</body></html>"
        )
    if kind in ("mail", "forum", "messenger"):
        return _people_page(c, css, sent)
    extra = _LAYOUT_CSS[kind]
    if kind == "labelled":
        turns = "".join(
            f"<p class='line'><span class='who'>You:</span> {esc(q)}</p>"
            f"<p class='line'><span class='who'>ChatGPT:</span> {esc(a)}</p>"
            for q, a in pairs
        )
        top = "<p class='line' style='color:#666'>This is a copy of a conversation between ChatGPT &amp; Anonymous.</p>"
        box = (
            f"<div class='input typed'>{esc(typed)}</div>"
            if typed
            else "<div class='foot'>Report content | Terms of use</div>"
        )
        return (
            f"<html><head><meta charset='utf-8'><style>{css}{extra}</style></head><body>{_chrome(c)}"
            f"<div class='main'>{top}{turns}</div>{box}</body></html>"
        )
    if kind in ("bubbles", "deepseek-zh"):
        turns = "".join(
            f"<div class='row'><div class='user'>{esc(q)}</div></div><div class='bot'>{esc(a)}</div>" for q, a in pairs
        )
        brand, hint, foot = (
            ("ChatGPT", "Message ChatGPT", "ChatGPT can make mistakes. Check important info.")
            if kind == "bubbles"
            else ("deepseek", "给 DeepSeek 发送消息", "内容由 AI 生成，请仔细甄别")
        )
    elif kind == "gemini-avatar":
        turns = "".join(
            f"<div class='turn'><div class='av'>A</div><div>{esc(q)}</div></div>"
            f"<div class='bot'><div class='spark'></div><div>{esc(a)}</div></div>"
            for q, a in pairs
        )
        if not pairs:
            turns = "<div style='font-size:40px;color:#c0c0c0;margin-top:140px'>Hello, Alice</div>"
        brand, hint, foot = "Gemini", "Ask Gemini", "Gemini can make mistakes, so double-check it"
    else:  # claude-avatar
        turns = "".join(
            f"<div class='turn'><div class='av'>AL</div><div>{esc(q)}</div></div><div class='bot'>{esc(a)}</div>"
            for q, a in pairs
        )
        if not pairs:
            turns = "<div style='font-size:34px;color:#555;margin-top:140px'>Good afternoon, Alice</div>"
        brand, hint, foot = "Claude", "Reply to Claude...", "Claude can make mistakes. Please double-check responses."
    box = f"<div class='input{' typed' if typed else ''}'>{esc(typed or hint)}</div>"
    return (
        f"<html><head><meta charset='utf-8'><style>{css}{extra}</style></head><body>{_chrome(c)}"
        f"<div class='side'><div class='brand'>{esc(brand)}</div><div class='item'>New chat</div>"
        f"<div class='item'>Recent</div></div><div class='main'>{turns}</div>{box}"
        f"<div class='foot'>{esc(foot)}</div></body></html>"
    )


_BEYOND_KEYS = frozenset(c.layout for c in BEYOND)

_SCROLL_ANSWER = {
    "Compare PostgreSQL and MySQL for a small web shop": (
        "Short answer: both will serve a small web shop well. The differences show up in SQL strictness,"
        " data types and hosting.",
        "PostgreSQL follows the SQL standard closely, has rich types (JSONB, arrays, ranges) and strong"
        " constraints, so bad data is refused early.",
        "MySQL is the default on most shared hosts, is simple to run and is fast for plain reads; the InnoDB"
        " engine gives transactions and foreign keys.",
        "TABLE",
        "For a new shop where you choose the host, PostgreSQL is the safer default; on a shared host that"
        " only offers MySQL, MySQL is fine.",
        "Both work well for a small shop. PostgreSQL has stricter SQL and richer types; MySQL is simpler to host.",
    ),
    "Write a bash script that backs up my home folder every night": (
        "Here is a small script that copies your home folder into a dated archive and keeps the last seven.",
        "CODE",
        "How it works:",
        "1. tar writes one compressed archive per night, named by date.",
        "2. find deletes the archives older than seven days.",
        "3. cron runs the script at 02:30 every night.",
        "Save this as backup.sh, make it executable and add it to cron with crontab -e.",
        "Add the line 30 2 * * * /home/alice/bin/backup.sh and save.",
    ),
    "Explain what a Python generator is": (
        "A generator is a function that gives its values one at a time instead of building a whole list.",
        "It uses yield where a normal function would use return: each yield hands one value to the caller and pauses"
        " the function until the next value is asked for.",
        "Because it keeps only its current state, a generator can walk through a file of millions of lines with"
        " almost no memory.",
        "You can loop over a generator with for, pass it to sum() or list(), or ask for one value with next().",
        "A generator expression is the short form: (x * x for x in range(10)) squares the numbers lazily.",
        "Once a generator is used up it stays empty; call the function again to start over.",
        "Use a generator when the values are needed one at a time.",
    ),
}
_CODE = (
    "#!/bin/bash",
    "set -euo pipefail",
    'dest="/mnt/backup/$(date +%F).tar.gz"',
    'tar -czf "$dest" -C /home alice',
    "find /mnt/backup -name '*.tar.gz' -mtime +7 -delete",
)
_TABLE = (
    ("", "PostgreSQL", "MySQL"),
    ("Licence", "PostgreSQL License", "GPLv2"),
    ("JSON", "JSONB, indexed", "JSON"),
    ("Hosting", "VPS or managed", "almost every host"),
)


def _beyond_page(c: Convo, css: str, sent: bool, shot: int) -> str:
    """A page of :data:`BEYOND` (capture ``shot``: 0 or 1)."""
    esc = html.escape
    head = f"<html><head><meta charset='utf-8'><style>{css}"
    pane = (
        ".inbox{position:fixed;background:#fff;border:1px solid #bbb;border-radius:22px;padding:14px 20px;color:#777}"
    )
    if c.layout == "side-panel" and c.app == "code":
        code = [
            "def total_price(cart):",
            "    for item in cart:",
            "        total = sum(i.price * i.qty for i in cart)",
            "        return total",
            "",
            "def apply_discount(total, code):",
            "    if code == 'WINTER10':",
            "        return total * 0.9",
            "    return total",
        ]
        chat = ""
        if sent:
            chat = (
                "<div class='req'><span class='av'>A</span> alice</div>"
                f"<div class='msg'>{esc(c.query)}</div>"
                "<div class='req'><span class='av2'>✦</span> GitHub Copilot</div>"
                f"<div class='msg'>{esc(c.answer)}</div>"
            )
        box = esc(c.query) if not sent else "Ask Copilot or type / for commands"
        return (
            head + "body{background:#1f1f1f;color:#ccc;font-size:14px}"
            ".title{position:fixed;top:0;left:0;right:0;height:34px;background:#181818;text-align:center;padding-top:8px;box-sizing:border-box}"
            ".menu{position:fixed;top:8px;left:40px;color:#aaa}"
            ".act{position:fixed;left:0;top:34px;bottom:24px;width:48px;background:#181818}"
            ".exp{position:fixed;left:48px;top:34px;bottom:24px;width:230px;background:#181818;padding:10px 16px;box-sizing:border-box}"
            ".exp div{margin:6px 0}.ed{position:fixed;left:300px;top:34px;width:540px;padding-top:40px;font-family:'DejaVu Sans Mono',monospace;font-size:14px;line-height:1.6;white-space:pre;color:#d4d4d4}"
            ".tabs{position:fixed;left:300px;top:40px;color:#ddd}"
            ".chat{position:fixed;left:880px;right:0;top:34px;bottom:24px;background:#181818;border-left:1px solid #333;padding:12px 18px;box-sizing:border-box}"
            ".req{margin:18px 0 6px;font-weight:bold;color:#ddd}.av{display:inline-block;width:20px;height:20px;border-radius:50%;background:#2a7;color:#fff;text-align:center;font-size:12px}"
            ".av2{color:#aaa}.msg{line-height:1.55;color:#ccc}"
            ".cin{position:absolute;left:16px;right:16px;bottom:14px;border:1px solid #555;border-radius:6px;padding:10px 12px;color:#bbb}"
            ".status{position:fixed;left:0;right:0;bottom:0;height:24px;background:#007acc;color:#fff;font-size:12px;padding:4px 12px;box-sizing:border-box}"
            "</style></head><body>"
            f"<div class='title'>{esc(c.title)}</div><div class='menu'>File &nbsp; Edit &nbsp; Selection &nbsp; View &nbsp; Go &nbsp; Run &nbsp; Terminal</div>"
            "<div class='act'></div><div class='exp'><div>EXPLORER</div><div>SHOP</div><div>cart.py</div><div>orders.py</div>"
            "<div>tests</div><div>README.md</div></div><div class='tabs'>orders.py &nbsp; ×</div>"
            f"<div class='ed'>{esc(chr(10).join(code))}</div>"
            f"<div class='chat'><div style='font-size:12px;letter-spacing:1px'>CHAT</div>{chat}<div class='cin'>{box}</div></div>"
            "<div class='status'>main &nbsp; Ln 2, Col 5 &nbsp; Spaces: 4 &nbsp; UTF-8 &nbsp; Python 3.12</div></body></html>"
        )
    if c.layout == "side-panel":
        doc = (
            "Quarterly report",
            "Revenue grew 12% in the third quarter, driven by subscriptions in",
            "Europe and a new partner channel that opened in August.",
            "Costs",
            "Operating costs rose 4% with two new hires in support and one in sales.",
            "Outlook",
            "We expect the fourth quarter to follow the same trend.",
        )
        paras = "".join(f"<h3>{esc(x)}</h3>" if len(x.split()) <= 2 else f"<p>{esc(x)}</p>" for x in doc)
        chat = (
            f"<div class='ub'><div>{esc(c.query)}</div></div><div class='rep'>{esc(c.answer)}</div>"
            if sent
            else "<div class='rep' style='font-size:22px'>Hi Alice, how can I help with this document?</div>"
        )
        box = esc(c.query) if not sent else "Message Copilot"
        return (
            head
            + ".ribbon{position:fixed;top:84px;left:0;right:0;height:40px;background:#f3f2f1;font-size:14px;padding:11px 20px;box-sizing:border-box}"
            ".doc{position:fixed;left:60px;top:150px;width:720px;background:#fff;padding:30px 50px;box-sizing:border-box;line-height:1.5}"
            ".pane{position:fixed;right:0;top:124px;bottom:0;width:390px;background:#f7f7fb;border-left:1px solid #ddd;padding:16px 22px;box-sizing:border-box}"
            ".ph{font-weight:bold;font-size:18px;margin-bottom:28px}.ub{display:flex;justify-content:flex-end;margin-bottom:18px}"
            ".ub div{background:#e3e8ff;border-radius:14px;padding:10px 14px;max-width:80%}.rep{line-height:1.55}"
            ".pin{position:absolute;left:18px;right:18px;bottom:22px;background:#fff;border:1px solid #bbb;border-radius:18px;padding:12px 16px;color:#555}"
            "body{background:#e9e9e9}</style></head><body>"
            + _chrome(c)
            + "<div class='ribbon'>File &nbsp;&nbsp; Home &nbsp;&nbsp; Insert &nbsp;&nbsp; Layout &nbsp;&nbsp; References &nbsp;&nbsp; Review &nbsp;&nbsp; View</div>"
            f"<div class='doc'>{paras}</div><div class='pane'><div class='ph'>Copilot</div>{chat}<div class='pin'>{box}</div></div></body></html>"
        )
    if c.layout == "heading-answer":
        side = "<div class='side'><div class='brand'>perplexity</div><div class='item'>Home</div><div class='item'>Discover</div><div class='item'>Spaces</div><div class='item'>Library</div></div>"
        if not sent:
            return (
                head
                + pane
                + "</style></head><body>"
                + _chrome(c)
                + side
                + "<div style='position:fixed;left:250px;right:0;top:300px;text-align:center;font-size:34px'>What do you want to know?</div>"
                f"<div class='inbox' style='left:420px;right:170px;top:370px;height:70px;color:#1f1f1f'>{esc(c.query)}</div></body></html>"
            )
        sources = (
            ("docs.pytest.org", "How to use fixtures"),
            ("stackoverflow.com", "Sharing fixtures across tests"),
            ("realpython.com", "Effective testing with pytest"),
        )
        cards = "".join(
            f"<div class='card'><div class='dom'>{esc(d)}</div><div>{esc(t)}</div></div>" for d, t in sources
        )
        related = ("What does scope='session' do in pytest?", "How do I parametrize a fixture?")
        return (
            head + pane + "h1{font-size:30px;font-weight:500;margin:0 0 22px}.tabs{font-size:15px;margin-bottom:20px}"
            ".tabs b{border-bottom:2px solid #222;padding-bottom:6px;margin-right:26px}.tabs span{color:#666;margin-right:26px}"
            ".cards{display:flex;gap:14px;margin-bottom:26px}.card{background:#f3f3ee;border-radius:10px;padding:10px 12px;width:220px;font-size:14px}"
            ".dom{color:#666;font-size:12px}.ans{line-height:1.65;margin-bottom:30px}.rel{font-size:20px;margin-bottom:10px}"
            ".rq{border-top:1px solid #e5e5e5;padding:10px 0;color:#333}</style></head><body>"
            + _chrome(c)
            + side
            + f"<div class='main'><h1>{esc(c.query)}</h1><div class='tabs'><b>Answer</b><span>Images</span><span>Sources · 3</span></div>"
            f"<div class='cards'>{cards}</div><div class='ans'>{esc(c.answer)}</div><div class='rel'>Related</div>"
            + "".join(f"<div class='rq'>{esc(q)}</div>" for q in related)
            + "</div><div class='inbox' style='left:420px;right:170px;bottom:30px'>Ask a follow-up</div></body></html>"
        )
    if c.layout == "greeting":
        chatgpt = c.platform == "ChatGPT"
        side = (
            "<div class='side'><div class='brand'>ChatGPT</div><div class='item'>New chat</div><div class='item'>Search chats</div><div class='item'>Library</div></div>"
            if chatgpt
            else "<div class='side'><div class='brand'>Claude</div><div class='item'>New chat</div><div class='item'>Chats</div><div class='item'>Projects</div></div>"
        )
        if not sent:
            hello = "What can I help with?" if chatgpt else "✻ Good afternoon, Alice"
            font = "font-size:30px" if chatgpt else "font-size:40px;font-family:Georgia,serif"
            tools = "+ &nbsp; Tools" if chatgpt else "+ &nbsp; Claude Sonnet 4"
            return (
                head
                + pane
                + "</style></head><body>"
                + _chrome(c)
                + side
                + f"<div style='position:fixed;left:250px;right:0;top:290px;text-align:center;{font}'>{hello}</div>"
                f"<div class='inbox' style='left:400px;right:150px;top:360px;height:78px;color:#1f1f1f'>{esc(c.query)}"
                f"<div style='position:absolute;left:20px;bottom:10px;color:#777;font-size:14px'>{tools}</div></div>"
                + (
                    "<div class='foot' style='left:520px'>ChatGPT can make mistakes. Check important info.</div>"
                    if chatgpt
                    else ""
                )
                + "</body></html>"
            )
        if chatgpt:
            turns = (
                f"<div style='display:flex;justify-content:flex-end;margin-bottom:26px'><div style='max-width:62%;background:#ececf1;"
                f"border-radius:16px;padding:14px 18px'>{esc(c.query)}</div></div><div style='line-height:1.6'>{esc(c.answer)}</div>"
            )
            hint, foot = "Ask anything", "ChatGPT can make mistakes. Check important info."
        else:
            turns = (
                "<div style='display:flex;align-items:flex-start;background:#f0eee6;border-radius:14px;padding:12px 16px;margin-bottom:24px;max-width:80%'>"
                "<div style='width:30px;height:30px;border-radius:50%;background:#3d3d3a;color:#fff;display:flex;align-items:center;"
                f"justify-content:center;font-size:13px;margin-right:14px;flex:none'>AL</div><div>{esc(c.query)}</div></div>"
                f"<div style='line-height:1.65;font-family:Georgia,serif'>{esc(c.answer)}</div>"
            )
            hint, foot = "Reply to Claude...", "Claude can make mistakes. Please double-check responses."
        return (
            head + pane + "</style></head><body>" + _chrome(c) + side + f"<div class='main'>{turns}</div>"
            f"<div class='inbox' style='left:330px;right:120px;bottom:60px'>{hint}</div><div class='foot'>{esc(foot)}</div></body></html>"
        )
    if c.layout == "scrolled":
        parts = []
        for p in _SCROLL_ANSWER[c.query]:
            if p == "TABLE":
                rows = "".join("<tr>" + "".join(f"<td>{esc(x)}</td>" for x in r) + "</tr>" for r in _TABLE)
                parts.append(f"<table>{rows}</table>")
            elif p == "CODE":
                parts.append(f"<pre>{esc(chr(10).join(_CODE))}</pre>")
            else:
                parts.append(f"<p>{esc(p)}</p>")
        body = f"<div class='row'><div class='user'>{esc(c.query)}</div></div><div class='bot'>{''.join(parts)}</div>"
        # the first conversation scrolls during the event (the question in view, then not); the second
        # was opened already scrolled down (the question never in view)
        offset = (0 if shot == 0 else 430) if c.query.startswith("Compare") else (360 if shot == 0 else 520)
        return (
            head
            + pane
            + _LAYOUT_CSS["bubbles"]
            + f".main{{margin-top:-{offset}px}}.chrome,.side{{z-index:2}}table{{border-collapse:collapse;margin:12px 0}}"
            "td{border-bottom:1px solid #ddd;padding:8px 18px 8px 0}pre{background:#f4f4f4;border-radius:8px;padding:14px;font-size:15px}"
            ".band{position:fixed;left:250px;right:0;bottom:0;height:120px;background:#fff}"
            "</style></head><body>"
            + _chrome(c)
            + "<div class='side'><div class='brand'>ChatGPT</div><div class='item'>New chat</div><div class='item'>Search chats</div></div>"
            f"<div class='main'>{body}</div><div class='band'></div>"
            "<div class='inbox' style='left:330px;right:120px;bottom:60px'>Ask anything</div>"
            "<div class='foot'>ChatGPT can make mistakes. Check important info.</div></body></html>"
        )
    return _lookalike_page(c, css, sent, shot)


def _lookalike_page(c: Convo, css: str, sent: bool, shot: int) -> str:
    esc = html.escape
    head = f"<html><head><meta charset='utf-8'><style>{css}"
    if c.layout == "start-page":
        cards = (
            "Create a weekly meal plan for a family of four",
            "Explain how compound interest works with an example",
            "Write a short poem about the first snow of winter",
            "Help me plan a weekend trip to the mountains",
        )
        return (
            head + ".cards{position:fixed;left:330px;right:120px;top:380px;display:flex;gap:14px}"
            ".card{flex:1;background:#f0f4f9;border-radius:12px;padding:14px;font-size:15px;line-height:1.45;height:110px}"
            "</style></head><body>"
            + _chrome(c)
            + "<div class='side'><div class='brand'>Gemini</div><div class='item'>New chat</div><div class='item'>Gems</div>"
            "<div class='item'>Recent</div></div>"
            "<div style='position:fixed;left:330px;top:250px;font-size:40px;color:#c0c0c0'>Hello, Alice</div>"
            + f"<div class='cards'>{''.join(f'<div class=card>{esc(x)}</div>' for x in cards[shot:] + cards[:shot])}</div>"
            "<div class='input'>Ask Gemini</div><div class='foot'>Gemini can make mistakes, so double-check it</div></body></html>"
        )
    if c.layout == "docs-rail":
        nav = (
            "GitHub Copilot",
            "Quickstart",
            "About GitHub Copilot",
            "About Copilot Chat",
            "Using Copilot Chat",
            "Billing",
        )
        article = (
            "GitHub Copilot Chat is a chat interface that lets you ask and receive answers to coding-related questions"
            " within GitHub.com and supported IDEs.",
            "You can use Copilot Chat to explain code, suggest fixes for bugs, write unit tests and answer general"
            " programming questions.",
            "Limitations of GitHub Copilot Chat",
            "Copilot Chat may produce code that looks valid but is not correct. Review and test what it suggests before"
            " you use it.",
            "Frequently asked questions",
            "Can I use Copilot Chat in my IDE? Yes: Visual Studio Code, Visual Studio and JetBrains IDEs are supported.",
        )
        rail = (
            "In this article",
            "About GitHub Copilot Chat",
            "Use cases for Copilot Chat",
            "Limitations of Copilot Chat",
            "Frequently asked questions",
            "Further reading",
        )
        return (
            head
            + ".top{position:fixed;top:84px;left:0;right:0;height:50px;border-bottom:1px solid #ddd;padding:14px 20px;box-sizing:border-box;background:#fff;font-size:15px}"
            f".art{{position:absolute;left:300px;width:620px;top:{160 - 120 * shot}px;line-height:1.6}}.rail{{position:fixed;left:990px;top:160px;width:260px;font-size:14px}}"
            ".rail div{margin:8px 0;color:#0969da}.nav{position:fixed;left:0;top:134px;width:250px;padding:20px;box-sizing:border-box;font-size:14px}"
            ".nav div{margin:10px 0}h1{font-size:30px;margin:0 0 14px}h2{font-size:22px}</style></head><body>"
            + _chrome(c)
            + "<div class='art'><h1>About GitHub Copilot Chat</h1>"
            + "".join(f"<h2>{esc(x)}</h2>" if len(x) < 40 else f"<p>{esc(x)}</p>" for x in article)
            + "</div><div class='top'>GitHub Docs &nbsp;&nbsp; Version: Free, Pro, &amp; Team &nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp; Search GitHub Docs</div>"
            + "<div class='nav'>"
            + "".join(f"<div>{esc(x)}</div>" for x in nav)
            + "</div>"
            + "<div class='rail'>"
            + "".join(
                f"<div{' style=color:#222;font-weight:bold' if i == 0 else ''}>{esc(x)}</div>"
                for i, x in enumerate(rail)
            )
            + "</div></body></html>"
        )
    if c.layout == "question-heading" and "Stack Overflow" in c.title:
        q = c.title.split(" - Stack Overflow")[0]
        related = (
            "How to use the OpenAI API with Python asyncio",
            "ChatGPT API returns 429 Too Many Requests",
            "Stream a response from Flask",
        )
        return (
            head
            + ".top{position:fixed;top:84px;left:0;right:0;height:48px;border-bottom:1px solid #ddd;padding:13px 20px;box-sizing:border-box;font-size:15px;background:#fff}"
            f".q{{position:absolute;left:230px;width:650px;top:{150 - 150 * shot}px;line-height:1.55}}h1{{font-size:26px;font-weight:normal;margin:0 0 8px}}"
            ".meta{font-size:13px;color:#666;margin-bottom:16px}.votes{float:left;width:50px;text-align:center;font-size:20px;color:#555}"
            ".bodyq{margin-left:64px}pre{background:#f6f6f6;padding:10px;font-size:14px}.tag{background:#e1ecf4;color:#39739d;font-size:12px;padding:3px 6px;margin-right:6px}"
            "h2{font-size:19px;font-weight:normal;margin:26px 0 12px}.rel{position:fixed;left:940px;top:150px;width:300px;font-size:13px}"
            ".rel div{margin:9px 0;color:#0074cc}.nav{position:fixed;left:0;top:150px;width:170px;padding-left:24px;font-size:14px;color:#555}.nav div{margin:10px 0}"
            "</style></head><body>"
            + _chrome(c)
            + f"<div class='q'><h1>{esc(q)}</h1><div class='meta'>Asked today &nbsp; Modified today &nbsp; Viewed 31 times</div>"
            "<div class='votes'>3</div><div class='bodyq'><p>I call the chat completions endpoint with stream=True but my loop"
            " prints nothing until the whole answer has arrived. What am I missing?</p>"
            "<pre>for chunk in client.chat.completions.create(model=m, messages=msgs, stream=True):\n    print(chunk)</pre>"
            "<span class='tag'>python</span><span class='tag'>openai-api</span><span class='tag'>chatgpt-api</span></div>"
            "<h2>1 Answer &nbsp;&nbsp;&nbsp;&nbsp; Sorted by: Highest score</h2><div class='votes'>5</div><div class='bodyq'>"
            "<p>Print chunk.choices[0].delta.content with flush=True; your terminal buffers the output until a newline.</p></div></div>"
            "<div class='top'>stackoverflow &nbsp;&nbsp; Products &nbsp;&nbsp;&nbsp;&nbsp; Search…</div>"
            "<div class='nav'><div>Home</div><div>Questions</div><div>Tags</div><div>Users</div></div>"
            "<div class='rel'><div style='color:#222;font-size:16px'>Related</div>"
            + "".join(f"<div>{esc(x)}</div>" for x in related)
            + "</div></body></html>"
        )
    if c.layout == "question-heading":
        paras = (
            "I gave ChatGPT a small Python module and asked it for a test suite. It wrote twelve tests in a minute;",
            "nine passed, two tested behaviour the module does not have, and one hid a real bug by asserting the wrong value.",
            "So yes, it writes tests, but you still have to read every assertion.",
        )
        sources = ("pytest documentation, docs.pytest.org", "OpenAI, ChatGPT release notes", "M. Fowler, Test Pyramid")
        return (
            head
            + ".top{position:fixed;top:84px;left:0;right:0;height:56px;background:#fff;border-bottom:1px solid #eee;padding:16px 60px;box-sizing:border-box;font-size:15px}"
            f".post{{position:absolute;left:240px;width:760px;top:{175 - 60 * shot}px;line-height:1.65}}h1{{font-size:36px;margin:0 0 10px}}"
            ".by{color:#777;font-size:14px;margin-bottom:22px}h3{margin:24px 0 8px}li{color:#1a5fb4}</style></head><body>"
            + _chrome(c)
            + "<div class='post'><h1>Can ChatGPT write your unit tests?</h1><div class='by'>By Dana Smith · 4 Dec 2026 · 4 min read</div>"
            + "".join(f"<p>{esc(p)}</p>" for p in paras)
            + "<h3>Sources</h3><ul>"
            + "".join(f"<li>{esc(s)}</li>" for s in sources)
            + "</ul></div>"
            "<div class='top'>The Test Blog &nbsp;&nbsp;&nbsp;&nbsp; Home &nbsp;&nbsp; Archive &nbsp;&nbsp; About</div></body></html>"
        )
    if c.layout == "help-form":
        top = (
            "<div style='position:fixed;top:84px;left:0;right:0;height:230px;background:#f7f7f8'></div>"
            "<div style='position:fixed;top:100px;left:80px;font-size:15px'>OpenAI &nbsp;&nbsp; Help Center</div>"
            "<div style='position:fixed;top:100px;right:80px;font-size:15px'>English ▾ &nbsp;&nbsp; Sign in</div>"
            "<div style='position:fixed;top:170px;left:0;right:0;text-align:center;font-size:34px'>How can we help?</div>"
            f"<div style='position:fixed;top:235px;left:330px;right:330px;background:#fff;border:1px solid #ccc;border-radius:8px;padding:12px 16px;"
            f"color:{'#1f1f1f' if not sent else '#888'}'>{'⌕ ' + esc(c.query) if not sent else '⌕ Search for articles...'}</div>"
        )
        if not sent:
            cols = (
                ("ChatGPT", "Using ChatGPT, plans and features"),
                ("API", "Keys, usage and rate limits"),
                ("Billing", "Payments, invoices and refunds"),
            )
            main = "".join(
                f"<div style='position:fixed;top:360px;left:{200 + 310 * i}px;width:270px;border:1px solid #e5e5e5;border-radius:10px;padding:16px'>"
                f"<b>{esc(a)}</b><div style='color:#666;font-size:14px;margin-top:6px'>{esc(b)}</div></div>"
                for i, (a, b) in enumerate(cols)
            )
        else:
            results = (
                ("How do I cancel my ChatGPT Plus subscription?", "Updated this week"),
                ("What is ChatGPT Plus?", "Updated over a month ago"),
                ("How can I get a refund for ChatGPT Plus?", "Updated over a week ago"),
            )
            main = (
                "<div style='position:fixed;top:340px;left:330px;color:#666;font-size:14px'>3 results</div>"
                + "".join(
                    f"<div style='position:fixed;top:{375 + 80 * i}px;left:330px;right:330px;border-bottom:1px solid #eee;padding-bottom:10px'>"
                    f"<div style='color:#10a37f'>{esc(a)}</div><div style='color:#777;font-size:13px;margin-top:4px'>Written by OpenAI Team · {esc(b)}</div></div>"
                    for i, (a, b) in enumerate(results)
                )
            )
        bubble = (
            "<div style='position:fixed;right:40px;bottom:100px;width:230px;background:#fff;border-radius:12px;box-shadow:0 2px 10px #0003;"
            "padding:12px 14px;font-size:14px'>Hi there 👋 How can we help?</div>"
            "<div style='position:fixed;right:40px;bottom:36px;width:50px;height:50px;border-radius:50%;background:#10a37f'></div>"
        )
        return head + "</style></head><body>" + _chrome(c) + top + main + bubble + "</body></html>"
    # pricing: three plan columns on chatgpt.com
    plans = (
        (
            "Free",
            "$0 / month",
            "Explore how AI can help you with everyday tasks",
            "Get Free",
            ("Access to GPT-5", "Limited file uploads", "Limited image generation"),
        ),
        (
            "Plus",
            "$20 / month",
            "Level up productivity and creativity with expanded access",
            "Get Plus",
            ("Everything in Free", "Extended limits on messaging", "Deep research and agent mode"),
        ),
        (
            "Pro",
            "$200 / month",
            "Get the best of OpenAI with the highest level of access",
            "Get Pro",
            ("Everything in Plus", "Unlimited messages and uploads", "Maximum deep research"),
        ),
    )
    cols = "".join(
        f"<div style='position:absolute;left:{150 + 345 * i}px;top:250px;width:300px;border:1px solid #e5e5e5;border-radius:16px;padding:20px;box-sizing:border-box;line-height:1.5'>"
        f"<div style='font-size:22px'>{esc(n)}</div><div style='font-size:18px;margin:6px 0'>{esc(p)}</div>"
        f"<div style='color:#555;font-size:15px'>{esc(d)}</div><div style='margin:14px 0;background:#111;color:#fff;border-radius:20px;text-align:center;padding:8px'>{esc(b)}</div>"
        + "".join(f"<div style='font-size:15px'>✓ {esc(f)}</div>" for f in feats)
        + "</div>"
        for i, (n, p, d, b, feats) in enumerate(plans)
    )
    return (
        head
        + "</style></head><body>"
        + _chrome(c)
        + "<div style='position:absolute;top:110px;left:0;right:0;text-align:center;font-size:32px'>Upgrade your plan</div>"
        "<div style='position:absolute;top:170px;left:0;right:0;text-align:center;font-size:15px'>Personal &nbsp;&nbsp; | &nbsp;&nbsp; Business</div>"
        + f"<div style='position:absolute;left:0;right:0;top:{-30 * shot}px'>{cols}</div></body></html>"
    )


def _people_page(c: Convo, css: str, sent: bool) -> str:
    """A mail thread, a forum thread or a messenger chat: ``c.answer`` is the other person's
    message, ``c.query`` the user's (typed, then sent)."""
    esc = html.escape
    if c.layout == "messenger":
        extra = (
            ".hdr{font-weight:bold}.sub{font-size:13px;color:#667}.in{background:#fff;border-radius:10px;padding:10px 14px;"
            "max-width:55%;margin:16px 0}.out{background:#d9fdd3;border-radius:10px;padding:10px 14px;max-width:55%;"
            "margin:16px 0 16px auto}.t{font-size:12px;color:#667;text-align:right;margin-top:4px}"
            ".main{background:#efeae2;min-height:800px;padding-left:30px;padding-right:30px;margin-right:0}"
        )
        msgs = f"<div class='in'>{esc(c.answer)}<div class='t'>10:41</div></div>"
        if sent:
            msgs += f"<div class='out'>{esc(c.query)}<div class='t'>10:42 ✓✓</div></div>"
        side = "<div class='brand'>Chats</div><div class='item'>Bob Martin</div><div class='item'>Family</div><div class='item'>Carol</div>"
        main = f"<div class='hdr'>Bob Martin</div><div class='sub'>online</div>{msgs}"
        box = f"<div class='input{' typed' if not sent else ''}'>{esc(c.query if not sent else 'Type a message')}</div>"
        return (
            f"<html><head><meta charset='utf-8'><style>{css}{extra}</style></head><body>{_chrome(c)}"
            f"<div class='side'>{side}</div><div class='main'>{main}</div>{box}</body></html>"
        )
    extra = (
        "blockquote{margin:10px 0 10px 28px;padding-left:14px;border-left:3px solid #ccc;color:#555}"
        ".meta{font-size:14px;color:#666;margin:4px 0}.btns{font-size:14px;color:#1a73e8;text-align:right;margin:6px 0 22px}"
        "h2{margin:0 0 14px}"
    )
    subject = c.title.rsplit(" - ", 1)[0].split(" - ")[0]
    if c.layout == "mail":
        side = "<div class='brand'>Mail</div><div class='item'>Inbox</div><div class='item'>Sent</div><div class='item'>Drafts</div>"
        post = (
            f"<h2>{esc(subject)}</h2><div class='meta'>From: Bob Martin &lt;bob@example.com&gt;</div>"
            f"<div class='meta'>To: Alice Lee</div><p>{esc(c.answer)}</p>"
            f"<blockquote>On Mon, 1 Dec 2026, Alice Lee wrote:<br>Could you find out what the licence costs?</blockquote>"
            f"<div class='btns'>Reply &nbsp; Forward</div>"
        )
        if sent:
            post += (
                f"<div class='meta'>From: Alice Lee &lt;alice@example.com&gt;</div><p>{esc(c.query)}</p>"
                "<div class='btns'>Reply &nbsp; Forward</div>"
            )
    else:
        side = "<div class='brand'>DevTalk</div><div class='item'>Latest</div><div class='item'>Categories</div>"
        post = (
            f"<h2>{esc(subject)}</h2><div class='meta'>bob_dev · Posted 2 Dec 2026</div><p>{esc(c.answer)}</p>"
            "<div class='btns'>Quote &nbsp; Reply</div>"
        )
        if sent:
            post += (
                "<div class='meta'>alice_l · Posted 3 Dec 2026</div>"
                f"<blockquote>bob_dev wrote:<br>{esc(c.answer[:60])}</blockquote><p>{esc(c.query)}</p>"
                "<div class='btns'>Quote &nbsp; Reply</div>"
            )
    box = f"<div class='input typed'>{esc(c.query)}</div>" if not sent else ""
    return (
        f"<html><head><meta charset='utf-8'><style>{css}{extra}</style></head><body>{_chrome(c)}"
        f"<div class='side'>{side}</div><div class='main'>{post}</div>{box}</body></html>"
    )


def select_layouts(keys: tuple[str, ...] | None = None, per_layout: int | None = None) -> list[Convo]:
    """The conversations of the layouts ``keys`` (default: all), the first ``per_layout`` of each
    (default: all), in :data:`LAYOUTS` order: what :func:`build_layouts` renders, event ``i`` (from 1)
    being the ``i``-th."""
    convos = [c for c in LAYOUTS if keys is None or c.layout in keys]
    if per_layout is not None:
        convos = [c for c in convos if [x for x in convos if x.layout == c.layout].index(c) < per_layout]
    return convos


def build_layouts(
    root: str | Path,
    keys: tuple[str, ...] | None = None,
    chromium: str = "/usr/bin/chromium",
    per_layout: int | None = None,
) -> dict[str, Convo]:
    """Render the conversations of the layouts ``keys`` (default: all; the first ``per_layout`` of
    each, default all) and write a raw LifeTrace database of one event per conversation.

    Returns:
        Event id -> its :class:`Convo` label.

    Raises:
        RuntimeError: Chromium or Playwright is missing, or a page could not be rendered.
    """
    from noto_cjk_sans_otc import FONT_PATH
    from playwright.sync_api import sync_playwright

    convos = select_layouts(keys, per_layout)
    root = Path(root)
    user = root / "P01"
    shots = user / "screenshots"
    work = root.parent / f".{root.name}-render"
    shots.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(user / "lifetrace.db")
    db.executescript("""
        CREATE TABLE events (id INTEGER PRIMARY KEY, app_name VARCHAR(200), window_title VARCHAR(500),
            start_time DATETIME, end_time DATETIME, created_at DATETIME);
        CREATE TABLE screenshots (id INTEGER PRIMARY KEY, file_path VARCHAR(500), file_hash VARCHAR(64),
            file_size INTEGER, width INTEGER, height INTEGER, screen_id INTEGER, app_name VARCHAR(200),
            window_title VARCHAR(500), created_at DATETIME, processed_at DATETIME, is_processed BOOLEAN, event_id INTEGER);
        CREATE TABLE ocr_results (id INTEGER PRIMARY KEY, screenshot_id INTEGER, text_content TEXT, confidence FLOAT,
            language VARCHAR(10), processing_time FLOAT, created_at DATETIME);
    """)
    t = datetime(2026, 12, 1, 9, 0, 0)
    labels: dict[str, Convo] = {}
    sid = 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            for i, c in enumerate(convos, 1):
                pngs = []
                for k in range(2):
                    src = work / f"{i}-{k}.html"
                    src.write_text(_page(c, FONT_PATH, sent=k == 1 or not c.typed_first, shot=k), "utf-8")
                    page.goto(src.as_uri())
                    page.evaluate("document.fonts.ready")
                    pngs.append(page.screenshot())
                start, end = t, t + timedelta(seconds=40)
                db.execute(
                    "INSERT INTO events VALUES (?,?,?,?,?,?)",
                    (
                        i,
                        c.app,
                        c.title,
                        f"{start:%Y-%m-%d %H:%M:%S}.000000",
                        f"{end:%Y-%m-%d %H:%M:%S}.000000",
                        f"{start:%Y-%m-%d %H:%M:%S}.000000",
                    ),
                )
                for k, data in enumerate(pngs):
                    sid += 1
                    at = start + timedelta(seconds=5 + 20 * k)
                    name = f"screen_0_{at:%Y%m%d_%H%M%S}_000.png"
                    (shots / name).write_bytes(data)
                    db.execute(
                        "INSERT INTO screenshots VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (
                            sid,
                            f"/home/alice/.lifetrace/screenshots/{name}",
                            hashlib.sha256(data).hexdigest(),
                            len(data),
                            1280,
                            800,
                            0,
                            c.app,
                            c.title,
                            f"{at:%Y-%m-%d %H:%M:%S}.000000",
                            None,
                            0,
                            i,
                        ),
                    )
                labels[str(i)] = c
                t = end + timedelta(seconds=30 + 7 * i)
        finally:
            browser.close()
    db.commit()
    db.close()
    shutil.rmtree(work, ignore_errors=True)
    return labels
