"""Memory records: what long-term memory is built from (ProAgentBench section 6.4).

A :class:`MemoryRecord` is one past event of one user, reduced to what memory
needs: application, window title, activity text, whether the moment led to an
LLM request (or needed help), the intention and query of that request, and
``known_at``, the moment from which everything in the record was observable.

Leakage rules, enforced here and again at retrieval:

* records are built per user from the **training period** only: every field is
  known strictly before the user's first test moment (``cutoff``);
* at inference for a moment t only records with ``known_at < t`` may be used.

Where the source lacks apps, titles or intentions (ProactiveBench sessions are
one sentence per step), :func:`derive_fields` reads them from the sentence:
known application names (``Visual Studio Code``, ``Code.exe``, browser/search
words) and quoted phrases as window-like titles. Each record lists the fields it
derived in ``derived``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

from ...records import Event, Sample

__all__ = [
    "MemoryQuery",
    "MemoryRecord",
    "derive_fields",
    "query_for",
    "records_fingerprint",
    "train_cutoffs",
    "train_records",
]


@dataclass(frozen=True)
class MemoryRecord:
    """One past event of one user as memory sees it."""

    id: str
    """``{user}:{event_id}``, unique across users."""
    user: str
    """Owner; memory never crosses users."""
    time: datetime
    """Start of the event (t_i)."""
    known_at: datetime
    """When every field of the record was observable (>= ``time``): the start of
    the next event when ``needs_help`` comes from it, else the event start."""
    app: str
    """Application (possibly derived from text, see ``derived``)."""
    title: str
    """Window title (possibly derived)."""
    activity: str
    """What the user did (event summary or sentence), may be empty."""
    is_llm: bool | None = None
    """The user was using an LLM in this event (ProactiveBench: derived from the
    help label)."""
    needs_help: bool | None = None
    """The moment led to help: the next event was an LLM use (LifeTrace), or the
    source's help label (ProactiveBench); ``None`` when unknown."""
    intention: str | None = None
    """Intention of the LLM request made at or right after this event."""
    query: str | None = None
    """The user's query (or the reference help offer) at that request."""
    derived: tuple[str, ...] = ()
    """Fields read from text rather than recorded (``app``, ``title``, ``is_llm``)."""

    def document(self) -> str:
        """The one template every memory embeds: app, window title, intention
        (ProAgentBench's RAG document), plus the activity text when there is one."""
        doc = f"Application: {self.app or 'unknown'}. Window: {self.title or 'unknown'}. Intention: {self.intention or 'none'}."
        if self.activity:
            doc += f" Activity: {self.activity[:200]}"
        return doc

    def outcome(self) -> str:
        """Plain-language outcome of the moment, for prompts."""
        if self.is_llm and "is_llm" not in self.derived:
            head = "used an AI assistant"
        elif self.needs_help is None:
            head = "outcome unknown"
        else:
            head = "needed help: yes" if self.needs_help else "needed help: no"
        if self.intention:
            head += f" ({self.intention})"
        if self.query:
            head += f'; asked: "{self.query[:120]}"'
        return head

    def to_json(self) -> dict:
        d = asdict(self)
        d["time"] = self.time.isoformat()
        d["known_at"] = self.known_at.isoformat()
        d["derived"] = list(self.derived)
        return d


@dataclass(frozen=True)
class MemoryQuery:
    """What memory is asked at inference: one moment t of one user."""

    user: str
    time: datetime
    app: str
    title: str
    activity: str
    derived: tuple[str, ...] = ()

    def document(self) -> str:
        doc = f"Application: {self.app or 'unknown'}. Window: {self.title or 'unknown'}."
        if self.activity:
            doc += f" Activity: {self.activity[:200]}"
        return doc


# ----------------------------------------------------------------------------- deriving fields from text

