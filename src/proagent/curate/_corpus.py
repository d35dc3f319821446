"""A planted-PII corpus for measuring what curation lets through: real rendered
screenshots (Pillow, Noto Sans CJK) carrying one kind of personal data each, in
English and in Chinese, plus clean screens, inside a LifeTrace database whose
``ocr_results`` hold the planted text as a real capture's OCR would.

Every value is synthetic (reserved example domains, documentation IP ranges, test
card numbers with valid Luhn digits, resident IDs with a valid check character).
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from ..sources.lifetrace_write import PROCESSED_DDL

__all__ = ["PLANTED", "CLEAN", "Corpus", "make_pii_corpus"]

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def _cn_id(first17: str) -> str:
    return first17 + "10X98765432"[sum(int(c) * w for c, w in zip(first17, _ID_WEIGHTS)) % 11]


def _luhn(prefix: str) -> str:
    digits = [int(c) for c in prefix]
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2 == 0:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return prefix + str((10 - total % 10) % 10)


def _spaced(s: str) -> str:
    return " ".join(s[i:i + 4] for i in range(0, len(s), 4))


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


def make_pii_corpus(root: str | Path, *, types: tuple[str, ...] | None = None, languages: tuple[str, ...] = ("en", "zh"),
                    n_clean: int = len(CLEAN), size: tuple[int, int] = (560, 150),
                    styles: tuple[str, ...] = ("plain",)) -> Corpus:
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
    fonts = {"plain": (ImageFont.truetype(FONT_PATH, 22), ImageFont.truetype(FONT_PATH, 16), None),
             "dark-small": (ImageFont.truetype(FONT_PATH, 15), ImageFont.truetype(FONT_PATH, 13),
                            ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", 15)
                            if Path("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf").is_file() else None)}
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
        con.execute("INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (i, app, title, ts, en.strftime("%Y-%m-%d %H:%M:%S.%f"), ts, None, None, 0, "", "", None, None, None))
        con.execute("INSERT INTO screenshots VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (i, "C:\\Users\\P01\\LifeTrace\\screenshots\\" + name, hashlib.sha256(data).hexdigest(), len(data),
                     size[0], size[1], 0, app, title, ts, ts, 1, i))
        con.execute("INSERT INTO ocr_results VALUES (?,?,?,?,?,?,?)",
                    (i, i, "\n".join([title, *lines]), 0.95, "ch_sim+en", 0.5, ts))
        if plant is None:
            corpus.clean_ids.append(i)
        else:
            corpus.planted[i] = plant
    con.commit()
    con.close()
    return corpus
