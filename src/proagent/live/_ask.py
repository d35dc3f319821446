"""Sparse questions: ``proagent live --ask-rate N`` (issue 33 item 2; on by default for the first days, issue 43).

A learner that hears back only where it offered, and from implicit labels where the person's
next actions happen to show something, is starved exactly where it is least sure. With
``--ask-rate N`` the agent asks, at most ``N`` times per calendar day, at a quiet moment whose
decision it is unsure of: "Would help have been useful just now? yes / no" (a terminal line
answered ``q ID yes`` / ``q ID no``, and a line with two buttons on the local page). The answer
is stored in ``feedback.db`` (``questions`` with the moment's sample, ``question_answers``) and
learned like an answer to an offer (``yes`` = label 1, ``no`` = label 0, weight 1): before the
next decision by a ``--learn`` decider (:class:`proagent.live.LearningWhen`), and by
``proagent train when --feedback`` (:func:`proagent.live.feedback_samples`).

**When to ask** (:meth:`Asker.consider`), every condition must hold:

1. the moment is quiet: decided No, or held by restraint for its rate limits (``max_per_hour``,
   ``min_gap``, ``app_session``); never right after a dismiss or "not now" (``cooldown``,
   ``not_now``), at a stale moment, or one like an offer dismissed today (:data:`NO_ASK_REASONS`);
2. the learner is unsure of it: with its own P(help) ``p`` and the cost threshold
   ``t = c_fa / (c_fa + c_miss)``, the expected cost of the decision it made without the label,
   ``min(p * c_miss, (1 - p) * c_fa)``, is at least :data:`ASK_UNCERTAINTY` of the most it can
   be (``c_fa * c_miss / (c_fa + c_miss)``, at ``p = t``). That share is
   :func:`uncertainty` ``= min(p / t, (1 - p) / (1 - t))``: 1 at the threshold, 0 where the
   learner is sure. The expected cost of the decision is what knowing the label would save at
   this moment, a myopic value of information; the share says the label must be worth at least
   three quarters of the most a label can be worth here before the person is interrupted for
   it (decision-theoretic experience sampling: Kapoor & Horvitz, "Experience Sampling for
   Building Predictive User Models: A Comparative Study", CHI 2008, asked the people whose
   interruptibility a model learned when the value of the label exceeded the cost of the probe,
   and found it needed fewer probes than random or periodic ones; uncertainty sampling: Lewis &
   Gale, SIGIR 1994). The constant is set a priori, not tuned on any session;
3. fewer than ``N`` questions were asked on the loop clock's calendar day (counted in
   ``feedback.db``: the budget holds across restarts);
4. no question is open (unanswered and asked within ``open_seconds``, the run's
   ``--ignore-after``), and no question or offer came within restraint's minimum gap
   (``--min-gap``);
5. a notifier of the run can show a question (``terminal`` or ``page``).

**By default** (no ``--ask-rate``: ``rate`` ``None``) the agent asks at most :data:`DEFAULT_ASK_RATE` a
day during the folder's first :data:`ASK_DAYS` days (counted from its first decision in
``feedback.db``), then no more; ``--ask-rate N`` asks up to N a day for as long as it runs, ``0`` never.

A moment asked about is not also held for an implicit label (:mod:`proagent.live._implicit`):
the person's answer is the better label.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..records import Sample
from .records import Question

__all__ = [
    "ASK_DAYS",
    "ASK_OUTCOMES",
    "ASK_UNCERTAINTY",
    "DEFAULT_ASK_RATE",
    "MAX_ASK_RATE",
    "NO_ASK_REASONS",
    "QUESTION_TEXT",
    "Asker",
    "uncertainty",
]

QUESTION_TEXT = "Would help have been useful just now? yes / no"
"""What a sparse question says."""

ASK_OUTCOMES = ("no", "held")
"""Decision outcomes a question may follow (quiet moments the learner decided on)."""

NO_ASK_REASONS = ("cooldown", "not_now", "stale", "dismissed_similar")
"""Held moments never asked about: the person just said no or not now, the moment is old, or
an offer like it was dismissed today."""

ASK_UNCERTAINTY = 0.75
"""Ask only when the decision's expected cost is at least this share of its maximum
(:func:`uncertainty`; module docstring, rule 2)."""

DEFAULT_ASK_RATE = 3
"""Questions a day by default, during the first :data:`ASK_DAYS` days. Why 3: experience-sampling
studies of interruptibility probed a few times a day (Kapoor & Horvitz, CHI 2008, above; Fogarty et al.,
"Predicting human interruptibility with sensors", TOCHI 2005, probed about every hour but found people
tolerated that only for a short study); 3 a day stays below one per two working hours, next to up to
:data:`~proagent.live.RestraintConfig` ``max_per_hour`` offers, and alone brings day one's
:data:`~proagent.live.DAY_ONE_LABELS` labels within four days even when the person never answers an offer.
``benchmarks/personalise.py --live-setting`` measures what they teach."""

ASK_DAYS = 7
"""Default questions stop this many days after the folder's first decision: by then day one's labels
came from the offers, the questions and the implicit labels."""

MAX_ASK_RATE = 100
"""Largest ``--ask-rate`` (questions a day)."""


def uncertainty(p: float, threshold: float) -> float:
    """The expected cost of deciding at P(help) ``p`` with the cost threshold ``threshold``
    (``min(p * c_miss, (1 - p) * c_fa)`` with ``threshold = c_fa / (c_fa + c_miss)``), as a share
    of its maximum ``c_fa * c_miss / (c_fa + c_miss)``: ``min(p / t, (1 - p) / (1 - t))``, 0-1;
    1 at the threshold, 0 at ``p`` 0 or 1. A threshold of 0 or 1 (always or never offer) gives 0."""
    t = float(threshold)
    if not 0.0 < t < 1.0:
        return 0.0
    p = min(max(float(p), 0.0), 1.0)
    return min(p / t, (1.0 - p) / (1.0 - t))


@dataclass
class Asker:
    """Decides, at each quiet moment of a live run, whether to ask (module docstring) and stores the question.

    Args:
        store: the run's :class:`~proagent.live.FeedbackStore`.
        rate: at most this many questions per calendar day of the loop's clock (0: none; ``None``: the
            default, :data:`DEFAULT_ASK_RATE` a day during the folder's first :data:`ASK_DAYS` days).
        now: the loop's clock.
        open_seconds: a question unanswered this long no longer blocks the next (seconds).
        min_gap_seconds: no question within this long after an offer or question (seconds).
        share: :data:`ASK_UNCERTAINTY`.
    """

    store: object
    rate: int | None
    now: Callable[[], datetime]
    open_seconds: float = 600.0
    min_gap_seconds: float = 0.0
    share: float = ASK_UNCERTAINTY

    _first: datetime | None = None

    def daily_rate(self) -> int:
        """Questions allowed today: ``rate``, or by default :data:`DEFAULT_ASK_RATE` until :data:`ASK_DAYS`
        days after the folder's first decision (``FeedbackStore.first_moment``; the loop's clock before any)."""
        if self.rate is not None:
            return self.rate
        if self._first is None:
            first = self.store.first_moment()  # type: ignore[attr-defined]
            self._first = first if first is not None else self.now()
        now = self.now()
        if now.tzinfo is None and self._first.tzinfo is not None:
            now = now.replace(tzinfo=self._first.tzinfo)
        elif now.tzinfo is not None and self._first.tzinfo is None:
            now = now.replace(tzinfo=None)
        return DEFAULT_ASK_RATE if now - self._first < timedelta(days=ASK_DAYS) else 0

    def asked_today(self) -> int:
        """Questions asked on the loop clock's calendar day."""
        return len(self.store.asked_on(self.now().date()))  # type: ignore[attr-defined]

    def consider(
        self,
        sample: Sample,
        *,
        p: float | None,
        threshold: float,
        outcome: str,
        reason: str,
        app_name: str,
        offers: Sequence[datetime] = (),
        decision_id: int | None = None,
    ) -> Question | None:
        """Ask about the moment of ``sample`` when every rule of the module docstring holds; returns the
        stored question, else ``None``. ``offers``: times of the offers made (restraint's)."""
        rate = self.daily_rate()
        if rate <= 0 or p is None or outcome not in ASK_OUTCOMES or reason in NO_ASK_REASONS:
            return None
        u = uncertainty(p, threshold)
        if u < self.share:
            return None
        now = self.now()
        asked = self.store.asked_on(now.date())  # type: ignore[attr-defined]
        if len(asked) >= rate:
            return None
        last = self.store.questions(limit=1)  # type: ignore[attr-defined]
        if (
            last
            and last[0]["answer"] is None
            and now - datetime.fromisoformat(last[0]["asked_at"]) < timedelta(seconds=self.open_seconds)
        ):
            return None
        gap = timedelta(seconds=self.min_gap_seconds)
        if any(t <= now < t + gap for t in [*offers, *asked]):
            return None
        return self.store.add_question(  # type: ignore[attr-defined]
            sample,
            asked_at=now,
            p_help=p,
            threshold=threshold,
            risk=u,
            app_name=app_name,
            decision_id=decision_id,
        )
