"""Figures of the activity statistics (matplotlib, Agg backend, no display).

Each figure is written twice, ``<name>.png`` (150 dpi) and ``<name>.svg``
(text kept as text, so Chinese app names render with the browser's fonts).
Chinese text in PNGs is drawn with Noto Sans CJK (the pinned ``noto-cjk-sans-otc``
package, SIL OFL), or any installed CJK font; without one, missing glyphs are
drawn as boxes (and the warning is silenced).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["compare_figures", "stats_figures"]

_CJK_FONTS = (
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "WenQuanYi Micro Hei",
    "SimHei",
    "Microsoft YaHei",
    "PingFang SC",
    "Heiti SC",
)


def _add_bundled_cjk_font(font_manager: Any) -> None:
    try:
        from noto_cjk_sans_otc import FONT_PATH
    except ImportError:
        return
    path = str(FONT_PATH)
    if not any(f.fname == path for f in font_manager.fontManager.ttflist):
        font_manager.fontManager.addfont(path)


def _plt():  # noqa: ANN202
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    from matplotlib import font_manager

    _add_bundled_cjk_font(font_manager)
    names = {f.name for f in font_manager.fontManager.ttflist}
    cjk = [n for n in _CJK_FONTS if n in names]
    # Latin from DejaVu Sans, every glyph it lacks from the first CJK font (per-glyph fallback)
    plt.rcParams.update(
        {
            "svg.fonttype": "none",
            "font.family": ["DejaVu Sans"] + cjk[:1],
            "axes.grid": True,
            "grid.alpha": 0.3,
            "svg.hashsalt": "proagent",
        }
    )
    return plt


def _save(fig: Any, out: Path, name: str) -> dict[str, str]:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*[Gg]lyph.*missing.*")
        if _log_axis_without_ticks(fig):
            for ax in fig.axes:
                ax.set_xscale("linear")
                ax.set_yscale("linear")
        fig.tight_layout()
        fig.savefig(out / f"{name}.png", dpi=150)
        fig.savefig(out / f"{name}.svg", metadata={"Date": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return {"png": f"{name}.png", "svg": f"{name}.svg"}


def _log_axis_without_ticks(fig: Any) -> bool:
    """Whether an axis of ``fig`` is log-scaled, holds no positive value and its view reaches
    0 or below (e.g. a density histogram of identical values: every bar 0 or NaN), where
    matplotlib's LogLocator cannot place ticks and drawing raises ``ValueError``."""
    for ax in fig.axes:
        for axis, limits in ((ax.xaxis, ax.get_xlim), (ax.yaxis, ax.get_ylim)):
            if axis.get_scale() == "log" and not 0 < axis.get_minpos() < math.inf and min(limits()) <= 0:
                return True
    return False


def _log_bins(x: np.ndarray, n: int = 30) -> np.ndarray:
    lo, hi = float(x.min()), float(x.max())
    if hi <= lo:
        hi = lo * 1.1 + 1e-9
    edges = np.logspace(np.log10(lo), np.log10(hi), n)
    edges[0], edges[-1] = lo, hi  # exact ends: 10**log10(hi) can round below hi, leaving the largest value out
    return edges


