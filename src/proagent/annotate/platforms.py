"""The cheap first pass of the annotation workflow: which events may be LLM use.

An event is a *candidate* when its application name, window title (including
URL-like parts such as ``chatgpt.com``) or the OCR text of its screenshots
names an LLM product of ``proagent/data/llm_platforms.json``. Only candidates
are sent to the annotator model (``proagent annotate --all`` sends every event),
so a day of screen activity costs a few model calls, not thousands.

Evidence is ranked: the application itself (``app``), a domain in the title
or on screen (``domain``), the product name in the title (``title``), a product
phrase in the screen text (``screen``). The strongest kind found decides the
platform; within a kind, the platform with the most matches wins, then the
order of the data file. Outside a browser the screen text counts only through a platform's
phrases of two words or more ("GitHub Copilot Chat", "Message Copilot": an assistant's chat panel
inside an editor or an office app, whose window title names the document). In a terminal (:data:`TERMINALS`) the screen text counts only where a
line starts a terminal LLM client (``ollama run MODEL``, ``llm chat``, ``aichat``), which names
the platform.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from ..errors import DataError
from ..pages import BROWSERS as _BROWSERS
from ..records import Event
from .conversation import _CLIENT, TERMINAL_CLIENTS  # one pattern for the first pass and the reader

__all__ = [
    "BROWSERS",
    "EVIDENCE_KINDS",
    "TERMINALS",
    "Platform",
    "PlatformHit",
    "detect_platform",
    "event_platform",
    "load_platforms",
]

EVIDENCE_KINDS = ("app", "domain", "title", "screen")
"""Kinds of evidence, strongest first."""


@dataclass(frozen=True)
class Platform:
    """One LLM product and the strings that name it."""

    name: str
    """Display name, as written into ``llm_platform`` (e.g. ``ChatGPT``, ``豆包``)."""
    apps: tuple[str, ...] = ()
    """Foreground application names of its desktop app (compared whole, case-folded, ``.exe`` dropped)."""
    domains: tuple[str, ...] = ()
    """Web domains, matched anywhere in the title or screen text."""
    titles: tuple[str, ...] = ()
    """Names matched as whole words in the window title."""
    screen: tuple[str, ...] = ()
    """Phrases matched as whole words in the OCR text of the screenshots."""


@dataclass(frozen=True)
class PlatformHit:
    """Why an event is a candidate LLM event."""

    platform: str
    """The platform decided by the strongest evidence."""
    evidence: str
    """Kind of that evidence: one of :data:`EVIDENCE_KINDS`."""
    matched: str
    """The string that matched (e.g. ``chatgpt.com``)."""


def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    """Whole-word match for Latin phrases; plain substring for CJK ones (no spaces between words)."""
    esc = re.escape(phrase.casefold())
    if re.search(r"[\u3000-\u9fff]", phrase):
        return re.compile(esc)
    return re.compile(rf"(?<![\w.]){esc}(?![\w])")


@lru_cache(maxsize=4)
def load_platforms(path: str | None = None) -> tuple[Platform, ...]:
    """The platform list (default: the bundled ``data/llm_platforms.json``).

    Raises:
        OSError: the file cannot be read.
        proagent.errors.DataError: it is not the expected JSON (``{"platforms": [{"name": ...}, ...]}``).
    """
    text = (
        Path(path).read_text("utf-8")
        if path
        else (resources.files("proagent").joinpath("data", "llm_platforms.json").read_text("utf-8"))
    )
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    rows = data.get("platforms") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and r.get("name") for r in rows):
        raise DataError(path or "llm_platforms.json", "expected {'platforms': [{'name': ...}, ...]}")
    return tuple(
        Platform(
            name=str(r["name"]),
            **{k: tuple(str(v) for v in r.get(k, ())) for k in ("apps", "domains", "titles", "screen")},
        )
        for r in rows
    )


@lru_cache(maxsize=4)
def _patterns(
    platforms: tuple[Platform, ...],
) -> tuple[tuple[Platform, dict[str, list[tuple[str, re.Pattern[str]]]]], ...]:
    out = []
    for p in platforms:
        out.append(
            (
                p,
                {
                    "domain": [(d, re.compile(re.escape(d.casefold()))) for d in p.domains],
                    "title": [(t, _phrase_pattern(t)) for t in p.titles],
                    "screen": [(s, _phrase_pattern(s)) for s in p.screen],
                    "panel": [(s, _phrase_pattern(s)) for s in p.screen if len(s.split()) >= 2],
                },
            )
        )
    return tuple(out)


def _app_key(name: str) -> str:
    name = name.strip().casefold()
    return name[:-4] if name.endswith(".exe") else name


BROWSERS = _BROWSERS
"""Foreground applications (case-folded, ``.exe`` dropped) that show web pages: the one list,
:data:`proagent.pages.BROWSERS`. Screen text is evidence of LLM use only in front of one of these
(or with no app name recorded): a chat page visible *behind* a terminal or an editor is not the
user using an LLM (a whole-screen screenshot shows background windows too)."""


TERMINALS = frozenset(
    {
        "xterm",
        "uxterm",
        "gnome-terminal",
        "gnome-terminal-server",
        "terminal",
        "konsole",
        "alacritty",
        "kitty",
        "wezterm",
        "wezterm-gui",
        "foot",
        "tilix",
        "terminator",
        "xfce4-terminal",
        "lxterminal",
        "mate-terminal",
        "urxvt",
        "rxvt",
        "st",
        "iterm2",
        "iterm",
        "windowsterminal",
        "cmd",
        "powershell",
        "pwsh",
        "ghostty",
        "warp",
    }
)
"""Foreground applications (case-folded, ``.exe`` dropped) that are terminals: their screen text
is evidence of LLM use only where a line starts a terminal LLM client (``ollama run llama3.2``,
``llm chat``, ``aichat``; :data:`proagent.annotate.conversation.TERMINAL_CLIENTS`)."""


def _screen_counts(app: str) -> bool:
    return not app or app in BROWSERS


def _terminal_client(app: str, screen_texts: Sequence[str]) -> PlatformHit | None:
    """The terminal LLM client started on a terminal's screen, else ``None``."""
    if app not in TERMINALS:
        return None
    for text in screen_texts:
        for line in text.splitlines() or [text]:
            m = _CLIENT.search(line.strip())
            if m:
                return PlatformHit(TERMINAL_CLIENTS[m.group(1).casefold()], "screen", " ".join(line.split())[:60])
    return None


