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
========================  ===============================================================

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

__all__ = ["LAYOUTS", "LLM_LAYOUTS", "Convo", "build_layouts", "select_layouts"]

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
)
"""Every event of the set, in order (three per LLM layout, two per page of people)."""
LLM_LAYOUTS = (
    "bubbles",
    "gemini-avatar",
    "claude-avatar",
    "deepseek-zh",
    "labelled",
    "terminal-ollama",
    "terminal-llm",
)
"""The layouts that are LLM use (the others are people writing to each other)."""

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


def _page(c: Convo, font: str, sent: bool) -> str:
    """The page of one capture: ``sent=False`` is the question typed, not sent yet."""
    esc = html.escape
    css = _BASE.replace("FONT", Path(font).as_uri())
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
                    src.write_text(_page(c, FONT_PATH, sent=k == 1 or not c.typed_first), "utf-8")
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
