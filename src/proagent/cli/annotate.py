"""``proagent annotate``: find the LLM-use events of a log and extract their conversations and intentions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import DataError
from ._options import ray_option
from ._util import (
    DEFAULT_MODEL,
    check_can_create,
    check_model,
    check_writable_dir,
    parse_model_args,
    run_eval_set,
    slug,
)

__all__ = ["annotate_cmd"]

HEARTBEAT_SECONDS = 60.0
"""Longest silence of a run: while an event's model call runs, a line every this many seconds."""


class _EventLines:
    """The model run's progress lines (a :class:`~proagent.bench.progress.SampleListener`; issue 47
    item 4: 7.5 silent minutes before the first line, an estimate from the plan's pace): a line as
    the run starts, one after each event, one every :data:`HEARTBEAT_SECONDS` while an event runs;
    the time left at the measured pace (:class:`~proagent.annotate.pace.Pace`)."""

    def __init__(self, what: str = "annotate", unit: str = "events") -> None:
        self.what, self.unit = what, unit
        self.display: Any = None
        self.pace: Any = None
        self._stop: Any = None

    def _line(self) -> None:
        d, pace = self.display, self.pace
        if d is None or pace is None:
            return
        per = pace.per_event()
        detail = (
            "loading the model and asking about the first"
            if per is None and not pace.done
            else f"{per:.0f} s per event measured"
            + (f", this one {pace.running():.0f} s so far" if pace.done < (d.total or 0) else "")
        )
        d.update(pace.done, detail, pace.left(), force=True)

    def task_start(self, total: int | None) -> None:
        import threading

        from ..annotate.pace import Pace
        from ._progress import ProgressDisplay

        self.task_end()
        self.display = ProgressDisplay(self.what, total, unit=self.unit, rich=False)
        self.pace = Pace(total or 0)
        self.pace.start()
        self._line()
        stop = self._stop = threading.Event()

        def beat() -> None:
            while not stop.wait(HEARTBEAT_SECONDS):
                self._line()

        threading.Thread(target=beat, name="annotate-progress", daemon=True).start()

    def sample_end(self, done: int) -> None:
        if self.pace is not None:
            while self.pace.done < done:
                self.pace.finished()
            self._line()

    def task_end(self) -> None:
        if self._stop is not None:
            self._stop.set()
            self._stop = None
        if self.display is not None:
            self.display.close()
            self.display = None


def _annotator(value: str) -> tuple[str, str]:
    """``text:MODEL`` / ``vlm:MODEL`` (a bare MODEL is text mode) -> (mode, model)."""
    mode, sep, model = value.partition(":")
    if sep and mode in ("text", "vlm") and model:
        return mode, model
    if sep and mode in ("text", "vlm"):
        raise click.BadParameter(f"{value!r}: name the model after '{mode}:'", param_hint="--annotator")
    return "text", value


