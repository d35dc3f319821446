"""``proagent synth``: write synthetic LifeTrace databases.

The lead wires :data:`synth_cmd` into the ``proagent`` group
(``cli.add_command(synth_cmd)``); it also runs alone:
``python -m proagent.synth.cli --users 3 --days 7 --out data/synth``.
"""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["synth_cmd"]


@click.command("synth")
@click.option("--users", type=click.IntRange(min=1), default=3, show_default=True, help="Participants (one folder each).")
@click.option("--days", type=click.IntRange(min=1), default=7, show_default=True, help="Days per participant.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Output folder.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed (same seed -> identical databases).")
@click.option("--alpha", type=float, default=1.5, show_default=True, help="Power-law exponent of LLM inter-event times (> 1).")
@click.option("--gap-xmin", type=float, default=30.0, show_default=True, help="Smallest LLM inter-event time (s).")
@click.option("--screenshot-interval", type=float, default=5.0, show_default=True, help="Seconds between screenshot rows.")
@click.option("--screenshots/--no-screenshots", default=False, show_default=True, help="Also write tiny PNG files.")
@click.option("--start", default="2025-09-15", show_default=True, help="First day (YYYY-MM-DD).")
def synth_cmd(users: int, days: int, out: Path, seed: int, alpha: float, gap_xmin: float, screenshot_interval: float,
              screenshots: bool, start: str) -> None:
    """Write realistic LifeTrace databases (ProAgentBench processed format, one folder per
    participant) with bursty, heavy-tailed LLM use.

    Example: proagent synth --users 3 --days 7 --out data/synth --seed 1
    """
    from .generator import SynthConfig, generate

    try:
        cfg = SynthConfig(users=users, days=days, seed=seed, alpha=alpha, gap_xmin=gap_xmin,
                          screenshot_interval=screenshot_interval, screenshots=screenshots, start=start)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    try:
        res = generate(out, cfg)
    except OSError as e:
        raise click.ClickException(f"--out {out}: cannot write there ({e.strerror or e})") from None
    click.echo(f"wrote {users} database(s) under {out}: {res['events']} events ({res['llm_events']} LLM events), "
               f"{res['screenshots']} screenshot rows in {res['seconds']:.1f} s "
               f"({res['screenshots'] / max(res['seconds'], 1e-9):,.0f} rows/s)")


if __name__ == "__main__":  # pragma: no cover
    synth_cmd()
