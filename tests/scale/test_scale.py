"""proagent.scale without a cluster: the shard plan, merging shard logs, the endpoint pool,
and ``--ray`` when Ray is not installed (one line, exit 2, nothing written)."""

from __future__ import annotations

import importlib.util
import json

import pytest
from click.testing import CliRunner
from memory_fixtures import write_sessions

from proagent.cli import cli
from proagent.errors import RunError, UsageError
from proagent.scale import endpoint_pool, merge_logs, plan_shards
from proagent.scale.evaluate import _shards


def test_plan_shards_is_contiguous_and_balanced():
    ids = [f"s{i}" for i in range(10)]
    shards = plan_shards(ids, 4)
    assert [len(s.ids) for s in shards] == [3, 3, 2, 2]
    assert [i for s in shards for i in s.ids] == ids
    assert [s.name for s in shards] == ["shard-000", "shard-001", "shard-002", "shard-003"]
    assert len(plan_shards(ids[:2], 8)) == 2  # never an empty shard
    with pytest.raises(ValueError):
        plan_shards(ids, 0)


def test_a_written_plan_is_reused_whatever_the_worker_count_and_refused_for_other_samples(tmp_path):
    ids = [f"s{i}" for i in range(6)]
    first = _shards(tmp_path, ids, 2)
    assert _shards(tmp_path, ids, 5) == first  # a resumed run on a bigger cluster redoes nothing
    with pytest.raises(RunError, match="other samples"):
        _shards(tmp_path, ids[:4], 2)
    assert json.loads((tmp_path / "shards.json").read_text("utf-8"))["n_samples"] == 6


def _log(ids):
    from inspect_ai.log import EvalLog, EvalSample, EvalSpec, EvalStats
    from inspect_ai.log._log import EvalConfig, EvalDataset
    from inspect_ai.model import ModelUsage

    spec = EvalSpec(
        created="2026-01-01T00:00:00+00:00",
        task="assist",
        dataset=EvalDataset(samples=len(ids)),
        model="mockllm/model",
        config=EvalConfig(),
    )
    samples = [EvalSample(id=i, epoch=1, input="x", target="No") for i in ids]
    stats = EvalStats(
        started_at="2026-01-01T00:00:00+00:00",
        completed_at="2026-01-01T00:01:00+00:00",
        model_usage={"m": ModelUsage(input_tokens=len(ids), output_tokens=1, total_tokens=len(ids) + 1)},
    )
    return EvalLog(eval=spec, samples=samples, stats=stats)


def test_merge_logs_orders_samples_as_the_dataset_and_sums_usage():
    merged = merge_logs([_log(["c", "d"]), _log(["a", "b"])], ["a", "b", "c", "d"])
    assert [s.id for s in merged.samples] == ["a", "b", "c", "d"]
    assert merged.eval.dataset.samples == 4 and merged.eval.dataset.sample_ids == ["a", "b", "c", "d"]
    assert merged.stats.model_usage["m"].total_tokens == 6


def test_merge_logs_refuses_a_duplicate_or_missing_sample():
    with pytest.raises(RunError, match="two shard logs"):
        merge_logs([_log(["a", "b"]), _log(["b"])], ["a", "b"])
    with pytest.raises(RunError, match="in no shard log"):
        merge_logs([_log(["a"])], ["a", "b"])


def test_endpoint_pool_needs_ray_for_several():
    assert endpoint_pool(("http://h:1/v1",), None) == ["http://h:1/v1"]
    assert endpoint_pool(("http://h:1/v1", "http://h:2/v1"), "auto") == ["http://h:1/v1", "http://h:2/v1"]
    with pytest.raises(UsageError, match="needs --ray"):
        endpoint_pool(("http://h:1/v1", "http://h:2/v1"), None)


@pytest.fixture
def no_ray(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))


@pytest.mark.parametrize("command", ["eval", "ablate", "curate", "annotate"])
def test_ray_without_the_extra_is_one_line(no_ray, tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    data = write_sessions(tmp_path / "sessions", n=6)
    args = {
        "eval": ["eval", "--data", str(data), "--model", "mockllm/model", "--log-dir", str(tmp_path / "out")],
        "ablate": ["ablate", "--data", str(data), "--models", "mockllm/model", "--out", str(tmp_path / "out")],
        "curate": ["curate", str(data), "--out", str(tmp_path / "out")],
        "annotate": ["annotate", str(data), "--out", str(tmp_path / "out"), "--annotator", "text:mockllm/model"],
    }[command]
    r = CliRunner().invoke(cli, [*args, "--ray"])
    assert r.exit_code == 2, r.output
    assert "--ray" in r.output and "ray extra" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "out").exists() and not (tmp_path / "logs").exists()


def test_several_endpoints_without_ray_are_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = write_sessions(tmp_path / "sessions", n=6)
    r = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(data),
            "--model",
            "openai-api/mock/m",
            "--model-base-url",
            "http://127.0.0.1:9/v1",
            "--model-base-url",
            "http://127.0.0.1:8/v1",
            "--log-dir",
            str(tmp_path / "out"),
        ],
    )
    assert r.exit_code == 2 and "needs --ray" in r.output, r.output
    assert not (tmp_path / "out").exists()
