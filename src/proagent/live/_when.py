"""The learned When-to-Assist decider (``proagent train when``) as the live loop's :class:`~proagent.live.When`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..records import Sample

__all__ = ["DeciderWhen", "load_when"]


class DeciderWhen:
    """Adapter: a loaded :class:`proagent.agent.decider.Decider` as a callable
    Sample -> P(help) with the threshold chosen at training time."""

    def __init__(self, decider: Any, threshold: float | None = None) -> None:
        self.decider = decider
        self.threshold = float(decider.threshold if threshold is None else threshold)

    def __call__(self, sample: Sample) -> float:
        return float(self.decider.decide(sample).p_yes)


def load_when(folder: str | Path, threshold: float | None = None) -> DeciderWhen:
    """Load a decider folder and load its embedding model now (the first live
    decision is then as fast as the others); ``threshold`` replaces the one chosen
    at training time (e.g. :func:`proagent.agent.decider.cost_threshold`).

    Raises:
        ValueError: not a decider folder, or one made for other features
            (:class:`proagent.agent.decider.DeciderError`).
    """
    from ..agent.decider import load_decider  # lazy: it pulls in inspect_ai (~1 s), which scripted live runs skip

    d = load_decider(folder)
    d.warm_up()
    return DeciderWhen(d, threshold)
