"""Read an AI chat from the screen by layout: the user's turns, the replies as shown,
and the page's address, from OCR lines with their positions.

Whole-window OCR text mixes the browser's tab strip and address bar, the chat
app's sidebar (history, "New chat"), the input box and its small print with the
conversation itself; a model asked to find the user's question in that text
invents one (issue 21: "What is the latest news on Debian.org?" from browser
chrome). So the chat region is cut out first, by position:

* **browser chrome**: the URL lines stacked from the top of the top
  :data:`CHROME_SHARE` of the screen (a tab title such as ``Kimi.ai``, the
  address bar), each within two line heights of the one above (``chatgpt.com/c/..``,
  ``file:///tmp/chat.html``, ``www.``); it and everything above it are chrome
  (their text is kept as the page address and tab titles, for the platform);
* **input box and small print**: lines below :data:`INPUT_SHARE` of the height,
  and from the first line in the lower part that reads like an input
  placeholder or disclaimer ("Message ChatGPT", "can make mistakes",
  "内容由 AI 生成") down;
* **sidebar**: the lines left of the first empty vertical strip (at least
  :data:`GUTTER_SHARE` of the width wide, starting in the left
  :data:`SIDEBAR_SHARE`) with chat text right of it.

In the chat region, a line indented by at least :data:`USER_INDENT` of the
region's width is the user's (chat apps right-align the user's bubbles and
start replies at the column's left edge); a role label line (``You``, ``User``,
``我``; ``Assistant``, ``ChatGPT``, ...) is never part of a turn, and marks the
next lines' role where no line is indented. Consecutive lines of one role are one turn.

Nothing here guesses: a screen without an indented or labelled user turn has no
conversation (``None``), and a turn is only text OCR read on the screen.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Literal

__all__ = ["CHROME_SHARE", "GUTTER_SHARE", "INPUT_SHARE", "SIDEBAR_SHARE", "USER_INDENT", "OcrLine", "ScreenChat",
           "Turn", "event_conversation", "on_screen", "read_chat", "lines_from_ocr"]

CHROME_SHARE = 0.2
"""Top share of the screen height searched for a browser address line."""
INPUT_SHARE = 0.85
"""Lines starting below this share of the height belong to the input box / small print."""
SIDEBAR_SHARE = 0.35
"""A sidebar's right edge lies within this share of the width."""
GUTTER_SHARE = 0.03
"""Narrowest empty vertical strip between a sidebar and the chat column, share of the width."""
USER_INDENT = 0.15
"""Indent (share of the chat column's width) from which a line is the user's right-aligned bubble."""

_URL = re.compile(r"(?:https?://|file:/|\bfile\s+/|www\.|\b[\w-]+(?:\.[\w-]+)*\.(?:com|ai|cn|org|net|io|app|chat|so)\b"
                  r"|/\S+\.html?\b)", re.I)
_INPUT = re.compile(
    r"^(?:message|ask|send|reply|type|enter|write|talk|chat with|给|发消息|发送|输入|尽管问|有问题|向|问问)"
    r"|can make mistakes|double-check|check important|ai[- ]generated|may (?:display|produce) inaccurate"
    r"|由\s*(?:ai|人工智能)|仔细甄别|请核查|人工智能模型生成", re.I)
_USER_LABEL = re.compile(r"^(?:you|user|me|我|用户|你)[:：]?$", re.I)
_BOT_LABEL = re.compile(r"^(?:assistant|ai|bot|chatgpt|claude|gemini|deepseek|kimi|copilot|qwen|通义千问|豆包|助手)[:：]?$",
                        re.I)
_CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")


