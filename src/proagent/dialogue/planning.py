"""Target planning (ProactiveEval) as an inspect_ai task.

From an environment (user information, trigger factor) the agent proposes a
target and sub-targets as JSON; a reference-based judge writes its reasoning,
then a score 1-10 (10 = better than the reference), with two in-context
examples. Scores per domain and overall.

    inspect eval proagent/dialogue_plan -T data=../shared/data/proactiveeval-seed \\
        --model local/qwen2.5-coder-1.5b --model-role judge=local/qwen2.5-coder-1.5b --limit 6
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.dataset import Sample as InspectSample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.scorer import Score, Target, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from ..bench.running import task_input_errors
from ..errors import DataError
from .io import environment_from_item, read_environments
from .judges import judge_model, judge_plan
from .metrics import UNSCORED, by_domain, judge_mean, judge_unparsed_rate
from .parsing import parse_plan
from .prompting import env_values, render
from .records import Environment

__all__ = ["PLAN_MAX_TOKENS", "dialogue_plan", "env_from_metadata", "plan_agent", "plan_judge", "round_robin", "select"]

PLAN_MAX_TOKENS = 320
"""Answer budget of the planning agent, tokens."""


def round_robin(envs: Sequence[Environment]) -> list[Environment]:
    """Environments interleaved by domain (first of each domain, then second ...), so
    that ``--limit N`` covers as many domains as it can."""
    by: dict[str, list[Environment]] = {}
    for e in envs:
        by.setdefault(e.domain, []).append(e)
    out: list[Environment] = []
    for i in range(max((len(v) for v in by.values()), default=0)):
        out.extend(v[i] for v in by.values() if i < len(v))
    return out


def select(data: str, domains: str | Sequence[str] | None = None, tier: str | None = None) -> list[Environment]:
    """Read environments, keep the given domains (comma list) and tier, interleave by domain.

    Raises:
        proagent.errors.DataError: unreadable data.
        ValueError: the filters leave nothing.
    """
    envs = read_environments(data)
    if domains:
        want = {d.strip() for d in (domains.split(",") if isinstance(domains, str) else domains) if d.strip()}
        envs = [e for e in envs if e.domain in want]
    if tier:
        envs = [e for e in envs if e.tier == tier]
    if not envs:
        raise DataError(data, "no environments left after the domain/tier filters")
    return round_robin(envs)


def env_metadata(env: Environment) -> dict:
    """Sample metadata holding the whole item (for solvers and scorers)."""
    return {"domain": env.domain, "topic": env.topic, "tier": env.tier, "item": env.to_item()}


def env_from_metadata(md: dict) -> Environment:
    """The environment stored by :func:`env_metadata`."""
    return environment_from_item(md["item"], where=f"sample {md['item'].get('id')}")


@solver
def plan_agent() -> Solver:
    """Ask the task model for a target plan; the parsed plan goes to ``metadata["plan"]``."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if not any(m.role == "system" for m in state.messages):
            state.messages.insert(0, ChatMessageSystem(content=render("plan_system")))
        state = await generate(state)
        plan = parse_plan(state.output.completion if state.output else "")
        state.metadata["plan"] = asdict(plan)
        return state

    return solve


@scorer(metrics=[judge_mean(), judge_unparsed_rate(), by_domain()])
def plan_judge():  # noqa: ANN201
    """Reference-based judge of the plan (role ``judge``). Value keys: ``score``
    (1-10 or -1), ``plan_parsed``, ``judge_parsed``."""

    async def score(state: TaskState, target: Target) -> Score:
        env = env_from_metadata(state.metadata)
        plan = parse_plan(state.output.completion if state.output else "")
        if not plan.parsed:
            return Score(
                value={"score": UNSCORED, "plan_parsed": 0, "judge_parsed": 0},
                answer="unparsed plan",
                explanation="the agent's answer has no readable target",
            )
        j = await judge_plan(judge_model(), env, plan)
        return Score(
            value={"score": j.score if j.parsed else UNSCORED, "plan_parsed": 1, "judge_parsed": int(j.parsed)},
            answer=plan.target,
            explanation=j.reasoning,
            metadata={"judge_raw": j.raw, "plan": asdict(plan)},
        )

    return score


@task
@task_input_errors
def dialogue_plan(data: str, domains: str | None = None, tier: str | None = None, seed: int = 0) -> Task:
    """ProactiveEval target planning.

    Args:
        data: ProactiveEval items: a JSON/JSONL file or the ``dataset/{domain}/{fair,hard}.json`` layout.
        domains: Comma-separated domains to keep (default: all).
        tier: ``fair`` or ``hard`` to keep one tier (default: all).
        seed: Generation seed.
    """
    envs = select(data, domains, tier)
    samples = [
        InspectSample(
            id=e.id,
            input=[ChatMessageUser(content=render("plan_user", **env_values(e)))],
            target=e.target,
            metadata=env_metadata(e),
        )
        for e in envs
    ]
    return Task(
        dataset=MemoryDataset(samples, name="proactiveeval-plan"),
        solver=plan_agent(),
        scorer=plan_judge(),
        config=GenerateConfig(temperature=0.0, max_tokens=PLAN_MAX_TOKENS, seed=int(seed)),
        metadata={"track": "proactiveeval", "task": "plan"},
    )
