"""The one mapping from proagent's errors (:mod:`proagent.errors`) to a command's message and exit code.

=====  ==========================================================================================
code   meaning
=====  ==========================================================================================
0      done
1      refused input: a file or folder that cannot be used (:class:`~proagent.errors.DataError`),
       a model that cannot be created, a folder in use by another run; nothing was changed
2      usage: an option or argument with a value that cannot be used
       (:class:`~proagent.errors.UsageError`, and click's own usage errors)
3      a run that started did not finish (:class:`~proagent.errors.RunError`); the message says
       how to resume (re-running the same command keeps every finished sample)
130    interrupted (Ctrl-C), as a shell reports it; re-running the same command resumes
=====  ==========================================================================================
"""

from __future__ import annotations

import errno
import functools
import sqlite3
from collections.abc import Callable
from typing import Any

import click

from ..errors import ProagentError, Resume, RunError, UsageError

__all__ = [
    "EXIT_DATA",
    "EXIT_INTERRUPTED",
    "EXIT_RUN",
    "EXIT_USAGE",
    "NO_SPACE",
    "click_error",
    "map_errors",
    "stopped_by_ctrl_c",
    "was_stopped_by_ctrl_c",
]

EXIT_DATA = 1
"""Refused input (:class:`~proagent.errors.DataError` and every other refusal before work starts)."""
EXIT_USAGE = 2
"""A bad option value (:class:`~proagent.errors.UsageError`); click uses 2 for its usage errors."""
EXIT_RUN = 3
"""A run that did not finish (:class:`~proagent.errors.RunError`)."""
EXIT_INTERRUPTED = 130
"""Ctrl-C / SIGINT (128 + 2)."""
NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
"""``OSError`` numbers that mean the disk (or the quota, or the file-size limit) is full: any
command's write that fails so, its own or a library's (inspect's log), is one line, exit 3."""


_STOPPED: list[bool] = []
"""Set by :func:`stopped_by_ctrl_c`: the command's normal end was Ctrl-C."""


def stopped_by_ctrl_c() -> None:
    """A server command (``review``, ``mcp --http``) ended by Ctrl-C, its normal end (exit 0):
    :func:`proagent.cli.main` then exits at once, after the ``atexit`` handlers, without the
    interpreter's teardown of every imported module (0.9-1.6 s after ``mcp --http`` had imported
    uvicorn and the MCP SDK), so Ctrl-C stops every server within a second."""
    _STOPPED[:] = [True]


def was_stopped_by_ctrl_c() -> bool:
    """Whether :func:`stopped_by_ctrl_c` was called in this process."""
    return bool(_STOPPED)


def click_error(e: ProagentError, *, folder_option: str | None = None) -> click.ClickException:
    """The click exception that prints ``e`` as one ``Error: ...`` line with its exit code.

    ``folder_option`` names the option that chooses the run's folder (``--log-dir``), for
    a :class:`~proagent.errors.RunError` whose resume hint is "or choose a new folder".
    """
    if isinstance(e, UsageError):
        return click.BadParameter(e.problem, param_hint=e.option)  # exit 2, click's wording
    if isinstance(e, RunError):
        err = click.ClickException(e.describe(folder_option))
        err.exit_code = EXIT_INTERRUPTED if e.interrupted else EXIT_RUN
        return err
    err = click.ClickException(str(e))
    err.exit_code = EXIT_DATA
    return err


def _no_space(e: BaseException) -> str | None:
    """What a failed write says when the disk is full (an ``OSError`` of :data:`NO_SPACE`, SQLite's
    ``SQLITE_FULL``, or its ``SQLITE_IOERR`` on a write past the file-size limit), else ``None``."""
    if isinstance(e, OSError) and e.errno in NO_SPACE:
        where = f" {e.filename}" if e.filename else ""  # proagent's writers keep the last good file
        return f"no space left to write{where} ({e.strerror or errno.errorcode[e.errno]})"
    code = getattr(e, "sqlite_errorcode", None)
    if isinstance(e, sqlite3.Error) and code is not None and code & 0xFF in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR):
        return f"a database could not be written ({getattr(e, 'sqlite_errorname', e)}: the disk is full or failing)"
    return None


def map_errors(command: click.Command) -> None:
    """Make ``command`` and every subcommand raise :func:`click_error` for a proagent error.

    The callback is wrapped (inside click's context, so a usage error shows the command's
    usage line); commands keep catching only what they can explain better themselves.
    """
    if command.callback is not None and not getattr(command.callback, "_proagent_errors", False):
        command.callback = _mapped(command.callback)
    for sub in getattr(command, "commands", {}).values():
        map_errors(sub)


def _mapped(callback: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(callback)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return callback(*args, **kwargs)
        except ProagentError as e:
            raise click_error(e) from None
        except (OSError, sqlite3.Error) as e:
            why = _no_space(e)
            if why is None:
                raise
            raise click_error(RunError(f"{why}; free some space", resume=Resume.SAME_COMMAND)) from None

    run._proagent_errors = True  # type: ignore[attr-defined]
    return run