@dataclass(frozen=True)
class OcrLine:
    """One text line OCR read, with its box in pixels (origin top left)."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def height(self) -> float:
        return max(1.0, self.y1 - self.y0)


@dataclass(frozen=True)
class Turn:
    """One message of the conversation, as shown."""

    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True)
class ScreenChat:
    """What one screenshot shows of a chat: its turns, oldest first, and the page's chrome text."""

    turns: tuple[Turn, ...]
    address: str = ""
    """The browser's address line ('' when there is no browser chrome)."""
    chrome: tuple[str, ...] = ()
    """Tab strip and address texts (above the page)."""
    region: tuple[float, float, float, float] = (0, 0, 0, 0)
    """The chat column, ``(x0, y0, x1, y1)`` pixels."""

    @property
    def user_turns(self) -> tuple[str, ...]:
        return tuple(t.text for t in self.turns if t.role == "user")

    @property
    def last_query(self) -> str | None:
        """The last user turn, ``None`` when there is none."""
        users = self.user_turns
        return users[-1] if users else None

    @property
    def reply(self) -> str | None:
        """The assistant text after the last user turn as shown, ``None`` when there is none yet."""
        idx = max((i for i, t in enumerate(self.turns) if t.role == "user"), default=None)
        if idx is None:
            return None
        after = [t.text for t in self.turns[idx + 1:] if t.role == "assistant"]
        return _join(after) if after else None


def lines_from_ocr(result: Any) -> list[OcrLine]:
    """:class:`OcrLine` of a RapidOCR result (``.txts`` and ``.boxes``, 4 corner points each)
    or of stored ``[text, x0, y0, x1, y1]`` rows."""
    if isinstance(result, list):
        return [OcrLine(str(r[0]), *map(float, r[1:5])) for r in result]
    out = []
    boxes = result.boxes if getattr(result, "boxes", None) is not None else []
    for text, box in zip(result.txts or (), boxes):
        if not text or not str(text).strip():
            continue
        xs = [float(p[0]) for p in box]
        ys = [float(p[1]) for p in box]
        out.append(OcrLine(" ".join(str(text).split()), min(xs), min(ys), max(xs), max(ys)))
    return out


def _join(parts: Sequence[str]) -> str:
    out = ""
    for p in parts:
        p = p.strip()
        if not p:
            continue
        if out and not (_CJK.search(out[-1]) and _CJK.search(p[0])):
            out += " "
        out += p
    return out


def _sidebar_edge(lines: Sequence[OcrLine], width: float) -> float | None:
    """Right edge of a left sidebar, ``None`` when there is none."""
    if not lines:
        return None
    step = max(1.0, width / 256)
    n = int(width / step) + 1
    covered = [False] * n
    for ln in lines:
        for b in range(max(0, int(ln.x0 / step)), min(n, int(ln.x1 / step) + 1)):
            covered[b] = True
    need = int(GUTTER_SHARE * width / step)
    b = 0
    seen = False
    while b < n and b * step <= SIDEBAR_SHARE * width:
        if covered[b]:
            seen = True
            b += 1
            continue
        start = b
        while b < n and not covered[b]:
            b += 1
        if seen and b - start >= need and b < n:
            edge = start * step
            if any(ln.x0 >= b * step - step for ln in lines) and sum(ln.x1 <= edge + step for ln in lines) >= 1:
                return edge
        b += 1
    return None


