"""``proagent eval``'s workflow on parsed options (:class:`~proagent.bench.options.EvalOptions`):
build the task, choose the threshold on the train split first when asked (``--threshold auto``,
:mod:`proagent.bench.threshold`), run the evaluation; the command parses, checks and prints.

How a task is run (here, or as shards on a Ray cluster) is the caller's :data:`Runner`, so this
module needs neither click nor Ray.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .options import AssistOptions, EvalOptions
from .records import ThresholdCalibration

__all__ = ["EvalRun", "Runner", "eval_header", "eval_task", "run_eval"]

Runner = Callable[[Any, AssistOptions, Path, "Callable[[], None] | None"], Any]
"""``runner(task, options, folder, on_start) -> EvalLog``: run (or resume) ``task``, built from
``options`` (a Ray worker builds it again from them), in the log folder ``folder``; ``on_start``
(may be ``None``) once the folder is accepted."""


@dataclass(frozen=True)
class EvalRun:
    """A finished ``proagent eval`` run."""

    log: Any
    """The run's inspect ``EvalLog`` (samples read back)."""
    calibration: ThresholdCalibration | None = None
    """The threshold chosen on the train split (``--threshold auto``), else ``None``."""


def eval_task(task: AssistOptions, limit: int | None = None) -> Any:
    """The ``assist`` task of ``task`` (:func:`~proagent.bench.tasks.build_assist`), with the
    reference queries of only the first ``limit`` samples embedded (those a run scores).

    Raises:
        proagent.errors.DataError: as :func:`~proagent.bench.tasks.build_assist`.
    """
    from .tasks import build_assist, embed_task_references, references_embedded_later

    with references_embedded_later():
        built = build_assist(task)
    embed_task_references(built, limit)
    return built


def eval_header(opts: EvalOptions, task: Any, done: int = 0) -> str:
    """The line a run starts with: samples, method, memory, model, log folder, and how many of
    the samples an earlier run of the folder finished (``done``: reused, not run again)."""
    n_run = min(len(task.dataset), opts.limit or len(task.dataset))
    done = min(done, n_run)
    reused = f" ({done} of {n_run} finished earlier, reused; {n_run - done} to run)" if done else ""
    mem = f", memory {opts.task.memory}" if opts.task.memory != "none" else ""
    return (
        f"proagent eval: {n_run} samples{reused}, method {opts.task.method}{mem}, model {opts.model}, "
        f"log dir {opts.log_dir}"
    )


def run_eval(opts: EvalOptions, task: Any, runner: Runner, *, echo: Callable[[str], None] = lambda _m: None) -> EvalRun:
    """Run ``task`` (:func:`eval_task` of ``opts.task``) with ``runner`` in ``opts.log_dir``; with
    ``opts.calibrate``, first choose the threshold on the train split
    (:func:`~proagent.bench.threshold.calibrate_threshold`) and evaluate with it instead.
    ``echo`` gets the progress lines: the calibration's, then :func:`eval_header` once the folder is accepted.

    Raises:
        proagent.errors.DataError: as :func:`eval_task` and :func:`~proagent.bench.threshold.calibrate_threshold`.
        proagent.errors.RunError: as ``runner``.
    """
    from .running import finished_samples
    from .threshold import calibrate_threshold

    calibration = None
    if opts.calibrate:
        train = opts.train_task()
        calibration = calibrate_threshold(
            eval_task(train, opts.limit),
            lambda t, folder: runner(t, train, folder, None),
            opts.log_dir,
            limit=opts.limit,
            echo=echo,
        )
        opts = opts.with_threshold(calibration.threshold)
        task = eval_task(opts.task, opts.limit)

    def start() -> None:  # once the folder is accepted: say what a resumed run reuses (issue 36)
        echo(eval_header(opts, task, finished_samples(opts.log_dir)))

    return EvalRun(log=runner(task, opts.task, opts.log_dir, start), calibration=calibration)
