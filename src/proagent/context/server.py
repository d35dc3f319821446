"""The MCP server over an activity log (``proagent mcp DIR``), built on the official ``mcp`` SDK
(:class:`mcp.server.mcpserver.MCPServer`).

Tools (each with a JSON schema of its arguments and a typed result, :mod:`.records`):

* ``recent_activity(minutes)``: the events of the last ``minutes`` before the log's newest record;
* ``search_activity(query, since, until, app, limit)``: the closest events by e5 cosine
  (the RAG memory's embedder and faiss index), with times and apps;
* ``current_context()``: app, window, page host and the focused screen's text in front now;
* ``user_profile()``: the intention mix of the person's annotated LLM use, top apps and the
  persona memory's clusters (PersonaX: Ward linkage on e5 embeddings);
* ``offers(status, limit)`` and ``answer_offer(id, response)``: the live agent's ``feedback.db``
  (with ``--live DIR``); ``answer_offer`` is the only call that writes.

Resources: ``proagent://now`` (local time, zone, ready ranges: :mod:`._prompts`),
``proagent://timeline/today`` (the log's newest day) and the template
``proagent://timeline/{date}`` (``YYYY-MM-DD``). Prompts (slash commands in hosts):
``what_was_i_doing``, ``find_where_i_saw``, ``summarise_my_day``.

Every answer stays under ``max_tokens`` (default 10,000, estimated as UTF-8 bytes / 2.5:
:mod:`._paging`); a longer list is cut, says so in ``note``, and ``recent_activity`` /
``search_activity`` give a ``next_cursor`` for the rest.

Transports: stdio (:func:`serve_stdio`), or streamable HTTP on 127.0.0.1 (:func:`serve_http`)
with the project's server rules (:mod:`proagent.serve`): loopback bind, a random bearer token
compared in constant time, ``Host`` exactly ``127.0.0.1:PORT`` or ``localhost:PORT`` and an
``Origin``, when sent, of the server itself (the SDK's DNS-rebinding settings), a cross-site
``Sec-Fetch-Site`` refused, request bodies capped (:data:`MAX_BODY`), connections bounded.

A log error while serving (the file deleted, damaged, replaced, its key gone) answers the call
with an MCP tool error (``isError``, one line starting with the tool's name and saying why: SQLite
and file errors are named, and a failure nothing mapped gives its kind and first line instead of
the SDK's bare "Error executing tool" and traceback); it never stops the server. A deleted log is
no longer served from memory (:meth:`~._view.ActivityView.refresh`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import secrets
import socket
import sqlite3
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from ..errors import DataError, UsageError
from ._audit import AuditLog
from ._paging import DEFAULT_MAX_TOKENS, decode_cursor, encode_cursor, fit
from ._personas import CACHE_FILE as PERSONA_CACHE
from ._personas import PersonaWriter
from ._view import MAX_TEXT, ActivityView, Entry
from .records import (
    ActivityItem,
    CurrentContext,
    IntentionShare,
    Now,
    OfferAnswer,
    OfferItem,
    OfferList,
    PersonaCluster,
    RecentActivity,
    SearchHit,
    SearchResult,
    Timeline,
    UserProfile,
)

__all__ = [
    "MAX_BODY",
    "MAX_EVENTS",
    "MAX_ID",
    "SNIPPET",
    "ContextService",
    "build_server",
    "serve_http",
    "serve_stdio",
]

SNIPPET = 300
"""Characters of screen text a search hit shows."""
MAX_BODY = 64 * 1024
"""Cap on an HTTP request body, bytes (a tool call is well under 1 KiB)."""
MAX_EVENTS = 500
"""Events one ``recent_activity`` answer lists at most (before the token cap)."""
CURSOR_DOC = "next_cursor of the previous answer, for the rest of a cut answer (same other arguments)."
MAX_ID = 2**63 - 1
"""Largest offer id (SQLite's INTEGER is a signed 64-bit number)."""
PROFILE_EVENTS = 2000
"""Newest events the persona clusters of ``user_profile`` are built from (Ward linkage is O(n^2))."""
INSTRUCTIONS = (
    "proagent: the person's own activity log (apps, windows, screen text) recorded on this machine. "
    "Screen text and titles are redacted with typed placeholders such as [EMAIL] unless the server "
    "runs with --raw. Times are local."
)


class ToolFailure(UsageError):
    """A tool argument whose value cannot be used (``option`` is the argument's name): the SDK
    sends it, as every :class:`~proagent.errors.DataError` of the log, as an MCP tool error
    (``isError``) with the one-line message."""


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat(timespec="seconds")


def _parse_time(text: str | None, name: str) -> datetime | None:
    if text is None or not str(text).strip():
        return None
    try:
        t = datetime.fromisoformat(str(text).strip())
    except ValueError:
        raise ToolFailure(name, f"{text!r} is not an ISO 8601 time (e.g. 2025-09-15T14:00)") from None
    return t.replace(tzinfo=None) if t.tzinfo is None else t.astimezone().replace(tzinfo=None)


def _cursor(cursor: str, tool: str) -> dict[str, Any]:
    try:
        return decode_cursor(cursor, tool)
    except ValueError as e:
        raise ToolFailure("cursor", str(e)) from None


@dataclass
class ContextService:
    """What the tools answer, without MCP (each method is one tool; :func:`build_server` registers them).

    Args:
        view: The log (:class:`~._view.ActivityView`).
        live: A live folder holding ``feedback.db`` (``None``: the offer tools answer an error).
        personas: Writes the persona texts of ``user_profile`` (``None``: clusters without texts).
        max_tokens: Cap on one answer, estimated tokens (:func:`~._paging.estimate_tokens`); a
            longer list is cut and the answer says so (with a ``next_cursor`` where it continues).
    """

    view: ActivityView
    live: Path | None = None
    personas: PersonaWriter | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS

    def __post_init__(self) -> None:
        self._store = None
        self._profile: tuple[int, UserProfile, list[str]] | None = None

    # ------------------------------------------------------------------ helpers

    def _fresh(self) -> None:
        self.view.refresh()

    def _item(self, m: Entry) -> ActivityItem:
        e = m.event
        return ActivityItem(
            id=str(e.id),
            start=_iso(e.start),
            end=_iso(e.end),
            seconds=e.duration,
            app=e.app_name,
            title=m.title,
            host=m.host,
            summary=m.summary,
            llm_use=bool(e.is_llm_event),
            intention=e.intention if e.is_llm_event else None,
        )

    @property
    def redacted(self) -> bool:
        return not self.view.raw

    # ------------------------------------------------------------------ tools

    def recent_activity(self, minutes: float = 30.0, cursor: str | None = None) -> RecentActivity:
        """Events that overlap the last ``minutes`` before the log's newest record, oldest first.

        An answer over :attr:`max_tokens` holds the newest events that fit and a ``next_cursor``;
        that cursor gives the events before them in the same window (the window is fixed by the
        first call, so events recorded meanwhile do not shift the pages).

        Raises:
            ToolFailure: a cursor this tool did not give.
            DataError: the log cannot be read (gone, damaged).
        """
        self._fresh()
        entries = self.view.entries()
        if cursor:
            c = _cursor(cursor, "recent_activity")
            try:
                since, until = datetime.fromisoformat(c["since"]), datetime.fromisoformat(c["until"])
                before = (datetime.fromisoformat(c["before"][0]), str(c["before"][1]))
            except (KeyError, TypeError, ValueError, IndexError):
                raise ToolFailure("cursor", "is damaged: call again without it") from None
        else:
            if not entries:
                return RecentActivity(since="", until=None, redacted=self.redacted)
            until = max(m.last_time for m in entries[-5:])
            since = until - timedelta(minutes=float(minutes))
            before = None
        inside = [m for m in entries if m.last_time >= since and m.start <= until and m.event.is_activity()]
        if before is not None:
            inside = [m for m in inside if (m.start, m.event.id) < before]
        shown = [m for m in inside if not m.blocked]
        withheld = sum(1 for m in inside if m.blocked)

        def page(k: int) -> RecentActivity:
            part = shown[len(shown) - k :] if k else []
            rest = len(shown) - k
            nxt = note = None
            if rest:
                first = part[0]
                nxt = encode_cursor(
                    "recent_activity",
                    since=since.isoformat(),
                    until=until.isoformat(),
                    before=[first.start.isoformat(), first.event.id],
                )
                note = (
                    f"Cut to stay under {self.max_tokens} tokens (estimated as UTF-8 bytes / 2.5): these are the "
                    f"{k} newest of {len(shown)} events; call recent_activity again with this next_cursor for "
                    f"the {rest} before them."
                )
            return RecentActivity(
                since=_iso(since),
                until=_iso(until),
                events=[self._item(m) for m in part],
                withheld=withheld,
                redacted=self.redacted,
                remaining=rest,
                next_cursor=nxt,
                note=note,
            )

        return fit(page, min(len(shown), MAX_EVENTS), self.max_tokens)[0] if shown else page(0)

    def search_activity(
        self,
        query: str,
        since: str | None = None,
        until: str | None = None,
        app: str | None = None,
        limit: int = 5,
        cursor: str | None = None,
    ) -> SearchResult:
        """The ``limit`` events closest to ``query`` (e5 cosine), best first, within the filters.

        ``next_cursor`` is set while more eligible events follow (the next ``limit``), or when
        the answer was cut at :attr:`max_tokens`; it is valid with the same query and filters
        and keeps the log's newest time of the first call, so new events do not shift the pages.

        Raises:
            ToolFailure: an empty query, a bad time, ``until`` before ``since``, a cursor of
                another tool or another search.
            DataError: the log cannot be read (gone, damaged).
        """
        from ..agent.memory.rag import embed_texts

        if not query.strip():
            raise ToolFailure("query", "give some words to search for")
        lo, hi = _parse_time(since, "since"), _parse_time(until, "until")
        if lo is not None and hi is not None and hi < lo:
            raise ToolFailure("until", "is before since")
        args = hashlib.sha256(json.dumps([query, since, until, app]).encode("utf-8")).hexdigest()[:16]
        offset, pinned = 0, None
        if cursor:
            c = _cursor(cursor, "search_activity")
            if c.get("args") != args:
                raise ToolFailure(
                    "cursor", "belongs to another search: repeat its query and filters with it, or call without it"
                )
            try:
                offset = int(c["offset"])
                pinned = datetime.fromisoformat(c["newest"]) if c.get("newest") else None
            except (KeyError, TypeError, ValueError):
                raise ToolFailure("cursor", "is damaged: call again without it") from None
        self._fresh()
        if pinned is None:
            entries = self.view.entries()
            pinned = max((m.last_time for m in entries[-5:]), default=None)
        want = (app or "").strip().casefold()

        def keep(m: Entry) -> bool:
            return (
                (lo is None or m.last_time >= lo)
                and (hi is None or m.start <= hi)
                and (pinned is None or m.start <= pinned)
                and (not want or want in m.event.app_name.casefold())
            )

        q = embed_texts([query])[0]
        hits, searched = self.view.search(q, offset + int(limit), keep)
        hits = hits[offset:]
        indexed = self.view.indexed_count()

        def page(k: int) -> SearchResult:
            end = offset + k
            nxt = note = None
            if end < searched:
                nxt = encode_cursor(
                    "search_activity", args=args, offset=end, newest=None if pinned is None else pinned.isoformat()
                )
            if k < len(hits):
                note = (
                    f"Cut to stay under {self.max_tokens} tokens (estimated as UTF-8 bytes / 2.5): {k} of the "
                    f"{len(hits)} hits asked for; call search_activity again with the same arguments and this "
                    "next_cursor for the next ones."
                )
            return SearchResult(
                query=query,
                hits=[SearchHit(self._item(m), round(s, 4), m.text[:SNIPPET]) for m, s in hits[:k]],
                searched=searched,
                indexed=indexed,
                redacted=self.redacted,
                next_cursor=nxt,
                note=note,
            )

        return fit(page, len(hits), self.max_tokens)[0]

    def current_context(self) -> CurrentContext:
        """The newest event: app, title, page host and the focused screen's latest text."""
        self._fresh()
        m = self.view.newest()
        if m is None:
            return CurrentContext(time=None, redacted=self.redacted)
        e = m.event
        if m.blocked:
            return CurrentContext(time=_iso(m.last_time), withheld=True, redacted=self.redacted)
        return CurrentContext(
            time=_iso(m.last_time),
            app=e.app_name,
            title=m.title,
            host=m.host,
            screen_text=m.text if e.screen_recorded else None,
            screenshot_time=_iso(m.shot_time),
            since=_iso(e.start),
            seconds_in_app=round((m.last_time - e.start).total_seconds(), 1),
            redacted=self.redacted,
        )

    def user_profile(self) -> UserProfile:
        """Intention mix of the annotated LLM use, top apps, and the persona memory's clusters."""
        self._fresh()
        entries = [m for m in self.view.entries() if not m.blocked]
        stamp = hash(tuple((m.event.id, m.key) for m in entries[-50:])) ^ len(entries)
        if self._profile is not None and self._profile[0] == stamp:
            return self._with_texts(self._profile[1], self._profile[2])
        llm = [m for m in entries if m.event.is_llm_event]
        annotated = Counter(m.event.intention for m in llm if m.event.intention)
        total = sum(annotated.values())
        intentions = [IntentionShare(k, n, round(n / total, 4)) for k, n in annotated.most_common()]
        seconds: Counter[str] = Counter()
        for m in entries:
            seconds[m.event.app_name] += max(0.0, (m.last_time - m.start).total_seconds())
        personas: list[PersonaCluster] = []
        prompts: list[str] = []
        recent = [m for m in entries if m.vector is not None][-PROFILE_EVENTS:]
        for group, members in (
            ("llm", [m for m in recent if m.event.is_llm_event]),
            ("other", [m for m in recent if not m.event.is_llm_event]),
        ):
            for cluster, prompt in _clusters(group, members):
                personas.append(cluster)
                prompts.append(prompt)
        profile = UserProfile(
            events=len(entries),
            llm_events=len(llm),
            intentions=intentions,
            top_apps=[a for a, _ in seconds.most_common(10) if a],
            personas=personas,
            first=_iso(entries[0].start) if entries else None,
            last=_iso(entries[-1].last_time) if entries else None,
            redacted=self.redacted,
        )
        self._profile = (stamp, profile, prompts)
        return self._with_texts(profile, prompts)

    def _with_texts(self, profile: UserProfile, prompts: list[str]) -> UserProfile:
        if self.personas is not None:
            texts = self.personas.texts(prompts)
            profile = replace(
                profile,
                personas=[replace(c, persona=t) for c, t in zip(profile.personas, texts)],
                persona_model=self.personas.name,
                personas_pending=self.personas.pending,
                persona_error=self.personas.error,
            )
        full = profile.personas
        order = sorted(range(len(full)), key=lambda i: -full[i].events)  # the largest clusters stay

        def page(k: int) -> UserProfile:
            keep = set(order[:k])
            cut = k < len(full)
            return replace(
                profile,
                personas=[c for i, c in enumerate(full) if i in keep],
                truncated=cut,
                note=(
                    f"Cut to stay under {self.max_tokens} tokens (estimated as UTF-8 bytes / 2.5): the {k} largest "
                    f"of {len(full)} kinds of activity."
                )
                if cut
                else None,
            )

        return fit(page, len(full), self.max_tokens)[0] if full else profile

    def _feedback(self):  # noqa: ANN202
        if self.live is None:
            raise ToolFailure(
                "--live", "no live folder: start `proagent mcp` with --live DIR (the folder of `proagent live`)"
            )
        if self._store is None:
            from ..live import FeedbackStore

            self._store = FeedbackStore(self.live)
        return self._store

    def _show(self, text: str | None) -> str | None:
        return self.view._show(text or "")[:MAX_TEXT] if text else text

    def offers(self, status: str = "open", limit: int = 20) -> OfferList:
        """The live agent's offers, latest first: ``open`` (unanswered), ``answered`` or ``all``."""
        rows = self._feedback().offers(open_only=status == "open", limit=10_000 if status == "answered" else int(limit))
        if status == "answered":
            rows = [r for r in rows if r["response"] is not None][: int(limit)]
        items = [
            OfferItem(
                id=int(r["id"]),
                moment=r["moment"],
                created_at=r["created_at"],
                text=self._show(r["text"]) or "",
                query=self._show(r["query"]),
                intention=r["intention"],
                app=r["app_name"] or "",
                p_help=r["p_help"],
                response=r["response"],
            )
            for r in rows
        ]

        def page(k: int) -> OfferList:
            cut = k < len(items)
            return OfferList(
                status=status,
                offers=items[:k],
                redacted=self.redacted,
                truncated=cut,
                note=(
                    f"Cut to stay under {self.max_tokens} tokens (estimated as UTF-8 bytes / 2.5): the {k} latest "
                    f"of {len(items)} offers; ask with a smaller limit or another status for the others."
                )
                if cut
                else None,
            )

        return fit(page, len(items), self.max_tokens)[0]

    def answer_offer(self, offer_id: int, response: str) -> OfferAnswer:
        """Store the person's answer to an offer in ``feedback.db`` (source ``mcp``)."""
        at = datetime.now()
        if not 1 <= int(offer_id) <= MAX_ID:
            raise ToolFailure("id", f"{offer_id} is no offer id (1 to {MAX_ID})")
        if not self._feedback().respond(int(offer_id), response, at, source="mcp"):
            raise ToolFailure("id", f"no offer {offer_id} in {self.live}")
        return OfferAnswer(id=int(offer_id), response=response, responded_at=_iso(at))

    def timeline(self, day: str | None = None) -> Timeline:
        """One day's events (``YYYY-MM-DD``; ``None``: the log's newest day)."""
        self._fresh()
        entries = self.view.entries()
        if day is None:
            d = entries[-1].start.date() if entries else date.today()
        else:
            try:
                d = date.fromisoformat(day)
            except ValueError:
                raise ToolFailure("date", f"{day!r} is not YYYY-MM-DD") from None
        inside = [m for m in entries if m.start.date() == d and m.event.is_activity()]
        seconds: Counter[str] = Counter()
        for m in inside:
            if not m.blocked:
                seconds[m.event.app_name] += max(0.0, (m.last_time - m.start).total_seconds())
        shown = [m for m in inside if not m.blocked]
        withheld = sum(1 for m in inside if m.blocked)
        by_app = {a: round(s, 1) for a, s in seconds.most_common()}

        def page(k: int) -> Timeline:
            # a cut day keeps k events spread evenly over it (first and last included), not its morning
            picked = (
                shown if k >= len(shown) else [shown[round(i * (len(shown) - 1) / max(1, k - 1))] for i in range(k)]
            )
            cut = k < len(shown)
            return Timeline(
                date=d.isoformat(),
                events=[self._item(m) for m in picked],
                withheld=withheld,
                seconds_by_app=by_app,
                redacted=self.redacted,
                total_events=len(shown),
                truncated=cut,
                note=(
                    f"Cut to stay under {self.max_tokens} tokens (estimated as UTF-8 bytes / 2.5): {k} of the day's "
                    f"{len(shown)} events, spread evenly over it; seconds_by_app counts them all. For the others "
                    "use search_activity or recent_activity."
                )
                if cut
                else None,
            )

        return fit(page, len(shown), self.max_tokens)[0]

    def now(self) -> Now:
        """The local time, its zone, ready ranges and how far the log reaches (``proagent://now``)."""
        from ._prompts import now_record

        self._fresh()
        entries = self.view.entries()
        first = entries[0].start if entries else None
        last = max((m.last_time for m in entries[-5:]), default=None)
        return now_record(first, last)

    def close(self) -> None:
        if self.personas is not None:
            self.personas.close()
        if self._store is not None:
            self._store.close()
        self.view.close()


def _clusters(group: str, members: list[Entry]) -> list[tuple[PersonaCluster, str]]:
    """PersonaX clusters of one group (the persona memory's :func:`~proagent.agent.memory.persona.ward_clusters`),
    largest first, each with the persona memory's prompt over its :data:`~._personas.PROMPT_RECORDS`
    most central events."""
    if len(members) < 2:
        return []
    from ..agent.memory.persona import persona_prompt, ward_clusters
    from ..agent.memory.records import MemoryRecord
    from ._personas import MAX_TOKENS, PROMPT_RECORDS

    x = np.stack([m.vector for m in members])
    labels = ward_clusters(x)
    out = []
    for k in range(int(labels.max()) + 1):
        idx = [i for i, v in enumerate(labels) if int(v) == k]
        cen = x[idx].mean(axis=0)
        central = sorted(idx, key=lambda i: -float(x[i] @ cen))
        apps = [a for a, _ in Counter(members[i].event.app_name for i in idx).most_common(3) if a]
        examples: list[str] = []
        for i in central:
            t = members[i].title
            if t and t not in examples:
                examples.append(t)
            if len(examples) == 3:
                break
        shown = sorted(central[:PROMPT_RECORDS], key=lambda i: members[i].start)
        records = [
            MemoryRecord(
                id=str(members[i].event.id),
                user="me",
                time=members[i].start,
                known_at=members[i].start,
                app=members[i].event.app_name,
                title=members[i].title,
                activity=members[i].summary,
                is_llm=group == "llm",
            )
            for i in shown
        ]
        out.append(
            (
                PersonaCluster(
                    group=group, events=len(idx), apps=apps, examples=examples, share=round(len(idx) / len(members), 4)
                ),
                persona_prompt(records, group, MAX_TOKENS),
            )
        )
    return sorted(out, key=lambda c: -c[0].events)


def _call(fn, *args: Any) -> Any:  # noqa: ANN001
    """Run a service method; a refused argument or an unreadable log (:class:`ToolFailure`,
    :class:`~proagent.errors.DataError`) becomes the SDK's tool error, one line."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        return fn(*args)
    except (UsageError, DataError) as e:
        raise ToolError(str(e)) from None
    except sqlite3.Error as e:  # feedback.db or the log, beyond what the readers map
        raise ToolError(f"a database could not be read or written ({type(e).__name__}: {_first_line(e)})") from None
    except OSError as e:
        where = f" {e.filename}" if e.filename else ""
        raise ToolError(f"a file could not be read or written{where} ({e.strerror or e})") from None


def _first_line(e: BaseException, limit: int = 200) -> str:
    text = str(e).strip().splitlines()
    return (text[0] if text else "")[:limit]


def one_line_validation(tool: str, error: Any) -> str:
    """One line for a tool call whose arguments fail the tool's schema (a pydantic
    ``ValidationError``, which prints one error per three lines with a link): each refused
    argument with pydantic's message, e.g. ``recent_activity: minutes: Input should be less than
    or equal to 1440``; several joined by ``; ``."""
    parts = []
    for err in error.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return f"{tool}: " + "; ".join(parts)


def strict_tool(fn: Callable[..., Any], annotations: Any) -> Any:  # noqa: ANN401
    """The SDK's :class:`mcp.server.mcpserver.tools.Tool` for ``fn`` with an argument model that
    refuses what pydantic's lax mode would coerce or drop: a value of another JSON type
    (``minutes: true`` was read as 1, ``limit: 2.5`` as 2; pydantic ``strict``) and an argument
    the tool does not take (``extra="forbid"``; its input schema says
    ``"additionalProperties": false``). The SDK takes no such option; its ``FuncMetadata`` fields
    are read at each call, so the model is swapped after ``Tool.from_function``. A JSON string
    for a non-string argument is still read as JSON first (the SDK's ``pre_parse_json``, for
    hosts that send ``"30"``)."""
    from mcp.server.mcpserver.tools import Tool
    from pydantic import ConfigDict

    t = Tool.from_function(fn, annotations=annotations)
    base = t.fn_metadata.arg_model

    class Strict(base):  # type: ignore[valid-type,misc]
        model_config = ConfigDict(strict=True, extra="forbid")

    Strict.__name__ = Strict.__qualname__ = base.__name__
    t.fn_metadata.arg_model = Strict
    t.parameters = Strict.model_json_schema(by_alias=True)
    return t


def build_server(service: ContextService, audit: AuditLog | None = None):  # noqa: ANN201
    """The :class:`mcp.server.mcpserver.MCPServer` with the tools and resources of ``service``;
    ``audit`` logs every call (:class:`~._audit.AuditLog`)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from mcp.types import ToolAnnotations
    from pydantic import ValidationError

    from .. import __version__

    class _Server(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:  # noqa: ANN401
            try:
                return await super().call_tool(name, arguments, context)
            except UnexpectedToolError as e:
                # a failure nothing mapped: the client gets its kind and first line (the SDK would
                # send "Error executing tool NAME" alone and print a traceback), one line on stderr
                cause = e.__cause__ or e
                while isinstance(cause, UnexpectedToolError) and cause.__cause__ is not None:
                    cause = cause.__cause__
                line = f"{name}: failed ({type(cause).__name__}: {_first_line(cause)}); the server goes on serving"
                _log.warning("proagent mcp: %s", line)
                raise ToolError(line) from None
            except ToolError as e:
                if isinstance(e.__cause__, ValidationError):
                    raise ToolError(one_line_validation(name, e.__cause__)) from None
                prefix = f"Error executing tool {name}: "
                text = str(e)
                raise ToolError(f"{name}: {text[len(prefix) :]}" if text.startswith(prefix) else text) from None

    read_only = ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )
    tools: list[Any] = []

    def tool(annotations: ToolAnnotations) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def add(fn: Callable[..., Any]) -> Callable[..., Any]:
            tools.append(strict_tool(fn, annotations))
            return fn

        return add

    @tool(read_only)
    def recent_activity(
        minutes: Annotated[
            float,
            Field(gt=0, le=1440, description=("How far back from the log's newest record, in minutes (at most 1440).")),
        ] = 30,
        cursor: Annotated[str | None, Field(max_length=2000, description=CURSOR_DOC)] = None,
    ) -> RecentActivity:
        """What the person did in the last minutes: apps, window titles and summaries of the events, oldest first.
        A long answer holds the newest events and a next_cursor for the earlier ones."""
        return _call(service.recent_activity, minutes, cursor)

    @tool(read_only)
    def search_activity(
        query: Annotated[
            str, Field(min_length=1, max_length=500, description="What to look for, in plain words (any language).")
        ],
        since: Annotated[
            str | None, Field(description="Only events that end after this local time (ISO 8601).")
        ] = None,
        until: Annotated[
            str | None, Field(description="Only events that start before this local time (ISO 8601).")
        ] = None,
        app: Annotated[
            str | None,
            Field(max_length=200, description="Only events of apps whose name contains this (case-insensitive)."),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=20, description="How many events to return.")] = 5,
        cursor: Annotated[str | None, Field(max_length=2000, description=CURSOR_DOC)] = None,
    ) -> SearchResult:
        """Find past moments by meaning (semantic search over window titles, summaries and screen text),
        with their times and apps, best match first; next_cursor gives the next ones."""
        return _call(service.search_activity, query, since, until, app, limit, cursor)

    @tool(read_only)
    def current_context() -> CurrentContext:
        """What is in front of the person now: app, window title, page host and the text on the focused screen."""
        return _call(service.current_context)

    @tool(read_only)
    def user_profile() -> UserProfile:
        """Who the person is at the computer: the mix of intentions of their LLM use, their main apps and
        recurring kinds of activity."""
        return _call(service.user_profile)

    @tool(read_only)
    def offers(
        status: Annotated[
            Literal["open", "answered", "all"], Field(description=("open: not answered yet; answered; all."))
        ] = "open",
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
    ) -> OfferList:
        """Help offers the proactive agent (proagent live) made, latest first, with the person's answers."""
        return _call(service.offers, status, limit)

    @tool(ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False))
    def answer_offer(
        id: Annotated[int, Field(ge=1, le=MAX_ID, description="The offer's id (from offers).")],  # noqa: A002
        response: Annotated[
            Literal["accepted", "dismissed", "not_now"], Field(description=("The person's answer to the offer."))
        ],
    ) -> OfferAnswer:
        """Record the person's answer to a help offer (the only tool that writes: one row in feedback.db)."""
        return _call(service.answer_offer, id, response)

    server = _Server(
        "proagent",
        title="proagent activity context",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
        middleware=[audit] if audit is not None else None,
        tools=tools,
    )

    def _timeline_json(day: str | None) -> str:
        from mcp.server.mcpserver.exceptions import ResourceError

        from ..io import to_jsonable

        try:
            return json.dumps(to_jsonable(service.timeline(day)), ensure_ascii=False)
        except (UsageError, DataError) as e:
            raise ResourceError(str(e)) from None

    @server.resource(
        "proagent://timeline/today",
        name="timeline-today",
        mime_type="application/json",
        description="The log's newest day: every event (app, title, times) and time per app.",
    )
    def timeline_today() -> str:
        return _timeline_json(None)

    @server.resource(
        "proagent://timeline/{day}",
        name="timeline",
        mime_type="application/json",
        description="One day's events (day as YYYY-MM-DD) and time per app.",
    )
    def timeline_day(day: str) -> str:
        return _timeline_json(day)

    def _json(fn: Callable[[], Any]) -> str:
        from mcp.server.mcpserver.exceptions import ResourceError

        from ..io import to_jsonable

        try:
            return json.dumps(to_jsonable(fn()), ensure_ascii=False)
        except (UsageError, DataError) as e:
            raise ResourceError(str(e)) from None

    @server.resource(
        "proagent://now",
        name="now",
        mime_type="application/json",
        description=(
            "The local time now, its UTC offset and time zone, ready since/until ranges (last hour, today, "
            "yesterday, last 7 days) and how far the log reaches."
        ),
    )
    def now() -> str:
        return _json(service.now)

    _prompts(server, service, _json)
    return server


