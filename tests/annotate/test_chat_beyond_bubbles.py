"""LLM use beyond a chat page's right-aligned bubbles (issue 47 item 4), on OCR-like lines (boxes
in pixels of a 1280x800 screenshot, as RapidOCR gives them): the greeting of a fresh chat glued
to the question, a chat revisited after its question scrolled away or opened already scrolled,
assistant side panels (Edge's Copilot, Copilot Chat in VS Code), answer engines' pages, and
look-alikes (pricing columns, a help centre, a blog post headed by a question)."""

from __future__ import annotations

from proagent.annotate.conversation import OcrLine, event_chat, read_chat, read_screen

W, H = 1280, 800


def _chrome(url: str) -> list[OcrLine]:
    return [
        OcrLine("ChatGPT ×", 16, 11, 142, 34),
        OcrLine(f"← → C ① {url}", 13, 49, 300, 72),
        OcrLine("New chat", 12, 156, 98, 186),
        OcrLine("Library", 13, 194, 78, 219),
    ]


def test_the_greeting_above_the_first_question_is_not_part_of_it():
    # a fresh chat: the centred greeting stays above the first bubble (both indented: one "turn")
    lines = _chrome("chatgpt.com") + [
        OcrLine("What can I help with?", 560, 140, 860, 170),
        OcrLine("How do I reverse a list in Python?", 780, 180, 1180, 204),
        OcrLine("Use slicing: items[::-1] returns a reversed copy,", 300, 240, 1180, 264),
        OcrLine("or items.reverse() reverses in place.", 300, 268, 700, 292),
        OcrLine("Message ChatGPT", 420, 700, 600, 724),
    ]
    chat = read_chat(lines, W, H)
    assert chat is not None
    assert chat.last_query == "How do I reverse a list in Python?"
    assert "What can I help with?" in chat.frame


def test_a_greeting_glued_to_the_question_on_one_line_is_stripped():
    for greeting in ("What can I help with?", "How can I help you today?", "有什么可以帮忙的？"):
        lines = _chrome("chatgpt.com") + [
            OcrLine(f"{greeting} How do I reverse a list in Python?", 640, 180, 1180, 204),
            OcrLine("Use slicing: items[::-1] returns a reversed copy.", 300, 240, 1180, 264),
        ]
        chat = read_chat(lines, W, H)
        assert chat is not None
        assert chat.last_query == "How do I reverse a list in Python?", greeting


def test_a_greeting_alone_is_no_question():
    lines = _chrome("chatgpt.com") + [OcrLine("What can I help with?", 560, 300, 860, 330)]
    chat = read_screen(lines, W, H)
    assert chat is not None and not chat.user_turns


def test_a_chat_revisited_after_its_question_scrolled_away_has_no_invented_query():
    # only the reply is in view: a table in it puts cells right of the column's left edge, but no
    # line reaches the right edge as the user's bubble does: no question is read from the cells
    lines = _chrome("chatgpt.com/c/68a1") + [
        OcrLine("Here is the comparison you asked for, by release year and licence,", 300, 120, 1180, 144),
        OcrLine("Name", 300, 170, 360, 192),
        OcrLine("Licence", 700, 170, 790, 192),
        OcrLine("PostgreSQL", 300, 200, 420, 222),
        OcrLine("PostgreSQL License", 700, 200, 900, 222),
        OcrLine("MySQL", 300, 230, 370, 252),
        OcrLine("GPLv2", 700, 230, 770, 252),
        OcrLine("Both are mature; pick PostgreSQL for complex queries.", 300, 280, 1000, 304),
    ]
    assert read_chat(lines, W, H) is None
    # and across the event: the first screenshot showed the question, the revisit does not
    asked = _chrome("chatgpt.com/c/68a1") + [
        OcrLine("Compare PostgreSQL and MySQL licences", 760, 120, 1180, 144),
        OcrLine("Here is the comparison you asked for, by release year and licence,", 300, 180, 1180, 204),
    ]
    got = event_chat([read_screen(asked, W, H), read_screen(lines, W, H)])
    assert got is not None and got.queries == ("Compare PostgreSQL and MySQL licences",)


