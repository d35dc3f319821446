"""Feedback that trains the agent: offers answered in a live replay become labels
for `proagent train when --feedback`, and the learned decider then runs the loop."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from shared_data import DEV

from proagent.cli import cli
from proagent.live import (
    FeedbackStore,
    LiveAgent,
    ReplayClock,
    Restraint,
    RestraintConfig,
    ScriptedDecider,
    feedback_samples,
    replay_moments,
)

pytestmark = pytest.mark.skipif(DEV is None, reason="ProactiveBench dev sessions not present")

FEATURES = "behaviour,keywords"  # no embedding model needed: the test stays fast


def _answering_user(folder: Path, sessions: list[Path]) -> FeedbackStore:
    """A replay where every moment gets an offer and the user answers like the
    ground truth: accepts where help was needed, dismisses elsewhere."""
    store = FeedbackStore(folder)

    class User:
        name = "user"

        def __init__(self) -> None:
            self.labels: dict[str, int] = {}

        def show(self, offer):  # noqa: ANN001, ANN202
            store.respond(offer.id, "accepted" if self.labels[offer.sample_id] else "dismissed", offer.moment, "test")

        def close(self):  # noqa: ANN202
            pass

    user = User()
    for s in sessions:
        clock = ReplayClock(0)
        moments = list(replay_moments(s))
        for m in moments:
            e = m.new_event
            user.labels[f"{e.id}:labelled"] = int(bool(e.needs_help))
        agent = LiveAgent(
            folder,
            ScriptedDecider(yes={m.new_event.id for m in moments}),
            notifiers=[user],
            clock=clock,
            feedback=store,
            restraint=Restraint(
                RestraintConfig(
                    min_gap_seconds=0,
                    one_per_app_session=False,
                    max_per_hour=10_000,
                    cooldown_seconds=0,
                    not_now_seconds=0,
                )
            ),
        )
        agent.replay(moments, clock)
    return store


def test_train_when_feedback_adapts_the_decider_and_live_runs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROAGENT_EMBEDDING_CACHE", str(tmp_path / "emb"))
    writing = sorted(DEV.glob("writing_*.json"))
    store = _answering_user(tmp_path / "live", writing)
    fb = feedback_samples(tmp_path / "live")
    n_offers = len(store.offers(limit=10_000))
    assert len(fb) == n_offers and {s.label for s in fb} == {0, 1}
    runner = CliRunner()
    code = tmp_path / "code"
    code.mkdir()
    for f in DEV.glob("code_*.json"):
        (code / f.name).write_bytes(f.read_bytes())
    base = ["train", "when", "--data", str(code), "--features", FEATURES, "--cv", "moments"]
    r = runner.invoke(cli, base + ["--out", str(tmp_path / "without")])
    assert r.exit_code == 0, r.output
    r = runner.invoke(cli, base + ["--feedback", str(tmp_path / "live"), "--out", str(tmp_path / "with")])
    assert r.exit_code == 0, r.output
    assert "feedback" in r.output
    m = json.loads((tmp_path / "with" / "manifest.json").read_text())
    src = [s for s in m["training_data"] if s["selection"] == "feedback"]
    assert len(src) == 1 and src[0]["n"] == len(fb) and src[0]["n_positive"] == sum(s.label for s in fb)
    # the user's answers move the decider toward them on the moments they answered
    from proagent.agent.decider import load_decider

    y = np.array([s.label for s in fb])
    p0 = load_decider(tmp_path / "without").probabilities(fb)
    p1 = load_decider(tmp_path / "with").probabilities(fb)
    assert p1[y == 1].mean() - p1[y == 0].mean() > p0[y == 1].mean() - p0[y == 0].mean()
    # and the learned decider runs the live loop (probabilities, not scripted 0/1)
    r = runner.invoke(
        cli,
        [
            "live",
            "--replay",
            str(DEV / "code_13.json"),
            "--decider",
            str(tmp_path / "with"),
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
    rows = FeedbackStore(tmp_path / "run").decisions()
    assert len(rows) == 20 and all(0.0 < r_["p_help"] < 1.0 for r_ in rows)
    assert "decision latency: p50" in r.output


def test_train_when_feedback_errors(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["train", "when", "--feedback", str(tmp_path), "--out", str(tmp_path / "d")])
    assert r.exit_code != 0 and "no feedback database" in r.output and "Traceback" not in r.output
    FeedbackStore(tmp_path).close()
    r = CliRunner().invoke(cli, ["train", "when", "--feedback", str(tmp_path), "--out", str(tmp_path / "d")])
    assert r.exit_code != 0 and "no accepted or dismissed offers" in r.output
