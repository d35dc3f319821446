"""The ablation's HTML page (``report.html``, built with :mod:`proagent.report.pages`) and its
matplotlib figures (``figures/*.png``, also inlined in the page, so it opens offline and reads
without the JSON)."""

from __future__ import annotations

import html
import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..io import write_atomic
from .effects import MemoryEffect
from .pages import figure, page, table
from .results import AssistResults
from .tidy import TidyRow

__all__ = ["figures", "render_report"]


def _cell_text(v: Any, nd: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:.{nd}f}" if isinstance(v, (int, float)) else str(v)


def _png(fig) -> bytes:  # noqa: ANN001
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()


def figures(rows: Sequence[TidyRow]) -> dict[str, bytes]:
    """The report's PNG figures by name: metrics by method x memory, metric against window (when
    the grid has more than one), latency by method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = _Grid(rows)
    figs: dict[str, bytes] = {}
    if not grid.model_rows:
        return figs
    for name, draw in (
        ("metrics_by_method_memory", _metrics_figure),
        ("metric_vs_window", _window_figure),
        ("latency_by_method", _latency_figure),
    ):
        fig = draw(grid, plt)
        if fig is not None:
            figs[name] = _png(fig)
            plt.close(fig)
    return figs


class _Grid:
    """The ablation rows of the model runs, with their models and windows, and the main window
    (300 s where the grid has it, else its longest)."""

    def __init__(self, rows: Sequence[TidyRow]) -> None:
        self.rows = rows
        self.model_rows = [r for r in rows if r.system == "model"]
        self.models = sorted({r.model for r in self.model_rows})
        self.windows = sorted({r.window_seconds for r in self.model_rows})
        self.main_w = 300.0 if 300.0 in self.windows else (self.windows[-1] if self.windows else 0.0)

    def val(self, model: str, method: str, memory: str, wsec: float, metric: str) -> TidyRow | None:
        """The row of one cell of the grid, ``None`` when it was not run."""
        for r in self.model_rows:
            if (r.model, r.method, r.memory, r.window_seconds, r.metric) == (model, method, memory, wsec, metric):
                return r
        return None

    def combos(self, model: str) -> list[tuple[str, str]]:
        """``(method, memory)`` pairs run with ``model``, sorted."""
        return sorted({(r.method, r.memory) for r in self.model_rows if r.model == model})


def _metrics_figure(grid: _Grid, plt: Any) -> Any:
    """Metrics by method x memory, one panel per model, at the main window; baselines as lines."""
    metrics = ["accuracy", "f1", "intention_accuracy", "semantic_similarity"]
    models, main_w = grid.models, grid.main_w
    fig, axes = plt.subplots(1, len(models), figsize=(6.5 * len(models), 4.2), squeeze=False)
    for ax, model in zip(axes[0], models):
        combos = grid.combos(model)
        width = 0.8 / max(1, len(combos))
        x = np.arange(len(metrics))
        for j, (method, memory) in enumerate(combos):
            vs, lo, hi = [], [], []
            for m in metrics:
                r = grid.val(model, method, memory, main_w, m)
                v = r.value if r and r.value is not None else np.nan
                vs.append(v)
                lo.append(v - r.ci_low if r and r.ci_low is not None else 0)
                hi.append(r.ci_high - v if r and r.ci_high is not None else 0)
            ax.bar(x + j * width - 0.4 + width / 2, vs, width, yerr=[lo, hi], capsize=2, label=f"{method} / {memory}")
        for name, style in (("always-yes", "--"), ("always-no", ":")):
            for k, m in enumerate(metrics[:2]):
                b = next(
                    (
                        r.value
                        for r in grid.rows
                        if r.system == name and r.model == model and r.metric == m and r.window_seconds == main_w
                    ),
                    None,
                )
                if b is not None:
                    ax.hlines(
                        b, k - 0.45, k + 0.45, colors="k", linestyles=style, linewidth=1, label=name if k == 0 else None
                    )
        ax.set_xticks(x, ["accuracy", "F1", "intention acc", "semantic sim"])
        ax.set_ylim(0, 1)
        ax.set_title(f"{model} (window {main_w:g} s)", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    fig.suptitle("Metrics by method x memory (95% bootstrap intervals; baselines as black lines)", fontsize=10)
    return fig


def _window_figure(grid: _Grid, plt: Any) -> Any:
    """Accuracy and F1 against the context window, ``None`` when the grid has one window."""
    windows = grid.windows
    if len(windows) <= 1:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), squeeze=False)
    for ax, metric in zip(axes[0], ("accuracy", "f1")):
        for model in grid.models:
            for method, memory in grid.combos(model):
                pts = [(w, grid.val(model, method, memory, w, metric)) for w in windows]
                pts = [(w, r) for w, r in pts if r and r.value is not None]
                if not pts:
                    continue
                xs = [w for w, _ in pts]
                ys = [r.value for _, r in pts]
                (line,) = ax.plot(xs, ys, marker="o", label=f"{model.split('/')[-1]} {method}/{memory}")
                lo = [r.ci_low if r.ci_low is not None else r.value for _, r in pts]
                hi = [r.ci_high if r.ci_high is not None else r.value for _, r in pts]
                ax.fill_between(xs, lo, hi, alpha=0.12, color=line.get_color())
        ax.set_xscale("log")
        ax.set_xticks(windows, [f"{w:g}s" if w < 60 else f"{w / 60:g}m" for w in windows])
        ax.set_ylim(0, 1)
        ax.set_xlabel("context window")
        ax.set_title(metric, fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle("Metric against context window (shaded: 95% bootstrap interval)", fontsize=10)
    return fig


def _latency_figure(grid: _Grid, plt: Any) -> Any:
    """Seconds per sample (p50, whisker p95) by model, method and memory, at the main window."""
    main_w = grid.main_w
    combos = sorted({(r.model, r.method, r.memory) for r in grid.model_rows})
    p50 = [grid.val(mo, me, mem, main_w, "seconds_p50") for mo, me, mem in combos]
    p95 = [grid.val(mo, me, mem, main_w, "seconds_p95") for mo, me, mem in combos]
    ys = [r.value if r and r.value is not None else np.nan for r in p50]
    up = [(q.value - y) if q and q.value is not None and not math.isnan(y) else 0 for q, y in zip(p95, ys)]
    fig, ax = plt.subplots(figsize=(max(5, 1.1 * len(combos)), 3.8))
    ax.bar(range(len(combos)), ys, yerr=[[0] * len(ys), up], capsize=3, color="#4C72B0")
    ax.set_xticks(range(len(combos)), [f"{mo.split('/')[-1]}\n{me}/{mem}" for mo, me, mem in combos], fontsize=7)
    ax.set_ylabel("seconds per sample (p50, whisker p95)")
    ax.set_title(f"Latency by method and memory (window {main_w:g} s)", fontsize=10)
    return fig


def render_report(
    out: str | Path,
    rows: Sequence[TidyRow],
    effects: Sequence[MemoryEffect],
    results: Mapping[str, AssistResults],
    *,
    data: str = "",
) -> Path:
    """Write ``report.html`` (figures inlined as PNG) and ``figures/*.png`` under ``out``.

    Args:
        rows: the tidy rows of every cell (:func:`proagent.report.tidy.tidy_rows`).
        effects: :func:`proagent.report.effects.memory_effects`.
        results: each finished cell's results by slug (with their ``cell`` block).
        data: the data given to ``ablate``, shown on the page.
    """
    out = Path(out)
    figs = figures(rows)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    for name, png in figs.items():
        (out / "figures" / f"{name}.png").write_bytes(png)
    main = []
    for res in results.values():
        c = res.cell

        def cell_v(m: str, res: AssistResults = res) -> str:
            s = _cell_text(getattr(res, m))
            ci = res.ci95.get(m)
            if ci:
                s += f" [{ci[0]:.2f}, {ci[1]:.2f}]"
            return s

        main.append(
            [
                c.model,
                c.method,
                c.memory,
                c.decider,
                c.window,
                str(res.n),
                cell_v("accuracy"),
                cell_v("precision"),
                cell_v("recall"),
                cell_v("f1"),
                cell_v("intention_accuracy"),
                cell_v("semantic_similarity"),
                _cell_text(res.unparsed_rate),
                f"{_cell_text(res.seconds_p50, 2)} ({_cell_text(res.seconds_p95, 2)})",
            ]
        )
    base = []
    seen = set()
    for r in rows:
        if r.system != "model" and r.metric in ("accuracy", "f1"):
            k = (r.system, r.window, r.metric)
            if k not in seen:
                seen.add(k)
                base.append([r.system, r.window, r.metric, _cell_text(r.value)])
    eff = [
        [
            e.model,
            e.method,
            e.window,
            e.memory,
            e.metric,
            f"{e.delta:+.3f}",
            f"[{e.ci_low:+.3f}, {e.ci_high:+.3f}]",
            str(e.n),
        ]
        for e in effects
    ]
    derived = []
    for res in results.values():
        d = res.cell.memory_derived
        if d:
            n = d.get("records", 0)
            parts = ", ".join(f"{k} {v}/{n}" for k, v in sorted(d.items()) if k != "records")
            derived.append([res.cell.memory, res.cell.window, str(n), parts or "none"])
    imgs = "".join(figure(p, n.replace("_", " ")) for n, p in figs.items())
    body = f"""
<p>Data: <code>{html.escape(data)}</code>. Cells: {len(results)}. Values in brackets: 95% bootstrap intervals over samples.</p>
<h2>Results by method x memory x model x window</h2>
{table(["model", "method", "memory", "decider", "window", "n", "accuracy", "precision", "recall", "F1", "intention acc", "semantic sim", "unparsed", "s/sample p50 (p95)"], main)}
<h2>Baselines (same samples)</h2>
{table(["baseline", "window", "metric", "value"], base)}
<h2>Effect of each memory against no memory</h2>
<p>Difference on the same samples (unparsed answers are wrong decisions, as everywhere); paired percentile bootstrap (1000 resamples).</p>
{table(["model", "method", "window", "memory", "metric", "delta", "95% interval", "n"], eff) if eff else "<p>(no memory/none pairs in the grid)</p>"}
<h2>Fields memory derived from text</h2>
<p>Where the source has no application, window title or LLM-use flag (ProactiveBench sentences), memory reads
them from the text; counts are records with the field derived / all memory records.</p>
{table(["memory", "window", "records", "derived fields"], derived) if derived else "<p>(nothing derived)</p>"}
<h2>Figures</h2>
{imgs}
"""
    return write_atomic(out / "report.html", page("When / How to Assist: ablation", body))
