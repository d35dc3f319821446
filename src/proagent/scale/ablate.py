"""``proagent ablate --ray``: the cells of a grid run in parallel on a Ray cluster.

Each cell is :func:`proagent.report.ablation.run_cell` on a worker (its own log folder
``cells/<slug>/``, ``results.json`` and ``scores.csv``, exactly as on one machine); the
driver collects the cells' results in grid order and writes the tables, effects and report
(:func:`proagent.report.ablation.run_ablation`). Re-running resumes each cell from its folder.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import Resume, RunError

__all__ = ["cells_on_ray", "run_cell_job"]


def run_cell_job(cell: Any, options: Any, cell_dir: str, run_kw: dict[str, Any]) -> Any:
    """On a worker: :func:`~proagent.report.ablation.run_cell` of ``cell`` with its task options as
    parsed on the driver (:func:`~proagent.report.ablation.cell_options`: values, nothing parsed here).

    Raises:
        ProagentError: the cell did not finish (the grid records it as failed).
    """
    from ..report.ablation import run_cell

    return run_cell(cell, options, Path(cell_dir), **run_kw)


def cells_on_ray(address: str, model_base_urls: Sequence[str] = ()) -> Any:
    """A cell runner for :func:`~proagent.report.ablation.run_ablation` (its ``run_cells``): connect to
    the cluster at ``address`` (:func:`proagent.scale.connect`), run every cell as a job, one worker per
    cluster CPU, and yield ``(cell, results or error)`` in grid order. Cell ``i`` talks to
    ``model_base_urls[i % n]`` when a pool of endpoints is given.

    Raises:
        UsageError: Ray is missing or no cluster answers at ``address``.
    """
    from . import _pool
    from ._cluster import connect, worker_count

    def run(
        grid: Sequence[Any], cells_dir: Path, options: Sequence[Any], run_kw: dict[str, Any]
    ) -> Iterator[tuple[Any, Any]]:
        urls = list(model_base_urls)
        jobs = []
        for i, (cell, opts) in enumerate(zip(grid, options)):
            kw = dict(run_kw)
            if urls:
                kw["model_base_url"] = urls[i % len(urls)]
            jobs.append(_pool.Job(cell.slug, run_cell_job, (cell, opts, str(cells_dir / cell.slug), kw)))
        with connect(address):
            done: dict[int, Any] = {}
            nxt = 0
            try:
                for i, res in _pool.run_jobs(jobs, worker_count(), keep_going=True):
                    done[i] = res
                    while nxt in done:
                        yield grid[nxt], done.pop(nxt)
                        nxt += 1
            except KeyboardInterrupt:  # Ctrl-C stops the grid; finished cells are kept in their folders
                raise RunError(
                    "grid interrupted", resume=Resume.SAME_COMMAND, folder=cells_dir.parent, interrupted=True
                ) from None

    return run
