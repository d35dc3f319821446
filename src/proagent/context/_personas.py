"""Persona texts of ``user_profile`` (opt-in: ``proagent mcp --persona-model MODEL``).

The persona memory (:mod:`proagent.agent.memory.persona`, PersonaX as ProAgentBench uses it)
describes each recurring kind of activity by one paragraph of 100-120 tokens written by a model
from the cluster's records. The server does the same for the clusters ``user_profile`` shows:
the prompt is the memory's own (:func:`~proagent.agent.memory.persona.persona_prompt`) over the
cluster's :data:`PROMPT_RECORDS` most central events, and the text is written in the background
by one worker thread, one cluster at a time, so no tool call waits on the model; until then the
cluster's ``persona`` is ``null`` and the profile counts it in ``personas_pending``.

A text is cached (``personas.json``, 0600, in the server's private state folder) under the hash of
the model's name and the prompt: the same central events give the same text across calls and
restarts, and only a cluster whose central events changed is written again.

Privacy: what goes into a prompt is what the server shows (titles and summaries redacted unless
``--raw``); a remote model (anything but ``local/``) always gets the redacted text, also under
``--raw``, as every remote call of proagent does unless the person chooses otherwise.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Callable
from pathlib import Path

__all__ = ["CACHE_FILE", "MAX_TOKENS", "PROMPT_RECORDS", "PersonaWriter"]

CACHE_FILE = "personas.json"
"""Name of the persona cache in the server's state folder."""
PROMPT_RECORDS = 12
"""Central events of a cluster a persona prompt shows (the memory selects 60 % of a cluster's
records for its prompt; the server keeps prompts short for a local model on two cores)."""
MAX_TOKENS = 120
"""Persona length budget in tokens (ProAgentBench's persona memory: 100-120 tokens)."""


class PersonaWriter:
    """Writes persona paragraphs with an inspect model in one background thread.

    Args:
        model: Any inspect model name (``local/qwen2.5-coder-1.5b``, ``openai/...``).
        base_url: An OpenAI-compatible endpoint for ``model`` (``--model-base-url``).
        cache_file: Where texts are cached (``None``: in memory only).
        redact: Applied to each prompt sent to a remote model (the server's PII redactor).

    Raises:
        Whatever ``inspect_ai.model.get_model`` raises for a model that cannot be created.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        cache_file: Path | None = None,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        from inspect_ai.model import GenerateConfig, get_model

        from ..bench.running import api_limits

        self.name = model
        self.remote = not model.startswith(("local/", "mockllm/"))
        self._model = get_model(model, base_url=base_url)
        self._config = GenerateConfig(
            temperature=0.0, max_tokens=MAX_TOKENS, seed=0, **(api_limits() if self.remote else {})
        )
        self._redact = redact if self.remote else None
        self._cache_file = cache_file
        self._texts: dict[str, str] = self._load()
        self._failed: set[str] = set()
        self.error: str | None = None
        """The last failure's first line (``None`` when the last call succeeded)."""
        self._queue: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, daemon=True, name="proagent-mcp-personas")
        self._thread.start()

    def key(self, prompt: str) -> str:
        """Cache key of ``prompt`` for this model (16 hex digits)."""
        return hashlib.sha256(f"{self.name}\x00{prompt}".encode()).hexdigest()[:16]

    def texts(self, prompts: list[str]) -> list[str | None]:
        """The written text of each prompt (``None``: not written yet, or its writing failed);
        prompts not written yet are queued (replacing the queue of an earlier call)."""
        with self._lock:
            out = [self._texts.get(self.key(p)) for p in prompts]
            self._queue = [
                (self.key(p), p) for p, t in zip(prompts, out) if t is None and self.key(p) not in self._failed
            ]
        if self._queue:
            self._wake.set()
        return out

    @property
    def pending(self) -> int:
        """Prompts queued or being written."""
        with self._lock:
            return len(self._queue)

    def close(self) -> None:
        """Stop the worker after the text it is writing (returns at once)."""
        self._stop.set()
        self._wake.set()

    # ------------------------------------------------------------------ worker

    def _work(self) -> None:
        loop = asyncio.new_event_loop()
        try:
            while not self._stop.is_set():
                self._wake.wait()
                self._wake.clear()
                while not self._stop.is_set():
                    with self._lock:
                        if not self._queue:
                            break
                        key, prompt = self._queue[0]
                    try:
                        text = loop.run_until_complete(self._write(prompt))
                        self.error = None
                    except Exception as e:  # noqa: BLE001 (a model failure leaves the persona empty, never the server)
                        from ..bench.running import api_error_line

                        text = None
                        self.error = " ".join(api_error_line(e).split())[:300]
                    with self._lock:
                        if text:
                            self._texts[key] = text
                            self._queue = [(k, p) for k, p in self._queue if k != key]
                        else:  # not asked again in this run; the rest wait for the next user_profile call,
                            self._failed.add(key)  # so a dead endpoint costs one failure per call, not one per cluster
                            self._queue = []
                    if text:
                        self._save()
        finally:
            loop.close()

    async def _write(self, prompt: str) -> str:
        from inspect_ai.model import ChatMessageUser

        from ..agent.memory.persona import trim_persona

        if self._redact is not None:
            prompt = self._redact(prompt)
        out = await self._model.generate([ChatMessageUser(content=prompt)], config=self._config)
        return trim_persona(out.completion)

    def _load(self) -> dict[str, str]:
        if self._cache_file is None or not self._cache_file.is_file():
            return {}
        try:
            data = json.loads(self._cache_file.read_text("utf-8"))
        except (OSError, ValueError):
            return {}  # a damaged cache is written again
        if not isinstance(data, dict):
            return {}
        return {str(k): v for k, v in data.items() if isinstance(v, str) and v}

    def _save(self) -> None:
        if self._cache_file is None:
            return
        from ..io import PRIVATE_FILE_MODE, write_atomic

        with self._lock:
            body = json.dumps(self._texts, ensure_ascii=False, indent=0)
        try:
            self._cache_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            write_atomic(self._cache_file, body, mode=PRIVATE_FILE_MODE)
        except OSError:
            pass  # a cache that cannot be written costs a rewrite after a restart, nothing else
