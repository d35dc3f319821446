"""Typed results of the MCP tools (:mod:`proagent.context.server`): what an MCP host receives.

Each is a frozen dataclass; the SDK (``mcp``) derives the tool's output JSON schema from it and
sends it as the call's ``structuredContent`` (and as JSON text for hosts that read text only).
Times are naive local ISO 8601 strings, as the activity log stores them; durations are seconds.
Screen text, window titles, summaries and offer texts are redacted (curate's PII recognizers,
typed placeholders such as ``[EMAIL]``) unless the server runs with ``--raw``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from pydantic import Field

__all__ = [
    "ActivityItem",
    "CurrentContext",
    "IntentionShare",
    "Now",
    "TimeRange",
    "OfferAnswer",
    "OfferItem",
    "OfferList",
    "PersonaCluster",
    "RecentActivity",
    "SearchHit",
    "SearchResult",
    "Timeline",
    "UserProfile",
]


@dataclass(frozen=True)
class ActivityItem:
    """One event of the log: a stretch of time in one foreground application."""

    id: str
    """Event id in the log (the database row id for LifeTrace)."""
    start: str
    """Start, naive local ISO 8601."""
    end: Annotated[str | None, Field(description="End (ISO 8601); null while the event is still open.")]
    seconds: Annotated[float | None, Field(description="Duration in seconds; null while open.")]
    app: str
    """Foreground application."""
    title: str
    """Window title (redacted unless --raw)."""
    host: str | None = None
    """Host of the page's URL, when the recorder keeps URLs (ActivityWatch, screenpipe)."""
    summary: str = ""
    """One-line description of the screen, when the log has one (redacted unless --raw)."""
    llm_use: bool = False
    """True for an event where the person used an LLM (an annotated LLM-use event)."""
    intention: str | None = None
    """Annotated intention category of that LLM use (ProAgentBench's 16 categories)."""


@dataclass(frozen=True)
class RecentActivity:
    """``recent_activity(minutes)``: the events that overlap the last ``minutes``, oldest first."""

    since: str
    """Start of the window (ISO 8601): the newest event's time minus ``minutes``."""
    until: str | None
    """End of the window: the log's newest time (null for an empty log)."""
    events: list[ActivityItem] = field(default_factory=list)
    withheld: Annotated[int, Field(description="Events in the window hidden by --block-app / --block-title.")] = 0
    redacted: bool = True
    """False when the server runs with --raw."""
    remaining: Annotated[
        int, Field(description="Events of the window not in this answer (earlier ones; see next_cursor).")
    ] = 0
    next_cursor: Annotated[
        str | None,
        Field(description="Set when the answer was cut: pass it as cursor (same arguments) for the rest."),
    ] = None
    note: Annotated[
        str | None, Field(description="Why and where the answer was cut (about the token cap), when it was.")
    ] = None


@dataclass(frozen=True)
class SearchHit:
    """One event found by ``search_activity``."""

    event: ActivityItem
    score: Annotated[float, Field(description="Cosine similarity of the e5 embeddings (-1..1), higher is closer.")]
    snippet: str
    """The event's screen text (first characters, redacted unless --raw)."""


@dataclass(frozen=True)
class SearchResult:
    """``search_activity(query, since, until, app)``: the closest events, best first."""

    query: str
    hits: list[SearchHit] = field(default_factory=list)
    searched: Annotated[int, Field(description="Events that matched the filters and were ranked.")] = 0
    indexed: Annotated[int, Field(description="Events in the index (the whole log minus blocked ones).")] = 0
    redacted: bool = True
    next_cursor: Annotated[
        str | None,
        Field(description="Set when the answer was cut: pass it as cursor (same arguments) for the rest."),
    ] = None
    note: Annotated[
        str | None, Field(description="Why and where the answer was cut (about the token cap), when it was.")
    ] = None


@dataclass(frozen=True)
class CurrentContext:
    """``current_context()``: what is in front of the person now (the log's newest event)."""

    time: str | None
    """Time of the newest record (ISO 8601); null for an empty log."""
    app: str | None = None
    title: str | None = None
    host: str | None = None
    screen_text: Annotated[
        str | None,
        Field(
            description=(
                "OCR text of the focused window's screen at its latest screenshot (redacted unless --raw); "
                "null when the log records no screen."
            )
        ),
    ] = None
    screenshot_time: str | None = None
    """When that screenshot was taken."""
    since: str | None = None
    """Start of the current event (when the person came to this app)."""
    seconds_in_app: float | None = None
    withheld: Annotated[
        bool, Field(description="True when the app or title in front is blocked: nothing of it is shown.")
    ] = False
    redacted: bool = True


@dataclass(frozen=True)
class IntentionShare:
    """One intention category of the person's annotated LLM use."""

    intention: str
    events: int
    share: float
    """Share of the annotated LLM-use events (0..1)."""


