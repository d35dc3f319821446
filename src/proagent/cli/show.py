"""``proagent show``: the command-line face of :mod:`proagent.show`."""

from __future__ import annotations

import time
from pathlib import Path

import click

from ..serve import check_port
from ._errors import stopped_by_ctrl_c

__all__ = ["show_cmd"]


@click.command("show")
@click.argument("log", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--day", default=None, metavar="YYYY-MM-DD", help="The day shown first (default: the last one recorded).")
@click.option("--user", default=None, help="Only this participant's events (a folder of several).")
@click.option(
    "--curated",
    type=click.Path(path_type=Path),
    default=None,
    help="A curate output of this capture: screenshots shown as curate kept them (blurred; none where deleted).",
)
@click.option(
    "--live",
    "live_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="A live folder (feedback.db): its offers, answers and labels (default: DIR's own feedback.db).",
)
@click.option(
    "--redact",
    is_flag=True,
    help="Replace PII in titles, screen text, conversations and offers by typed placeholders such as "
    "[EMAIL] (default: shown as recorded, to you only).",
)
@click.option(
    "--port",
    type=click.IntRange(min=0, max=65535),
    default=0,
    show_default=True,
    help="Port on 127.0.0.1 (0: any free one).",
)
def show_cmd(
    log: Path, day: str | None, user: str | None, curated: Path | None, live_dir: Path | None, redact: bool, port: int
) -> None:
    """A recorded day on a local page: DIR is a capture folder, a curate or annotate output, a
    LifeTrace database, or an ActivityWatch or screenpipe log. A strip of the day by app, LLM use
    and live's offers; each event with its screenshots, the text read, the conversation and what
    annotate found, live's offers and answers. j / k next and previous event, h / l screenshot,
    / search, [ ] the day before and after. Served on 127.0.0.1 behind a random token; Ctrl-C
    stops.

    Example: proagent show ~/activity
    """
    from ..show import serve_show

    check_port(port)
    srv = serve_show(log, day=day, user=user, curated=curated, live=live_dir, redact=redact, port=port)
    try:  # Ctrl-C at any point from here stops the page: the normal end, exit 0
        d = srv.day
        click.echo(f"{len(d.events)} event(s) of {d.day} ({len(d.days)} day(s) recorded) at {srv.url}")
        click.echo("Ctrl-C stops")
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        stopped_by_ctrl_c()
    finally:
        srv.stop()
