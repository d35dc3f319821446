"""The When-to-Assist decider: observable-only features, training, the skops folder, the
gate that makes a No cost no model call, and the leakage guard."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from proagent.agent.decider import (
    DeciderError,
    EmbeddingCache,
    FeatureConfig,
    feature_names,
    load_decider,
    moment_features,
)
from proagent.bench.samples import SampleConfig, build_samples
from proagent.cli import cli
from proagent.records import Conversation, Event
from proagent.train import (
    TrainingSet,
    WhenConfig,
    choose_threshold,
    find_leaks,
    fit_when,
    load_split_moments,
    parse_objective,
    train_decider,
)

# <root>/shared beside <root>/main, as the other tests expect; PROAGENT_SHARED points elsewhere (a worktree)
SHARED = (
    Path(os.environ.get("PROAGENT_SHARED") or Path(__file__).resolve().parents[3] / "shared")
    / "data"
    / "proactivebench"
)
SYNTHETIC = SHARED.parent / "proactivebench-synthetic"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data/proactivebench not present")


def fake_embed(texts):
    """Deterministic unit vectors from the text's SHA-256 (the e5 model is not what these tests check)."""
    out = []
    for t in texts:
        rng = np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16))
        v = rng.normal(size=384)
        out.append(v / np.linalg.norm(v))
    return np.asarray(out, np.float32)


@pytest.fixture
def cache(tmp_path):
    return EmbeddingCache(tmp_path / "emb", embed=fake_embed)


def _session(labels, texts=None, start=datetime(2024, 6, 3, 10, 0, 0)):
    texts = texts or [f"The user types code in 'f{i}.py' in Visual Studio Code." for i in range(len(labels))]
    evs = []
    for i, (lab, text) in enumerate(zip(labels, texts)):
        t = start + timedelta(seconds=20 * i)
        evs.append(
            Event(
                id=f"s:{i}",
                user="s",
                start=t,
                end=t + timedelta(seconds=20),
                summary=text,
                needs_help=bool(lab),
                candidate_tasks=("Help with the code.",) if lab else (),
            )
        )
    return evs


# ---- features read only what is observable at t -------------------------------------------------


def test_past_labels_and_future_events_do_not_change_the_features(cache):
    """A fixture where leaking would flip the decision: the label of each moment is the label of the
    moment before (so a model reading past labels would be right every time), and the next event's
    text announces the label. The features must be identical whatever those hold."""
    labels = [1, 1, 0, 0, 1, 0, 1, 1, 0, 1]
    texts = [f"The user scrolls the page {i}." for i in range(len(labels))]
    base = build_samples(_session(labels, texts), SampleConfig(window_seconds=600))
    # flip every past label, its candidate tasks, add intentions/conversations, and rewrite the future
    flipped_events = [
        replace(
            e,
            needs_help=not e.needs_help,
            candidate_tasks=("x",) if not e.needs_help else (),
            intention="Debugging",
            conversation=Conversation(user_queries=("why?",)),
        )
        for e in _session(labels, texts)
    ]
    other = build_samples(flipped_events, SampleConfig(window_seconds=600))
    fc = FeatureConfig(("embedding", "similarity", "behaviour", "keywords", "clock", "weekday"))
    x0, x1 = moment_features(base, cache, fc), moment_features(other, cache, fc)
    assert np.array_equal(x0, x1)
    # the future: replace every event after moment k; features of moments <= k stay the same
    k = 4
    future = [
        e if i <= k else replace(e, summary="The user gets an error and NEEDS HELP NOW.", start=e.start)
        for i, e in enumerate(_session(labels, texts))
    ]
    xf = moment_features(build_samples(future, SampleConfig(window_seconds=600)), cache, fc)
    assert np.array_equal(x0[: k + 1], xf[: k + 1])
    assert not np.array_equal(x0[k + 1 :], xf[k + 1 :])  # the test can fail: observables do move the features


