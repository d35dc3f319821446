"""Reader for LifeTrace SQLite databases, every schema variant (ProAgentBench section 5.1, Appendix B.2).

LifeTrace captures the screen at 1 Hz and groups screenshots into *events*
(stretches of one foreground application). Four schema variants exist; the
reader detects which one a file holds from ``PRAGMA table_info`` and reads
every optional column it finds, so mixtures also work:

``2025-09`` (2025-08/09)
    ``events(id, app_name, window_title, start_time, end_time, created_at)``,
    ``screenshots(id, file_path, file_hash, file_size, width, height,
    screen_id, app_name, window_title, created_at, processed_at,
    is_processed, event_id)``, ``ocr_results(id, screenshot_id,
    text_content, ...)``.
``2025-10``
    events gain ``ai_title`` and ``ai_summary``.
``2025-11`` (v1.0)
    events gain ``status``, ``task_id``, ``auto_association_attempted``,
    ``updated_at``, ``deleted_at``; screenshots gain ``file_deleted``,
    ``updated_at``, ``deleted_at``.
``processed``
    the ProAgentBench ``lifetrace_privacy_processed.db``: events add
    ``is_llm_event``, ``event_summary``, ``detailed_description``,
    ``conversation`` (JSON text) and optional model titles/summaries.

How rows become records (judgement calls are marked *):

* Events come oldest first (by start time, then row id); each carries its
  screenshots oldest first (by ``created_at``, then row id), with the OCR text
  of each screenshot joined from its ``ocr_results`` rows (row order, blank and
  repeated texts dropped*, joined with newlines).
* Soft-deleted rows (``deleted_at`` set and not blank) are not data: they are
  skipped, and so are screenshots of a skipped event. Screenshots with
  ``file_deleted = 1`` keep their row (metadata and OCR are still valid) but get
  ``path=None``*, because the image was removed on purpose.
* Screenshots whose ``event_id`` is NULL or names no live event are skipped
  and counted (``LifeTraceLog.n_orphan_screenshots``)*.
* The last event may be open (``end_time`` NULL): its ``end`` is ``None``. An
  earlier event with a NULL ``end_time`` (a crash of the capture app) ends
  where the next event starts*; the count is ``LifeTraceLog.n_filled_ends``.
* ``Event.summary`` is the first non-blank of ``event_summary``,
  ``ai_summary``, ``ai_title``, then any other ``*_summary`` and ``*_title``
  column (model outputs in processed DBs, in name order)*; ``description`` is
  ``detailed_description``. ``is_llm_event`` is ``None`` when the column is
  absent or NULL. ``conversation`` is parsed from its JSON text; NULL, blank
  or JSON ``null`` give ``None``; malformed JSON is a :class:`DataError`
  naming the event*.
* Screenshot files: ``file_path`` may be a capture-side absolute path (Windows
  or POSIX); only its file name is kept and resolved against the local
  screenshots folder, which is indexed once (recursively) with ``os.scandir``.
  A missing file gives ``path=None``, not an error. Without a screenshots
  folder, the capture-side folders named by ``file_path`` are tried instead
  when they exist here (each indexed once, not recursively), so a database
  read on the capture machine still finds its files*.
* Timestamps are naive local strings ``YYYY-MM-DD HH:MM:SS[.ffffff]`` (a ``T``
  separator and 1-9 fraction digits are accepted, extra digits truncated);
  anything else, including a time zone, is a :class:`DataError` naming the
  file, table, row id and column. A screenshot with a NULL ``created_at`` takes
  its time from its file name when the name carries one*.
* Annotations (see :mod:`proagent.sources.annotations`) add the intention
  (mapped to the taxonomy; unrecognised non-empty text becomes the
  taxonomy's fallback), its confidence and the LLM platform, and drop
  excluded events (the reasons are kept in ``LifeTraceLog.excluded``). An
  ``intention``/``user_intention`` or ``llm_platform`` column in the database
  is read the same way; annotations override it.
* Logs converted from other recorders (:mod:`.lifetrace_convert`) add ``url`` (the browser
  page) and ``screen_recorded`` (0 for ActivityWatch, which records no screen); both are read
  when present.

The database is opened read-only (``file:...?mode=ro``) and read completely
before anything is returned: on any error nothing is returned half-loaded.
Screenshot rows are kept as columns and each event's become records when first
used (:mod:`._lifetrace_shots`; ``len(event.screenshots)`` makes none); a
database with rows of other shapes than LifeTrace writes is read one record per
row. Both give equal events.
"""

