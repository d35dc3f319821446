"""A hand-labelled evaluation set for ``proagent annotate``, built from real rendered screens.

Local HTML pages imitating the chat screens of several LLM platforms (browser
pages drawn with a tab strip and an address bar above them; a right-aligned user
bubble, the reply at the column's left, a sidebar, an input box and its small
print; two conversations with an earlier exchange above the labelled one) (ChatGPT,
DeepSeek, Claude, Kimi, Gemini, 豆包, 通义千问, Perplexity) and ordinary pages
(a code editor, a Q&A site, a news article *about* an LLM, a mail client, a
spreadsheet) are rendered to 1280x800 PNG by headless Chromium. Each chat event has
two captures: the question typed into the input box, then sent and answered (Debian's
``chromium``; Chinese text with the bundled Noto Sans CJK font), and put into a
raw LifeTrace database (2025-09 schema, no OCR rows, so the annotator reads the
images with RapidOCR) with one event per page. Each page's label says whether it
is LLM use, the platform, the user's question and the intention.

``build_evalset(root)`` writes ``root/P01/lifetrace.db`` + ``root/P01/screenshots/``
and returns the labels by event id. Used by ``tests/annotate/test_annotate_evalset.py`` and
``benchmarks/annotate.py``.
"""

from __future__ import annotations

import hashlib
import html
import os
import shutil
import sqlite3
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

__all__ = ["PAGES", "Page", "build_evalset", "chromium", "render"]


@dataclass(frozen=True)
class Page:
    """One labelled screen."""

    key: str
    """Short name."""
    app: str
    """Foreground application recorded for the event."""
    title: str
    """Window title recorded for the event."""
    platform: str | None
    """LLM platform (a name of data/llm_platforms.json), ``None`` for ordinary pages."""
    query: str
    """What the user asked the LLM ('' for ordinary pages)."""
    answer: str
    """The LLM's reply, or the page's main text for ordinary pages."""
    intention: str | None
    """Taxonomy category of the LLM use (``None`` for ordinary pages)."""
    brand: str = ""
    """Text in the page's chrome (sidebar/header) for chat pages."""
    input_hint: str = ""
    """Placeholder of the chat input box."""
    footer: str = ""
    """Small print under the input box."""
    url: str = ""
    """Address shown in the browser's address bar (browser apps only)."""
    history: tuple[tuple[str, str], ...] = ()
    """Earlier exchanges of the conversation, (question, reply), shown above the labelled one."""


