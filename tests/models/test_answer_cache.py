"""Reuse across runs: the local models' answer cache and the disk-cached reference embeddings."""

from __future__ import annotations

import asyncio
import os
import stat

import numpy as np
import pytest

from proagent.models._answers import AnswerCache, answer_cache_root, cacheable, model_identity


def _request(text: str = "Is the sky blue?", **over) -> dict:
    return {
        "messages": [{"role": "system", "content": "Answer."}, {"role": "user", "content": text}],
        "max_tokens": 8,
        "temperature": 0.0,
        "cache_prompt": True,
        **over,
    }


def _result(text: str) -> dict:
    return {
        "choices": [{"message": {"content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2},
        "timings": {"prompt_n": 10, "cache_n": 0},
    }


def test_a_stored_answer_comes_back_only_for_the_same_model_and_request(tmp_path) -> None:
    cache = AnswerCache(tmp_path, "sha256:aa", n_ctx=2048, n_threads=1)
    req = _request()
    assert cache.get(req) is None
    cache.put(req, _result("Yes"))
    assert cache.get(dict(req))["choices"][0]["message"]["content"] == "Yes"
    # anything that can change the answer is a different key: prompt, budget, sampling, model, context
    for other in (
        _request("Is the sea blue?"),
        _request(max_tokens=9),
        _request(seed=3),
        _request(logprobs=True, top_logprobs=5),
        _request(cache_prompt=False),
    ):
        assert cache.get(other) is None, other
    for other_cache in (
        AnswerCache(tmp_path, "sha256:bb", 2048, 1),
        AnswerCache(tmp_path, "sha256:aa", 4096, 1),
        AnswerCache(tmp_path, "sha256:aa", 2048, 2),
    ):
        assert other_cache.get(req) is None
    assert (cache.hits, cache.misses) == (1, 6)


def test_private_files_unseeded_sampling_and_broken_entries(tmp_path) -> None:
    root = tmp_path / "answers"
    cache = AnswerCache(root, "sha256:aa", 2048, 1)
    cache.put(_request(), _result("No"))
    files = [p for p in root.rglob("*") if p.is_file()]
    assert files and all(stat.S_IMODE(os.stat(p).st_mode) == 0o600 for p in files), files  # cache.db and its WAL
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    # sampling without a seed is not deterministic: never stored, never answered
    hot = _request(temperature=0.7)
    assert not cacheable(hot) and cacheable(_request(temperature=0.7, seed=1))
    cache.put(hot, _result("maybe"))
    assert cache.get(hot) is None and len(cache._store._open()) == 1
    cache._store.set(cache.key(_request()), b"{not json")
    assert cache.get(_request()) is None  # unreadable: asked again, not an error


def test_root_from_the_environment(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("PROAGENT_ANSWER_CACHE", "off")
    assert answer_cache_root() is None
    monkeypatch.setenv("PROAGENT_ANSWER_CACHE", str(tmp_path))
    assert answer_cache_root() == tmp_path
    monkeypatch.delenv("PROAGENT_ANSWER_CACHE")
    assert answer_cache_root().parts[-3:] == (".cache", "proagent", "answers")


def test_model_identity_changes_with_the_file(tmp_path) -> None:
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF1")
    first = model_identity(f)
    assert model_identity(f, "abc") == "sha256:abc"
    f.write_bytes(b"GGUF22")
    assert model_identity(f) != first


@pytest.mark.slow
def test_local_model_answers_a_repeated_request_from_the_cache(monkeypatch, tmp_path) -> None:
    """The real SmolLM2 through LocalLlamaAPI: the second identical request never reaches llama.cpp."""
    pytest.importorskip("xllamacpp")
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig

    from proagent.models.local import LocalLlamaAPI

    try:
        monkeypatch.setenv("PROAGENT_ANSWER_CACHE", str(tmp_path))
        api = LocalLlamaAPI("smollm2-135m", n_ctx=1024, n_threads=1)
    except FileNotFoundError:
        pytest.skip("SmolLM2 GGUF not installed")
    msgs = [ChatMessageSystem(content="Reply in one word."), ChatMessageUser(content="Colour of grass?")]
    cfg = GenerateConfig(temperature=0.0, max_tokens=6)
    first, _ = asyncio.run(api.generate(msgs, [], "none", cfg))
    assert first.metadata["answer_cache"] == "miss"

    def refuse(request, ticket=None):  # noqa: ANN001, ANN202
        raise AssertionError("llama.cpp asked again")

    monkeypatch.setattr(api._engine, "chat", refuse)
    again, _ = asyncio.run(api.generate(msgs, [], "none", cfg))
    assert again.metadata["answer_cache"] == "hit"
    assert again.completion == first.completion and again.usage.output_tokens == first.usage.output_tokens
    with pytest.raises(AssertionError, match="asked again"):  # another prompt is not a hit
        asyncio.run(api.generate(msgs[:1] + [ChatMessageUser(content="Colour of snow?")], [], "none", cfg))
    off = LocalLlamaAPI("smollm2-135m", n_ctx=1024, n_threads=1, answer_cache="false")
    monkeypatch.setattr(off._engine, "chat", refuse)  # the same engine: off means asked every time
    with pytest.raises(AssertionError, match="asked again"):
        asyncio.run(off.generate(msgs, [], "none", cfg))


class _CountingE5:
    def __init__(self) -> None:
        self.calls: list[int] = []

    def query(self, texts):  # noqa: ANN001, ANN201
        self.calls.append(len(texts))
        rng = np.random.default_rng(len(texts))
        return rng.normal(size=(len(texts), 384)).astype(np.float32)


def test_reference_embeddings_are_computed_once_per_machine(monkeypatch, tmp_path) -> None:
    """embed_references goes through the disk cache: a second run (fresh process memory) embeds nothing,
    and the scorer's embed() finds the vectors in memory."""
    from proagent import embedding
    from proagent.bench.similarity import embed_references

    fake = _CountingE5()
    monkeypatch.setattr(embedding, "_model", lambda: fake)
    monkeypatch.setenv("PROAGENT_EMBEDDING_CACHE", str(tmp_path / "emb"))
    refs = [[f"task {i}", f"other task {i}", " "] for i in range(40)]
    embedding.clear_cache()
    assert embed_references(refs) == 80
    assert fake.calls == [32, 32, 16]  # the misses in batches, not one call per text
    first = embedding.embed(["task 3"])
    embedding.clear_cache()  # as a new process would start
    assert embed_references(refs) == 80
    assert fake.calls == [32, 32, 16]  # all from disk
    np.testing.assert_array_equal(embedding.embed(["task 3"]), first)
    assert fake.calls == [32, 32, 16]
    embedding.clear_cache()
