"""Ablation grids: run When/How-to-Assist over methods x memory x windows x models
(:mod:`.grid`), then write the tidy tables (:mod:`.tidy`), the memory effects
(:mod:`.effects`) and the HTML report (:mod:`.ablation_page`).

Layout of ``--out DIR`` (new, empty, or an earlier ablation's ``--out``, recognised by its
``ablate.json``; :func:`check_out`)::

    DIR/ablate.json                                    the grid of the latest run (written first)
    DIR/cells/<model>__<method>__<memory>__<window>/   one inspect log dir per cell (eval_set:
                                                       re-running resumes, finished cells are reused)
        results.json                                   the cell's results (as ``proagent eval``, plus ``cell``)
        scores.csv                                     per-sample scores (for paired comparisons)
    DIR/results.csv                                    tidy: one row per (cell or baseline, metric)
    DIR/results.parquet                                the same (when pyarrow is installed)
    DIR/effects.csv                                    each memory against none, paired bootstrap
    DIR/report.html                                    tables + matplotlib figures, images inlined
    DIR/figures/*.png                                  the figures as files
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..bench.options import AssistOptions
from ..bench.progress import duration_text
from ..io import LOCK_NAME, check_output_folder, write_json_atomic
from .ablation_page import render_report
from .effects import EFFECT_COLUMNS, memory_effects
from .grid import Cell, cells
from .results import AssistResults, CellInfo, log_scores, results_from_log, write_results
from .tidy import TIDY_COLUMNS, TidyRow, read_scores, tidy_rows, write_csv, write_parquet, write_scores

__all__ = [
    "MARKER",
    "TASK_KEYS",
    "CellRunner",
    "cell_options",
    "check_out",
    "grid_progress",
    "run_ablation",
    "run_cell",
]

MARKER = "ablate.json"
"""The file that marks a folder as an ablation's output (so re-running resumes into it)."""


def check_out(out: str | Path, option: str | None = None) -> None:
    """Refuse a folder :func:`run_ablation` must not write into, before any cell runs (``option``:
    the command-line option that named it, which the message then starts with).

    Raises:
        DataError: ``out`` is a file or a non-empty folder without ``ablate.json`` (the run
            lock's file aside; :func:`proagent.io.check_output_folder`); a folder that holds
            only what an ablation writes (``cells/``, results, figures, report) is an earlier
            grid from before the marker and is resumed.
    """
    out = Path(out)
    if out.is_dir() and not (out / MARKER).exists() and _earlier_grid(out):
        return  # a grid written before the marker existed: resume it (run_ablation writes the marker)
    check_output_folder(out, marker=MARKER, run="ablate", option=option)


_GRID_ENTRIES = {"cells", "figures", "results.csv", "results.parquet", "effects.csv", "report.html", LOCK_NAME}
"""What an ablation folder holds (an unmarked folder with only these and a ``cells/`` folder is a grid)."""


def _earlier_grid(out: Path) -> bool:
    names = {p.name for p in out.iterdir()}
    return (out / "cells").is_dir() and names <= _GRID_ENTRIES


TASK_KEYS = ("split", "seed", "train_fraction", "sc_samples", "annotations")
"""The keys of :func:`run_ablation`'s ``run_kw`` that are arguments of every cell's task (parsed once
on the driver, :func:`cell_options`); the rest (``limit``, ``model_args``, ``model_base_url``,
``display``) say how a cell runs (:func:`run_cell`)."""


def cell_options(cell: Cell, data: str, **task_kw: Any) -> AssistOptions:
    """The ``assist`` task options of ``cell`` (its method, memory, window and decider, with the grid's
    ``task_kw``: :data:`TASK_KEYS`), parsed once on the driver (:func:`proagent.bench.options.parse_assist_options`):
    a bad window or memory is refused before any cell runs, and a worker of ``ablate --ray``
    receives the record, not strings to parse again.

    Raises:
        proagent.errors.UsageError: a bad value (the option named).
    """
    from ..bench.options import parse_assist_options

    decider = cell.decider if cell.decider != "none" else None
    return parse_assist_options(
        data=data, method=cell.method, window=cell.window, memory=cell.memory, decider=decider, **task_kw
    )


