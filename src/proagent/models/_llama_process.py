"""llama.cpp (xllamacpp) in a child process, so a request in flight can be abandoned at once.

xllamacpp's ``Server.handle_chat_completions`` runs the whole request (prompt evaluation
and every generated token) in C++ with the GIL released and offers no way to cancel it:
a Ctrl-C during ``proagent eval`` had to wait for the current generation to end (67 s on
a loaded machine, issue 26). A streaming callback could stop between generated tokens,
but not inside the prompt evaluation, which is most of a sample's time on CPU. So the
engine runs in a child process (``python -m proagent.models._llama_process``) that the
parent kills when the request is cancelled (:meth:`LlamaProcess.abandon`); the next
request starts a fresh one. The parent's run stays resumable: finished samples are in
the log, the one in flight is redone.

Protocol: two pipes with :class:`multiprocessing.connection.Connection` framing, one
JSON request per message and one JSON reply (the engine's OpenAI-style dict, or
``{"error": ...}`` / ``{"ready": true}``); a request with ``"stream": true`` is answered by
``{"delta": text}`` messages, one per generated piece, then one ``{"done": true, "content":
..., "finish_reason": ..., "timings": ...}`` (:meth:`LlamaProcess.chat_stream`). The child runs in a process group of its own
(the terminal sends Ctrl-C to the foreground group; the parent decides, and a SIGINT during
the child's imports, before it could ignore one, printed a KeyboardInterrupt traceback) and exits within
:data:`proagent.orphan.PARENT_POLL_S` of its parent's death, ``kill -9`` included
(:func:`proagent.orphan.exit_when_orphaned`), so no orphan keeps computing.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from ..errors import RunError
from ..orphan import exit_when_orphaned

__all__ = ["EngineGone", "LlamaProcess", "Ticket", "prestart"]


class Ticket:
    """One request's claim on the child (:meth:`LlamaProcess.chat`'s ``ticket``), so that
    :meth:`LlamaProcess.cancel` stops that request and no other: one still waiting for the child
    (another request holds it, e.g. a streamed help answer in ``proagent live``) is never sent;
    one in flight kills the child. Without it a cancelled waiting request killed the request in
    flight (issue 32: a stale How call cancelled while the help streamed ended the help)."""

    __slots__ = ("cancelled",)

    def __init__(self) -> None:
        self.cancelled = False


class EngineGone(RunError):
    """The child process ended before it answered (killed by :meth:`LlamaProcess.abandon`,
    by the OOM killer, or crashed); the next request starts a new one."""


_LIVE: weakref.WeakSet[LlamaProcess] = weakref.WeakSet()
_STARTED: dict[str, tuple[subprocess.Popen[bytes], Connection, Connection]] = {}
"""Children started by :func:`prestart` that no :class:`LlamaProcess` has taken yet, by config."""
_STARTED_LOCK = threading.Lock()


@atexit.register
def _kill_all() -> None:
    for p in list(_LIVE):
        p.close()
    with _STARTED_LOCK:
        for proc, send, recv in _STARTED.values():
            proc.kill()
            proc.wait()
            send.close()
            recv.close()
        _STARTED.clear()


def _spawn(config: dict[str, Any]) -> tuple[subprocess.Popen[bytes], Connection, Connection]:
    req_r, req_w = os.pipe()
    res_r, res_w = os.pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "proagent.models._llama_process", json.dumps(config), str(req_r), str(res_w)],
            pass_fds=(req_r, res_w),
            stdin=subprocess.DEVNULL,
            close_fds=True,
            process_group=0,  # its own group from exec on: a Ctrl-C during its imports must not reach it
        )
    finally:
        os.close(req_r)
        os.close(res_w)
    return proc, Connection(req_w, readable=False), Connection(res_r, writable=False)


def prestart(path: str, n_ctx: int, n_threads: int, n_cache_reuse: int = 0) -> None:
    """Start loading a model in a child process now, without waiting for it: the first
    :class:`LlamaProcess` with the same arguments takes that child over, so the load overlaps
    whatever the caller does meanwhile (``proagent eval`` starts it before importing inspect,
    scikit-learn and the data: issue 24). A child never taken over is killed at exit. A second
    call with the same arguments does nothing."""
    config = {"path": path, "n_ctx": n_ctx, "n_threads": n_threads, "n_cache_reuse": n_cache_reuse}
    key = json.dumps(config, sort_keys=True)
    with _STARTED_LOCK:
        if key not in _STARTED:
            _STARTED[key] = _spawn(config)


def _take_started(config: dict[str, Any]) -> tuple[subprocess.Popen[bytes], Connection, Connection] | None:
    with _STARTED_LOCK:
        return _STARTED.pop(json.dumps(config, sort_keys=True), None)


class LlamaProcess:
    """One GGUF model loaded in a child process; :meth:`chat` sends one request.

    ``path``: the GGUF file; ``n_ctx``: context in tokens; ``n_threads``: CPU threads;
    ``n_cache_reuse``: llama.cpp's ``--cache-reuse`` (0: off; else the shortest chunk of the
    cached prompt, in tokens, that may be moved into place by shifting its KV cache, see
    :mod:`proagent.models.local`). Requests are serialised (one slot: consecutive requests share its KV cache).

    Raises:
        EngineGone: from the constructor or :meth:`chat` when the model cannot be loaded
            (the child's message) or the child ended without an answer.
    """

    def __init__(self, path: str, n_ctx: int, n_threads: int, n_cache_reuse: int = 0) -> None:
        self.config = {"path": path, "n_ctx": n_ctx, "n_threads": n_threads, "n_cache_reuse": n_cache_reuse}
        self._lock = threading.Lock()
        self._ticket_lock = threading.Lock()
        self._current: Ticket | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._send: Connection | None = None
        self._recv: Connection | None = None
        self.loads = 0
        """Children started (loaded) so far: 1 after the constructor, +1 per reload after a kill."""
        self.load_seconds = 0.0
        """Wall seconds of the last start (model load; 0 when a :func:`prestart` child was ready)."""
        self._loaded_in_request = 0.0
        _LIVE.add(self)  # killed at exit, also when interrupted while the model loads
        self._start()

    def _start(self) -> None:
        # a child that prestart() began loading, else a new one
        import time

        t0 = time.perf_counter()
        self._proc, self._send, self._recv = _take_started(self.config) or _spawn(self.config)
        ready = self._reply()
        if not ready.get("ready"):
            self.close()
            raise EngineGone(str(ready.get("error", ready)))
        self.loads += 1
        self.load_seconds = time.perf_counter() - t0

    def _reply(self) -> dict[str, Any]:
        assert self._recv is not None
        try:
            return json.loads(self._recv.recv_bytes())
        except (EOFError, OSError):
            code = self._proc.wait() if self._proc is not None else None
            raise EngineGone(f"the llama.cpp process ended (exit status {code})") from None

    def chat(self, request: dict[str, Any], ticket: Ticket | None = None) -> dict[str, Any]:
        """The engine's reply to one OpenAI-style chat request (a dict, ``error`` on failure).

        Blocks until the answer comes or :meth:`abandon` kills the child (then
        :class:`EngineGone`). ``ticket`` (:meth:`cancel`): a request cancelled before the child
        was free is not sent and raises :class:`EngineGone` at once."""
        with self._lock:
            with self._ticket_lock:
                if ticket is not None and ticket.cancelled:
                    raise EngineGone("the request was cancelled before it was sent")
                self._current = ticket
            try:
                self._request(request)
                return self._reply()
            finally:
                with self._ticket_lock:
                    self._current = None

    def cancel(self, ticket: Ticket) -> None:
        """Cancel the request of ``ticket``: not sent yet, it never is; in flight, the child is
        killed (:meth:`abandon`). Any other request, one in flight included, goes on. Safe from any thread."""
        with self._ticket_lock:
            ticket.cancelled = True
            mine = self._current is ticket
        if mine:
            self.abandon()

    def _request(self, request: dict[str, Any]) -> None:
        """Send one request (a new child first when the last one ended); the lock is held."""
        self._loaded_in_request = 0.0
        if self._proc is None or self._proc.poll() is not None:
            self.close()
            self._start()
            self._loaded_in_request = self.load_seconds
        assert self._send is not None
        try:
            self._send.send_bytes(json.dumps(request).encode("utf-8"))
        except OSError:
            raise EngineGone("the llama.cpp process ended") from None

    def chat_stream(self, request: dict[str, Any], on_delta: Callable[[str], None]) -> dict[str, Any]:
        """Like :meth:`chat`, streamed: ``on_delta(text)`` is called with each generated piece
        as llama.cpp produces it; returns ``{"done": true, "content": whole text, "finish_reason",
        "timings"}`` (llama.cpp's ``prompt_n``, ``cache_n``, ``predicted_n``, milliseconds) or
        ``{"error": ...}``, with ``load_s``: the seconds this request waited for a new child to load
        (0: the child was up, its KV cache kept). An exception from ``on_delta`` abandons the request
        (the child is killed) and is raised here.

        Raises:
            EngineGone: the child ended before the last message.
        """
        with self._lock:
            self._request({**request, "stream": True})
            while True:
                msg = self._reply()
                if "delta" not in msg:
                    return {**msg, "load_s": self._loaded_in_request}
                try:
                    on_delta(msg["delta"])
                except BaseException:
                    self.abandon()  # the rest of the stream would arrive as the next request's reply
                    raise

    def abandon(self) -> None:
        """Kill the child now (a request in flight raises :class:`EngineGone`); the next
        :meth:`chat` starts a new one. Safe from any thread."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()

    def close(self) -> None:
        """Kill the child and close the pipes."""
        self.abandon()
        if self._proc is not None:
            self._proc.wait()
        for c in (self._send, self._recv):
            if c is not None:
                c.close()
        self._proc = self._send = self._recv = None


# ------------------------------------------------------------------ the child


def _server(config: dict[str, Any]) -> Any:
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = config["path"]
    params.n_ctx = config["n_ctx"]
    params.n_parallel = 1  # one slot: consecutive requests share its KV cache
    params.cpuparams.n_threads = config["n_threads"]
    params.cpuparams_batch.n_threads = config["n_threads"]
    params.warmup = False
    params.n_cache_reuse = int(config.get("n_cache_reuse", 0))
    params.verbosity = -1
    return xlc.Server(params)


def _stream(server: Any, request: dict[str, Any], send: Connection) -> dict[str, Any]:
    """Run one streamed request, sending each piece of text as ``{"delta": ...}``; returns the
    closing message (whole text, finish reason, llama.cpp's timings) or ``{"error": ...}``."""
    parts: list[str] = []
    last: dict[str, Any] = {}

    def chunk(c: Any) -> None:
        c = c if isinstance(c, dict) else json.loads(c)
        if "error" in c:
            last["error"] = c["error"]
            return
        for ch in c.get("choices") or ():
            text = (ch.get("delta") or {}).get("content")
            if text:
                parts.append(text)
                send.send_bytes(json.dumps({"delta": text}).encode("utf-8"))
            if ch.get("finish_reason"):
                last["finish_reason"] = ch["finish_reason"]
        if c.get("timings"):
            last["timings"] = c["timings"]

    try:
        ret = server.handle_chat_completions(request, chunk)
        if isinstance(ret, (dict, str)) and ret:  # an error is returned, not streamed
            ret = ret if isinstance(ret, dict) else json.loads(ret)
            if "error" in ret:
                last["error"] = ret["error"]
    except Exception as e:  # noqa: BLE001
        last["error"] = {"message": str(e)}
    if "error" in last:
        return {"error": last["error"]}
    return {
        "done": True,
        "content": "".join(parts),
        "finish_reason": last.get("finish_reason"),
        "timings": last.get("timings", {}),
    }


def _child(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    config = json.loads(argv[0])
    recv = Connection(int(argv[1]), writable=False)
    send = Connection(int(argv[2]), readable=False)
    exit_when_orphaned(os.getppid())  # stop at once, without waiting for the engine's loop
    try:
        server = _server(config)
    except Exception as e:  # noqa: BLE001 (the parent reports it)
        send.send_bytes(json.dumps({"error": f"cannot load {os.path.basename(config['path'])}: {e}"}).encode())
        return 1
    send.send_bytes(b'{"ready": true}')
    while True:
        try:
            request = json.loads(recv.recv_bytes())
        except EOFError:
            os._exit(0)  # the parent closed the pipe
        if request.get("stream"):
            send.send_bytes(json.dumps(_stream(server, request, send)).encode("utf-8"))
            continue
        try:
            result: Any = server.handle_chat_completions(request)
            if not isinstance(result, dict):
                result = json.loads(result)
        except Exception as e:  # noqa: BLE001
            result = {"error": {"message": str(e)}}
        send.send_bytes(json.dumps(result).encode("utf-8"))


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
