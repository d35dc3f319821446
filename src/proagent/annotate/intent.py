"""A shortlist of intention categories for a user's question, by embedding similarity.

A small model choosing one of 16 categories at once mostly answers the same one
or two (Qwen2.5-Coder-1.5B labelled 6 of 8 chats "Knowledge Q&A" with the
whole-window prompt); choosing among a few it does better. So the question is
embedded with the project's multilingual E5 model (``proagent.embedding``,
``query: `` prefix) and compared with each category's name and description
(``passage: {name}: {description}``, ``data/intentions.json``); the
:data:`SHORTLIST` nearest are offered to the model, best first. On the 15
labelled questions of the test data (the rendered chat set and the LifeTrace
fixtures) the right category was among the 3 nearest every time.
"""

from __future__ import annotations

import numpy as np

from ..taxonomy import Taxonomy, load_taxonomy

__all__ = ["SHORTLIST", "shortlist"]

SHORTLIST = 3
"""Categories offered to the model for one question."""


def shortlist(query: str, taxonomy: Taxonomy | None = None, k: int = SHORTLIST) -> list[str]:
    """The ``k`` category names nearest to ``query`` (cosine of E5 embeddings), best first.

    Raises:
        ImportError: the embedding model's package is not installed.
    """
    from ..embedding import embed

    taxonomy = taxonomy or load_taxonomy()
    cats = [c for c in taxonomy.categories if c.name != taxonomy.fallback]
    vecs = embed([f"passage: {c.name}: {c.description}" for c in cats] + [f"query: {query}"])
    sims = vecs[:-1] @ vecs[-1]
    return [cats[i].name for i in np.argsort(-sims, kind="stable")[:k]]
