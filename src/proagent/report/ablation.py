"""Ablation grids: run When/How-to-Assist over methods x memory x windows x models,
then write a tidy results table and an offline HTML report with figures.

Layout of ``--out DIR``::

    DIR/cells/<model>__<method>__<memory>__<window>/   one inspect log dir per cell (eval_set:
                                                       re-running resumes, finished cells are reused)
        results.json                                   the cell's results (as ``proagent eval``)
        scores.csv                                     per-sample scores (for paired comparisons)
    DIR/results.csv                                    tidy: one row per (cell or baseline, metric)
    DIR/results.parquet                                the same (when pyarrow is installed)
    DIR/effects.csv                                    each memory against none, paired bootstrap
    DIR/report.html                                    tables + matplotlib figures, images inlined
    DIR/figures/*.png                                  the figures as files

The HTML has no external references: it opens offline and reads without the JSON.
"""

from __future__ import annotations

import csv
import html
import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..io import slug, write_atomic, write_json_atomic
from ..records import Score
from .pages import figure, page, table
from .results import log_scores, results_from_log

__all__ = [
    "Cell",
    "METRICS",
    "TIDY_COLUMNS",
    "cells",
    "paired_effect",
    "render_report",
    "run_ablation",
    "tidy_rows",
]

METRICS = ("accuracy", "precision", "recall", "f1", "intention_accuracy", "semantic_similarity",
           "unparsed_rate", "seconds_p50", "seconds_p95", "tokens_per_sample")
"""Metrics written to the tidy table."""

TIDY_COLUMNS = ("data", "model", "method", "memory", "window", "window_seconds", "system", "metric", "value",
                "ci_low", "ci_high", "n", "cell")
"""Columns of ``results.csv`` (one row per cell or baseline and metric)."""


@dataclass(frozen=True)
class Cell:
    """One point of the grid."""

    model: str
    method: str
    memory: str
    window: str

    @property
    def slug(self) -> str:
        parts = [self.model.split("/")[-1] or self.model, self.method, self.memory, self.window]
        return "__".join(slug(p, limit=200) for p in parts)


def cells(models: Sequence[str], methods: Sequence[str], memories: Sequence[str], windows: Sequence[str]) -> list[Cell]:
    """The grid in run order: model, then window, then method, then memory (so a
    local model stays loaded and memory caches are reused across cells)."""
    return [Cell(mo, me, mem, w) for mo in models for w in windows for me in methods for mem in memories]


def _write_scores(path: Path, scores: list[Score]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["sample_id", "label", "predicted", "intention_correct", "semantic_similarity", "seconds", "tokens"])
        for s in scores:
            w.writerow([s.sample_id, s.label, "" if s.predicted is None else s.predicted,
                        "" if s.intention_correct is None else int(s.intention_correct),
                        "" if s.semantic_similarity is None else s.semantic_similarity,
                        "" if s.seconds is None else s.seconds, "" if s.tokens is None else s.tokens])


def _read_scores(path: Path) -> list[Score]:
    out = []
    with open(path, encoding="utf-8") as f:
        for r in csv.DictReader(f):
            out.append(Score(
                sample_id=r["sample_id"], label=int(r["label"]),
                predicted=None if r["predicted"] == "" else int(r["predicted"]),
                intention_correct=None if r["intention_correct"] == "" else bool(int(r["intention_correct"])),
                semantic_similarity=None if r["semantic_similarity"] == "" else float(r["semantic_similarity"]),
                seconds=None if r["seconds"] == "" else float(r["seconds"]),
                tokens=None if r["tokens"] == "" else int(r["tokens"]),
            ))
    return out


