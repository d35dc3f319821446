"""The one disk cache (issue 38 item 3): ``diskcache`` under the answers, embeddings and memory
caches, bounded by a size limit, private (0600 files in 0700 folders), never failing a run."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
import pytest

from proagent.cache import DEFAULT_SIZE_LIMIT, DiskCache, size_limit


def test_values_come_back_across_instances_and_the_folder_is_private(tmp_path: Path) -> None:
    root = tmp_path / "a" / "b" / "cache"
    c = DiskCache(root)
    assert c.get("k") is None and "k" not in c
    c.set("k", b"\x00value")
    assert c.get("k") == b"\x00value" and "k" in c
    assert DiskCache(root).get("k") == b"\x00value"  # another process's view: the same database
    for p in [root, root.parent, root.parent.parent]:
        assert stat.S_IMODE(p.stat().st_mode) == 0o700, p
    files = [p for p in root.rglob("*") if p.is_file()]
    assert {p.name for p in files} <= {"cache.db", "cache.db-wal", "cache.db-shm"}
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files)


def test_the_size_limit_evicts_the_oldest_entries(tmp_path: Path) -> None:
    c = DiskCache(tmp_path / "c", limit=400_000)
    blob = os.urandom(20_000)
    for i in range(100):  # 2 MB into a 0.4 MB cache
        c.set(f"k{i}", blob)
    assert c.get("k99") == blob and c.get("k0") is None
    assert c.volume() < 1_000_000
    c.set("huge", os.urandom(500_000))  # larger than the whole limit: not kept
    assert c.get("huge") is None


def test_the_limit_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROAGENT_CACHE_SIZE_MB", raising=False)
    assert size_limit() == DEFAULT_SIZE_LIMIT == 1 << 30
    monkeypatch.setenv("PROAGENT_CACHE_SIZE_MB", "64")
    assert size_limit() == 64 << 20
    monkeypatch.setenv("PROAGENT_CACHE_SIZE_MB", "lots")
    assert size_limit() == DEFAULT_SIZE_LIMIT


def test_an_unusable_folder_only_misses(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    c = DiskCache(tmp_path / "file" / "cache")  # a file stands where the folder would go
    c.set("k", b"v")
    assert c.get("k") is None and "k" not in c


def test_memory_and_embedding_caches_use_it(tmp_path: Path) -> None:
    from proagent.agent.decider import EmbeddingCache
    from proagent.agent.memory import MemoryCache

    m = MemoryCache(tmp_path / "memory")
    m.put_array("rag", "u1", np.arange(6, dtype=np.float32).reshape(2, 3))
    m.put_json("kg", "u1", {"a": [1, 2]})
    m2 = MemoryCache(tmp_path / "memory")
    assert np.array_equal(m2.get_array("rag", "u1"), np.arange(6, dtype=np.float32).reshape(2, 3))
    assert m2.get_json("kg", "u1") == {"a": [1, 2]} and m2.get_json("kg", "u2") is None
    assert (m2.hits, m2.misses) == (2, 1)
    e = EmbeddingCache(tmp_path / "emb", embed=lambda texts: np.ones((len(texts), 384), np.float32) / np.sqrt(384))
    e.get(["hello"])
    assert (tmp_path / "emb" / "cache.db").is_file() and not list((tmp_path / "emb").glob("*/*.npy"))
