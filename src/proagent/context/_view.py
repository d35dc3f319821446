"""The activity log as the MCP server sees it: read once, followed as it grows, every event
made safe to show (blocked or redacted) and embedded once, into a search index cached privately.

* **Reading.** The log is opened as ``proagent live --watch`` opens it
  (:func:`proagent.live.open_follower`: a capture folder, a LifeTrace, ActivityWatch or screenpipe
  database, an encrypted capture through :mod:`proagent.vault`), or read once when it does not
  grow (an ActivityWatch JSON export). The follower's ``PRAGMA data_version`` check tells whether
  a writer committed; only then is the recent end of the log read again with the project's
  reader (LifeTrace: from the oldest still-open event's row id; others: from the newest event's
  start minus :data:`REREAD_SECONDS`), and changed or new events are processed again.
* **Privacy.** An event whose app or title matches a ``--block-app`` / ``--block-title`` rule
  (live's :class:`~proagent.live.Restraint` rules, whole-word app names, case-insensitive title
  regexes) is withheld everywhere: not shown, not embedded, only counted. Titles, summaries and
  screen text pass :func:`proagent.curate.clean_text` (typed placeholders such as ``[EMAIL]``)
  unless ``raw``; the index embeds the text as shown, so a search cannot match on a redacted value.
* **Index.** The first read only redacts (tools answer at once); a background poller then embeds
  the events newest first, :data:`EMBED_BATCH` at a time, and a search embeds whatever is still
  pending before it ranks. One e5 vector per event (:func:`proagent.agent.memory.rag.embed_texts`, the RAG
  memory's embedder), searched with the RAG memory's faiss index (:func:`~proagent.agent.memory.rag.vector_index`,
  exact below 8192 vectors). Processed events are cached under ``STATE/.mcp/`` (0700; the file
  0600: it holds redacted text) by a hash of their raw fields, so a restart embeds nothing again;
  not for an encrypted capture (:func:`proagent.vault.vault_of`), whose text stays in memory only.
"""

from __future__ import annotations

import hashlib
import io
import json
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import urlparse

import numpy as np

from ..errors import DataError
from ..io import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, write_atomic
from ..records import Event
from ..sources.lifetrace_schema import sqlite_problem

__all__ = ["MAX_TEXT", "REREAD_SECONDS", "ActivityView", "Entry", "Poller"]

MAX_TEXT = 2000
"""Characters of an event's screen text kept (and shown at most) per event."""
EMBED_CHARS = 500
"""Characters of an event's text given to the embedder: e5-small's cost grows with the text
(about 0.3 s of one core for 500 characters, 0.55 s for 1000, measured on the 2-core reference
machine), and a screen's first lines carry most of what it is about (this project's choice)."""
REREAD_SECONDS = 900.0
"""How far before the newest event a growing ActivityWatch / screenpipe log is read again
(seconds): ActivityWatch extends its newest rows in place (this project's choice)."""
EMBED_BATCH = 8
"""Events the background poller embeds per step (a tool call waits for the view's lock only
while the log is read, never while embedding)."""
_CACHE_VERSION = 1


@dataclass(frozen=True)
class Entry:
    """One event as the server shows it (already redacted unless raw), with its vector's row."""

    event: Event
    key: str
    """Hash of the raw fields the entry was made from (a changed event is processed again)."""
    blocked: bool
    title: str = ""
    summary: str = ""
    text: str = ""
    """Screen text of the focused screen's latest screenshot (cut to :data:`MAX_TEXT`)."""
    shot_time: datetime | None = None
    host: str | None = None
    vector: np.ndarray | None = None

    @property
    def start(self) -> datetime:
        return self.event.start

    @property
    def last_time(self) -> datetime:
        """The newest time the event covers (its end, latest screenshot, or start)."""
        return max(t for t in (self.event.end, self.shot_time, self.event.start) if t is not None)


def _screen(e: Event) -> tuple[str, datetime | None]:
    shots = e.focused_screenshots
    if not shots:
        return "", None
    for s in reversed(shots):  # the latest screenshot that has OCR text, else the latest
        if s.ocr_text.strip():
            return s.ocr_text, s.time
    return "", shots[-1].time


