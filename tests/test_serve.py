"""proagent.serve.LocalServer, the one server behind the review and live pages: each bad
request a hostile page or process on the machine could send, and a bounded loopback flood
(memory and threads stay bounded, the page keeps answering)."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time

import psutil
import pytest

from proagent.serve import LocalServer, Response


@pytest.fixture()
def server():
    srv = LocalServer("test-serve", max_body=1024, timeout=1.0, max_connections=8)
    seen: list[bytes] = []
    srv.route("GET", "/", lambda req: Response.html(srv.html_page("t", "<p id=x>hi</p>", script="1")))
    srv.route("GET", "/boom", lambda req: 1 / 0)

    def write(req):  # noqa: ANN001, ANN202
        seen.append(req.body)
        return Response.json({"ok": True, "got": req.json()})

    srv.route("POST", "/w", write)
    srv.start()
    srv.seen = seen  # type: ignore[attr-defined]
    yield srv
    srv.close()


def _req(
    srv: LocalServer,
    method: str,
    path: str,
    *,
    token: bool = True,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    url = path + (("&" if "?" in path else "?") + f"token={srv.token}" if token else "")
    c.putrequest(method, url, skip_host=True, skip_accept_encoding=True)
    h = {"Host": f"127.0.0.1:{srv.port}", **(headers or {})}
    if body is not None and "Content-Length" not in h:
        h["Content-Length"] = str(len(body))
    for k, v in h.items():
        c.putheader(k, v)
    c.endheaders()
    if body:
        c.send(body)
    r = c.getresponse()
    out = r.status, dict(r.getheaders()), r.read()
    c.close()
    return out


def _raw(srv: LocalServer, data: bytes, *, wait: float = 5.0) -> bytes:
    """Send ``data`` on a fresh connection; what came back before the server closed it."""
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=wait)
    try:
        s.sendall(data)
        chunks = []
        while True:
            try:
                b = s.recv(65536)
            except (TimeoutError, ConnectionResetError):
                break
            if not b:
                break
            chunks.append(b)
        return b"".join(chunks)
    finally:
        s.close()


def _status(raw: bytes) -> int:
    return int(raw.split(b" ", 2)[1]) if raw.startswith(b"HTTP/") else 0


def test_the_page_and_its_headers(server: LocalServer) -> None:
    code, h, body = _req(server, "GET", "/")
    assert code == 200 and b'<p id=x>hi</p>' in body and f'nonce="{server.nonce}"'.encode() in body
    csp = h["Content-Security-Policy"]
    assert f"script-src 'nonce-{server.nonce}'" in csp and "frame-ancestors 'none'" in csp and "unsafe-eval" not in csp
    assert (
        h["X-Content-Type-Options"] == "nosniff" and h["Cache-Control"] == "no-store" and h["X-Frame-Options"] == "DENY"
    )
    assert server.url.startswith(f"http://127.0.0.1:{server.port}/?token=")
    assert server._httpd.server_address[0] == "127.0.0.1"


@pytest.mark.parametrize(
    "headers, token",
    [
        ({}, False),  # no token
        ({"Host": "evil.example.com"}, True),  # DNS rebinding: the attacker's name, our token
        ({"Host": "127.0.0.1"}, True),  # no port
        ({"Host": "127.0.0.1:1"}, True),  # another port
        ({"Host": ""}, True),
    ],
)
def test_reads_need_the_token_and_our_host(server: LocalServer, headers: dict, token: bool) -> None:
    code, _, body = _req(server, "GET", "/", token=token, headers=headers)
    assert code == 403 and "error" in json.loads(body)


def test_a_wrong_token_of_any_shape_is_refused(server: LocalServer) -> None:
    for tok in ("wrong", server.token[:-1], server.token + "x", "%ff%fe", "%C3%A9" * 40, ""):
        code, _, _ = _req(server, "GET", f"/?token={tok}", token=False)
        assert code == 403, tok


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example.com"},
        {"Origin": "null"},
        {"Origin": "http://127.0.0.1:1"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
def test_cross_origin_writes_are_refused_before_the_route(server: LocalServer, headers: dict) -> None:
    code, _, _ = _req(server, "POST", "/w", body=b'{"a": 1}', headers=headers)
    assert code == 403 and server.seen == []  # type: ignore[attr-defined]


def test_same_origin_writes_pass(server: LocalServer) -> None:
    for headers in ({}, {"Origin": server.origins[0], "Sec-Fetch-Site": "same-origin"}, {"Sec-Fetch-Site": "none"}):
        code, _, body = _req(server, "POST", "/w", body=b'{"a": 1}', headers=headers)
        assert code == 200 and json.loads(body)["got"] == {"a": 1}


@pytest.mark.parametrize(
    "length, code",
    [
        ("10000000000", 413),  # 10 GB declared: refused at once, nothing read
        ("1025", 413),
        ("-1", 400),
        ("abc", 400),
        ("1e3", 400),
    ],
)
def test_bad_content_lengths_are_answered_at_once(server: LocalServer, length: str, code: int) -> None:
    t0 = time.monotonic()
    raw = _raw(
        server,
        f"POST /w?token={server.token} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        f"Content-Length: {length}\r\n\r\n".encode(),
    )
    assert _status(raw) == code and time.monotonic() - t0 < 3
    assert server.seen == []  # type: ignore[attr-defined]


def test_bodies_without_a_length_or_chunked_or_not_json(server: LocalServer) -> None:
    raw = _raw(server, f"POST /w?token={server.token} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
    assert _status(raw) == 411
    raw = _raw(
        server,
        f"POST /w?token={server.token} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n".encode(),
    )
    assert _status(raw) == 411
    code, _, body = _req(server, "POST", "/w", body=b"\xff\xfe not json")
    assert code == 400 and "JSON" in json.loads(body)["error"]


def test_a_stalled_body_is_dropped_after_the_timeout(server: LocalServer) -> None:
    t0 = time.monotonic()
    raw = _raw(
        server,
        f"POST /w?token={server.token} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        "Content-Length: 100\r\n\r\nonly ten b".encode(),
        wait=10,
    )
    assert time.monotonic() - t0 < 5 and server.seen == []  # type: ignore[attr-defined]
    assert _status(raw) in (0, 400)
    assert _req(server, "GET", "/")[0] == 200


def test_a_route_that_raises_is_a_500_without_traceback(server: LocalServer, capfd: pytest.CaptureFixture) -> None:
    code, _, body = _req(server, "GET", "/boom")
    assert code == 500 and json.loads(body) == {"error": "internal error"}
    assert _req(server, "GET", "/nope")[0] == 404
    assert _req(server, "PUT", "/w", body=b"{}")[0] == 405
    raw = _raw(server, b"\x16\x03\x01 garbage that is not http\r\n\r\n")  # e.g. a TLS hello
    assert _status(raw) == 400 and b"<html" not in raw.lower()
    raw = _raw(server, b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n")
    assert _status(raw) in (0, 414)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ZeroDivisionError" not in err


def test_a_big_body_is_not_read(server: LocalServer) -> None:
    """200 MB offered with a matching Content-Length: 413 after the headers; memory stays flat."""
    proc = psutil.Process()
    before = proc.memory_info().rss
    s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    s.sendall(
        f"POST /w?token={server.token} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        f"Content-Length: {200 * 2**20}\r\n\r\n".encode()
    )
    sent = 0
    chunk = b"x" * 2**20
    try:
        while sent < 200 * 2**20:
            s.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass  # the server answered and closed: the rest is never read
    s.close()
    assert sent < 200 * 2**20, "the server kept reading the body"
    assert proc.memory_info().rss - before < 30 * 2**20


def test_a_loopback_flood_keeps_memory_and_threads_bounded(server: LocalServer) -> None:
    proc = psutil.Process()
    threads0 = threading.active_count()
    _req(server, "GET", "/")
    rss0 = proc.memory_info().rss
    idle = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(40)]  # slowloris
    try:
        time.sleep(0.3)
        assert threading.active_count() <= threads0 + 8 + 2  # at most max_connections handler threads
        for _ in range(300):  # a burst of short bad requests while the slots are held
            _raw(server, b"GET / HTTP/1.0\r\n\r\n", wait=2)
    finally:
        for s in idle:
            s.close()
    time.sleep(1.5)  # the held slots time out (timeout=1 s) and are freed
    assert _req(server, "GET", "/")[0] == 200
    for _ in range(200):
        assert _req(server, "GET", "/", token=False)[0] == 403
    assert proc.memory_info().rss - rss0 < 20 * 2**20
    assert threading.active_count() <= threads0 + 3


@pytest.fixture(params=["review", "live"])
def real_page(request, tmp_path):  # noqa: ANN001, ANN201
    """The review page (an empty curate output) and live's offer page, as each command starts them."""
    from datetime import datetime

    from proagent.curate import serve_review
    from proagent.live import FeedbackStore, OfferPage

    if request.param == "review":
        (tmp_path / ".curate").mkdir()
        (tmp_path / ".curate" / "manifest.json").write_text('{"users": {}}', "utf-8")
        rev = serve_review(tmp_path)
        yield rev._server, "/api/decision"
        rev.stop()
    else:
        st = FeedbackStore(tmp_path)
        live = OfferPage(st, datetime.now)
        yield live._server, "/respond"
        live.close()
        st.close()


