"""The annotation prompt (ProAgentBench Appendix B.5): event metadata, the OCR text
of the first 3 and last 3 screenshots (500 characters each), and the JSON answer
format. Text lives in ``proagent/annotate/prompts/*.txt``.

When the conversation was read from the screen by layout
(:mod:`proagent.annotate.conversation`), the model is only asked the intention
(``intent.txt``: the question and the start of the reply, a few hundred characters
instead of six screens of OCR text; the answer is one category name, the summary
being the question itself)."""

from __future__ import annotations

from collections.abc import Sequence
from string import Template

from ..prompt_files import prompt_template, stage_prompts
from ..records import Event, Screenshot
from ..taxonomy import Taxonomy, load_taxonomy
from .platforms import PlatformHit
from .screens import FIRST_LAST

__all__ = [
    "INTENT_QUERY_CHARS",
    "INTENT_REPLY_CHARS",
    "event_prompt",
    "intent_prompt",
    "intent_system_prompt",
    "system_prompt",
    "template_texts",
]

INTENT_QUERY_CHARS = 600
"""Characters of the user's question sent to the intention prompt."""
INTENT_REPLY_CHARS = 300
"""Characters of the reply sent to the intention prompt (its start says what kind of help it gave)."""


def _template(name: str) -> Template:
    return prompt_template("annotate", name)


def system_prompt(taxonomy: Taxonomy | None = None) -> str:
    """The system message: the annotator's role and the 16 intention categories."""
    return _template("system.txt").substitute(categories=(taxonomy or load_taxonomy()).prompt_list()).strip()


def _duration(event: Event) -> str:
    d = event.duration
    if d is None:
        return "still open"
    return f"{d:.0f} s" if d < 120 else f"{d / 60:.1f} min"


def event_prompt(
    event: Event, shots: Sequence[Screenshot], texts: Sequence[str], hit: PlatformHit | None, *, images: bool = False
) -> str:
    """The user message for one event.

    Args:
        event: The event.
        shots: Its sampled screenshots (:func:`~proagent.annotate.screens.sample_screenshots`).
        texts: Their OCR texts, already cut to 500 characters, same order.
        hit: The first pass's platform evidence (``None``: none found).
        images: The screenshots are attached as images after this text (VLM mode).
    """
    blocks = []
    screen = event.focused_screenshots  # the focused screen's, when the log records it
    for i, (s, t) in enumerate(zip(shots, texts), 1):
        where = (
            f"{i} of {len(screen)}"
            if len(shots) == len(screen)
            else ("start of the event" if i <= FIRST_LAST else "end of the event")
        )
        img = f", image {i} attached" if images and s.path else ""
        blocks.append(f"Screenshot {i} ({s.time:%H:%M:%S}, {where}{img}) screen text:\n{t or '(no text)'}")
    screens = "\n\n".join(blocks) or "(the event has no screenshots)"
    hint = (
        f"{hit.platform} ({hit.evidence} mentions {hit.matched!r})"
        if hit
        else "no AI product named in the app, title or screen text"
    )
    return (
        _template("event.txt")
        .substitute(
            app=event.app_name or "(unknown)",
            title=" ".join(event.window_title.split())[:200] or "(none)",
            start=f"{event.start:%Y-%m-%d %H:%M:%S}",
            end=f"{event.end:%H:%M:%S}" if event.end else "open",
            duration=_duration(event),
            n_shots=len(screen),
            shown="all shown"
            if len(shots) == len(screen)
            else f"shown: the first {FIRST_LAST} and the last {FIRST_LAST}",
            hint=hint,
            screens=screens,
        )
        .strip()
    )


def intent_system_prompt(taxonomy: Taxonomy | None = None) -> str:  # noqa: ARG001 - one signature with system_prompt
    """The system message of the intention prompt (the choices come in the user message)."""
    return _template("intent_system.txt").substitute().strip()


def intent_prompt(
    event: Event,
    platform: str | None,
    query: str,
    reply: str | None,
    choices: Sequence[str],
    taxonomy: Taxonomy | None = None,
) -> str:
    """The user message asking the intention of a conversation read from the screen.

    Args:
        event: The event (its application is named).
        platform: The LLM platform found, ``None`` when unknown.
        query: The user's last question as shown (cut to :data:`INTENT_QUERY_CHARS`).
        reply: The reply as shown (cut to :data:`INTENT_REPLY_CHARS`), ``None`` when none is shown yet.
        choices: Category names offered (:func:`proagent.annotate.intent.shortlist`), listed with
            their descriptions.
    """
    taxonomy = taxonomy or load_taxonomy()
    desc = {c.name: c.description for c in taxonomy.categories}
    return (
        _template("intent.txt")
        .substitute(
            platform=platform or "an AI assistant",
            app=event.app_name or "unknown application",
            query=query[:INTENT_QUERY_CHARS],
            reply=(reply or "(no reply shown yet)")[:INTENT_REPLY_CHARS],
            choices="\n".join(f"- {c}: {desc.get(c, '')}".rstrip(": ") for c in choices),
        )
        .strip()
    )


def template_texts() -> tuple[str, ...]:
    """Every annotation prompt template's text (for :class:`proagent.agent.echo.TemplateEcho`)."""
    return stage_prompts("annotate")
