"""``proagent eval --ray`` (and ``annotate --ray``): one inspect run cut into shards of sample ids.

Each shard is the single-machine run (:func:`proagent.bench.running.run_task`) of the
same task (same prompts, seeds, scorers) restricted to its sample ids, in its own log
folder; the driver merges the shards' logs into one log and the one ``results.json``
that a single-machine run writes. Layout of the log folder::

    LOG_DIR/shards.json             the shard plan (sample ids of each shard), written first
    LOG_DIR/shards/shard-000/       one inspect log folder per shard (resumes as run_task does)
    LOG_DIR/merged.eval             every sample of the run, each id once (for inspect view)
    LOG_DIR/results.json            written by the command, from the merged log

Re-running the same command reuses the plan: finished shards are read back, unfinished
ones resume from their finished samples. The log folder must be on a file system every
node sees at the same path (NFS, a cluster's shared disk); on one machine it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import Resume, RunError, UsageError
from ..io import built_aside, write_json_atomic

__all__ = [
    "MERGED_LOG",
    "PLAN",
    "SHARDS",
    "Shard",
    "eval_on_ray",
    "merge_logs",
    "plan_shards",
    "run_sharded_eval",
    "run_task_shard",
]

PLAN = "shards.json"
"""The shard plan inside a log folder."""
SHARDS = "shards"
"""The folder of the shards' log folders."""
MERGED_LOG = "merged.eval"
"""The merged inspect log of a sharded run."""


@dataclass(frozen=True)
class Shard:
    """A contiguous run of sample ids (consecutive moments of a session share a prompt prefix,
    which a local model's KV cache reuses; contiguous shards keep that)."""

    index: int
    ids: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"shard-{self.index:03d}"


def plan_shards(ids: Sequence[str], n: int) -> list[Shard]:
    """``ids`` cut into ``min(n, len(ids))`` contiguous shards whose sizes differ by at most one.

    Raises:
        ValueError: ``n < 1``.
    """
    if n < 1:
        raise ValueError(f"shards: {n} (expected >= 1)")
    n = min(n, len(ids))
    size, extra = divmod(len(ids), n) if n else (0, 0)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(Shard(i, tuple(ids[start:end])))
        start = end
    return out


def _shards(log_dir: Path, ids: list[str], n: int) -> list[Shard]:
    """The plan of ``log_dir`` (written by an earlier run of these options), else a new one, written."""
    import json

    path = log_dir / PLAN
    if path.exists():
        try:
            data = json.loads(path.read_text("utf-8"))
            shards = [Shard(int(s["index"]), tuple(s["ids"])) for s in data["shards"]]
        except (ValueError, KeyError, TypeError) as e:
            raise RunError(f"{path}: not a shard plan ({e})", resume=Resume.SAME_OPTIONS_OR_NEW_FOLDER) from None
        if [i for s in shards for i in s.ids] != ids:
            raise RunError(
                f"{log_dir} holds shards of a run with other samples", resume=Resume.SAME_OPTIONS_OR_NEW_FOLDER
            )
        return shards
    shards = plan_shards(ids, n)
    write_json_atomic(
        path,
        {
            "format": "proagent-shards",
            "n_samples": len(ids),
            "shards": [{"index": s.index, "ids": list(s.ids)} for s in shards],
        },
    )
    return shards


def run_task_shard(
    build: Callable[[], Any],
    ids: Sequence[str],
    shard_dir: str,
    model: str,
    *,
    model_base_url: str | None,
    model_args: dict[str, Any] | None,
    display: str | None,
) -> str:
    """On a worker: the task ``build()`` makes (a picklable callable over parsed values, e.g.
    ``functools.partial(build_assist, options)``: nothing is parsed again here) on the samples
    ``ids`` only, run (or resumed) by :func:`~proagent.bench.running.run_task` in ``shard_dir``;
    returns its log file.

    Raises:
        RunError: as :func:`~proagent.bench.running.run_task`.
        DataError: the task cannot be built (its data cannot be read on this worker).
    """
    from ..bench.running import run_task

    task = build()
    wanted = set(ids)
    task.dataset = task.dataset.filter(lambda s: str(s.id) in wanted)
    log = run_task(
        task, shard_dir, model, model_base_url=model_base_url, model_args=model_args, display=display or "none"
    )
    return str(log.location)