_APP_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"visual studio code|vs ?code|\bcode\.exe\b", "Visual Studio Code"),
    (r"\bpycharm\b", "PyCharm"),
    (r"\bintellij\b", "IntelliJ IDEA"),
    (r"\bxcode\b", "Xcode"),
    (r"\bjupyter\b", "Jupyter"),
    (r"\bterminal\b|\bpowershell\b|command prompt|\bcmd\.exe\b", "Terminal"),
    (r"microsoft word|\bword document\b|\.docx\b", "Microsoft Word"),
    (r"\bexcel\b|\.xlsx\b", "Microsoft Excel"),
    (r"\bpowerpoint\b|\.pptx\b", "Microsoft PowerPoint"),
    (r"\boverleaf\b", "Overleaf"),
    (r"\bnotion\b", "Notion"),
    (r"\bobsidian\b", "Obsidian"),
    (r"\bslack\b", "Slack"),
    (r"\boutlook\b|\bgmail\b", "Email"),
    (r"\bwechat\b|微信", "WeChat"),
    (r"\bchatgpt\b|\bdeepseek\b|\bkimi\b|\bclaude\b|豆包", "AI assistant"),
    (
        r"google chrome|\bchrome\b|\bfirefox\b|\bsafari\b|microsoft edge|web browser|\bbrowser\b|"
        r"\bgoogle\b|\bbing\b|stack overflow|\bwebsite\b|\bweb page\b|\bwebpage\b|\bnew tab\b|https?://|"
        r"search results?|\bgithub\b|\byoutube\b|\bcsdn\b|geeksforgeeks",
        "Web browser",
    ),
)
_APP_RES = tuple((re.compile(p, re.IGNORECASE), name) for p, name in _APP_PATTERNS)
_QUOTED = re.compile(r"['\"‘“]([^'\"’”]{2,120})['\"’”]")
_SITES = re.compile(
    r"\b(Google|Bing|Stack Overflow|GitHub|YouTube|CSDN|GeeksforGeeks|Educative\.io|Scaler|ActivityWatch)\b",
    re.IGNORECASE,
)


def derive_fields(text: str) -> tuple[str, str]:
    """Application and window-like title read from an activity sentence.

    The application is the earliest-mentioned known name (``Code.exe`` and
    ``VS Code`` are Visual Studio Code; search engines, sites and browser words
    are the Web browser); the title is the first quoted phrase that is not the
    application itself, else a site name. Either may be ``""``.
    """
    best: tuple[int, str] | None = None
    for rx, name in _APP_RES:
        m = rx.search(text)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), name)
    app = best[1] if best else ""
    title = ""
    for m in _QUOTED.finditer(text):
        phrase = m.group(1).strip()
        if not phrase or any(rx.fullmatch(phrase) for rx, _ in _APP_RES):
            continue
        title = phrase
        break
    if not title:
        m = _SITES.search(text)
        if m:
            title = m.group(1)
    return app, title


def _fill(app: str, title: str, text: str) -> tuple[str, str, tuple[str, ...]]:
    derived = []
    if not app or not title:
        d_app, d_title = derive_fields(text)
        if not app and d_app:
            app, derived = d_app, derived + ["app"]
        if not title and d_title:
            title, derived = d_title, derived + ["title"]
    return app, title, tuple(derived)


def query_for(sample: Sample) -> MemoryQuery:
    """The memory query of a sample: its user, time and current state."""
    cur = sample.current
    text = cur.summary or cur.description
    app, title, derived = _fill(cur.app_name, cur.window_title, text)
    return MemoryQuery(sample.user, sample.time, app, title, text, derived)


# ----------------------------------------------------------------------------- training-period records


def train_cutoffs(samples: Iterable[Sample]) -> dict[str, datetime]:
    """Per user, the first moment of the test period (the earliest ``test``
    sample); a user without test samples gets a cutoff after all its samples."""
    first_test: dict[str, datetime] = {}
    last: dict[str, datetime] = {}
    for s in samples:
        last[s.user] = max(last.get(s.user, s.time), s.time)
        if s.split == "test":
            first_test[s.user] = min(first_test.get(s.user, s.time), s.time)
    return {u: first_test.get(u, last[u] + timedelta(microseconds=1)) for u in last}


