"""``proagent ablate``: a grid of methods x memories x windows x models x deciders, a tidy table and a report."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import click

from ..errors import Resume, RunError
from ._options import (
    RegistryHelpOption,
    data_option,
    display_option,
    endpoint_options,
    memory_names,
    method_names,
    names_help,
    ray_option,
    sample_options,
)
from ._util import DEFAULT_MODEL, check_model, check_writable_dir, parse_model_args, window_seconds

__all__ = ["ablate_cmd"]


def _csv_list(value: str, what: str, choices: Callable[[], Iterable[str]] | None = None) -> list[str]:
    """A comma-separated option as a list; ``choices`` (a registry) lists the names allowed."""
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise click.BadParameter(f"give at least one {what}", param_hint=f"--{what}")
    if choices:
        allowed = tuple(choices())
        bad = [v for v in items if v not in allowed]
        if bad:
            raise click.BadParameter(f"{', '.join(bad)}: choose from {', '.join(allowed)}", param_hint=f"--{what}")
    return items


@click.command("ablate")
@data_option
@click.option(
    "--methods",
    default="zero-shot",
    show_default=True,
    cls=RegistryHelpOption,
    help_from=names_help("Comma-separated methods: ", method_names),
)
@click.option(
    "--memory",
    "memories",
    default="none,rag,kg",
    show_default=True,
    cls=RegistryHelpOption,
    help_from=names_help("Comma-separated memories: ", memory_names),
)
@click.option(
    "--windows", default="5m", show_default=True, help="Comma-separated context windows, e.g. 10s,30s,1m,2m,5m,10m."
)
@click.option("--models", default=DEFAULT_MODEL, show_default=True, help="Comma-separated inspect models.")
@click.option(
    "--deciders",
    default="none",
    show_default=True,
    help="Comma-separated decider folders (proagent train when) that decide When, and/or 'none' (the model decides).",
)
@endpoint_options(pool=True)
@sample_options(limit_help="Evaluate only the first N samples of each cell (N >= 1).")
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="Output folder (cells/, results.csv, results.parquet, report.html). Re-running resumes.",
)
@display_option(default="none", help="inspect progress display per cell.")
@ray_option("the cells")
def ablate_cmd(
    data: Path,
    methods: str,
    memories: str,
    windows: str,
    models: str,
    deciders: str,
    model_base_url: tuple[str, ...],
    model_arg: tuple[str, ...],
    split: str,
    train_fraction: float,
    limit: int | None,
    seed: int,
    sc_samples: int,
    annotations: tuple[Path, ...],
    out: Path,
    display: str,
    ray_address: str | None,
) -> None:
    """Run a grid of methods x memory x windows x models; write a tidy table and an HTML report.

    Example: proagent ablate --data data/proactivebench --memory none,rag,kg --windows 1m,5m --out runs/ablate
    """
    from ..report.ablation import check_out, run_ablation
    from ..scale.endpoints import endpoint_pool

    urls = endpoint_pool(model_base_url, ray_address)
    model_base_url = urls[0] if urls else None
    run_cells = None
    if ray_address is not None:
        from ..scale import cells_on_ray, require_ray

        require_ray()
        run_cells = cells_on_ray(ray_address, urls)

    method_list = _csv_list(methods, "methods", method_names)
    memory_list = _csv_list(memories, "memory", memory_names)
    window_list = _csv_list(windows, "windows")
    for w in window_list:
        window_seconds(w, "--windows")
    model_list = _csv_list(models, "models")
    decider_list = _csv_list(deciders, "deciders")
    for d in decider_list:  # a missing (UsageError, exit 2) or unusable (DeciderError, exit 1) decider is one line
        if d != "none":  # before any cell runs
            from ..agent.decider import load_decider

            load_decider(d, option="--deciders")
    if not data.exists():
        raise click.ClickException(f"{data}: no such file or folder")
    from ..sources.load import load_events

    load_events(data, annotations=list(annotations) or None)  # unreadable data stops here, before any cell runs
    check_out(
        out, option="--out"
    )  # a non-empty folder that is not an earlier ablation's output: exit 1, nothing written
    args = parse_model_args(model_arg)
    for m in model_list:  # every model is checked before the first cell runs
        check_model(m, model_base_url, args, option="--models")
    check_writable_dir(out, "--out")
    from ..bench.progress import sample_progress
    from ._progress import SampleLines

    # each cell's samples: a rich bar on a terminal (unless inspect draws its own), a line every 30 s when piped
    with sample_progress(SampleLines("  cell", "samples", rich=False if display not in (None, "none") else None)):
        res = run_ablation(  # interrupted (RunError): the cells already finished are kept
            str(data),
            out,
            models=model_list,
            methods=method_list,
            memories=memory_list,
            windows=window_list,
            deciders=decider_list,
            echo=lambda m: click.echo(m, err=True),
            split=split,
            limit=limit,
            seed=seed,
            train_fraction=train_fraction,
            sc_samples=sc_samples,
            annotations=",".join(str(a) for a in annotations) or None,
            model_args=args,
            model_base_url=model_base_url,
            display=display,
            run_cells=run_cells,
        )
    click.echo(f"cells: {res['cells']}  table: {res['csv']}" + (f" (+ {res['parquet']})" if res["parquet"] else ""))
    click.echo(f"report: {res['report']}")
    if res["failed"]:
        raise RunError(
            f"{len(res['failed'])} cell(s) did not finish: {', '.join(res['failed'])}",
            resume=Resume.SAME_COMMAND,
            folder=out,
        )