def read_chat(lines: Sequence[OcrLine], width: float, height: float) -> ScreenChat | None:
    """The conversation one screenshot shows, or ``None`` when it shows no user turn.

    Args:
        lines: OCR lines of the screenshot (:func:`lines_from_ocr`).
        width: Screenshot width, pixels.
        height: Screenshot height, pixels.
    """
    lines = sorted((ln for ln in lines if ln.text.strip()), key=lambda ln: (ln.y0, ln.x0))
    if not lines:
        return None
    top = [ln for ln in lines if ln.y0 < CHROME_SHARE * height and _URL.search(ln.text)]
    chrome_bottom, bar = 0.0, None
    for ln in sorted(top, key=lambda ln: ln.y0):  # the stack from the top (tab titles, address bar);
        if bar is not None and ln.y0 > chrome_bottom + 2 * bar.height:
            break  # a page's own links (a sidebar's "Debian.org") lie further down
        chrome_bottom, bar = max(chrome_bottom, ln.y1), ln
    address = bar.text if bar else ""
    chrome = tuple(ln.text for ln in lines if ln.y1 <= chrome_bottom + 2)
    body = [ln for ln in lines if ln.y0 > chrome_bottom - 2 and ln.y1 > chrome_bottom + 2]
    lower = [ln for ln in body if ln.y0 >= 0.6 * height and _INPUT.search(ln.text)]
    bottom = min([INPUT_SHARE * height] + [ln.y0 for ln in lower])
    body = [ln for ln in body if ln.y0 < bottom - 1]
    edge = _sidebar_edge(body, width)
    main = [ln for ln in body if edge is None or ln.x0 > edge]
    if not main:
        return None
    left = min(ln.x0 for ln in main)
    right = max(ln.x1 for ln in main)
    col = max(1.0, right - left)
    indented = [ln for ln in main if ln.x0 - left >= USER_INDENT * col]
    roles: list[tuple[str, OcrLine]] = []
    if indented:  # role label lines ("ChatGPT" above a reply) are no part of a turn
        roles = [("user" if ln.x0 - left >= USER_INDENT * col else "assistant", ln) for ln in main
                 if not (_USER_LABEL.match(ln.text.strip()) or _BOT_LABEL.match(ln.text.strip()))]
    else:  # role label lines ("You" / "ChatGPT") mark who speaks
        role = None
        for ln in main:
            t = ln.text.strip()
            if _USER_LABEL.match(t):
                role = "user"
            elif _BOT_LABEL.match(t):
                role = "assistant"
            elif role is not None:
                roles.append((role, ln))
    if not any(r == "user" for r, _ in roles):
        return None
    turns: list[Turn] = []
    parts: list[str] = []
    cur: str | None = None
    prev: OcrLine | None = None
    for role, ln in roles:
        gap_break = prev is not None and ln.y0 - prev.y1 > 1.5 * prev.height
        if role != cur or (gap_break and role == "user"):
            if cur is not None and parts:
                turns.append(Turn(cur, _join(parts)))  # type: ignore[arg-type]
            cur, parts = role, []
        parts.append(ln.text)
        prev = ln
    if cur is not None and parts:
        turns.append(Turn(cur, _join(parts)))  # type: ignore[arg-type]
    region = (left, min(ln.y0 for ln in main), right, max(ln.y1 for ln in main))
    return ScreenChat(tuple(turns), address=address, chrome=chrome, region=region)


def _same(a: str, b: str) -> bool:
    a, b = " ".join(a.casefold().split()), " ".join(b.casefold().split())
    return a == b or SequenceMatcher(None, a, b, autojunk=False).ratio() >= 0.9


def event_conversation(chats: Sequence[ScreenChat | None]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The user queries and replies of one event from its screenshots' chats (oldest first).

    Queries are the user turns that appeared during the event (on the last
    screenshot showing a user turn, not on the first one), else that
    screenshot's last user turn; the reply is the assistant text after the
    last user turn as the last screenshot showing one has it.

    Returns:
        ``(user_queries, llm_responses)`` (replies may be empty: none shown yet),
        ``None`` when no screenshot shows a user turn.
    """
    seen = [c for c in chats if c is not None and c.user_turns]
    if not seen:
        return None
    last = seen[-1]
    first = seen[0]
    new = [q for q in last.user_turns if not any(_same(q, p) for p in first.user_turns)] if first is not last else []
    queries = tuple(new) or (last.last_query,)
    replies = next(((c.reply,) for c in reversed(seen) if c.reply and _same(c.last_query or "", last.last_query or "")),
                   ())
    return tuple(q for q in queries if q), tuple(r for r in replies if r)


def on_screen(text: str, screen: str, threshold: float = 0.85) -> bool:
    """True when ``text`` (a model's quoted query or reply) stands on the screen: a
    stretch of the screen's OCR text matches at least ``threshold`` of it
    (case and spacing ignored; :class:`difflib.SequenceMatcher` blocks)."""
    t = " ".join(text.casefold().split())
    s = " ".join(screen.casefold().split())
    if not t:
        return False
    if t in s:
        return True
    m = SequenceMatcher(None, t, s, autojunk=False)
    return sum(b.size for b in m.get_matching_blocks() if b.size >= 4) >= threshold * len(t)
