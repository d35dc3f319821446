"""Which site and kind of page a browser window shows: the *tab rule* of event splitting; and
the one place where an event's split inside one application is decided (:func:`in_app_key`,
:func:`moves`, :class:`EventSplit`: browsers by this module's tab rule, editors and terminals by
the document rule of :mod:`proagent.documents`).

A browser is one application, so splitting events on an application change (LifeTrace's rule,
ProAgentBench section 5.1) merges a mail page and an LLM chat visited in one window into one
event; splitting on every title change (``capture --split-on-title``) cuts one page into many
events (a mail page's unread count, a chat renamed as it goes, a document's edits). The tab rule
sits between: a browser's event ends when its page moves to another **site or page kind**.

The page of a browser window (:func:`page_key`, from the window title and, where the log has one,
the URL):

* **LLM chat** (kind ``llm``, site the platform's name) when the URL's host is one of a platform's
  ``domains`` or the title's last segment (else, when no known site is named, its first) starts
  with one of its ``titles``
  (``proagent/data/llm_platforms.json``, the annotate platform table, read here without importing
  :mod:`proagent.annotate`): ``ChatGPT``, ``Flask KeyError - Claude``, ``Google Gemini``.
* A **known site** of ``proagent/data/browser_sites.json`` (kind ``mail``, ``code``, ``docs``,
  ``search``, ``video``) when the URL's host is one of its domains or a title segment is one of its
  names: ``Inbox (3) - li@gmail.com - Gmail`` is Gmail, ``Issues · a/b · GitHub`` is GitHub.
* Else the URL's host, or the title's last segment when the title has two or more (the site most
  pages name last: ``os — ... — Python 3.12 documentation``); kind ``site``.
* Else nothing is known (``None``): a one-segment title such as a renamed ChatGPT conversation
  (``Flask KeyError Fix``) or ``New Tab``.

Segments are what lies between `` - ``, `` — ``, `` – ``, `` | `` and `` · ``, after the browser's own
suffix (``- Chromium``, ``— Mozilla Firefox``, ...) and a leading unread count (``(3) ``) are
dropped. :func:`moves` says whether a page is another page than the event's: an unknown page
never moves (it stays in the event it came into), pages of two LLM platforms or two known sites
move when their names differ, and an unknown site compares only with a site read the same way
(title with title, host with host).

Editors and terminals (:func:`in_app_key`): the page is the document of
:func:`proagent.documents.document_key` (kind ``editor`` or ``terminal``), with the window's id
where the recorder knows it; it moves when the document differs or the window does.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Literal
from urllib.parse import urlsplit

from .documents import app_kind, document_key

__all__ = [
    "BROWSERS",
    "SPLIT_ENV",
    "SPLIT_ENV_OLD",
    "EventSplit",
    "PageKey",
    "in_app_key",
    "is_browser",
    "keeps",
    "moves",
    "page_key",
    "split_points",
    "splits_in_app",
    "tab_rule_default",
]

BROWSERS = frozenset(
    {
        "chromium",
        "chromium-browser",
        "google chrome",
        "google-chrome",
        "chrome",
        "firefox",
        "firefox-esr",
        "mozilla firefox",
        "navigator",
        "microsoft edge",
        "msedge",
        "edge",
        "safari",
        "brave",
        "brave browser",
        "brave-browser",
        "opera",
        "vivaldi",
        "arc",
        "yandex",
        "360se",
        "360chrome",
        "qqbrowser",
        "sogouexplorer",
        "librewolf",
    }
)
"""Application names (case-folded, ``.exe`` dropped) that show web pages (``navigator``: Firefox's
X11 window class). The one list: capture's tab rule (:func:`is_browser`) and annotate's first pass
(:data:`proagent.annotate.platforms.BROWSERS`, the same object) read it; ``proagent doctor``'s
:data:`proagent.doctor.CHROMIUM_PROGRAMS` is another thing (the programs that render pages)."""

_BROWSER_SUFFIX = re.compile(
    r"\s+[-—–]\s+(?:(?:Google Chrome|Chromium|Mozilla Firefox|Firefox(?: Developer Edition| Nightly)?|"
    r"Microsoft\W*Edge|Brave|Opera|Vivaldi|LibreWolf)(?:\s*\(Incognito\))?)\s*$",
    re.IGNORECASE,
)
_PROFILE = re.compile(r"\s+-\s+(?:Person \d+|Profile \d+|Work|Personal)\s*$", re.IGNORECASE)
_MORE_TABS = re.compile(r"\s+and \d+ more pages?\s*$", re.IGNORECASE)  # Edge: "X and 3 more pages - Profile 1"
_COUNT = re.compile(r"^\(\d+\+?\)\s*")
_SEPARATOR = re.compile(r"\s+[-—–|·]\s+")


@dataclass(frozen=True)
class PageKey:
    """The page a browser window shows, as far as its title or URL tell."""

    kind: str
    """``llm`` (an LLM chat), a known site's kind (``mail``, ``code``, ``docs``, ``search``,
    ``video``) or ``site`` (any other site); ``editor`` or ``terminal`` for the document of an
    editor's or terminal's window (:func:`in_app_key`)."""
    site: str
    """The LLM platform's or known site's name, else the host (URL) or the title's last segment;
    for an editor or terminal the document (:func:`proagent.documents.document_key`, ``""`` when
    the title tells none)."""
    known: bool
    """The site is an LLM platform or a site of ``browser_sites.json`` (comparable whether it
    was read from the title or the URL)."""
    source: Literal["title", "url"]
    """Where it was read."""
    window: int | None = None
    """The window's id (an editor's or terminal's, where the recorder knows it: capture's X11 or
    sway window id), ``None`` elsewhere."""


@dataclass(frozen=True)
class _Site:
    name: str
    kind: str
    titles: tuple[str, ...]
    domains: tuple[str, ...]


@lru_cache(maxsize=1)
def _sites() -> tuple[_Site, ...]:
    """The LLM platforms (kind ``llm``) then the known sites, from the bundled data files."""
    data = resources.files("proagent").joinpath("data")
    out = [
        _Site(str(p["name"]), "llm", tuple(p.get("titles", ())), tuple(p.get("domains", ())))
        for p in json.loads(data.joinpath("llm_platforms.json").read_text("utf-8"))["platforms"]
    ]
    out += [
        _Site(str(s["name"]), str(s["kind"]), tuple(s.get("titles", ())), tuple(s.get("domains", ())))
        for s in json.loads(data.joinpath("browser_sites.json").read_text("utf-8"))["sites"]
    ]
    return tuple(out)


def _app(name: str) -> str:
    name = name.strip().casefold()
    return name[:-4] if name.endswith(".exe") else name


def is_browser(app_name: str) -> bool:
    """Whether ``app_name`` is a web browser (:data:`BROWSERS`)."""
    return _app(app_name) in BROWSERS


def _segments(title: str) -> list[str]:
    t = title.strip()
    for pat in (_BROWSER_SUFFIX, _PROFILE, _MORE_TABS):
        t = pat.sub("", t)
    t = _COUNT.sub("", t)
    return [s.strip() for s in _SEPARATOR.split(t) if s.strip()]


def _starts_with(segment: str, name: str) -> bool:
    s, n = segment.casefold(), name.casefold()
    return s == n or (s.startswith(n) and not (s[len(n)].isalnum() or s[len(n)] == "_"))


def _from_url(url: str) -> PageKey | None:
    try:
        host = (urlsplit(url.strip()).hostname or "").casefold()
    except ValueError:
        return None
    if not host:
        return None
    best: tuple[int, _Site] | None = None
    for site in _sites():  # the longest matching domain wins: mail.google.com over google.com
        for d in site.domains:
            d = d.casefold()
            if (host == d or host.endswith("." + d)) and (best is None or len(d) > best[0]):
                best = (len(d), site)
    if best is not None:
        return PageKey(best[1].kind, best[1].name, True, "url")
    return PageKey("site", host.removeprefix("www."), False, "url")


def _from_title(title: str) -> PageKey | None:
    segs = _segments(title)
    if not segs:
        return None
    llm = [site for site in _sites() if site.kind == "llm"]
    for site in llm:  # a chat names its platform last: "Flask KeyError - Claude"
        if any(_starts_with(segs[-1], n) for n in site.titles):
            return PageKey("llm", site.name, True, "title")
    for s in reversed(segs):  # a known site may name itself in any segment, the last one first
        for site in _sites():
            if site.kind != "llm" and any(s.casefold() == n.casefold() for n in site.titles):
                return PageKey(site.kind, site.name, True, "title")
    for site in llm:  # ... or first: "DeepSeek - Into the Unknown", "ChatGPT - French"
        if any(_starts_with(segs[0], n) for n in site.titles):
            return PageKey("llm", site.name, True, "title")
    if len(segs) > 1:
        return PageKey("site", segs[-1].casefold(), False, "title")
    return None


def page_key(app_name: str, window_title: str, url: str | None = None) -> PageKey | None:
    """The page a browser window shows (module docstring), ``None`` when ``app_name`` is not a
    browser or neither the URL nor the title tells the site.

    Args:
        app_name: The foreground application (``chromium``, ``chrome.exe``, ``Firefox``).
        window_title: Its window title (browsers show the page's title, often with the site).
        url: The page's URL when the log records one (ActivityWatch's web watcher, screenpipe).
    """
    if not is_browser(app_name):
        return None
    by_url = _from_url(url) if url else None
    if by_url is not None and by_url.known:
        return by_url
    by_title = _from_title(window_title)
    if by_title is not None and by_title.known:
        return by_title
    return by_url or by_title


def splits_in_app(app_name: str) -> bool:
    """Whether events of ``app_name`` split inside the app: a browser (tab rule), an editor or a
    terminal (document rule, :func:`proagent.documents.app_kind`)."""
    return is_browser(app_name) or app_kind(app_name) is not None


def in_app_key(app_name: str, window_title: str, url: str | None = None, window: int | None = None) -> PageKey | None:
    """What the window of ``app_name`` shows, for splitting events inside one app: a browser's
    :func:`page_key`; an editor's or terminal's document (kind ``editor``/``terminal``, site the
    :func:`proagent.documents.document_key` of the title or ``""``, ``window`` kept; ``None``
    when neither title nor window is known); ``None`` for any other app."""
    kind = app_kind(app_name)
    if kind is None:
        return page_key(app_name, window_title, url)
    doc = document_key(app_name, window_title)
    if doc is None and window is None:
        return None
    return PageKey(kind, doc or "", True, "title", window)


def _document(key: PageKey) -> bool:
    return key.kind in ("editor", "terminal")


def moves(current: PageKey | None, new: PageKey | None) -> bool:
    """Whether ``new`` is another page than ``current`` (the page of the open event): False when
    either is unknown; by name when both are known sites or LLM platforms; an unknown site
    compares only with one read from the same source (title or URL). Documents (editors,
    terminals): True when both windows are known and differ, else when both documents are known
    (not ``""``) and differ."""
    if current is None or new is None:
        return False
    if _document(current) or _document(new):
        if current.window is not None and new.window is not None and current.window != new.window:
            return True
        return bool(current.site and new.site) and (current.kind, current.site) != (new.kind, new.site)
    if current.known and new.known:
        return (current.kind, current.site) != (new.kind, new.site)
    if current.known != new.known and current.source == new.source == "title":
        return True  # "x - Gmail" then "y - Python docs": a known site and another site, both from titles
    if current.source != new.source:
        return False
    return current.site != new.site


SPLIT_ENV = "PROAGENT_SPLIT_IN_APP"
"""Environment variable that turns the split inside one app (the tab rule and the document rule)
off in the readers that build events from window moments (ActivityWatch, screenpipe): ``0`` (or
``false``, ``no``, ``off``) is off; unset or anything else is on. ``proagent capture`` has
``--split-in-app/--no-split-in-app`` instead. :data:`SPLIT_ENV_OLD` is still read."""

SPLIT_ENV_OLD = "PROAGENT_SPLIT_ON_TAB"
"""The switch's earlier name (issue 34, browsers only): still accepted, :data:`SPLIT_ENV` wins
when both are set."""


def tab_rule_default() -> bool:
    """Whether readers split inside one app when not told (:data:`SPLIT_ENV`, else
    :data:`SPLIT_ENV_OLD`; on by default)."""
    value = os.environ.get(SPLIT_ENV)
    if value is None:
        value = os.environ.get(SPLIT_ENV_OLD, "")
    return value.strip().casefold() not in ("0", "false", "no", "off")


def keeps(current: PageKey | None, new: PageKey | None) -> PageKey | None:
    """The open event's page after a moment that did not :func:`move <moves>` it: its first known
    page (``current``), or ``new`` while the event's page is still unknown (``None``, or a
    document window whose title told nothing yet)."""
    if current is None or (_document(current) and not current.site and new is not None):
        return new
    return current


class EventSplit:
    """Event boundaries over a sequence of window moments: a new event when the app changes or,
    with ``tabs``, when what the app shows :func:`moves` (a browser's page, an editor's file, a
    terminal's title: :func:`in_app_key`). The page of an event is its first known page; a moment
    whose page is unknown stays in the open event."""

    def __init__(self, tabs: bool = True) -> None:
        self.tabs = tabs
        self.app: str | None = None
        self.page: PageKey | None = None
        self.started = False

    def starts(
        self, app: str, title: str, url: str | None = None, *, force: bool = False, window: int | None = None
    ) -> bool:
        """Feed one moment; True when it starts a new event (the first moment, an app change, a
        page move, or ``force``: the caller's own reason, such as a gap in time). ``window``: the
        window's id, where the log has one."""
        key = in_app_key(app, title, url, window) if self.tabs else None
        if force or not self.started or app != self.app or moves(self.page, key):
            self.started, self.app, self.page = True, app, key
            return True
        self.page = keeps(self.page, key)
        return False


def split_points(windows: Iterable[tuple[Any, ...]], tabs: bool = True) -> list[int]:
    """Indexes at which a new event starts in a sequence of ``(app, title, url)`` or ``(app, title,
    url, window id)`` moments (:class:`EventSplit`; 0 always, when the sequence is not empty)."""
    split = EventSplit(tabs)
    return [
        i
        for i, (app, title, url, *window) in enumerate(windows)
        if split.starts(app, title, url, window=window[0] if window else None)
    ]
