"""Training: fit models on labelled moments, never on what is evaluated.

* :mod:`.data`: labelled-moment readers (the train split of an activity log, whole
  data sets, ProactiveBench synthetic traces) with provenance, and the leakage
  guard (:func:`find_leaks`) that ``eval --decider`` applies;
* :mod:`.when`: the When-to-Assist decider: calibrated scikit-learn models, the
  threshold chosen by grouped cross-validation (``proagent train when``);
* :mod:`.teacher`: teacher labels: a stronger model labels unlabelled moments
  (``train when --teacher MODEL --unlabelled DATA``);
* :mod:`.assemble`: the training set of ``train when``, every source's moments in one
  :class:`TrainingSet` (:func:`assemble_training_set`);
* :mod:`.personal`: a decider's own training moments read back (``live --learn-method refit``);
* :mod:`.records`: typed records (a fine-tuning run's manifest, :class:`FinetuneManifest`);
* :mod:`proagent.cli.train`: the ``proagent train`` command group.
"""

from __future__ import annotations

from .assemble import TeacherError, assemble_training_set
from .data import (
    LabelledSource,
    TrainingSet,
    data_sha256,
    find_leaks,
    load_split_moments,
    load_training_data,
    moment_key,
    training_moments,
)
from .records import FinetuneManifest
from .when import CLASSIFIERS, OBJECTIVES, WhenConfig, choose_threshold, fit_when, parse_objective, train_decider

__all__ = [
    "CLASSIFIERS",
    "OBJECTIVES",
    "FinetuneManifest",
    "LabelledSource",
    "TeacherError",
    "TrainingSet",
    "WhenConfig",
    "assemble_training_set",
    "choose_threshold",
    "data_sha256",
    "find_leaks",
    "fit_when",
    "load_split_moments",
    "load_training_data",
    "moment_key",
    "parse_objective",
    "train_decider",
    "training_moments",
]
