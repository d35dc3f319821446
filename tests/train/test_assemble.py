"""``train when``'s training set is assembled in train/ (issue 38 item 2), not in the command:
sources in order with aligned origins, the teacher closed, its API failure one ``TeacherError``."""

from __future__ import annotations

import pytest
from shared_data import DEV

from proagent.errors import DataError
from proagent.train import TeacherError, TrainingSet, assemble_training_set

pytestmark = pytest.mark.skipif(DEV is None, reason="ProactiveBench dev sessions not present")


class Teacher:
    endpoint = "http://127.0.0.1:9"

    def __init__(self) -> None:
        self.closed = False

    def __call__(self, sample):  # noqa: ANN001, ANN204
        raise RuntimeError("connection refused\n  (after 3 tries)")

    def close(self) -> None:
        self.closed = True


def test_sources_in_order_with_their_origins() -> None:
    session = DEV / "code_13.json"
    ts = assemble_training_set(data=session, train_data=[session], window_seconds=300.0)
    assert isinstance(ts, TrainingSet)
    assert [s.selection for s in ts.sources][0].startswith("train") and len(ts.sources) == 2
    assert len(ts.samples) == len(ts.origins) == sum(s.n for s in ts.sources)
    assert ts.sources[0].n < ts.sources[1].n  # the train split, then the whole set


def test_a_failing_teacher_is_one_teacher_error_and_closed() -> None:
    teacher = Teacher()
    with pytest.raises(TeacherError) as e:
        assemble_training_set(unlabelled=[DEV / "code_13.json"], teacher=teacher, teacher_name="openai/t")
    assert isinstance(e.value, DataError) and teacher.closed
    assert str(e.value) == "--teacher openai/t at http://127.0.0.1:9: RuntimeError: connection refused"  # first line