PAGES: tuple[Page, ...] = (
    Page(
        "chatgpt",
        "Google Chrome",
        "ChatGPT - Google Chrome",
        "ChatGPT",
        "How do I sort a list of dictionaries by the value of a key in Python?",
        "Use sorted() with a key function: sorted(people, key=lambda d: d['age']). Add reverse=True for descending order.",
        "Code Programming",
        "ChatGPT",
        "Message ChatGPT",
        "ChatGPT can make mistakes. Check important info.",
        "chatgpt.com/c/6820a1f3-5be4",
        (
            (
                "What does a lambda do in Python?",
                "A lambda is a small anonymous function: lambda x: x * 2 doubles its argument.",
            ),
        ),
    ),
    Page(
        "deepseek",
        "Google Chrome",
        "DeepSeek - 探索未至之境 - Google Chrome",
        "DeepSeek",
        "sqlite3.OperationalError: database is locked 怎么解决？",
        "这个错误通常是因为另一个连接正在写入数据库。请确保及时提交事务并关闭连接，或者设置 timeout 参数。",
        "Debugging & Error Resolution",
        "deepseek",
        "给 DeepSeek 发送消息",
        "内容由 AI 生成，请仔细甄别",
        "chat.deepseek.com/a/chat/s/4f1e",
        (("怎么查看 SQLite 的表结构？", "使用 PRAGMA table_info(表名) 可以查看表的列。"),),
    ),
    Page(
        "claude",
        "Claude",
        "Claude",
        "Claude",
        "Please proofread this paragraph of my thesis abstract and make it sound more academic.",
        "Here is a polished version: This thesis proposes an evaluation framework for proactive agents grounded in real user activity.",
        "Writing Polish & Editing",
        "Claude",
        "Reply to Claude...",
        "Claude can make mistakes. Please double-check responses.",
    ),
    Page(
        "kimi",
        "Microsoft Edge",
        "Kimi.ai - 帮你看更大的世界 - Microsoft Edge",
        "Kimi",
        "帮我把这段话翻译成英文：本文提出了一种主动式智能体评测方法",
        "This paper proposes an evaluation method for proactive agents.",
        "Translation",
        "Kimi",
        "尽管问，带图也行",
        "内容由 AI 大模型生成，请仔细甄别",
        "kimi.moonshot.cn/chat/cq9a",
    ),
    Page(
        "gemini",
        "Google Chrome",
        "Google Gemini - Google Chrome",
        "Gemini",
        "Summarize the main findings of the attached meeting notes in three bullet points.",
        "1. The data collection module is finished. 2. Model evaluation starts next week. 3. The team needs two more annotators.",
        "Summarization",
        "Gemini",
        "Ask Gemini",
        "Gemini can make mistakes, so double-check it",
        "gemini.google.com/app/3be1",
    ),
    Page(
        "doubao",
        "豆包",
        "豆包 - 字节跳动旗下 AI 智能助手",
        "豆包",
        "明天下午的组会应该怎么安排时间？",
        "建议 14:00 开始，先用 15 分钟汇报进展，再用 30 分钟讨论问题，最后 15 分钟确定下周计划。",
        "Planning & Scheduling",
        "豆包",
        "发消息或输入 / 选择技能",
        "",
    ),
    Page(
        "tongyi",
        "Google Chrome",
        "通义千问 - Google Chrome",
        "通义千问",
        "What is the difference between precision and recall?",
        "Precision is the share of predicted positives that are correct; recall is the share of real positives that were found.",
        "Knowledge Q&A",
        "通义千问",
        "有问题，尽管问",
        "服务生成的所有内容均由人工智能模型生成",
        "tongyi.aliyun.com/qianwen",
    ),
    Page(
        "chatgpt-generic-title",
        "Firefox",
        "Sorting question - Mozilla Firefox",
        "ChatGPT",
        "Write a bash one-liner that counts the lines of every Python file in a folder.",
        "find . -name '*.py' | xargs wc -l",
        "Code Programming",
        "ChatGPT",
        "Message ChatGPT",
        "ChatGPT can make mistakes. Check important info.",
        "File  /tmp/chat-export.html",
    ),
    # ordinary pages
    Page(
        "vscode",
        "Visual Studio Code",
        "main.py - proagent - Visual Studio Code",
        None,
        "",
        "def train(model, data):\n    for x, y in data:\n        loss = criterion(model(x), y)\n        loss.backward()",
        None,
    ),
    Page(
        "stackoverflow",
        "Google Chrome",
        "How to read a SQLite database in Python - Stack Overflow - Google Chrome",
        None,
        "",
        "You can use the sqlite3 module from the standard library: conn = sqlite3.connect('file.db'); rows = conn.execute('SELECT * FROM t').fetchall()",
        None,
        url="stackoverflow.com/questions/305378",
    ),
    Page(
        "news-about-llm",
        "Google Chrome",
        "DeepSeek releases a new open model - Tech News - Google Chrome",
        None,
        "",
        "Tech News. The Chinese start-up DeepSeek released a new open-weight model on Monday. Analysts say the release "
        "puts pressure on ChatGPT and Claude. Shares of chip makers fell 3% after the announcement.",
        None,
        url="technews.example.com/2025/open-model",
    ),
    Page(
        "mail",
        "Outlook",
        "Inbox - alice@example.com - Outlook",
        None,
        "",
        "From: Bob. Subject: Meeting tomorrow. Hi Alice, can we move our meeting to 3 pm? The room is booked until 2:30. Thanks, Bob",
        None,
    ),
)
"""The labelled pages, in the order of the events."""