def test_feature_shapes_and_names(cache):
    s = build_samples(_session([1, 0, 1]), SampleConfig())
    x = moment_features(s, cache)
    assert x.shape == (3, len(feature_names()))
    names = feature_names()
    assert x[0, names.index("log_window_events")] == 0.0  # first moment: no context
    assert x[2, names.index("log_seconds_since_previous")] == pytest.approx(np.log1p(20.0))
    assert x[1, names.index("is_typing")] == 1.0
    with pytest.raises(ValueError, match="feature groups"):
        FeatureConfig(("nope",))


def test_embedding_cache_is_on_disk_by_text_hash(tmp_path):
    calls = []

    def counting(texts):
        calls.extend(texts)
        return fake_embed(texts)

    c1 = EmbeddingCache(tmp_path, embed=counting)
    v = c1.get(["a b", "c d", "a b", ""])
    assert calls == ["a b", "c d"] and np.allclose(v[0], v[2]) and not v[3].any()
    c2 = EmbeddingCache(tmp_path, embed=counting)  # a new process: read from disk, no model call
    assert np.allclose(c2.get(["c d"])[0], v[1]) and calls == ["a b", "c d"]
    assert c2.missing(["a b", "new"]) == 1


# ---- thresholds and objectives ------------------------------------------------------------------


def test_threshold_objectives():
    p = [0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9]
    y = [0, 0, 1, 0, 1, 0, 1, 1]
    assert choose_threshold(p, y, "accuracy") == 0.6  # 6 of 8 right
    assert choose_threshold(p, y, "f1") == 0.3
    assert choose_threshold(p, y, "precision-at-recall:1.0") == 0.3
    assert choose_threshold(p, y, "precision-at-recall:0.5") == 0.8
    assert parse_objective("precision-at-recall:0.8") == ("precision-at-recall", 0.8)
    for bad in ("auc", "precision-at-recall:0", "precision-at-recall:1.5"):
        with pytest.raises(ValueError):
            parse_objective(bad)
    with pytest.raises(ValueError, match="both positive and negative"):
        choose_threshold([0.1, 0.2], [1, 1], "f1")


# ---- training, the folder, loading --------------------------------------------------------------


@pytest.fixture(scope="module")
def _dev_decider_once(tmp_path_factory):
    """One decider trained on the dev train split (with :func:`fake_embed`) for the whole file."""
    if not SHARED.is_dir():
        pytest.skip("../shared/data/proactivebench not present")
    tmp = tmp_path_factory.mktemp("dev-decider")
    train, src = load_split_moments(SHARED, "train")
    folder = tmp / "dec"
    manifest = train_decider(
        TrainingSet(tuple(train), (src,), ("real",) * len(train)),
        folder,
        cache=EmbeddingCache(tmp / "emb", embed=fake_embed),
    )
    return folder, manifest


@pytest.fixture(scope="module")
def e5_cache(tmp_path_factory):
    """One cache of real e5 embeddings for the file's tests (keyed by text and model): each moment
    is embedded once, not once per test (issue 45: the embeddings were most of their minutes)."""
    return tmp_path_factory.mktemp("e5")


@pytest.fixture
def dev_decider(_dev_decider_once, tmp_path):
    """A copy of the file's trained decider folder in ``tmp_path`` (tests edit and break it)."""
    src, manifest = _dev_decider_once
    folder = tmp_path / "dec"
    shutil.copytree(src, folder)
    return folder, copy.deepcopy(manifest)


def test_train_writes_folder_and_loads(dev_decider, cache, tmp_path):
    folder, manifest = dev_decider
    assert {p.name for p in folder.iterdir()} >= {"model.skops", "manifest.json", "report.md"}
    m = json.loads((folder / "manifest.json").read_text())
    assert m["n"] == 55 and m["n_positive"] == 17 and m["training_data"][0]["selection"] == "train split"
    assert m["training_data"][0]["sha256"] and len(m["training_moments"]) == 55 and 0 <= m["threshold"] <= 1
    assert set(m["cv"]) >= {"auc", "accuracy", "precision", "recall", "f1"} and m["versions"]["skops"]
    dec = load_decider(folder, cache=cache)
    test, _ = load_split_moments(SHARED, "test")
    d = dec.decide(test[0])
    assert 0 <= d.p_yes <= 1 and d.needs_help == (d.p_yes >= m["threshold"]) and d.latency_ms > 0
    assert dec.probabilities(test[:3]) == pytest.approx([dec.decide(s).p_yes for s in test[:3]])
    # deterministic for a seed
    again = train_decider(
        TrainingSet(tuple(load_split_moments(SHARED, "train")[0]), (), ()), tmp_path / "again", cache=cache
    )
    assert again.threshold == manifest.threshold
    assert np.allclose(load_decider(tmp_path / "again", cache=cache).probabilities(test), dec.probabilities(test))


