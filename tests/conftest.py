"""Suite-wide guards: no test reaches the network.

* Every socket connection to an internet address (AF_INET/AF_INET6) other than
  loopback fails at once, so a test that would download something fails loudly
  instead of hanging or passing only online.
* inspect's mockllm fills in token usage with tiktoken, whose table is
  downloaded on first use; tokens are counted as characters / 4 instead.
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

import pytest


def _is_loopback(host: object) -> bool:
    try:
        return ipaddress.ip_address(str(host)).is_loopback
    except ValueError:
        return str(host) == "localhost"


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    real_connect = socket.socket.connect

    def guarded(self, address, *a, **k):  # noqa: ANN001, ANN202
        if isinstance(address, tuple) and not _is_loopback(address[0]):
            raise OSError(f"test tried to reach the network: {address}")
        return real_connect(self, address, *a, **k)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    from inspect_ai.model._providers.mockllm import MockLLM

    async def count(self, text) -> int:  # noqa: ANN001
        return max(1, len(str(text)) // 4)

    monkeypatch.setattr(MockLLM, "count_text_tokens", count)


@pytest.fixture
def in_tmp_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A test that runs commands as a user would, in ``tmp_path``: it is the working folder
    (default log and output folders land there), proagent's disk caches of built memory and
    of embeddings are inside it, and the ``PROAGENT_EVAL_*`` defaults of the environment are
    unset. A test file takes it for every test with
    ``pytestmark = pytest.mark.usefixtures("in_tmp_path")``. Returns ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PROAGENT_MEMORY_CACHE", str(tmp_path / "memcache"))
    monkeypatch.setenv("PROAGENT_EMBEDDING_CACHE", str(tmp_path / "emb"))
    for var in ("PROAGENT_EVAL_MODEL", "PROAGENT_EVAL_DATA", "PROAGENT_EVAL_WINDOW", "PROAGENT_EVAL_LOG_DIR"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path
