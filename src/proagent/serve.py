"""The one local web server behind proagent's interactive pages (``proagent review``, the
``live`` offer page, ``proagent show``): 127.0.0.1 only, a random token, and the guards a page on a shared
machine needs.

Every request must

* come to ``Host: 127.0.0.1:<port>`` or ``localhost:<port>`` (a DNS-rebinding page that
  resolves its own name to 127.0.0.1 sends its own name and gets 403);
* carry the server's random token (``?token=...``, :data:`TOKEN_BYTES` bytes from
  :mod:`secrets`, compared in constant time), else 403.

A write (``POST``) must also

* not come from another site: an ``Origin`` header must be this server's own origin and a
  ``Sec-Fetch-Site`` header must be ``same-origin`` or ``none`` (browsers send them on
  cross-site ``fetch``/form posts; a script on another page cannot drop them), else 403;
* declare its length (``Content-Length``, else 411) of at most ``max_body`` bytes (else 413;
  a negative or non-numeric one is 400), and deliver it within ``timeout`` seconds (else the
  connection is closed): the body is never read past its cap.

Every connection is bounded in time and in number: while its request line and headers arrive it
waits in one selector thread (no thread of its own; at most :data:`MAX_WAITING` wait, one more
closes the one waiting longest), and they must arrive within ``header_timeout`` seconds in all
(:data:`HEADER_TIMEOUT`; a slowloris client sending a header line every few seconds, or a byte at
a time, is closed then); its body within ``timeout`` seconds in all (:data:`TIMEOUT`); and at most
:data:`MAX_CONNECTIONS` requests whose headers are in are served at once (one more gets 503 at once
and is closed; the listen backlog, :data:`BACKLOG`, keeps a burst of connections waiting for
``accept`` rather than dropped). So a flood of idle or slow connections cannot grow memory or
threads without bound, nor keep a valid client (its headers in one packet) from an answer. Errors are JSON
``{"error": "..."}``; a handler that raises gets a 500 (507 when its write met a full disk) with no traceback anywhere (the
server's terminal stays quiet, and no request line is logged: URLs carry the token).
Responses carry ``Content-Security-Policy`` (scripts only with the page's nonce, no frames,
no form posts elsewhere), ``X-Content-Type-Options: nosniff``, ``Cache-Control: no-store``,
``Referrer-Policy: no-referrer`` and ``X-Frame-Options: DENY``.

Pages are built with :func:`proagent.report.pages.page` (:meth:`LocalServer.html_page`
puts the page's script under the CSP nonce).
"""

from __future__ import annotations

import errno
import hmac
import io
import json
import secrets
import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from .errors import UsageError
from .report.pages import page

__all__ = [
    "BACKLOG",
    "HEADER_TIMEOUT",
    "MAX_BODY",
    "MAX_CONNECTIONS",
    "MAX_WAITING",
    "TIMEOUT",
    "TOKEN_BYTES",
    "HttpError",
    "LocalServer",
    "Request",
    "Response",
    "check_port",
]


def check_port(port: int, option: str = "--port") -> None:
    """Refuse, before any work, a fixed ``port`` that 127.0.0.1 cannot listen on now (taken by
    another server), so a command whose page starts late leaves nothing behind; 0 (any free port)
    always passes. The probe socket is closed at once (a server started later may still race).

    Raises:
        UsageError: naming ``option``, the port and the system's reason.
    """
    if not port:
        return
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds (http.server)
    try:
        probe.bind(("127.0.0.1", port))
    except OSError as e:
        raise UsageError(option, f"{port}: cannot listen on 127.0.0.1 ({e.strerror or e})") from None
    finally:
        probe.close()


