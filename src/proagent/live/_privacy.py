"""What live sends to a model that does not run on this machine (``--send-screen``).

Every prompt ``proagent live`` sends goes through :func:`outgoing`: the How call (the offer's
predicted query, :class:`~proagent.live.HowModel`) and the help (:mod:`._help`). The When call
sends nothing anywhere: a decider folder is e5 embeddings and a classifier run in this process
(:mod:`._when`).

* ``raw``: the text as captured (the default for a ``local/...`` model, and for inspect's
  in-process ``mockllm/``: nothing leaves a process we own);
* ``redacted``: every finding of curate's PII recognizers (:func:`proagent.curate.find_pii`, the
  registry ``proagent curate`` uses: presidio's and ours) is replaced by its typed placeholder
  (``[EMAIL]``, ``[PHONE]``, ``[API_KEY]``, ``[PERSON]``...) in the whole prompt: screen text, window
  titles, the list of recent events, event summaries, web pages, the predicted query (the default for
  any other model). The person a chat window's title names (``Priya Raman (DM) - Acme - Slack``,
  curate's ``CHAT_TITLES`` rules, no NER model needed) is replaced there and wherever else the
  prompt mentions them;
* ``never``: no screen text at all (:func:`without_screen_text`), and the rest redacted.

What was sent is recorded as its SHA-256 and the count of each placeholder put in
(:class:`Sent`), never the text.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from ..records import Sample

__all__ = [
    "LOCAL_PREFIXES",
    "SEND_SCREEN",
    "Sent",
    "check_send_screen",
    "default_send_screen",
    "is_local_model",
    "outgoing",
    "redact_text",
    "sent_digest",
    "without_screen_text",
]

SEND_SCREEN: tuple[str, ...] = ("never", "redacted", "raw")
"""``--send-screen`` choices: no screen text, screen text with PII replaced by typed placeholders, as captured."""

LOCAL_PREFIXES: tuple[str, ...] = ("local/", "mockllm/")
"""Model names whose prompts stay in this process: proagent's llama.cpp provider and inspect's mock."""


def is_local_model(model: Any) -> bool:
    """Whether ``model`` (a name, or an inspect ``Model``: its ``str``) runs in this process or its own
    llama.cpp child (:data:`LOCAL_PREFIXES`): its prompts leave no process we do not own."""
    return str(model).startswith(LOCAL_PREFIXES)


def default_send_screen(model: Any) -> str:
    """``--send-screen``'s default for ``model``: ``raw`` for a local model, ``redacted`` for any other."""
    return "raw" if is_local_model(model) else "redacted"


def check_send_screen(send_screen: str) -> str:
    """``send_screen`` itself once it is one of :data:`SEND_SCREEN`.

    Raises:
        ValueError: any other value.
    """
    if send_screen not in SEND_SCREEN:
        raise ValueError(f"send_screen {send_screen!r}: choose from {', '.join(SEND_SCREEN)}")
    return send_screen


def redact_text(text: str, counts: Counter[str] | None = None) -> str:
    """``text`` with every finding of curate's PII recognizers replaced by its typed placeholder
    (:func:`proagent.curate.clean_text`); the findings are counted by type into ``counts``."""
    from ..curate import clean_text, find_pii  # the recognizers proagent curate uses (presidio + ours)

    found = find_pii(text)
    if counts is not None:
        counts.update(f.type for f in found)
    return clean_text(text, found) if found else text


def without_screen_text(sample: Sample) -> Sample:
    """``sample`` with the OCR text of every screenshot (context and current events) removed:
    what ``--send-screen never`` lets a prompt show (apps, titles, summaries, times)."""

    def bare(e):  # noqa: ANN001, ANN202
        return replace(e, screenshots=tuple(replace(s, ocr_text="") for s in e.screenshots))

    return replace(sample, context=tuple(bare(e) for e in sample.context), current=bare(sample.current))


def sent_digest(text: str) -> str:
    """SHA-256 (hex) of what was sent: what the log records instead of the text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Sent:
    """One prompt as it goes out: its texts (after :func:`redact_text` unless ``raw``) and the record of it."""

    texts: tuple[str, ...]
    """The texts sent, in order (e.g. the system and user messages)."""
    send_screen: str
    """``never``, ``redacted`` or ``raw``."""
    placeholders: dict[str, int] = field(default_factory=dict)
    """PII findings replaced, by type (empty for ``raw``)."""

    @property
    def sha256(self) -> str:
        """:func:`sent_digest` of the texts joined by newlines."""
        return sent_digest("\n".join(self.texts))

    def record(self) -> dict[str, Any]:
        """``{send_screen, sha256, placeholders}``: what may be logged (no text)."""
        return {"send_screen": self.send_screen, "sha256": self.sha256, "placeholders": dict(self.placeholders)}


def outgoing(texts: list[str] | tuple[str, ...], send_screen: str) -> Sent:
    """``texts`` as they may be sent under ``send_screen`` (``raw``: unchanged; else each redacted).
    A prompt built for ``never`` must already hold no screen text (:func:`without_screen_text`).

    Raises:
        ValueError: an unknown ``send_screen``.
    """
    check_send_screen(send_screen)
    if send_screen == "raw":
        return Sent(tuple(texts), send_screen)
    counts: Counter[str] = Counter()
    out = tuple(redact_text(t, counts) for t in texts)
    return Sent(out, send_screen, dict(sorted(counts.items())))
