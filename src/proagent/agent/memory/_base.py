"""The memory interface, the registry of memory kinds, and the on-disk cache."""

from __future__ import annotations

import bisect
import io
import json
import os
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from ...cache import DiskCache
from ...errors import RunError, UsageError
from .records import MemoryQuery, MemoryRecord, records_fingerprint

__all__ = [
    "MEMORIES",
    "Memory",
    "MemoryCache",
    "MemoryConfig",
    "MemoryItem",
    "MemoryLeak",
    "check_memory",
    "get_memory",
    "register_memory",
]

MEMORY_VERSION = 1
"""Bumped when a memory's build changes, so stale cache entries are not reused."""


@dataclass(frozen=True)
class MemoryConfig:
    """Settings of every memory kind (ProAgentBench section 4.3, Appendix C).

    Only these enter the cache key; operational settings (cache folder) do not."""

    top_k: int = 5
    """RAG: records retrieved; persona: personas retrieved."""
    kg_app_min: float = 0.05
    """KG: keep intents with P(c|a) above this."""
    kg_keyword_min: float = 0.1
    """KG: keep intents with P(c|k) above this."""
    kg_keywords_per_title: int = 5
    """KG: informative tokens kept per window title."""
    kg_top_transitions: int = 3
    """KG: transitions shown per application."""
    persona_threshold: float = 0.7
    """PersonaX: Ward-linkage distance threshold."""
    persona_max_clusters: int = 15
    """PersonaX: at most this many clusters per group (LLM / non-LLM)."""
    persona_budget: float = 0.6
    """PersonaX: share of a group's records selected for persona writing."""
    persona_alpha: float = 1.06
    """PersonaX: w_p = alpha^-10, w_d = 1 - w_p."""
    persona_max_tokens: int = 120
    """Persona length budget in tokens (the prompt asks for 100-120)."""

    def key(self, kind: str) -> dict:
        return {"kind": kind, "version": MEMORY_VERSION, **self.__dict__}


@dataclass(frozen=True)
class MemoryItem:
    """One thing memory puts in a prompt."""

    id: str
    """Record id, or a synthetic id for priors and personas."""
    user: str
    """Owner."""
    known_at: datetime
    """Latest ``known_at`` of the records behind the item."""
    text: str
    """The line shown to the model."""
    score: float | None = None
    """Retrieval score (cosine), when there is one."""


class MemoryLeak(RunError):
    """A memory item from another user or from t or later reached retrieval (a bug: the run
    stops rather than score a leaked answer)."""


class MemoryCache:
    """Per-user memory artefacts on disk, keyed by data and configuration.

    Folder: ``$PROAGENT_MEMORY_CACHE`` or ``~/.cache/proagent/memory``, one bounded
    :class:`proagent.cache.DiskCache` (``kind/key`` -> JSON text or ``.npy`` bytes; the least
    recently stored artefacts go first past its size limit); ``hits``/``misses`` count lookups
    (for tests and logs)."""

    def __init__(self, root: str | Path | None = None) -> None:
        root = root or os.environ.get("PROAGENT_MEMORY_CACHE") or Path.home() / ".cache" / "proagent" / "memory"
        self.root = Path(root)
        self._store = DiskCache(self.root)
        self.hits = 0
        self.misses = 0

    def _get(self, kind: str, key: str) -> bytes | None:
        return self._store.get(f"{kind}/{key}")

    def get_json(self, kind: str, key: str) -> Any | None:
        raw = self._get(kind, key)
        if raw is not None:
            try:
                data = json.loads(raw.decode("utf-8"))
                self.hits += 1
                return data
            except ValueError:  # UnicodeDecodeError and JSONDecodeError included
                pass
        self.misses += 1
        return None

    def put_json(self, kind: str, key: str, data: Any) -> None:
        self._store.set(f"{kind}/{key}", json.dumps(data, ensure_ascii=False, default=str).encode("utf-8"))

    def get_array(self, kind: str, key: str) -> np.ndarray | None:
        raw = self._get(kind, key)
        if raw is not None:
            try:
                arr = np.load(io.BytesIO(raw), allow_pickle=False)
                self.hits += 1
                return arr
            except (OSError, ValueError):
                pass
        self.misses += 1
        return None

    def put_array(self, kind: str, key: str, arr: np.ndarray) -> None:
        buf = io.BytesIO()
        np.save(buf, arr, allow_pickle=False)
        self._store.set(f"{kind}/{key}", buf.getvalue())


