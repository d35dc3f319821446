"""``proagent dialogue``: the ProactiveEval track from the command line.

Registered in the ``proagent`` group by :mod:`proagent.cli`. Options can
also be set from the environment (``PROAGENT_DIALOGUE_<COMMAND>_<OPTION>``,
through click's ``auto_envvar_prefix``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ._util import DEFAULT_MODEL, check_model, default_log_dir
from ._util import parse_model_args as _model_args

__all__ = ["dialogue"]

SEED_DATA = "../shared/data/proactiveeval-seed"


def _roles(model: str, base_url: str | None, args: dict[str, str], **roles: str | None) -> dict[str, Any]:
    """Model roles; a role naming the agent's model gets the same base URL and model args
    (so a local model is loaded once)."""
    from inspect_ai.model import get_model

    out: dict[str, Any] = {}
    for name, spec in roles.items():
        if spec is None:
            continue
        if spec == model and (args or base_url):
            out[name] = get_model(spec, base_url=base_url, **args)
        else:
            out[name] = spec
    return out


def _common(f):  # noqa: ANN001, ANN202
    opts = [
        click.option(
            "--data",
            required=True,
            type=click.Path(path_type=Path),
            help=f"ProactiveEval items: JSON/JSONL file or dataset/{{domain}}/{{fair,hard}}.json layout (seed: {SEED_DATA}).",
        ),
        click.option("--model", default=DEFAULT_MODEL, show_default=True, help="The agent: any inspect model."),
        click.option("--judge", default=None, help="Judge model (default: the agent's model)."),
        click.option("--model-base-url", default=None, help="Base URL of an OpenAI-compatible server for --model."),
        click.option("--model-arg", "model_arg", multiple=True, help="Model argument KEY=VALUE (repeatable)."),
        click.option("--domains", default=None, help="Comma-separated domains to keep."),
        click.option("--tier", type=click.Choice(["fair", "hard"]), default=None, help="Keep one tier."),
        click.option(
            "--limit",
            type=click.IntRange(min=1),
            default=None,
            help="Evaluate only the first N samples (domains interleaved).",
        ),
        click.option(
            "--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Generation seed (>= 0)."
        ),
        click.option(
            "--log-dir",
            type=click.Path(path_type=Path),
            default=None,
            help="Where logs, results.json and results.html go. Re-running with the same dir resumes.",
        ),
        click.option(
            "--display",
            type=click.Choice(["full", "rich", "plain", "log", "none"]),
            default=None,
            help="inspect progress display.",
        ),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _run(
    task: Any,
    *,
    name: str,
    data: Path,
    model: str,
    model_base_url: str | None,
    model_arg: tuple[str, ...],
    roles: dict[str, str | None],
    limit: int | None,
    log_dir: Path | None,
    display: str | None,
    extra: list[str],
    fit: dict[str, Any] | None = None,
) -> None:
    from ..dialogue.report import DialogueResults, render_html
    from ..io import write_atomic
    from ..report.results import render_table, results_from_log, write_results
    from ._util import check_writable_dir, run_eval_set

    args = _model_args(model_arg)
    if log_dir is None:
        parts = ["dialogue", name, data.resolve().name, model.split("/")[-1], *extra]
        if limit:
            parts.append(f"limit{limit}")
        log_dir = default_log_dir(*parts)
    from ..dialogue.fit import check_context

    # a prompt over a local model's context is one line now, not a failure minutes into the run
    check_context(task, model, args, {k: v for k, v in roles.items() if v}, limit=limit, log_dir=log_dir, **(fit or {}))
    check_model(model, model_base_url, args)  # a typo is one line before any work
    for role, spec in roles.items():
        if spec is not None and spec != model:
            check_model(spec, None, {}, {"user": "--user-model"}.get(role, f"--{role}"))
    model_roles = _roles(model, model_base_url, args, **roles)
    shown = ", ".join(f"{k} {v if isinstance(v, str) else model}" for k, v in model_roles.items())
    n = len(task.dataset) if limit is None else min(limit, len(task.dataset))  # what the run evaluates
    click.echo(
        f"proagent dialogue {name}: {n} sample{'' if n == 1 else 's'}, agent {model}, {shown}, log dir {log_dir}",
        err=True,
    )
    check_writable_dir(log_dir, "--log-dir")
    full = run_eval_set(
        task,
        log_dir,
        model,
        model_base_url=model_base_url,
        model_args=args,
        limit=limit,
        display=display,
        model_roles=model_roles,
    )
    results = results_from_log(full, DialogueResults)
    write_results(log_dir / "results.json", results)
    write_atomic(log_dir / "results.html", render_html(results))
    click.echo(render_table(results))
    click.echo(f"results: {log_dir / 'results.json'}  html: {log_dir / 'results.html'}  log: {full.location}")


@click.group("dialogue")
def dialogue() -> None:
    """ProactiveEval: target planning, dialogue guidance, judge agreement, environment generation."""


@dialogue.command("plan")
@_common
def plan_cmd(
    data: Path,
    model: str,
    judge: str | None,
    model_base_url: str | None,
    model_arg: tuple[str, ...],
    domains: str | None,
    tier: str | None,
    limit: int | None,
    seed: int,
    log_dir: Path | None,
    display: str | None,
) -> None:
    """Target planning: the agent proposes a target and sub-targets, a reference-based judge scores 1-10.

    Example: proagent dialogue plan --data ../shared/data/proactiveeval-seed --limit 6
    """
    from ..dialogue.planning import dialogue_plan

    task = dialogue_plan(data=str(data), domains=domains, tier=tier, seed=seed)  # DataError: exit 1
    _run(
        task,
        name="plan",
        data=data,
        model=model,
        model_base_url=model_base_url,
        model_arg=model_arg,
        roles={"judge": judge or model},
        limit=limit,
        log_dir=log_dir,
        display=display,
        extra=[f"judge-{(judge or model).split('/')[-1]}", domains or "", tier or "", f"seed{seed}"],
    )


@dialogue.command("guide")
@_common
@click.option("--user-model", default=None, help="Simulated user model (default: the judge).")
@click.option("--agreeableness", default="low,medium,high", show_default=True, help="Comma-separated user levels.")
@click.option(
    "--no-target",
    is_flag=True,
    default=False,
    help="The 'no target given' variant: the agent gets only the environment.",
)
@click.option("--max-turns", type=click.IntRange(1, 50), default=6, show_default=True, help="Turns at most.")
@click.option("--memory-turns", type=click.IntRange(0, 50), default=3, show_default=True, help="Turns the agent sees.")
@click.option(
    "--density/--no-density",
    default=False,
    show_default=True,
    help="Measure target density (one judge call per agent message).",
)
def guide_cmd(
    data: Path,
    model: str,
    judge: str | None,
    model_base_url: str | None,
    model_arg: tuple[str, ...],
    domains: str | None,
    tier: str | None,
    limit: int | None,
    seed: int,
    log_dir: Path | None,
    display: str | None,
    user_model: str | None,
    agreeableness: str,
    no_target: bool,
    max_turns: int,
    memory_turns: int,
    density: bool,
) -> None:
    """Dialogue guidance: the agent opens and leads a dialogue with a simulated user; judges score 1-10.

    Example: proagent dialogue guide --data ../shared/data/proactiveeval-seed --agreeableness medium --limit 2
    """
    from ..dialogue.guidance import dialogue_guide, parse_levels

    parse_levels(agreeableness)  # UsageError (--agreeableness): exit 2, before the data is read
    task = dialogue_guide(
        data=str(data),
        agreeableness=agreeableness,
        give_target=not no_target,
        max_turns=max_turns,
        memory_turns=memory_turns,
        density=density,
        domains=domains,
        tier=tier,
        seed=seed,
    )  # DataError: exit 1
    judge = judge or model
    _run(
        task,
        name="guide",
        data=data,
        model=model,
        model_base_url=model_base_url,
        model_arg=model_arg,
        roles={"judge": judge, "user": user_model or judge},
        limit=limit,
        log_dir=log_dir,
        display=display,
        extra=[
            f"judge-{judge.split('/')[-1]}",
            agreeableness.replace(",", "+"),
            "notarget" if no_target else "",
            f"t{max_turns}m{memory_turns}",
            "density" if density else "",
            domains or "",
            tier or "",
            f"seed{seed}",
        ],
        fit={"max_turns": max_turns, "memory_turns": memory_turns, "give_target": not no_target, "density": density},
    )


@dialogue.command("kappa")
@click.option(
    "--human",
    "human_csv",
    required=True,
    type=click.Path(path_type=Path),
    help="CSV with columns id, human (1-10) and optionally judge.",
)
@click.option(
    "--results",
    type=click.Path(path_type=Path),
    default=None,
    help="results.json (or its folder) of dialogue plan|guide, for the judge's scores.",
)
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Also write the agreement as JSON here.")
def kappa_cmd(human_csv: Path, results: Path | None, out: Path | None) -> None:
    """Judge-human agreement as quadratic weighted kappa (paper: 0.826 planning, 0.721 guidance).

    Example: proagent dialogue kappa --human scores.csv --results logs/dialogue-plan-.../results.json
    """
    from ..dialogue.kappa import agreement, judge_scores_from_results, read_score_csv
    from ..io import write_json_atomic

    human, judge = read_score_csv(human_csv)  # DataError: exit 1
    if results is not None:
        judge = judge_scores_from_results(results)
    if not judge:
        raise click.UsageError("no judge scores: give --results or a 'judge' column in the CSV")
    res = agreement(human, judge)
    click.echo(
        f"quadratic weighted kappa {res['kappa_quadratic']:.3f} over {res['n']} items "
        f"(human mean {res['human_mean']:.2f}, judge mean {res['judge_mean']:.2f}, exact agreement {res['exact_agreement']:.0%})"
    )
    if res["human_only"] or res["judge_only"]:
        n_judge = len(res["judge_only"])
        click.echo(
            f"unmatched: {len(res['human_only'])} human-only, {n_judge} judge-only id{'' if n_judge == 1 else 's'}"
        )
    if out:
        write_json_atomic(out, res)
        click.echo(f"written: {out}")


@dialogue.command("generate")
@click.option("--seeds", required=True, type=click.Path(path_type=Path), help="Seed environments (file or folder).")
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="Output folder (artefacts, dataset/, yield.json). Re-run to resume.",
)
@click.option("--model", default=DEFAULT_MODEL, show_default=True, help="Generator model.")
@click.option("--judge", default=None, help="Judge of reasoners' predictions (default: --model).")
@click.option("--reasoners", default=None, help="Comma-separated 3 reasoner models (default: --model sampled 3 times).")
@click.option(
    "--checkers", default=None, help="Comma-separated final-check judges (default: --judge sampled --n-checkers times)."
)
@click.option("--model-arg", "model_arg", multiple=True, help="Model argument KEY=VALUE for --model (repeatable).")
@click.option("--domains", default=None, help="Comma-separated domains (default: those of the seeds).")
@click.option("--depth", type=click.IntRange(1, 4), default=2, show_default=True, help="Topic tree depth.")
@click.option("--branching", type=click.IntRange(1, 10), default=3, show_default=True, help="Sub-topics per node.")
@click.option(
    "--candidates", type=click.IntRange(1, 10), default=5, show_default=True, help="Target candidates per environment."
)
@click.option("--rounds", type=click.IntRange(0, 10), default=5, show_default=True, help="Refinement rounds at most.")
@click.option("--n-checkers", type=click.IntRange(1, 9), default=5, show_default=True, help="Final-check judges.")
@click.option(
    "--max-topics", type=click.IntRange(min=1), default=None, help="Leaf topics per domain to turn into environments."
)
@click.option(
    "--approve-topics", is_flag=True, default=False, help="The topic tree (OUT/topics.txt) has been reviewed: continue."
)
@click.option(
    "--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of sampling and shuffling (>= 0)."
)
def generate_cmd(
    seeds: Path,
    out: Path,
    model: str,
    judge: str | None,
    reasoners: str | None,
    checkers: str | None,
    model_arg: tuple[str, ...],
    domains: str | None,
    depth: int,
    branching: int,
    candidates: int,
    rounds: int,
    n_checkers: int,
    max_topics: int | None,
    approve_topics: bool,
    seed: int,
) -> None:
    """Generate new fair/hard environments from seeds (topic tree, ensemble targets, refinement, final check).

    Runs in two steps: the first writes OUT/topics.txt for review and stops; re-run with --approve-topics.
    Example: proagent dialogue generate --seeds ../shared/data/proactiveeval-seed --out runs/gen --depth 1 --branching 2
    """
    from inspect_ai.model import get_model

    from ..dialogue.generator import GenConfig, GenModels, TopicReviewPending, run_generate
    from ..dialogue.io import read_environments
    from ..errors import ProagentError
    from ._util import check_writable_dir

    seed_envs = read_environments(seeds)
    args = _model_args(model_arg)

    def m(name: str, option: str = "--model"):  # noqa: ANN202
        check_model(name, None, args if name == model else {}, option)
        return get_model(name, **(args if name == model else {}))

    gen = m(model)
    jud = m(judge, "--judge") if judge else gen
    models = GenModels(
        generator=gen,
        judge=jud,
        reasoners=[m(x.strip(), "--reasoners") for x in reasoners.split(",") if x.strip()] if reasoners else [],
        checkers=[m(x.strip(), "--checkers") for x in checkers.split(",") if x.strip()] if checkers else [],
    )
    cfg = GenConfig(
        depth=depth,
        branching=branching,
        n_candidates=candidates,
        max_rounds=rounds,
        n_checkers=n_checkers,
        max_topics=max_topics,
        domains=[d.strip() for d in domains.split(",")] if domains else None,
        approve_topics=approve_topics,
        seed=seed,
    )
    check_writable_dir(out, "--out")  # and the run lock on it
    try:
        summary = run_generate(out, seed_envs, models, cfg)
    except TopicReviewPending as e:
        click.echo(f"topic tree awaiting review: {e}")
        return
    except ProagentError:  # a topics.txt that cannot be used (DataError): mapped by kind, not by the catch-all below
        raise
    except Exception as e:  # noqa: BLE001 (a model or provider failure mid-run)
        raise click.ClickException(
            f"generation stopped ({type(e).__name__}: {e}); every finished step is saved "
            f"under {out}/items: re-run the same command to resume"
        ) from None
    click.echo(f"{summary.topics} topics: " + ", ".join(f"{k} {v}" for k, v in sorted(summary.status.items())))
    for r in summary.per_round:
        if r.tested:
            click.echo(f"round {r.round}: tested {r.tested}, easy {r.easy}, fair {r.fair}, hard {r.hard}")
    click.echo(
        f"kept: fair {summary.kept_fair}, hard {summary.kept_hard}  dataset: {out / 'dataset'}  "
        f"yield: {out / 'yield.json'}"
    )
