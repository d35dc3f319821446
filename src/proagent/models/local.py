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
:mod:`proagent.models._answers`; set false to time the model itself).
"""

from __future__ import annotations

import asyncio
import os
import threading
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
from ._llama_process import EngineGone, LlamaProcess
from .catalog import MODELS, resolve_gguf

__all__ = ["LocalLlamaAPI", "LocalModelError"]


class LocalModelError(RunError):
    """llama.cpp rejected a request (e.g. the prompt exceeds the context); re-running the same
    command would fail the same way (no ``resume``)."""


class _Engine:
    """One loaded model, in a child process (:mod:`proagent.models._llama_process`), so a
    cancelled request (Ctrl-C) is abandoned at once instead of running to its end."""

    def __init__(self, path: str, n_ctx: int, n_threads: int) -> None:
        try:
            self.server = LlamaProcess(path, n_ctx, n_threads)
        except EngineGone as e:
            raise LocalModelError(f"llama.cpp ({os.path.basename(path)}): {e}") from None
        self.path = path
        self.n_ctx = n_ctx

    def chat(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            result = self.server.chat(request)
        except EngineGone as e:
            raise LocalModelError(f"llama.cpp ({os.path.basename(self.path)}): {e}") from None
        if "error" in result or "choices" not in result:
            err = result.get("error", result)
            msg = err.get("message") if isinstance(err, dict) else str(err)
            if "context" in str(msg).lower():
                msg = (f"{msg} (the context is n_ctx={self.n_ctx} tokens: pass a larger one, e.g. "
                       f"--model-arg n_ctx={max(2 * self.n_ctx, 8192)}, or a shorter --window)")
            raise LocalModelError(f"llama.cpp ({os.path.basename(self.path)}): {msg}")
        return result


_ENGINES: dict[tuple[str, int, int], _Engine] = {}
_ENGINES_LOCK = threading.Lock()


def _engine(path: str, n_ctx: int, n_threads: int) -> _Engine:
    key = (path, n_ctx, n_threads)
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            _ENGINES[key] = _Engine(path, n_ctx, n_threads)
        return _ENGINES[key]


MIN_N_CTX = 512
"""Smallest context accepted, tokens: ProactiveBench samples with the default
5-minute window take 825 tokens on average with Qwen (system prompt, taxonomy,
history and answer; the first dev-session sample is 735 with SmolLM2), so a smaller
context holds no sample. Larger ones that are still too small for a prompt fail at
that prompt with a message giving the size to pass."""


def _whole(value: Any, name: str) -> int:
    try:
        n = int(str(value).strip())
    except ValueError:
        raise ValueError(f"{name}={value!r}: expected a whole number") from None
    if n < 1:
        raise ValueError(f"{name}={value!r}: expected a number >= 1")
    return n


def _check_n_ctx(n_ctx: int, spec: Any, gguf: str) -> None:
    """Refuse a context that cannot hold a sample, that the model was not trained
    for, or whose KV cache (estimated from the model's shape) does not fit in
    the memory available now, before the model is loaded."""
    import psutil

    top = spec.n_ctx_train if spec else 131072
    if not MIN_N_CTX <= n_ctx <= top:
        raise ValueError(f"n_ctx={n_ctx}: expected {MIN_N_CTX} .. {top} tokens for this model "
                         f"(fewer cannot hold one sample's prompt; more than it was trained for)")
    per_token = spec.kv_bytes_per_token if spec else 131072
    need = n_ctx * per_token + os.path.getsize(gguf)
    avail = psutil.virtual_memory().available
    if need > 0.8 * avail:
        raise ValueError(f"n_ctx={n_ctx}: needs about {need / 1e9:.1f} GB (KV cache ~{per_token / 1024:.0f} KiB per "
                         f"token plus the model file), more than the {avail / 1e9:.1f} GB available")


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in {"0", "false", "no", "off"}
    return bool(value)


def _message_text(m: ChatMessage) -> str:
    return m.text if isinstance(m.content, list) else str(m.content)


def _logprobs(raw: Any) -> Logprobs | None:
    """llama.cpp's OpenAI-style ``logprobs.content`` as inspect :class:`Logprobs`."""
    content = (raw or {}).get("content") if isinstance(raw, dict) else None
    if not content:
        return None
    return Logprobs(content=[
        Logprob(token=t.get("token", ""), logprob=float(t.get("logprob", 0.0)),
                top_logprobs=[TopLogprob(token=x.get("token", ""), logprob=float(x.get("logprob", 0.0)))
                              for x in t.get("top_logprobs") or []])
        for t in content
    ])


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
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_args:
            raise ValueError(f"local model: unknown model args {sorted(model_args)}")
        spec = MODELS.get(model_name)
        self.gguf = str(resolve_gguf(model_name))
        self.n_ctx = _whole(n_ctx, "n_ctx") if n_ctx else (spec.n_ctx if spec else 4096)
        self.n_threads = _whole(n_threads, "n_threads") if n_threads else max(1, os.cpu_count() or 1)
        _check_n_ctx(self.n_ctx, spec, self.gguf)
        self.cache_prompt = _as_bool(cache_prompt)
        self._engine = _engine(self.gguf, self.n_ctx, self.n_threads)
        root = answer_cache_root() if _as_bool(answer_cache) else None
        self._answers = (AnswerCache(root, model_identity(self.gguf, spec.sha256 if spec else None),
                                     self.n_ctx, self.n_threads) if root is not None else None)

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
            try:
                result = await asyncio.to_thread(self._engine.chat, request)
            except asyncio.CancelledError:  # Ctrl-C or a time limit: stop the generation now
                self._engine.server.abandon()
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
            metadata={"prompt_s": timings.get("prompt_ms", 0.0) / 1000.0,
                      "decode_s": timings.get("predicted_ms", 0.0) / 1000.0,
                      **({"answer_cache": "hit" if hit else "miss"} if self._answers is not None else {})},
        )
        call = ModelCall.create(
            request={k: v for k, v in request.items()},
            response={"usage": usage, "timings": timings},
        )
        return output, call