def _prompts(server: Any, service: ContextService, as_json: Callable[[Callable[[], Any]], str]) -> None:  # noqa: ANN401
    """The server's prompts (:mod:`._prompts`): each a user message naming the tools to call,
    with the ``now`` resource embedded (and the day's timeline for ``summarise_my_day``)."""
    from mcp.server.mcpserver.exceptions import ResourceError
    from mcp.server.mcpserver.prompts.base import UserMessage
    from mcp.shared.exceptions import MCPError
    from mcp.types import INVALID_PARAMS, EmbeddedResource, TextResourceContents

    from ._prompts import find_text, summary_text, what_text

    def embedded(uri: str, text: str) -> UserMessage:
        return UserMessage(
            EmbeddedResource(
                type="resource", resource=TextResourceContents(uri=uri, mime_type="application/json", text=text)
            )
        )

    def now_parts() -> tuple[Now, UserMessage]:
        try:
            now = service.now()
        except (UsageError, DataError) as e:
            raise MCPError(code=INVALID_PARAMS, message=str(e)) from None
        return now, embedded("proagent://now", as_json(lambda: now))

    @server.prompt(title="What was I doing?")
    def what_was_i_doing(
        minutes: Annotated[str, Field(description="How far back, in minutes (default 30, at most 1440).")] = "30",
    ) -> list[Any]:
        """What the person did in the last minutes: the current screen and the recent events, told in a few sentences."""
        try:
            m = float(minutes)
        except ValueError:
            m = float("nan")
        if not 0 < m <= 1440:
            raise MCPError(code=INVALID_PARAMS, message=f"minutes: {minutes!r} is not a number of minutes (0-1440]")
        now, part = now_parts()
        return [UserMessage(what_text(m, now)), part]

    @server.prompt(title="Find where I saw...")
    def find_where_i_saw(
        what: Annotated[str, Field(description="What you saw, in your words (an error, a name, a page...).")],
        when: Annotated[str, Field(description="Roughly when, in words (yesterday afternoon, this morning).")] = "",
    ) -> list[Any]:
        """Find the moment something was on the screen: semantic search over the log, with times and apps."""
        if not what.strip() or len(what) > 500:
            raise MCPError(code=INVALID_PARAMS, message="what: give some words to look for (at most 500 characters)")
        now, part = now_parts()
        return [UserMessage(find_text(what, when[:200], now)), part]

    @server.prompt(title="Summarise my day")
    def summarise_my_day(
        day: Annotated[
            str, Field(description="YYYY-MM-DD (default: the log's newest day, today while recording).")
        ] = "",
    ) -> list[Any]:
        """A short summary of one day: what was worked on when, time per app, AI assistant use, what is unfinished."""
        now, part = now_parts()
        try:
            timeline = as_json(lambda: service.timeline(day.strip() or None))
        except ResourceError as e:
            raise MCPError(code=INVALID_PARAMS, message=str(e)) from None
        d = date.fromisoformat(json.loads(timeline)["date"])
        return [UserMessage(summary_text(d, now)), embedded(f"proagent://timeline/{d.isoformat()}", timeline), part]


