"""Accept = help: the answer to an accepted offer, streamed, with follow-ups and ratings.

When the person accepts an offer (the page's button, ``a N`` in the terminal, a desktop
notification's action), :class:`LiveHelp` answers it in its own thread (deciding the next
moments never waits for it):

* the **question** is the offer's predicted query (How to Assist), or for a generic offer
  ``prompts/help_generic.txt`` ("what is the person trying to do and how can I help");
* the **context** is what the moment saw, kept compact (:func:`help_context`): the app, window
  and page in front, the last :data:`CONTEXT_EVENTS` events of the moment's context window, and
  the screen text (OCR rows) of the window in front, cut to :data:`SCREEN_CHARS` around an error
  or traceback when one is on screen (:func:`screen_region`), else its newest rows;
* the **prompt** is ``prompts/help_system.txt`` and ``prompts/help_context.txt`` with the question
  last, so a follow-up (and, for the local model, llama.cpp's prefix reuse) only adds its tail;
* while an offer is on screen, a local model reads its help prompt ahead (:meth:`LiveHelp.show`:
  the offer's context and question, a one-token answer thrown away), so that on Accept llama.cpp
  reuses that prompt from its cache and the first words come at once. At Accept the window is
  read again; when its pixels are those the read-ahead read (:attr:`Grounding.pixels
  <proagent.live._ground.Grounding.pixels>`), the read-ahead's context is sent as it was, so the
  prompt is token for token the one read ahead and only the last token is evaluated; when the
  window changed, the new text is read (never a stale context). While the offer is up, its
  window is looked at every :data:`READ_AHEAD_EVERY` seconds (for :data:`READ_AHEAD_SECONDS`
  at most) and the prompt read ahead again when it changed;
* the **model** (:func:`make_help_model`) is the run's ``--model``: a ``local/...`` model streams
  token by token from llama.cpp (:func:`proagent.models.local.stream_chat`) in a child process
  of its own (role ``help``), beside the How calls' child: a How call never overwrites the help's
  KV cache, and help first's stop of a How call in flight (which kills the How child) never
  costs the answer a model load (docs/architecture.md, live); any other inspect model
  (``--model-base-url``) answers through inspect, the whole answer at once.

Privacy (``--send-screen``, :data:`SEND_SCREEN`): ``raw`` sends the context as it is, ``redacted``
first replaces every finding of curate's PII recognizers (:func:`proagent.curate.find_pii`, the
same registry ``proagent curate`` uses) in the context and the predicted query by its typed
placeholder (``[EMAIL]``, ``[PHONE]``...), ``never`` sends no screen text at all (and redacts the
rest). Default: ``raw`` for a local model, ``redacted`` for any other. What was sent is recorded
as its SHA-256 and the placeholder counts (``help_turns.sent_sha256``, ``placeholders``, and the
``proagent.live.help`` logger), never the text.

Every turn is a row of ``help_turns`` in ``feedback.db`` (0600): the question (role ``user``)
and the answer (role ``assistant``) with the seconds from the accept (or the follow-up) to its
first token and to its end, and its tokens. A rating (``+ N`` / ``- N``, the page's thumbs) is a
row of ``help_ratings`` on the offer's latest answer: a How-to-Assist label
(:func:`rated_help` reads them back).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import queue
import re
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from ..agent.prompting import render_event, web_page
from ..errors import DataError, RunError
from ..prompt_files import prompt_template, prompt_text
from ..records import Sample
from ..sources.lifetrace_schema import connect_read_only
from ._feedback import FeedbackStore, feedback_db_path, sample_from_json
from ._privacy import SEND_SCREEN, check_send_screen, default_send_screen, is_local_model, redact_text

__all__ = [
    "CONTEXT_EVENTS",
    "HELP_MAX_TOKENS",
    "SCREEN_CHARS",
    "SEND_SCREEN",
    "HelpContext",
    "HelpModel",
    "InspectHelpModel",
    "context_free_messages",
    "LiveHelp",
    "LocalHelpModel",
    "ScriptedHelpModel",
    "default_send_screen",
    "help_context",
    "help_messages",
    "is_local_model",
    "make_help_model",
    "rated_help",
    "screen_region",
]

log = logging.getLogger("proagent.live.help")

SCREEN_CHARS = 1500
"""Screen text of the window in front put in the help's context, characters (about 400 tokens)."""
CONTEXT_EVENTS = 6
"""Most recent events of the moment's context window listed in the help's context."""
HELP_MAX_TOKENS = 400
"""Answer budget of one turn, tokens."""
MAX_QUESTION_CHARS = 2000
"""Longest follow-up accepted, characters (Unicode code points, as the page's box counts them; its
whitespace runs counted as one)."""
READ_AHEAD_EVERY = 5.0
"""While an offer is on screen and unanswered, its window is read again this often (seconds; the
log's rows and one decode of the newest screenshot, cached by id) and its help prompt read ahead
again when the window changed."""
READ_AHEAD_SECONDS = 120.0
"""How long after an offer is shown its window keeps being looked at (seconds): the bound on
that work (an offer left on screen costs nothing after it)."""
PERSIST_SECONDS = 0.5
"""While an answer streams, its text so far is written to ``feedback.db`` at most this often
(seconds): a kill loses at most this much of it."""

_ERROR = re.compile(
    r"Traceback \(most recent call last\)|\b\w*(Error|Exception)\b[:(]|\bFAILED\b|\berror(\[\w+\])?:|"
    r"\bpanic(ked)?\b|\bfatal:|\bSegmentation fault\b",
    re.IGNORECASE,
)
"""Where an error shows on screen: Python tracebacks and ``XxxError:`` lines, pytest's FAILED,
compiler and git ``error:``/``fatal:``, Rust/Go panics."""

