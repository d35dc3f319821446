"""A scripted sequence of foreground windows with real browser titles, and where its events truly
start (issue 34 item 3: tab switches in one browser are events; a page's own title changes are not).

Each moment is ``(app, window title, url, truth event)``. The titles are written as the sites
write them (December 2026): Gmail ``SUBJECT - ADDRESS - Gmail``, Outlook ``Mail - NAME - Outlook``,
ChatGPT's bare ``ChatGPT`` and, once a conversation is named, the conversation's name alone,
Claude ``NAME - Claude``, DeepSeek ``NAME - DeepSeek``, Kimi, Google Gemini, GitHub, Stack Overflow,
Sphinx docs ``PAGE — PROJECT documentation``, Google Docs; then the browser's own suffix. The URL
is what a web watcher would record (ActivityWatch's ``web.tab.current``), for the same moments.

Title changes inside one event: an unread count, a mail opened, a chat renamed as it goes, docs
pages of one project, GitHub pages of one repository. An xterm going from running ``app.py`` to
editing it in vim is two events (issue 47 item 2: a terminal's program is what a person is on;
issue 34 counted it as one; the editor and terminal switches are in ``document_titles.py``). The one
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
    ("xterm", "vim app.py", None, 5),
    ("firefox", f"Mail - Li Wei - Outlook{_F}", "https://outlook.live.com/mail/0/", 6),
    ("firefox", f"Inbox - Li Wei - Outlook{_F}", "https://outlook.live.com/mail/0/inbox", 6),
    ("firefox", f"Claude{_F}", "https://claude.ai/new", 7),
    ("firefox", f"Debugging Flask session KeyError - Claude{_F}", "https://claude.ai/chat/1d9e", 7),
    ("firefox", f"Kimi - 会推理解析，能深度思考的AI助手{_F}", "https://www.kimi.com/", 8),
    ("firefox", f"DeepSeek - Into the Unknown{_F}", "https://chat.deepseek.com/", 9),
    ("firefox", f"Pandas monthly sales sum - DeepSeek{_F}", "https://chat.deepseek.com/a/chat/s/77b1", 9),
    (
        "chromium",
        f"GitHub - pallets/flask: The Python micro framework for building web applications.{_C}",
        "https://github.com/pallets/flask",
        10,
    ),
    ("chromium", f"Issues · pallets/flask · GitHub{_C}", "https://github.com/pallets/flask/issues", 10),
    (
        "chromium",
        f"Session KeyError after login · Issue #5432 · pallets/flask · GitHub{_C}",
        "https://github.com/pallets/flask/issues/5432",
        10,
    ),
    (
        "chromium",
        f"Sessions — Flask Documentation (3.1.x){_C}",
        "https://flask.palletsprojects.com/en/stable/api/#sessions",
        11,
    ),
    ("chromium", f"API — Flask Documentation (3.1.x){_C}", "https://flask.palletsprojects.com/en/stable/api/", 11),
    (
        "chromium",
        f"os — Miscellaneous operating system interfaces — Python 3.12.8 documentation{_C}",
        "https://docs.python.org/3/library/os.html",
        12,
    ),
    (
        "chromium",
        f"json — JSON encoder and decoder — Python 3.12.8 documentation{_C}",
        "https://docs.python.org/3/library/json.html",
        12,
    ),
    (
        "chromium",
        f"pandas.DataFrame.groupby — pandas 2.2.3 documentation{_C}",
        "https://pandas.pydata.org/docs/reference/api/pandas.DataFrame.groupby.html",
        13,
    ),
    (
        "chromium",
        f"Group by: split-apply-combine — pandas 2.2.3 documentation{_C}",
        "https://pandas.pydata.org/docs/user_guide/groupby.html",
        13,
    ),
    ("chromium", f"ChatGPT{_C}", "https://chatgpt.com/", 14),
    ("chromium", f"Pandas monthly aggregation{_C}", "https://chatgpt.com/c/6750c3d4", 14),
    ("chromium", f"Project plan Q2 - Google Docs{_C}", "https://docs.google.com/document/d/1x2y/edit", 15),
    (
        "chromium",
        f"python - Flask session KeyError after redirect - Stack Overflow{_C}",
        "https://stackoverflow.com/questions/7841",
        16,
    ),
    ("chromium", f"Inbox (5) - {_G} - Gmail{_C}", "https://mail.google.com/mail/u/0/#inbox", 17),
    ("chromium", f"Trip to Lisbon{_C}", "https://chatgpt.com/c/6750e5f6", 18),
    ("chromium", f"Inbox (5) - {_G} - Gmail{_C}", "https://mail.google.com/mail/u/0/#inbox", 19),
)
"""The moments, in order (one per window or title change)."""


def truth_starts() -> list[int]:
    """Indexes of the moments at which a true event starts."""
    return [i for i, m in enumerate(MOMENTS) if i == 0 or m[3] != MOMENTS[i - 1][3]]
