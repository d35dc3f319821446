"""Implicit labels: what the person did after a moment the agent stayed quiet at.

``proagent live`` hears an answer only where it offered; a learner fed only those answers is
starved, and one fed only the misses it can reveal is biased towards Yes (only positives come
back from quiet moments; Mozannar et al. 2023, arXiv 2306.04930, saw training on acceptance
alone make suggestions worse). So a quiet moment (decided No, held by restraint, or the How
model said no) gets a label from either side when the person's next actions show it:

* ``missed`` (label 1, weight :data:`MISS_WEIGHT`): within :data:`HORIZON_SECONDS` after the
  moment an event of the person's own LLM use starts: an LLM chat app or page comes to the front
  (:func:`proagent.annotate.platforms.event_platform` on app name, window title and URL, and the
  screen text of a browser page where capture records the screen) or the log flags it as LLM
  use (``is_llm_event``; a recorded user turn makes it ``is_llm_use``). Help was needed there
  and the agent said nothing.
* ``quiet_focus`` (label 0, weight :data:`FOCUS_WEIGHT`): no LLM use within the horizon, the
  person kept working in the application in front at the moment (every event started within
  the horizon is in it), and activity went on (a moment was seen by
  :data:`HORIZON_SECONDS` + :data:`IDLE_SECONDS`; an idle stop labels nothing). Steady focused
  work after a quiet moment is weak evidence that an offer would have interrupted (FlowLight,
  Zuger et al. 2017; breakpoints, OASIS/Attelia: interruptions mid-task cost more).

Anything else (a switch to another app with no LLM use, an idle gap) stays unlabelled, and so
does every offer the person let expire (``ignored``): silence after an offer says nothing
reliable about the moment.

The horizon is ProAgentBench's own (:attr:`proagent.bench.samples.SampleConfig.gap_seconds`,
120 s): a moment within 120 s before an LLM event is never one of the benchmark's negatives,
the LLM event's start is its positive. The weights are a priori, not tuned on the evaluated
sessions: a miss is as certain as an accepted offer (1.0); steady focus weighs
:data:`FOCUS_WEIGHT` = 0.25, half a "not now" answer (:data:`proagent.live._learn.NOT_NOW_WEIGHT`
= 0.5), since the person was never asked. ``benchmarks/personalise.py --feedback
offered+implicit`` measures the two sides against misses alone (``offered+misses``).

Labels go to ``feedback.db`` (table ``implicit``, with the event ids as evidence); the live
learner (:class:`proagent.live.LearningWhen`) learns them before the next decision and
``proagent train when --feedback`` reads them (:func:`proagent.live.feedback_samples`).
Quiet moments still waiting for their horizon are kept in ``feedback.db`` too (table
``implicit_pending``, with the events seen after them so far): a restarted run resumes them
(a stop longer than the horizon plus :data:`IDLE_SECONDS` is an idle stop, which labels nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from ..bench.samples import SampleConfig
from ..records import Event, Sample

__all__ = [
    "FOCUS_WEIGHT",
    "HORIZON_SECONDS",
    "IDLE_SECONDS",
    "MISS_WEIGHT",
    "QUIET_OUTCOMES",
    "ImplicitLabeller",
    "llm_use",
]

HORIZON_SECONDS: float = SampleConfig().gap_seconds
"""How long after a quiet moment the person's own LLM use makes it a miss, and how long they must
keep working in the same app for a weak negative (seconds; ProAgentBench's 120 s gap)."""

IDLE_SECONDS: float = 60.0
"""Focus must be seen go on: the first moment at or after the horizon must come within this many
seconds after it (``proagent live`` decides a tick every 30 s only while the log grows; a longer
silence is an idle stop, which labels nothing)."""

MISS_WEIGHT: float = 1.0
"""Weight of a ``missed`` label (as an accepted offer)."""

FOCUS_WEIGHT: float = 0.25
"""Weight of a ``quiet_focus`` label: half of a "not now" answer (module docstring)."""

QUIET_OUTCOMES = ("no", "held", "no_offer")
"""Decision outcomes that leave a moment quiet (an offer, or a moment skipped undecided, is not)."""


def llm_use(e: Event) -> str | None:
    """Why ``e`` is the person's own LLM use (``"is_llm_event"`` or ``"platform:NAME (KIND 'MATCH')"``),
    else ``None``."""
    from ..annotate.platforms import event_platform

    if e.is_llm_event:
        return "is_llm_event"
    hit = event_platform(e)
    return None if hit is None else f"platform:{hit.platform} ({hit.evidence} {hit.matched!r})"


@dataclass
class _Pending:
    decision_id: int | None
    sample: Sample
    t: datetime
    app: str
    front_id: str | None
    seen: dict[str, Event] = field(default_factory=dict)
    row: int | None = None
    """Its ``implicit_pending`` row in ``feedback.db`` (``None``: a store that keeps none)."""


@dataclass
class ImplicitLabeller:
    """Holds the quiet moments of a live run until what followed them labels them.

    Args:
        store: the run's :class:`~proagent.live.FeedbackStore` (labels are written there).
        horizon_seconds: :data:`HORIZON_SECONDS`.
        idle_seconds: :data:`IDLE_SECONDS`.
        focus_weight: :data:`FOCUS_WEIGHT` (0 stores no weak negatives: misses only).
        now: the loop's clock (``labelled_at``).
    """

    store: object
    horizon_seconds: float = HORIZON_SECONDS
    idle_seconds: float = IDLE_SECONDS
    focus_weight: float = FOCUS_WEIGHT
    now: Callable[[], datetime] | None = None
    pending: list[_Pending] = field(default_factory=list)

    def __post_init__(self) -> None:
        """Resume the quiet moments a previous run left waiting in ``feedback.db``."""
        load = getattr(self.store, "pending", None)
        if callable(load) and not self.pending:
            for r in load():
                s = r["sample"]
                self.pending.append(
                    _Pending(
                        r["decision_id"],
                        s,
                        s.time,
                        r["app_name"],
                        r["front_event_id"],
                        {e.id: e for e in r["seen"]},
                        r["id"],
                    )
                )

    def quiet(self, decision_id: int | None, sample: Sample, front: Event | None) -> None:
        """Remember a quiet moment (``front``: the event in front at decision time). Moments whose front
        event is itself LLM use are not held: the person is already getting help."""
        if front is not None and llm_use(front):
            return
        app = (front.app_name if front is not None else sample.current.app_name) or ""
        front_id = front.id if front is not None else None
        add = getattr(self.store, "add_pending", None)
        row = add(sample, decision_id=decision_id, app_name=app, front_event_id=front_id) if callable(add) else None
        self.pending.append(_Pending(decision_id, sample, sample.time, app, front_id, row=row))

    def observe(self, t: datetime, events: list[Event]) -> list[int]:
        """Look at what happened up to ``t`` (``events``: the person's events known at ``t``,
        oldest first) and label the quiet moments it settles. Returns the new label ids."""
        if not self.pending:
            return []
        horizon = timedelta(seconds=self.horizon_seconds)
        made: list[int] = []
        keep: list[_Pending] = []
        dropped: list[int] = []
        for p in self.pending:
            after = [e for e in events if p.t < e.start <= min(t, p.t + horizon) and e.id != p.front_id]
            new = [e for e in after if e.id not in p.seen]
            for e in new:
                p.seen[e.id] = e
            llm = next(((e, why) for e in p.seen.values() if (why := llm_use(e))), None)
            if llm is not None:
                e, why = llm
                made.append(
                    self._store(
                        p,
                        "missed",
                        1,
                        MISS_WEIGHT,
                        {
                            "rule": f"own LLM use within {self.horizon_seconds:g} s",
                            "llm_event_id": e.id,
                            "why": why,
                            "seconds_after": round((e.start - p.t).total_seconds(), 3),
                            "front_event_id": p.front_id,
                            "event_ids": [x.id for x in p.seen.values()],
                        },
                    )
                )
                continue
            if t < p.t + horizon:
                keep.append(p)
                if new and p.row is not None:
                    self.store.update_pending(p.row, list(p.seen.values()))  # type: ignore[attr-defined]
                continue
            steady = (
                t <= p.t + horizon + timedelta(seconds=self.idle_seconds)
                and all(e.app_name == p.app for e in p.seen.values())
                and p.app != ""
            )
            if steady and self.focus_weight > 0:
                made.append(
                    self._store(
                        p,
                        "quiet_focus",
                        0,
                        self.focus_weight,
                        {
                            "rule": f"kept working in {p.app!r} for {self.horizon_seconds:g} s, no LLM use",
                            "front_event_id": p.front_id,
                            "event_ids": [x.id for x in p.seen.values()],
                        },
                    )
                )
            elif p.row is not None:
                dropped.append(p.row)
        self.pending = keep
        if dropped:
            self.store.drop_pending(dropped)  # type: ignore[attr-defined]
        return made

    def _store(self, p: _Pending, response: str, label: int, weight: float, evidence: dict) -> int:
        at = self.now() if self.now is not None else p.t
        extra = {"pending_id": p.row} if p.row is not None else {}
        return self.store.add_implicit(  # type: ignore[attr-defined]
            p.sample,
            response=response,
            label=label,
            weight=weight,
            evidence=evidence,
            at=at,
            decision_id=p.decision_id,
            **extra,
        )


def label_summary(folder: str | Path) -> dict[str, int]:
    """What a live folder's ``feedback.db`` holds as labels, for the run's summary: ``offers`` shown
    and their latest answers (``accepted``, ``dismissed``, ``not_now``, ``ignored``, ``open``), and the
    implicit labels (``missed``, ``quiet_focus``). Empty when there is no readable database.

    The offers shown already passed the person's budget (``--max-per-hour``, restraint), so
    ``accepted / offers`` is the precision at that budget: of the offers let through, how many were
    wanted (counting unanswered ones as not wanted; ``accepted / (accepted + dismissed)`` among answered).
    """
    import sqlite3

    from ..sources.lifetrace_schema import connect_read_only
    from ._feedback import FEEDBACK_DB

    p = Path(folder) / FEEDBACK_DB
    if not p.is_file():
        return {}
    try:
        conn = connect_read_only(p)
        try:
            rows = conn.execute(
                "SELECT (SELECT response FROM responses r WHERE r.offer_id = o.id ORDER BY r.id DESC "
                "LIMIT 1) FROM offers o"
            ).fetchall()
            has = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'implicit'").fetchone()
            quiet = conn.execute("SELECT response, count(*) FROM implicit GROUP BY response").fetchall() if has else []
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            pending = (
                conn.execute("SELECT count(*) FROM implicit_pending").fetchone()[0]
                if "implicit_pending" in tables
                else 0
            )
            asked = (
                conn.execute(
                    "SELECT (SELECT answer FROM question_answers a WHERE a.question_id = q.id ORDER BY a.id DESC LIMIT 1) "
                    "FROM questions q"
                ).fetchall()
                if "questions" in tables
                else []
            )
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return {}
    out = {
        "offers": len(rows),
        "accepted": 0,
        "dismissed": 0,
        "not_now": 0,
        "ignored": 0,
        "open": 0,
        "missed": 0,
        "quiet_focus": 0,
        "pending": int(pending),
        "asked": len(asked),
        "asked_yes": 0,
        "asked_no": 0,
    }
    for (r,) in rows:
        out[r or "open"] = out.get(r or "open", 0) + 1
    for r, n in quiet:
        out[r] = int(n)
    for (a,) in asked:
        if a in ("yes", "no"):
            out[f"asked_{a}"] += 1
    return out