def _copilot_panel() -> list[OcrLine]:
    """Edge with the Copilot side panel open beside a report page (the title names the page)."""
    return [
        OcrLine("Quarterly report - SharePoint ×", 16, 11, 300, 34),
        OcrLine("← → C ① contoso.sharepoint.com/sites/finance/report", 13, 49, 520, 72),
        OcrLine("Quarterly report", 40, 110, 300, 140),
        OcrLine("Revenue grew 12% in the third quarter, driven by", 40, 160, 800, 184),
        OcrLine("subscriptions in Europe and a new partner channel.", 40, 188, 790, 212),
        OcrLine("Costs", 240, 240, 320, 262),  # a centred sub-heading of the page
        OcrLine("Operating costs rose 4% with two new hires.", 40, 280, 700, 304),
        OcrLine("Copilot", 900, 100, 990, 124),
        OcrLine("Summarize this page in two sentences", 1000, 170, 1260, 194),
        OcrLine("Revenue grew 12% in Q3 on European", 900, 230, 1255, 254),
        OcrLine("subscriptions; costs rose 4%.", 900, 258, 1180, 282),
        OcrLine("Message Copilot", 910, 740, 1100, 764),
    ]


def test_an_assistant_side_panel_beside_another_page_is_read_as_the_chat():
    chat = read_chat(_copilot_panel(), W, H)
    assert chat is not None
    assert chat.last_query == "Summarize this page in two sentences"
    assert chat.reply == "Revenue grew 12% in Q3 on European subscriptions; costs rose 4%."
    assert any("Revenue grew 12% in the third quarter" in t for t in chat.frame)  # the page is around it


def test_a_copilot_panel_in_an_editor_makes_the_event_a_candidate():
    from proagent.annotate.platforms import detect_platform

    text = "\n".join(ln.text for ln in _copilot_panel())
    hit = detect_platform("msedge", "Quarterly report - SharePoint", [text])
    assert hit is not None and hit.platform == "Copilot"
    # VS Code's chat view: the app is no browser, but the panel's own phrase names the assistant
    editor = "main.py - project - Visual Studio Code\nCHAT\nGitHub Copilot Chat\nAsk Copilot\nExplain this function"
    hit = detect_platform("code", "main.py - project - Visual Studio Code", [editor])
    assert hit is not None and hit.platform == "Copilot"
    assert detect_platform("code", "main.py - project", ["def main():\n    print('chatgpt')"]) is None


def _answer_engine() -> list[OcrLine]:
    """A Perplexity-like page: the question set as the page's heading, source cards, the answer."""
    return [
        OcrLine("pytest fixtures scope - Perplexity ×", 16, 11, 320, 34),
        OcrLine("← → C ① perplexity.ai/search/pytest-fixtures-k2", 13, 49, 460, 72),
        OcrLine("Home", 20, 150, 80, 172),
        OcrLine("Discover", 20, 190, 110, 212),
        OcrLine("Library", 20, 230, 100, 252),
        OcrLine("How do I share a pytest fixture between tests?", 300, 120, 1000, 156),
        OcrLine("Sources", 300, 180, 380, 202),
        OcrLine("docs.pytest.org", 300, 215, 440, 235),
        OcrLine("tests", 560, 215, 610, 235),  # a source card's title word (was stored as the query)
        OcrLine("stackoverflow.com", 760, 215, 920, 235),
        OcrLine("Answer", 300, 270, 380, 292),
        OcrLine("Put the fixture in conftest.py; every test in that folder", 300, 310, 1000, 334),
        OcrLine("can use it by naming it as an argument.", 300, 338, 760, 362),
        OcrLine("Related", 300, 420, 390, 442),
        OcrLine("What does scope='session' do?", 300, 460, 700, 484),
        OcrLine("Ask follow-up", 320, 720, 480, 744),
    ]


def test_a_question_set_as_the_pages_heading_is_the_users():
    chat = read_chat(_answer_engine(), W, H)
    assert chat is not None and chat.kind == "heading"
    assert chat.last_query == "How do I share a pytest fixture between tests?"
    assert (
        chat.reply
        == "Put the fixture in conftest.py; every test in that folder can use it by naming it as an argument."
    )


def test_an_articles_headline_is_no_question():
    lines = [
        OcrLine("← → C ① news.example.com/ai", 13, 49, 300, 72),
        OcrLine("ChatGPT turns three: what changed", 300, 120, 1000, 156),
        OcrLine("By A. Writer · 5 min read", 300, 180, 560, 202),
        OcrLine("Three years after its launch, the chatbot has", 300, 230, 1000, 254),
        OcrLine("reshaped how people search and write.", 300, 258, 800, 282),
    ]
    assert read_chat(lines, W, H) is None


# Below: OCR lines RapidOCR read from pages rendered by Chromium (tests/chat_layouts.py's BEYOND set,
# benchmarks/chat_layouts.py --layouts ...), boxes as read.


def _rows(rows: list[tuple[int, int, int, int, str]]) -> list[OcrLine]:
    return [OcrLine(t, x0, y0, x1, y1) for x0, y0, x1, y1, t in rows]


