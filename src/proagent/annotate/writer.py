"""Write annotations where the readers find them.

* The processed database (ProAgentBench's ``lifetrace_privacy_processed.db``):
  ``is_llm_event``, ``event_summary``, ``detailed_description``,
  ``conversation`` (JSON ``{"user_queries", "llm_responses", "full_conversation"}``),
  ``user_intention`` and ``llm_platform`` of every annotated event (NULL: unknown); events the first pass found no platform in get
  ``is_llm_event = 0`` and keep their summary. Missing columns are added.
* ``annotations.jsonl``: one record per event, keyed by ``(user, event_id)``,
  with ``llm_platform``, ``user_intention``, ``confidence``, ``rationale``
  (what :mod:`proagent.sources.annotations` joins) plus the processed fields,
  ``status``, ``attempts`` and ``error``.

A processed database is annotated in place, safely: a copy is built beside it
(SQLite backup), changed in one transaction, synced, and renamed over the
original, so a crash leaves the old database or the new one. A raw database
(any capture variant) is never written: its annotated copy goes to
``OUT/<user>/lifetrace_privacy_processed.db`` with the event screenshots in
``OUT/<user>/screenshots/`` (hard links where possible), the layout the readers
and ``proagent curate`` use; ``OUT`` is built aside and swapped in whole.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..io import (
    PRIVATE_DIR_MODE as DIR_MODE,
)
from ..io import (
    PRIVATE_FILE_MODE as FILE_MODE,
)
from ..io import (
    built_aside,
    check_output_folder,
    swap_in,
    write_atomic,
    write_json_atomic,
)
from ..sources.lifetrace_write import copy_with_event_columns
from .records import AnnotationSummary, EventAnnotation
from .task import AnnotationPlan

__all__ = [
    "ANNOTATIONS_FILE",
    "MARKER",
    "PROCESSED_DB",
    "annotations_from_log",
    "check_out",
    "write_annotations_file",
    "write_in_place",
    "write_out",
]

PROCESSED_DB = "lifetrace_privacy_processed.db"
"""Name of the processed database in each participant folder (ProAgentBench layout)."""
ANNOTATIONS_FILE = "annotations.jsonl"
"""Name of the external annotation file written beside the participant folders."""
MARKER = "annotate.json"
"""Summary file that marks a folder as an annotate output (so a re-run may replace it)."""

_COLUMNS = (
    ("is_llm_event", "BOOLEAN"),
    ("event_summary", "TEXT"),
    ("detailed_description", "TEXT"),
    ("conversation", "TEXT"),
    ("user_intention", "TEXT"),
    ("llm_platform", "TEXT"),
)


def annotations_from_log(plan: AnnotationPlan, log: Any | None, model: str = "") -> tuple[list[EventAnnotation], int]:
    """Every event's annotation: the run's answer for each asked event, the first
    pass's ``not_candidate`` for the others.

    Returns:
        ``(annotations, n_pending)``: asked events the run has not reached
        (``--limit``) are left out and counted.
    """
    answers: dict[str, dict[str, Any]] = {}
    for s in (log.samples or []) if log is not None else []:
        ann = (s.metadata or {}).get("annotation")
        if ann:
            answers[str(s.id)] = ann
    out: list[EventAnnotation] = []
    pending = 0
    for p in plan.events:
        e = p.event
        evidence = f"{p.hit.evidence}: {p.hit.matched}" if p.hit else ""
        if not p.ask:
            out.append(
                EventAnnotation(
                    user=e.user,
                    event_id=e.id,
                    is_llm_event=False,
                    status="not_candidate",
                    event_summary=e.summary,
                    detailed_description=e.description,
                    evidence=evidence,
                    rationale=p.reason or "first pass: no LLM platform named in the app, title or screen text",
                )
            )
            continue
        a = answers.get(f"{e.user}:{e.id}")
        if a is None:
            pending += 1
            continue
        out.append(
            EventAnnotation(
                user=e.user,
                event_id=e.id,
                is_llm_event=bool(a["is_llm_event"]),
                status=a["status"],
                llm_platform=a.get("llm_platform"),
                event_summary=a.get("event_summary") or "",
                detailed_description=a.get("detailed_description") or "",
                user_queries=tuple(a.get("user_queries") or ()),
                llm_responses=tuple(a.get("llm_responses") or ()),
                full_conversation=a.get("full_conversation") or "",
                user_intention=a.get("user_intention"),
                confidence=a.get("confidence"),
                rationale=a.get("rationale") or "",
                evidence=evidence,
                attempts=int(a.get("attempts") or 0),
                error=a.get("error") or "",
                extra={
                    **({"annotator": model} if model else {}),
                    **({"query_source": a["query_source"]} if a.get("query_source") else {}),
                },
            )
        )
    return out, pending


def _sql_id(event_id: str) -> Any:
    return int(event_id) if event_id.lstrip("-").isdigit() else event_id


def _update(conn: sqlite3.Connection, annotations: Iterable[EventAnnotation]) -> int:
    n = 0
    with conn:
        for a in annotations:
            if a.status == "not_candidate":
                cur = conn.execute(
                    "UPDATE events SET is_llm_event = 0, conversation = NULL, user_intention = NULL, "
                    "llm_platform = NULL WHERE id = ?",
                    (_sql_id(a.event_id),),
                )
            else:
                conv = a.conversation
                cur = conn.execute(
                    "UPDATE events SET is_llm_event = ?, event_summary = ?, detailed_description = ?, conversation = ?, "
                    "user_intention = ?, llm_platform = ? WHERE id = ?",
                    (
                        int(a.is_llm_event),
                        a.event_summary or None,
                        a.detailed_description or None,
                        json.dumps(conv, ensure_ascii=False) if conv is not None else None,
                        a.user_intention if a.is_llm_event else None,
                        a.llm_platform if a.is_llm_event else None,
                        _sql_id(a.event_id),
                    ),
                )
            n += cur.rowcount
    return n


def _annotated_copy(src: Path, dst: Path, annotations: Iterable[EventAnnotation]) -> None:
    """``src`` copied to ``dst`` with the LLM columns added and ``annotations`` written in."""
    conn = copy_with_event_columns(src, dst, _COLUMNS)
    try:
        _update(conn, annotations)
    finally:
        conn.close()


def _by_user(annotations: Iterable[EventAnnotation]) -> dict[str, list[EventAnnotation]]:
    out: dict[str, list[EventAnnotation]] = {}
    for a in annotations:
        out.setdefault(a.user, []).append(a)
    return out


def write_annotations_file(path: Path, annotations: Iterable[EventAnnotation]) -> Path:
    """``annotations.jsonl`` (one JSON record per line), written atomically."""
    lines = [json.dumps(a.to_json(), ensure_ascii=False) for a in annotations]
    return write_atomic(path, "".join(line + "\n" for line in lines), mode=FILE_MODE)


def write_in_place(plan: AnnotationPlan, annotations: list[EventAnnotation], ann_file: Path) -> list[Path]:
    """Annotate processed databases in place (copy aside, change, rename over).

    Raises:
        DataError: a database is raw (never modified: use :func:`write_out`) or
            has an un-checkpointed ``-wal`` file (a writer may be open).
    """
    for user, log in plan.logs.items():
        if not log.schema.is_processed:
            raise DataError(
                log.path,
                "is a raw LifeTrace database; annotate never modifies one: give --out OUT "
                "to write an annotated processed copy",
            )
        if Path(str(log.path) + "-wal").exists():
            raise DataError(log.path, "has a -wal file (a writer may have it open); close it or checkpoint it first")
    written = []
    by_user = _by_user(annotations)
    for user, log in plan.logs.items():
        with built_aside(log.path, mode=log.path.stat().st_mode & 0o777) as tmp:
            _annotated_copy(log.path, tmp, by_user.get(user, []))
        written.append(log.path)
    write_annotations_file(ann_file, annotations)
    return written


def check_out(data: str | Path, out: str | Path, option: str | None = None) -> None:
    """Refuse an ``--out`` that must not be replaced (``option``: the command-line option that
    named it, which the message then starts with).

    Raises:
        DataError: ``out`` is a file, a non-empty folder that is not an earlier
            annotate output, holds ``data``, or lies inside it (:func:`proagent.io.check_output_folder`).
    """
    check_output_folder(out, marker=MARKER, run="annotate", data=data, data_name="the log", option=option)


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def write_out(
    data: str | Path,
    plan: AnnotationPlan,
    annotations: list[EventAnnotation],
    out: str | Path,
    summary: AnnotationSummary,
) -> list[Path]:
    """Write ``OUT/<user>/lifetrace_privacy_processed.db`` + ``screenshots/``,
    ``OUT/annotations.jsonl`` and ``OUT/annotate.json`` (``summary``); the input is
    only read. ``OUT`` is built beside itself and swapped in whole. Its folders are 0700 and the
    files written 0600 (:data:`proagent.io.PRIVATE_DIR_MODE`); screenshots are hard links to the
    input's (or copies, across file systems) and keep its mode.

    Raises:
        DataError: see :func:`check_out`.
        OSError: ``OUT`` cannot be written (nothing under it is changed).
    """
    out = Path(out)
    check_out(data, out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(mode=DIR_MODE)
    os.chmod(tmp, DIR_MODE)  # mkdir's mode is masked by the umask
    by_user = _by_user(annotations)
    files = []
    try:
        for user, log in plan.logs.items():
            folder = tmp / user
            (folder / "screenshots").mkdir(parents=True, mode=DIR_MODE)
            os.chmod(folder, DIR_MODE)
            os.chmod(folder / "screenshots", DIR_MODE)
            _annotated_copy(log.path, folder / PROCESSED_DB, by_user.get(user, []))
            os.chmod(folder / PROCESSED_DB, FILE_MODE)
            seen: set[str] = set()
            for e in log.events:
                for s in e.screenshots:
                    if s.path is not None and s.file_name not in seen and Path(s.path).is_file():
                        seen.add(s.file_name)
                        _link_or_copy(Path(s.path), folder / "screenshots" / s.file_name)
            files.append(out / user / PROCESSED_DB)
        write_annotations_file(tmp / ANNOTATIONS_FILE, annotations)
        write_json_atomic(tmp / MARKER, summary.to_json(), mode=FILE_MODE)
        swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return files
