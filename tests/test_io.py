"""The one atomic writer: content lands whole or not at all."""

from __future__ import annotations

import json
import math
import os
import stat

import numpy as np
import pytest

from proagent.io import to_jsonable, write_atomic, write_json_atomic


def test_write_json_atomic_strict_json_and_mode(tmp_path):
    p = write_json_atomic(tmp_path / "sub" / "r.json", {"a": np.float32(0.5), "b": [math.nan], "c": (1, 2)}, mode=0o600)
    text = p.read_text("utf-8")
    assert json.loads(text) == {"a": 0.5, "b": [None], "c": [1, 2]}
    assert text.endswith("\n")
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o600


def test_nan_error_policy_keeps_old_file(tmp_path):
    p = tmp_path / "r.json"
    write_json_atomic(p, {"ok": 1})
    with pytest.raises(ValueError, match="non-finite"):
        write_json_atomic(p, {"bad": float("inf")}, nan="error")
    assert json.loads(p.read_text()) == {"ok": 1}


def test_failed_write_leaves_old_file_and_no_temp(tmp_path, monkeypatch):
    p = tmp_path / "f.bin"
    write_atomic(p, b"good")

    def boom(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError):
        write_atomic(p, b"partial")
    assert p.read_bytes() == b"good"
    assert [x.name for x in tmp_path.iterdir()] == ["f.bin"]


def test_to_jsonable_numpy_array():
    assert to_jsonable({"x": np.arange(3)}) == {"x": [0, 1, 2]}