_CLAUDE_SIDE = [
    (15, 11, 93, 35, "Claude ×"),
    (12, 47, 201, 72, "← → C ① claude.ai/new"),
    (13, 103, 95, 135, "Claude"),
    (13, 157, 98, 184, "New chat"),
    (11, 190, 69, 221, "Chats"),
    (12, 226, 89, 257, "Projects"),
]


def test_a_question_typed_under_a_fresh_chats_greeting_is_found_after_it_is_sent():
    # Claude's new chat: "✻ Good afternoon, Alice" (OCR reads '*') above a centred input box with the
    # question typed; then the chat, whose avatar OCR does not read and whose bubble is barely indented
    typed = _rows(
        _CLAUDE_SIDE
        + [
            (515, 288, 1013, 337, "* Good afternoon, Alice"),
            (416, 373, 754, 404, "Write a short toast for my sister's wedding"),
            (416, 437, 549, 457, "+ Claude Sonnet 4"),
        ]
    )
    sent = _rows(
        _CLAUDE_SIDE
        + [
            (345, 136, 683, 162, "Write a short toast for my sister's wedding"),
            (284, 202, 1162, 231, "To Emma and Sam: may your home be full of laughter, your arguments short."),
            (284, 229, 363, 258, "Cheers!"),
            (346, 701, 493, 728, "Reply to Claude..."),
            (326, 756, 692, 778, "Claude can make mistakes. Please double-check responses."),
        ]
    )
    first = read_screen(typed, W, H)
    assert first is not None and not first.user_turns  # neither the greeting nor the box is a turn
    assert first.typed == "Write a short toast for my sister's wedding"
    got = event_chat([first, read_screen(sent, W, H)])
    assert got is not None and got.queries == ("Write a short toast for my sister's wedding",)
    assert got.replies and got.replies[0].startswith("To Emma and Sam")


# chatgpt.com/pricing: the Plus and Pro columns are indented and reach the right edge, but each of
# their lines has the Free column's text beside it on its row
_PRICING = [
    (15, 10, 151, 37, "ChatGPT Pricing ×"),
    (12, 48, 242, 73, "← → C ① chatgpt.com/pricing"),
    (499, 118, 780, 155, "Upgrade your plan"),
    (561, 171, 719, 191, "Personal | Business"),
    (165, 274, 221, 304, "Free"),
    (509, 271, 567, 305, "Plus"),
    (855, 274, 902, 304, "Pro"),
    (166, 310, 266, 338, "$0/ month"),
    (511, 310, 621, 337, "$20 /month"),
    (856, 310, 976, 337, "$200 /month"),
    (167, 343, 403, 366, "Explore how Al can help you with"),
    (512, 343, 763, 366, "Level up productivity and creativity"),
    (858, 342, 1081, 365, "Get the best of OpenAl with the"),
    (263, 411, 337, 435, "Get Free"),
    (608, 411, 682, 435, "Get Plus"),
    (956, 411, 1023, 435, "Get Pro"),
    (166, 480, 326, 503, "√ Limited file uploads"),
    (511, 479, 742, 504, "√ Extended limits on messaging"),
    (857, 480, 1109, 503, "√ Unlimited messages and uploads"),
]


def test_pricing_columns_are_no_bubbles():
    assert read_chat(_rows(_PRICING), W, H) is None


def test_a_support_pages_how_can_we_help_is_no_question():
    # a help centre: the hero's "How can we help?" (centred: indented) and its chat widget's greeting
    for line in (
        OcrLine("How can we help?", 494, 177, 784, 217),
        OcrLine("Hi there How can we help?", 992, 667, 1188, 690),
    ):
        lines = _chrome("help.openai.com/en") + [
            OcrLine("ChatGPT", 300, 376, 380, 404),
            OcrLine("Using ChatGPT, plans and features", 300, 407, 640, 430),
            line,
        ]
        assert read_chat(lines, W, H) is None, line.text