@dataclass(frozen=True)
class PersonaCluster:
    """One recurring kind of activity (PersonaX clusters of the persona memory: Ward linkage on
    e5 embeddings, cut at distance 0.7, at most 15 per group)."""

    group: Annotated[str, Field(description="'llm' (moments of LLM use) or 'other'.")]
    events: int
    apps: list[str]
    """Most frequent apps of the cluster, most frequent first (at most 3)."""
    examples: list[str]
    """Window titles of its most central events (at most 3, redacted unless --raw)."""
    share: float
    """Share of the group's events."""
    persona: str | None = None
    """A paragraph on this kind of activity written by ``--persona-model`` (the persona memory's
    prompt over the cluster's most central events); ``None`` without one or until written."""


@dataclass(frozen=True)
class UserProfile:
    """``user_profile()``: the intention mix of the person's annotated LLM use and the recurring
    kinds of activity the persona memory clusters, each with its persona text when the server runs
    with ``--persona-model``."""

    events: int
    """Events in the log (blocked ones excluded)."""
    llm_events: int
    """Annotated LLM-use events among them."""
    intentions: list[IntentionShare] = field(default_factory=list)
    top_apps: list[str] = field(default_factory=list)
    """Apps by time spent, most first (at most 10)."""
    personas: list[PersonaCluster] = field(default_factory=list)
    first: str | None = None
    last: str | None = None
    redacted: bool = True
    persona_model: str | None = None
    """The model writing the persona texts (``--persona-model``), or ``None``."""
    personas_pending: int = 0
    """Persona texts still being written (ask again later)."""
    persona_error: str | None = None
    """The last persona-writing failure's first line, if the last attempt failed."""
    truncated: Annotated[
        bool, Field(description="True when the answer was cut to stay under the server's token cap.")
    ] = False
    note: Annotated[str | None, Field(description="What was cut and how to see the rest, when it was.")] = None


@dataclass(frozen=True)
class OfferItem:
    """One help offer the live agent made (``feedback.db``)."""

    id: int
    moment: str
    created_at: str
    text: str
    """The offer as shown (redacted unless --raw)."""
    query: str | None = None
    intention: str | None = None
    app: str = ""
    p_help: float | None = None
    response: Annotated[
        str | None, Field(description="The latest answer (accepted, dismissed, not_now, ignored); null while open.")
    ] = None


@dataclass(frozen=True)
class OfferList:
    """``offers(status)``: latest first."""

    status: str
    offers: list[OfferItem] = field(default_factory=list)
    redacted: bool = True
    truncated: Annotated[
        bool, Field(description="True when the answer was cut to stay under the server's token cap.")
    ] = False
    note: Annotated[str | None, Field(description="What was cut and how to see the rest, when it was.")] = None


@dataclass(frozen=True)
class OfferAnswer:
    """``answer_offer(id, response)``: the answer stored in ``feedback.db``."""

    id: int
    response: str
    responded_at: str


@dataclass(frozen=True)
class Timeline:
    """The resource ``proagent://timeline/{date}``: one day's events, oldest first."""

    date: str
    events: list[ActivityItem] = field(default_factory=list)
    withheld: int = 0
    seconds_by_app: dict[str, float] = field(default_factory=dict)
    redacted: bool = True
    total_events: int = 0
    """Events of the day shown or not (blocked ones excluded)."""
    truncated: Annotated[
        bool, Field(description="True when the answer was cut to stay under the server's token cap.")
    ] = False
    note: Annotated[str | None, Field(description="What was cut and how to see the rest, when it was.")] = None


@dataclass(frozen=True)
class TimeRange:
    """A stretch of local time, ready for ``search_activity``'s ``since`` / ``until``."""

    since: str
    """Naive local ISO 8601 (seconds)."""
    until: str


@dataclass(frozen=True)
class Now:
    """The resource ``proagent://now``: the local time where the server runs, its time zone, ready
    ranges, and how far the log reaches (so a model does not guess the person's time)."""

    local_time: str
    """Now, naive local ISO 8601 (seconds), as the log's times are written."""
    utc_offset: str
    """The local offset from UTC now, e.g. ``+08:00``."""
    time_zone: str
    """The IANA name when the system says it (``TZ``, ``/etc/timezone``, ``/etc/localtime``), else
    the abbreviation (``CET``)."""
    weekday: str
    ranges: dict[str, TimeRange]
    """``last_hour``, ``today`` (midnight to now), ``yesterday`` (whole day), ``last_7_days``."""
    log_first: str | None = None
    """The log's oldest event start (null for an empty log)."""
    log_last: str | None = None
    """The log's newest time: ``recent_activity`` counts back from here, not from now."""
    note: str = ""
