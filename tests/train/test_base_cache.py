"""The disk cache of dequantised GGUF bases (proagent.train._base_cache): a tiny random Llama stands
in for the dequantised model (the real one's weights are checked end to end by the GGUF round-trip
test in test_finetune.py, which loads SmolLM2 through the cache)."""

from __future__ import annotations

import importlib.util
import stat
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("torch", "transformers", "tokenizers")),
    reason="needs the train extra",
)


def _tiny() -> tuple[object, object]:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=8, hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2)
    vocab = {w: i for i, w in enumerate(["<unk>", "<eos>", "a", "b", "c", "d", "e", "f"])}
    raw = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="<unk>", eos_token="<eos>")
    return LlamaForCausalLM(cfg), tok


def test_a_stored_base_loads_back_equal_private_and_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from proagent.train import _base_cache

    monkeypatch.setenv("PROAGENT_BASE_CACHE", str(tmp_path / "bases"))
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + bytes(60))
    folder = _base_cache.cache_folder(gguf)
    assert folder is not None and folder.parent == tmp_path / "bases"
    assert _base_cache.load_cached(folder) is None  # nothing stored yet
    model, tok = _tiny()
    _base_cache.store(folder, model, tok)
    got = _base_cache.load_cached(folder)
    assert got is not None
    back, back_tok = got
    want = model.state_dict()  # type: ignore[attr-defined]
    assert all(torch.equal(want[k], v) for k, v in back.state_dict().items()) and set(want) == set(back.state_dict())
    assert back_tok("a b f")["input_ids"] == tok("a b f")["input_ids"] == [2, 3, 7]  # type: ignore[operator]
    # 0700 folders, 0600 files, no temporary folder left behind
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]
    for p in [folder.parent, folder, *folder.iterdir()]:
        assert stat.S_IMODE(p.stat().st_mode) == (0o700 if p.is_dir() else 0o600), p
    # a second writer of the same base leaves the first one's folder as it was
    _base_cache.store(folder, *_tiny())
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]
    # a damaged folder is removed and counts as a miss (load_base then reads the GGUF again)
    (folder / "model.safetensors").write_bytes(b"not weights")
    assert _base_cache.load_cached(folder) is None and not folder.exists()


def test_the_key_follows_the_file_and_the_size_rule_and_off_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from proagent.train import _base_cache

    monkeypatch.setenv("PROAGENT_BASE_CACHE", str(tmp_path / "bases"))
    a, b = tmp_path / "a.gguf", tmp_path / "b.gguf"
    a.write_bytes(b"GGUF one")
    b.write_bytes(b"GGUF two")
    assert _base_cache.cache_folder(a) != _base_cache.cache_folder(b)
    assert _base_cache.cache_folder(a) == _base_cache.cache_folder(tmp_path / "a.gguf")
    monkeypatch.setattr(_base_cache, "MAX_GGUF_BYTES", 4)
    assert _base_cache.cache_folder(a) is None  # larger than the rule: loaded from the GGUF each time
    monkeypatch.setattr(_base_cache, "MAX_GGUF_BYTES", 300_000_000)
    for off in ("off", "0", "none"):
        monkeypatch.setenv("PROAGENT_BASE_CACHE", off)
        assert _base_cache.cache_folder(a) is None
    monkeypatch.delenv("PROAGENT_BASE_CACHE")
    assert _base_cache.base_cache_root() == Path.home() / ".cache" / "proagent" / "bases"
