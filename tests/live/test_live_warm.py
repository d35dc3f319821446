"""HowModel.warm (issue 24): the How model is loaded and reads the system prompt at start, so the
first offer evaluates only its user message."""

from __future__ import annotations

import asyncio
from datetime import datetime

import pytest
from system import require_module

require_module("inspect_ai")

from proagent.agent.prompting import system_prompt  # noqa: E402
from proagent.live._agent import HowModel  # noqa: E402
from proagent.records import Event, Sample  # noqa: E402


class _Recording:
    """An inspect-like model: records each call's messages and config; answers a fixed How."""

    def __init__(self) -> None:
        self.calls: list[tuple[list, object]] = []

    async def generate(self, messages, config):  # noqa: ANN001, ANN201
        from inspect_ai.model import ModelOutput

        await asyncio.sleep(0)
        self.calls.append((messages, config))
        return ModelOutput.from_content(
            "mock", "Need help: Yes\nIntention: Code Programming\nQuery: How do I fix this?"
        )


def _sample() -> Sample:
    t = datetime(2026, 1, 5, 9, 0, 0)
    ev = Event(id="1", user="u", start=t, end=t, app_name="Code", window_title="main.py")
    return Sample(
        id="s1",
        user="u",
        time=t,
        label=None,
        split="test",
        kind="labelled",
        context=(),
        current=ev,
        window_seconds=300.0,
    )


def test_warm_reads_the_system_prompt_once_with_a_one_token_answer() -> None:
    model = _Recording()
    how = HowModel(model)
    assert how.warm() >= 0
    ((messages, config),) = model.calls
    assert messages[0].content == system_prompt() and config.max_tokens == 1
    pred = how(_sample())
    assert pred.query == "How do I fix this?"
    messages2, config2 = model.calls[1]
    assert messages2[0].content == messages[0].content  # the same prefix the warm call left in the KV cache
    assert config2.max_tokens == 96 and config2.temperature == 0.0
    how.close()


@pytest.mark.slow
def test_after_warm_a_local_model_reuses_the_system_prompt() -> None:
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser

    how = HowModel("local/smollm2-135m", {"n_threads": "1"})
    how.warm()
    out = asyncio.run_coroutine_threadsafe(
        how._model.generate(  # on the How model's own loop thread
            [ChatMessageSystem(content=system_prompt()), ChatMessageUser(content="Need help now?")], config=how._config
        ),
        how._loop,
    ).result()
    assert (
        out.usage is not None and (out.usage.input_tokens_cache_read or 0) > 200
    )  # the system prompt came from the cache
    how.close()
