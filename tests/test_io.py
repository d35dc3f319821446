"""The one atomic writer: content lands whole or not at all."""

from __future__ import annotations

import json
import math
import os
import re
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


# --------------------------------------------------------------------------- JSON in model text

from proagent.jsontext import first_json_object, json_objects  # noqa: E402


def test_json_objects_in_prose_fences_and_python_literals():
    text = 'Sure.\n```json\n{"a": 1, "b": [1, 2,],}\n```\nand {\'c\': True, "d": null} then {broken'
    found = list(json_objects(text))
    assert [f.value for f in found[:2]] == [{"a": 1, "b": [1, 2]}, {"c": True, "d": None}]
    assert [f.how for f in found[:2]] == ["json-repair", "json-repair"]
    assert text[found[0].start] == "{" and text[found[0].end - 1] == "}"


def test_cut_off_object_is_repaired_once_and_ends_the_scan():
    found = list(json_objects('x {"target": "T", "sub_target": ["a", "b'))
    assert len(found) == 1 and found[0].how == "json-repair"
    assert found[0].value == {"target": "T", "sub_target": ["a", "b"]}


def test_nested_object_found_and_apostrophes_are_not_quotes():
    assert first_json_object("the user's answer: {\"need_help\": true, \"q\": \"it's\"}") == {
        "need_help": True,
        "q": "it's",
    }
    assert first_json_object("no json here") is None


def test_pathological_nesting_is_cheap_and_empty():
    assert list(json_objects("{" * 5000)) == []
    assert list(json_objects('{"x": ' + "[" * 3000)) == []


# --------------------------------------------------------------------------- output folder check


def test_check_output_folder_accepts_new_empty_and_earlier_outputs(tmp_path):
    from proagent.io import LOCK_NAME, check_output_folder

    check_output_folder(tmp_path / "new" / "out", marker="m.json", run="x")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / LOCK_NAME).write_text("1")  # the run lock's file does not count
    check_output_folder(tmp_path / "empty", marker="m.json", run="x")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "m.json").write_text("{}")
    (tmp_path / "old" / "data.db").write_text("")
    check_output_folder(tmp_path / "old", marker="m.json", run="x", data=tmp_path / "in", writable_parent=True)


def test_check_output_folder_refusals(tmp_path):
    from proagent.errors import DataError
    from proagent.io import check_output_folder

    data = tmp_path / "in"
    data.mkdir()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    (tmp_path / "afile").write_text("")
    cases = [
        (tmp_path / "mine", "not the output of an earlier x run (no m.json)"),
        (tmp_path / "afile", "not the output of an earlier x run"),
        (tmp_path, "would replace the data itself"),
        (data / "sub", "is inside the data folder"),
        (tmp_path / "afile" / "out", "cannot be written"),
    ]
    for out, needle in cases:
        with pytest.raises(DataError, match=re.escape(needle)) as e:
            check_output_folder(out, marker="m.json", run="x", data=data, data_name="the data", writable_parent=True)
        assert e.value.path == str(out)
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"


def test_to_jsonable_reads_records_and_lazy_sequences(tmp_path):
    """A Sample read from a LifeTrace DB holds its screenshots in a lazy sequence (not a
    tuple); it still becomes plain JSON, as the live agent's feedback.db stores it."""
    import json
    from collections.abc import Sequence
    from dataclasses import dataclass
    from pathlib import Path

    from proagent.io import to_jsonable

    class Lazy(Sequence):
        def __init__(self, items):
            self._items = items

        def __len__(self):
            return len(self._items)

        def __getitem__(self, i):
            return self._items[i]

    @dataclass
    class Shot:
        id: int
        path: Path

    out = to_jsonable({"shots": Lazy([Shot(1, Path("a.png")), Shot(2, Path("b.png"))]), "name": "x"})
    assert out == {"shots": [{"id": 1, "path": "a.png"}, {"id": 2, "path": "b.png"}], "name": "x"}
    json.dumps(out)


def test_built_aside_renames_a_finished_file_over_the_target(tmp_path):
    """A SQLite database built at the temporary path replaces the old file whole, with the mode
    asked for; nothing is left beside it."""
    import sqlite3

    from proagent.io import built_aside

    target = tmp_path / "sub" / "x.db"
    for value in (1, 2):
        with built_aside(target, mode=0o640) as tmp:
            assert tmp.parent == target.parent and tmp.exists() and tmp != target
            con = sqlite3.connect(tmp)
            con.execute("CREATE TABLE t (v)")
            con.execute("INSERT INTO t VALUES (?)", (value,))
            con.commit()
            con.close()
        assert sqlite3.connect(target).execute("SELECT v FROM t").fetchone() == (value,)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert sorted(p.name for p in target.parent.iterdir()) == ["x.db"]


def test_built_aside_keeps_the_old_file_when_the_build_fails(tmp_path):
    from proagent.io import built_aside

    target = tmp_path / "model.gguf"
    target.write_bytes(b"good")
    with pytest.raises(ValueError, match="bad digest"):
        with built_aside(target) as tmp:
            tmp.write_bytes(b"half")
            raise ValueError("bad digest")
    assert target.read_bytes() == b"good" and [p.name for p in tmp_path.iterdir()] == ["model.gguf"]
    with built_aside(target) as tmp:  # no mode: private, as mkstemp made it
        tmp.write_bytes(b"new")
    assert target.read_bytes() == b"new" and stat.S_IMODE(os.stat(target).st_mode) == 0o600


def test_the_run_lock_is_filelocks_and_private(tmp_path) -> None:  # noqa: ANN001
    """``folder_lock`` is a ``filelock.FileLock`` (issue 38 item 3: it was ``fcntl`` alone, so the
    Windows capture platform could not import io): any FileLock on the same file is refused while
    it is held; the file is 0600 and holds the holder's pid."""
    import os
    import stat

    import filelock
    import pytest

    from proagent.io import LOCK_NAME, folder_lock

    (tmp_path / "run" / "x").parent.mkdir()
    (tmp_path / "run" / "x").write_text("kept")
    with folder_lock(tmp_path / "run") as stale:
        assert stale is None
        path = tmp_path / "run" / LOCK_NAME
        assert path.read_text() == f"{os.getpid()}\n" and stat.S_IMODE(path.stat().st_mode) == 0o600
        with pytest.raises(filelock.Timeout):
            filelock.FileLock(path, blocking=False).acquire()
    assert path.read_text() == ""  # emptied and kept: the folder holds more than the lock
    path.write_text("999999\n")  # a pid left by a process that died
    with folder_lock(tmp_path / "run") as stale:
        assert stale == 999999
