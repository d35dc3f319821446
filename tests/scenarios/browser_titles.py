"""A scripted sequence of foreground windows with real browser titles, and where its events truly
start (issue 34 item 3: tab switches in one browser are events; a page's own title changes are not).

Each moment is ``(app, window title, url, truth event)``. The titles are written as the sites
write them (December 2026): Gmail ``SUBJECT - ADDRESS - Gmail``, Outlook ``Mail - NAME - Outlook``,
ChatGPT's bare ``ChatGPT`` and, once a conversation is named, the conversation's name alone,
Claude ``NAME - Claude``, DeepSeek ``NAME - DeepSeek``, Kimi, Google Gemini, GitHub, Stack Overflow,
Sphinx docs ``PAGE — PROJECT documentation``, Google Docs; then the browser's own suffix. The URL
is what a web watcher would record (ActivityWatch's ``web.tab.current``), for the same moments.

Title changes inside one event: an unread count, a mail opened, a chat renamed as it goes, docs
pages of one project, GitHub pages of one repository, an editor's file name in an xterm. The one
switch a title cannot show: from Gmail to a ChatGPT conversation whose title is only its name
(``Trip to Lisbon``): with titles alone it stays in the mail event; the URL tells it.
"""

from __future__ import annotations

__all__ = ["MOMENTS", "truth_starts"]

_C, _F = " - Chromium", " — Mozilla Firefox"
_G = "li.wei.research@gmail.com"

MOMENTS: tuple[tuple[str, str, str | None, int], ...] = (
    ("chromium", f"Inbox (3) - {_G} - Gmail{_C}", "https://mail.google.com/mail/u/0/#inbox", 0),
    ("chromium", f"Inbox (4) - {_G} - Gmail{_C}", "https://mail.google.com/mail/u/0/#inbox", 0),
    ("chromium", f"Workshop contact - {_G} - Gmail{_C}", "https://mail.google.com/mail/u/0/#inbox/FMfcgzQ", 0),
    ("chromium", f"ChatGPT{_C}", "https://chatgpt.com/", 1),
    ("chromium", f"Flask KeyError Fix{_C}", "https://chatgpt.com/c/6750a1b2", 1),
    ("chromium", f"Inbox (4) - {_G} - Gmail{_C}", "https://mail.google.com/mail/u/0/#inbox", 2),
    ("chromium", f"Google Gemini{_C}", "https://gemini.google.com/app", 3),
    ("chromium", f"Gemini{_C}", "https://gemini.google.com/app/8f2c", 3),
    ("xterm", "python app.py", None, 4),
    ("xterm", "vim app.py", None, 4),
    ("firefox", f"Mail - Li Wei - Outlook{_F}", "https://outlook.live.com/mail/0/", 5),
    ("firefox", f"Inbox - Li Wei - Outlook{_F}", "https://outlook.live.com/mail/0/inbox", 5),
    ("firefox", f"Claude{_F}", "https://claude.ai/new", 6),
    ("firefox", f"Debugging Flask session KeyError - Claude{_F}", "https://claude.ai/chat/1d9e", 6),
    ("firefox", f"Kimi - 会推理解析，能深度思考的AI助手{_F}", "https://www.kimi.com/", 7),
    ("firefox", f"DeepSeek - Into the Unknown{_F}", "https://chat.deepseek.com/", 8),
    ("firefox", f"Pandas monthly sales sum - DeepSeek{_F}", "https://chat.deepseek.com/a/chat/s/77b1", 8),
    (
        "chromium",
        f"GitHub - pallets/flask: The Python micro framework for building web applications.{_C}",
        "https://github.com/pallets/flask",
        9,
    ),
    ("chromium", f"Issues · pallets/flask · GitHub{_C}", "https://github.com/pallets/flask/issues", 9),
    (
        "chromium",
        f"Session KeyError after login · Issue #5432 · pallets/flask · GitHub{_C}",
        "https://github.com/pallets/flask/issues/5432",
        9,
    ),
    (
        "chromium",
        f"Sessions — Flask Documentation (3.1.x){_C}",
        "https://flask.palletsprojects.com/en/stable/api/#sessions",
        10,
    ),
    ("chromium", f"API — Flask Documentation (3.1.x){_C}", "https://flask.palletsprojects.com/en/stable/api/", 10),
    (
        "chromium",
        f"os — Miscellaneous operating system interfaces — Python 3.12.8 documentation{_C}",
        "https://docs.python.org/3/library/os.html",
        11,
    ),
    (
        "chromium",
        f"json — JSON encoder and decoder — Python 3.12.8 documentation{_C}",
        "https://docs.python.org/3/library/json.html",
        11,
    ),
    (
        "chromium",
        f"pandas.DataFrame.groupby — pandas 2.2.3 documentation{_C}",
        "https://pandas.pydata.org/docs/reference/api/pandas.DataFrame.groupby.html",
        12,
    ),
    (
        "chromium",
        f"Group by: split-apply-combine — pandas 2.2.3 documentation{_C}",
        "https://pandas.pydata.org/docs/user_guide/groupby.html",
        12,
    ),
    ("chromium", f"ChatGPT{_C}", "https://chatgpt.com/", 13),
    ("chromium", f"Pandas monthly aggregation{_C}", "https://chatgpt.com/c/6750c3d4", 13),
    ("chromium", f"Project plan Q2 - Google Docs{_C}", "https://docs.google.com/document/d/1x2y/edit", 14),
    (
        "chromium",
        f"python - Flask session KeyError after redirect - Stack Overflow{_C}",
        "https://stackoverflow.com/questions/7841",
        15,
    ),
    ("chromium", f"Inbox (5) - {_G} - Gmail{_C}", "https://mail.google.com/mail/u/0/#inbox", 16),
    ("chromium", f"Trip to Lisbon{_C}", "https://chatgpt.com/c/6750e5f6", 17),
    ("chromium", f"Inbox (5) - {_G} - Gmail{_C}", "https://mail.google.com/mail/u/0/#inbox", 18),
)
"""The moments, in order (one per window or title change)."""


def truth_starts() -> list[int]:
    """Indexes of the moments at which a true event starts."""
    return [i for i, m in enumerate(MOMENTS) if i == 0 or m[3] != MOMENTS[i - 1][3]]
