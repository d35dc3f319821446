"""The intention taxonomy of How to Assist (16 categories, ProAgentBench section 3).

Every prompt and metric reads the categories from one data file,
``proagent/data/intentions.json``; pass another file with the same shape to use
your own taxonomy.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

__all__ = ["Category", "Taxonomy", "load_taxonomy"]


@dataclass(frozen=True)
class Category:
    """One intention category."""

    name: str
    """Display name, e.g. ``Code Programming``."""
    description: str
    """One-line gloss shown in prompts."""
    share: float | None = None
    """Share of LLM events in the paper's data (0-1), when reported."""
    description_zh: str = ""
    """The gloss in Chinese ('' when the file gives none): questions written in Chinese are
    compared with it (:func:`proagent.annotate.intent.shortlist`)."""
    aliases: tuple[str, ...] = ()
    """Other names of the category, mostly in the languages the default model answers in
    (Qwen2.5 names categories in Chinese: ``数据分析`` is Data Analysis); :meth:`Taxonomy.canonical`
    maps them to :attr:`name`."""


_CJK = "\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff"
"""Kana and CJK ideographs: kept by :func:`_norm` (names written in Chinese or Japanese)."""


def _norm(text: str) -> str:
    return re.sub(rf"[^a-z0-9{_CJK}]+", " ", text.lower().replace("&", " and ")).strip()


def _contains(key: str, text: str) -> bool:
    """``key`` stands in ``text`` as whole words (Latin) or as a run of characters (CJK, where no
    space separates words: ``用户意图是数据分析``); a CJK key of under 3 characters (``翻译``,
    ``计算``: common words) only as the whole text, checked by the caller."""
    if re.search(rf"[{_CJK}]", key):
        return len(key) >= 3 and key in text
    return re.search(rf"\b{re.escape(key)}\b", text) is not None


@dataclass(frozen=True)
class Taxonomy:
    """An ordered set of intention categories with a fallback."""

    categories: tuple[Category, ...]
    """Categories in prompt order."""
    fallback: str
    """Name used when nothing else fits (``Uncategorized``)."""

    @property
    def names(self) -> tuple[str, ...]:
        """Category names in order."""
        return tuple(c.name for c in self.categories)

    def canonical(self, text: str | None) -> str | None:
        """Map free text to a category name (case, spacing, ``&``/``and`` and
        surrounding punctuation ignored; a name or alias contained in the text also
        matches, longest first; aliases such as ``数据分析`` name their category). Returns
        ``None`` when nothing matches."""
        if not text:
            return None
        t = _norm(text)
        if not t:
            return None
        by_norm = {_norm(a): c.name for c in reversed(self.categories) for a in c.aliases if _norm(a)}
        by_norm.update({_norm(n): n for n in self.names})  # a name wins over another's alias
        if t in by_norm:
            return by_norm[t]
        for key in sorted(by_norm, key=len, reverse=True):
            if _contains(key, t):
                return by_norm[key]
        return None

    def prompt_list(self) -> str:
        """Numbered list of ``name: description`` lines for prompts."""
        return "\n".join(f"{i}. {c.name}: {c.description}" for i, c in enumerate(self.categories, 1))


@lru_cache(maxsize=8)
def load_taxonomy(path: str | Path | None = None) -> Taxonomy:
    """Load a taxonomy file (default: the bundled 16 categories).

    Raises:
        ValueError: the file is not valid JSON or lacks ``categories``.
    """
    if path is None:
        text = resources.files("proagent").joinpath("data/intentions.json").read_text("utf-8")
        where = "bundled intentions.json"
    else:
        text = Path(path).read_text("utf-8")
        where = str(path)
    try:
        data = json.loads(text)
        cats = tuple(
            Category(
                c["name"],
                c.get("description", ""),
                c.get("share"),
                c.get("description_zh", ""),
                tuple(str(a) for a in c.get("aliases") or ()),
            )
            for c in data["categories"]
        )
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise ValueError(f"{where}: not a taxonomy file ({e})") from e
    if not cats:
        raise ValueError(f"{where}: no categories")
    fallback = data.get("fallback") or cats[-1].name
    return Taxonomy(cats, fallback)
