"""Errors raised on bad input."""

from __future__ import annotations

__all__ = ["DataError"]


class DataError(ValueError):
    """An input file is corrupt, foreign or incomplete.

    The message names the file and what is wrong; nothing from the file is
    returned half-loaded.
    """

    def __init__(self, path: object, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")
