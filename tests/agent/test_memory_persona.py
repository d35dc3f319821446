"""PersonaX clustering and selection against hand-computed examples; persona
writing through an inspect model and its disk cache."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

import numpy as np
import pytest

from proagent.agent.memory import MemoryCache, MemoryConfig, MemoryQuery, MemoryRecord, PersonaMemory
from proagent.agent.memory import persona as persona_mod
from proagent.agent.memory.persona import allocate, personax_select, select_prototypical_diverse, ward_clusters


def test_weights_follow_alpha():
    assert 1.06**-10 == pytest.approx(0.5584, abs=1e-4)


def test_greedy_selection_hand_computed():
    # centre 3.25; w_p = 0.5584, w_d = 0.4416
    # step 1: no diversity yet, most prototypical = index 2 (x=2)
    # step 2: x=10 scores 0.0720 + 0.4416 * 8/2 = 1.838 (x=0: 0.573, x=1: 0.393)
    # step 3: x=0 scores 0.1314 + 0.4416 * (8+2+10)/3 = 3.075 > x=1: 0.1718 + 0.4416 * 18/3 = 2.821
    pts = np.array([[0.0], [1.0], [2.0], [10.0]])
    assert select_prototypical_diverse(pts, 1) == [2]
    assert select_prototypical_diverse(pts, 3) == [2, 3, 0]
    assert select_prototypical_diverse(pts, 9) == [2, 3, 0, 1]
    # a large alpha makes w_p tiny: pure diversity picks the far end first after the tie-break
    assert select_prototypical_diverse(pts, 2, alpha=100.0)[1] == 3


def test_allocation_hand_computed():
    assert allocate([5, 1, 3], 6) == [3, 1, 2]  # smallest first: 1 -> 1, 3 -> 2, 5 -> 3
    assert allocate([2, 2], 3) == [1, 2]
    assert allocate([4, 4, 4], 2) == [1, 1, 1]  # at least one per cluster
    assert allocate([], 3) == []


def test_personax_budget_ratio():
    x = np.eye(10)
    labels = np.array([0] * 5 + [1] * 3 + [2] * 2)
    sel = personax_select(x, labels, ratio=0.6, alpha=1.06)
    assert sum(len(v) for v in sel.values()) == 6  # ceil(10 * 0.6)
    assert [len(sel[k]) for k in (0, 1, 2)] == [2, 2, 2]
    assert all(set(v) <= {i for i, lab in enumerate(labels) if lab == k} for k, v in sel.items())


def test_ward_threshold_and_max_clusters():
    a = np.array([[1.0, 0.0], [0.99, 0.14], [0.0, 1.0], [0.14, 0.99]])
    assert ward_clusters(a, 0.7).tolist() == [0, 0, 1, 1]
    assert ward_clusters(a, 5.0).tolist() == [0, 0, 0, 0]
    many = np.eye(20)  # all pairwise distances sqrt(2) > 0.7: 20 clusters, capped at 15
    assert len(set(ward_clusters(many, 0.7, 15).tolist())) == 15
    assert ward_clusters(np.ones((1, 3))).tolist() == [0]


T0 = datetime(2025, 9, 15, 9, 0)


def _records(user="u"):
    out = []
    for i in range(8):
        t = T0 + timedelta(minutes=i)
        out.append(
            MemoryRecord(
                f"{user}:{i}",
                user,
                t,
                t,
                "VS Code" if i % 2 else "Chrome",
                f"title {i}",
                f"activity {i}",
                is_llm=i % 2 == 0,
                needs_help=None,
            )
        )
    return out


def _fake_embed(texts):
    rng = np.random.default_rng(0)
    base = {"Chrome": rng.normal(size=8), "VS Code": rng.normal(size=8)}
    v = np.stack([base["Chrome" if "Chrome" in t else "VS Code"] + 0.01 * i for i, t in enumerate(texts)])
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture
def fake_embed(monkeypatch):
    monkeypatch.setattr(persona_mod, "embed_texts", _fake_embed)


def test_persona_memory_written_once_and_cached(tmp_path, fake_embed, monkeypatch):
    from inspect_ai.model import ModelOutput, get_model

    cache = MemoryCache(tmp_path)
    mem = PersonaMemory({"u": _records()}, MemoryConfig(), cache).build()
    clusters = mem.state["u"]["clusters"]
    assert {c.group for c in clusters} == {"llm", "other"}  # LLM and non-LLM moments clustered apart
    assert all(len(c.selected) <= len(c.members) for c in clusters)
    assert sum(len(c.selected) for c in clusters) == 6  # ceil(0.6 * 4) per group of 4
    prompts = mem.prompts("u")
    assert all("100 to 120 tokens" in p for p in prompts)
    outs = [ModelOutput.from_content("mockllm/model", f"Persona number {i}. Cut here") for i in range(len(clusters))]
    asyncio.run(mem.prepare("u", model=get_model("mockllm/model", custom_outputs=outs)))
    assert [c.text for c in clusters] == [f"Persona number {i}." for i in range(len(clusters))]
    items = mem.lookup(MemoryQuery("u", T0 + timedelta(days=1), "Chrome", "x", "y"))
    assert len(items) == len(clusters) and all(it.text.startswith("Persona (") for it in items)
    # a persona whose cluster has a record at or after t is not shown
    assert mem.lookup(MemoryQuery("u", T0 + timedelta(minutes=3), "Chrome", "x", "y")) == []

    # second time: embeddings and personas come from the disk cache, the model is never called
    class Boom:
        def __str__(self):
            return "mockllm/model"

        async def generate(self, *a, **k):
            raise AssertionError("persona regenerated despite the cache")

    mem2 = PersonaMemory({"u": _records()}, MemoryConfig(), cache).build()
    asyncio.run(mem2.prepare("u", model=Boom()))
    assert [c.text for c in mem2.state["u"]["clusters"]] == [c.text for c in clusters]
    # another model name is another cache entry
    mem3 = PersonaMemory({"u": _records()}, MemoryConfig(), cache).build()
    other = get_model("mockllm/model", custom_outputs=[ModelOutput.from_content("mockllm/model", "Other.")] * 4)
    other_name = type("M", (), {"__str__": lambda s: "mockllm/other", "generate": other.generate})()
    asyncio.run(mem3.prepare("u", model=other_name))
    assert {c.text for c in mem3.state["u"]["clusters"]} == {"Other."}
