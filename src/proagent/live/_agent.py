"""The live loop: moment -> Sample -> restraint -> When decider -> How model -> offer."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from ..agent.parsing import to_prediction
from ..agent.prompting import system_prompt
from ..bench.samples import SampleConfig
from ..errors import RunError
from ..records import Prediction, Sample
from ._ask import Asker
from ._feedback import FeedbackStore
from ._implicit import QUIET_OUTCOMES, ImplicitLabeller
from ._moments import moment_sample
from ._notify import Notifier
from ._privacy import (
    Sent,
    check_send_screen,
    default_send_screen,
    is_local_model,
    outgoing,
    redact_text,
    without_screen_text,
)
from ._restraint import Restraint
from ._settle import TEXT_WAIT_SECONDS, Still, first_shot, has_text, settled_at
from ._sources import Clock, LifeTraceFollower, Moment, ReplayClock, WallClock
from .records import LiveDecision

how_log = logging.getLogger("proagent.live.how")

__all__ = [
    "OFFER_WAIT_SECONDS",
    "HowModel",
    "how_prompt",
    "LiveAgent",
    "ScriptedDecider",
    "When",
    "generic_offer_text",
    "offer_text",
]


class When(Protocol):
    """A When-to-Assist decider: P(help needed now) for one Sample, in milliseconds."""

    threshold: float
    """Say Yes when the probability is >= this (0-1)."""

    def __call__(self, sample: Sample) -> float:
        """P(help needed at ``sample.time``), 0-1."""
        ...


@dataclass
class ScriptedDecider:
    """A decider with fixed answers, for tests and demos: Yes exactly for the
    sample ids (or event ids) in ``yes``; every call is recorded in ``calls``."""

    yes: set[str]
    threshold: float = 0.5
    calls: list[str] = field(default_factory=list)

    def __call__(self, sample: Sample) -> float:
        self.calls.append(sample.id)
        return 1.0 if sample.id in self.yes or (sample.event_id or "") in self.yes else 0.0


def offer_text(pred: Prediction) -> str | None:
    """The short offer shown for a How-to-Assist prediction, or ``None`` without a query."""
    q = (pred.query or "").strip()
    if not q:
        return None
    q = q if len(q) <= 200 else q[:199].rstrip() + "…"
    return f"Want help with this? “{q}”"


def generic_offer_text(event) -> str:  # noqa: ANN001
    """The offer shown without a predicted query (no How model, or its answer had none):
    it names the app (and window) of ``event``, the one in front at decision time."""
    what = " | ".join(p for p in (event.app_name, event.window_title[:80]) if p) or " ".join(event.summary.split())[:80]
    return "Need a hand with this?" + (f" ({what})" if what else "")


def _app_session(front, history) -> tuple[str, datetime] | None:  # noqa: ANN001
    """``(app, start)`` of the run of consecutive events in ``front``'s application that ends
    with ``front`` (``history`` oldest first), ``None`` without a front event."""
    if front is None:
        return None
    start = front.start
    events = [e for e in history if e.start <= front.start and e.id != front.id]
    for e in reversed(events):
        if e.app_name != front.app_name:
            break
        start = e.start
    return front.app_name, start


OFFER_WAIT_SECONDS = 2.0
"""How long a Yes waits for its How answer before the offer is shown without its query,
seconds. Issue 24's target is an offer within 5 s of the event; Qwen2.5-Coder-1.5B took
3-8 s per How call on two near-idle cores and 32 s p50 on one thread (README, Speed), so a
model that answers within 2 s makes one offer with its query and a slower one does not keep
the user waiting (README, ``proagent live``)."""


class _HowCall:
    """One How call: :meth:`wait` for it up to a limit, :meth:`result` for its prediction
    (re-raising what the call raised), :meth:`cancel` to abandon it.

    A How model with ``submit(sample) -> concurrent.futures.Future`` (:class:`HowModel`) is
    cancelled for real: its request is cancelled, a local model's child process killed
    (:mod:`proagent.models._llama_process`), so a newer moment does not queue behind it. Any
    other callable runs in a daemon thread, which a cancel only leaves behind (its answer is
    dropped). Daemon: a Ctrl-C while it runs ends the process without waiting for the model."""

    def __init__(
        self,
        how: Callable[[Sample], Prediction],
        sample: Sample,
        prepare: Callable[[Sample], Sample] | None = None,
    ) -> None:
        self._t0 = time.perf_counter()
        self._t1: float | None = None
        self._inner: concurrent.futures.Future | None = None
        self._lock = threading.Lock()
        submit = getattr(how, "submit", None)
        if prepare is None and submit is not None:
            self._future: concurrent.futures.Future = submit(sample)
        else:
            self._future = concurrent.futures.Future()
            self._future.set_running_or_notify_cancel()
            threading.Thread(target=self._run, args=(how, sample, prepare), daemon=True, name="proagent-how").start()
        self._future.add_done_callback(self._finished)

    def _run(
        self, how: Callable[[Sample], Prediction], sample: Sample, prepare: Callable[[Sample], Sample] | None
    ) -> None:
        try:
            if prepare is not None:  # the window in front read again (issue 42), in this thread
                try:
                    sample = prepare(sample)
                except Exception as e:  # noqa: BLE001 - the moment as decided stays good enough
                    how_log.info("reading the window in front again for the How call failed: %s", e)
            if self._future.done():
                return  # cancelled meanwhile: the model is not asked
            submit = getattr(how, "submit", None)
            if submit is not None:
                with self._lock:
                    self._inner = submit(sample)
                if self._future.done():
                    self._inner.cancel()
                    return
                pred = self._inner.result()
            else:
                pred = how(sample)
        except BaseException as e:  # noqa: BLE001 (re-raised in the loop's thread)
            if not self._future.done():
                self._future.set_exception(e)
            return
        if not self._future.done():  # a cancelled call's late answer is dropped
            self._future.set_result(pred)

    def _finished(self, _f: object) -> None:
        self._t1 = time.perf_counter()

    @property
    def seconds(self) -> float:
        """Seconds the call ran (until now while it runs)."""
        return (self._t1 or time.perf_counter()) - self._t0

    @property
    def done(self) -> bool:
        return self._future.done()

    def wait(self, seconds: float | None) -> bool:
        """Whether the answer came within ``seconds`` (``None``: wait for it)."""
        done, _ = concurrent.futures.wait([self._future], timeout=seconds)
        return bool(done)

    def cancel(self) -> None:
        """Abandon the call (its :meth:`result` raises ``CancelledError``)."""
        with self._lock:
            inner = self._inner
        if inner is not None:
            inner.cancel()  # the model's request itself (a local model's ticket)
        if not self._future.cancel() and not self._future.done():  # a thread-run call: mark it over
            try:
                self._future.set_exception(concurrent.futures.CancelledError())
            except concurrent.futures.InvalidStateError:
                pass

    @property
    def cancelled(self) -> bool:
        f = self._future
        return f.cancelled() or (f.done() and isinstance(f.exception(), concurrent.futures.CancelledError))

    def result(self) -> Prediction:
        return self._future.result()


class _Held:
    """A How call held back while the help answers (help first, issue 42): not started; the loop
    starts it (:class:`_HowCall`) once no answer is queued or streaming, unless it was cancelled
    meanwhile (a newer moment, its offer dismissed or expired)."""

    seconds = 0.0

    def __init__(self) -> None:
        self._cancelled = False

    @property
    def done(self) -> bool:
        return self._cancelled

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def wait(self, seconds: float | None) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        self._cancelled = True

    def result(self) -> Prediction:
        raise concurrent.futures.CancelledError()


def _address(url: str) -> str:
    from urllib.parse import urlsplit

    u = urlsplit(str(url))
    host = u.hostname or ""
    return f"{u.scheme}://{host}{f':{u.port}' if u.port else ''}{u.path}" if u.scheme else str(url)


def how_prompt(sample: Sample, send_screen: str = "raw") -> Sent:
    """The How call's user message for ``sample``: the benchmark's zero-shot prompt
    (:func:`proagent.agent.solvers.user_prompt`) as ``send_screen`` lets it out
    (:func:`proagent.live._privacy.outgoing`; ``never``: rendered without screen text, then redacted).
    One text; its record (SHA-256, placeholder counts) is :meth:`Sent.record`.

    Raises:
        ValueError: an unknown ``send_screen``.
    """
    from ..agent.solvers import user_prompt  # lazy: the method registry pulls in inspect_ai (~1 s), which

    # scripted live runs skip
    check_send_screen(send_screen)
    shown = without_screen_text(sample) if send_screen == "never" else sample
    return outgoing([user_prompt(shown, "zero-shot")], send_screen)


class HowModel:
    """How to Assist at a moment the decider said Yes: the benchmark's zero-shot
    prompt (:func:`proagent.agent.solvers.user_prompt`, the system prompt with
    the intention taxonomy) to an inspect model, parsed by the benchmark's
    answer parser into intention + query.

    Args:
        model: any inspect model name (``local/qwen2.5-coder-1.5b``, ``openai/...``)
            or an inspect ``Model``.
        model_args: provider arguments (``n_threads=1``...).
        max_tokens: answer budget (tokens; the benchmark's zero-shot budget).
        base_url: the model API's base URL (``--model-base-url``).
        send_screen: what of the moment the prompt carries to the model (``--send-screen``,
            :mod:`proagent.live._privacy`): ``raw``, ``redacted`` (curate's PII recognizers replace
            each finding in the whole user message, titles and screen text, by its typed
            placeholder) or ``never`` (no screen text, the rest redacted). Default: ``raw`` for a
            ``local/`` (or ``mockllm/``) model, ``redacted`` for any other. Each call's record
            (SHA-256 and placeholder counts, no text) is :attr:`last_sent` and a line of the
            ``proagent.live.how`` logger.

    Raises:
        ValueError: an unknown ``send_screen``.
    """

    def __init__(
        self,
        model: Any,
        model_args: Mapping[str, Any] | None = None,
        *,
        max_tokens: int = 96,
        base_url: str | None = None,
        send_screen: str | None = None,
    ) -> None:
        from inspect_ai.model import GenerateConfig, get_model

        from ..bench.running import api_limits, offline_mock

        offline_mock()  # mockllm/ counts its tokens without tiktoken's downloaded table
        self.name = model if isinstance(model, str) else str(model)
        self.send_screen = check_send_screen(send_screen or default_send_screen(self.name))
        self._base_url = base_url
        self._model = get_model(model, base_url=base_url, **dict(model_args or {})) if isinstance(model, str) else model
        remote = self._remote = not is_local_model(self.name)
        self._config = GenerateConfig(
            temperature=0.0, max_tokens=max_tokens, seed=0, **(api_limits() if remote else {})
        )
        base = getattr(getattr(self._model, "api", None), "base_url", None) if remote else None
        self.endpoint: str | None = _address(base) if base else None
        """Where a model API is reached (scheme, host, port and path; no credentials), for error lines."""
        self._loop = asyncio.new_event_loop()
        # the model's calls run on this loop in one daemon thread: a call is a Future the live loop
        # can wait on, with a limit, or cancel (a local model's cancelled request kills its child)
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="proagent-how-loop")
        self._thread.start()
        self.last_sent: dict[str, Any] | None = None
        """What the last How call sent: ``{send_screen, sha256, placeholders}`` (no text)."""
        self.last_usage: Any = None
        """Token usage of the last How answer (inspect ``ModelUsage``; a local model's
        ``input_tokens`` are the prompt tokens it evaluated, ``input_tokens_cache_read`` those it reused)."""

    def __call__(self, sample: Sample) -> Prediction:
        return self.submit(sample).result()

    def submit(self, sample: Sample) -> concurrent.futures.Future:
        """Start the How call of ``sample``; returns its Future (a :class:`~proagent.records.Prediction`).
        ``Future.cancel()`` cancels the request: an OpenAI-compatible one is closed, a local model's
        child process is killed at once and the next call starts a new one (the model is loaded
        again from the page cache, and its system prompt read again). The user message is what
        ``send_screen`` lets out (:meth:`prompt`)."""
        from inspect_ai.model import ChatMessageSystem, ChatMessageUser

        messages = [ChatMessageSystem(content=system_prompt()), ChatMessageUser(content=self.prompt(sample))]

        async def call() -> Prediction:
            try:
                out = await self._model.generate(messages, config=self._config)
            except Exception as e:  # noqa: BLE001 - a model API's failure becomes one line; any other is raised as it was
                err = self._failure(e)
                if err is e:
                    raise
                raise err from None
            self.last_usage = out.usage
            return to_prediction(sample.id, out.completion)

        return asyncio.run_coroutine_threadsafe(call(), self._loop)

    def prompt(self, sample: Sample) -> str:
        """The How call's user message for ``sample`` as it is sent (:func:`how_prompt` under
        :attr:`send_screen`); sets :attr:`last_sent` and logs its record."""
        sent = how_prompt(sample, self.send_screen)
        self.last_sent = sent.record()
        how_log.info(
            "how call for %s: to %s (send-screen %s), sha256 %s, placeholders %s",
            sample.id,
            self.name,
            sent.send_screen,
            sent.sha256,
            dict(sent.placeholders),
        )
        return sent.texts[0]

    def warm(self) -> float:
        """Load the model and have it read the system prompt once (a one-token answer), so the
        first offer pays neither: a local model keeps that prompt's KV cache and evaluates only
        the user message of each later call (llama.cpp prefix reuse). Returns the seconds it took.

        A model API gets one attempt here: down, refusing the key or not serving the model is said
        at once, not after the retries of a How call.

        Raises:
            RunError: a model API that cannot be reached or refuses the request (one line: the
                endpoint, the fix, the key variable its provider reads).
            whatever a local model raises when it cannot be loaded (the run should stop).
        """
        from inspect_ai.model import ChatMessageSystem, ChatMessageUser

        t0 = time.perf_counter()
        if self.send_screen != "raw":
            redact_text(
                "(starting)"
            )  # curate's recognizers load once (presidio, about a second), not at the first offer
        messages = [ChatMessageSystem(content=system_prompt()), ChatMessageUser(content="(starting)")]
        # one attempt: a model API that is down, or refuses the key or the model, is said at once
        config = self._config.model_copy(
            update={"max_tokens": 1, "max_retries": 0} if self._remote else {"max_tokens": 1}
        )
        try:
            asyncio.run_coroutine_threadsafe(self._model.generate(messages, config=config), self._loop).result()
        except Exception as e:  # noqa: BLE001 - as in submit
            err = self._failure(e, attempts=1)
            if err is e:
                raise
            raise err from None
        return time.perf_counter() - t0

    def _failure(self, e: Exception, attempts: int | None = None) -> Exception:
        """``e`` as it should stop the run: a model API's failure as one line (endpoint, what failed,
        the fix, the key variable: :func:`proagent.bench.running.api_failure`), any other as it is."""
        if not self._remote:  # a local model (or a mock) speaks for itself
            return e
        from ..bench.running import API_MAX_RETRIES, api_failure

        err = api_failure(
            e,
            self.name,
            self._base_url,
            api=getattr(self._model, "api", None),
            attempts=attempts or API_MAX_RETRIES + 1,
            timeout=self._config.attempt_timeout,
        )
        if err is None:  # the request's own refusal (HTTP 400...): its provider's line, never inspect's
            from ..bench.running import api_error_line  # request dump (the prompt: screen text)

            err = RunError(f"the How call to {self.name} failed: {' '.join(api_error_line(e).split())[:300]}")
        return err

    def close(self) -> None:
        """Stop the call loop (a call in flight is left to the process's exit)."""
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)
        if not self._loop.is_running():
            self._loop.close()


