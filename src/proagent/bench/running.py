"""Run one inspect task to completion in its own log folder, resumably.

Every proagent command that runs a task (``eval``, ``simulate``, ``ablate``
cells) goes through :func:`run_task`, so resuming, refusing a folder of another
run and the messages of a stopped run are the same everywhere.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["RunError", "run_task"]


class RunError(RuntimeError):
    """A run did not finish; the message says why and whether re-running resumes."""


def run_task(task: Any, log_dir: str | Path, model: str, *, model_base_url: str | None = None,
             model_args: dict[str, Any] | None = None, limit: int | None = None,
             display: str | None = None, model_roles: dict[str, Any] | None = None) -> Any:
    """Run ``task`` through inspect's ``eval_set`` (finished samples in ``log_dir``
    are reused) and return the complete :class:`~inspect_ai.log.EvalLog`.

    A local model runs one sample at a time, so per-sample seconds are true
    latencies rather than queue time. ``model_roles`` names the other roles'
    models (``judge``, ``user``, ...), as inspect's ``eval_set`` takes them.

    The run holds the run lock on ``log_dir`` (:func:`proagent.io.folder_lock`):
    a folder in use by another process is refused at once.

    Raises:
        RunError: ``log_dir`` is in use by another process, holds a run of other
            options, the run was interrupted, or it failed (e.g. a prompt over
            the model's context).
    """
    from ..io import FolderBusy, folder_lock

    try:
        with folder_lock(log_dir):
            return _run(task, log_dir, model, model_base_url=model_base_url, model_args=model_args, limit=limit,
                        display=display, model_roles=model_roles)
    except FolderBusy as e:
        raise RunError(str(e)) from None


def _run(task: Any, log_dir: str | Path, model: str, *, model_base_url: str | None, model_args: dict[str, Any] | None,
         limit: int | None, display: str | None, model_roles: dict[str, Any] | None) -> Any:
    from inspect_ai import eval_set
    from inspect_ai._util.error import PrerequisiteError
    from inspect_ai.log import read_eval_log

    try:
        _, logs = eval_set(
            [task], log_dir=str(log_dir), model=model, model_base_url=model_base_url,
            model_args=model_args or {}, model_roles=model_roles or None, limit=limit, display=display,
            retry_attempts=0, retry_immediate=False,
            log_model_api=False, max_samples=1 if model.startswith("local/") else None,
        )
    except PrerequisiteError as e:
        msg = re.sub(r"\[/?[a-z ]+\]", "", str(e)).strip()
        if "not associated with a task" in msg:
            msg = f"{log_dir} holds a run with other options; re-run those exact options to resume it, or use another folder"
        raise RunError(msg) from None
    if not logs:  # interrupted (Ctrl-C) before inspect wrote a final log
        raise RunError(f"run interrupted; re-run the same command to resume from {log_dir}")
    log = logs[0]
    if log.status != "success":
        msg = log.error.message if log.error else log.status
        if "n_ctx=" in msg:  # the same command would fail the same way
            raise RunError(f"run did not finish: {msg}")
        raise RunError(f"run did not finish ({msg}); re-run the same command to resume from {log_dir}")
    return read_eval_log(log.location)
