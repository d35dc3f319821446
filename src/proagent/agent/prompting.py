"""Render a sample into the prompt of ProAgentBench (section 5.1, Appendix prompts).

Structure: system role with the intention taxonomy; recent activity context;
current state (app, title, time, screen summary cut to 200 characters); screen
content (OCR text, or the image for a vision model) (:func:`observation_prompt`, the same
for every method); the method's instruction (:func:`instruction_text` of the prompt file
its entry in :data:`proagent.agent.solvers.METHODS` names). The prompt text lives in
``proagent/agent/prompts/*.txt``. An event whose source records its browser URL
(ActivityWatch's web watcher, screenpipe) shows it as :func:`web_page` (host and path only)
after its title; events without one render as before.

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
    "SCREEN_CHARS",
    "SCREEN_IMAGE",
    "SUMMARY_CHARS",
    "instruction_text",
    "memory_block",
    "observation_prompt",
    "render_event",
    "system_prompt",
    "web_page",
    "with_memory",
]

SUMMARY_CHARS = 200
"""Current-state screen summary cut, characters (ProAgentBench section 5.1)."""
SCREEN_CHARS = 800
"""OCR text of the current screen shown to the model, characters."""
CONTEXT_EVENT_CHARS = 160
"""Summary of each context event, characters."""
PAGE_CHARS = 100
"""Web page (:func:`web_page`) shown per event, characters."""


def _template(name: str) -> Template:
    return prompt_template("agent", name)


def _cut(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def web_page(url: str | None) -> str:
    """What a prompt shows of a browser URL: ``host/path`` (e.g. ``github.com/a/b/issues``), cut
    to :data:`PAGE_CHARS`; ``""`` for none or one that does not parse. The scheme, user name and
    password, port, query and fragment are left out: they carry sign-in tokens, session ids,
    e-mail addresses and search terms, and the prompt shows window titles without any other
    redaction (proagent has none before the prompt; ``curate`` redacts what it publishes)."""
    from urllib.parse import urlsplit

    if not url or not url.strip():
        return ""
    try:
        u = urlsplit(url.strip())
        host = u.hostname or ""
    except ValueError:
        return ""
    return _cut(f"{host}{u.path}".rstrip("/"), PAGE_CHARS)


def render_event(e: Event) -> str:
    """One context line: ``[HH:MM:SS] app | title | page: summary`` (empty parts left out;
    page: :func:`web_page` of the event's URL)."""
    where = " | ".join(p for p in (e.app_name, _cut(e.window_title, 80), web_page(e.url)) if p)
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


def instruction_text(name: str) -> str:
    """A method's instruction: the prompt file ``agent/prompts/<name>``, stripped.

    Raises:
        FileNotFoundError: no such prompt file.
    """
    return _template(name).template.strip()


def observation_prompt(sample: Sample, modality: str = "text") -> str:
    """The user message of one sample before the method's instruction: the event history,
    the current state and the screen content (the same for every method).

    ``modality="image"``: the screen content is the attached screenshot
    (:data:`SCREEN_IMAGE`) instead of its OCR text (ProAgentBench Appendix F.2).
    """
    cur = sample.current
    # the latest screenshot of the current event that has OCR text, on the focused screen when recorded
    screen = next((s.ocr_text for s in reversed(cur.focused_screenshots) if s.ocr_text.strip()), "")
    screen = _cut(screen, SCREEN_CHARS) if screen.strip() else "(no screen text)"
    if modality == "image":
        screen = SCREEN_IMAGE
    context = "\n".join(render_event(e) for e in sample.context) or "(nothing earlier in the window)"
    return (
        _template("observation.txt")
        .substitute(
            window=_window_text(sample.window_seconds),
            context=context,
            time=f"{sample.time:%Y-%m-%d %H:%M:%S} ({sample.time:%A})",
            app=cur.app_name or "(unknown)",
            # the web page line only where the source records a URL: other prompts stay as they were
            title=(_cut(cur.window_title, 120) or "(unknown)")
            + (f"\n- Web page: {page}" if (page := web_page(cur.url)) else ""),
            summary=_cut(cur.summary or cur.description, SUMMARY_CHARS) or "(none)",
            screen=screen,
        )
        .strip()
    )


def memory_block(source: str, items: list[str]) -> str:
    """The long-term memory block (``prompts/memory.txt``): one ``- `` line per item."""
    lines = "\n".join(f"- {it}" for it in items) if items else "- (nothing remembered before this moment)"
    return _template("memory.txt").substitute(source=source, items=lines).strip()


def with_memory(prompt: str, block: str) -> str:
    """The user prompt with the memory block placed before the event history."""
    return f"{block}\n\n{prompt}" if block else prompt