_log = logging.getLogger("proagent.mcp")


def serve_stdio(server) -> None:  # noqa: ANN001
    """Serve over stdin/stdout until the client closes them."""
    server.run("stdio")


class _Guard:
    """ASGI middleware of the HTTP transport: the bearer token (constant-time), a cross-site
    ``Sec-Fetch-Site`` refused. Host and Origin are the SDK's checks (set in :func:`serve_http`)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        site = headers.get(b"sec-fetch-site")
        if site is not None and site not in (b"same-origin", b"none"):
            return await _refuse(send, 403, "forbidden: cross-site request")
        if not hmac.compare_digest(headers.get(b"authorization", b""), self.token):
            return await _refuse(send, 401, "unauthorized: send Authorization: Bearer <token>")
        return await self.app(scope, receive, send)


async def _refuse(send: Any, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def bind_loopback(port: int) -> socket.socket:
    """A listening TCP socket on 127.0.0.1:``port`` (0: any free port).

    Raises:
        UsageError: the port is taken or not allowed (``--port``).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as e:
        sock.close()
        raise UsageError("--port", f"cannot listen on 127.0.0.1:{port} ({e.strerror or e})") from None
    from ..serve import BACKLOG

    sock.listen(BACKLOG)  # a burst of connections waits for accept, as on the pages
    return sock


