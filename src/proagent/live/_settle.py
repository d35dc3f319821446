"""When a moment has settled in front: the window the person is looking at is in the log and
its screen has stopped changing.

Two rules of issue 32, one function (:func:`settled_at`):

* **Settled in front** (item 5): a new event is decided once its first screenshot is in the
  log (and, live, its screen text: :data:`TEXT_WAIT_SECONDS`), with that event as the current
  state, so the offer and its How query are about the window in front, not the one before it.
* **A pause** (item 4, ``--settle``): no moment is decided while the focused window's screen
  changes at every capture tick (typing, scrolling). ``proagent capture`` and LifeTrace store a
  screenshot only when the screen changed (:mod:`proagent.capture._change`), so "the last
  stored screenshot of the focused screen is at least ``settle`` seconds old" is "the screen
  has not changed for ``settle`` seconds". A screenshot stored because something else on the screen
  changed (a page rewriting itself, a clock) is no change of the window in front when live can
  compare that window's pixels (``still``, issue 42 item 7).

Times are the log's (naive local time): the loop's wall clock live, the replay clock in a replay.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from ..records import Event, Screenshot

__all__ = ["SETTLE_SECONDS", "TEXT_WAIT_SECONDS", "Still", "changes", "first_shot", "has_text", "settled_at"]

SETTLE_SECONDS = 3.0
"""Default ``--settle``: seconds without a screen change before a moment is decided. Users of
proactive tools ask for a 3-5 s pause after typing before a suggestion (DESIGN.md section 9,
Copilot next-edit complaints), and deferring to such breakpoints cut frustration and load by
33-46% (OASIS/Attelia, same section); 3 s is the low end, so an offer is not late."""

TEXT_WAIT_SECONDS = 5.0
"""Live only: how long after a new event's first screenshot the loop waits for its screen
text (OCR rows) before deciding without it, seconds. ``proagent capture`` runs OCR every
2 s (``--ocr-interval``) in a child process, so text normally comes within one or two passes;
a capture without OCR (``--no-ocr``) or a screen without text pays this once per event."""


def _shots(e: Event) -> list[datetime]:
    return sorted(s.time for s in e.focused_screenshots)


def first_shot(e: Event) -> datetime | None:
    """Time of ``e``'s first screenshot of the focused screen, ``None`` without one."""
    shots = _shots(e)
    return shots[0] if shots else None


def has_text(e: Event) -> bool:
    """True when a screenshot of ``e``'s focused screen carries screen text (OCR)."""
    return any(s.ocr_text.strip() for s in e.focused_screenshots)


Still = Callable[[Screenshot, Screenshot], bool]
"""``still(a, b)``: the window in front looks the same in screenshot ``b`` as in the screenshot
``a`` before it (live: the focused window's rectangle has the same pixels,
:meth:`~proagent.live._ground.ScreenReader.same_window`)."""


def changes(e: Event, still: Still | None = None) -> list[datetime]:
    """Times of ``e``'s focused-screen screenshots that changed the window in front: the first, then
    each one ``still`` does not call the same as the one before it (all of them without ``still``).
    A screen is stored when any of it changed (a clock, a page rewriting itself beside the window
    in front), so without ``still`` a busy window elsewhere on the screen never lets a moment settle."""
    shots = sorted(e.focused_screenshots, key=lambda s: s.time)
    if still is None:
        return [s.time for s in shots]
    return [s.time for k, s in enumerate(shots) if k == 0 or not still(shots[k - 1], s)]


def settled_at(
    e: Event, t_from: datetime, t_until: datetime | None, settle_seconds: float, still: Still | None = None
) -> datetime | None:
    """The earliest time ``T >= t_from`` (and ``<= t_until`` when given) at which ``e`` has a
    screenshot of its focused screen taken at or before ``T`` and no change of the window in
    front in the ``settle_seconds`` before ``T`` (the screen paused), or ``None`` when there is
    no such time within the bound. ``still`` tells a screenshot that changed only outside the
    window in front from a change (:func:`changes`); without it every stored screenshot is one.

    An event from a source that records no screen (``screen_recorded`` false: ActivityWatch)
    is settled at ``t_from``. ``settle_seconds`` 0: the first screenshot is enough.

    Examples (seconds after the event start, ``settle_seconds=3``): shots at 1 -> T = 4;
    shots at 1, 2, 3 (typing) and 9 -> T = 6; shots at 1, 2, ... every second until the next
    event starts -> ``None`` (with ``still`` saying shots 2, 3, ... show the window as at 1: T = 4).
    """
    if not e.screen_recorded:
        return t_from
    shots: Sequence[datetime] = changes(e, still)
    gap = timedelta(seconds=max(0.0, settle_seconds))
    for k, s in enumerate(shots):
        nxt = shots[k + 1] if k + 1 < len(shots) else None
        if nxt is not None and nxt <= t_from:
            continue  # not the last shot before t_from
        t = max(t_from, s + gap)
        if nxt is not None and nxt <= t:
            continue  # the screen changed again before the pause was complete
        if t_until is not None and t > t_until:
            return None
        return t
    return None