from __future__ import annotations

import gc
import os
import re
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from ..errors import DataError
from ..records import Event, Screenshot
from ..taxonomy import Taxonomy, load_taxonomy
from ._foreign import EventLog
from ._lifetrace_shots import LazyScreenshots, ScreenshotColumns, read_columns
from ._lifetrace_values import (
    cell_flag,
    cell_int,
    cell_text,
    file_name_of,
    is_set,
    parse_conversation,
    parse_timestamp,
    row_key,
    time_from_file_name,
)
from .annotations import Annotations, load_annotations
from .lifetrace_schema import (
    DB_NAMES,
    EVENT_REQUIRED,
    INTENTION_COLUMNS,
    SCREENSHOT_REQUIRED,
    SQLITE_READ_ERRORS,
    SchemaInfo,
    Variant,
    connect_read_only,
    detect_schema,
    find_lifetrace_db,
    read_schema,
    sqlite_problem,
)

__all__ = [
    "DB_NAMES",
    "LifeTraceLog",
    "SchemaInfo",
    "Variant",
    "detect_schema",
    "find_lifetrace_db",
    "load_lifetrace",
    "parse_conversation",
    "parse_timestamp",
    "read_lifetrace",
]


@dataclass(frozen=True, kw_only=True)
class LifeTraceLog(EventLog):
    """One LifeTrace database read in full (``path``, ``user``, ``events`` without the excluded
    and soft-deleted ones, ``excluded``: :class:`~._foreign.EventLog`), plus what was skipped and why."""

    schema: SchemaInfo
    """Detected schema."""
    screenshots_dir: Path | None = None
    """Local screenshots folder used to resolve files (``None`` when none)."""
    n_deleted_events: int = 0
    """Soft-deleted events skipped."""
    n_deleted_screenshots: int = 0
    """Soft-deleted screenshots skipped (including those of deleted events)."""
    n_orphan_screenshots: int = 0
    """Screenshots skipped because their ``event_id`` is NULL or unknown."""
    n_missing_files: int = 0
    """Kept screenshots whose image file was not found locally (or was deleted)."""
    n_filled_ends: int = 0
    """Events other than the last whose NULL ``end_time`` was set to the next start."""

    @property
    def n_screenshots(self) -> int:
        """Screenshots kept, over all events."""
        return sum(len(e.screenshots) for e in self.events)


# --------------------------------------------------------------------------- files


def _index_dir(root: Path, index: dict[str, Path], *, recursive: bool = True) -> None:
    """Add every file under ``root`` to ``index`` (name -> path), in one
    ``os.scandir`` pass per folder; names sorted, the first found wins.
    Symbolic links to folders are not followed."""
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            with os.scandir(d) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for e in entries:
            try:
                if e.is_file():
                    index.setdefault(e.name, Path(e.path))
                elif recursive and e.is_dir(follow_symlinks=False):
                    subdirs.append(Path(e.path))
            except OSError:
                continue
        stack.extend(reversed(subdirs))


def _capture_dirs(file_paths: Iterable[str]) -> list[Path]:
    """Distinct capture-side folders that exist on this machine."""
    seen: dict[str, None] = {}
    for fp in file_paths:
        fp = fp.strip()
        pure = PureWindowsPath(fp) if ("\\" in fp or re.match(r"[A-Za-z]:", fp)) else PurePosixPath(fp)
        seen.setdefault(str(pure.parent), None)
    return [Path(d) for d in seen if d not in ("", ".") and Path(d).is_dir()]


# --------------------------------------------------------------------------- reading


def _bad(path: Path, table: str, row_id: Any, column: str, problem: str) -> DataError:
    return DataError(path, f"table {table}, row id {row_id}, column {column}: {problem}")


def _parsed(parse: Any, value: Any, path: Path, table: str, row_id: Any, column: str, note: str = "") -> Any:
    """``parse(value)``; its ValueError as a :class:`DataError` naming the cell."""
    try:
        return parse(value)
    except ValueError as e:
        raise _bad(path, table, row_id, column, f"{note}{e}") from None


