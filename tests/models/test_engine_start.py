"""Issue 24, eval start-up: the llama.cpp child started before the imports is the one the model
uses; the cache_reuse model argument; only the references of the samples run are embedded."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from proagent.models import _llama_process
from proagent.models.engine import cache_reuse_tokens, engine_args, prestart_local

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "proactivebench"


def test_cache_reuse_values() -> None:
    assert [cache_reuse_tokens(v) for v in ("0", "off", "false", 0, "true", "on", "16")] == [0, 0, 0, 0, 64, 64, 16]
    for bad in ("-1", "lots"):
        with pytest.raises(ValueError, match="cache_reuse"):
            cache_reuse_tokens(bad)


def test_prestart_starts_nothing_for_other_models_or_bad_arguments(monkeypatch) -> None:
    started = []
    monkeypatch.setattr(_llama_process, "prestart", lambda *a: started.append(a))
    assert not prestart_local("openai/gpt-4o-mini", {})
    assert not prestart_local("local/smollm2-135m", {"temperature": "1"})  # not a local model argument
    assert not prestart_local("local//no/such/model.gguf", {})  # reported later by the model's creation
    assert not prestart_local("local/smollm2-135m", {"n_ctx": "12"})  # too small: the same
    assert started == []


@pytest.mark.slow
def test_the_prestarted_child_is_the_one_the_model_uses(monkeypatch) -> None:
    """The real SmolLM2: prestart_local spawns the child at once; LocalLlamaAPI with the same
    arguments takes it over (no second spawn) and answers through it; other arguments spawn anew."""
    pytest.importorskip("xllamacpp")
    try:
        gguf, n_ctx, threads, reuse = engine_args("smollm2-135m", "1024", "1")
    except FileNotFoundError:
        pytest.skip("SmolLM2 GGUF not installed")
    from inspect_ai.model import ChatMessageUser, GenerateConfig

    from proagent.models import local

    spawned = []
    real_spawn = _llama_process._spawn

    def spawn(config):  # noqa: ANN001, ANN202
        spawned.append(dict(config))
        return real_spawn(config)

    monkeypatch.setattr(_llama_process, "_spawn", spawn)
    monkeypatch.setattr(local, "_ENGINES", {})
    monkeypatch.setattr(_llama_process, "_STARTED", {})  # a child another test of this worker prestarted is not ours
    assert prestart_local("local/smollm2-135m", {"n_ctx": "1024", "n_threads": "1"})
    assert len(spawned) == 1 and spawned[0]["n_ctx"] == 1024 and spawned[0]["n_cache_reuse"] == 0
    assert prestart_local("local/smollm2-135m", {"n_ctx": "1024", "n_threads": "1"})  # a second call: nothing new
    assert len(spawned) == 1
    api = local.LocalLlamaAPI("smollm2-135m", n_ctx=1024, n_threads=1, answer_cache="false")
    assert len(spawned) == 1 and not _llama_process._STARTED  # taken over
    out, _ = asyncio.run(api.generate([ChatMessageUser(content="Say hi.")], [], "none", GenerateConfig(max_tokens=4)))
    assert out.usage.output_tokens >= 1
    chunked = local.LocalLlamaAPI("smollm2-135m", n_ctx=1024, n_threads=1, cache_reuse="32")
    assert len(spawned) == 2 and spawned[1]["n_cache_reuse"] == 32
    assert chunked._answers is None  # its answers depend on the previous prompt: never cached
    api._engine.server.close()
    chunked._engine.server.close()


def test_unused_prestarted_child_is_killed_at_exit(monkeypatch) -> None:
    class Proc:
        killed = waited = False

        def kill(self) -> None:
            self.killed = True

        def wait(self) -> int:
            self.waited = True
            return -9

    class Conn:
        closed = False

        def close(self) -> None:
            self.closed = True

    proc, a, b = Proc(), Conn(), Conn()
    monkeypatch.setattr(_llama_process, "_STARTED", {"k": (proc, a, b)})
    _llama_process._kill_all()
    assert proc.killed and proc.waited and a.closed and b.closed and not _llama_process._STARTED


def test_eval_embeds_only_the_references_of_the_samples_run(monkeypatch) -> None:
    if not DATA.is_dir():
        pytest.skip("no ../shared/data/proactivebench")
    from proagent.bench import tasks

    seen: list[list[str]] = []
    monkeypatch.setattr(
        tasks, "embed_references", lambda refs: seen.append(sorted({r for rs in refs for r in rs})) or 0
    )
    whole = tasks.assist(data=str(DATA))
    assert len(seen) == 1 and len(seen[0]) > 10  # built alone: the whole split's references
    with tasks.references_embedded_later():
        task = tasks.assist(data=str(DATA))
    assert len(seen) == 1  # none while building
    tasks.embed_task_references(task, 2)
    first_two = sorted(
        {r for s in list(task.dataset)[:2] if s.target == "Yes" for r in s.metadata["reference_queries"]}
    )
    assert seen[1] == first_two and len(seen[1]) < len(seen[0])
    tasks.embed_task_references(task)
    assert seen[2] == seen[0] and len(whole.dataset) == len(task.dataset)
