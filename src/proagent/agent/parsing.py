"""Parse a model's answer to the When/How-to-Assist prompt.

This is the answer-parsing cascade of ProAgentBench (arXiv 2602.04482,
section 5 / Appendix, answer parsing). The prompt asks for::

    Need help: Yes|No
    Intention: <one of the 16 category names>
    Query: <the question the user would ask an AI assistant now>

(for chain of thought: ``Step 1 (Describe)`` .. ``Step 4 (Classify intention)``
and then the same three lines). Small models ramble, restate, use markdown,
answer in Chinese, wrap JSON in fences or stop mid-sentence, so the decision
B_t is read by the first step of this cascade that finds one:

1. ``json`` -- a JSON object anywhere in the text (also inside ```json fences;
   trailing commas, single quotes and Python literals tolerated) with a help key
   (``need_help``, ``needs_help``, ``need_assistance``, ``help`` ...) holding a
   bool, 0/1 or yes/no; a truncated object is read key by key. The last object
   with a help key wins.
2. ``explicit`` -- a labelled line: ``Need help: Yes``, ``**Need help:** no``,
   ``Need Help - YES``, ``Needs assistance: yes``, ``需要帮助：是/否``, or an
   answer line (``Final answer: No``, ``Decision: yes``, ``最终答案：否``). The
   LAST such line wins (models restate their answer). An echo of the template
   options (``Yes|No``, ``Yes/No``, ``是/否``) decides nothing.
3. ``cot_step3`` -- the ``Step 3 (Judge)`` section (up to ``Step 4`` or a final
   label): a leading yes/no, else the last decisive phrase inside it.
4. ``keyword`` -- the last decisive phrase over the whole text: negated forms
   ("does not need help", "doesn't need", "no help needed", "should not
   interrupt", "不需要") beat the positives they contain ("needs help", "would
   benefit from assistance", "需要"); questions and hedges ("Does the user need
   help?", "whether the user needs help", "是否需要帮助") decide nothing; a bare
   ``yes``/``no`` counts only when it stands as an answer (sentence start or
   before punctuation/end), so "there is no error" decides nothing.
5. ``unparsed`` -- nothing decisive: ``needs_help`` is ``None``.

Before step 1 the prompt's own wording echoed in the answer is masked
(:mod:`proagent.agent.echo`: runs of 5+ words of ``prompts/*.txt``, and "if
yes"/"otherwise no"), so an answer that only repeats the instruction ("Decide
whether the user needs help... If yes, write the question...") is unparsed.

``intention`` comes from the JSON object, else the last recognised
``Intention:``/``Category:``/``Intent:``/``意图：`` line, else the ``Step 4``
section, else (only when no labelled line exists) the last bare category name
in the text (multi-word names in any case; one-word names such as
``Translation`` only when capitalised, so prose like "the translation of" does
not count). It is always a canonical taxonomy name or ``None``.

``query`` comes from the JSON object, else the last ``Query:``/``User query:``/
``Predicted query:``/``查询：`` line (quotes and markdown stripped; the next
line when the label line is empty). Placeholders (``<...>``, ``N/A``, ``none``)
give ``None``.

Reasoning-model output with ``<think>...</think>`` is parsed after the closing
tag first, and as a whole when that decides nothing. :func:`parse_answer` never
raises on any input: should a step of the cascade itself raise (a bug, never the model's
fault), the answer is read as undecided with ``method`` :data:`PARSER_ERROR`, not
``unparsed``, so it is counted apart in each prediction's ``parse_method`` (the scorer's
``explanation``) and in :data:`PARSER_ERRORS`, and logged once per exception kind (its type
and where it was raised, never the answer text).
"""

from __future__ import annotations

import json
import logging
import re
import traceback
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from proagent.jsontext import json_objects
from proagent.records import Prediction
from proagent.taxonomy import Taxonomy, load_taxonomy

from .echo import when_echo

__all__ = ["PARSER_ERROR", "PARSER_ERRORS", "PARSE_STEPS", "ParsedAnswer", "parse_answer", "to_prediction"]

