"""The training set of ``proagent train when``: every source's labelled moments in one
:class:`~.data.TrainingSet` (the train split of ``--data``, each whole ``--train-data`` set, each
``--feedback`` folder, each ``--unlabelled`` log labelled by a ``--teacher``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import DataError, ProagentError, RunError
from ..records import Sample
from .data import LabelledSource, Origin, TrainingSet, load_feedback_moments, load_split_moments, load_training_data
from .teacher import load_teacher_moments

__all__ = ["TeacherError", "assemble_training_set"]


class TeacherError(DataError):
    """The teacher's API failed while it labelled the ``--unlabelled`` moments (the labels a
    training set needs could not be had; exit 1). ``option`` is ``--teacher MODEL`` with its endpoint."""


def assemble_training_set(
    *,
    data: str | Path | None = None,
    train_data: Sequence[str | Path] = (),
    feedback: Sequence[str | Path] = (),
    unlabelled: Sequence[str | Path] = (),
    teacher: Any = None,
    teacher_name: str | None = None,
    window_seconds: float = 300.0,
    train_fraction: float = 0.5,
    seed: int = 0,
    echo: Callable[[str], None] = lambda _m: None,
) -> TrainingSet:
    """The moments of every source, in this order: the train split of ``data``
    (:func:`~.data.load_split_moments`), each whole ``train_data`` set
    (:func:`~.data.load_training_data`), each ``feedback`` folder
    (:func:`~.data.load_feedback_moments`), each ``unlabelled`` log labelled by ``teacher``
    (a ``Sample -> Prediction`` callable such as :class:`proagent.live.HowModel`, named
    ``teacher_name``; :func:`~.teacher.load_teacher_moments`). The teacher is closed at the end
    (when it has ``close``); ``echo`` gets one line per log whose teacher answers did not all parse.

    Raises:
        proagent.errors.DataError: unreadable data, a source without moments.
        TeacherError: the teacher's API failed mid-way (its message, at most 300 characters).
    """
    samples: list[Sample] = []
    sources: list[LabelledSource] = []
    origins: list[Origin] = []

    def add(s: list[Sample], src: LabelledSource) -> None:
        samples.extend(s)
        sources.append(src)
        origins.extend([src.origin] * len(s))

    try:
        if data is not None:
            add(
                *load_split_moments(
                    data, "train", window_seconds=window_seconds, train_fraction=train_fraction, seed=seed
                )
            )
        for d in train_data:
            add(*load_training_data(d, window_seconds=window_seconds, train_fraction=train_fraction, seed=seed))
        for d in feedback:
            add(*load_feedback_moments(d))
        for d in unlabelled:
            s, src, unparsed = load_teacher_moments(
                d, teacher, str(teacher_name), window_seconds=window_seconds, train_fraction=train_fraction, seed=seed
            )
            if unparsed:
                echo(f"{d}: {unparsed} teacher answers did not parse; those moments are left out")
            add(s, src)
    except RunError as e:  # the teacher's model API failing (HowModel's one line: the endpoint, what failed, the fix)
        if teacher is None:
            raise
        raise TeacherError(None, e.problem, option=f"--teacher {teacher_name}") from None
    except ProagentError:  # DataError (unreadable data), UsageError: as raised, not as the teacher's
        raise
    except Exception as e:  # noqa: BLE001 - a teacher API failing mid-way: providers raise many kinds
        if teacher is None:
            raise
        endpoint = getattr(teacher, "endpoint", None)
        where = f" at {endpoint}" if endpoint else ""
        from ..bench.running import api_error_line

        raise TeacherError(
            None,
            " ".join(api_error_line(e).split())[:300] or type(e).__name__,
            option=f"--teacher {teacher_name}{where}",
        ) from None
    finally:
        if teacher is not None and hasattr(teacher, "close"):
            teacher.close()
    return TrainingSet(tuple(samples), tuple(sources), tuple(origins))
