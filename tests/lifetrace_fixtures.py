"""Build LifeTrace fixture databases for tests (every schema variant).

Usage::

    from lifetrace_fixtures import make_lifetrace_db, make_participant, write_annotations

    fx = make_participant(tmp_path, "P01")            # processed DB + screenshots/
    events = read_lifetrace(fx.path)                  # 40 events, 8 LLM events
    ann = write_annotations(fx, tmp_path / "ann.jsonl")

``make_lifetrace_db`` writes a database shaped like the real one of the chosen
variant (ProAgentBench Appendix B.2; docs/architecture.md, formats) with realistic rows: English and Chinese apps and
titles, ~40 events over about three hours, events shorter than 3 s, an open
last event, soft-deleted rows (variants with ``deleted_at``), a screenshot with
``file_deleted = 1``, an orphan screenshot (``event_id`` NULL), screenshots
whose ``file_path`` is a capture-side absolute path (Windows or POSIX) with
some files present locally (tiny valid PNGs) and some missing, OCR rows
(some screenshots with none, one with two), and for ``processed`` the
ProAgentBench columns with conversation JSON on the LLM events.

It returns a :class:`FixtureDB` describing exactly what was written, so tests
compare against it instead of hard-coding counts. Everything is deterministic.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
import shutil
import sqlite3
import struct
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from proagent.taxonomy import load_taxonomy

__all__ = [
    "VARIANTS",
    "FixtureDB",
    "copy_fixture",
    "make_foreign_db",
    "make_lifetrace_db",
    "make_participant",
    "tiny_png",
    "write_annotations",
]

VARIANTS = ("2025-09", "2025-10", "2025-11", "processed")
"""Schema variants the reader must detect."""

TS = "%Y-%m-%d %H:%M:%S.%f"
"""How LifeTrace (SQLAlchemy on SQLite) writes DATETIME values."""

DEFAULT_CAPTURE_ROOTS = {
    "2025-09": "/Users/alice/.lifetrace/screenshots",
    "2025-10": r"D:\LifeTrace\data\screenshots",
    "2025-11": r"C:\Users\alice\AppData\Roaming\LifeTrace\screenshots",
    "processed": r"C:\Users\P01\AppData\Roaming\LifeTrace\data\screenshots",
}

# (app_name, window title, English OCR/summary hint, Chinese?)
_APPS = [
    (
        "Visual Studio Code",
        "main.py - proagent - Visual Studio Code",
        "def train(model, data): loss = criterion(out, y)",
    ),
    (
        "Google Chrome",
        "Stack Overflow - Where developers learn - Google Chrome",
        "How to read a SQLite database in Python",
    ),
    ("微信", "微信", "张三: 明天下午三点开会吗？ 李四: 好的，会议室见"),
    ("Microsoft Word", "毕业论文_v3.docx - Word", "第三章 实验设计 3.1 数据集 本文使用的数据集"),
    (
        "Visual Studio Code",
        "lifetrace.py - proagent - Visual Studio Code",
        "Traceback (most recent call last): sqlite3.OperationalError",
    ),
    (
        "Google Chrome",
        "GitHub - FreeU-group/LifeTrace - Google Chrome",
        "LifeTrace: intelligent life recording system README",
    ),
    ("飞书", "飞书 - 项目周报", "本周进展：完成数据采集模块；下周计划：模型评测"),
    ("Windows PowerShell", "Windows PowerShell", "PS C:\\Users\\alice> python -m pytest -q  3 failed, 12 passed"),
    ("Google Chrome", "哔哩哔哩 (゜-゜)つロ 干杯~-bilibili - Google Chrome", "【教程】十分钟学会 Transformer"),
    ("Microsoft Excel", "实验结果.xlsx - Excel", "Accuracy F1 Precision Recall 0.812 0.774"),
]
_LLM_APPS = [
    ("Google Chrome", "ChatGPT - Google Chrome", "ChatGPT"),
    ("豆包", "豆包 - 字节跳动旗下 AI 智能助手", "豆包"),
    ("Microsoft Edge", "Kimi.ai - 帮你看更大的世界 - Microsoft Edge", "Kimi"),
    ("Google Chrome", "DeepSeek - 探索未至之境 - Google Chrome", "DeepSeek"),
    ("Claude", "Claude", "Claude"),
]
_QUERIES = [
    ("sqlite3.OperationalError: database is locked 怎么解决？", "Debugging & Error Resolution"),
    ("帮我把这段话翻译成英文：本文提出了一种主动式智能体评测方法", "Translation"),
    ("What is the difference between precision and recall?", "Knowledge Q&A"),
    ("写一个 Python 函数，按文件名在文件夹里查找截图", "Code Programming"),
    ("帮我润色一下这段论文摘要，使其更学术", "writing polish and editing"),
    ("Summarize this README in three bullet points", "Summarization"),
    ("明天下午的组会应该怎么安排时间？", "Planning & Scheduling"),
    ("Find recent papers on proactive agents from 2024", "Something else entirely"),
]


def tiny_png(seed: int = 0) -> bytes:
    """A valid 1x1 RGB PNG whose colour (and hash) depends on ``seed``."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rgb = bytes(((seed * 37) % 256, (seed * 91) % 256, (seed * 53) % 256))
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" + rgb)) + chunk(b"IEND", b"")
    )


