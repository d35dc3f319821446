"""The arguments of a local model's llama.cpp engine, worked out without importing inspect.

:class:`proagent.models.local.LocalLlamaAPI` builds its engine from these, and
``proagent eval`` calls :func:`prestart_local` before its heavy imports so the model
loads in its child process while the parent imports inspect and scikit-learn and reads
the data (issue 24: the load and the imports overlap instead of following each other).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

__all__ = ["MIN_N_CTX", "engine_args", "prestart_local"]

MIN_N_CTX = 512
"""Smallest context accepted, tokens: ProactiveBench samples with the default
5-minute window take 825 tokens on average with Qwen (system prompt, taxonomy,
history and answer; the first dev-session sample is 735 with SmolLM2), so a smaller
context holds no sample. Larger ones that are still too small for a prompt fail at
that prompt with a message giving the size to pass."""


def whole(value: Any, name: str) -> int:
    """``value`` as a whole number >= 1; ``ValueError`` naming ``name`` otherwise."""
    try:
        n = int(str(value).strip())
    except ValueError:
        raise ValueError(f"{name}={value!r}: expected a whole number") from None
    if n < 1:
        raise ValueError(f"{name}={value!r}: expected a number >= 1")
    return n


def as_bool(value: Any) -> bool:
    """A model argument's truth: ``0``, ``false``, ``no``, ``off`` (any case) are false."""
    if isinstance(value, str):
        return value.strip().lower() not in {"0", "false", "no", "off"}
    return bool(value)


def check_n_ctx(n_ctx: int, spec: Any, gguf: str) -> None:
    """Refuse a context that cannot hold a sample, that the model was not trained
    for, or whose KV cache (estimated from the model's shape) does not fit in
    the memory available now, before the model is loaded.

    Raises:
        ValueError: naming ``n_ctx`` and the range or the memory it needs.
    """
    import psutil

    top = spec.n_ctx_train if spec else 131072
    if not MIN_N_CTX <= n_ctx <= top:
        raise ValueError(
            f"n_ctx={n_ctx}: expected {MIN_N_CTX} .. {top} tokens for this model "
            f"(fewer cannot hold one sample's prompt; more than it was trained for)"
        )
    per_token = spec.kv_bytes_per_token if spec else 131072
    need = n_ctx * per_token + os.path.getsize(gguf)
    avail = psutil.virtual_memory().available
    if need > 0.8 * avail:
        raise ValueError(
            f"n_ctx={n_ctx}: needs about {need / 1e9:.1f} GB (KV cache ~{per_token / 1024:.0f} KiB per "
            f"token plus the model file), more than the {avail / 1e9:.1f} GB available"
        )


def cache_reuse_tokens(value: Any) -> int:
    """The ``cache_reuse`` model argument as llama.cpp's ``n_cache_reuse`` (tokens; 0: off):
    ``false``/``off``/``0`` -> 0, ``true``/``on`` -> 64, a number -> that number.

    Raises:
        ValueError: neither a truth value nor a whole number >= 0.
    """
    text = str(value).strip().lower()
    if text in {"", "0", "false", "no", "off"}:
        return 0
    if text in {"true", "yes", "on"}:
        return 64
    return whole(text, "cache_reuse")


def engine_args(
    model_name: str, n_ctx: Any = None, n_threads: Any = None, cache_reuse: Any = 0
) -> tuple[str, int, int, int]:
    """``(gguf path, n_ctx, n_threads, n_cache_reuse)`` of ``local/<model_name>`` with these
    model arguments (unset: the catalogue's context or 4096, every core, no chunk reuse),
    the context checked by :func:`check_n_ctx`.

    Raises:
        ValueError: a bad argument or a context that does not fit.
        FileNotFoundError: the model file cannot be found (:func:`~proagent.models.catalog.resolve_gguf`;
            ``ValueError`` when an assembled file fails its checksum).
    """
    from .catalog import MODELS, resolve_gguf

    spec = MODELS.get(model_name)
    gguf = str(resolve_gguf(model_name))
    ctx = whole(n_ctx, "n_ctx") if n_ctx else (spec.n_ctx if spec else 4096)
    threads = whole(n_threads, "n_threads") if n_threads else max(1, os.cpu_count() or 1)
    check_n_ctx(ctx, spec, gguf)
    return gguf, ctx, threads, cache_reuse_tokens(cache_reuse)


def prestart_local(model: str, model_args: Mapping[str, Any]) -> bool:
    """Start loading ``model`` (``local/...``; anything else: nothing) in its llama.cpp child
    now (:func:`proagent.models._llama_process.prestart`), for the model that ``model_args``
    will make. Returns whether a load was started; any problem (unknown argument, missing
    file, a context too large) starts nothing and is left for the model's own creation to
    report, with its usual message."""
    if not model.startswith("local/"):
        return False
    known = {"n_ctx", "n_threads", "cache_reuse", "cache_prompt", "answer_cache"}
    if set(model_args) - known:
        return False
    try:
        gguf, ctx, threads, reuse = engine_args(
            model.removeprefix("local/"),
            model_args.get("n_ctx"),
            model_args.get("n_threads"),
            model_args.get("cache_reuse", 0),
        )
    except Exception:  # noqa: BLE001 (reported by the model's creation later)
        return False
    from ._llama_process import prestart

    prestart(gguf, ctx, threads, reuse)
    return True
