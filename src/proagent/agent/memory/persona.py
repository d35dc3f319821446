"""Cluster personas, following PersonaX (Shi et al. 2025) as ProAgentBench uses it.

Per user, the training-period records are split into LLM-use moments and the
rest (ProactiveBench: moments that needed help and the rest; the split is then
derived) and each group is clustered apart:

1. L2-normalised e5 embeddings of the record documents;
2. Ward linkage (``scipy.cluster.hierarchy``), cut at distance 0.7, at most 15
   clusters (cut by ``maxclust`` when the threshold gives more);
3. prototypical-diverse sampling: a budget of ceil(0.6 * n) records, spread over
   the clusters smallest first (each gets min(size, remaining budget / clusters
   left); leftovers go to the largest clusters), and within a cluster a greedy
   pick maximising w_p / (1 + ||x - centre||) + w_d * D(S + x) / |S + x|, where D
   is the sum of pairwise Euclidean distances, w_p = alpha^-10, w_d = 1 - w_p,
   alpha = 1.06;
4. one persona of 100-120 tokens per cluster, written by the evaluated model
   (inspect ``get_model().generate``, temperature 0) from the selected records,
   cached on disk under the records, the configuration and the model name.

At inference the top 5 personas by cosine between the moment's embedding and
the cluster centroids are shown; a persona is eligible only when every record
of its cluster was known strictly before t.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
from dataclasses import dataclass

import numpy as np

from ._base import Memory, MemoryItem
from .rag import embed_texts, render_record
from .records import MemoryQuery, MemoryRecord

__all__ = [
    "PersonaMemory",
    "allocate",
    "persona_prompt",
    "personax_select",
    "select_prototypical_diverse",
    "trim_persona",
    "ward_clusters",
]


def _cut_k(z: np.ndarray, n: int, k: int) -> np.ndarray:
    """Flat labels after the first n - k merges of linkage ``z`` (exactly k
    clusters, also when merge heights tie, where ``maxclust`` gives fewer)."""
    parent = list(range(2 * n - 1))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for step in range(n - k):
        a, b = int(z[step, 0]), int(z[step, 1])
        parent[find(a)] = n + step
        parent[find(b)] = n + step
    return np.array([find(i) for i in range(n)])


def ward_clusters(x: np.ndarray, threshold: float = 0.7, max_clusters: int = 15) -> np.ndarray:
    """Cluster labels 0..k-1 of L2-normalised rows of ``x`` by Ward linkage cut at
    ``threshold`` (at most ``max_clusters``). Labels are ordered by first member."""
    from scipy.cluster.hierarchy import fcluster, linkage

    n = len(x)
    if n == 0:
        return np.zeros(0, dtype=int)
    if n == 1:
        return np.zeros(1, dtype=int)
    x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    z = linkage(x.astype(np.float64), method="ward")
    raw = fcluster(z, t=threshold, criterion="distance")
    if len(set(raw.tolist())) > max_clusters:
        raw = _cut_k(z, n, max_clusters)
    order: dict[int, int] = {}
    for lab in raw.tolist():
        order.setdefault(int(lab), len(order))
    return np.array([order[int(lab)] for lab in raw.tolist()], dtype=int)


def allocate(sizes: list[int], budget: int) -> list[int]:
    """Spread ``budget`` picks over clusters of ``sizes`` (PersonaX): smallest
    first, each gets min(size, remaining // clusters left); what remains goes one
    each to the largest clusters. The budget is at least one per cluster."""
    k = len(sizes)
    if k == 0:
        return []
    budget = max(budget, k)
    order = sorted(range(k), key=lambda i: (sizes[i], i))
    alloc = [0] * k
    left = budget
    for j, i in enumerate(order):
        give = min(sizes[i], left // (k - j))
        alloc[i] = give
        left -= give
    for i in reversed(order):
        if left <= 0:
            break
        alloc[i] += 1
        left -= 1
    return alloc


def select_prototypical_diverse(points: np.ndarray, n: int, alpha: float = 1.06) -> list[int]:
    """Greedy prototypical-diverse selection of ``n`` row indices of ``points``.

    Each step adds the unselected point x maximising
    ``w_p / (1 + ||x - c||) + w_d * D(S + x) / |S + x|`` with c the mean of all
    points, D the sum of pairwise Euclidean distances, w_p = alpha^-10 and
    w_d = 1 - w_p. Ties go to the lower index. O(n * m) after the distance matrix."""
    pts = np.asarray(points, dtype=np.float64)
    m = len(pts)
    n = min(n, m)
    if n <= 0:
        return []
    w_p = alpha**-10
    w_d = 1.0 - w_p
    centre = pts.mean(axis=0)
    proto = w_p / (1.0 + np.linalg.norm(pts - centre, axis=1))
    sq = np.einsum("ij,ij->i", pts, pts)
    dist = np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2.0 * pts @ pts.T, 0.0))
    np.fill_diagonal(dist, 0.0)
    to_chosen = np.zeros(m)  # sum of distances from each point to the chosen set
    taken = np.zeros(m, dtype=bool)
    chosen: list[int] = []
    inner = 0.0  # sum of pairwise distances within the chosen set
    for k in range(n):
        score = proto + w_d * (inner + to_chosen) / (k + 1)
        score[taken] = -np.inf
        best = int(np.argmax(score))
        inner += to_chosen[best]
        to_chosen += dist[best]
        taken[best] = True
        chosen.append(best)
    return chosen


def personax_select(x: np.ndarray, labels: np.ndarray, ratio: float = 0.6, alpha: float = 1.06) -> dict[int, list[int]]:
    """Selected row indices per cluster label: budget ceil(ratio * n) spread by
    :func:`allocate`, picked by :func:`select_prototypical_diverse`."""
    ks = sorted(set(int(v) for v in labels))
    members = {k: [i for i, v in enumerate(labels) if int(v) == k] for k in ks}
    alloc = allocate([len(members[k]) for k in ks], math.ceil(len(labels) * ratio))
    out = {}
    for k, a in zip(ks, alloc):
        idx = members[k]
        out[k] = [idx[j] for j in select_prototypical_diverse(x[idx], a, alpha)]
    return out


@dataclass
class _Cluster:
    id: str
    group: str
    members: list[int]
    selected: list[int]
    centroid: np.ndarray
    text: str = ""


_GROUPS = {
    "llm": "moments when they turned to an AI assistant",
    "other": "their other computer activity",
    "help": "moments when they needed help",
    "nohelp": "moments when they did not need help",
}


def persona_prompt(records: list[MemoryRecord], group: str, max_tokens: int) -> str:
    """The instruction that asks the model for one cluster's persona."""
    lines = "\n".join(f"{i + 1}. {render_record(r)}" for i, r in enumerate(records))
    return (
        f"Below are {len(records)} records of one computer user, all from one recurring kind of "
        f"{_GROUPS[group]}.\n{lines}\n\n"
        f"Write this user's persona for this kind of activity in {max_tokens - 20} to {max_tokens} tokens "
        "(about 80 words), as one plain paragraph in the third person: what they work on, which applications "
        "they use, and when and why they turn to an AI assistant. Write only the paragraph."
    )


def trim_persona(text: str) -> str:
    """A persona answer as one paragraph, without the sentence a token budget broke off."""
    text = " ".join(text.split())
    if text and text[-1] not in ".!?。" and "." in text:
        text = text[: text.rfind(".") + 1]  # cut the sentence the token budget broke off
    return text


class PersonaMemory(Memory):
    """Top-k cluster personas (PersonaX) by cosine to the current moment."""

    name = "persona"
    source = "personas of this user written from earlier activity"

    def _build_user(self, user: str, records: list[MemoryRecord]) -> dict:
        key = self.key(user)
        vecs = self.cache.get_array("persona", key)
        if vecs is None or vecs.shape[0] != len(records):
            vecs = embed_texts([r.document() for r in records]) if records else np.zeros((0, 384), np.float32)
            self.cache.put_array("persona", key, vecs)
        c = self.config
        derived = any("is_llm" in r.derived for r in records)
        groups = {
            ("help" if derived else "llm"): [i for i, r in enumerate(records) if r.is_llm],
            ("nohelp" if derived else "other"): [i for i, r in enumerate(records) if not r.is_llm],
        }
        clusters: list[_Cluster] = []
        for group, idx in groups.items():
            if not idx:
                continue
            x = vecs[idx]
            labels = ward_clusters(x, c.persona_threshold, c.persona_max_clusters)
            picks = personax_select(
                x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12),
                labels,
                c.persona_budget,
                c.persona_alpha,
            )
            for k, sel in picks.items():
                members = [idx[i] for i, v in enumerate(labels) if int(v) == k]
                cen = vecs[members].mean(axis=0)
                cen = cen / (np.linalg.norm(cen) or 1.0)
                clusters.append(_Cluster(f"{user}:persona:{group}:{k}", group, members, [idx[i] for i in sel], cen))
        return {"key": key, "clusters": clusters, "ready": False, "errors": []}

    def prompts(self, user: str) -> list[str]:
        """The persona-writing prompts of a user's clusters (for inspection and tests)."""
        st = self.state[user]
        recs = self.records[user]
        return [
            persona_prompt([recs[i] for i in sorted(cl.selected)], cl.group, self.config.persona_max_tokens)
            for cl in st["clusters"]
        ]

    async def prepare(self, user: str, model=None) -> None:  # noqa: ANN001
        """Write (or load) the personas of ``user`` with the evaluated model."""
        st = self.state.get(user)
        if st is None or st["ready"]:
            return
        lock = st.setdefault("lock", asyncio.Lock())
        async with lock:
            if st["ready"]:
                return
            from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

            model = model or get_model()
            name = str(model)
            mkey = f"{st['key']}-{hashlib.sha256(name.encode()).hexdigest()[:12]}"
            cached = self.cache.get_json("persona", mkey) or {}
            texts: dict[str, str] = dict(cached.get("personas", {}))
            for cl, prompt in zip(st["clusters"], self.prompts(user)):
                if cl.id not in texts:
                    try:
                        out = await model.generate(
                            [ChatMessageUser(content=prompt)],
                            config=GenerateConfig(temperature=0.0, max_tokens=self.config.persona_max_tokens),
                        )
                        texts[cl.id] = trim_persona(out.completion)
                    except Exception as e:  # noqa: BLE001  (a failed persona must not stop the run)
                        st["errors"].append(f"{cl.id}: {e}")
                        texts[cl.id] = ""
                cl.text = texts[cl.id]
            if not st["errors"]:
                self.cache.put_json("persona", mkey, {"model": name, "personas": texts})
            st["ready"] = True

    def _retrieve(self, query: MemoryQuery) -> list[MemoryItem]:
        st = self.state[query.user]
        recs = self.records[query.user]
        ok = [cl for cl in st["clusters"] if cl.text and all(recs[i].known_at < query.time for i in cl.members)]
        if not ok:
            return []
        q = embed_texts([query.document()])[0]
        scored = sorted(((float(cl.centroid @ q), cl) for cl in ok), key=lambda x: -x[0])[: self.config.top_k]
        pos = {cl.id: i for i, cl in enumerate(st["clusters"])}
        scored.sort(key=lambda x: pos[x[1].id])  # stable order across moments (prompt-prefix reuse)
        return [
            MemoryItem(
                cl.id,
                query.user,
                max(recs[i].known_at for i in cl.members),
                f"Persona ({_GROUPS[cl.group]}, {len(cl.members)} past moments): {cl.text}",
                s,
            )
            for s, cl in scored
        ]
