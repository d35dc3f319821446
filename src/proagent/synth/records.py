"""Typed records of the synth stage: one user's database and the run's ``synth.json``.

``synth.json`` is :meth:`SynthManifest.to_json` (keys in the order proagent always wrote them);
:meth:`SynthManifest.from_json` reads it back, and reads an older one lacking a count as 0.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["MANIFEST", "SynthManifest", "SynthUser"]

MANIFEST = "synth.json"
"""The run's manifest in the output folder (also the marker of a synth output folder)."""


@dataclass(frozen=True)
class SynthUser:
    """One participant's generated database."""

    user: str
    """Participant name: the database's folder (``U001``)."""
    events: int
    """Event rows written."""
    llm_events: int
    """Of those, LLM-use events."""
    screenshots: int
    """Screenshot rows written."""
    path: Path | None = field(default=None, compare=False)
    """The database file (in memory only: ``synth.json`` does not hold it)."""

    def to_json(self) -> dict[str, Any]:
        """``{"user", "events", "llm_events", "screenshots"}`` (a ``users`` entry of ``synth.json``)."""
        return {
            "user": self.user,
            "events": self.events,
            "llm_events": self.llm_events,
            "screenshots": self.screenshots,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SynthUser:
        """The record of a ``users`` entry.

        Raises:
            KeyError: no ``user``.
            TypeError, ValueError: a count is not a number.
        """
        return cls(
            str(data["user"]),
            int(data.get("events", 0)),
            int(data.get("llm_events", 0)),
            int(data.get("screenshots", 0)),
        )


@dataclass(frozen=True)
class SynthManifest:
    """What one ``proagent synth`` run wrote (``synth.json``), and how long it took."""

    config: Mapping[str, Any]
    """The run's :class:`~proagent.synth.SynthConfig` as a JSON object."""
    users: tuple[SynthUser, ...]
    """Each participant's database, in order."""
    events: int
    """Event rows over all users."""
    llm_events: int
    """LLM-use events over all users."""
    screenshots: int
    """Screenshot rows over all users."""
    seconds: float | None = field(default=None, compare=False)
    """Wall time of the run (in memory only; ``None`` for a manifest read from disk)."""

    def to_json(self) -> dict[str, Any]:
        """The ``synth.json`` object: ``config``, ``users`` (without paths), ``events``,
        ``llm_events``, ``screenshots``."""
        return {
            "config": dict(self.config),
            "users": [u.to_json() for u in self.users],
            "events": self.events,
            "llm_events": self.llm_events,
            "screenshots": self.screenshots,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SynthManifest:
        """The record of a parsed ``synth.json`` (unknown keys are ignored).

        Raises:
            AttributeError, KeyError, TypeError, ValueError: not a synth manifest.
        """
        users = tuple(SynthUser.from_json(u) for u in data.get("users", []))
        return cls(
            dict(data.get("config") or {}),
            users,
            int(data.get("events", 0)),
            int(data.get("llm_events", 0)),
            int(data.get("screenshots", 0)),
        )

    @classmethod
    def read(cls, folder: str | Path) -> SynthManifest | None:
        """The manifest of a synth output ``folder``; ``None`` when it has none or it is not one."""
        try:
            return cls.from_json(json.loads((Path(folder) / MANIFEST).read_text("utf-8")))
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None
