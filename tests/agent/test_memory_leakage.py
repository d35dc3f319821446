"""Memory never leaks: nothing from the test period or from t onward reaches a
prompt, and one user's memory never reaches another user's prompt.

Runs the real ``proagent eval --memory ...`` path with inspect's mockllm (no
network: token counting is patched) on session files whose every step carries
a unique marker (``evtNN``) and a per-user word."""

from __future__ import annotations

import glob
from datetime import datetime

import pytest
from click.testing import CliRunner
from memory_fixtures import MARK, write_sessions

from proagent.agent.memory import MemoryQuery, build_memory, train_cutoffs, train_records
from proagent.bench.samples import SampleConfig, build_samples
from proagent.sources.load import load_events

KINDS = ("rag", "kg", "persona")


pytestmark = pytest.mark.usefixtures("in_tmp_path")  # working folder and caches in tmp_path (conftest)


@pytest.fixture
def data(tmp_path):
    return write_sessions(tmp_path / "sessions", n=12)


def _setup(data):
    events = load_events(data)
    samples = build_samples(events, SampleConfig())
    return events, samples


# --------------------------------------------------------------------------- unit level


def test_records_come_from_training_period_only(data):
    events, samples = _setup(data)
    cutoffs = train_cutoffs(samples)
    recs = train_records(events, cutoffs)
    assert set(recs) == {"alpha_1", "beta_1"}
    for user, rs in recs.items():
        test_times = [s.time for s in samples if s.user == user and s.split == "test"]
        assert cutoffs[user] == min(test_times)
        assert rs and all(r.known_at < cutoffs[user] and r.time < cutoffs[user] for r in rs)
        assert len(rs) == sum(1 for s in samples if s.user == user and s.split == "train")
        assert all(r.user == user for r in rs)


@pytest.mark.parametrize("kind", ["rag", "kg"])
def test_lookup_is_strictly_before_t(data, kind):
    events, samples = _setup(data)
    mem = build_memory(kind, events, samples)
    recs = mem.records["alpha_1"]
    # a moment exactly at the 4th record's known_at sees only the 3 before it
    t = recs[3].known_at
    q = MemoryQuery("alpha_1", t, "Visual Studio Code", "alpha_evt03.py", "edits")
    items = mem.lookup(q)
    assert items and all(it.known_at < t for it in items)
    if kind == "rag":
        assert {it.id for it in items} == {r.id for r in recs[:3]}
    text = " ".join(it.text for it in items)
    assert all(int(m) < 3 for m in MARK.findall(text))
    # before the first record: nothing at all
    assert mem.lookup(MemoryQuery("alpha_1", recs[0].known_at, "x", "y", "z")) == []
    assert mem.blocked == 0


@pytest.mark.parametrize("kind", KINDS)
def test_cross_user_isolation_unit(data, kind):
    events, samples = _setup(data)
    mem = build_memory(kind, events, samples)
    if kind == "persona":
        import asyncio

        from inspect_ai.model import ModelOutput, get_model

        model = get_model(
            "mockllm/model",
            custom_outputs=[ModelOutput.from_content("mockllm/model", f"persona text {i}") for i in range(20)],
        )
        for u in mem.records:
            asyncio.run(mem.prepare(u, model=model))
        for u in mem.records:  # the persona-writing prompts hold only the user's own records
            assert all(("beta" in p) == (u == "beta_1") for p in mem.prompts(u))
    late = datetime(2100, 1, 1)
    for user, other in (("alpha_1", "beta"), ("beta_1", "alpha")):
        items = mem.lookup(MemoryQuery(user, late, "Web browser", f"{other} docs", f"{other} docs"))
        assert items
        assert all(it.user == user for it in items)
        assert other not in " ".join(it.text for it in items).lower()
    assert mem.lookup(MemoryQuery("nobody", late, "a", "b", "c")) == []


def test_persona_prompts_hold_no_test_period_record(data):
    events, samples = _setup(data)
    mem = build_memory("persona", events, samples)
    for user in mem.records:
        cutoff = min(s.time for s in samples if s.user == user and s.split == "test")
        train_idx = {int(r.id.split(":")[-1]) for r in mem.records[user]}
        for p in mem.prompts(user):
            assert {int(m) for m in MARK.findall(p)} <= train_idx
        assert all(r.known_at < cutoff for r in mem.records[user])


# --------------------------------------------------------------------------- through the prompt


def _memory_block(text: str) -> str:
    return text.split("Recent activity", 1)[0]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("split", ["test", "all"])
def test_no_future_or_foreign_memory_in_prompts(tmp_path, data, kind, split):
    from inspect_ai.log import read_eval_log

    from proagent.cli import cli

    log_dir = tmp_path / f"logs-{kind}-{split}"
    r = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(data),
            "--model",
            "mockllm/model",
            "--memory",
            kind,
            "--split",
            split,
            "--log-dir",
            str(log_dir),
            "--display",
            "none",
        ],
    )
    assert r.exit_code == 0, (r.output, r.exception)
    assert f"memory: {kind}" in r.output
    log = read_eval_log(glob.glob(str(log_dir / "*.eval"))[0])
    events, samples = _setup(data)
    by_id = {s.id: s for s in samples}
    index_time = {(e.user, int(MARK.search(e.summary).group(1))): e.start for e in events}
    cutoffs = train_cutoffs(samples)
    n_with_memory = 0
    assert len(log.samples) == len([s for s in samples if split == "all" or s.split == split])
    for s in log.samples:
        sample = by_id[str(s.id)]
        user_msg = next(m for m in s.messages if m.role == "user")
        block = _memory_block(user_msg.text)
        assert block.startswith("Long-term memory")
        other = "beta" if sample.user.startswith("alpha") else "alpha"
        assert other not in block.lower()
        for m in MARK.findall(block):
            t_i = index_time[(sample.user, int(m))]
            assert t_i < sample.time, (s.id, m)
            assert t_i < cutoffs[sample.user], (s.id, m)  # never the test period
        meta = s.metadata["memory"]
        assert all(datetime.fromisoformat(k) < sample.time for k in meta["known_at"])
        n_with_memory += bool(meta["items"])
    assert n_with_memory > 0
