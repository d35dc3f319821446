"""The environment generator with a scripted mock model: topic review gate, target
ensemble, difficulty rounds with refinement, final check, tiers, resumption."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from proagent.cli.dialogue import dialogue
from proagent.dialogue import Environment, read_environments
from proagent.dialogue.generator import GenConfig, GenModels, TopicReviewPending, run_generate
from proagent.dialogue.records import RoundYield

SEEDS = [Environment("rec-1", "recommendation", "hobbies/cycling", "cyclist", "asks weather", "tyres", ("a", "b"))]


def out(text: str) -> ModelOutput:
    o = ModelOutput.from_content(model="mockllm", content=text)
    o.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return o


class World:
    """Scripted answers keyed on the prompt's content. Topic 'alpha' is easy at first and
    fair after one refinement round; topic 'beta' is hard but fails the final check."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, input, tools, tool_choice, config):  # noqa: ANN001
        text = "\n".join(m.text for m in input)
        if "distinct, concrete sub-topics" in text:
            k = "topics"
            ans = "1. Alpha\n2. Beta\n3. Gamma"
        elif "Write a new, realistic situation" in text:
            k = "environment"
            topic = re.search(r'topic "([^"]+)"', text).group(1)
            ans = json.dumps({"user_information": f"INFO-{topic}", "trigger_factor": "TRIGGER"})
        elif "harder to see" in text:
            k = "obfuscate"
            ans = json.dumps({"user_information": "OBF-alpha", "trigger_factor": "TRIGGER"})
        elif "irrelevant details" in text:
            k = "noise"
            ui = re.search(r"User information: (.*)", text).group(1)
            ans = json.dumps({"user_information": ui + " NOISE", "trigger_factor": "TRIGGER likes tea"})
        elif "Candidates:" in text:
            k = "merge"
            ans = 'Candidate 1 is timely.\n{"target": "REF", "sub_target": ["s1", "s2", "s3"]}'
        elif "Now judge this case" in text:
            k = "judge"
            guess = int(re.search(r"Candidate target: guess-(\d+)", text).group(1))
            if "INFO-alpha" in text:
                score = 8
            elif "OBF-alpha" in text:
                score = 8 if guess % 100 == 0 else 3  # only the first reasoner finds it
            else:
                score = 2
            ans = f"Reasoning: compared.\nScore: {score}"
        elif "Options:" in text:
            k = "check"
            letters = dict(re.findall(r"^([A-H])\. (.*)$", text, re.MULTILINE))
            ref = next(L for L, o in letters.items() if o == "REF")
            other = next(L for L in letters if L != ref)
            ans = f"Reasoning.\nBest: {ref if 'alpha' in text else other}"
        elif "Reply with JSON only" in text:
            k = "plan"
            ans = json.dumps({"target": f"guess-{config.seed}", "sub_target": ["x", "y"]})
        else:
            raise AssertionError(text[:300])
        self.calls.append(k)
        return out(ans)


def test_generate_pipeline_and_resume(tmp_path):
    world = World()
    m = get_model("mockllm/model", custom_outputs=world)
    cfg = GenConfig(depth=1, branching=2, n_candidates=3, max_rounds=2, n_checkers=3)
    with pytest.raises(TopicReviewPending):
        run_generate(tmp_path, SEEDS, GenModels(generator=m, judge=m), cfg)
    topics = (tmp_path / "topics.txt").read_text("utf-8")
    assert "recommendation: alpha" in topics and "recommendation: beta" in topics and "gamma" not in topics
    assert world.calls == ["topics"]
    # not approved yet: stops again without calling any model
    with pytest.raises(TopicReviewPending):
        run_generate(tmp_path, SEEDS, GenModels(generator=m, judge=m), cfg)
    assert world.calls == ["topics"]

    cfg.approve_topics = True
    summary = run_generate(tmp_path, SEEDS, GenModels(generator=m, judge=m), cfg)
    assert summary.per_round[0] == RoundYield(round=0, tested=2, easy=1, fair=0, hard=1)
    assert summary.per_round[1] == RoundYield(round=1, tested=1, easy=0, fair=1, hard=0)
    assert (summary.kept_fair, summary.kept_hard) == (1, 0)
    assert summary.status == {"kept": 1, "dropped: final check (the reference was not the judges' best)": 1}
    assert world.calls.count("plan") == 2 * 3 + 3 * 3  # candidates + reasoners in rounds 0, 0, 1
    assert world.calls.count("obfuscate") == 1 and world.calls.count("noise") == 1

    [env] = read_environments(tmp_path / "dataset")
    assert env.tier == "fair" and env.domain == "recommendation" and env.topic == "alpha"
    assert env.user_information == "OBF-alpha NOISE" and env.target == "REF" and env.sub_target == ("s1", "s2", "s3")
    alpha = json.loads((tmp_path / "items" / "recommendation--alpha.json").read_text("utf-8"))
    assert [r["difficulty"]["verdict"] for r in alpha["rounds"]] == ["easy", "fair"]
    assert len(alpha["candidates"]) == 3 and alpha["final_check"]["reference_votes"] == 3
    written = json.loads((tmp_path / "yield.json").read_text("utf-8"))
    assert written == summary.to_json() and list(written) == ["topics", "per_round", "status", "kept"]
    assert written["per_round"][0] == {"round": 0, "tested": 2, "easy": 1, "fair": 0, "hard": 1}
    assert written["kept"] == {"fair": 1, "hard": 0}

    # resume: everything is on disk, nothing is asked again
    n = len(world.calls)
    assert run_generate(tmp_path, SEEDS, GenModels(generator=m, judge=m), cfg) == summary
    assert len(world.calls) == n