_PREPARE = "\0prepare"
"""A worker job that reads an offer's help prompt ahead instead of answering it."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS help_turns (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    offer_id INTEGER NOT NULL REFERENCES offers(id),
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    text TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'done' CHECK (status IN ('streaming', 'done', 'error', 'interrupted')),
    source TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    asked_at TEXT NOT NULL,
    first_token_seconds REAL,
    total_seconds REAL,
    prompt_tokens INTEGER,
    cached_tokens INTEGER,
    completion_tokens INTEGER,
    send_screen TEXT,
    sent_sha256 TEXT,
    placeholders TEXT,
    reading TEXT
);
CREATE INDEX IF NOT EXISTS help_turns_offer ON help_turns(offer_id);
CREATE TABLE IF NOT EXISTS help_ratings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    offer_id INTEGER NOT NULL REFERENCES offers(id),
    turn_id INTEGER NOT NULL REFERENCES help_turns(id),
    rating INTEGER NOT NULL CHECK (rating IN (-1, 1)),
    rated_at TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT ''
);
"""


# ------------------------------------------------------------------ context


def screen_region(text: str, chars: int = SCREEN_CHARS) -> str:
    """The part of a screen's OCR text worth a model's context, at most ``chars`` characters:
    from three rows above the first error or traceback (:data:`_ERROR`) onwards when one is on
    screen, else the newest rows (a terminal's or chat's latest lines are at the bottom). Blank
    rows are dropped. ``""`` for no text."""
    rows = [r.rstrip() for r in (text or "").splitlines() if r.strip()]
    if not rows:
        return ""
    hit = next((i for i, r in enumerate(rows) if _ERROR.search(r)), None)
    if hit is not None:
        out, n = [], 0
        for r in rows[max(0, hit - 3) :]:
            if n + len(r) + 1 > chars:
                break
            out.append(r)
            n += len(r) + 1
        return "\n".join(out) if out else rows[hit][:chars]
    out, n = [], 0
    for r in reversed(rows):
        if n + len(r) + 1 > chars:
            break
        out.append(r)
        n += len(r) + 1
    return "\n".join(reversed(out)) if out else rows[-1][-chars:]


@dataclass(frozen=True)
class HelpContext:
    """The context message of one offer's help, as it is sent."""

    text: str
    """The user message before the question (:func:`help_context`)."""
    question: str
    """The first question (the offer's query, or the generic one), as sent."""
    send_screen: str
    """``never``, ``redacted`` or ``raw``."""
    placeholders: Mapping[str, int]
    """PII findings replaced, by type (empty unless ``redacted``/``never``)."""
    screen_lines: int = 0
    """Lines of screen text in the context (0: none sent, or none on screen)."""

    @property
    def sha256(self) -> str:
        """SHA-256 (hex) of the context and first question sent: what the log records instead of the text."""
        return hashlib.sha256((self.text + "\n" + self.question).encode("utf-8")).hexdigest()


def help_context(sample: Sample, query: str | None, send_screen: str = "raw") -> HelpContext:
    """The help's context for the moment of ``sample`` and its first question.

    Args:
        sample: the moment the offer was made at (``feedback.db``'s ``sample_json``).
        query: the offer's predicted query (``None``/empty: the generic question,
            ``prompts/help_generic.txt``).
        send_screen: ``raw`` (as captured), ``redacted`` (curate's PII recognizers replace each
            finding in the whole context and the query by its typed placeholder) or ``never``
            (no screen text; the rest redacted).

    Raises:
        ValueError: an unknown ``send_screen``.
    """
    check_send_screen(send_screen)
    cur = sample.current
    shot = next((s.ocr_text for s in reversed(cur.focused_screenshots) if s.ocr_text.strip()), "")
    where = ""
    if not _ERROR.search(shot):  # an error seen just before (a traceback, then the docs) comes first
        for e in reversed(list(sample.context)[-CONTEXT_EVENTS:]):
            seen = next((s.ocr_text for s in reversed(e.focused_screenshots) if _ERROR.search(s.ocr_text)), "")
            if seen:
                shot, where = seen, f" seen just before in {e.app_name or 'another window'}"
                break
    lines = 0
    if send_screen == "never":
        screen, note = "(not sent: --send-screen never)", "not sent"
    else:
        screen = screen_region(shot)
        lines = len(screen.splitlines())
        screen = screen or "(no screen text)"
        note = f"around the error{where or ' on screen'}" if _ERROR.search(screen) else "newest rows"
    events = "\n".join(render_event(e) for e in list(sample.context)[-CONTEXT_EVENTS:]) or "(nothing earlier)"
    page = web_page(cur.url)
    question = (query or "").strip()
    question = f"Question: {question}" if question else prompt_text("live", "help_generic.txt").strip()
    text = prompt_template("live", "help_context.txt").substitute(
        app=cur.app_name or "(unknown)",
        title=" ".join(cur.window_title.split())[:160] or "(unknown)",
        page=f"\n- Web page: {page}" if page else "",
        events=events,
        screen_note=note,
        screen=screen,
        question="",
    )
    text = text.rstrip() + "\n\n"
    counts: Counter[str] = Counter()
    if send_screen != "raw":
        text, question = redact_text(text, counts), redact_text(question, counts)
    return HelpContext(text, question, send_screen, dict(counts), lines)


def context_free_messages(ctx: HelpContext) -> list[dict[str, str]]:
    """The help without its grounding: the system prompt and the first question only (no screen,
    no events, no app); what ``benchmarks/help.py`` and the ``help`` task compare the help with."""
    return [
        {"role": "system", "content": prompt_text("live", "help_system.txt").strip()},
        {"role": "user", "content": ctx.question},
    ]


def help_messages(ctx: HelpContext, turns: list[tuple[str, str]] = ()) -> list[dict[str, str]]:
    """The chat of one offer's help: the system prompt, the context with the first question, then
    the earlier ``(answer, follow-up)`` turns in order (``turns``: ``(role, text)`` after the first
    question)."""
    msgs = [
        {"role": "system", "content": prompt_text("live", "help_system.txt").strip()},
        {"role": "user", "content": ctx.text + ctx.question},
    ]
    msgs += [{"role": r, "content": t} for r, t in turns]
    return msgs


# ------------------------------------------------------------------ models


