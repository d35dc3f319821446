"""Typed records of the bench stage that cross a module boundary: the synthetic baseline's
``simulate.json`` (:func:`proagent.bench.simulate.write_simulated`) and the threshold that
``eval --threshold auto`` chose (:class:`ThresholdCalibration`, :func:`proagent.bench.threshold.calibrate_threshold`).

``simulate.json`` is :meth:`SimulateManifest.to_json` (keys in the order proagent always
wrote them); :meth:`SimulateManifest.from_json` reads it back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

__all__ = ["SimulateManifest", "ThresholdCalibration"]


@dataclass(frozen=True)
class ThresholdCalibration:
    """The P(Yes) threshold chosen on the train split (``eval --threshold auto``), what it rests
    on, and whether it can be trusted (:func:`proagent.agent.calibration.separates`).
    :meth:`to_json` is ``results.json``'s ``calibration`` block."""

    threshold: float
    """P(Yes) >= threshold decides Yes (Youden's J on the train moments; in [0, 1])."""
    n_train: int
    """Train moments with a readable P(Yes) that the threshold was chosen on."""
    n_train_positive: int
    """Of those, the moments where the user needed help."""
    n_train_samples: int
    """Train samples the calibration run scored (readable P(Yes) or not)."""
    balanced_accuracy: float
    """Mean of TPR and TNR at the threshold on the train moments."""
    auc: float
    """ROC AUC of P(Yes) on the train moments (0.5: chance)."""
    log: str
    """The calibration run's inspect log (a sibling folder of the eval's ``--log-dir``)."""
    trusted: bool
    """AUC > 0.5 on enough moments: the threshold is likely to help (not written to ``results.json``)."""

    def to_json(self) -> dict[str, Any]:
        """``results.json``'s ``calibration``: every field but ``trusted``, in this order."""
        out = asdict(self)
        del out["trusted"]
        return out


@dataclass(frozen=True)
class SimulateManifest:
    """What ``proagent simulate`` wrote: the synthetic dataset's summary (``simulate.json``)."""

    kind: Literal["proactivebench", "lifetrace"]
    """Format of the human data, and so of the dataset: session files or LifeTrace databases."""
    data: str
    """The human log the decisions were made on, as given."""
    users: tuple[str, ...]
    """Users written (every candidate point decided), sorted."""
    skipped_users: tuple[str, ...]
    """Users left out because not all their points were decided (``--limit``), sorted."""
    candidates: int
    """Candidate time points of the written users."""
    llm_moments: int
    """Of those, the points where the model said the user turns to an LLM."""
    human_moments: int
    """Of those, the points where the human did."""
    unparsed: int
    """Answers that did not parse (counted as no)."""
    files: tuple[str, ...]
    """The files written, as paths under the output folder."""

    def to_json(self) -> dict[str, Any]:
        """The ``simulate.json`` object (tuples as lists)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SimulateManifest:
        """The record of a parsed ``simulate.json`` (unknown keys are ignored).

        Raises:
            KeyError: a field is missing.
            TypeError, ValueError: a field has the wrong type.
        """
        return cls(
            kind=data["kind"],
            data=str(data["data"]),
            users=tuple(map(str, data["users"])),
            skipped_users=tuple(map(str, data["skipped_users"])),
            candidates=int(data["candidates"]),
            llm_moments=int(data["llm_moments"]),
            human_moments=int(data["human_moments"]),
            unparsed=int(data["unparsed"]),
            files=tuple(map(str, data["files"])),
        )