_EDGE_TYPED = [
    (16, 12, 198, 35, "Quarterly report - Word ×"),
    (12, 48, 563, 72, "← → C ① contoso.sharepoint.com/:w:/r/sites/finance/Quarterly%20report.docx"),
    (15, 93, 394, 117, "File Home Insert Layout References Review View"),
    (907, 138, 983, 172, "Copilot"),
    (107, 203, 264, 230, "Quarterly report"),
    (909, 198, 1244, 227, "Hi Alice, how can I help with this"),
    (909, 232, 1033, 262, "document?"),
    (107, 252, 627, 275, "Revenue grew 12% in the third quarter, driven by subscriptions in"),
    (107, 294, 566, 317, "Europe and a new partner channel that opened in August."),
    (103, 337, 167, 369, "Costs"),
    (106, 387, 676, 414, "Operating costs rose 4% with two new hires in support and one in sales."),
    (104, 433, 192, 464, "Outlook"),
    (107, 484, 540, 507, "We expect the fourth quarter to follow the same trend."),
    (923, 717, 1190, 740, "Summarize this document in two"),
    (921, 742, 1010, 766, "sentences"),
]
_EDGE_SENT = [
    (17, 14, 197, 34, "Quarterly report - Word ×"),
    (12, 48, 563, 73, "← → C ① contoso.sharepoint.com/:w:/r/sites/finance/Quarterly%20report.docx"),
    (16, 94, 394, 117, "File Home Insert Layout References Review View"),
    (907, 138, 982, 170, "Copilot"),
    (107, 203, 265, 230, "Quarterly report"),
    (963, 204, 1233, 230, "Summarize this document in two"),
    (961, 231, 1052, 255, "sentences"),
    (107, 252, 627, 275, "Revenue grew 12% in the third quarter, driven by subscriptions in"),
    (910, 284, 1244, 307, "Revenue grew 12% in the third quarter on"),
    (107, 294, 566, 317, "Europe and a new partner channel that opened in August."),
    (909, 309, 1260, 334, "European subscriptions. Costs rose 4% with"),
    (103, 337, 167, 369, "Costs"),
    (909, 337, 1030, 360, "two new hires."),
    (105, 387, 676, 414, "Operating costs rose 4% with two new hires in support and one in sales."),
    (104, 433, 192, 464, "Outlook"),
    (107, 484, 540, 507, "We expect the fourth quarter to follow the same trend."),
    (921, 741, 1060, 768, "Message Copilot"),
]


def _plan(tmp_path, monkeypatch, events):  # noqa: ANN001, ANN202 - test helper
    """``plan_annotation``'s events of a raw LifeTrace log of ``events`` (``(app, title, (rows, rows))``:
    two screenshots each, their OCR rows as read from the rendered pages, served from a stub of the
    OCR reader's image read)."""
    import sqlite3

    from proagent.annotate import plan_annotation
    from proagent.annotate.screens import OcrReader

    user = tmp_path / "raw" / "P01"
    (user / "screenshots").mkdir(parents=True)
    shots: dict[str, list] = {}
    with sqlite3.connect(user / "lifetrace.db") as db:
        db.executescript(
            "CREATE TABLE events (id INTEGER PRIMARY KEY, app_name VARCHAR(200), window_title VARCHAR(500),"
            " start_time DATETIME, end_time DATETIME, created_at DATETIME);"
            "CREATE TABLE screenshots (id INTEGER PRIMARY KEY, file_path VARCHAR(500), file_hash VARCHAR(64),"
            " file_size INTEGER, width INTEGER, height INTEGER, screen_id INTEGER, app_name VARCHAR(200),"
            " window_title VARCHAR(500), created_at DATETIME, processed_at DATETIME, is_processed BOOLEAN,"
            " event_id INTEGER);"
            "CREATE TABLE ocr_results (id INTEGER PRIMARY KEY, screenshot_id INTEGER, text_content TEXT,"
            " confidence FLOAT, language VARCHAR(10), processing_time FLOAT, created_at DATETIME);"
        )
        for eid, (app, title, rows) in enumerate(events, 1):
            t0, t1 = f"2026-12-01 09:{eid:02d}:00.000000", f"2026-12-01 09:{eid:02d}:40.000000"
            db.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)", (eid, app, title, t0, t1, t0))
            for k, sec in enumerate(("05", "25")):
                sid = 2 * eid + k
                name = f"screen_0_20261201_09{eid:02d}{sec}_000.png"
                shots[name] = rows[k]
                (user / "screenshots" / name).write_bytes(b"png")
                db.execute(
                    "INSERT INTO screenshots VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        sid,
                        f"/home/alice/.lifetrace/screenshots/{name}",
                        f"h{sid}",
                        3,
                        W,
                        H,
                        0,
                        app,
                        title,
                        f"2026-12-01 09:{eid:02d}:{sec}.000000",
                        None,
                        0,
                        eid,
                    ),
                )

    def read(self, path):  # noqa: ANN001, ANN202 - OcrReader._read's shape
        return {"w": W, "h": H, "lines": [[t, *box] for *box, t in shots[path.name]]}

    monkeypatch.setattr(OcrReader, "_read", read)
    return plan_annotation(tmp_path / "raw", ocr="image").events