def run_cell(cell: Cell, data: str, cell_dir: Path, *, split: str = "test", limit: int | None = None, seed: int = 0,
             train_fraction: float = 0.5, sc_samples: int = 5, annotations: str | None = None,
             model_args: dict | None = None, model_base_url: str | None = None, display: str | None = "none") -> dict:
    """Run (or resume) one cell with inspect's ``eval_set`` in its own log dir;
    write and return its results.

    Raises:
        proagent.bench.running.RunError: the run did not finish (the message says how to resume).
    """
    from ..bench.running import RunError, run_task
    from ..bench.tasks import assist

    kw: dict[str, Any] = {"memory": cell.memory} if cell.memory != "none" else {}
    task = assist(data=data, method=cell.method, window=cell.window, split=split, train_fraction=train_fraction,
                  seed=seed, sc_samples=sc_samples, annotations=annotations, **kw)
    try:
        full = run_task(task, cell_dir, cell.model, model_base_url=model_base_url, model_args=model_args, limit=limit,
                        display=display)
    except RunError as e:
        raise RunError(f"cell {cell.slug}: {e}", interrupted=e.interrupted) from None
    res = results_from_log(full)
    res["cell"] = {"model": cell.model, "method": cell.method, "memory": cell.memory, "window": cell.window,
                   "memory_derived": (full.eval.metadata or {}).get("memory_derived"),
                   "memory_build_seconds": (full.eval.metadata or {}).get("memory_build_seconds")}
    write_json_atomic(cell_dir / "results.json", res)
    _write_scores(cell_dir / "scores.csv", log_scores(full))
    return res


def tidy_rows(data: str, cell: Cell, res: dict) -> list[dict]:
    """Tidy rows of one cell: each metric of the run, and the baselines' When metrics."""
    from ..bench.samples import parse_window

    base = {"data": data, "model": cell.model, "method": cell.method, "memory": cell.memory, "window": cell.window,
            "window_seconds": parse_window(cell.window), "n": res.get("n"), "cell": cell.slug}
    ci = res.get("ci95") or {}
    rows = []
    for m in METRICS:
        v = res.get(m)
        lo_hi = ci.get(m) or (None, None)
        rows.append({**base, "system": "model", "metric": m, "value": v, "ci_low": lo_hi[0], "ci_high": lo_hi[1]})
    for name, b in (res.get("baselines") or {}).items():
        for m, v in b.items():
            rows.append({**base, "system": name.replace("_", "-"), "metric": m, "value": v, "ci_low": None, "ci_high": None})
    return rows


def _when_vec(y: np.ndarray, p: np.ndarray, metric: str) -> float:
    """Accuracy or F1 of When to Assist, numpy only (p = -1 for unparsed: wrong,
    and no help predicted), as :func:`proagent.bench.metrics.when_metrics`."""
    if metric == "accuracy":
        return float(np.mean(y == p))
    pb = (p == 1).astype(float)
    tp = float(np.sum(pb * y))
    den = float(np.sum(pb) + np.sum(y))
    return 2 * tp / den if den else 0.0


def paired_effect(a: list[Score], b: list[Score], metric: str, n_resamples: int = 1000, seed: int = 0) -> dict | None:
    """Effect of run ``b`` against run ``a`` on the samples both scored: the
    difference of a When metric (``accuracy`` or ``f1``) or of the mean
    ``semantic_similarity`` (samples where both have one) with a paired percentile
    bootstrap 95% interval (the same resampled sample ids on both sides) and the
    share of resamples where the difference is <= 0."""
    sa = {s.sample_id: s for s in a}
    sb = {s.sample_id: s for s in b}
    ids = [i for i in sb if i in sa]
    if metric == "semantic_similarity":
        ids = [i for i in ids if sa[i].semantic_similarity is not None and sb[i].semantic_similarity is not None]
        if len(ids) < 2:
            return None
        va = np.asarray([sa[i].semantic_similarity for i in ids], dtype=float)
        vb = np.asarray([sb[i].semantic_similarity for i in ids], dtype=float)
        d = vb - va
        rng = np.random.default_rng(seed)
        boots = np.asarray([d[rng.integers(0, len(d), len(d))].mean() for _ in range(n_resamples)])
        return {"delta": float(d.mean()), "ci_low": float(np.percentile(boots, 2.5)),
                "ci_high": float(np.percentile(boots, 97.5)), "n": len(ids), "p_le_0": float(np.mean(boots <= 0))}
    if len(ids) < 2:
        return None
    y = np.asarray([sa[i].label for i in ids], dtype=float)
    pa = np.asarray([-1 if sa[i].predicted is None else sa[i].predicted for i in ids], dtype=float)
    pb = np.asarray([-1 if sb[i].predicted is None else sb[i].predicted for i in ids], dtype=float)

    def diff(idx: np.ndarray) -> float:
        return _when_vec(y[idx], pb[idx], metric) - _when_vec(y[idx], pa[idx], metric)

    rng = np.random.default_rng(seed)
    n = len(ids)
    boots = np.asarray([diff(rng.integers(0, n, n)) for _ in range(n_resamples)])
    return {"delta": diff(np.arange(n)), "ci_low": float(np.percentile(boots, 2.5)),
            "ci_high": float(np.percentile(boots, 97.5)), "n": n, "p_le_0": float(np.mean(boots <= 0))}