def _select(
    conn: sqlite3.Connection, table: str, wanted: Iterable[str], have: frozenset[str], where: str = "", args: tuple = ()
) -> list[sqlite3.Row]:
    cols = [c for c in wanted if c in have]
    sql = f'SELECT {", ".join(chr(34) + c + chr(34) for c in cols)} FROM "{table}"{where}'
    return conn.execute(sql, args).fetchall()


def _canonical(raw: str | None, taxonomy: Taxonomy) -> str | None:
    if raw is None or not raw.strip():
        return None
    return taxonomy.canonical(raw) or taxonomy.fallback


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Pause Python's cycle collector: reading makes millions of short-lived, acyclic
    objects, and each full collection it triggers rescans every live object (a
    quarter of the reading time of a 1M-row database)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def load_lifetrace(
    db_path: str | Path,
    *,
    user: str | None = None,
    screenshots_dir: str | Path | None = None,
    annotations: Annotations | str | Path | Iterable[str | Path] | None = None,
    taxonomy: Taxonomy | None = None,
    min_event_id: int | None = None,
    resolve_files: bool = True,
) -> LifeTraceLog:
    """Read a LifeTrace database in full (see the module docstring for rules).

    Args:
        db_path: The ``.db`` file, or a participant folder holding one
            (:func:`find_lifetrace_db`).
        user: User id for the events (default: the name of the folder holding
            the database, as in ProAgentBench's one folder per participant).
        screenshots_dir: Local folder of screenshot images (default:
            ``<db folder>/screenshots`` when it exists, else the capture-side
            folders named by ``file_path`` when they exist here).
        annotations: Loaded :class:`Annotations`, or annotation file path(s)
            to load.
        taxonomy: Intention taxonomy for canonical names (default: bundled).
        min_event_id: Read only events with row id >= this, with their
            screenshots and OCR (a follower of a growing log reads its recent
            window this way, :mod:`proagent.live`); ``None`` reads everything.
        resolve_files: Index the screenshots folder to resolve image files;
            ``False`` leaves every ``Screenshot.path`` ``None`` (OCR and
            metadata are still read) and skips the folder scan.

    Returns:
        A :class:`LifeTraceLog` with the events oldest first.

    Raises:
        DataError: the database is missing, corrupt, foreign or incomplete
            (see :func:`detect_schema`); a timestamp, boolean flag or
            conversation JSON is malformed (the message names the table, row
            id and column); ``screenshots_dir`` is given but is not a folder;
            an annotation file is malformed.
    """
    with _no_cycle_collection():
        return _load(db_path, user, screenshots_dir, annotations, taxonomy, min_event_id, resolve_files)


def _load(
    db_path: str | Path,
    user: str | None,
    screenshots_dir: str | Path | None,
    annotations: Annotations | str | Path | Iterable[str | Path] | None,
    taxonomy: Taxonomy | None,
    min_event_id: int | None,
    resolve_files: bool,
) -> LifeTraceLog:
    path = find_lifetrace_db(db_path)
    if user is None:
        user = Path(os.path.abspath(path)).parent.name or path.stem
    if annotations is not None and not isinstance(annotations, Annotations):
        annotations = load_annotations(annotations)
    taxonomy = taxonomy or load_taxonomy()

    if resolve_files and screenshots_dir is not None and not Path(screenshots_dir).is_dir():
        raise DataError(screenshots_dir, "screenshots folder not found")
    default_dir = path.parent / "screenshots"
    want_dirs = resolve_files and screenshots_dir is None and not default_dir.is_dir()
    try:
        conn = connect_read_only(path)
        try:
            schema = read_schema(conn, path)
            ev_rows, shots, ocr_rows = _read_rows(conn, schema, min_event_id, want_dirs)
        finally:
            conn.close()
    except SQLITE_READ_ERRORS as e:
        raise DataError(path, sqlite_problem(e, path)) from None

    live, deleted_events, n_filled = _live_events(ev_rows, schema, path)
    live_ids = {e["rid"] for e in live}
    ocr = _ocr_texts(ocr_rows)
    index, shots_dir = _file_index(shots, screenshots_dir, default_dir) if resolve_files else ({}, None)
    if isinstance(shots, tuple):
        by_event, n_del_shots, n_orphans, n_missing = _column_runs(shots, live, deleted_events, ocr, index)
    else:
        by_event, n_del_shots, n_orphans, n_missing = _row_runs(
            path, schema, shots, live_ids, deleted_events, ocr, index
        )

    events, excluded = _event_records(live, by_event, user, annotations, taxonomy)
    return LifeTraceLog(
        path=path,
        user=user,
        schema=schema,
        events=tuple(events),
        screenshots_dir=shots_dir,
        n_deleted_events=len(deleted_events),
        n_deleted_screenshots=n_del_shots,
        n_orphan_screenshots=n_orphans,
        n_missing_files=n_missing,
        n_filled_ends=n_filled,
        excluded=excluded,
    )


