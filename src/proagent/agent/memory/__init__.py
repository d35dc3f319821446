"""Long-term memory of user habits (ProAgentBench section 6.4, Appendix C).

Three kinds, all built per user from the training period only and used at a
moment t only through records known strictly before t:

* ``rag`` (:class:`RagMemory`): top-5 similar past moments from a faiss index of
  e5 embeddings;
* ``kg`` (:class:`KGMemory`): plain-language priors from a habit graph (App,
  Keyword, Intent, User nodes; P_help(a), P_intent(c|a), P_intent(c|k), app
  transitions);
* ``persona`` (:class:`PersonaMemory`): PersonaX cluster personas written by the
  evaluated model, top-5 by cosine.

Usage::

    memory = build_memory("kg", events, samples)       # all samples, before filtering the split
    solver = [memory_context(memory, {s.id: s for s in samples}), zero_shot()]

Built memory is cached on disk (``$PROAGENT_MEMORY_CACHE`` or
``~/.cache/proagent/memory``) under a key of the user's records and the
configuration.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...records import Event, Sample
from ._base import (
    MEMORIES,
    Memory,
    MemoryCache,
    MemoryConfig,
    MemoryItem,
    MemoryLeak,
    check_memory,
    get_memory,
    register_memory,
)
from ._solver import memory_context
from .kg import KGMemory
from .persona import PersonaMemory
from .rag import RagMemory
from .records import (
    MemoryQuery,
    MemoryRecord,
    derive_fields,
    query_for,
    train_cutoffs,
    train_records,
)

__all__ = [
    "MEMORIES",
    "KGMemory",
    "Memory",
    "MemoryCache",
    "MemoryConfig",
    "MemoryItem",
    "MemoryLeak",
    "MemoryQuery",
    "MemoryRecord",
    "PersonaMemory",
    "RagMemory",
    "build_memory",
    "derive_fields",
    "derived_fields_summary",
    "check_memory",
    "get_memory",
    "memory_context",
    "memory_names",
    "query_for",
    "register_memory",
    "train_cutoffs",
    "train_records",
]

for _kind in (RagMemory, KGMemory, PersonaMemory):
    register_memory(_kind)
del _kind


def memory_names() -> tuple[str, ...]:
    """Names accepted by ``proagent eval --memory`` (``none``, then the kinds registered so far:
    read from :data:`MEMORIES` at each call, so a kind registered later is one too)."""
    return ("none", *MEMORIES)


def build_memory(
    kind: str,
    events: Iterable[Event],
    samples: Iterable[Sample],
    config: MemoryConfig = MemoryConfig(),
    cache: MemoryCache | None = None,
) -> Memory:
    """Build one kind of memory for every user of ``samples``.

    Args:
        kind: ``rag``, ``kg`` or ``persona``.
        events: All events of the data set (only training-period ones are used).
        samples: All samples, train and test (their split defines each user's
            training period: everything known before the first test moment).
        config: Memory settings.
        cache: Disk cache (default: ``$PROAGENT_MEMORY_CACHE`` or ``~/.cache/proagent/memory``).

    Raises:
        proagent.errors.UsageError: unknown kind (:func:`check_memory`).
    """
    cls = get_memory(kind)
    cutoffs = train_cutoffs(samples)
    return cls(train_records(events, cutoffs), config, cache).build()


def derived_fields_summary(memory: Memory) -> dict[str, int]:
    """How many records had each field derived from text (for reports)."""
    out: dict[str, int] = {}
    for recs in memory.records.values():
        for r in recs:
            for f in r.derived:
                out[f] = out.get(f, 0) + 1
    out["records"] = sum(len(r) for r in memory.records.values())
    return out