@dataclass
class FixtureDB:
    """What :func:`make_lifetrace_db` wrote. Event and screenshot ids are the
    row ids (event ids as text, as in ``Event.id``)."""

    path: Path
    variant: str
    user: str
    screenshots_dir: Path
    capture_root: str
    live_event_ids: list[str] = field(default_factory=list)
    """Events that are data (not soft-deleted), oldest first."""
    deleted_event_ids: list[str] = field(default_factory=list)
    llm_event_ids: list[str] = field(default_factory=list)
    short_event_ids: list[str] = field(default_factory=list)
    """Live events shorter than 3 s."""
    open_event_id: str | None = None
    """The last event, left open (``end_time`` NULL)."""
    starts: dict[str, datetime] = field(default_factory=dict)
    ends: dict[str, datetime | None] = field(default_factory=dict)
    apps: dict[str, str] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)
    summaries: dict[str, str] = field(default_factory=dict)
    """Expected ``Event.summary`` per live event ('' for 2025-09)."""
    conversations: dict[str, dict] = field(default_factory=dict)
    """Conversation JSON objects of the LLM events (processed only)."""
    intentions: dict[str, str] = field(default_factory=dict)
    """Raw intention text per LLM event (for annotation files)."""
    expected_intentions: dict[str, str] = field(default_factory=dict)
    """Canonical taxonomy name per LLM event after mapping."""
    platforms: dict[str, str] = field(default_factory=dict)
    shots_by_event: dict[str, list[int]] = field(default_factory=dict)
    """Live screenshot ids per live event, oldest first."""
    deleted_screenshot_ids: list[int] = field(default_factory=list)
    """Soft-deleted screenshots (own ``deleted_at`` or of a deleted event)."""
    orphan_screenshot_ids: list[int] = field(default_factory=list)
    file_deleted_ids: list[int] = field(default_factory=list)
    """Live screenshots with ``file_deleted = 1`` (their file IS on disk)."""
    present_file_ids: list[int] = field(default_factory=list)
    """Live screenshots whose file was written locally (file_deleted ones included)."""
    missing_file_ids: list[int] = field(default_factory=list)
    """Live screenshots whose file is not on disk."""
    file_names: dict[int, str] = field(default_factory=dict)
    ocr: dict[int, str] = field(default_factory=dict)
    """Expected joined OCR text per screenshot id ('' when none)."""

    @property
    def n_live_screenshots(self) -> int:
        return sum(len(v) for v in self.shots_by_event.values())

    @property
    def all_live_screenshot_ids(self) -> list[int]:
        return [s for e in self.live_event_ids for s in self.shots_by_event[e]]


