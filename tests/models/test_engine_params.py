"""Issue 42 item 5: the llama.cpp child's thread pool does not spin between tokens (``poll`` 0), so
on a laptop's few shared cores a waiting worker leaves its core to the thread it waits for."""

from __future__ import annotations

import pytest

from proagent.models import _llama_process


def test_the_child_does_not_poll_between_tokens() -> None:
    pytest.importorskip("xllamacpp")
    params = _llama_process._params({"path": "model.gguf", "n_ctx": 2048, "n_threads": 2})
    assert _llama_process.POLL == 0
    assert (params.cpuparams.poll, params.cpuparams_batch.poll) == (0, 0)  # llama.cpp's own default is 50
    assert (params.cpuparams.n_threads, params.cpuparams_batch.n_threads, params.n_ctx) == (2, 2, 2048)


def test_a_config_may_name_its_polling_level() -> None:
    pytest.importorskip("xllamacpp")
    params = _llama_process._params({"path": "model.gguf", "n_ctx": 2048, "n_threads": 1, "poll": 50})
    assert (params.cpuparams.poll, params.cpuparams_batch.poll) == (50, 50)
