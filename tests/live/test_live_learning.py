"""`proagent live` learns When to Assist from the user's answers while it runs: a replay with
scripted answers changes later decisions, a restart keeps what was learned, reset-learning undoes it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from shared_data import DEV

from proagent.agent.decider import LEARNING_METHODS, LearnConfig, PersonalModel, cost_threshold, load_decider
from proagent.bench.samples import SampleConfig
from proagent.cli import cli
from proagent.live import (
    FeedbackStore,
    LearningWhen,
    LiveAgent,
    ReplayClock,
    Restraint,
    RestraintConfig,
    load_when,
    moment_sample,
    replay_moments,
    reset_learning,
)

pytestmark = pytest.mark.skipif(DEV is None, reason="ProactiveBench dev sessions not present")

FEATURES = "behaviour,keywords"  # no embedding model needed: the tests stay fast
SESSION = "writing_12.json"
OPEN = RestraintConfig(
    max_per_hour=10_000, min_gap_seconds=0, one_per_app_session=False, cooldown_seconds=0, not_now_seconds=0
)


@pytest.fixture(scope="module")
def decider_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("learn")
    code = tmp / "code"
    code.mkdir()
    for f in DEV.glob("code_*.json"):
        (code / f.name).write_bytes(f.read_bytes())
    r = CliRunner().invoke(
        cli,
        [
            "train",
            "when",
            "--data",
            str(code),
            "--features",
            FEATURES,
            "--cv",
            "moments",
            "--out",
            str(tmp / "decider"),
        ],
    )
    assert r.exit_code == 0, r.output
    return tmp / "decider"


class Dismisser:
    """A user who dismisses every offer at once (no help wanted in this session)."""

    name = "user"

    def __init__(self, store: FeedbackStore, response: str = "dismissed") -> None:
        self.store, self.response, self.shown = store, response, 0

    def show(self, offer):  # noqa: ANN001, ANN202
        self.shown += 1
        self.store.respond(offer.id, self.response, offer.moment, "test")

    def close(self):  # noqa: ANN202
        pass


def _probe():  # noqa: ANN202
    m = list(replay_moments(DEV / SESSION))[-1]
    return moment_sample(list(m.history), m.t, SampleConfig(), new_event=m.new_event)


def _population_p(decider_dir: Path, folder: Path) -> list[float]:
    fixed, _ = _replay(folder, load_when(decider_dir, 0.0))
    return [d.p_help for d in fixed]


def _replay(folder: Path, when, response: str = "dismissed") -> tuple[list, Dismisser]:  # noqa: ANN001
    store = FeedbackStore(folder)
    user = Dismisser(store, response)
    clock = ReplayClock(0)
    agent = LiveAgent(folder, when, notifiers=[user], clock=clock, feedback=store, restraint=Restraint(OPEN))
    out = agent.replay(list(replay_moments(DEV / SESSION)), clock)
    store.close()
    return out, user


def _learning(decider_dir: Path, method: str, threshold: float) -> LearningWhen:
    d = load_decider(decider_dir)
    data = None
    if method == "refit":
        from proagent.train.personal import decider_training_data

        data = decider_training_data(d)
    return LearningWhen(d, LearnConfig(method=method), threshold, (1.0, 1.0), data)


@pytest.mark.parametrize("method", LEARNING_METHODS)
def test_answers_change_later_decisions_and_survive_a_restart(decider_dir: Path, tmp_path: Path, method: str) -> None:
    pop = _population_p(decider_dir, tmp_path / "pop")
    threshold = min(pop) - 1e-6  # without learning every moment is offered
    fixed, _ = _replay(tmp_path / "fixed", load_when(decider_dir, threshold))
    assert [d.outcome for d in fixed] == ["offer"] * len(fixed)

    when = _learning(decider_dir, method, threshold)
    learned, user = _replay(tmp_path / "live", when)
    outcomes = [d.outcome for d in learned]
    assert outcomes[0] == "offer" and learned[0].p_help == pytest.approx(fixed[0].p_help)
    assert "no" in outcomes, outcomes  # the dismissals moved the decider below the threshold
    assert np.mean([d.p_help for d in learned[1:]]) < np.mean([d.p_help for d in fixed[1:]])
    m = json.loads((tmp_path / "live" / "learning" / "manifest.json").read_text())
    assert m["method"] == method and m["n"] == user.shown and m["n_positive"] == 0
    assert [r["offer_id"] for r in m["learned_from"]] == list(range(1, user.shown + 1))
    assert all(r["response"] == "dismissed" and r["label"] == 0 for r in m["learned_from"])

    # a restart (new process: new decider object) keeps what was learned
    probe = _probe()
    again = _learning(decider_dir, method, threshold)
    store = FeedbackStore(tmp_path / "live")
    again.sync(store)
    assert again.model.n == user.shown
    assert again(probe) == pytest.approx(when(probe), rel=1e-4)
    # reset-learning undoes it: back to the population model, answers kept in feedback.db
    assert reset_learning(tmp_path / "live") == user.shown
    fresh = _learning(decider_dir, method, threshold)
    fresh.sync(store)
    assert fresh.model.n == 0
    assert fresh(probe) == pytest.approx(load_when(decider_dir)(probe), rel=1e-6)
    assert len(store.offers(limit=1000)) == user.shown
    store.close()


def test_accepts_raise_and_not_now_counts_half(decider_dir: Path, tmp_path: Path) -> None:
    pop = _population_p(decider_dir, tmp_path / "pop")
    when = _learning(decider_dir, "prior-shift", min(pop) - 1e-6)
    _replay(tmp_path / "yes", when, "accepted")
    assert when.model.describe()["offset"] > 0
    half = _learning(decider_dir, "prior-shift", min(pop) - 1e-6)
    _replay(tmp_path / "later", half, "not_now")
    m = json.loads((tmp_path / "later" / "learning" / "manifest.json").read_text())
    assert {r["weight"] for r in m["learned_from"]} == {0.5} and half.model.describe()["offset"] < 0


def test_personal_model_learns_a_users_base_rate() -> None:
    class Flat:  # a population model that says 0.5 everywhere
        def predict_proba(self, x):  # noqa: ANN001, ANN202
            return np.tile([0.5, 0.5], (len(x), 1))

    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 6))
    y = (rng.random(40) < 0.2).astype(int)
    for method in ("prior-shift", "pooled", "knn"):
        pm = PersonalModel(Flat(), LearnConfig(method=method), embedding_columns=False).fit(x, y)
        assert pm.probabilities(x).mean() < 0.4, method
    with pytest.raises(ValueError, match="population"):
        PersonalModel(Flat(), LearnConfig(method="refit"))
    with pytest.raises(ValueError, match="choose from"):
        LearnConfig(method="bandit")


def test_cost_threshold() -> None:
    assert cost_threshold(1, 1) == 0.5
    assert cost_threshold(1, 2) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="positive"):
        cost_threshold(0, 1)


def test_cli_learns_by_default_and_reset_learning(decider_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "run"
    r = runner.invoke(
        cli,
        [
            "live",
            "--replay",
            str(DEV / SESSION),
            "--decider",
            str(decider_dir),
            "--model",
            "none",
            "--speed",
            "0",
            "--out",
            str(out),
            "--notify",
            "none",
            "--cost-miss",
            "3",
        ],
    )
    assert r.exit_code == 0, r.output
    assert f"learned from 0 answers (ensemble) in {out / 'learning'}" in r.output
    m = json.loads((out / "learning" / "manifest.json").read_text())
    assert m["method"] == "ensemble" and m["threshold"] == pytest.approx(0.25) and m["n"] == 0
    run = json.loads((out / "run.json").read_text())
    assert "learning: ensemble" in run["decider"] and "0.2500" in run["decider"]
    r = runner.invoke(cli, ["live", "reset-learning", str(out)])
    assert r.exit_code == 0 and "forgot 0 learned answers" in r.output
    r = runner.invoke(cli, ["live", "reset-learning", str(tmp_path)])
    assert r.exit_code == 1 and r.output.startswith("Error:") and "no feedback.db" in r.output
    r = runner.invoke(
        cli,
        [
            "live",
            "--replay",
            str(DEV / SESSION),
            "--decider",
            str(decider_dir),
            "--model",
            "none",
            "--speed",
            "0",
            "--out",
            str(tmp_path / "bad"),
            "--cost-miss",
            "0",
        ],
    )
    assert r.exit_code == 2 and "positive" in r.output and "Traceback" not in r.output


def test_a_running_agent_notices_reset_learning(decider_dir: Path, tmp_path: Path) -> None:
    pop = _population_p(decider_dir, tmp_path / "pop")
    when = _learning(decider_dir, "prior-shift", min(pop) - 1e-6)
    _, user = _replay(tmp_path / "live", when)
    assert when.model.n == user.shown > 0
    assert reset_learning(tmp_path / "live") == user.shown
    store = FeedbackStore(tmp_path / "live")
    when.sync(store)  # the same object, as in the running loop
    assert when.model.n == 0 and when(_probe()) == pytest.approx(load_when(decider_dir)(_probe()), rel=1e-6)
    store.close()


def test_learn_method_choices_are_the_methods() -> None:
    from proagent.cli.live import live_cmd

    (opt,) = [p for p in live_cmd.params if p.name == "learn_method"]
    assert tuple(opt.type.choices) == LEARNING_METHODS


@pytest.mark.parametrize(
    "damage", ["huge-count", "negative", "decider-list", "threshold", "not-json", "folder-is-file"]
)
def test_damaged_learning_state_is_one_line_and_reset_counts_what_was_learned(
    decider_dir: Path, tmp_path: Path, damage: str
) -> None:
    """A damaged learning/manifest.json, or learning/ being a file, crashed live (KeyError,
    OverflowError, FileExistsError), after which reset-learning said "forgot 0" though answers had
    been learned: now one line naming the file and how to reset, and reset counts the feature file's rows."""
    pop = _population_p(decider_dir, tmp_path / "pop")
    out = tmp_path / "live"
    _, user = _replay(out, _learning(decider_dir, "prior-shift", min(pop) - 1e-6))
    assert user.shown > 0
    man = out / "learning" / "manifest.json"
    m = json.loads(man.read_text())
    if damage == "huge-count":
        man.write_text(json.dumps({**m, "n": 1e400}).replace("Infinity", "1e400"))
    elif damage == "negative":
        man.write_text(json.dumps({**m, "last_response_id": -5}))
    elif damage == "decider-list":
        man.write_text(json.dumps({**m, "decider": ["x"]}))
    elif damage == "threshold":
        man.write_text(json.dumps({**m, "threshold": 7}))
    elif damage == "not-json":
        man.write_text("{")
    else:
        import shutil

        shutil.rmtree(out / "learning")
        (out / "learning").write_text("not a folder")
    r = CliRunner().invoke(
        cli,
        [
            "live",
            "--replay",
            str(DEV / SESSION),
            "--decider",
            str(decider_dir),
            "--model",
            "none",
            "--speed",
            "0",
            "--out",
            str(out),
            "--notify",
            "none",
        ],
    )
    assert r.exit_code == 1 and r.output.count("Error:") == 1 and "Traceback" not in r.output, r.output
    assert "reset-learning" in r.output and "learning" in r.output
    r = CliRunner().invoke(cli, ["live", "reset-learning", str(out)])
    assert r.exit_code == 0, r.output
    expected = 0 if damage == "folder-is-file" else user.shown  # the feature file holds the learned rows
    assert f"forgot {expected} learned answers" in r.output
    r = CliRunner().invoke(
        cli,
        [
            "live",
            "--replay",
            str(DEV / SESSION),
            "--decider",
            str(decider_dir),
            "--model",
            "none",
            "--speed",
            "0",
            "--out",
            str(out),
            "--notify",
            "none",
        ],
    )
    assert r.exit_code == 0, r.output


