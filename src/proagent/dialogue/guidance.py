"""Dialogue guidance (ProactiveEval) as an inspect_ai task.

The agent (the task model) opens a conversation unprompted and leads it toward
the target; a simulated user (role ``user``, else ``judge``) answers according to
the environment and an agreeableness level. One turn = one agent message and
the user's reply. The agent sees only the last :data:`MEMORY_TURNS` turns; the
dialogue lasts at most :data:`MAX_TURNS` turns; after each turn the judge
decides whether the target is reached, and the dialogue ends when it is. Then
the guidance judge scores the whole dialogue 1-10 (effectiveness,
personalization, tone, engagement, naturalness, overall), reasoning first.

Variant ``give_target=False``: the agent gets only the environment and must find
the target itself (the judges still see the reference target).

    inspect eval proagent/dialogue_guide -T data=../shared/data/proactiveeval-seed \\
        --model local/qwen2.5-coder-1.5b --model-role judge=local/qwen2.5-coder-1.5b --limit 2
"""

from __future__ import annotations

from dataclasses import asdict

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.dataset import Sample as InspectSample
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    get_model,
)
from inspect_ai.scorer import Score, Target, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from ..bench.running import task_input_errors
from ..errors import UsageError
from .analysis import density as density_summary
from .analysis import leaks, passive_opening
from .judges import (
    extract_mentioned,
    judge_guidance,
    judge_model,
    judge_reached,
    user_model,
)
from .metrics import (
    UNSCORED,
    by_domain,
    by_domain_agreeableness,
    density_mean,
    first_density_mean,
    judge_mean,
    judge_unparsed_rate,
    leak_rate,
    mean_turns,
    passive_rate,
    reach_rate,
)
from .parsing import clean_message
from .planning import env_from_metadata, env_metadata, select
from .prompting import (
    AGREEABLENESS_TEXT,
    MEMORY_TURNS,
    env_values,
    render,
    render_history,
    window,
)
from .records import AGREEABLENESS, DIMENSIONS, Turn

__all__ = [
    "AGENT_MAX_TOKENS",
    "MAX_TURNS",
    "USER_MAX_TOKENS",
    "dialogue_guide",
    "guide_dialogue",
    "guide_judge",
    "parse_levels",
    "target_density",
    "turns_from_metadata",
]

MAX_TURNS = 6
"""Turns at most (ProactiveEval)."""
AGENT_MAX_TOKENS = 120
"""Answer budget of one agent message, tokens."""
USER_MAX_TOKENS = 100
"""Answer budget of one simulated-user message, tokens."""


def parse_levels(levels: str | None) -> list[str]:
    """``"low,high"`` -> ``["low", "high"]``; None or empty -> all three.

    Raises:
        ValueError: an unknown level.
    """
    out = [x.strip().lower() for x in (levels or "").split(",") if x.strip()] or list(AGREEABLENESS)
    bad = [x for x in out if x not in AGREEABLENESS]
    if bad:
        raise UsageError("--agreeableness", f"{', '.join(bad)}: choose from {', '.join(AGREEABLENESS)}")
    return out


def turns_from_metadata(md: dict) -> list[Turn]:
    """The dialogue stored by :func:`guide_dialogue`."""
    return [Turn(role=t["role"], content=t["content"]) for t in md.get("dialogue") or []]


@solver
def guide_dialogue(
    max_turns: int = MAX_TURNS,
    memory_turns: int = MEMORY_TURNS,
    give_target: bool = True,
    early_stop: bool = True,
    temperature: float = 0.0,
) -> Solver:
    """Run the dialogue between the agent, the simulated user and the termination judge.

    Leaves in metadata: ``dialogue`` (list of ``{role, content}``), ``turns``,
    ``reached`` (the judge's last verdict: True, False or None if unreadable),
    ``termination`` (per-turn verdicts with the judge's answers),
    ``termination_unparsed`` (count) and ``agent_inputs`` (what the agent saw each turn).
    """
    if max_turns < 1:
        raise UsageError("--max-turns", "must be >= 1")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        env = env_from_metadata(state.metadata)
        level = state.metadata["agreeableness"]
        agent, user, judge = get_model(), user_model(), judge_model()
        system = render("guide_agent" if give_target else "guide_agent_no_target", **env_values(env))
        user_system = render("user_sim", **env_values(env), agreeableness=AGREEABLENESS_TEXT[level])
        turns: list[Turn] = []
        verdicts: list[dict] = []
        seen_by_agent: list[str] = []
        reached: bool | None = False
        out = None
        for n in range(1, max_turns + 1):
            history = render_history(window(turns, memory_turns))
            seen_by_agent.append(history)
            out = await agent.generate(
                [
                    ChatMessageSystem(content=system),
                    ChatMessageUser(content=render("guide_agent_turn", history=history)),
                ],
                config=GenerateConfig(temperature=temperature, max_tokens=AGENT_MAX_TOKENS),
            )
            turns.append(Turn("assistant", clean_message(out.completion, "assistant")))
            reply = await user.generate(
                [
                    ChatMessageSystem(content=user_system),
                    ChatMessageUser(content=render("user_sim_turn", history=render_history(turns))),
                ],
                config=GenerateConfig(temperature=0.0, max_tokens=USER_MAX_TOKENS),
            )
            turns.append(Turn("user", clean_message(reply.completion, "user")))
            reached, raw = await judge_reached(judge, env, turns)
            verdicts.append({"turn": n, "reached": reached, "judge_raw": raw})
            if early_stop and reached:
                break
        state.messages = [ChatMessageSystem(content=system)] + [
            ChatMessageAssistant(content=t.content) if t.role == "assistant" else ChatMessageUser(content=t.content)
            for t in turns
        ]
        if out is not None:
            state.output = out
        state.metadata.update(
            {
                "dialogue": [asdict(t) for t in turns],
                "turns": len(verdicts),
                "reached": reached,
                "termination": verdicts,
                "termination_unparsed": sum(v["reached"] is None for v in verdicts),
                "agent_inputs": seen_by_agent,
                "give_target": give_target,
            }
        )
        return state

    return solve


