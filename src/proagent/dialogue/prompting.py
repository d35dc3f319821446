"""Prompts of the ProactiveEval track, rendered from ``proagent/dialogue/prompts/*.txt``.

Each template is a :class:`string.Template` (``$name`` placeholders). Stable
parts (role, environment) come first so llama.cpp can reuse the prefix.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..prompt_files import prompt_template, prompt_text
from .records import Environment, Turn

__all__ = [
    "AGREEABLENESS_TEXT",
    "MEMORY_TURNS",
    "render",
    "render_history",
    "render_sub_targets",
    "template_text",
    "window",
]

MEMORY_TURNS = 3
"""Turns of the dialogue the agent sees (ProactiveEval: the last 3)."""

AGREEABLENESS_TEXT = {
    "low": (
        "low agreeableness. You are sceptical of unsolicited advice and busy. You push back, give short replies, "
        "and only agree if the assistant gives a specific reason that fits your situation, after several turns."
    ),
    "medium": (
        "medium agreeableness. You are open but cautious: you ask a question or raise one concern before you "
        "agree to anything."
    ),
    "high": "high agreeableness. You are cooperative and friendly and agree readily when a suggestion is reasonable.",
}
"""How the simulated user is told to behave at each agreeableness level."""


def template_text(name: str) -> str:
    """The raw text of ``prompts/<name>.txt`` (:func:`proagent.prompt_files.prompt_text`)."""
    return prompt_text("dialogue", f"{name}.txt")


def render(name: str, **values: object) -> str:
    """Fill ``prompts/<name>.txt``.

    Raises:
        KeyError: a placeholder of the template was not given.
    """
    return prompt_template("dialogue", f"{name}.txt").substitute({k: str(v) for k, v in values.items()}).strip()


def render_sub_targets(subs: Sequence[str], numbered: bool = False) -> str:
    """Sub-targets on one line joined by `` | ``, or numbered one per line."""
    if numbered:
        return "\n".join(f"{i}. {s}" for i, s in enumerate(subs, 1))
    return " | ".join(subs)


def render_history(turns: Sequence[Turn], empty: str = "(The conversation has not started yet.)") -> str:
    """``Assistant: ...`` / ``User: ...`` lines, oldest first (no turn numbers, so
    models are not invited to write them)."""
    if not turns:
        return empty
    return "\n".join(f"{'Assistant' if t.role == 'assistant' else 'User'}: {t.content}" for t in turns)


def window(turns: Sequence[Turn], memory_turns: int = MEMORY_TURNS) -> list[Turn]:
    """The last ``memory_turns`` turns (a turn = one assistant message and the user's reply)."""
    if memory_turns <= 0:
        return []
    starts = [i for i, t in enumerate(turns) if t.role == "assistant"]
    if len(starts) <= memory_turns:
        return list(turns)
    return list(turns[starts[-memory_turns] :])


def env_values(env: Environment) -> dict[str, str]:
    """The environment's placeholders: user_information, trigger_factor, target, sub_target."""
    return {
        "user_information": env.user_information,
        "trigger_factor": env.trigger_factor,
        "target": env.target,
        "sub_target": render_sub_targets(env.sub_target),
    }