def test_both_pages_use_it(real_page) -> None:  # noqa: ANN001
    """Each property once for both real pages: the one stylesheet and no shell of their own,
    CSP with the nonce, Host check, cross-origin refusal, body cap, JSON errors."""
    from proagent.report.pages import CSS

    srv, write = real_page
    assert isinstance(srv, LocalServer)
    code, h, body = _req(srv, "GET", "/")
    html = body.decode("utf-8")
    assert code == 200 and html.count("<style>") == 1 and CSS in html and html.count("<html") == 1
    assert html.count("<script") == 1 and f'<script nonce="{srv.nonce}">' in html
    assert f"script-src 'nonce-{srv.nonce}'" in h["Content-Security-Policy"]
    assert _req(srv, "GET", "/", headers={"Host": "evil.example.com"})[0] == 403
    code, _, body = _req(srv, "POST", write, body=b'{"id": 1}', headers={"Origin": "https://evil.example.com"})
    assert code == 403 and "error" in json.loads(body)
    code, _, body = _req(srv, "POST", write, body=b"x" * (srv.max_body + 1))
    assert code == 413 and "error" in json.loads(body)
    code, _, body = _req(srv, "POST", write, body=b"{not json")
    assert code == 400 and b"Traceback" not in body and "error" in json.loads(body)


