"""Suite-wide guards: no test reaches the network.

* Every socket connection to an internet address (AF_INET/AF_INET6) other than
  loopback fails at once, so a test that would download something fails loudly
  instead of hanging or passing only online.
* Local models answer every request themselves: the answer cache
  (``PROAGENT_ANSWER_CACHE``, proagent.models._answers) is off unless a test sets it.
* inspect's mockllm fills in token usage with tiktoken, whose table is
  downloaded on first use; tokens are counted as characters / 4 instead.

Two rules for running under pytest-xdist (``scripts/test.sh`` hands whole files to two
workers, ``--dist loadfile --no-loadscope-reorder``):

* the test files that hold a ``slow`` test (a real model, a scripted desktop, a
  training run: the longest files) run first, each file's tests together and in their
  own order, so the longest files start at once and the short ones fill in beside them
  instead of one long file running alone at the end;
* each test holds a shared lock while it runs; a stretch that measures real time
  (``solo.alone()``, or a test marked ``solo``) takes it exclusively, so the other
  worker waits meanwhile (:mod:`solo`).
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

import pytest

import solo


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


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    """Each test (setup, call, teardown) holds :mod:`solo`'s shared lock, or its exclusive one
    when marked ``solo``: under xdist a ``solo`` test runs while the other worker waits."""
    with solo.shared():
        if item.get_closest_marker("solo"):
            with solo.alone():
                return (yield)
        return (yield)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Files holding a ``slow`` test first (a stable sort: files and tests keep their order)."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)
