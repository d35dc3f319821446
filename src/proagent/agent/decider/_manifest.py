"""The decider folder's ``manifest.json`` as a typed record: written by ``proagent train when``
(:func:`proagent.train.when.train_decider`), read by :func:`~._model.load_decider`, the
leakage guard of ``eval --decider``, live learning and ``train when --feedback``.

The JSON on disk is the record's fields in order (:func:`proagent.io.to_jsonable`); a manifest
of an older proagent lacking a later field reads it as its default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["DeciderManifest"]


@dataclass(frozen=True)
class DeciderManifest:
    """What a decider was trained on and how (``manifest.json``)."""

    feature_version: int
    """Version of the moment features (:data:`~._features.FEATURE_VERSION` at training)."""
    feature_groups: tuple[str, ...]
    """Feature groups used, in order (:class:`~._features.FeatureConfig`)."""
    n_features: int
    """Feature columns the model takes."""
    embedding_model: str
    """Text embedder of the embedding features (:data:`~._embedding.EMBEDDING_MODEL`)."""
    window_seconds: float | None = None
    """Context window of the training moments (seconds); ``None`` when not known."""
    config: Mapping[str, Any] = field(default_factory=dict)
    """Classifier settings: ``model`` (``logreg``/``gbm``), ``c``, ``folds``, ``cv`` (``user``/``moment``),
    ``calibration`` (``sigmoid``), ``target``."""
    objective: str = "f1"
    """Threshold objective (:data:`proagent.train.when.OBJECTIVES`)."""
    threshold: float = 0.5
    """Decision threshold on P(needs help) (0-1)."""
    seed: int = 0
    """Random seed of folds and model."""
    cv: Mapping[str, float] = field(default_factory=dict)
    """Out-of-fold metrics at the threshold: ``accuracy``, ``precision``, ``recall``, ``f1``,
    ``balanced_accuracy``, ``yes_rate`` (share answered Yes), ``auc``, ``folds``."""
    warning: str | None = None
    """Why the decider should not be trusted (:func:`proagent.train.when.cv_warning`), or ``None``."""
    n: int = 0
    """Training moments."""
    n_positive: int = 0
    """Training moments labelled "needs help"."""
    training_data: tuple[Mapping[str, Any], ...] = ()
    """Each data set trained on: ``path``, ``sha256``, ``origin`` (``real``/``synthetic``),
    ``selection``, ``n``, ``n_positive``, ``positive_rate``."""
    training_moments: tuple[Mapping[str, str], ...] = ()
    """The leakage-guard keys of every training moment: ``user``, ``time``, ``text_sha256``
    (:func:`proagent.train.data.training_moments`)."""
    versions: Mapping[str, str] = field(default_factory=dict)
    """Python and package versions at training."""
    created: str = ""
    """UTC time of training, ISO 8601."""
    format: str | None = None
    """``proagent-decider`` once saved (:data:`~._model.MANIFEST_FORMAT`)."""
    manifest_version: int | None = None
    """Layout version once saved (:data:`~._model.MANIFEST_VERSION`)."""
    model_file: str | None = None
    """The model's file name in the folder once saved (``model.skops``)."""
    model_sha256: str | None = None
    """SHA-256 of the model file once saved."""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DeciderManifest:
        """The record of a parsed ``manifest.json`` (unknown keys are ignored).

        Raises:
            KeyError: a field without a default is missing.
            TypeError, ValueError: a field has the wrong type.
        """
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for name in ("feature_version", "feature_groups", "n_features", "embedding_model"):
            if name not in values:
                raise KeyError(name)
        values["feature_groups"] = tuple(str(g) for g in values["feature_groups"])
        values["threshold"] = float(values.get("threshold", 0.5))
        for name in ("training_data", "training_moments"):
            values[name] = tuple(dict(x) for x in values.get(name) or ())
        for name in ("config", "cv", "versions"):
            values[name] = dict(values.get(name) or {})
        return cls(**values)
