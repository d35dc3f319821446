"""LifeTrace table definitions for writers: the one place proagent spells out the DDL.

The columns follow LifeTrace's SQLAlchemy models (``lifetrace/storage/models.py``: ``Event``,
``Screenshot``, ``OCRResult``, ``SearchIndex``, ``ProcessingQueue``) and the variants of DESIGN
section 3, which the reader (:mod:`proagent.sources.lifetrace_schema`) detects:

``2025-09``
    ``events(id, app_name, window_title, start_time, end_time, created_at)``, ``screenshots(id,
    file_path UNIQUE, file_hash, file_size, width, height, screen_id, app_name, window_title,
    created_at, processed_at, is_processed, event_id)``, ``ocr_results``, ``search_index``,
    ``processing_queue``.
``2025-10``
    events gain ``ai_title``, ``ai_summary``.
``2025-11`` (v1.0)
    events gain ``status``, ``task_id``, ``auto_association_attempted``, ``updated_at``,
    ``deleted_at``; screenshots gain ``file_deleted``, ``updated_at``, ``deleted_at``.

Timestamps are written as SQLAlchemy writes ``DateTime`` on SQLite: naive local time
``YYYY-MM-DD HH:MM:SS.ffffff`` (:data:`TIMESTAMP_FORMAT`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from .lifetrace_schema import connect_read_only

__all__ = [
    "FOCUSED_COLUMN",
    "PROCESSED_DDL",
    "PROCESSED_EVENT_COLUMNS",
    "TIMESTAMP_FORMAT",
    "WRITE_VARIANTS",
    "copy_with_event_columns",
    "event_columns",
    "lifetrace_ddl",
    "screenshot_columns",
]

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
"""How LifeTrace (SQLAlchemy ``DateTime`` on SQLite) stores times: naive local time."""

FOCUSED_COLUMN = "focused BOOLEAN"
"""proagent's one addition to LifeTrace's ``screenshots`` table (``ALTER TABLE ... ADD COLUMN``,
by ``proagent capture`` and ``proagent curate``; LifeTrace's tools ignore it): 1 when this screen
held the focused window at capture time, 0 for another screen, NULL when not known. Readers take
a database without it (:attr:`proagent.records.Screenshot.focused` is then ``None``)."""

WRITE_VARIANTS = ("2025-09", "2025-10", "2025-11")
"""Schema variants :func:`lifetrace_ddl` writes, oldest first."""

_EVENTS = (
    "id INTEGER NOT NULL PRIMARY KEY",
    "app_name VARCHAR(200)",
    "window_title VARCHAR(500)",
    "start_time DATETIME",
    "end_time DATETIME",
    "created_at DATETIME",
)
_EVENTS_AI = ("ai_title VARCHAR(50)", "ai_summary TEXT")
_EVENTS_V1 = (
    "status VARCHAR(20)",
    "task_id INTEGER",
    "auto_association_attempted BOOLEAN",
    "updated_at DATETIME",
    "deleted_at DATETIME",
)
_SHOTS = (
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
)
_SHOTS_V1 = ("file_deleted BOOLEAN", "updated_at DATETIME", "deleted_at DATETIME")
_OTHER_TABLES = """
CREATE TABLE IF NOT EXISTS ocr_results (id INTEGER NOT NULL PRIMARY KEY, screenshot_id INTEGER NOT NULL,
    text_content TEXT, confidence FLOAT, language VARCHAR(10), processing_time FLOAT, created_at DATETIME);
CREATE TABLE IF NOT EXISTS search_index (id INTEGER NOT NULL PRIMARY KEY, screenshot_id INTEGER NOT NULL,
    content TEXT NOT NULL, keywords TEXT, created_at DATETIME);
CREATE TABLE IF NOT EXISTS processing_queue (id INTEGER NOT NULL PRIMARY KEY, screenshot_id INTEGER NOT NULL,
    task_type VARCHAR(50) NOT NULL, status VARCHAR(20), retry_count INTEGER, error_message TEXT,
    created_at DATETIME, updated_at DATETIME);
"""


def _check(variant: str) -> None:
    if variant not in WRITE_VARIANTS:
        raise ValueError(f"unknown LifeTrace variant {variant!r} (one of {', '.join(WRITE_VARIANTS)})")


def event_columns(variant: str = "2025-11") -> tuple[str, ...]:
    """Column definitions (``"name TYPE"``) of ``events`` in ``variant``, in table order.

    Raises:
        ValueError: ``variant`` is not one of :data:`WRITE_VARIANTS`.
    """
    _check(variant)
    cols: tuple[str, ...] = _EVENTS
    if variant in ("2025-10", "2025-11"):
        cols += _EVENTS_AI
    if variant == "2025-11":
        cols += _EVENTS_V1
    return cols


def screenshot_columns(variant: str = "2025-11") -> tuple[str, ...]:
    """Column definitions of ``screenshots`` in ``variant``, in table order.

    Raises:
        ValueError: ``variant`` is not one of :data:`WRITE_VARIANTS`.
    """
    _check(variant)
    return _SHOTS + (_SHOTS_V1 if variant == "2025-11" else ())


def lifetrace_ddl(variant: str = "2025-11", *, extra_event_columns: Sequence[str] = (), indexes: bool = True) -> str:
    """SQL script creating LifeTrace's tables (``IF NOT EXISTS``, so it may run on an existing file).

    Args:
        variant: one of :data:`WRITE_VARIANTS`.
        extra_event_columns: definitions appended to ``events`` after the variant's own (e.g. the
            ProAgentBench processed columns ``"is_llm_event BOOLEAN"``, ...).
        indexes: also create the indexes below (a bulk writer may leave them out).

    Returns:
        ``CREATE TABLE`` statements for ``events``, ``screenshots``, ``ocr_results``,
        ``search_index`` and ``processing_queue``, plus the indexes readers use
        (``screenshots.event_id``, ``screenshots.created_at``, ``ocr_results.screenshot_id``) when
        ``indexes``.

    Raises:
        ValueError: unknown ``variant``.
    """
    ev = ", ".join(event_columns(variant) + tuple(extra_event_columns))
    sc = ", ".join(screenshot_columns(variant))
    script = (
        f"CREATE TABLE IF NOT EXISTS events ({ev});\nCREATE TABLE IF NOT EXISTS screenshots ({sc});\n{_OTHER_TABLES}"
    )
    if not indexes:
        return script
    return script + (
        "CREATE INDEX IF NOT EXISTS ix_screenshots_event_id ON screenshots (event_id);\n"
        "CREATE INDEX IF NOT EXISTS ix_screenshots_created_at ON screenshots (created_at);\n"
        "CREATE INDEX IF NOT EXISTS ix_ocr_results_screenshot_id ON ocr_results (screenshot_id);\n"
    )


PROCESSED_EVENT_COLUMNS = (
    "is_llm_event BOOLEAN",
    "event_summary TEXT",
    "detailed_description TEXT",
    "conversation TEXT",
    "user_intention VARCHAR(64)",
    "llm_platform VARCHAR(64)",
)
"""ProAgentBench processed columns appended to LifeTrace 2025-10's ``events`` (section 5.3,
Appendix B.5: LLM-use flag, summary, description, conversation JSON, intention, platform)."""

PROCESSED_DDL = lifetrace_ddl("2025-10", extra_event_columns=PROCESSED_EVENT_COLUMNS, indexes=False)
"""SQL that creates an empty ProAgentBench processed database (``lifetrace_privacy_processed.db``):
``events`` with the processed columns (14, in this order), ``screenshots`` (13), ``ocr_results``
(7), ``search_index`` and ``processing_queue``. ``proagent synth``, ``proagent curate`` and
``proagent annotate`` all create processed databases with it."""


def copy_with_event_columns(src: str | Path, dst: str | Path, columns: Sequence[tuple[str, str]]) -> sqlite3.Connection:
    """A consistent copy of the LifeTrace database ``src`` at ``dst``, with the ``events``
    columns it lacks added, open for the caller's ``UPDATE``s (annotate's LLM columns,
    simulate's decisions); the caller closes it.

    ``src`` is only read (:func:`~proagent.sources.lifetrace_schema.connect_read_only`, its
    ``-wal`` content included); ``dst`` is in rollback-journal mode (no ``-wal`` beside it).

    Args:
        src: the database to copy.
        dst: the copy (an empty or new file; :func:`proagent.io.built_aside` gives one).
        columns: ``(name, SQL type)`` pairs; a name ``events`` already has (any case) is skipped.

    Raises:
        sqlite3.DatabaseError: SQLite cannot read ``src`` or write ``dst``.
    """
    source = connect_read_only(src)
    target = sqlite3.connect(dst)
    try:
        source.backup(target)
        target.execute("PRAGMA journal_mode=DELETE")
        have = {r[1].lower() for r in target.execute("PRAGMA table_info(events)")}
        for col, kind in columns:
            if col.lower() not in have:
                target.execute(f"ALTER TABLE events ADD COLUMN {col} {kind}")
    except BaseException:
        target.close()
        raise
    finally:
        source.close()
    return target
