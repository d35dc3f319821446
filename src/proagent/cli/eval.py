"""``proagent eval``: When/How-to-Assist on an activity log, the results table and results.json."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..bench.options import MODALITIES
from ._errors import click_error
from ._options import (
    ShownChoice,
    data_option,
    display_option,
    endpoint_options,
    log_dir_option,
    memory_names,
    method_option,
    model_option,
    ray_option,
    sample_options,
    window_option,
)
from ._util import check_model, check_writable_dir, parse_model_args, run_eval_set

if TYPE_CHECKING:
    from ..bench.evaluate import EvalRun, Runner
    from ..bench.options import AssistOptions, EvalOptions

__all__ = ["eval_cmd"]


@click.command("eval")
@data_option
@method_option()
@model_option("Any inspect model, e.g. local/smollm2-135m, openai/gpt-4o-mini, openai-api/deepseek/deepseek-chat.")
@endpoint_options(model_arg_help="Model argument KEY=VALUE (repeatable), e.g. n_ctx=4096.", pool=True)
@window_option("Context window before each moment, 1s .. 24h (the paper's ablation: 10s .. 10m).")
@sample_options(limit_help="Evaluate only the first N samples (N >= 1).")
@click.option(
    "--memory",
    type=ShownChoice(memory_names),
    default="none",
    show_default=True,
    help="Long-term memory built per user from the training period: RAG, knowledge graph or cluster personas.",
)
@click.option(
    "--modality",
    type=ShownChoice(lambda: MODALITIES),
    default="text",
    show_default=True,
    help="How the current screen is shown: its OCR text, or the screenshot itself to a vision model (ProAgentBench Appendix F.2).",
)
@click.option(
    "--images/--no-images",
    default=False,
    show_default=True,
    help="Also attach the current screenshot to the text prompt (vision models).",
)
@click.option(
    "--threshold",
    default=None,
    help="Decide When to Assist by P(Yes) >= T from token log-probabilities instead of the "
    "answer text: T in [0, 1], or 'auto' to choose T on the train split (balanced accuracy). zero-shot/cot; the "
    "provider must return log-probabilities (local, OpenAI).",
)
@click.option(
    "--decider",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="A decider folder (proagent train when): it decides When; the model is asked How only at its Yes moments.",
)
@log_dir_option("Where logs and results.json go (default: logs/<run>). Re-running with the same dir resumes.")
@display_option()
@ray_option("the samples")
def eval_cmd(
    data: Path,
    method: str,
    model: str,
    model_base_url: tuple[str, ...],
    model_arg: tuple[str, ...],
    window: str,
    split: str,
    train_fraction: float,
    limit: int | None,
    seed: int,
    sc_samples: int,
    annotations: tuple[Path, ...],
    memory: str,
    modality: str,
    images: bool,
    threshold: str | None,
    decider: Path | None,
    log_dir: Path | None,
    display: str | None,
    ray_address: str | None,
) -> None:
    """Run When/How-to-Assist on an activity log and print the results table.

    Example: proagent eval --data data/proactivebench --model local/smollm2-135m --limit 5
    """
    if ray_address is None and not model_base_url:
        from ..models.engine import prestart_local

        try:  # a local model loads in its own process while this one imports inspect and reads the data
            prestart_local(model, parse_model_args(model_arg))
        except click.BadParameter:
            pass  # reported below, in its usual place
    from ..bench.evaluate import eval_task, run_eval
    from ..bench.options import parse_eval_options
    from ..scale.endpoints import endpoint_pool
    from ..train.finetune import trained_folder

    urls = endpoint_pool(model_base_url, ray_address)
    if ray_address is not None:
        from ..scale import require_ray

        require_ray()  # one line before any work when the ray extra is missing
    opts = parse_eval_options(  # UsageError: one line, exit 2
        data=data,
        method=method,
        model=model,
        window=window,
        split=split,
        train_fraction=train_fraction,
        seed=seed,
        sc_samples=sc_samples,
        annotations=annotations,
        memory=memory,
        modality=modality,
        images=images,
        threshold=threshold,
        decider=decider,
        limit=limit,
        log_dir=log_dir,
        display=display,
        ray_address=ray_address,
        model_base_urls=tuple(urls),
        finetuned=trained_folder(model),
    )  # a model from proagent train sft|lora: the leakage guard needs its manifest
    task = eval_task(opts.task, limit)  # DataError: one line, exit 1
    if modality == "image":
        from ..bench.tasks import image_modality_warnings

        for line in image_modality_warnings(task, model):
            click.echo(f"warning: {line}")
    opts = replace(opts, model_args=parse_model_args(model_arg))
    check_model(model, opts.model_base_url, dict(opts.model_args))
    check_writable_dir(opts.log_dir, "--log-dir")
    done = run_eval(opts, task, _runner(opts), echo=lambda m: click.echo(m, err=True))
    _write_results(done, opts)


def _runner(opts: EvalOptions) -> Runner:
    """How ``opts`` runs a task: here (:func:`~proagent.cli._util.run_eval_set`), or with ``--ray``
    as shards that each build the task from its parsed options (:func:`proagent.scale.eval_on_ray`)."""

    def run(task: Any, task_opts: AssistOptions, folder: Path, on_start: Callable[[], None] | None = None) -> Any:
        if opts.ray_address is None:
            return run_eval_set(
                task,
                folder,
                opts.model,
                model_base_url=opts.model_base_url,
                model_args=dict(opts.model_args),
                limit=opts.limit,
                display=opts.display,
                on_start=on_start,
            )
        from ..bench.tasks import build_assist
        from ..errors import RunError
        from ..scale import eval_on_ray

        try:
            return eval_on_ray(
                task,
                partial(build_assist, task_opts),
                folder,
                opts.model,
                address=opts.ray_address,
                model_base_urls=opts.model_base_urls,
                model_args=dict(opts.model_args),
                limit=opts.limit,
                display=opts.display,
                on_start=on_start,
                echo=lambda m: click.echo(m, err=True),
            )
        except RunError as e:
            raise click_error(e, folder_option="--log-dir") from None

    return run


def _write_results(done: EvalRun, opts: EvalOptions) -> None:
    """Write ``results.json`` of the finished run (:func:`proagent.report.results.eval_results`), then
    print the one-class warning, the results table and where the files are."""
    from ..report.results import eval_results, render_table, write_results

    results = eval_results(done.log, calibration=done.calibration, decider=opts.task.decider)
    write_results(opts.log_dir / "results.json", results)
    if results.one_class:
        which = "positive" if results.n_positive else "negative"
        click.echo(
            f"warning: all {results.n} evaluated moments are {which} (one class only): accuracy, precision, "
            f"recall and F1 equal the always-{'yes' if results.n_positive else 'no'} baseline's and say nothing "
            "about the model; results.json has one_class: true",
            err=True,
        )
    memory = opts.task.memory
    title = "When / How to Assist" + (f" (memory: {memory})" if memory != "none" else "")
    click.echo(render_table(results, title=title))
    click.echo(f"results: {opts.log_dir / 'results.json'}  log: {done.log.location}")
