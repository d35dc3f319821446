"""``proagent mcp --http``'s limits (:mod:`proagent.context._http_limits`): uvicorn as the server
runs it, on 127.0.0.1 with real sockets. 150 idle or slowloris connections, reopened as soon as
they are closed, answered every request 503 (uvicorn counted them against ``limit_concurrency``
and never closed a connection that sent no request): a valid client is now answered within 2 s
throughout, the first request included. Bounded: 150 sockets, about 4 s."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest
from system import require_module

require_module("uvicorn")

from proagent.context import _http_limits  # noqa: E402
from proagent.context.server import bind_loopback  # noqa: E402


async def _app(scope, receive, send) -> None:  # noqa: ANN001
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok"})


def _get(port: int) -> tuple[int, float]:
    t0 = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    return int(data.split()[1]) if data else 0, time.monotonic() - t0


@pytest.fixture()
def server(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    import uvicorn

    monkeypatch.setattr(_http_limits, "HEADER_TIMEOUT", 1.0)
    sock = bind_loopback(0)
    srv = uvicorn.Server(_http_limits.uvicorn_config(_app, log_level="critical", access_log=False))
    t = threading.Thread(target=lambda: asyncio.run(srv.serve([sock])), daemon=True)
    t.start()
    for _ in range(100):
        if srv.started:
            break
        time.sleep(0.05)
    yield sock.getsockname()[1]
    srv.should_exit = True
    t.join(10)
    sock.close()


def test_a_flood_of_idle_connections_does_not_keep_a_valid_client_out(server: int) -> None:
    port = server
    held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(150)]
    for i, s in enumerate(held):
        if i % 2:
            s.sendall(b"GET /mcp HTTP/1.1\r\nHost: x\r\n")  # a slowloris start, never finished
    stop = threading.Event()

    def reopen() -> None:
        while not stop.is_set():
            for i, s in enumerate(list(held)):
                try:
                    s.settimeout(0)
                    closed = s.recv(1) == b""
                except BlockingIOError:
                    closed = False
                except OSError:
                    closed = True
                if closed:
                    s.close()
                    held[i] = socket.create_connection(("127.0.0.1", port), timeout=5)
            time.sleep(0.05)

    t = threading.Thread(target=reopen, daemon=True)
    t.start()
    try:
        answered = []
        t0 = time.monotonic()
        while time.monotonic() - t0 < 3.0:
            answered.append(_get(port))
            time.sleep(0.2)
        assert answered and all(code == 200 and sec < 2 for code, sec in answered), answered
        stop.set()  # the reopening thread closes and replaces sockets: it ends before they are read
        t.join(5)
        closed = 0
        for s in held[:20]:  # the idle ones are closed at the header deadline
            try:
                s.settimeout(3)
                closed += s.recv(1) == b""
            except OSError:
                closed += 1
        assert closed == 20
    finally:
        stop.set()
        t.join(5)
        for s in held:
            s.close()
