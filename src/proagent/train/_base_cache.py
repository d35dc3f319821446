"""A disk cache of small GGUF bases dequantised to 32-bit floats, for :func:`proagent.train.finetune.load_base`.

transformers' GGUF loader (``from_pretrained(..., gguf_file=...)``) is slow on CPU: for
SmolLM2-135M (a 98 MB Q4_1 file) it takes about 35 s of CPU (profiled with cProfile,
transformers 5.23, gguf 0.17: it parses the GGUF header three times, once each for the
config, the tokenizer and the weights, about 6 s a time, rebuilds gguf's tensor-name map
once per tensor, 397 times, about 14 s, and dequantises in numpy, about 5 s). The same
model saved once with transformers' own ``save_pretrained`` (safetensors weights,
``tokenizer.json``, ``config.json``) loads again with ``from_pretrained`` in about 2 s, so
the second and later fine-tuning runs on one base (a benchmark's real and synthetic runs,
the test suite's runs) skip the slow path.

* **Where**: ``$PROAGENT_BASE_CACHE`` (``off``/``0``/``false``/``no``/``none``: no cache) or
  ``~/.cache/proagent/bases``; one folder per base named by the GGUF file's SHA-256 and the
  transformers version that dequantised it (a newer loader never reads an older one's
  output). Folders are 0700 and files 0600, like the models beside it.
* **Size rule**: only GGUF files of at most :data:`MAX_GGUF_BYTES` (300 MB) are cached:
  SmolLM2-135M (98 MB, 0.54 GB of 32-bit weights) and gemma3-270m (253 MB, 1.07 GB) are;
  Qwen2.5-Coder-1.5B (1.1 GB, 6.2 GB of 32-bit weights) is not, which would cost more disk
  than the 2-3 minutes its load takes are worth.
* **Written atomically**: into a temporary sibling folder, renamed into place when complete;
  a reader never sees a half-written folder, and of two writers of one base the first
  rename wins. A folder that no longer loads is removed and the base is loaded from its
  GGUF file again.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..io import swap_in

__all__ = ["MAX_GGUF_BYTES", "base_cache_root", "cache_folder", "load_cached", "store"]

_ENV = "PROAGENT_BASE_CACHE"
MAX_GGUF_BYTES = 300_000_000
"""GGUF files up to this size (bytes) are cached dequantised (see the module docstring)."""


def base_cache_root() -> Path | None:
    """``$PROAGENT_BASE_CACHE`` (``off``/``0``/``false``/``no``/``none``: ``None``) or ``~/.cache/proagent/bases``."""
    env = os.environ.get(_ENV, "").strip()
    if env.lower() in {"off", "0", "false", "no", "none"}:
        return None
    return Path(env).expanduser() if env else Path.home() / ".cache" / "proagent" / "bases"


def cache_folder(gguf: Path) -> Path | None:
    """The cache folder of ``gguf`` (present or not), or ``None`` when the cache is off or the
    file is larger than :data:`MAX_GGUF_BYTES`. Hashes the file (about 0.3 s per 100 MB)."""
    root = base_cache_root()
    if root is None or gguf.stat().st_size > MAX_GGUF_BYTES:
        return None
    import transformers

    with gguf.open("rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    return root / f"{digest[:32]}-transformers-{transformers.__version__}"


def load_cached(folder: Path) -> tuple[Any, Any] | None:
    """``(model, tokenizer)`` from a cache folder in 32-bit floats, or ``None`` when there is
    no such folder or it no longer loads (then it is removed)."""
    if not (folder / "config.json").is_file():
        return None
    from safetensors import SafetensorError
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(str(folder))
        model = AutoModelForCausalLM.from_pretrained(str(folder), dtype="float32")
    except (OSError, ValueError, KeyError, SafetensorError):  # damaged or foreign files: load from the GGUF again
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return model, tok


def store(folder: Path, model: Any, tok: Any) -> None:
    """Save ``model`` and ``tok`` as ``folder`` (transformers' ``save_pretrained``), atomically;
    a full disk or an unwritable root leaves no folder behind and raises nothing (the cache
    is only a speed-up)."""
    try:
        folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".part-", dir=folder.parent))  # 0700
    except OSError:
        return
    try:
        model.save_pretrained(str(tmp), safe_serialization=True)
        tok.save_pretrained(str(tmp))
        for path in tmp.rglob("*"):
            path.chmod(0o700 if path.is_dir() else 0o600)
        if not folder.exists():  # another writer's whole folder stays (the first one wins)
            swap_in(tmp, folder)
    except OSError:
        pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
