"""The permanent bad-input suite: every command, fed what a new user might feed it.

Each row of :data:`CASES` is one bad input: the command line (built inside a fresh copy of a
workspace holding good data and a few bad files), the exit code and a text the error must
name (the file or the option). Every case asserts

* the exit code (2: click usage errors; 1: refused input; never a crash),
* exactly one ``Error:`` line, naming the file or option, and no traceback,
* no file that existed before the command was changed, created or removed (hashes of the
  whole workspace before and after; new folders are allowed only where listed).

To add a command (train, capture, curate, review, annotate...), append rows to
:data:`CASES`: ``Case(id, argv, needle)`` where ``argv`` may use ``{w}`` for the workspace
path; ``setup`` prepares extra bad files (it gets the workspace path).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from proagent.cli import cli


def session(n: int = 6, t0: float = 1717377997.0, **override) -> list[dict]:
    """A valid ProactiveBench session of ``n`` steps (one help-needed moment every third)."""
    steps = [
        {
            "observation": {
                "time": str(t0 + 20 * i),
                "event": f"The user edits main.py in Visual Studio Code, step {i}.",
            },
            "agent_response": {"candidate_task": [f"Offer to refactor step {i}"]},
            "task_status": i % 3 == 2,
        }
        for i in range(n)
    ]
    for k, v in override.items():
        steps[0]["observation"][k] = v
    return steps


def _write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), "utf-8")
    return path


@pytest.fixture(scope="session")
def template(tmp_path_factory) -> Path:
    """Good data every case starts from: ProactiveBench sessions, a LifeTrace participant
    folder (proagent synth), annotations, ProactiveEval environments, a fetch mirror."""
    from proagent.sources.fetch import PROACTIVEBENCH_FILES
    from proagent.synth.generator import SynthConfig, generate

    w = tmp_path_factory.mktemp("workspace")
    for name in ("code_1", "writing_1"):
        _write(w / "pb" / f"{name}.json", session())
    generate(w / "lt", SynthConfig(users=1, days=1, seed=1))
    _write(
        w / "envs.jsonl",
        json.dumps(
            {
                "id": "rec-001",
                "domain": "recommendation",
                "topic": "hobbies/cycling",
                "environment": {
                    "user_information": "A commuter whose tyre went flat twice.",
                    "trigger_factor": "It is Saturday morning.",
                },
                "target": "Recommend puncture-resistant tyres.",
                "sub_target": ["Ask about the route", "Suggest tyres"],
            }
        )
        + "\n",
    )
    _write(w / "human.csv", "id,human\na,8\nb,3\n")
    mirror = w / "mirror"
    for name in PROACTIVEBENCH_FILES:
        _write(mirror / name, "not the real file")
    return w


@pytest.fixture
def workspace(template, tmp_path, monkeypatch) -> Path:
    w = tmp_path / "w"
    shutil.copytree(template, w, symlinks=True)
    monkeypatch.chdir(w)
    for var in [v for v in os.environ if v.startswith("PROAGENT_") and v != "PROAGENT_ANSWER_CACHE"]:
        monkeypatch.delenv(var)
    for var in ("DISPLAY", "WAYLAND_DISPLAY"):  # capture and live must never record the developer's screen here
        monkeypatch.delenv(var, raising=False)
    return w


def tree_digest(root: Path) -> dict[str, str]:
    """Path -> SHA-256 (or link target / 'fifo') of everything under ``root``."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            out[rel] = "link:" + os.readlink(p)
        elif p.is_fifo():
            out[rel] = "fifo"
        elif p.is_file():
            try:
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
            except PermissionError:  # an unreadable file of a case: its size and time stand in
                st = p.stat()
                out[rel] = f"unreadable:{st.st_size}:{st.st_mtime_ns}"
    return out


# ------------------------------------------------------------------ bad files, made per case


