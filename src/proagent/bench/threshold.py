"""``eval --threshold auto``: choose the P(Yes) threshold on the train split, then evaluate with it.

The workflow (the command only parses options and prints): run the train-split task with
log-probabilities in a sibling folder of the eval's log folder (``<log-dir>-calibration``: inspect's
``eval_set`` treats every log under the eval's folder as part of its run), choose the threshold on
its moments (:func:`proagent.agent.calibration.calibrate`: Youden's J), and say what it chose.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import DataError
from .records import ThresholdCalibration

__all__ = ["calibrate_threshold", "calibration_from_log"]


def calibrate_threshold(
    train: Any,
    run: Callable[[Any, Path], Any],
    log_dir: Path,
    *,
    limit: int | None = None,
    echo: Callable[[str], None] = lambda _m: None,
) -> ThresholdCalibration:
    """Run the ``train`` task (the assist task on the train split, with log-probabilities) with
    ``run(task, folder) -> EvalLog`` in ``<log_dir>-calibration`` and choose the threshold on its
    moments; ``echo`` gets the progress lines (what runs, what was chosen, a warning when the
    threshold cannot be trusted).

    Raises:
        proagent.errors.DataError: no train moment with a readable P(Yes), or one class only
            (``--threshold auto: ...``, exit 1).
        proagent.errors.RunError: as ``run``.
    """
    n_train = min(len(train.dataset), limit or len(train.dataset))
    echo(f"proagent eval: choosing the threshold on {n_train} train samples")
    train_log = run(train, log_dir.with_name(log_dir.name + "-calibration"))
    cal = calibration_from_log(train_log)
    echo(
        f"threshold {cal.threshold:.4f} chosen on {cal.n_train} train moments "
        f"({cal.n_train_positive} positive; balanced accuracy {cal.balanced_accuracy:.3f}, AUC {cal.auc:.3f})"
    )
    if not cal.trusted:
        echo(
            "warning: P(Yes) does not separate the train moments (AUC <= 0.5) or they are few (< 20); "
            "the threshold is unlikely to help"
        )
    return cal


def calibration_from_log(train_log: Any) -> ThresholdCalibration:
    """:func:`~proagent.agent.calibration.calibrate` on a train-split inspect log's P(Yes)
    answers (each sample's prediction, :func:`~proagent.bench.scorers.sample_prediction`), with
    the log it rests on.

    Raises:
        proagent.errors.DataError: as :func:`calibrate_threshold`.
    """
    from ..agent.calibration import calibrate, separates
    from .scorers import sample_prediction

    pairs = []
    for s in train_log.samples or []:
        pred = sample_prediction(s)
        if pred is not None and pred.p_yes is not None:
            pairs.append((float(pred.p_yes), int(s.metadata["label"])))
    try:
        cal = calibrate([p for p, _ in pairs], [y for _, y in pairs])
    except ValueError as e:  # nothing to choose on: the model's answers, not a bug
        raise DataError(None, str(e), option="--threshold auto") from None
    return ThresholdCalibration(
        threshold=float(cal["threshold"]),
        n_train=int(cal["n_train"]),
        n_train_positive=int(cal["n_train_positive"]),
        n_train_samples=len(train_log.samples or []),
        balanced_accuracy=float(cal["balanced_accuracy"]),
        auc=float(cal["auc"]),
        log=str(train_log.location),
        trusted=separates(cal),
    )