TOKEN_BYTES = 16
"""Random bytes of the token (128 bits)."""
MAX_BODY = 64 * 1024
"""Default cap on a request body, bytes (a decision or a response is well under 1 KiB)."""
TIMEOUT = 10.0
"""Seconds a request's body may take to arrive, in all (slow or stalled clients)."""
HEADER_TIMEOUT = 5.0
"""Seconds a connection's request line and headers may take to arrive, in all: a slowloris
client (32 connections sending a header line every 5 s held the live page at 503 for 30 s) is
closed then, whatever it trickles meanwhile. A browser sends its headers in one packet."""
MAX_CONNECTIONS = 64
"""Requests served at once (a handler thread each, once their headers have arrived); one more
is answered 503 and closed."""
MAX_WAITING = 1024
"""Connections whose request line and headers are still arriving, all held by one selector thread
(a file descriptor each, no thread, no :data:`MAX_CONNECTIONS` slot); one more closes the one
waiting longest. 150 idle connections reopened as soon as they closed held every slot of the
thread-per-connection page (every route 503); now a valid client's request, whose headers come in
one packet, is served within milliseconds beside them. Every client is 127.0.0.1, so a limit per
client address would be one global limit: the per-connection limits are the header deadline and
this eviction."""
BACKLOG = 256
"""Connections the kernel keeps waiting for ``accept`` (socketserver's default, 5, dropped most of
a burst of 200 concurrent requests: the clients' retransmits left 9-78 unanswered after 15 s)."""


class HttpError(UsageError):
    """Raised by a route: answered ``status`` with JSON ``{"error": message}`` (a request the
    server cannot use; it never leaves the server)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__("request", message)
        self.status = status
        """The HTTP status answered (400, 403, 404, 411, 413)."""
        self.message = message
        """The ``error`` of the JSON answer."""


@dataclass(frozen=True)
class Request:
    """One request as a route sees it (already authorised)."""

    method: str
    """``GET`` or ``POST``."""
    path: str
    """URL path, percent-decoded per segment by :attr:`parts`."""
    query: dict[str, list[str]]
    """Query parameters (the token among them)."""
    body: bytes = b""
    """The request body (``POST``), at most the server's ``max_body`` bytes."""

    @property
    def parts(self) -> list[str]:
        """The path's segments, percent-decoded (``/img/U1/3`` -> ``["img", "U1", "3"]``)."""
        return [unquote(p) for p in self.path.split("/") if p]

    def json(self) -> Any:
        """The body parsed as JSON.

        Raises:
            HttpError: 400 when the body is not UTF-8 JSON.
        """
        try:
            return json.loads(self.body.decode("utf-8") or "null")
        except (UnicodeDecodeError, ValueError) as e:
            raise HttpError(400, f"body is not JSON ({e.__class__.__name__})") from None


@dataclass(frozen=True)
class Response:
    """What a route returns."""

    body: bytes
    content_type: str = "application/json; charset=utf-8"
    status: int = 200

    @classmethod
    def json(cls, obj: object, status: int = 200) -> Response:
        """A JSON response of ``obj``."""
        return cls(json.dumps(obj, ensure_ascii=False).encode("utf-8"), status=status)

    @classmethod
    def html(cls, text: str) -> Response:
        """An HTML page."""
        return cls(text.encode("utf-8"), "text/html; charset=utf-8")


Route = Callable[[Request], Response]


@dataclass
class _Routes:
    exact: dict[tuple[str, str], Route] = field(default_factory=dict)
    prefix: dict[tuple[str, str], Route] = field(default_factory=dict)


