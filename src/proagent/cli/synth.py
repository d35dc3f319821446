"""``proagent synth``: write synthetic LifeTrace databases.

Registered in the ``proagent`` group by :mod:`proagent.cli`.
"""

from __future__ import annotations

from pathlib import Path

import click

from ._options import (
    Finite,
    display_option,
    endpoint_options,
    log_dir_option,
    method_option,
    model_option,
    window_option,
)
from ._util import (
    check_can_create,
    check_model,
    check_writable_dir,
    default_log_dir,
    parse_model_args,
    run_eval_set,
    window_seconds,
    window_slug,
)

__all__ = ["simulate_cmd", "synth_cmd"]


@click.command("synth")
@click.option(
    "--users", type=click.IntRange(min=1), default=3, show_default=True, help="Participants (one folder each)."
)
@click.option("--days", type=click.IntRange(min=1), default=7, show_default=True, help="Days per participant.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Output folder.")
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Random seed >= 0 (same seed -> identical databases).",
)
@click.option(
    "--alpha", type=Finite(), default=1.5, show_default=True, help="Power-law exponent of LLM inter-event times (> 1)."
)
@click.option("--gap-xmin", type=Finite(), default=30.0, show_default=True, help="Smallest LLM inter-event time (s).")
@click.option(
    "--screenshot-interval", type=Finite(), default=5.0, show_default=True, help="Seconds between screenshot rows."
)
@click.option("--screenshots/--no-screenshots", default=False, show_default=True, help="Also write tiny PNG files.")
@click.option("--start", default="2025-09-15", show_default=True, help="First day (YYYY-MM-DD).")
def synth_cmd(
    users: int,
    days: int,
    out: Path,
    seed: int,
    alpha: float,
    gap_xmin: float,
    screenshot_interval: float,
    screenshots: bool,
    start: str,
) -> None:
    """Write realistic LifeTrace databases (ProAgentBench processed format, one folder per
    participant) with bursty, heavy-tailed LLM use.

    Example: proagent synth --users 3 --days 7 --out data/synth --seed 1
    """
    from ..synth.generator import SynthConfig, check_out, check_resources, generate

    cfg = SynthConfig(
        users=users,
        days=days,
        seed=seed,
        alpha=alpha,
        gap_xmin=gap_xmin,  # UsageError: exit 2
        screenshot_interval=screenshot_interval,
        screenshots=screenshots,
        start=start,
    )
    if out.exists() and not out.is_dir():
        raise click.BadParameter(f"{out} is a file, not a folder", param_hint="--out")
    check_can_create(out, "--out")
    check_resources(cfg, out)  # before anything is written (DataError, exit 1): the estimate is in the message
    check_out(out, option="--out")
    check_writable_dir(out, "--out")  # and the run lock: a second synth into the same folder is refused
    try:
        res = generate(out, cfg)
    except OSError as e:
        raise click.ClickException(f"--out {out}: cannot write there ({e.strerror or e})") from None
    seconds = res.seconds or 0.0
    click.echo(
        f"wrote {users} database(s) under {out}: {res.events} events ({res.llm_events} LLM events), "
        f"{res.screenshots} screenshot rows in {seconds:.1f} s "
        f"({res.screenshots / max(seconds, 1e-9):,.0f} rows/s)"
    )


@click.command("simulate")
@click.argument("data", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="Output folder of the synthetic dataset (new, empty, or an earlier simulate output; replaced as a whole).",
)
@model_option("Model that plays the user (any inspect model).")
@endpoint_options()
@method_option()
@window_option("Context the model sees before each point, 1s .. 24h.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help="Decide only the first N points (users not fully decided are left out of the dataset).",
)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Generation seed (>= 0).")
@log_dir_option("inspect log folder (default: logs/simulate-<data>-<model>-...). Re-running resumes.")
@display_option()
def simulate_cmd(
    data: Path,
    out: Path,
    model: str,
    model_base_url: str | None,
    model_arg: tuple[str, ...],
    method: str,
    window: str,
    limit: int | None,
    seed: int,
    log_dir: Path | None,
    display: str | None,
) -> None:
    """Synthetic baseline (ProAgentBench section 4.2): at every candidate time point of the
    human log DATA a model decides whether the user turns to an LLM now and what they ask;
    the answers are written to OUT in DATA's own format (ProactiveBench sessions or LifeTrace
    databases). Compare the two with `proagent stats --compare DATA OUT`.

    Example: proagent simulate ../shared/data/proactivebench --out data/simulated --model local/smollm2-135m
    """
    from ..bench.simulate import (
        candidate_points,
        check_limit,
        check_output,
        decisions_from_log,
        write_simulated,
    )
    from ..bench.tasks import assist
    from ..report.results import render_table, results_from_log, write_results

    seconds = window_seconds(window)
    if log_dir is None:
        log_dir = default_log_dir(
            f"simulate-{data.resolve().name}-{model.split('/')[-1]}-{method}-{window_slug(seconds)}-seed{seed}"
            + (f"-limit{limit}" if limit else "")
        )
    task = assist(data=str(data), method=method, window=window, split="all", seed=seed, candidates=True)
    check_output(data, out)
    check_can_create(out, "--out")  # before the model run, not after it
    candidates = candidate_points(task.dataset)
    check_limit(candidates, limit)  # UsageError: exit 2, before the model is loaded
    args = parse_model_args(model_arg)
    check_model(model, model_base_url, args)
    check_writable_dir(log_dir, "--log-dir")
    click.echo(
        f"proagent simulate: {len(candidates)} candidate time points, model {model}, log dir {log_dir}", err=True
    )
    log = run_eval_set(
        task, log_dir, model, model_base_url=model_base_url, model_args=args, limit=limit, display=display
    )
    results = results_from_log(log)
    write_results(log_dir / "results.json", results)
    click.echo(render_table(results, title="Agreement of the model's choices with the human's"))
    try:
        res = write_simulated(data, decisions_from_log(log), candidates, out)  # DataError: nothing written
    except OSError as e:
        raise click.ClickException(f"--out {out}: cannot write there ({e.strerror or e})") from None
    if res.skipped_users:
        click.echo(f"left out (not every point decided, see --limit): {', '.join(res.skipped_users)}")
    click.echo(
        f"wrote {len(res.files)} {res.kind} file(s) under {out}: {res.candidates} points, "
        f"model said LLM use at {res.llm_moments} (human: {res.human_moments}), "
        f"{res.unparsed} unparsed answers counted as no"
    )
    click.echo(f"compare: proagent stats --compare {data} {out}")
