"""The options of the When/How-to-Assist task and of ``proagent eval``, parsed once.

:func:`parse_assist_options` is the one parser of the task's arguments: ``proagent eval``
calls it at the edge (through :func:`parse_eval_options`), ``inspect eval proagent/assist -T
window=...`` goes through it inside the task (:func:`proagent.bench.tasks.assist`), and a Ray
worker of ``eval --ray`` receives the parsed :class:`AssistOptions` (it builds the task with
:func:`proagent.bench.tasks.build_assist`, nothing to parse again). Every bad value is one
:class:`~proagent.errors.UsageError` naming the option, with the same message on every path.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..io import slug

__all__ = [
    "AssistOptions",
    "EvalOptions",
    "MODALITIES",
    "SPLITS",
    "Window",
    "eval_log_dir",
    "parse_assist_options",
    "parse_eval_options",
    "parse_window_option",
]

SPLITS: tuple[str, ...] = ("test", "train", "all")
"""``--split``: the time-based split evaluated (``all``: both)."""
MODALITIES: tuple[str, ...] = ("text", "image")
"""``--modality``: the current screen as OCR text, or the screenshot itself (ProAgentBench Appendix F.2)."""


@dataclass(frozen=True)
class Window:
    """A context window: its length and the spelling it was given in."""

    seconds: float
    """Length, 1 s .. 24 h (:func:`proagent.bench.samples.parse_window`)."""
    text: str
    """As given (``5m``, ``300``): the task argument inspect records, so a resumed run's
    arguments are those of the run it resumes."""


def parse_window_option(text: str | float, option: str = "--window") -> Window:
    """``text`` (``5m``, ``90s``, ``300``) as a :class:`Window`.

    Raises:
        proagent.errors.UsageError: not a window of 1 s .. 24 h (``option``, exit 2).
    """
    from .samples import parse_window

    return Window(parse_window(text, option=option), str(text))


@dataclass(frozen=True)
class AssistOptions:
    """The arguments of the ``assist`` task, parsed (:func:`parse_assist_options`); see
    :func:`proagent.bench.tasks.assist` for what each one does."""

    data: str
    method: str = "zero-shot"
    window: Window = Window(300.0, "5m")
    split: str = "test"
    train_fraction: float = 0.5
    seed: int = 0
    sc_samples: int = 5
    sc_temperature: float = 0.7
    images: bool = False
    annotations: tuple[str, ...] = ()
    memory: str = "none"
    candidates: bool = False
    logprobs: bool = False
    """Request log-probabilities (always with a ``threshold``)."""
    threshold: float | None = None
    decider: str | None = None
    modality: str = "text"
    finetuned: str | None = None

    def task_args(self) -> dict[str, Any]:
        """The keyword arguments of :func:`~proagent.bench.tasks.assist` that make this task, as
        ``proagent eval`` has always passed them (inspect records them in the log, and a resumed
        run is matched by them): the always-given ones, then each other one that is not its default."""
        out: dict[str, Any] = dict(
            data=self.data,
            method=self.method,
            window=self.window.text,
            split=self.split,
            train_fraction=self.train_fraction,
            seed=self.seed,
            sc_samples=self.sc_samples,
            images=self.images,
            annotations=",".join(self.annotations) or None,
        )
        default = AssistOptions(data="")
        for name in (
            "memory",
            "decider",
            "modality",
            "finetuned",
            "sc_temperature",
            "candidates",
            "threshold",
            "logprobs",
        ):
            value = getattr(self, name)
            if value != getattr(default, name) and not (name == "logprobs" and self.threshold is not None):
                out[name] = value
        return out


def parse_assist_options(
    data: str | Path,
    method: str = "zero-shot",
    window: str | float = "5m",
    split: str = "test",
    train_fraction: float = 0.5,
    seed: int = 0,
    sc_samples: int = 5,
    sc_temperature: float = 0.7,
    images: bool = False,
    annotations: str | tuple[str | Path, ...] | None = None,
    memory: str = "none",
    candidates: bool = False,
    logprobs: bool = False,
    threshold: float | str | None = None,
    decider: str | Path | None = None,
    modality: str = "text",
    finetuned: str | Path | None = None,
) -> AssistOptions:
    """The ``assist`` task's arguments as a record: the one check of each (values as
    ``inspect eval -T`` or the command line give them; ``annotations`` comma-separated or a tuple).

    Raises:
        proagent.errors.UsageError: an unknown method, modality, split or memory
            (:func:`proagent.agent.memory.check_memory`); a bad window; a threshold out of [0, 1],
            with a method that records no P(Yes) or with a decider
            (:func:`proagent.agent.solvers.check_threshold`); a train fraction, seed, number of
            self-consistency samples or temperature that is not a finite number (an integer for
            the seed and samples), a negative seed. Checked in that order.
    """
    from ..agent.memory import check_memory
    from ..agent.solvers import check_method, check_threshold

    check_method(method)
    if modality not in MODALITIES:
        raise UsageError("--modality", f"{modality!r}: choose text or image")
    if split not in SPLITS:
        raise UsageError("--split", f"{split!r}: choose test, train or all")
    win = parse_window_option(window)
    check_memory(memory)
    decider_ = str(decider) if decider else None
    fixed = check_threshold(threshold, method, decider=decider_) if threshold is not None else None
    if isinstance(annotations, str):
        ann = tuple(a for a in annotations.split(",") if a)
    else:
        ann = tuple(str(a) for a in annotations or ())
    return AssistOptions(
        data=str(data),
        method=method,
        window=win,
        split=split,
        train_fraction=_number(train_fraction, "--train-fraction", float),
        seed=_number(seed, "--seed", int, least=0),
        sc_samples=_number(sc_samples, "--sc-samples", int),
        sc_temperature=_number(sc_temperature, "--sc-temperature", float),
        images=bool(images),
        annotations=ann,
        memory=memory,
        candidates=bool(candidates),
        logprobs=bool(logprobs) or fixed is not None,
        threshold=fixed,
        decider=decider_,
        modality=modality,
        finetuned=str(finetuned) if finetuned else None,
    )


def _number(value: Any, option: str, kind: type, least: float | None = None) -> Any:
    """``value`` (a number, or its text as ``-T`` may give it) as a finite ``kind`` (``int``: no
    fraction) of at least ``least``.

    Raises:
        proagent.errors.UsageError: anything else (``option``), e.g. ``--seed: 'abc': expected an integer``.
    """
    want = "an integer" if kind is int else "a finite number"
    if least is not None:
        want += f" >= {least:g}"
    try:
        if isinstance(value, bool):
            raise ValueError(value)
        if kind is int and isinstance(value, int):
            out: float = value
        else:
            out = float(value)
            if not math.isfinite(out) or (kind is int and not out.is_integer()):
                raise ValueError(value)
            out = int(out) if kind is int else out
    except (TypeError, ValueError):
        raise UsageError(option, f"{value!r}: expected {want}") from None
    if least is not None and out < least:
        raise UsageError(option, f"{value!r}: expected {want}")
    return out


@dataclass(frozen=True)
class EvalOptions:
    """``proagent eval``'s options, parsed (:func:`parse_eval_options`)."""

    task: AssistOptions
    """The task evaluated (its ``threshold`` is the fixed one; with :attr:`calibrate`, none yet)."""
    model: str
    calibrate: bool = False
    """``--threshold auto``: choose the threshold on the train split first (:mod:`proagent.bench.threshold`)."""
    model_base_urls: tuple[str, ...] = ()
    """The endpoint pool (``--model-base-url``, repeatable); the first one on a single machine."""
    model_args: Mapping[str, str] = field(default_factory=dict)
    limit: int | None = None
    log_dir: Path = Path("logs")
    display: str | None = None
    ray_address: str | None = None

    @property
    def model_base_url(self) -> str | None:
        """The endpoint of a single-machine run."""
        return self.model_base_urls[0] if self.model_base_urls else None

    def train_task(self) -> AssistOptions:
        """The calibration task of ``--threshold auto``: the train split, with log-probabilities."""
        return replace(self.task, split="train", logprobs=True, threshold=None)

    def with_threshold(self, threshold: float) -> EvalOptions:
        """These options deciding by ``P(Yes) >= threshold`` (the calibrated one)."""
        return replace(self, task=replace(self.task, threshold=threshold, logprobs=True), calibrate=False)


