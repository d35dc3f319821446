"""RAG memory, derived fields, the prompt block and the disk cache."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pytest

from proagent.agent.memory import MemoryCache, MemoryConfig, MemoryQuery, MemoryRecord, RagMemory, derive_fields
from proagent.agent.memory import rag as rag_mod
from proagent.agent.memory.rag import flat_index, search
from proagent.agent.prompting import memory_block, with_memory

T0 = datetime(2025, 9, 15, 9, 0)


def _records(n=8, user="u"):
    return [
        MemoryRecord(
            f"{user}:{i}",
            user,
            T0 + timedelta(minutes=i),
            T0 + timedelta(minutes=i),
            "VS Code",
            f"file{i}.py",
            f"edits file{i}",
            needs_help=i % 2 == 0,
        )
        for i in range(n)
    ]


def _fake_embed(texts):
    out = []
    for t in texts:
        v = np.zeros(16, np.float32)
        for w in t.lower().split():
            v[hash(w) % 16] += 1.0
        out.append(v / (np.linalg.norm(v) or 1.0))
    return np.stack(out)


def test_search_respects_id_range():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(50, 8)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    idx = flat_index(x)
    hits = search(idx, x[40], 5)
    assert hits[0][0] == 40 and hits[0][1] == pytest.approx(1.0, abs=1e-5)
    limited = search(idx, x[40], 5, upto=10)
    assert len(limited) == 5 and all(i < 10 for i, _ in limited)
    exact = sorted(range(10), key=lambda i: -float(x[i] @ x[40]))[:5]
    assert [i for i, _ in limited] == exact
    assert search(idx, x[0], 5, upto=0) == []


def test_rag_top5_strict_and_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(rag_mod, "embed_texts", _fake_embed)
    cache = MemoryCache(tmp_path)
    mem = RagMemory({"u": _records()}, MemoryConfig(), cache).build()
    q = MemoryQuery("u", T0 + timedelta(minutes=6), "VS Code", "file3.py", "edits file3")
    items = mem.lookup(q)
    assert len(items) == 5 and all(it.known_at < q.time for it in items)
    assert "u:3" in {it.id for it in items}
    assert [it.known_at for it in items] == sorted(it.known_at for it in items)  # oldest first
    assert "needed help" in items[0].text
    # the cache holds the embeddings: a rebuild does not embed again
    monkeypatch.setattr(
        rag_mod,
        "embed_texts",
        lambda texts: (_ for _ in ()).throw(AssertionError("re-embedded")) if len(texts) > 1 else _fake_embed(texts),
    )
    mem2 = RagMemory({"u": _records()}, MemoryConfig(), cache).build()
    assert cache.hits == 1
    assert [it.id for it in mem2.lookup(q)] == [it.id for it in items]


def test_derive_fields_from_sentences():
    assert derive_fields("The user types 'CheckName.rb' in Visual Studio Code.") == (
        "Visual Studio Code",
        "CheckName.rb",
    )
    assert derive_fields("The user switches back to 'Code.exe' and edits 'isPalindrome.java'.") == (
        "Visual Studio Code",
        "isPalindrome.java",
    )
    assert derive_fields("The user searches on Google for 'How to split a string in ruby?'.") == (
        "Web browser",
        "How to split a string in ruby?",
    )
    assert derive_fields("The user scrolls through a Stack Overflow discussion.") == ("Web browser", "Stack Overflow")
    assert derive_fields("The user paused.") == ("", "")


def test_memory_block_goes_before_history():
    block = memory_block("similar past moments", ["one", "two"])
    assert block.splitlines()[0].startswith("Long-term memory (similar past moments")
    assert "- one\n- two" in block
    prompt = with_memory("Recent activity (last 5 min, oldest first):\n...", block)
    assert prompt.index("Long-term memory") < prompt.index("Recent activity")
    assert "nothing remembered" in memory_block("x", [])


@pytest.fixture
def one_thread():
    """HNSW builds on one thread are reproducible."""
    import faiss

    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    yield
    faiss.omp_set_num_threads(before)


def _clustered(n, d=32, seed=2):
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(20, d))
    x = c[rng.integers(0, 20, n)] + 0.3 * rng.normal(size=(n, d))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def test_hnsw_index_agrees_with_exact_search(one_thread):
    import faiss

    from proagent.agent.memory.rag import vector_index

    x = _clustered(3000)
    hnsw, flat = vector_index(x, exact_below=500), vector_index(x)
    assert isinstance(hnsw, faiss.IndexHNSW) and isinstance(flat, faiss.IndexFlatIP)
    recall = []
    for qi in np.random.default_rng(5).choice(3000, 40, replace=False):
        for upto in (None, 2900, 1500, 600):
            got = search(hnsw, x[qi], 5, upto=upto, exact_below=500)
            want = search(flat, x[qi], 5, upto=upto)
            assert len(got) == 5 and all(i < (upto or 3000) for i, _ in got)
            recall.append(len({i for i, _ in got} & {i for i, _ in want}) / 5)
    assert np.mean(recall) >= 0.95
    # few eligible ids: the exact answer, from the index's own flat storage
    assert search(hnsw, x[7], 5, upto=400, exact_below=500) == search(flat, x[7], 5, upto=400)
    assert search(hnsw, x[7], 5, upto=0, exact_below=500) == []


def test_hnsw_never_returns_the_future_when_the_neighbours_are_there(one_thread):
    """Every near neighbour of the query is at or after t: the search finds past
    records only, the exact ones."""
    from proagent.agent.memory.rag import vector_index

    rng = np.random.default_rng(3)
    past = _clustered(1000, seed=4)
    q = rng.normal(size=32).astype(np.float32)
    q /= np.linalg.norm(q)
    future = q + 0.05 * rng.normal(size=(2000, 32)).astype(np.float32)
    x = np.vstack([past, future / np.linalg.norm(future, axis=1, keepdims=True)]).astype(np.float32)
    hnsw, flat = vector_index(x, exact_below=500), vector_index(x)
    assert all(i >= 1000 for i, _ in search(hnsw, q, 5, exact_below=500))  # unrestricted: all in the future
    for upto in (1000, 1001, 1500):  # HNSW path (>= 500 eligible), most of the graph's neighbours excluded
        got = search(hnsw, q, 5, upto=upto, exact_below=500)
        assert len(got) == 5 and all(i < upto for i, _ in got)
        if upto == 1000:
            assert {i for i, _ in got} == {i for i, _ in search(flat, q, 5, upto=upto)}


def test_rag_memory_above_the_exact_size_uses_hnsw_and_caches_it(tmp_path, monkeypatch, one_thread):
    import faiss

    monkeypatch.setattr(rag_mod, "embed_texts", _fake_embed)
    monkeypatch.setattr(rag_mod, "EXACT_BELOW", 200)
    recs = _records(600)
    cache = MemoryCache(tmp_path)
    mem = RagMemory({"u": recs}, MemoryConfig(), cache).build()
    assert isinstance(mem.state["u"], faiss.IndexHNSW)
    queries = [
        MemoryQuery("u", T0 + timedelta(minutes=m), "VS Code", "file450.py", "edits file450")
        for m in (3, 150, 300, 451, 599, 10_000)
    ]
    first = []
    for q in queries:
        items = mem.lookup(q)
        assert len(items) == min(5, sum(r.known_at < q.time for r in recs))
        assert all(it.known_at < q.time for it in items)
        first.append([it.id for it in items])
    assert mem.blocked == 0  # the search itself returned nothing at or after t
    mem2 = RagMemory({"u": recs}, MemoryConfig(), cache).build()
    assert cache.hits == 2  # the vectors and the HNSW graph
    assert [[it.id for it in mem2.lookup(q)] for q in queries] == first
