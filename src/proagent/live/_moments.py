"""The benchmark's Sample at a live moment t (same window and context rules as
:mod:`proagent.bench.samples`), built only from what is known at t."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from ..bench.samples import SampleConfig, moment_events
from ..bench.samples import window_context as _context
from ..records import Event, Sample

__all__ = ["as_of", "moment_sample"]


def as_of(e: Event, t: datetime) -> Event:
    """``e`` as it was known at ``t``: screenshots taken after ``t`` dropped and
    the end left open when it lies after ``t`` (no future leaks into a tick
    inside a long event, or into a replay)."""
    shots = tuple(s for s in e.screenshots if s.time <= t)
    end = e.end if e.end is not None and e.end <= t else None
    if end is e.end and len(shots) == len(e.screenshots):
        return e
    return replace(e, end=end, screenshots=shots)


def moment_sample(
    history: list[Event], t: datetime, config: SampleConfig, *, new_event: Event | None = None, front: bool = False
) -> Sample | None:
    """The Sample of moment ``t`` for one user, or ``None`` when there is no context.

    ``history`` holds the user's events known at ``t``, oldest first (``new_event``,
    when the moment is the start of a new event row, may be its last item).
    The rules are those of :mod:`proagent.bench.samples`, so the decider sees at
    a live moment exactly what it was trained and evaluated on:

    * labelled logs (ProactiveBench replay, every event has ``needs_help``): the
      current state is ``new_event`` itself, the context the earlier events in
      the window; label and references from the event (``kind="labelled"``,
      id ``{event id}:labelled``, as :func:`~proagent.bench.samples.build_samples`);
    * activity logs (LifeTrace): the current state is the last event of real
      activity that started before ``t`` (>= ``min_event_seconds`` with a
      screenshot, not LLM use), the context the earlier such events overlapping
      ``[t - window, t)`` (``kind="candidate"``, id ``{user}:{event id}:candidate``
      for a new row as :func:`~proagent.bench.samples.candidate_moments`,
      ``{user}:{current id}:t{HHMMSS}`` for a tick inside a long event). The
      label is 1 when ``new_event`` is recorded LLM use (replay of an annotated
      log), else 0 (unknown live).

    ``None`` ("skip the model call when there is no context") when the event in
    progress before ``t`` is not real activity (shorter than 3 s, no
    screenshot yet) or is itself LLM use.

    ``front`` (live, issue 32: a moment decided once its window settled in front, ``t`` after
    ``new_event`` started): the current state is ``new_event`` as known at ``t`` (still open),
    the context the earlier real activity overlapping ``[t - window, t)``; id and label are
    those of the candidate moment of ``new_event`` (``{user}:{event id}:candidate``).
    """
    known = [as_of(e, t) for e in history if e.start <= t]
    if new_event is not None and new_event.needs_help is not None and all(e.needs_help is not None for e in known):
        i = next(i for i, e in enumerate(known) if e.id == new_event.id)
        e = known[i]
        return Sample(
            id=f"{e.id}:labelled",
            user=e.user,
            time=e.start,
            label=1 if e.needs_help else 0,
            split="test",
            kind="labelled",
            context=_context(known, i, e.start, config.window_seconds),
            current=e,
            window_seconds=config.window_seconds,
            reference_queries=e.candidate_tasks,
            event_id=e.id,
        )
    if front and new_event is not None:
        return _front_sample(known, t, config, new_event)
    before = [e for e in known if e.start < t and (new_event is None or e.id != new_event.id)]
    # an end not yet written is where the next event starts (as the reader fills it)
    nexts = [n.start for n in before[1:]] + ([t] if new_event is not None else [None])
    before = [replace(e, end=n) if e.end is None and n is not None else e for e, n in zip(before, nexts)]
    valid = moment_events(before, config)
    if not valid:
        return None
    cur = valid[-1]
    if before and before[-1].id != cur.id and new_event is None:
        return None  # a tick: the event in progress is not (yet) real activity
    if not cur.is_activity(config.min_event_seconds) or cur.is_llm_event:
        return None
    if new_event is not None:
        sid, label = f"{new_event.user}:{new_event.id}:candidate", 1 if new_event.is_llm_event else 0
        queries = new_event.conversation.user_queries[:1] if label and new_event.conversation else ()
        intention, event_id = (new_event.intention if label else None), new_event.id
    else:
        sid, label, queries, intention, event_id = f"{cur.user}:{cur.id}:t{t:%H%M%S}", 0, (), None, cur.id
    return Sample(
        id=sid,
        user=cur.user,
        time=t,
        label=label,
        split="test",
        kind="candidate",
        context=_context(valid, len(valid) - 1, t, config.window_seconds),
        current=cur,
        window_seconds=config.window_seconds,
        reference_queries=tuple(q for q in queries if q.strip()),
        intention=intention,
        event_id=event_id,
    )


def _front_sample(known: list[Event], t: datetime, config: SampleConfig, new_event: Event) -> Sample | None:
    """The sample of a new event decided once it settled in front (see :func:`moment_sample`)."""
    i = next((i for i, e in enumerate(known) if e.id == new_event.id), None)
    if i is None:
        return None
    cur = replace(known[i], end=None)  # in front at t: open, whatever was written since
    nexts = [n.start for n in known[1 : i + 1]]
    before = [replace(e, end=n) if e.end is None else e for e, n in zip(known[:i], nexts)]
    if not cur.is_activity(config.min_event_seconds) or cur.is_llm_event:
        return None
    valid = moment_events(before, config) + [cur]
    label = 1 if new_event.is_llm_event else 0
    return Sample(
        id=f"{new_event.user}:{new_event.id}:candidate",
        user=cur.user,
        time=t,
        label=label,
        split="test",
        kind="candidate",
        context=_context(valid, len(valid) - 1, t, config.window_seconds),
        current=cur,
        window_seconds=config.window_seconds,
        event_id=new_event.id,
    )
