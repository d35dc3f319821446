"""The errors proagent raises on purpose: one family, each kind with its own fields.

- :class:`DataError`: an input file or folder is corrupt, foreign or incomplete, or what a
  command needs before it starts is missing (``path``, ``problem``).
- :class:`UsageError`: an option or argument has a value that cannot be used (``option``, ``problem``).
- :class:`RunError`: a run started and cannot continue (``problem``, and ``resume``: how to go on).

Every exception proagent raises on purpose is one of these (a stage's own kind subclasses
one: ``CaptureError`` and ``FolderBusy`` are data errors, ``ScreenerError`` a run error, ...);
``tests/test_error_family.py`` enumerates them.

The ``proagent`` command prints each as one ``Error: ...`` line and exits with the code of its
kind (:mod:`proagent.cli`: 1 data, 2 usage, 3 run, 130 interrupted). Callers tell the kinds
apart by class and fields, never by message text.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

__all__ = ["DataError", "ProagentError", "Resume", "RunError", "UsageError"]


class ProagentError(Exception):
    """Base of every error proagent raises on purpose (bad data, bad option, a stopped run).

    Every kind pickles with its fields (a shard's error crosses processes under ``--ray``),
    whatever its constructor takes.
    """

    def __reduce__(self) -> tuple:
        return _rebuild, (type(self), self.args, dict(self.__dict__))


def _rebuild(cls: type[ProagentError], args: tuple, state: dict) -> ProagentError:
    """An unpickled error: its class, ``args`` and fields, without calling its constructor."""
    e = cls.__new__(cls)
    Exception.__init__(e, *args)
    e.__dict__.update(state)
    return e


class DataError(ProagentError, ValueError):
    """An input file is corrupt, foreign or incomplete, or what the command needs before it
    starts is not there (a session to capture, an optional extra, a free folder).

    The message names the file and what is wrong; nothing from the file is
    returned half-loaded. ``path`` is ``None`` when no file is at fault (the message is
    the problem alone).
    """

    def __init__(self, path: object, problem: str, *, option: str | None = None) -> None:
        self.path = None if path is None else str(path)
        """The file or folder at fault (``None``: not a file, e.g. the display session)."""
        self.problem = problem
        """What is wrong with it (one clause, no file contents)."""
        self.option = option
        """The command-line option that named the file or asked for the thing at fault (e.g.
        ``--out``, live's ``--capture``), when the caller passed it on; the message starts with it."""
        where = self.path if option is None else (option if self.path is None else f"{option} {self.path}")
        super().__init__(problem if where is None else f"{where}: {problem}")


class UsageError(ProagentError, ValueError):
    """An option (or a task argument) has a value that cannot be used.

    Raised where the rule lives (e.g. :func:`proagent.agent.solvers.check_threshold`),
    so the command line and ``inspect eval -T`` refuse the same values the same way.
    """

    def __init__(self, option: str, problem: str) -> None:
        self.option = option
        """The option as the user writes it, e.g. ``--threshold``."""
        self.problem = problem
        """What is wrong with its value."""
        super().__init__(f"{option}: {problem}")


class Resume(Enum):
    """How a stopped run goes on (:attr:`RunError.resume`)."""

    SAME_COMMAND = "same-command"
    """Re-running the same command resumes from the run's folder (finished samples are kept)."""
    SAME_OPTIONS_OR_NEW_FOLDER = "same-options-or-new-folder"
    """The folder holds a run of other options: re-run those options there, or use another folder."""


class RunError(ProagentError, RuntimeError):
    """A run did not finish, or cannot start in its folder.

    ``str(e)`` and :attr:`message` are the problem followed by the resume hint; a command that
    knows the option naming the folder renders it with :meth:`describe` (``choose a new
    --log-dir``). ``message`` is a string because inspect reads an exception's ``message``
    attribute into its log (``inspect_ai._util.error.exception_message``).
    """

    def __init__(
        self, problem: str, *, resume: Resume | None = None, folder: str | Path | None = None, interrupted: bool = False
    ) -> None:
        self.problem = problem
        """Why the run stopped (no resume hint in it)."""
        self.resume = resume
        """How to go on, or ``None`` when re-running the same command would fail the same way."""
        self.folder = str(folder) if folder is not None else None
        """The run's folder (inspect log folder, ablation --out), when there is one."""
        self.interrupted = interrupted
        """The run was stopped by Ctrl-C / SIGINT (commands exit with 130, as a shell does)."""
        self.message = self.describe()
        """The problem and the resume hint, as ``str(e)``."""
        super().__init__(self.message)

    def describe(self, folder_option: str | None = None) -> str:
        """The problem and the resume hint; ``folder_option`` (e.g. ``--log-dir``) names the
        option that chooses another folder, else the hint says "another folder"."""
        if self.resume is Resume.SAME_COMMAND:
            where = f" from {self.folder}" if self.folder else ""
            return f"{self.problem}; re-run the same command to resume{where}"
        if self.resume is Resume.SAME_OPTIONS_OR_NEW_FOLDER:
            other = f"choose a new {folder_option}" if folder_option else "use another folder"
            return f"{self.problem}; re-run those exact options to resume it, or {other}"
        return self.problem