_CSS = """@font-face{font-family:"NotoCJK";src:url("FONT");font-display:block}
body{margin:0;font-family:"NotoCJK",sans-serif;font-size:17px;color:#1f1f1f;background:#fff}
.chrome{position:fixed;left:0;right:0;top:0;height:84px;background:#dee1e6;font-size:14px;color:#333}
.tab{position:absolute;left:8px;top:6px;width:240px;height:30px;background:#fff;border-radius:8px 8px 0 0;padding:7px 12px;box-sizing:border-box}
.addr{position:absolute;left:0;right:0;top:38px;height:46px;background:#fff;padding:12px 16px;box-sizing:border-box}
.side{position:fixed;left:0;top:TOPpx;bottom:0;width:250px;background:#f4f4f5;padding:18px;box-sizing:border-box}
.brand{font-size:22px;font-weight:bold;margin-bottom:24px}.side div.item{margin:10px 0;color:#555}
.main{margin-left:290px;margin-right:60px;padding-top:MAINpx}
.row{display:flex;justify-content:flex-end;margin-bottom:26px}
.user{max-width:62%;background:#ececf1;border-radius:16px;padding:14px 18px}
.bot{line-height:1.6;margin-bottom:30px}
.input{position:fixed;left:330px;right:120px;bottom:60px;border:1px solid #bbb;border-radius:24px;padding:16px 22px;color:#777}
.typed{color:#1f1f1f}
.foot{position:fixed;left:330px;bottom:24px;font-size:13px;color:#777}
pre{font-family:"DejaVu Sans Mono","NotoCJK",monospace;font-size:16px;background:#1e1e1e;color:#d4d4d4;padding:20px}
"""
BROWSERS = ("Google Chrome", "Microsoft Edge", "Firefox")
"""Apps drawn with a browser's tab strip and address bar above the page."""


def _html(p: Page, font: str, sent: bool = True) -> str:
    """The page; for chat pages ``sent=False`` is the moment before sending: the question
    typed into the input box, no reply yet (the first capture of an event)."""
    esc = html.escape
    browser = p.app in BROWSERS
    top = 84 if browser else 0
    css = _CSS.replace("FONT", Path(font).as_uri()).replace("TOP", str(top)).replace("MAIN", str(top + 40))
    chrome = (
        (
            f"<div class='chrome'><div class='tab'>{esc(p.title.rsplit(' - ', 1)[0][:28])} &nbsp; ×</div>"
            f"<div class='addr'>← &nbsp; → &nbsp; C &nbsp; ⓘ &nbsp; {esc(p.url or 'about:blank')}</div></div>"
        )
        if browser
        else ""
    )
    if p.platform is None:
        body = (
            f"<pre>{esc(p.answer)}</pre>"
            if p.app == "Visual Studio Code"
            else (
                f"<div style='padding:{top + 40}px 80px 40px'><h2>{esc(p.title.rsplit(' - ', 1)[0])}</h2><p style='line-height:1.7'>"
                f"{esc(p.answer)}</p></div>"
            )
        )
        return f"<html><head><meta charset='utf-8'><style>{css}</style></head><body>{chrome}{body}</body></html>"
    turns = "".join(
        f"<div class='row'><div class='user'>{esc(q)}</div></div><div class='bot'>{esc(a)}</div>" for q, a in p.history
    )
    if sent:
        turns += f"<div class='row'><div class='user'>{esc(p.query)}</div></div><div class='bot'>{esc(p.answer)}</div>"
        box = f"<div class='input'>{esc(p.input_hint)}</div>"
    else:
        box = f"<div class='input typed'>{esc(p.query)}</div>"
    return (
        f"<html><head><meta charset='utf-8'><style>{css}</style></head><body>{chrome}"
        f"<div class='side'><div class='brand'>{esc(p.brand)}</div><div class='item'>New chat</div>"
        f"<div class='item'>Today</div></div>"
        f"<div class='main'>{turns}</div>{box}<div class='foot'>{esc(p.footer)}</div></body></html>"
    )


