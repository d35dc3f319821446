"""The synthetic baseline: candidate time points, the dataset writer and ``proagent simulate``.

A scripted model (registered here as ``scripted/...``) answers Yes or No by a hash
of the prompt, so decisions are deterministic, mixed, and known to the test.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, ModelUsage, modelapi
from lifetrace_fixtures import make_participant

from proagent.bench.records import SimulateManifest
from proagent.bench.samples import build_samples, candidate_moments
from proagent.bench.simulate import Decision, write_simulated
from proagent.cli import cli
from proagent.errors import DataError
from proagent.sources.load import load_events

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "proactivebench"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data/proactivebench not present")


def _says_yes(prompt: str) -> bool:
    return hashlib.sha256(prompt.encode()).digest()[0] % 3 == 0


@modelapi(name="scripted")
class ScriptedAPI(ModelAPI):
    """Answers the assist prompt: Yes for about a third of the prompts (by hash)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args,
    ) -> None:  # noqa: ANN003
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input: list[ChatMessage], tools, tool_choice, config) -> ModelOutput:  # noqa: A002, ANN001
        prompt = input[-1].text
        if _says_yes(prompt):
            text = "Need help: Yes\nIntention: Code Programming\nQuery: how do I fix this error?"
        else:
            text = "Need help: No\nIntention: none\nQuery: N/A"
        out = ModelOutput.from_content(self.model_name, text)
        out.usage = ModelUsage(
            input_tokens=len(prompt) // 4, output_tokens=len(text) // 4, total_tokens=(len(prompt) + len(text)) // 4
        )
        return out


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def lt(tmp_path_factory):
    root = tmp_path_factory.mktemp("human")
    fx = {u: make_participant(root, u) for u in ("P01", "P02")}
    return root, fx


# --------------------------------------------------------------------------- candidate time points


@needs_shared
def test_proactivebench_candidates_are_every_event():
    events = load_events(SHARED)
    cands = candidate_moments(events)
    assert len(cands) == len(events)
    by_id = {e.id: e for e in events}
    for s in cands:
        assert s.label == int(by_id[s.event_id].needs_help)
        assert all(c.start <= s.time and c.id != s.event_id for c in s.context)


def test_lifetrace_candidates_cover_the_benchmark_moments(lt):
    root, fx = lt
    events = load_events(root)
    cands = candidate_moments(events)
    bench = build_samples(events)
    keys = {(s.user, s.event_id) for s in cands}
    assert {(s.user, s.event_id) for s in bench} <= keys  # positives and hard negatives are candidates
    assert {(u, e) for u, f in fx.items() for e in f.llm_event_ids} <= keys
    assert all(s.kind == "candidate" for s in cands)
    assert sum(s.label for s in cands) == sum(len(f.llm_event_ids) for f in fx.values())
    for s in cands:  # the model sees only what came before t, never the LLM event
        assert s.current.start < s.time and not s.current.is_llm_event
        assert all(c.id != s.event_id and c.start < s.time for c in (s.current,) + s.context)


# --------------------------------------------------------------------------- writer


def _decide(cands, every: int = 2) -> list[Decision]:
    return [
        Decision(
            user=s.user,
            event_id=str(s.event_id),
            human=s.label,
            needs_help=(i % every == 0),
            intention="Code Programming" if i % every == 0 else None,
            query=f"query {i}",
        )
        for i, s in enumerate(cands)
    ]


def test_lifetrace_dataset_carries_the_decisions(lt, tmp_path):
    root, fx = lt
    before = {u: _sha(f.path) for u, f in fx.items()}
    cands = candidate_moments(load_events(root))
    decisions = _decide(cands, every=3)
    decisions[1] = Decision(decisions[1].user, decisions[1].event_id, decisions[1].human, None)  # unparsed = no
    out = tmp_path / "synthetic"
    res = write_simulated(root, decisions, cands, out)
    assert res.kind == "lifetrace" and res.users == ("P01", "P02") and res.unparsed == 1
    yes = {(d.user, d.event_id): d for d in decisions if d.needs_help}
    assert res.llm_moments == len(yes) and res.human_moments == sum(s.label for s in cands)
    synthetic = load_events(out)
    assert len(synthetic) == len(load_events(root))  # every event kept
    llm = {(e.user, e.id): e for e in synthetic if e.is_llm_event}
    assert set(llm) == set(yes)  # LLM use exactly where the model said yes
    for key, e in llm.items():
        assert e.conversation.user_queries == (yes[key].query,)
        assert e.intention == "Code Programming"
    assert all(e.is_llm_event is False for e in synthetic if (e.user, e.id) not in yes)
    assert {u: _sha(f.path) for u, f in fx.items()} == before  # the human data is untouched
    written = json.loads((out / "simulate.json").read_text())
    assert written["llm_moments"] == len(yes) and SimulateManifest.from_json(written) == res
    assert list(written) == [
        "kind",
        "data",
        "users",
        "skipped_users",
        "candidates",
        "llm_moments",
        "human_moments",
        "unparsed",
        "files",
    ]


