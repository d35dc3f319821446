"""``proagent live``: the proactive agent on a growing activity log, or a replay of a recorded one."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

from ._options import Finite, RegistryHelpOption, names_help, notifier_names
from ._progress import ProgressDisplay
from ._util import check_model, check_writable_dir, parse_model_args

if TYPE_CHECKING:
    from ..live import HowModel, LiveCommandOptions, LiveOptions, ReplayProgress, RunSummary, When

__all__ = ["live_cmd"]


@click.group("live", invoke_without_command=True)
@click.option(
    "--watch",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="Follow this growing LifeTrace, ActivityWatch or screenpipe database (a .db/.sqlite, or its folder).",
)
@click.option(
    "--capture",
    "capture_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run `proagent capture --out DIR` and follow what it records.",
)
@click.option(
    "--capture-option",
    "capture_options",
    multiple=True,
    help="Pass this option on to proagent capture (repeatable), e.g. --capture-option=--no-ocr.",
)
@click.option(
    "--replay",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="Play a recorded log (ProactiveBench sessions, LifeTrace database or folder) through the loop.",
)
@click.option(
    "--speed",
    type=Finite(),
    default=60.0,
    show_default=True,
    help="Replay this many times faster than real time (0: no waiting).",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Live folder: feedback.db, decisions, pause file, page URL (default: beside the log; live/<name> for a replay).",
)
@click.option(
    "--decider",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="When-to-Assist decider folder written by `proagent train when`.",
)
@click.option(
    "--learn/--no-learn",
    default=True,
    show_default=True,
    help="Personalise the --decider from every answer (accept, dismiss, not now) before the next decision; "
    "kept in OUT/learning/ (undo: proagent live reset-learning OUT).",
)
@click.option(
    "--learn-method",
    type=click.Choice(["prior-shift", "refit", "knn", "pooled", "ensemble"]),
    default="ensemble",
    show_default=True,
    help="How answers personalise the decider (benchmarks/personalise.py --live-setting compares them; ensemble: "
    "the mean of prior-shift and knn, chosen by issue 43's pre-written rule).",
)
@click.option(
    "--cost-false-alarm",
    type=Finite(),
    default=1.0,
    show_default=True,
    help="Cost of an offer you did not need; offers at P(help) >= c_fa / (c_fa + c_miss).",
)
@click.option(
    "--cost-miss",
    type=Finite(),
    default=2.0,
    show_default=True,
    help="Cost of no offer when you needed help (same unit as --cost-false-alarm).",
)
@click.option(
    "--yes-at",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Scripted decider instead: a file of sample or event ids (one a line, or a JSON list) to say Yes at.",
)
@click.option(
    "--model",
    default="local/qwen2.5-coder-1.5b",
    show_default=True,
    help="How-to-Assist model asked only when the decider says Yes ('none': offer without one).",
)
@click.option("--model-arg", "model_args", multiple=True, help="Model argument KEY=VALUE (e.g. n_threads=1).")
@click.option("--model-base-url", default=None, help="Base URL for the model's API.")
@click.option(
    "--send-screen",
    type=click.Choice(["never", "redacted", "raw"]),
    default=None,
    help="Screen text in every prompt to the model (the offer's query, an accepted offer's help): raw, "
    "redacted (PII in screen text, titles and queries replaced by typed placeholders) or never "
    "(no screen text). Default: raw for a local/ model, redacted for any other.",
)
@click.option(
    "--notify",
    default="terminal",
    show_default=True,
    cls=RegistryHelpOption,
    help_from=names_help("Comma-separated: ", notifier_names),
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Local page port on 127.0.0.1 (0: free one).",
)
@click.option("--window", default="5m", show_default=True, help="Context window of each moment (1s .. 24h).")
@click.option(
    "--every",
    default="30s",
    show_default=True,
    help="Also decide this often within a long event (0: only at new events).",
)
@click.option(
    "--max-per-hour",
    type=click.IntRange(0),
    default=4,
    show_default=True,
    help="At most this many offers in 60 minutes.",
)
@click.option(
    "--ask-rate",
    type=click.IntRange(0, 100),
    default=None,
    help="Ask at most this many times a day, at a quiet moment the decider is most unsure of, \"Would help have "
    "been useful just now?\" (terminal: q N yes|no; the page: Yes / No); the answer is learned "
    "like an offer's. 0: never. Default: 3 a day for the first 7 days of the folder.",
)
@click.option(
    "--min-gap",
    type=Finite(0, 10080),
    default=10.0,
    show_default=True,
    help="Minutes at least between two offers (0: no gap; at most a week). At most one offer per app session unless accepted.",
)
@click.option("--cooldown", default="15m", show_default=True, help="No offer this long after a dismiss.")
@click.option("--quiet-hours", default=None, help="No offers in this local time range, e.g. 22:00-08:00.")
@click.option("--block-app", multiple=True, help="Never offer in front of this app (whole words; repeatable).")
@click.option(
    "--block-title", multiple=True, help="Never offer in front of windows whose title matches this regex (repeatable)."
)
@click.option(
    "--quiet-apps/--no-quiet-apps",
    default=True,
    show_default=True,
    help="Stay quiet in front of call, screen-sharing and full-screen apps (proagent/data/live_quiet_apps.json).",
)
@click.option(
    "--settle",
    type=Finite(0, 600),
    default=3.0,
    show_default=True,
    help="Decide a moment once its window is in front and its screen has not changed for this many seconds "
    "(no offer while typing or scrolling; 0: at the window's first screenshot).",
)
@click.option(
    "--ignore-after", default="10m", show_default=True, help="An unanswered offer counts as ignored after this long."
)
@click.option("--duration", default=None, help="Stop watching by itself after this long (e.g. 10m).")
@click.pass_context
def live_cmd(
    ctx: click.Context,
    watch: Path | None,
    capture_dir: Path | None,
    capture_options: tuple[str, ...],
    replay: Path | None,
    speed: float,
    out: Path | None,
    decider: Path | None,
    learn: bool,
    learn_method: str,
    cost_false_alarm: float,
    cost_miss: float,
    yes_at: Path | None,
    model: str,
    model_args: tuple[str, ...],
    model_base_url: str | None,
    send_screen: str | None,
    notify: str,
    port: int,
    window: str,
    every: str,
    max_per_hour: int,
    ask_rate: int | None,
    cooldown: str,
    quiet_hours: str | None,
    block_app: tuple[str, ...],
    block_title: tuple[str, ...],
    quiet_apps: bool,
    ignore_after: str,
    duration: str | None,
    min_gap: float,
    settle: float,
) -> None:
    """The proactive agent: at every new moment of an activity log it builds the benchmark's
    sample, asks the When decider (milliseconds) and, only on Yes and within the restraint
    limits, asks the model How to Assist and shows the offer. Offers, answers and every
    decision go to OUT/feedback.db (`proagent train when --feedback OUT` learns from them).
    A new window is decided once it is in front with its screenshot and screen text, and its
    screen has paused for --settle seconds. Ctrl-C prints the summary and exits with 130.
    Accepting an offer (the page, `a N` in the terminal, a notification) gets its answer from the
    same model, streamed; `f N <text>` asks a follow-up, `+ N` / `- N` rate it.

    \b
    Examples:
      proagent live --replay ../shared/data/proactivebench --yes-at yes.txt --model none --speed 0
      proagent live --watch ~/activity --decider deciders/when --notify terminal,page --model-arg n_threads=1
      proagent live pause ~/activity      # and: proagent live resume ~/activity
      proagent live reset-learning ~/activity   # forget what --learn learned from the answers
    """
    if ctx.invoked_subcommand is not None:
        return
    _check_one_source(watch, capture_dir, replay, duration)
    from ..live import parse_live_options, set_up_decider, warm_how

    opts = parse_live_options(  # UsageError naming the option: one line, exit 2
        notify=notify,
        speed=speed,
        quiet_hours=quiet_hours,
        block_app=block_app,
        block_title=block_title,
        quiet_apps=quiet_apps,
        ask_rate=ask_rate,
        yes_at=yes_at,
        settle=settle,
        window=window,
        every=every,
        max_per_hour=max_per_hour,
        min_gap=min_gap,
        cooldown=cooldown,
        ignore_after=ignore_after,
        duration=duration,
        port=port,
        model=model,
        model_base_url=model_base_url,
        send_screen=send_screen,
        watch=watch,
        capture_dir=capture_dir,
        capture_options=capture_options,
        replay=replay,
        out=out,
        decider=decider,
        learn=learn,
        learn_method=learn_method,
        cost_false_alarm=cost_false_alarm,
        cost_miss=cost_miss,
    )
    if "page" in opts.run.notify:
        from ..serve import check_port

        check_port(port)  # a taken --port refused before feedback.db is made (exit 2)
    watch_db = None
    if watch is not None:  # the watched log is checked (read-only) before anything is loaded or created
        from ..live import watched_log

        watch_db, _ = watched_log(watch)  # LifeTrace, ActivityWatch or screenpipe
    if capture_dir is not None:  # the display proagent capture needs, before the folder is made
        from ..capture import check_session

        check_session("--capture")  # a CaptureError naming --capture
    if decider is None and yes_at is None:
        raise click.UsageError("give --decider DIR (written by `proagent train when`) or --yes-at FILE (scripted)")
    from ..train.personal import decider_training_data  # the refit method's population data (live imports no train)

    chosen = set_up_decider(
        decider,
        yes_at,
        learn=learn,
        learn_method=learn_method,
        costs=opts.costs,
        population_data=decider_training_data,
        max_per_hour=max_per_hour,
    )  # UsageError, DataError: mapped by kind
    how = help_model = None
    if opts.model is not None:
        args = parse_model_args(model_args)
        check_model(opts.model, model_base_url, args)
        from ..live import HowModel, make_help_model

        click.echo(
            f"loading the How model {model} and reading its prompt"
            + (" (a local model takes up to a minute on 2 cores)" if model.startswith("local/") else "")
            + " ..."
        )
        how = HowModel(model, args, base_url=model_base_url, send_screen=send_screen)
        help_model = make_help_model(model, args, model_base_url)  # a local model: the same llama.cpp child
        took = warm_how(how, model)  # loaded, system prompt read: the first offer does not pay for either
        click.echo(f"How model ready in {took:.1f} s")
    answers = sys.stdin if "terminal" in opts.run.notify and sys.stdin.isatty() else None
    res = _run_live(
        opts,
        watch_db=watch_db,
        when=chosen.when,
        options=replace(opts.run, decider=chosen.name),
        how=how,
        answers=answers,
        on_page=lambda url: click.echo(f"offers page: {url}"),
        help_model=help_model,
    )
    if res is not None:
        _print_summary(res, chosen.when, replay is not None, learn_method, max_per_hour, opts.run.ask_rate)
        if res.interrupted:
            click.echo("stopped (Ctrl-C); run the same command again to go on where it stopped", err=True)
            ctx.exit(130)  # as a shell reports an interrupted command (proagent.cli._errors.EXIT_INTERRUPTED)


def _check_one_source(watch: Path | None, capture_dir: Path | None, replay: Path | None, duration: str | None) -> None:
    """Refuse anything but one of ``--watch``, ``--capture``, ``--replay``, and ``--duration`` with a replay.

    Raises:
        click.UsageError: as said.
    """
    sources = [x for x in (watch, capture_dir, replay) if x is not None]
    if len(sources) != 1:
        raise click.UsageError(
            "give exactly one of --watch DB_OR_DIR, --capture DIR, --replay DATA "
            "(or a subcommand: pause DIR, resume DIR, reset-learning DIR)"
        )
    if (
        duration is not None and replay is not None
    ):  # a replay ends with its log; Ctrl-C stops it, the same command resumes
        raise click.UsageError(
            "--duration applies to --watch and --capture: a replay stops at the end of its log "
            "(Ctrl-C stops it sooner; the same command resumes)"
        )


def _run_live(
    opts: LiveCommandOptions,
    *,
    watch_db: Path | None,
    when: When,
    options: LiveOptions,
    how: HowModel | None,
    answers: TextIO | None,
    on_page: Callable[[str], None],
    help_model: object = None,
) -> RunSummary:
    """Replay ``opts.replay``, or watch ``opts.watch`` (or the capture this starts in
    ``opts.capture_dir``, stopped again at the end) with the loop's ``options``; returns the run's
    result (``interrupted`` after a Ctrl-C, which ends the loop at its next step and cancels a How
    call in flight); a second Ctrl-C raises ``KeyboardInterrupt`` at once (exit 130 without the summary)."""
    watch, capture_dir, replay, out = opts.watch, opts.capture_dir, opts.replay, opts.out
    speed, send_screen = opts.speed, opts.send_screen
    import signal
    import threading

    from ..live import run_replay, run_watch, start_capture

    stop = threading.Event()

    def interrupt(signum, frame):  # noqa: ANN001, ANN202
        if stop.is_set():  # a second Ctrl-C: stop at once
            raise KeyboardInterrupt
        stop.set()

    previous = signal.signal(signal.SIGINT, interrupt)
    proc = None
    try:
        if replay is not None:
            out = out or Path("live") / (replay.resolve().stem or "replay")
            # a rich bar on a terminal, unless the terminal notifier reads answers there
            display = ProgressDisplay("replay", None, unit="moments", rich=False if answers is not None else None)

            def progress(p: ReplayProgress) -> None:
                display.total = p.total
                display.update(p.done, f"replay clock {p.clock:%Y-%m-%d %H:%M:%S}" if p.clock else "", p.left_seconds)

            try:
                return run_replay(
                    replay,
                    out,
                    when,
                    options,
                    speed=speed,
                    how=how,
                    answers=answers,
                    on_page=on_page,
                    before_write=lambda: check_writable_dir(out, "--out"),  # once the data was read
                    stop=stop,
                    help_model=help_model,
                    send_screen=send_screen,
                    on_progress=progress,
                    on_status=display.say,
                )
            finally:
                display.close()
        if capture_dir is not None:
            # proagent capture checks its options, creates the folder and takes its lock
            proc = start_capture(capture_dir, opts.capture_options)
            watch = capture_dir
        assert watch is not None
        from ..sources.lifetrace_schema import find_lifetrace_db

        log_dir = (watch_db or find_lifetrace_db(watch)).parent
        out = out or log_dir
        # the log's folder belongs to its writer (proagent capture holds its run lock); feedback.db beside it
        check_writable_dir(out, "--out", lock=out.resolve() != log_dir.resolve())
        click.echo(f"watching {watch}; decisions and feedback in {out / 'feedback.db'} (Ctrl-C stops)")
        return run_watch(
            watch_db or watch,
            out,
            when,
            options,
            how=how,
            answers=answers,
            on_page=on_page,
            duration=opts.duration_seconds,
            stop=stop,
            on_status=click.echo,
            help_model=help_model,
            send_screen=send_screen,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
        if proc is not None:
            _stop_capture(proc, capture_dir)


def _print_summary(
    res: RunSummary,
    when: When,
    replayed: bool,
    learn_method: str,
    max_per_hour: int = 4,
    ask_rate: int | None = 0,
) -> None:
    """The run's closing lines: outcomes, reasons, latencies, files written, the labels it holds
    (answers, precision at the offer budget, implicit labels, sparse questions) and what was learned."""
    from ..live import (
        ASK_DAYS,
        DEFAULT_ASK_RATE,
        FOCUS_WEIGHT,
        HORIZON_SECONDS,
        label_summary,
        learned_counts,
        summarise,
    )

    s = summarise(res.decisions)
    parts = ", ".join(f"{v} {k}" for k, v in sorted(s.outcomes.items()))
    click.echo(f"{s.moments} moments decided: {parts or 'none'}")
    if s.reasons:
        click.echo("held/skipped because: " + ", ".join(f"{k} {v}" for k, v in sorted(s.reasons.items())))
    for lat, name in ((s.decide_seconds, "decision"), (s.how_seconds, "How call"), (s.offer_seconds, "offer")):
        if lat:
            click.echo(f"{name} latency: p50 {lat.p50 * 1000:.1f} ms, p95 {lat.p95 * 1000:.1f} ms (n={lat.n})")
    click.echo(f"wrote {res.folder / 'feedback.db'}" + (f" and {res.folder / 'decisions.jsonl'}" if replayed else ""))
    lab = label_summary(res.folder)
    if lab.get("offers"):
        answered = lab["accepted"] + lab["dismissed"]
        click.echo(
            f"offers at your budget (--max-per-hour {max_per_hour}): {lab['offers']} shown, {lab['accepted']} "
            f"accepted, {lab['dismissed']} dismissed, {lab['not_now']} not now, {lab['ignored']} ignored, "
            f"{lab['open']} still open; "
            + (
                f"precision {lab['accepted'] / lab['offers']:.2f} ({lab['accepted'] / answered:.2f} of those answered)"
                if answered
                else "precision n/a (none answered)"
            )
        )
    if lab:
        click.echo(
            f"implicit labels of quiet moments: {lab['missed']} missed (own LLM use within "
            f"{HORIZON_SECONDS:g} s), {lab['quiet_focus']} quiet_focus (kept working, weight {FOCUS_WEIGHT:g})"
            + (f", {lab['pending']} waiting for their horizon" if lab.get("pending") else "")
        )
    if ask_rate is None or ask_rate or lab.get("asked"):
        open_ = lab["asked"] - lab["asked_yes"] - lab["asked_no"]
        click.echo(
            f"questions ({f'{DEFAULT_ASK_RATE} a day for the first {ASK_DAYS} days' if ask_rate is None else f'--ask-rate {ask_rate} a day'}): "
            f"{lab['asked']} asked, {lab['asked_yes']} yes, "
            f"{lab['asked_no']} no, {open_} unanswered"
        )
    counts = learned_counts(when)
    if counts is not None:
        answers, asked, implicit = counts.answers, counts.questions, counts.implicit
        click.echo(
            f"learned from {answers} answer{'s' if answers != 1 else ''}"
            + (f", {asked} answered question{'s' if asked != 1 else ''}" if asked else "")
            + (f" and {implicit} implicit label{'s' if implicit != 1 else ''}" if implicit else "")
            + f" ({learn_method}) in "
            f"{res.folder / 'learning'}; forget them: proagent live reset-learning {res.folder}"
        )
        if counts.regime:
            click.echo(f"deciding now: {counts.regime}")


def _stop_capture(proc, folder: Path | None) -> None:  # noqa: ANN001
    """Stop the capture this command started: its own stop command, else SIGTERM to its pid."""
    from ..capture import send_command

    try:
        if proc.poll() is None and folder is not None:
            send_command(folder, "stop", wait=15.0)
    except Exception:  # noqa: BLE001 (any failure to stop cleanly falls back to terminating our child)
        pass
    if proc.poll() is None:
        proc.terminate()
    proc.wait(20)


@live_cmd.command("pause")
@click.argument("folder", metavar="DIR", type=click.Path(exists=True, file_okay=False, path_type=Path))
def pause_cmd(folder: Path) -> None:
    """Pause the live agent writing to DIR: it keeps reading, decides and offers nothing."""
    from ..live import pause

    pause(folder)
    click.echo(f"live agent in {folder} paused (proagent live resume {folder} to go on)")


@live_cmd.command("reset-learning")
@click.argument("folder", metavar="DIR", type=click.Path(exists=True, file_okay=False, path_type=Path))
def reset_learning_cmd(folder: Path) -> None:
    """Forget what the live decider in DIR learned from your answers (feedback.db is kept);
    the next run starts again from the population decider."""
    from ..live import reset_learning

    n = reset_learning(folder)  # DataError: exit 1
    click.echo(
        f"forgot {n} learned answer{'s' if n != 1 else ''} in {folder}; the next run starts from the population "
        f"decider (answers stay in {folder / 'feedback.db'})"
    )


@live_cmd.command("resume")
@click.argument("folder", metavar="DIR", type=click.Path(exists=True, file_okay=False, path_type=Path))
def resume_cmd(folder: Path) -> None:
    """Resume the live agent writing to DIR."""
    from ..live import resume

    was = resume(folder)
    click.echo(f"live agent in {folder} resumed" if was else f"live agent in {folder} was not paused")
