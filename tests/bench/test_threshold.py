"""``eval --threshold auto``'s workflow lives in bench (issue 38 item 2): :func:`calibrate_threshold`
runs the train task in ``<log-dir>-calibration`` and returns a typed record; the command prints."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from proagent.bench.records import ThresholdCalibration
from proagent.bench.threshold import calibrate_threshold, calibration_from_log
from proagent.errors import DataError


def _sample(p_yes: float | None, label: int) -> SimpleNamespace:
    pred = {"sample_id": "s", "needs_help": True, "p_yes": p_yes} if p_yes is not None else None
    score = SimpleNamespace(metadata={"prediction": pred} if pred else {})
    return SimpleNamespace(scores={"assist_scorer": score}, metadata={"label": label})


def _log(pairs: list[tuple[float | None, int]], where: str) -> SimpleNamespace:
    return SimpleNamespace(samples=[_sample(p, y) for p, y in pairs], location=where)


def test_the_threshold_is_chosen_on_the_train_log_in_a_sibling_folder(tmp_path: Path) -> None:
    pairs = [(0.9, 1), (0.8, 1), (0.7, 1), (0.3, 0), (0.2, 0), (0.6, 0), (None, 1)]
    ran: list[Path] = []
    lines: list[str] = []

    def run(task: object, folder: Path) -> SimpleNamespace:
        ran.append(folder)
        return _log(pairs, str(folder / "x.eval"))

    train = SimpleNamespace(dataset=[None] * 7)
    cal = calibrate_threshold(train, run, tmp_path / "run", limit=5, echo=lines.append)
    assert ran == [tmp_path / "run-calibration"]
    assert isinstance(cal, ThresholdCalibration)
    assert (cal.n_train, cal.n_train_positive, cal.n_train_samples) == (6, 3, 7)
    assert 0.6 < cal.threshold <= 0.7 and cal.auc == pytest.approx(1.0) and cal.balanced_accuracy == 1.0
    assert not cal.trusted  # fewer than 20 moments
    assert list(cal.to_json()) == [
        "threshold",
        "n_train",
        "n_train_positive",
        "n_train_samples",
        "balanced_accuracy",
        "auc",
        "log",
    ]
    assert lines[0] == "proagent eval: choosing the threshold on 5 train samples"
    assert lines[1].startswith(f"threshold {cal.threshold:.4f} chosen on 6 train moments (3 positive;")
    assert lines[2].startswith("warning: P(Yes) does not separate")


def test_no_readable_p_yes_is_a_data_error() -> None:
    with pytest.raises(DataError) as e:
        calibration_from_log(_log([(None, 1), (None, 0)], "l.eval"))
    assert e.value.option == "--threshold auto" and str(e.value).startswith("--threshold auto: no readable P(Yes)")
