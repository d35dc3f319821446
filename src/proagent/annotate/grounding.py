"""Nothing invented: a model's free text (summary, description, rationale) is stored only
when what it says stands on the screen or in the event's record.

A query or reply is a quote and is checked as one
(:func:`proagent.annotate.conversation.on_screen`). A summary or a description is a paraphrase,
so it is checked word by word (issue 34: a weak model stored "the phone number for the mortgage
payment calculation ... 123-456-7890" for a mail-and-chat event whose screens showed neither):

* **every number** in the text (a token holding a digit: ``123-456-7890``, ``3.11``, ``14:00``)
  stands in the sources, as written (case and spacing ignored);
* **most content words** do: of the text's words that are neither function words nor the
  vocabulary of narrating a screen (``user``, ``asked``, ``chat``, ``assistant``, ``explains``,
  :data:`NARRATION`), at least :data:`GROUND_SHARE` stand in the sources after a light suffix
  strip (``sorting`` ~ ``sort``, ``dictionaries`` ~ ``dictionary``); Chinese text is compared by
  character pairs.

The sources are the OCR text of the event's sampled screenshots, the event's application, window
title and address, the LLM platforms' names and the intention categories' names (a summary may
say "asked ChatGPT for code programming help" without any of it on screen). A text that fails is
not stored: the summary falls back to the first pass's (``app: title``), a description or
rationale is left empty. A text with no content word (``The user chatted with an AI``) says
nothing that could be invented and passes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

__all__ = ["GROUND_SHARE", "NARRATION", "Grounding", "grounded"]

GROUND_SHARE = 0.6
"""Share of a text's content words that must stand in the sources (a paraphrase of the screen
names most of its things; an invented summary names things the screen does not)."""

NARRATION = frozenset(
    """
a an the and or but nor of to in on at by for with from into onto about as is are was were be been being has have
had do does did this that these those it its it's their they them he she his her him you your we our i me my
not no yes can could would should will may might must shall also some any all each both more most other such
there here then than so too very just only even while after before during between over under via per out up
how what which where when why who whom whose if because since though although until upon within without
one two three several many few first last new same own
user users person someone people asked asks ask asking question questions query queries chat chats chatting
chatted conversation conversations assistant assistants ai llm llms model models bot reply replies replied
answer answers answered answering response responses responded explains explained explain explaining help helps
helped helping using uses used use screen screens screenshot screenshots page pages window windows browser
opened open opens reading reads read viewing views viewed view typed types type typing request requests
requested shows shown show showing displays displayed display describes described describe describing event
events interacted interaction interacting interacts visible wants wanted want trying tries tried try looking
looks look working works worked provides provided provide suggests suggested suggest gives gave give given
information details detail text content message messages session task tasks topic discuss discusses discussed
discussing regarding related specific various seems appears likely possibly find finds found seek seeks seeking
search searched searching tool tools application app desktop tab tabs online web website site summary
summarize summarized description activity activities way ways get gets got make makes made let lets
""".split()
)
"""Words that narrate a screen rather than say what is on it (never counted as content)."""
_NARRATION_ZH = frozenset(
    {
        "用户",
        "询问",
        "助手",
        "问题",
        "回答",
        "对话",
        "请求",
        "关于",
        "如何",
        "帮助",
        "使用",
        "提问",
        "回复",
        "屏幕",
        "页面",
        "窗口",
        "一个",
        "这个",
        "进行",
        "正在",
        "查看",
        "内容",
    }
)
_TOKEN = re.compile(r"[0-9A-Za-z\u00c0-\u024f][\w'.:/@+-]*[0-9A-Za-z\u00c0-\u024f]|[0-9A-Za-z]|[\u3400-\u9fff]+")
_CJK = re.compile(r"[\u3400-\u9fff]")
_SUFFIXES = (
    ("ations", ""),
    ("ation", ""),
    ("ings", ""),
    ("ing", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("ers", ""),
    ("ed", ""),
    ("es", ""),
    ("er", ""),
    ("ly", ""),
    ("s", ""),
    ("e", ""),
)


def _stem(word: str) -> str:
    """A light suffix strip (``sorting``, ``sorted``, ``sorts`` -> ``sort``); not a linguistic stemmer."""
    for suf, rep in _SUFFIXES:
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            return word[: len(word) - len(suf)] + rep
    return word


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


class Grounding:
    """The sources one event's texts are checked against.

    Args:
        sources: Texts that stand on the event's screens or in its record (OCR text, application,
            window title, address); the platforms' and categories' names are added.
    """

    def __init__(self, sources: Iterable[str]) -> None:
        text = _norm("\n".join(s for s in sources if s) + "\n" + _vocabulary())
        self._text = text
        self._squeezed = text.replace(" ", "")
        words = set()
        for m in _TOKEN.finditer(text):
            tok = m.group(0)
            if not _CJK.match(tok):
                for w in re.split(r"[^\w]+", tok):
                    if w:
                        words.add(_stem(w))
        self._words = frozenset(words)

    def check(self, text: str, share: float = GROUND_SHARE) -> bool:
        """True when ``text`` says nothing that the sources lack (see the module docstring)."""
        found = total = 0
        for m in _TOKEN.finditer(_norm(text)):
            tok = m.group(0).strip(".:/'-")
            if not tok:
                continue
            if any(c.isdigit() for c in tok):
                if tok not in self._text and tok.replace(" ", "") not in self._squeezed:
                    return False  # a number the screen does not show is invented
                continue
            if _CJK.match(tok):
                pairs = [tok[i : i + 2] for i in range(len(tok) - 1)] or [tok]
                for p in pairs:
                    if p in _NARRATION_ZH:
                        continue
                    total += 1
                    found += p in self._squeezed
                continue
            for w in re.split(r"[^\w]+", tok):
                if len(w) < 3 or w in NARRATION:
                    continue
                total += 1
                found += _stem(w) in self._words
        return total == 0 or found >= share * total


@lru_cache(maxsize=1)
def _vocabulary() -> str:
    """The LLM platforms' names and the intention categories' names (a summary may use them)."""
    from ..taxonomy import load_taxonomy
    from .platforms import load_platforms

    names = [n for p in load_platforms() for n in (p.name, *p.apps, *p.titles)]
    return "\n".join(names + [c.name for c in load_taxonomy().categories])


def grounded(text: str, sources: Sequence[str], share: float = GROUND_SHARE) -> bool:
    """``Grounding(sources).check(text, share)``: True when ``text`` invents nothing."""
    return Grounding(sources).check(text, share)