def _edit(folder: Path, **changes) -> None:
    m = json.loads((folder / "manifest.json").read_text())
    m.update(changes)
    (folder / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize(
    "change, message",
    [
        ({"feature_version": 999}, "feature version 999"),
        ({"format": "other"}, "not a proagent decider manifest"),
        ({"manifest_version": 7}, "manifest version 7"),
        ({"embedding_model": "bge"}, "embeddings"),
        ({"n_features": 3}, "feature count"),
    ],
)
def test_mismatched_manifest_is_refused(dev_decider, change, message):
    folder, _ = dev_decider
    _edit(folder, **change)
    with pytest.raises(DeciderError, match=message):
        load_decider(folder)


def test_changed_model_file_and_missing_folder_are_refused(dev_decider, tmp_path):
    folder, _ = dev_decider
    with open(folder / "model.skops", "ab") as f:
        f.write(b"\0")
    with pytest.raises(DeciderError, match="SHA-256"):
        load_decider(folder)
    with pytest.raises(DeciderError, match="not a decider folder"):
        load_decider(tmp_path)


# ---- the gate: a No costs no model call ---------------------------------------------------------

CALLS: list[str] = []


def _register_counting_model() -> None:
    from inspect_ai.model import ModelAPI, ModelOutput, modelapi

    @modelapi(name="counting")
    def counting():  # noqa: ANN202
        class Counting(ModelAPI):
            async def generate(self, input, tools, tool_choice, config):  # noqa: A002, ANN001, ANN201
                CALLS.append(input[-1].text)
                return ModelOutput.from_content(
                    self.model_name, "Need help: No\nIntention: Debugging\nQuery: How do I fix this?"
                )

        return Counting


_register_counting_model()


@needs_shared
def test_no_costs_no_model_call(dev_decider, tmp_path, monkeypatch, e5_cache):
    from inspect_ai import eval as inspect_eval

    from proagent.bench.tasks import assist

    monkeypatch.setenv("PROAGENT_EMBEDDING_CACHE", str(e5_cache))
    folder, _ = dev_decider
    test, _ = load_split_moments(SHARED, "test")
    p = load_decider(folder).probabilities(test)  # as the task computes them (the real e5 model)
    _edit(folder, threshold=float(np.median(p)))  # about half Yes, half No
    CALLS.clear()
    log = inspect_eval(
        assist(data=str(SHARED), decider=str(folder)),
        model="counting/x",
        display="none",
        log_dir=str(tmp_path / "logs"),
    )[0]
    assert log.status == "success"
    decisions = [s.scores["assist_scorer"].metadata["decider"] for s in log.samples]
    yes = sum(d["needs_help"] for d in decisions)
    assert 0 < yes < len(test) and len(CALLS) == yes
    for s, d in zip(log.samples, decisions):
        model_events = [e for e in s.events if e.event == "model"]
        pred = s.scores["assist_scorer"].metadata["prediction"]
        assert len(model_events) == (1 if d["needs_help"] else 0)
        # the decider decides When (the model said No), the model only says How
        assert pred["needs_help"] is d["needs_help"] and pred["parse_method"] == "decider"
        assert (pred["query"] == "How do I fix this?") is d["needs_help"]
    from proagent.report.decider import decider_results

    block = decider_results(log, str(folder))
    assert block["llm_calls"] == yes and block["moments"] == len(test) and block["yes"] == yes
    assert block["latency_ms_p50"] > 0 and 0 <= block["auc"] <= 1 and block["precision_at_recall_0_8"] is not None
    b = block["precision_at_budget"]  # each dev session lasts under an hour: at most 4 offers in each
    users = {s.metadata["user"] for s in log.samples}
    assert b["per_hour"] == 4 and 0 < b["offers"] <= min(yes, 4 * len(users)) and 0 <= b["precision"] <= 1


@needs_shared
def test_leakage_guard_refuses_training_moments(dev_decider):
    from proagent.bench.tasks import assist

    folder, _ = dev_decider
    with pytest.raises(ValueError, match=r"trained on 55 of the 55 evaluated moments \(code_11:0:labelled"):
        assist(data=str(SHARED), split="train", decider=str(folder))
    with pytest.raises(ValueError, match="trained on 55 of the 112"):
        assist(data=str(SHARED), split="all", decider=str(folder))
    assist(data=str(SHARED), split="test", decider=str(folder))  # the held-out half is fine


def test_find_leaks_matches_session_time_or_text_time():
    from proagent.train import training_moments

    s = build_samples(_session([1, 0, 1]), SampleConfig())
    trained = training_moments(s[:1])
    renamed = [replace(x, user="other", id="other:" + x.id) for x in s]  # the same moment under another name
    assert find_leaks(s, trained) == [s[0].id]
    assert find_leaks(renamed, trained) == [renamed[0].id]
    assert find_leaks(s[1:], trained) == []


# ---- the commands -------------------------------------------------------------------------------


@needs_shared
def test_train_when_and_eval_decider_commands(tmp_path, monkeypatch, e5_cache):
    monkeypatch.setenv("PROAGENT_EMBEDDING_CACHE", str(e5_cache))
    out = tmp_path / "dec"
    args = ["train", "when", "--data", str(SHARED), "--out", str(out)]
    if SYNTHETIC.is_dir():
        args += ["--train-data", str(SYNTHETIC)]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert "decider: " in r.output and "threshold" in r.output and "cross-validated" in r.output
    m = json.loads((out / "manifest.json").read_text())
    origins = {s["origin"] for s in m["training_data"]}
    assert origins == ({"real", "synthetic"} if SYNTHETIC.is_dir() else {"real"})
    r = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(SHARED),
            "--model",
            "mockllm/model",
            "--decider",
            str(out),
            "--limit",
            "6",
            "--log-dir",
            str(tmp_path / "log"),
            "--display",
            "none",
        ],
    )
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "log" / "results.json").read_text())
    assert res["n"] == 6 and res["decider"]["moments"] == 6
    assert res["decider"]["llm_calls"] == res["decider"]["yes"]
    assert "LLM calls" in r.output and "latency p50" in r.output
    # on its own training moments: refused, naming them, in one line
    r = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(SHARED),
            "--model",
            "mockllm/model",
            "--decider",
            str(out),
            "--split",
            "train",
            "--log-dir",
            str(tmp_path / "log2"),
            "--display",
            "none",
        ],
    )
    assert r.exit_code != 0 and "was trained on 55 of the 55" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(cli, ["eval", "--data", str(SHARED), "--decider", str(out), "--threshold", "0.5"])
    assert r.exit_code != 0 and "give one" in r.output


