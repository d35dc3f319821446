"""Results of the ProactiveEval tasks: the :class:`DialogueResults` record (``results.json``,
its text table through :func:`proagent.report.results.render_table`) and an HTML page.

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

from dataclasses import dataclass, field, replace
from statistics import median
from typing import Any

from ..report.pages import escape, page, table
from ..report.results import FLATTEN, OMIT, RunHeader, TextTable, run_header, sample_usage
from .metrics import group_means, mean_of, rate_of, read_value, scored
from .records import AGREEABLENESS, DIMENSIONS

__all__ = ["DialogueResults", "Density", "GuideFigures", "PlanFigures", "render_html", "sample_rows"]


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
                row.update(read_value(sc.value))
        if md.get("dialogue") is not None:
            row["dialogue"] = md["dialogue"]
        elif md.get("plan") is not None:
            row["plan"] = md["plan"]
        seconds, row["tokens"], _ = sample_usage(s)
        row["seconds"] = seconds
        rows.append(row)
    return rows


def _roles(ev: Any) -> dict[str, str]:
    roles = getattr(ev, "model_roles", None) or {}
    out = {}
    for name, cfg in roles.items():
        out[name] = getattr(cfg, "model", None) or str(cfg)
    return out


@dataclass(frozen=True)
class PlanFigures:
    """What only target planning reports (shares 0-1, ``None`` without samples)."""

    plan_unparsed_rate: float | None
    """Share of agent answers without a readable plan."""
    judge_unparsed_rate: float | None
    """Share of judgements without a readable score, among readable plans."""


@dataclass(frozen=True)
class Density:
    """Target density (extraction judge), when measured."""

    per_message: float | None
    """Mean sub-targets per agent message."""
    first_message: float | None
    """Mean sub-targets in the first agent message."""
    unparsed_messages: int
    """Agent messages whose extraction was unreadable."""


@dataclass(frozen=True)
class GuideFigures:
    """What only dialogue guidance reports (shares 0-1; scores 1-10; ``None``: no value)."""

    by_domain_agreeableness: dict[str, dict[str, Any]]
    """``{"domain/level": {mean, n, unscored}}``."""
    by_agreeableness: dict[str, dict[str, Any]]
    dimensions: dict[str, float | None]
    """Mean judge score of each of :data:`DIMENSIONS`."""
    reach_rate: float | None
    mean_turns: float | None
    leak_rate: float | None
    passive_opening_rate: float | None
    termination_unparsed: int
    """Termination verdicts that could not be read."""
    density: Density | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class DialogueResults:
    """The figures of one ``dialogue_plan`` or ``dialogue_guide`` run (``results.json``).

    Exactly one of :attr:`plan` and :attr:`guide` is set; their fields are written at the
    top level of ``results.json``.
    """

    task: str
    """``plan`` or ``guide``."""
    n: int
    score: float | None
    """Mean judge score 1-10 over readable judgements."""
    unparsed_rate: float | None
    """Share of samples without a readable score."""
    by_domain: dict[str, dict[str, Any]]
    """``{domain: {mean, n, unscored}}``."""
    plan: PlanFigures | None = field(metadata=FLATTEN)
    """Target planning's figures (written at the top level)."""
    guide: GuideFigures | None = field(metadata=FLATTEN)
    """Dialogue guidance's figures (written at the top level)."""
    seconds_p50: float | None
    seconds_p95: float | None
    tokens_per_sample: float | None
    samples: list[dict[str, Any]]
    """One row per sample (:func:`sample_rows`), the input of ``proagent dialogue kappa``."""
    run: RunHeader

    @classmethod
    def from_log(cls, log: Any) -> DialogueResults:
        """Summarise one eval log of ``dialogue_plan`` or ``dialogue_guide``."""
        rows = sample_rows(log)
        kind = "guide" if log.eval.task.endswith("guide") else "plan"
        n = len(rows)
        plan = guide = None
        if kind == "plan":
            judged = [r for r in rows if r.get("plan_parsed")]
            plan = PlanFigures(
                plan_unparsed_rate=round(1 - (rate_of(rows, "plan_parsed") or 0.0), 3) if n else None,
                judge_unparsed_rate=round(1 - (rate_of(judged, "judge_parsed") or 0.0), 3) if judged else None,
            )
        else:
            density = None
            if any("density" in r for r in rows):
                density = Density(
                    rate_of(rows, "density"),
                    rate_of(rows, "first_density"),
                    int(sum(r.get("density_unparsed") or 0 for r in rows)),
                )
            guide = GuideFigures(
                by_domain_agreeableness=group_means(rows, ["domain", "agreeableness"]),
                by_agreeableness=group_means(rows, ["agreeableness"]),
                dimensions={d: mean_of(rows, d) for d in DIMENSIONS},
                reach_rate=rate_of(rows, "reached"),
                mean_turns=rate_of(rows, "turns"),
                leak_rate=rate_of(rows, "leak"),
                passive_opening_rate=rate_of(rows, "passive_opening"),
                termination_unparsed=int(sum(r.get("termination_unparsed") or 0 for r in rows)),
                density=density,
            )
        secs = sorted(r["seconds"] for r in rows if r.get("seconds") is not None)
        toks = [r["tokens"] for r in rows if r.get("tokens") is not None]
        return cls(
            task=kind,
            n=n,
            score=mean_of(rows),
            unparsed_rate=round((n - len(scored(rows))) / n, 3) if n else None,
            by_domain=group_means(rows, ["domain"]),
            plan=plan,
            guide=guide,
            seconds_p50=round(median(secs), 2) if secs else None,
            seconds_p95=round(secs[min(len(secs) - 1, int(0.95 * len(secs)))], 2) if secs else None,
            tokens_per_sample=round(sum(toks) / len(toks)) if toks else None,
            samples=rows,
            run=replace(run_header(log), model_roles=_roles(log.eval)),
        )

    def text_table(self, title: str | None = None) -> TextTable:
        """Per-domain scores (and per agreeableness for ``guide``) and the summary lines."""
        if title is None:
            title = "ProactiveEval target planning" if self.task == "plan" else "ProactiveEval dialogue guidance"
            if self.task == "guide" and not self.run.task_args.get("give_target", True):
                title += " (no target given)"
        head, rows = _table_rows(self)
        return TextTable(title, head, rows, footer=_footer(self), width=160)