def detect_platform(
    app_name: str, window_title: str, screen_texts: Sequence[str] = (), platforms: tuple[Platform, ...] | None = None
) -> PlatformHit | None:
    """The LLM platform named by an event's metadata or screen text, or ``None``.

    Args:
        app_name: Foreground application.
        window_title: Window title (browser titles carry the page title and often the site).
        screen_texts: OCR texts of the event's screenshots (used only when the foreground
            application is a browser, :data:`BROWSERS`, or unknown).
        platforms: The list to match (default: :func:`load_platforms`).
    """
    platforms = platforms or load_platforms()
    app = _app_key(app_name)
    title = window_title.casefold()
    screen = "\n".join(screen_texts).casefold() if _screen_counts(app) else ""
    # outside a browser only an assistant panel's own phrases count ("GitHub Copilot Chat",
    # "Message Copilot", "Ask Gemini": a chat view inside an editor or an office app, issue 47)
    panel = "\n".join(screen_texts).casefold() if app and not screen and app not in TERMINALS else ""
    for p in platforms:
        for a in p.apps:
            if app and app == _app_key(a):
                return PlatformHit(p.name, "app", a)
    fields = {"domain": title + "\n" + screen, "title": title, "screen": screen, "panel": panel}
    for kind in ("domain", "title", "screen", "panel"):
        best: tuple[int, int, str, str] | None = None
        for order, (p, pats) in enumerate(_patterns(platforms)):
            hits = [(s, len(pat.findall(fields[kind]))) for s, pat in pats[kind]]
            n = sum(c for _, c in hits)
            if n and (best is None or n > best[0]):
                best = (n, order, p.name, max(hits, key=lambda h: h[1])[0])
        if best:
            return PlatformHit(best[2], "screen" if kind == "panel" else kind, best[3])
    return _terminal_client(app, screen_texts)


def event_platform(event: Event, screen_texts: Sequence[str] | None = None) -> PlatformHit | None:
    """:func:`detect_platform` of one event (the OCR of its focused screen's screenshots,
    :attr:`~proagent.records.Event.focused_screenshots`, unless ``screen_texts`` is given)."""
    texts = [s.ocr_text for s in event.focused_screenshots] if screen_texts is None else screen_texts
    return detect_platform(event.app_name, event.window_title, texts)
