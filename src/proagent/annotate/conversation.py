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

In the chat region the user's turns are found by what marks them (issue 34: a Gemini-like
question left-aligned beside an avatar was dropped as "no chat turn"), in this order:

* **a terminal LLM client** (:data:`TERMINAL_CLIENTS`: ``ollama run``, ``llm``, ``aichat``, ...):
  its prompt lines (``>>> ...``) are the user's, a one-shot command's quoted argument too;
* **role labels**, alone on a line (``You`` / ``ChatGPT`` above the turn) or leading it
  (``You: ...`` / ``ChatGPT: ...``, a labelled transcript); a label is never part of a turn; where an
  assistant's name line stands (``GitHub Copilot``), an avatar's initial read with the user's name
  (``A alice``) is the user's label (VS Code's Copilot Chat, issue 47);
* **an avatar**: a one- or two-letter line at the column's left edge with the turn beside it;
* **a right-aligned bubble**: a line indented by at least :data:`USER_INDENT` of the region's
  width (chat apps start replies at the column's left edge), against a reply (:func:`_against_reply`);
* **a question set as the page's heading** with an answer engine's label under it (Perplexity-like);
* **input echo** (:func:`event_chat`, across screenshots): lines that read as the text typed into
  the input box on an earlier screenshot.

Consecutive lines of one role are one turn. Lines marking people writing to each other (mail
headers, "wrote:", Quote / Reply, a messenger's per-message times) are counted for the caller
(:attr:`ScreenChat.people`), and the texts around the turns kept (:attr:`ScreenChat.frame`).

Nothing here guesses: a screen without a marked user turn has no conversation (``None``), and a
turn is only text OCR read on the screen. An AI product's own chat page showing a reply whose
question is on no screenshot (:func:`off_screen_chat`) has the chat's title for its query where the
title names a subject, else no query.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Literal

__all__ = [
    "CHROME_SHARE",
    "GUTTER_SHARE",
    "INPUT_SHARE",
    "PEOPLE_LINES",
    "REPLY_WORDS",
    "SIDEBAR_SHARE",
    "TERMINAL_CLIENTS",
    "USER_INDENT",
    "EventChat",
    "OcrLine",
    "ScreenChat",
    "Turn",
    "event_chat",
    "event_conversation",
    "lines_from_ocr",
    "off_screen_chat",
    "on_screen",
    "read_chat",
    "read_screen",
    "title_subject",
]

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
RIGHT_SLACK = 0.1
"""A user's bubble reaches the chat column's right edge: some line of a run of indented lines ends
within this share of the column's width from it (a reply's table cells or a centred caption are
indented too but end short of it: issue 47, a chat revisited after its question scrolled away)."""

_URL = re.compile(
    r"(?:https?://|file:/|\bfile\s+/|www\.|\b[\w-]+(?:\.[\w-]+)*\.(?:com|ai|cn|org|net|io|app|chat|so)\b"
    r"|/\S+\.html?\b)",
    re.I,
)
_INPUT = re.compile(
    r"^(?:message|ask|send|reply|type|enter|write|talk|chat with|给|发消息|发送|输入|尽管问|有问题|向|问问)"
    r"|can make mistakes|double-check|check important|ai[- ]generated|may (?:display|produce) inaccurate"
    r"|由\s*(?:ai|人工智能)|仔细甄别|请核查|人工智能模型生成",
    re.I,
)
_USER_LABEL = re.compile(r"^(?:you|user|me|我|用户|你)[:：]?$", re.I)
_BOT_LABEL = re.compile(
    r"^[^\w\s]{0,2}\s*(?:assistant|ai|bot|chatgpt|claude|gemini|deepseek|kimi|(?:github\s+)?copilot|qwen|通义千问|豆包|助手)"
    r"[:：]?$",
    re.I,
)
"""An assistant's name alone on a line above its turn (``ChatGPT``, VS Code's ``✦ GitHub Copilot``: an
icon OCR may read as a mark before it)."""
_CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")
_GREETING = re.compile(
    r"^[\s*✻✦✳❋·•👋]*(?:(?:hi|hello|hey)(?: there)?[,!]?\s*[^\w\s]*\s*(?=(?:what|how|where)\b))?"
    r"(?:what can i help (?:you )?with|how can (?:i|we) help(?: you)?(?: today)?|what(?:'|’)?s on (?:your|the) "
    r"agenda(?: today)?|what(?:'|’)?s on your mind(?: today)?|where should we begin|what are you working on"
    r"|ready when you are|how can i assist(?: you)?(?: today)?|what do you want to know"
    r"|good (?:morning|afternoon|evening)(?:,\s*[^\W\d_]+)?|hi,? i(?:'|’)?m (?:claude|copilot|gemini|chatgpt|"
    r"deepseek|kimi)[^.!?]*"
    r"|有什么(?:我)?可以帮(?:你|您)?(?:的|忙的)?吗?|我可以(?:为你|帮你)(?:做)?(?:什么|些什么)|今天(?:有什么)?(?:我)?"
    r"(?:可以|能)帮(?:你|您)(?:做)?(?:什么|些什么)?)\s*[?？!！.。]?\s*",
    re.I,
)
"""A chat app's greeting on a fresh chat ("What can I help with?", "Good afternoon, Alice",
"有什么可以帮忙的？"), a support page's or its chat widget's "How can we help?" (after "Hi there 👋"),
a leading mark (Claude's ✻, OCR reads ``*``): shown above the first question, never the user's words
(issue 47: it was stored glued to the question)."""
_USER_LEAD = re.compile(r"^(?:you|user|me|human|我|用户)(?:\s+said)?\s*[:：]\s*(\S.*)$", re.I)
"""A labelled transcript's user line: ``You: ...``, ``You said: ...``, ``我：...``."""
_BOT_LEAD = re.compile(
    r"^(?:assistant|ai|bot|chatgpt|claude|gemini|deepseek|kimi|copilot|qwen|grok|llama|mistral"
    r"|perplexity|通义千问|豆包|助手|文心一言)(?:\s+said)?\s*[:：]\s*(\S.*)$",
    re.I,
)
"""A labelled transcript's reply line: ``ChatGPT: ...``, ``Assistant: ...``."""
_AVATAR = re.compile(r"^(?:[^\W\d_]{1,2}|[\u4e00-\u9fff])$")
"""An avatar's text: one or two letters (an initial), or one Chinese character."""
_NAME = re.compile(r"^[^\W\d_][\w.-]*$")


def _named_avatar(text: str) -> bool:
    """The line is an avatar's initial(s) read with the name beside it (``A alice``, ``AL Alice Lee``):
    the header above a user's turn in an editor's chat view (VS Code's Copilot Chat: the user's avatar
    and name, then the turn; the reply under ``GitHub Copilot``). The initials are the name's: its
    words' first letters, or a one-word name's first one or two letters."""
    words = text.split()
    if not 2 <= len(words) <= 4 or not _AVATAR.match(words[0]) or not all(_NAME.match(w) for w in words[1:]):
        return False
    initials, name = words[0].casefold(), [w.casefold() for w in words[1:]]
    return initials == "".join(w[0] for w in name)[: len(initials)] or (len(name) == 1 and name[0].startswith(initials))


_PEOPLE = re.compile(
    r"^(?:from|to|cc|bcc|subject|sent|date)\s*[:：]|\bwrote\s*:$|^(?:reply|reply all|forward|quote|report|posted"
    r"|joined|posts)\b.{0,30}$|^\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?\s*[✓✔√]*$|^(?:online|last seen|typing)"
    r"|^(?:发件人|收件人|主题|抄送)[:：]|写道[:：]$|^(?:回复|引用|转发)$",
    re.I,
)
"""A line that marks people writing to each other (mail headers, "... wrote:", a forum's Quote /
Reply buttons, a messenger's per-message time or "last seen"): an AI chat shows none of these."""
PEOPLE_LINES = 2
"""Lines marking people (:data:`_PEOPLE`) from which a screen is mail, a forum or a messenger."""
TERMINAL_CLIENTS = {
    "ollama": "Ollama",
    "llm": "llm CLI",
    "aichat": "aichat",
    "sgpt": "ShellGPT",
    "tgpt": "tgpt",
    "mods": "mods CLI",
}
"""Terminal LLM clients read by their prompt (command -> platform name in ``llm_platforms.json``)."""
_CLIENT = re.compile(
    r"(?:^|[$#%❯»]\s*)(ollama|llm|aichat|sgpt|tgpt|mods)\b(?=\s+run\s|\s+chat\b|\s+-m\s|\s+[\"'“]|\s*$"
    r"|\s+--)",
    re.I,
)
_ONE_SHOT = re.compile(r"\b(?:llm|sgpt|tgpt|mods)\b(?:\s+-\S+(?:\s+[\w.:/-]+)?)*\s+([\"'“])(.+?)[\"'”]?\s*$", re.I)
_PROMPT = re.compile(r"^(?:>>>|>>|>|》|〉|❯)\s*(.*)$")
_SHELL = re.compile(r"^(?:\S+@\S+[:~][^\s]*\s*[$#%]|[$#%])(?:\s|$)")
_TERM_HINT = re.compile(
    r"send a message|/\?\s*for help|ctrl\s*\+\s*d|/bye|type 'exit'|type .?quit|chatting with"
    r"|!multi|\.help|welcome to aichat",
    re.I,
)


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
    kind: str = "bubbles"
    """What marked the user's turns: ``bubbles`` (right-aligned), ``labels`` (``You`` / ``You: ...``),
    ``avatar`` (an initial beside the turn), ``echo`` (the text typed into the input box earlier),
    ``terminal`` (a terminal LLM client's prompt), ``heading`` (the question set as the page's heading
    above an answer label, Perplexity-like)."""
    frame: tuple[str, ...] = ()
    """Texts on the screen outside the turns (chrome, sidebar, input box, small print, labels)."""
    typed: str = ""
    """Text typed into the input box (not a placeholder or the small print), '' when none."""
    body: tuple[OcrLine, ...] = ()
    """The chat column's lines (for :func:`event_chat`'s input echo)."""
    roles: tuple[str | None, ...] = ()
    """The role of each line of ``body`` (``None``: no part of a turn), '' when not kept."""
    people: int = 0
    """Lines marking people writing to each other (mail headers, "wrote:", Quote, per-message times)."""
    client: str = ""
    """The terminal LLM client's platform name (``kind == "terminal"``), else ''."""
    input_box: bool = False
    """A chat's input box or its small print stands in the lower part of the screen ("Ask anything",
    "ChatGPT can make mistakes")."""

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
        after = [t.text for t in self.turns[idx + 1 :] if t.role == "assistant"]
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


PANEL_SHARE = 0.45
"""An assistant's side panel starts right of this share of the width."""
_PANEL_MARK = re.compile(
    r"\b(?:copilot|gemini|claude|chatgpt|deepseek|kimi|perplexity|ask ai|ai assistant|ai chat)\b|豆包|通义|元宝|文心",
    re.I,
)
"""A line naming the assistant in its side panel (the panel's header, its input box)."""


def _panel_edge(lines: Sequence[OcrLine], width: float) -> float | None:
    """Left edge of an assistant's side panel on the right of another page (Edge's Copilot, a
    Gemini or Claude extension, an editor's chat view): an empty vertical strip of at least
    :data:`GUTTER_SHARE` of the width, starting right of :data:`PANEL_SHARE`, with text on both
    sides and a line right of it naming an assistant (:data:`_PANEL_MARK`); ``None`` when there is
    none. The window title of such a page names the page, not the assistant (issue 47)."""
    if not lines:
        return None
    step = max(1.0, width / 256)
    n = int(width / step) + 1
    covered = [False] * n
    for ln in lines:
        for b in range(max(0, int(ln.x0 / step)), min(n, int(ln.x1 / step) + 1)):
            covered[b] = True
    need = max(1, int(GUTTER_SHARE * width / step))
    b = int(PANEL_SHARE * width / step)
    while b < n:
        if covered[b]:
            b += 1
            continue
        start = b
        while b < n and not covered[b]:
            b += 1
        if b - start >= need and b < n:
            edge = start * step
            right = [ln for ln in lines if ln.x0 >= b * step - step]
            if (
                right
                and any(ln.x1 <= edge + step for ln in lines)
                and all(ln.x0 >= b * step - step or ln.x1 <= edge + step for ln in lines)
                and any(_PANEL_MARK.search(ln.text) for ln in right)
            ):
                return edge
    return None


def _row_merge(lines: Sequence[OcrLine]) -> list[OcrLine]:
    """Lines of one text row (vertical centres within half a line height) joined left to right:
    OCR splits a terminal's ``$ ollama run llama3.2`` or ``>>> question`` into pieces."""
    out: list[OcrLine] = []
    for ln in sorted(lines, key=lambda ln: (ln.y0, ln.x0)):
        if out and abs((ln.y0 + ln.y1) / 2 - (out[-1].y0 + out[-1].y1) / 2) < 0.5 * out[-1].height:
            a, b = sorted((out[-1], ln), key=lambda x: x.x0)
            out[-1] = OcrLine(f"{a.text} {b.text}", a.x0, min(a.y0, b.y0), max(a.x1, b.x1), max(a.y1, b.y1))
        else:
            out.append(ln)
    return out


def _client(text: str) -> str | None:
    """The terminal LLM client a command line starts (a :data:`TERMINAL_CLIENTS` value), else ``None``."""
    m = _CLIENT.search(text)
    return TERMINAL_CLIENTS[m.group(1).casefold()] if m else None


def _read_terminal(lines: Sequence[OcrLine]) -> ScreenChat | None:
    """The conversation of a terminal LLM client (:data:`TERMINAL_CLIENTS`), from the last line
    that starts one down: an interactive client's prompt lines (``>>> ...``, ``> ...``, ``〉...``)
    are the user's, the lines after each the reply, until the next prompt or a shell prompt; a
    one-shot command's quoted argument (``llm "..."``) is the user's, the lines after it the reply.
    ``None`` when no line starts a client."""
    rows = _row_merge(lines)
    idx = max((i for i, ln in enumerate(rows) if _client(ln.text)), default=None)
    if idx is None:
        return None
    cmd = rows[idx].text
    client = _client(cmd) or ""
    frame = [ln.text for ln in rows[: idx + 1]]
    turns: list[Turn] = []
    role: str | None = None
    parts: list[str] = []

    def close() -> None:
        if role is not None and parts:
            turns.append(Turn(role, _join(parts)))  # type: ignore[arg-type]

    one_shot = _ONE_SHOT.search(cmd)
    if one_shot:
        role, parts = "user", [one_shot.group(2)]
        close()
        role, parts = "assistant", []
    for ln in rows[idx + 1 :]:
        t = ln.text.strip()
        if _SHELL.match(t):
            break  # the client exited: back at the shell
        m = _PROMPT.match(t)
        if m and not one_shot:
            close()
            text = m.group(1).strip()
            if not text or _TERM_HINT.search(text):
                role, parts = None, []  # an empty prompt or its placeholder ("Send a message (/? for help)")
                frame.append(t)
                continue
            role, parts = "user", [text]
            close()
            role, parts = "assistant", []
            continue
        if role is None or _TERM_HINT.search(t):
            frame.append(t)
            continue
        parts.append(t)
    close()
    if not turns:
        return None
    region = (min(ln.x0 for ln in rows), rows[0].y0, max(ln.x1 for ln in rows), rows[-1].y1)
    return ScreenChat(tuple(turns), region=region, kind="terminal", frame=tuple(frame), client=client)


def _avatars(main: Sequence[OcrLine], left: float, col: float) -> dict[int, str]:
    """Index of each line of ``main`` that stands right of an avatar -> ``user`` or ``assistant``.

    An avatar is a line of one or two letters (an initial, ``AL``, ``我``) near the column's
    left edge, about as wide as it is high, with a text line beside it to its right (vertical
    centres within one line height, starting within six line heights); it marks the user
    unless its text is an AI's label (``AI``, ``K`` is not: only :data:`_BOT_LABEL` names)."""
    out: dict[int, str] = {}
    for a in main:
        t = a.text.strip()
        if not _AVATAR.match(t) or a.x0 - left > 0.08 * col or (a.x1 - a.x0) > 2.5 * a.height:
            continue
        cy = (a.y0 + a.y1) / 2
        beside = [
            (i, ln)
            for i, ln in enumerate(main)
            if ln is not a
            and ln.x0 > a.x1
            and ln.x0 - a.x1 < 6 * a.height
            and abs((ln.y0 + ln.y1) / 2 - cy) < max(a.height, ln.height)
        ]
        if beside:
            i, _ = min(beside, key=lambda b: b[1].x0)
            out[i] = "assistant" if _BOT_LABEL.match(t) else "user"
    return out


def read_screen(
    lines: Sequence[OcrLine], width: float, height: float, terminal: bool | None = None
) -> ScreenChat | None:
    """What one screenshot shows of a chat, its user turns possibly empty (the body lines and the
    text typed into the input box are kept for :func:`event_chat`'s input echo); ``None`` for a
    screenshot without text.

    User turns are found, in this order, by: a terminal LLM client's prompt
    (:func:`_read_terminal`); role labels, alone on a line (``You`` above the turn) or
    leading it (``You: ...`` / ``ChatGPT: ...``, a labelled transcript); an avatar beside the
    turn (a left-aligned question beside the user's initial, Gemini- and Claude-like); a
    right-aligned bubble (a line indented by :data:`USER_INDENT` of the column).

    Args:
        lines: OCR lines of the screenshot (:func:`lines_from_ocr`).
        width: Screenshot width, pixels.
        height: Screenshot height, pixels.
        terminal: The foreground application is a terminal (True: only a terminal client is read),
            is not one (False: a client command shown on the page, in a chat's code block say, is
            no terminal), or unknown (None: a line starting a client decides).
    """
    lines = sorted((ln for ln in lines if ln.text.strip()), key=lambda ln: (ln.y0, ln.x0))
    if not lines:
        return None
    if terminal is not False and any(_client(ln.text) for ln in lines):
        term = _read_terminal(lines)
        if term is not None or terminal:
            return term
    if terminal:
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
    below = [ln for ln in body if ln.y0 >= bottom - 1]
    typed = _join([ln.text for ln in below if not _INPUT.search(ln.text) and len(ln.text.strip()) > 3])
    body = [ln for ln in body if ln.y0 < bottom - 1]
    edge = _sidebar_edge(body, width)
    main = [ln for ln in body if edge is None or ln.x0 > edge]
    panel = _panel_edge(main, width)
    if panel is not None:  # an assistant's side panel beside another page: the panel is the chat
        main = [ln for ln in main if ln.x0 > panel]
    boxed = _greeting_box(main)
    if boxed:  # a fresh chat's input box under its greeting, mid-screen: the text in it is typed, not said
        typed = typed or _join([ln.text for ln in boxed])
        main = [ln for ln in main if not any(ln is b for b in boxed)]
    people = sum(bool(_PEOPLE.search(ln.text.strip())) for ln in body)
    outside = list(chrome) + [ln.text for ln in body if ln not in main] + [ln.text for ln in below]
    if not main:
        return ScreenChat(
            (), address=address, chrome=chrome, frame=tuple(outside), typed=typed, people=people, input_box=bool(lower)
        )
    left = min(ln.x0 for ln in main)
    right = max(ln.x1 for ln in main)
    col = max(1.0, right - left)
    region = (left, min(ln.y0 for ln in main), right, max(ln.y1 for ln in main))
    roles: list[tuple[str, OcrLine]] = []
    headed = any(_BOT_LABEL.match(ln.text.strip()) for ln in main)
    named = {id(ln) for ln in main if headed and _named_avatar(ln.text.strip())}
    labels = [
        ln for ln in main if _USER_LABEL.match(ln.text.strip()) or _USER_LEAD.match(ln.text.strip()) or id(ln) in named
    ]
    if (
        labels
        and not any(_BOT_LABEL.match(ln.text.strip()) or _BOT_LEAD.match(ln.text.strip()) for ln in main)
        and any(
            ln.x0 - min(x.x0 for x in main) >= USER_INDENT * max(1.0, max(x.x1 for x in main) - min(x.x0 for x in main))
            for ln in main
        )
    ):
        labels = []  # "You: ..." inside a reply beside right bubbles (a script the AI wrote) is no transcript
    avatars = _avatars(main, left, col) if not labels else {}
    kind = "labels" if labels else "avatar" if any(r == "user" for r in avatars.values()) else "bubbles"
    if kind == "labels":  # role labels ("You" / "ChatGPT" alone, or leading the line) mark who speaks
        role = None
        for ln in main:
            t = ln.text.strip()
            lead_u, lead_b = _USER_LEAD.match(t), _BOT_LEAD.match(t)
            if _USER_LABEL.match(t) or id(ln) in named:
                role = "user"
            elif _BOT_LABEL.match(t):
                role = "assistant"
            elif lead_u or lead_b:
                role = "user" if lead_u else "assistant"
                roles.append((role, OcrLine((lead_u or lead_b).group(1), ln.x0, ln.y0, ln.x1, ln.y1)))  # type: ignore[union-attr]
            elif role is not None:
                roles.append((role, ln))
    elif kind == "avatar":  # an avatar starts a turn; the lines under it, at its text's left edge, continue it
        role, prev = None, None
        marks = {id(main[i]): r for i, r in avatars.items()}
        for ln in main:
            t = ln.text.strip()
            if _AVATAR.match(t) and ln.x0 - left <= 0.08 * col:
                continue  # the avatar itself
            if id(ln) in marks:
                role = marks[id(ln)]
            elif _BOT_LABEL.match(t):
                role = "assistant"  # the assistant's name line ("GitHub Copilot") above its reply
            elif (
                role == "user"
                and prev is not None
                and (abs(ln.x0 - prev.x0) > 2 * prev.height or ln.y0 - prev.y1 > prev.height)
            ):
                role = "assistant"  # the reply starts below the question (or at another edge)
            if role is not None and not (_USER_LABEL.match(t) or _BOT_LABEL.match(t)):
                roles.append((role, ln))
                prev = ln
    else:  # right-aligned bubbles: an indented line is the user's; role label lines are no part of a turn
        said = [
            ln
            for ln in main
            if not (_USER_LABEL.match(ln.text.strip()) or _BOT_LABEL.match(ln.text.strip()) or _greeting(ln.text))
        ]
        user = _bubbles(said, left, right, col)
        if user:
            roles = [("user" if id(ln) in user else "assistant", ln) for ln in said]
    if kind == "bubbles" and not any(r == "user" for r, _ in roles):
        heading = _heading_roles(main)
        if heading:
            kind, roles = "heading", heading
    turns = tuple(
        Turn(t.role, _ungreet(t.text)) if t.role == "user" else t
        for t in _turns(roles)
        if t.role != "user" or _ungreet(t.text)
    )
    used = {id(ln) for _, ln in roles}
    frame = tuple(outside) + tuple(ln.text for ln in main if id(ln) not in used)
    if kind == "labels":  # the labels themselves ("ChatGPT:") are the frame, not the turn's words
        frame += tuple(ln.text for ln in main if _BOT_LEAD.match(ln.text.strip()) or _BOT_LABEL.match(ln.text.strip()))
    role_of = {id(ln): r for r, ln in roles}
    return ScreenChat(
        turns,
        address=address,
        chrome=chrome,
        region=region,
        kind=kind,
        frame=frame,
        typed=typed,
        body=tuple(main),
        people=people,
        roles=tuple(role_of.get(id(ln)) for ln in main) if kind != "labels" else (),
        input_box=bool(lower),
    )


HEADING_SCALE = 1.4
"""A page's heading is set at least this many times the median line height."""
_ANSWER_MARK = re.compile(
    r"^(?:\d+\s*)?(?:answer|sources?|perplexity|pro search|steps|reasoning|回答|答案|来源|参考来源|搜索结果)"
    r"(?:\s*[·•:]?\s*\d+)?$",
    re.I,
)
"""A label of an answer engine's result page (Perplexity-like) under the question set as the heading, with
the count a tab may show (``Sources · 3``, ``3 sources``)."""
MARK_GAP = 2.5
"""Heading heights under the heading within which an answer engine's first label (``Answer``) stands."""
_RELATED = re.compile(r"^(?:related|follow[- ]?ups?|people also ask|相关问题?|追问)$", re.I)
"""The label of the suggested next questions below the answer (no part of it)."""


def _heading_roles(main: Sequence[OcrLine]) -> list[tuple[str, OcrLine]]:
    """The question and answer of an answer engine's page (Perplexity-like: issue 47, the stored
    query was a source card's word): the first run of lines set :data:`HEADING_SCALE` times the
    median height in the upper half of the column is the user's question when an answer label
    (:data:`_ANSWER_MARK`: ``Sources``, ``Answer``) follows it; the answer is the text after the
    last such label, up to a ``Related`` label. ``[]`` when the page is no such page (an article's
    headline has no answer label under it, a blog post's "Sources" list stands at its end: the first
    label must stand within :data:`MARK_GAP` heading heights under the heading). The answer starts at
    the first line alone on its row after the labels: the tabs on the label's row and the source
    cards side by side under it are no part of it."""
    if len(main) < 3:
        return []
    heights = sorted(ln.height for ln in main)
    median = heights[len(heights) // 2]
    top, bottom = min(ln.y0 for ln in main), max(ln.y1 for ln in main)
    idx = [
        i
        for i, ln in enumerate(main)
        if ln.height >= HEADING_SCALE * median
        and ln.y0 <= top + 0.5 * (bottom - top)
        and not _ANSWER_MARK.match(ln.text.strip())
    ]
    if not idx:
        return []
    first = idx[0]
    run = [first]
    for i in range(first + 1, len(main)):
        if i in idx and abs(main[i].x0 - main[first].x0) <= main[first].height:
            run.append(i)
        else:
            break
    marks = [i for i in range(run[-1] + 1, len(main)) if _ANSWER_MARK.match(main[i].text.strip())]
    head = main[run[-1]]
    if not marks or main[marks[0]].y0 - head.y1 > MARK_GAP * head.height:
        return []
    roles: list[tuple[str, OcrLine]] = [("user", main[i]) for i in run]
    rest = main[marks[-1] + 1 :]
    started = False
    for k, ln in enumerate(rest):
        if _RELATED.match(ln.text.strip()):
            break
        if not started and _beside(ln, [main[marks[-1]], *(o for j, o in enumerate(rest) if j != k)]):
            continue  # a tab beside the label, a row of source cards
        started = True
        roles.append(("assistant", ln))
    return roles if len(roles) > len(run) else []


def _greeting(text: str) -> bool:
    """The whole line is a chat app's greeting (:data:`_GREETING`)."""
    m = _GREETING.match(text)
    return m is not None and not text[m.end() :].strip()


def _greeting_box(main: Sequence[OcrLine]) -> list[OcrLine]:
    """The lines typed into a fresh chat's input box set under its greeting (ChatGPT's "What can I
    help with?", Claude's "Good afternoon, Alice" above a centred box: issue 47): the first line
    starting within three greeting heights below a greeting line that is no placeholder (:func:`_placeholder`), and the
    lines under it at its left edge with less than half a line height between them, when nothing but
    controls lies below them (else the greeting stands above a chat); ``[]`` when there is no greeting."""
    for g in main:
        if not _greeting(g.text) or re.search(r"\bwe\b", g.text, re.I):
            continue  # "How can we help?" is a support page's, whose search box is no chat's input
        under = [ln for ln in main if 0 <= ln.y0 - g.y1 <= 3 * g.height and not _placeholder(ln.text)]
        if not under:
            return []
        box = [min(under, key=lambda ln: (ln.y0, ln.x0))]
        for ln in sorted(main, key=lambda ln: ln.y0):
            prev = box[-1]
            if ln.y0 > prev.y0 and ln.y0 - prev.y1 < 0.5 * prev.height and abs(ln.x0 - prev.x0) <= prev.height:
                box.append(ln)
        if any(ln.y0 > box[-1].y1 and not _placeholder(ln.text) for ln in main):
            return []  # text below it: a chat under the greeting (its first bubble, the reply), no box
        return box if len(_join([ln.text for ln in box])) > 3 else []
    return []


def _placeholder(text: str) -> bool:
    """An input box's placeholder or a control under it ("Ask anything", "Message ChatGPT", "+ Tools"):
    an :data:`_INPUT` line of at most four words (a typed "Write a short toast ..." is longer), or a
    line starting with ``+``."""
    t = text.strip()
    return t.startswith("+") or (bool(_INPUT.search(t)) and len(t.split()) <= 4)


def _ungreet(text: str) -> str:
    """A user turn without a greeting OCR read glued before it (``What can I help with? How do
    I ...`` -> ``How do I ...``); '' when the turn is only the greeting."""
    m = _GREETING.match(text)
    return text[m.end() :].strip() if m else text


def _bubbles(lines: Sequence[OcrLine], left: float, right: float, col: float) -> set[int]:
    """``id`` of the lines in the user's right-aligned bubbles: runs of consecutive lines indented by
    :data:`USER_INDENT` of the column, with no line of the column's left edge beside them on their row
    (:func:`_beside`), of which some line ends within :data:`RIGHT_SLACK` of its right edge,
    indented against a reply (:func:`_against_reply`), and one column (:func:`_side_by_side`)."""
    user: set[int] = set()
    run: list[OcrLine] = []
    flush = [ln for ln in lines if ln.x0 - left < USER_INDENT * col]
    top = min(lines, key=lambda ln: (ln.y0, ln.x0)) if lines else None
    for ln in [*lines, None]:
        if ln is not None and ln.x0 - left >= USER_INDENT * col and not _beside(ln, flush):
            run.append(ln)
            continue
        if (
            run
            and max(x.x1 for x in run) >= right - RIGHT_SLACK * col
            and _against_reply(run, flush, top)
            and not _side_by_side(run)
        ):
            user.update(id(x) for x in run)
        run = []
    return user


def _against_reply(run: Sequence[OcrLine], flush: Sequence[OcrLine], top: OcrLine | None) -> bool:
    """The lines at the column's left edge that make ``run`` indented include more than the column's
    header: a line other than the column's top line ``top`` (an answer, the other person's message),
    or the top line reaching under the run's middle (an earlier answer's prose). A page's logo or
    navigation bar alone at the left edge, above a centred article, indents the whole article but is
    no reply (issue 47: a blog post headed by a question was read as one user bubble)."""
    mid = (min(x.x0 for x in run) + max(x.x1 for x in run)) / 2
    return any(f is not top or f.x1 >= mid for f in flush)


def _side_by_side(run: Sequence[OcrLine]) -> bool:
    """Two lines of ``run`` share a row with more than two line heights between them: columns of
    cards or cells (a start page's suggestion cards, whose last row is indented when the first
    card's text ended a row above: issue 47), not a bubble's one column of text (OCR may split one
    of its lines at a space, with a narrow gap)."""
    return any(
        _beside(a, [b]) and max(a.x0, b.x0) - min(a.x1, b.x1) > 2 * min(a.height, b.height)
        for i, a in enumerate(run)
        for b in run[i + 1 :]
    )


def _beside(ln: OcrLine, others: Sequence[OcrLine]) -> bool:
    """``ln`` shares its row with one of ``others`` (vertical overlap of half the lower height): a
    user's bubble stands alone on its rows; an indented cell with text left of it is a column of
    cards, a table or a sidebar (a pricing page's plans, a Q&A site's "Related" list: issue 47)."""
    return any(min(ln.y1, o.y1) - max(ln.y0, o.y0) > 0.5 * min(ln.height, o.height) for o in others)


def _turns(roles: Sequence[tuple[str, OcrLine]]) -> tuple[Turn, ...]:
    """Consecutive lines of one role joined into turns (a gap of 1.5 line heights splits user turns)."""
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
    return tuple(turns)


def read_chat(lines: Sequence[OcrLine], width: float, height: float) -> ScreenChat | None:
    """The conversation one screenshot shows (:func:`read_screen`), or ``None`` when it shows no
    user turn.

    Args:
        lines: OCR lines of the screenshot (:func:`lines_from_ocr`).
        width: Screenshot width, pixels.
        height: Screenshot height, pixels.
    """
    chat = read_screen(lines, width, height)
    return chat if chat is not None and chat.user_turns else None


def _echoed(chat: ScreenChat, typed: Sequence[str]) -> ScreenChat:
    """``chat`` with the user turns found by input echo: body lines that read as a text typed into
    the input box on an earlier screenshot (then sent) are the user's, the lines below them up to
    the next user turn the reply. Applies where roles come from position or avatars (an avatar
    OCR did not read, a question at the reply's edge); a labelled transcript or a terminal keeps
    its own."""
    if chat.kind in ("labels", "terminal") or not chat.body:
        return chat
    lines = list(chat.body)
    roles: list[str | None] = list(chat.roles) if len(chat.roles) == len(lines) else [None] * len(lines)
    changed = False
    for t in typed:
        for i in range(len(lines)):
            joined, j = "", i
            for j in range(i, len(lines)):
                joined = _join([joined, lines[j].text])
                if len(joined) >= 0.9 * len(t):
                    break
            if len(joined) >= 0.9 * len(t) and _same(joined, t):
                if all(r == "user" for r in roles[i : j + 1]):
                    break  # already a user turn
                roles[i : j + 1] = ["user"] * (j + 1 - i)
                k = j + 1
                while k < len(lines) and roles[k] != "user":
                    roles[k] = "assistant"
                    k += 1
                changed = True
                break
    if not changed:
        return chat
    pairs = [(r, ln) for r, ln in zip(roles, lines) if r is not None]
    used = {id(ln) for _, ln in pairs}
    return ScreenChat(
        _turns(pairs),
        address=chat.address,
        chrome=chat.chrome,
        region=chat.region,
        kind=chat.kind if any(r == "user" for r in chat.roles) else "echo",
        frame=chat.frame + tuple(ln.text for ln in lines if id(ln) not in used and ln.text not in chat.frame),
        typed=chat.typed,
        body=chat.body,
        people=chat.people,
        roles=tuple(roles),
        input_box=chat.input_box,
    )


def _same(a: str, b: str) -> bool:
    a, b = " ".join(a.casefold().split()), " ".join(b.casefold().split())
    return a == b or SequenceMatcher(None, a, b, autojunk=False).ratio() >= 0.9


@dataclass(frozen=True)
class EventChat:
    """The conversation of one event, from its screenshots' chats."""

    queries: tuple[str, ...]
    """The user's turns asked during the event (else the last one shown)."""
    replies: tuple[str, ...]
    """The reply to the last of them as shown (empty: none yet)."""
    kind: str
    """What marked the user's turns (:attr:`ScreenChat.kind`), ``off-screen`` for :func:`off_screen_chat`."""
    frame: str
    """The screens' text outside the turns (where an AI product must be named when only the
    screen text names one)."""
    people: int
    """Most people-marking lines on one of the screenshots (:data:`PEOPLE_LINES`)."""
    client: str = ""
    """The terminal LLM client's platform name, '' when none."""
    query_source: str = "screen"
    """Where the query comes from: ``screen`` (a user turn shown), ``title`` (the chat's title, the
    question being off the screen: :func:`off_screen_chat`) or ``none`` (unknown: ``queries`` empty)."""


REPLY_WORDS = 12
"""Words of text in a chat column, one of its lines of at least 6, from which a chat page without a
user turn shows a reply (:func:`off_screen_chat`; an empty chat's greeting, suggestion chips or menu
are shorter)."""
_GENERIC_TITLE = re.compile(r"^(?:new chat|new conversation|untitled|home|新对话|新建对话|新会话)$", re.I)


def title_subject(title: str, products: Sequence[str]) -> str:
    """The subject a chat app titles its chat by, from the window title ('' when it names none).

    ChatGPT titles the tab by the chat's subject alone, Claude as ``<subject> - Claude``: the
    segments before the first one naming an LLM product (``products``: the titles of
    ``llm_platforms.json``, :func:`proagent.annotate.platforms.load_platforms`), the
    browser's name dropped (``... - Google Chrome``); a title starting with the product
    (``ChatGPT``, ``DeepSeek - 探索未至之境``, ``Google Gemini``), a generic one (``New chat``) or
    an address names none."""
    from ..pages import _segments

    segs = _segments(title)
    names = [n.casefold() for n in products]

    def names_product(seg: str) -> bool:
        s = seg.casefold()
        return any(s == n or (s.startswith(n) and not s[len(n)].isalnum()) for n in names)

    cut = next((i for i, seg in enumerate(segs) if names_product(seg)), len(segs))
    subject = " - ".join(segs[:cut]).strip()
    return "" if not subject or _GENERIC_TITLE.match(subject) or _URL.search(subject) else subject


def off_screen_chat(chats: Sequence[ScreenChat | None], title: str, products: Sequence[str]) -> EventChat | None:
    """The conversation of an AI chat page whose question is off the screen on every screenshot (a
    long answer opened already scrolled, or revisited: issue 47), ``None`` when no screenshot shows
    a chat's reply. Call it only where the app or the page's address is the AI product itself (the
    first pass's ``app`` or ``domain`` evidence) and :func:`event_chat` found no user turn.

    A screenshot shows a reply when its input box or small print stands in the lower part
    (:attr:`ScreenChat.input_box`) and its chat column holds text other than a greeting or a
    placeholder, in lines alone on their rows (a start page's suggestion cards stand side by side):
    :data:`REPLY_WORDS` words, one line of at least 6. The reply is the last such screenshot's
    lines as shown. The query is what an annotator could know: the chat's subject
    from the window title (:func:`title_subject`, ``query_source`` ``title``), else unknown (no
    query, ``query_source`` ``none``); never text of the reply."""
    shown: list[tuple[ScreenChat, list[str]]] = []
    for c in chats:
        if c is None or not c.input_box or c.kind == "terminal":
            continue
        lines = [ln for ln in c.body if not (_greeting(ln.text) or _placeholder(ln.text))]
        # a reply's prose stands alone on its rows; a start page's suggestion cards stand side by side
        said = [ln.text for ln in lines if not _beside(ln, [o for o in lines if o is not ln])]
        words = [len(t.split()) for t in said]
        if sum(words) >= REPLY_WORDS and max(words, default=0) >= 6:
            shown.append((c, said))
    if not shown:
        return None
    last, said = shown[-1]
    subject = title_subject(title, products)
    return EventChat(
        (subject,) if subject else (),
        (_join(said),),
        kind="off-screen",
        frame="\n".join(t for c, _ in shown for t in c.frame),
        people=max(c.people for c, _ in shown),
        query_source="title" if subject else "none",
    )


def event_chat(chats: Sequence[ScreenChat | None]) -> EventChat | None:
    """The conversation of one event from its screenshots' chats (:func:`read_screen`, oldest
    first), ``None`` when no screenshot shows a user turn.

    A screenshot without a user turn by position, label or avatar gets one by **input echo**:
    body lines reading as the text typed into the input box on an earlier screenshot (then
    sent) are the user's turn. Queries are the user turns that appeared during the event (on
    the last screenshot showing a user turn, not on the first one), else that screenshot's last
    user turn; the reply is the assistant text after the last user turn as the last screenshot
    showing one has it.
    """
    typed: list[str] = []
    done: list[ScreenChat] = []
    for c in chats:
        if c is None:
            continue
        if typed:
            c = _echoed(c, typed)
        if c.typed:
            typed.append(c.typed)
        done.append(c)
    seen = [c for c in done if c.user_turns]
    if not seen:
        return None
    last = seen[-1]
    first = seen[0]
    new = [q for q in last.user_turns if not any(_same(q, p) for p in first.user_turns)] if first is not last else []
    queries = tuple(q for q in (tuple(new) or (last.last_query,)) if q)
    replies = next(
        ((c.reply,) for c in reversed(seen) if c.reply and _same(c.last_query or "", last.last_query or "")), ()
    )
    return EventChat(
        queries,
        tuple(r for r in replies if r),
        kind=last.kind,
        frame="\n".join(t for c in seen for t in c.frame),
        people=max(c.people for c in done),
        client=next((c.client for c in seen if c.client), ""),
    )


def event_conversation(chats: Sequence[ScreenChat | None]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """``(user_queries, llm_responses)`` of :func:`event_chat` (replies may be empty: none shown
    yet), ``None`` when no screenshot shows a user turn."""
    got = event_chat(chats)
    return None if got is None else (got.queries, got.replies)


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
