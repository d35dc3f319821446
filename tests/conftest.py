"""Suite-wide guards: no test reaches the network.

* Every socket connection to an internet address (AF_INET/AF_INET6) other than
  loopback fails at once, so a test that would download something fails loudly
  instead of hanging or passing only online.
* Local models answer every request themselves: the answer cache
  (``PROAGENT_ANSWER_CACHE``, proagent.models._answers) is off unless a test sets it.
* inspect's mockllm fills in token usage with tiktoken, whose table is
  downloaded on first use; tokens are counted as characters / 4 instead.
"""

from __future__ import annotations

import ipaddress
import socket

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
    monkeypatch.setenv("PROAGENT_ANSWER_CACHE", "off")
    from inspect_ai.model._providers.mockllm import MockLLM

    async def count(self, text) -> int:  # noqa: ANN001
        return max(1, len(str(text)) // 4)

    monkeypatch.setattr(MockLLM, "count_text_tokens", count)