def parse_eval_options(
    *,
    data: str | Path,
    method: str,
    model: str,
    window: str,
    split: str,
    train_fraction: float,
    seed: int,
    sc_samples: int,
    annotations: tuple[str | Path, ...],
    memory: str,
    modality: str,
    images: bool,
    threshold: str | None,
    decider: str | Path | None,
    limit: int | None,
    log_dir: Path | None,
    display: str | None,
    ray_address: str | None,
    model_base_urls: tuple[str, ...] = (),
    model_args: Mapping[str, str] | None = None,
    finetuned: str | Path | None = None,
) -> EvalOptions:
    """``proagent eval``'s option values (as click gives them) as one record: the task's through
    :func:`parse_assist_options`, ``--threshold auto`` (which needs ``--split test``), and the log
    folder (``--log-dir``, else :func:`eval_log_dir`). ``finetuned``: the training folder of a
    fine-tuned ``--model`` (its leakage guard).

    Raises:
        proagent.errors.UsageError: as :func:`parse_assist_options`; ``--threshold auto`` with
            another split.
    """
    auto = threshold == "auto"
    task = parse_assist_options(
        data,
        method=method,
        window=window,
        split=split,
        train_fraction=train_fraction,
        seed=seed,
        sc_samples=sc_samples,
        images=images,
        annotations=tuple(annotations),
        memory=memory,
        threshold=0.5 if auto else threshold,
        decider=decider,
        modality=modality,
        finetuned=finetuned,
    )
    if auto:  # the method and decider rules hold for auto as well (checked with 0.5 above)
        if split != "test":
            raise UsageError("--threshold", "auto chooses the threshold on the train split, so it needs --split test")
        task = replace(task, threshold=None, logprobs=False)
    opts = EvalOptions(
        task=task,
        model=model,
        calibrate=auto,
        model_base_urls=tuple(model_base_urls),
        model_args=dict(model_args or {}),
        limit=limit,
        display=display,
        ray_address=ray_address,
    )
    return replace(opts, log_dir=log_dir if log_dir is not None else eval_log_dir(opts, threshold))


def eval_log_dir(opts: EvalOptions, threshold: str | None = None) -> Path:
    """``logs/<run>``: the data folder's name, method, model, window (in seconds, so ``5m`` and
    ``300`` resume the same run), split and seed, with each option that is not its default
    (memory, modality, ``threshold`` as given, decider, limit); file-name safe (:func:`proagent.io.slug`)."""
    t = opts.task
    parts = [
        Path(t.data).resolve().name,
        t.method,
        opts.model.split("/")[-1],
        f"{t.window.seconds:g}s",
        t.split,
        f"seed{t.seed}",
    ]
    if t.memory != "none":
        parts.insert(2, f"mem-{t.memory}")
    if t.modality != "text":
        parts.insert(2, t.modality)
    if threshold:
        parts.append(f"thr-{threshold}")
    if t.decider is not None:
        parts.append(f"dec-{Path(t.decider).resolve().name}")
    if opts.limit:
        parts.append(f"limit{opts.limit}")
    return Path("logs") / slug("-".join(parts))
