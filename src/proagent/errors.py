"""The errors proagent raises on purpose: one family, each kind with its own fields.

- :class:`DataError`: an input file or folder is corrupt, foreign or incomplete (``path``, ``problem``).
- :class:`UsageError`: an option or argument has a value that cannot be used (``option``, ``problem``).
- :class:`RunError`: a run started and cannot continue (``problem``, and ``resume``: how to go on).

The ``proagent`` command prints each as one ``Error: ...`` line and exits with the code of its
kind (:mod:`proagent.cli`: 1 data, 2 usage, 3 run, 130 interrupted). Callers tell the kinds
apart by class and fields, never by message text.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

__all__ = ["DataError", "ProagentError", "Resume", "RunError", "UsageError"]


class ProagentError(Exception):
    """Base of every error proagent raises on purpose (bad data, bad option, a stopped run)."""


class DataError(ProagentError, ValueError):
    """An input file is corrupt, foreign or incomplete.

    The message names the file and what is wrong; nothing from the file is
    returned half-loaded.
    """

    def __init__(self, path: object, problem: str) -> None:
        self.path = str(path)
        """The file or folder at fault."""
        self.problem = problem
        """What is wrong with it (one clause, no file contents)."""
        super().__init__(f"{self.path}: {problem}")


class UsageError(ProagentError, ValueError):
    """An option (or a task argument) has a value that cannot be used.

    Raised where the rule lives (e.g. :func:`proagent.agent.calibration.check_threshold`),
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

    ``str(e)`` is the problem followed by the resume hint; a command that knows the
    option naming the folder renders it with :meth:`message` (``choose a new --log-dir``).
    """

    def __init__(self, problem: str, *, resume: Resume | None = None, folder: str | Path | None = None,
                 interrupted: bool = False) -> None:
        self.problem = problem
        """Why the run stopped (no resume hint in it)."""
        self.resume = resume
        """How to go on, or ``None`` when re-running the same command would fail the same way."""
        self.folder = str(folder) if folder is not None else None
        """The run's folder (inspect log folder, ablation --out), when there is one."""
        self.interrupted = interrupted
        """The run was stopped by Ctrl-C / SIGINT (commands exit with 130, as a shell does)."""
        super().__init__(self.message())

    def message(self, folder_option: str | None = None) -> str:
        """The problem and the resume hint; ``folder_option`` (e.g. ``--log-dir``) names the
        option that chooses another folder, else the hint says "another folder"."""
        if self.resume is Resume.SAME_COMMAND:
            where = f" from {self.folder}" if self.folder else ""
            return f"{self.problem}; re-run the same command to resume{where}"
        if self.resume is Resume.SAME_OPTIONS_OR_NEW_FOLDER:
            other = f"choose a new {folder_option}" if folder_option else "use another folder"
            return f"{self.problem}; re-run those exact options to resume it, or {other}"
        return self.problem
