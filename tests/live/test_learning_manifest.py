"""``learning/manifest.json`` is a typed record (issue 25 item 7) whose JSON is the old writer's,
key for key: a learner's manifest, a reset of it, and a reset of a folder that never learned,
each as the dict the old code built."""

from __future__ import annotations

import json
from dataclasses import replace

from proagent.live import LearningManifest
from proagent.live._learn import LEARNING_FORMAT

FULL = {  # LearningWhen.manifest() of the old code, in its order
    "format": LEARNING_FORMAT,
    "method": "sgd",
    "config": {"method": "sgd", "lr": 0.1},
    "decider": {"path": "deciders/x", "model_sha256": "ab", "n_features": 3},
    "threshold": 0.4,
    "costs": None,
    "last_response_id": 7,
    "reset_after_response_id": 0,
    "n": 2,
    "n_positive": 1,
    "model": {"kind": "sgd", "n": 2},
    "learned_from": [
        {"response_id": 6, "offer_id": 3, "label": 1, "weight": 1.0},
        {"response_id": 7, "offer_id": 4, "label": 0, "weight": 0.5},
    ],
    "updated": "2026-12-02T06:00:00+00:00",
}


def _old_reset(old: dict, last: int, updated: str) -> dict:
    """reset_learning's manifest in the old code."""
    return {
        **{k: v for k, v in old.items() if k not in ("model",)},
        "format": LEARNING_FORMAT,
        "last_response_id": last,
        "reset_after_response_id": last,
        "n": 0,
        "n_positive": 0,
        "learned_from": [],
        "updated": updated,
    }


def _reset(m: LearningManifest, last: int, updated: str) -> LearningManifest:
    return replace(
        m,
        last_response_id=last,
        reset_after_response_id=last,
        n=0,
        n_positive=0,
        model=None,
        learned_from=(),
        updated=updated,
    )


def test_a_learners_manifest_reads_and_writes_back_byte_for_byte() -> None:
    for data in (FULL, {**FULL, "costs": {"false_alarm": 1.0, "miss": 3.0}}):
        m = LearningManifest.from_json(json.loads(json.dumps(data)))
        assert json.dumps(m.to_json()) == json.dumps(data)
        assert m.n == 2 and m.decider["model_sha256"] == "ab" and m.learned_from[1]["weight"] == 0.5


def test_resets_write_the_old_key_sets() -> None:
    t = "2026-12-02T07:00:00+00:00"
    after_full = _reset(LearningManifest.from_json(FULL), 9, t)
    assert json.dumps(after_full.to_json()) == json.dumps(_old_reset(FULL, 9, t))
    never = _reset(LearningManifest(), 9, t)
    assert json.dumps(never.to_json()) == json.dumps(_old_reset({}, 9, t))
    again = _reset(LearningManifest.from_json(_old_reset(FULL, 9, t)), 11, t)
    assert json.dumps(again.to_json()) == json.dumps(_old_reset(_old_reset(FULL, 9, t), 11, t))
