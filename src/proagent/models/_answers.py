"""Disk cache of a local model's answers, keyed by the model file and the exact request.

A local model at temperature 0 (or sampling with a fixed seed) gives the same
answer to the same request, so asking it again is wasted CPU: the quick start's
second run (``--decider``) asks Qwen the same How prompts as its first run, and a
re-run in a new log folder asks everything again. :class:`AnswerCache` stores
llama.cpp's response (answer, usage, timings, log-probabilities), as JSON, in the
project's bounded disk cache (:class:`proagent.cache.DiskCache` in ``root``) under

    key = SHA-256 of (model identity, context size, thread count, the whole request
    llama.cpp gets: messages, max_tokens, temperature, seed, stop, logprobs, cache_prompt)

so a different prompt, model file, answer budget or sampling setting is never a
hit. The model identity is the GGUF file's recorded SHA-256 where the catalog has
one, else its resolved path, size and modification time (a replaced file is a
new model). Requests that sample without a seed (temperature > 0) are not cached.

Where: ``$PROAGENT_ANSWER_CACHE``, default ``~/.cache/proagent/answers``
(``off`` turns it off; so does the model argument ``answer_cache=false``).
Answers describe a person's activity, so the folder is ``0700`` and its database ``0600``,
beside the decider's embedding cache (``~/.cache/proagent/embeddings``); it holds at most
:func:`proagent.cache.size_limit` bytes (1 GiB by default; the least recently stored answers
go first). An entry that cannot be read is treated as missing; a cache that cannot be written
only makes runs slower.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..cache import DiskCache

__all__ = ["AnswerCache", "answer_cache_root", "cacheable"]

_ENV = "PROAGENT_ANSWER_CACHE"
_VERSION = 1
"""Bumped when the stored response or the key changes meaning (old entries stop matching)."""


def answer_cache_root() -> Path | None:
    """``$PROAGENT_ANSWER_CACHE`` (``off``/``0``/``false``/``none``: ``None``) or ``~/.cache/proagent/answers``."""
    env = os.environ.get(_ENV, "").strip()
    if env.lower() in {"off", "0", "false", "no", "none"}:
        return None
    return Path(env).expanduser() if env else Path.home() / ".cache" / "proagent" / "answers"


def cacheable(request: dict[str, Any]) -> bool:
    """Whether ``request`` is deterministic: greedy (temperature 0) or seeded sampling."""
    return float(request.get("temperature") or 0.0) == 0.0 or request.get("seed") is not None


def model_identity(gguf: str | Path, sha256: str | None = None) -> str:
    """The model part of the key: ``sha256:<hex>`` when known, else ``file:<path>:<size>:<mtime_ns>``."""
    if sha256:
        return f"sha256:{sha256}"
    p = Path(gguf).resolve()
    st = p.stat()
    return f"file:{p}:{st.st_size}:{st.st_mtime_ns}"


class AnswerCache:
    """llama.cpp responses of one loaded model, on disk.

    Args:
        root: cache folder (see module docstring for the default).
        model: :func:`model_identity` of the GGUF file.
        n_ctx: context size, tokens.
        n_threads: threads llama.cpp runs on (part of the key: answers are not
            promised to be bit-identical across thread counts).
    """

    def __init__(self, root: str | Path, model: str, n_ctx: int, n_threads: int) -> None:
        self.root = Path(root)
        self._store = DiskCache(self.root)
        self._base = {"v": _VERSION, "model": model, "n_ctx": int(n_ctx), "n_threads": int(n_threads)}
        self.hits = 0
        self.misses = 0

    def key(self, request: dict[str, Any]) -> str:
        """Hex SHA-256 of the model identity and the request (sorted-key JSON)."""
        blob = json.dumps({**self._base, "request": request}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def get(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """The stored response to ``request``, or ``None`` (not stored, not cacheable, unreadable)."""
        if not cacheable(request):
            return None
        raw = self._store.get(self.key(request))
        try:
            result = json.loads(raw) if raw is not None else None
        except ValueError:
            result = None
        if not isinstance(result, dict) or "choices" not in result:
            self.misses += 1
            return None
        self.hits += 1
        return result

    def put(self, request: dict[str, Any], result: dict[str, Any]) -> None:
        """Store llama.cpp's ``result`` for ``request`` (nothing for a non-cacheable request)."""
        if not cacheable(request):
            return
        self._store.set(self.key(request), json.dumps(result, ensure_ascii=False).encode("utf-8"))
