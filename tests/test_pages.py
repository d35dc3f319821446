"""The tab rule (proagent.pages): which site and kind of page a browser title or URL shows, when
an event's page moves, and the event counts it gives on a scripted sequence of real browser
titles (tests/scenarios/browser_titles.py) against the truth, beside the app rule and the
every-title rule."""

from __future__ import annotations

import pytest
from scenarios.browser_titles import MOMENTS, truth_starts

from proagent.pages import EventSplit, PageKey, moves, page_key, split_points, tab_rule_default


@pytest.mark.parametrize(
    ("app", "title", "kind", "site"),
    [
        ("chromium", "Inbox (3) - li.wei@gmail.com - Gmail - Chromium", "mail", "Gmail"),
        ("chrome.exe", "Mail - Li Wei - Outlook - Google Chrome", "mail", "Outlook"),
        ("Chromium", "ChatGPT - Chromium", "llm", "ChatGPT"),
        ("firefox", "Flask login KeyError - Claude — Mozilla Firefox", "llm", "Claude"),
        ("firefox", "Google Gemini — Mozilla Firefox", "llm", "Gemini"),
        ("firefox", "Kimi - 会推理解析，能深度思考的AI助手 — Mozilla Firefox", "llm", "Kimi"),
        ("chromium", "DeepSeek - Into the Unknown - Chromium", "llm", "DeepSeek"),
        ("chromium", "Claude Shannon - Wikipedia - Chromium", "docs", "Wikipedia"),  # a known site named last wins
        ("chromium", "Issues · pallets/flask · GitHub - Chromium", "code", "GitHub"),
        ("chromium", "GitHub - pallets/flask: The Python micro framework - Chromium", "code", "GitHub"),
        (
            "chromium",
            "os — Miscellaneous operating system interfaces — Python 3.12.8 documentation - Chromium",
            "site",
            "python 3.12.8 documentation",
        ),
        ("Navigator", "Workshop contact - Mail — Mozilla Firefox", "site", "mail"),
    ],
)
def test_page_key_from_titles(app: str, title: str, kind: str, site: str) -> None:
    key = page_key(app, title)
    assert key is not None and (key.kind, key.site, key.source) == (kind, site, "title")


def test_page_key_unknown_and_not_a_browser() -> None:
    assert page_key("chromium", "Flask KeyError Fix - Chromium") is None  # a renamed chat: its name only
    assert page_key("chromium", "New Tab - Chromium") is None
    assert page_key("chromium", "(2) WhatsApp") is None
    assert page_key("xterm", "Inbox - Gmail") is None  # only browsers show pages


def test_page_key_from_urls() -> None:
    def key(url: str) -> PageKey | None:
        return page_key("chrome", "whatever", url)

    assert key("https://mail.google.com/mail/u/0/#inbox") == PageKey("mail", "Gmail", True, "url")
    assert key("https://gemini.google.com/app") == PageKey("llm", "Gemini", True, "url")  # not Google Search
    assert key("https://www.google.com/search?q=x") == PageKey("search", "Google Search", True, "url")
    assert key("https://docs.python.org/3/library/os.html") == PageKey("site", "docs.python.org", False, "url")
    # an unknown host gives way to a known site in the title
    assert page_key("chrome", "x - Gmail", "https://example.org/") == PageKey("mail", "Gmail", True, "title")
    assert page_key("chrome", "Flask KeyError Fix", "not a url") is None


def test_moves() -> None:
    gmail, outlook = PageKey("mail", "Gmail", True, "title"), PageKey("mail", "Outlook", True, "url")
    chat = PageKey("llm", "ChatGPT", True, "url")
    docs_t, docs_u = PageKey("site", "python docs", False, "title"), PageKey("site", "docs.python.org", False, "url")
    assert moves(gmail, chat) and moves(gmail, outlook) and not moves(gmail, PageKey("mail", "Gmail", True, "url"))
    assert not moves(gmail, None) and not moves(None, chat)  # an unknown page never moves
    assert moves(gmail, docs_t)  # both from titles: a known site, then another site
    assert not moves(docs_t, docs_u)  # title vs host of an unknown site: not comparable
    assert moves(docs_u, PageKey("site", "pandas.pydata.org", False, "url"))


