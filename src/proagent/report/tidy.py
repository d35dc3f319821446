"""The ablation's files: tidy rows (``results.csv``, ``results.parquet``), memory effects
(``effects.csv``) and each cell's per-sample scores (``scores.csv``)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Any

from ..io import write_atomic
from ..records import Score
from .grid import Cell
from .results import AssistResults

__all__ = [
    "METRICS",
    "SCORE_COLUMNS",
    "TIDY_COLUMNS",
    "TidyRow",
    "read_scores",
    "tidy_rows",
    "write_csv",
    "write_parquet",
    "write_scores",
]

METRICS = (
    "accuracy",
    "precision",
    "recall",
    "f1",
    "intention_accuracy",
    "semantic_similarity",
    "unparsed_rate",
    "seconds_p50",
    "seconds_p95",
    "tokens_per_sample",
)
"""Metrics written to the tidy table."""


@dataclass(frozen=True)
class TidyRow:
    """One row of ``results.csv``: one metric of one cell's run or of a baseline."""

    data: str
    """The data given to ``ablate``."""
    model: str
    method: str
    memory: str
    decider: str
    window: str
    """The window as given (``5m``)."""
    window_seconds: float
    system: str
    """``model`` (the run), ``always-yes`` or ``always-no``."""
    metric: str
    """One of :data:`METRICS` (baselines: accuracy, precision, recall, f1)."""
    value: float | None
    ci_low: float | None
    """95% bootstrap interval (runs only; ``None`` where undefined)."""
    ci_high: float | None
    n: int
    """Samples of the cell."""
    cell: str
    """The cell's folder name (:attr:`Cell.slug`)."""


TIDY_COLUMNS = tuple(f.name for f in fields(TidyRow))
"""Columns of ``results.csv`` (one row per cell or baseline and metric)."""

SCORE_COLUMNS = ("sample_id", "label", "predicted", "intention_correct", "semantic_similarity", "seconds", "tokens")
"""Columns of a cell's ``scores.csv`` (empty cell: no value)."""


def tidy_rows(data: str, cell: Cell, res: AssistResults) -> list[TidyRow]:
    """Tidy rows of one cell: each metric of the run, and the baselines' When metrics."""
    from ..bench.samples import parse_window

    base = {
        "data": data,
        "model": cell.model,
        "method": cell.method,
        "memory": cell.memory,
        "decider": cell.decider,
        "window": cell.window,
        "window_seconds": parse_window(cell.window),
    }
    rows = []
    for m in METRICS:
        lo, hi = res.ci95.get(m) or (None, None)
        rows.append(
            TidyRow(
                **base, system="model", metric=m, value=getattr(res, m), ci_low=lo, ci_high=hi, n=res.n, cell=cell.slug
            )
        )
    for name, b in res.baselines.items():
        for m, v in b.items():
            rows.append(
                TidyRow(
                    **base,
                    system=name.replace("_", "-"),
                    metric=m,
                    value=v,
                    ci_low=None,
                    ci_high=None,
                    n=res.n,
                    cell=cell.slug,
                )
            )
    return rows


def _csv_text(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    import io

    buf = io.StringIO(newline="")
    w = csv.writer(buf)
    w.writerow(columns)
    for r in rows:
        w.writerow(["" if v is None else v for v in r])
    return buf.getvalue()


def write_csv(path: str | Path, rows: Sequence[Any], columns: Sequence[str]) -> Path:
    """Write dataclass rows whose fields are ``columns`` as CSV (``None`` as an empty cell), atomically."""
    return write_atomic(path, _csv_text(columns, [astuple(r) for r in rows]))


def write_parquet(path: str | Path, rows: Sequence[Any], columns: Sequence[str]) -> bool:
    """The same rows as Parquet; ``False`` (nothing written) when pyarrow is not installed."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return False
    table = pa.table({c: [getattr(r, c) for r in rows] for c in columns})
    pq.write_table(table, path)
    return True


def write_scores(path: str | Path, scores: Sequence[Score]) -> Path:
    """A cell's per-sample scores (:data:`SCORE_COLUMNS`), for paired comparisons across cells."""
    rows = [
        [
            s.sample_id,
            s.label,
            s.predicted,
            None if s.intention_correct is None else int(s.intention_correct),
            s.semantic_similarity,
            s.seconds,
            s.tokens,
        ]
        for s in scores
    ]
    return write_atomic(path, _csv_text(SCORE_COLUMNS, rows))


def read_scores(path: str | Path) -> list[Score]:
    """The scores :func:`write_scores` wrote."""

    def opt(v: str, kind: type) -> Any:
        return None if v == "" else kind(v)

    with open(path, encoding="utf-8", newline="") as f:
        return [
            Score(
                sample_id=r["sample_id"],
                label=int(r["label"]),
                predicted=opt(r["predicted"], int),
                intention_correct=None if r["intention_correct"] == "" else bool(int(r["intention_correct"])),
                semantic_similarity=opt(r["semantic_similarity"], float),
                seconds=opt(r["seconds"], float),
                tokens=opt(r["tokens"], int),
            )
            for r in csv.DictReader(f)
        ]
