"""load_events with external annotation files: refused for ProactiveBench, unmatched records reported."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from lifetrace_fixtures import make_participant, write_annotations

from proagent.errors import DataError
from proagent.sources.load import load_events

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "proactivebench"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data/proactivebench not present")


@pytest.fixture(scope="module")
def lt(tmp_path_factory):
    root = tmp_path_factory.mktemp("human")
    return root, {u: make_participant(root, u) for u in ("P01", "P02")}


def test_annotations_that_match_no_event_are_reported(lt, tmp_path):
    root, fx = lt
    good = write_annotations(list(fx.values()), tmp_path / "good.jsonl")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_events(root, annotations=[good])  # every record matches: no warning
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        good.read_text()
        + json.dumps({"user": "p01 ", "event_id": 99999, "user_intention": "Translation"})
        + "\n"
        + json.dumps({"user": "Alice", "event_id": 1, "user_intention": "Translation"})
        + "\n"
    )
    with pytest.warns(UserWarning, match=r"2 of \d+ annotation records match no event"):
        load_events(root, annotations=[bad])


@needs_shared
def test_annotations_for_proactivebench_are_refused(lt, tmp_path):
    _, fx = lt
    ann = write_annotations(list(fx.values()), tmp_path / "a.jsonl")
    with pytest.raises(DataError, match="LifeTrace databases only"):
        load_events(SHARED, annotations=[ann])