@click.command("annotate")
@click.argument("data", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Write an annotated processed copy here (OUT/<user>/lifetrace_privacy_processed.db + screenshots/, "
    "OUT/annotations.jsonl). Required for a raw log, which is never modified.",
)
@click.option(
    "--annotator",
    default=f"text:{DEFAULT_MODEL}",
    show_default=True,
    help="text:MODEL (OCR text to any model) or vlm:MODEL (screenshots to a vision model, e.g. "
    "vlm:openai-api/vllm/Qwen2.5-VL-7B-Instruct).",
)
@click.option(
    "--all",
    "all_events",
    is_flag=True,
    default=False,
    help="Ask the model about every event, not only those whose app, title or screen text names an LLM platform.",
)
@click.option(
    "--ocr",
    type=click.Choice(["auto", "db", "image"]),
    default="auto",
    show_default=True,
    help="Screen text: the database's OCR rows, else RapidOCR on the image (auto); rows only (db); always the image.",
)
@click.option(
    "--attempts",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Model calls per event before the default annotation.",
)
@click.option("--model-base-url", default=None, help="Base URL of an OpenAI-compatible server.")
@click.option(
    "--model-arg", "model_arg", multiple=True, help="Model argument KEY=VALUE (repeatable), e.g. n_threads=1."
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help="Ask about the first N candidate events only (the rest stay pending).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Generation seed.")
@click.option(
    "--log-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="inspect log folder (default: logs/annotate-<data>-<model>). Re-running resumes.",
)
@click.option(
    "--display",
    type=click.Choice(["full", "rich", "plain", "log", "none"]),
    default=None,
    help="inspect progress display.",
)
@ray_option("the events")
def annotate_cmd(
    data: Path,
    out: Path | None,
    annotator: str,
    all_events: bool,
    ocr: str,
    attempts: int,
    model_base_url: str | None,
    model_arg: tuple[str, ...],
    limit: int | None,
    seed: int,
    log_dir: Path | None,
    display: str | None,
    ray_address: str | None,
) -> None:
    """Annotate the events of a LifeTrace log (ProAgentBench section 5.3): which are LLM use, on which
    platform, what the user asked and the model answered, a <= 20-word summary, the intention.

    A processed log (curated, ProAgentBench layout) is annotated in place; a raw one needs --out,
    and so does an ActivityWatch or screenpipe log (read through a LifeTrace copy).

    Example: proagent annotate data/curated --annotator text:local/qwen2.5-coder-1.5b --model-arg n_threads=1
    """
    from ..annotate import annotation_summary, annotations_from_log, plan_annotation, write_in_place, write_out
    from ..annotate.writer import ANNOTATIONS_FILE

    mode, model = _annotator(annotator)
    if ray_address is not None:
        from ..scale import require_ray

        require_ray()
    args = parse_model_args(model_arg)
    if log_dir is None:
        log_dir = Path("logs") / slug(
            f"annotate-{data.resolve().name}-{mode}-{model.split('/')[-1]}"
            + ("-all" if all_events else "")
            + (f"-limit{limit}" if limit else "")
        )
    _check_logs(data, out)
    if out is not None:
        check_can_create(out, "--out")  # before the model run, not after it
    check_model(model, model_base_url, args, option="--annotator")  # before the log folder or the header
    check_writable_dir(log_dir, "--log-dir")
    ocr_cache = log_dir / "ocr-cache.json"
    click.echo(f"proagent annotate: reading {data} (the first pass and the OCR of the sampled screenshots)", err=True)
    plan = plan_annotation(
        data, all_events=all_events, ocr=ocr, ocr_cache=ocr_cache, progress=_reading_lines()
    )  # DataError: mapped by kind
    n_asked = len(plan.asked)
    click.echo(
        f"proagent annotate: {len(plan.events)} events of {len(plan.logs)} user(s); the first pass names an "
        f"LLM platform in {sum(p.hit is not None for p in plan.events)}; asking {model} ({mode} mode) about "
        f"{min(n_asked, limit or n_asked)}; log dir {log_dir}",
        err=True,
    )
    log = None
    if n_asked:
        task_args = dict(
            data=str(data),
            mode=mode,
            all_events=all_events,
            ocr=ocr,
            ocr_cache=str(ocr_cache),
            attempts=attempts,
            seed=seed,
        )
        log = _ask_model(
            task_args,
            log_dir,
            model,
            model_base_url=model_base_url,
            model_args=args,
            limit=limit,
            display=display,
            ray_address=ray_address,
        )
    annotations, pending = annotations_from_log(plan, log, model=annotator)
    summary = annotation_summary(data, annotator, annotations, pending, log.location if log is not None else None)
    try:
        if out is not None:
            files = write_out(data, plan, annotations, out, summary)
            ann_file = out / ANNOTATIONS_FILE
        else:
            ann_file = (data if data.is_dir() else data.parent) / ANNOTATIONS_FILE
            files = write_in_place(plan, annotations, ann_file)
    except OSError as e:
        raise click.ClickException(f"{out or data}: cannot write there ({e.strerror or e})") from None
    rate = summary.success_rate
    click.echo(
        f"{summary.llm_events} LLM events of {summary.events} ({summary.annotated} annotated by the "
        f"model, {summary.default} default annotations after failed answers, {summary.not_candidate} "
        f"not asked: no LLM platform named or no chat turn on screen"
        f"{f', {pending} pending (--limit)' if pending else ''}); success rate "
        + (
            f"{rate:.3f} ({summary.complete} of {summary.asked - pending} asked: answer read with the platform "
            "and intention known, or read as not LLM use)"
            if rate is not None
            else "n/a (no event asked)"
        )
    )
    for f in files:
        click.echo(f"wrote {f}")
    click.echo(f"wrote {ann_file}")
    target = out or data
    click.echo(f"next: proagent eval --data {target} --annotations {ann_file}")


def _check_logs(data: Path, out: Path | None) -> None:
    """Refuse an encrypted capture, and without ``--out`` a raw LifeTrace database or another
    recorder's log (annotate rewrites only processed copies); with ``--out``, an unusable one.

    Raises:
        proagent.errors.DataError: naming the database or folder.
    """
    from ..annotate import find_logs
    from ..annotate.writer import check_out
    from ..vault import vault_of

    encrypted = [db for db in find_logs(data).values() if vault_of(db) is not None]
    if encrypted:  # annotate writes a processed copy in the clear: curate the capture first
        raise DataError(
            encrypted[0].parent,
            "an encrypted capture (capture --encrypt): annotate writes a plain "
            "processed copy, so run proagent curate on it first and annotate "
            "the curated folder",
        )
    if out is not None:
        check_out(data, out, option="--out")
    else:
        raw = [db for db in find_logs(data).values() if not _processed(db)]
        if raw:
            raise DataError(
                raw[0],
                "is a raw LifeTrace database; annotate never modifies one: give --out OUT "
                "to write an annotated processed copy",
            )


def _reading_lines() -> Any:
    """A ``progress(events_read)`` callback for :func:`~proagent.annotate.plan_annotation`: a line
    every :data:`HEARTBEAT_SECONDS` while the log is read (OCR of many screenshots takes minutes)."""
    import time

    from ..bench.progress import duration_text

    start = last = time.monotonic()

    def progress(done: int) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= HEARTBEAT_SECONDS:
            last = now
            click.echo(f"annotate: read {done} events, {duration_text(now - start)} elapsed", err=True)

    return progress


def _ask_model(
    task_args: dict[str, Any],
    log_dir: Path,
    model: str,
    *,
    model_base_url: str | None,
    model_args: dict[str, Any],
    limit: int | None,
    display: str | None,
    ray_address: str | None,
) -> Any:
    """Run the annotation task of ``task_args`` here, or under ``--ray`` as shards on the cluster
    merged into one log (:mod:`proagent.scale`); returns inspect's log.

    Raises:
        click.ClickException: the run did not finish (the message says how to resume).
    """
    from ..annotate import annotate_events

    task = annotate_events(**task_args)  # DataError, UsageError: mapped by kind
    if ray_address is None:
        from ..bench.progress import sample_progress

        # plain lines beside inspect's display (it draws on the terminal): at the start, after each
        # event and every minute while one runs, with the time left at the measured pace
        with sample_progress(_EventLines()):
            return run_eval_set(
                task, log_dir, model, model_base_url=model_base_url, model_args=model_args, limit=limit, display=display
            )
    from functools import partial

    from ..errors import RunError
    from ..scale import eval_on_ray
    from ._errors import click_error

    try:
        return eval_on_ray(
            task,
            partial(annotate_events, **task_args),
            log_dir,
            model,
            address=ray_address,
            model_base_urls=[model_base_url] if model_base_url else [],
            model_args=model_args,
            limit=limit,
            display=display,
            echo=lambda m: click.echo(m, err=True),
        )
    except RunError as e:
        raise click_error(e, folder_option="--log-dir") from None


def _processed(db: Path) -> bool:
    from ..sources.lifetrace_schema import detect_schema
    from ..sources.load import LIFETRACE, READERS, activity_log_kind

    kind = activity_log_kind(db)
    if kind != LIFETRACE:  # read through a raw LifeTrace copy
        raise DataError(
            db,
            f"is {READERS[kind].title} log; annotate never modifies one: give --out OUT to write an "
            "annotated processed copy",
        )
    return detect_schema(db).is_processed
