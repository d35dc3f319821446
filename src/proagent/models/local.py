"""In-process GGUF models on llama.cpp (xllamacpp), registered with inspect as ``local/...``.

``local/qwen2.5-coder-1.5b`` (default), ``local/smollm2-135m`` or
``local//path/to/model.gguf``. The model runs in a child process of the evaluating
one (:mod:`proagent.models._llama_process`: pipes, no server, no port, no network),
killed when a request is cancelled, so Ctrl-C stops a run within about a second.

Prefix reuse: llama.cpp keeps the KV cache of the previous prompt in its slot
and re-evaluates only the tokens after the longest common prefix. Prompts put
the stable parts first (system message with the categories, memory, older
events) and only the newest event, the current state and the instruction last,
so consecutive samples of one session share all but that tail (docs/architecture.md, prompt layout). When a prompt of another session
comes in, llama.cpp saves the slot's state in its host-memory prompt cache
(``cache_ram_mib``, 8 GiB by default) and restores the best-matching saved
prompt, so each session keeps its KV cache across interleaved requests. Usage
reports the prompt tokens llama.cpp evaluated (``timings.prompt_n``) as
``input_tokens`` and those it reused (``timings.cache_n``) as ``input_tokens_cache_read``.

Token log-probabilities are returned when ``GenerateConfig.logprobs`` is set
(``top_logprobs`` alternatives per token, default 5); the calibrated When-to-
Assist decision reads them (:mod:`proagent.agent.calibration`).

Usage is always reported (prompt and completion tokens counted by llama.cpp),
so inspect never falls back to a tokenizer download.

Model arguments (``-M key=value`` with inspect, ``--model-arg`` with proagent):
``n_ctx`` (tokens), ``n_threads`` (default: all cores), ``cache_prompt``
(``true``/``false``, default true: set false to measure without prefix reuse),
``answer_cache`` (``true``/``false``, default true: answers of deterministic requests
are kept on disk and a request asked again is answered from there; see
:mod:`proagent.models._answers`; set false to time the model itself), ``cache_reuse``
(default ``0``, off; ``true`` = 64, or a number of tokens: llama.cpp's ``--cache-reuse``,
below).

Chunk reuse (``cache_reuse``, off by default): when a moment's 5-minute window drops its
oldest events, the prompt differs from the cached one right after the system message and
llama.cpp evaluates the whole history again (414 of 757 tokens at the 12th dev moment).
With ``cache_reuse=N`` it finds the rest of the history further on in its cache and moves
those chunks (at least N tokens each) into place by shifting their KV cache instead
(``n_cache_reuse``, llama.cpp server's ``--cache-reuse``; benchmarks/prefix_reuse.py
``--cache-reuse``). The moved tokens keep the attention they computed over the dropped events,
so an answer is no longer a function of its own prompt alone: it depends on the prompt before
it. That is why it is off by default (``eval`` results stay those of each prompt on its own)
and why such answers are not kept in the answer cache.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from typing import Any

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    Logprob,
    Logprobs,
    ModelAPI,
    ModelCall,
    ModelOutput,
    ModelUsage,
    TopLogprob,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from ..errors import RunError
from ._answers import AnswerCache, answer_cache_root, model_identity
from ._llama_process import EngineGone, LlamaProcess, Ticket
from .catalog import MODELS
from .engine import as_bool, check_n_ctx, engine_args, whole

__all__ = ["LocalLlamaAPI", "LocalModelError", "stream_chat"]


class LocalModelError(RunError):
    """llama.cpp rejected a request (e.g. the prompt exceeds the context); re-running the same
    command would fail the same way (no ``resume``)."""


class _Engine:
    """One loaded model, in a child process (:mod:`proagent.models._llama_process`), so a
    cancelled request (Ctrl-C) is abandoned at once instead of running to its end."""

    def __init__(self, path: str, n_ctx: int, n_threads: int, n_cache_reuse: int = 0) -> None:
        try:
            self.server = LlamaProcess(path, n_ctx, n_threads, n_cache_reuse)
        except EngineGone as e:
            raise LocalModelError(f"llama.cpp ({os.path.basename(path)}): {e}") from None
        self.path = path
        self.n_ctx = n_ctx

    def chat(self, request: dict[str, Any], ticket: Ticket | None = None) -> dict[str, Any]:
        try:
            result = self.server.chat(request, ticket)
        except EngineGone as e:
            raise LocalModelError(f"llama.cpp ({os.path.basename(self.path)}): {e}") from None
        if "error" in result or "choices" not in result:
            err = result.get("error", result)
            msg = err.get("message") if isinstance(err, dict) else str(err)
            if "context" in str(msg).lower():
                msg = (
                    f"{msg} (the context is n_ctx={self.n_ctx} tokens: pass a larger one, e.g. "
                    f"--model-arg n_ctx={max(2 * self.n_ctx, 8192)}, with a new log folder since model "
                    "arguments are part of a run's options; a command with --window also takes a shorter one)"
                )
            raise LocalModelError(f"llama.cpp ({os.path.basename(self.path)}): {msg}")
        return result


_ENGINES: dict[tuple[str, int, int, int, str], _Engine] = {}
_ENGINES_LOCK = threading.Lock()


def _engine(path: str, n_ctx: int, n_threads: int, n_cache_reuse: int = 0, role: str = "") -> _Engine:
    """The engine of these arguments and ``role`` (``""``: the one inspect's ``local/...`` model and
    any other caller share; ``"help"``: live's help, its own child process)."""
    return _engine_loaded(path, n_ctx, n_threads, n_cache_reuse, role)[0]


def _engine_loaded(path: str, n_ctx: int, n_threads: int, n_cache_reuse: int, role: str) -> tuple[_Engine, bool]:
    """:func:`_engine`, and whether this call loaded it."""
    key = (path, n_ctx, n_threads, n_cache_reuse, role)
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            _ENGINES[key] = _Engine(path, n_ctx, n_threads, n_cache_reuse)
            return _ENGINES[key], True
        return _ENGINES[key], False


_whole, _as_bool, _check_n_ctx = whole, as_bool, check_n_ctx


def stream_chat(
    model_name: str,
    messages: list[dict[str, str]],
    on_delta: Callable[[str], None],
    *,
    max_tokens: int = 512,
    temperature: float = 0.0,
    seed: int | None = 0,
    model_args: dict[str, Any] | None = None,
    role: str = "",
) -> dict[str, Any]:
    """One chat answer of ``local/<model_name>``, streamed: ``on_delta(text)`` gets each piece as
    llama.cpp generates it. The engine is the one an inspect ``local/...`` model with the same
    ``model_args`` uses (one child process, one KV cache: prefix reuse across both; requests are
    serialised). Never from the answer cache (a streamed answer is timed as it is made).

    Args:
        model_name: catalogue name or GGUF path (without ``local/``).
        messages: OpenAI-style ``[{"role", "content"}]``.
        on_delta: called in this thread with each generated piece (an exception abandons the request).
        model_args: ``n_ctx``, ``n_threads``, ``cache_reuse`` (others of the provider are ignored).
        role: ``""`` (the engine shared with inspect's ``local/...`` model, above) or a name of
            its own child process with these arguments (``"help"``: live's help, whose KV cache a
            How call never overwrites and whose child a cancelled How call never kills).

    Returns:
        ``{"text", "finish_reason", "prompt_tokens"`` (evaluated), ``"cached_tokens"`` (reused),
        ``"completion_tokens", "prompt_s", "decode_s", "load_s"}`` (``load_s``: seconds this call
        waited for the model to load: its first call, or the first after its child was killed; else 0).

    Raises:
        LocalModelError: llama.cpp refused the request or its process ended.
        ValueError, FileNotFoundError: bad model arguments or no model file (:func:`engine_args`).
    """
    args = dict(model_args or {})
    gguf, n_ctx, n_threads, reuse = engine_args(
        model_name, args.get("n_ctx"), args.get("n_threads"), args.get("cache_reuse", 0)
    )
    engine, loaded = _engine_loaded(gguf, n_ctx, n_threads, reuse, role)
    request: dict[str, Any] = {
        "messages": messages,
        "max_tokens": int(max_tokens),
        "temperature": float(temperature),
        "cache_prompt": True,
    }
    if seed is not None:
        request["seed"] = int(seed)
    try:
        result = engine.server.chat_stream(request, on_delta)
    except EngineGone as e:
        raise LocalModelError(f"llama.cpp ({os.path.basename(gguf)}): {e}") from None
    if "error" in result:
        err = result["error"]
        raise LocalModelError(
            f"llama.cpp ({os.path.basename(gguf)}): {err.get('message') if isinstance(err, dict) else err}"
        )
    t = result.get("timings") or {}
    return {
        "text": result.get("content", ""),
        "finish_reason": result.get("finish_reason"),
        "prompt_tokens": int(t.get("prompt_n") or 0),
        "cached_tokens": int(t.get("cache_n") or 0),
        "completion_tokens": int(t.get("predicted_n") or 0),
        "prompt_s": float(t.get("prompt_ms") or 0) / 1000,
        "decode_s": float(t.get("predicted_ms") or 0) / 1000,
        "load_s": engine.server.load_seconds if loaded else float(result.get("load_s") or 0.0),
    }


def _message_text(m: ChatMessage) -> str:
    return m.text if isinstance(m.content, list) else str(m.content)


def _logprobs(raw: Any) -> Logprobs | None:
    """llama.cpp's OpenAI-style ``logprobs.content`` as inspect :class:`Logprobs`."""
    content = (raw or {}).get("content") if isinstance(raw, dict) else None
    if not content:
        return None
    return Logprobs(
        content=[
            Logprob(
                token=t.get("token", ""),
                logprob=float(t.get("logprob", 0.0)),
                top_logprobs=[
                    TopLogprob(token=x.get("token", ""), logprob=float(x.get("logprob", 0.0)))
                    for x in t.get("top_logprobs") or []
                ],
            )
            for t in content
        ]
    )


class LocalLlamaAPI(ModelAPI):
    """inspect_ai model API running a GGUF model in process with llama.cpp."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        n_ctx: int | str | None = None,
        n_threads: int | str | None = None,
        cache_prompt: bool | str = True,
        answer_cache: bool | str = True,
        cache_reuse: int | str | bool = 0,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_args:
            raise ValueError(f"local model: unknown model args {sorted(model_args)}")
        spec = MODELS.get(model_name)
        self.gguf, self.n_ctx, self.n_threads, self.n_cache_reuse = engine_args(
            model_name, n_ctx, n_threads, cache_reuse
        )
        self.cache_prompt = as_bool(cache_prompt)
        self._engine = _engine(self.gguf, self.n_ctx, self.n_threads, self.n_cache_reuse)
        root = answer_cache_root() if as_bool(answer_cache) else None
        # chunk reuse makes an answer depend on the previous prompt: such answers are not cached
        self._answers = (
            AnswerCache(root, model_identity(self.gguf, spec.sha256 if spec else None), self.n_ctx, self.n_threads)
            if root is not None and not self.n_cache_reuse
            else None
        )

    def max_connections(self) -> int:
        """One request at a time: llama.cpp on CPU gains nothing from more."""
        return 1

    def connection_key(self) -> str:
        return f"local:{self.gguf}"

    def should_retry(self, ex: Exception) -> bool:
        return False

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> tuple[ModelOutput, ModelCall]:
        if tools:
            raise LocalModelError("local models do not support tool calls")
        request: dict[str, Any] = {
            "messages": [{"role": m.role, "content": _message_text(m)} for m in input],
            "max_tokens": config.max_tokens or 512,
            "temperature": 0.0 if config.temperature is None else config.temperature,
            "cache_prompt": self.cache_prompt,
        }
        if config.top_p is not None:
            request["top_p"] = config.top_p
        if config.top_k is not None:
            request["top_k"] = config.top_k
        if config.seed is not None:
            request["seed"] = config.seed
        if config.stop_seqs:
            request["stop"] = list(config.stop_seqs)
        if config.logprobs:
            request["logprobs"] = True
            request["top_logprobs"] = config.top_logprobs or 5
        result = self._answers.get(request) if self._answers is not None else None
        hit = result is not None
        if result is None:
            ticket = Ticket()
            try:
                result = await asyncio.to_thread(self._engine.chat, request, ticket)
            except asyncio.CancelledError:  # Ctrl-C, a time limit, a stale How call: stop this request now
                self._engine.server.cancel(ticket)  # (not another one holding the child: a streamed help answer)
                raise
            if self._answers is not None:
                self._answers.put(request, result)
        choice = result["choices"][0]
        usage = result.get("usage", {})
        timings = result.get("timings", {})
        cached = int(timings.get("cache_n") or (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
        prompt_tokens = int(usage.get("prompt_tokens", 0))
        # prompt tokens llama.cpp actually evaluated (its timings), else those not reused
        evaluated = int(timings["prompt_n"]) if timings.get("prompt_n") is not None else max(prompt_tokens - cached, 0)
        completion_tokens = int(usage.get("completion_tokens", 0))
        finish = choice.get("finish_reason")
        output = ModelOutput(
            model=self.model_name,
            choices=[
                ChatCompletionChoice(
                    message=ChatMessageAssistant(
                        content=choice["message"].get("content") or "",
                        model=self.model_name,
                        source="generate",
                    ),
                    stop_reason="max_tokens" if finish == "length" else "stop",
                    logprobs=_logprobs(choice.get("logprobs")),
                )
            ],
            usage=ModelUsage(
                input_tokens=evaluated,
                output_tokens=completion_tokens,
                total_tokens=prompt_tokens + completion_tokens,
                input_tokens_cache_read=cached,
            ),
            time=(timings.get("prompt_ms", 0.0) + timings.get("predicted_ms", 0.0)) / 1000.0,
            # llama.cpp's split of that time: prompt evaluation (what prefix reuse saves) and decoding
            # (an answer from the answer cache carries the usage and timings of the call that computed it)
            metadata={
                "prompt_s": timings.get("prompt_ms", 0.0) / 1000.0,
                "decode_s": timings.get("predicted_ms", 0.0) / 1000.0,
                **({"answer_cache": "hit" if hit else "miss"} if self._answers is not None else {}),
            },
        )
        call = ModelCall.create(
            request={k: v for k, v in request.items()},
            response={"usage": usage, "timings": timings},
        )
        return output, call