def test_non_finite_features_are_not_learned_from(decider_dir: Path, tmp_path: Path) -> None:
    """NaN/inf rows in learning/features.npy were loaded; now they are rebuilt from feedback.db."""
    pop = _population_p(decider_dir, tmp_path / "pop")
    threshold = min(pop) - 1e-6
    when = _learning(decider_dir, "prior-shift", threshold)
    _, user = _replay(tmp_path / "live", when)
    probe = _probe()
    f = tmp_path / "live" / "learning" / "features.npy"
    rows = np.load(f)
    rows[0, 0] = np.nan
    np.save(f, rows)
    again = _learning(decider_dir, "prior-shift", threshold)
    store = FeedbackStore(tmp_path / "live")
    again.sync(store)
    store.close()
    assert again.model.n == user.shown and np.isfinite(again(probe))
    assert again(probe) == pytest.approx(when(probe), rel=1e-4)


def test_rank_threshold_fills_the_hourly_budget_whatever_the_level() -> None:
    from proagent.live._learn import rank_threshold

    # 120 moments in an hour (one every 30 s), all squeezed into 0.30-0.33: a budget of 4 an hour offers at 4
    rng = np.random.default_rng(0)
    scores = [(30.0 * i, 0.30 + 0.03 * float(rng.random())) for i in range(120)]
    t = rank_threshold(scores, 4)
    assert sum(p >= t for _, p in scores) == 4
    assert rank_threshold(scores[:1], 4) == scores[0][1]  # the first moment of a run ranks first: offered
    assert rank_threshold(scores, 0) == 0.0 and rank_threshold([], 4) == 0.0
    # a moment older than the hour does not count
    old = [(-7200.0, 0.99)] + scores
    assert rank_threshold(old, 4) == t


