"""``feedback.db``: every offer and the user's response, with timestamps, as data.

Two tables (SQLite, WAL, file mode 0600 because offers hold screen text):

``offers(id, sample_id, user, moment, created_at, p_help, intention, query, text, app_name, notifier, sample_json)``
    one row per offer shown; ``sample_json`` is the whole
    :class:`~proagent.records.Sample` the decider saw, so feedback can train it.
``decisions(id, sample_id, user, moment, trigger, outcome, reason, p_help, decide_seconds, how_seconds, offer_id, notification, label, row_id)``
    every When-to-Assist decision (:class:`~proagent.live.LiveDecision`); ``row_id``
    is the followed database's event row, so a restarted follower resumes after
    the last row decided (none twice, none missed).
``responses(id, offer_id, response, responded_at, source)``
    one row per response (``accepted``, ``dismissed``, ``not_now``, ``ignored``);
    the latest row of an offer is its answer.
``implicit(id, decision_id, sample_id, user, moment, response, label, weight, evidence, labelled_at, sample_json)``
    labels of quiet moments (decided No, held by restraint, or How said no) read from what
    the person did next (:mod:`proagent.live._implicit`): ``missed`` (label 1: they turned to
    an LLM on their own within the horizon) and ``quiet_focus`` (label 0 with a small weight:
    they kept working in the same app); ``evidence`` is JSON naming the event ids and the rule.
``implicit_pending(id, decision_id, moment, app_name, front_event_id, sample_json, seen_json)``
    quiet moments still waiting for their horizon (:mod:`proagent.live._implicit`), so a restart
    resumes them; a row goes when its moment is labelled (in the same transaction) or dropped.
``questions(id, decision_id, sample_id, user, moment, asked_at, p_help, threshold, risk, app_name, sample_json)``
    sparse questions (``--ask-rate``, :mod:`proagent.live._ask`): a quiet moment the learner was
    unsure of, asked "Would help have been useful just now?"; ``risk`` is the expected cost of the
    decision made there (:func:`proagent.live._ask.decision_risk`).
``question_answers(id, question_id, answer, answered_at, source)``
    the person's answers (``yes``, ``no``); the latest row of a question is its answer.

Times are ISO 8601 naive local time of the loop's clock (wall time live, the
log's time in a replay). :func:`feedback_samples` turns answered offers into
labelled samples: accepted = help was needed at that moment (label 1),
dismissed = it was not (label 0); "not now" and ignored offers are no label;
with ``implicit=True`` it adds the implicit labels (:data:`IMPLICIT_RESPONSES`) and the
answered questions (yes = label 1, no = label 0).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from .. import live_files
from ..errors import DataError, RunError
from ..io import to_jsonable
from ..records import Conversation, Event, Sample, Screenshot
from ..sources.lifetrace_schema import connect_read_only
from .records import ANSWERS, IMPLICIT_RESPONSES, RESPONSES, LiveDecision, Offer, Question

__all__ = [
    "FEEDBACK_DB",
    "MAX_ROW_ID",
    "FeedbackFull",
    "FeedbackStore",
    "feedback_samples",
    "parse_row_id",
    "sample_from_json",
    "sample_to_json",
]

FEEDBACK_DB = live_files.FEEDBACK_DB
"""File name of the feedback database in a live folder."""

MAX_ROW_ID = 2**63 - 1
"""The largest row id ``feedback.db`` can hold (SQLite's INTEGER PRIMARY KEY is a signed 64-bit
integer, https://www.sqlite.org/datatype3.html); a larger number is no offer or question."""


def parse_row_id(value: object) -> int | None:
    """An offer or question id as a person or a client gives it, checked strictly: a JSON integer
    (not ``true``, not ``1.7``) or a string of ASCII digits (a query parameter, a typed ``a 3``),
    1 to :data:`MAX_ROW_ID`; ``None`` for anything else (``"²"``, ``"1e3"``, ``2**63``...), so the
    caller answers a clear error instead of raising or reading ``1.7`` as offer 1."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        if not (value.isascii() and value.isdigit()) or len(value) > 19:
            return None
        value = int(value)
    if not isinstance(value, int):
        return None
    return value if 1 <= value <= MAX_ROW_ID else None


_SCHEMA = """
CREATE TABLE IF NOT EXISTS offers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sample_id TEXT NOT NULL,
    user TEXT NOT NULL,
    moment TEXT NOT NULL,
    created_at TEXT NOT NULL,
    p_help REAL,
    intention TEXT,
    query TEXT,
    text TEXT NOT NULL,
    app_name TEXT NOT NULL DEFAULT '',
    notifier TEXT NOT NULL DEFAULT '',
    sample_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS responses (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    offer_id INTEGER NOT NULL REFERENCES offers(id),
    response TEXT NOT NULL CHECK (response IN ('accepted', 'dismissed', 'not_now', 'ignored')),
    responded_at TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS responses_offer ON responses(offer_id);
CREATE TABLE IF NOT EXISTS decisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sample_id TEXT NOT NULL,
    user TEXT NOT NULL,
    moment TEXT NOT NULL,
    trigger TEXT NOT NULL,
    outcome TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    p_help REAL,
    decide_seconds REAL,
    how_seconds REAL,
    offer_id INTEGER,
    notification TEXT,
    label INTEGER,
    row_id INTEGER
);
CREATE TABLE IF NOT EXISTS implicit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    decision_id INTEGER,
    sample_id TEXT NOT NULL,
    user TEXT NOT NULL,
    moment TEXT NOT NULL,
    response TEXT NOT NULL CHECK (response IN ('missed', 'quiet_focus')),
    label INTEGER NOT NULL,
    weight REAL NOT NULL,
    evidence TEXT NOT NULL,
    labelled_at TEXT NOT NULL,
    sample_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS implicit_pending (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    decision_id INTEGER,
    moment TEXT NOT NULL,
    app_name TEXT NOT NULL DEFAULT '',
    front_event_id TEXT,
    sample_json TEXT NOT NULL,
    seen_json TEXT NOT NULL DEFAULT '[]'
);
CREATE TABLE IF NOT EXISTS questions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    decision_id INTEGER,
    sample_id TEXT NOT NULL,
    user TEXT NOT NULL,
    moment TEXT NOT NULL,
    asked_at TEXT NOT NULL,
    p_help REAL,
    threshold REAL,
    risk REAL,
    app_name TEXT NOT NULL DEFAULT '',
    sample_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS question_answers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    question_id INTEGER NOT NULL REFERENCES questions(id),
    answer TEXT NOT NULL CHECK (answer IN ('yes', 'no')),
    answered_at TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS question_answers_question ON question_answers(question_id);
"""


def sample_to_json(s: Sample) -> str:
    """One sample as JSON text (times ISO 8601, paths as text)."""
    return json.dumps(to_jsonable(asdict(s)), ensure_ascii=False, default=lambda o: o.isoformat())


def _dt(v: str | None) -> datetime | None:
    return datetime.fromisoformat(v) if v else None


def _event(d: dict[str, Any]) -> Event:
    conv = d.get("conversation")
    return Event(
        **{
            **d,
            "start": _dt(d["start"]),
            "end": _dt(d.get("end")),
            "screenshots": tuple(
                Screenshot(**{**s, "time": _dt(s["time"]), "path": Path(s["path"]) if s.get("path") else None})
                for s in d.get("screenshots", ())
            ),
            "conversation": Conversation(
                tuple(conv["user_queries"]), tuple(conv["llm_responses"]), conv["full_conversation"]
            )
            if conv
            else None,
            "candidate_tasks": tuple(d.get("candidate_tasks", ())),
        }
    )


def _event_to_json(e: Event) -> dict[str, Any]:
    return json.loads(json.dumps(to_jsonable(asdict(e)), ensure_ascii=False, default=lambda o: o.isoformat()))


def sample_from_json(text: str) -> Sample:
    """The :class:`~proagent.records.Sample` written by :func:`sample_to_json`.

    Raises:
        ValueError: not such JSON.
    """
    try:
        d = json.loads(text)
        return Sample(
            **{
                **d,
                "time": _dt(d["time"]),
                "context": tuple(_event(e) for e in d["context"]),
                "current": _event(d["current"]),
                "reference_queries": tuple(d.get("reference_queries", ())),
            }
        )
    except (KeyError, TypeError, AttributeError, ValueError) as e:  # a damaged row of any shape
        raise ValueError(f"not a stored sample ({e.__class__.__name__})") from None


class FeedbackFull(RunError):
    """``feedback.db`` cannot be written: the disk (or the database's size limit) is full. The
    answer that met it is held in memory by the :class:`FeedbackStore` and written with the next
    write that succeeds; ``held`` counts the answers waiting."""

    def __init__(self, path: Path, held: int, *, closing: bool = False) -> None:
        self.held = held
        """Answers held in memory, not yet written."""
        what = f"{held} answer{'s' if held != 1 else ''}"
        then = "not written: they are lost" if closing else "kept in memory and written when space frees"
        super().__init__(f"{path}: the disk is full; {what} {then}; free some space")


def _cannot_write(e: sqlite3.OperationalError) -> bool:
    """SQLite's full disk (SQLITE_FULL, or an I/O error writing: ENOSPC, EFBIG) as opposed to a bug."""
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR)
    return "full" in str(e) or "I/O error" in str(e)


class FeedbackStore:
    """``feedback.db`` in a live folder; safe to use from several threads (the
    page server and notifiers answer from their own)."""

    def __init__(self, folder: str | Path) -> None:
        self.path = Path(folder) / FEEDBACK_DB
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not self.path.exists()
        self._lock = threading.Lock()
        self._held: list[tuple[str, tuple[Any, ...]]] = []  # answers not yet written (disk full)
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=10.0)
        if fresh:
            os.chmod(self.path, 0o600)
        try:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.executescript(_SCHEMA)
            self._conn.commit()
        except sqlite3.DatabaseError as e:  # a damaged or foreign feedback.db: one line, the file left as it was
            self._conn.close()
            raise DataError(
                self.path, f"not a usable {FEEDBACK_DB} ({e}); move it away or choose another --out"
            ) from None

    def close(self) -> None:
        """Write what is held (:meth:`write_held`) if the disk allows now, and close.

        Raises:
            FeedbackFull: answers are still held (the disk is still full): they are lost with the
                process, and the message says how many.
        """
        left = self.write_held()
        with self._lock:
            self._conn.close()
        if left:
            raise FeedbackFull(self.path, left, closing=True)

    def add_offer(
        self,
        sample: Sample,
        *,
        text: str,
        query: str | None,
        intention: str | None,
        p_help: float | None,
        notifier: str,
        created_at: datetime,
        app_name: str | None = None,
    ) -> Offer:
        """Store an offer; returns it with its id. ``app_name``: the app in front at decision
        time (default: the sample's current state's)."""
        app = sample.current.app_name if app_name is None else app_name
        with self._lock, self._conn:
            cur = self._conn.execute(
                "INSERT INTO offers (sample_id, user, moment, created_at, p_help, intention, query, text, app_name, "
                "notifier, sample_json) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    sample.id,
                    sample.user,
                    sample.time.isoformat(),
                    created_at.isoformat(),
                    p_help,
                    intention,
                    query,
                    text,
                    app,
                    notifier,
                    sample_to_json(sample),
                ),
            )
            oid = int(cur.lastrowid)
        return Offer(oid, sample.id, sample.time, text, query, intention, p_help, app)

    def fill_offer(self, offer_id: int, *, text: str, query: str | None, intention: str | None) -> Offer | None:
        """The How answer for an offer shown before it came: its text, query and intention
        replace the generic ones (the page shows the new text at its next look). Returns the
        offer as it now reads, ``None`` for an unknown id."""
        with self._lock, self._conn:
            self._conn.execute(
                "UPDATE offers SET text = ?, query = ?, intention = ? WHERE id = ?",
                (text, query, intention, int(offer_id)),
            )
            row = self._conn.execute(
                "SELECT sample_id, moment, p_help, app_name FROM offers WHERE id = ?", (int(offer_id),)
            ).fetchone()
        if row is None:
            return None
        return Offer(
            int(offer_id), row[0], datetime.fromisoformat(row[1]), text, query, intention, row[2], row[3] or ""
        )

    def add_decision(self, d: LiveDecision, *, user: str, row_id: int | None = None) -> int:
        """Store one decision (and, with it, the event row it handled); returns its ``decisions.id``."""
        with self._lock, self._conn:
            cur = self._conn.execute(
                "INSERT INTO decisions (sample_id, user, moment, trigger, outcome, reason, p_help, decide_seconds, "
                "how_seconds, offer_id, notification, label, row_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    d.sample_id,
                    user,
                    d.moment.isoformat(),
                    d.trigger,
                    d.outcome,
                    d.reason,
                    d.p_help,
                    d.decide_seconds,
                    d.how_seconds,
                    d.offer_id,
                    d.notification,
                    d.label,
                    row_id,
                ),
            )
            return int(cur.lastrowid)

    def add_implicit(
        self,
        sample: Sample,
        *,
        response: str,
        label: int,
        weight: float,
        evidence: dict[str, Any],
        at: datetime,
        decision_id: int | None = None,
        pending_id: int | None = None,
    ) -> int:
        """Store one implicit label of a quiet moment (:mod:`proagent.live._implicit`); returns its id.
        ``pending_id``: its :meth:`add_pending` row, removed in the same transaction.

        Raises:
            ValueError: ``response`` is not one of :data:`~proagent.live.records.IMPLICIT_RESPONSES`.
        """
        if response not in IMPLICIT_RESPONSES:
            raise ValueError(f"implicit response {response!r}: choose from {', '.join(IMPLICIT_RESPONSES)}")
        with self._lock, self._conn:
            cur = self._conn.execute(
                "INSERT INTO implicit (decision_id, sample_id, user, moment, response, label, weight, evidence, "
                "labelled_at, sample_json) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    decision_id,
                    sample.id,
                    sample.user,
                    sample.time.isoformat(),
                    response,
                    int(label),
                    float(weight),
                    json.dumps(evidence, ensure_ascii=False),
                    at.isoformat(),
                    sample_to_json(sample),
                ),
            )
            if pending_id is not None:
                self._conn.execute("DELETE FROM implicit_pending WHERE id = ?", (int(pending_id),))
            return int(cur.lastrowid)

    # ------------------------------------------------------------ quiet moments awaiting their horizon
    def add_pending(self, sample: Sample, *, decision_id: int | None, app_name: str, front_event_id: str | None) -> int:
        """Keep a quiet moment until what follows labels it (survives a restart); returns its row id."""
        with self._lock, self._conn:
            cur = self._conn.execute(
                "INSERT INTO implicit_pending (decision_id, moment, app_name, front_event_id, sample_json) "
                "VALUES (?,?,?,?,?)",
                (decision_id, sample.time.isoformat(), app_name, front_event_id, sample_to_json(sample)),
            )
            return int(cur.lastrowid)

    def update_pending(self, pending_id: int, seen: list[Event]) -> None:
        """The events seen so far after a pending quiet moment (``seen_json``)."""
        text = json.dumps([_event_to_json(e) for e in seen], ensure_ascii=False)
        with self._lock, self._conn:
            self._conn.execute("UPDATE implicit_pending SET seen_json = ? WHERE id = ?", (text, int(pending_id)))

    def drop_pending(self, pending_ids: list[int]) -> None:
        """Forget pending quiet moments that nothing labelled (an idle stop, a switch)."""
        if pending_ids:
            with self._lock, self._conn:
                self._conn.executemany("DELETE FROM implicit_pending WHERE id = ?", [(int(i),) for i in pending_ids])

    def pending(self) -> list[dict[str, Any]]:
        """The pending quiet moments, oldest first: dicts of ``id``, ``decision_id``, ``sample``
        (a :class:`~proagent.records.Sample`), ``app_name``, ``front_event_id``, ``seen`` (events);
        an unreadable row is dropped."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, decision_id, app_name, front_event_id, sample_json, seen_json "
                "FROM implicit_pending ORDER BY id"
            ).fetchall()
        out, bad = [], []
        for pid, did, app, front, sj, seen in rows:
            try:
                out.append(
                    {
                        "id": int(pid),
                        "decision_id": did,
                        "app_name": app or "",
                        "front_event_id": front,
                        "sample": sample_from_json(sj),
                        "seen": [_event(d) for d in json.loads(seen)],
                    }
                )
            except (ValueError, KeyError, TypeError):
                bad.append(int(pid))
        self.drop_pending(bad)
        return out

    # ------------------------------------------------------------ sparse questions
    def add_question(
        self,
        sample: Sample,
        *,
        asked_at: datetime,
        p_help: float | None,
        threshold: float | None,
        risk: float | None,
        app_name: str,
        decision_id: int | None = None,
    ) -> Question:
        """Store one question asked about a quiet moment (:mod:`proagent.live._ask`); returns it with its id."""
        with self._lock, self._conn:
            cur = self._conn.execute(
                "INSERT INTO questions (decision_id, sample_id, user, moment, asked_at, p_help, threshold, risk, "
                "app_name, sample_json) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    decision_id,
                    sample.id,
                    sample.user,
                    sample.time.isoformat(),
                    asked_at.isoformat(),
                    p_help,
                    threshold,
                    risk,
                    app_name,
                    sample_to_json(sample),
                ),
            )
            qid = int(cur.lastrowid)
        return Question(qid, sample.id, sample.time, asked_at, app_name, p_help)

    def answer_question(self, question_id: int, answer: str, at: datetime, source: str = "") -> bool:
        """Record an answer (``yes`` or ``no``); ``False`` (nothing stored) for an unknown question or answer.

        Raises:
            FeedbackFull: as :meth:`respond` (the answer is held and written later).
        """
        if answer not in ANSWERS:
            return False
        with self._lock:
            if self._conn.execute("SELECT 1 FROM questions WHERE id = ?", (int(question_id),)).fetchone() is None:
                return False
            self._write_locked(
                "INSERT INTO question_answers (question_id, answer, answered_at, source) VALUES (?,?,?,?)",
                (int(question_id), answer, at.isoformat(), source),
            )
        return True

    def answers_since(self, after_id: int) -> list[tuple[int, int, str, datetime]]:
        """Answers to questions with row id > ``after_id``: (answer id, question id, answer, time)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, question_id, answer, answered_at FROM question_answers WHERE id > ? ORDER BY id",
                (int(after_id),),
            ).fetchall()
        return [(int(a), int(b), str(c), datetime.fromisoformat(d)) for a, b, c, d in rows]

    def question_sample(self, question_id: int) -> Sample | None:
        """The Sample of a question's moment (``None``: no such row or an unreadable one)."""
        return self._stored_sample("questions", question_id)

    def questions(self, *, open_only: bool = False, limit: int = 50) -> list[dict[str, Any]]:
        """Latest questions first, each with its latest ``answer`` (``None`` while unanswered):
        dicts of ``id``, ``sample_id``, ``moment``, ``asked_at``, ``p_help``, ``app_name``, ``answer``, ``text``."""
        from ._ask import QUESTION_TEXT

        sql = (
            "SELECT q.id, q.sample_id, q.moment, q.asked_at, q.p_help, q.app_name, (SELECT answer FROM "
            "question_answers a WHERE a.question_id = q.id ORDER BY a.id DESC LIMIT 1) FROM questions q "
            "ORDER BY q.id DESC LIMIT ?"
        )
        with self._lock:
            rows = self._conn.execute(sql, (int(limit),)).fetchall()
        keys = ("id", "sample_id", "moment", "asked_at", "p_help", "app_name", "answer")
        out = [{**dict(zip(keys, r)), "text": QUESTION_TEXT} for r in rows]
        return [q for q in out if q["answer"] is None] if open_only else out

    def asked_on(self, day: Any) -> list[datetime]:
        """When the questions of calendar day ``day`` (a :class:`datetime.date`, the loop's clock) were asked."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT asked_at FROM questions WHERE substr(asked_at, 1, 10) = ? ORDER BY id", (day.isoformat(),)
            ).fetchall()
        return [datetime.fromisoformat(r[0]) for r in rows]

    def implicit_since(self, after_id: int) -> list[dict[str, Any]]:
        """Implicit labels with id > ``after_id``, oldest first: dicts of ``id``, ``decision_id``,
        ``sample_id``, ``moment``, ``response``, ``label``, ``weight``, ``evidence`` (parsed JSON)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, decision_id, sample_id, moment, response, label, weight, evidence FROM implicit "
                "WHERE id > ? ORDER BY id",
                (int(after_id),),
            ).fetchall()
        keys = ("id", "decision_id", "sample_id", "moment", "response", "label", "weight", "evidence")
        out = []
        for r in rows:
            d = dict(zip(keys, r))
            try:
                evidence = json.loads(r[7])
            except (TypeError, ValueError):
                raise _damaged_implicit(self.path, r[0], "its evidence is not JSON") from None
            _check_implicit(self.path, r[0], d["response"], d["weight"], d["label"])
            out.append({**d, "evidence": evidence})
        return out

    def implicit_sample(self, implicit_id: int) -> Sample | None:
        """The Sample of an implicitly labelled quiet moment (``None``: no such row or an unreadable one)."""
        return self._stored_sample("implicit", implicit_id)

    def _stored_sample(self, table: str, row_id: int) -> Sample | None:
        with self._lock:
            row = self._conn.execute(f"SELECT sample_json FROM {table} WHERE id = ?", (int(row_id),)).fetchone()
        try:
            return sample_from_json(row[0]) if row else None
        except ValueError:
            return None

    def last_row_id(self) -> int | None:
        """The highest followed-database event row decided, or ``None``."""
        with self._lock:
            v = self._conn.execute("SELECT max(row_id) FROM decisions").fetchone()[0]
        return None if v is None else int(v)

    def first_moment(self) -> datetime | None:
        """The moment of the first decision recorded, or ``None`` (the default questions' first days)."""
        with self._lock:
            v = self._conn.execute("SELECT moment FROM decisions ORDER BY id LIMIT 1").fetchone()
        try:
            return datetime.fromisoformat(v[0]) if v else None
        except (TypeError, ValueError):
            return None

    def decisions(self, after_id: int = 0) -> list[dict[str, Any]]:
        """Every decision (those with ``id > after_id``), oldest first, as dicts (the columns of ``decisions``)."""
        with self._lock:
            cur = self._conn.execute("SELECT * FROM decisions WHERE id > ? ORDER BY id", (int(after_id),))
            keys = [c[0] for c in cur.description]
            return [dict(zip(keys, r)) for r in cur.fetchall()]

    def respond(self, offer_id: int, response: str, at: datetime, source: str = "") -> bool:
        """Record a response; ``False`` (nothing stored) for an unknown offer or response.

        Raises:
            FeedbackFull: ``feedback.db`` cannot be written (disk full); the response is kept in
                memory and written with the next write or read that succeeds (:meth:`write_held`).
        """
        if response not in RESPONSES:
            return False
        with self._lock:
            if self._conn.execute("SELECT 1 FROM offers WHERE id = ?", (int(offer_id),)).fetchone() is None:
                return False
            self._write_locked(
                "INSERT INTO responses (offer_id, response, responded_at, source) VALUES (?,?,?,?)",
                (int(offer_id), response, at.isoformat(), source),
            )
        return True

    def _write_locked(self, sql: str, params: tuple[Any, ...]) -> None:
        """Write an answer after the held ones, in one transaction; on a full disk hold it too."""
        rows = [*self._held, (sql, params)]
        try:
            with self._conn:
                for q, a in rows:
                    self._conn.execute(q, a)
        except sqlite3.OperationalError as e:
            if not _cannot_write(e):
                raise
            self._held.append((sql, params))
            raise FeedbackFull(self.path, len(self._held)) from None
        self._held.clear()

    def write_held(self) -> int:
        """Write the answers held since a full disk (:class:`FeedbackFull`); returns how many
        are still held (0: all written, or none was held)."""
        with self._lock:
            if self._held:
                rows = list(self._held)
                try:
                    with self._conn:
                        for q, a in rows:
                            self._conn.execute(q, a)
                except sqlite3.OperationalError as e:
                    if not _cannot_write(e):
                        raise
                else:
                    del self._held[: len(rows)]
            return len(self._held)

    @property
    def held(self) -> int:
        """Answers held in memory since a full disk, not yet in ``feedback.db``."""
        return len(self._held)

    def offers(self, *, open_only: bool = False, limit: int = 50) -> list[dict[str, Any]]:
        """Latest offers first, each with its latest ``response`` (``None`` while unanswered)."""
        self.write_held()  # the page polls this: a held answer is written once space frees
        sql = (
            "SELECT o.id, o.sample_id, o.moment, o.created_at, o.p_help, o.intention, o.query, o.text, o.app_name, "
            "(SELECT response FROM responses r WHERE r.offer_id = o.id ORDER BY r.id DESC LIMIT 1) AS response "
            "FROM offers o ORDER BY o.id DESC LIMIT ?"
        )
        with self._lock:
            rows = self._conn.execute(sql, (int(limit),)).fetchall()
        keys = (
            "id",
            "sample_id",
            "moment",
            "created_at",
            "p_help",
            "intention",
            "query",
            "text",
            "app_name",
            "response",
        )
        out = [dict(zip(keys, r)) for r in rows]
        return [o for o in out if o["response"] is None] if open_only else out

    def history(self) -> tuple[list[datetime], list[tuple[str, datetime]]]:
        """Offer times and (response, time) pairs, oldest first (restores restraint after a restart)."""
        with self._lock:
            offers = [
                datetime.fromisoformat(r[0]) for r in self._conn.execute("SELECT created_at FROM offers ORDER BY id")
            ]
            resp = [
                (r[0], datetime.fromisoformat(r[1]))
                for r in self._conn.execute("SELECT response, responded_at FROM responses ORDER BY id")
            ]
        return offers, resp

    def offer_sample(self, offer_id: int) -> Sample | None:
        """The Sample the decider saw for an offer (``None``: no such offer or an unreadable row)."""
        return self._stored_sample("offers", offer_id)

    def responses_since(self, after_id: int) -> list[tuple[int, int, str, datetime]]:
        """Responses with row id > ``after_id``: (response id, offer id, response, time)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, offer_id, response, responded_at FROM responses WHERE id > ? ORDER BY id", (int(after_id),)
            ).fetchall()
        return [(int(a), int(b), str(c), datetime.fromisoformat(d)) for a, b, c, d in rows]


def _damaged_implicit(path: Path, row_id: object, what: str) -> DataError:
    return DataError(
        path,
        f"implicit label row {row_id} is damaged ({what}); repair: delete it "
        f"(sqlite3 {path} 'DELETE FROM implicit WHERE id = {row_id}'), the other labels stay",
    )


def _check_implicit(path: Path, row_id: object, response: object, weight: object, label: object) -> None:
    """Refuse an ``implicit`` row a damaged database holds (an unknown response, a weight that is
    not a number in [0, 1], a label that is not 0 or 1) as a :class:`~proagent.errors.DataError`."""
    if response not in IMPLICIT_RESPONSES:
        raise _damaged_implicit(
            path, row_id, f"response {str(response)[:20]!r} is none of {', '.join(IMPLICIT_RESPONSES)}"
        )
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0.0 <= float(weight) <= 1.0:
        raise _damaged_implicit(path, row_id, "its weight is not a number from 0 to 1")
    if label not in (0, 1) or isinstance(label, (bool, float)):
        raise _damaged_implicit(path, row_id, "its label is not 0 or 1")


def _kept_at_weight(key: str, weight: float) -> bool:
    """Whether a moment of ``weight`` (0-1) is kept when a learner takes no weights: a deterministic
    share ``weight`` of such moments, chosen by SHA-256 of ``key`` (importance sampling by weight)."""
    import hashlib

    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < weight


def feedback_db_path(folder: str | Path) -> Path:
    """The ``feedback.db`` of a live folder (or the file itself).

    Raises:
        DataError: there is none.
    """
    p = Path(folder)
    p = p if p.is_file() else p / FEEDBACK_DB
    if not p.is_file():
        raise DataError(p, "no feedback database (run proagent live first)")
    return p


def feedback_samples(folder: str | Path, *, implicit: bool = True) -> list[Sample]:
    """Answered offers of a live folder (or a ``feedback.db`` file) as labelled
    samples, oldest first: the offer's latest response ``accepted`` -> label 1,
    ``dismissed`` -> label 0 (``kind="labelled"``, ``split="train"``); offers
    answered "not now", ignored or unanswered give no sample. Answered sparse questions
    (``--ask-rate``) come last: ``yes`` -> label 1, ``no`` -> label 0 (id ``question:yes:...``).

    With ``implicit`` (default), the implicit labels of quiet moments follow them: every
    ``missed`` moment (label 1, id ``implicit:missed:...``) and a deterministic share, equal to
    its weight, of the ``quiet_focus`` moments (label 0; ``proagent train when`` takes no
    per-moment weights, so a weight of 0.25 keeps one in four, chosen by the hash of the
    sample id). A moment both offered and implicitly labelled cannot occur (offers are not quiet).

    Raises:
        DataError: no feedback database there, or it is unreadable.
    """
    p = feedback_db_path(folder)
    try:
        conn = connect_read_only(p)
        try:
            rows = conn.execute(
                "SELECT o.sample_json, (SELECT response FROM responses r WHERE r.offer_id = o.id ORDER BY r.id DESC LIMIT 1) "
                "FROM offers o ORDER BY o.id"
            ).fetchall()
            has = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'implicit'").fetchone()
            quiet = (
                conn.execute("SELECT id, sample_json, response, weight, label FROM implicit ORDER BY id").fetchall()
                if implicit and has
                else []
            )
            asked = (
                conn.execute(
                    "SELECT q.sample_json, (SELECT answer FROM question_answers a WHERE a.question_id = q.id ORDER BY a.id "
                    "DESC LIMIT 1) FROM questions q ORDER BY q.id"
                ).fetchall()
                if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'questions'").fetchone()
                else []
            )
        finally:
            conn.close()
    except sqlite3.DatabaseError as e:
        raise DataError(p, f"cannot read feedback database ({e})") from None
    out = []
    from dataclasses import replace

    def parse(text: str) -> Sample:
        try:
            return sample_from_json(text)
        except ValueError as e:
            raise DataError(p, str(e)) from None

    for sample_json, response in rows:
        if response not in ("accepted", "dismissed"):
            continue
        s = parse(sample_json)
        out.append(
            replace(s, label=1 if response == "accepted" else 0, kind="labelled", split="train", id=f"feedback:{s.id}")
        )
    for row_id, sample_json, response, weight, label in quiet:
        _check_implicit(p, row_id, response, weight, label)
        try:
            s = sample_from_json(sample_json)
        except ValueError:
            raise _damaged_implicit(p, row_id, "its sample is not a stored sample") from None
        if response == "quiet_focus" and not _kept_at_weight(s.id, float(weight)):
            continue
        out.append(
            replace(
                s,
                label=1 if response == "missed" else 0,
                kind="labelled",
                split="train",
                id=f"implicit:{response}:{s.id}",
            )
        )
    for sample_json, answer in asked:
        if answer not in ANSWERS:
            continue
        s = parse(sample_json)
        out.append(
            replace(
                s, label=1 if answer == "yes" else 0, kind="labelled", split="train", id=f"question:{answer}:{s.id}"
            )
        )
    return out
