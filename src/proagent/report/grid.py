"""The points of an ablation grid: methods x memory x windows x models (x deciders)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..io import slug

__all__ = ["Cell", "cells"]


@dataclass(frozen=True)
class Cell:
    """One point of the grid."""

    model: str
    """The inspect model."""
    method: str
    """Prompting method (zero-shot, cot, sc)."""
    memory: str
    """Long-term memory (none, rag, kg, persona)."""
    window: str
    """Context window as given (e.g. ``5m``)."""
    decider: str = "none"
    """A decider folder (``proagent train when``) that decides When, or ``none`` (the model decides)."""

    @property
    def slug(self) -> str:
        """The cell's folder name, ``<model>__<method>__<memory>__<window>[__dec-<folder>]``."""
        parts = [self.model.split("/")[-1] or self.model, self.method, self.memory, self.window]
        if self.decider != "none":  # cells without a decider keep the names earlier grids resume
            parts.append("dec-" + (Path(self.decider).name or "decider"))
        return "__".join(slug(p, limit=200) for p in parts)

    def without_memory(self) -> Cell:
        """The same point with ``memory = none``: the reference of a memory's effect."""
        return Cell(self.model, self.method, "none", self.window, self.decider)


def cells(
    models: Sequence[str],
    methods: Sequence[str],
    memories: Sequence[str],
    windows: Sequence[str],
    deciders: Sequence[str] = ("none",),
) -> list[Cell]:
    """The grid in run order: model, then window, then method, then memory, then decider (so a
    local model stays loaded and memory caches are reused across cells). A value given twice in one
    list is one point of the grid (``--windows 5m,5m`` ran the same cell twice)."""
    models, methods, memories, windows, deciders = (
        list(dict.fromkeys(x)) for x in (models, methods, memories, windows, deciders)
    )
    return [
        Cell(mo, me, mem, w, d)
        for mo in models
        for w in windows
        for me in methods
        for mem in memories
        for d in deciders
    ]
