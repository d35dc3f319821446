"""Synthetic LifeTrace generator: readable by the readers, deterministic, bursty."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest
from click.testing import CliRunner

from proagent.cli.synth import synth_cmd
from proagent.sources.lifetrace import load_lifetrace, read_lifetrace
from proagent.sources.load import load_events
from proagent.stats import burstiness, inter_event_times
from proagent.synth import DB_NAME, SynthConfig, SynthManifest, generate, intention_shares
from proagent.taxonomy import load_taxonomy


def _dump(path) -> list[str]:
    con = sqlite3.connect(path)
    try:
        return list(con.iterdump())
    finally:
        con.close()


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth")
    res = generate(out, SynthConfig(users=2, days=3, seed=3, screenshot_interval=30))
    return out, res


def test_readers_load_generated_dbs(small):
    out, res = small
    manifest = json.loads((out / "synth.json").read_text("utf-8"))
    assert manifest["events"] == res.events and manifest["config"]["seed"] == 3
    assert list(manifest) == ["config", "users", "events", "llm_events", "screenshots"]
    assert [list(u) for u in manifest["users"]] == [["user", "events", "llm_events", "screenshots"]] * 2
    assert SynthManifest.from_json(manifest) == res  # the record reads back what it wrote (paths and seconds aside)
    names = set(load_taxonomy().names)
    total_llm = 0
    for u in res.users:
        log = load_lifetrace(out / u.user / DB_NAME)
        assert log.schema.variant == "processed" and log.user == u.user and u.path == out / u.user / DB_NAME
        assert len(log.events) == u.events and log.n_screenshots == u.screenshots
        assert log.n_orphan_screenshots == 0 and log.n_filled_ends == 0
        starts = [e.start for e in log.events]
        assert starts == sorted(starts)
        assert all(e.end is not None and e.end > e.start for e in log.events)
        assert all(a.end <= b.start for a, b in zip(log.events, log.events[1:]))  # no overlap
        assert all(e.screenshots and all(e.start <= s.time < e.end for s in e.screenshots) for e in log.events)
        llm = [e for e in log.events if e.is_llm_event]
        assert llm and all(e.is_llm_event is False for e in log.events if e not in llm)
        for e in llm:
            assert e.conversation is not None and not e.conversation.is_empty
            assert e.intention in names and e.llm_platform
        assert any(any("\u4e00" <= ch <= "\u9fff" for ch in e.window_title) for e in log.events)  # Chinese
        assert any(e.window_title.isascii() for e in log.events)  # and English
        total_llm += len(llm)
    assert total_llm == res.llm_events
    assert len(load_events(out)) == res.events  # participant folder detected


def test_same_seed_identical_and_other_seed_differs(small, tmp_path):
    out, _ = small
    generate(tmp_path / "a", SynthConfig(users=1, days=3, seed=3, screenshot_interval=30))
    generate(tmp_path / "b", SynthConfig(users=1, days=3, seed=4, screenshot_interval=30))
    ref = _dump(out / "U001" / DB_NAME)
    assert _dump(tmp_path / "a" / "U001" / DB_NAME) == ref
    assert _dump(tmp_path / "b" / "U001" / DB_NAME) != ref


def test_generated_llm_use_is_bursty(tmp_path):
    res = generate(tmp_path, SynthConfig(users=1, days=10, seed=0, screenshot_interval=120))
    events = read_lifetrace(tmp_path / "U001" / DB_NAME)
    gaps = inter_event_times(events, lambda e: bool(e.is_llm_event))
    assert gaps.size >= 100
    assert burstiness(gaps) > 0.3
    assert res.llm_events == gaps.size + 1


def test_intentions_follow_taxonomy_shares():
    names, p = intention_shares()
    assert p.sum() == pytest.approx(1.0)
    assert p[names.index("Information Retrieval")] == pytest.approx(0.351, abs=1e-9)
    assert p.min() > 0


def test_screenshot_files_written_and_resolved(tmp_path):
    generate(tmp_path, SynthConfig(users=1, days=1, seed=1, screenshots=True, screenshot_interval=120))
    log = load_lifetrace(tmp_path / "U001")
    shots = [s for e in log.events for s in e.screenshots]
    assert shots and log.n_missing_files == 0
    s = shots[len(shots) // 2]
    assert s.path is not None and hashlib.sha256(s.path.read_bytes()).hexdigest() == s.file_hash
    assert len({x.file_name for x in shots}) == len(shots)


def test_config_and_cli(tmp_path):
    with pytest.raises(ValueError):
        SynthConfig(alpha=1.0)
    r = CliRunner().invoke(synth_cmd, ["--users", "1", "--days", "1", "--out", str(tmp_path), "--seed", "2"])
    assert r.exit_code == 0, r.output
    assert "wrote 1 database(s)" in r.output and (tmp_path / "U001" / DB_NAME).is_file()
    r = CliRunner().invoke(synth_cmd, ["--out", str(tmp_path), "--alpha", "0.5"])
    assert r.exit_code != 0 and "alpha" in r.output


def test_rerun_into_the_same_folder_keeps_only_this_runs_users(tmp_path):
    out = tmp_path / "syn"
    generate(out, SynthConfig(users=3, days=1, seed=1))
    generate(out, SynthConfig(users=1, days=1, seed=1))
    assert sorted(p.name for p in out.iterdir()) == ["U001", "synth.json"]
    assert {e.user for e in load_events(out)} == {"U001"}


def test_refuses_a_foreign_non_empty_folder(tmp_path):
    (tmp_path / "mine.txt").write_text("keep")
    r = CliRunner().invoke(synth_cmd, ["--users", "1", "--days", "1", "--out", str(tmp_path)])
    assert r.exit_code != 0 and "not empty" in r.output and "synth.json" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]