def test_the_first_pass_reads_a_side_panels_input_box_below_a_long_page(tmp_path, monkeypatch):
    """Edge with Copilot's side panel beside a Word document (the title names the document): the only
    word naming the assistant as a chat is the panel's "Message Copilot" at the bottom of the screen,
    past the first 500 characters of the screen's text that the prompt gets."""
    assert len("\n".join(r[4] for r in _EDGE_SENT)) > 500  # the prompt's cut ends before the panel's box
    (p,) = _plan(
        tmp_path,
        monkeypatch,
        [("Microsoft Edge", "Quarterly report - Word - Microsoft Edge", (_EDGE_TYPED, _EDGE_SENT))],
    )
    assert p.hit is not None and p.hit.platform == "Copilot", p.reason
    assert p.ask and p.chat is not None and p.chat[0] == ("Summarize this document in two sentences",)


# VS Code with Copilot Chat beside the editor (tests/chat_layouts.py's side-panel, as RapidOCR read it):
# the question typed in the chat's input box, then sent and answered; the turns are headed by the
# user's avatar initial and name ("A alice") and by "GitHub Copilot", none right-aligned
_VSCODE_TYPED = [
    (37, 8, 342, 28, 'File Edit Selection View Go Run Terminal'),
    (517, 8, 763, 31, 'orders.py - shop - Visual Studio Code'),
    (59, 48, 137, 72, 'EXPLORER'),
    (295, 40, 388, 64, 'orders.py ×'),
    (896, 46, 935, 65, 'CHAT'),
    (59, 73, 107, 98, 'SHOP'),
    (296, 73, 487, 96, 'def total_price(cart):'),
    (58, 100, 115, 127, 'cart.py'),
    (330, 94, 479, 117, 'for item in cart:'),
    (58, 125, 130, 153, 'orders.py'),
    (363, 118, 721, 140, 'total = sum(i.price * i.qty for i in cart)'),
    (364, 140, 472, 163, 'return total'),
    (59, 154, 100, 176, 'tests'),
    (59, 177, 147, 203, 'README.md'),
    (297, 187, 571, 207, 'def apply_discount(total, code):'),
    (331, 210, 520, 227, "if code == 'WINTER10':"),
    (364, 229, 522, 252, 'return total * 0.9'),
    (330, 252, 438, 275, 'return total'),
    (905, 730, 1252, 753, 'Why does total_price return None for an empty cart?'),
    (8, 779, 284, 799, 'main Ln 2, Col 5 Spaces: 4 UTF-8 Python 3.12'),
]
_VSCODE_SENT = [
    (37, 8, 342, 28, 'File Edit Selection View Go Run Terminal'),
    (517, 8, 763, 31, 'orders.py - shop - Visual Studio Code'),
    (59, 48, 137, 72, 'EXPLORER'),
    (295, 40, 389, 64, 'orders.py ×'),
    (895, 44, 936, 66, 'CHAT'),
    (58, 73, 107, 98, 'SHOP'),
    (296, 73, 487, 96, 'def total_price(cart):'),
    (896, 77, 958, 105, 'A alice'),
    (58, 100, 115, 128, 'cart.py'),
    (58, 126, 130, 153, 'orders.py'),
    (330, 95, 479, 118, 'for item in cart:'),
    (363, 117, 721, 141, 'total = sum(i.price * i.qty for i in cart)'),
    (896, 108, 1241, 131, 'Why does total_price return None for an empty cart?'),
    (59, 154, 100, 176, 'tests'),
    (364, 140, 472, 163, 'return total'),
    (896, 148, 1016, 171, 'GitHub Copilot'),
    (58, 177, 148, 203, 'README.md'),
    (895, 174, 1245, 197, 'The loop never runs for an empty list, so the function'),
    (297, 187, 571, 207, 'def apply_discount(total, code):'),
    (897, 198, 1240, 215, 'reaches its end without a return. Return 0 before the'),
    (331, 210, 520, 227, "if code == 'WINTER10':"),
    (894, 217, 937, 243, 'loop.'),
    (364, 229, 522, 252, 'return total * 0.9'),
    (331, 253, 438, 273, 'return total'),
    (905, 730, 1143, 753, 'Ask Copilot or type / for commands'),
    (8, 779, 284, 799, 'main Ln 2, Col 5 Spaces: 4 UTF-8 Python 3.12'),
]


