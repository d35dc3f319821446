"""Benchmarks cannot break unseen: each script's smallest setting runs here (issue 38: scale.py had
failed since the synth manifest became a typed record, and nothing ran it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from shared_data import DEV
from system import baseline_revision

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def test_scale_smoke_generates_then_reuses(tmp_path: Path) -> None:
    for n in (1, 2):  # the second run reads the kept synth.json (the path that failed)
        r = subprocess.run(
            [
                sys.executable,
                str(BENCH / "scale.py"),
                "--sizes",
                "smoke",
                "--keep",
                str(tmp_path / "dbs"),
                "--json",
                str(tmp_path / f"r{n}.json"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert r.returncode == 0, r.stderr[-2000:]
    rows = [json.loads((tmp_path / f"r{n}.json").read_text()) for n in (1, 2)]
    text = json.dumps(rows)
    assert '"samples"' in text and '"events"' in text


def _smoke(name: str, tmp: Path, *extra: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``benchmarks/NAME --smoke EXTRA...``, proagent's disk caches under ``tmp`` (never the user's)."""
    env = {
        **os.environ,
        "PROAGENT_EMBEDDING_CACHE": str(tmp / "emb"),
        "PROAGENT_MEMORY_CACHE": str(tmp / "mem"),
        "PROAGENT_ANSWER_CACHE": "off",
    }
    r = subprocess.run(
        [sys.executable, str(BENCH / name), "--smoke", *extra],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
        cwd=tmp,
    )
    assert r.returncode == 0, (r.stdout + r.stderr)[-2000:]
    return r


def test_disk_cache_smoke_writes_both_layouts(tmp_path: Path) -> None:
    _smoke("disk_cache.py", tmp_path, "--json", str(tmp_path / "r.json"))
    rows = json.loads((tmp_path / "r.json").read_text())["rows"]
    assert {(r["kind"], r["store"]) for r in rows} == {
        (k, s) for k in ("embedding", "answer", "memory") for s in ("file per entry", "diskcache")
    }
    assert all(r["entries"] >= 5 and r["read_us"] > 0 for r in rows)


def test_activity_read_smoke(tmp_path: Path) -> None:
    out = _smoke("activity_read.py", tmp_path).stdout
    assert "ActivityWatch: proagent, whole log merged" in out and "screenpipe" in out


def test_memory_latency_smoke(tmp_path: Path) -> None:
    _smoke("memory_latency.py", tmp_path, "--json", str(tmp_path / "m.json"))
    res = json.loads((tmp_path / "m.json").read_text())["figures"]  # the result record (_common.write_result)
    assert res["rag"] and res["kg"] and res["persona"]


@pytest.mark.slow
@pytest.mark.skipif(DEV is None, reason="ProactiveBench dev sessions not present")
def test_harness_overhead_smoke(tmp_path: Path) -> None:
    """The real assist task under inspect against a loopback mock (e5 embeds the references)."""
    _smoke("harness_overhead.py", tmp_path, "--json", str(tmp_path / "h.json"), timeout=600)
    assert json.loads((tmp_path / "h.json").read_text())


@pytest.mark.skipif(DEV is None, reason="ProactiveBench dev sessions not present")
def test_dismissed_similarity_smoke(tmp_path: Path) -> None:
    out = _smoke("dismissed_similarity.py", tmp_path, "--data", str(DEV)).stdout
    assert "10 'again' pairs" in out and "DISMISSED_SIMILARITY" in out


@pytest.mark.slow
def test_mcp_latency_smoke(tmp_path: Path) -> None:
    """The first 30 events of a synth day through the MCP server and the SDK's client (e5 embeds them);
    recent_activity paged under a 2,000-token cap gives every event once."""
    pytest.importorskip("mcp")
    _smoke("mcp_latency.py", tmp_path, "--json", str(tmp_path / "c.json"), timeout=600)
    figures = json.loads((tmp_path / "c.json").read_text())["figures"]
    assert figures["log"]["events"] == 30 and figures["startup_s"]["indexed"] == 30
    assert figures["growth_ms"]["found_by_search"] is True  # the appended event, embedded as it came
    size = figures["answer_size"]
    assert size["cap"] == 2000 and size["pages"] >= 2 and size["largest_estimate"] <= 2000
    assert size["complete"] is True and size["events_paged"] >= 20 and size["uncapped_estimate"] > 2000
    assert all(r["n"] > 0 and r["p50"] > 0 for r in figures["rows"])


@pytest.mark.slow
@pytest.mark.skipif(
    DEV is None or not (DEV.parent / "proactivebench-synthetic").is_dir(),
    reason="ProactiveBench dev sessions or synthetic traces not present",
)
def test_decider_smoke(tmp_path: Path) -> None:
    """The decider benchmark trains on real and synthetic moments (e5 embeds ~170 moments' texts)."""
    r = _smoke(
        "decider.py",
        tmp_path,
        "--data",
        str(DEV),
        "--synthetic",
        str(DEV.parent / "proactivebench-synthetic"),
        "--out",
        str(tmp_path / "d.json"),
        timeout=600,
    )
    assert "| time split | real | logreg | f1 |" in r.stdout and (tmp_path / "d.json").is_file()


def test_scale_smoke_beside_a_revision_from_before_the_typed_manifest(tmp_path: Path) -> None:
    # 0a30da7 predates proagent.synth.records: its child must still read the databases this tree wrote
    baseline_revision("0a30da7", fallback=None)  # skipped in a shallow clone, which lacks it
    r = subprocess.run(
        [
            sys.executable,
            str(BENCH / "scale.py"),
            "--sizes",
            "smoke",
            "--keep",
            str(tmp_path / "dbs"),
            "--baseline-rev",
            "0a30da7",
            "--json",
            str(tmp_path / "r.json"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    run = json.loads((tmp_path / "r.json").read_text())
    codes = [row["code"] for row in run["rows"]]
    assert codes[:2] == ["this tree", "0a30da7"] and [row["baseline"] for row in run["rows"][:2]] == [False, True]
    assert run["rows"][0]["same"] == run["rows"][1]["same"] == "yes" and run["conditions"]
