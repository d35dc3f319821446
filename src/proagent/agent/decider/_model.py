"""A fitted When-to-Assist decider on disk: ``model.skops`` + ``manifest.json`` + ``report.md``.

The model is saved with skops (``skops.io``), which rebuilds scikit-learn
objects from a schema instead of unpickling, so loading never runs code from
the file; only types in :data:`TRUSTED_PREFIXES` are accepted. A folder whose
manifest format, feature version or model checksum does not match is refused
(:class:`DeciderError`).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import DataError, UsageError
from ...io import write_atomic, write_json_atomic
from ...records import Sample
from ._embedding import EMBEDDING_MODEL, EmbeddingCache
from ._features import FEATURE_VERSION, FeatureConfig, feature_names, moment_features
from ._manifest import DeciderManifest

__all__ = [
    "MANIFEST_FORMAT",
    "MANIFEST_VERSION",
    "TRUSTED_PREFIXES",
    "Decider",
    "DeciderError",
    "DeciderManifest",
    "Decision",
    "load_decider",
    "save_decider",
]

MANIFEST_FORMAT = "proagent-decider"
"""``format`` field of every decider manifest."""

MANIFEST_VERSION = 1
"""Version of the manifest layout."""

MODEL_FILE = "model.skops"
MANIFEST_FILE = "manifest.json"

TRUSTED_PREFIXES = ("sklearn.", "numpy.", "scipy.", "builtins.")
"""Module prefixes of the types a decider's model file may contain."""


class DeciderError(DataError):
    """A decider folder is missing, damaged, or was made for other features (``path``: the
    folder or the file in it at fault)."""


@dataclass(frozen=True)
class Decision:
    """The decider's When-to-Assist answer at one moment."""

    p_yes: float
    """Calibrated probability that the user needs help now (0-1)."""
    needs_help: bool
    """``p_yes >= threshold``."""
    threshold: float
    """The decision threshold chosen at training time (0-1)."""
    latency_ms: float
    """Wall time of this decision in milliseconds (features, embeddings, model)."""


class Decider:
    """A loaded decider: call :meth:`decide` once per moment.

    Attributes:
        path: the folder it was loaded from (``None`` before saving).
        manifest: the manifest (``manifest.json``, :class:`DeciderManifest`).
        model: the fitted scikit-learn classifier (``predict_proba``).
        features: the feature configuration.
        threshold: decision threshold on ``p_yes``.
    """

    def __init__(
        self, model: Any, manifest: DeciderManifest, cache: EmbeddingCache | None = None, path: Path | None = None
    ) -> None:
        self.model = model
        self.manifest = manifest
        self.features = FeatureConfig(manifest.feature_groups)
        self.threshold = manifest.threshold
        self.cache = cache or EmbeddingCache()
        self.path = path

    def probabilities(self, samples: Sequence[Sample]) -> np.ndarray:
        """Calibrated P(needs help) of each moment, shape ``(len(samples),)``."""
        if not samples:
            return np.zeros(0)
        x = moment_features(samples, self.cache, self.features)
        return np.asarray(self.model.predict_proba(x)[:, 1], dtype=float)

    def decide(self, sample: Sample) -> Decision:
        """Decide one moment: probability, yes/no at the threshold, and latency."""
        t0 = time.perf_counter()
        p = float(self.probabilities([sample])[0])
        ms = (time.perf_counter() - t0) * 1000.0
        return Decision(p_yes=p, needs_help=p >= self.threshold, threshold=self.threshold, latency_ms=ms)

    def warm_up(self) -> None:
        """Load the embedding model now (so the first :meth:`decide` is not slowed by it)."""
        if any(g in self.features.groups for g in ("embedding", "similarity")):
            self.cache._model_embed(["query warm-up"])


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def save_decider(folder: str | Path, model: Any, manifest: DeciderManifest, report: str) -> DeciderManifest:
    """Write ``model.skops``, ``manifest.json`` (with the model's SHA-256 added) and
    ``report.md`` into ``folder``, each atomically; the manifest goes last, so a
    folder with a manifest always has the model it names.

    Returns:
        The manifest as written (format, version, model file and SHA-256 filled in).
    """
    import skops.io as sio

    folder = Path(folder)
    blob = sio.dumps(model)
    write_atomic(folder / MODEL_FILE, blob)
    manifest = replace(
        manifest,
        format=MANIFEST_FORMAT,
        manifest_version=MANIFEST_VERSION,
        model_file=MODEL_FILE,
        model_sha256=hashlib.sha256(blob).hexdigest(),
    )
    write_atomic(folder / "report.md", report)
    write_json_atomic(folder / MANIFEST_FILE, manifest, nan="null")
    return manifest


