"""The population decider's own training moments, read back for online refits (``proagent live --learn-method refit``).

A decider's manifest names every data set it was trained on (path, SHA-256,
selection) and keys every training moment (``training_moments``: session, time,
text hash). :func:`decider_training_data` reads those data sets again, checks
their SHA-256, and keeps exactly the keyed moments, so the refit starts from
the same population the decider was fitted on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataError
from .data import data_sha256, load_feedback_moments, load_training_data, moment_key

__all__ = ["decider_training_data"]


def decider_training_data(decider: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of the moments a loaded decider was trained on, featurised as it featurises.

    Raises:
        DataError: a training data set is gone or changed (SHA-256), or none of its moments are found.
    """
    from ..agent.decider import moment_features

    m = decider.manifest
    window = float(m.window_seconds or 300.0)
    keys = {(t["user"], t["time"], t["text_sha256"]) for t in m.training_moments}
    samples = []
    for src in m.training_data:
        path = Path(src["path"])
        if not path.exists():
            raise DataError(
                path, "the decider's training data is gone (the refit method re-reads it); use another --learn-method"
            )
        if src["selection"] == "feedback":  # a feedback.db grows: its moments are found by key
            got, _ = load_feedback_moments(path)
        else:
            got, _ = load_training_data(path, window_seconds=window)
        if src["selection"] != "feedback" and data_sha256(path) != src["sha256"]:
            raise DataError(
                path, "changed since the decider was trained (SHA-256); retrain it or use another --learn-method"
            )
        samples += [s for s in got if moment_key(s) in keys]
    if not samples:
        raise DataError(decider.path or "decider", "none of the decider's training moments were found again")
    x = moment_features(samples, decider.cache, decider.features)
    return x, np.asarray([s.label for s in samples], int)
