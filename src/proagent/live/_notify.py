"""Notifiers: where offers are shown, behind one interface (``--notify``).

* ``terminal``: one line per offer on the terminal; answers typed back as
  ``a 3`` / ``d 3`` / ``n 3`` (accept / dismiss / not now offer 3) when a
  stream of answers is given (stdin when it is a terminal); with the run's help
  (:class:`~proagent.live.LiveHelp`) an accepted offer's answer is printed under its id as it
  streams, ``f 3 <text>`` asks a follow-up, ``+ 3`` / ``- 3`` rate the answer; a sparse question
  (``--ask-rate``, :mod:`proagent.live._ask`) is a line answered ``q 2 yes`` / ``q 2 no`` (``y`` / ``n``).
* ``desktop``: a freedesktop notification through ``notify-send`` (libnotify,
  D-Bus ``org.freedesktop.Notifications``) with Accept / Dismiss / Not now
  actions; the chosen action (printed by ``notify-send --action``) is stored; Accept also
  starts the help and opens the local page at that offer (``xdg-open URL#offer-N``) when the run has one.
* ``page``: the local page (:mod:`proagent.live._page`) lists offers (and open questions) itself;
  its notifier only counts them.

Every response goes to ``feedback.db`` (:class:`~proagent.live.FeedbackStore`).

A notifier is one :func:`register_notifier` entry here: its name (a ``--notify`` choice) and a
factory taking the run's :class:`NotifyContext`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any, Protocol

from ..errors import ProagentError, UsageError
from ._feedback import FeedbackStore, parse_row_id
from .records import Offer, Question

__all__ = [
    "NOTIFIERS",
    "DesktopNotifier",
    "Notifier",
    "NotifyContext",
    "PageNotifier",
    "TerminalNotifier",
    "open_notifiers",
    "register_notifier",
]

_YES_NO = {"y": "yes", "yes": "yes", "n": "no", "no": "no"}
ANSWER_HINT = "answer an offer with a N, d N or n N (accept, dismiss, not now), a question with q N yes|no"
"""The terminal's one-line reminder of its answers (printed after a line it does not understand)."""
_KEYS = {
    "a": "accepted",
    "accept": "accepted",
    "d": "dismissed",
    "dismiss": "dismissed",
    "n": "not_now",
    "not_now": "not_now",
    "later": "not_now",
}
_COMMANDS = {*_KEYS, "q", "f", "follow", "+", "-"}


class Notifier(Protocol):
    """Shows offers to the user."""

    name: str
    """Name recorded with each offer (``terminal``, ``desktop``, ``page``)."""

    def show(self, offer: Offer) -> None:
        """Show one offer (must return at once; answers arrive later through ``feedback.db``)."""
        ...

    # optional: ``update(offer)``, the offer shown earlier now with its How answer (text, query,
    # intention: :meth:`proagent.live.FeedbackStore.fill_offer`); a notifier without it shows nothing more
    # optional: ``ask(question)``, show a sparse question (:class:`~proagent.live.records.Question`,
    # ``--ask-rate``); questions are asked only when some notifier of the run has it

    def close(self) -> None:
        """Release what the notifier holds (threads, processes, server)."""
        ...


@dataclass(frozen=True)
class NotifyContext:
    """What a notifier of one run may use."""

    store: FeedbackStore
    """The run's ``feedback.db`` (answers are stored there)."""
    now: Callable[[], datetime]
    """The run's clock."""
    port: int = 0
    """The local page's port on 127.0.0.1 (0: a free one)."""
    answers: IO[str] | None = None
    """Typed answers (``a|d|n ID`` lines) for the terminal notifier, or ``None``."""
    out: IO[str] | None = None
    """Where the terminal notifier writes (default stdout)."""
    help: Any = None
    """The run's help for accepted offers (:class:`~proagent.live.LiveHelp`), or ``None``."""


NOTIFIERS: dict[str, Callable[[NotifyContext], Notifier | None]] = {}
"""The notifiers by name (``proagent live --notify`` choices, comma-separated; ``none``:
record only), filled by :func:`register_notifier`."""