def nested_session(w: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    text = json.dumps(session())
    _write(w / "bad" / "nested.json", text.replace('"Offer to refactor step 0"', deep, 1))


def fifo(w: Path) -> None:
    (w / "bad").mkdir(exist_ok=True)
    os.mkfifo(w / "bad" / "pipe")


def same_stem(w: Path) -> None:
    _write(w / "stems" / "a.json", session())
    _write(w / "stems" / "a.JSON", session())


def linked_participant(w: Path) -> None:
    (w / "lt" / "U002").symlink_to(w / "lt" / "U001", target_is_directory=True)


def end_before_start(w: Path) -> None:
    shutil.copytree(w / "lt", w / "lt2")
    con = sqlite3.connect(w / "lt2" / "U001" / "lifetrace_privacy_processed.db")
    con.execute("UPDATE events SET end_time = '2020-01-01 00:00:00' WHERE id = 3")
    con.commit()
    con.close()


def bad_year_db(w: Path) -> None:
    shutil.copytree(w / "lt", w / "lt3")
    con = sqlite3.connect(w / "lt3" / "U001" / "lifetrace_privacy_processed.db")
    con.execute("UPDATE events SET start_time = '9999-12-31 00:00:00' WHERE id = 2")
    con.commit()
    con.close()


def unknown_intention(w: Path) -> None:
    con = sqlite3.connect(w / "lt" / "U001" / "lifetrace_privacy_processed.db")
    eid = con.execute("SELECT id FROM events WHERE is_llm_event = 1 LIMIT 1").fetchone()[0]
    con.close()
    _write(
        w / "ann" / "intentions.jsonl", json.dumps({"user": "U001", "event_id": eid, "user_intention": "Vibes"}) + "\n"
    )


def good_annotations(w: Path) -> None:
    con = sqlite3.connect(w / "lt" / "U001" / "lifetrace_privacy_processed.db")
    eid = con.execute("SELECT id FROM events WHERE is_llm_event = 1 LIMIT 1").fetchone()[0]
    con.close()
    _write(
        w / "ann" / "ok.jsonl", json.dumps({"user": "U001", "event_id": eid, "user_intention": "Translation"}) + "\n"
    )


def corrupt_db(w: Path) -> None:
    _write(w / "bad" / "broken.db", "SQLite format 3\x00" + "garbage" * 100)


def a_file(name: str) -> Callable[[Path], None]:
    return lambda w: _write(w / name, "a file, not a folder")


def foreign_folder(w: Path) -> None:
    _write(w / "mine" / "notes.txt", "keep me")


_HOLDERS: list[subprocess.Popen] = []


def held_log_dir(w: Path) -> None:
    """Another process holds the run lock on w/busy (released when the test ends)."""
    code = (
        "import sys, time\nfrom proagent.io import folder_lock\n"
        "with folder_lock(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(120)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code, str(w / "busy")], stdout=subprocess.PIPE, text=True)
    _HOLDERS.append(p)
    assert p.stdout.readline().strip() == "held"


def unreadable_session(w: Path) -> None:
    _write(w / "locked" / "a.json", session())
    _write(w / "locked" / "b.json", session()).chmod(0)


def read_only_folder(w: Path) -> None:
    (w / "ro").mkdir()
    (w / "ro").chmod(0o555)


def aw_export_cut(w: Path) -> None:
    from activity_fixtures import write_aw_export

    (w / "bad").mkdir(exist_ok=True)
    p = write_aw_export(w / "bad" / "aw-export.json")
    p.write_text(p.read_text()[:-30])


def aw_bad_data(w: Path) -> None:
    from activity_fixtures import write_aw_rust

    (w / "aw").mkdir()
    db = write_aw_rust(w / "aw" / "sqlite.db")
    con = sqlite3.connect(db)
    con.execute("UPDATE events SET data = '[1, 2]' WHERE id = 2")
    con.commit()
    con.close()


def screenpipe_bad_time(w: Path) -> None:
    from activity_fixtures import write_screenpipe

    db = write_screenpipe(w / "sp", video=False)
    con = sqlite3.connect(db)
    con.execute("UPDATE frames SET timestamp = '2026-03-02 10:00:04' WHERE id = 3")  # no UTC offset
    con.commit()
    con.close()


def topics_file(text: bytes) -> Callable[[Path], None]:
    """``dialogue generate``'s reviewed topic tree in w/gen (``text``: its bytes)."""

    def setup(w: Path) -> None:
        (w / "gen").mkdir()
        (w / "gen" / "topics.txt").write_bytes(text)

    return setup


def session_file(name: str, steps: object) -> Callable[[Path], None]:
    return lambda w: _write(w / "bad" / name, steps)


def live_file(name: str, data: str | None) -> Callable[[Path], None]:
    """A live folder ``w/live`` holding a damaged state file ``name`` (``None``: a directory)."""

    def make(w: Path) -> None:
        _write(w / "yes.txt", "")  # a scripted decider that says no everywhere
        if data is None:
            (w / "live" / name).mkdir(parents=True)
        else:
            _write(w / "live" / name, data)

    return make


@dataclass(frozen=True)
class Case:
    """One bad input."""

    id: str
    """Test id."""
    argv: tuple[str, ...]
    """Command line after ``proagent``; ``{w}`` is the workspace."""
    needle: str
    """Text the one error line must contain (the file or option named)."""
    code: int = 1
    """Expected exit code (2 for click usage errors)."""
    setup: Callable[[Path], None] | None = None
    """Makes the bad files of this case inside the workspace."""
    needs_permissions: bool = False
    """The case relies on file permissions, which do not stop root (skipped as root)."""
    env: tuple[tuple[str, str], ...] = ()
    """Environment variables set for the case (e.g. a model API's key)."""


MOCK = ("--model", "mockllm/model")
LIVE_SCRIPTED = ("live", "--replay", "{w}/pb", "--out", "{w}/live", "--model", "none", "--notify", "none")
LIVE_SCRIPTED += ("--yes-at", "{w}/yes.txt")  # written by live_file: a scripted decider saying no


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


DOWN = f"http://127.0.0.1:{closed_port()}/v1"
"""A model API address whose server is down."""


def yes_file(w: Path) -> None:
    _write(w / "yes.txt", "code_1:2\n")


CASES: list[Case] = [
    # ---- eval: data
    Case("eval-missing-data", ("eval", "--data", "{w}/nope.json", *MOCK), "nope.json"),
    Case("eval-dev-null", ("eval", "--data", "/dev/null", *MOCK), "/dev/null"),
    Case("eval-fifo", ("eval", "--data", "{w}/bad/pipe", *MOCK), "pipe", setup=fifo),
    Case(
        "eval-empty-json",
        ("eval", "--data", "{w}/bad/empty.json", *MOCK),
        "empty.json",
        setup=session_file("empty.json", ""),
    ),
    Case(
        "eval-invalid-json",
        ("eval", "--data", "{w}/bad/cut.json", *MOCK),
        "cut.json",
        setup=session_file("cut.json", json.dumps(session())[:-40]),
    ),
    Case("eval-nested-json", ("eval", "--data", "{w}/bad/nested.json", *MOCK), "nested.json", setup=nested_session),
    Case(
        "eval-time-true",
        ("eval", "--data", "{w}/bad/t.json", *MOCK),
        "t.json",
        setup=session_file("t.json", session(time=True)),
    ),
    Case(
        "eval-time-1929",
        ("eval", "--data", "{w}/bad/t.json", *MOCK),
        "observation.time",
        setup=session_file("t.json", session(time="-1293840000")),
    ),
    Case(
        "eval-time-9999",
        ("eval", "--data", "{w}/bad/t.json", *MOCK),
        "observation.time",
        setup=session_file("t.json", session(time="253402300799")),
    ),
    Case(
        "eval-time-nan",
        ("eval", "--data", "{w}/bad/t.json", *MOCK),
        "t.json",
        setup=session_file("t.json", session(time="nan")),
    ),
    Case(
        "eval-no-event",
        ("eval", "--data", "{w}/bad/e.json", *MOCK),
        "observation.event",
        setup=session_file("e.json", session(event="  ")),
    ),
    Case("eval-same-stem", ("eval", "--data", "{w}/stems", *MOCK), "a.json", setup=same_stem),
    Case("eval-linked-participant", ("eval", "--data", "{w}/lt", *MOCK), "same database", setup=linked_participant),
    Case("eval-end-before-start", ("eval", "--data", "{w}/lt2", *MOCK), "end_time", setup=end_before_start),
    Case("eval-year-9999-db", ("eval", "--data", "{w}/lt3", *MOCK), "start_time", setup=bad_year_db),
    Case("eval-corrupt-db", ("eval", "--data", "{w}/bad/broken.db", *MOCK), "broken.db", setup=corrupt_db),
    Case(
        "eval-unreadable-file-in-folder",
        ("eval", "--data", "{w}/locked", *MOCK),
        "b.json",
        setup=unreadable_session,
        needs_permissions=True,
    ),
    Case("eval-empty-folder", ("eval", "--data", "{w}/bad", *MOCK), "bad", setup=lambda w: (w / "bad").mkdir()),
    Case(
        "eval-activitywatch-export-cut",
        ("eval", "--data", "{w}/bad/aw-export.json", *MOCK),
        "aw-export.json",
        setup=aw_export_cut,
    ),
    Case(
        "eval-activitywatch-bad-data", ("eval", "--data", "{w}/aw", *MOCK), "row id 2, column data", setup=aw_bad_data
    ),
    Case(
        "stats-screenpipe-bad-time",
        ("stats", "{w}/sp", "--out", "{w}/st"),
        "row id 3, column timestamp",
        setup=screenpipe_bad_time,
    ),
    # ---- eval: --annotations
    Case(
        "eval-annotation-unknown-intention",
        ("eval", "--data", "{w}/lt", "--annotations", "{w}/ann/intentions.jsonl", *MOCK),
        "intentions.jsonl",
        setup=unknown_intention,
    ),
    Case(
        "eval-annotation-on-proactivebench",
        ("eval", "--data", "{w}/pb", "--annotations", "{w}/ann/ok.jsonl", *MOCK),
        "--annotations",
        setup=good_annotations,
    ),
    Case(
        "eval-annotation-missing",
        ("eval", "--data", "{w}/lt", "--annotations", "{w}/nope.jsonl", *MOCK),
        "--annotations",
        code=2,
    ),
    Case(
        "eval-annotation-not-json",
        ("eval", "--data", "{w}/lt", "--annotations", "{w}/bad/a.jsonl", *MOCK),
        "a.jsonl",
        setup=session_file("a.jsonl", "{not json\n"),
    ),
    # ---- eval: options
    Case("eval-window-zero", ("eval", "--data", "{w}/pb", "--window", "0s", *MOCK), "--window", code=2),
    Case("eval-window-huge", ("eval", "--data", "{w}/pb", "--window", "99h", *MOCK), "--window", code=2),
    # a Ray head node that does not answer: refused within scale._cluster.CONNECT_SECONDS (hung past 120 s)
    Case("eval-ray-nothing-listening", ("eval", "--data", "{w}/pb", "--ray", "127.0.0.1:9", *MOCK), "--ray", code=2),
    Case("eval-ray-no-port", ("eval", "--data", "{w}/pb", "--ray", "somehost", *MOCK), "--ray", code=2),
    Case("eval-limit-zero", ("eval", "--data", "{w}/pb", "--limit", "0", *MOCK), "--limit", code=2),
    Case("eval-seed-negative", ("eval", "--data", "{w}/pb", "--seed", "-1", *MOCK), "--seed", code=2),
    Case(
        "eval-train-fraction",
        ("eval", "--data", "{w}/pb", "--train-fraction", "1.5", *MOCK),
        "--train-fraction",
        code=2,
    ),
    Case(
        "eval-sc-samples-zero",
        ("eval", "--data", "{w}/pb", "--method", "sc", "--sc-samples", "0", *MOCK),
        "--sc-samples",
        code=2,
    ),
    Case("eval-threshold-range", ("eval", "--data", "{w}/pb", "--threshold", "2", *MOCK), "--threshold", code=2),
    Case(
        "eval-threshold-auto-train",
        ("eval", "--data", "{w}/pb", "--threshold", "auto", "--split", "train", *MOCK),
        "--threshold",
        code=2,
    ),
    Case("eval-unknown-model", ("eval", "--data", "{w}/pb", "--model", "nosuch/model"), "--model"),
    Case(
        "eval-model-arg-no-equals", ("eval", "--data", "{w}/pb", "--model-arg", "n_ctx", *MOCK), "--model-arg", code=2
    ),
    Case(
        "eval-n-ctx-16",
        ("eval", "--data", "{w}/pb", "--model", "local/smollm2-135m", "--model-arg", "n_ctx=16"),
        "n_ctx=16",
    ),
    Case(
        "eval-log-dir-file",
        ("eval", "--data", "{w}/pb", "--log-dir", "{w}/afile", *MOCK),
        "--log-dir",
        setup=a_file("afile"),
    ),
    Case(
        "eval-log-dir-in-use",
        ("eval", "--data", "{w}/pb", "--log-dir", "{w}/busy", *MOCK),
        "in use by process",
        setup=held_log_dir,
    ),
    # ---- ablate
    Case(
        "ablate-bad-method",
        ("ablate", "--data", "{w}/pb", "--methods", "zero-shot,magic", "--out", "{w}/ab", *MOCK),
        "--methods",
        code=2,
    ),
    Case(
        "ablate-bad-window",
        ("ablate", "--data", "{w}/pb", "--windows", "1m,soon", "--out", "{w}/ab"),
        "--windows",
        code=2,
    ),
    Case("ablate-missing-data", ("ablate", "--data", "{w}/nope", "--out", "{w}/ab"), "nope"),
    Case(
        "ablate-bad-data",
        ("ablate", "--data", "{w}/bad/t.json", "--out", "{w}/ab"),
        "t.json",
        setup=session_file("t.json", session(time=True)),
    ),
    Case(
        "ablate-out-file",
        ("ablate", "--data", "{w}/pb", "--memory", "none", "--models", "mockllm/model", "--out", "{w}/afile"),
        "--out",
        setup=a_file("afile"),
    ),
    Case(
        "ablate-out-in-use",
        ("ablate", "--data", "{w}/pb", "--memory", "none", "--models", "mockllm/model", "--out", "{w}/busy"),
        "in use by process",
        setup=held_log_dir,
    ),
    Case(
        "ablate-deciders-missing",
        ("ablate", "--data", "{w}/pb", "--deciders", "none,{w}/nope", "--out", "{w}/ab"),
        "--deciders",
        code=2,
    ),
    Case(
        "ablate-deciders-not-a-decider",
        ("ablate", "--data", "{w}/pb", "--deciders", "{w}/pb", "--out", "{w}/ab"),
        "--deciders",
    ),
    # ---- stats
    Case("stats-missing", ("stats", "{w}/nope"), "nope", code=2),
    Case("stats-dev-null", ("stats", "/dev/null", "--out", "{w}/st"), "/dev/null"),
    Case(
        "stats-bad-session",
        ("stats", "{w}/bad/t.json", "--out", "{w}/st"),
        "t.json",
        setup=session_file("t.json", session(time=True)),
    ),
    Case("stats-end-before-start", ("stats", "{w}/lt2", "--out", "{w}/st"), "end_time", setup=end_before_start),
    Case(
        "stats-max-similarity-negative",
        ("stats", "{w}/pb", "--max-similarity-events", "-1"),
        "--max-similarity-events",
        code=2,
    ),
    Case(
        "stats-out-file",
        ("stats", "{w}/pb", "--no-similarity", "--out", "{w}/afile"),
        "--out",
        code=2,
        setup=a_file("afile"),
    ),
    Case("stats-compare-one", ("stats", "--compare", "{w}/pb"), "--compare", code=2),
    Case(
        "stats-compare-bad",
        ("stats", "--compare", "{w}/pb", "{w}/bad/t.json", "--out", "{w}/st"),
        "t.json",
        setup=session_file("t.json", session(time=True)),
    ),
    # ---- synth
    Case("synth-days-huge", ("synth", "--days", "100000", "--out", "{w}/syn"), "--days"),
    Case("synth-users-zero", ("synth", "--users", "0", "--out", "{w}/syn"), "--users", code=2),
    Case("synth-users-disk", ("synth", "--users", "10000000", "--days", "30", "--out", "{w}/syn"), "--users"),
    Case("synth-seed-negative", ("synth", "--seed", "-1", "--out", "{w}/syn"), "--seed", code=2),
    Case("synth-alpha", ("synth", "--alpha", "0.5", "--out", "{w}/syn"), "alpha", code=2),
    Case("synth-start", ("synth", "--start", "2025-13-01", "--out", "{w}/syn"), "--start", code=2),
    Case(
        "synth-foreign-out",
        ("synth", "--users", "1", "--days", "1", "--out", "{w}/mine"),
        "synth.json",
        setup=foreign_folder,
    ),
    Case("synth-out-file", ("synth", "--out", "{w}/afile"), "--out", code=2, setup=a_file("afile")),
    # ---- simulate
    Case("simulate-missing", ("simulate", "{w}/nope", "--out", "{w}/sim"), "nope", code=2),
    Case("simulate-out-inside-data", ("simulate", "{w}/pb", "--out", "{w}/pb/sim", *MOCK), "sim"),
    Case("simulate-out-foreign", ("simulate", "{w}/pb", "--out", "{w}/mine", *MOCK), "mine", setup=foreign_folder),
    Case(
        "simulate-bad-window", ("simulate", "{w}/pb", "--out", "{w}/sim", "--window", "-5m", *MOCK), "--window", code=2
    ),
    Case(
        "simulate-bad-data",
        ("simulate", "{w}/bad/t.json", "--out", "{w}/sim", *MOCK),
        "t.json",
        setup=session_file("t.json", session(time=True)),
    ),
    Case(
        "simulate-out-unwritable",
        ("simulate", "{w}/pb", "--out", "{w}/afile/sim", *MOCK),
        "before the model runs",
        setup=a_file("afile"),
    ),
    # ---- data fetch
    Case("fetch-unknown-dataset", ("data", "fetch", "nosuch"), "nosuch", code=2),
    Case(
        "fetch-dest-file",
        ("data", "fetch", "proactivebench", "--from", "{w}/mirror", "--dest", "{w}/afile"),
        "--dest",
        setup=a_file("afile"),
    ),
    Case(
        "fetch-dest-unwritable",
        ("data", "fetch", "proactivebench", "--from", "{w}/mirror", "--dest", "{w}/ro/d"),
        "--dest",
        setup=read_only_folder,
        needs_permissions=True,
    ),
    Case(
        "fetch-mirror-missing",
        ("data", "fetch", "proactivebench", "--from", "{w}/nope", "--dest", "{w}/d"),
        "--from",
        code=2,
    ),
    Case(
        "fetch-mirror-tampered",
        ("data", "fetch", "proactivebench", "--from", "{w}/mirror", "--dest", "{w}/d"),
        "SHA-256",
    ),
    # ---- models
    Case("models-prepare-unknown", ("models", "prepare", "nosuch"), "nosuch"),
    # ---- dialogue
    Case("dialogue-plan-missing", ("dialogue", "plan", "--data", "{w}/nope.jsonl", *MOCK), "nope.jsonl"),
    Case(
        "dialogue-plan-bad-json",
        ("dialogue", "plan", "--data", "{w}/bad/e.jsonl", *MOCK),
        "e.jsonl",
        setup=session_file("e.jsonl", "{oops\n"),
    ),
    Case(
        "dialogue-plan-unknown-model",
        ("dialogue", "plan", "--data", "{w}/envs.jsonl", "--model", "nosuch/model"),
        "--model",
    ),
    Case(
        "dialogue-plan-limit-zero",
        ("dialogue", "plan", "--data", "{w}/envs.jsonl", "--limit", "0", *MOCK),
        "--limit",
        code=2,
    ),
    Case(
        "dialogue-plan-log-dir-in-use",
        ("dialogue", "plan", "--data", "{w}/envs.jsonl", "--log-dir", "{w}/busy", *MOCK),
        "in use by process",
        setup=held_log_dir,
    ),
    Case(
        "dialogue-guide-agreeableness",
        ("dialogue", "guide", "--data", "{w}/envs.jsonl", "--agreeableness", "grumpy", *MOCK),
        "--agreeableness",
        code=2,
    ),
    Case(
        "dialogue-guide-context-too-small",
        ("dialogue", "guide", "--data", "{w}/envs.jsonl", "--model", "local/smollm2-135m", "--model-arg", "n_ctx=1024"),
        "--model-arg n_ctx",
        code=2,
    ),
    Case("dialogue-kappa-missing", ("dialogue", "kappa", "--human", "{w}/nope.csv"), "nope.csv"),
    Case(
        "dialogue-kappa-bad-csv",
        ("dialogue", "kappa", "--human", "{w}/bad/h.csv"),
        "h.csv",
        setup=session_file("h.csv", "id,human\na,eleven\n"),
    ),
    Case(
        "dialogue-kappa-binary-results",
        ("dialogue", "kappa", "--human", "{w}/bad/h.csv", "--results", "{w}/bad/r/results.json"),
        "results.json",
        setup=lambda w: (
            _write(w / "bad" / "h.csv", "id,human\na,5\n"),
            (w / "bad" / "r").mkdir(parents=True),
            (w / "bad" / "r" / "results.json").write_bytes(bytes(range(256)) * 4),
        ),
    ),
    Case(
        "dialogue-kappa-results-rows-not-objects",
        ("dialogue", "kappa", "--human", "{w}/bad/h.csv", "--results", "{w}/bad/r.json"),
        "r.json",
        setup=lambda w: (
            _write(w / "bad" / "h.csv", "id,human\na,5\n"),
            _write(w / "bad" / "r.json", {"samples": [1, "x"]}),
        ),
    ),
    Case(
        "dialogue-generate-missing",
        ("dialogue", "generate", "--seeds", "{w}/nope.jsonl", "--out", "{w}/gen", *MOCK),
        "nope.jsonl",
    ),
    Case(
        "dialogue-generate-out-file",
        ("dialogue", "generate", "--seeds", "{w}/envs.jsonl", "--out", "{w}/afile", *MOCK),
        "--out",
        setup=a_file("afile"),
    ),
    Case(
        "dialogue-generate-no-topics",
        ("dialogue", "generate", "--seeds", "{w}/envs.jsonl", "--out", "{w}/gen", "--approve-topics", *MOCK),
        "has no topics",
        setup=topics_file(b"# all deleted\n"),
    ),
    Case(
        "dialogue-generate-topics-not-utf8",
        ("dialogue", "generate", "--seeds", "{w}/envs.jsonl", "--out", "{w}/gen", "--approve-topics", *MOCK),
        "topics.txt: not UTF-8",
        setup=topics_file(b"recommendation: caf\xe9s\n"),
    ),
    Case(
        "dialogue-generate-topics-bad-line",
        ("dialogue", "generate", "--seeds", "{w}/envs.jsonl", "--out", "{w}/gen", "--approve-topics", *MOCK),
        "line 1: expected 'domain: topic",
        setup=topics_file(b"recommendation hobbies\n"),
    ),
    # ---- train when / sft / lora (the decider and fine-tuning)
    Case("train-when-no-data", ("train", "when", "--out", "{w}/dec"), "--data", code=2),
    Case("train-when-missing-data", ("train", "when", "--data", "{w}/nope", "--out", "{w}/dec"), "nope", code=2),
    Case(
        "train-when-bad-objective",
        ("train", "when", "--data", "{w}/pb", "--objective", "luck", "--out", "{w}/dec"),
        "--objective",
        code=2,
    ),
    Case(
        "train-when-bad-weights",
        ("train", "when", "--data", "{w}/pb", "--weights", "equal", "--out", "{w}/dec"),
        "--weights",
        code=2,
    ),
    Case(
        "train-when-session-weights-gbm",
        ("train", "when", "--data", "{w}/pb", "--weights", "session", "--model", "gbm", "--out", "{w}/dec"),
        "not gbm",
        code=2,
    ),
    Case(
        "train-when-bad-calibration-folds",
        ("train", "when", "--data", "{w}/pb", "--calibration-folds", "users", "--out", "{w}/dec"),
        "--calibration-folds",
        code=2,
    ),
    Case(
        "train-when-out-file",
        ("train", "when", "--data", "{w}/pb", "--out", "{w}/afile"),
        "afile",
        setup=a_file("afile"),
    ),
    Case("train-lora-missing-data", ("train", "lora", "--data", "{w}/nope", "--out", "{w}/ft"), "nope", code=2),
    Case(
        "train-sft-batch-not-a-multiple",
        ("train", "sft", "--data", "{w}/pb", "--batch-size", "16", "--micro-batch-size", "3", "--out", "{w}/ft"),
        "multiple of the micro-batch",
    ),
    Case(
        "train-sft-bad-base",
        ("train", "sft", "--data", "{w}/pb", "--base", "nosuch-model", "--out", "{w}/ft"),
        "nosuch-model",
    ),
    # ---- eval with a decider
    Case("eval-decider-not-a-decider", ("eval", "--data", "{w}/pb", "--decider", "{w}/pb", *MOCK), "manifest"),
    Case("eval-decider-missing", ("eval", "--data", "{w}/pb", "--decider", "{w}/nope", *MOCK), "--decider", code=2),
    # ---- capture (no X display in a test process: refused before anything is written)
    Case("capture-bad-interval", ("capture", "--out", "{w}/cap", "--interval", "0"), "--interval", code=2),
    Case("capture-bad-ocr-region", ("capture", "--out", "{w}/cap", "--ocr-region", "desk"), "--ocr-region", code=2),
    Case("capture-bad-ocr-finish", ("capture", "--out", "{w}/cap", "--ocr-finish", "-1"), "--ocr-finish", code=2),
    Case("capture-nan-ocr-finish", ("capture", "--out", "{w}/cap", "--ocr-finish", "nan"), "--ocr-finish", code=2),
    Case(
        "capture-bad-exclude-regex",
        ("capture", "--out", "{w}/cap", "--exclude-title", "(unclosed"),
        "--exclude-title",
        code=2,
    ),
    Case("capture-no-display", ("capture", "--out", "{w}/cap"), "DISPLAY"),
    # ---- curate / review
    Case("curate-missing-raw", ("curate", "{w}/nope", "--out", "{w}/cur"), "nope"),
    Case("curate-bad-screener", ("curate", "{w}/lt", "--out", "{w}/cur", "--screener", "magic"), "--screener", code=2),
    Case("curate-out-inside-raw", ("curate", "{w}/lt", "--out", "{w}/lt/cur"), "inside the raw input"),
    Case("review-not-curated", ("review", "{w}/pb"), "pb"),
    # ---- show
    Case("show-missing", ("show", "{w}/nope"), "nope"),
    Case("show-bad-day", ("show", "{w}/lt", "--day", "yesterday"), "--day", code=2),
    Case("show-day-without-events", ("show", "{w}/lt", "--day", "1999-01-01"), "--day", code=2),
    Case("show-unknown-user", ("show", "{w}/lt", "--user", "nobody"), "--user", code=2),
    Case("show-curated-not-curated", ("show", "{w}/lt", "--curated", "{w}/pb"), "pb"),
    Case("show-live-without-feedback", ("show", "{w}/lt", "--live", "{w}/pb"), "feedback.db"),
    Case("show-bad-port", ("show", "{w}/lt", "--port", "70000"), "--port", code=2),
    # ---- annotate
    Case("annotate-missing", ("annotate", "{w}/nope", "--annotator", "text:mockllm/model"), "nope", code=2),
    Case(
        "annotate-bad-annotator", ("annotate", "{w}/lt", "--annotator", "telepathy", "--out", "{w}/ann"), "--annotator"
    ),
    Case(
        "annotate-activitywatch-without-out",
        ("annotate", "{w}/aw/sqlite.db", "--annotator", "text:mockllm/model"),
        "give --out",
        setup=aw_bad_data,
    ),
    Case(
        "annotate-raw-without-out",
        ("annotate", "{w}/bad/raw.db", "--annotator", "text:mockllm/model"),
        "--out",
        setup=lambda w: make_raw_db(w / "bad" / "raw.db"),
    ),
    # ---- live
    Case("live-no-source", ("live", "--out", "{w}/live", "--model", "none"), "--watch", code=2),
    Case(
        "live-replay-missing", ("live", "--replay", "{w}/nope", "--out", "{w}/live", "--model", "none"), "nope", code=2
    ),
    Case(
        "live-bad-notify",
        ("live", "--replay", "{w}/pb", "--out", "{w}/live", "--model", "none", "--notify", "pigeon"),
        "--notify",
        code=2,
    ),
    Case(
        "live-negative-min-gap",
        ("live", "--replay", "{w}/pb", "--out", "{w}/live", "--model", "none", "--min-gap", "-1"),
        "--min-gap",
        code=2,
    ),
    *(  # nan passed click's FloatRange (a traceback, and a run.json left that refused the corrected command)
        Case(
            f"live-min-gap-{v}",
            ("live", "--replay", "{w}/pb", "--out", "{w}/live", "--model", "none", "--min-gap", v),
            "--min-gap",
            code=2,
        )
        for v in ("nan", "inf", "1e308")
    ),
    Case("capture-nan-interval", ("capture", "--out", "{w}/cap", "--interval", "nan"), "--interval", code=2),
    Case("synth-inf-alpha", ("synth", "--alpha", "inf", "--out", "{w}/syn"), "--alpha", code=2),
    # ---- doctor
    Case("doctor-missing-dir", ("doctor", "--dir", "{w}/nope"), "--dir", code=2),
    Case(
        "doctor-dir-is-a-file",
        ("doctor", "--dir", "{w}/bad/f.txt"),
        "--dir",
        code=2,
        setup=session_file("f.txt", "not a folder"),
    ),
    Case("mcp-missing-log", ("mcp", "{w}/nope"), "nope"),
    Case("mcp-not-a-log-file", ("mcp", "{w}/envs.jsonl"), "envs.jsonl"),
    Case("mcp-folder-without-log", ("mcp", "{w}/pb"), "pb"),
    Case("mcp-bad-block-title", ("mcp", "{w}/lt/U001", "--block-title", "("), "--block-title", code=2),
    Case("mcp-port-without-http", ("mcp", "{w}/lt/U001", "--port", "8765"), "--port", code=2),
    Case("mcp-live-without-feedback", ("mcp", "{w}/lt/U001", "--live", "{w}/pb"), "--live"),
    Case("mcp-state-missing", ("mcp", "{w}/lt/U001", "--state", "{w}/nope"), "--state"),
    Case(
        "mcp-base-url-without-persona-model",
        ("mcp", "{w}/lt/U001", "--model-base-url", "http://127.0.0.1:9/v1"),
        "--persona-model",
        code=2,
    ),
    Case(
        "mcp-base-url-with-local-persona-model",
        (
            "mcp",
            "{w}/lt/U001",
            "--persona-model",
            "local/qwen2.5-coder-1.5b",
            "--model-base-url",
            "http://127.0.0.1:9/v1",
        ),
        "local/",
        code=2,
    ),
    Case(
        "mcp-token-file-in-missing-folder",
        ("mcp", "{w}/lt/U001", "--http", "--token-file", "{w}/nope/token"),
        "--token-file",
    ),
    # issue 46: a token file under /proc was a traceback (writing) or read as a token (any text)
    Case(
        "mcp-token-file-under-proc",
        ("mcp", "{w}/lt/U001", "--http", "--token-file", "/proc/proagent-mcp-token"),
        "--token-file",
    ),
    Case("mcp-token-file-not-a-token", ("mcp", "{w}/lt/U001", "--http", "--token-file", "/proc/version"), "no token"),
    Case("mcp-max-tokens-too-small", ("mcp", "{w}/lt/U001", "--max-tokens", "100"), "--max-tokens", code=2),
    Case(
        "mcp-unknown-persona-model", ("mcp", "{w}/lt/U001", "--persona-model", "local/no-such-model"), "--persona-model"
    ),
    Case(
        "live-negative-settle",
        ("live", "--replay", "{w}/pb", "--out", "{w}/live", "--model", "none", "--settle", "-1"),
        "--settle",
        code=2,
    ),
    Case(
        "live-settle-not-a-number",
        ("live", "--replay", "{w}/pb", "--out", "{w}/live", "--model", "none", "--settle", "soon"),
        "--settle",
        code=2,
    ),
    Case(
        "live-settle-nan",
        ("live", "--replay", "{w}/pb", "--out", "{w}/live", "--model", "none", "--settle", "nan"),
        "--settle",
        code=2,
    ),
    Case(
        "live-bad-send-screen",
        ("live", "--replay", "{w}/pb", "--out", "{w}/live", "--model", "none", "--send-screen", "sometimes"),
        "--send-screen",
        code=2,
    ),
    Case(
        "live-negative-ask-rate",
        ("live", "--replay", "{w}/pb", "--out", "{w}/live", "--model", "none", "--ask-rate", "-1"),
        "--ask-rate",
        code=2,
    ),
    Case(
        "live-ask-rate-not-a-number",
        ("live", "--replay", "{w}/pb", "--out", "{w}/live", "--model", "none", "--ask-rate", "often"),
        "--ask-rate",
        code=2,
    ),
    Case(
        "live-ask-rate-too-high",
        ("live", "--replay", "{w}/pb", "--out", "{w}/live", "--model", "none", "--ask-rate", "101"),
        "--ask-rate",
        code=2,
    ),
    Case(
        "live-ask-rate-with-a-scripted-decider",
        (
            "live",
            "--replay",
            "{w}/pb",
            "--out",
            "{w}/live",
            "--model",
            "none",
            "--yes-at",
            "{w}/human.csv",
            "--ask-rate",
            "3",
        ),
        "--yes-at",
        code=2,
    ),
    # ---- live and eval with a model API (issue 42 item 6, issue 47)
    Case(
        "live-model-api-down",
        (
            "live",
            "--replay",
            "{w}/pb",
            "--out",
            "{w}/live",
            "--yes-at",
            "{w}/yes.txt",
            "--model",
            "openai-api/vllm/qwen",
            "--model-base-url",
            DOWN,
        ),
        "cannot reach the model API at http://127.0.0.1:",
        code=3,
        setup=yes_file,
        env=(("VLLM_API_KEY", "none"),),
    ),
    Case(
        "live-openai-with-a-base-url",
        (
            "live",
            "--replay",
            "{w}/pb",
            "--out",
            "{w}/live",
            "--yes-at",
            "{w}/yes.txt",
            "--model",
            "openai/qwen2.5",
            "--model-base-url",
            DOWN,
        ),
        "openai-api/<provider>/qwen2.5",
        setup=yes_file,
        env=(("OPENAI_API_KEY", "none"),),
    ),
    Case(
        "eval-openai-with-a-base-url",
        ("eval", "--data", "{w}/pb/code_1.json", "--model", "openai/qwen2.5", "--model-base-url", DOWN),
        "openai-api/<provider>/qwen2.5",
        env=(("OPENAI_API_KEY", "none"),),
    ),
    Case(
        "live-blocked-apps-not-json",
        LIVE_SCRIPTED,
        "blocked-apps.json",
        setup=live_file("blocked-apps.json", '{"apps": ["xterm"'),
    ),
    Case(
        "live-blocked-apps-a-list",
        LIVE_SCRIPTED,
        "blocked-apps.json",
        setup=live_file("blocked-apps.json", '["xterm"]'),
    ),
    Case(
        "live-blocked-apps-numbers",
        LIVE_SCRIPTED,
        "blocked-apps.json",
        setup=live_file("blocked-apps.json", '{"apps": [1, 2]}'),
    ),
    Case(
        "live-blocked-apps-a-directory",
        LIVE_SCRIPTED,
        "blocked-apps.json",
        setup=live_file("blocked-apps.json", None),
    ),
    Case(
        "live-run-json-cut",
        LIVE_SCRIPTED,
        "run.json",
        setup=live_file("run.json", '{"notify": '),
    ),
    Case(
        "live-run-json-a-list",
        LIVE_SCRIPTED,
        "run.json",
        setup=live_file("run.json", '[]'),
    ),
    Case(
        "live-run-json-a-directory",
        LIVE_SCRIPTED,
        "run.json",
        setup=live_file("run.json", None),
    ),
    Case(
        "live-ask-rate-without-a-channel",
        ("live", "--replay", "{w}/pb", "--out", "{w}/live", "--model", "none", "--notify", "none", "--ask-rate", "3"),
        "--ask-rate",
        code=2,
    ),
]


@pytest.fixture(autouse=True)
def _release_holders():
    yield
    while _HOLDERS:
        p = _HOLDERS.pop()
        p.kill()
        p.wait()


def make_raw_db(path: Path) -> None:
    """A raw LifeTrace 2025-11 database (as ``proagent capture`` writes it) with one event."""
    from proagent.sources.lifetrace_write import lifetrace_ddl

    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.executescript(lifetrace_ddl("2025-11"))
    con.execute(
        "INSERT INTO events (id, app_name, window_title, start_time, end_time) VALUES "
        "(1, 'chrome', 'ChatGPT', '2025-11-03 10:00:00.000000', '2025-11-03 10:01:00.000000')"
    )
    con.commit()
    con.close()


def test_the_suite_covers_every_command():
    assert len(CASES) >= 40 and len({c.id for c in CASES}) == len(CASES)
    commands = {" ".join(c.argv[:2]) if c.argv[0] in ("data", "models", "dialogue") else c.argv[0] for c in CASES}
    for name in (
        "eval",
        "ablate",
        "stats",
        "synth",
        "simulate",
        "data fetch",
        "models prepare",
        "dialogue plan",
        "dialogue guide",
        "dialogue kappa",
        "dialogue generate",
        "train",
        "capture",
        "curate",
        "review",
        "show",
        "annotate",
        "live",
        "doctor",
        "mcp",
    ):
        assert name in commands, name
    assert any("--annotations" in c.argv for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, workspace: Path, monkeypatch: pytest.MonkeyPatch):
    if case.needs_permissions and os.geteuid() == 0:
        pytest.skip("file permissions do not stop root")
    for name, value in case.env:
        monkeypatch.setenv(name, value)
    if case.setup:
        case.setup(workspace)
    before = tree_digest(workspace)
    argv = [a.replace("{w}", str(workspace)) for a in case.argv]
    t0 = time.perf_counter()
    r = CliRunner().invoke(cli, argv)
    seconds = time.perf_counter() - t0
    out = r.output
    assert r.exit_code == case.code, (r.exit_code, out, r.exception)
    assert isinstance(r.exception, SystemExit), repr(r.exception)  # handled, not a crash
    assert "Traceback" not in out
    errors = [line for line in out.splitlines() if line.startswith("Error")]
    assert len(errors) == 1, out
    assert case.needle in errors[0], (case.needle, out)
    after = tree_digest(workspace)
    changed = sorted(k for k in before if after.get(k) != before[k])
    assert not changed, f"pre-existing files changed or removed: {changed}"
    assert seconds < 60, f"refusing took {seconds:.0f} s"