def _columns(variant: str, processed_base: str, model_columns: bool) -> tuple[str, str]:
    base = processed_base if variant == "processed" else variant
    ev = [
        "id INTEGER NOT NULL PRIMARY KEY",
        "app_name VARCHAR(200)",
        "window_title VARCHAR(500)",
        "start_time DATETIME",
        "end_time DATETIME",
        "created_at DATETIME",
    ]
    sc = [
        "id INTEGER NOT NULL PRIMARY KEY",
        "file_path VARCHAR(500) NOT NULL UNIQUE",
        "file_hash VARCHAR(64) NOT NULL",
        "file_size INTEGER NOT NULL",
        "width INTEGER NOT NULL",
        "height INTEGER NOT NULL",
        "screen_id INTEGER NOT NULL",
        "app_name VARCHAR(200)",
        "window_title VARCHAR(500)",
        "created_at DATETIME",
        "processed_at DATETIME",
        "is_processed BOOLEAN",
        "event_id INTEGER",
    ]
    if base in ("2025-10", "2025-11"):
        ev += ["ai_title VARCHAR(50)", "ai_summary TEXT"]
    if base == "2025-11":
        ev += [
            "status VARCHAR(20)",
            "task_id INTEGER",
            "auto_association_attempted BOOLEAN",
            "updated_at DATETIME",
            "deleted_at DATETIME",
        ]
        sc += ["file_deleted BOOLEAN", "updated_at DATETIME", "deleted_at DATETIME"]
    if variant == "processed":
        ev += ["is_llm_event BOOLEAN", "event_summary TEXT", "detailed_description TEXT", "conversation TEXT"]
        if model_columns:
            ev += ["gpt4o_title VARCHAR(50)", "gpt4o_summary TEXT"]
    return ", ".join(ev), ", ".join(sc)


