"""Typed records of the curation stage: regions, screening verdicts, curation decisions, the
output's manifest."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import DataError

__all__ = [
    "ACTIONS",
    "RISK_ACTION",
    "Action",
    "CurateManifest",
    "CurateSummary",
    "Region",
    "Risk",
    "Screening",
    "Verdict",
]

Risk = Literal["safe", "moderate", "high-risk"]
"""ProAgentBench's privacy risk levels (Appendix B.4)."""
Action = Literal["retain", "blur", "delete"]
"""What happens to a screenshot (Appendix B.4)."""
ACTIONS: tuple[Action, ...] = ("retain", "blur", "delete")
"""Actions, mildest first."""
RISK_ACTION: dict[str, Action] = {"safe": "retain", "moderate": "blur", "high-risk": "delete"}
"""Default action of each risk level."""


@dataclass(frozen=True)
class Region:
    """A rectangle of a screenshot holding personal data (pixels, origin top left)."""

    x0: int
    """Left edge (pixels)."""
    y0: int
    """Top edge (pixels)."""
    x1: int
    """Right edge (pixels, exclusive)."""
    y1: int
    """Bottom edge (pixels, exclusive)."""
    type: str
    """What is there: a text type of :func:`proagent.curate.pii_types`, or ``face``."""

    def to_json(self) -> dict[str, Any]:
        """``{"x0":..,"y0":..,"x1":..,"y1":..,"type":..}``."""
        return asdict(self)

    @staticmethod
    def from_json(d: dict[str, Any]) -> Region:
        """Inverse of :meth:`to_json`."""
        return Region(int(d["x0"]), int(d["y0"]), int(d["x1"]), int(d["y1"]), str(d["type"]))


@dataclass(frozen=True)
class Screening:
    """What a screener (phase 1) says about one screenshot. Holds no raw screen text."""

    risk: Risk
    """Risk level."""
    types: tuple[str, ...]
    """Kinds of personal data seen, sorted (text types and ``face``)."""
    action: Action
    """Proposed action."""
    scene: str
    """Scene description (kept in place of a deleted screenshot); contains no detected data."""
    regions: tuple[Region, ...] = ()
    """Where the data is, for blurring and for the review page."""
    ocr_text: str = ""
    """Screen text read by the screener, already cleaned (detected spans replaced by type
    tags); empty when the screener reads none."""
    screener: str = ""
    """Which screener decided (``ocr`` or ``vlm:MODEL``)."""

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (regions as dicts)."""
        d = asdict(self)
        d["types"] = list(self.types)
        d["regions"] = [r.to_json() for r in self.regions]
        return d

    @staticmethod
    def from_json(d: dict[str, Any]) -> Screening:
        """Inverse of :meth:`to_json`."""
        return Screening(
            risk=d["risk"],
            types=tuple(d.get("types", ())),
            action=d["action"],
            scene=d.get("scene", ""),
            regions=tuple(Region.from_json(r) for r in d.get("regions", ())),
            ocr_text=d.get("ocr_text", ""),
            screener=d.get("screener", ""),
        )


@dataclass(frozen=True)
class Verdict:
    """The final privacy decision for one screenshot (one line of ``privacy.jsonl``)."""

    user: str
    """Participant."""
    event_id: str
    """Event the screenshot belongs to."""
    screenshot_id: int
    """Screenshot row id (the same in the raw and the output database)."""
    risk: Risk
    """Final risk level."""
    types: tuple[str, ...]
    """Kinds of personal data detected by any phase, sorted."""
    action: Action
    """Final action applied to the output."""
    scene_description: str
    """Scene description (the only trace of a deleted screenshot's content)."""
    phase: Literal["screen", "review", "rules"]
    """Which phase set the final action: 1 screening, 2 human review, 3 rules. A review decision
    is final: no automatic phase changes it (what they would have done is in :attr:`overrode`)."""
    screener: str
    """Screener of phase 1."""
    reasons: tuple[str, ...] = ()
    """Why phase 3 changed the action (e.g. ``title keyword``, ``ocr text: email``,
    ``neighbour of deleted``), empty otherwise."""
    n_regions: int = 0
    """Regions blurred (blur) or detected."""
    applied: str = ""
    """What was actually done to the published image: ``copied``, ``blurred N region(s)``,
    ``blurred whole screen`` (a blur with no region marked), ``left out`` (delete)."""
    overrode: tuple[str, ...] = ()
    """With ``phase`` ``review``: each automatic decision the reviewer's overrode, as ``phase: action
    (why)``, e.g. ``screen: blur (phone)``, ``rules: delete (ocr text: phone)``; empty otherwise."""
    duplicate_of: int | None = None
    """Id of the earlier screenshot with the same SHA-256 whose published file (hard-linked) and
    OCR text this one shares; ``None`` when it is its own copy."""

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        d = asdict(self)
        d["types"], d["reasons"], d["overrode"] = list(self.types), list(self.reasons), list(self.overrode)
        return d


@dataclass
class CurateSummary:
    """What one ``curate`` run did, per user and in total."""

    out: str
    """Output folder."""
    users: dict[str, dict[str, int]] = field(default_factory=dict)
    """User -> counts: ``events_in``, ``events_out``, ``screenshots_in``, ``retain``,
    ``blur``, ``delete``, ``excluded_screenshots``, ``flags``, ``screened`` (phase 1 run
    now, not read from the resume cache), ``duplicates`` (screenshots stored as a reference to
    a byte-identical earlier one)."""
    pending_review: int = 0
    """Screenshots phase 1 retained or rated moderate that have no review decision yet."""


@dataclass(frozen=True)
class CurateManifest:
    """``OUT/.curate/manifest.json``: what a curate output was made from (written first, before
    any screening; ``proagent review`` and a re-run of ``curate`` read it)."""

    raw: str
    """The raw input, resolved (a re-run with another input is refused)."""
    users: dict[str, str]
    """User -> the LifeTrace database curated for them, resolved."""

    @classmethod
    def read(cls, path: Path) -> CurateManifest:
        """The manifest at ``path``.

        Raises:
            DataError: unreadable, not UTF-8 JSON, or not a curate manifest (no ``users``).
        """
        try:
            data = json.loads(path.read_text("utf-8"))
        except UnicodeDecodeError:
            raise DataError(path, "the curate manifest is not UTF-8 text (damaged); re-run proagent curate") from None
        except json.JSONDecodeError as e:
            raise DataError(
                path, f"the curate manifest is not valid JSON ({e.msg} at line {e.lineno}); re-run proagent curate"
            ) from None
        except OSError as e:
            raise DataError(path, f"cannot read the curate manifest ({e.strerror or e})") from None
        users = data.get("users") if isinstance(data, dict) else None
        if not isinstance(users, (dict, list)):
            raise DataError(path, "not a curate manifest (no users); re-run proagent curate")
        users = {str(u): str(db) for u, db in users.items()} if isinstance(users, dict) else {str(u): "" for u in users}
        return cls(raw=str(data.get("raw") or ""), users=users)
