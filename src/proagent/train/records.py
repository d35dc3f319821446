"""Typed records of the train stage: a fine-tuning run's ``manifest.json``
(:func:`proagent.train.finetune.finetune`).

The file is :meth:`FinetuneManifest.to_json`, written while the run goes on: first the run's
settings and data (``status`` ``training``), then the loss before training once measured, and
at the end the losses, the files written and the run's cost (``status`` ``done``). Keys stand
in the order proagent always wrote them, and a key is present exactly when the old writer
wrote it, so files stay byte-identical; :meth:`FinetuneManifest.from_json` reads every version
(a missing field reads as its default).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["FINETUNE_KIND", "FinetuneManifest"]

FINETUNE_KIND = "proagent-finetune"
"""``kind`` of a fine-tuning manifest (tells it from a decider's ``manifest.json``)."""

_SET_WHEN_KNOWN = ("loss_before", "loss_after")
_DONE = ("losses", "steps", "adapter", "model_gguf", "gguf_bytes", "model_folder", "seconds", "device", "threads")
_DONE_WHEN_KNOWN = ("gguf_bytes", "model_folder")


@dataclass(frozen=True)
class FinetuneManifest:
    """What a fine-tuning run was given and wrote (``manifest.json`` of its output folder)."""

    status: str = "training"
    """``training`` while the run goes on, ``done`` once the model is written."""
    fingerprint: str = ""
    """Hash of the settings, base, moment ids and sources: a rerun with other ones is refused."""
    method: str = ""
    """``sft`` or ``lora``."""
    base: str = ""
    """The base model as given (a catalogue name, a GGUF or a Hugging Face folder)."""
    source_gguf: str | None = None
    """The GGUF the base was loaded from (the export's template), ``None`` for a Hugging Face folder."""
    config: Mapping[str, Any] = field(default_factory=dict)
    """The :class:`~proagent.train.finetune.FinetuneConfig` as a JSON object."""
    learning_rate: float | None = None
    """The learning rate used (the config's, else the method's default)."""
    sources: tuple[Mapping[str, Any], ...] = ()
    """Each data set trained on: ``path``, ``sha256``, ``origin``, ``selection``, ``n``, ``n_positive``."""
    training_ids: tuple[str, ...] = ()
    """Sample ids of the training moments, in order."""
    training_moments: tuple[Mapping[str, str], ...] = ()
    """The leakage guard's keys of every training moment (``user``, ``time``, ``text_sha256``;
    :func:`proagent.train.data.training_moments`): eval refuses these moments."""
    n_examples: int = 0
    """Examples trained on (moments within ``max_length``)."""
    n_too_long: int = 0
    """Moments left out as longer than ``max_length`` tokens."""
    n_positive: int = 0
    """Of the examples, those labelled "needs help"."""
    example_tokens: Mapping[str, float] = field(default_factory=dict)
    """Example length in tokens over every moment: ``min``, ``max``, ``mean``."""
    kind: str = FINETUNE_KIND
    """:data:`FINETUNE_KIND`."""
    loss_before: float | None = None
    """Mean answer-token cross-entropy (nats) on the probe examples before training; ``None``
    until measured or without a probe."""
    loss_after: float | None = None
    """The same after training; ``None`` until measured or without a probe."""
    losses: tuple[Mapping[str, float], ...] | None = None
    """Training loss of each logged step: ``step``, ``epoch``, ``loss`` (``None`` until done)."""
    steps: int | None = None
    """Optimiser steps run (``None`` until done)."""
    adapter: str | None = None
    """The LoRA adapter's folder in the output (``adapter``); ``None`` for SFT or until done."""
    model_gguf: str | None = None
    """The merged model's GGUF file in the output (``model.gguf``); ``None`` for a Hugging Face
    base or until done."""
    gguf_bytes: int | None = None
    """Size of ``model.gguf`` (bytes), when one was written."""
    model_folder: str | None = None
    """The merged model's Hugging Face folder (``model``), when the base was one."""
    seconds: float | None = None
    """Wall time of the run (s; ``None`` until done)."""
    device: str | None = None
    """``cuda`` or ``cpu`` (``None`` until done)."""
    threads: int | None = None
    """torch's CPU threads (``None`` until done)."""

    @property
    def done(self) -> bool:
        """The run finished and wrote its model."""
        return self.status == "done"

    def to_json(self) -> dict[str, Any]:
        """The ``manifest.json`` object, keys in the writer's order (see the module docstring)."""
        d: dict[str, Any] = {
            "kind": self.kind,
            "status": self.status,
            "fingerprint": self.fingerprint,
            "method": self.method,
            "base": self.base,
            "source_gguf": self.source_gguf,
            "config": dict(self.config),
            "learning_rate": self.learning_rate,
            "sources": [dict(s) for s in self.sources],
            "training_ids": list(self.training_ids),
            "training_moments": [dict(m) for m in self.training_moments],
            "n_examples": self.n_examples,
            "n_too_long": self.n_too_long,
            "n_positive": self.n_positive,
            "example_tokens": dict(self.example_tokens),
        }
        for name in _SET_WHEN_KNOWN:
            if getattr(self, name) is not None:
                d[name] = getattr(self, name)
        if self.done:
            for name in _DONE:
                value = getattr(self, name)
                if name == "losses":
                    value = [dict(r) for r in value or ()]
                if value is not None or name not in _DONE_WHEN_KNOWN:
                    d[name] = value
        return d

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FinetuneManifest:
        """The record of a parsed ``manifest.json`` (unknown keys are ignored).

        Raises:
            TypeError, ValueError: a field has the wrong type.
        """
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["sources"] = tuple(dict(s) for s in values.get("sources") or ())
        values["training_ids"] = tuple(str(i) for i in values.get("training_ids") or ())
        values["training_moments"] = tuple(dict(m) for m in values.get("training_moments") or ())
        values["config"] = dict(values.get("config") or {})
        values["example_tokens"] = dict(values.get("example_tokens") or {})
        if values.get("losses") is not None:
            values["losses"] = tuple(dict(r) for r in values["losses"])
        return cls(**values)