@scorer(
    metrics=[
        judge_mean(),
        judge_unparsed_rate(),
        by_domain(),
        by_domain_agreeableness(),
        reach_rate(),
        mean_turns(),
        leak_rate(),
        passive_rate(),
    ]
)
def guide_judge():  # noqa: ANN201
    """The guidance judge (role ``judge``) plus the regex analyses.

    Value keys: ``score`` (1-10 or -1), the five dimensions (-1 when unreadable),
    ``judge_parsed``, ``turns``, ``reached`` (1/0), ``leak`` (1/0),
    ``passive_opening`` (1/0), ``termination_unparsed``.
    """

    async def score(state: TaskState, target: Target) -> Score:
        env = env_from_metadata(state.metadata)
        turns = turns_from_metadata(state.metadata)
        j = await judge_guidance(judge_model(), env, turns, state.metadata["agreeableness"])
        found = leaks(turns)
        value = {
            "score": j.score if j.parsed else UNSCORED,
            **{d: (j.dimensions.get(d) if j.dimensions.get(d) is not None else UNSCORED) for d in DIMENSIONS},
            "judge_parsed": int(j.parsed),
            "turns": int(state.metadata.get("turns", 0)),
            "reached": int(bool(state.metadata.get("reached"))),
            "leak": int(bool(found)),
            "passive_opening": int(passive_opening(turns)),
            "termination_unparsed": int(state.metadata.get("termination_unparsed", 0)),
        }
        return Score(
            value=value,
            answer=turns[0].content if turns else "",
            explanation=j.reasoning,
            metadata={"judge_raw": j.raw, "leaks": found},
        )

    return score


@scorer(metrics=[density_mean(), first_density_mean()])
def target_density():  # noqa: ANN201
    """Target density by an extraction judge (role ``judge``): sub-targets per agent
    message (``density``) and in the first message (``first_density``); -1 when unreadable."""

    async def score(state: TaskState, target: Target) -> Score:
        env = env_from_metadata(state.metadata)
        msgs = [t.content for t in turns_from_metadata(state.metadata) if t.role == "assistant"]
        mentioned = [await extract_mentioned(judge_model(), env, m) for m in msgs]
        d = density_summary(mentioned)
        return Score(
            value={
                "density": UNSCORED if d["per_message"] is None else d["per_message"],
                "first_density": UNSCORED if d["first"] is None else d["first"],
                "density_unparsed": d["unparsed"],
            },
            metadata={"mentioned": mentioned},
        )

    return score


@task
@task_input_errors
def dialogue_guide(
    data: str,
    agreeableness: str | None = None,
    give_target: bool = True,
    max_turns: int = MAX_TURNS,
    memory_turns: int = MEMORY_TURNS,
    early_stop: bool = True,
    density: bool = False,
    domains: str | None = None,
    tier: str | None = None,
    seed: int = 0,
) -> Task:
    """ProactiveEval dialogue guidance.

    Args:
        data: ProactiveEval items: a JSON/JSONL file or the ``dataset/{domain}/{fair,hard}.json`` layout.
        agreeableness: Comma-separated levels of the simulated user (default ``low,medium,high``).
        give_target: Give the agent the reference target (False: the "no target given" variant).
        max_turns: Turns at most (paper: 6).
        memory_turns: Turns the agent sees (paper: 3).
        early_stop: End when the judge sees the target reached (paper: yes).
        density: Also measure target density with the extraction judge (one judge call per agent message).
        domains: Comma-separated domains to keep (default: all).
        tier: ``fair`` or ``hard`` to keep one tier (default: all).
        seed: Generation seed.
    """
    levels = parse_levels(agreeableness)
    envs = select(data, domains, tier)
    samples = [
        InspectSample(
            id=f"{e.id}:{level}",
            input=f"Open and lead a proactive conversation ({e.domain}, {e.id}, user agreeableness {level}).",
            target=e.target,
            metadata={**env_metadata(e), "agreeableness": level},
        )
        for e in envs
        for level in levels
    ]
    scorers = [guide_judge()] + ([target_density()] if density else [])
    return Task(
        dataset=MemoryDataset(samples, name="proactiveeval-guide"),
        solver=guide_dialogue(
            max_turns=int(max_turns),
            memory_turns=int(memory_turns),
            give_target=bool(give_target),
            early_stop=bool(early_stop),
        ),
        scorer=scorers,
        config=GenerateConfig(temperature=0.0, max_tokens=AGENT_MAX_TOKENS, seed=int(seed)),
        metadata={"track": "proactiveeval", "task": "guide", "give_target": bool(give_target)},
    )