def test_copilot_chat_in_an_editor_is_read_by_the_lines_naming_who_speaks(tmp_path, monkeypatch):
    chat = read_chat(_rows(_VSCODE_SENT), W, H)
    assert chat is not None and chat.kind == "labels"
    assert chat.last_query == "Why does total_price return None for an empty cart?"
    assert chat.reply == (
        "The loop never runs for an empty list, so the function reaches its end without a return. "
        "Return 0 before the loop."
    )
    assert "A alice" in chat.frame and "GitHub Copilot" in chat.frame  # the headers are no part of the turns
    # the window title names only the file: the chat view's "Ask Copilot" names the assistant
    (p,) = _plan(
        tmp_path, monkeypatch, [("code", "orders.py - shop - Visual Studio Code", (_VSCODE_TYPED, _VSCODE_SENT))]
    )
    assert p.hit is not None and p.hit.platform == "Copilot", p.reason
    assert p.ask and p.chat is not None and p.chat[0] == ("Why does total_price return None for an empty cart?",)


# A blog post headed by a question that names ChatGPT (a look-alike): its text column is centred under
# the site's navigation bar at the left, and ends with a "Sources" list
_BLOG = (
    [
        (15, 11, 230, 35, 'Can ChatGPT write your unit ×'),
        (14, 51, 371, 71, '← → C i thetestblog.com/2026/chatgpt-unit-tests'),
        (57, 100, 341, 123, 'The Test Blog Home Archive About'),
        (237, 187, 819, 227, 'Can ChatGPT write your unit tests?'),
        (238, 246, 504, 266, 'By Dana Smith · 4 Dec 2026 · 4 min read'),
        (
            234,
            290,
            962,
            317,
            'I gave ChatGPT a small Python module and asked it for a test suite. It wrote twelve tests in a',
        ),
        (234, 318, 307, 346, 'minute;'),
        (237, 367, 929, 390, 'nine passed, two tested behaviour the module does not have, and one hid a real bug by'),
        (237, 395, 450, 418, 'asserting the wrong value.'),
        (237, 440, 737, 463, 'So yes, it writes tests, but you still have to read every assertion.'),
        (233, 490, 319, 520, 'Sources'),
        (275, 542, 589, 565, 'pytest documentation, docs.pytest.org'),
        (262, 571, 526, 591, '•OpenAl, ChatGPT release notes'),
        (256, 597, 469, 620, '• M. Fowler, Test Pyramid'),
    ],
    [
        (15, 11, 230, 35, 'Can ChatGPT write your unit ×'),
        (14, 51, 370, 71, '← → C i thetestblog.com/2026/chatgpt-unit-tests'),
        (57, 100, 341, 123, 'The Test Blog Home Archive About'),
        (237, 136, 818, 166, 'Can CnatGPI write your unit tests?'),
        (237, 186, 504, 206, 'By Dana Smith · 4 Dec 2026 · 4 min read'),
        (
            234,
            230,
            962,
            257,
            'I gave ChatGPT a small Python module and asked it for a test suite. It wrote twelve tests in a',
        ),
        (234, 259, 307, 287, 'minute;'),
        (235, 304, 930, 331, 'nine passed, two tested behaviour the module does not have, and one hid a real bug by'),
        (237, 335, 450, 358, 'asserting the wrong value.'),
        (237, 380, 737, 403, 'So yes, it writes tests, but you still have to read every assertion.'),
        (234, 431, 318, 459, 'Sources'),
        (274, 482, 589, 505, 'pytest documentation, docs.pytest.org'),
        (272, 510, 525, 530, 'OpenAl, ChatGPT release notes'),
        (257, 539, 468, 559, '• M. Fowler, Test Pyramid'),
    ],
)


def test_a_blog_post_headed_by_a_question_is_no_chat(tmp_path, monkeypatch):
    for rows in _BLOG:  # no user bubble (only a navigation bar stands at the left), no answer engine's page
        assert read_chat(_rows(rows), W, H) is None
    title = "Can ChatGPT write your unit tests? - The Test Blog - Google Chrome"
    (p,) = _plan(tmp_path, monkeypatch, [("Google Chrome", title, _BLOG)])
    assert p.hit is not None and p.hit.platform == "ChatGPT"  # the title names it: a candidate
    assert not p.ask and p.chat is None and "no screenshot shows a chat turn" in p.reason


_PERPLEXITY = [
    (13, 10, 113, 37, 'Perplexity ×'),
    (12, 48, 438, 73, '←→ C ①perplexity.ai/search/how-do-i-share-a-pytest-k2Qx'),
    (13, 104, 126, 138, 'perplexity'),
    (285, 129, 978, 166, 'How do I share a pytest fixture between test files?'),
    (11, 157, 72, 186, 'Home'),
    (12, 191, 93, 222, 'Discover'),
    (284, 187, 350, 215, 'Answer'),
    (360, 189, 426, 214, 'Images'),
    (436, 189, 527, 213, 'Sources·3'),
    (10, 226, 80, 258, 'Spaces'),
    (295, 237, 394, 263, 'docs.pytest.org'),
    (556, 240, 669, 260, 'stackoverflow.com'),
    (813, 239, 912, 262, 'realpython.com'),
    (11, 261, 80, 293, 'Library'),
    (297, 257, 431, 280, 'How to use fixtures'),
    (556, 259, 744, 279, 'Sharing fixtures across tests'),
    (814, 258, 1002, 281, 'Effective testing with pytest'),
    (
        285,
        314,
        1148,
        342,
        'Put the fixture in a conftest.py file; every test in that folder and below can use it by naming it as an argument.',
    ),
    (284, 371, 367, 402, 'Related'),
    (287, 424, 606, 447, "What does scope='session' do in pytest?"),
    (286, 470, 537, 493, 'How do I parametrize a fixture?'),
    (435, 728, 566, 758, 'Ask a follow-up'),
]