def new_token() -> str:
    """A random token (128 bits, URL-safe)."""
    return secrets.token_urlsafe(16)


def serve_http(server, sock: socket.socket, token: str) -> None:  # noqa: ANN001
    """Serve streamable HTTP at ``http://127.0.0.1:PORT/mcp`` on ``sock`` (:func:`bind_loopback`)
    until interrupted; every request needs ``Authorization: Bearer <token>``."""
    import anyio
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    port = sock.getsockname()[1]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"127.0.0.1:{port}", f"localhost:{port}"],
        allowed_origins=[f"http://127.0.0.1:{port}", f"http://localhost:{port}"],
    )
    app = server.streamable_http_app(host="127.0.0.1", transport_security=security, max_request_body_size=MAX_BODY)
    from ._http_limits import uvicorn_config

    # idle or slow connections: a header deadline and eviction, not a 503 for everyone (_http_limits)
    config = uvicorn_config(_Guard(app, token), log_level="warning", access_log=False, server_header=False)
    anyio.run(uvicorn.Server(config).serve, [sock])


def check_live_folder(live: str | Path) -> Path:
    """A live folder that holds ``feedback.db``.

    Raises:
        DataError: no such folder, or no ``feedback.db`` in it (``--live``).
    """
    from ..live import FEEDBACK_DB

    p = Path(live)
    if not (p / FEEDBACK_DB).is_file():
        raise DataError(
            p, f"no {FEEDBACK_DB} here: give the folder `proagent live` writes (its --out)", option="--live"
        )
    return p


