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

Resources: ``proagent://timeline/today`` (the log's newest day) and the template
``proagent://timeline/{date}`` (``YYYY-MM-DD``).

Transports: stdio (:func:`serve_stdio`), or streamable HTTP on 127.0.0.1 (:func:`serve_http`)
with the project's server rules (:mod:`proagent.serve`): loopback bind, a random bearer token
compared in constant time, ``Host`` exactly ``127.0.0.1:PORT`` or ``localhost:PORT`` and an
``Origin``, when sent, of the server itself (the SDK's DNS-rebinding settings), a cross-site
``Sec-Fetch-Site`` refused, request bodies capped (:data:`MAX_BODY`), connections bounded.

A log error while serving (the file deleted, damaged, its key gone) answers the call with an MCP
tool error (``isError``, the one-line message); it never stops the server.
"""

from __future__ import annotations

import hmac
import json
import secrets
import socket
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
from ._personas import CACHE_FILE as PERSONA_CACHE
from ._personas import PersonaWriter
from ._view import MAX_TEXT, ActivityView, Entry
from .records import (
    ActivityItem,
    CurrentContext,
    IntentionShare,
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

__all__ = ["MAX_BODY", "MAX_CONNECTIONS", "SNIPPET", "ContextService", "build_server", "serve_http", "serve_stdio"]

SNIPPET = 300
"""Characters of screen text a search hit shows."""
MAX_BODY = 64 * 1024
"""Cap on an HTTP request body, bytes (a tool call is well under 1 KiB)."""
MAX_CONNECTIONS = 32
"""HTTP connections served at once (as :data:`proagent.serve.MAX_CONNECTIONS`)."""
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


@dataclass
class ContextService:
    """What the tools answer, without MCP (each method is one tool; :func:`build_server` registers them).

    Args:
        view: The log (:class:`~._view.ActivityView`).
        live: A live folder holding ``feedback.db`` (``None``: the offer tools answer an error).
        personas: Writes the persona texts of ``user_profile`` (``None``: clusters without texts).
    """

    view: ActivityView
    live: Path | None = None
    personas: PersonaWriter | None = None

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

    def recent_activity(self, minutes: float = 30.0) -> RecentActivity:
        """Events that overlap the last ``minutes`` before the log's newest record, oldest first."""
        self._fresh()
        entries = self.view.entries()
        if not entries:
            return RecentActivity(since="", until=None, redacted=self.redacted)
        until = max(m.last_time for m in entries[-5:])
        since = until - timedelta(minutes=float(minutes))
        inside = [m for m in entries if m.last_time >= since and m.event.is_activity()]
        shown = [self._item(m) for m in inside if not m.blocked]
        return RecentActivity(
            since=_iso(since),
            until=_iso(until),
            events=shown[-200:],
            withheld=sum(1 for m in inside if m.blocked),
            redacted=self.redacted,
        )

    def search_activity(
        self, query: str, since: str | None = None, until: str | None = None, app: str | None = None, limit: int = 5
    ) -> SearchResult:
        """The ``limit`` events closest to ``query`` (e5 cosine), best first, within the filters."""
        from ..agent.memory.rag import embed_texts

        if not query.strip():
            raise ToolFailure("query", "give some words to search for")
        lo, hi = _parse_time(since, "since"), _parse_time(until, "until")
        if lo is not None and hi is not None and hi < lo:
            raise ToolFailure("until", "is before since")
        self._fresh()
        want = (app or "").strip().casefold()

        def keep(m: Entry) -> bool:
            return (
                (lo is None or m.last_time >= lo)
                and (hi is None or m.start <= hi)
                and (not want or want in m.event.app_name.casefold())
            )

        q = embed_texts([query])[0]
        hits, searched = self.view.search(q, int(limit), keep)
        return SearchResult(
            query=query,
            hits=[SearchHit(self._item(m), round(s, 4), m.text[:SNIPPET]) for m, s in hits],
            searched=searched,
            indexed=self.view.indexed_count(),
            redacted=self.redacted,
        )

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
        if self.personas is None:
            return profile
        texts = self.personas.texts(prompts)
        return replace(
            profile,
            personas=[replace(c, persona=t) for c, t in zip(profile.personas, texts)],
            persona_model=self.personas.name,
            personas_pending=self.personas.pending,
            persona_error=self.personas.error,
        )

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
        return OfferList(status=status, offers=items, redacted=self.redacted)

    def answer_offer(self, offer_id: int, response: str) -> OfferAnswer:
        """Store the person's answer to an offer in ``feedback.db`` (source ``mcp``)."""
        at = datetime.now()
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
        return Timeline(
            date=d.isoformat(),
            events=[self._item(m) for m in inside if not m.blocked],
            withheld=sum(1 for m in inside if m.blocked),
            seconds_by_app={a: round(s, 1) for a, s in seconds.most_common()},
            redacted=self.redacted,
        )

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
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations
    from pydantic import ValidationError

    from .. import __version__

    class _Server(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:  # noqa: ANN401
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as e:
                if isinstance(e.__cause__, ValidationError):
                    raise ToolError(one_line_validation(name, e.__cause__)) from None
                raise

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
    ) -> RecentActivity:
        """What the person did in the last minutes: apps, window titles and summaries of the events, oldest first."""
        return _call(service.recent_activity, minutes)

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
    ) -> SearchResult:
        """Find past moments by meaning (semantic search over window titles, summaries and screen text),
        with their times and apps, best match first."""
        return _call(service.search_activity, query, since, until, app, limit)

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
        id: Annotated[int, Field(ge=1, description="The offer's id (from offers).")],  # noqa: A002
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

    return server


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
    service = ContextService(view, live_dir, personas)
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
    from ..io import PRIVATE_FILE_MODE, write_atomic

    if token_file is None:
        return new_token()
    p = Path(token_file)
    if p.is_file():
        token = p.read_text("utf-8").strip()
        if len(token) < 16:
            raise DataError(p, "the token in this file is shorter than 16 characters", option="--token-file")
        return token
    token = new_token()
    write_atomic(p, token + "\n", mode=PRIVATE_FILE_MODE)
    return token