class Memory(ABC):
    """Long-term memory of every user of a data set, built from the training period.

    Subclasses implement :meth:`_build_user` and :meth:`_retrieve`; :meth:`lookup`
    wraps retrieval with the leakage guard (only the query's user, only
    ``known_at < t``), so no subclass can leak by mistake."""

    name: str = ""
    """Registry name (``rag``, ``kg``, ``persona``)."""
    source: str = ""
    """How the prompt names this memory."""

    def __init__(
        self,
        records: dict[str, list[MemoryRecord]],
        config: MemoryConfig = MemoryConfig(),
        cache: MemoryCache | None = None,
    ) -> None:
        self.records = {u: sorted(rs, key=lambda r: (r.known_at, r.id)) for u, rs in records.items()}
        self._known = {u: [r.known_at for r in rs] for u, rs in self.records.items()}
        self.config = config
        self.cache = cache if cache is not None else MemoryCache()
        self.build_seconds: dict[str, float] = {}
        self.state: dict[str, Any] = {}
        self.blocked = 0
        """Items dropped by the leakage guard (should stay 0)."""

    def key(self, user: str) -> str:
        """Cache key of one user's memory (records + configuration)."""
        return records_fingerprint(self.records.get(user, []), self.config.key(self.name))

    def build(self) -> Memory:
        """Build (or load from the cache) every user's memory."""
        for user in sorted(self.records):
            t0 = time.perf_counter()
            self.state[user] = self._build_user(user, self.records[user])
            self.build_seconds[user] = time.perf_counter() - t0
        return self

    async def prepare(self, user: str) -> None:  # noqa: B027
        """Work that needs the evaluated model (persona writing); default none."""

    @abstractmethod
    def _build_user(self, user: str, records: list[MemoryRecord]) -> Any: ...

    @abstractmethod
    def _retrieve(self, query: MemoryQuery) -> list[MemoryItem]: ...

    def lookup(self, query: MemoryQuery) -> list[MemoryItem]:
        """Items for one moment: the query's user only, every item known strictly before t."""
        if query.user not in self.state:
            return []
        items = self._retrieve(query)
        kept = [it for it in items if it.user == query.user and it.known_at < query.time]
        self.blocked += len(items) - len(kept)
        return kept

    def eligible(self, user: str, t: datetime) -> int:
        """Number of the user's records (sorted by ``known_at``) known strictly before ``t``."""
        return bisect.bisect_left(self._known.get(user, []), t)


MEMORIES: dict[str, type[Memory]] = {}
"""Memory kinds by name, filled by :func:`register_memory` (the package's
``__init__`` registers the built-in kinds; nothing registers on import)."""


def register_memory(cls: type[Memory]) -> type[Memory]:
    """Register a memory kind under its ``name`` (also accepted by ``--memory``).

    Raises:
        ValueError: ``cls.name`` is empty, ``none``, or taken by another class.
    """
    if not cls.name or cls.name == "none":
        raise ValueError(f"memory class {cls.__name__} needs a name other than 'none'")
    if MEMORIES.get(cls.name, cls) is not cls:
        raise ValueError(f"memory {cls.name!r} is already registered ({MEMORIES[cls.name].__name__})")
    MEMORIES[cls.name] = cls
    return cls


def check_memory(name: str) -> str:
    """``name`` when it is ``none`` or a registered memory: the one check of ``eval --memory``,
    the ``assist`` task's ``memory`` argument and :func:`get_memory` (names read from
    :data:`MEMORIES` at each call).

    Raises:
        proagent.errors.UsageError: an unknown name (``--memory``, exit 2).
    """
    if name != "none" and name not in MEMORIES:
        raise UsageError("--memory", f"unknown memory {name!r}; choose from {', '.join(('none', *MEMORIES))}")
    return name


def get_memory(name: str) -> type[Memory]:
    """The memory class registered as ``name``.

    Raises:
        proagent.errors.UsageError: an unknown name (:func:`check_memory`), or ``none``.
    """
    if check_memory(name) not in MEMORIES:
        raise UsageError("--memory", "'none' is no memory to build")
    return MEMORIES[name]
