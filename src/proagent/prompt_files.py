"""The one prompt loader: every prompt proagent sends lives in a text file under its stage's
``prompts/`` folder (``proagent/agent/prompts/zero_shot.txt``, ``proagent/annotate/prompts/event.txt``,
``proagent/curate/prompts/vlm_screen.txt``, ``proagent/dialogue/prompts/*.txt``), read here once
per process and filled with :class:`string.Template` (``$name`` placeholders).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from string import Template

__all__ = ["prompt_template", "prompt_text", "stage_prompts"]


@cache
def prompt_text(stage: str, name: str) -> str:
    """The text of ``proagent/<stage>/prompts/<name>`` (UTF-8, cached).

    Args:
        stage: the stage's package below ``proagent`` (``agent``, ``annotate``, ``curate``, ``dialogue``).
        name: the file name, ``.txt`` included.

    Raises:
        FileNotFoundError: no such prompt file (a packaging error: the files ship in the wheel).
    """
    return resources.files(f"proagent.{stage}").joinpath("prompts", name).read_text("utf-8")


@cache
def prompt_template(stage: str, name: str) -> Template:
    """:func:`prompt_text` as a :class:`string.Template` (fill with ``substitute``)."""
    return Template(prompt_text(stage, name))


def stage_prompts(stage: str) -> tuple[str, ...]:
    """The text of every ``*.txt`` prompt of ``proagent/<stage>/prompts/``, by file name (the
    template-echo finders of :mod:`proagent.agent.echo` mask them all)."""
    folder = resources.files(f"proagent.{stage}").joinpath("prompts")
    return tuple(
        prompt_text(stage, f.name) for f in sorted(folder.iterdir(), key=lambda f: f.name) if f.name.endswith(".txt")
    )