class HelpModel(Protocol):
    """Answers a chat, calling ``on_delta`` with each piece of text as it comes."""

    name: str
    local: bool
    """Whether the model runs on this machine (``--send-screen``'s default)."""

    def stream(self, messages: list[dict[str, str]], on_delta: Callable[[str], None]) -> dict[str, Any]:
        """The answer: ``{"text", "prompt_tokens", "cached_tokens", "completion_tokens"}`` (``None`` where unknown)."""
        ...


class LocalHelpModel:
    """A ``local/...`` model, streamed token by token (:func:`proagent.models.local.stream_chat`) from a
    llama.cpp child of its own (role ``help``; the How calls have theirs): its KV cache holds the
    prompt read ahead until Accept, and a How call cancelled in flight (which kills its child) never
    makes the answer wait for a model load."""

    local = True

    def __init__(
        self, model: str, model_args: Mapping[str, Any] | None = None, *, max_tokens: int = HELP_MAX_TOKENS
    ) -> None:
        self.name, self.args, self.max_tokens = model, dict(model_args or {}), max_tokens

    def stream(self, messages: list[dict[str, str]], on_delta: Callable[[str], None]) -> dict[str, Any]:
        from ..models.local import stream_chat

        return stream_chat(
            self.name.removeprefix("local/"),
            messages,
            on_delta,
            max_tokens=self.max_tokens,
            model_args=self.args,
            role="help",
        )

    def warm(self) -> dict[str, Any]:
        """Load the help's llama.cpp child and have it read the system prompt (:meth:`prefill`): the
        first offer's read-ahead then evaluates only its context, not a model load."""
        return self.prefill([{"role": "system", "content": prompt_text("live", "help_system.txt").strip()}])

    def prefill(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        """Have llama.cpp read ``messages`` now (a one-token answer, thrown away): its KV cache keeps
        them, so the answer to the same chat later starts at once (prefix reuse)."""
        from ..models.local import stream_chat

        return stream_chat(
            self.name.removeprefix("local/"), messages, lambda _: None, max_tokens=1, model_args=self.args, role="help"
        )


class InspectHelpModel:
    """Any inspect model (``openai/...``, ``openai-api/...`` with a base URL...): the whole answer comes
    at once (inspect's ``generate`` does not stream), as one piece."""

    def __init__(
        self,
        model: Any,
        model_args: Mapping[str, Any] | None = None,
        *,
        base_url: str | None = None,
        max_tokens: int = HELP_MAX_TOKENS,
    ) -> None:
        import asyncio

        from inspect_ai.model import GenerateConfig, get_model

        self.name = model if isinstance(model, str) else str(model)
        self.local = is_local_model(self.name)
        """Only inspect's in-process ``mockllm/`` is local here (:func:`~proagent.live._privacy.is_local_model`)."""
        from ..bench.running import api_limits, offline_mock

        offline_mock()  # mockllm/ counts its tokens without tiktoken's downloaded table
        self._model = get_model(model, base_url=base_url, **dict(model_args or {})) if isinstance(model, str) else model
        self._base_url = base_url
        # a model API's call is bounded (attempt timeout, retries), as the How call's
        limits = {} if self.local else api_limits()
        self._config = GenerateConfig(temperature=0.0, max_tokens=max_tokens, seed=0, **limits)
        self._loop = asyncio.new_event_loop()

    def stream(self, messages: list[dict[str, str]], on_delta: Callable[[str], None]) -> dict[str, Any]:
        from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

        kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
        msgs = [kinds[m["role"]](content=m["content"]) for m in messages]
        try:
            out = self._loop.run_until_complete(self._model.generate(msgs, config=self._config))
        except Exception as e:  # noqa: BLE001 - a model API's failure is one line (endpoint, fix, key variable)
            from ..bench.running import api_failure

            if self.local:
                raise
            err = api_failure(e, self.name, self._base_url, api=getattr(self._model, "api", None))
            if err is None:  # the request's own refusal: its provider's line, never inspect's request dump
                from ..bench.running import api_error_line

                raise RunError(" ".join(api_error_line(e).split())[:300]) from None
            raise RunError(err.problem) from None  # shown under the offer; the run goes on
        text = out.completion
        if text:
            on_delta(text)
        u = out.usage
        return {
            "text": text,
            "prompt_tokens": u.input_tokens if u else None,
            "cached_tokens": u.input_tokens_cache_read if u else None,
            "completion_tokens": u.output_tokens if u else None,
        }


class ScriptedHelpModel:
    """A scripted answerer for tests and demos: ``reply(messages) -> str``, streamed word by word with
    ``delay`` seconds between words (token counts are word counts)."""

    def __init__(
        self,
        reply: Callable[[list[dict[str, str]]], str],
        *,
        delay: float = 0.05,
        local: bool = True,
        name: str = "scripted",
    ) -> None:
        self.reply, self.delay, self.local, self.name = reply, delay, local, name
        self.requests: list[list[dict[str, str]]] = []

    def stream(self, messages: list[dict[str, str]], on_delta: Callable[[str], None]) -> dict[str, Any]:
        self.requests.append(messages)
        text = self.reply(messages)
        pieces = re.findall(r"\S+\s*|\s+", text)
        for p in pieces:
            time.sleep(self.delay)
            on_delta(p)
        return {
            "text": text,
            "prompt_tokens": sum(len(m["content"].split()) for m in messages),
            "cached_tokens": None,
            "completion_tokens": len(pieces),
        }


def make_help_model(model: str, model_args: Mapping[str, Any] | None = None, base_url: str | None = None) -> HelpModel:
    """The help model for ``--model``: :class:`LocalHelpModel` for ``local/...``, else :class:`InspectHelpModel`."""
    if str(model).startswith("local/"):
        return LocalHelpModel(model, model_args)
    return InspectHelpModel(model, model_args, base_url=base_url)


# ------------------------------------------------------------------ the helper


@dataclass
class _Turn:
    id: int
    offer_id: int
    role: str
    text: str
    status: str


class _Interrupted(Exception):
    """The run is stopping (Ctrl-C): the answer streaming is abandoned and kept as it is."""


_ORDINALS = {1: "1st", 2: "2nd", 3: "3rd"}


def _ordinal(n: int) -> str:
    return _ORDINALS.get(n, f"{n}th") if not 10 <= n % 100 <= 20 else f"{n}th"


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring an older ``help_turns`` (before ``interrupted`` and ``reading``) to :data:`_SCHEMA`:
    SQLite cannot change a CHECK constraint, so the table is copied into a new one, in one
    transaction (the rows keep their ids: ratings still point at them)."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'help_turns'").fetchone()
    if row is None or "'interrupted'" in row[0]:
        return
    cols = [r[1] for r in conn.execute('PRAGMA table_info("help_turns")')]
    with conn:
        conn.execute("ALTER TABLE help_turns RENAME TO help_turns_old")
        conn.execute("DROP INDEX IF EXISTS help_turns_offer")
        conn.executescript(_SCHEMA.split("CREATE TABLE IF NOT EXISTS help_ratings")[0])
        names = ", ".join(cols)
        conn.execute(f"INSERT INTO help_turns ({names}) SELECT {names} FROM help_turns_old")
        conn.execute("DROP TABLE help_turns_old")


