"""Render a sample into the prompt of ProAgentBench (section 5.1, Appendix prompts).

Structure: system role with the intention taxonomy; recent activity context;
current state (app, title, time, screen summary cut to 200 characters); screen
content (OCR text, or the image for a vision model); task instruction. The
prompt text lives in ``proagent/agent/prompts/*.txt``.

Order is chosen for llama.cpp prefix reuse (docs/architecture.md, prompt layout): the system
message is identical for every sample, a long-term memory block (when a memory
is used, ``prompts/memory.txt``) comes before the history, the history is oldest
first, the current state comes last.
"""

from __future__ import annotations

from string import Template

from ..prompt_files import prompt_template
from ..records import Event, Sample
from ..taxonomy import Taxonomy, load_taxonomy

__all__ = [
    "METHOD_INSTRUCTIONS",
    "SCREEN_CHARS",
    "SCREEN_IMAGE",
    "SUMMARY_CHARS",
    "memory_block",
    "render_event",
    "system_prompt",
    "user_prompt",
    "with_memory",
]

SUMMARY_CHARS = 200
"""Current-state screen summary cut, characters (ProAgentBench section 5.1)."""
SCREEN_CHARS = 800
"""OCR text of the current screen shown to the model, characters."""
CONTEXT_EVENT_CHARS = 160
"""Summary of each context event, characters."""

METHOD_INSTRUCTIONS = {"zero-shot": "zero_shot.txt", "cot": "cot.txt"}
"""Instruction template of each prompting method."""


def _template(name: str) -> Template:
    return prompt_template("agent", name)


def _cut(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def render_event(e: Event) -> str:
    """One context line: ``[HH:MM:SS] app | title: summary`` (empty parts left out)."""
    where = " | ".join(p for p in (e.app_name, _cut(e.window_title, 80)) if p)
    text = _cut(e.summary, CONTEXT_EVENT_CHARS)
    body = f"{where}: {text}" if where and text else (where or text or "(no description)")
    return f"[{e.start:%H:%M:%S}] {body}"


def _window_text(seconds: float) -> str:
    if seconds >= 60 and seconds % 60 == 0:
        return f"{int(seconds // 60)} min"
    return f"{seconds:g} s"


def system_prompt(taxonomy: Taxonomy | None = None) -> str:
    """The system message: role and intention categories (same for every sample)."""
    taxonomy = taxonomy or load_taxonomy()
    return _template("system.txt").substitute(categories=taxonomy.prompt_list()).strip()


SCREEN_IMAGE = "(the current screenshot is attached as an image)"
"""Screen content of the image modality (ProAgentBench Appendix F.2): the screenshot replaces the OCR text."""


def user_prompt(sample: Sample, method: str = "zero-shot", modality: str = "text") -> str:
    """The user message for one sample and method (``zero-shot`` or ``cot``).

    ``modality="image"``: the screen content is the attached screenshot
    (:data:`SCREEN_IMAGE`) instead of its OCR text (ProAgentBench Appendix F.2).

    Raises:
        KeyError: unknown method.
    """
    instruction = _template(METHOD_INSTRUCTIONS[method]).template.strip()
    cur = sample.current
    # the latest screenshot of the current event that has OCR text
    screen = next((s.ocr_text for s in reversed(cur.screenshots) if s.ocr_text.strip()), "")
    screen = _cut(screen, SCREEN_CHARS) if screen.strip() else "(no screen text)"
    if modality == "image":
        screen = SCREEN_IMAGE
    context = "\n".join(render_event(e) for e in sample.context) or "(nothing earlier in the window)"
    return _template("observation.txt").substitute(
        window=_window_text(sample.window_seconds),
        context=context,
        time=f"{sample.time:%Y-%m-%d %H:%M:%S} ({sample.time:%A})",
        app=cur.app_name or "(unknown)",
        title=_cut(cur.window_title, 120) or "(unknown)",
        summary=_cut(cur.summary or cur.description, SUMMARY_CHARS) or "(none)",
        screen=screen,
        instruction=instruction,
    ).strip()


def memory_block(source: str, items: list[str]) -> str:
    """The long-term memory block (``prompts/memory.txt``): one ``- `` line per item."""
    lines = "\n".join(f"- {it}" for it in items) if items else "- (nothing remembered before this moment)"
    return _template("memory.txt").substitute(source=source, items=lines).strip()


def with_memory(prompt: str, block: str) -> str:
    """The user prompt with the memory block placed before the event history."""
    return f"{block}\n\n{prompt}" if block else prompt