def state_folder(log: Path) -> Path:
    """Where ``mcp.log`` and the index cache go: the log's folder (the file's folder for a file)."""
    return log if log.is_dir() else log.parent


def run(
    log: str | Path,
    *,
    raw: bool = False,
    block_apps: tuple[str, ...] = (),
    block_titles: tuple[str, ...] = (),
    live: str | Path | None = None,
    http: bool = False,
    port: int = 0,
    token_file: str | Path | None = None,
    state: str | Path | None = None,
    persona_model: str | None = None,
    model_base_url: str | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    announce: Any = None,
) -> None:
    """``proagent mcp``: open the log, then serve until the client goes (stdio) or Ctrl-C (HTTP).

    Args:
        log: The activity log (capture folder, LifeTrace / ActivityWatch / screenpipe database or export).
        raw: Show titles and screen text unredacted.
        block_apps, block_titles: live's ``--block-app`` / ``--block-title`` rules.
        live: A live folder holding ``feedback.db`` (the offer tools).
        http: Streamable HTTP on 127.0.0.1 instead of stdio.
        port: HTTP port (0: any free one).
        token_file: HTTP: read the token from this file, or write a new one there (0600).
        state: Folder of ``mcp.log`` and the index cache (default: :func:`state_folder`).
        persona_model: An inspect model that writes the persona texts of ``user_profile`` in the
            background (:class:`~._personas.PersonaWriter`); ``None``: clusters without texts.
        model_base_url: An OpenAI-compatible endpoint for ``persona_model``.
        max_tokens: Cap on one answer, estimated tokens (:mod:`._paging`).
        announce: ``announce(line)`` prints the HTTP address (stderr), or ``None``.

    Raises:
        DataError: not a log, unreadable, encrypted without its key, no ``feedback.db`` in
            ``live``, or ``mcp.log`` cannot be written.
        UsageError: the port cannot be used.
    """
    from ._view import Poller

    log = Path(log)
    live_dir = check_live_folder(live) if live is not None else None
    state_dir = Path(state) if state is not None else state_folder(log)
    view = ActivityView(log, raw=raw, block_apps=block_apps, block_titles=block_titles, state=state_dir)
    try:
        audit = AuditLog(state_dir / "mcp.log")
    except OSError as e:
        view.close()
        raise DataError(
            state_dir / "mcp.log",
            f"cannot write the call log ({e.strerror or e}); give a writable --state folder",
            option="--state",
        ) from None
    personas = None
    if persona_model is not None:
        cache = view.cache_dir / PERSONA_CACHE if view.cache_dir is not None else None
        personas = PersonaWriter(persona_model, base_url=model_base_url, cache_file=cache, redact=view.redact)
    service = ContextService(view, live_dir, personas, max_tokens)
    poller = Poller(view).start()
    server = build_server(service, audit)
    try:
        if not http:
            serve_stdio(server)
            return
        sock = bind_loopback(port)
        token = _token(token_file)
        if announce is not None:
            announce(
                f"proagent mcp: http://127.0.0.1:{sock.getsockname()[1]}/mcp "
                + (f"(token in {token_file})" if token_file else f"(header Authorization: Bearer {token})")
            )
        serve_http(server, sock, token)
    finally:
        poller.stop()
        service.close()
        audit.close()


