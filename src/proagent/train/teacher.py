"""Teacher labels: a stronger model labels the user's own unlabelled moments, and the decider is fitted on them.

Distillation for When to Assist (``proagent train when --teacher MODEL --unlabelled DATA``):
every moment of DATA is put to the teacher with the benchmark's zero-shot prompt
(:func:`proagent.agent.solvers.user_prompt`, the How-to-Assist model of
``proagent live``: :class:`proagent.live.HowModel`), the answer is parsed by the
benchmark's parser, and "Need help: Yes/No" becomes the moment's label. Labels
already in DATA are never read; moments whose answer does not parse are left out
(counted). The decider then learns to reproduce the teacher in milliseconds,
without the teacher's latency or cost at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from ..errors import DataError
from ..records import Prediction, Sample
from .data import LabelledSource, data_sha256, load_training_data

__all__ = ["label_with_teacher", "load_teacher_moments"]


def label_with_teacher(
    samples: Sequence[Sample], teacher: Callable[[Sample], Prediction], progress: Callable[[int], None] | None = None
) -> tuple[list[Sample], int]:
    """Each moment labelled by the teacher's parsed Yes/No (1/0).

    Returns:
        (labelled moments, in order; how many answers did not parse and were left out).
    """
    out, unparsed = [], 0
    for s in samples:
        pred = teacher(s)
        if progress:
            progress(1)
        if pred.needs_help is None:
            unparsed += 1
            continue
        out.append(replace(s, label=int(bool(pred.needs_help)), kind="labelled", split="train", id=f"teacher:{s.id}"))
    return out, unparsed


def load_teacher_moments(
    data: str | Path,
    teacher: Callable[[Sample], Prediction],
    teacher_name: str,
    *,
    window_seconds: float = 300.0,
    train_fraction: float = 0.5,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[Sample], LabelledSource, int]:
    """Every moment of an activity log, labelled by ``teacher`` (see the module docstring).

    Returns:
        (moments, their source record with selection ``teacher <name>``, unparsed answers).

    Raises:
        DataError: unreadable data, no moments, or no answer of the teacher parsed.
    """
    samples, _ = load_training_data(data, window_seconds=window_seconds, train_fraction=train_fraction, seed=seed)
    labelled, unparsed = label_with_teacher(samples, teacher, progress)
    if not labelled:
        raise DataError(data, f"the teacher {teacher_name} gave no parseable answer ({unparsed} moments)")
    src = LabelledSource(
        path=str(data),
        sha256=data_sha256(data),
        origin="real",
        selection=f"teacher {teacher_name}",
        n=len(labelled),
        n_positive=int(sum(s.label for s in labelled)),
    )
    return labelled, src, unparsed