def merge_logs(logs: Sequence[Any], ids: Sequence[str]) -> Any:
    """One :class:`~inspect_ai.log.EvalLog` holding the samples of the shard ``logs`` in the order
    of ``ids`` (a single-machine run's dataset order), so results computed from it, bootstrap
    intervals included, are those of a single-machine run. Header from the first shard, sample
    counts and token usage over all.

    Raises:
        RunError: a sample id is in two shards, or in none (a shard log is incomplete).
    """
    by_id: dict[str, Any] = {}
    for log in logs:
        for s in log.samples or []:
            key = str(s.id)
            if key in by_id:
                raise RunError(f"sample {key} is in two shard logs")
            by_id[key] = s
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise RunError(f"{len(missing)} sample(s) are in no shard log (e.g. {missing[0]})", resume=Resume.SAME_COMMAND)
    first = logs[0]
    merged = first.model_copy()
    merged.samples = [by_id[i] for i in ids]
    ds = first.eval.dataset.model_copy(update={"samples": len(ids), "sample_ids": list(ids)})
    merged.eval = first.eval.model_copy(update={"dataset": ds})
    if first.results is not None:  # inspect's own metrics were per shard: keep the counts only
        merged.results = first.results.model_copy(
            update={"total_samples": len(ids), "completed_samples": len(ids), "scores": []}
        )
    usage: dict[str, Any] = {}
    for log in logs:
        for name, u in (log.stats.model_usage or {}).items():
            usage[name] = usage[name] + u if name in usage else u
    merged.stats = first.stats.model_copy(
        update={
            "started_at": min(log.stats.started_at for log in logs),
            "completed_at": max(log.stats.completed_at for log in logs),
            "model_usage": usage,
        }
    )
    return merged


def run_sharded_eval(
    build: Callable[[], Any],
    ids: Sequence[str],
    log_dir: Path,
    model: str,
    *,
    model_base_urls: Sequence[str] = (),
    model_args: dict[str, Any] | None = None,
    display: str | None = None,
    workers: int,
    echo: Callable[[str], None] = print,
) -> Any:
    """Run the task ``build()`` makes (:func:`run_task_shard`) on the samples ``ids`` as shards on the connected Ray
    cluster (:func:`proagent.scale.connect`), ``workers`` at a time, and return the merged log,
    written to ``log_dir/merged.eval``.

    Shard ``i`` talks to ``model_base_urls[i % len(model_base_urls)]`` (a pool of endpoints), or to
    the model's own address when none is given. A new plan has ``workers`` shards; an earlier plan
    in ``log_dir`` is reused as it is (so a resumed run redoes nothing whatever the cluster's size).

    Raises:
        RunError: a shard did not finish (finished shards and samples are kept), or ``log_dir``
            holds the shards of other samples.
        DataError: the task cannot be built on a worker.
    """
    from inspect_ai.log import read_eval_log, write_eval_log

    from . import _pool

    ids = [str(i) for i in ids]
    if not ids:
        raise UsageError("--limit", "no samples to run")
    shards = _shards(log_dir, ids, workers)
    urls = list(model_base_urls) or [None]
    jobs = [
        _pool.Job(
            s.name,
            run_task_shard,
            (build, s.ids, str(log_dir / SHARDS / s.name), model),
            {"model_base_url": urls[s.index % len(urls)], "model_args": model_args, "display": display},
        )
        for s in shards
    ]
    echo(
        f"ray: {len(shards)} shard(s) of {len(ids)} samples on {min(workers, len(shards))} worker(s), logs under "
        f"{log_dir / SHARDS}"
    )
    locations: dict[int, str] = {}
    for i, location in _pool.run_jobs(jobs, workers):
        locations[i] = location
        echo(f"  {shards[i].name}: {len(shards[i].ids)} samples done ({len(locations)}/{len(shards)})")
    logs = [read_eval_log(locations[s.index]) for s in shards]
    merged = merge_logs(logs, ids)
    path = log_dir / MERGED_LOG
    with built_aside(path, suffix=".eval") as tmp:  # written whole, then renamed over an older one
        write_eval_log(merged, str(tmp))
    full = read_eval_log(str(path))  # read back as run_task reads a single-machine log (inspect's sample order)
    full.location = str(path)
    return full


def eval_on_ray(
    task: Any,
    build: Callable[[], Any],
    log_dir: Path,
    model: str,
    *,
    address: str,
    model_base_urls: Sequence[str] = (),
    model_args: dict[str, Any] | None = None,
    limit: int | None = None,
    display: str | None = None,
    on_start: Callable[[], None] | None = None,
    echo: Callable[[str], None] = print,
) -> Any:
    """``eval --ray ADDRESS`` (and ``annotate --ray``): connect (:func:`proagent.scale.connect`), then
    :func:`run_sharded_eval` on the first ``limit`` samples of ``task`` (built in the driver
    by ``build()``, as each worker builds it) with one worker per cluster CPU.

    Raises:
        UsageError: Ray is missing or no cluster answers at ``address``.
        RunError, DataError: as :func:`run_sharded_eval`; Ctrl-C is a ``RunError`` with ``interrupted``.
    """
    from ..io import folder_lock
    from ._cluster import connect, worker_count

    ids = [str(s.id) for s in task.dataset][: limit or None]
    with folder_lock(log_dir), connect(address):
        if on_start is not None:
            on_start()
        try:
            return run_sharded_eval(
                build,
                ids,
                Path(log_dir),
                model,
                model_base_urls=model_base_urls,
                model_args=model_args,
                display=display,
                workers=worker_count(),
                echo=echo,
            )
        except KeyboardInterrupt:  # Ctrl-C: the shards' finished samples are kept, as on one machine
            raise RunError("run interrupted", resume=Resume.SAME_COMMAND, folder=log_dir, interrupted=True) from None
