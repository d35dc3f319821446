"""Results of the ProactiveEval tasks: ``results.json``, a text table and an HTML page.

``results.json`` keys: ``task`` (``plan`` or ``guide``), ``n``, ``score`` (mean
judge score 1-10 over readable judgements), ``unparsed_rate`` (share without a
readable score), ``by_domain`` (``{domain: {mean, n, unscored}}``), and for
``guide`` ``by_domain_agreeableness``, ``by_agreeableness``, ``dimensions``,
``reach_rate``, ``mean_turns``, ``leak_rate``, ``passive_opening_rate``,
``termination_unparsed``, ``density`` (when measured); for ``plan``
``plan_unparsed_rate`` and ``judge_unparsed_rate``. Also ``seconds_p50``/``p95``
per sample, ``tokens_per_sample``, ``samples`` (one row per sample, the input of
``proagent dialogue kappa``) and a ``run`` header (task args, model, model roles,
generation config, package versions, git SHA, log file).
"""

from __future__ import annotations

from statistics import median
from typing import Any

from ..report.pages import escape, page, table
from ..report.results import run_header
from .metrics import group_means, mean_of, rate_of, scored
from .records import AGREEABLENESS, DIMENSIONS

__all__ = ["render_html", "render_table", "results_from_log", "sample_rows"]


def sample_rows(log: Any) -> list[dict[str, Any]]:
    """One dict per scored sample: id, domain, agreeableness, tier, score values, seconds, tokens."""
    rows = []
    for s in log.samples or []:
        if not s.scores:
            continue
        md = s.metadata or {}
        row: dict[str, Any] = {"id": str(s.id), "domain": md.get("domain"), "tier": md.get("tier")}
        if "agreeableness" in md:
            row["agreeableness"] = md["agreeableness"]
        for sc in s.scores.values():
            if isinstance(sc.value, dict):
                row.update(sc.value)
        if md.get("dialogue") is not None:
            row["dialogue"] = md["dialogue"]
        elif md.get("plan") is not None:
            row["plan"] = md["plan"]
        usage = list((s.model_usage or {}).values())
        row["tokens"] = sum(u.total_tokens for u in usage) if usage else None
        row["seconds"] = s.total_time
        rows.append(row)
    return rows


def _roles(ev: Any) -> dict[str, str]:
    roles = getattr(ev, "model_roles", None) or {}
    out = {}
    for name, cfg in roles.items():
        out[name] = getattr(cfg, "model", None) or str(cfg)
    return out


def results_from_log(log: Any) -> dict[str, Any]:
    """Summarise one eval log of ``dialogue_plan`` or ``dialogue_guide``."""
    rows = sample_rows(log)
    ev = log.eval
    kind = "guide" if ev.task.endswith("guide") else "plan"
    n = len(rows)
    res: dict[str, Any] = {
        "task": kind,
        "n": n,
        "score": mean_of(rows),
        "unparsed_rate": round((n - len(scored(rows))) / n, 3) if n else None,
        "by_domain": group_means(rows, ["domain"]),
    }
    if kind == "plan":
        res["plan_unparsed_rate"] = round(1 - (rate_of(rows, "plan_parsed") or 0.0), 3) if n else None
        judged = [r for r in rows if r.get("plan_parsed")]
        res["judge_unparsed_rate"] = round(1 - (rate_of(judged, "judge_parsed") or 0.0), 3) if judged else None
    else:
        res["by_domain_agreeableness"] = group_means(rows, ["domain", "agreeableness"])
        res["by_agreeableness"] = group_means(rows, ["agreeableness"])
        res["dimensions"] = {d: mean_of(rows, d) for d in DIMENSIONS}
        res["reach_rate"] = rate_of(rows, "reached")
        res["mean_turns"] = rate_of(rows, "turns")
        res["leak_rate"] = rate_of(rows, "leak")
        res["passive_opening_rate"] = rate_of(rows, "passive_opening")
        res["termination_unparsed"] = int(sum(r.get("termination_unparsed") or 0 for r in rows))
        if any("density" in r for r in rows):
            res["density"] = {"per_message": mean_of_nonneg(rows, "density"), "first_message": mean_of_nonneg(rows, "first_density"),
                              "unparsed_messages": int(sum(r.get("density_unparsed") or 0 for r in rows))}
    secs = sorted(r["seconds"] for r in rows if r.get("seconds") is not None)
    res["seconds_p50"] = round(median(secs), 2) if secs else None
    res["seconds_p95"] = round(secs[min(len(secs) - 1, int(0.95 * len(secs)))], 2) if secs else None
    toks = [r["tokens"] for r in rows if r.get("tokens") is not None]
    res["tokens_per_sample"] = round(sum(toks) / len(toks)) if toks else None
    res["samples"] = rows
    res["run"] = {**run_header(log), "model_roles": _roles(ev)}
    return res


