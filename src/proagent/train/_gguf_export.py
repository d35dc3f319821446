"""Write a transformers causal LM back to GGUF so llama.cpp (``local//path.gguf``) runs it.

The tokenizer, chat template and hyper-parameter metadata are copied from the GGUF
file the model was loaded from (transformers' GGUF loader dequantised it); only the
weights are new. Tensor names are mapped from transformers' names to GGUF names
with the ``gguf`` package's tensor name map (``gguf.get_tensor_name_map``).

llama.cpp's converter (``convert_hf_to_gguf.py``, ``LlamaModel.permute``) reorders the
rows of ``attn_q`` and ``attn_k`` of the Llama architecture for its rotary
embedding, and transformers' loader undoes that on load
(``LlamaTensorProcessor._reverse_permute_weights``); :func:`permute_qk` re-applies
it, so a GGUF -> transformers -> GGUF round trip gives the original layout.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataError
from ..io import write_atomic

__all__ = ["GGUF_TYPES", "export_gguf", "permute_qk"]

GGUF_TYPES = ("f16", "f32", "q8_0")
"""Weight types the exporter writes: 16- or 32-bit floats, or 8-bit blocks (Q8_0).
1-D tensors (norms, biases) are always written as 32-bit floats."""

_PERMUTED_ARCHS = {"llama"}
"""Architectures whose attention q/k rows llama.cpp's converter permutes."""


def permute_qk(weights: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's ``LlamaModel.permute``: the inverse of transformers'
    ``_reverse_permute_weights``. ``weights`` has shape (n_head * head_dim, d);
    ``n_head`` is the query head count for ``attn_q``, the key/value head count
    for ``attn_k``."""
    return (
        weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])
        .swapaxes(1, 2)
        .reshape(weights.shape)
    )


def _field(reader: Any, key: str) -> Any:
    f = reader.fields.get(key)
    return f.contents() if f is not None else None


def export_gguf(model: Any, source_gguf: str | Path, out: str | Path, *, dtype: str = "f16") -> dict[str, Any]:
    """Write ``model``'s weights as a GGUF file with ``source_gguf``'s metadata.

    Args:
        model: a transformers causal LM (merged: no LoRA wrappers) of the same
            architecture and shape as ``source_gguf``.
        source_gguf: the GGUF the model was loaded from (tokenizer, chat template,
            hyper-parameters and tensor list come from it).
        out: target file; written through :func:`proagent.io.write_atomic`, so an
            interrupted export leaves no half file under that name.
        dtype: ``f16`` (default), ``f32`` or ``q8_0`` for 2-D weights.

    Returns:
        ``{"path", "architecture", "tensors", "bytes", "dtype"}``.

    Raises:
        proagent.errors.DataError: unknown ``dtype``; an architecture the tensor name map lacks;
            a tensor of the source that the model has no weight for, or of another shape.
    """
    import gguf
    import torch

    if dtype not in GGUF_TYPES:
        raise DataError(None, f"GGUF type {dtype!r}: choose from {', '.join(GGUF_TYPES)}")
    source_gguf, out = Path(source_gguf), Path(out)
    reader = gguf.GGUFReader(str(source_gguf))
    arch_name = str(_field(reader, "general.architecture"))
    arch = next((a for a, n in gguf.MODEL_ARCH_NAMES.items() if n == arch_name), None)
    if arch is None:
        raise DataError(source_gguf, f"architecture {arch_name!r} is not in gguf's tensor name map")
    n_blocks = int(_field(reader, f"{arch_name}.block_count"))
    n_head = int(_field(reader, f"{arch_name}.attention.head_count"))
    n_head_kv = int(_field(reader, f"{arch_name}.attention.head_count_kv") or n_head)
    name_map = gguf.get_tensor_name_map(arch, n_blocks)

    state = model.state_dict()
    by_gguf: dict[str, str] = {}
    for key in state:
        name = name_map.get_name(key, try_suffixes=(".weight", ".bias"))
        if name is not None:
            by_gguf.setdefault(name, key)

    file_type = {
        "f16": gguf.LlamaFileType.MOSTLY_F16,
        "f32": gguf.LlamaFileType.ALL_F32,
        "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
    }[dtype]
    out.parent.mkdir(parents=True, exist_ok=True)
    scratch = out.with_name(f".{out.name}.writing")
    writer = gguf.GGUFWriter(str(scratch), arch_name)
    try:
        _copy_metadata(gguf, reader, writer, int(file_type))
        for t in reader.tensors:
            key = by_gguf.get(t.name)
            if key is None:
                if t.name.startswith("rope_freqs"):  # computed, not trained: copy as it was
                    writer.add_tensor(t.name, np.array(t.data), raw_dtype=t.tensor_type)
                    continue
                raise DataError(source_gguf, f"tensor {t.name} has no weight in the model")
            w = state[key].detach().to(torch.float32).cpu().numpy()
            want = tuple(int(x) for x in reversed(t.shape.tolist()))  # GGUF lists dims innermost first
            if w.shape != want:
                raise DataError(None, f"{t.name}: model weight {key} has shape {w.shape}, the source GGUF {want}")
            if arch_name in _PERMUTED_ARCHS and t.name.endswith("attn_q.weight"):
                w = permute_qk(w, n_head)
            elif arch_name in _PERMUTED_ARCHS and t.name.endswith("attn_k.weight"):
                w = permute_qk(w, n_head_kv)
            _add_weight(gguf, writer, t.name, w, dtype)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        write_atomic(out, scratch.read_bytes())
    finally:
        writer.close()
        if scratch.exists():
            os.unlink(scratch)
    return {
        "path": str(out),
        "architecture": arch_name,
        "tensors": len(reader.tensors),
        "bytes": out.stat().st_size,
        "dtype": dtype,
    }


def _copy_metadata(gguf: Any, reader: Any, writer: Any, file_type: int) -> None:
    """Every key-value field of the source but its architecture (the writer's own) and GGUF's
    bookkeeping, with ``general.file_type`` set to ``file_type`` (added when the source lacks it)."""
    for field in reader.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue
        if field.name == gguf.Keys.General.FILE_TYPE:
            writer.add_file_type(file_type)
            continue
        vtype = field.types[0]
        sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), vtype, sub_type=sub)
    if gguf.Keys.General.FILE_TYPE not in reader.fields:
        writer.add_file_type(file_type)


def _add_weight(gguf: Any, writer: Any, name: str, w: np.ndarray, dtype: str) -> None:
    """Add tensor ``name`` (float32 ``w``): 1-D tensors and ``f32`` as float32, else as ``dtype``
    (float16, or Q8_0 blocks)."""
    if w.ndim == 1 or dtype == "f32":
        writer.add_tensor(name, np.ascontiguousarray(w, dtype=np.float32))
    elif dtype == "f16":
        writer.add_tensor(name, np.ascontiguousarray(w, dtype=np.float16))
    else:
        q = gguf.quants.quantize(np.ascontiguousarray(w, dtype=np.float32), gguf.GGMLQuantizationType.Q8_0)
        writer.add_tensor(name, q, raw_shape=q.shape, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