@dataclass
class _Job:
    """A Yes whose How answer had not come within the offer wait: the call, and the offer shown
    meanwhile (``None``: held until the answer, as a similar offer in this app was dismissed today)."""

    call: _HowCall | _Held
    sid: str
    sample: Sample
    m: Moment
    p: float
    session: Any
    cur: Any
    common: dict
    offer: Any = None
    shown: float | None = None


SETTLE_POLL_SECONDS = 0.2
"""While a moment waits to settle (:mod:`._settle`), how often the loop reads its window again, seconds."""

QUIET_LOG_SECONDS = 60.0
"""``follow`` says once that the watched log has not grown for this long (seconds), and again
after it grew and stopped again."""


class LiveAgent:
    """One live run: decides every moment it is given and records everything in
    ``feedback.db`` (decisions, offers, responses) in ``folder``.

    Args:
        folder: live folder (``feedback.db``, pause file, page URL, ``blocked-apps.json``).
        decider: the When decider.
        how: the How model, or ``None`` to offer without one (the offer then
            names the moment's window; for demos and decider-only runs).
        notifiers: where offers are shown.
        restraint: the restraint state.
        clock: wall clock live, replay clock in a replay.
        config: sample settings (context window, minimum event length).
        ignore_after_seconds: an offer unanswered this long (loop clock) is
            recorded as ``ignored``.
        stale_after_seconds: a moment older than this on the clock when it is
            decided (rows caught up after a restart) is decided but its offer
            held (reason ``stale``); ``None``: never (replay).
        offer_wait_seconds: how long a Yes waits for the How answer (seconds,
            default :data:`OFFER_WAIT_SECONDS`): an answer within it makes one offer
            with its query; otherwise the offer is shown then, naming the app
            (:func:`generic_offer_text`), and the query is filled in when the answer
            comes (``feedback.db``, the page, a ``terminal`` line, a new ``desktop``
            notification). ``None``: wait for the answer (the behaviour before issue 24).
            While :meth:`follow` runs, the loop does not wait for that answer: it goes on
            deciding, and a newer moment that needs the How model cancels the stale call
            (its decision is recorded with reason ``how_cancelled``; issue 32).
        settle_seconds: :meth:`follow` decides a new event once it settled in front and a
            moment once the screen paused this long (:mod:`._settle`, ``--settle``); ``None``:
            every event row at once with the event before it as the current state (the
            benchmark's candidate moment, the behaviour before issue 32).
        on_status: called with one line when the loop has something to say that is not a
            decision (the watched log stopped growing).
        implicit: label quiet moments from what the person did next (:mod:`proagent.live._implicit`:
            their own LLM use within the horizon is a miss, steady work in the same app a weak
            negative), stored in ``feedback.db`` and learned by a learning decider.
        ask_rate: at most this many sparse questions a day ("Would help have been useful just
            now?", :mod:`proagent.live._ask`) at quiet moments the decider is unsure of, shown by the
            notifiers that have an ``ask(question)`` method; 0 (default): none; ``None``: live's default
            (:data:`proagent.live._ask.DEFAULT_ASK_RATE` a day for the folder's first days).
        help: the run's help (:class:`~proagent.live.LiveHelp`): help first (issue 42). While an
            answer is queued or streaming (``help.answering()``), :meth:`follow` holds How calls: a
            Yes shows its offer at once (naming the app) and its How call starts once the answers are
            written; a How call in flight when an answer is asked is cancelled (a local model's
            request stopped) and started again afterwards. The How call of an offer dismissed,
            accepted or expired meanwhile is cancelled.
        ground: reads the moment's window in front again before its How call
            (:meth:`proagent.live._ground.ScreenReader.ground`), in the call's thread, so the
            predicted query comes from the text on screen now; ``None``: the moment as decided.
        still: tells a screenshot stored for a change elsewhere on the screen from a change of the
            window in front, for the settle pause (:func:`~._settle.settled_at`;
            :meth:`proagent.live._ground.ScreenReader.same_window`); ``None``: every screenshot is a change.
    """

    def __init__(
        self,
        folder: str | Path,
        decider: When,
        *,
        how: Callable[[Sample], Prediction] | None = None,
        notifiers: Sequence[Notifier] = (),
        restraint: Restraint | None = None,
        clock: Clock | None = None,
        config: SampleConfig = SampleConfig(),
        ignore_after_seconds: float = 600.0,
        feedback: FeedbackStore | None = None,
        on_decision: Callable[[LiveDecision], None] | None = None,
        stale_after_seconds: float | None = None,
        offer_wait_seconds: float | None = OFFER_WAIT_SECONDS,
        settle_seconds: float | None = None,
        on_status: Callable[[str], None] | None = None,
        implicit: bool = True,
        ask_rate: int | None = 0,
        help: Any = None,
        ground: Callable[[Sample], Sample] | None = None,
        still: Still | None = None,
    ) -> None:
        self.folder = Path(folder)
        self.still = still
        self.help = help
        self.ground = ground
        self.how_held = 0
        """How calls held back (or stopped and requeued) while the help answered."""
        self.offer_wait = offer_wait_seconds
        self.decider = decider
        self.how = how
        self.notifiers = list(notifiers)
        self.feedback = feedback or FeedbackStore(self.folder)
        self.restraint = restraint or Restraint(folder=self.folder)
        self.clock = clock or WallClock()
        self.config = config
        self.ignore_after = timedelta(seconds=ignore_after_seconds)
        self.on_decision = on_decision
        self.on_status = on_status
        self.settle = settle_seconds
        self.stale_after = None if stale_after_seconds is None else timedelta(seconds=stale_after_seconds)
        self._job: _Job | None = None
        self._stop: threading.Event | None = None
        offers, responses = self.feedback.history()
        self.restraint.load(offers, responses)
        self._last_response = 0
        self._dismissals(self.feedback.responses_since(0))
        self.decisions: list[LiveDecision] = []
        self.implicit = ImplicitLabeller(self.feedback, now=self.clock.now) if implicit else None
        self.asker = (
            Asker(
                self.feedback,
                ask_rate,
                self.clock.now,
                open_seconds=ignore_after_seconds,
                min_gap_seconds=self.restraint.config.min_gap_seconds,
            )
            if (ask_rate is None or ask_rate > 0) and any(callable(getattr(n, "ask", None)) for n in self.notifiers)
            else None
        )
        self._learn = getattr(decider, "sync", None)
        """A learning decider's ``sync(store)`` (:class:`proagent.live.LearningWhen`): learns the answers."""
        if self._learn is not None:
            self._learn(self.feedback)  # answers given while the agent was not running

    # ------------------------------------------------------------ responses
    def _dismissals(self, rows: Sequence[tuple[int, int, str, datetime]]) -> None:
        """Tell restraint the app and query of each dismissed offer with a query among ``rows``."""
        if not rows:
            return
        self._last_response = max(self._last_response, max(r[0] for r in rows))
        dismissed = [r for r in rows if r[2] == "dismissed"]
        if dismissed:
            offers = {o["id"]: o for o in self.feedback.offers(limit=1000)}
            for _, oid, _, at in dismissed:
                o = offers.get(oid)
                if o is not None and o["query"]:
                    self.restraint.dismissed_offer(o["app_name"] or "", o["query"], at)

    def sync_responses(self) -> None:
        """Apply responses stored since the last look (from the page, a
        notification or the terminal) and expire unanswered offers."""
        rows = self.feedback.responses_since(self._last_response)
        for _, _, response, at in rows:
            self.restraint.responded(response, at)
        self._dismissals(rows)
        now = self.clock.now()
        still = set()
        for o in self.feedback.offers(open_only=True, limit=200):
            if now - datetime.fromisoformat(o["created_at"]) >= self.ignore_after:
                self.feedback.respond(o["id"], "ignored", now, source="timeout")
            else:
                still.add(o["id"])
        job = self._job
        if job is not None and job.offer is not None and job.offer.id not in still and not job.call.done:
            # its offer was dismissed, accepted (the help asks its own question) or expired: no query needed
            how_log.info("how call for %s cancelled: offer %s was answered or expired", job.sid, job.offer.id)
            self.cancel_how()
        if self._learn is not None:
            self._learn(self.feedback)

    # ------------------------------------------------------------ one moment
    def decide(self, m: Moment, *, defer: bool = False) -> LiveDecision | None:
        """Decide one moment, show an offer when due, and record the decision.

        ``defer`` (:meth:`follow`): a Yes whose How answer does not come within the offer wait
        returns ``None`` at once; its decision is recorded when the answer comes
        (:meth:`poll_how`) or when a newer moment cancels it."""
        if self.implicit is not None:  # what the person did since a quiet moment labels it (learned just below)
            seen = list(m.history)
            if m.new_event is not None and not any(e.id == m.new_event.id for e in seen[-3:]):
                seen.append(m.new_event)
            self.implicit.observe(m.t, seen)
        self.sync_responses()
        now = m.t
        front = m.new_event or (m.history[-1] if m.history else None)
        base = dict(moment=m.t, trigger=m.trigger)
        reason = self.restraint.before(front, now) or (None if m.settled else "settle")
        sample = (
            None if reason else moment_sample(list(m.history), m.t, self.config, new_event=m.new_event, front=m.front)
        )
        sid = sample.id if sample else _moment_id(m, front)
        known = sample is not None and (
            sample.kind == "labelled" or (m.new_event is not None and m.new_event.is_llm_event is not None)
        )
        label = sample.label if known else None
        if reason is None and sample is None:
            reason = "no_context"
        if reason is not None:
            return self._record(LiveDecision(sid, outcome="skipped", reason=reason, **base), m)
        p = float(self.decider(sample))
        decide_s = time.perf_counter() - m.noticed
        common = dict(p_help=p, decide_seconds=decide_s, label=label, **base)
        if p < self.decider.threshold:
            return self._record(LiveDecision(sid, outcome="no", **common), m, sample)
        session = _app_session(front, m.history)
        held = self.restraint.after(now, session)
        if held is None and self.stale_after is not None and self.clock.now() - m.t > self.stale_after:
            held = "stale"
        if held is not None:
            return self._record(LiveDecision(sid, outcome="held", reason=held, **common), m, sample)
        cur = front or sample.current  # the app in front at decision time (the new event), not the one before it
        if self.how is None:
            return self._show(sid, sample, m, generic_offer_text(cur), None, None, p, session, cur, common)
        self.cancel_how()  # a newer moment that needs the model: the stale call is cancelled, not queued behind
        held = defer and self.help is not None and self.help.answering()
        if held:
            self.how_held += 1
            how_log.info("how call for %s held: an answer is being written (help first)", sid)
        call = _Held() if held else _HowCall(self.how, sample, self.ground)
        job = _Job(call, sid, sample, m, p, session, cur, common)
        wary = self.restraint.dismissed_in_app(cur.app_name, now)
        if not job.call.wait(self.offer_wait) and not wary:
            # the How model is slow (a local 1.5B model on CPU takes tens of seconds): the offer is
            # shown now, naming the app, and its query is filled in when the answer comes
            job.offer = self._offer(sample, generic_offer_text(cur), None, None, p, now, session, cur)
            job.shown = time.perf_counter() - m.noticed
        if defer and not job.call.done:
            self._job = job
            return None
        while not job.call.wait(0.2):  # a stop (Ctrl-C) cancels the call instead of waiting it out
            if self._stop is not None and self._stop.is_set():
                job.call.cancel()
        return self._finish(job)

    def _finish(self, job: _Job) -> LiveDecision:
        """Record the decision of a Yes once its How call ended (answered or cancelled)."""
        m, common, cur = job.m, job.common, job.cur
        how_s = job.call.seconds
        if job.call.cancelled:
            if job.offer is None:
                return self._record(
                    LiveDecision(job.sid, outcome="no_offer", reason="how_cancelled", how_seconds=how_s, **common),
                    m,
                    job.sample,
                )
            return self._record(
                LiveDecision(
                    job.sid,
                    outcome="offer",
                    reason="how_cancelled",
                    how_seconds=how_s,
                    offer_id=job.offer.id,
                    notification=job.offer.text,
                    offer_seconds=job.shown,
                    **common,
                ),
                m,
            )
        pred = job.call.result()  # a failing How call raises here, in the loop's thread
        text = offer_text(pred)
        if job.offer is not None:
            why = ""
            if pred.needs_help is False:
                why = "how_said_no"  # already shown: it stays, as the decider's generic offer
            elif text is None:
                why = "no_query"
            else:
                filled = self.feedback.fill_offer(job.offer.id, text=text, query=pred.query, intention=pred.intention)
                if filled is not None:
                    for n in self.notifiers:
                        update = getattr(n, "update", None)
                        if update is not None:
                            update(filled)
            return self._record(
                LiveDecision(
                    job.sid,
                    outcome="offer",
                    reason=why,
                    how_seconds=how_s,
                    offer_id=job.offer.id,
                    notification=text or job.offer.text,
                    offer_seconds=job.shown,
                    **common,
                ),
                m,
            )
        if pred.needs_help is False:
            return self._record(
                LiveDecision(job.sid, outcome="no_offer", reason="how_said_no", how_seconds=how_s, **common),
                m,
                job.sample,
            )
        shown = text or generic_offer_text(cur)  # no query: the decider's Yes stands, a generic offer
        query = pred.query if text else None
        if query is not None and self.restraint.dismissed_similar(cur.app_name, query, m.t):
            return self._record(
                LiveDecision(job.sid, outcome="held", reason="dismissed_similar", how_seconds=how_s, **common),
                m,
                job.sample,
            )
        return self._show(
            job.sid,
            job.sample,
            m,
            shown,
            query,
            pred.intention if text else None,
            job.p,
            job.session,
            cur,
            common,
            why="" if text else "no_query",
            how_s=how_s,
        )

    def help_first(self) -> None:
        """Help first (issue 42): while the help answers, the deferred How call is stopped and
        held; once no answer is queued or streaming, a held call starts (again)."""
        job = self._job
        if job is None or self.help is None:
            return
        if self.help.answering():
            if isinstance(job.call, _HowCall) and not job.call.done:
                job.call.cancel()
                if job.call.cancelled:  # (its answer had not come just before the cancel)
                    job.call = _Held()
                    self.how_held += 1
                    how_log.info("how call for %s stopped and requeued: an answer is being written", job.sid)
        elif isinstance(job.call, _Held) and not job.call.cancelled:
            job.call = _HowCall(self.how, job.sample, self.ground)  # type: ignore[arg-type]

    def poll_how(self) -> LiveDecision | None:
        """Record the decision of the deferred How call once its answer came (filling in or
        showing its offer); ``None`` while it runs or when there is none."""
        job = self._job
        if job is None or not job.call.done:
            return None
        self._job = None
        return self._finish(job)

    def cancel_how(self) -> LiveDecision | None:
        """Cancel the deferred How call, if any, and record its decision (``how_cancelled``; an
        answer already in is used instead)."""
        job = self._job
        if job is None:
            return None
        self._job = None
        job.call.cancel()
        return self._finish(job)

    def _offer(
        self, sample: Sample, text: str, query: str | None, intention: str | None, p: float, now: datetime, session, cur
    ) -> Any:  # noqa: ANN001
        """Store and show one offer; restraint counts it at the moment ``now``."""
        offer = self.feedback.add_offer(
            sample,
            text=text,
            query=query,
            intention=intention,
            p_help=p,
            notifier=",".join(n.name for n in self.notifiers if n.name),
            created_at=self.clock.now(),
            app_name=cur.app_name,
        )
        self.restraint.offered(now, session)
        for n in self.notifiers:
            n.show(offer)
        return offer

    def _show(
        self,
        sid: str,
        sample: Sample,
        m: Moment,
        text: str,
        query: str | None,
        intention: str | None,
        p: float,
        session,
        cur,
        common: dict,
        *,
        why: str = "",
        how_s: float | None = None,
    ) -> LiveDecision:  # noqa: ANN001
        offer = self._offer(sample, text, query, intention, p, m.t, session, cur)
        return self._record(
            LiveDecision(
                sid,
                outcome="offer",
                reason=why,
                how_seconds=how_s,
                offer_id=offer.id,
                notification=text,
                **common,
                offer_seconds=None if how_s is None else time.perf_counter() - m.noticed,
            ),
            m,
        )

    def _record(self, d: LiveDecision, m: Moment, sample: Sample | None = None) -> LiveDecision:
        did = self.feedback.add_decision(d, user=m.user, row_id=m.row_id)
        front = m.new_event or (m.history[-1] if m.history else None)
        asked = None
        if sample is not None and self.asker is not None:
            asked = self.asker.consider(
                sample,
                p=d.p_help,
                threshold=self.decider.threshold,
                outcome=d.outcome,
                reason=d.reason,
                app_name=(front or sample.current).app_name or "",
                offers=self.restraint.offers,
                decision_id=did,
            )
        if asked is not None:
            for n in self.notifiers:
                ask = getattr(n, "ask", None)
                if callable(ask):
                    ask(asked)
        if sample is not None and self.implicit is not None and d.outcome in QUIET_OUTCOMES and asked is None:
            self.implicit.quiet(did, sample, front)  # a moment asked about waits for its answer instead
        self.decisions.append(d)
        if self.on_decision is not None:
            self.on_decision(d)
        return d

    # ------------------------------------------------------------ loops
    def replay(
        self, moments: Iterable[Moment], clock: ReplayClock, stop: threading.Event | None = None
    ) -> list[LiveDecision]:
        """Play recorded moments through :meth:`decide` at the clock's speed (each How answer
        is waited for; ``stop`` cancels one in flight)."""
        self._stop = stop
        out = []
        for m in moments:
            if stop is not None and stop.is_set():
                break
            clock.wait_until(m.t, stop)
            if stop is not None and stop.is_set():
                break
            m = replace(m, noticed=time.perf_counter())
            d = self.decide(m)
            if d is not None:
                out.append(d)
        self.sync_responses()
        return out

    def _say(self, line: str) -> None:
        if self.on_status is not None:
            self.on_status(line)

    def _settles(self, m: Moment) -> bool:
        """Whether ``m`` waits to settle in front (:mod:`._settle`): not without ``settle_seconds``,
        not for recorded LLM use (the benchmark's moment is its start: before the person's query)."""
        return self.settle is not None and not (m.new_event is not None and m.new_event.is_llm_event)

    def _front(self, m: Moment) -> Any:
        return m.new_event or (m.history[-1] if m.history else None)

    def _try_settle(self, pending: Moment, follower: Any) -> bool:
        """Decide ``pending`` when the window in front has settled (its event as read now has a
        screenshot, its screen text or :data:`TEXT_WAIT_SECONDS` passed, and a pause of
        ``settle`` seconds); ``False`` while it has not."""
        fresh = follower.refresh(pending)
        e = self._front(fresh)
        if e is None:
            return False
        now = self.clock.now()
        t = settled_at(e, pending.t, now, self.settle or 0.0, self.still)
        if follower.recorder_stopped():
            # capture stopped: a pause after its last write is no pause (issue 21: nothing decided after the stop)
            seen = follower.last_change
            last = now - timedelta(seconds=time.monotonic() - seen) if seen is not None else pending.t
            if t is None or t > last:
                self.decide(replace(pending, settled=False) if e.focused_screenshots else pending)
                return True
        if t is None:
            return False
        first = first_shot(e)
        if (
            e.screen_recorded
            and first is not None
            and not has_text(e)
            and (now - first).total_seconds() < TEXT_WAIT_SECONDS
        ):
            return False  # its screen text is not in the log yet
        self.decide(replace(fresh, t=t, front=True, noticed=time.perf_counter()), defer=True)
        return True

    def _supersede(self, pending: Moment, newer: Moment) -> None:
        """A newer moment came before ``pending`` settled: decide ``pending`` at the pause it had
        before ``newer`` (rows caught up after a restart), else record it skipped (``settle``)."""
        front = self._front(pending)
        e = next((x for x in newer.history if front is not None and x.id == front.id), front)
        t = None if e is None else settled_at(e, pending.t, newer.t, self.settle or 0.0, self.still)
        if e is not None and t is None and e.focused_screenshots:
            self.decide(replace(pending, settled=False))
            return
        hist = tuple(x for x in newer.history if x.start <= (t or pending.t)) or pending.history
        new_event = e if pending.new_event is not None else None
        self.decide(
            replace(
                pending, t=t or pending.t, history=hist, new_event=new_event, front=True, noticed=time.perf_counter()
            ),
            defer=True,
        )

    def follow(
        self,
        follower: LifeTraceFollower,
        *,
        every_seconds: float = 30.0,
        poll_seconds: float = 0.05,
        stop: threading.Event | None = None,
        max_moments: int | None = None,
    ) -> list[LiveDecision]:
        """Follow a growing database until ``stop`` is set (or ``max_moments`` moments
        were decided): each new event row is a moment, and within a long event a
        tick every ``every_seconds`` (0: none) of wall time while the log grows (a writer
        committed within the last ``every_seconds``: once capture stops or the user is
        idle, no tick is decided). With ``settle_seconds`` a moment waits until its window
        settled in front (:mod:`._settle`); a newer moment before that records it skipped
        (``settle``). A Yes does not hold up the loop while its How answer is awaited
        (``decide(defer=True)``). While idle it asks SQLite every ``poll_seconds`` whether
        anything was committed (no table read) and looks at answers once a second; a log that
        does not grow for :data:`QUIET_LOG_SECONDS` is said once (``on_status``). A stop cancels
        a How call in flight and records its decision."""
        stop = stop or threading.Event()
        self._stop = stop
        start = len(self.decisions)
        pending: Moment | None = None
        last_moment = last_sync = last_check = grew = time.monotonic()
        said_quiet = False

        def enough() -> bool:
            return max_moments is not None and len(self.decisions) - start >= max_moments

        try:
            while not stop.is_set() and not enough():
                self.help_first()
                self.poll_how()
                moments = follower.poll()
                if (
                    not moments
                    and every_seconds > 0
                    and time.monotonic() - last_moment >= every_seconds
                    and follower.growing(every_seconds)
                ):  # no decisions once the log stops growing
                    tick = follower.tick(self.clock.now())
                    moments = [tick] if tick is not None else []
                for m in moments:
                    last_moment = time.monotonic()
                    if pending is not None:
                        self._supersede(pending, m)
                        pending = None
                    if self._settles(m):
                        pending, last_check = replace(m, front=True), 0.0
                    else:
                        self.decide(m, defer=True)
                    if enough():
                        break
                if pending is not None and not enough() and time.monotonic() - last_check >= SETTLE_POLL_SECONDS:
                    last_check = time.monotonic()
                    if self._try_settle(pending, follower):
                        pending = None
                if follower.last_change is not None and follower.last_change > grew:
                    grew, said_quiet = follower.last_change, False
                if not said_quiet and time.monotonic() - grew >= QUIET_LOG_SECONDS:
                    said_quiet = True
                    self._say(
                        f"the watched log has not grown for {QUIET_LOG_SECONDS:.0f} s (is its capture running?); "
                        "still watching"
                    )
                if not moments:
                    if time.monotonic() - last_sync >= 1.0:  # answers and expiry once a second while idle
                        self.sync_responses()
                        last_sync = time.monotonic()
                    stop.wait(poll_seconds)
        finally:
            self.cancel_how()  # a How call in flight at the stop is cancelled; its decision is recorded
        return self.decisions[start:]


def _moment_id(m: Moment, front: Any) -> str:
    """The id of a moment decided without a sample (skipped)."""
    if m.front and m.new_event is not None:
        return f"{m.user}:{m.new_event.id}:candidate"
    return f"{m.user}:{front.id if front is not None else '-'}:{m.trigger}"
