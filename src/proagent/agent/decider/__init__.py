"""The learned When-to-Assist decider: features of a moment, and a fitted model that decides in milliseconds.

ProAgentBench's hierarchical pipeline (section 3) decides *When* first and asks
the LLM for *How* only at moments that need help. The decider is that first
stage: features from what is observable at t (:mod:`._features`), e5 embeddings
cached on disk by text hash (:class:`EmbeddingCache`), and a scikit-learn
classifier fitted on real labelled moments (``proagent train when``,
:mod:`proagent.train.when`).

Usage (the live agent and ``proagent eval --decider`` do this)::

    decider = load_decider("deciders/dev")      # once; refuses a mismatched folder
    d = decider.decide(sample)                    # Decision(p_yes, needs_help, threshold, latency_ms)
"""

from __future__ import annotations

from ._embedding import EMBEDDING_DIM, EMBEDDING_MODEL, EmbeddingCache, text_sha256
from ._features import (
    DEFAULT_GROUPS,
    FEATURE_GROUPS,
    FEATURE_VERSION,
    KEYWORDS,
    FeatureConfig,
    event_text,
    feature_names,
    moment_features,
    moment_texts,
    parse_feature_groups,
)
from ._gate import decider_gate
from ._manifest import DeciderManifest
from ._model import MANIFEST_FORMAT, MANIFEST_VERSION, Decider, DeciderError, Decision, load_decider, save_decider
from ._online import LEARNING_METHODS, LearnConfig, PersonalModel, cost_threshold, population_scaler

__all__ = [
    "DEFAULT_GROUPS",
    "EMBEDDING_DIM",
    "EMBEDDING_MODEL",
    "FEATURE_GROUPS",
    "FEATURE_VERSION",
    "KEYWORDS",
    "LearnConfig",
    "LEARNING_METHODS",
    "MANIFEST_FORMAT",
    "MANIFEST_VERSION",
    "Decider",
    "DeciderManifest",
    "DeciderError",
    "Decision",
    "EmbeddingCache",
    "FeatureConfig",
    "PersonalModel",
    "decider_gate",
    "event_text",
    "cost_threshold",
    "feature_names",
    "load_decider",
    "moment_features",
    "moment_texts",
    "parse_feature_groups",
    "population_scaler",
    "save_decider",
    "text_sha256",
]
