"""``proagent stats``: activity statistics and burstiness of an activity log.

Registered in the ``proagent`` group by :mod:`proagent.cli`.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..io import slug

__all__ = ["stats_cmd"]


def _slug(text: str) -> str:
    return slug(text, limit=60) or "data"


class _ComparePath(click.Path):
    """A ``--compare`` path; an option name in its place means the second path was left out."""

    def convert(self, value, param, ctx):  # type: ignore[no-untyped-def]
        if isinstance(value, str) and value.startswith("--") and not Path(value).exists():
            self.fail(f"needs two paths (--compare A B); got {value!r} where the second should be", param, ctx)
        return super().convert(value, param, ctx)


@click.command("stats")
@click.argument("data", required=False, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Output folder (default: stats/<data name>, or stats/compare-<a>-vs-<b>).",
)
@click.option(
    "--compare",
    nargs=2,
    type=_ComparePath(exists=True, path_type=Path),
    default=None,
    help="Compare two logs (e.g. human.db synthetic.db): B, alpha and the ratio tests side by side.",
)
@click.option(
    "--similarity/--no-similarity",
    default=True,
    show_default=True,
    help="Top-k similar earlier events per LLM moment (embeds event texts with multilingual-e5-small).",
)
@click.option(
    "--max-similarity-events",
    type=click.IntRange(min=0),
    default=500,
    show_default=True,
    help="Analyse at most this many LLM moments for similarity (a seeded random subset).",
)
def stats_cmd(
    data: Path | None, out: Path | None, compare: tuple[Path, Path] | None, similarity: bool, max_similarity_events: int
) -> None:
    """Activity statistics of DATA (a ProactiveBench session file or folder, a LifeTrace
    database or participant folder, an ActivityWatch database or export, a screenpipe
    db.sqlite or folder): counts, LLM-event ratio by weekday and hour, apps,
    intentions, durations, inter-event times, burstiness B, power-law fit with likelihood-ratio
    tests, and the time-to-event of the most similar earlier events. Writes stats.json,
    figures (PNG and SVG) and index.html.

    Example: proagent stats ../shared/data/proactivebench --out stats/dev
    """
    from ..stats.report import load_log, render_compare, run_compare, run_stats, summary_text
    from ._util import check_writable_dir

    try:
        if compare:
            if data is not None:
                raise click.UsageError("give either DATA or --compare A B, not both")
            out = out or Path("stats") / _slug(f"compare-{compare[0].resolve().stem}-vs-{compare[1].resolve().stem}")
            logs = [load_log(p) for p in compare]  # read both before --out is created
            check_writable_dir(out, "--out")  # and the run lock on it
            res = run_compare(compare, out, events=logs)
            for n, r in res["named"]:
                click.echo(f"{n}: {r['llm_definition']}")
            click.echo(render_compare(res))
        else:
            if data is None:
                raise click.UsageError("give DATA, or --compare A B")
            p = data.resolve()
            out = out or Path("stats") / _slug(p.parent.name if p.name.endswith(".db") and p.parent.name else p.name)
            events = load_log(data)  # read it before --out is created
            check_writable_dir(out, "--out")  # and the run lock on it
            res = run_stats(
                data, out, events=events, similarity=similarity, max_similarity_targets=max_similarity_events
            )
            name = res.get("header", {}).get("data", [str(data)])[0]
            click.echo(summary_text(res, name))
            for w in res["power_law"].get("notes", []) if isinstance(res.get("power_law"), dict) else []:
                click.echo(f"note: {w}")
    except OSError as e:  # DataError (no events, unreadable data) names the file already: mapped by its kind
        where = Path(e.filename) if e.filename else None
        if where is not None and out is not None and not where.resolve().is_relative_to(Path(out).resolve()):
            raise click.ClickException(f"{where}: cannot read ({e.strerror or e})") from None  # an input, not --out
        raise click.ClickException(f"--out {out}: cannot write there ({e.strerror or e})") from None
    click.echo(f"wrote {res['files']['json']} and {res['files']['html']}")
