"""Read the annotator's JSON answer, and the default annotation when it cannot be read.

Models wrap JSON in prose or fences, leave trailing commas, single quotes or
Python literals, or stop mid-object; ``json-repair`` (pinned) turns such text
into the object it meant (ProAgentBench Appendix B.5: JSON repair, retries,
default annotation). The object's fields are then checked and normalised:

* ``is_llm_interaction`` (also ``is_llm_event``, ``is_llm``): a bool, 0/1 or
  yes/no; it must be present, else the answer is unreadable;
* ``llm_platform``: mapped to a name of ``data/llm_platforms.json`` when it
  names one (``chatgpt`` -> ``ChatGPT``, ``doubao`` -> ``豆包``), kept as written otherwise;
* ``user_queries`` / ``llm_responses``: a list of strings (a single string is
  one item; blanks dropped);
* ``event_summary``: cut to 20 words (paper: summary <= 20 words);
* ``user_intention``: mapped to the taxonomy (unrecognised text: its fallback);
* ``confidence``: a number in 0-1 (percentages accepted), else ``None``.

A non-LLM answer carries no platform, queries, responses or intention.

A value that repeats the prompt's own placeholder text ("each message the user
typed to the AI, verbatim from the screen", "one intention category name from
the list") is the template echoed, not an answer (:mod:`proagent.agent.echo`):
it is dropped, and a flag that is the echo (``"true or false"``) leaves the
answer unreadable.

:func:`parse_intent` reads the short answer of the intention prompt (when the
conversation itself was read from the screen): ``user_intention`` and
``event_summary``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from ..agent.echo import TemplateEcho
from ..errors import DataError
from ..jsontext import json_objects
from ..records import Event
from ..taxonomy import Taxonomy, load_taxonomy
from .platforms import PlatformHit, detect_platform, load_platforms

__all__ = ["SUMMARY_WORDS", "AnswerError", "default_fields", "parse_annotation", "parse_intent"]

SUMMARY_WORDS = 20
"""Longest event summary, words (ProAgentBench Appendix B.5)."""

_FLAG_KEYS = ("is_llm_interaction", "is_llm_event", "is_llm", "llm_interaction")


class AnswerError(DataError):
    """The answer holds no usable annotation object; the message says what is wrong (the
    answer is the bad input: no ``path``)."""

    def __init__(self, problem: str) -> None:
        super().__init__(None, problem)


@lru_cache(maxsize=1)
def _echo() -> TemplateEcho:
    from .prompting import template_texts

    return TemplateEcho(template_texts())


_SLOT = re.compile(r'"\w+"\s*:\s*"([^"$]+)"')
"""A JSON slot of an answer template: ``"rationale": "one sentence: why"``."""


def _squash(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


@lru_cache(maxsize=1)
def _placeholders() -> frozenset[str]:
    """The slot texts of the prompts' answer templates (``one sentence: why``, ``what the user did,
    at most 20 words``), punctuation and case ignored: a model that copies one answered nothing."""
    from .prompting import template_texts

    return frozenset(_squash(m.group(1)) for t in template_texts() for m in _SLOT.finditer(t))


def _is_placeholder(text: str) -> bool:
    """True when ``text`` is an answer template's slot text, or a part of one of at least two words
    (``one sentence``), echoed instead of an answer. Short echoes the five-word
    :class:`~proagent.agent.echo.TemplateEcho` misses (issue 34: ``"rationale": "one sentence: why"``
    was stored)."""
    t = _squash(text)
    return bool(t) and (t in _placeholders() or (len(t.split()) >= 2 and any(t in p for p in _placeholders())))


def _objects(text: str) -> list[dict[str, Any]]:
    return [f.value for f in json_objects(text or "")]


def _flag(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    if isinstance(v, str):
        s = v.strip().casefold()
        if s in ("true", "yes", "1", "是"):
            return True
        if s in ("false", "no", "0", "否"):
            return False
    return None


def _strings(v: Any) -> tuple[str, ...]:
    if v is None:
        return ()
    items = v if isinstance(v, list) else [v]
    out = []
    for it in items:
        if isinstance(it, dict):  # {"role": ..., "content": ...}
            it = it.get("content") or it.get("text") or ""
        s = " ".join(str(it).split())
        if s and s.casefold() not in ("null", "none", "n/a") and not _echo().is_echo(s) and not _is_placeholder(s):
            out.append(s)
    return tuple(out)


def _answer_text(v: Any) -> str:
    s = "" if v is None or isinstance(v, (dict, list)) else " ".join(str(v).split())
    return "" if _echo().is_echo(s) or _is_placeholder(s) else s


def _confidence(v: Any) -> float | None:
    try:
        s = str(v).strip()
        c = float(s[:-1]) / 100 if s.endswith("%") else float(s)
    except (TypeError, ValueError):
        return None
    if 1 < c <= 100:
        c /= 100
    return c if 0 <= c <= 1 else None


def _platform(v: Any) -> str | None:
    name = _answer_text(v)
    if not name or name.casefold() in ("null", "none", "n/a", "unknown"):
        return None
    for p in load_platforms():
        if name.casefold() in {p.name.casefold(), *(a.casefold() for a in p.apps), *(t.casefold() for t in p.titles)}:
            return p.name
    hit = detect_platform("", name)
    return hit.platform if hit else name


def _cut_words(text: str, n: int) -> str:
    words = text.split()
    return text if len(words) <= n else " ".join(words[:n])


def parse_annotation(text: str, taxonomy: Taxonomy | None = None) -> dict[str, Any]:
    """The annotation fields of one answer (keys of
    :class:`~proagent.annotate.records.EventAnnotation`: ``is_llm_event``,
    ``llm_platform``, ``event_summary``, ``detailed_description``,
    ``user_queries``, ``llm_responses``, ``full_conversation``,
    ``user_intention``, ``confidence``, ``rationale``).

    The last object in the answer that carries the LLM flag is used.

    Raises:
        AnswerError: no JSON object with a readable ``is_llm_interaction`` flag.
    """
    taxonomy = taxonomy or load_taxonomy()
    objs = _objects(text)
    if not objs:
        raise AnswerError("no JSON object in the answer")
    obj = next((o for o in reversed(objs) if any(k in o for k in _FLAG_KEYS)), None)
    if obj is None:
        raise AnswerError("the JSON object has no is_llm_interaction field")
    flag = _flag(next(obj[k] for k in _FLAG_KEYS if k in obj))
    if flag is None:
        raise AnswerError(f"is_llm_interaction is not true/false: {next(obj[k] for k in _FLAG_KEYS if k in obj)!r}")
    queries = _strings(obj.get("user_queries", obj.get("user_query")))
    responses = _strings(obj.get("llm_responses", obj.get("llm_response")))
    intention = _answer_text(obj.get("user_intention", obj.get("intention")))
    out: dict[str, Any] = {
        "is_llm_event": flag,
        "event_summary": _cut_words(_answer_text(obj.get("event_summary", obj.get("summary"))), SUMMARY_WORDS),
        "detailed_description": _answer_text(obj.get("detailed_description", obj.get("description"))),
        "confidence": _confidence(obj.get("confidence")),
        "rationale": _answer_text(obj.get("rationale", obj.get("reasoning"))),
        "llm_platform": None,
        "user_queries": (),
        "llm_responses": (),
        "full_conversation": "",
        "user_intention": None,
    }
    if flag:
        turns = [f"User: {q}" for q in queries] + [f"Assistant: {r}" for r in responses]
        if len(queries) == len(responses):  # interleave when they pair up
            turns = [t for q, r in zip(queries, responses) for t in (f"User: {q}", f"Assistant: {r}")]
        out.update(
            llm_platform=_platform(obj.get("llm_platform", obj.get("platform"))),
            user_queries=queries,
            llm_responses=responses,
            full_conversation="\n".join(turns),
            user_intention=(taxonomy.canonical(intention) or taxonomy.fallback)
            if intention and intention.casefold() not in ("null", "none")
            else None,
        )
    return out


def default_fields(event: Event, hit: PlatformHit | None, texts: Sequence[str] = ()) -> dict[str, Any]:
    """The default annotation when the model gave no readable answer: the first
    pass's verdict (LLM use exactly when a platform was found), its platform,
    the window title as the summary, and nothing invented (no queries, no
    intention, no confidence)."""
    title = " ".join(event.window_title.split())
    return {
        "is_llm_event": hit is not None,
        "llm_platform": hit.platform if hit else None,
        "event_summary": _cut_words(f"{event.app_name}: {title}" if title else event.app_name, SUMMARY_WORDS),
        "detailed_description": "",
        "user_queries": (),
        "llm_responses": (),
        "full_conversation": "",
        "user_intention": None,
        "confidence": None,
        "rationale": "default annotation (the model's answer could not be read): "
        + (f"{hit.evidence} names {hit.platform}" if hit else "no LLM platform found"),
    }


def parse_intent(text: str, taxonomy: Taxonomy | None = None) -> dict[str, Any]:
    """``{"user_intention", "event_summary"}`` of an answer to the intention prompt: the
    last JSON object with ``user_intention`` (or ``intention``), else an answer that is
    only a category name.

    Raises:
        AnswerError: no category could be read (the echoed placeholder included).
    """
    taxonomy = taxonomy or load_taxonomy()
    obj = next((o for o in reversed(_objects(text)) if "user_intention" in o or "intention" in o), None)
    if obj is None:
        bare = _answer_text((text or "").strip().strip("`\"'. "))
        name = taxonomy.canonical(bare) if bare and len(bare) <= 60 else None
        if name is None:
            raise AnswerError("no JSON object with user_intention in the answer")
        return {"user_intention": name, "event_summary": ""}
    raw = _answer_text(obj.get("user_intention", obj.get("intention")))
    name = taxonomy.canonical(raw) if raw else None
    if name is None:
        raise AnswerError(f"user_intention is no category name: {raw!r}" if raw else "user_intention is empty")
    return {
        "user_intention": name,
        "event_summary": _cut_words(_answer_text(obj.get("event_summary", obj.get("summary"))), SUMMARY_WORDS),
    }
