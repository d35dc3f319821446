"""Planted-PII corpora for measuring what curation lets through (test and benchmark code; moved
out of ``src/proagent/curate`` by issue 38):

* :func:`make_pii_corpus`: small rendered screenshots (Pillow, Noto Sans CJK) carrying one kind of
  personal data each, in English and in Chinese, plus clean screens, inside a LifeTrace database
  whose ``ocr_results`` hold the planted text as a real capture's OCR would.
* :data:`ALONE` and :data:`ORDINARY` with :func:`make_screens_corpus` (issue 34): page-sized
  screens on which each type stands alone among ordinary lines, and ordinary pages (code, chats,
  documents, numbers in LLM replies, prices, dates, order numbers) holding none; with no OCR rows,
  so curate reads every image itself (``benchmarks/pii_corpus.py``, ``tests/curate/test_pii_corpus.py``).

Every value is synthetic (reserved example domains, documentation IP ranges, test
card numbers with valid Luhn digits from ``stdnum.luhn``, resident IDs with the check character
of ``stdnum.cn.ric``, an SSN in a valid but unissued-looking range).
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from stdnum import luhn
from stdnum.cn import ric

from proagent.sources.lifetrace_write import PROCESSED_DDL

__all__ = ["ALONE", "CLEAN", "ORDINARY", "PLANTED", "Corpus", "Screen", "make_pii_corpus", "make_screens_corpus"]


def _cn_id(first17: str) -> str:
    return first17 + ric.calc_check_digit(first17 + "0")  # stdnum reads the digits before the last


def _luhn(prefix: str) -> str:
    return prefix + luhn.calc_check_digit(prefix)


def _spaced(s: str) -> str:
    return " ".join(s[i : i + 4] for i in range(0, len(s), 4))


PLANTED: tuple[tuple[str, str, str, str], ...] = (
    # (type, language, label text, planted value)
    ("email", "en", "Contact:", "li.wei.research@example.com"),
    ("email", "zh", "邮箱：", "zhang.san@example.org"),
    ("phone", "en", "Phone:", "+1 415 555 0132"),
    ("phone", "zh", "手机号：", "139 1234 5678"),
    ("id_number", "en", "Resident ID:", _cn_id("11010519491231002")),
    ("id_number", "zh", "身份证号码：", _cn_id("44030819900101123")),
    ("bank_card", "en", "Card number", _spaced(_luhn("411111111111111"))),
    ("bank_card", "zh", "银行卡号：", _spaced(_luhn("622202020000000012"))),
    ("iban", "en", "IBAN", "GB82 WEST 1234 5698 7654 32"),
    ("iban", "zh", "收款账户 IBAN：", "DE89 3704 0044 0532 0130 00"),
    ("ip_address", "en", "Server address", "203.0.113.42"),
    ("ip_address", "zh", "服务器地址：", "198.51.100.77"),
    ("api_key", "en", "OPENAI_API_KEY=", "sk-proj-Q7fK2mX9pL4vR8tB3nW6yZ1c"),
    ("api_key", "zh", "访问令牌：", "ghp_4fT9kLm2Qx7Vb8Nc3Rz6Wy1Pd5Hs0JaEu"),
    ("password", "en", "Password:", "Tr0ub4dor&3x"),
    ("password", "zh", "密码：", "hunter2secret"),
)
"""What is planted: one screenshot per row."""

CLEAN: tuple[tuple[str, str, str], ...] = (
    ("Visual Studio Code", "main.py - proagent", "def train(model, data):\n    loss = criterion(out, y)"),
    ("Google Chrome", "Stack Overflow", "How to read a SQLite database in Python\n3 answers, 12 votes"),
    ("Microsoft Word", "毕业论文_v3.docx", "第三章 实验设计\n3.1 数据集 本文使用的数据集"),
    ("飞书", "项目周报", "本周进展：完成数据采集模块\n下周计划：模型评测"),
    ("Microsoft Excel", "实验结果.xlsx", "Accuracy F1 Precision Recall\n0.812 0.774 0.790 0.758"),
    ("Windows PowerShell", "Windows PowerShell", "PS> python -m pytest -q\n3 failed, 12 passed in 4.21s"),
    ("Windows Terminal", "git log", "commit 61db316a9f2e4b7c8d0e1f2a3b4c5d6e\nDate: 2025-09-15 09:30:12 +0800"),
    ("Google Chrome", "My orders", "Order No. 20250915093012 shipped\nTotal 1,299.00 CNY (3 items)"),
    ("Visual Studio Code", "settings.json", '"python.version": "3.11.7",\n"port": 8000, "workers": 4'),
    ("腾讯会议", "腾讯会议", "会议号：835 2941 7760\n时间：9月15日 14:00-15:30"),
)
"""Clean screens: (app, title, text); realistic text with numbers but no personal data."""

_PII_APPS = {"en": ("Google Chrome", "Account settings - Google Chrome"), "zh": ("微信", "微信")}


@dataclass
class Corpus:
    """What :func:`make_pii_corpus` wrote."""

    root: Path
    """The participant folder (``<root>/lifetrace.db`` + ``screenshots/``)."""
    db: Path
    """The database."""
    planted: dict[int, tuple[str, str, str]] = field(default_factory=dict)
    """Screenshot id -> (type, language, planted value)."""
    clean_ids: list[int] = field(default_factory=list)
    """Screenshot ids of clean screens."""


STYLES = ("plain", "dark-small")
"""Renderings: ``plain`` (dark text on light grey, Noto Sans CJK 22 px) and ``dark-small``
(light text on a dark theme, 15 px, DejaVu Sans Mono for Latin-only lines)."""


def make_pii_corpus(
    root: str | Path,
    *,
    types: tuple[str, ...] | None = None,
    languages: tuple[str, ...] = ("en", "zh"),
    n_clean: int = len(CLEAN),
    size: tuple[int, int] = (560, 150),
    styles: tuple[str, ...] = ("plain",),
) -> Corpus:
    """Write the corpus to ``root`` (a participant folder; created).

    Args:
        root: folder to create (``lifetrace.db`` and ``screenshots/`` go in it).
        types: planted types to include (default: all of :data:`PLANTED`).
        languages: ``en``, ``zh`` or both.
        n_clean: how many clean screens (at most ``len(CLEAN)``).
        size: image width and height in pixels.
        styles: renderings of every screen, from :data:`STYLES` (one screenshot each).
    """
    from noto_cjk_sans_otc import FONT_PATH
    from PIL import Image, ImageDraw, ImageFont

    root = Path(root)
    shots_dir = root / "screenshots"
    shots_dir.mkdir(parents=True, exist_ok=True)
    corpus = Corpus(root=root, db=root / "lifetrace.db")
    fonts = {
        "plain": (ImageFont.truetype(FONT_PATH, 22), ImageFont.truetype(FONT_PATH, 16), None),
        "dark-small": (
            ImageFont.truetype(FONT_PATH, 15),
            ImageFont.truetype(FONT_PATH, 13),
            ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", 15)
            if Path("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf").is_file()
            else None,
        ),
    }
    bad = [st for st in styles if st not in STYLES]
    if bad:
        raise ValueError(f"unknown style(s) {bad}: use {STYLES}")
    screens: list[tuple[str, str, list[str], tuple[str, str, str] | None, str]] = []
    for style in styles:
        for t, lang, label, value in PLANTED:
            if (types is None or t in types) and lang in languages:
                app, title = _PII_APPS[lang]
                head = "Profile" if lang == "en" else "个人资料"
                line = f"{label} {value}" if lang == "en" else f"{label}{value}"
                screens.append((app, title, [head, line], (t, lang, value), style))
        for app, title, text in CLEAN[:n_clean]:
            screens.append((app, title, text.split("\n"), None, style))
    con = sqlite3.connect(corpus.db)
    con.executescript(PROCESSED_DDL)
    start = datetime(2025, 9, 15, 9, 0, 0)
    for i, (app, title, lines, plant, style) in enumerate(screens, start=1):
        st = start + timedelta(minutes=2 * i)
        en = st + timedelta(seconds=60)
        big, small, mono = fonts[style]
        dark = style == "dark-small"
        img = Image.new("RGB", size, (30, 30, 36) if dark else (250, 250, 250))
        d = ImageDraw.Draw(img)
        d.rectangle((0, 0, size[0], 26), fill=(50, 52, 60) if dark else (225, 228, 235))
        d.text((10, 3), title, fill=(200, 200, 200) if dark else (40, 40, 40), font=small)
        for k, line in enumerate(lines):
            font = mono if (mono is not None and line.isascii()) else big
            d.text((16, 40 + (30 if dark else 44) * k), line, fill=(220, 220, 210) if dark else (10, 10, 10), font=font)
        name = f"screen_0_{st:%Y%m%d_%H%M%S}_000.png"
        img.save(shots_dir / name)
        data = (shots_dir / name).read_bytes()
        ts = st.strftime("%Y-%m-%d %H:%M:%S.%f")
        con.execute(
            "INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (i, app, title, ts, en.strftime("%Y-%m-%d %H:%M:%S.%f"), ts, None, None, 0, "", "", None, None, None),
        )
        con.execute(
            "INSERT INTO screenshots VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                i,
                "C:\\Users\\P01\\LifeTrace\\screenshots\\" + name,
                hashlib.sha256(data).hexdigest(),
                len(data),
                size[0],
                size[1],
                0,
                app,
                title,
                ts,
                ts,
                1,
                i,
            ),
        )
        con.execute(
            "INSERT INTO ocr_results VALUES (?,?,?,?,?,?,?)",
            (i, i, "\n".join([title, *lines]), 0.95, "ch_sim+en", 0.5, ts),
        )
        if plant is None:
            corpus.clean_ids.append(i)
        else:
            corpus.planted[i] = plant
    con.commit()
    con.close()
    return corpus


# --------------------------------------------------------------------------- issue 34: each type alone


@dataclass(frozen=True)
class Screen:
    """One page-sized screen: its window and its lines of text, top to bottom."""

    name: str
    """Short unique name (the benchmark's row label)."""
    app: str
    title: str
    lines: tuple[str, ...]
    planted: tuple[str, ...] = ()
    """The types planted on it (empty: an ordinary page, which must be retained)."""
    values: tuple[str, ...] = ()
    """The planted values, which must not be published."""


def _form(title: str, head: str, *rows: str) -> tuple[str, str, tuple[str, ...]]:
    return ("Google Chrome", f"{title} - Google Chrome", (head, *rows))


_SSN = "536-22-4781"
_CARD = _luhn("453201511283036")
_CN_ID = _cn_id("44030819900101123")

ALONE: tuple[Screen, ...] = (
    Screen(
        "email",
        *_form(
            "Contacts",
            "Contact details",
            "Team: Platform infrastructure",
            "Reply to: maria.gonzalez@example.net",
            "Last updated 2 days ago",
        ),
        ("email",),
        ("maria.gonzalez@example.net",),
    ),
    Screen(
        "email-zh",
        "微信",
        "微信",
        ("个人资料", "部门：数据平台", "邮箱：wang.fang@example.org", "签名：今天也要加油"),
        ("email",),
        ("wang.fang@example.org",),
    ),
    Screen(
        "phone",
        *_form(
            "Contacts",
            "Contact details",
            "Team: Platform infrastructure",
            "Mobile: +1 415-555-0173",
            "Last updated 2 days ago",
        ),
        ("phone",),
        ("415-555-0173",),
    ),
    Screen(
        "phone-zh",
        "微信",
        "微信",
        ("个人资料", "部门：数据平台", "联系电话：138 0013 8000", "签名：今天也要加油"),
        ("phone",),
        ("138 0013 8000",),
    ),
    Screen(
        "bank_card",
        *_form(
            "Checkout",
            "Payment method",
            "Visa ending soon? Update it below",
            f"Card number: {_spaced(_CARD)}",
            "Expires 09/29",
        ),
        ("bank_card",),
        (_spaced(_CARD),),
    ),
    Screen(
        "iban",
        *_form(
            "Transfer",
            "New transfer",
            "Recipient bank: Barclays",
            "IBAN: GB33 BUKB 2020 1555 5555 55",
            "Reference: rent September",
        ),
        ("iban",),
        ("GB33 BUKB 2020 1555 5555 55",),
    ),
    Screen(
        "bank_account",
        *_form(
            "Direct deposit",
            "Direct deposit",
            "Pay goes to your checking account",
            "Account number: 004512345678",
            "Takes effect next pay period",
        ),
        ("bank_account",),
        ("004512345678",),
    ),
    Screen(
        "us_ssn",
        *_form(
            "Tax form",
            "Form W-4 details",
            "Filing status: single",
            f"Social Security Number: {_SSN}",
            "Sign and date below",
        ),
        ("us_ssn",),
        (_SSN,),
    ),
    Screen(
        "id_number-zh",
        "微信",
        "微信",
        ("实名认证", "证件类型：居民身份证", f"身份证号码：{_CN_ID}", "认证时间：9月15日"),
        ("id_number",),
        (_CN_ID,),
    ),
    Screen(
        "passport",
        *_form(
            "Travel profile",
            "Traveller details",
            "Nationality: United States",
            "Passport number: 581234567",
            "Check the expiry date before booking",
        ),
        ("passport",),
        ("581234567",),
    ),
    Screen(
        "passport-zh",
        "微信",
        "微信",
        ("出行人信息", "证件类型：护照", "护照号码：E12345678", "请核对有效期"),
        ("passport",),
        ("E12345678",),
    ),
    Screen(
        "address",
        *_form(
            "Account settings",
            "Shipping",
            "Default delivery options",
            "Current address: 1427 Elmwood Lane, Springfield, IL 62704",
            "Deliveries on weekdays",
        ),
        ("address",),
        ("1427 Elmwood Lane",),
    ),
    Screen(
        "address-zh",
        "淘宝",
        "淘宝",
        ("收货信息", "默认地址", "收货地址：上海市浦东新区世纪大道100号", "工作日送货"),
        ("address",),
        ("世纪大道100号",),
    ),
    Screen(
        "name+address",
        "Thunderbird",
        "Shipping label - Thunderbird",
        (
            "Your order has shipped. It will go to:",
            "Jane Whitfield",
            "1427 Elmwood Lane, Springfield, IL 62704",
            "Thanks for shopping with us",
        ),
        ("person", "address"),
        ("Jane Whitfield", "1427 Elmwood Lane"),
    ),
    Screen(
        "name",
        *_form(
            "Account settings", "Profile", "Visible to your team only", "Full name: Daniel Okafor", "Member since 2021"
        ),
        ("person",),
        ("Daniel Okafor",),
    ),
    Screen(
        "date_of_birth",
        *_form(
            "Account settings",
            "Profile",
            "Visible to your team only",
            "Date of birth: 12 March 1988",
            "Member since 2021",
        ),
        ("date_of_birth",),
        ("12 March 1988",),
    ),
    Screen(
        "date_of_birth-zh",
        "微信",
        "微信",
        ("个人资料", "部门：数据平台", "出生日期：1990年3月12日", "签名：今天也要加油"),
        ("date_of_birth",),
        ("1990年3月12日",),
    ),
    Screen(
        "api_key",
        "Visual Studio Code",
        ".env - proagent",
        ("# local settings", "DEBUG=false", "OPENAI_API_KEY=sk-proj-Q7fK2mX9pL4vR8tB3nW6yZ1c", "PORT=8000"),
        ("api_key",),
        ("sk-proj-Q7fK2mX9pL4vR8tB3nW6yZ1c",),
    ),
    Screen(
        "password",
        *_form("Wi-Fi sharing", "Guest network", "Network: Cafe-Guest", "Password: Tr0ub4dor&3x", "Valid until Sunday"),
        ("password",),
        ("Tr0ub4dor&3x",),
    ),
    Screen(
        "password-zh",
        "微信",
        "微信",
        ("访客网络", "名称：Cafe-Guest", "密码：hunter2secret", "有效期至周日"),
        ("password",),
        ("hunter2secret",),
    ),
    Screen(
        "ip_address",
        "Windows Terminal",
        "ssh",
        ("$ ssh deploy@prod", "Connecting to server address 203.0.113.42", "Last login: Mon Sep 15 09:30"),
        ("ip_address",),
        ("203.0.113.42",),
    ),
)
"""Each type alone on a screen, among ordinary lines (one screen per row; some in Chinese too)."""

ORDINARY: tuple[Screen, ...] = (
    Screen(
        "code",
        "Visual Studio Code",
        "cart.py - shop",
        (
            "def checkout(cart, tax=0.0825):",
            "    total = sum(i.price * i.qty for i in cart)",
            "    return round(total * (1 + tax), 2)  # cents",
            "assert checkout([Item(19.99, 3)]) == 64.92",
        ),
    ),
    Screen(
        "pytest",
        "xterm",
        "pytest",
        (
            "FAILED tests/test_api.py::test_retry - AssertionError: 503 != 200",
            "tests/test_io.py ........................                [ 87%]",
            "======= 1 failed, 212 passed, 3 skipped in 38.17s =======",
        ),
    ),
    Screen(
        "chat",
        "Google Chrome",
        "ChatGPT - Google Chrome",
        (
            "how many seconds are in a leap year?",
            "A leap year has 366 days, so 366 x 86,400 = 31,622,400 seconds.",
            "In milliseconds that is 31,622,400,000.",
        ),
    ),
    Screen(
        "llm-numbers",
        "Google Chrome",
        "Claude - Google Chrome",
        (
            "The population grew from 1,402,112,000 in 2020 to 1,411,750,000 in 2023.",
            "Step 3: multiply 4,096 by 1,024 to get 4,194,304.",
            "So the answer is 4194304 (about 4.2 million).",
        ),
    ),
    Screen(
        "llm-zh",
        "Google Chrome",
        "Kimi - Google Chrome",
        (
            "请帮我算一下 2025 年第三季度的增长率",
            "第三季度收入 128,400,000 元，同比增长 12.6%。",
            "环比增长率 = (128400000 - 114000000) / 114000000 = 12.63%",
        ),
    ),
    Screen(
        "order",
        "Google Chrome",
        "Your orders - Google Chrome",
        (
            "Order #112-4839201-5538612 placed on Sep 15, 2025",
            "Subtotal $1,189.00  Shipping $15.00  Tax $95.00",
            "Total: $1,299.00",
            "Tracking 1Z999AA10123456784, arrives Thu Sep 18",
        ),
    ),
    Screen(
        "calendar",
        "Thunderbird",
        "Calendar - Thunderbird",
        ("Team sync Tue 2025-09-16 14:00-15:30", "Deadline: 30/09/2025", "Q3 review on October 2, 2025, room 4.12"),
    ),
    Screen(
        "document",
        "LibreOffice Writer",
        "thesis.odt - LibreOffice Writer",
        (
            "Chapter 3 Experimental Design",
            "3.1 Dataset: 12,480 screenshots from 12 participants over 14 days",
            "Table 2 reports F1 = 0.774 (+/- 0.012) on 2,113 held-out events",
        ),
    ),
    Screen(
        "document-zh",
        "WPS",
        "毕业论文_v3.docx",
        (
            "第三章 实验设计",
            "本文共采集 12480 张截图，来自 12 名参与者",
            "会议时间：2025年9月16日 14:00，地点：主楼 402",
        ),
    ),
    Screen(
        "git-log",
        "Windows Terminal",
        "git log",
        (
            "commit 61db316a9f2e4b7c8d0e1f2a3b4c5d6e",
            "Date:   Mon Sep 15 09:30:12 2025 +0800",
            "    Fix the retry budget (3 attempts, 250 ms apart)",
        ),
    ),
    Screen(
        "invoice",
        "LibreOffice Calc",
        "invoices.ods - LibreOffice Calc",
        (
            "Invoice 2025-0915  Qty 12  Unit 49.90  Amount 598.80",
            "EAN 4006381333931  Stock 1,204",
            "Invoice 2025-0916  Qty 3  Unit 129.00  Amount 387.00",
        ),
    ),
    Screen(
        "settings",
        "Visual Studio Code",
        "settings.json - proagent",
        ('"python.version": "3.11.7",', '"port": 8000, "workers": 4, "timeout": 30,', '"build": 20241011'),
    ),
    Screen(
        "meeting-zh", "腾讯会议", "腾讯会议", ("会议号：835 2941 7760", "时间：9月15日 14:00-15:30", "参会人数：23")
    ),
    Screen(
        "news",
        "Google Chrome",
        "News - Google Chrome",
        (
            "Markets: the index closed at 5,432.10, up 1.2% on the day",
            "Rates held at 4.25-4.50 percent",
            "Read more: 12 stories",
        ),
    ),
)
"""Ordinary pages: numbers, dates, prices, order numbers, no personal data (retained if all is well)."""


def make_screens_corpus(
    root: str | Path, screens: tuple[Screen, ...], *, ocr_rows: bool = False, size: tuple[int, int] = (1000, 260)
) -> dict[int, Screen]:
    """Render ``screens`` (Noto Sans CJK, 24 px, dark text on white under a title bar) into a
    LifeTrace participant folder ``root`` (``lifetrace.db`` + ``screenshots/``), one event each.

    Args:
        ocr_rows: also store each screen's text as its OCR row (as capture's worker does); by default
            none, so that curate reads every image with RapidOCR itself.

    Returns:
        screenshot id -> the screen shown.
    """
    from noto_cjk_sans_otc import FONT_PATH
    from PIL import Image, ImageDraw, ImageFont

    root = Path(root)
    shots_dir = root / "screenshots"
    shots_dir.mkdir(parents=True, exist_ok=True)
    big, small = ImageFont.truetype(FONT_PATH, 24), ImageFont.truetype(FONT_PATH, 16)
    con = sqlite3.connect(root / "lifetrace.db")
    con.executescript(PROCESSED_DDL)
    start = datetime(2025, 9, 15, 9, 0, 0)
    shown: dict[int, Screen] = {}
    for i, sc in enumerate(screens, start=1):
        st = start + timedelta(minutes=2 * i)
        img = Image.new("RGB", size, (255, 255, 255))
        d = ImageDraw.Draw(img)
        d.rectangle((0, 0, size[0], 28), fill=(225, 228, 235))
        d.text((10, 4), sc.title, fill=(40, 40, 40), font=small)
        for k, line in enumerate(sc.lines):
            d.text((20, 48 + 48 * k), line, fill=(15, 15, 15), font=big)
        name = f"screen_0_{st:%Y%m%d_%H%M%S}_000.png"
        img.save(shots_dir / name)
        data = (shots_dir / name).read_bytes()
        ts = st.strftime("%Y-%m-%d %H:%M:%S.%f")
        end = (st + timedelta(seconds=60)).strftime("%Y-%m-%d %H:%M:%S.%f")
        con.execute(
            "INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (i, sc.app, sc.title, ts, end, ts, None, None, 0, "", "", None, None, None),
        )
        con.execute(
            "INSERT INTO screenshots VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (i, name, hashlib.sha256(data).hexdigest(), len(data), size[0], size[1], 0, sc.app, sc.title, ts, ts, 1, i),
        )
        if ocr_rows:
            con.execute(
                "INSERT INTO ocr_results VALUES (?,?,?,?,?,?,?)",
                (i, i, "\n".join(sc.lines), 0.95, "ch_sim+en", 0.5, ts),
            )
        shown[i] = sc
    con.commit()
    con.close()
    return shown