def _host(url: str | None) -> str | None:
    if not url:
        return None
    try:
        return urlparse(url).hostname or None
    except ValueError:
        return None


def _key(e: Event, text: str) -> str:
    h = hashlib.sha256()
    for part in (
        e.app_name,
        e.window_title,
        e.summary,
        text,
        str(e.end),
        e.url or "",
        str(e.intention),
        str(e.is_llm_event),
    ):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()[:32]


class ActivityView:
    """The followed log, its redacted entries and their search index (thread-safe).

    Args:
        path: The log (capture folder, database, ActivityWatch export...).
        raw: Show titles and screen text unredacted.
        block_apps, block_titles: live's ``--block-app`` / ``--block-title`` rules.
        state: Folder of the private cache (``STATE/.mcp/``); ``None`` keeps nothing on disk.
        clean: The redactor (default :func:`proagent.curate.clean_text`).

    Raises:
        DataError: ``path`` is not a log proagent reads, is unreadable, or is an encrypted
            capture whose key is not available.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        raw: bool = False,
        block_apps: tuple[str, ...] = (),
        block_titles: tuple[str, ...] = (),
        state: Path | None = None,
        clean: Callable[[str], str] | None = None,
    ) -> None:
        from ..live import Restraint, RestraintConfig

        self.path = Path(path)
        self.raw = raw
        self._restraint = Restraint(
            RestraintConfig(block_apps=tuple(block_apps), block_titles=tuple(block_titles), quiet_apps=False)
        )
        if clean is None and not raw:
            from ..curate import clean_text as clean
        self._clean = clean
        self._lock = threading.RLock()
        self._embed_lock = threading.Lock()
        self._entries: dict[str, Entry] = {}
        self._order: list[Entry] = []
        self._index = None  # faiss index over self._indexed
        self._vecs = np.zeros((0, 384), np.float32)
        self._indexed: list[Entry] = []
        self._dirty = True
        self._cache_dir = state / ".mcp" if state is not None else None
        self._cache: dict[str, dict] = {}
        self._cache_vecs: dict[str, np.ndarray] = {}
        self._cache_changed = False
        self._unsaved = 0
        self.follower = None
        self.kind = ""
        self.static_log = False
        self._identity: tuple[int, int] | None = None
        self.gone: str | None = None
        """Why the log can no longer be served (deleted while serving), or ``None``."""
        self._open()
        from ..vault import vault_of

        if vault_of(self.path) is not None:
            self._cache_dir = None  # an encrypted capture: no screen text, even redacted, in plain files
        self._load_cache()
        self.loaded = False

    # ------------------------------------------------------------------ reading

    def _open(self) -> None:
        from ..live import open_follower
        from ..sources.load import activity_log_kind, is_sqlite_file

        p = self.path
        if not p.exists():
            raise DataError(p, "no such file or folder")
        if p.is_file() and not is_sqlite_file(p):
            if activity_log_kind(p) != "activitywatch":
                raise DataError(
                    p,
                    "not an activity log proagent reads (a capture folder, a LifeTrace, "
                    "ActivityWatch or screenpipe database, or an ActivityWatch export)",
                )
            self.kind, self.static_log = "activitywatch", True
            return
        self.follower = open_follower(p)
        self._identity = _identity(self.follower.path)
        self.kind = (
            "lifetrace"
            if type(self.follower).__name__ == "LifeTraceFollower"
            else activity_log_kind(self.follower.path)
        )

    def _read(self, full: bool) -> list[Event]:
        from ..sources.lifetrace import load_lifetrace
        from ..sources.load import load_activity_log

        if self.static_log:
            return list(load_activity_log(self.path).events)
        db = self.follower.path
        if self.kind == "lifetrace":
            lo = None
            if not full and self._order:
                open_ids = [int(x.event.id) for x in self._order[-3:]] + [
                    int(x.event.id) for x in self._order if x.event.end is None
                ]
                lo = min(open_ids)
            return list(load_lifetrace(db, min_event_id=lo, resolve_files=False).events)
        since = None
        if not full and self._order:
            since = max(x.start for x in self._order) - timedelta(seconds=REREAD_SECONDS)
        return list(load_activity_log(db, since=since).events)

    def refresh(self) -> bool:
        """Read what the log gained since the last look (nothing when no writer committed);
        ``True`` when entries changed.

        Raises:
            DataError: the log became unreadable (deleted, damaged, key gone).
        """
        with self._lock:
            self._check_there()
            full = not self.loaded
            try:
                if not full and (self.static_log or not self.follower.changed()):
                    return False
                if full and self.follower is not None:
                    self.follower.changed()  # the baseline of data_version
                events = self._read(full)
            except sqlite3.Error as e:
                db = self.follower.path if self.follower is not None else self.path
                raise DataError(db, sqlite_problem(e, db)) from None
            except OSError as e:
                raise DataError(self.path, f"cannot read the log ({e.strerror or e})") from None
            if full:
                self._entries.clear()
            elif self.kind == "lifetrace" and events:
                # rows read again that are gone now (soft-deleted) leave the view
                lo = min(int(e.id) for e in events)
                seen = {e.id for e in events}
                for eid in [k for k in self._entries if int(k) >= lo and k not in seen]:
                    del self._entries[eid]
            changed = self._ingest(events)
            self.loaded = True
            if changed or full:
                self._order = sorted(self._entries.values(), key=lambda x: (x.start, x.event.id))
                self._dirty = True
            if self._cache_changed:
                self._save_cache()
            return changed

    def _forget(self) -> None:
        """Drop every entry and the index (the log they came from is gone or was replaced)."""
        self._entries.clear()
        self._order = []
        self._indexed = []
        self._index = None
        self._vecs = np.zeros((0, 384), np.float32)
        self._dirty = True
        self.loaded = False

    def _check_there(self) -> None:
        """Refuse to serve from memory a log that was deleted; open again one that was replaced.

        The follower's connection keeps a deleted database file readable (its inode stays
        open), so without this check the tools would go on answering from a log the person
        deleted. A database file replaced by another (a new inode: restored from a backup,
        moved over) is opened again and read whole; the old entries are dropped first.

        Raises:
            DataError: the log (or its database file) is gone, or the replacement cannot be read.
        """
        if self.static_log:
            there = self.path.exists()
        else:
            there = self.path.exists() and _identity(self.follower.path) is not None
        if not there:
            if self.gone is None:
                self.gone = "the log is gone (deleted while the server ran): its events are no longer served"
                self._forget()
                if self.follower is not None:
                    self.follower.close()
            raise DataError(self.path, self.gone)
        if self.gone is not None or (self.follower is not None and _identity(self.follower.path) != self._identity):
            # back, or replaced by another file: forget the old one and read the new one whole
            self._forget()
            old, self.follower = self.follower, None
            if old is not None:
                old.close()
            try:
                self._open()
            except DataError as e:
                self.gone = f"the log was replaced by something that cannot be read ({e.problem})"
                self.follower = old  # closed; checked again at the next call
                raise DataError(self.path, self.gone) from None
            self.gone = None

    def _ingest(self, events: list[Event]) -> bool:
        new: list[tuple[Event, str, str, datetime | None]] = []
        for e in events:
            text, shot_time = _screen(e)
            key = _key(e, text)
            old = self._entries.get(e.id)
            if old is not None and old.key == key:
                continue
            new.append((e, key, text, shot_time))
        if not new:
            return False
        made: list[Entry] = []
        for e, key, text, shot_time in new:
            blocked = self._restraint.before(e, e.start) == "blocked_app"
            if blocked:
                made.append(Entry(e, key, True, shot_time=shot_time))
                continue
            c = self._cache.get(key)
            if c is not None and key in self._cache_vecs:
                made.append(
                    Entry(
                        e,
                        key,
                        False,
                        c["title"],
                        c["summary"],
                        c["text"],
                        shot_time,
                        _host(e.url),
                        self._cache_vecs[key],
                    )
                )
                continue
            made.append(
                Entry(
                    e,
                    key,
                    False,
                    self._show(e.window_title),
                    self._show(e.summary),
                    self._show(text[:MAX_TEXT]),
                    shot_time,
                    _host(e.url),
                )
            )
        for m in made:
            self._entries[m.event.id] = m
        return True

    def pending(self) -> int:
        """Shown events not embedded yet."""
        with self._lock:
            return sum(1 for m in self._order if not m.blocked and m.vector is None)

    def embed_pending(self, limit: int | None = None) -> int:
        """Embed up to ``limit`` (``None``: all) shown events that have no vector yet, newest
        first, outside the view's lock (tool calls go on meanwhile); returns how many. One caller
        embeds at a time (the poller in the background, a search that needs them all)."""
        from ..agent.memory.rag import embed_texts

        with self._embed_lock:
            with self._lock:
                todo = [m for m in reversed(self._order) if not m.blocked and m.vector is None][:limit]
            if not todo:
                return 0
            vecs = embed_texts([_document(m) for m in todo])
            with self._lock:
                for m, v in zip(todo, vecs):
                    cur = self._entries.get(m.event.id)
                    if cur is None or cur.key != m.key:
                        continue  # changed meanwhile: embedded again later
                    self._entries[m.event.id] = Entry(
                        m.event, m.key, False, m.title, m.summary, m.text, m.shot_time, m.host, v
                    )
                    self._cache[m.key] = {"title": m.title, "summary": m.summary, "text": m.text}
                    self._cache_vecs[m.key] = v
                self._order = sorted(self._entries.values(), key=lambda x: (x.start, x.event.id))
                self._dirty = True
                self._cache_changed = True
                self._unsaved += len(todo)
                if self._unsaved >= 256 or not any(not m.blocked and m.vector is None for m in self._order):
                    self._save_cache()  # done, or a long first build: kept as it goes
            return len(todo)

    @property
    def cache_dir(self) -> Path | None:
        """The private folder of the server's caches (``None`` for an encrypted capture: nothing in plain files)."""
        return self._cache_dir

    def redact(self, text: str) -> str:
        """``text`` with PII replaced by typed placeholders (curate's recognizers), also under ``--raw``."""
        if not (text or "").strip():
            return text or ""
        if self._clean is None:
            from ..curate import clean_text

            return clean_text(text)
        return self._clean(text)

    def _show(self, text: str) -> str:
        text = text or ""
        if self.raw or not text.strip():
            return text
        return self._clean(text)

    # ------------------------------------------------------------------ cache

    def _cache_file(self) -> Path | None:
        if self._cache_dir is None:
            return None
        return self._cache_dir / f"index-{'raw' if self.raw else 'redacted'}.npz"

    def _load_cache(self) -> None:
        f = self._cache_file()
        if f is None or not f.is_file():
            return
        try:
            with np.load(f, allow_pickle=False) as z:
                meta = json.loads(bytes(z["meta"]).decode("utf-8"))
                vecs = np.asarray(z["vectors"], dtype=np.float32)
            if meta.get("version") != _CACHE_VERSION or len(meta["keys"]) != len(vecs):
                return
            self._cache = dict(zip(meta["keys"], meta["entries"]))
            self._cache_vecs = dict(zip(meta["keys"], vecs))
        except (OSError, ValueError, KeyError, json.JSONDecodeError):
            self._cache, self._cache_vecs = {}, {}  # a damaged cache is rebuilt

    def _save_cache(self) -> None:
        f = self._cache_file()
        self._cache_changed = False
        self._unsaved = 0
        if f is None:
            return
        live = {m.key for m in self._entries.values() if not m.blocked}
        keys = [k for k in self._cache if k in live and k in self._cache_vecs]
        self._cache = {k: self._cache[k] for k in keys}
        self._cache_vecs = {k: self._cache_vecs[k] for k in keys}
        meta = {"version": _CACHE_VERSION, "keys": keys, "entries": [self._cache[k] for k in keys]}
        buf = io.BytesIO()
        vecs = np.stack([self._cache_vecs[k] for k in keys]) if keys else np.zeros((0, 384), np.float32)
        np.savez(
            buf, vectors=vecs, meta=np.frombuffer(json.dumps(meta, ensure_ascii=False).encode("utf-8"), dtype=np.uint8)
        )
        f.parent.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
        f.parent.chmod(PRIVATE_DIR_MODE)
        write_atomic(f, buf.getvalue(), mode=PRIVATE_FILE_MODE)

    # ------------------------------------------------------------------ queries

    def entries(self) -> list[Entry]:
        """Every entry, oldest first (blocked ones included: callers count and skip them)."""
        with self._lock:
            return list(self._order)

    def newest(self) -> Entry | None:
        """The event in front now: the one with the latest start."""
        with self._lock:
            return self._order[-1] if self._order else None

    def search(
        self, query_vector: np.ndarray, k: int, keep: Callable[[Entry], bool]
    ) -> tuple[list[tuple[Entry, float]], int]:
        """The ``k`` entries closest to ``query_vector`` among unblocked ones that ``keep``
        accepts, best first, and how many were eligible. Uses the RAG memory's faiss index
        (:func:`~proagent.agent.memory.rag.search`) over every indexed event; when filters leave
        fewer than ``k`` of its candidates, the eligible ones are ranked exactly."""
        from ..agent.memory.rag import search, vector_index

        self.embed_pending()  # complete answers: what the poller has not embedded yet, now
        with self._lock:
            if self._dirty:
                self._indexed = [m for m in self._order if not m.blocked and m.vector is not None]
                vecs = np.stack([m.vector for m in self._indexed]) if self._indexed else np.zeros((0, 384), np.float32)
                self._index = vector_index(vecs)
                self._vecs = vecs
                self._dirty = False
            indexed, index, vecs = self._indexed, self._index, self._vecs
        eligible = [i for i, m in enumerate(indexed) if keep(m)]
        if not eligible or k <= 0:
            return [], len(eligible)
        if len(eligible) == len(indexed):
            hits = search(index, query_vector, k)
        else:
            wanted = set(eligible)
            hits = [h for h in search(index, query_vector, min(len(indexed), max(4 * k, 64))) if h[0] in wanted][:k]
            if len(hits) < min(k, len(eligible)):  # filters too narrow for the approximate pass: exact
                sub = np.asarray(eligible)
                scores = vecs[sub] @ np.asarray(query_vector, dtype=np.float32)
                top = np.argsort(-scores, kind="stable")[:k]
                hits = [(int(sub[j]), float(scores[j])) for j in top]
        return [(indexed[i], float(s)) for i, s in hits], len(eligible)

    def indexed_count(self) -> int:
        with self._lock:
            return sum(1 for m in self._order if not m.blocked and m.vector is not None)

    def close(self) -> None:
        if self.follower is not None:
            self.follower.close()


def _identity(path: Path) -> tuple[int, int] | None:
    """The file's device and inode (``None`` when it is gone): a replaced file has a new one."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _document(m: Entry) -> str:
    """What is embedded for an entry (the text as shown)."""
    parts = [m.event.app_name, m.title, m.summary, m.text[:EMBED_CHARS]]
    return " | ".join(p for p in parts if p and p.strip())


class Poller:
    """Refreshes a view every ``seconds`` in a daemon thread, so tool calls find the log read
    (errors are kept for the next tool call to report)."""

    def __init__(self, view: ActivityView, seconds: float = 2.0) -> None:
        self.view = view
        self.seconds = seconds
        self.error: DataError | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="proagent-mcp-poll", daemon=True)

    def start(self) -> Poller:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            t = time.monotonic()
            try:
                self.view.refresh()
                if self.view.embed_pending(EMBED_BATCH):
                    continue  # more to embed: no pause
                self.error = None
            except DataError as e:
                self.error = e
            self._stop.wait(max(0.1, self.seconds - (time.monotonic() - t)))

    def stop(self) -> None:
        self._stop.set()