_TURN_COLUMNS = (
    "id, offer_id, role, text, status, first_token_seconds, total_seconds, prompt_tokens, cached_tokens, "
    "completion_tokens, sent_sha256, placeholders, reading"
)
"""The ``help_turns`` columns :func:`_check_turn` validates, in its order."""

_TURN_STATUS = ("streaming", "done", "error", "interrupted")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _damaged_turn(path: Path, row_id: object, what: str) -> DataError:
    return DataError(
        path,
        f"help turn row {row_id} is damaged ({what}); repair: delete it "
        f"(sqlite3 {path} 'DELETE FROM help_turns WHERE id = {row_id}'), the other turns stay",
    )


def _check_turn(path: Path, row: tuple[Any, ...] | sqlite3.Row) -> None:
    """Refuse a ``help_turns`` row (columns :data:`_TURN_COLUMNS`) that a damaged ``feedback.db``
    holds, as one :class:`~proagent.errors.DataError` naming the file, the row and the repair: an
    offer id that is not an integer, a role other than ``user``/``assistant``, a text that is not
    text, a status outside :data:`_TURN_STATUS`, a time or token count that is not a number >= 0,
    a ``sent_sha256`` that is not 64 lower-case hex digits, ``placeholders`` that are not a JSON
    object, a ``reading`` that is not text. Never read as empty (issue 46)."""
    rid, oid, role, text, status, first, total, prompt, cached, completion, sha, ph, reading = row
    if isinstance(oid, bool) or not isinstance(oid, int):
        raise _damaged_turn(path, rid, f"its offer id {str(oid)[:20]!r} is not an integer")
    if role not in ("user", "assistant"):
        raise _damaged_turn(path, rid, f"role {str(role)[:20]!r} is neither user nor assistant")
    if not isinstance(text, str):
        raise _damaged_turn(path, rid, f"its text is {type(text).__name__}, not text")
    if status not in _TURN_STATUS:
        raise _damaged_turn(path, rid, f"status {str(status)[:20]!r} is none of {', '.join(_TURN_STATUS)}")
    for name, v in (("first_token_seconds", first), ("total_seconds", total)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < float("inf")):
            raise _damaged_turn(path, rid, f"its {name} is not a number of seconds")
    for name, v in (("prompt_tokens", prompt), ("cached_tokens", cached), ("completion_tokens", completion)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise _damaged_turn(path, rid, f"its {name} is not a count")
    if sha is not None and not (isinstance(sha, str) and _SHA256.fullmatch(sha)):
        raise _damaged_turn(path, rid, "its sent_sha256 is not 64 hex digits")
    if ph is not None:
        try:
            ok = isinstance(ph, str) and isinstance(json.loads(ph), dict)
        except ValueError:
            ok = False
        if not ok:
            raise _damaged_turn(path, rid, "its placeholders are not a JSON object")
    if reading is not None and not isinstance(reading, str):
        raise _damaged_turn(path, rid, "its reading is not text")


class LiveHelp:
    """The help for accepted offers of one live folder: a worker thread answers them in turn.

    Args:
        store: the run's ``feedback.db``.
        model: the help model (``None``: accepting stores the answer only, as before; the page and
            terminal say there is no help model).
        now: the run's clock (the times stored).
        send_screen: ``never``, ``redacted`` or ``raw`` (default: :func:`default_send_screen`).
        screen: reads the window in front again at Accept (:class:`~proagent.live._ground.ScreenReader`:
            the log's text written since the moment, and live's own OCR of the newest screenshot
            when it has none); ``None``: the moment as it was decided (a replay).
        persist_seconds: an answer's text so far is written to ``feedback.db`` at most this often
            while it streams (:data:`PERSIST_SECONDS`), so a kill keeps it.
        read_ahead_every: how often the window of the offer on screen is read again for its
            read-ahead, seconds (:data:`READ_AHEAD_EVERY`).

    Order (help first, issue 42): answers (accepts, follow-ups, retries) are taken before any
    read-ahead, in the order asked; while one is queued or streaming, :meth:`answering` is true
    and the live loop holds its How calls (see :class:`~proagent.live.LiveAgent`'s ``help``). A
    second accept while one is answered is told its place (``queued: 2nd, after the answer to
    offer 3``).

    Listeners (:meth:`subscribe`) get ``(kind, offer_id, text)`` with kind ``queued`` (its place),
    ``reading`` (what the answer reads, :meth:`~proagent.live._ground.Grounding.line`), ``start``
    (text: the question), ``delta`` (a piece of the answer), ``done`` (the whole answer),
    ``interrupted`` (the text so far, the run stopping) or ``error`` (why), in the worker thread.

    A stop (:meth:`close`, Ctrl-C) during an answer keeps its text so far with status
    ``interrupted``; an answer left ``streaming`` by a killed run is marked ``interrupted`` when the
    folder is opened again. Accepting such an offer again (or the page's Retry) answers it anew.

    Raises:
        ValueError: an unknown ``send_screen``.
    """

    def __init__(
        self,
        store: FeedbackStore,
        model: HelpModel | None,
        now: Callable[[], datetime],
        *,
        send_screen: str | None = None,
        screen: Any = None,
        persist_seconds: float | None = None,
        read_ahead_every: float = READ_AHEAD_EVERY,
    ) -> None:
        self.store, self.model, self.now = store, model, now
        # raw for a model on this machine, redacted for any other (default_send_screen by model name)
        self.send_screen = send_screen or ("raw" if model is None or model.local else "redacted")
        check_send_screen(self.send_screen)
        self.screen = screen
        self.persist_seconds = PERSIST_SECONDS if persist_seconds is None else float(persist_seconds)
        self.page_url: str | None = None
        """The offers page's address (set by the page), for a desktop notification's Accept."""
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(store.path, check_same_thread=False, timeout=10.0)
        _migrate(self._conn)
        self._conn.executescript(_SCHEMA)
        try:
            for row in self._conn.execute(f"SELECT {_TURN_COLUMNS} FROM help_turns ORDER BY id"):
                _check_turn(store.path, row)  # a damaged row: one line naming it, before anything is marked
        except DataError:
            self._conn.close()
            raise
        with self._conn:
            left = self._conn.execute(
                "UPDATE help_turns SET status = 'interrupted' WHERE status = 'streaming'"
            ).rowcount  # a run killed while it answered: its text so far stays, marked
        if left:
            log.info("%d answer(s) left streaming by an earlier run marked interrupted", left)
        self._contexts: dict[int, tuple[str | None, HelpContext, Any]] = {}
        self._live: dict[int, _Turn] = {}  # answers being streamed, by offer
        self._pending: set[int] = set()
        self._order: list[int] = []  # offers whose answer is queued or streaming, in order
        self._notes: dict[int, str] = {}  # an answer's "queued: ..." note until it starts
        self._listeners: list[Callable[[str, int, str], None]] = []
        self._jobs: queue.PriorityQueue[tuple[int, int, tuple[int, str, str, str, float] | None]] = (
            queue.PriorityQueue()
        )
        self._seq = itertools.count()
        self._closed = False
        self._db_closed = False
        self._stopping = threading.Event()
        self.prepared: dict[int, float] = {}
        """Seconds each offer's help prompt took to read ahead (:meth:`show`), by offer id."""
        self.readings: dict[int, Any] = {}
        """What each offer's latest answer read (:class:`~proagent.live._ground.Grounding`), by offer id."""
        self.timings: dict[int, dict[str, Any]] = {}
        """Where each offer's latest answer spent its time, by offer id: ``queue_s`` (Accept until the
        worker took it: an answer before it, or a read-ahead in progress), ``ground_s`` (reading the
        window again, OCR included), ``reused_reading`` (the window's pixels were those read ahead:
        the read-ahead's context sent as it was), ``load_s`` (waiting for the model to load),
        ``prompt_tokens`` (evaluated at Accept), ``cached_tokens`` (reused from llama.cpp's cache),
        ``first_s`` and ``total_s`` (Accept to the first words, to the end), seconds."""
        self.read_ahead_every = float(read_ahead_every)
        self._read_ahead: dict[int, list[dict[str, str]]] = {}  # the messages read ahead, by offer
        self._showing: tuple[int, float] | None = None  # the offer on screen last shown, and when
        self._reused: dict[int, bool] = {}
        self._thread = threading.Thread(target=self._work, daemon=True, name="proagent-help")
        self._thread.start()

    # ------------------------------------------------------------ as a notifier: read the prompt ahead
    name = ""
    """As one of the run's notifiers it shows nothing (and is not named in ``offers.notifier``)."""

    def show(self, offer: Any) -> None:
        """An offer is on screen: a model that can (:meth:`LocalHelpModel.prefill`) reads its help
        prompt now, in the worker thread after any answer asked, so that Accept only waits for the answer."""
        if self.model is not None and hasattr(self.model, "prefill"):
            self._showing = (int(offer.id), time.monotonic())
            self._put(1, (int(offer.id), "prepare", "", "", time.perf_counter()))

    def update(self, offer: Any) -> None:
        """The offer's query came after it was shown: the prompt is read again with it."""
        self.show(offer)

    # ------------------------------------------------------------ requests (any thread, return at once)
    def _put(self, priority: int, job: tuple[int, str, str, str, float] | None) -> None:
        self._jobs.put((priority, next(self._seq), job))

    def subscribe(self, fn: Callable[[str, int, str], None]) -> None:
        """Call ``fn(kind, offer_id, text)`` on every event of every answer (see the class)."""
        self._listeners.append(fn)

    def answering(self) -> bool:
        """Whether an answer is queued or streaming (the live loop holds How calls meanwhile)."""
        with self._lock:
            return bool(self._order)

    def accept(self, offer_id: int, source: str = "") -> bool:
        """Answer an accepted offer: its first answer, or again when its last answer was
        interrupted or failed (a retry). Returns whether an answer was started (queued);
        ``False`` without a model, for an unknown offer, or one answered or being answered."""
        oid = int(offer_id)
        if self.model is None or self._closed or self._offer(oid) is None:
            return False
        with self._lock:
            if oid in self._pending:
                return False
            last = self._conn.execute(
                "SELECT role, status FROM help_turns WHERE offer_id = ? ORDER BY id DESC LIMIT 1", (oid,)
            ).fetchone()
            if last is not None and last == ("assistant", "done"):
                return False
            kind = "answer" if last is None else "retry"
            self._pending.add(oid)
            ahead = list(self._order)
            self._order.append(oid)
            note = f"queued: {_ordinal(len(ahead) + 1)}, after the answer to offer {ahead[-1]}" if ahead else ""
            if note:
                self._notes[oid] = note
        if note:
            self._emit("queued", oid, note)
        self._put(0, (oid, kind, "", source, time.perf_counter()))
        return True

    def follow_up(self, offer_id: int, text: str, source: str = "") -> str | None:
        """Ask ``text`` under the offer's answer (the same context, the turns so far). Returns ``None``
        when it was queued, else why not (no model, no answer yet, one still streaming, the offer
        dismissed, empty or over :data:`MAX_QUESTION_CHARS` characters)."""
        oid, text = int(offer_id), " ".join(str(text).split())
        if self.model is None:
            return "no help model (--model none)"
        if not text:
            return "empty question"
        if len(text) > MAX_QUESTION_CHARS:
            return f"question over {MAX_QUESTION_CHARS:,} characters ({len(text):,})"
        offer = self._offer(oid)
        if offer is not None and offer[2] == "dismissed":
            return "the offer was dismissed (accept it again to ask about it)"
        with self._lock:
            if oid in self._pending:
                return "the answer is still coming"
            done = self._conn.execute(
                "SELECT 1 FROM help_turns WHERE offer_id = ? AND role = 'assistant' AND status = 'done' LIMIT 1",
                (oid,),
            ).fetchone()
            if done is None:
                return "no answer to follow up yet (accept the offer first)"
            self._pending.add(oid)
            ahead = list(self._order)
            self._order.append(oid)
            if ahead:
                self._notes[oid] = f"queued: {_ordinal(len(ahead) + 1)}, after the answer to offer {ahead[-1]}"
        if ahead:
            self._emit("queued", oid, self._notes[oid])
        self._put(0, (oid, "follow", text, source, time.perf_counter()))
        return None

    def rate(self, offer_id: int, rating: int, source: str = "") -> bool:
        """Rate the offer's latest answer ``+1`` (helpful) or ``-1``; ``False`` when it has none."""
        if rating not in (-1, 1):
            return False
        with self._lock:
            if self._db_closed:
                return False
            with self._conn:
                row = self._conn.execute(
                    "SELECT id FROM help_turns WHERE offer_id = ? AND role = 'assistant' AND "
                    "status = 'done' ORDER BY id DESC LIMIT 1",
                    (int(offer_id),),
                ).fetchone()
                if row is None:
                    return False
                self._conn.execute(
                    "INSERT INTO help_ratings (offer_id, turn_id, rating, rated_at, source) VALUES (?,?,?,?,?)",
                    (int(offer_id), int(row[0]), int(rating), self.now().isoformat(), source),
                )
        return True

    def turns(self, offer_id: int) -> list[dict[str, Any]]:
        """The offer's turns, oldest first: ``{id, role, text, status, first_token_seconds,
        total_seconds, completion_tokens, rating, reading}`` (an answer being streamed: its text so
        far; ``status`` ``interrupted``: the text it had when the run stopped). An answer queued
        behind another is a last turn ``{id: 0, status: "queued", note: "queued: 2nd, ..."}``."""
        oid = int(offer_id)
        with self._lock:
            if self._db_closed:
                return []
            rows = self._conn.execute(
                f"SELECT {_TURN_COLUMNS}, (SELECT rating FROM help_ratings r WHERE r.turn_id = help_turns.id "
                "ORDER BY r.id DESC LIMIT 1) FROM help_turns WHERE offer_id = ? ORDER BY id",
                (oid,),
            ).fetchall()
            for r in rows:
                _check_turn(self.store.path, r[:-1])
            keys = (
                "id",
                "role",
                "text",
                "status",
                "first_token_seconds",
                "total_seconds",
                "completion_tokens",
                "rating",
                "reading",
            )
            # (id, role, text, status, first_token_seconds, total_seconds, completion_tokens, rating, reading)
            out = [dict(zip(keys, (r[0], r[2], r[3], r[4], r[5], r[6], r[9], r[13], r[12]))) for r in rows]
            live = self._live.get(oid)
            pending = oid in self._pending
            note = self._notes.get(oid)
            text = live.text if live is not None else ""
        for t in out:
            if live is not None and t["id"] == live.id:
                t["text"] = text
        if pending and live is None:
            out.append(
                {"id": 0, "role": "assistant", "text": "", "status": "queued" if note else "streaming", "note": note}
            )
        return out

    def busy(self, offer_id: int) -> bool:
        """Whether an answer for the offer is queued or streaming."""
        with self._lock:
            return int(offer_id) in self._pending

    def close(self, timeout: float = 5.0) -> None:
        """Stop: an answer streaming is abandoned at its next piece and kept with its text so far,
        marked ``interrupted`` (waits at most ``timeout`` seconds for the worker; an answer still
        not stopped then is marked from here and nothing more is written). With no answer streaming
        it does not wait for the worker (a daemon thread): a model loading or a prompt read ahead
        keeps nothing worth a wait, and Ctrl-C stops live within a second. A second call does nothing."""
        if self._closed:
            return
        self._closed = True
        self._stopping.set()
        self._put(-1, None)
        with self._lock:
            streaming = bool(self._live)
        self._thread.join(timeout if streaming else min(timeout, 0.1))
        with self._lock:
            for turn in self._live.values():  # the worker is still inside the model (prompt evaluation)
                try:
                    with self._conn:
                        self._conn.execute(
                            "UPDATE help_turns SET text = ?, status = 'interrupted' WHERE id = ? AND status = 'streaming'",
                            (turn.text, turn.id),
                        )
                except sqlite3.Error:
                    pass
            self._db_closed = True
            self._conn.close()

    # ------------------------------------------------------------ the worker
    def _offer(self, oid: int) -> tuple[str | None, str, str | None] | None:
        """``(query, sample_json, latest response)`` of an offer; ``None`` when unknown."""
        with self._lock:
            if self._db_closed:
                return None
            row = self._conn.execute(
                "SELECT query, sample_json, (SELECT response FROM responses r WHERE r.offer_id = o.id "
                "ORDER BY r.id DESC LIMIT 1) FROM offers o WHERE id = ?",
                (oid,),
            ).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def _turn_count(self, oid: int) -> int:
        return int(self._conn.execute("SELECT count(*) FROM help_turns WHERE offer_id = ?", (oid,)).fetchone()[0])

    def _emit(self, kind: str, oid: int, text: str) -> None:
        for fn in list(self._listeners):
            try:
                fn(kind, oid, text)
            except Exception:  # noqa: BLE001 - a listener's failure (a closed terminal) must not stop the help
                log.debug("help listener failed", exc_info=True)

    def _write(self, sql: str, args: tuple[Any, ...] | list[Any]) -> int | None:
        """One statement in its own transaction; nothing once :meth:`close` closed the database."""
        with self._lock:
            if self._db_closed:
                return None
            with self._conn:
                return self._conn.execute(sql, args).lastrowid

    def _insert(self, oid: int, role: str, text: str, status: str, source: str, **cols: Any) -> int:
        names = ["offer_id", "role", "text", "status", "source", "model", "asked_at", *cols]
        vals = [
            oid,
            role,
            text,
            status,
            source,
            self.model.name if self.model else "",
            self.now().isoformat(),
            *cols.values(),
        ]
        rid = self._write(f"INSERT INTO help_turns ({', '.join(names)}) VALUES ({', '.join('?' * len(vals))})", vals)
        if rid is None:
            raise _Interrupted()
        return int(rid)

    def _work(self) -> None:
        if self.model is not None and hasattr(self.model, "warm"):
            # the help's own model loads at start, before any read-ahead (a warm after one would
            # replace the prompt read ahead in llama.cpp's slot with the system prompt alone)
            try:
                self.model.warm()
            except Exception as e:  # noqa: BLE001 - the first answer says what fails
                log.info("loading the help model failed: %s", e)
        while True:
            try:
                _, _, job = self._jobs.get(timeout=self.read_ahead_every)
            except queue.Empty:
                self._refresh()
                continue
            if job is None or self._stopping.is_set():
                return
            oid, kind, follow, source, asked = job
            if kind == "prepare":
                self._prepare(oid)
                continue
            taken = time.perf_counter()
            try:
                self._answer(oid, kind, follow, source, asked, taken)
            except _Interrupted:
                return
            except Exception as e:  # noqa: BLE001 - one failed answer is shown and stored; the run goes on
                log.warning("help for offer %s failed: %s", oid, e)
                self._emit("error", oid, str(e))
            finally:
                with self._lock:
                    self._pending.discard(oid)
                    self._live.pop(oid, None)
                    self._notes.pop(oid, None)
                    if oid in self._order:
                        self._order.remove(oid)

    def _context(self, oid: int, fresh: bool = True) -> HelpContext:
        """The offer's context: kept once answered (follow-ups read what the first answer read),
        else built now, reading the window in front again (:attr:`screen`) unless ``fresh`` is false
        and one was built before."""
        query, sample_json, _ = self._offer(oid) or (None, "", None)
        known = self._contexts.get(oid)
        if known is not None and (known[0] == query or self._turn_count_locked(oid)):
            answered = self._answered(oid)
            if answered or not fresh or self.screen is None:
                return known[1]
        try:
            sample = sample_from_json(sample_json)
        except ValueError as e:
            raise DataError(self.store.path, f"offer {oid}: {e}") from None
        from ._ground import grounding_of

        if self.screen is not None and self.send_screen != "never":
            sample, g = self.screen.ground(sample)
        else:
            g = grounding_of(sample)
        was = known[2] if known is not None and known[0] == query else None
        if was is not None and g.pixels is not None and (was.pixels, was.window) == (g.pixels, g.window):
            # the window's pixels are those read before (ahead): the same reading, the same prompt
            # token for token (capture's OCR of a newer, identical screenshot may differ by a space)
            self._reused[oid] = True
            return known[1]  # type: ignore[index]
        self._reused[oid] = False
        ctx = help_context(sample, query, self.send_screen)
        if self.send_screen == "never":
            g = replace(g, source="not sent")
        else:
            g = replace(g, lines=ctx.screen_lines)
        self._contexts[oid] = (query, ctx, g)
        return ctx

    def _answered(self, oid: int) -> bool:
        with self._lock:
            if self._db_closed:
                return False
            return (
                self._conn.execute(
                    "SELECT 1 FROM help_turns WHERE offer_id = ? AND role = 'assistant' AND status = 'done' LIMIT 1",
                    (oid,),
                ).fetchone()
                is not None
            )

    def _turn_count_locked(self, oid: int) -> int:
        with self._lock:
            return 0 if self._db_closed else self._turn_count(oid)

    def _prepare(self, oid: int) -> None:
        """Read an offer's help prompt ahead (not once it is answered or queued to be)."""
        with self._lock:
            if self._db_closed or oid in self._pending or self._turn_count(oid):
                return
        try:
            t0 = time.perf_counter()
            messages = help_messages(self._context(oid))
            if messages == self._read_ahead.get(oid):
                return  # the window did not change: its prompt is read ahead already
            self.model.prefill(messages)  # type: ignore[union-attr]
            self._read_ahead[oid] = messages
            self.prepared[oid] = time.perf_counter() - t0
        except Exception as e:  # noqa: BLE001 - reading ahead is an optimisation: the answer will say what fails
            log.debug("reading offer %s's help prompt ahead failed: %s", oid, e)

    def _refresh(self) -> None:
        """No job for :attr:`read_ahead_every` seconds: the window of the offer on screen is read
        again and, when it changed, its prompt read ahead again (for :data:`READ_AHEAD_SECONDS`
        after it was shown, while it has no response: not once accepted, dismissed or ignored)."""
        shown = self._showing
        if shown is None or self.screen is None:
            return
        oid, since = shown
        offer = self._offer(oid)
        if time.monotonic() - since > READ_AHEAD_SECONDS or offer is None or offer[2] is not None:
            self._showing = None
            return
        self._prepare(oid)

    def _answer(self, oid: int, kind: str, follow: str, source: str, asked: float, taken: float) -> None:
        assert self.model is not None
        with self._lock:
            self._notes.pop(oid, None)
        queued = taken - asked
        t_ground = time.perf_counter()
        ctx = self._context(oid)
        ground_s = time.perf_counter() - t_ground
        g = self._contexts[oid][2]
        self.readings[oid] = g
        if kind == "answer":
            self._insert(oid, "user", ctx.question, "done", source)
        elif kind == "follow":
            self._insert(oid, "user", follow, "done", source)
        with self._lock:
            if self._db_closed:
                raise _Interrupted()
            done = self._conn.execute(
                f"SELECT {_TURN_COLUMNS} FROM help_turns WHERE offer_id = ? AND status = 'done' ORDER BY id", (oid,)
            ).fetchall()
        for r in done:
            _check_turn(self.store.path, r)
        rows = [(r[2], r[3]) for r in done]
        # the first question is in the context message; then the answers and follow-ups done so far
        # (a retry answers the last question again: its failed answer is not among them)
        messages = help_messages(ctx, [(r, t) for r, t in rows][1:])
        if kind != "follow" and g is not None:
            self._emit("reading", oid, g.line())
        self._emit("start", oid, follow or (rows[-1][1] if kind == "retry" and rows else ctx.question))
        sent = hashlib.sha256(json.dumps(messages, ensure_ascii=False).encode("utf-8")).hexdigest()
        log.info(
            "help for offer %s: %d messages to %s (send-screen %s), sha256 %s, placeholders %s, "
            "%s lines of screen text (%s)",
            oid,
            len(messages),
            self.model.name,
            ctx.send_screen,
            sent,
            dict(ctx.placeholders),
            g.lines if g is not None else 0,
            g.source if g is not None else "moment",
        )
        tid = self._insert(
            oid,
            "assistant",
            "",
            "streaming",
            "",
            send_screen=ctx.send_screen,
            sent_sha256=sent,
            placeholders=json.dumps(dict(ctx.placeholders), sort_keys=True),
            reading=g.line() if g is not None else None,
        )
        turn = _Turn(tid, oid, "assistant", "", "streaming")
        with self._lock:
            self._live[oid] = turn
        first: list[float] = []
        saved = [time.perf_counter(), 0]  # when, and how much of the text, was last written

        def delta(piece: str) -> None:
            if self._stopping.is_set():
                raise _Interrupted()
            if not first:
                first.append(time.perf_counter() - asked)
            with self._lock:
                turn.text += piece
                text = turn.text
            self._emit("delta", oid, piece)
            if time.perf_counter() - saved[0] >= self.persist_seconds and len(text) > saved[1]:
                # the text so far, so that a kill (SIGKILL, power) keeps it (marked interrupted on restart)
                self._write(
                    "UPDATE help_turns SET text = ?, first_token_seconds = ? WHERE id = ? AND status = 'streaming'",
                    (text, first[0], tid),
                )
                saved[:] = [time.perf_counter(), len(text)]

        try:
            usage = self.model.stream(messages, delta)
        except BaseException as e:
            stopped = isinstance(e, _Interrupted) or self._stopping.is_set()
            with self._lock:
                text = turn.text
            self._write(
                "UPDATE help_turns SET text = ?, status = ?, first_token_seconds = ?, total_seconds = ? WHERE id = ?",
                (
                    text if stopped else (text or f"(no answer: {e})"),
                    "interrupted" if stopped else "error",
                    first[0] if first else None,
                    time.perf_counter() - asked,
                    tid,
                ),
            )
            if stopped:
                self._emit("interrupted", oid, text)
                raise _Interrupted() from None
            raise
        total = time.perf_counter() - asked
        text = usage.get("text") or turn.text
        self.timings[oid] = timing = {
            "queue_s": queued,
            "ground_s": ground_s,
            "reused_reading": self._reused.get(oid, False) and kind != "follow",
            "load_s": usage.get("load_s"),
            "prompt_tokens": usage.get("prompt_tokens"),
            "cached_tokens": usage.get("cached_tokens"),
            "first_s": first[0] if first else None,
            "total_s": total,
        }
        log.info(
            "help for offer %s took %s", oid, {k: round(v, 3) if isinstance(v, float) else v for k, v in timing.items()}
        )
        self._write(
            "UPDATE help_turns SET text = ?, status = 'done', first_token_seconds = ?, total_seconds = ?, "
            "prompt_tokens = ?, cached_tokens = ?, completion_tokens = ? WHERE id = ?",
            (
                text,
                first[0] if first else None,
                total,
                usage.get("prompt_tokens"),
                usage.get("cached_tokens"),
                usage.get("completion_tokens"),
                tid,
            ),
        )
        self._emit("done", oid, text)


def rated_help(folder: str | Path) -> list[dict[str, Any]]:
    """The rated answers of a live folder (or a ``feedback.db``), oldest first: How-to-Assist labels
    ``{offer_id, sample (Sample), query, question, answer, rating (+1/-1), rated_at}`` (the latest
    rating of each answer).

    Raises:
        DataError: no feedback database, or it is unreadable.
    """
    p = feedback_db_path(folder)
    try:
        conn = connect_read_only(p)
        try:
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'help_ratings'").fetchone() is None:
                return []
            rows = conn.execute(
                "SELECT r.id, r.offer_id, o.sample_json, o.query, "
                "(SELECT text FROM help_turns q WHERE q.offer_id = t.offer_id AND q.role = 'user' AND q.id < t.id "
                " ORDER BY q.id DESC LIMIT 1), t.text, r.rating, r.rated_at FROM help_ratings r "
                "JOIN help_turns t ON t.id = r.turn_id JOIN offers o ON o.id = r.offer_id "
                "WHERE r.id = (SELECT max(id) FROM help_ratings r2 WHERE r2.turn_id = r.turn_id) ORDER BY r.id"
            ).fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError as e:
        raise DataError(p, f"cannot read feedback database ({e})") from None
    out = []
    for rid, o, s, q, qq, a, r, at in rows:
        try:
            if r not in (1, -1):
                raise ValueError(f"rating {r!r}")
            out.append(
                {
                    "offer_id": int(o),
                    "sample": sample_from_json(s),
                    "query": q,
                    "question": qq,
                    "answer": a,
                    "rating": int(r),
                    "rated_at": datetime.fromisoformat(at),
                }
            )
        except (TypeError, ValueError, KeyError) as e:
            raise DataError(
                p,
                f"help rating {rid} (offer {o}) is damaged ({type(e).__name__}); delete it "
                f"(sqlite3 {p} 'DELETE FROM help_ratings WHERE id = {rid}'), the other ratings stay",
            ) from None
    return out