def test_an_answer_engines_reply_starts_after_its_tabs_and_source_cards():
    chat = read_chat(_rows(_PERPLEXITY), W, H)
    assert chat is not None and chat.kind == "heading"
    assert chat.last_query == "How do I share a pytest fixture between test files?"
    assert chat.reply == (
        "Put the fixture in a conftest.py file; every test in that folder and below can use it by naming it as an "
        "argument."
    )


# ChatGPT conversations opened already scrolled down a long answer: the question never on the screen
_BACKUP = (
    [
        (16, 13, 237, 36, 'Nightly home folder backup s×'),
        (13, 49, 273, 72, '← → C ① chatgpt.com/c/71f0-a9b3'),
        (13, 104, 112, 135, 'ChatGPT'),
        (285, 97, 787, 124, '1. tar writes one compressed archive per night, named by date.'),
        (286, 143, 683, 168, '2. find deletes the archives older than seven days.'),
        (12, 158, 99, 185, 'New chat'),
        (14, 193, 124, 220, 'Search chats'),
        (285, 187, 625, 212, '3. cron runs the script at 02:30 every night.'),
        (287, 232, 897, 255, 'Save this as backup.sh, make it executable and add it to cron with crontab -e.'),
        (286, 275, 755, 298, 'Add the line 30 2 * * * /home/alice/bin/backup.sh and save.'),
        (343, 698, 459, 730, 'Ask anything'),
        (328, 757, 640, 777, 'ChatGPT can make mistakes. Check important info.'),
    ],
    [
        (17, 14, 236, 34, 'Nightly home folder backup s ×'),
        (13, 49, 273, 72, '← → C ① chatgpt.com/c/71f0-a9b3'),
        (288, 79, 898, 95, 'save uis as vacnup.sn, mane it xccutavie anu auu i tu Crun wiu Crumaν -e.'),
        (13, 104, 112, 135, 'ChatGPT'),
        (287, 116, 756, 139, 'Add the line 30 2 * * * /home/alice/bin/backup.sh and save.'),
        (13, 158, 99, 185, 'New chat'),
        (14, 194, 123, 218, 'Search chats'),
        (343, 698, 459, 730, 'Ask anything'),
        (327, 757, 640, 777, 'ChatGPT can make mistakes. Check important info.'),
    ],
)
_GENERATOR = (
    [
        (15, 11, 104, 35, 'ChatGPT ×'),
        (13, 49, 277, 72, '← → C ① chatgpt.com/c/8b42-0e7d'),
        (287, 93, 912, 119, 'Once a generator is used up it stays empty; call the function again to start over.'),
        (13, 104, 113, 135, 'ChatGPT'),
        (287, 138, 752, 161, 'Use a generator when the values are needed one at a time.'),
        (11, 156, 99, 186, 'New chat'),
        (14, 194, 123, 218, 'Search chats'),
        (343, 698, 459, 730, 'Ask anything'),
        (327, 757, 640, 777, 'ChatGPT can make mistakes. Check important info.'),
    ],
    [
        (15, 10, 103, 36, 'ChatGPT ×'),
        (13, 49, 277, 72, '← → C ① chatgpt.com/c/8b42-0e7d'),
        (15, 105, 111, 133, 'ChatGPT'),
        (14, 159, 97, 183, 'New chat'),
        (15, 194, 123, 218, 'Search chats'),
        (345, 698, 458, 729, 'Ask anything'),
        (326, 756, 640, 777, 'ChatGPT can make mistakes. Check important info.'),
    ],
)


