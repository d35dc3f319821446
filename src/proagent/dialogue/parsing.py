"""Read model answers of the ProactiveEval track robustly.

Nothing here raises on a bad answer: an unreadable answer becomes a record whose
score (or target) is None, and callers count it as unparsed, apart from wrong.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ..jsontext import json_objects
from .prompting import template_text
from .records import DIMENSIONS, GuidanceJudgement, Judgement, Plan

__all__ = [
    "PLAN_TEMPLATES",
    "clean_message",
    "is_plan_placeholder",
    "parse_guidance_judgement",
    "parse_judgement",
    "parse_mentioned",
    "parse_plan",
    "parse_reached",
    "plan_placeholders",
]

_NUM = r"(10(?:\.0+)?|[1-9](?:\.\d+)?)"
_SCORE_RE = re.compile(
    r"(?:final\s+score|overall\s+score|overall|score|rating)\s*(?:\(1\s*-\s*10\))?\s*[*_`\"']*\s*[:=]?"
    r"(?:\s*(?:is|of|would\s+be|will\s+be|should\s+be)\b)?\s*[*_`\"']*\s*\[?"
    + _NUM
    + r"\]?(?:\s*(?:/|out\s+of)\s*10)?(?![\d.]*\d)",
    re.IGNORECASE,
)
_OUT_OF_RE = re.compile(r"(?<![\d.])" + _NUM + r"\s*(?:/|out\s+of)\s*10\b", re.IGNORECASE)


def _score_in(text: str, pattern: re.Pattern[str]) -> tuple[float | None, int]:
    """The last score matched by ``pattern`` within 1..10, and where its match starts."""
    found: tuple[float | None, int] = (None, -1)
    for m in pattern.finditer(text):
        v = float(m.group(1))
        if 1.0 <= v <= 10.0:
            found = (v, m.start())
    return found


def parse_judgement(text: str | None) -> Judgement:
    """Reasoning then a 1-10 score (``Score: 7``, ``**Score:** 7/10``, ``Rating = 7`` ...).

    The last score in the answer wins (judges often restate the scale first);
    without a ``Score:`` label an ``N/10`` is accepted. Anything else is unparsed
    (score None).
    """
    raw = text or ""
    score, at = _score_in(raw, _SCORE_RE)
    if score is None:
        score, at = _score_in(raw, _OUT_OF_RE)
    reasoning = raw[:at] if at >= 0 else raw
    reasoning = re.sub(r"^\s*(?:reasoning|reason|analysis)\s*[:：]\s*", "", reasoning.strip(), flags=re.IGNORECASE)
    return Judgement(score=score, reasoning=reasoning.strip(" *\n"), raw=raw)


def parse_guidance_judgement(text: str | None) -> GuidanceJudgement:
    """The guidance judge's answer: reasoning, five dimension scores, overall score.

    The overall score is the ``Score:`` line; when it is missing but all five
    dimensions were read, their mean is used (rounded to 0.1).
    """
    raw = text or ""
    dims: dict[str, float | None] = {}
    for d in DIMENSIONS:
        pat = re.compile(r"\b" + d + r"\b\s*[*_`]*\s*[:=]\s*[*_`]*\s*" + _NUM + r"(?![\d.]*\d)", re.IGNORECASE)
        dims[d] = _score_in(raw, pat)[0]
    # the overall score: a "Score:" label not preceded by a dimension name
    stripped = re.sub(r"\b(?:" + "|".join(DIMENSIONS) + r")\b[^\n]*", " ", raw, flags=re.IGNORECASE)
    base = parse_judgement(stripped)
    score = base.score
    if score is None and all(v is not None for v in dims.values()):
        score = round(sum(v for v in dims.values() if v is not None) / len(dims), 1)
    first_dim = min(
        (
            m.start()
            for d in DIMENSIONS
            for m in [re.search(r"\b" + d + r"\b\s*[*_`]*\s*[:=]", raw, re.IGNORECASE)]
            if m
        ),
        default=-1,
    )
    reasoning = base.reasoning if first_dim < 0 else parse_judgement(raw[:first_dim]).reasoning
    return GuidanceJudgement(score=score, reasoning=reasoning, raw=raw, dimensions=dims)


_CONDITION = re.compile(r"\b(?:when|only|if|unless|once|until)\b", re.IGNORECASE)
_NOT_REACHED = re.compile(
    r"\b(?:not|n't|never|yet\s+to\s+be)\b[^.]{0,40}\breached\b|\bnot\s+yet\s+reached\b", re.IGNORECASE
)
_REACHED = re.compile(
    r"\b(?:is|has\s+been|was|been|got|have)\s+(?:now\s+|fully\s+|successfully\s+)?reached\b", re.IGNORECASE
)


def parse_reached(text: str | None) -> bool | None:
    """The termination judge's verdict.

    ``Reached: yes|no`` (the last one wins); else a last line that is just yes/no;
    else the last sentence stating it ("the target is reached", "... is not
    reached"), skipping conditional sentences that restate the rule ("the target
    is reached only when ..."). Anything else is None (unreadable).
    """
    raw = text or ""
    found = re.findall(r"reached\W{0,6}(yes|no|true|false)\b", raw, re.IGNORECASE)
    if not found:
        found = re.findall(r"^\W*(yes|no)\W*$", raw.strip().splitlines()[-1] if raw.strip() else "", re.IGNORECASE)
    if found:
        return found[-1].lower() in {"yes", "true"}
    for sentence in reversed(re.split(r"(?<=[.!?])\s+|\n+", raw)):
        if _CONDITION.search(sentence):
            continue
        if _NOT_REACHED.search(sentence):
            return False
        if _REACHED.search(sentence):
            return True
    return None


def parse_mentioned(text: str | None, n_sub: int) -> list[int] | None:
    """The extraction judge's list of sub-targets mentioned in a message.

    ``Mentioned: 1, 3`` -> [1, 3]; ``Mentioned: none`` -> []; numbers outside
    1..n_sub are dropped; no ``Mentioned:`` line -> None (unparsed).
    """
    raw = text or ""
    m = None
    for m in re.finditer(r"mentioned\s*[*_`]*\s*[:=]\s*([^\n]*)", raw, re.IGNORECASE):
        pass
    if m is None:
        return None
    rest = m.group(1)
    nums = sorted({int(x) for x in re.findall(r"\d+", rest) if 1 <= int(x) <= n_sub})
    if not nums and not re.search(r"none|nothing|no sub|\[\s*\]|^\W*$", rest, re.IGNORECASE):
        return None
    return nums


PLAN_TEMPLATES = ("plan_user", "gen_target_merge")
"""Prompts (``prompts/<name>.txt``) that show the answer as a JSON template; a plan
repeating that template's texts is the template echoed, not an answer."""


def _norm(text: str) -> str:
    """Lower case, one space between words, no surrounding quotes, brackets or full stop."""
    return re.sub(r"\s+", " ", text).strip().strip("\"'`*_<>[]{}()").strip().rstrip(".").strip().lower()


@lru_cache(maxsize=None)
def plan_placeholders() -> frozenset[str]:
    """The placeholder texts of the plan templates (:data:`PLAN_TEMPLATES`), normalised:
    every string of their ``{"target": ..., "sub_target": [...]}`` JSON, and of a
    ``label: text`` placeholder the text after the label too."""
    out: set[str] = set()
    for name in PLAN_TEMPLATES:
        for found in json_objects(template_text(name)):
            obj = found.value
            if not isinstance(obj, dict):
                continue
            for value in obj.values():
                for v in value if isinstance(value, list) else [value]:
                    if isinstance(v, str):
                        out.add(_norm(v))
                        if ":" in v:
                            out.add(_norm(v.split(":", 1)[1]))
    out.discard("")
    return frozenset(out)


_EMPTY = re.compile(r"^(?:\.{2,}|…+|-+|n/?a|none|null|tbd|todo)$", re.IGNORECASE)


def is_plan_placeholder(text: str) -> bool:
    """Whether a target or sub-target is no answer: a placeholder text of a plan
    template (read from the prompt files), ``...``, ``n/a``, ``none`` or empty."""
    v = _norm(text)
    return not v or bool(_EMPTY.match(v)) or v in plan_placeholders()


def _echoed(plan: Plan) -> bool:
    """A plan whose target or any sub-target is a template placeholder."""
    return (
        plan.target is None or is_plan_placeholder(plan.target) or any(is_plan_placeholder(s) for s in plan.sub_target)
    )


def _plan_from(obj: Any, method: str) -> Plan | None:
    if not isinstance(obj, dict):
        return None
    keys = {k.lower().replace("-", "_").replace(" ", "_"): v for k, v in obj.items()}
    target = keys.get("target")
    if not isinstance(target, str) or not target.strip():
        return None
    subs = next((keys[k] for k in ("sub_target", "sub_targets", "subtargets", "subtarget", "steps") if k in keys), [])
    if isinstance(subs, str):
        subs = [subs]
    subs = (
        [str(s).strip() for s in subs if isinstance(s, (str, int, float)) and str(s).strip()]
        if isinstance(subs, list)
        else []
    )
    return Plan(target=target.strip(), sub_target=tuple(subs), parse_method=method)


def parse_plan(text: str | None) -> Plan:
    """A target-planning answer: JSON ``{"target": ..., "sub_target": [...]}``
    (fenced or bare, truncated JSON repaired), else ``Target:`` / ``- step`` lines.

    A plan whose target or a sub-target is a placeholder of the prompt's JSON
    template (:func:`is_plan_placeholder`: the template echoed) is skipped; with no
    other plan in the answer it is unparsed (target None), so it is never judged."""
    raw = text or ""
    for found in json_objects(raw):
        plan = _plan_from(found.value, found.how)
        if plan and not _echoed(plan):
            return plan
    for m in re.finditer(r"^[\s#*_-]*target[*_]*\s*[:：][*_]*\s*(.*\w.*)$", raw, re.IGNORECASE | re.MULTILINE):
        after = raw[m.end() :]
        subs = [s.strip() for s in re.findall(r"^\s*(?:[-*•]|\d+[.)])\s+(.+)$", after, re.MULTILINE)]
        plan = Plan(target=m.group(1).strip().strip('"'), sub_target=tuple(subs), parse_method="lines")
        if not _echoed(plan):
            return plan
    return Plan(target=None)


def clean_message(text: str | None, speaker: str = "assistant") -> str:
    """A dialogue message as the other side should see it: surrounding quotes and a
    leading speaker label (``Assistant:``) removed, and anything after a line where
    the model starts writing the other side's part cut off."""
    t = (text or "").strip()
    other = "user" if speaker == "assistant" else "assistant"
    t = re.sub(r"^\s*(?:\*\*)?(?:" + speaker + r"|ai|agent|me)(?:\*\*)?\s*:\s*", "", t, flags=re.IGNORECASE)
    cut = re.search(r"\n\s*(?:\*\*)?(?:" + other + r")(?:\*\*)?\s*:", t, re.IGNORECASE)
    if cut:
        t = t[: cut.start()]
    t = t.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'":
        t = t[1:-1].strip()
    return t