def register_notifier(name: str) -> Callable[[Callable[[NotifyContext], Any]], Callable[[NotifyContext], Any]]:
    """Register a notifier: decorate its factory ``factory(ctx: NotifyContext) -> Notifier``.

    Raises:
        ValueError: ``name`` is taken by another factory.
    """

    def add(factory: Callable[[NotifyContext], Any]) -> Callable[[NotifyContext], Any]:
        if NOTIFIERS.get(name, factory) is not factory:
            raise ValueError(f"notifier {name!r} is already registered")
        NOTIFIERS[name] = factory
        return factory

    return add


def open_notifiers(names: Sequence[str], ctx: NotifyContext) -> list[Notifier]:
    """The notifiers ``names`` for one run (``none`` adds nothing).

    Raises:
        proagent.errors.UsageError: an unknown name (``--notify``).
        FileNotFoundError: ``desktop`` without ``notify-send``.
    """
    bad = [n for n in names if n not in NOTIFIERS]
    if bad:
        raise UsageError("--notify", f"unknown notifier {bad[0]!r}; choose from {', '.join(NOTIFIERS)}")
    return [n for n in (NOTIFIERS[name](ctx) for name in names) if n is not None]


class TerminalNotifier:
    """Offers as lines on ``out``; answers read from ``answers`` (``a|d|n ID`` lines) in a thread."""

    name = "terminal"

    def __init__(
        self,
        store: FeedbackStore,
        now: Callable[[], datetime],
        out: IO[str] | None = None,
        answers: IO[str] | None = None,
        help: Any = None,
    ) -> None:
        self.store, self.now, self.out = store, now, out or sys.stdout
        self.help = help
        self.shown = 0
        self._thread = None
        self._write = threading.Lock()
        self._open: int | None = None  # the offer whose answer's line is open (no newline yet)
        if help is not None:
            help.subscribe(self._on_help)
        if answers is not None:
            self._thread = threading.Thread(target=self._read, args=(answers,), daemon=True, name="proagent-answers")
            self._thread.start()

    def show(self, offer: Offer) -> None:
        self.shown += 1
        what = f" [{offer.intention}]" if offer.intention else ""
        # a log of sentences (ProactiveBench) names no app: the offer's text quotes the sentence instead
        where = f" in {offer.app_name}" if offer.app_name else ""
        self._say(
            f"offer {offer.id} at {offer.moment:%H:%M:%S}{where}{what}: {offer.text}"
            f"   (a {offer.id} = accept, d {offer.id} = dismiss, n {offer.id} = not now)\n"
        )

    def update(self, offer: Offer) -> None:
        """The offer's How answer came after it was shown: one more line, same id."""
        what = f" [{offer.intention}]" if offer.intention else ""
        self._say(f"offer {offer.id}{what}: {offer.text}\n")

    def ask(self, question: Question) -> None:
        """A sparse question about a quiet moment (``--ask-rate``): one line, answered ``q ID yes|no``."""
        where = f" in {question.app_name}" if question.app_name else ""
        self._say(
            f"question {question.id} at {question.moment:%H:%M:%S}{where}: Would help have been useful just now?"
            f"   (q {question.id} y = yes, q {question.id} n = no)\n"
        )

    def _say(self, text: str) -> None:
        with self._write:
            self._end()
            self.out.write(text)
            self.out.flush()

    def _end(self) -> None:
        """End an answer's line still open (lock held): every message then starts on its own line."""
        if self._open is not None:
            self.out.write("\n")
            self._open = None

    def _line(self, text: str) -> None:
        self._end()
        self.out.write(text + "\n")

    def _on_help(self, kind: str, offer_id: int, text: str) -> None:
        """The help's stream, printed under the offer's id: each line of the answer starts with
        ``help N:``, and any other message (an offer, another answer) ends the line first, so two
        messages never share a line."""
        with self._write:
            if kind == "queued":
                self._line(f"help {offer_id}: {text}")
            elif kind == "reading":
                self._line(f"help {offer_id} {text}")
            elif kind == "start":
                self._line(f"help {offer_id} > {text}")
            elif kind == "delta":
                for i, part in enumerate(text.split("\n")):
                    if i:
                        self._end()
                    if part:
                        if self._open != offer_id:
                            self._end()
                            self.out.write(f"help {offer_id}: ")
                            self._open = offer_id
                        self.out.write(part)
            elif kind == "done":
                self._line(
                    f"help {offer_id} done   (f {offer_id} <question> = follow-up, + {offer_id} / - {offer_id} = rate)"
                )
            elif kind == "interrupted":
                self._line(f"help {offer_id} interrupted: its text so far is kept (a {offer_id} = answer it again)")
            elif kind == "error":
                self._line(f"help {offer_id} failed: {text}")
            self.out.flush()

    def _read(self, answers: IO[str]) -> None:
        for line in answers:
            try:
                self._answer(line)
            except ProagentError as e:  # a full disk (FeedbackFull: the answer is held and written later)
                self._say(f"{line.strip()[:60]!r}: {e}\n")
            except Exception as e:  # noqa: BLE001 - one bad line (or a store error) must not end the reader
                self._say(f"could not apply {line.strip()[:60]!r} ({e.__class__.__name__}); {ANSWER_HINT}\n")

    def _answer(self, line: str) -> None:
        """Apply one typed line; anything not understood (an unknown key, an id that is not a
        whole number 1 to :data:`~proagent.live._feedback.MAX_ROW_ID`) is one line of help."""
        parts = line.strip().split(maxsplit=2)
        key = parts[0].lower() if parts else ""
        oid = parse_row_id(parts[1]) if len(parts) > 1 else None
        if len(parts) == 2 and key in _KEYS and oid is not None:
            ok = self.store.respond(oid, _KEYS[key], self.now(), source="terminal")
            self._say(f"offer {oid}: {_KEYS[key] if ok else 'no such offer'}\n")
            if ok and _KEYS[key] == "accepted" and self.help is not None:
                if self.help.model is None:
                    self._say(f"help {oid}: no help model in this run (--model none)\n")
                else:
                    self.help.accept(oid, source="terminal")
        elif key == "q" and len(parts) == 3 and oid is not None and parts[2].lower() in _YES_NO:
            answer = _YES_NO[parts[2].lower()]
            ok = self.store.answer_question(oid, answer, self.now(), source="terminal")
            self._say(f"question {oid}: {answer if ok else 'no such question'}\n")
        elif key in ("f", "follow") and len(parts) == 3 and oid is not None and self.help is not None:
            why = self.help.follow_up(oid, parts[2], source="terminal")
            if why is not None:
                self._say(f"help {oid}: {why}\n")
        elif key in ("+", "-") and len(parts) == 2 and oid is not None and self.help is not None:
            ok = self.help.rate(oid, 1 if key == "+" else -1, source="terminal")
            self._say(
                f"help {oid}: {('rated ' + ('helpful' if key == '+' else 'not helpful')) if ok else 'no answer to rate'}\n"
            )
        elif parts:  # a typo must not pass in silence (an open question would hold the next ones)
            why = "; an id is a whole number" if len(parts) > 1 and oid is None and key in _COMMANDS else ""
            self._say(f"not understood: {line.strip()[:60]!r}{why}; {ANSWER_HINT}\n")

    def close(self) -> None:
        pass


