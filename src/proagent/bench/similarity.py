"""Semantic similarity of How to Assist: embedding cosine of predicted and real queries.

Embeddings: the project's one embedder, :func:`proagent.embedding.embed`
(multilingual-e5-small, ``query:`` prefix, unit norm). The score of a
prediction is its best cosine against the references (ProactiveBench: the five
candidate tasks; ProAgentBench: the real first user query), ProAgentBench
section 5.3.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..embedding import embed, remember

__all__ = ["best_similarity", "embed_references"]


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


def embed_references(references: Iterable[Sequence[str]]) -> int:
    """Embed every distinct non-blank reference once, in batches, into the embedder's cache.

    Called once per dataset when a task is built (``bench.tasks.assist``), so the
    scorer's :func:`best_similarity` finds the references' vectors cached and
    embeds only the predicted query: embedding is CPU work that, done per sample
    while samples run concurrently, holds the GIL and delays every other sample
    (benchmarks/harness_overhead.py). The vectors are the same as embedding each
    sample's references on its own (e5 embeds every text independently). They go
    through the decider's disk cache (:class:`~proagent.agent.decider.EmbeddingCache`,
    by text hash), so a dataset's references are embedded once per machine, not once
    per run (74 texts, 6.2 s, for ProactiveBench's dev test split on the loaded 2-core machine). Returns
    the number of distinct references; beyond the in-process cache's 8192 texts the
    oldest are embedded again when scored.
    """
    from ..agent.decider import EmbeddingCache

    texts = sorted({r for refs in references for r in refs if r.strip()})
    remember(texts, EmbeddingCache().get(texts))
    return len(texts)