def _token(token_file: str | Path | None) -> str:
    """The bearer token: read from ``token_file`` (one line of 16-512 URL-safe characters, as
    :func:`new_token` writes), or a new one written there (0600), or a new one kept in memory.

    Raises:
        DataError: the file cannot be read or written (e.g. under ``/proc``), or holds no token.
    """
    from ..io import PRIVATE_FILE_MODE, write_atomic

    if token_file is None:
        return new_token()
    p = Path(token_file)
    if p.exists() and not p.is_file():
        raise DataError(p, "not a file: give a token file (it is written on the first start)", option="--token-file")
    if p.is_file():
        try:
            with p.open("rb") as f:
                data = f.read(TOKEN_FILE_MAX + 1)
        except OSError as e:
            raise DataError(p, f"cannot read the token ({e.strerror or e})", option="--token-file") from None
        token = data.decode("ascii", "replace").strip()
        if len(data) > TOKEN_FILE_MAX or not _TOKEN_RE.fullmatch(token):
            raise DataError(
                p,
                "this file holds no token (one line of 16 to 512 letters, digits, '-' or '_'); "
                "give a new path and the server writes one there",
                option="--token-file",
            )
        return token
    token = new_token()
    try:
        write_atomic(p, token + "\n", mode=PRIVATE_FILE_MODE)
    except OSError as e:
        raise DataError(
            p,
            f"cannot write the token here ({e.strerror or e}); give a file in a folder you own",
            option="--token-file",
        ) from None
    return token


TOKEN_FILE_MAX = 4096
"""Bytes of a token file read at most (a token is 22 characters; a larger file is not one)."""
_TOKEN_RE = re.compile(r"[A-Za-z0-9_\-]{16,512}")
