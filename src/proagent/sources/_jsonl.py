"""JSON Lines input: one JSON value per non-blank line, read by the annotation and
reward-trace readers of :mod:`proagent.sources`."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..errors import DataError

__all__ = ["jsonl_values"]


def jsonl_values(path: Path, lines: Iterable[str]) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line of ``lines`` (1-based numbers).

    Raises:
        DataError: a line is not JSON (names ``path``, the line and the column).
    """
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as e:
            raise DataError(path, f"line {n}: not JSON ({e.msg.removesuffix(' at')} at column {e.colno})") from None