def train_records(events: Iterable[Event], cutoffs: dict[str, datetime]) -> dict[str, list[MemoryRecord]]:
    """Memory records per user from the training period only.

    Only users in ``cutoffs`` get records; a record is kept only when its
    ``known_at`` is strictly before the user's cutoff, so nothing from the test
    period (not even the label of the last training event, when it comes from a
    test-period LLM event) enters memory. Records are sorted by ``known_at``.

    * Labelled sources (``needs_help`` on every event, ProactiveBench): one record
      per event; ``needs_help`` is the label, ``query`` the first reference offer,
      ``is_llm`` := ``needs_help`` (derived), app/title derived from the sentence.
    * LifeTrace: one record per event of real activity (:meth:`Event.is_activity`,
      ProAgentBench B.3) and per flagged LLM-use event; for a non-LLM event,
      ``needs_help`` = the next event is an LLM use (then ``known_at`` = its start,
      and the request's intention and first query are attached); for an LLM event,
      its own intention and query.
    """
    by_user: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        if e.user in cutoffs:
            by_user[e.user].append(e)
    out: dict[str, list[MemoryRecord]] = {}
    for user, evs in by_user.items():
        cutoff = cutoffs[user]
        evs = sorted(evs, key=lambda e: e.start)
        labelled = all(e.needs_help is not None for e in evs)
        if not labelled:
            evs = [e for e in evs if e.is_activity() or e.is_llm_event]
        recs: list[MemoryRecord] = []
        for i, e in enumerate(evs):
            if e.start >= cutoff:
                break
            text = e.summary or e.description
            app, title, derived = _fill(e.app_name, e.window_title, text)
            if labelled:
                rec = MemoryRecord(
                    id=f"{user}:{e.id}",
                    user=user,
                    time=e.start,
                    known_at=e.start,
                    app=app,
                    title=title,
                    activity=text,
                    is_llm=bool(e.needs_help),
                    needs_help=bool(e.needs_help),
                    intention=e.intention,
                    query=(e.candidate_tasks[0] if e.needs_help and e.candidate_tasks else None),
                    derived=derived + ("is_llm",),
                )
            elif e.is_llm_event:
                conv = e.conversation
                q = next((x for x in (conv.user_queries if conv else ()) if x.strip()), None)
                rec = MemoryRecord(
                    id=f"{user}:{e.id}",
                    user=user,
                    time=e.start,
                    known_at=e.start,
                    app=app,
                    title=title,
                    activity=text,
                    is_llm=True,
                    needs_help=None,
                    intention=e.intention,
                    query=q,
                    derived=derived,
                )
            else:
                nxt = evs[i + 1] if i + 1 < len(evs) else None
                if nxt is not None and nxt.start < cutoff and nxt.is_llm_event is not None:
                    helped = bool(nxt.is_llm_event)
                    conv = nxt.conversation if helped else None
                    q = next((x for x in (conv.user_queries if conv else ()) if x.strip()), None)
                    rec = MemoryRecord(
                        id=f"{user}:{e.id}",
                        user=user,
                        time=e.start,
                        known_at=nxt.start,
                        app=app,
                        title=title,
                        activity=text,
                        is_llm=bool(e.is_llm_event) if e.is_llm_event is not None else None,
                        needs_help=helped,
                        intention=nxt.intention if helped else None,
                        query=q,
                        derived=derived,
                    )
                else:
                    rec = MemoryRecord(
                        id=f"{user}:{e.id}",
                        user=user,
                        time=e.start,
                        known_at=e.start,
                        app=app,
                        title=title,
                        activity=text,
                        is_llm=e.is_llm_event,
                        needs_help=None,
                        derived=derived,
                    )
            if rec.known_at < cutoff:
                recs.append(rec)
        out[user] = sorted(recs, key=lambda r: (r.known_at, r.id))
    for user in cutoffs:
        out.setdefault(user, [])
    return out


def records_fingerprint(records: Iterable[MemoryRecord], config: dict) -> str:
    """Cache key of one user's memory: SHA-256 of the records and the configuration."""
    h = hashlib.sha256()
    h.update(json.dumps(config, sort_keys=True, default=str).encode())
    for r in records:
        h.update(json.dumps(r.to_json(), sort_keys=True, ensure_ascii=False).encode())
    return h.hexdigest()[:32]
