"""`proagent live` and `proagent capture` refuse bad input before they create anything.

Each case asserts the exit code, exactly one ``Error:`` line naming the file or option, no
traceback, and that nothing was created or changed (no folder, no lock file, no feedback.db).
There is no X display in a test process (``DISPLAY`` is removed), as on a server.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from refusal import refused

from proagent.cli import cli
from proagent.errors import DataError


def _session(n: int = 6) -> list[dict]:
    return [
        {
            "observation": {
                "time": str(1717377997.0 + 20 * i),
                "event": f"The user switched to 'Visual Studio Code', step {i}.",
            },
            "agent_response": {"candidate_task": [f"Offer to refactor step {i}"]},
            "task_status": i % 3 == 2,
        }
        for i in range(n)
    ]


@pytest.fixture
def w(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE"):
        monkeypatch.delenv(var, raising=False)
    for var in [v for v in os.environ if v.startswith("PROAGENT_") and v != "PROAGENT_ANSWER_CACHE"]:
        monkeypatch.delenv(var)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.db").write_bytes(bytes(range(256)) * 100)  # random-looking bytes, not SQLite
    (tmp_path / "pb").mkdir()
    (tmp_path / "pb" / "code_1.json").write_text(json.dumps(_session()), "utf-8")
    (tmp_path / "junk.json").write_bytes(b"\x00\xff not json" * 50)
    (tmp_path / "empty").mkdir()  # not a decider folder
    (tmp_path / "yes.txt").write_text("".join(f"code_1:{i}\n" for i in range(6)), "utf-8")
    return tmp_path


def _refused(w: Path, argv: list[str], code: int, needle: str) -> str:
    return refused(w, argv, code, needle, quiet=False)


NONE = ["--model", "none", "--duration", "2s"]


@pytest.mark.parametrize("decider", [["--yes-at", "yes.txt"], ["--decider", "empty"]])
def test_live_watch_not_a_database_creates_no_feedback_db(w: Path, decider: list[str]) -> None:
    out = _refused(w, ["live", "--watch", "data/x.db", *decider, *NONE], 1, "x.db")
    assert "not a SQLite database" in out and "watching" not in out
    assert not (w / "data" / "feedback.db").exists()


def test_live_watch_foreign_database_and_folder_without_one(w: Path) -> None:
    import sqlite3

    con = sqlite3.connect(w / "data" / "other.db")
    con.execute("CREATE TABLE notes (x)")
    con.commit()
    con.close()
    _refused(
        w, ["live", "--watch", "data/other.db", "--yes-at", "yes.txt", *NONE], 1, "not an activity log proagent reads"
    )
    _refused(w, ["live", "--watch", "empty", "--yes-at", "yes.txt", *NONE], 1, "empty")


def test_live_capture_without_display_is_one_line_and_no_folder(w: Path) -> None:
    out = _refused(w, ["live", "--capture", "cap", "--yes-at", "yes.txt", *NONE], 1, "DISPLAY")
    assert "--capture" in out
    assert not (w / "cap").exists()


@pytest.mark.parametrize(
    ("extra", "code", "needle"),
    [
        ([], 1, "DISPLAY"),
        (["--interval", "0"], 2, "--interval"),
        (["--max-gb", "-1"], 2, "--max-gb"),
        (["--max-days", "0"], 2, "--max-days"),
        (["--ocr-interval", "0"], 2, "--ocr-interval"),
        (["--exclude-title", "("], 2, "--exclude-title"),
        (["--idle", "0"], 2, "--idle"),
        (["--duration", "soon"], 2, "--duration"),
    ],
)
def test_capture_refuses_before_creating_its_folder(w: Path, extra: list[str], code: int, needle: str) -> None:
    _refused(w, ["capture", "--out", "cap", "--duration", "5s", *extra], code, needle)
    assert not (w / "cap").exists()


def test_live_unusable_decider_folder_is_a_bad_input_as_in_eval(w: Path) -> None:
    out = _refused(w, ["live", "--replay", "pb", "--decider", "empty", "--out", "o", "--model", "none"], 1, "empty")
    assert "--decider" in out and not (w / "o").exists()
    eval_out = _refused(w, ["eval", "--data", "pb", "--decider", "empty", "--model", "mockllm/model"], 1, "empty")
    assert "not a decider folder" in eval_out


def test_ablate_unusable_decider_folder_is_exit_1_missing_is_2(w: Path) -> None:
    base = ["ablate", "--data", "pb", "--models", "mockllm/model", "--out", "abl"]
    _refused(w, [*base, "--deciders", "none,empty"], 1, "--deciders")
    _refused(w, [*base, "--deciders", "none,nope"], 2, "--deciders")
    assert not (w / "abl").exists()


def test_live_replay_unreadable_data_makes_no_out_folder(w: Path) -> None:
    _refused(
        w,
        ["live", "--replay", "junk.json", "--yes-at", "yes.txt", "--out", "o", "--model", "none", "--speed", "0"],
        1,
        "junk.json",
    )
    assert not (w / "o").exists()


def test_live_bad_duration_is_refused_before_watching(w: Path) -> None:
    import shutil

    from proagent.synth.generator import SynthConfig, generate

    generate(w / "lt", SynthConfig(users=1, days=1, seed=1))
    db = next((w / "lt").rglob("*.db"))
    shutil.copy(db, w / "data" / "good.db")
    out = _refused(
        w,
        ["live", "--watch", "data/good.db", "--yes-at", "yes.txt", "--model", "none", "--duration", "soon"],
        2,
        "--duration",
    )
    assert "watching" not in out


def test_replay_offers_name_no_unknown_app(w: Path) -> None:
    r = CliRunner().invoke(
        cli,
        [
            "live",
            "--replay",
            "pb",
            "--yes-at",
            "yes.txt",
            "--out",
            "o",
            "--model",
            "none",
            "--speed",
            "0",
            "--notify",
            "terminal",
            "--max-per-hour",
            "100",
            "--cooldown",
            "0",
        ],
    )
    assert r.exit_code == 0, r.output
    offers = [ln for ln in r.output.splitlines() if ln.startswith("offer ")]
    assert offers, r.output
    assert all(" in ?" not in ln for ln in offers), offers
    assert "switched to 'Visual Studio Code'" in offers[0]


def test_run_watch_refuses_a_bad_database_before_making_its_folder(w: Path) -> None:
    from proagent.live import LiveOptions, ScriptedDecider, run_watch

    with pytest.raises(DataError, match="not a SQLite database"):
        run_watch(
            w / "data" / "x.db", w / "fb", ScriptedDecider(yes=set()), LiveOptions(notify=("none",)), duration=0.1
        )
    assert not (w / "fb").exists()


def test_start_capture_that_refuses_is_one_error_with_its_reason(w: Path) -> None:
    from proagent.live import start_capture

    with pytest.raises(DataError) as e:
        start_capture(w / "cap", ["--interval", "0"], wait=60)
    msg = str(e.value)
    assert "exited (code 2)" in msg and "--interval: must be > 0" in msg and "\n" not in msg
    assert not (w / "cap").exists()


def _capture(folder: Path) -> Path:
    """A capture folder with one closed event (the recorder's own Store)."""
    from datetime import datetime, timedelta

    from proagent.capture import Store

    st = Store(folder)
    t = datetime.now() - timedelta(minutes=2)
    st.close_event(st.open_event("xterm", "pytest -q", t), t + timedelta(seconds=30))
    st.close()
    return folder


def test_live_refused_after_its_lock_leaves_no_lock(w: Path) -> None:
    """A refusal after live took the run lock on --out (a damaged feedback.db there) left
    ``.proagent.lock`` beside it, and a traceback: now one line and the folder as it was."""
    _capture(w / "cap")
    (w / "out").mkdir()
    (w / "out" / "feedback.db").write_bytes(b"not a database\n")
    out = _refused(
        w,
        [
            "live",
            "--watch",
            "cap",
            "--out",
            "out",
            "--yes-at",
            "yes.txt",
            "--model",
            "none",
            "--notify",
            "none",
            "--duration",
            "2s",
        ],
        1,
        "feedback.db",
    )
    assert "not a usable feedback.db" in out and "move it away or choose another --out" in out
    assert sorted(p.name for p in (w / "out").iterdir()) == ["feedback.db"]


def test_live_page_on_a_taken_port_is_refused_before_anything_is_made(w: Path) -> None:
    """``--notify page --port P`` with P taken was an OSError traceback after feedback.db and the
    lock file were made in a new --out folder."""
    import socket

    _capture(w / "cap")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        _refused(
            w,
            [
                "live",
                "--watch",
                "cap",
                "--out",
                "out",
                "--yes-at",
                "yes.txt",
                "--model",
                "none",
                "--notify",
                "page",
                "--port",
                str(port),
                "--duration",
                "2s",
            ],
            2,
            f"{port}: cannot listen on 127.0.0.1",
        )
    assert not (w / "out").exists()


def test_the_lock_file_of_a_failed_block_is_removed_beside_other_files(tmp_path: Path) -> None:
    from proagent.io import LOCK_NAME, folder_lock

    (tmp_path / "keep.txt").write_text("kept", "utf-8")
    with pytest.raises(RuntimeError), folder_lock(tmp_path):
        raise RuntimeError("refused")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]
    with folder_lock(tmp_path):  # a run that ends well keeps its (emptied) lock file, as before
        pass
    assert (tmp_path / LOCK_NAME).read_text() == ""