def chromium() -> str | None:
    """Path of Debian's Chromium, or ``None``."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def render(html_text: str, out_png: Path, browser: str, work: Path) -> Path:
    """Render one page to a 1280x800 PNG with headless Chromium (no network, no GPU).

    Raises:
        RuntimeError: Chromium wrote no image.
    """
    src = work / (out_png.stem + ".html")
    src.write_text(html_text, "utf-8")
    cmd = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        "--virtual-time-budget=3000",
        f"--user-data-dir={work / 'profile'}",
        f"--screenshot={out_png}",
        "--window-size=1280,800",
        src.as_uri(),
    ]
    # Chromium puts its singleton socket under TMPDIR: a deep TMPDIR (a pytest worker's tmp_path) makes
    # the socket path too long for AF_UNIX (108 bytes) and Chromium exits at once; give it a short one
    with tempfile.TemporaryDirectory(prefix="pa-chromium-", dir="/tmp") as short_tmp:
        r = subprocess.run(
            cmd, capture_output=True, text=True, timeout=120, check=False, env={**os.environ, "TMPDIR": short_tmp}
        )
    if not out_png.is_file() or out_png.stat().st_size == 0:
        why = next((ln for ln in reversed(r.stderr.splitlines()) if "FATAL" in ln), "")
        raise RuntimeError(f"chromium wrote no screenshot for {src}{': ' + why if why else ''}")
    return out_png


def build_evalset(root: str | Path, browser: str | None = None, pages: tuple[Page, ...] = PAGES) -> dict[str, Page]:
    """Render every page of ``pages`` (default: the whole set) and write a raw LifeTrace database of
    one event per page.

    Returns:
        Event id -> its :class:`Page` label.

    Raises:
        RuntimeError: Chromium is missing or fails.
    """
    from noto_cjk_sans_otc import FONT_PATH

    browser = browser or chromium()
    if browser is None:
        raise RuntimeError("the evaluation set needs Debian's chromium (scripts/system-packages.sh)")
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
    t = datetime(2025, 9, 15, 9, 0, 0)
    labels: dict[str, Page] = {}
    sid = 0
    for i, p in enumerate(pages, 1):
        pngs = (
            [
                render(_html(p, FONT_PATH, sent=k == 1), work / f"{p.key}-{k}.png", browser, work).read_bytes()
                for k in range(2)
            ]
            if p.platform
            else [render(_html(p, FONT_PATH), work / f"{p.key}.png", browser, work).read_bytes()] * 2
        )
        start, end = t, t + timedelta(seconds=40)
        db.execute(
            "INSERT INTO events VALUES (?,?,?,?,?,?)",
            (
                i,
                p.app,
                p.title,
                f"{start:%Y-%m-%d %H:%M:%S}.000000",
                f"{end:%Y-%m-%d %H:%M:%S}.000000",
                f"{start:%Y-%m-%d %H:%M:%S}.000000",
            ),
        )
        for k, data in enumerate(pngs):  # two captures 20 s apart: the question typed, then sent and answered
            sid += 1
            at = start + timedelta(seconds=5 + 20 * k)
            name = f"screen_0_{at:%Y%m%d_%H%M%S}_000.png"
            (shots / name).write_bytes(data)
            db.execute(
                "INSERT INTO screenshots VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    sid,
                    f"C:\\Users\\P01\\LifeTrace\\screenshots\\{name}",
                    hashlib.sha256(data).hexdigest(),
                    len(data),
                    1280,
                    800,
                    0,
                    p.app,
                    p.title,
                    f"{at:%Y-%m-%d %H:%M:%S}.000000",
                    None,
                    0,
                    i,
                ),
            )
        labels[str(i)] = p
        t = end + timedelta(seconds=37 * i)  # irregular gaps
    db.commit()
    db.close()
    shutil.rmtree(work, ignore_errors=True)
    return labels
