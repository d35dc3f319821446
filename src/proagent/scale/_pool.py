"""A pool of Ray actors that run proagent's jobs, one at a time each, with retries.

Every job is a plain function of this package run inside a :class:`ShardRunner`
actor: one long-lived Python process per CPU of the cluster, reused for every job
it is given, so a model loaded in process (``local/...``: inspect caches the
loaded model) is loaded once per worker, not once per shard.

A worker process that dies (SIGKILL, out of memory, its node removed) is
restarted by Ray and the job it was running is run again (Ray's actor
``max_restarts`` / ``max_task_retries``); jobs resume from what they wrote, so
nothing is done twice. An error that is the input's fault (any
:class:`~proagent.errors.ProagentError`) is not retried: it is sent back as it was
raised and re-raised in the driver.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ProagentError, Resume, RunError

__all__ = ["MAX_RETRIES", "Job", "run_jobs"]

MAX_RETRIES = 3
"""Times a job whose worker died is run again (and times that worker is restarted) before the
run stops (Ray's ``max_task_retries`` and ``max_restarts``)."""


@dataclass(frozen=True)
class Job:
    """One unit of work: ``fn(*args, **kwargs)`` on a worker (``fn`` importable there)."""

    name: str
    """Shown in messages (``shard-003``, a cell's slug)."""
    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] | None = None


class ShardRunner:
    """The actor body: runs one job at a time in a long-lived worker process."""

    def run(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        try:
            return fn(*args, **kwargs)
        except ProagentError as e:
            # returned, not raised, so Ray does not wrap it; it pickles with its fields
            # (ProagentError.__reduce__), so the driver gets the same class and fields back
            return e

    def pid(self) -> int:
        import os

        return os.getpid()


def run_jobs(jobs: Sequence[Job], workers: int, *, keep_going: bool = False) -> Iterator[tuple[int, Any]]:
    """Run ``jobs`` on up to ``workers`` actors of the connected cluster (one CPU each) and yield
    ``(index, result)`` as each finishes, the next job starting on the freed worker.

    With ``keep_going`` a job's :class:`ProagentError` is yielded as its result (the other jobs
    go on, as the cells of a grid do on one machine); without it, it is raised.

    Raises:
        ProagentError: the first job that raised one (its own class and fields); the other
            jobs are cancelled, and what they finished is kept on disk by the job itself.
        RunError: a job failed in another way, or its worker died more than
            :data:`MAX_RETRIES` times.
    """
    import ray
    from ray.exceptions import RayActorError, RayTaskError, WorkerCrashedError

    if not jobs:
        return
    actor = ray.remote(num_cpus=1, max_restarts=MAX_RETRIES, max_task_retries=MAX_RETRIES)(ShardRunner)
    pool = [actor.remote() for _ in range(max(1, min(workers, len(jobs))))]
    pending: dict[Any, tuple[int, Any]] = {}
    todo = list(enumerate(jobs))
    free = list(pool)
    try:
        while todo or pending:
            while todo and free:
                i, job = todo.pop(0)
                a = free.pop()
                pending[a.run.remote(job.fn, job.args, job.kwargs or {})] = (i, a)
            done, _ = ray.wait(list(pending), num_returns=1)
            i, a = pending.pop(done[0])
            free.append(a)
            try:
                result = ray.get(done[0])
            except (RayActorError, WorkerCrashedError) as e:
                raise RunError(
                    f"{jobs[i].name}: its worker died {MAX_RETRIES + 1} times ({type(e).__name__})",
                    resume=Resume.SAME_COMMAND,
                ) from None
            except RayTaskError as e:
                cause = e.cause if isinstance(getattr(e, "cause", None), BaseException) else e
                if isinstance(cause, ProagentError):
                    raise cause from None
                raise RunError(f"{jobs[i].name} failed: {type(cause).__name__}: {cause}") from None
            if isinstance(result, ProagentError) and not keep_going:
                raise result
            yield i, result
    finally:
        for ref in pending:
            ray.cancel(ref, force=False)
        for a in pool:
            ray.kill(a)
