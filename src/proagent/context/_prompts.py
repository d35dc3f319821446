"""The ``proagent://now`` resource and the texts of the server's prompts.

**Now.** A model asked "what did I do yesterday afternoon" has no clock, and the log's times are
naive local times: it has to be told the local time, the zone and what "today" means in it.
:func:`now_record` gives them, with ranges ready for ``search_activity``'s ``since`` / ``until``
and how far the log reaches (``recent_activity`` counts back from the log's newest record).

**Prompts** (hosts show them as slash commands, e.g. ``/mcp__proagent__what_was_i_doing`` in
Claude Code): the three asks a person makes of an activity log, each a user message that says
which tools to call and how (following ``next_cursor``), with the ``now`` resource embedded;
``summarise_my_day`` also embeds the day's timeline (capped as every answer is).
"""

from __future__ import annotations

import os
from datetime import date, datetime, time, timedelta
from pathlib import Path

from .records import Now, TimeRange

__all__ = ["find_text", "local_zone_name", "now_record", "summary_text", "what_text"]


def _iso(t: datetime) -> str:
    return t.isoformat(timespec="seconds")


def local_zone_name(now: datetime | None = None) -> str:
    """The local time zone's IANA name (``TZ``, else ``/etc/timezone``, else the target of
    ``/etc/localtime``), else its abbreviation (``time.tzname`` as ``astimezone`` gives it)."""
    tz = os.environ.get("TZ", "").lstrip(":").strip()
    if tz and "/" in tz and not tz.startswith("/"):
        return tz
    try:
        name = Path("/etc/timezone").read_text("utf-8").strip()
        if name:
            return name
    except OSError:
        pass
    try:
        target = os.readlink("/etc/localtime")
        if "zoneinfo/" in target:
            return target.split("zoneinfo/", 1)[1]
    except OSError:
        pass
    return (now or datetime.now()).astimezone().tzname() or "local"


def now_record(log_first: datetime | None, log_last: datetime | None, now: datetime | None = None) -> Now:
    """The ``proagent://now`` answer at ``now`` (default: the system clock), in local time."""
    aware = (now or datetime.now()).astimezone()
    local = aware.replace(tzinfo=None, microsecond=0)
    off = aware.utcoffset() or timedelta(0)
    sign = "-" if off < timedelta(0) else "+"
    minutes = int(abs(off).total_seconds()) // 60
    midnight = datetime.combine(local.date(), time())
    ranges = {
        "last_hour": TimeRange(_iso(local - timedelta(hours=1)), _iso(local)),
        "today": TimeRange(_iso(midnight), _iso(local)),
        "yesterday": TimeRange(_iso(midnight - timedelta(days=1)), _iso(midnight - timedelta(seconds=1))),
        "last_7_days": TimeRange(_iso(midnight - timedelta(days=6)), _iso(local)),
    }
    note = "Times are the person's local time, as the log writes them (no offset)."
    if log_last is not None:
        behind = local - log_last.replace(microsecond=0)
        if behind > timedelta(minutes=10):
            note += (
                f" The log's newest record is {_human(behind)} old: recent_activity counts back from it, "
                "not from now (the recorder may be stopped)."
            )
    return Now(
        local_time=_iso(local),
        utc_offset=f"{sign}{minutes // 60:02d}:{minutes % 60:02d}",
        time_zone=local_zone_name(aware),
        weekday=local.strftime("%A"),
        ranges=ranges,
        log_first=None if log_first is None else _iso(log_first),
        log_last=None if log_last is None else _iso(log_last),
        note=note,
    )


def _human(d: timedelta) -> str:
    s = d.total_seconds()
    if s < 3600:
        return f"{s / 60:.0f} minutes"
    if s < 2 * 86400:
        return f"{s / 3600:.1f} hours"
    return f"{s / 86400:.0f} days"


def what_text(minutes: float, now: Now) -> str:
    """The ``what_was_i_doing`` request."""
    m = f"{minutes:g}"
    return (
        f"What was I doing in the last {m} minutes? Use the proagent tools: call current_context, then "
        f"recent_activity with minutes={m}; when its answer has a next_cursor, call it again with that cursor "
        "for the earlier events. Then tell me in a few sentences which apps and documents I worked in, what I "
        "was working on and where I stopped, with local times. "
        f"It is {now.local_time} ({now.time_zone}) now; the log's newest record is {now.log_last or 'none'}."
    )


def find_text(what: str, when: str, now: Now) -> str:
    """The ``find_where_i_saw`` request."""
    scope = ""
    if when.strip():
        scope = (
            f" It was {when.strip()}: turn that into since/until local times (ISO 8601) from the ranges of "
            "proagent://now below and pass them to search_activity."
        )
    return (
        f"Find where I saw this: {what.strip()}.{scope} Call search_activity with a query in plain words "
        "(try a second wording if the first finds nothing close; follow next_cursor for more hits). For each "
        "good match say when (local time), in which app and window, and quote the part of the snippet that "
        "matches. If nothing matches, say so rather than guess."
    )


def summary_text(day: date, now: Now) -> str:
    """The ``summarise_my_day`` request."""
    which = "today" if day.isoformat() == now.local_time[:10] else day.isoformat()
    return (
        f"Summarise my day ({which}, {day.strftime('%A %Y-%m-%d')}) from the timeline below: the main things "
        "I worked on in time order with rough local times, the time per app (seconds_by_app), where I used an "
        "AI assistant and for what (llm_use, intention), and what looks unfinished. When the timeline says it "
        "was cut, call search_activity with since/until inside the day for the parts you need. Keep it short."
    )
