"""``proagent train sft`` and ``proagent train lora``: fine-tune the LLM, write it back as GGUF.

The commands only parse options and print; the work is in :mod:`proagent.train.finetune`.
"""

from __future__ import annotations

from pathlib import Path

import click

from ._options import Finite, training_data_options, training_window_options
from ._util import check_writable_dir, window_seconds

__all__ = ["lora_cmd", "sft_cmd"]


def _options(method: str):  # noqa: ANN202
    lr = {"sft": "2e-5", "lora": "2e-4"}[method]

    def wrap(f):  # noqa: ANN001, ANN202
        opts = [
            training_data_options(),
            click.option(
                "--base",
                default="smollm2-135m",
                show_default=True,
                help="Base model: a bundled model (smollm2-135m, qwen2.5-coder-1.5b), a .gguf file or a Hugging Face model folder.",
            ),
            click.option(
                "--out",
                required=True,
                type=click.Path(path_type=Path),
                help="Output folder (checkpoints/, model.gguf, manifest.json). Re-running resumes.",
            ),
            click.option(
                "--learning-rate",
                type=Finite(min=0, min_open=True),
                default=None,
                help=f"Peak learning rate [default: {lr}, ProAgentBench section 6.6].",
            ),
            click.option(
                "--batch-size",
                type=click.IntRange(min=1),
                default=16,
                show_default=True,
                help="Examples per optimiser step.",
            ),
            click.option(
                "--micro-batch-size",
                type=click.IntRange(min=1),
                default=1,
                show_default=True,
                help="Examples per forward pass (gradient accumulation makes up the batch).",
            ),
            click.option(
                "--epochs",
                type=Finite(min=0, min_open=True),
                default=3.0,
                show_default=True,
                help="Passes over the examples.",
            ),
            click.option(
                "--max-steps",
                type=int,
                default=-1,
                show_default=True,
                help="Stop after N optimiser steps (-1: run the epochs).",
            ),
            click.option(
                "--limit",
                type=click.IntRange(min=1),
                default=None,
                help="Train on N moments drawn at random (stratified by label, --seed) from the training data.",
            ),
            click.option(
                "--max-length",
                type=click.IntRange(min=16),
                default=2048,
                show_default=True,
                help="Longest example in tokens; longer ones are left out.",
            ),
            click.option(
                "--save-steps",
                type=click.IntRange(min=1),
                default=25,
                show_default=True,
                help="Checkpoint every N steps.",
            ),
            click.option(
                "--loss-probe",
                type=click.IntRange(min=0),
                default=32,
                show_default=True,
                help="Measure the loss on this many training examples before and after training (0: skip).",
            ),
            click.option(
                "--gguf-type",
                type=click.Choice(["f16", "f32", "q8_0"]),
                default="f16",
                show_default=True,
                help="Weight type of model.gguf.",
            ),
            training_window_options(),
            click.option(
                "--seed", type=int, default=0, show_default=True, help="Seed of sampling, shuffling and initialisation."
            ),
            click.option(
                "--threads", type=click.IntRange(min=1), default=None, help="CPU threads for torch (default: all)."
            ),
        ]
        if method == "lora":
            opts += [
                click.option(
                    "--lora-r", type=click.IntRange(min=1), default=16, show_default=True, help="LoRA rank r."
                ),
                click.option(
                    "--lora-alpha",
                    type=click.IntRange(min=1),
                    default=32,
                    show_default=True,
                    help="LoRA scaling alpha.",
                ),
            ]
        for o in reversed(opts):
            f = o(f)
        return f

    return wrap


def _run(
    method: str,
    data: Path | None,
    train_data: tuple[Path, ...],
    base: str,
    out: Path,
    limit: int | None,
    window: str,
    train_fraction: float,
    seed: int,
    threads: int | None,
    **hyper,
) -> None:  # noqa: ANN003
    from ..train.data import load_split_moments, load_training_data
    from ..train.finetune import FinetuneConfig, check_base, finetune, require_train_extra, subsample

    require_train_extra()  # TrainExtraMissing (a DataError): exit 1
    check_base(base)  # DataError naming --base: exit 1
    if data is None and not train_data:
        raise click.UsageError("give --data (its train split) and/or --train-data (whole data sets)")
    seconds = window_seconds(window)
    samples, sources = [], []
    if data is not None:  # DataError (unreadable data): exit 1
        s, src = load_split_moments(data, "train", window_seconds=seconds, train_fraction=train_fraction, seed=seed)
        samples += s
        sources.append(src)
    for d in train_data:
        s, src = load_training_data(d, window_seconds=seconds, train_fraction=train_fraction, seed=seed)
        samples += s
        sources.append(src)
    if limit is not None and limit < len(samples):
        samples = subsample(samples, limit, seed)  # UsageError (--limit) when too few to hold both labels
    check_writable_dir(out, "--out")
    config = FinetuneConfig(method=method, seed=seed, **hyper)
    click.echo(
        f"proagent train {method}: {len(samples)} moments ({sum(s.label for s in samples)} positive) from "
        f"{', '.join(f'{x.path} ({x.origin}, {x.selection})' for x in sources)}; base {base}; out {out}",
        err=True,
    )
    m = finetune(
        samples,
        base,
        out,
        config,
        sources=[_source(x) for x in sources],  # DataError: mapped by kind
        echo=lambda line: click.echo(line, err=True),
        threads=threads,
    )
    before, after = m.loss_before, m.loss_after
    loss = f"; loss {before:.4f} -> {after:.4f}" if before is not None and after is not None else ""
    model = (
        f"model: {out / m.model_gguf} (evaluate: proagent eval --model local/{(out / m.model_gguf).resolve()})"
        if m.model_gguf
        else f"model: {out / str(m.model_folder)}"
    )
    click.echo(f"{m.method}: {m.n_examples} examples, {m.steps or 0} steps, {m.seconds or 0:.0f} s{loss}")
    click.echo(model)


def _source(x) -> dict:  # noqa: ANN001
    return {
        "path": x.path,
        "sha256": x.sha256,
        "origin": x.origin,
        "selection": x.selection,
        "n": x.n,
        "n_positive": x.n_positive,
    }


@click.command("sft")
@_options("sft")
def sft_cmd(**kw) -> None:  # noqa: ANN003
    """Supervised fine-tuning of every weight on labelled moments; writes model.gguf.

    Example: proagent train sft --data data/proactivebench --base smollm2-135m --out runs/sft
    """
    _run("sft", **kw)


@click.command("lora")
@_options("lora")
def lora_cmd(**kw) -> None:  # noqa: ANN003
    """LoRA fine-tuning on labelled moments; writes the adapter and the merged model.gguf.

    Example: proagent train lora --train-data ../shared/data/proactivebench-synthetic --out runs/lora-synthetic
    """
    _run("lora", **kw)