def test_a_chat_opened_already_scrolled_is_llm_use_its_query_the_chats_title_or_unknown(tmp_path, monkeypatch):
    from proagent.annotate.task import _screen_fields

    for rows in (*_BACKUP, *_GENERATOR):
        assert read_chat(_rows(rows), W, H) is None  # no user turn on any screenshot
    backup, generator, pricing = _plan(
        tmp_path,
        monkeypatch,
        [
            ("Google Chrome", "Nightly home folder backup script - Google Chrome", _BACKUP),
            ("Google Chrome", "ChatGPT - Google Chrome", _GENERATOR),
            ("Google Chrome", "ChatGPT Pricing - Google Chrome", (_PRICING, _PRICING)),
        ],
    )
    # ChatGPT titles the tab by the chat's subject: it stands for the question, and says so
    assert backup.ask and backup.chat is not None and backup.query_source == "title"
    assert backup.chat[0] == ("Nightly home folder backup script",)
    assert backup.chat[1][0].endswith("Add the line 30 2 * * * /home/alice/bin/backup.sh and save.")  # the last screen
    # a title naming no subject: the query is unknown (none invented from the reply)
    assert generator.ask and generator.chat is not None and generator.query_source == "none"
    assert generator.chat == (
        (),
        (
            "Once a generator is used up it stays empty; call the function again to start over. "
            "Use a generator when the values are needed one at a time.",
        ),
    )
    fields = _screen_fields(generator)
    assert fields["is_llm_event"] and fields["user_queries"] == [] and fields["query_source"] == "none"
    assert fields["event_summary"].startswith("read ChatGPT's answer: Once a generator")
    # the product's own page without a chat's input box (its pricing columns) shows no chat
    assert not pricing.ask and pricing.chat is None


# Gemini's start page (a look-alike): its greeting, four suggestion cards side by side and the input box
_START = (
    [
        (15, 12, 143, 35, 'Google Gemini ×'),
        (12, 48, 262, 74, '← → C ① gemini.google.com/app'),
        (13, 103, 96, 135, 'Gemini'),
        (11, 156, 98, 186, 'New chat'),
        (12, 192, 69, 221, 'Gems'),
        (12, 227, 79, 255, 'Recent'),
        (325, 256, 541, 306, 'Hello, Alice'),
        (340, 393, 496, 417, 'Create a weekly meal'),
        (552, 394, 723, 417, 'Explain how compound'),
        (761, 392, 902, 418, 'Write a short poem'),
        (972, 394, 1086, 417, 'Help me plan a'),
        (338, 412, 511, 441, 'plan for a family of four'),
        (551, 415, 714, 438, 'interest works with an'),
        (762, 415, 928, 438, 'about the first snow of'),
        (972, 415, 1117, 439, 'weekend trip to the'),
        (549, 436, 620, 464, 'example'),
        (760, 437, 816, 462, 'winter'),
        (972, 437, 1057, 461, 'mountains'),
        (347, 696, 445, 723, 'Ask Gemini'),
        (328, 757, 612, 777, 'Gemini can make mistakes, so double-check it'),
    ],
    [
        (15, 12, 143, 35, 'Google Gemini ×'),
        (12, 48, 262, 74, '← → C ① gemini.google.com/app'),
        (13, 103, 96, 135, 'Gemini'),
        (11, 156, 98, 186, 'New chat'),
        (12, 192, 69, 221, 'Gems'),
        (12, 227, 79, 255, 'Recent'),
        (325, 256, 541, 306, 'Hello, Alice'),
        (340, 394, 511, 417, 'Explain how compound'),
        (550, 392, 691, 418, 'Write a short poem'),
        (760, 394, 874, 417, 'Help me plan a'),
        (973, 393, 1128, 417, 'Create a weekly meal'),
        (339, 415, 503, 438, 'interest works with an'),
        (551, 415, 717, 438, 'about the first snow of'),
        (761, 415, 905, 439, 'weekend trip to the'),
        (972, 413, 1144, 442, 'plan for a family of four'),
        (339, 437, 408, 462, 'example'),
        (549, 437, 605, 462, 'winter'),
        (762, 439, 845, 460, 'mountains'),
        (347, 696, 445, 723, 'Ask Gemini'),
        (328, 757, 612, 777, 'Gemini can make mistakes, so double-check it'),
    ],
)


def test_a_start_pages_suggestion_cards_are_no_bubble_nor_a_reply(tmp_path, monkeypatch):
    # the cards' last row ("example", "winter", "mountains") is indented where the first card's text
    # ended a row above, and reaches the right edge: side by side, it is no bubble
    for rows in _START:
        assert read_chat(_rows(rows), W, H) is None
    # the AI's own page with its input box, but no reply in one column: no chat opened already scrolled
    (p,) = _plan(tmp_path, monkeypatch, [("Google Chrome", "Google Gemini - Google Chrome", _START)])
    assert p.hit is not None and p.hit.evidence == "domain"
    assert not p.ask and p.chat is None and "no screenshot shows a chat turn" in p.reason
