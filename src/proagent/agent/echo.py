"""Find the prompt's own wording echoed in a model's answer.

Small models often answer with (part of) the instruction they were given:
SmolLM2-135M's whole answer at one moment was "Decide whether the user needs
help... If yes, write the question..." (issue 21). Read as an answer, the
instruction's words look like a decision ("If yes", "needs help"), so the
parsers mask echoed instruction text first and read only what is left: an
answer that is nothing but the echo is *unparsed* (counted in
``unparsed_rate``), never a Yes.

An echo is a run of at least :data:`ECHO_WORDS` consecutive words that also
stand consecutively in one of the prompt templates (case, punctuation and
markdown ignored; line ends and ``$placeholders`` are breaks). Conditional phrases of the
instruction ("if yes", "if so", "if not", "otherwise no") are masked too: they
state a rule, not an answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from ..prompt_files import stage_prompts

__all__ = ["ECHO_WORDS", "TemplateEcho", "when_echo"]

ECHO_WORDS = 5
"""Shortest run of template words counted as an echo (five: short enough for
"Decide whether the user needs help...", long enough that an answer's own
phrases such as "the user needs help" (four words) are not taken for one)."""

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
_PLACEHOLDER = re.compile(r"\$\{?\w+\}?")
_CONDITIONAL = re.compile(r"\bif\s+(?:yes|no|so|not)\b|\botherwise,?\s+(?:say\s+)?(?:yes|no)\b", re.I)


def _words(text: str) -> list[str]:
    return [m.group(0).casefold() for m in _WORD.finditer(text)]


class TemplateEcho:
    """Echo finder for a set of template texts.

    Args:
        templates: Prompt texts; ``$name`` placeholders split them (text filled
            in at run time is the model's input, not the instruction).
        n: Shortest echoed run, words (default :data:`ECHO_WORDS`).
    """

    def __init__(self, templates: Iterable[str], n: int = ECHO_WORDS) -> None:
        self.n = int(n)
        grams: set[tuple[str, ...]] = set()
        for text in templates:
            for part in _PLACEHOLDER.split(text.replace("\n", "$")):  # runs end at a line end
                w = _words(part)
                grams.update(tuple(w[i : i + self.n]) for i in range(len(w) - self.n + 1))
        self._grams = frozenset(grams)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans ``(start, end)`` of ``text`` that echo a template, merged, in order."""
        found = [(m.start(), m.end(), m.group(0).casefold()) for m in _WORD.finditer(text or "")]
        spans: list[tuple[int, int]] = []
        for i in range(len(found) - self.n + 1):
            if tuple(w for _, _, w in found[i : i + self.n]) in self._grams:
                s, e = found[i][0], found[i + self.n - 1][1]
                if spans and s <= spans[-1][1]:
                    spans[-1] = (spans[-1][0], max(e, spans[-1][1]))
                else:
                    spans.append((s, e))
        for m in _CONDITIONAL.finditer(text or ""):
            spans.append((m.start(), m.end()))
        spans.sort()
        merged: list[tuple[int, int]] = []
        for s, e in spans:
            if merged and s <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
            else:
                merged.append((s, e))
        return merged

    def mask(self, text: str) -> str:
        """``text`` with every echoed span replaced by spaces (same length, so positions hold)."""
        out = list(text or "")
        for s, e in self.spans(text):
            out[s:e] = " " * (e - s)
        return "".join(out)

    def is_echo(self, value: str, share: float = 0.6) -> bool:
        """True when at least ``share`` of the words of ``value`` are echoed template text
        (a field value that is the template's placeholder text, not an answer)."""
        words = _words(value or "")
        if not words:
            return False
        masked = _words(self.mask(value))
        return (len(words) - len(masked)) / len(words) >= share


@lru_cache(maxsize=1)
def when_echo() -> TemplateEcho:
    """The echo finder of the When/How-to-Assist prompts (``proagent/agent/prompts/*.txt``)."""
    return TemplateEcho(stage_prompts("agent"))
