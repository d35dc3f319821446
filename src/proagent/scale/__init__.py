"""Scale out on Ray: proagent's work cut into shards that run on a Ray cluster.

``--ray [ADDRESS]`` on ``proagent eval``, ``ablate``, ``curate`` and ``annotate``: moments of a
run, cells of a grid, events and screenshots are cut into shards; each shard runs on a Ray
worker through the code path of a single-machine run, writes its own log or output under the
shared output folder, and the driver merges them into the one ``results.json`` or processed
database a single-machine run writes. Workers are Ray actors (:mod:`._pool`), one per CPU,
reused across shards; a worker killed mid-shard has its shard retried and resumed. Ray is the
optional ``ray`` extra; without it ``--ray`` is one :class:`~proagent.errors.UsageError`.
"""

from ._cluster import LOCAL, connect, require_ray, worker_count
from ._pool import MAX_RETRIES, Job, run_jobs
from .ablate import cells_on_ray
from .endpoints import endpoint_pool
from .evaluate import (
    MERGED_LOG,
    PLAN,
    SHARDS,
    Shard,
    eval_on_ray,
    merge_logs,
    plan_shards,
    run_sharded_eval,
    run_task_shard,
)

__all__ = [
    "LOCAL",
    "MAX_RETRIES",
    "MERGED_LOG",
    "PLAN",
    "SHARDS",
    "Job",
    "Shard",
    "cells_on_ray",
    "connect",
    "endpoint_pool",
    "eval_on_ray",
    "merge_logs",
    "plan_shards",
    "require_ray",
    "run_jobs",
    "run_sharded_eval",
    "run_task_shard",
    "worker_count",
]