def _live_events(
    ev_rows: list[sqlite3.Row], schema: SchemaInfo, path: Path
) -> tuple[list[dict[str, Any]], set[Any], int]:
    """The events not soft-deleted as dicts of parsed cells, by start; the soft-deleted ids; how
    many NULL ``end_time`` were filled with the next start.

    Raises:
        DataError: a bad cell (named by table, row id and column).
    """
    ev_cols = schema.event_columns
    summary_cols = schema.summary_columns
    intention_col = next((c for c in INTENTION_COLUMNS if c in ev_cols), None)
    live: list[dict[str, Any]] = []
    deleted_events: set[Any] = set()
    for r in ev_rows:
        rid = row_key(r["id"])
        if "deleted_at" in ev_cols and is_set(r["deleted_at"]):
            deleted_events.add(rid)
            continue
        start = _parsed(parse_timestamp, r["start_time"], path, "events", rid, "start_time")
        end = None
        if r["end_time"] is not None and cell_text(r["end_time"]) != "":
            end = _parsed(parse_timestamp, r["end_time"], path, "events", rid, "end_time")
            if end < start:
                raise _bad(
                    path,
                    "events",
                    rid,
                    "end_time",
                    f"{cell_text(r['end_time'])} is before start_time {cell_text(r['start_time'])}",
                )
        is_llm = None
        if "is_llm_event" in ev_cols:
            is_llm = _parsed(cell_flag, r["is_llm_event"], path, "events", rid, "is_llm_event")
        conv = None
        if "conversation" in ev_cols:
            conv = _parsed(parse_conversation, r["conversation"], path, "events", rid, "conversation", f"event {rid}: ")
        summary = next((t for t in (cell_text(r[c]) for c in summary_cols) if t), "")
        live.append(
            dict(
                rid=rid,
                start=start,
                end=end,
                app_name=cell_text(r["app_name"]),
                window_title=cell_text(r["window_title"]),
                summary=summary,
                description=cell_text(r["detailed_description"]) if "detailed_description" in ev_cols else "",
                is_llm_event=is_llm,
                conversation=conv,
                intention=(cell_text(r[intention_col]) or None) if intention_col else None,
                llm_platform=(cell_text(r["llm_platform"]) or None) if "llm_platform" in ev_cols else None,
                url=(cell_text(r["url"]) or None) if "url" in ev_cols else None,
                screen_recorded=(
                    _parsed(cell_flag, r["screen_recorded"], path, "events", rid, "screen_recorded") is not False
                )
                if "screen_recorded" in ev_cols
                else True,
            )
        )
    live.sort(key=lambda e: (e["start"], e["rid"]))
    n_filled = 0
    for cur, nxt in zip(live, live[1:]):
        if cur["end"] is None:
            cur["end"] = nxt["start"]
            n_filled += 1
    return live, deleted_events, n_filled


def _ocr_texts(ocr_rows: list[sqlite3.Row]) -> dict[Any, list[str]]:
    """Screenshot id -> its distinct OCR texts, in row order."""
    ocr: dict[Any, list[str]] = {}
    for r in ocr_rows:
        t = cell_text(r["text_content"])
        if t:
            texts = ocr.setdefault(row_key(r["screenshot_id"]), [])
            if t not in texts:
                texts.append(t)
    return ocr


def _file_index(
    shots: Any, screenshots_dir: str | Path | None, default_dir: Path
) -> tuple[dict[str, Path], Path | None]:
    """File name -> path of the screenshot files, and the folder they were found in: the given
    folder, else ``screenshots/`` beside the database, else the folders the rows name."""
    index: dict[str, Path] = {}
    shots_dir = (
        Path(screenshots_dir) if screenshots_dir is not None else (default_dir if default_dir.is_dir() else None)
    )
    if shots_dir is not None:
        _index_dir(shots_dir, index)
    else:
        if isinstance(shots, tuple):  # columns: their folders, and the soft-deleted rows' paths
            cols, gone = shots
            file_paths = [d + "x" for d in cols.dirs or ()] + [p for p in gone if p]
        else:
            file_paths = [r["file_path"] for r in shots if r["file_path"]]
        for d in _capture_dirs(cell_text(p) for p in file_paths):
            _index_dir(d, index, recursive=False)
    return index, shots_dir


