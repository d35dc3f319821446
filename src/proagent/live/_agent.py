"""The live loop: moment -> Sample -> restraint -> When decider -> How model -> offer."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from ..agent.parsing import to_prediction
from ..agent.prompting import system_prompt, user_prompt
from ..bench.samples import SampleConfig
from ..records import Prediction, Sample
from ._feedback import FeedbackStore
from ._moments import moment_sample
from ._notify import Notifier
from .records import LiveDecision
from ._restraint import Restraint
from ._sources import Clock, LifeTraceFollower, Moment, ReplayClock, WallClock

__all__ = ["OFFER_WAIT_SECONDS", "HowModel", "LiveAgent", "ScriptedDecider", "When", "generic_offer_text", "offer_text"]


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
    """One How call in a daemon thread: :meth:`wait` for it up to a limit, :meth:`result`
    for its prediction (re-raising what the call raised). Daemon: a Ctrl-C while it runs
    ends the process without waiting for the model (whose child process is killed at exit)."""

    def __init__(self, how: Callable[[Sample], Prediction], sample: Sample) -> None:
        self._done = threading.Event()
        self._pred: Prediction | None = None
        self._error: BaseException | None = None
        self.seconds = 0.0
        self._how, self._sample = how, sample
        threading.Thread(target=self._run, daemon=True, name="proagent-how").start()

    def _run(self) -> None:
        t0 = time.perf_counter()
        try:
            self._pred = self._how(self._sample)
        except BaseException as e:  # noqa: BLE001 (re-raised in the loop's thread)
            self._error = e
        finally:
            self.seconds = time.perf_counter() - t0
            self._done.set()

    def wait(self, seconds: float | None) -> bool:
        """Whether the answer came within ``seconds`` (``None``: wait for it)."""
        return self._done.wait(seconds)

    def result(self) -> Prediction:
        self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._pred is not None
        return self._pred


class HowModel:
    """How to Assist at a moment the decider said Yes: the benchmark's zero-shot
    prompt (:func:`proagent.agent.prompting.user_prompt`, the system prompt with
    the intention taxonomy) to an inspect model, parsed by the benchmark's
    answer parser into intention + query.

    Args:
        model: any inspect model name (``local/qwen2.5-coder-1.5b``, ``openai/...``)
            or an inspect ``Model``.
        model_args: provider arguments (``n_threads=1``...).
        max_tokens: answer budget (tokens; the benchmark's zero-shot budget).
    """

    def __init__(self, model: Any, model_args: Mapping[str, Any] | None = None, *, max_tokens: int = 96,
                 base_url: str | None = None) -> None:
        from inspect_ai.model import GenerateConfig, get_model

        self.name = model if isinstance(model, str) else str(model)
        self._model = get_model(model, base_url=base_url, **dict(model_args or {})) if isinstance(model, str) else model
        self._config = GenerateConfig(temperature=0.0, max_tokens=max_tokens, seed=0)
        self._loop = asyncio.new_event_loop()
        self.last_usage: Any = None
        """Token usage of the last How answer (inspect ``ModelUsage``; a local model's
        ``input_tokens`` are the prompt tokens it evaluated, ``input_tokens_cache_read`` those it reused)."""

    def __call__(self, sample: Sample) -> Prediction:
        from inspect_ai.model import ChatMessageSystem, ChatMessageUser

        messages = [ChatMessageSystem(content=system_prompt()), ChatMessageUser(content=user_prompt(sample, "zero-shot"))]
        out = self._loop.run_until_complete(self._model.generate(messages, config=self._config))
        self.last_usage = out.usage
        return to_prediction(sample.id, out.completion)

    def warm(self) -> float:
        """Load the model and have it read the system prompt once (a one-token answer), so the
        first offer pays neither: a local model keeps that prompt's KV cache and evaluates only
        the user message of each later call (llama.cpp prefix reuse). Returns the seconds it took.

        Raises:
            whatever the model raises when it cannot be loaded or reached (the run should stop).
        """
        from inspect_ai.model import ChatMessageSystem, ChatMessageUser

        t0 = time.perf_counter()
        messages = [ChatMessageSystem(content=system_prompt()), ChatMessageUser(content="(starting)")]
        self._loop.run_until_complete(self._model.generate(messages, config=self._config.model_copy(update={"max_tokens": 1})))
        return time.perf_counter() - t0

    def close(self) -> None:
        self._loop.close()


class LiveAgent:
    """One live run: decides every moment it is given and records everything in
    ``feedback.db`` (decisions, offers, responses) in ``folder``.

    Args:
        folder: live folder (``feedback.db``, pause file, page URL).
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
    """

    def __init__(self, folder: str | Path, decider: When, *, how: Callable[[Sample], Prediction] | None = None,
                 notifiers: Sequence[Notifier] = (), restraint: Restraint | None = None, clock: Clock | None = None,
                 config: SampleConfig = SampleConfig(), ignore_after_seconds: float = 600.0,
                 feedback: FeedbackStore | None = None, on_decision: Callable[[LiveDecision], None] | None = None,
                 stale_after_seconds: float | None = None, offer_wait_seconds: float | None = OFFER_WAIT_SECONDS) -> None:
        self.folder = Path(folder)
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
        self.stale_after = None if stale_after_seconds is None else timedelta(seconds=stale_after_seconds)
        offers, responses = self.feedback.history()
        self.restraint.load(offers, responses)
        self._last_response = max((r[0] for r in self.feedback.responses_since(0)), default=0)
        self.decisions: list[LiveDecision] = []
        self._learn = getattr(decider, "sync", None)
        """A learning decider's ``sync(store)`` (:class:`proagent.live.LearningWhen`): learns the answers."""
        if self._learn is not None:
            self._learn(self.feedback)  # answers given while the agent was not running

    # ------------------------------------------------------------ responses
    def sync_responses(self) -> None:
        """Apply responses stored since the last look (from the page, a
        notification or the terminal) and expire unanswered offers."""
        for rid, _, response, at in self.feedback.responses_since(self._last_response):
            self._last_response = rid
            self.restraint.responded(response, at)
        now = self.clock.now()
        for o in self.feedback.offers(open_only=True, limit=200):
            if now - datetime.fromisoformat(o["created_at"]) >= self.ignore_after:
                self.feedback.respond(o["id"], "ignored", now, source="timeout")
        if self._learn is not None:
            self._learn(self.feedback)

    # ------------------------------------------------------------ one moment
    def decide(self, m: Moment) -> LiveDecision:
        """Decide one moment, show an offer when due, and record the decision."""
        self.sync_responses()
        now = m.t
        front = m.new_event or (m.history[-1] if m.history else None)
        base = dict(moment=m.t, trigger=m.trigger)
        reason = self.restraint.before(front, now)
        sample = None if reason else moment_sample(list(m.history), m.t, self.config, new_event=m.new_event)
        sid = sample.id if sample else f"{m.user}:{(m.new_event or front).id if front else '-'}:{m.trigger}"
        known = sample is not None and (sample.kind == "labelled" or (m.new_event is not None
                                                                     and m.new_event.is_llm_event is not None))
        label = sample.label if known else None
        if reason is None and sample is None:
            reason = "no_context"
        if reason is not None:
            return self._record(LiveDecision(sid, outcome="skipped", reason=reason, **base), m)
        p = float(self.decider(sample))
        decide_s = time.perf_counter() - m.noticed
        common = dict(p_help=p, decide_seconds=decide_s, label=label, **base)
        if p < self.decider.threshold:
            return self._record(LiveDecision(sid, outcome="no", **common), m)
        session = _app_session(front, m.history)
        held = self.restraint.after(now, session)
        if held is None and self.stale_after is not None and self.clock.now() - m.t > self.stale_after:
            held = "stale"
        if held is not None:
            return self._record(LiveDecision(sid, outcome="held", reason=held, **common), m)
        cur = front or sample.current  # the app in front at decision time (the new event), not the one before it
        if self.how is None:
            return self._show(sid, sample, m, generic_offer_text(cur), None, None, p, session, cur, common)
        call = _HowCall(self.how, sample)
        if not call.wait(self.offer_wait):
            # the How model is slow (a local 1.5B model on CPU takes tens of seconds): the offer is
            # shown now, naming the app, and its query is filled in when the answer comes
            offer = self._offer(sample, generic_offer_text(cur), None, None, p, now, session, cur)
            shown = time.perf_counter() - m.noticed
            pred = call.result()
            how_s = call.seconds
            why, text = "", offer_text(pred)
            if pred.needs_help is False:
                why = "how_said_no"  # already shown: it stays, as the decider's generic offer
            elif text is None:
                why = "no_query"
            else:
                filled = self.feedback.fill_offer(offer.id, text=text, query=pred.query, intention=pred.intention)
                if filled is not None:
                    for n in self.notifiers:
                        update = getattr(n, "update", None)
                        if update is not None:
                            update(filled)
            return self._record(LiveDecision(sid, outcome="offer", reason=why, how_seconds=how_s, offer_id=offer.id,
                                             notification=text or offer.text, offer_seconds=shown, **common), m)
        pred = call.result()
        how_s = call.seconds
        if pred.needs_help is False:
            return self._record(LiveDecision(sid, outcome="no_offer", reason="how_said_no", how_seconds=how_s,
                                             **common), m)
        text = offer_text(pred)
        if text is None:  # the decider's Yes stands: a generic offer, recorded as such
            return self._show(sid, sample, m, generic_offer_text(cur), None, None, p, session, cur, common,
                              why="no_query", how_s=how_s)
        return self._show(sid, sample, m, text, pred.query, pred.intention, p, session, cur, common, how_s=how_s)

    def _offer(self, sample: Sample, text: str, query: str | None, intention: str | None, p: float, now: datetime,
               session, cur) -> Any:  # noqa: ANN001
        """Store and show one offer; restraint counts it at the moment ``now``."""
        offer = self.feedback.add_offer(sample, text=text, query=query, intention=intention, p_help=p,
                                        notifier=",".join(n.name for n in self.notifiers if n.name), created_at=self.clock.now(),
                                        app_name=cur.app_name)
        self.restraint.offered(now, session)
        for n in self.notifiers:
            n.show(offer)
        return offer

    def _show(self, sid: str, sample: Sample, m: Moment, text: str, query: str | None, intention: str | None, p: float,
              session, cur, common: dict, *, why: str = "", how_s: float | None = None) -> LiveDecision:  # noqa: ANN001
        offer = self._offer(sample, text, query, intention, p, m.t, session, cur)
        return self._record(LiveDecision(sid, outcome="offer", reason=why, how_seconds=how_s, offer_id=offer.id,
                                         notification=text, **common,
                                         offer_seconds=None if how_s is None else time.perf_counter() - m.noticed), m)

    def _record(self, d: LiveDecision, m: Moment) -> LiveDecision:
        self.feedback.add_decision(d, user=m.user, row_id=m.row_id)
        self.decisions.append(d)
        if self.on_decision is not None:
            self.on_decision(d)
        return d

    # ------------------------------------------------------------ loops
    def replay(self, moments: Iterable[Moment], clock: ReplayClock, stop: threading.Event | None = None) -> list[LiveDecision]:
        """Play recorded moments through :meth:`decide` at the clock's speed."""
        out = []
        for m in moments:
            if stop is not None and stop.is_set():
                break
            clock.wait_until(m.t, stop)
            m = Moment(m.t, m.user, m.trigger, m.history, m.new_event, time.perf_counter(), m.row_id)
            out.append(self.decide(m))
        self.sync_responses()
        return out

    def follow(self, follower: LifeTraceFollower, *, every_seconds: float = 30.0, poll_seconds: float = 0.05,
               stop: threading.Event | None = None, max_moments: int | None = None) -> list[LiveDecision]:
        """Follow a growing database until ``stop`` is set (or ``max_moments`` moments
        were decided): each new event row is a moment, and within a long event a
        tick every ``every_seconds`` (0: none) of wall time while the log grows (a writer
        committed within the last ``every_seconds``: once capture stops or the user is
        idle, no tick is decided). While idle it asks
        SQLite every ``poll_seconds`` whether anything was committed (no table
        read) and looks at answers once a second."""
        stop = stop or threading.Event()
        out: list[LiveDecision] = []
        last_moment = last_sync = time.monotonic()
        while not stop.is_set():
            moments = follower.poll()
            if (not moments and every_seconds > 0 and time.monotonic() - last_moment >= every_seconds
                    and follower.growing(every_seconds)):  # no decisions once the log stops growing
                tick = follower.tick(self.clock.now())
                moments = [tick] if tick is not None else []
            for m in moments:
                out.append(self.decide(m))
                last_moment = time.monotonic()
                if max_moments is not None and len(out) >= max_moments:
                    return out
            if not moments:
                if time.monotonic() - last_sync >= 1.0:  # answers and expiry once a second while idle
                    self.sync_responses()
                    last_sync = time.monotonic()
                stop.wait(poll_seconds)
        return out
