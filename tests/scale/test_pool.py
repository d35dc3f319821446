"""scale/_pool.py's worker side without a cluster (issue 38 item 5): a job's ProagentError comes
back as the error itself, through the error family's own pickling, not a look-alike record."""

from __future__ import annotations

import pickle

import pytest

from proagent.errors import DataError, Resume, RunError
from proagent.scale._pool import ShardRunner


def _fails(err: Exception) -> None:
    raise err


def test_a_jobs_error_is_returned_as_itself_and_pickles_with_its_fields() -> None:
    for err in (
        DataError("/x/session.json", "bad time 'soon'", option="--data"),
        RunError("stopped", resume=Resume.SAME_COMMAND, folder="/x/run"),
    ):
        got = pickle.loads(pickle.dumps(ShardRunner().run(_fails, (err,), {})))  # as Ray sends it back
        assert type(got) is type(err) and got.__dict__ == err.__dict__ and str(got) == str(err)


def test_any_other_error_is_raised_for_ray_to_report() -> None:
    with pytest.raises(KeyError):
        ShardRunner().run(_fails, (KeyError("k"),), {})
