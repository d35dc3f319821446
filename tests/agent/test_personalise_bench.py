"""benchmarks/personalise.py's feedback modes (issue 33 item 4): offered+implicit reveals misses and
weak negatives by the live rule, the ensemble runs beside each learner, the default comes from the
pre-written rule, and every table has the precision at an offer budget."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import personalise  # noqa: E402
from shared_data import DEV  # noqa: E402


def test_revealed_follows_the_live_rule() -> None:
    y = np.array([1, 0, 0, 1, 0])
    t = np.array([0.0, 30.0, 90.0, 150.0, 200.0])
    apps = np.array(["Code", "Code", "Code", "Code", "Browser"], dtype=object)
    te = np.arange(5)
    draw = np.array([0.1, 0.9, 0.9, 0.9, 0.9])
    args = (y, t, apps, te, draw, 0.5, 0.25, 120.0, 60.0)
    assert personalise._revealed("offered", 0, 0.9, 0.5, *args) == (1, 1.0, 0.0)  # an offer: answered at once
    assert personalise._revealed("offered", 0, 0.1, 0.5, *args) is None  # quiet: nothing heard
    assert personalise._revealed("offered+misses", 0, 0.1, 0.5, *args) == (1, 1.0, 60.0)  # revealed miss
    assert personalise._revealed("offered+misses", 1, 0.1, 0.5, *args) is None  # no weak negatives in this mode
    # quiet at 30 s, Code until 150 s (next moment within 60 s of the horizon): a weak negative known 120 s later
    assert personalise._revealed("offered+implicit", 1, 0.1, 0.5, *args) == (0, 0.25, 120.0)
    assert personalise._revealed("offered+implicit", 2, 0.1, 0.5, *args) is None  # a switch to Browser within 120 s
    assert personalise._revealed("offered+implicit", 3, 0.1, 0.5, *args) is None  # unrevealed positive, then a switch


def test_budget_precision_and_the_pre_written_rule() -> None:
    y = np.array([1, 0, 1, 1, 0, 0])
    pred = np.ones(6, int)
    t = np.array([0, 60, 120, 180, 4000, 4060], float)
    users = np.array(["a"] * 6)
    b = personalise.budget_precision(y, pred, t, users, per_hour=2)
    assert b["offers"] == 4 and b["precision"] == pytest.approx(0.25)  # 0, 60 (2 in the hour), then 4000, 4060: 1 of 4
    assert personalise.budget_precision(y, np.zeros(6, int), t, users, 2)["precision"] is None
    costs = {
        "offered": {"knn": {"s1": 3, "s2": 1}, "prior-shift": {"s1": 1, "s2": 1}},
        "offered+implicit": {"knn": {"s1": 2, "s2": 0}, "prior-shift": {"s1": 1, "s2": 2}},
    }
    best, mean = personalise.select_default(costs)
    assert mean == {"prior-shift": pytest.approx(1.375), "knn": pytest.approx(1.625)} and best == "prior-shift"
    tied = {"offered": {"knn": {"s": 1}, "ensemble": {"s": 1}}}
    assert personalise.select_default(tied)[0] == "knn"  # a tie goes to the simpler learner


@pytest.mark.skipif(DEV is None, reason="ProactiveBench dev sessions not present")
def test_the_benchmark_prints_every_mode_and_the_ensemble(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "p.json"
    rc = personalise.main(
        [
            "--data",
            str(DEV),
            "--sessions",
            "code_11,writing_12",
            "--features",
            "behaviour,keywords",
            "--feedback",
            "offered,offered+implicit",
            "--methods",
            "prior-shift,knn,ensemble",
            "--figure",
            str(tmp_path / "c.png"),
            "--out",
            str(out),
            "--cost-miss",
            "2",
        ]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "## feedback: offered+implicit" in text and "| ensemble |" in text and "precision at 4 offers/hour" in text
    assert "pre-written rule" in text and (tmp_path / "c.png").is_file()
    r = json.loads(out.read_text())
    assert set(r["modes"]) == {"offered", "offered+implicit"} and r["default"]["learner"] in r["default"]["mean_rank"]
    imp = {row["run"]: row for row in r["modes"]["offered+implicit"]}
    off = {row["run"]: row for row in r["modes"]["offered"]}
    assert any(row.get("misses", 0) > 0 for row in imp.values())  # quiet positives were revealed
    assert all("misses" not in row for row in off.values())
    assert imp["always-yes (= LLM zero-shot, quoted)"]["budget"]["offers"] <= 4 * 2 * 1  # <= 4 per session-hour


def test_history_features_see_only_earlier_offers_and_their_answers() -> None:
    t = np.array([0.0, 60.0, 120.0, 1200.0, 60.0])
    users = np.array(["a", "a", "a", "a", "b"])
    offered = np.array([1, 1, 0, 0, 1])
    y = np.array([0, 1, 0, 0, 0])
    h = personalise.history_features(t, users, offered, y)
    cap = np.log1p(personalise.HISTORY_CAP_MINUTES)
    assert h[0] == pytest.approx([cap, 0])  # no offer before the first moment
    assert h[1] == pytest.approx([np.log1p(1.0), 1])  # the offer at 0 s was dismissed (label 0)
    assert h[2] == pytest.approx([np.log1p(1.0), 1])  # the accepted one at 60 s is the last; one dismissal in 15 min
    assert h[3] == pytest.approx([np.log1p(19.0), 0])  # 19 minutes on: the dismissal is out of the window
    assert h[4] == pytest.approx([cap, 0])  # another session's offers are not this one's history


@pytest.mark.skipif(DEV is None, reason="ProactiveBench dev sessions not present")
def test_the_history_run_and_the_history_signals(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rc = personalise.main(
        [
            "--data",
            str(DEV),
            "--sessions",
            "code_11,writing_12",
            "--features",
            "behaviour,keywords",
            "--feedback",
            "offered",
            "--methods",
            "knn",
            "--history",
            "--history-signals",
            "--figure",
            str(tmp_path / "c.png"),
            "--out",
            str(tmp_path / "p.json"),
            "--cost-miss",
            "2",
        ]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "| knn |" in text and "default + history (population offers), logreg" in text
    assert "compact + history (always-yes offers), logreg" in text and "boundary" not in text


def test_issue_43_rule_takes_a_learner_that_beats_both_else_the_safest() -> None:
    rows = [
        {"run": "always-yes (= LLM zero-shot, quoted)", "f1": 0.5, "accuracy": 0.34},
        {"run": "always-no", "f1": 0.0, "accuracy": 0.66},
        {"run": "knn", "f1": 0.55, "accuracy": 0.60},
        {"run": "ensemble", "f1": 0.52, "accuracy": 0.70},
        {"run": "prior-shift", "f1": 0.30, "accuracy": 0.64},
    ]
    costs = {"knn": {"s1": 1, "s2": 1}, "ensemble": {"s1": 3, "s2": 3}, "prior-shift": {"s1": 0, "s2": 0}}
    # ensemble alone beats both, although prior-shift costs least
    assert personalise.select_default_43(rows, costs) == ("ensemble", "beats both")
    rows[3]["accuracy"] = 0.65  # now none beats both: the lowest expected cost is kept
    best, why = personalise.select_default_43(rows, costs)
    assert best == "prior-shift" and why.startswith("none beats both")


def test_learning_curve_bins_labels_with_intervals() -> None:
    y = np.array([1, 0] * 12)
    pred = np.array([1, 0] * 6 + [0, 0] * 6)
    k = np.repeat([0, 5, 10, 20], 6)
    curve = personalise.learning_curve(y, pred, k)
    assert [c["labels"] for c in curve] == ["0-4", "5-9", "10-14", "20+"] and [c["n"] for c in curve] == [6] * 4
    assert curve[0]["accuracy"] == 1.0 and curve[0]["accuracy_ci95"] is not None
    assert curve[-1]["f1"] == 0.0 and curve[-1]["always_no_accuracy"] == 0.5
