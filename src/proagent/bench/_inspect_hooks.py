"""The one place proagent reaches into inspect_ai's internals (written against inspect_ai 0.3.285).

inspect's public API lacks four hooks :func:`proagent.bench.running.run_task` needs; each
shim here names the hook it stands in for. ``tests/bench/test_inspect_hooks.py`` checks that every
internal used still has the shape this module expects, so an inspect upgrade that moves one
fails that test instead of a user's run. Nothing else in proagent imports ``inspect_ai._...``.

1. :func:`hook_folder_check`: ``eval_set`` checks that its log folder holds only logs of the
   tasks it runs (``inspect_ai._eval.evalset.validate_eval_set_prerequisites``) and raises
   ``PrerequisiteError``, which it also raises for other prerequisites, told apart only by
   message text; and it offers no callback once the check passed. Missing hooks: a typed
   error for "the folder holds logs of another task" and an "about to run" callback. The
   shim wraps the check: :class:`OtherRunInFolder` (a :class:`~proagent.errors.RunError`),
   then the callback given to :func:`after_folder_check`.
2. :func:`hook_folder_check` also makes no logs read as not done: ``all_evals_succeeded([])``
   is true, so after a Ctrl-C that left no log ``eval_set`` printed "Completed all tasks ...
   successfully". Missing hook: none; the predicate itself is wrong for an empty list.
3. :func:`prerequisite_error`: the class of inspect's prerequisite errors
   (``inspect_ai._util.error.PrerequisiteError``), not exported.
4. :func:`remove_sample_buffer`: the sample buffer of a superseded log
   (``inspect_ai.log._recorders.buffer.buffer.cleanup_sample_buffers_for_log``), not exported.
5. :func:`failure_types`: a failed run's exception survives only as text
   (``EvalError.message``, ``.traceback``): the exception class names are read from the
   traceback, so callers tell failures apart by class name, not by message wording.
6. :func:`hook_short_errors`: a failed task's panel shows the whole rich traceback
   (``inspect_ai._display.core.results.rich_traceback``, 160-400 lines for a wrong API key or
   an unreachable endpoint) above proagent's own one-line error. Missing hook: an option for
   the panel's body. The shim shows the exception's class and first line there; the whole
   traceback stays in the log (``inspect view``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import RunError

__all__ = ["OtherRunInFolder", "after_folder_check", "failure_types", "hook_folder_check", "hook_short_errors",
           "prerequisite_error", "remove_sample_buffer"]

INSPECT_VERSION = "0.3.285"
"""The inspect_ai release these shims were written against (``pyproject.toml`` pins it)."""


class OtherRunInFolder(RunError):
    """The log folder holds logs of a task other than the one being run (other options)."""

    def __init__(self) -> None:
        super().__init__("the log folder holds a run with other options")


_after_check: list[Callable[[], None]] = []
"""The pending callback of the run in progress (emptied once called; inspect may run its
folder check in another thread, so not a context variable)."""


@contextmanager
def after_folder_check(callback: Callable[[], None] | None) -> Iterator[None]:
    """Call ``callback`` once, when the folder check of the ``eval_set`` run inside this block
    passed (before any sample runs); with no hooked check (:func:`hook_folder_check` false),
    at once."""
    _after_check[:] = [callback] if callback is not None else []
    try:
        if not hook_folder_check():
            _folder_checked()
        yield
    finally:
        _after_check.clear()


def _folder_checked() -> None:
    while _after_check:
        _after_check.pop()()


def hook_folder_check() -> bool:
    """Install shims 1 and 2 (once per process). False when this inspect has no folder check
    to wrap (then no run is refused as another run's folder and no callback waits for it)."""
    from inspect_ai._eval import evalset

    check = getattr(evalset, "all_evals_succeeded", None)
    if check is not None and not getattr(check, "_proagent", False):
        def succeeded(logs: list) -> bool:
            return bool(logs) and check(logs)

        succeeded._proagent = True  # type: ignore[attr-defined]
        evalset.all_evals_succeeded = succeeded

    validate = getattr(evalset, "validate_eval_set_prerequisites", None)
    if validate is None:
        return False
    if getattr(validate, "_proagent", False):
        return True

    def validated(resolved_tasks: Any, all_logs: list, log_dir_allow_dirty: bool, eval_set_args: Any) -> list:
        ours = validate(resolved_tasks, all_logs, True, eval_set_args)  # the logs of these tasks
        if not log_dir_allow_dirty and len(ours) < len(all_logs):
            raise OtherRunInFolder
        _folder_checked()
        return ours

    validated._proagent = True  # type: ignore[attr-defined]
    evalset.validate_eval_set_prerequisites = validated
    return True


def hook_short_errors() -> bool:
    """Install shim 6 (once per process). False when this inspect renders no such panel."""
    from inspect_ai._display.core import results

    full = getattr(results, "rich_traceback", None)
    if full is None:
        return False
    if getattr(full, "_proagent", False):
        return True

    def short(exc_type: Any, exc_value: BaseException, exc_traceback: Any, *a: Any, **k: Any) -> Any:
        from rich.text import Text

        first = next((ln.strip() for ln in str(exc_value).splitlines() if ln.strip()), "")
        return Text(f"{getattr(exc_type, '__name__', exc_type)}: {first[:300]}\n(the whole traceback is in the log: "
                    "inspect view)")

    short._proagent = True  # type: ignore[attr-defined]
    results.rich_traceback = short
    return True


def prerequisite_error() -> type[Exception]:
    """inspect's ``PrerequisiteError`` (raised by ``eval_set`` before any sample runs)."""
    from inspect_ai._util.error import PrerequisiteError

    return PrerequisiteError


def remove_sample_buffer(log_location: str) -> None:
    """Remove the sample buffer inspect keeps for the log at ``log_location``."""
    from inspect_ai.log._recorders.buffer.buffer import cleanup_sample_buffers_for_log

    cleanup_sample_buffers_for_log(log_location)


_EXC_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?([A-Z]\w*(?:Error|Exception|Exceeded|Timeout|Retry\w*))\b", re.M)


def failure_types(error: Any) -> set[str]:
    """The exception class names (unqualified, e.g. ``APIConnectionError``,
    ``LocalModelError``) in a failed run's ``EvalError`` traceback: the raised one and those
    chained to it; empty for ``None``."""
    if error is None:
        return set()
    text = f"{getattr(error, 'traceback', '') or ''}\n{getattr(error, 'message', '') or ''}"
    return set(_EXC_LINE.findall(text))
