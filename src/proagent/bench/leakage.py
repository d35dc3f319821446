"""The leakage guard: a model is never scored on a moment it was trained on.

Every training moment is keyed by (session, time) and by (text, time)
(:func:`moment_key`), so a moment is caught also when it reaches evaluation under
another session name. Trainers write :func:`training_moments` into their folder's
manifest (a decider's ``decider.json``, a fine-tuning run's ``manifest.json``); the
``assist`` task refuses evaluated moments among them (:func:`refuse_leaks`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from ..agent.decider import event_text, text_sha256
from ..errors import DataError
from ..records import Sample

__all__ = ["find_leaks", "manifest_training_moments", "moment_key", "refuse_leaks", "training_moments"]


def moment_key(s: Sample) -> tuple[str, str, str]:
    """(user, time ISO, SHA-256 of the current event's text) of a moment."""
    return (s.user, s.time.isoformat(), text_sha256(event_text(s.current)))


def training_moments(samples: Iterable[Sample]) -> list[dict[str, str]]:
    """The leakage-guard record of training moments: ``{"user", "time", "text_sha256"}`` each."""
    return [{"user": u, "time": t, "text_sha256": h} for u, t, h in (moment_key(s) for s in samples)]


def find_leaks(samples: Iterable[Sample], trained_on: Iterable[dict[str, str]]) -> list[str]:
    """Ids of ``samples`` that occur in the training moments ``trained_on``: same
    session and time, or same current-event text and time.

    Returns:
        The leaking sample ids, in order (empty when none).
    """
    by_session, by_text = set(), set()
    for m in trained_on:
        by_session.add((m["user"], m["time"]))
        by_text.add((m["text_sha256"], m["time"]))
    out = []
    for s in samples:
        u, t, h = moment_key(s)
        if (u, t) in by_session or (h, t) in by_text:
            out.append(s.id)
    return out


def manifest_training_moments(path: str | Path) -> list[dict[str, str]]:
    """The ``training_moments`` a trainer's JSON manifest at ``path`` lists (``[]`` when the
    file does not exist or lists none).

    Raises:
        proagent.errors.DataError: the file is not a JSON object.
    """
    path = Path(path)
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DataError(path, f"not a readable JSON manifest ({e})") from None
    if not isinstance(data, dict):
        raise DataError(path, "not a training manifest (no JSON object)")
    return list(data.get("training_moments") or [])


def refuse_leaks(kind: str, folder: str | Path, trained_on: Iterable[dict[str, str]], samples: list[Sample]) -> None:
    """Refuse to evaluate the model in ``folder`` (a ``kind``: ``decider``, ``fine-tuned model``)
    on its training moments.

    Raises:
        proagent.errors.DataError: an evaluated moment is one of ``trained_on`` (the message
            names up to five of them).
    """
    leaks = find_leaks(samples, trained_on)
    if leaks:
        shown = ", ".join(leaks[:5]) + (f" and {len(leaks) - 5} more" if len(leaks) > 5 else "")
        raise DataError(
            folder,
            f"the {kind} was trained on {len(leaks)} of the {len(samples)} evaluated moments "
            f"({shown}); evaluate it on moments it was not trained on (e.g. --split test)",
        )
