"""``proagent doctor``: what this machine can do (:mod:`proagent.doctor`), printed."""

from __future__ import annotations

import json
from pathlib import Path

import click

__all__ = ["doctor_cmd"]


@click.command("doctor")
@click.option(
    "--dir",
    "folder",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Where you will write captures and runs: its free disk is checked.",
)
@click.option("--verify", is_flag=True, help="Recompute each assembled model's SHA-256 (about 1 s per GB).")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as a JSON list instead of lines.")
def doctor_cmd(folder: Path, verify: bool, as_json: bool) -> None:
    """Say what this machine can do: display server and capture platform, Wayland portal, the
    bundled models (present and verified), OCR, encryption and the OS keyring, free disk, Ray and
    Chromium, with what to install for each missing one. Writes nothing; exit 0 whatever it finds.

    Example: proagent doctor --dir ~/activity
    """
    from ..doctor import as_dicts, format_checks, run_checks

    checks = run_checks(folder, verify=verify)
    if as_json:
        click.echo(json.dumps(as_dicts(checks), indent=1))
        return
    for line in format_checks(checks):
        click.echo(line)
