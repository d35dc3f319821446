"""Semantic similarity of How to Assist: embedding cosine of predicted and real queries.

Embeddings: the project's one embedder, :func:`proagent.embedding.embed`
(multilingual-e5-small, ``query:`` prefix, unit norm). The score of a
prediction is its best cosine against the references (ProactiveBench: the five
candidate tasks; ProAgentBench: the real first user query), ProAgentBench
section 5.3.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..embedding import embed

__all__ = ["best_similarity"]


def best_similarity(predicted: str, references: Sequence[str]) -> float:
    """Highest cosine (-1..1) between ``predicted`` and any reference.

    Raises:
        ValueError: no references.
    """
    refs = [r for r in references if r.strip()]
    if not refs:
        raise ValueError("best_similarity needs at least one reference")
    if not predicted.strip():
        return 0.0
    return float(np.max(embed(refs) @ embed([predicted])[0]))