def test_train_when_bad_input_is_one_line(tmp_path):
    r = CliRunner().invoke(cli, ["train", "when", "--out", str(tmp_path / "d")])
    assert r.exit_code != 0 and "give --data" in r.output
    r = CliRunner().invoke(
        cli, ["train", "when", "--data", str(tmp_path), "--out", str(tmp_path / "d"), "--objective", "auc"]
    )
    assert r.exit_code != 0 and "--objective" in r.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"obs": [{"time": "yesterday", "event": "x"}], "help_needed": true}\n')
    r = CliRunner().invoke(cli, ["train", "when", "--train-data", str(bad), "--out", str(tmp_path / "d")])
    assert r.exit_code != 0 and "line 1" in r.output and "Traceback" not in r.output


def test_lifetrace_database_train_and_eval(tmp_path, monkeypatch, e5_cache):
    """Done-when: train when + eval --decider on a LifeTrace database (a generated one)."""
    from proagent.synth import SynthConfig, generate

    monkeypatch.setenv("PROAGENT_EMBEDDING_CACHE", str(e5_cache))
    data = tmp_path / "synth"
    generate(data, SynthConfig(users=1, days=2, seed=5))
    r = CliRunner().invoke(
        cli,
        [
            "train",
            "when",
            "--data",
            str(data),
            "--out",
            str(tmp_path / "dec"),
            "--features",
            "similarity,behaviour,keywords,clock",
        ],
    )
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(data),
            "--model",
            "mockllm/model",
            "--decider",
            str(tmp_path / "dec"),
            "--log-dir",
            str(tmp_path / "log"),
            "--display",
            "none",
        ],
    )
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "log" / "results.json").read_text())
    assert res["decider"]["moments"] == res["n"] > 0 and res["decider"]["llm_calls"] == res["decider"]["yes"]