def _write_csv(path: Path, rows: list[dict], columns: Sequence[str]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(columns), extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in columns})
    tmp.replace(path)


def _write_parquet(path: Path, rows: list[dict], columns: Sequence[str]) -> bool:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return False
    table = pa.table({c: [r.get(c) for r in rows] for c in columns})
    pq.write_table(table, path)
    return True


def run_ablation(data: str, out: str | Path, *, models: Sequence[str], methods: Sequence[str],
                 memories: Sequence[str], windows: Sequence[str], echo: Callable[[str], None] = print,
                 **run_kw: Any) -> dict:
    """Run every cell (resuming finished ones), then write the table and report.

    Returns:
        ``{"cells": n, "csv": path, "parquet": path or None, "report": path, "failed": [slugs]}``.
    """
    out = Path(out)
    (out / "cells").mkdir(parents=True, exist_ok=True)
    grid = cells(models, methods, memories, windows)
    rows: list[dict] = []
    results: dict[str, dict] = {}
    failed = []
    for i, cell in enumerate(grid, 1):
        cdir = out / "cells" / cell.slug
        echo(f"[{i}/{len(grid)}] {cell.model} {cell.method} memory={cell.memory} window={cell.window}")
        try:
            res = run_cell(cell, data, cdir, **run_kw)
        except (RuntimeError, ValueError) as e:
            if getattr(e, "interrupted", False):  # Ctrl-C stops the grid, not just this cell
                raise
            echo(f"  failed: {e}")
            failed.append(cell.slug)
            continue
        results[cell.slug] = res
        rows.extend(tidy_rows(str(data), cell, res))
        echo(f"  accuracy {_f(res.get('accuracy'))}  f1 {_f(res.get('f1'))}  n {res.get('n')}")
    csv_path = out / "results.csv"
    _write_csv(csv_path, rows, TIDY_COLUMNS)
    pq_path = out / "results.parquet"
    has_pq = _write_parquet(pq_path, rows, TIDY_COLUMNS)
    effects = _effects(out, grid, results)
    _write_csv(out / "effects.csv", effects, ("model", "method", "window", "memory", "metric", "delta", "ci_low",
                                              "ci_high", "p_le_0", "n"))
    report = render_report(out, rows, effects, results, data=str(data))
    return {"cells": len(results), "csv": csv_path, "parquet": pq_path if has_pq else None, "report": report,
            "failed": failed}


def _effects(out: Path, grid: list[Cell], results: dict[str, dict]) -> list[dict]:
    rows = []
    for cell in grid:
        if cell.memory == "none" or cell.slug not in results:
            continue
        ref = Cell(cell.model, cell.method, "none", cell.window)
        if ref.slug not in results:
            continue
        a = _read_scores(out / "cells" / ref.slug / "scores.csv")
        b = _read_scores(out / "cells" / cell.slug / "scores.csv")
        for m in ("accuracy", "f1", "semantic_similarity"):
            e = paired_effect(a, b, m)
            if e:
                rows.append({"model": cell.model, "method": cell.method, "window": cell.window, "memory": cell.memory,
                             "metric": m, **e})
    return rows


# ----------------------------------------------------------------------------- report


def _f(v: Any, nd: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:.{nd}f}" if isinstance(v, (int, float)) else str(v)


def _png(fig) -> bytes:  # noqa: ANN001
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()


