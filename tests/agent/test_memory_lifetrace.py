"""Memory on LifeTrace databases: records from LLM-use annotations, and
``proagent eval --memory ...`` end to end on a fixture DB (mockllm, offline)."""

from __future__ import annotations

import glob

import pytest
from click.testing import CliRunner
from lifetrace_fixtures import make_participant, write_annotations

from proagent.agent.memory import build_memory, train_cutoffs, train_records
from proagent.bench.samples import SampleConfig, build_samples
from proagent.sources.load import load_events

pytestmark = pytest.mark.usefixtures("in_tmp_path")  # working folder and caches in tmp_path (conftest)


@pytest.fixture(scope="module")
def participant(tmp_path_factory):
    root = tmp_path_factory.mktemp("lt")
    fx = make_participant(root / "data", "P01", n_events=60, n_llm=8)
    ann = write_annotations(fx, root / "ann.jsonl")
    root = root / "data"
    return root, fx, ann


def test_lifetrace_records(participant):
    root, fx, ann = participant
    events = load_events(root, annotations=[ann])
    samples = build_samples(events, SampleConfig())
    cut = train_cutoffs(samples)["P01"]
    recs = train_records(events, {"P01": cut})["P01"]
    assert recs and all(r.known_at < cut for r in recs)
    assert not any(r.derived for r in recs)  # apps and titles are recorded, nothing derived
    helped = [r for r in recs if r.needs_help]
    assert helped and all(r.intention and r.query for r in helped)
    llm = [r for r in recs if r.is_llm]
    assert llm and all(r.id.split(":")[1] in fx.llm_event_ids for r in llm)
    for r in helped:  # the request that followed the moment is an LLM event of the training period
        assert r.known_at > r.time
    kg = build_memory("kg", events, samples)
    g = kg.state["P01"]["full"]
    assert any(d["type"] == "Intent" for _, d in g.nodes(data=True))
    assert any(
        d["type"] == "Keyword" and any("\u4e00" <= ch <= "\u9fff" for ch in d["name"]) for _, d in g.nodes(data=True)
    )  # Chinese titles segmented


@pytest.mark.parametrize("kind", ["kg", "rag", "persona"])
def test_eval_with_memory_on_lifetrace(participant, tmp_path, kind):
    from inspect_ai.log import read_eval_log

    from proagent.cli import cli

    root, fx, ann = participant
    log_dir = tmp_path / f"logs-{kind}"
    r = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(root),
            "--annotations",
            str(ann),
            "--model",
            "mockllm/model",
            "--memory",
            kind,
            "--log-dir",
            str(log_dir),
            "--display",
            "none",
        ],
    )
    assert r.exit_code == 0, (r.output, r.exception)
    log = read_eval_log(glob.glob(str(log_dir / "*.eval"))[0])
    assert log.eval.task_args["memory"] == kind
    first = next(m for m in log.samples[0].messages if m.role == "user").text
    assert first.startswith("Long-term memory") and first.index("Long-term memory") < first.index("Recent activity")
    assert any(s.metadata["memory"]["items"] for s in log.samples)
    # resume: same command, nothing new to run, same results
    r2 = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(root),
            "--annotations",
            str(ann),
            "--model",
            "mockllm/model",
            "--memory",
            kind,
            "--log-dir",
            str(log_dir),
            "--display",
            "none",
        ],
    )
    assert r2.exit_code == 0, (r2.output, r2.exception)
    assert len(glob.glob(str(log_dir / "*.eval"))) == 1