def test_partial_run_leaves_out_undecided_users(lt, tmp_path):
    root, _ = lt
    cands = candidate_moments(load_events(root))
    decisions = [d for d in _decide(cands) if d.user == "P01"] + [d for d in _decide(cands) if d.user == "P02"][:2]
    res = write_simulated(root, decisions, cands, tmp_path / "out")
    assert res.users == ("P01",) and res.skipped_users == ("P02",)
    assert {e.user for e in load_events(tmp_path / "out")} == {"P01"}
    with pytest.raises(ValueError, match="no user had every candidate time point decided"):
        write_simulated(root, _decide(cands)[:3], cands, tmp_path / "none")
    assert not (tmp_path / "none").exists()


def test_output_folder_is_replaced_whole_and_guarded(lt, tmp_path):
    root, _ = lt
    cands = candidate_moments(load_events(root))
    out = tmp_path / "out"
    write_simulated(root, _decide(cands), cands, out)
    write_simulated(root, [d for d in _decide(cands) if d.user == "P01"], cands, out)
    assert sorted(p.name for p in out.iterdir()) == ["P01", "simulate.json"]  # no stale P02
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(DataError, match="not the output of an earlier simulate run"):
        write_simulated(root, _decide(cands), cands, foreign)
    assert (foreign / "notes.txt").read_text() == "keep me"
    with pytest.raises(DataError, match="human data itself"):
        write_simulated(root / "P01", _decide(cands)[:1], cands, root)
    with pytest.raises(DataError, match="inside the human data folder"):
        write_simulated(root, _decide(cands), cands, root / "synthetic")
    assert not (root / "synthetic").exists()
    with pytest.raises(DataError, match="does not have"):
        write_simulated(root, [Decision("P99", "1", 0, True)], cands, tmp_path / "x")
    assert not list(tmp_path.glob(".*partial"))


@needs_shared
def test_proactivebench_dataset_keeps_the_sessions(tmp_path):
    human = load_events(SHARED)
    cands = candidate_moments(human)
    decisions = _decide(cands, every=4)
    res = write_simulated(SHARED, decisions, cands, tmp_path / "syn")
    assert res.kind == "proactivebench" and len(res.files) == len({e.user for e in human})
    synthetic = load_events(tmp_path / "syn")
    assert [(e.id, e.start, e.summary) for e in synthetic] == [(e.id, e.start, e.summary) for e in human]
    want = {d.event_id: d for d in decisions}
    for e in synthetic:
        assert e.needs_help is want[e.id].needs_help
        assert e.candidate_tasks == ((want[e.id].query,) if e.needs_help else ())


# --------------------------------------------------------------------------- command


def test_simulate_command_end_to_end(lt, tmp_path):
    root, _ = lt
    runner = CliRunner()
    out, log_dir = tmp_path / "synthetic", tmp_path / "log"
    args = [
        "simulate",
        str(root),
        "--out",
        str(out),
        "--model",
        "scripted/x",
        "--log-dir",
        str(log_dir),
        "--display",
        "none",
    ]
    r = runner.invoke(cli, args)
    assert r.exit_code == 0, r.output
    cands = candidate_moments(load_events(root))
    summary = json.loads((out / "simulate.json").read_text())
    assert summary["candidates"] == len(cands) and summary["unparsed"] == 0
    # the model's choices: one per candidate, from the prompt each was shown
    from proagent.agent.prompting import instruction_text
    from proagent.agent.solvers import METHODS
    from proagent.bench.tasks import assist

    # the message the zero-shot solver sends: the sample's observation, its instruction last
    tail = "\n\n" + instruction_text(METHODS["zero-shot"].prompt)
    prompts = {s.id: s.input + tail for s in assist(str(root), split="all", candidates=True).dataset}
    expected = {(s.user, s.event_id) for s in cands if _says_yes(prompts[s.id])}
    assert 0 < len(expected) < len(cands)
    assert {(e.user, e.id) for e in load_events(out) if e.is_llm_event} == expected
    assert f"model said LLM use at {len(expected)}" in r.output and "proagent stats --compare" in r.output
    assert (log_dir / "results.json").is_file()

    # the human vs synthetic comparison runs on the result
    r = runner.invoke(cli, ["stats", "--compare", str(root), str(out), "--out", str(tmp_path / "cmp")])
    assert r.exit_code == 0, r.output
    table = json.loads((tmp_path / "cmp" / "stats.json").read_text())["table"]
    assert table["columns"][1] != table["columns"][2]

    # a second run reuses the finished log and rewrites the same dataset
    shutil.rmtree(out)
    r = runner.invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert {(e.user, e.id) for e in load_events(out) if e.is_llm_event} == expected
    assert len(list(log_dir.glob("*.eval"))) == 1


def test_simulate_refuses_a_foreign_output_before_running(lt, tmp_path):
    root, _ = lt
    out = tmp_path / "busy"
    out.mkdir()
    (out / "thesis.tex").write_text("x")
    r = CliRunner().invoke(
        cli, ["simulate", str(root), "--out", str(out), "--model", "scripted/x", "--log-dir", str(tmp_path / "log")]
    )
    assert r.exit_code != 0 and "not the output of an earlier simulate run" in r.output
    assert not (tmp_path / "log").exists() or not list((tmp_path / "log").glob("*.eval"))