def _figures(rows: list[dict]) -> dict[str, bytes]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    model_rows = [r for r in rows if r["system"] == "model"]
    figs: dict[str, bytes] = {}
    if not model_rows:
        return figs
    models = sorted({r["model"] for r in model_rows})
    windows = sorted({r["window_seconds"] for r in model_rows})
    main_w = 300.0 if 300.0 in windows else windows[-1]

    def val(model, method, memory, wsec, metric):  # noqa: ANN001, ANN202
        for r in model_rows:
            if (r["model"], r["method"], r["memory"], r["window_seconds"], r["metric"]) == (model, method, memory, wsec, metric):
                return r
        return None

    # 1. metrics by method x memory, one panel per model, at the main window; baselines as lines
    metrics = ["accuracy", "f1", "intention_accuracy", "semantic_similarity"]
    fig, axes = plt.subplots(1, len(models), figsize=(6.5 * len(models), 4.2), squeeze=False)
    for ax, model in zip(axes[0], models):
        combos = sorted({(r["method"], r["memory"]) for r in model_rows if r["model"] == model})
        width = 0.8 / max(1, len(combos))
        x = np.arange(len(metrics))
        for j, (method, memory) in enumerate(combos):
            vs, lo, hi = [], [], []
            for m in metrics:
                r = val(model, method, memory, main_w, m)
                v = r["value"] if r and r["value"] is not None else np.nan
                vs.append(v)
                lo.append(v - r["ci_low"] if r and r["ci_low"] is not None else 0)
                hi.append(r["ci_high"] - v if r and r["ci_high"] is not None else 0)
            ax.bar(x + j * width - 0.4 + width / 2, vs, width, yerr=[lo, hi], capsize=2, label=f"{method} / {memory}")
        for name, style in (("always-yes", "--"), ("always-no", ":")):
            for k, m in enumerate(metrics[:2]):
                b = next((r["value"] for r in rows if r["system"] == name and r["model"] == model
                          and r["metric"] == m and r["window_seconds"] == main_w), None)
                if b is not None:
                    ax.hlines(b, k - 0.45, k + 0.45, colors="k", linestyles=style, linewidth=1,
                              label=name if k == 0 else None)
        ax.set_xticks(x, ["accuracy", "F1", "intention acc", "semantic sim"])
        ax.set_ylim(0, 1)
        ax.set_title(f"{model} (window {main_w:g} s)", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    fig.suptitle("Metrics by method x memory (95% bootstrap intervals; baselines as black lines)", fontsize=10)
    figs["metrics_by_method_memory"] = _png(fig)
    plt.close(fig)

    # 2. metric against context window
    if len(windows) > 1:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4), squeeze=False)
        for ax, metric in zip(axes[0], ("accuracy", "f1")):
            for model in models:
                for method, memory in sorted({(r["method"], r["memory"]) for r in model_rows if r["model"] == model}):
                    pts = [(w, val(model, method, memory, w, metric)) for w in windows]
                    pts = [(w, r) for w, r in pts if r and r["value"] is not None]
                    if not pts:
                        continue
                    xs = [w for w, _ in pts]
                    ys = [r["value"] for _, r in pts]
                    line, = ax.plot(xs, ys, marker="o", label=f"{model.split('/')[-1]} {method}/{memory}")
                    lo = [r["ci_low"] if r["ci_low"] is not None else r["value"] for _, r in pts]
                    hi = [r["ci_high"] if r["ci_high"] is not None else r["value"] for _, r in pts]
                    ax.fill_between(xs, lo, hi, alpha=0.12, color=line.get_color())
            ax.set_xscale("log")
            ax.set_xticks(windows, [f"{w:g}s" if w < 60 else f"{w / 60:g}m" for w in windows])
            ax.set_ylim(0, 1)
            ax.set_xlabel("context window")
            ax.set_title(metric, fontsize=9)
            ax.legend(fontsize=7)
        fig.suptitle("Metric against context window (shaded: 95% bootstrap interval)", fontsize=10)
        figs["metric_vs_window"] = _png(fig)
        plt.close(fig)

    # 3. latency by method (and memory)
    combos = sorted({(r["model"], r["method"], r["memory"]) for r in model_rows})
    p50 = [val(mo, me, mem, main_w, "seconds_p50") for mo, me, mem in combos]
    p95 = [val(mo, me, mem, main_w, "seconds_p95") for mo, me, mem in combos]
    ys = [r["value"] if r and r["value"] is not None else np.nan for r in p50]
    up = [(q["value"] - y) if q and q["value"] is not None and not math.isnan(y) else 0 for q, y in zip(p95, ys)]
    fig, ax = plt.subplots(figsize=(max(5, 1.1 * len(combos)), 3.8))
    ax.bar(range(len(combos)), ys, yerr=[[0] * len(ys), up], capsize=3, color="#4C72B0")
    ax.set_xticks(range(len(combos)), [f"{mo.split('/')[-1]}\n{me}/{mem}" for mo, me, mem in combos], fontsize=7)
    ax.set_ylabel("seconds per sample (p50, whisker p95)")
    ax.set_title(f"Latency by method and memory (window {main_w:g} s)", fontsize=10)
    figs["latency_by_method"] = _png(fig)
    plt.close(fig)
    return figs



