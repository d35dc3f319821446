"""``proagent train``: fit models on labelled moments (``proagent train when``; ``sft`` and ``lora`` in :mod:`._finetune`)."""

from __future__ import annotations

from pathlib import Path

import click

from ._finetune import lora_cmd, sft_cmd
from ._options import Finite, training_data_options, training_window_options
from ._util import check_writable_dir, window_seconds

__all__ = ["train"]


@click.group()
def train() -> None:
    """Train models on labelled moments (never on what you evaluate)."""


@train.command("when")
@training_data_options()
@click.option(
    "--feedback",
    "feedback",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="A proagent live folder (or its feedback.db): accepted offers as 'help needed', dismissed as not (repeatable).",
)
@click.option(
    "--teacher",
    default=None,
    help="Teacher model (any inspect model, e.g. openai/gpt-4o) that labels the --unlabelled moments (distillation).",
)
@click.option(
    "--unlabelled",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="An activity log whose every moment the --teacher labels; its own labels are never read (repeatable).",
)
@click.option("--teacher-base-url", default=None, help="Base URL of the teacher's OpenAI-compatible API.")
@click.option("--teacher-arg", "teacher_args", multiple=True, help="Teacher model argument KEY=VALUE (repeatable).")
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="Decider folder to write (model.skops, manifest.json, report.md).",
)
@click.option(
    "--model",
    type=click.Choice(["logreg", "gbm", "rank"]),
    default="logreg",
    show_default=True,
    help="Logistic regression (class-weighted, strongly regularised), gradient boosting, or a pairwise ranking "
    "logistic regression on (positive - negative) moments of the same session (ranks a new person's moments).",
)
@click.option(
    "--weights",
    type=click.Choice(["balanced", "session"]),
    default="balanced",
    show_default=True,
    help="Weigh the classes equally over all moments, or every session equally with its positives and negatives "
    "half each (what only tells sessions apart then carries no weight; logreg, rank).",
)
@click.option(
    "--calibration-folds",
    "calibration",
    type=click.Choice(["moments", "sessions", "none"]),
    default="moments",
    show_default=True,
    help="Folds of the sigmoid calibration: over moments, or grouped by session; none: no calibration "
    "(the threshold is still chosen on out-of-fold probabilities grouped by session).",
)
@click.option(
    "--objective",
    default="f1",
    show_default=True,
    help="Threshold objective on cross-validated training data: f1, accuracy, balanced-accuracy or precision-at-recall:R.",
)
@click.option(
    "--target",
    type=click.Choice(["help", "help-or-candidates"]),
    default="help",
    show_default=True,
    help="Training target: the help label, or also 1 where the reference agent proposed candidate tasks "
    "(ProactiveBench; thresholds are still chosen on the help label).",
)
@click.option(
    "--cv",
    "cv",
    type=click.Choice(["user", "moments"]),
    default="user",
    show_default=True,
    help="Folds for choosing the threshold: grouped by user (decider for new users) or over moments (for the same users later).",
)
@click.option(
    "--c",
    "c",
    type=Finite(min=1e-6),
    default=0.003,
    show_default=True,
    help="Logistic regression: inverse L2 strength.",
)
@click.option(
    "--features",
    default=None,
    help="Comma-separated feature groups (embedding, similarity, behaviour, keywords, clock, weekday); default embedding,similarity,behaviour,keywords.",
)
@training_window_options()
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of folds, boosting and negative sampling.")
def when_cmd(
    data: Path | None,
    train_data: tuple[Path, ...],
    feedback: tuple[Path, ...],
    teacher: str | None,
    unlabelled: tuple[Path, ...],
    teacher_base_url: str | None,
    teacher_args: tuple[str, ...],
    out: Path,
    model: str,
    weights: str,
    calibration: str,
    objective: str,
    target: str,
    cv: str,
    c: float,
    features: str | None,
    window: str,
    train_fraction: float,
    seed: int,
) -> None:
    """Fit a When-to-Assist decider and write it to --out.

    \b
    Examples:
      proagent train when --data data/proactivebench --out deciders/dev
      proagent train when --teacher openai/gpt-4o --unlabelled ~/activity --out deciders/mine
    """
    from rich.progress import Progress

    from ..agent.decider import EmbeddingCache, moment_texts, parse_feature_groups
    from ..train.assemble import assemble_training_set
    from ..train.when import WhenConfig, check_out, parse_objective, train_decider

    if bool(teacher) != bool(unlabelled):
        raise click.UsageError("--teacher MODEL and --unlabelled DATA go together")
    if data is None and not train_data and not feedback and not unlabelled:
        raise click.UsageError(
            "give --data (its train split), --train-data (whole data sets), --feedback (live folders) "
            "and/or --teacher MODEL --unlabelled DATA"
        )
    teacher_model = None
    if teacher:
        from ..live import HowModel
        from ._util import check_model, parse_model_args

        targs = parse_model_args(teacher_args)
        check_model(teacher, teacher_base_url, targs, option="--teacher")
        teacher_model = HowModel(teacher, targs, base_url=teacher_base_url)
    seconds = window_seconds(window)
    parse_objective(objective)  # UsageError (--objective)
    groups = parse_feature_groups(features)  # UsageError (--features)
    check_out(out, option="--out")  # a non-empty folder that is not an earlier decider folder: exit 1, nothing written
    training = assemble_training_set(
        data=data,
        train_data=train_data,
        feedback=feedback,
        unlabelled=unlabelled,
        teacher=teacher_model,
        teacher_name=teacher,
        window_seconds=seconds,
        train_fraction=train_fraction,
        seed=seed,
        echo=lambda m: click.echo(m, err=True),
    )
    check_writable_dir(out, "--out")
    for src in training.sources:
        click.echo(
            f"{src.path}: {src.n} {src.origin} moments ({src.selection}), positive rate {src.positive_rate:.3f}",
            err=True,
        )
    cache = EmbeddingCache()
    todo = (
        cache.missing([t for s in training.samples for t in moment_texts(s)])
        if "embedding" in groups.groups or "similarity" in groups.groups
        else 0
    )
    cfg = WhenConfig(
        model=model, objective=objective, c=c, cv=cv, seed=seed, target=target, weights=weights, calibration=calibration
    )
    with Progress(transient=True) as bar:  # too few moments of a class: DataError
        job = bar.add_task("embedding event texts", total=max(todo, 1))
        manifest = train_decider(
            training, out, cfg, groups, cache=cache, progress=lambda n: bar.advance(job, n), window_seconds=seconds
        )
    m = manifest.cv
    click.echo(
        f"decider: {manifest.n} moments ({manifest.n_positive} positive), {model}, objective {objective}, "
        f"threshold {manifest.threshold:.4f}"
    )
    click.echo(
        f"cross-validated ({m['folds']} folds, by {cv}): AUC {m['auc']:.3f}, accuracy {m['accuracy']:.3f}, "
        f"precision {m['precision']:.3f}, recall {m['recall']:.3f}, F1 {m['f1']:.3f}"
    )
    if manifest.warning:
        click.echo(f"Warning: {manifest.warning}", err=True)
    click.echo(
        f"wrote {out} (model.skops, manifest.json, report.md); evaluate: proagent eval --data DATA --decider {out}"
    )


train.add_command(sft_cmd)
train.add_command(lora_cmd)
