"""``proagent eval``: When/How-to-Assist on an activity log, the results table and results.json."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ._options import (
    RegistryChoice,
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
from ._errors import click_error
from ._util import check_model, check_writable_dir, default_log_dir, parse_model_args, run_eval_set, window_seconds, window_slug

if TYPE_CHECKING:
    from ..bench.records import ThresholdCalibration

__all__ = ["eval_cmd"]


@click.command("eval")
@data_option
@method_option()
@model_option("Any inspect model, e.g. local/smollm2-135m, openai/gpt-4o-mini, openai-api/deepseek/deepseek-chat.")
@endpoint_options(model_arg_help="Model argument KEY=VALUE (repeatable), e.g. n_ctx=4096.", pool=True)
@window_option("Context window before each moment, 1s .. 24h (the paper's ablation: 10s .. 10m).")
@sample_options(limit_help="Evaluate only the first N samples (N >= 1).")
@click.option("--memory", type=RegistryChoice(memory_names), default="none", show_default=True, help="Long-term memory built per user from the training period: RAG, knowledge graph or cluster personas.")
@click.option("--modality", type=click.Choice(["text", "image"]), default="text", show_default=True, help="How the current screen is shown: its OCR text, or the screenshot itself to a vision model (ProAgentBench Appendix F.2).")
@click.option("--images/--no-images", default=False, show_default=True, help="Also attach the current screenshot to the text prompt (vision models).")
@click.option("--threshold", default=None, help="Decide When to Assist by P(Yes) >= T from token log-probabilities instead of the "
              "answer text: T in [0, 1], or 'auto' to choose T on the train split (balanced accuracy). zero-shot/cot; the "
              "provider must return log-probabilities (local, OpenAI).")
@click.option("--decider", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="A decider folder (proagent train when): it decides When; the model is asked How only at its Yes moments.")
@log_dir_option("Where logs and results.json go (default: logs/<run>). Re-running with the same dir resumes.")
@display_option()
@ray_option("the samples")
def eval_cmd(data: Path, method: str, model: str, model_base_url: tuple[str, ...], model_arg: tuple[str, ...], window: str,
             split: str, train_fraction: float, limit: int | None, seed: int, sc_samples: int,
             annotations: tuple[Path, ...], memory: str, modality: str, images: bool, threshold: str | None,
             decider: Path | None, log_dir: Path | None, display: str | None, ray_address: str | None) -> None:
    """Run When/How-to-Assist on an activity log and print the results table.

    Example: proagent eval --data data/proactivebench --model local/smollm2-135m --limit 5
    """
    if ray_address is None and not model_base_url:
        from ..models.engine import prestart_local

        try:  # a local model loads in its own process while this one imports inspect and reads the data
            prestart_local(model, parse_model_args(model_arg))
        except click.BadParameter:
            pass  # reported below, in its usual place
    from ..bench.tasks import assist, embed_task_references, references_embedded_later

    from ..scale.endpoints import endpoint_pool

    urls = endpoint_pool(model_base_url, ray_address)
    model_base_url = urls[0] if urls else None
    if ray_address is not None:
        from ..scale import require_ray

        require_ray()  # one line before any work when the ray extra is missing
    seconds = window_seconds(window)
    fixed = _threshold(threshold, method, split, decider)
    if log_dir is None:
        log_dir = _default_log_dir(data, method, model, seconds, split, seed, memory=memory, modality=modality,
                                   threshold=threshold, decider=decider, limit=limit)

    from ..train.finetune import trained_folder

    finetuned = trained_folder(model)  # a model from proagent train sft|lora: the leakage guard needs its manifest

    made: dict[int, dict] = {}  # each task's arguments: --ray builds the same task on the workers

    def make(split_: str, **extra):  # noqa: ANN003, ANN202
        kw = dict(
            data=str(data), method=method, window=window, split=split_, train_fraction=train_fraction,
            seed=seed, sc_samples=sc_samples, images=images,
            annotations=",".join(str(a) for a in annotations) or None,
            **({"memory": memory} if memory != "none" else {}),
            **({"decider": str(decider)} if decider is not None else {}),
            **({"modality": modality} if modality != "text" else {}),
            **({"finetuned": str(finetuned)} if finetuned is not None else {}), **extra,
        )
        with references_embedded_later():
            task = assist(**kw)  # DataError, UsageError: one line and the exit code of their kind
        embed_task_references(task, limit)  # only the references of the samples this run scores
        made[id(task)] = kw
        return task

    task = make(split, **({"threshold": fixed} if fixed is not None else {}))
    if modality == "image":
        from ..bench.tasks import image_modality_warnings

        for line in image_modality_warnings(task, model):
            click.echo(f"warning: {line}")
    args = parse_model_args(model_arg)
    check_model(model, model_base_url, args)
    check_writable_dir(log_dir, "--log-dir")
    calibration = None

    def run(task_, folder: Path, on_start=None):  # noqa: ANN001, ANN202
        if ray_address is None:
            return run_eval_set(task_, folder, model, model_base_url=model_base_url, model_args=args, limit=limit,
                                display=display, on_start=on_start)
        from ..errors import RunError
        from ..scale import eval_on_ray

        try:
            return eval_on_ray(task_, made[id(task_)], folder, model, address=ray_address, model_base_urls=urls,
                               model_args=args, limit=limit, display=display, on_start=on_start,
                               echo=lambda m: click.echo(m, err=True))
        except RunError as e:
            raise click_error(e, folder_option="--log-dir") from None

    if threshold == "auto":
        from ..bench.threshold import calibrate_threshold

        calibration = calibrate_threshold(make("train", logprobs=True), run, log_dir, limit=limit,
                                          echo=lambda m: click.echo(m, err=True))
        task = make(split, threshold=calibration.threshold)
    mem = f", memory {memory}" if memory != "none" else ""
    n_run = min(len(task.dataset), limit or len(task.dataset))
    header = f"proagent eval: {n_run} samples, method {method}{mem}, model {model}, log dir {log_dir}"

    def start() -> None:  # once the folder is accepted: say what a resumed run reuses (issue 36)
        from ..bench.running import finished_samples

        done = min(finished_samples(log_dir), n_run)
        reused = f" ({done} of {n_run} finished earlier, reused; {n_run - done} to run)" if done else ""
        click.echo(header.replace(f"{n_run} samples,", f"{n_run} samples{reused},", 1), err=True)

    full = run(task, log_dir, on_start=start)
    _write_results(full, log_dir, calibration, decider, memory)


def _write_results(full: Any, log_dir: Path, calibration: ThresholdCalibration | None, decider: Path | None,
                   memory: str) -> None:
    """``results.json`` of the finished run's log ``full`` (with the calibration and the decider's
    figures), the one-class warning, the results table and where the files are."""
    from ..report.results import render_table, results_from_log, write_results

    results = results_from_log(full)
    if calibration is not None:
        results.calibration = calibration.to_json()
    if decider is not None:
        from ..report.decider import decider_results

        results.decider = decider_results(full, str(decider))
    write_results(log_dir / "results.json", results)
    if results.one_class:
        which = "positive" if results.n_positive else "negative"
        click.echo(f"warning: all {results.n} evaluated moments are {which} (one class only): accuracy, precision, "
                   f"recall and F1 equal the always-{'yes' if results.n_positive else 'no'} baseline's and say nothing "
                   "about the model; results.json has one_class: true", err=True)
    title = "When / How to Assist" + (f" (memory: {memory})" if memory != "none" else "")
    click.echo(render_table(results, title=title))
    click.echo(f"results: {log_dir / 'results.json'}  log: {full.location}")


def _default_log_dir(data: Path, method: str, model: str, seconds: float, split: str, seed: int, *, memory: str,
                     modality: str, threshold: str | None, decider: Path | None, limit: int | None) -> Path:
    """``logs/<run>``: the data folder's name, method, model, window, split and seed, with each
    option that is not its default (memory, modality, threshold, decider, limit)."""
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
    return default_log_dir(*parts)


def _threshold(value: str | None, method: str, split: str, decider: Path | None) -> float | None:
    """``--threshold``: a number (returned, checked by :func:`~proagent.agent.solvers.check_threshold`),
    ``auto`` (None: chosen on the train split) or unset (None)."""
    from ..agent.solvers import check_threshold

    if value is None:
        return None
    if value != "auto":
        return check_threshold(value, method, decider=decider)
    check_threshold(0.5, method, decider=decider)  # the method and decider rules hold for auto as well
    if split != "test":
        raise click.BadParameter("auto chooses the threshold on the train split, so it needs --split test",
                                 param_hint="--threshold")
    return None