PARSE_STEPS = ("json", "explicit", "cot_step3", "keyword", "unparsed")
"""Values of :attr:`ParsedAnswer.method`, in cascade order (and :data:`PARSER_ERROR`)."""

PARSER_ERROR = "parser_error"
""":attr:`ParsedAnswer.method` when the cascade raised: a parser bug, undecided like
``unparsed`` but counted apart (not one of :data:`PARSE_STEPS`, so the property tests that
require a step fail on it)."""

PARSER_ERRORS: Counter[str] = Counter()
"""Answers whose parse raised in this process, by exception kind (``"KeyError at
parsing.py:123"``); the first of each kind is logged as a warning."""

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ParsedAnswer:
    """One model answer, parsed."""

    needs_help: bool | None
    """When to Assist: ``None`` when no decision could be read."""
    intention: str | None = None
    """Canonical taxonomy name, or ``None`` when absent or unrecognised."""
    query: str | None = None
    """The predicted user query, or ``None`` when absent or a placeholder."""
    method: str = "unparsed"
    """Cascade step that produced ``needs_help`` (one of :data:`PARSE_STEPS`), or
    :data:`PARSER_ERROR` when the cascade raised."""

    @property
    def unparsed(self) -> bool:
        """True when no When-to-Assist decision was read."""
        return self.needs_help is None


UNPARSED = ParsedAnswer(None, None, None, "unparsed")


def _parser_error(exc: Exception) -> ParsedAnswer:
    """Count and (once per kind) log a raising parse step; never the answer text, which
    may hold screen text (only the exception's type and the line that raised it)."""
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}" if frame else "?"
    kind = f"{type(exc).__name__} at {where}"
    PARSER_ERRORS[kind] += 1
    if PARSER_ERRORS[kind] == 1:
        _log.warning(
            "the answer parser raised %s; such answers are scored as undecided and "
            "recorded with parse_method %r (a bug to report)",
            kind,
            PARSER_ERROR,
        )
    return ParsedAnswer(None, None, None, PARSER_ERROR)


# --------------------------------------------------------------------------
# text clean-up

_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")
_QUOTE_MAP = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


