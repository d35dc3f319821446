"""``proagent data``: fetch the public data sets, checksums verified."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["data"]


@click.group("data")
def data() -> None:
    """Fetch public data sets."""


@data.command("fetch")
@click.argument("dataset", type=click.Choice(["proactivebench", "proactivebench-synthetic"]))
@click.option(
    "--dest", type=click.Path(path_type=Path), default=None, help="Folder to write into (default: data/DATASET)."
)
@click.option(
    "--from",
    "source",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Copy from an offline mirror instead of downloading.",
)
def data_fetch(dataset: str, dest: Path | None, source: Path | None) -> None:
    """Download a public data set from its upstream source, checksums verified.

    Example: proagent data fetch proactivebench --dest data/proactivebench
    """
    from ..sources.fetch import fetch_proactivebench, fetch_proactivebench_synthetic

    dest = dest or Path("data") / dataset
    try:
        if dataset == "proactivebench-synthetic":
            path, counts = fetch_proactivebench_synthetic(dest, source_dir=source)
            dropped = f"; {counts['real-session']} real-session traces dropped" if counts["real-session"] else ""
            click.echo(f"{counts['synthetic']} synthetic traces verified in {path}{dropped}")
            return
        files = fetch_proactivebench(dest, source_dir=source)
    except OSError as e:  # --dest is a file, or cannot be created or written (a failed download: DataError)
        raise click.ClickException(f"--dest {dest}: cannot write there ({e.strerror or e})") from None
    click.echo(f"{len(files)} session files verified in {dest}")
