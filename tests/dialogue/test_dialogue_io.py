"""ProactiveEval environments: reader/writer, the published layout, malformed items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proagent.dialogue import DOMAINS, Environment, read_environments, write_environments, write_layout
from proagent.dialogue.planning import round_robin
from proagent.errors import DataError

SEED = Path(__file__).resolve().parents[3] / "shared" / "data" / "proactiveeval-seed" / "environments.jsonl"


def item(i: int = 1, domain: str = "recommendation", **over) -> dict:
    base = {
        "id": f"x-{i}",
        "domain": domain,
        "topic": "a/b",
        "environment": {"user_information": f"user {i}", "trigger_factor": f"trigger {i}"},
        "target": f"target {i}",
        "sub_target": ["s1", "s2"],
    }
    base.update(over)
    return base


@pytest.mark.skipif(not SEED.is_file(), reason="seed environments not found beside the repository")
def test_reads_seed():
    envs = read_environments(SEED)
    assert len(envs) == 12
    assert {e.domain for e in envs} == set(DOMAINS)
    e = envs[0]
    assert e.id == "rec-001" and e.user_information and e.trigger_factor and len(e.sub_target) == 4
    assert e.tier is None
    # the folder works too
    assert [x.id for x in read_environments(SEED.parent)] == [x.id for x in envs]


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_round_trip(tmp_path, suffix):
    items = [item(1), item(2, "persuasion", extra_field={"k": 1}, tier="hard")]
    src = tmp_path / f"in{suffix}"
    if suffix == ".jsonl":
        src.write_text("\n".join(json.dumps(i) for i in items) + "\n\n", "utf-8")
    else:
        src.write_text(json.dumps(items), "utf-8")
    envs = read_environments(src)
    assert [e.id for e in envs] == ["x-1", "x-2"]
    assert envs[1].tier == "hard" and envs[1].extra == {"extra_field": {"k": 1}}
    out = write_environments(tmp_path / f"out{suffix}", envs)
    again = read_environments(out)
    assert again == envs and again[1].extra == envs[1].extra
    assert not list(tmp_path.glob(".out*"))  # no temporary files left


def test_published_layout(tmp_path):
    root = tmp_path / "ProactiveEval"
    ds = root / "dataset"
    (ds / "recommendation").mkdir(parents=True)
    (ds / "persuasion").mkdir()
    # published items may lack id and domain: both come from the layout
    bare = {k: v for k, v in item(1).items() if k not in {"id", "domain"}}
    (ds / "recommendation" / "fair.json").write_text(json.dumps([bare, bare]), "utf-8")
    (ds / "recommendation" / "hard.json").write_text(json.dumps([bare]), "utf-8")
    (ds / "persuasion" / "hard.json").write_text(json.dumps([item(7, "persuasion")]), "utf-8")
    for path in (root, ds):
        envs = read_environments(path)
        assert [(e.id, e.domain, e.tier) for e in envs] == [
            ("x-7", "persuasion", "hard"),
            ("recommendation-fair-001", "recommendation", "fair"),
            ("recommendation-fair-002", "recommendation", "fair"),
            ("recommendation-hard-001", "recommendation", "hard"),
        ]
    assert len(read_environments(ds / "recommendation")) == 3
    # and the writer produces the same layout
    written = write_layout(tmp_path / "out", read_environments(root))
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in written) == [
        "persuasion/hard.json",
        "recommendation/fair.json",
        "recommendation/hard.json",
    ]
    assert len(read_environments(tmp_path / "out")) == 4


BAD = [
    ("not_object", ["just a string"], "item 1: expected an object"),
    ("no_environment", [item(1, environment=None)], "'x-1'"),
    (
        "empty_trigger",
        [item(1, environment={"user_information": "u", "trigger_factor": "  "})],
        "environment.trigger_factor",
    ),
    ("no_user_info", [item(1, environment={"trigger_factor": "t"})], "environment.user_information"),
    ("sub_target_string", [item(1), item(2, sub_target="do it")], "item 2 (id 'x-2'): sub_target"),
    ("sub_target_empty", [item(1, sub_target=[])], "sub_target"),
    ("sub_target_number", [item(1, sub_target=["a", 3])], "sub_target[1]"),
    ("no_target", [item(1, target=None)], "target"),
    ("no_domain", [{k: v for k, v in item(1).items() if k != "domain"}], "domain"),
    ("bad_tier", [item(1, tier="easy")], "tier"),
    ("duplicate", [item(1), item(1)], "duplicate id 'x-1'"),
]


@pytest.mark.parametrize("name, items, needle", BAD, ids=[b[0] for b in BAD])
def test_malformed_items_are_rejected(tmp_path, name, items, needle):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(items), "utf-8")
    with pytest.raises(DataError) as ei:
        read_environments(path)
    msg = str(ei.value)
    assert path.name in msg and needle in msg, msg


@pytest.mark.parametrize(
    "name, text, needle",
    [
        ("bad.jsonl", json.dumps(item(1)) + "\n{oops\n", "line 2"),
        ("bad.json", "[{", "invalid JSON"),
        ("dict.json", '{"items": []}', "expected a list"),
        ("empty.json", "[]", "no ProactiveEval items"),
    ],
)
def test_bad_files(tmp_path, name, text, needle):
    (tmp_path / name).write_text(text, "utf-8")
    with pytest.raises(DataError, match=needle):
        read_environments(tmp_path / name)


def test_missing_path_and_empty_folder(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        read_environments(tmp_path / "nope.jsonl")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no .json"):
        read_environments(tmp_path / "empty")


def test_round_robin_interleaves_domains():
    def env(i, d):
        return Environment(f"{d}-{i}", d, "", "u", "t", "g", ("s",))

    envs = [env(1, "a"), env(2, "a"), env(3, "a"), env(1, "b"), env(1, "c")]
    assert [e.id for e in round_robin(envs)] == ["a-1", "b-1", "c-1", "a-2", "a-3"]
