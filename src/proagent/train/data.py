"""Labelled moments for training, with their provenance, and the leakage guard.

Readers:

* :func:`load_split_moments`: the benchmark samples of an activity log
  (ProactiveBench sessions, LifeTrace databases: any ``--data`` that ``eval``
  reads) in one split of the time split within each user, exactly as ``eval``
  builds them;
* :func:`load_training_data`: a whole data set given with ``--train-data``: an
  activity log (every sample, both splits) or ProactiveBench reward-data traces
  (``synthetic_traces.jsonl`` or a folder holding it; synthetic traces only).

Every source is recorded as a :class:`LabelledSource` (path, SHA-256, origin,
counts). The leakage guard (:func:`training_moments`, :func:`find_leaks`, from
:mod:`proagent.bench.leakage`) keys
every training moment by (session, time) and by (text, time), so a decider is
never scored on a moment it was trained on, also when the same moment reaches it
under another session name.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..bench.leakage import find_leaks, moment_key, training_moments
from ..bench.samples import SampleConfig, build_samples
from ..errors import DataError
from ..live import FEEDBACK_DB, feedback_samples
from ..records import Sample
from ..sources.fetch import SYNTHETIC_FILE
from ..sources.load import load_events
from ..sources.proactivebench_synthetic import is_reward_trace_file, read_reward_traces, trace_samples

__all__ = [
    "LabelledSource",
    "TrainingSet",
    "data_sha256",
    "find_leaks",
    "load_feedback_moments",
    "load_split_moments",
    "load_training_data",
    "moment_key",
    "training_moments",
]

Origin = Literal["real", "synthetic"]


@dataclass(frozen=True)
class LabelledSource:
    """One data set the decider was trained on."""

    path: str
    """The path as given."""
    sha256: str
    """SHA-256 of the file, or of a folder's files (:func:`data_sha256`)."""
    origin: Origin
    """``real`` (human activity logs) or ``synthetic`` (LLM-written traces)."""
    selection: str
    """Which moments were used: ``train split`` (time split within each user) or ``all``."""
    n: int
    """Moments used."""
    n_positive: int
    """Moments labelled "needs help"."""

    @property
    def positive_rate(self) -> float:
        """Share of positive moments (0-1)."""
        return self.n_positive / self.n if self.n else 0.0


@dataclass(frozen=True)
class TrainingSet:
    """Labelled moments and where they come from."""

    samples: tuple[Sample, ...]
    """The moments, sources in order."""
    sources: tuple[LabelledSource, ...]
    """One entry per source."""
    origins: tuple[Origin, ...]
    """Origin of each moment, aligned with ``samples``."""


def data_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes, or of a folder: over its files' relative paths and
    SHA-256s, sorted (hidden files skipped).

    Raises:
        DataError: the path does not exist.
    """
    path = Path(path)
    if path.is_file():
        return hashlib.sha256(path.read_bytes()).hexdigest()
    if not path.is_dir():
        raise DataError(path, "no such file or folder")
    h = hashlib.sha256()
    for f in sorted(
        p for p in path.rglob("*") if p.is_file() and not any(x.startswith(".") for x in p.relative_to(path).parts)
    ):
        h.update(f"{f.relative_to(path).as_posix()}\0{hashlib.sha256(f.read_bytes()).hexdigest()}\n".encode())
    return h.hexdigest()


def _source(path: str | Path, origin: Origin, selection: str, samples: Sequence[Sample]) -> LabelledSource:
    return LabelledSource(
        path=str(path),
        sha256=data_sha256(path),
        origin=origin,
        selection=selection,
        n=len(samples),
        n_positive=int(sum(s.label for s in samples)),
    )


def load_split_moments(
    data: str | Path, split: str = "train", *, window_seconds: float = 300.0, train_fraction: float = 0.5, seed: int = 0
) -> tuple[list[Sample], LabelledSource]:
    """The ``split`` samples (``train``, ``test`` or ``all``) of an activity log, as ``eval`` builds them.

    Raises:
        DataError: unreadable data, or no moment in that split.
    """
    cfg = SampleConfig(window_seconds=window_seconds, train_fraction=train_fraction, seed=seed)
    samples = build_samples(load_events(data), cfg)
    if split != "all":
        samples = [s for s in samples if s.split == split]
    if not samples:
        raise DataError(data, "no moments" if split == "all" else f"no {split}-split moments")
    return samples, _source(data, "real", "train split" if split == "train" else split, samples)


def _trace_file(path: Path) -> Path | None:
    if path.is_file():
        return path if is_reward_trace_file(path) else None
    f = path / SYNTHETIC_FILE
    return f if f.is_file() else None


def load_training_data(
    data: str | Path, *, window_seconds: float = 300.0, train_fraction: float = 0.5, seed: int = 0
) -> tuple[list[Sample], LabelledSource]:
    """Every labelled moment of a whole data set.

    ProactiveBench reward-data traces (a ``.jsonl`` file of traces, or a folder
    holding ``synthetic_traces.jsonl``) give their synthetic traces (origin
    ``synthetic``; real-session traces in upstream files are dropped); anything
    else is read as an activity log (origin ``real``), both splits.

    Raises:
        DataError: unreadable data or no moments.
    """
    path = Path(data)
    if not path.exists():
        raise DataError(path, "no such file or folder")
    trace = _trace_file(path)
    if trace is not None:
        samples = trace_samples(read_reward_traces(trace), window_seconds)
        if not samples:
            raise DataError(trace, "no synthetic traces")
        return samples, _source(trace, "synthetic", "all", samples)
    return load_split_moments(path, "all", window_seconds=window_seconds, train_fraction=train_fraction, seed=seed)


def load_feedback_moments(folder: str | Path) -> tuple[list[Sample], LabelledSource]:
    """The answered offers of a ``proagent live`` folder (its ``feedback.db``) as labelled
    moments: accepted = help was needed at that moment (1), dismissed = it was not (0);
    "not now" and ignored offers are no label (:func:`proagent.live.feedback_samples`).

    Raises:
        DataError: no feedback database there, or no accepted or dismissed offer yet.
    """
    samples = feedback_samples(folder)
    db = Path(folder) if Path(folder).is_file() else Path(folder) / FEEDBACK_DB
    if not samples:
        raise DataError(db, "no accepted or dismissed offers yet")
    return samples, _source(db, "real", "feedback", samples)