def mean_of_nonneg(rows: list[dict[str, Any]], key: str) -> float | None:
    """Mean of ``key`` over rows where it is >= 0 (-1 = not measured)."""
    return rate_of(rows, key)


def _f(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def _table_rows(res: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    if res["task"] == "plan":
        head = ["domain", "n", "score (1-10)", "unscored"]
        rows = [[d, str(g["n"]), _f(g["mean"]), str(g["unscored"])] for d, g in res["by_domain"].items()]
        rows.append(["all", str(res["n"]), _f(res["score"]), f"{res['unparsed_rate']:.0%}" if res["n"] else "n/a"])
        return head, rows
    levels = [lv for lv in AGREEABLENESS if lv in res.get("by_agreeableness", {})]
    head = ["domain", "n", *levels, "all", "unscored"]
    cells = res["by_domain_agreeableness"]
    rows = []
    for d, g in res["by_domain"].items():
        rows.append([d, str(g["n"]), *[_f((cells.get(f"{d}/{lv}") or {}).get("mean")) for lv in levels], _f(g["mean"]), str(g["unscored"])])
    rows.append(["all", str(res["n"]), *[_f(res["by_agreeableness"][lv]["mean"]) for lv in levels], _f(res["score"]),
                 f"{res['unparsed_rate']:.0%}" if res["n"] else "n/a"])
    return head, rows


def _footer(res: dict[str, Any]) -> list[str]:
    model = (res.get("run") or {}).get("model", "")
    roles = (res.get("run") or {}).get("model_roles") or {}
    lines = [f"agent {model}" + "".join(f", {k} {v}" for k, v in sorted(roles.items()))]
    if res["task"] == "plan":
        lines.append(f"plan unparsed {_f(res.get('plan_unparsed_rate'))}, judge unparsed {_f(res.get('judge_unparsed_rate'))}")
    else:
        dims = ", ".join(f"{d} {_f(v)}" for d, v in res["dimensions"].items())
        lines.append(f"dimensions: {dims}")
        lines.append(
            f"reached {_f(res['reach_rate'])}, turns {_f(res['mean_turns'])}, leaks {_f(res['leak_rate'])}, "
            f"passive openings {_f(res['passive_opening_rate'])}, unreadable termination verdicts {res['termination_unparsed']}"
        )
        if "density" in res:
            d = res["density"]
            lines.append(f"target density: {_f(d['per_message'])} sub-targets/message, {_f(d['first_message'])} in the first message")
    lines.append(f"seconds/sample p50 {_f(res.get('seconds_p50'))} (p95 {_f(res.get('seconds_p95'))}), tokens/sample {res.get('tokens_per_sample')}")
    return lines


def render_table(res: dict[str, Any]) -> str:
    """Per-domain scores (and per agreeableness for ``guide``) as plain text, plus a summary."""
    from rich.console import Console
    from rich.table import Table

    title = "ProactiveEval target planning" if res["task"] == "plan" else "ProactiveEval dialogue guidance"
    if res["task"] == "guide" and not (res.get("run") or {}).get("task_args", {}).get("give_target", True):
        title += " (no target given)"
    head, rows = _table_rows(res)
    t = Table(title=title)
    for h in head:
        t.add_column(h, justify="left" if h == "domain" else "right")
    for r in rows:
        t.add_row(*r)
    console = Console(width=160, record=True, force_terminal=False, color_system=None)
    with console.capture() as cap:
        console.print(t)
        for line in _footer(res):
            console.print(line, highlight=False)
    return cap.get()


def render_html(res: dict[str, Any]) -> str:
    """A self-contained HTML page: the table, the summary and, for ``guide``, every dialogue."""
    head, rows = _table_rows(res)
    e = escape
    skip = {"id", "score", "domain", "tier", "tokens", "seconds", "dialogue", "plan"}
    samples = []
    for r in res.get("samples", []):
        details = e(", ".join(f"{k}={v}" for k, v in r.items() if k not in skip))
        if r.get("dialogue"):
            details += "".join(f"<div class='{'assistant' if t['role'] == 'assistant' else 'user'}'><b>{e(t['role'])}:</b> "
                               f"{e(t['content'])}</div>" for t in r["dialogue"])
        elif r.get("plan"):
            p = r["plan"]
            details += f"<div class='assistant'><b>target:</b> {e(str(p.get('target')))}</div>" + "".join(
                f"<div class='user'>- {e(x)}</div>" for x in p.get("sub_target") or [])
        samples.append([r["id"], str(r.get("score")), details])
    body = (table(head, rows) + "<ul>" + "".join(f"<li>{e(x)}</li>" for x in _footer(res)) + "</ul>"
            + "<h2>Samples</h2>" + table(["id", "score", "details"], samples, raw_columns=[2]))
    return page(f"ProactiveEval {res['task']}", body)