class _Server(ThreadingHTTPServer):
    """A threading HTTP server whose connections first wait, all in one selector thread, for their
    request line and headers (no thread and no slot each: a flood of idle or slow connections costs
    a file descriptor apiece), then get a handler thread, at most ``max_connections`` at once."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = BACKLOG

    def __init__(
        self,
        addr: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        max_connections: int,
        header_timeout: float = HEADER_TIMEOUT,
        max_waiting: int = MAX_WAITING,
    ) -> None:
        self.slots = threading.BoundedSemaphore(max_connections)
        self.header_timeout, self.max_waiting = header_timeout, max_waiting
        self.prefetched: dict[int, bytes] = {}
        """What the header reader read of a connection, by ``id(socket)``, for its handler."""
        self._incoming: list[tuple[Any, Any]] = []
        self._lock = threading.Lock()
        self._waiting: dict[Any, tuple[float, Any, bytearray]] = {}  # socket -> (deadline, address, bytes read)
        self._sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._sel.register(self._wake_r, selectors.EVENT_READ)
        self._closing = False
        super().__init__(addr, handler)
        self._reader = threading.Thread(target=self._read_headers, daemon=True, name="proagent-http-headers")
        self._reader.start()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._lock:
            self._incoming.append((request, client_address))
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass

    def _read_headers(self) -> None:
        """The selector loop: collects each connection's bytes until its headers end, then hands it
        to :meth:`_dispatch`; closes one at its header deadline, and the one waiting longest when
        more than ``max_waiting`` wait (a flood cannot keep a new client out)."""
        while not self._closing:
            now = time.monotonic()
            soonest = min((d for d, _, _ in self._waiting.values()), default=None)
            try:
                events = self._sel.select(None if soonest is None else max(0.0, soonest - now))
            except (OSError, ValueError):
                return  # closed
            for key, _ in events:
                sock = key.fileobj
                if sock is self._wake_r:
                    self._admit()
                    continue
                deadline, addr, buf = self._waiting[sock]
                try:
                    data = sock.recv(65536)  # type: ignore[union-attr]
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data:
                    self._drop(sock)
                    continue
                buf += data
                if b"\r\n\r\n" in buf or b"\n\n" in buf or len(buf) > _HEADER_BYTES:
                    self._sel.unregister(sock)
                    del self._waiting[sock]
                    self._dispatch(sock, addr, bytes(buf))
            now = time.monotonic()
            for sock in [s for s, (d, _, _) in self._waiting.items() if d <= now]:
                self._drop(sock)

    def _admit(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            return
        with self._lock:
            incoming, self._incoming = self._incoming, []
        for request, addr in incoming:
            if len(self._waiting) >= self.max_waiting:  # the one waiting longest makes room
                self._drop(min(self._waiting, key=lambda s: self._waiting[s][0]))
            request.setblocking(False)
            self._waiting[request] = (time.monotonic() + self.header_timeout, addr, bytearray())
            self._sel.register(request, selectors.EVENT_READ)

    def _drop(self, sock: Any) -> None:
        self._waiting.pop(sock, None)
        try:
            self._sel.unregister(sock)
        except (KeyError, ValueError):
            pass
        self.shutdown_request(sock)

    def _dispatch(self, request: Any, client_address: Any, data: bytes) -> None:
        request.setblocking(True)
        if not self.slots.acquire(blocking=False):  # full: a short 503, no thread
            try:
                request.settimeout(1.0)
                request.sendall(_BUSY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        self.prefetched[id(request)] = data
        try:
            ThreadingHTTPServer.process_request(self, request, client_address)
        except Exception:  # noqa: BLE001 - could not start a thread: drop this connection only
            self.prefetched.pop(id(request), None)
            self.slots.release()
            self.shutdown_request(request)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.prefetched.pop(id(request), None)
            self.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a reset or timed-out connection: nothing to print (never a traceback on the terminal)

    def server_close(self) -> None:
        self._closing = True
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        self._reader.join(2)
        for sock in list(self._waiting):
            self._drop(sock)
        with self._lock:
            for request, _ in self._incoming:
                self.shutdown_request(request)
            self._incoming.clear()
        self._sel.close()
        self._wake_r.close()
        self._wake_w.close()
        super().server_close()


_HEADER_BYTES = 64 * 1024 + 8 * 1024
"""Bytes of a request line and headers read before the handler takes the connection anyway
(http.server then answers 431/400: its own line limit is 65536)."""


class _DeadlineReader(io.RawIOBase):
    """A connection's socket read against a deadline for the whole request part being read
    (``handler.deadline``, a :func:`time.monotonic` value): each ``recv`` gets only the time left,
    so neither a line at a time nor a byte at a time stretches it. ``first``: the bytes the header
    reader took off the socket already, served before it."""

    def __init__(self, sock: socket.socket, handler: Any, first: bytes = b"") -> None:
        self._sock, self._handler, self._first = sock, handler, memoryview(first)

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if self._first:
            n = min(len(b), len(self._first))
            b[:n] = self._first[:n]
            self._first = self._first[n:]
            return n
        left = self._handler.deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout("request deadline passed")
        self._sock.settimeout(left)
        return self._sock.recv_into(b)


_BUSY_BODY = b'{"error": "too busy"}'
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: "
    + str(len(_BUSY_BODY)).encode()
    + b"\r\nConnection: close\r\n\r\n"
    + _BUSY_BODY
)


class LocalServer:
    """A token-guarded HTTP server on 127.0.0.1 serving ``routes`` in a daemon thread.

    Args:
        name: the thread's name (``proagent-review``...).
        port: TCP port on 127.0.0.1 (0: a free one).
        max_body: cap on a ``POST`` body in bytes (:data:`MAX_BODY`).
        timeout: seconds a request body may take in all (:data:`TIMEOUT`).
        max_connections: connections served at once (:data:`MAX_CONNECTIONS`).
        header_timeout: seconds the request line and headers may take in all (:data:`HEADER_TIMEOUT`).
        max_waiting: connections whose headers may be arriving at once (:data:`MAX_WAITING`).

    Routes are added with :meth:`route` before :meth:`start`.

    Raises:
        OSError: the port cannot be bound.
    """

    def __init__(
        self,
        name: str,
        port: int = 0,
        *,
        max_body: int = MAX_BODY,
        timeout: float = TIMEOUT,
        max_connections: int = MAX_CONNECTIONS,
        header_timeout: float = HEADER_TIMEOUT,
        max_waiting: int = MAX_WAITING,
    ) -> None:
        self.name = name
        self.token = secrets.token_urlsafe(TOKEN_BYTES)
        """The random token every request must carry (``?token=...``)."""
        self.nonce = secrets.token_urlsafe(12)
        """The CSP nonce of this server's page scripts."""
        self.max_body = max_body
        self._routes = _Routes()
        self._httpd = _Server(
            ("127.0.0.1", port), self._handler(timeout, header_timeout), max_connections, header_timeout, max_waiting
        )
        self.port = int(self._httpd.server_address[1])
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ set-up

    def route(self, method: str, path: str, fn: Route, *, prefix: bool = False) -> None:
        """Serve ``fn`` at ``method path`` (with ``prefix``: every path starting with ``path``)."""
        (self._routes.prefix if prefix else self._routes.exact)[(method, path)] = fn

    def html_page(self, title: str, body: str, *, script: str = "") -> str:
        """A page built with :func:`proagent.report.pages.page` (its one stylesheet), its
        ``script`` run under this server's CSP nonce (inline scripts without it are blocked)."""
        tail = f'<script nonce="{self.nonce}">{script}</script>' if script else ""  # after the body it uses
        return page(title, body, footer=tail)

    @property
    def origins(self) -> tuple[str, ...]:
        """The origins a write may come from (this server's own)."""
        return (f"http://127.0.0.1:{self.port}", f"http://localhost:{self.port}")

    @property
    def url(self) -> str:
        """The page's address, token included."""
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    @property
    def csp(self) -> str:
        """The Content-Security-Policy header of every response."""
        return (
            f"default-src 'none'; script-src 'nonce-{self.nonce}'; style-src 'unsafe-inline'; "
            "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )

    def start(self) -> LocalServer:
        """Serve in a daemon thread; returns ``self``."""
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True, name=self.name
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and close the socket."""
        if self._thread is not None:
            self._httpd.shutdown()
        self._httpd.server_close()

    # ------------------------------------------------------------------ requests

    def _find(self, method: str, path: str) -> Route | None:
        fn = self._routes.exact.get((method, path))
        if fn is not None:
            return fn
        for (m, p), f in self._routes.prefix.items():
            if m == method and path.startswith(p):
                return f
        return None

    def _check(self, h: BaseHTTPRequestHandler) -> None:
        """Host, token and, for writes, origin: raises :class:`HttpError` (403)."""
        host = h.headers.get("Host") or ""
        if host not in (f"127.0.0.1:{self.port}", f"localhost:{self.port}"):
            raise HttpError(403, "forbidden")
        tok = (parse_qs(urlparse(h.path).query).get("token") or [""])[0]
        if not hmac.compare_digest(tok.encode("utf-8", "replace"), self.token.encode()):
            raise HttpError(403, "forbidden: missing or wrong token")
        if h.command != "GET":
            origin = h.headers.get("Origin")
            if origin is not None and origin not in self.origins:
                raise HttpError(403, "forbidden: cross-origin write")
            site = h.headers.get("Sec-Fetch-Site")
            if site is not None and site not in ("same-origin", "none"):
                raise HttpError(403, "forbidden: cross-site write")

    def _body(self, h: BaseHTTPRequestHandler) -> bytes:
        if h.headers.get("Transfer-Encoding"):
            raise HttpError(411, "send a Content-Length, not a chunked body")
        raw = h.headers.get("Content-Length")
        if raw is None:
            raise HttpError(411, "Content-Length required")
        try:
            n = int(raw.strip())
        except ValueError:
            raise HttpError(400, "bad Content-Length") from None
        if n < 0:
            raise HttpError(400, "bad Content-Length")
        if n > self.max_body:
            raise HttpError(413, f"body over {self.max_body} bytes")
        h.deadline = time.monotonic() + h.body_timeout  # type: ignore[attr-defined]
        data = h.rfile.read(n)  # the deadline bounds a stalled or trickling sender
        if len(data) != n:
            raise HttpError(400, "body shorter than its Content-Length")
        return data

    def _handler(self, timeout: float, header_timeout: float) -> type[BaseHTTPRequestHandler]:
        srv = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # one request per connection: no idle keep-alive threads
            server_version = "proagent"
            sys_version = ""
            body_timeout = timeout

            def setup(self) -> None:
                self.timeout = min(timeout, header_timeout)  # StreamRequestHandler sets it on the socket
                super().setup()
                self.deadline = time.monotonic() + header_timeout
                first = self.server.prefetched.pop(id(self.connection), b"")  # type: ignore[attr-defined]
                self.rfile = io.BufferedReader(_DeadlineReader(self.connection, self, first))

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # request lines carry the token

            def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
                # http.server's own errors (bad request line, too-long headers): JSON, no HTML echo
                self.close_connection = True
                self.request_version = "HTTP/1.0"  # a status line even for an unparsable request
                self._send(Response.json({"error": message or "bad request"}, code))

            def _send(self, r: Response) -> None:
                try:
                    self.connection.settimeout(timeout)  # reads left it at their deadline's remainder
                    self.send_response(r.status)
                    self.send_header("Content-Type", r.content_type)
                    self.send_header("Content-Length", str(len(r.body)))
                    self.send_header("Cache-Control", "no-store")
                    self.send_header("Referrer-Policy", "no-referrer")
                    self.send_header("X-Content-Type-Options", "nosniff")
                    self.send_header("X-Frame-Options", "DENY")
                    self.send_header("Content-Security-Policy", srv.csp)
                    self.send_header("Connection", "close")
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(r.body)
                except (OSError, socket.timeout):
                    self.close_connection = True

            def _serve(self) -> None:
                try:
                    srv._check(self)
                    url = urlparse(self.path)
                    fn = srv._find(self.command, url.path)
                    if fn is None:
                        raise HttpError(404, "not found")
                    body = srv._body(self) if self.command == "POST" else b""
                except HttpError as e:
                    self.close_connection = True
                    self._send(Response.json({"error": e.message}, e.status))
                    return
                except (OSError, socket.timeout):  # the client went away or stalled
                    self.close_connection = True
                    return
                try:
                    r = fn(Request(self.command, url.path, parse_qs(url.query), body))
                except HttpError as e:
                    r = Response.json({"error": e.message}, e.status)
                    self.close_connection = True
                except OSError as e:  # the route's own file (a full disk...): answered, not a dropped connection
                    full = e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
                    r = Response.json({"error": "disk full" if full else "internal error"}, 507 if full else 500)
                except Exception:  # noqa: BLE001 - a route's bug: a 500, never a traceback
                    r = Response.json({"error": "internal error"}, 500)
                self._send(r)

            def do_GET(self) -> None:  # noqa: N802
                self._serve()

            def do_POST(self) -> None:  # noqa: N802
                self._serve()

            def do_PUT(self) -> None:  # noqa: N802
                self._send(Response.json({"error": "method not allowed"}, 405))

            do_DELETE = do_PATCH = do_PUT  # noqa: N815

        return Handler