def render_report(out: str | Path, rows: list[dict], effects: list[dict], results: dict[str, dict], *,
                  data: str = "") -> Path:
    """Write ``report.html`` (figures inlined as PNG) and ``figures/*.png``."""
    out = Path(out)
    figs = _figures(rows)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    for name, png in figs.items():
        (out / "figures" / f"{name}.png").write_bytes(png)
    main = []
    for slug, res in results.items():
        c = res["cell"]
        ci = res.get("ci95") or {}

        def cell_v(m: str, res: dict = res, ci: dict = ci) -> str:
            s = _f(res.get(m))
            if ci.get(m):
                s += f" [{ci[m][0]:.2f}, {ci[m][1]:.2f}]"
            return s

        main.append([c["model"], c["method"], c["memory"], c["window"], str(res.get("n")), cell_v("accuracy"),
                     cell_v("precision"), cell_v("recall"), cell_v("f1"), cell_v("intention_accuracy"),
                     cell_v("semantic_similarity"), _f(res.get("unparsed_rate")),
                     f"{_f(res.get('seconds_p50'), 2)} ({_f(res.get('seconds_p95'), 2)})"])
    base = []
    seen = set()
    for r in rows:
        if r["system"] != "model" and r["metric"] in ("accuracy", "f1"):
            k = (r["system"], r["window"], r["metric"])
            if k not in seen:
                seen.add(k)
                base.append([r["system"], r["window"], r["metric"], _f(r["value"])])
    eff = [[e["model"], e["method"], e["window"], e["memory"], e["metric"], f"{e['delta']:+.3f}",
            f"[{e['ci_low']:+.3f}, {e['ci_high']:+.3f}]", str(e["n"])] for e in effects]
    derived = []
    for slug, res in results.items():
        d = res["cell"].get("memory_derived")
        if d:
            n = d.get("records", 0)
            parts = ", ".join(f"{k} {v}/{n}" for k, v in sorted(d.items()) if k != "records")
            derived.append([res["cell"]["memory"], res["cell"]["window"], str(n), parts or "none"])
    imgs = "".join(figure(p, n.replace("_", " ")) for n, p in figs.items())
    body = f"""
<p>Data: <code>{html.escape(data)}</code>. Cells: {len(results)}. Values in brackets: 95% bootstrap intervals over samples.</p>
<h2>Results by method x memory x model x window</h2>
{table(["model", "method", "memory", "window", "n", "accuracy", "precision", "recall", "F1", "intention acc", "semantic sim", "unparsed", "s/sample p50 (p95)"], main)}
<h2>Baselines (same samples)</h2>
{table(["baseline", "window", "metric", "value"], base)}
<h2>Effect of each memory against no memory</h2>
<p>Difference on the same samples; paired percentile bootstrap (1000 resamples).</p>
{table(["model", "method", "window", "memory", "metric", "delta", "95% interval", "n"], eff) if eff else "<p>(no memory/none pairs in the grid)</p>"}
<h2>Fields memory derived from text</h2>
<p>Where the source has no application, window title or LLM-use flag (ProactiveBench sentences), memory reads
them from the text; counts are records with the field derived / all memory records.</p>
{table(["memory", "window", "records", "derived fields"], derived) if derived else "<p>(nothing derived)</p>"}
<h2>Figures</h2>
{imgs}
"""
    path = write_atomic(out / "report.html", page("When / How to Assist: ablation", body))
    return path
