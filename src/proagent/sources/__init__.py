"""Read and write external formats into proagent's records: LifeTrace databases of every
schema variant (:mod:`.lifetrace`; table definitions for writers in :mod:`.lifetrace_write`,
variant detection in :mod:`.lifetrace_schema`), ProactiveBench sessions
(:mod:`.proactivebench`) and synthetic reward traces (:mod:`.proactivebench_synthetic`),
external annotations (:mod:`.annotations`), ActivityWatch databases and exports
(:mod:`.activitywatch`) and screenpipe databases (:mod:`.screenpipe`), written as LifeTrace by
:mod:`.lifetrace_convert`, and the one entry point for any ``--data`` (:func:`load_events`). :mod:`.fetch` is the only network code of proagent (not imported here).
"""

from ._foreign import ActivityLog
from .activitywatch import load_activitywatch
from .annotations import Annotation, Annotations, load_annotations
from .lifetrace import LifeTraceLog, load_lifetrace, read_lifetrace
from .lifetrace_convert import write_lifetrace_copy
from .lifetrace_schema import SchemaInfo, detect_schema, find_lifetrace_db
from .load import load_activity_log, load_events
from .proactivebench import read_proactivebench
from .proactivebench_synthetic import RewardTrace, read_reward_traces, trace_samples
from .screenpipe import ScreenpipeLog, load_screenpipe

__all__ = [
    "ActivityLog",
    "Annotation",
    "Annotations",
    "LifeTraceLog",
    "RewardTrace",
    "SchemaInfo",
    "ScreenpipeLog",
    "detect_schema",
    "find_lifetrace_db",
    "load_activity_log",
    "load_activitywatch",
    "load_annotations",
    "load_events",
    "load_lifetrace",
    "load_screenpipe",
    "read_lifetrace",
    "read_proactivebench",
    "read_reward_traces",
    "trace_samples",
    "write_lifetrace_copy",
]