def test_slowloris_clients_are_closed_at_the_header_deadline_and_the_page_keeps_answering() -> None:
    """32 connections sending a header line every second (or a byte at a time) held every slot of
    the live page (503 for 30 s): each is closed at HEADER_TIMEOUT, and a valid client is answered
    meanwhile. Bounded: 32 sockets, about 4 s."""
    srv = LocalServer("test-slowloris", header_timeout=2.0)
    srv.route("GET", "/", lambda req: Response.json({"ok": True}))
    srv.start()
    try:
        slow = []
        for i in range(32):
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
            s.sendall(f"GET /?token={srv.token} HTTP/1.1\r\n".encode())
            slow.append(s)
        t0 = time.monotonic()
        answered = []
        while time.monotonic() - t0 < 3.5:
            for i, s in enumerate(slow):
                try:
                    s.sendall(b"X" if i % 2 else f"X-Slow-{i}: {time.monotonic()}\r\n".encode())
                except OSError:
                    pass
            c0 = time.monotonic()
            answered.append((_req(srv, "GET", "/")[0], time.monotonic() - c0))
            time.sleep(0.5)
        assert all(code == 200 and sec < 2 for code, sec in answered), answered
        closed = 0
        for s in slow:
            s.settimeout(2)
            try:
                data = s.recv(4096)
                closed += data == b"" or data.startswith(b"HTTP/1.0 408") or data.startswith(b"HTTP/1.0 400")
            except OSError:
                closed += 1
            s.close()
        assert closed == 32
    finally:
        srv.close()


def test_two_hundred_concurrent_valid_requests_are_all_answered() -> None:
    """A burst of 200 concurrent requests: the listen backlog keeps them (socketserver's 5 dropped
    most, 9-78 unanswered after 15 s); each gets an answer, most of them the page."""
    from concurrent.futures import ThreadPoolExecutor

    srv = LocalServer("test-burst")
    srv.route("GET", "/", lambda req: Response.json({"ok": True}))
    srv.start()
    barrier = threading.Barrier(200)

    def one(_: int) -> int:
        barrier.wait(timeout=30)
        try:
            return _req(srv, "GET", "/")[0]
        except OSError:
            return 0

    try:
        t0 = time.monotonic()
        with ThreadPoolExecutor(200) as pool:
            codes = list(pool.map(one, range(200)))
        assert time.monotonic() - t0 < 15
        assert codes.count(0) == 0 and set(codes) <= {200, 503} and codes.count(200) >= 100, codes
    finally:
        srv.close()


def test_150_idle_connections_reopened_at_once_do_not_keep_a_valid_client_out() -> None:
    """150 connections without a token, each reopened as soon as it is closed, held every slot of
    the thread-per-connection page (every route 503): a valid client is answered within 2 s all the
    while, the first request of the flood included. Bounded: 150 sockets, about 3 s."""
    srv = LocalServer("test-flood", header_timeout=1.0)
    srv.route("GET", "/", lambda req: Response.json({"ok": True}))
    srv.start()
    stop = threading.Event()
    held: list[socket.socket] = []

    def flood() -> None:
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
                    held[i] = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
                    held[i].sendall(b"GET / HTTP/1.1\r\n")  # a slowloris start, never finished
            time.sleep(0.05)

    try:
        held.extend(socket.create_connection(("127.0.0.1", srv.port), timeout=5) for _ in range(150))
        for i, s in enumerate(held):
            if i % 2:
                s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        t = threading.Thread(target=flood, daemon=True)
        t.start()
        answered = []
        t0 = time.monotonic()
        while time.monotonic() - t0 < 3.0:
            c0 = time.monotonic()
            answered.append((_req(srv, "GET", "/")[0], round(time.monotonic() - c0, 2)))
            time.sleep(0.2)
        assert answered and all(code == 200 and sec < 2 for code, sec in answered), answered
    finally:
        stop.set()
        time.sleep(0.1)
        for s in held:
            s.close()
        srv.close()
