"""ProactiveBench reward-data traces: origins kept apart, relative times, and the fetch command
(download path against a monkeypatched urlopen; the network is never reached)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import urllib.request
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from proagent.cli import cli
from proagent.errors import DataError
from proagent.sources import fetch as F
from proagent.sources.proactivebench_synthetic import read_reward_traces, trace_samples
from proagent.train import load_training_data

SYNTHETIC = (
    Path(os.environ.get("PROAGENT_SHARED") or Path(__file__).resolve().parents[3] / "shared")
    / "data"
    / "proactivebench-synthetic"
)
needs_shared = pytest.mark.skipif(not SYNTHETIC.is_dir(), reason="../shared/data/proactivebench-synthetic not present")

SYN = {
    "obs": [
        {"time": "Day 1, 11:58 PM", "event": "The user opens 'a.py' in VS Code."},
        {"time": "Day 2, 12:01 AM", "event": "The user sees an error in the terminal."},
    ],
    "pred_task": None,
    "valid": True,
    "help_needed": True,
    "annotation": [True],
    "category": "Correct-Detection (CD)",
}
REAL = {
    "obs": [{"time": "1717338232.283", "event": "The user types 'badrandResearch.m' in Visual Studio Code."}],
    "pred_task": None,
    "valid": True,
    "help_needed": False,
    "annotation": [False],
    "category": "Correct-Rejection (CR)",
}


def _jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def test_origins_are_told_apart_and_real_sessions_dropped(tmp_path):
    f = _jsonl(tmp_path / "train_data.jsonl", [SYN, REAL, SYN])
    syn = read_reward_traces(f)
    assert [t.origin for t in syn] == ["synthetic", "synthetic"] and [t.line for t in syn] == [1, 3]
    real = read_reward_traces(f, keep=("real-session",))
    assert [t.line for t in real] == [2] and real[0].events[0].user.startswith("real-session:")
    t = syn[0]
    assert t.events[0].start == datetime(2000, 1, 1, 23, 58) and t.events[1].start == datetime(2000, 1, 2, 0, 1)
    assert t.events[1].needs_help is True and t.events[0].needs_help is None
    samples = trace_samples(syn, window_seconds=300)
    assert len({s.id for s in samples}) == 2 and samples[0].label == 1 and len(samples[0].context) == 1
    assert samples[0].user == samples[1].user  # one scenario: grouped together in cross-validation


def test_bad_trace_lines_name_the_line(tmp_path):
    bad = tmp_path / "t.jsonl"
    bad.write_text(json.dumps(SYN) + "\n{not json\n")
    with pytest.raises(DataError, match="line 2: not JSON"):
        read_reward_traces(bad)
    mixed = {**SYN, "obs": SYN["obs"] + REAL["obs"]}
    _jsonl(bad, [mixed])
    with pytest.raises(DataError, match="line 1: mixes"):
        read_reward_traces(bad)


@needs_shared
def test_shared_synthetic_traces_load_as_training_data():
    samples, src = load_training_data(SYNTHETIC)
    assert src.origin == "synthetic" and src.n == 427 == len(samples) and src.selection == "all"
    assert src.sha256 == F.SYNTHETIC_SHA256
    assert all(s.user.startswith("synthetic:") for s in samples)


@needs_shared
def test_fetch_from_mirror_and_cli(tmp_path):
    r = CliRunner().invoke(
        cli, ["data", "fetch", "proactivebench-synthetic", "--from", str(SYNTHETIC), "--dest", str(tmp_path / "d")]
    )
    assert r.exit_code == 0, r.output
    assert "427 synthetic traces verified" in r.output
    assert hashlib.sha256((tmp_path / "d" / F.SYNTHETIC_FILE).read_bytes()).hexdigest() == F.SYNTHETIC_SHA256
    assert (tmp_path / "d" / "LICENSE").is_file()


def _upstream(monkeypatch, tmp_path, corrupt: str | None = None):
    """Upstream files made of synthetic and real-session traces, with their checksums pinned."""
    train = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [SYN, REAL, SYN]).encode()
    test = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [REAL, SYN]).encode()
    files = {"train_data.jsonl": train, "test_data.jsonl": test}
    derived, counts = F.synthetic_only({"train": train, "test": test})
    monkeypatch.setattr(
        F,
        "SYNTHETIC_UPSTREAM",
        {
            "train": ("train_data.jsonl", hashlib.sha256(train).hexdigest()),
            "test": ("test_data.jsonl", hashlib.sha256(test).hexdigest()),
        },
    )
    monkeypatch.setattr(F, "SYNTHETIC_SHA256", hashlib.sha256(derived).hexdigest())
    calls = []

    def fake_urlopen(url, timeout=None):
        calls.append(url)
        name = url.rsplit("/", 1)[-1]
        return io.BytesIO(files[name] + (b"x" if name == corrupt else b""))

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    return calls, derived, counts


def test_download_keeps_only_synthetic_traces(tmp_path, monkeypatch):
    calls, derived, counts = _upstream(monkeypatch, tmp_path)
    path, got = F.fetch_proactivebench_synthetic(tmp_path / "d", timeout=5)
    assert counts == got == {"synthetic": 3, "real-session": 2}
    assert (
        all(
            u.startswith(
                "https://raw.githubusercontent.com/thunlp/ProactiveAgent/86383616ee530e9bcd1e9fe2269703ef3e3d8478/"
            )
            for u in calls
        )
        and len(calls) == 2
    )
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [x["split"] for x in lines] == ["train", "train", "test"] and list(lines[0])[0] == "split"
    assert all(o["time"].startswith("Day") for x in lines for o in x["obs"])
    calls.clear()
    F.fetch_proactivebench_synthetic(tmp_path / "d")  # good file present: nothing downloaded
    assert calls == []


def test_download_with_wrong_bytes_writes_nothing(tmp_path, monkeypatch):
    _upstream(monkeypatch, tmp_path, corrupt="test_data.jsonl")
    with pytest.raises(F.FetchError, match="test_data.jsonl: SHA-256"):
        F.fetch_proactivebench_synthetic(tmp_path / "d")
    assert not (tmp_path / "d").exists()  # nothing written, not even the folder


def test_download_failure_is_one_line(tmp_path, monkeypatch):
    def fail(url, timeout=None):
        raise OSError("unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", fail)
    r = CliRunner().invoke(cli, ["data", "fetch", "proactivebench-synthetic", "--dest", str(tmp_path / "d")])
    assert (
        r.exit_code != 0 and "download failed" in r.output and "--from DIR" in r.output and "Traceback" not in r.output
    )
