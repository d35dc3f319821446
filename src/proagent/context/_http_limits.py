"""The limits of ``proagent mcp --http`` (uvicorn): what keeps a flood of idle or slow local
connections from holding the server away from a valid client.

uvicorn alone holds a connection that never sends a request for ever (its keep-alive timer starts
only after a first response), and its ``limit_concurrency`` counts open connections, idle ones
included: 150 idle connections (no token needed to open one) answered every request 503, a
slowloris's first request too. Here, as in :mod:`proagent.serve` for the pages:

* a connection's request line and headers must arrive within :data:`HEADER_TIMEOUT` seconds of its
  opening (or of the end of its previous response), else it is closed (:class:`LimitedH11Protocol`);
* at most :data:`MAX_OPEN` connections are open: one more closes the idle one open longest (a flood
  cannot keep a new client out), and uvicorn's own 503 (``limit_concurrency``) is only the last
  bound, past that;
* the listen backlog is :data:`proagent.serve.BACKLOG`.

Every client is 127.0.0.1, so a limit per client address would be one global limit: the limits per
connection are the deadline and the eviction.
"""

from __future__ import annotations

import time
from typing import Any

from ..serve import BACKLOG, HEADER_TIMEOUT

__all__ = ["BACKLOG", "HEADER_TIMEOUT", "MAX_OPEN", "LimitedH11Protocol", "uvicorn_config"]

MAX_OPEN = 1024
"""Connections open at once (file descriptors; the process limit here is 20000); one more closes
the idle one open longest."""


def _protocol_class() -> type:
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class _Limited(H11Protocol):  # type: ignore[misc]
        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._opened = time.monotonic()
            self._header_timer: Any = None
            self._arm()
            if len(self.connections) > MAX_OPEN:
                idle = [c for c in self.connections if c is not self and getattr(c, "cycle", None) is None]
                if idle:
                    min(idle, key=lambda c: getattr(c, "_opened", 0.0)).transport.close()

        def _arm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
            self._header_timer = self.loop.call_later(HEADER_TIMEOUT, self._header_deadline, self.cycle)

        def _header_deadline(self, cycle: Any) -> None:
            """No new request began since the timer was set: a silent or slowloris connection."""
            if self.cycle is cycle and (cycle is None or cycle.response_complete) and not self.transport.is_closing():
                self.transport.close()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()  # the next request on this connection has the same deadline

        def connection_lost(self, exc: Exception | None) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
            super().connection_lost(exc)

    return _Limited


def LimitedH11Protocol() -> type:  # noqa: N802 - a class, built when uvicorn is imported
    """uvicorn's h11 protocol with the header deadline and the eviction above (uvicorn is an
    optional dependency: imported only here, when ``mcp --http`` starts)."""
    return _protocol_class()


def uvicorn_config(app: Any, **kwargs: Any) -> Any:
    """A ``uvicorn.Config`` for ``app`` with these limits (``kwargs``: further Config options).

    Raises:
        ImportError: uvicorn is not installed.
    """
    import uvicorn

    return uvicorn.Config(
        app,
        http=LimitedH11Protocol(),
        limit_concurrency=2 * MAX_OPEN,  # the last bound: connections are kept to MAX_OPEN first
        backlog=BACKLOG,
        timeout_keep_alive=HEADER_TIMEOUT,
        **kwargs,
    )