def load_decider(folder: str | Path, cache: EmbeddingCache | None = None, *, option: str | None = None) -> Decider:
    """Load a decider folder written by :func:`save_decider` (``proagent train when``).

    ``option`` is the command-line option that named the folder (``--deciders``): a missing
    folder is then a usage error, and a refusal's message starts with it.

    Raises:
        DeciderError: no manifest, a manifest of another format or version, a
            feature version or embedding model other than this proagent's, a model
            file that is missing, unreadable or fails its SHA-256, or a model holding types
            outside :data:`TRUSTED_PREFIXES` (the message names the folder).
        proagent.errors.UsageError: with ``option``, ``folder`` does not exist.
    """
    if option is None:
        return _load_decider(Path(folder), cache)
    if not Path(folder).exists():
        raise UsageError(option, f"{folder}: no such folder")
    try:
        return _load_decider(Path(folder), cache)
    except DeciderError as e:  # the same refusal, named by the option that gave the folder
        raise DeciderError(e.path, e.problem, option=option) from None


def _load_decider(folder: Path, cache: EmbeddingCache | None) -> Decider:
    try:
        return _read_decider(folder, cache)
    except OSError as e:  # a manifest or model file that cannot be read (permissions, I/O)
        raise DeciderError(e.filename or folder, f"cannot read ({e.strerror or e})") from None


def _read_decider(folder: Path, cache: EmbeddingCache | None) -> Decider:
    import skops.io as sio

    folder = Path(folder)
    mpath = folder / MANIFEST_FILE
    if not mpath.is_file():
        raise DeciderError(folder, f"not a decider folder (no {MANIFEST_FILE}; make one with `proagent train when`)")
    try:
        manifest = json.loads(mpath.read_text("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DeciderError(mpath, f"unreadable manifest ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise DeciderError(mpath, "not a proagent decider manifest")
    if manifest.get("manifest_version") != MANIFEST_VERSION:
        raise DeciderError(
            mpath,
            f"manifest version {manifest.get('manifest_version')!r}, this proagent reads "
            f"{MANIFEST_VERSION}; retrain with `proagent train when`",
        )
    if manifest.get("feature_version") != FEATURE_VERSION:
        raise DeciderError(
            mpath,
            f"made with feature version {manifest.get('feature_version')!r}, this proagent "
            f"computes version {FEATURE_VERSION}; retrain with `proagent train when`",
        )
    if manifest.get("embedding_model") != EMBEDDING_MODEL:
        raise DeciderError(
            mpath,
            f"made with embeddings {manifest.get('embedding_model')!r}, this proagent uses "
            f"{EMBEDDING_MODEL!r}; retrain",
        )
    try:
        groups = FeatureConfig(tuple(manifest["feature_groups"]))
        threshold = float(manifest["threshold"])
    except (KeyError, TypeError, ValueError) as e:
        raise DeciderError(mpath, f"incomplete manifest ({e})") from None
    if manifest.get("n_features") != len(feature_names(groups)) or not 0.0 <= threshold <= 1.0:
        raise DeciderError(mpath, "feature count or threshold does not match its feature groups")
    name = str(manifest.get("model_file", MODEL_FILE))
    model_path = folder / name
    if Path(name).name != name or name in ("", ".", "..") or model_path.is_symlink():
        raise DeciderError(mpath, f"model_file {name!r} must name a file inside {folder}")
    if not model_path.is_file():
        raise DeciderError(model_path, "model file missing")
    if _sha256(model_path) != manifest.get("model_sha256"):
        raise DeciderError(model_path, "SHA-256 does not match the manifest (file changed or damaged)")
    try:
        untrusted = sio.get_untrusted_types(file=model_path)
    except Exception as e:  # noqa: BLE001 (skops raises several kinds on a damaged file)
        raise DeciderError(model_path, f"unreadable model ({e})") from None
    foreign = [t for t in untrusted if not t.startswith(TRUSTED_PREFIXES)]
    if foreign:
        raise DeciderError(
            model_path, f"holds types outside scikit-learn/numpy/scipy ({', '.join(foreign[:5])}); refused"
        )
    model = sio.load(model_path, trusted=list(untrusted))
    if not (callable(getattr(model, "predict_proba", None)) and len(getattr(model, "classes_", ())) == 2):
        raise DeciderError(
            model_path,
            f"{type(model).__name__} is not a fitted two-class classifier "
            "(no predict_proba / classes_); retrain with `proagent train when`",
        )
    if getattr(model, "n_features_in_", manifest["n_features"]) != manifest["n_features"]:
        raise DeciderError(
            model_path,
            f"takes {model.n_features_in_} features, the manifest says "
            f"{manifest['n_features']}; retrain with `proagent train when`",
        )
    try:
        record = DeciderManifest.from_json(manifest)
    except (KeyError, TypeError, ValueError) as e:  # e.g. training_moments that are not objects
        raise DeciderError(mpath, f"incomplete manifest ({e})") from None
    return Decider(model, record, cache=cache, path=folder)