def _prepare(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _ZERO_WIDTH.sub("", text).translate(_QUOTE_MAP)
    return text.replace("\x00", "")


_MD_PREFIX = re.compile(r"^[\s>#*_\-+•·]*(?:\d{1,2}[.)]\s+)?[\s*_]*")


def _clean_line(line: str) -> str:
    """Drop markdown emphasis, headings, bullets and list numbers."""
    line = line.replace("**", "")
    return _MD_PREFIX.sub("", line).strip()


# --------------------------------------------------------------------------
# yes/no values

_TEMPLATE_ECHO = re.compile(
    r"(?:\byes\b\s*(?:\||/|\\|\bor\b)\s*\bno\b|\bno\b\s*(?:\||/|\\|\bor\b)\s*\byes\b"
    r"|\btrue\b\s*(?:\||/|\bor\b)\s*\bfalse\b|是\s*[|/／、或]\s*否|否\s*[|/／、或]\s*是"
    r"|需要\s*[|/／、或]\s*不需要)",
    re.I,
)
_VALUE_STRIP = " \t*_`\"'[](){}<>:：-–—=.,;!?。，！？【】「」"
_YES_WORDS = re.compile(r"^(?:yes|y|true|yep|yeah|affirmative|1)\b", re.I)
_NO_WORDS = re.compile(r"^(?:no|n|false|nope|negative|0)\b", re.I)
_CJK_YES = ("是", "需要", "有", "对")
_CJK_NO = ("否", "不需要", "不", "无需", "没有", "无")
_HEDGED = re.compile(
    r"^(?:(?:probably|likely|maybe|perhaps|most\s+likely|definitely|clearly|i\s+think|"
    r"i\s+would\s+say|i'd\s+say|answer\s+is)[\s,:]+)+(yes|no|not)\b",
    re.I,
)


def _yes_no_value(value: str, allow_phrases: bool = True) -> bool | None:
    """Read a yes/no answer from the value part of a labelled line."""
    v = value.strip()
    head = v[:40]
    if _TEMPLATE_ECHO.search(head):
        return None
    v = v.strip(_VALUE_STRIP)
    if not v:
        return None
    if _YES_WORDS.match(v):
        return True
    if _NO_WORDS.match(v):
        return False
    for w in _CJK_NO:  # before yes: 不需要 starts with neither 是 nor 需要, but be safe
        if v.startswith(w):
            return False
    for w in _CJK_YES:
        if v.startswith(w):
            return True
    m = _HEDGED.match(v)
    if m:
        return m.group(1).lower() == "yes"
    if allow_phrases:
        hit = _keyword_decision(v)
        if hit is not None:
            return hit
    return None


# --------------------------------------------------------------------------
# step 1: JSON

_HELP_KEYS = {
    "need_help",
    "needs_help",
    "needhelp",
    "need_assistance",
    "needs_assistance",
    "need_assist",
    "help",
    "help_needed",
    "needs_help_now",
    "need_help_now",
    "requires_help",
    "require_help",
    "should_help",
    "should_assist",
    "assistance_needed",
    "need_intervention",
    "needs_intervention",
    "should_intervene",
    "when_to_assist",
    "需要帮助",
    "是否需要帮助",
    "需要协助",
}
_INTENT_KEYS = {
    "intention",
    "intent",
    "category",
    "intention_category",
    "predicted_intention",
    "intent_category",
    "意图",
    "类别",
}
_QUERY_KEYS = {
    "query",
    "user_query",
    "predicted_query",
    "likely_query",
    "question",
    "user_question",
    "suggested_query",
    "查询",
    "用户查询",
    "用户问题",
}


def _norm_key(key: Any) -> str:
    return re.sub(r"[^0-9a-z\u4e00-\u9fff]+", "_", str(key).lower()).strip("_")


def _help_value(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    if isinstance(v, str):
        return _yes_no_value(v, allow_phrases=False)
    return None


def _find_fields(obj: Any, depth: int = 0) -> dict[str, Any]:
    """Help/intention/query values of a parsed JSON object (nested dicts searched)."""
    found: dict[str, Any] = {}
    if depth > 4 or not isinstance(obj, dict):
        return found
    for k, v in obj.items():
        nk = _norm_key(k)
        if nk in _HELP_KEYS and "help" not in found:
            hv = _help_value(v)
            if hv is not None:
                found["help"] = hv
        elif nk in _INTENT_KEYS and "intention" not in found and isinstance(v, str):
            found["intention"] = v
        elif nk in _QUERY_KEYS and "query" not in found and isinstance(v, str):
            found["query"] = v
    for v in obj.values():
        if isinstance(v, dict):
            for k2, v2 in _find_fields(v, depth + 1).items():
                found.setdefault(k2, v2)
    return found


_KV_STRING = r"""(?:"((?:[^"\\\n]|\\.)*)"?|'((?:[^'\\\n]|\\.)*)'?)"""
_KV = re.compile(
    r"""["']?([A-Za-z_\u4e00-\u9fff][\w \u4e00-\u9fff-]{0,30})["']?\s*:\s*"""
    r"""(true|false|True|False|null|[01]\b|""" + _KV_STRING + ")",
)


def _unescape(s: str) -> str:
    try:
        return json.loads(f'"{s}"')
    except ValueError:  # json.JSONDecodeError: not a valid JSON string body
        return s.replace('\\"', '"').replace("\\'", "'")


def _parse_json(text: str) -> dict[str, Any]:
    """Fields from the last JSON object with a help key (else any object), or
    key by key from a truncated one."""
    if "{" not in text:
        return {}
    best: dict[str, Any] = {}
    for found in json_objects(text):
        fields = _find_fields(found.value)
        if fields and ("help" in fields or "help" not in best):
            best = fields
    if "help" in best:
        return best
    # truncated / broken object: read "key": value pairs after the last brace
    tail = text[text.find("{") :]
    kv: dict[str, Any] = {}
    for m in _KV.finditer(tail):
        nk = _norm_key(m.group(1))
        raw = m.group(2)
        sval = m.group(3) if m.group(3) is not None else m.group(4)
        if nk in _HELP_KEYS:
            hv = (
                _help_value(_unescape(sval))
                if sval is not None
                else _help_value({"true": True, "false": False, "1": 1, "0": 0}.get(raw.lower()))
            )
            if hv is not None:
                kv["help"] = hv
        elif nk in _INTENT_KEYS and sval is not None:
            kv["intention"] = _unescape(sval)
        elif nk in _QUERY_KEYS and sval is not None:
            kv["query"] = _unescape(sval)
    if "help" in kv:
        return kv
    return best or kv


# --------------------------------------------------------------------------
# step 2: explicit labelled lines

_SEP = r"\s*[*_]*\s*(?:[:：=?？]|[-–—](?=\s*[*_]*\s*\S))\s*"


def _label(head: str) -> re.Pattern[str]:
    """A labelled line: ``head`` (the label words, a regex) at the start, the
    separator, then the value as group 1."""
    return re.compile("^" + head + _SEP + r"(.*)$", re.I)


_HELP_LABEL = _label(
    r"(?:final\s+(?:answer|decision)\s*[:：\-–—]?\s*)?"
    r"(?:(?:the\s+)?user\s+|does\s+the\s+user\s+)?"
    r"(?:needs?[\s_-]*(?:help|assistance|assist|intervention)(?:[\s_-]*now)?"
    r"|help[\s_-]*needed|requires?[\s_-]*(?:help|assistance)|assistance[\s_-]*needed"
    r"|should[\s_-]*(?:i[\s_-]*)?(?:help|assist|intervene)"
    r"|(?:是否)?需要(?:帮助|协助))"
)
_ANSWER_LABEL = _label(
    r"(?:final\s+answer|final\s+decision|final\s+judg(?:e)?ment|answer|decision|verdict|最终答案|最终判断|答案|结论)"
)
_INTENT_LABEL = _label(
    r"(?:final\s+|predicted\s+|user\s+)?(?:intention(?:\s+category)?|intent|category|意图|类别|意图类别)"
)
_QUERY_LABEL = _label(
    r"(?:final\s+|predicted\s+|user\s+|likely\s+|suggested\s+|proactive\s+)*(?:query|查询|用户查询|用户问题|预测查询)"
)

# labels collapsed onto one line ("Need help: Yes Intention: ... Query: ...")
_INLINE_LABEL = re.compile(
    r"(?<=\S)[ \t]+(?=(?:\*\*)?(?:Intention|Intent|Category|Query|User query|Predicted query"
    r"|Need help|Needs help)(?:\*\*)?\s*(?:\*\*)?[:：])"
    r"|(?<=\S)[ \t]*(?=(?:意图|查询)[:：])"
)


def _lines(text: str) -> list[str]:
    text = _INLINE_LABEL.sub("\n", text)
    return [_clean_line(line) for line in text.split("\n")]


_PLACEHOLDER = re.compile(
    r"^(?:<[^>]*>?|\[[^\]]*\]|\{[^}]*\}|n/?a|none|null|nil|nan|no\s+query|not\s+applicable"
    r"|nothing|empty|-+|无|没有|空|\.\.\.|…)$",
    re.I,
)
_PLACEHOLDER_HEAD = re.compile(r"^(?:none|n/a|null|无)\s*(?:[.(（\-–—:,;]|$)", re.I)


def _is_placeholder(value: str) -> bool:
    v = value.strip().strip(".。")
    if not v:
        return True
    if _PLACEHOLDER.match(v) or _PLACEHOLDER_HEAD.match(v):
        return True
    low = v.lower()
    return any(t in low for t in _TEMPLATE_TEXT)


# wording of the prompt templates (proagent/agent/prompts) that a model may echo
_TEMPLATE_TEXT = (
    "the question the user would ask",
    "one of the 16",
    "category name from the list",
    "one category name",
    "the user's question to the ai assistant",
    "user's question to the ai",
)


def _clean_query(value: str) -> str | None:
    v = value.strip().replace("**", "").strip()
    for _ in range(3):
        v = v.strip()
        if len(v) >= 2 and (v[0], v[-1]) in {
            ('"', '"'),
            ("'", "'"),
            ("`", "`"),
            ("“", "”"),
            ("「", "」"),
            ("*", "*"),
            ("_", "_"),
        }:
            v = v[1:-1]
        else:
            break
    v = v.strip().strip("`").strip()
    # unmatched leading quote (truncated output) or trailing one
    if v[:1] in "\"'“「" and v[-1:] not in "\"'”」":
        v = v[1:].strip()
    elif v[-1:] in "\"”」" and v[:1] not in "\"'“「":
        v = v[:-1].strip()
    if _is_placeholder(v):
        return None
    return v


# --------------------------------------------------------------------------
# steps 3 and 4: CoT and keywords

_NEG_PATTERNS = [
    r"\b(?:does|do|did|would|will|is|are)\s*(?:not|n't|nt)\s+"
    r"(?:(?:seem|appear|really|currently|actually|yet|likely|look\s+like)\s+(?:to\s+)?){0,2}"
    r"(?:need|require|want)(?:s|ing)?\b(?:\s+(?:any|some|immediate|proactive)?\s*"
    r"(?:help|assistance|support|intervention))?",
    r"\bno\s+(?:need\s+(?:for\s+(?:any\s+)?)?(?:help|assistance|intervention|to\s+"
    r"(?:help|assist|intervene|interrupt))|(?:help|assistance|intervention)\s+(?:is\s+)?"
    r"(?:needed|required|necessary))",
    r"\b(?:help|assistance|intervention)\s+(?:is\s*n't|is\s+not|not|isn't)\s+"
    r"(?:needed|necessary|required|warranted)",
    r"\b(?:not|never|n't)\s+(?:in\s+)?need(?:ed|s)?\s+(?:of\s+)?(?:any\s+)?"
    r"(?:help|assistance)",
    r"\b(?:should|must|would|shall)\s*(?:not|n't)\s+(?:\w+\s+)?"
    r"(?:interrupt|intervene|help|assist|disturb|offer|step\s+in)",
    r"\b(?:do\s*n't|do\s+not|better\s+not)\s+(?:interrupt|intervene|disturb)",
    r"\bwould\s*(?:not|n't)\s+benefit",
    r"\bnot\s+(?:a\s+good|the\s+right)\s+(?:time|moment)",
    r"\bunlikely\s+to\s+(?:need|benefit|want)",
    r"\bno\s+assistance\b",
    r"\bno\s+help\b",
    r"不需要|无需|不用|没有必要|不必|不应该?打扰|不要打扰",
]
_POS_PATTERNS = [
    r"\b(?:needs?|needed|requires?|required|wants?)\s+(?:some\s+|any\s+|immediate\s+|"
    r"proactive\s+|urgent\s+|additional\s+)?(?:help|assistance|support|intervention)\b",
    r"\bwould\s+(?:likely\s+|greatly\s+|really\s+)?benefit\s+from\s+(?:\w+\s+){0,2}?"
    r"(?:help|assistance|support|intervention|an?\s+(?:ai\s+)?assistant)",
    r"\bcould\s+use\s+(?:some\s+)?(?:help|assistance)",
    r"\bshould\s+(?:proactively\s+)?(?:offer|provide)\s+(?:\w+\s+)?(?:help|assistance|support)",
    r"\bshould\s+(?:proactively\s+)?(?:intervene|assist|step\s+in)\b",
    r"需要帮助|需要协助|需要",
]
_NEG_RE = re.compile("|".join(f"(?:{p})" for p in _NEG_PATTERNS), re.I)
_POS_RE = re.compile("|".join(f"(?:{p})" for p in _POS_PATTERNS), re.I)
_BARE_RE = re.compile(r"(?<![\w'-])(yes|no)(?![\w'-])", re.I)

_QUESTION_CUE = re.compile(
    r"\b(?:whether|if|unclear|unsure|not\s+sure|wonder(?:ing)?)\b"
    r"|\b(?:does|do|did|is|should|would|could|can)\s+(?:the\s+)?(?:user|they|he|she|you|i|we)\b"
    r"|是否|判断",
    re.I,
)
# a negation governing the phrase: "I don't think the user needs help", but not
# "the user is not progressing and needs help"
_NEGATION_CUE = re.compile(
    r"(?:\bnot\b|n't|\bnever\b|\bno\s+longer\b|\bhardly\b)"
    r"(?:\s+(?!(?:and|but|so|because|yet|or|therefore|thus)\b)[\w']+){0,4}\s*$"
    r"|(?:不|没)[^，,。；;]{0,4}$",
    re.I,
)
_CLAUSE_BREAK = re.compile(r"[.!?;:\n。！？；：]")

_MASKS = re.compile(
    _TEMPLATE_ECHO.pattern
    + r"|<[^<>\n]{1,200}>"
    + r"|\b(?:needs?[\s_-]*(?:help|assistance)|need[\s_-]*assist)\s*[*_]*\s*[:：=?？]"
    + r"|(?:是否)?需要(?:帮助|协助)\s*[:：?？]"
    + r"|\bstep\s*\d\s*\([^)\n]{0,40}\)"
    + r"|\bsay\s+yes\s+if\b[^\n]{0,200}?\botherwise,?\s+(?:say\s+)?no\b",
    re.I,
)


def _mask(text: str) -> str:
    return _MASKS.sub(lambda m: " " * len(m.group(0)), text)


def _clause_before(text: str, start: int, width: int = 60) -> str:
    left = text[max(0, start - width) : start]
    parts = _CLAUSE_BREAK.split(left)
    return parts[-1] if parts else left


def _is_question(text: str, end: int) -> bool:
    """True when the sentence containing ``end`` ends with a question mark."""
    rest = text[end : end + 120]
    m = re.search(r"[.!?\n。！？]", rest)
    return bool(m and m.group(0) in "?？")


def _standalone(text: str, start: int, end: int) -> bool:
    before = text[max(0, start - 8) : start].rstrip(" \t*_\"'`[(")
    after = text[end : end + 8].lstrip(" \t*_\"'`])")
    if not before or before[-1] in ".:!?;,—–-\n：。，！？；":
        return True
    return not after or after[0] in ".,!;:)\n。，！；：—–-"


def _keyword_hits(text: str) -> list[tuple[int, bool]]:
    """(position, decision) of every decisive phrase, negatives claiming their span
    first so that a positive inside a negative never counts."""
    masked = _mask(text)
    taken: list[tuple[int, int]] = []
    hits: list[tuple[int, bool]] = []

    def free(s: int, e: int) -> bool:
        return all(e <= a or s >= b for a, b in taken)

    for m in _NEG_RE.finditer(masked):
        if m.end() > m.start():
            taken.append((m.start(), m.end()))
            hits.append((m.start(), False))
    for m in _POS_RE.finditer(masked):
        s, e = m.start(), m.end()
        if e <= s or not free(s, e):
            continue
        taken.append((s, e))
        clause = _clause_before(masked, s)
        if _QUESTION_CUE.search(clause) or _is_question(masked, e):
            continue
        hits.append((s, not _NEGATION_CUE.search(clause)))
    for m in _BARE_RE.finditer(masked):
        s, e = m.start(), m.end()
        if not free(s, e) or not _standalone(masked, s, e):
            continue
        if masked[e : e + 4].lstrip(" *_\"'").startswith(("?", "？")):
            continue  # "Yes?" is not an answer
        hits.append((s, m.group(1).lower() == "yes"))
    return hits


def _keyword_decision(text: str) -> bool | None:
    hits = _keyword_hits(text)
    if not hits:
        return None
    return max(hits)[1]


_STEP3 = re.compile(
    r"^[\s>#*_\-]*(?:step\s*3|第三步|步骤\s*3)\b[*_]*(?:\s*[(（][^)）\n]{0,40}[)）])?[*_]*\s*[:：.\-–—]?",
    re.I | re.M,
)
_STEP_END = re.compile(r"^[\s>#*_\-]*(?:step\s*4|第四步|步骤\s*4|need\s*help|需要帮助|final\s+answer)", re.I | re.M)
_STEP4 = re.compile(
    r"^[\s>#*_\-]*(?:step\s*4|第四步|步骤\s*4)\b[*_]*(?:\s*[(（][^)）\n]{0,40}[)）])?[*_]*\s*[:：.\-–—]?",
    re.I | re.M,
)
_STEP4_END = re.compile(
    r"^[\s>#*_\-]*(?:step\s*\d|need\s*help|needs?\s+assistance|需要帮助|final\s+answer|query"
    r"|intention)",
    re.I | re.M,
)


def _section(text: str, head: re.Pattern[str], end: re.Pattern[str]) -> list[str]:
    out = []
    for m in head.finditer(text):
        e = end.search(text, m.end())
        out.append(text[m.end() : e.start() if e else len(text)])
    return out


def _cot_step3(text: str) -> bool | None:
    for body in reversed(_section(text, _STEP3, _STEP_END)):
        first = _clean_line(body.strip().split("\n", 1)[0]) if body.strip() else ""
        v = _yes_no_value(first, allow_phrases=False) if first else None
        if v is None:
            v = _keyword_decision(body)
        if v is not None:
            return v
    return None


# --------------------------------------------------------------------------
# intentions


@lru_cache(maxsize=8)
def _category_patterns(taxonomy: Taxonomy) -> tuple[tuple[str, re.Pattern[str]], ...]:
    pats = []
    for name in taxonomy.names:
        words = [w for w in re.split(r"\s+", name.replace("&", " & ")) if w]
        parts = []
        for w in words:
            if w == "&":
                parts.append(r"(?:&|and)")
            else:
                parts.append(r"\s*&\s*".join(re.escape(p) for p in w.split("&")))
        body = r"[\s_-]*".join(parts)
        single = len([w for w in words if w != "&"]) == 1 and "&" not in name
        if single:  # one-word names must be capitalised to count as a label
            first = re.escape(name[0].upper())
            body = first + re.escape(name[1:])
            pats.append((name, re.compile(rf"(?<![\w-]){body}(?![\w-])")))
        else:
            pats.append((name, re.compile(rf"(?<![\w-]){body}(?![\w-])", re.I)))
    return tuple(pats)


def _last_category(text: str, taxonomy: Taxonomy) -> str | None:
    best: tuple[int, int, str] | None = None
    for name, pat in _category_patterns(taxonomy):
        for m in pat.finditer(text):
            key = (m.start(), m.end() - m.start(), name)
            if best is None or key[:2] > best[:2]:
                best = key
    return best[2] if best else None


def _canonical(value: str | None, taxonomy: Taxonomy) -> str | None:
    if not value or _is_placeholder(value.strip(_VALUE_STRIP)):
        return None
    return taxonomy.canonical(value)


# --------------------------------------------------------------------------
# the cascade


def _parse(text: str, taxonomy: Taxonomy) -> ParsedAnswer:
    text = when_echo().mask(_prepare(text))
    if not text.strip():
        return UNPARSED

    needs: bool | None = None
    method = "unparsed"
    intention: str | None = None
    query: str | None = None
    intent_labelled = False

    # 1. JSON
    fields = _parse_json(text)
    if "help" in fields:
        needs, method = fields["help"], "json"
    if fields.get("intention") is not None and not _is_placeholder(fields["intention"]):
        intent_labelled = True
        intention = _canonical(fields["intention"], taxonomy)
    if fields.get("query") is not None:
        query = _clean_query(fields["query"])

    # 2. explicit lines (the last one wins)
    explicit, line_intent_seen, line_intent, line_query = _labelled_lines(_lines(text), taxonomy)
    if needs is None and explicit is not None:
        needs, method = explicit, "explicit"
    if not intent_labelled and line_intent_seen:
        intent_labelled = True
        intention = line_intent
    if query is None:
        query = line_query

    # 3. CoT step 3
    if needs is None:
        v = _cot_step3(text)
        if v is not None:
            needs, method = v, "cot_step3"

    # 4. keywords
    if needs is None:
        v = _keyword_decision(text)
        if v is not None:
            needs, method = v, "keyword"

    if not intent_labelled:
        intention = _unlabelled_intention(text, taxonomy)

    return ParsedAnswer(needs, intention, query, method if needs is not None else "unparsed")


def _labelled_lines(lines: list[str], taxonomy: Taxonomy) -> tuple[bool | None, bool, str | None, str | None]:
    """Step 2 of the cascade, the explicit lines (the last one of each label wins):
    ``(help decision, whether an intention line was seen, its category, the query)``."""
    explicit: bool | None = None
    line_intent: str | None = None
    line_intent_seen = False
    line_query: str | None = None
    for i, line in enumerate(lines):
        if not line:
            continue
        m = _HELP_LABEL.match(line) or _ANSWER_LABEL.match(line)
        if m:
            val = m.group(1)
            if val.strip(" *_`\"'"):
                v = _yes_no_value(val)
            else:  # "Need help:" with the answer on the next line
                nxt = next((x for x in lines[i + 1 : i + 3] if x.strip()), "")
                v = _yes_no_value(nxt[:40], allow_phrases=False)
            if v is not None:
                explicit = v
            continue
        m = _INTENT_LABEL.match(line)
        if m:
            val = m.group(1)
            if not _is_placeholder(val.strip(_VALUE_STRIP)) and val.strip(_VALUE_STRIP):
                line_intent_seen = True
                c = taxonomy.canonical(val)
                if c is not None:
                    line_intent = c
            continue
        m = _QUERY_LABEL.match(line)
        if m:
            val = m.group(1)
            if not val.strip(" *_`\"'"):  # query on the next non-empty line
                nxt = next((x for x in lines[i + 1 : i + 4] if x.strip("`").strip()), "")
                if nxt and not (_HELP_LABEL.match(nxt) or _INTENT_LABEL.match(nxt)):
                    val = nxt
            q = _clean_query(val)
            if q is not None:
                line_query = q
    return explicit, line_intent_seen, line_intent, line_query


def _unlabelled_intention(text: str, taxonomy: Taxonomy) -> str | None:
    """The intention of an answer without an intention label: a category in its CoT Step 4
    section (the last section first), else the last bare category name outside masked spans."""
    for body in reversed(_section(text, _STEP4, _STEP4_END)):
        c = _last_category(body, taxonomy) or taxonomy.canonical(
            _clean_line(body.strip().split("\n", 1)[0]) if body.strip() else None
        )
        if c is not None:
            return c
    return _last_category(_mask(text), taxonomy)


_THINK_END = re.compile(r"</think\s*>", re.I)
_THINK_TAGS = re.compile(r"</?think\s*>", re.I)


def parse_answer(text: str, taxonomy: Taxonomy | None = None) -> ParsedAnswer:
    """Parse a When/How-to-Assist answer with the ProAgentBench cascade
    (``json`` > ``explicit`` > ``cot_step3`` > ``keyword`` > ``unparsed``).

    Args:
        text: the model's raw answer (``None`` or non-text gives ``unparsed``).
        taxonomy: categories to recognise (default: the bundled 16).

    Returns:
        The decision, the canonical intention, the query and the cascade step
        that produced the decision. Never raises (a raising step gives
        :data:`PARSER_ERROR`, counted and logged, see the module docstring).
    """
    try:
        if text is None:
            return UNPARSED
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        if not isinstance(text, str):
            text = str(text)
        tax = taxonomy if taxonomy is not None else load_taxonomy()
        parts = _THINK_END.split(text)
        if len(parts) > 1 and parts[-1].strip():
            tail = _parse(parts[-1], tax)
            if tail.needs_help is not None:
                return tail
        return _parse(_THINK_TAGS.sub("\n", text), tax)
    except Exception as exc:  # noqa: BLE001 - a parser must never take down an evaluation run, nor hide a bug
        return _parser_error(exc)


def to_prediction(
    sample_id: str, text: str, parsed: ParsedAnswer | None = None, confidence: float | None = None
) -> Prediction:
    """Build the :class:`~proagent.records.Prediction` for one sample (parses
    ``text`` when ``parsed`` is not given)."""
    if parsed is None:
        parsed = parse_answer(text)
    return Prediction(
        sample_id=sample_id,
        needs_help=parsed.needs_help,
        intention=parsed.intention,
        query=parsed.query,
        confidence=confidence,
        parse_method=parsed.method,
        raw=text if isinstance(text, str) else ("" if text is None else str(text)),
    )
