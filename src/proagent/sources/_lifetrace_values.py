"""Cell values of LifeTrace databases: timestamps, flags, texts, row keys and the
processed ``conversation`` JSON (see :mod:`proagent.sources.lifetrace` for the rules).

Private to :mod:`proagent.sources`: the readers there use these; the public ones
(``parse_timestamp``, ``parse_conversation``) are re-exported by
:mod:`proagent.sources.lifetrace`."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from ..records import Conversation

__all__ = [
    "EARLIEST",
    "LATEST",
    "cell_flag",
    "cell_int",
    "cell_text",
    "file_name_of",
    "is_set",
    "parse_conversation",
    "parse_timestamp",
    "row_key",
    "time_from_file_name",
]

EARLIEST = datetime(1990, 1, 1)
"""Earliest activity time the readers accept (naive): older times are a unit or
epoch mistake (``0``, ``true``, a year like 1929), not a log."""
LATEST = datetime(2100, 1, 1)
"""Times at or after this are refused as well (``9999-12-31``, milliseconds read as seconds)."""

_TS_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?")
_NAME_TIME_RE = re.compile(r"(\d{8})_(\d{6})(?:_(\d{1,6}))?")


def parse_timestamp(value: object) -> datetime:
    """Parse a LifeTrace timestamp into a naive local ``datetime``.

    Accepts ``YYYY-MM-DD HH:MM:SS.ffffff`` as LifeTrace writes it, also without
    fraction or seconds, with a ``T`` separator, or with up to 9 fraction
    digits (truncated to microseconds).

    Raises:
        ValueError: the value is not such a string (NULL, a number, a time zone,
            an impossible date, a time before :data:`EARLIEST` or from :data:`LATEST` on...).
    """
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            raise ValueError(f"timestamp {value!r} has a time zone, expected naive local time")
        return _plausible(value, value)
    if not isinstance(value, str):
        raise ValueError(f"expected a timestamp string, got {value!r}")
    try:  # fast path: written as LifeTrace (SQLAlchemy) or str(datetime) writes it
        t = datetime.fromisoformat(value)
    except ValueError:
        pass
    else:
        if t.tzinfo is None and (value == t.isoformat(" ", "microseconds") or value == str(t)):
            return _plausible(t, value)
    m = _TS_RE.fullmatch(value.strip())
    if not m:
        raise ValueError(f"bad timestamp {value!r} (expected YYYY-MM-DD HH:MM:SS[.ffffff])")
    y, mo, d, h, mi, s, frac = m.groups()
    micro = int((frac or "0")[:6].ljust(6, "0"))
    try:
        t = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s or 0), micro)
    except ValueError as e:
        raise ValueError(f"bad timestamp {value!r} ({e})") from None
    return _plausible(t, value)


def _plausible(t: datetime, value: object) -> datetime:
    if not EARLIEST <= t < LATEST:
        raise ValueError(f"timestamp {value!r} is outside {EARLIEST.year}-{LATEST.year}")
    return t


def time_from_file_name(name: str) -> datetime | None:
    """The capture time a LifeTrace file name carries
    (``screen_{screen_id}_{YYYYmmdd_HHMMSS_mmm}.png``), or ``None`` when it carries none."""
    m = _NAME_TIME_RE.search(name)
    if not m:
        return None
    date, clock, ms = m.groups()
    try:
        t = datetime.strptime(date + clock, "%Y%m%d%H%M%S")
    except ValueError:
        return None
    return t.replace(microsecond=int((ms or "0").ljust(6, "0")[:6])) if ms else t


def file_name_of(file_path: str) -> str:
    """File name of a capture-side path, Windows or POSIX."""
    return re.split(r"[\\/]", file_path.strip())[-1]


def cell_text(value: Any) -> str:
    """A cell as stripped text: NULL -> ``""``, bytes decoded as UTF-8 (with replacement)."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return str(value).strip()


def is_set(value: Any) -> bool:
    """True for a set ``deleted_at`` (not NULL, not blank)."""
    return value is not None and cell_text(value) != ""


def cell_flag(value: Any) -> bool | None:
    """SQLite boolean (0/1, or text) -> bool; NULL -> None; else ValueError."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value in (0, 1):
            return bool(value)
        raise ValueError(f"expected 0 or 1, got {value!r}")
    if isinstance(value, bool):
        return value
    s = cell_text(value).casefold()
    if s in ("1", "true", "t", "yes", "y"):
        return True
    if s in ("0", "false", "f", "no", "n"):
        return False
    if s == "":
        return None
    raise ValueError(f"expected 0 or 1, got {value!r}")


def cell_int(value: Any) -> int | None:
    """A cell as an integer; NULL, blank or non-numeric -> ``None``."""
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def row_key(value: Any) -> Any:
    """A row id as a join key: integral values as ``int`` (so ``5`` and
    ``'5'`` meet), blank as ``None``, anything else as stripped text."""
    if value is None or isinstance(value, int):
        return value
    text = cell_text(value)
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        try:
            f = float(text)
        except ValueError:
            return text
        return int(f) if f.is_integer() else text


def _strings(value: Any) -> tuple[str, ...]:
    """A list of messages (strings, or objects with ``content``/``text``) as texts."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value.strip() else ()
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise ValueError(f"expected a list of messages, got {type(value).__name__}")
    out: list[str] = []
    for item in value:
        if isinstance(item, dict):
            item = item.get("content", item.get("text", item.get("message")))
            if isinstance(item, list):  # OpenAI-style content parts
                item = "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in item)
        if item is None:
            continue
        out.append(item if isinstance(item, str) else json.dumps(item, ensure_ascii=False))
    return tuple(out)


def parse_conversation(text: object) -> Conversation | None:
    """Parse a processed DB's ``events.conversation`` JSON text.

    The object's ``user_queries`` and ``llm_responses`` may be lists of strings
    (or of ``{"content": ...}`` messages) or single strings;
    ``full_conversation`` may be text or JSON (kept as JSON text). A bare list
    of ``{"role", "content"}`` messages is also accepted (user messages become
    queries, assistant messages responses).

    Returns:
        ``None`` for NULL, blank text or JSON ``null``; otherwise a
        :class:`Conversation` (possibly empty).

    Raises:
        ValueError: the text is not valid JSON or not of the shapes above.
    """
    if text is None:
        return None
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str):
        raise ValueError(f"expected JSON text, got {type(text).__name__}")
    if not text.strip():
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"invalid JSON ({e.msg.removesuffix(' at')} at line {e.lineno} column {e.colno})") from None
    if data is None:
        return None
    if isinstance(data, list):
        if not all(isinstance(m, dict) and "role" in m for m in data):
            raise ValueError("expected an object with user_queries/llm_responses, or a list of role/content messages")
        users = [m for m in data if str(m.get("role")).lower() in ("user", "human")]
        bots = [m for m in data if str(m.get("role")).lower() in ("assistant", "ai", "bot", "model")]
        return Conversation(_strings(users), _strings(bots), text.strip())
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    full = data.get("full_conversation")
    if full is None:
        full_text = ""
    elif isinstance(full, str):
        full_text = full
    else:
        full_text = json.dumps(full, ensure_ascii=False)
    return Conversation(
        user_queries=_strings(data.get("user_queries")),
        llm_responses=_strings(data.get("llm_responses")),
        full_conversation=full_text,
    )