def _ccdf(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.sort(x[x > 0])
    return x, 1 - np.arange(x.size) / x.size


def _fig_weekday_hour(plt: Any, res: dict[str, Any], out: Path, title: str, llm_word: str) -> dict[str, str] | None:
    """The ``weekday_hour`` figure: events and the LLM-event ratio by weekday and by hour;
    ``None`` when the result has nothing to draw."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), gridspec_kw={"width_ratios": [7, 24]})
    for ax, rows, lab in ((axes[0], res["by_weekday"], "weekday"), (axes[1], res["by_hour"], "hour")):
        keys = [r["key"] for r in rows]
        ratio = [r["llm_ratio"] or 0 for r in rows]
        ax.bar(keys, ratio, color="#3b6ea8")
        ax.set_xlabel(f"{lab} ({res['time_basis'].split(' (')[0]})")
        ax.set_ylabel(f"{llm_word}-event ratio")
        ax2 = ax.twinx()
        ax2.plot(keys, [r["events"] for r in rows], "o-", color="#d08c2c", ms=3, lw=1)
        ax2.set_ylabel("events", color="#d08c2c")
        ax2.grid(False)
        if lab == "hour":
            ax.tick_params(axis="x", labelsize=7)
    fig.suptitle(f"{title}: {llm_word}-event ratio by weekday and hour")
    return _save(fig, out, "weekday_hour")


def _fig_apps(plt: Any, res: dict[str, Any], out: Path, title: str, llm_word: str) -> dict[str, str] | None:
    """The ``apps`` figure: events and LLM events of the most used applications;
    ``None`` when the result has nothing to draw."""
    top = res["apps"].get("top") or []
    if top:
        top = top[:15][::-1]
        fig, ax = plt.subplots(figsize=(8, 0.32 * len(top) + 1.2))
        y = np.arange(len(top))
        ax.barh(y, [a["events"] for a in top], color="#9bb7d4", label="events")
        ax.barh(y, [a["llm_events"] for a in top], color="#3b6ea8", label=f"{llm_word} events")
        ax.set_yticks(y, [a["app"][:40] for a in top], fontsize=8)
        ax.set_xlabel("events")
        ax.legend(loc="lower right", fontsize=8)
        ax.set_title(f"{title}: applications")
        return _save(fig, out, "apps")
    return None


def _fig_intentions(plt: Any, res: dict[str, Any], out: Path, title: str, llm_word: str) -> dict[str, str] | None:
    """The ``intentions`` figure: the intention shares of labelled LLM events;
    ``None`` when the result has nothing to draw."""
    dist = res["intentions"].get("distribution") or []
    if dist:
        dist = dist[::-1]
        fig, ax = plt.subplots(figsize=(8, 0.32 * len(dist) + 1.2))
        y = np.arange(len(dist))
        ax.barh(y, [d["share"] for d in dist], color="#5a9e6f")
        ax.set_yticks(y, [d["intention"] for d in dist], fontsize=8)
        ax.set_xlabel("share of labelled LLM events")
        ax.set_title(f"{title}: intentions")
        return _save(fig, out, "intentions")
    return None


def _fig_durations(plt: Any, res: dict[str, Any], out: Path, title: str, llm_word: str) -> dict[str, str] | None:
    """The ``durations`` figure: event durations (log-binned density), all and LLM events;
    ``None`` when the result has nothing to draw."""
    d = res.get("_durations")
    if d is not None and np.sum(d > 0) >= 2:
        fig, ax = plt.subplots(figsize=(6, 4))
        pos = d[d > 0]
        ax.hist(pos, bins=_log_bins(pos), density=True, color="#9bb7d4", label="all events")
        dl = res.get("_durations_llm")
        if dl is not None and np.sum(dl > 0) >= 2:
            ax.hist(
                dl[dl > 0],
                bins=_log_bins(pos),
                density=True,
                histtype="step",
                color="#b03a2e",
                lw=1.5,
                label=f"{llm_word} events",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("event duration (s)")
        ax.set_ylabel("density")
        ax.legend(fontsize=8)
        ax.set_title(f"{title}: event durations")
        return _save(fig, out, "durations")
    return None


def _fig_inter_event(plt: Any, res: dict[str, Any], out: Path, title: str, llm_word: str) -> dict[str, str] | None:
    """The ``inter_event`` figure: CCDF of the LLM inter-event times with the fitted distributions, and their density;
    ``None`` when the result has nothing to draw."""
    gaps = res.get("_gaps_llm")
    fit = res.get("_fit")
    if gaps is not None and np.sum(gaps > 0) >= 2:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        pos = gaps[gaps > 0]
        x, y = _ccdf(pos)
        axes[0].loglog(x, y, "o", ms=3, color="#3b6ea8", label="data (CCDF)")
        if fit is not None and getattr(fit, "fit", None) is not None and fit.ok:
            f = fit.fit
            share = fit.n_tail / pos.size
            xs = np.logspace(np.log10(fit.xmin), np.log10(pos.max()), 100)
            styles = {
                "power_law": ("-", "#b03a2e"),
                "exponential": ("--", "#555555"),
                "lognormal": (":", "#5a9e6f"),
                "truncated_power_law": ("-.", "#d08c2c"),
            }
            for name, (ls, col) in styles.items():
                try:
                    dist = getattr(f, name)
                    yy = dist.ccdf(xs) * share
                    lab = name.replace("_", " ")
                    if name == "power_law":
                        lab += f" (alpha={fit.alpha:.2f}±{fit.alpha_se:.2f}, xmin={fit.xmin:.3g}s)"
                    axes[0].loglog(xs, yy, ls, color=col, lw=1.3, label=lab)
                except Exception:  # noqa: BLE001 - a failed alternative is just not drawn
                    continue
        axes[0].set_xlabel(f"inter-event time of {llm_word} moments (s)")
        axes[0].set_ylabel("P(X >= x)")
        axes[0].legend(fontsize=7)
        axes[1].hist(pos, bins=_log_bins(pos, 25), density=True, color="#9bb7d4")
        axes[1].set_xscale("log")
        axes[1].set_yscale("log")
        axes[1].set_xlabel("inter-event time (s)")
        axes[1].set_ylabel("density")
        b = res["inter_event_llm"].get("burstiness")
        axes[1].set_title(f"B = {b:.3f}" if b is not None else "B undefined")
        fig.suptitle(f"{title}: inter-event times of {llm_word} moments")
        return _save(fig, out, "inter_event")
    return None


def _fig_time_to_event(plt: Any, res: dict[str, Any], out: Path, title: str, llm_word: str) -> dict[str, str] | None:
    """The ``time_to_event`` figure: when the most similar earlier events happened before each LLM moment;
    ``None`` when the result has nothing to draw."""
    pre = res.get("precursors") or {}
    by_k = pre.get("by_k") or {}
    if any(v["n"] for v in by_k.values()):
        fig, ax = plt.subplots(figsize=(6, 4))
        allx = np.concatenate([np.asarray(v["seconds"]) for v in by_k.values() if v["n"]])
        allx = allx[allx > 0]
        if allx.size >= 2:
            bins = _log_bins(allx, 20)
            for k, v in by_k.items():
                x = np.asarray(v["seconds"])
                x = x[x > 0]
                if x.size:
                    h, edges = np.histogram(x, bins=bins, density=True)
                    c = np.sqrt(edges[:-1] * edges[1:])
                    m = h > 0
                    ax.loglog(c[m], h[m], "o-", ms=3, label=f"top-{k} (n={v['n']})")
            ax.set_xlabel(f"time before the {llm_word} moment (s)")
            ax.set_ylabel("density")
            ax.legend(fontsize=8)
            ax.set_title(f"{title}: most similar earlier events (≤ {pre['window_s'] / 60:g} min)")
            return _save(fig, out, "time_to_event")
        else:
            plt.close(fig)
    return None


_FIGURES: tuple[tuple[str, Any], ...] = (
    ("weekday_hour", _fig_weekday_hour),
    ("apps", _fig_apps),
    ("intentions", _fig_intentions),
    ("durations", _fig_durations),
    ("inter_event", _fig_inter_event),
    ("time_to_event", _fig_time_to_event),
)
"""The figures of :func:`stats_figures`, in drawing order."""


def stats_figures(res: dict[str, Any], out: Path, title: str) -> dict[str, dict[str, str]]:
    """Draw every figure of one :func:`~proagent.stats.analysis.analyze` result
    into ``out``; returns ``figure name -> {"png", "svg"}`` file names."""
    plt = _plt()
    llm_word = "assistance" if res["source_kind"] == "proactivebench" else "LLM"
    figs: dict[str, dict[str, str]] = {}
    for name, draw in _FIGURES:
        files = draw(plt, res, out, title, llm_word)
        if files is not None:
            figs[name] = files
    return figs


def compare_figures(results: Sequence[tuple[str, dict[str, Any]]], out: Path) -> dict[str, dict[str, str]]:
    """CCDFs (log-log) of the LLM inter-event times of several datasets on one plot."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    drawn = False
    for name, res in results:
        g = res.get("_gaps_llm")
        if g is None or np.sum(g > 0) < 2:
            continue
        x, y = _ccdf(g[g > 0])
        b = res["inter_event_llm"].get("burstiness")
        ax.loglog(x, y, "o", ms=3, label=f"{name} (B={b:.3f})" if b is not None else name)
        drawn = True
    if not drawn:
        plt.close(fig)
        return {}
    ax.set_xlabel("inter-event time of LLM moments (s)")
    ax.set_ylabel("P(X >= x)")
    ax.legend(fontsize=8)
    ax.set_title("Inter-event times compared")
    return {"compare_ccdf": _save(fig, out, "compare_ccdf")}