def _score_text(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def _table_rows(res: DialogueResults) -> tuple[list[str], list[list[str]]]:
    all_unscored = f"{res.unparsed_rate:.0%}" if res.n else "n/a"
    if res.plan is not None:
        head = ["domain", "n", "score (1-10)", "unscored"]
        rows = [[d, str(g["n"]), _score_text(g["mean"]), str(g["unscored"])] for d, g in res.by_domain.items()]
        rows.append(["all", str(res.n), _score_text(res.score), all_unscored])
        return head, rows
    g_ = res.guide
    levels = [lv for lv in AGREEABLENESS if lv in g_.by_agreeableness]
    head = ["domain", "n", *levels, "all", "unscored"]
    cells = g_.by_domain_agreeableness
    rows = []
    for d, g in res.by_domain.items():
        rows.append(
            [
                d,
                str(g["n"]),
                *[_score_text((cells.get(f"{d}/{lv}") or {}).get("mean")) for lv in levels],
                _score_text(g["mean"]),
                str(g["unscored"]),
            ]
        )
    rows.append(
        [
            "all",
            str(res.n),
            *[_score_text(g_.by_agreeableness[lv]["mean"]) for lv in levels],
            _score_text(res.score),
            all_unscored,
        ]
    )
    return head, rows


def _footer(res: DialogueResults) -> list[str]:
    roles = res.run.model_roles or {}
    lines = [f"agent {res.run.model}" + "".join(f", {k} {v}" for k, v in sorted(roles.items()))]
    if res.plan is not None:
        lines.append(
            f"plan unparsed {_score_text(res.plan.plan_unparsed_rate)}, judge unparsed {_score_text(res.plan.judge_unparsed_rate)}"
        )
    else:
        g = res.guide
        dims = ", ".join(f"{d} {_score_text(v)}" for d, v in g.dimensions.items())
        lines.append(f"dimensions: {dims}")
        lines.append(
            f"reached {_score_text(g.reach_rate)}, turns {_score_text(g.mean_turns)}, leaks {_score_text(g.leak_rate)}, "
            f"passive openings {_score_text(g.passive_opening_rate)}, unreadable termination verdicts {g.termination_unparsed}"
        )
        if g.density is not None:
            lines.append(
                f"target density: {_score_text(g.density.per_message)} sub-targets/message, "
                f"{_score_text(g.density.first_message)} in the first message"
            )
    lines.append(
        f"seconds/sample p50 {_score_text(res.seconds_p50)} (p95 {_score_text(res.seconds_p95)}), tokens/sample {res.tokens_per_sample}"
    )
    return lines


def render_html(res: DialogueResults) -> str:
    """A self-contained HTML page: the table, the summary and, for ``guide``, every dialogue."""
    head, rows = _table_rows(res)
    e = escape
    skip = {"id", "score", "domain", "tier", "tokens", "seconds", "dialogue", "plan"}
    samples = []
    for r in res.samples:
        details = e(", ".join(f"{k}={v}" for k, v in r.items() if k not in skip))
        if r.get("dialogue"):
            details += "".join(
                f"<div class='{'assistant' if t['role'] == 'assistant' else 'user'}'><b>{e(t['role'])}:</b> "
                f"{e(t['content'])}</div>"
                for t in r["dialogue"]
            )
        elif r.get("plan"):
            p = r["plan"]
            details += f"<div class='assistant'><b>target:</b> {e(str(p.get('target')))}</div>" + "".join(
                f"<div class='user'>- {e(x)}</div>" for x in p.get("sub_target") or []
            )
        samples.append([r["id"], str(r.get("score")), details])
    body = (
        table(head, rows)
        + "<ul>"
        + "".join(f"<li>{e(x)}</li>" for x in _footer(res))
        + "</ul>"
        + "<h2>Samples</h2>"
        + table(["id", "score", "details"], samples, raw_columns=[2])
    )
    return page(f"ProactiveEval {res.task}", body)
