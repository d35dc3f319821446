"""``proagent live``'s options parsed once (:func:`parse_live_options` -> :class:`LiveCommandOptions`),
its decider set-up: a scripted decider (``--yes-at``), or a decider folder at the cost threshold
(``--cost-false-alarm``, ``--cost-miss``), learning from the answers or not (``--learn``,
``--learn-method``); and what it learned, for the run's last line.

The command parses and prints; the rules (which file is a script, which costs can be used, which
folder is a decider) raise :class:`~proagent.errors.UsageError` / :class:`~proagent.errors.DataError`
naming the option, and ``cli/_errors.py`` maps them to one line and an exit code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataError, UsageError
from ._agent import ScriptedDecider, When
from ._notify import NOTIFIERS
from ._restraint import RestraintConfig, parse_quiet_hours
from ._run import LiveOptions
from ._sources import MAX_SPEED, MIN_SPEED

__all__ = [
    "LearnedCounts",
    "LiveCommandOptions",
    "LiveDecider",
    "learned_counts",
    "parse_live_options",
    "scripted_decider",
    "set_up_decider",
]


@dataclass(frozen=True)
class LiveCommandOptions:
    """``proagent live``'s options, parsed (:func:`parse_live_options`): where moments come from,
    what decides, the How model, and the loop's :class:`~proagent.live.LiveOptions`."""

    run: LiveOptions
    """The loop's options (recorded in ``run.json``; its ``decider`` name is filled in by the set-up)."""
    watch: Path | None = None
    capture_dir: Path | None = None
    capture_options: tuple[str, ...] = ()
    replay: Path | None = None
    speed: float = 60.0
    """Replay speed (0: no waiting)."""
    out: Path | None = None
    duration_seconds: float | None = None
    """``--duration``: stop watching after this long (seconds); ``None``: until Ctrl-C."""
    decider: Path | None = None
    yes_at: Path | None = None
    learn: bool = True
    learn_method: str = "ensemble"
    costs: tuple[float, float] = (1.0, 2.0)
    """``(--cost-false-alarm, --cost-miss)``."""
    model: str | None = None
    """The How model; ``None``: offers without one (``--model none``)."""
    model_args: Mapping[str, str] = field(default_factory=dict)
    model_base_url: str | None = None
    send_screen: str | None = None


def _seconds(text: str, option: str, *, zero: bool = False) -> float:
    """A duration option in seconds (1 s .. 24 h; with ``zero``, also ``0``/``off``/``none``: 0).

    Raises:
        proagent.errors.UsageError: naming ``option``.
    """
    from ..bench.samples import parse_window

    if zero and str(text).strip() in ("0", "0s", "off", "none"):
        return 0.0
    return parse_window(text, what=None, option=option)