class DesktopNotifier:
    """Freedesktop notifications through ``notify-send`` (``--notify desktop``).

    Each offer runs ``notify-send --app-name=proagent --urgency=low
    --expire-time=MS --action=accepted=Accept --action=dismissed=Dismiss
    --action=not_now="Not now" "proagent" TEXT`` in a thread; the action key it
    prints becomes the response (a closed notification records nothing; the
    offer is later marked ignored). A ``notify-send`` without ``--action``
    (libnotify < 0.7.10) shows the offer without buttons.

    Raises:
        FileNotFoundError: no ``notify-send`` on PATH.
    """

    name = "desktop"

    def __init__(
        self,
        store: FeedbackStore,
        now: Callable[[], datetime],
        *,
        expire_seconds: float = 60.0,
        binary: str | None = None,
        help: Any = None,
        opener: str | None = None,
    ) -> None:
        found = binary or shutil.which("notify-send")
        if not found:
            raise FileNotFoundError("notify-send not found (install libnotify-bin, or use --notify page)")
        self.binary, self.store, self.now = found, store, now
        self.help = help
        self.opener = opener if opener is not None else shutil.which("xdg-open")
        """The program that opens the page at an accepted offer (``xdg-open``; ``""``/none: not opened)."""
        self.expire_ms = int(expire_seconds * 1000)
        self._threads: list[threading.Thread] = []
        self._procs: list[subprocess.Popen] = []

    def _args(self, offer: Offer, actions: bool) -> list[str]:
        title = "proagent" + (f": {offer.intention}" if offer.intention else "")
        args = [self.binary, "--app-name=proagent", "--urgency=low", f"--expire-time={self.expire_ms}"]
        if actions:
            args += ["--action=accepted=Accept", "--action=dismissed=Dismiss", "--action=not_now=Not now"]
        return args + [title, offer.text]

    def _run(self, offer: Offer) -> None:
        try:
            p = subprocess.Popen(self._args(offer, True), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self._procs.append(p)
            out, err = p.communicate(timeout=self.expire_ms / 1000 + 30)
            if p.returncode != 0 and "action" in (err or "").lower():
                subprocess.run(self._args(offer, False), capture_output=True, timeout=10)
                return
            key = (out or "").strip().splitlines()[-1] if (out or "").strip() else ""
            if key in ("accepted", "dismissed", "not_now"):
                ok = self.store.respond(offer.id, key, self.now(), source="desktop")
                if ok and key == "accepted" and self.help is not None:
                    self.help.accept(offer.id, source="desktop")
                    if self.help.page_url and self.opener:  # the answer streams in on the page, at this offer
                        subprocess.Popen(
                            [self.opener, f"{self.help.page_url}#offer-{offer.id}"],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                        )
        except (OSError, subprocess.SubprocessError):
            pass  # a notification that cannot be shown is no reason to stop the agent

    def show(self, offer: Offer) -> None:
        t = threading.Thread(target=self._run, args=(offer,), daemon=True, name=f"proagent-notify-{offer.id}")
        self._threads.append(t)
        t.start()

    def update(self, offer: Offer) -> None:
        """The offer's How answer came after it was shown: a second notification with the query
        (its buttons answer the same offer)."""
        self.show(offer)

    def wait(self, timeout: float = 10.0) -> None:
        """Wait for the notifications shown so far to be answered or to expire (tests, end of a replay)."""
        for t in self._threads:
            t.join(timeout)

    def close(self) -> None:
        for p in self._procs:
            if p.poll() is None:
                p.terminate()


class PageNotifier:
    """The local page shows every offer from ``feedback.db`` on its own; this
    notifier only counts what it would have pushed. ``page``: the page it stands for
    (:class:`~proagent.live.OfferPage`; the run closes it after its last answer), when it opened one."""

    name = "page"

    def __init__(self, page: Any = None) -> None:
        self.shown = 0
        self.page = page

    def show(self, offer: Offer) -> None:
        self.shown += 1

    def update(self, offer: Offer) -> None:
        pass  # the page reads the offer's new text from feedback.db

    def ask(self, question: Question) -> None:
        pass  # the page lists open questions from feedback.db

    def close(self) -> None:
        pass


@register_notifier("terminal")
def _terminal(ctx: NotifyContext) -> TerminalNotifier:
    return TerminalNotifier(ctx.store, ctx.now, out=ctx.out, answers=ctx.answers, help=ctx.help)


@register_notifier("desktop")
def _desktop(ctx: NotifyContext) -> DesktopNotifier:
    return DesktopNotifier(ctx.store, ctx.now, help=ctx.help)


@register_notifier("page")
def _page(ctx: NotifyContext) -> PageNotifier:
    from ._page import OfferPage  # the page server starts here, only when asked for

    return PageNotifier(OfferPage(ctx.store, ctx.now, port=ctx.port, help=ctx.help))


@register_notifier("none")
def _none(ctx: NotifyContext) -> None:
    return None
