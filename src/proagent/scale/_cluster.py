"""Connecting to a Ray cluster (``--ray ADDRESS``) and the one error when Ray is missing."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import UsageError

__all__ = ["LOCAL", "connect", "require_ray", "worker_count"]

LOCAL = "local"
"""``--ray local``: start a private Ray cluster on this machine for the run (Ray's
``address="local"``), stopped when the command ends."""

LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's switch (read when ray is imported) that, set to ``0``, makes every Ray process of this machine
give 127.0.0.1 as its address: a cluster of this machine only (``--ray local``, ``--ray 127.0.0.1:PORT``),
nothing bound to other interfaces."""

CONNECT_SECONDS = 5.0
"""How long ``--ray HOST:PORT`` waits for the head node's port to accept a TCP connection before
Ray is asked to connect (Ray itself retries an unreachable GCS for minutes with no output)."""

_SHORT_TMP = "/tmp/ray"
"""Ray's default temp folder. Ray keeps AF_UNIX sockets there, whose paths may be at most
107 bytes (Linux ``sun_path``), so a private cluster is never started under a long ``$TMPDIR``."""


def require_ray(option: str = "--ray") -> Any:
    """The ``ray`` module.

    Raises:
        UsageError: Ray is not installed (the ``ray`` extra: ``pip install 'proagent[ray]'``).
    """
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise UsageError(option, "needs Ray: install the ray extra (pip install 'proagent[ray]')")
    import ray

    return ray


@contextmanager
def connect(address: str, option: str = "--ray") -> Iterator[Any]:
    """Connect this process (the driver) to the Ray cluster at ``address`` for the block.

    ``address``: ``auto`` (the cluster ``ray start`` runs on this machine, or
    ``RAY_ADDRESS``), ``local`` (:data:`LOCAL`: a new private cluster of this
    machine's CPUs, bound to 127.0.0.1) or ``HOST:PORT`` / ``ray://HOST:PORT`` of a
    head node. A cluster this block started is shut down at its end; a running one is
    only disconnected from. Worker output is not copied to the terminal (each shard
    writes its own log).

    Raises:
        UsageError: Ray is not installed, or no cluster answers at ``address``.
    """
    host = address.removeprefix("ray://").rsplit(":", 1)[0]
    loopback = address == LOCAL or host in ("127.0.0.1", "localhost")
    if loopback:  # Ray's own switch for a cluster of this machine only: it then names itself 127.0.0.1
        os.environ.setdefault(LOOPBACK_ENV, "0")
    ray = require_ray(option)
    if ray.is_initialized():  # already connected (a test, or a caller's own cluster)
        yield ray
        return
    kw: dict[str, Any] = {"log_to_driver": False, "logging_level": "WARNING", "configure_logging": True}
    if address == LOCAL:
        kw.update(address="local", include_dashboard=False, _node_ip_address="127.0.0.1")
        if len(tempfile.gettempdir()) + 60 > 107 and "RAY_TMPDIR" not in os.environ:
            Path(_SHORT_TMP).mkdir(mode=0o700, exist_ok=True)
            kw["_temp_dir"] = _SHORT_TMP
    else:
        _check_reachable(address, option)
        kw["address"] = address
    try:
        ray.init(**kw)
    except (ConnectionError, RuntimeError, ValueError) as e:
        msg = " ".join(str(e).split())[:300]
        raise UsageError(option, f"cannot connect to a Ray cluster at {address} ({msg})") from None
    try:
        yield ray
    finally:
        ray.shutdown()


def _check_reachable(address: str, option: str) -> None:
    """Refuse a ``HOST:PORT`` / ``ray://HOST:PORT`` address whose port takes no TCP connection
    within :data:`CONNECT_SECONDS` (``auto`` and ``RAY_ADDRESS`` are Ray's to resolve).

    Raises:
        UsageError: nothing answers there, or the address has no port.
    """
    import socket

    if address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(option, f"{address!r}: expected local, auto, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_SECONDS).close()
    except OSError as e:
        raise UsageError(
            option,
            f"cannot connect to a Ray cluster at {address}: nothing answers there within "
            f"{CONNECT_SECONDS:g} s ({e.__class__.__name__})",
        ) from None


def worker_count() -> int:
    """Shard runners the connected cluster holds at once: its CPUs (one runner per CPU), at least 1."""
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1)))