def parse_live_options(
    *,
    notify: str = "terminal",
    speed: float = 60.0,
    quiet_hours: str | None = None,
    block_app: tuple[str, ...] = (),
    block_title: tuple[str, ...] = (),
    quiet_apps: bool = True,
    ask_rate: int | None = None,
    yes_at: Path | None = None,
    settle: float = 3.0,
    window: str = "5m",
    every: str = "30s",
    max_per_hour: int = 4,
    min_gap: float = 10.0,
    cooldown: str = "15m",
    ignore_after: str = "10m",
    duration: str | None = None,
    port: int = 0,
    model: str = "none",
    model_args: Mapping[str, str] | None = None,
    model_base_url: str | None = None,
    send_screen: str | None = None,
    watch: Path | None = None,
    capture_dir: Path | None = None,
    capture_options: tuple[str, ...] = (),
    replay: Path | None = None,
    out: Path | None = None,
    decider: Path | None = None,
    learn: bool = True,
    learn_method: str = "ensemble",
    cost_false_alarm: float = 1.0,
    cost_miss: float = 2.0,
) -> LiveCommandOptions:
    """``proagent live``'s option values (as click gives them; ``min_gap`` in minutes, durations as
    text) as one record, each checked once. Checks nothing on disk (the watched log, the port, the
    display, the decider folder: the command does, in that order, after this).

    Raises:
        proagent.errors.UsageError: naming the option: an unknown notifier; a speed that is not 0
            or within [MIN_SPEED, MAX_SPEED]; bad quiet hours or block-title regex; ``--ask-rate``
            with a scripted decider or without a terminal or page to ask on; a NaN ``--settle``; a
            duration that is not 1 s .. 24 h.
    """
    names = tuple(n.strip() for n in notify.split(",") if n.strip())
    if not names or any(n not in NOTIFIERS for n in names):
        raise UsageError("--notify", f"{notify!r}: choose from {', '.join(NOTIFIERS)}")
    if not (speed == 0 or MIN_SPEED <= speed <= MAX_SPEED):  # NaN fails both
        raise UsageError("--speed", f"{speed:g}: must be 0 (no waiting) or between {MIN_SPEED:g} and {MAX_SPEED:g}")
    qh = parse_quiet_hours(quiet_hours)
    for t in block_title:
        try:
            re.compile(t)
        except re.error as e:
            raise UsageError("--block-title", f"{t!r}: {e}") from None
    if ask_rate and yes_at is not None:
        raise UsageError(
            "--ask-rate", f"{ask_rate}: a scripted decider (--yes-at) has no uncertainty to ask about; give --decider"
        )
    if ask_rate and not {"terminal", "page"} & set(names):
        raise UsageError(
            "--ask-rate", f"{ask_rate}: questions are shown by --notify terminal or page, not {','.join(names)}"
        )
    if ask_rate is None and (yes_at is not None or not {"terminal", "page"} & set(names)):
        ask_rate = 0  # the default questions need a learned decider and a terminal or page to ask on
    if settle != settle:  # NaN passes click's range
        raise UsageError("--settle", f"{settle}: seconds from 0 to 600")
    run = LiveOptions(
        window_seconds=_seconds(window, "--window"),
        every_seconds=_seconds(every, "--every", zero=True),
        notify=names,
        port=port,
        restraint=RestraintConfig(
            max_per_hour=max_per_hour,
            min_gap_seconds=60.0 * min_gap,
            cooldown_seconds=_seconds(cooldown, "--cooldown", zero=True),
            quiet_hours=qh,
            block_apps=tuple(block_app),
            block_titles=tuple(block_title),
            quiet_apps=quiet_apps,
        ),
        ignore_after_seconds=_seconds(ignore_after, "--ignore-after"),
        model="" if model == "none" else model,
        settle_seconds=settle,
        ask_rate=ask_rate,
    )
    return LiveCommandOptions(
        run=run,
        watch=watch,
        capture_dir=capture_dir,
        capture_options=tuple(capture_options),
        replay=replay,
        speed=speed,
        out=out,
        duration_seconds=_seconds(duration, "--duration") if duration else None,
        decider=decider,
        yes_at=yes_at,
        learn=learn,
        learn_method=learn_method,
        costs=(cost_false_alarm, cost_miss),
        model=None if model == "none" else model,
        model_args=dict(model_args or {}),
        model_base_url=model_base_url,
        send_screen=send_screen,
    )


@dataclass(frozen=True)
class LiveDecider:
    """The When decider of a live run (:func:`set_up_decider`)."""

    when: When
    """Sample -> P(help), with its threshold."""
    name: str
    """What decides, for ``run.json``: ``scripted:PATH``, or the folder with its threshold, costs and learning."""
    learn_method: str | None = None
    """How it learns from the answers (``--learn-method``); ``None``: it does not."""


def scripted_decider(path: Path) -> ScriptedDecider:
    """``--yes-at FILE``: the sample or event ids to say Yes at (one a line, ``#`` comments, or a
    JSON list of strings or numbers).

    Raises:
        proagent.errors.UsageError: unreadable, or not a list of ids (``--yes-at``, exit 2).
    """
    try:
        text = path.read_text("utf-8")
        ids = json.loads(text) if text.lstrip().startswith("[") else [ln.strip() for ln in text.splitlines()]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UsageError("--yes-at", f"{path}: {e}") from None
    if not isinstance(ids, list) or any(not isinstance(i, (str, int)) or isinstance(i, bool) for i in ids):
        raise UsageError(
            "--yes-at",
            f"{path}: expected sample or event ids (one a line, or a JSON list of strings or numbers), not a data file",
        )
    return ScriptedDecider(yes={str(i) for i in ids if str(i).strip() and not str(i).startswith("#")})


