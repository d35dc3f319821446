"""The fine-tuning manifest is a typed record (issue 25 item 7) whose JSON is the old
writer's, key for key: each stage of a run (training, loss measured, done with a GGUF,
done with a Hugging Face folder) as the dict the old ``finetune`` built, read and written back."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from proagent.train.records import FinetuneManifest

FIRST = {  # the first write, in the old writer's order
    "kind": "proagent-finetune",
    "status": "training",
    "fingerprint": "0123456789abcdef",
    "method": "lora",
    "base": "smollm2-135m",
    "source_gguf": "/m/smollm2.gguf",
    "config": {"method": "lora", "epochs": 1.0},
    "learning_rate": 0.0002,
    "sources": [{"path": "d", "sha256": "ab", "origin": "real", "selection": "train", "n": 2, "n_positive": 1}],
    "training_ids": ["s:1", "s:2"],
    "training_moments": [{"user": "u", "time": "t", "text_sha256": "h"}],
    "n_examples": 2,
    "n_too_long": 0,
    "n_positive": 1,
    "example_tokens": {"min": 90, "max": 120, "mean": 105.0},
}
LORA_DONE = {
    **FIRST,
    "status": "done",
    "loss_before": 2.5,
    "loss_after": 2.1,
    "losses": [{"step": 1, "epoch": 0.5, "loss": 2.4}],
    "steps": 2,
    "adapter": "adapter",
    "model_gguf": "model.gguf",
    "gguf_bytes": 123,
    "seconds": 12.3,
    "device": "cpu",
    "threads": 2,
}
SFT_HF_DONE = {
    **FIRST,
    "method": "sft",
    "source_gguf": None,
    "status": "done",
    "losses": [],
    "steps": 2,
    "adapter": None,
    "model_gguf": None,
    "model_folder": "model",
    "seconds": 1.0,
    "device": "cpu",
    "threads": 1,
}


@pytest.mark.parametrize(
    "data",
    [FIRST, {**FIRST, "loss_before": 2.5}, LORA_DONE, SFT_HF_DONE],
    ids=["first", "loss-before", "lora-gguf", "sft-hf-folder"],
)
def test_each_stage_reads_and_writes_back_byte_for_byte(data: dict) -> None:
    m = FinetuneManifest.from_json(json.loads(json.dumps(data)))
    assert json.dumps(m.to_json(), indent=2) == json.dumps(data, indent=2)


def test_the_stages_follow_from_the_record() -> None:
    first = FinetuneManifest.from_json(FIRST)
    assert not first.done and first.to_json() == FIRST
    done = replace(
        first,
        loss_before=2.5,
        loss_after=2.1,
        losses=({"step": 1, "epoch": 0.5, "loss": 2.4},),
        steps=2,
        adapter="adapter",
        model_gguf="model.gguf",
        gguf_bytes=123,
        status="done",
        seconds=12.3,
        device="cpu",
        threads=2,
    )
    assert done.done and list(done.to_json()) == list(LORA_DONE) and done.to_json() == LORA_DONE


def test_an_older_minimal_manifest_still_loads() -> None:
    m = FinetuneManifest.from_json({"kind": "proagent-finetune", "model_gguf": "model.gguf", "extra": 1})
    assert m.model_gguf == "model.gguf" and m.training_moments == () and not m.done