def _event_records(
    live: list[dict[str, Any]], by_event: dict[Any, Any], user: str, annotations: Annotations | None, taxonomy: Taxonomy
) -> tuple[list[Event], dict[str, str]]:
    """The :class:`Event` records, with external annotations applied; the excluded event ids
    with their reasons."""
    events: list[Event] = []
    excluded: dict[str, str] = {}
    for e in live:
        eid = str(e["rid"])
        intention, confidence, platform = e["intention"], None, e["llm_platform"]
        if annotations is not None:
            ann = annotations.get(user, eid)
            if ann is not None:
                if ann.excluded is not None:
                    excluded[eid] = ann.excluded
                    continue
                intention = ann.intention if ann.intention is not None else intention
                confidence = ann.confidence
                platform = ann.llm_platform if ann.llm_platform is not None else platform
        events.append(
            Event(
                id=eid,
                user=user,
                start=e["start"],
                end=e["end"],
                app_name=e["app_name"],
                window_title=e["window_title"],
                summary=e["summary"],
                description=e["description"],
                screenshots=by_event.get(e["rid"], ()),
                is_llm_event=e["is_llm_event"],
                conversation=e["conversation"],
                intention=_canonical(intention, taxonomy),
                intention_confidence=confidence,
                llm_platform=platform,
                url=e["url"],
                screen_recorded=e["screen_recorded"],
            )
        )
    return events, excluded


def _row_runs(
    path: Path,
    schema: SchemaInfo,
    rows: list[sqlite3.Row],
    live_ids: set[Any],
    deleted_events: set[Any],
    ocr: dict[Any, list[str]],
    index: dict[str, Path],
) -> tuple[dict[Any, tuple[Screenshot, ...]], int, int, int]:
    """One record per screenshot row, every rule of the module docstring: ``(event row id ->
    its screenshots oldest first, soft-deleted, orphans, missing files)``."""
    sc_cols = schema.screenshot_columns
    by_event: dict[Any, list[Screenshot]] = {}
    n_del_shots = n_orphans = n_missing = 0
    for r in rows:
        rid = row_key(r["id"])
        eid = row_key(r["event_id"])
        if ("deleted_at" in sc_cols and is_set(r["deleted_at"])) or eid in deleted_events:
            n_del_shots += 1
            continue
        if eid is None or eid not in live_ids:
            n_orphans += 1
            continue
        name = file_name_of(cell_text(r["file_path"]))
        if r["created_at"] is None or cell_text(r["created_at"]) == "":
            t = time_from_file_name(name)
            if t is None:
                raise _bad(path, "screenshots", rid, "created_at", "NULL, and the file name carries no time")
        else:
            t = _parsed(parse_timestamp, r["created_at"], path, "screenshots", rid, "created_at")
        file_deleted = False
        if "file_deleted" in sc_cols:
            file_deleted = bool(_parsed(cell_flag, r["file_deleted"], path, "screenshots", rid, "file_deleted"))
        local = None if (file_deleted or not name) else index.get(name)
        if local is None:
            n_missing += 1
        by_event.setdefault(eid, []).append(
            Screenshot(
                id=rid,
                time=t,
                app_name=cell_text(r["app_name"]) if "app_name" in sc_cols else "",
                window_title=cell_text(r["window_title"]) if "window_title" in sc_cols else "",
                file_name=name,
                path=local,
                ocr_text="\n".join(ocr.get(rid, ())),
                width=cell_int(r["width"]) if "width" in sc_cols else None,
                height=cell_int(r["height"]) if "height" in sc_cols else None,
                file_hash=(cell_text(r["file_hash"]) or None) if "file_hash" in sc_cols else None,
                focused=_parsed(cell_flag, r["focused"], path, "screenshots", rid, "focused")
                if "focused" in sc_cols
                else None,
            )
        )
    runs = {eid: tuple(sorted(shots, key=lambda s: (s.time, s.id))) for eid, shots in by_event.items()}
    return runs, n_del_shots, n_orphans, n_missing