def set_up_decider(
    decider: Path | None,
    yes_at: Path | None = None,
    *,
    learn: bool = False,
    learn_method: str = "ensemble",
    costs: tuple[float, float] = (1.0, 2.0),
    population_data: Callable[[Any], Any] | None = None,
    max_per_hour: int | None = None,
) -> LiveDecider:
    """The decider of a live run: the script ``yes_at`` when given, else the ``decider`` folder
    offering at P(help) >= ``c_fa / (c_fa + c_miss)`` of ``costs``
    (:func:`proagent.agent.decider.cost_threshold`), personalised from every answer with ``learn``
    (:func:`~proagent.live.load_learning_when`; ``population_data(decider) -> (X, y)`` gives the
    ``refit`` method the decider's training moments: ``proagent.train.personal.decider_training_data``,
    passed in by the command, since live does not import train). A learning decider decides day one by
    rank, filling ``max_per_hour`` (``--max-per-hour``; :class:`~proagent.live.LearningWhen`), until
    the person gave :data:`~proagent.live._learn.DAY_ONE_LABELS` labels; ``None``: the cost threshold
    from the start. Loaded now (its embedding model too).

    Raises:
        proagent.errors.UsageError: neither is given (``--decider``); as :func:`scripted_decider`; a
            cost that is not a positive number (``--cost-false-alarm/--cost-miss``).
        proagent.errors.DataError: not a usable decider folder, or its training data is gone (``--decider``, exit 1).
    """
    if yes_at is not None:
        return LiveDecider(scripted_decider(yes_at), f"scripted:{yes_at}")
    if decider is None:
        raise UsageError(
            "--decider", "give --decider DIR (written by `proagent train when`) or --yes-at FILE (scripted)"
        )
    from ..agent.decider import LearnConfig, cost_threshold
    from ._learn import load_learning_when
    from ._when import load_when

    threshold = cost_threshold(*costs)  # UsageError naming both cost options
    name = f"{decider} (threshold {threshold:.4f} from costs {costs[0]:g}:{costs[1]:g}"
    try:
        if not learn:
            return LiveDecider(load_when(decider, threshold), name + ", not learning)")
        when = load_learning_when(
            decider, LearnConfig(method=learn_method), threshold, costs, population_data, max_per_hour=max_per_hour
        )
        return LiveDecider(when, name + f", learning: {learn_method})", learn_method)
    except DataError as e:  # the folder's rule names no option: this is the one that named the folder
        if e.option is not None:
            raise
        raise DataError(e.path, e.problem, option="--decider") from None
    except OSError as e:
        raise DataError(e.filename or decider, e.strerror or str(e), option="--decider") from None


@dataclass(frozen=True)
class LearnedCounts:
    """What a learning decider learned from in a run (the last line of ``proagent live``)."""

    answers: int
    """Answers to offers."""
    questions: int
    """Answered sparse questions (``--ask-rate``)."""
    implicit: int
    """Implicit labels of quiet moments."""
    regime: str = ""
    """How it offers now (:meth:`proagent.live.LearningWhen.describe_regime`): day one by rank, or the cost threshold."""


def learned_counts(when: When) -> LearnedCounts | None:
    """What ``when`` learned from, when it is a learning decider (:class:`~proagent.live.LearningWhen`), else ``None``."""
    from ._learn import LearningWhen

    if not isinstance(when, LearningWhen):
        return None
    implicit = sum(1 for r in when.learned if r.get("implicit_id") is not None)
    asked = sum(1 for r in when.learned if r.get("question_id") is not None)
    return LearnedCounts(
        answers=when.model.n - implicit - asked, questions=asked, implicit=implicit, regime=when.describe_regime()
    )