@needs_shared
def test_gate_works_with_memory_and_self_consistency(dev_decider, tmp_path, monkeypatch, e5_cache):
    """With --memory kg and --method sc (2 answers per moment): 2 model calls at each Yes, none at a No."""
    from inspect_ai import eval as inspect_eval

    from proagent.bench.tasks import assist

    monkeypatch.setenv("PROAGENT_EMBEDDING_CACHE", str(e5_cache))
    monkeypatch.setenv("PROAGENT_MEMORY_CACHE", str(tmp_path / "mem"))
    folder, _ = dev_decider
    test, _ = load_split_moments(SHARED, "test")
    p = load_decider(folder).probabilities(test[:8])
    _edit(folder, threshold=float(np.median(p)))
    CALLS.clear()
    task = assist(data=str(SHARED), decider=str(folder), memory="kg", method="sc", sc_samples=2)
    log = inspect_eval(task, model="counting/x", display="none", log_dir=str(tmp_path / "logs"), limit=8)[0]
    assert log.status == "success"
    yes = sum(s.scores["assist_scorer"].metadata["decider"]["needs_help"] for s in log.samples)
    assert 0 < yes < 8 and len(CALLS) == 2 * yes
    assert any("Long-term memory" in c for c in CALLS)  # the memory stage ran before the model


def test_gradient_boosting_fits_and_thresholds():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 6))
    y = (x[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    users = [f"u{i % 4}" for i in range(60)]
    model, threshold, cv = fit_when(x, y, users, WhenConfig(model="gbm", objective="balanced-accuracy"))
    assert 0 <= threshold <= 1 and cv["folds"] == 4 and cv["auc"] > 0.7
    p = model.predict_proba(x)[:, 1]
    assert p[y == 1].mean() > p[y == 0].mean()


def test_ablate_deciders_axis(dev_decider, tmp_path, monkeypatch):
    """``ablate --deciders none,DIR``: one cell per decider, the decider cell records its block and
    makes model calls only at its Yes moments; a bad decider folder is one line before any cell."""
    import csv

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PROAGENT_MEMORY_CACHE", str(tmp_path / "memcache"))
    folder, _ = dev_decider
    out = tmp_path / "abl"
    args = [
        "ablate",
        "--data",
        str(SHARED),
        "--methods",
        "zero-shot",
        "--memory",
        "none",
        "--windows",
        "5m",
        "--models",
        "mockllm/model",
        "--deciders",
        f"none,{folder}",
        "--limit",
        "6",
        "--out",
        str(out),
    ]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, (r.output, r.exception)
    cells = sorted(p.name for p in (out / "cells").iterdir())
    assert cells == ["model__zero-shot__none__5m", "model__zero-shot__none__5m__dec-dec"]
    res = json.loads((out / "cells" / "model__zero-shot__none__5m__dec-dec" / "results.json").read_text())
    assert res["cell"]["decider"] == str(folder)
    assert res["decider"]["moments"] == 6 and res["decider"]["llm_calls"] == res["decider"]["yes"]
    rows = list(csv.DictReader(open(out / "results.csv", encoding="utf-8")))
    assert {x["decider"] for x in rows} == {"none", str(folder)}
    assert "decider" in (out / "report.html").read_text("utf-8")
    bad = CliRunner().invoke(
        cli, [a if a != f"none,{folder}" else str(tmp_path / "missing") for a in args[:-1]] + [str(tmp_path / "abl2")]
    )
    assert bad.exit_code == 2 and "--deciders" in bad.output and "Traceback" not in bad.output
    assert not (tmp_path / "abl2").exists()
