"""A loopback OpenAI-compatible chat-completions server for tests.

``with MockOpenAI(reply) as srv:`` serves ``POST /v1/chat/completions`` on
127.0.0.1 (a free port) in a thread; every request body is kept in
``srv.requests`` and answered with ``reply(body)`` (a string, or an int HTTP
status to fail with). ``srv.env(monkeypatch)`` points inspect's
``openai-api/mock/...`` provider at it (``MOCK_BASE_URL``, ``MOCK_API_KEY``).
Image parts of the messages are decoded so tests check what arrived:
``srv.images(i)`` lists the PNG bytes sent in request ``i``.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["MockOpenAI", "last_user_text"]


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the last user message of a request (text parts joined)."""
    for m in reversed(body.get("messages", [])):
        if m.get("role") == "user":
            c = m.get("content")
            if isinstance(c, str):
                return c
            return "\n".join(p.get("text", "") for p in c if p.get("type") == "text")
    return ""


class MockOpenAI:
    """See the module docstring."""

    def __init__(self, reply: Callable[[dict[str, Any]], str | int]) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                outer.requests.append(body)
                answer = outer.reply(body)
                if isinstance(answer, int):
                    data = json.dumps({"error": {"message": "mock failure", "type": "server_error"}}).encode()
                    self.send_response(answer)
                else:
                    data = json.dumps(
                        {
                            "id": f"mock-{len(outer.requests)}",
                            "object": "chat.completion",
                            "created": 0,
                            "model": body.get("model", "mock"),
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": answer},
                                }
                            ],
                            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
                        }
                    ).encode()
                    self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                try:
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up on the request (a cancelled call): nothing to answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def env(self, monkeypatch: Any) -> None:
        """Point ``openai-api/mock/<model>`` at this server."""
        monkeypatch.setenv("MOCK_BASE_URL", self.base_url)
        monkeypatch.setenv("MOCK_API_KEY", "test-key")

    def images(self, i: int) -> list[bytes]:
        """Decoded image bytes of every ``image_url`` part in request ``i``."""
        out = []
        for m in self.requests[i].get("messages", []):
            c = m.get("content")
            for p in c if isinstance(c, list) else []:
                if p.get("type") == "image_url":
                    url = p["image_url"]["url"]
                    out.append(base64.b64decode(url.split(",", 1)[1]))
        return out

    def __enter__(self) -> MockOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