def test_event_split_keeps_the_first_known_page_and_the_app_rule() -> None:
    s = EventSplit()
    assert s.starts("chromium", "New Tab - Chromium")  # the first moment
    assert not s.starts("chromium", "Inbox - a@gmail.com - Gmail - Chromium")  # the page becomes known: no split
    assert not s.starts("chromium", "Inbox (2) - a@gmail.com - Gmail - Chromium")
    assert s.starts("chromium", "ChatGPT - Chromium")
    assert not s.starts("chromium", "Flask KeyError Fix - Chromium")  # renamed: stays
    assert s.starts("gimp", "cat.png") and not s.starts("gimp", "dog.png")  # neither browser, editor nor terminal
    assert s.starts("gimp", "dog.png", force=True)
    off = EventSplit(tabs=False)
    assert [off.starts("chromium", t) for t in ("a - Gmail", "ChatGPT", "b - Gmail")] == [True, False, False]


def test_tab_rule_switch_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROAGENT_SPLIT_ON_TAB", raising=False)
    assert tab_rule_default()
    for off in ("0", "false", "OFF", "no"):
        monkeypatch.setenv("PROAGENT_SPLIT_ON_TAB", off)
        assert not tab_rule_default()
    monkeypatch.setenv("PROAGENT_SPLIT_ON_TAB", "1")
    assert tab_rule_default()


def _score(starts: list[int]) -> tuple[int, int, int]:
    truth = set(truth_starts())
    got = set(starts)
    return len(starts), len(got - truth), len(truth - got)


def test_event_counts_on_real_browser_titles_against_the_truth() -> None:
    """The measured figures of docs/guides/capture-events.md (events, false splits, missed splits)."""
    n_true = len(truth_starts())
    assert n_true == 20 and len(MOMENTS) == 33
    titles = [(a, t, None) for a, t, _, _ in MOMENTS]
    with_urls = [(a, t, u) for a, t, u, _ in MOMENTS]
    every_title = [i for i, m in enumerate(MOMENTS) if i == 0 or m[:2] != MOMENTS[i - 1][:2]]
    assert _score(split_points(titles, tabs=False)) == (4, 0, 16)  # app changes only: tab switches merged
    assert _score(every_title) == (33, 13, 0)  # --split-on-title: every unread count and rename
    assert _score(split_points(titles)) == (18, 0, 2)  # the tab rule on titles: Gmail -> "Trip to Lisbon" unseen
    assert _score(split_points(with_urls)) == (20, 0, 0)  # with the URL a web watcher records


def test_one_browser_list() -> None:
    """proagent.pages.BROWSERS is the one list of browser application names: annotate's first pass
    reads the same object (so Firefox's X11 class ``Navigator`` counts there as in the tab rule),
    and no other module under src/ writes such a list out; doctor's CHROMIUM_PROGRAMS is another
    thing (the programs that render pages), checked apart."""
    import ast
    from pathlib import Path

    import proagent
    from proagent import doctor, pages
    from proagent.annotate import platforms
    from proagent.annotate.platforms import detect_platform

    assert platforms.BROWSERS is pages.BROWSERS
    assert not hasattr(doctor, "BROWSERS") and set(doctor.CHROMIUM_PROGRAMS) <= pages.BROWSERS
    chat = ["ChatGPT\nHow do I fix a KeyError in Flask?\nMessage ChatGPT"]
    assert detect_platform("Navigator", "Untitled — Mozilla Firefox", chat) is not None  # a browser: its screen counts
    # outside a browser only an assistant panel's phrases of two words or more count (annotate.platforms, issue 47:
    # a Copilot chat view in an editor); a single word does not
    assert detect_platform("code", "main.py - Visual Studio Code", ["ChatGPT\nHow do I fix a KeyError?"]) is None
    src = Path(proagent.__file__).resolve().parent
    for path in sorted(src.rglob("*.py")):
        if path == src / "pages.py":
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Call, ast.Set, ast.Tuple, ast.List)):
                literal = {
                    c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)
                }
                assert not {"firefox", "safari", "msedge"} <= literal, f"{path.relative_to(src)}: a second browser list"
