"""Read a recorded day: the log's events through the ``sources`` readers, ``annotations.jsonl``
through annotate's record, live's ``feedback.db`` through :class:`proagent.live.FeedbackStore`,
and the curated copy of each screenshot (matched by file name, as curate keeps it)."""

from __future__ import annotations

import bisect
import json
import threading
from collections.abc import Callable, Iterable
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ..errors import DataError, UsageError
from ..live_files import FEEDBACK_DB
from ..records import Event
from .records import Day, ShownAnnotation, ShownEvent, ShownLabel, ShownOffer, ShownShot

__all__ = ["load_day", "log_days"]

MAX_LIVE_ROWS = 100_000
"""Offers, implicit labels and questions read from ``feedback.db`` at most (a year of a busy
live run is a few thousand)."""


def _databases(path: Path) -> list[Path]:
    """The logs under ``path`` the readers take, without live's own ``feedback.db``."""
    from ..sources.load import find_databases, recorder_folder_db

    if path.is_file():
        return [path]
    own = recorder_folder_db(path)  # a recorder's own folder (~/.screenpipe)
    if own is not None:
        return [own]
    try:
        return [p for p in find_databases(path) if p.name != FEEDBACK_DB]
    except OSError as e:
        raise DataError(path, f"cannot read this folder ({e.strerror or e})") from None


def _read_events(path: Path) -> tuple[str, list[Event]]:
    """The log's format and every event under ``path``.

    Raises:
        DataError: as :func:`proagent.sources.load_events` (nothing readable, a corrupt file).
    """
    from ..sources.lifetrace import load_lifetrace
    from ..sources.load import LIFETRACE, activity_log_kind, load_activity_log, load_events

    if not path.exists():
        raise DataError(path, "no such file or folder")
    dbs = _databases(path)
    if not dbs:
        return "proactivebench", load_events(path)  # a session folder, or the readers' own "nothing here" line
    kinds, events = [], []
    for db in dbs:
        kind = activity_log_kind(db)
        log: Any = load_lifetrace(db) if kind == LIFETRACE else load_activity_log(db)
        kinds.append(getattr(log, "kind", kind))
        events.extend(log.events)
    return "+".join(dict.fromkeys(kinds)), events


def _annotations(path: Path) -> tuple[Path | None, dict[tuple[str, str], ShownAnnotation]]:
    """``annotations.jsonl`` beside the log (an ``annotate --out`` folder), by (user, event id).

    Raises:
        DataError: a line is not an annotation record (naming the line).
    """
    from ..annotate.records import EventAnnotation
    from ..annotate.writer import ANNOTATIONS_FILE

    folder = path if path.is_dir() else path.parent
    found = [p for p in (folder / ANNOTATIONS_FILE, folder.parent / ANNOTATIONS_FILE) if p.is_file()]
    if not found:
        return None, {}
    file, out = found[0], {}
    try:
        lines = file.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(file, f"cannot read the annotations ({e.__class__.__name__}: {e})") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            a = EventAnnotation.from_json(json.loads(line))
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            raise DataError(file, f"line {n} is not an annotation record ({e.__class__.__name__}: {e})") from None
        out[(a.user, a.event_id)] = ShownAnnotation(a.status, a.confidence, a.rationale, a.evidence, a.error)
    return file, out