def _column_runs(
    shots: tuple[ScreenshotColumns, list[str]],
    live: list[dict[str, Any]],
    deleted_events: set[Any],
    ocr: dict[Any, list[str]],
    index: dict[str, Path],
) -> tuple[dict[Any, LazyScreenshots], int, int, int]:
    """As :func:`_row_runs`, from columns: each event's rows are one span of them."""
    cols, gone = shots
    cols.ocr = {k: "\n".join(v) for k, v in ocr.items()}
    cols.index = index
    runs: dict[Any, LazyScreenshots] = {}
    n_kept = n_missing = 0
    for e in live:
        lo, hi = cols.span(e["rid"])
        if hi > lo:
            runs[e["rid"]] = LazyScreenshots(cols, lo, hi)
            n_kept += hi - lo
            n_missing += cols.missing(lo, hi)
    n_of_deleted = sum(hi - lo for lo, hi in map(cols.span, deleted_events))
    return runs, len(gone) + n_of_deleted, len(cols) - n_kept - n_of_deleted, n_missing


def _read_rows(
    conn: sqlite3.Connection, schema: SchemaInfo, min_event_id: int | None = None, want_dirs: bool = False
) -> tuple[list[sqlite3.Row], tuple[ScreenshotColumns, list[str]] | list[sqlite3.Row], list[sqlite3.Row]]:
    """All rows needed, in one read transaction (only events with id >=
    ``min_event_id`` and their screenshots and OCR, when given): events, the
    screenshots as columns (:func:`~._lifetrace_shots.read_columns`) or else as rows, OCR."""
    conn.execute("BEGIN")
    factory = conn.text_factory
    conn.text_factory = str  # decoded in C; text that is not UTF-8 is read again, with replacement
    try:
        try:
            return _read_all(conn, schema, min_event_id, want_dirs)
        except sqlite3.OperationalError:
            conn.text_factory = factory
            return _read_all(conn, schema, min_event_id, want_dirs)
    finally:
        conn.text_factory = factory
        if conn.in_transaction:
            conn.execute("COMMIT")


def _read_all(
    conn: sqlite3.Connection, schema: SchemaInfo, min_event_id: int | None, want_dirs: bool
) -> tuple[list[sqlite3.Row], tuple[ScreenshotColumns, list[str]] | list[sqlite3.Row], list[sqlite3.Row]]:
    ev_want = (
        list(EVENT_REQUIRED)
        + [
            "deleted_at",
            "is_llm_event",
            "conversation",
            "detailed_description",
            "llm_platform",
            "url",
            "screen_recorded",
        ]
        + list(INTENTION_COLUMNS)
        + list(schema.summary_columns)
    )
    sc_want = list(SCREENSHOT_REQUIRED) + [
        "app_name",
        "window_title",
        "width",
        "height",
        "file_hash",
        "file_deleted",
        "deleted_at",
        "focused",
    ]
    ev_where = sc_where = ocr_where = ""
    args: tuple[int, ...] = ()
    if min_event_id is not None:
        ev_where, sc_where, args = " WHERE id >= ?", " WHERE event_id >= ?", (int(min_event_id),)
        ocr_where = ' WHERE screenshot_id IN (SELECT id FROM "screenshots" WHERE event_id >= ?)'
    ev = _select(conn, "events", dict.fromkeys(ev_want), schema.event_columns, ev_where, args)
    sc: tuple[ScreenshotColumns, list[str]] | list[sqlite3.Row] | None = read_columns(
        conn, schema, None if min_event_id is None else int(min_event_id), want_dirs=want_dirs
    )
    if sc is None:
        sc = _select(conn, "screenshots", sc_want, schema.screenshot_columns, sc_where, args)
    ocr: list[sqlite3.Row] = []
    if schema.has_ocr:
        order = " ORDER BY id" if "id" in schema.ocr_columns else ""
        ocr = conn.execute(f'SELECT screenshot_id, text_content FROM "ocr_results"{ocr_where}{order}', args).fetchall()
    return ev, sc, ocr


def read_lifetrace(db_path: str | Path, **options: Any) -> list[Event]:
    """Read a LifeTrace database into events, oldest first.

    Same keyword arguments and errors as :func:`load_lifetrace`, which also
    reports what was skipped; this returns only the events.
    """
    return list(load_lifetrace(db_path, **options).events)