def run_cell(
    cell: Cell,
    options: AssistOptions,
    cell_dir: Path,
    *,
    limit: int | None = None,
    model_args: dict | None = None,
    model_base_url: str | None = None,
    display: str | None = "none",
) -> AssistResults:
    """Run (or resume) one cell (its task: ``options``, :func:`cell_options`) with inspect's
    ``eval_set`` in its own log dir; write its ``results.json`` and ``scores.csv`` and return its results.

    Raises:
        proagent.errors.RunError: the run did not finish (the message says how to resume).
        proagent.errors.DataError: the cell's data has no sample in its split (and the task's other data errors).
    """
    from ..bench.running import RunError, run_task
    from ..bench.tasks import build_assist

    task = build_assist(options)
    try:
        full = run_task(
            task,
            cell_dir,
            cell.model,
            model_base_url=model_base_url,
            model_args=model_args,
            limit=limit,
            display=display,
        )
    except RunError as e:
        raise RunError(
            f"cell {cell.slug}: {e.problem}", resume=e.resume, folder=e.folder, interrupted=e.interrupted
        ) from None
    res = results_from_log(full)
    if cell.decider != "none":
        from .decider import decider_results

        res.decider = decider_results(full, cell.decider)
    md = full.eval.metadata or {}
    res.cell = CellInfo(
        cell.model,
        cell.method,
        cell.memory,
        cell.window,
        cell.decider,
        memory_derived=md.get("memory_derived"),
        memory_build_seconds=md.get("memory_build_seconds"),
    )
    write_results(cell_dir / "results.json", res)
    write_scores(cell_dir / "scores.csv", log_scores(full))
    return res


def grid_progress(
    done: int, total: int, took: float, ran: Sequence[float], *, reused: bool = False, failed: bool = False
) -> str:
    """One line after a cell: its seconds (or ``reused``: an earlier run's log answered it, or
    ``failed after``), how many of the grid are done, and the time the rest should take at the mean
    of the cells that ran, ``ran`` (issue 36: a 48-cell grid was hours of ``[k/48]`` with no estimate)."""
    what = "failed after " + duration_text(took) if failed else "reused" if reused else duration_text(took)
    line = f"cell {what}; {done} of {total} done"
    if done < total and ran:
        line += f", about {duration_text(sum(ran) / len(ran) * (total - done))} left"
    return line