def _live(live: Path) -> tuple[list[ShownOffer], list[ShownLabel]]:
    """Offers (with the latest answer), implicit labels and questions of a live folder's
    ``feedback.db``, read through :class:`proagent.live.FeedbackStore`.

    Raises:
        DataError: not a usable ``feedback.db``.
    """
    from ..live import FeedbackStore

    store = FeedbackStore(live.parent if live.name == FEEDBACK_DB else live)
    try:
        offers = [
            ShownOffer(
                id=int(o["id"]),
                moment=datetime.fromisoformat(o["moment"]),
                text=o["text"] or "",
                query=o["query"],
                intention=o["intention"],
                p_help=o["p_help"],
                app_name=o["app_name"] or "",
                response=o["response"],
            )
            for o in store.offers(limit=MAX_LIVE_ROWS)
        ]
        labels = [
            ShownLabel("implicit", datetime.fromisoformat(r["moment"]), r["response"], r["label"], r["weight"])
            for r in store.implicit_since(0)
        ]
        labels += [
            ShownLabel(
                "question",
                datetime.fromisoformat(q["moment"]),
                q["answer"],
                None if q["answer"] is None else int(q["answer"] == "yes"),
            )
            for q in store.questions(limit=MAX_LIVE_ROWS)
        ]
    finally:
        store.close()
    return sorted(offers, key=lambda o: o.moment), sorted(labels, key=lambda x: x.moment)


def _curated_files(curated: Path) -> dict[str, Path]:
    """Screenshot file name -> its curated copy under ``curated/<user>/screenshots/``.

    Raises:
        DataError: ``curated`` is not a curate output.
    """
    if not (curated / ".curate" / "manifest.json").is_file():
        raise DataError(curated, "not a curate output (no .curate/manifest.json); give proagent curate's --out")
    return {p.name: p for p in sorted(curated.glob("*/screenshots/*")) if p.is_file()}


def log_days(events: Iterable[Event]) -> tuple[date, ...]:
    """The days events start on, oldest first."""
    return tuple(sorted({e.start.date() for e in events}))


def _parse_day(text: str | None, days: tuple[date, ...]) -> date:
    if not days:
        raise UsageError("DIR", "the log holds no events")
    if text is None:
        return days[-1]
    try:
        d = date.fromisoformat(text.strip())
    except ValueError:
        raise UsageError("--day", f"{text!r} is not a day (YYYY-MM-DD)") from None
    if d not in days:
        shown = ", ".join(x.isoformat() for x in days[-5:])
        raise UsageError("--day", f"{d} has no events (days with events, the last {min(5, len(days))}: {shown})")
    return d


def _place(starts: list[datetime], ends: list[datetime | None], t: datetime) -> int | None:
    """The index of the event holding moment ``t`` (started at or before it, and not ended
    before it, else the last one started before it when no later one started), or ``None``."""
    k = bisect.bisect_right(starts, t) - 1
    if k < 0:
        return None
    end = ends[k]
    if end is None or t <= end or k == len(starts) - 1 or t < starts[k + 1]:
        return k
    return None


