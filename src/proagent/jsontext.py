"""JSON objects inside a model's free text: the project's one extractor.

Models wrap JSON in prose and code fences, leave trailing commas, write Python literals
(``True``, ``None``, single quotes) or stop mid-object when their token budget runs out.
:func:`json_objects` finds every top-level ``{...}`` in a text, in order, and parses each
leniently; the last, unclosed one is repaired (``json-repair``). Every answer parser
(When/How to Assist, dialogue plans and judges, generated environments, annotation and
screening answers) reads its JSON through here, and records how it was read.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["JsonFound", "balanced_end", "first_json_object", "json_objects", "loads_lenient"]


@dataclass(frozen=True)
class JsonFound:
    """One JSON object found in a text."""

    value: Any
    """The parsed value (a dict for every object found here)."""
    start: int
    """Index of its opening brace in the text."""
    end: int
    """Index after its closing brace (the end of the text for a repaired, unclosed object)."""
    how: Literal["json", "json-repair"]
    """``json``: parsed as written; ``json-repair``: parsed after repair (trailing commas,
    Python literals, quotes, or an object cut off at the end of the text)."""


def balanced_end(text: str, start: int, limit: int = 20000) -> int | None:
    """Index after the brace that closes the one at ``text[start]`` (quotes respected; an
    apostrophe inside a word such as ``user's`` is not a quote), or ``None`` when it is not
    closed within ``limit`` characters."""
    depth = 0
    quote = ""
    i = start
    end = min(len(text), start + limit)
    while i < end:
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote or c == "\n" and quote == "'":
                quote = ""
        elif c in "\"'":
            if not (c == "'" and i > 0 and text[i - 1].isalnum()):
                quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


_REPAIR_MAX_CHARS = 20000
_REPAIR_MAX_BRACKETS = 500
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_JSON_LITERALS = {"true": "True", "false": "False", "null": "None"}


def loads_lenient(s: str) -> tuple[Any, Literal["json", "json-repair"]] | None:
    """Parse ``s`` as JSON, else after repair; ``None`` when nothing sensible comes out.

    Repairs tried in order: trailing commas; Python literals (``ast.literal_eval`` with
    ``true/false/null`` mapped); then ``json_repair`` (unquoted keys, single quotes,
    missing closing brackets of a cut-off object).
    """
    try:
        return json.loads(s), "json"
    except (ValueError, RecursionError):
        pass
    s2 = _TRAILING_COMMA.sub(r"\1", s)
    try:
        return json.loads(s2), "json-repair"
    except (ValueError, RecursionError):
        pass
    try:
        return ast.literal_eval(
            re.sub(r"\b(true|false|null)\b", lambda m: _JSON_LITERALS[m.group(1)], s2)
        ), "json-repair"
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    if len(s) > _REPAIR_MAX_CHARS or s.count("{") + s.count("[") > _REPAIR_MAX_BRACKETS:
        return None  # pathological nesting: repairing it costs seconds and yields nothing useful
    import json_repair

    try:
        value = json_repair.loads(s)
    except Exception:  # noqa: BLE001 (the repairer raises many kinds on hopeless input)
        return None
    return (value, "json-repair") if value not in ("", None) else None


def json_objects(text: str, max_tries: int = 200) -> Iterator[JsonFound]:
    """Every top-level JSON object in ``text``, in order of appearance.

    A ``{`` that does not start a parsable object is skipped (the scan resumes at the next
    ``{`` after it). The first one that is never closed is repaired together with the rest
    of the text; when that gives an object it ends the scan. At most ``max_tries`` opening
    braces are tried.
    """
    text = text or ""
    i = text.find("{")
    tries = 0
    repaired = False
    while i != -1 and tries < max_tries:
        tries += 1
        end = balanced_end(text, i)
        if end is None and repaired:
            i = text.find("{", i + 1)
            continue
        repaired = repaired or end is None
        got = loads_lenient(text[i:end] if end else text[i:])
        if got is not None and isinstance(got[0], dict):
            yield JsonFound(got[0], i, end or len(text), got[1] if end else "json-repair")
            if end is None:
                return
            i = text.find("{", end)
        else:
            i = text.find("{", i + 1)


def first_json_object(text: str) -> dict | None:
    """The first JSON object in ``text`` (see :func:`json_objects`), or ``None``."""
    return next((f.value for f in json_objects(text)), None)