def make_lifetrace_db(
    db_path: str | Path,
    variant: str = "processed",
    *,
    user: str | None = None,
    n_events: int = 40,
    n_llm: int = 8,
    start: datetime = datetime(2025, 9, 15, 9, 0, 0, 123456),
    screenshots_dir: str | Path | None = None,
    write_files: bool = True,
    missing_every: int = 5,
    capture_root: str | None = None,
    open_last: bool = True,
    soft_delete: bool = True,
    orphans: int = 1,
    processed_base: str = "2025-10",
    model_columns: bool = False,
) -> FixtureDB:
    """Write a LifeTrace database of ``variant`` at ``db_path``.

    Args:
        db_path: Database file to create (parent folders are made).
        variant: One of :data:`VARIANTS`.
        user: Participant id recorded in :class:`FixtureDB` (default: the name
            of the folder holding the DB, as the reader assumes).
        n_events: Event rows, soft-deleted ones included (>= 12).
        n_llm: LLM-use events (processed only sets ``is_llm_event``; every
            variant gets LLM-looking apps). At most 8 distinct queries, reused.
        start: Start of the first event.
        screenshots_dir: Where image files go (default ``<db folder>/screenshots``).
        write_files: Write PNG files at all.
        missing_every: Every n-th screenshot's file is not written (0: none).
        capture_root: Capture-side folder put in ``file_path`` (default per
            variant; Windows-style except ``2025-09``, which is macOS-style).
        open_last: Leave the last event's ``end_time`` NULL.
        soft_delete: With ``deleted_at`` columns (2025-11, or processed on
            2025-11): soft-delete two events, one screenshot, and flag one
            screenshot ``file_deleted``.
        orphans: Screenshots with ``event_id`` NULL (pre-event data).
        processed_base: Schema the processed DB extends (``2025-09``,
            ``2025-10`` or ``2025-11``).
        model_columns: Processed only: add ``gpt4o_title``/``gpt4o_summary``.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}")
    if n_events < 12:
        raise ValueError("n_events must be >= 12")
    db_path = Path(db_path)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    if db_path.exists():
        db_path.unlink()
    shots_dir = Path(screenshots_dir) if screenshots_dir is not None else db_path.parent / "screenshots"
    if write_files:
        shots_dir.mkdir(parents=True, exist_ok=True)
    root = capture_root if capture_root is not None else DEFAULT_CAPTURE_ROOTS[variant]
    sep = "\\" if ("\\" in root or root[1:2] == ":") else "/"
    base = processed_base if variant == "processed" else variant
    has_ai = base in ("2025-10", "2025-11")
    has_v1 = base == "2025-11"
    processed = variant == "processed"
    fx = FixtureDB(db_path, variant, user or db_path.parent.name, shots_dir, root)

    # ---- plan events
    llm_slots = set()
    candidates = [i for i in range(3, n_events - 1) if i % 9 != 4]
    step = len(candidates) / max(n_llm, 1)
    for k in range(min(n_llm, len(candidates))):
        llm_slots.add(candidates[int(k * step + step / 2) % len(candidates)])
    deleted_slots = set()
    if soft_delete and has_v1:
        for first in (9, n_events // 2 + 3):  # two non-LLM events, not the last
            i = next(i for i in range(first, n_events - 1) if i not in llm_slots and i not in deleted_slots)
            deleted_slots.add(i)
    t = start
    events = []  # (id, app, title, start, end, is_llm, k_llm)
    k_llm = 0
    for i in range(n_events):
        eid = i + 1
        if i in llm_slots:
            app, title, _ = _LLM_APPS[k_llm % len(_LLM_APPS)]
            dur = timedelta(seconds=95 + 13 * k_llm)
            kl = k_llm
            k_llm += 1
        else:
            app, title, _ = _APPS[i % len(_APPS)]
            kl = None
            if i % 9 == 4:
                dur = timedelta(seconds=1, microseconds=400000 + 100000 * (i % 5))  # < 3 s
            else:
                dur = timedelta(seconds=60 + (i * 47) % 420)
        end = t + dur
        events.append((eid, app, title, t, end, i in llm_slots, kl))
        gap = timedelta(minutes=7) if i % 13 == 12 else timedelta(microseconds=2000)
        t = end + gap

    con = sqlite3.connect(db_path)
    ev_cols, sc_cols = _columns(variant, processed_base, model_columns)
    con.execute("PRAGMA synchronous = OFF")  # test data: skip fsyncs (not stored in the file)
    con.execute("PRAGMA journal_mode = MEMORY")
    con.executescript(
        f"""
        BEGIN;
        CREATE TABLE events ({ev_cols});
        CREATE TABLE screenshots ({sc_cols});
        CREATE TABLE ocr_results (id INTEGER NOT NULL PRIMARY KEY, screenshot_id INTEGER NOT NULL,
            text_content TEXT, confidence FLOAT, language VARCHAR(10), processing_time FLOAT,
            created_at DATETIME);
        CREATE TABLE search_index (id INTEGER NOT NULL PRIMARY KEY, screenshot_id INTEGER NOT NULL,
            content TEXT NOT NULL, keywords TEXT, created_at DATETIME);
        CREATE TABLE processing_queue (id INTEGER NOT NULL PRIMARY KEY, screenshot_id INTEGER NOT NULL,
            task_type VARCHAR(50) NOT NULL, status VARCHAR(20), retry_count INTEGER,
            error_message TEXT, created_at DATETIME, updated_at DATETIME);
        COMMIT;
        """
    )
    shot_id = 0
    ocr_id = 0
    gidx = 0  # global screenshot counter (for missing_every)
    flagged_file_deleted = False
    deleted_one_shot = False
    for n, (eid, app, title, st, en, is_llm, kl) in enumerate(events):
        sid = str(eid)
        is_last = n == len(events) - 1
        is_deleted = n in deleted_slots
        end_val = None if (open_last and is_last) else en.strftime(TS)
        row: dict[str, object] = {
            "id": eid,
            "app_name": app,
            "window_title": title,
            "start_time": st.strftime(TS),
            "end_time": end_val,
            "created_at": st.strftime(TS),
        }
        hint = _LLM_APPS[kl % len(_LLM_APPS)][2] if is_llm else _APPS[n % len(_APPS)][2]
        en_summary = (
            f"User asks {_LLM_APPS[kl % len(_LLM_APPS)][2]} a question" if is_llm else f"User works in {app}: {title}"
        )
        summary = ""
        if has_ai:
            row["ai_title"] = (app + "使用")[:10]
            row["ai_summary"] = en_summary
            summary = en_summary
        if has_v1:
            row.update(
                status="done",
                task_id=None if n % 3 else 1,
                auto_association_attempted=1,
                updated_at=en.strftime(TS),
                deleted_at=(en + timedelta(days=1)).strftime(TS) if is_deleted else None,
            )
        if processed:
            ev_sum = (
                f"用户在 {app} 中向 AI 提问（{_QUERIES[kl % len(_QUERIES)][0][:20]}）"
                if is_llm
                else f"用户在 {app} 中浏览“{title}”"
            )
            row.update(
                is_llm_event=1 if is_llm else 0,
                event_summary=ev_sum,
                detailed_description=f"{ev_sum}。屏幕内容：{hint}",
                conversation=None,
            )
            if n % 4 == 1 and not is_llm:
                row["conversation"] = ""  # blank, as some rows hold
            summary = ev_sum
            if model_columns:
                row["gpt4o_title"] = app
                row["gpt4o_summary"] = f"gpt-4o: {en_summary}"
            if is_llm:
                q, intention = _QUERIES[kl % len(_QUERIES)]
                conv = {
                    "user_queries": [q] + (["能再详细一点吗？"] if kl % 3 == 0 else []),
                    "llm_responses": [f"[{hint}] 回答：{q[:12]}……"]
                    + (["当然，下面是更详细的说明。"] if kl % 3 == 0 else []),
                    "full_conversation": f"User: {q}\nAssistant: ...",
                }
                row["conversation"] = json.dumps(conv, ensure_ascii=False)
                fx.conversations[sid] = conv
        if is_llm:
            q, intention = _QUERIES[kl % len(_QUERIES)]
            fx.intentions[sid] = intention
            fx.platforms[sid] = _LLM_APPS[kl % len(_LLM_APPS)][2]
        cols = ", ".join(row)
        con.execute(f"INSERT INTO events ({cols}) VALUES ({', '.join('?' * len(row))})", list(row.values()))

        if is_deleted:
            fx.deleted_event_ids.append(sid)
        else:
            fx.live_event_ids.append(sid)
            fx.starts[sid] = st
            fx.ends[sid] = None if end_val is None else en
            fx.apps[sid] = app
            fx.titles[sid] = title
            fx.summaries[sid] = summary
            fx.shots_by_event[sid] = []
            if is_llm:
                fx.llm_event_ids.append(sid)
            if (en - st).total_seconds() < 3:
                fx.short_event_ids.append(sid)
            if end_val is None:
                fx.open_event_id = sid

        # ---- screenshots of this event
        secs = (en - st).total_seconds()
        n_shots = max(1, min(4, int(secs // 60) + 1))
        for k in range(n_shots):
            shot_id += 1
            gidx += 1
            ts = st + timedelta(seconds=secs * k / n_shots) + timedelta(milliseconds=17 * k)
            name = f"screen_0_{ts:%Y%m%d_%H%M%S}_{ts.microsecond // 1000:03d}.png"
            png = tiny_png(shot_id)
            write = write_files and not (missing_every and gidx % missing_every == 0)
            if write:
                (shots_dir / name).write_bytes(png)
            srow: dict[str, object] = {
                "id": shot_id,
                "file_path": root + sep + name,
                "file_hash": hashlib.sha256(png).hexdigest(),
                "file_size": len(png),
                "width": 2560,
                "height": 1440,
                "screen_id": 0,
                "app_name": app,
                "window_title": title,
                "created_at": ts.strftime(TS),
                "processed_at": None,
                "is_processed": 0,
                "event_id": eid,
            }
            shot_deleted = is_deleted
            file_deleted = False
            if has_v1:
                srow.update(file_deleted=0, updated_at=ts.strftime(TS), deleted_at=None)
                if is_deleted:
                    srow["deleted_at"] = (en + timedelta(days=1)).strftime(TS)
                elif soft_delete and not deleted_one_shot and n_shots >= 3 and k == 1:
                    srow["deleted_at"] = (en + timedelta(hours=2)).strftime(TS)
                    deleted_one_shot = shot_deleted = True
                elif soft_delete and not flagged_file_deleted and n_shots >= 2 and k == 0 and write and n > 2:
                    srow["file_deleted"] = 1
                    flagged_file_deleted = file_deleted = True
            # OCR: none for every 4th screenshot, two blocks for the first of event 3
            texts: list[str] = []
            if shot_id % 4 != 0:
                texts.append(f"{title}\n{hint}")
                if eid == 3 and k == 0:
                    texts.append("第二个文本块 second OCR block")
            if texts:
                srow["processed_at"] = (ts + timedelta(seconds=3)).strftime(TS)
                srow["is_processed"] = 1
                for text in texts:
                    ocr_id += 1
                    con.execute(
                        "INSERT INTO ocr_results VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (ocr_id, shot_id, text, 0.93, "ch_sim+en", 0.41, srow["processed_at"]),
                    )
            con.execute(
                f"INSERT INTO screenshots ({', '.join(srow)}) VALUES ({', '.join('?' * len(srow))})",
                list(srow.values()),
            )
            fx.file_names[shot_id] = name
            fx.ocr[shot_id] = "\n".join(texts)
            if shot_deleted:
                fx.deleted_screenshot_ids.append(shot_id)
                continue
            fx.shots_by_event[sid].append(shot_id)
            if file_deleted:
                fx.file_deleted_ids.append(shot_id)
            (fx.present_file_ids if write else fx.missing_file_ids).append(shot_id)

    # ---- orphan screenshots (before the first event, event_id NULL)
    for k in range(orphans):
        shot_id += 1
        ts = start - timedelta(minutes=30 - k)
        name = f"screen_0_{ts:%Y%m%d_%H%M%S}_{ts.microsecond // 1000:03d}.png"
        png = tiny_png(shot_id)
        srow = {
            "id": shot_id,
            "file_path": root + sep + name,
            "file_hash": hashlib.sha256(png).hexdigest(),
            "file_size": len(png),
            "width": 2560,
            "height": 1440,
            "screen_id": 0,
            "app_name": "Finder",
            "window_title": "Finder",
            "created_at": ts.strftime(TS),
            "is_processed": 0,
            "event_id": None,
        }
        con.execute(
            f"INSERT INTO screenshots ({', '.join(srow)}) VALUES ({', '.join('?' * len(srow))})",
            list(srow.values()),
        )
        fx.orphan_screenshot_ids.append(shot_id)
        fx.file_names[shot_id] = name
        fx.ocr[shot_id] = ""

    con.commit()
    con.close()

    from proagent.taxonomy import load_taxonomy

    tax = load_taxonomy()
    fx.expected_intentions = {
        k: (tax.canonical(v) or tax.fallback) for k, v in fx.intentions.items() if k in fx.live_event_ids
    }
    return fx


def make_participant(root: str | Path, user: str = "P01", variant: str = "processed", **kw) -> FixtureDB:
    """ProAgentBench layout: ``root/<user>/lifetrace_privacy_processed.db`` (or
    ``lifetrace.db`` for raw variants) plus ``root/<user>/screenshots/``."""
    name = "lifetrace_privacy_processed.db" if variant == "processed" else "lifetrace.db"
    return make_lifetrace_db(Path(root) / user / name, variant, user=user, **kw)


def copy_fixture(fx: FixtureDB, root: str | Path, user: str | None = None) -> FixtureDB:
    """Copy a built fixture to ``root/<user>/`` (same DB file name) so a test
    can change the copy. The screenshots folder is shared through a symbolic
    link (copied where links are not allowed): build afresh to change files.

    Building once per session and copying per test keeps suites fast: each
    fixture holds ~100 image files and deleting files is slow on some disks.
    """
    user = user or fx.user
    dest = Path(root) / user
    dest.mkdir(parents=True, exist_ok=True)
    db = dest / fx.path.name
    shutil.copyfile(fx.path, db)
    shots = dest / "screenshots"
    if fx.screenshots_dir.is_dir() and fx.screenshots_dir == fx.path.parent / "screenshots":
        try:
            os.symlink(fx.screenshots_dir, shots, target_is_directory=True)
        except OSError:
            shutil.copytree(fx.screenshots_dir, shots)
    else:
        shots = fx.screenshots_dir
    return dataclasses.replace(copy.deepcopy(fx), path=db, user=user, screenshots_dir=shots)


def write_annotations(
    fixtures: FixtureDB | Iterable[FixtureDB],
    path: str | Path,
    *,
    fmt: str = "jsonl",
    exclude: Mapping[str, str] | None = None,
    with_user: bool = True,
) -> Path:
    """Write an annotation file for the LLM events of one or more fixtures.

    Args:
        fixtures: Fixture(s) whose ``intentions``/``platforms`` to write.
        path: Output file.
        fmt: ``jsonl`` (one record per line), ``json`` (a list of records),
            ``nested`` (``{user: {event_id: record}}`` plus an ``excluded`` list
            per user) or ``excluded`` (only ``{"excluded": [...]}``).
        exclude: Event id -> reason to exclude (applied to every fixture's user).
        with_user: Write the user key in records (``jsonl``/``json`` only).
    """
    fxs = [fixtures] if isinstance(fixtures, FixtureDB) else list(fixtures)
    exclude = dict(exclude or {})
    records: list[dict] = []
    nested: dict[str, dict] = {}
    excluded: list[dict] = []
    for fx in fxs:
        for k, (eid, intention) in enumerate(fx.intentions.items()):
            if load_taxonomy().canonical(intention) is None:  # annotation files must name a category
                intention = load_taxonomy().fallback
            rec = {
                "event_id": int(eid),
                "user_intention": intention,
                "confidence": round(0.6 + 0.05 * k, 2),
                "rationale": f"The query asks for {intention.lower()}.",
                "llm_platform": fx.platforms[eid],
            }
            if with_user:
                rec = {"user": fx.user, **rec}
            records.append(rec)
            nested.setdefault(fx.user, {})[eid] = {k2: v for k2, v in rec.items() if k2 not in ("user", "event_id")}
        for eid, reason in exclude.items():
            excluded.append({"user": fx.user, "event_id": eid, "reason": reason})
            nested.setdefault(fx.user, {}).setdefault("excluded", []).append({"event_id": eid, "reason": reason})
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "jsonl":
        lines = [json.dumps(r, ensure_ascii=False) for r in records]
        lines += [json.dumps({**e, "excluded": True}, ensure_ascii=False) for e in excluded]
        path.write_text("\n".join(lines) + "\n", "utf-8")
    elif fmt == "json":
        path.write_text(
            json.dumps(records + [{**e, "excluded": True} for e in excluded], ensure_ascii=False, indent=1), "utf-8"
        )
    elif fmt == "nested":
        path.write_text(json.dumps({"version": 1, **nested}, ensure_ascii=False, indent=1), "utf-8")
    elif fmt == "excluded":
        path.write_text(json.dumps({"excluded": excluded}, ensure_ascii=False), "utf-8")
    else:
        raise ValueError(f"unknown fmt {fmt!r}")
    return path


def make_foreign_db(path: str | Path) -> Path:
    """A Firefox-like ``places.sqlite`` (valid SQLite, no LifeTrace tables)."""
    path = Path(path)
    con = sqlite3.connect(path)
    con.executescript(
        """
        CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url LONGVARCHAR, title LONGVARCHAR,
            visit_count INTEGER DEFAULT 0, last_visit_date INTEGER);
        CREATE TABLE moz_bookmarks (id INTEGER PRIMARY KEY, type INTEGER, fk INTEGER, title LONGVARCHAR);
        INSERT INTO moz_places (url, title, visit_count) VALUES ('https://www.mozilla.org/', 'Mozilla', 3);
        """
    )
    con.commit()
    con.close()
    return path