def load_day(
    path: str | Path,
    *,
    day: str | None = None,
    user: str | None = None,
    curated: str | Path | None = None,
    live: str | Path | None = None,
    redact: bool = False,
    clean: Callable[[str], str] | None = None,
) -> Day:
    """Read one day of the log at ``path`` with what every stage wrote about it.

    Args:
        path: A capture folder, a curate or annotate output, a LifeTrace database, an
            ActivityWatch or screenpipe log (anything :func:`proagent.sources.load_events` reads).
        day: ``YYYY-MM-DD`` (default: the last day with events).
        user: Only this participant's events (a folder of several).
        curated: A curate output of the same capture: each screenshot is shown as curate kept
            it (blurred), or not at all where curate deleted it.
        live: A live folder or its ``feedback.db`` (default: ``path``'s own, when it has one).
        redact: Show titles, screen text, conversations and offers through curate's PII
            recognizers (:func:`proagent.curate.clean_text`: ``[EMAIL]``...): the records keep
            the text as recorded and :meth:`Day.shown` redacts each text when it is first shown
            or searched (a day's thousands of screen texts would take minutes up front).
        clean: The redactor (default :func:`proagent.curate.clean_text`).

    Raises:
        DataError: the log, ``annotations.jsonl``, ``feedback.db`` or ``curated`` cannot be read.
        UsageError: ``day`` is not a date with events, ``user`` has none.
    """
    path = Path(path).expanduser()
    kind, events = _read_events(path)
    if user is not None:
        users = sorted({e.user for e in events})
        events = [e for e in events if e.user == user]
        if not events:
            raise UsageError("--user", f"{user!r} has no events here (users: {', '.join(users)})")
    all_days = log_days(events)
    d = _parse_day(day, all_days)
    events = sorted((e for e in events if e.start.date() == d), key=lambda e: (e.start, e.user, e.id))

    shown: Callable[[str], str] | None = None
    if redact:
        from ..curate import clean_text

        shown = _memo(clean if clean is not None else clean_text)

    ann_file, notes = _annotations(path)
    live_db: Path | None = None
    offers: list[ShownOffer] = []
    labels: list[ShownLabel] = []
    if live is None:
        own = (path if path.is_dir() else path.parent) / FEEDBACK_DB
        live = own if own.is_file() else None
    if live is not None:
        live_db = Path(live).expanduser()
        live_db = live_db if live_db.name == FEEDBACK_DB else live_db / FEEDBACK_DB
        if not live_db.is_file():
            raise DataError(live_db, "no feedback database (run proagent live first)", option="--live")
        offers, labels = _live(live_db)
        offers = [o for o in offers if o.moment.date() == d]
        labels = [x for x in labels if x.moment.date() == d]
    cur_dir = Path(curated).expanduser() if curated is not None else None
    cur_files = _curated_files(cur_dir) if cur_dir is not None else {}

    starts = [e.start for e in events]
    ends = [e.end for e in events]
    by_event: dict[int, list[ShownOffer]] = {}
    unplaced: list[ShownOffer] = []
    for o in offers:
        k = _place(starts, ends, o.moment)
        if k is None:
            unplaced.append(o)
        else:
            by_event.setdefault(k, []).append(o)
    labels_by: dict[int, list[ShownLabel]] = {}
    for lab in labels:
        k = _place(starts, ends, lab.moment)
        if k is not None:
            labels_by.setdefault(k, []).append(lab)

    images: list[Path | None] = []
    rows: list[ShownEvent] = []
    for i, e in enumerate(events):
        shots = []
        for s in e.screenshots:
            img: Path | None = s.path if s.path is not None and s.path.is_file() else None
            is_cur = removed = False
            if cur_dir is not None and img is not None:
                img = cur_files.get(s.file_name)
                is_cur, removed = img is not None, img is None
            shots.append(ShownShot(len(images), s.time, s.ocr_text or "", img is not None, is_cur, removed))
            images.append(img)
        conv = e.conversation
        rows.append(
            ShownEvent(
                index=i,
                id=e.id,
                user=e.user,
                start=e.start,
                end=e.end,
                app=e.app_name,
                title=e.window_title,
                url=e.url,
                summary=e.summary,
                description=e.description,
                llm=bool(e.is_llm_event) or bool(conv and conv.user_queries),
                platform=e.llm_platform,
                intention=e.intention,
                queries=tuple(conv.user_queries if conv else ()),
                responses=tuple(conv.llm_responses if conv else ()),
                annotation=notes.get((e.user, e.id)),
                shots=tuple(shots),
                offers=tuple(by_event.get(i, ())),
                labels=tuple(labels_by.get(i, ())),
            )
        )
    return Day(
        path=path,
        kind=kind,
        day=d,
        days=all_days,
        events=tuple(rows),
        images=tuple(images),
        live=live_db,
        annotations=ann_file,
        curated=cur_dir,
        unplaced=tuple(unplaced),
        redactor=shown,
    )


def _memo(clean: Callable[[str], str]) -> Callable[[str], str]:
    """``clean`` remembering its answers (a day's screens repeat the same texts), thread-safe."""
    memo: dict[str, str] = {}
    lock = threading.Lock()

    def shown(text: str) -> str:
        if not text:
            return text
        with lock:
            got = memo.get(text)
        if got is None:
            got = clean(text)
            with lock:
                memo[text] = got
        return got

    return shown