def test_generate_cli_review_gate(tmp_path, monkeypatch):
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text(json.dumps(SEEDS[0].to_item()) + "\n", "utf-8")
    world = World()
    from inspect_ai import model as inspect_model

    real = inspect_model.get_model
    monkeypatch.setattr(inspect_model, "get_model", lambda name, **kw: real("mockllm/model", custom_outputs=world))
    args = [
        "generate",
        "--seeds",
        str(seeds),
        "--out",
        str(tmp_path / "gen"),
        "--model",
        "mockllm/model",
        "--depth",
        "1",
        "--branching",
        "1",
        "--candidates",
        "1",
        "--rounds",
        "1",
        "--n-checkers",
        "1",
    ]
    r = CliRunner().invoke(dialogue, args)
    assert r.exit_code == 0, r.output
    assert "topic tree awaiting review" in r.output and "--approve-topics" in r.output
    r = CliRunner().invoke(dialogue, [*args, "--approve-topics"])
    assert r.exit_code == 0, (r.output, r.exception)
    assert "round 0: tested 1, easy 1" in r.output and "kept: fair" in r.output


@pytest.mark.parametrize(
    "topics, message",
    [
        ("# every line deleted\n", "has no topics"),
        ("recommendation: alpha\nrecommendation hobbies/cycling\n", "line 2: expected 'domain: topic"),
        ("recomendation: books\n", "neither seed domains"),
        (b"recommendation: caf\xe9\n", "not UTF-8"),
    ],
)
def test_generate_refuses_an_empty_or_malformed_topic_tree(tmp_path, topics, message):
    world = World()
    m = get_model("mockllm/model", custom_outputs=world)
    if isinstance(topics, bytes):
        (tmp_path / "topics.txt").write_bytes(topics)
    else:
        (tmp_path / "topics.txt").write_text(topics, "utf-8")
    cfg = GenConfig(depth=1, branching=2, n_candidates=1, max_rounds=1, n_checkers=1, approve_topics=True)
    with pytest.raises(ValueError, match=message):
        run_generate(tmp_path, SEEDS, GenModels(generator=m, judge=m), cfg)
    assert world.calls == [] and not (tmp_path / "items").exists()


def test_generate_cli_rejects_an_unknown_model(tmp_path):
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text(json.dumps(SEEDS[0].to_item()) + "\n", "utf-8")
    r = CliRunner().invoke(
        dialogue,
        [
            "generate",
            "--seeds",
            str(seeds),
            "--out",
            str(tmp_path / "gen"),
            "--model",
            "mockllm/model",
            "--judge",
            "local/no-such-model",
        ],
    )
    assert r.exit_code != 0 and "--judge local/no-such-model" in r.output and "Traceback" not in r.output


def test_topics_keep_a_hash_inside_a_topic(tmp_path):
    from proagent.dialogue.generator import read_topics

    (tmp_path / "topics.txt").write_text("# header\n  # indented comment\nrecommendation: C# books\n", "utf-8")
    assert read_topics(tmp_path / "topics.txt") == [("recommendation", "C# books")]


def test_generate_cli_model_failure_says_how_to_resume(tmp_path, monkeypatch):
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text(json.dumps(SEEDS[0].to_item()) + "\n", "utf-8")
    out_dir = tmp_path / "gen"
    out_dir.mkdir()
    (out_dir / "topics.txt").write_text(f"{SEEDS[0].domain}: alpha\n", "utf-8")

    def failing():
        raise RuntimeError("server went away")
        yield  # unreachable: makes this a generator

    from inspect_ai import model as inspect_model

    real = inspect_model.get_model
    monkeypatch.setattr(inspect_model, "get_model", lambda name, **kw: real("mockllm/model", custom_outputs=failing()))
    r = CliRunner().invoke(
        dialogue,
        [
            "generate",
            "--seeds",
            str(seeds),
            "--out",
            str(out_dir),
            "--model",
            "mockllm/model",
            "--approve-topics",
            "--candidates",
            "1",
            "--rounds",
            "1",
            "--n-checkers",
            "1",
        ],
    )
    assert r.exit_code != 0 and "server went away" in r.output and "re-run the same command to resume" in r.output
    assert "Traceback" not in r.output
