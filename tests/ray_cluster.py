"""Shared parts of the Ray tests and the scale-out benchmark.

* :func:`assist_reply`: a When/How-to-Assist answer that depends on the prompt (so
  predictions differ between samples and a lost or swapped sample changes the results);
* :class:`LatencyEndpoint`: a :class:`~mock_openai.MockOpenAI` that answers after a fixed
  latency, one request at a time (one model replica), like a model server of one slot;
* :func:`local_cluster`: a real multi-node Ray cluster on this machine
  (``ray.cluster_utils.Cluster``, nodes of one CPU, bound to 127.0.0.1, temp files under a
  short ``/tmp`` folder), always shut down;
* :func:`proagent_cmd`: the ``proagent`` command as a child process (a driver that a test can kill).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mock_openai import MockOpenAI, last_user_text

__all__ = ["MODEL", "LatencyEndpoint", "assist_reply", "local_cluster", "proagent_cmd", "ray_env"]

MODEL = "openai-api/mock/assistant"
"""The model name the tests give (inspect's OpenAI-compatible provider; the URL from ``--model-base-url``)."""


def assist_reply(body: dict[str, Any]) -> str:
    """Yes or No and an intention chosen by a checksum of the prompt's last user message."""
    text = last_user_text(body)
    h = zlib.crc32(text.encode())
    need = "Yes" if h % 3 else "No"
    intention = ("Code Programming", "Information Retrieval", "Knowledge Q&A")[h % 5 % 3]
    return f"Need help: {need}\nIntention: {intention}\nQuery: help with step {h % 97}"


class LatencyEndpoint(MockOpenAI):
    """An OpenAI-compatible endpoint answering :func:`assist_reply` after ``latency`` seconds, one
    request at a time (requests queue, as at a model server with one slot)."""

    def __init__(self, latency: float = 0.0) -> None:
        lock = threading.Lock()

        def reply(body: dict[str, Any]) -> str:
            with lock:
                time.sleep(latency)
                return assist_reply(body)

        super().__init__(reply)


def ray_env() -> dict[str, str]:
    """The environment of a Ray node or driver started by a test: the key of the mock provider,
    this checkout on the path, Ray's files under a short folder (AF_UNIX path limit)."""
    src = str(Path(__file__).resolve().parents[1] / "src")
    return {
        "MOCK_API_KEY": "test-key",
        "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    }


@contextmanager
def local_cluster(nodes: int = 2) -> Iterator[Any]:
    """A Ray cluster of ``nodes`` nodes with one CPU each on 127.0.0.1; yields the
    ``ray.cluster_utils.Cluster`` (``.address`` for ``--ray``). Shut down on exit."""
    from ray.cluster_utils import Cluster

    tmp = tempfile.mkdtemp(prefix="pa-ray-", dir="/tmp")
    saved = {k: os.environ.get(k) for k in ("RAY_TMPDIR", *ray_env())}
    os.environ.update(ray_env())
    os.environ["RAY_TMPDIR"] = tmp
    cluster = None
    try:
        args = {"num_cpus": 1, "include_dashboard": False, "node_ip_address": "127.0.0.1"}
        # no log monitor (Ray's process copying worker output to drivers, ~1 CPU s a minute): every driver
        # here connects with log_to_driver=False, each shard writes its own log
        cluster = Cluster(initialize_head=True, head_node_args={**args, "include_log_monitor": False})
        for _ in range(nodes - 1):
            cluster.add_node(**args)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        if cluster is not None:
            cluster.shutdown()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(tmp, ignore_errors=True)


def proagent_cmd(*args: str, cwd: Path, **kw: Any) -> subprocess.Popen:
    """``python -m proagent.cli ARGS`` as a child process (stdout and stderr captured, text)."""
    env = {**kw.pop("env", os.environ), **ray_env()}
    return subprocess.Popen(
        [sys.executable, "-m", "proagent.cli", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **kw,
    )