def run_ablation(
    data: str,
    out: str | Path,
    *,
    models: Sequence[str],
    methods: Sequence[str],
    memories: Sequence[str],
    windows: Sequence[str],
    deciders: Sequence[str] = ("none",),
    echo: Callable[[str], None] = print,
    run_cells: CellRunner | None = None,
    **run_kw: Any,
) -> dict:
    """Run every cell (resuming finished ones), then write the tables and the report.

    Args:
        run_cells: runs the cells and yields each one's results or the error it raised, in grid
            order (default: :func:`run_cell` on each in turn; ``ablate --ray``:
            :func:`proagent.scale.ablate.cells_on_ray`, the cells in parallel on a cluster).
        run_kw: the cells' task arguments (:data:`TASK_KEYS`: split, seed, ..., parsed once by
            :func:`cell_options`) and :func:`run_cell`'s (limit, model args, ...).

    Returns:
        ``{"cells": n, "csv": path, "parquet": path or None, "report": path, "failed": [slugs]}``.

    Raises:
        DataError: ``out`` is not new, empty or an earlier ablation's output (:func:`check_out`).
        UsageError: a cell's options are refused (:func:`cell_options`), before any cell runs.
    """
    out = Path(out)
    check_out(out)
    grid = cells(models, methods, memories, windows, deciders)
    task_kw = {k: run_kw.pop(k) for k in TASK_KEYS if k in run_kw}
    options = [cell_options(cell, str(data), **task_kw) for cell in grid]  # every cell checked before any runs
    (out / "cells").mkdir(parents=True, exist_ok=True)
    write_json_atomic(
        out / MARKER,
        {
            "format": "proagent-ablation",
            "data": str(data),
            "models": list(models),
            "methods": list(methods),
            "memories": list(memories),
            "windows": list(windows),
            "deciders": list(deciders),
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        },
    )
    rows: list[TidyRow] = []
    results: dict[str, AssistResults] = {}
    failed = []
    outcomes = iter((run_cells or _cells_in_turn)(grid, out / "cells", options, run_kw))
    ran: list[float] = []  # seconds of the cells that ran (not those reused from an earlier run)
    logs_before = {c.slug: _logs(out / "cells" / c.slug) for c in grid}  # before any cell runs
    for i, cell in enumerate(grid, 1):
        dec = f" decider={cell.decider}" if cell.decider != "none" else ""
        echo(f"[{i}/{len(grid)}] {cell.model} {cell.method} memory={cell.memory} window={cell.window}{dec}")
        t0 = time.monotonic()
        _, res = next(outcomes)  # the in-turn runner runs the cell now, after its line
        took = time.monotonic() - t0
        failed_now = isinstance(res, Exception)
        # reused: an earlier run's log answered the cell (inspect's eval_set wrote no new log)
        reused = (
            not failed_now
            and bool(logs_before[cell.slug])
            and _logs(out / "cells" / cell.slug) == logs_before[cell.slug]
        )
        if not reused:
            ran.append(took)
        echo("  " + grid_progress(i, len(grid), took, ran, reused=reused, failed=failed_now))
        if isinstance(res, Exception):
            e = res
            if getattr(e, "interrupted", False):  # Ctrl-C stops the grid, not just this cell
                raise e
            echo(f"  failed: {e}")
            failed.append(cell.slug)
            continue
        results[cell.slug] = res
        rows.extend(tidy_rows(str(data), cell, res))
        echo(f"  accuracy {_metric_text(res.accuracy)}  f1 {_metric_text(res.f1)}  n {res.n}")
    csv_path = write_csv(out / "results.csv", rows, TIDY_COLUMNS)
    pq_path = out / "results.parquet"
    has_pq = write_parquet(pq_path, rows, TIDY_COLUMNS)
    effects = memory_effects(grid, {slug: read_scores(out / "cells" / slug / "scores.csv") for slug in results})
    write_csv(out / "effects.csv", effects, EFFECT_COLUMNS)
    report = render_report(out, rows, effects, results, data=str(data))
    return {
        "cells": len(results),
        "csv": csv_path,
        "parquet": pq_path if has_pq else None,
        "report": report,
        "failed": failed,
    }


CellRunner = Callable[
    [Sequence[Cell], Path, Sequence["AssistOptions"], dict[str, Any]],
    Iterator[tuple[Cell, "AssistResults | Exception"]],
]
"""How :func:`run_ablation` runs its cells: ``(grid, cells_dir, options, run_kw)`` (``options[i]``: cell
``i``'s parsed task, :func:`cell_options`; ``run_kw``: :func:`run_cell`'s keywords) -> each cell and its
results (or the proagent error it raised), in grid order."""


def _cells_in_turn(
    grid: Sequence[Cell], cells_dir: Path, options: Sequence[AssistOptions], run_kw: dict[str, Any]
) -> Iterator[tuple[Cell, AssistResults | Exception]]:
    """One cell after the other on this machine (:func:`run_cell`); a cell's error is yielded (lazily,
    so the grid's progress lines come as each cell starts)."""
    for cell, opts in zip(grid, options):
        try:
            yield cell, run_cell(cell, opts, cells_dir / cell.slug, **run_kw)
        except (RuntimeError, ValueError) as e:
            yield cell, e


def _logs(cell_dir: Path) -> set[str]:
    """The names of the inspect logs in a cell's folder."""
    return {p.name for p in cell_dir.glob("*.eval")}


def _metric_text(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"
