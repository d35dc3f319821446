"""Quality filters (ProAgentBench Appendix B.3): short events out, long events flagged,
valid screenshots only, LLM events with few screenshots flagged, SHA-256 dedup.

Dedup never removes a screenshot from its event: a screenshot whose file is byte-identical to an
earlier valid one of the same user (going back to the same page gives identical screenshots)
stays in its event as a *reference* to the first copy (:attr:`QualityResult.duplicate_of`); the
output stores that copy once (the same file, hard-linked, and the same OCR text). So no event is
ever lost to dedup."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..records import MIN_EVENT_SECONDS, Event, Screenshot

__all__ = ["QualityConfig", "QualityResult", "apply_quality_filters", "sha256_file"]


@dataclass(frozen=True)
class QualityConfig:
    """Thresholds of the quality filters, with the paper's defaults (B.3)."""

    min_event_seconds: float = MIN_EVENT_SECONDS
    """Events shorter than this are excluded (seconds; B.3: 3 s)."""
    review_event_seconds: float = 3600.0
    """Events longer than this are kept but flagged for review (seconds; B.3: 1 h)."""
    min_llm_screenshots: int = 3
    """LLM events with fewer valid screenshots are flagged (B.3 prefers >= 3)."""
    dedup: bool = True
    """A screenshot whose SHA-256 equals an earlier valid screenshot's of the same user is a
    reference to that one (stored once, screened once, reviewed once); it stays in its event."""
    check_file_size: bool = True
    """A screenshot whose file size differs from the recorded ``file_size`` is invalid."""


@dataclass
class QualityResult:
    """What passed: events with their valid screenshots, and every exclusion or flag."""

    events: list[tuple[Event, list[Screenshot]]] = field(default_factory=list)
    """Kept events (oldest first) with their valid screenshots (duplicates included)."""
    hashes: dict[int, str] = field(default_factory=dict)
    """Screenshot id -> SHA-256 of its file (valid screenshots)."""
    duplicate_of: dict[int, int] = field(default_factory=dict)
    """Screenshot id -> id of the earlier valid screenshot with the same SHA-256 (``dedup`` only)."""
    records: list[dict[str, Any]] = field(default_factory=list)
    """``curation.jsonl`` lines: ``{"user", "event_id", ["screenshot_id"], "decision":
    "excluded"|"flagged", "reason"}``."""


def sha256_file(path: Path) -> str:
    """SHA-256 of a file's bytes, hex (of the plaintext for a screenshot of an encrypted capture)."""
    from ..vault import is_encrypted_file, read_file

    if is_encrypted_file(path):
        return hashlib.sha256(read_file(path)).hexdigest()
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _invalid(shot: Screenshot, recorded_size: int | None, cfg: QualityConfig) -> str | None:
    from ..vault import open_image

    if shot.path is None or not shot.path.is_file():
        return "screenshot file missing"
    if cfg.check_file_size and recorded_size is not None and recorded_size > 0:
        size = shot.path.stat().st_size
        if size != recorded_size:
            return f"file size {size} B differs from the recorded {recorded_size} B"
    try:
        with open_image(shot.path) as im:
            im.load()
    except DataError as e:  # a plain file inside an encrypted capture, a screenshot that does not decrypt
        return e.problem
    except Exception as e:  # noqa: BLE001  (Pillow raises many types for broken files)
        return f"image does not decode ({type(e).__name__})"
    return None


def apply_quality_filters(
    user: str, events: list[Event], file_sizes: dict[int, int | None], cfg: QualityConfig
) -> QualityResult:
    """Apply the filters to one user's events (oldest first).

    Args:
        user: participant (written into every record).
        events: the user's events as read (soft-deleted rows already dropped).
        file_sizes: screenshot id -> recorded ``file_size`` in bytes (``None`` when not recorded).
        cfg: thresholds.
    """
    res = QualityResult()
    seen: dict[str, int] = {}

    def note(ev: Event, decision: str, reason: str, shot: int | None = None) -> None:
        rec: dict[str, Any] = {"user": user, "event_id": ev.id}
        if shot is not None:
            rec["screenshot_id"] = shot
        rec.update(decision=decision, reason=reason)
        res.records.append(rec)

    for ev in events:
        dur = ev.duration
        if dur is None:
            note(ev, "excluded", "open event (no end time)")
            continue
        if dur < cfg.min_event_seconds:
            note(ev, "excluded", f"shorter than {cfg.min_event_seconds:g} s ({dur:.1f} s)")
            continue
        if ev.is_llm_event and (ev.conversation is None or ev.conversation.is_empty):
            note(ev, "excluded", "LLM event without a recorded conversation")
            continue
        valid: list[Screenshot] = []
        for shot in ev.screenshots:
            why = _invalid(shot, file_sizes.get(shot.id), cfg)
            if why is None:
                digest = sha256_file(shot.path)  # type: ignore[arg-type]
                if cfg.dedup and digest in seen:
                    res.duplicate_of[shot.id] = seen[digest]
                seen.setdefault(digest, shot.id)
                res.hashes[shot.id] = digest
            if why is not None:
                note(ev, "excluded", why, shot.id)
                continue
            valid.append(shot)
        if not valid:
            note(ev, "excluded", "no valid screenshot")
            continue
        if dur > cfg.review_event_seconds:
            note(ev, "flagged", f"longer than {cfg.review_event_seconds:g} s ({dur:.0f} s): review")
        if ev.is_llm_event and len(valid) < cfg.min_llm_screenshots:
            note(
                ev, "flagged", f"LLM event with {len(valid)} valid screenshot(s), fewer than {cfg.min_llm_screenshots}"
            )
        res.events.append((ev, valid))
    return res