def test_day_one_offers_by_rank_then_the_cost_threshold(decider_dir: Path, tmp_path: Path) -> None:
    pop = _population_p(decider_dir, tmp_path / "pop")
    high = max(pop) + 0.01  # the cost threshold is above every score: without day one nothing is offered
    quiet, _ = _replay(tmp_path / "quiet", LearningWhen(load_decider(decider_dir), LearnConfig("prior-shift"), high))
    assert [d.outcome for d in quiet].count("offer") == 0
    day = LearningWhen(load_decider(decider_dir), LearnConfig("prior-shift"), high, max_per_hour=4, day_one_labels=DAY)
    assert day.regime == "rank" and "day one" in day.describe_regime()
    got, user = _replay(tmp_path / "day", day, "accepted")
    offers = [d for d in got if d.outcome == "offer"]
    assert 0 < len(offers) and user.shown >= DAY
    # each day-one offer was the highest score of the moments so far (20 moments in 6 minutes: a budget of
    # 4 an hour over a quarter hour's span lets the top one through)
    for i, d in enumerate(got):
        if d in offers[:DAY]:
            assert d.p_help == pytest.approx(max(x.p_help for x in got[: i + 1] if x.p_help is not None))
    later = got[got.index(offers[DAY - 1]) + 1 :]  # then the cost threshold
    assert all(d.p_help >= high for d in later if d.outcome == "offer")
    assert day.regime == "cost" and day.threshold == pytest.approx(high)
    m = json.loads((tmp_path / "day" / "learning" / "manifest.json").read_text())
    assert m["regime"]["regime"] == "cost" and m["regime"]["labels"] >= DAY and m["threshold"] == pytest.approx(high)
    from proagent.live._page import _regime  # what the page's status line shows (GET /offers: "regime")

    assert _regime(tmp_path / "day").startswith("learned: offering at P(help) >= ")
    assert _regime(tmp_path / "pop") is None  # a folder without a learning decider


DAY = 3
"""Day one's labels in the test (10 in live: DAY_ONE_LABELS)."""


def test_cli_summary_says_day_one(decider_dir: Path, tmp_path: Path) -> None:
    r = CliRunner().invoke(
        cli,
        [
            "live",
            "--replay",
            str(DEV / SESSION),
            "--decider",
            str(decider_dir),
            "--model",
            "none",
            "--speed",
            "0",
            "--out",
            str(tmp_path / "run"),
            "--notify",
            "none",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "deciding now: day one: offering at your top-ranked moments of the last hour, up to 4 an hour" in r.output
    assert "offer" in r.output.split("moments decided:")[1].splitlines()[0]
