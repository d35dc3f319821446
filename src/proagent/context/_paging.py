"""Answers that fit a host's budget: a token estimate, the largest page under a cap, and cursors.

MCP hosts cap what one tool answer may hold: Claude Code warns above 10,000 tokens and refuses
above 25,000 (DESIGN.md section 10, "MCP hosts"). The server therefore sizes every answer with a
stated estimate, :func:`estimate_tokens`, and cuts a list that would pass
:data:`DEFAULT_MAX_TOKENS`, saying so in the answer with a cursor to continue where the list has
an order to continue in (``recent_activity``, ``search_activity``).

The estimate is **UTF-8 bytes of the JSON text the SDK sends, divided by 2.5, rounded up**
(:data:`BYTES_PER_TOKEN`). That text is JSON indented by 2, whose runs of spaces, quotes and
punctuation cost tokens: on one synth day's ``recent_activity`` answers the Qwen2.5 tokenizer
counted 1.15 tokens for every 3 bytes (``benchmarks/mcp_latency.py`` prints the comparison), so
bytes / 3 would under-count; bytes / 2.5 over-counts that English JSON by about 4% and Chinese
text (3 UTF-8 bytes a character, about one token each) by about 20%. No host's own tokenizer is
available offline, so the estimate is meant to err on the large side.

A cursor is opaque to the host: URL-safe base64 of a small JSON object naming the tool it
belongs to and where the next page starts. It holds no screen text (only times, an event id,
an offset and a hash of the search's arguments).
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = [
    "BYTES_PER_TOKEN",
    "DEFAULT_MAX_TOKENS",
    "ESTIMATE",
    "MIN_MAX_TOKENS",
    "answer_json",
    "decode_cursor",
    "encode_cursor",
    "estimate_tokens",
    "fit",
]

DEFAULT_MAX_TOKENS = 10_000
"""Default cap on one answer, estimated tokens: where Claude Code starts to warn (its hard limit is 25,000)."""
MIN_MAX_TOKENS = 4_000
"""Smallest cap ``--max-tokens`` accepts: ``current_context`` (2,000 characters of screen text,
up to 6,000 UTF-8 bytes, 2,400 estimated tokens) must always fit whole."""
BYTES_PER_TOKEN = 2.5
"""UTF-8 bytes per estimated token (see the module text for why 2.5)."""
ESTIMATE = "estimated as UTF-8 bytes / 2.5"
"""How answers name the estimate when they say they were cut."""

T = TypeVar("T")


def answer_json(result: Any) -> bytes:  # noqa: ANN401
    """The JSON text the SDK sends for a tool result (its ``TextContent``: pydantic's JSON,
    indented by 2), as UTF-8 bytes."""
    import pydantic_core

    return pydantic_core.to_json(result, fallback=str, indent=2)


def estimate_tokens(result: Any) -> int:  # noqa: ANN401
    """Estimated tokens of ``result`` as a host reads it: ``ceil(bytes / 2.5)`` of :func:`answer_json`."""
    return math.ceil(len(answer_json(result)) * 2 / 5)


def fit(build: Callable[[int], T], n: int, max_tokens: int) -> tuple[T, int]:
    """The answer with the most items (``build(k)``, ``k`` in ``1..n``) whose estimate is at most
    ``max_tokens``, and that ``k``; at least one item even when it alone is over (an item is
    bounded: titles and snippets are cut). ``build`` must grow with ``k``. Binary search: about
    ``log2(n)`` serialisations."""
    if n <= 0:
        return build(0), 0
    whole = build(n)
    if estimate_tokens(whole) <= max_tokens:
        return whole, n
    best, lo, hi = 1, 1, n - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if estimate_tokens(build(mid)) <= max_tokens:
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return build(best), best


def encode_cursor(kind: str, **fields: Any) -> str:  # noqa: ANN401
    """An opaque cursor for tool ``kind`` holding ``fields`` (JSON values)."""
    raw = json.dumps({"k": kind, **fields}, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: str, kind: str) -> dict[str, Any]:
    """The fields of a cursor made by :func:`encode_cursor` for ``kind``.

    Raises:
        ValueError: not such a cursor (damaged, or another tool's); the message says which.
    """
    try:
        text = cursor.strip()
        data = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode("ascii"))
    except (ValueError, UnicodeDecodeError):
        raise ValueError("is not a cursor this server gave: call again without it") from None
    if not isinstance(data, dict) or data.get("k") != kind:
        raise ValueError(f"is not a cursor of {kind}: pass the next_cursor of the same tool's answer") from None
    return data
