"""Restraint: when the live agent stays quiet even if help might be needed.

Checked before the decider (nothing is computed while paused, in quiet hours,
or in front of a blocked, call or full-screen app) and after it (rate limit,
minimum gap between offers, one offer per app session unless the user accepted
it, cool-down after a dismiss, an offer like one dismissed today in the same app).
The call / screen-sharing / full-screen list is ``proagent/data/live_quiet_apps.json``.

Apps blocked from the page ("Not in this app", ``POST /block-app``) are kept in the live
folder's ``blocked-apps.json`` (:data:`BLOCKED_APPS_FILE`) beside ``feedback.db``: the same
rule as ``--block-app``, read again by a running agent when the file changes and by every later
run; ``POST /unblock-app`` (undo) removes an app again.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from functools import lru_cache
from importlib import resources
from pathlib import Path

from .. import live_files
from ..errors import DataError, RunError, UsageError
from ..io import write_atomic
from ..records import Event

__all__ = [
    "BLOCKED_APPS_FILE",
    "DISMISSED_SIMILARITY",
    "PAUSE_FILE",
    "Restraint",
    "RestraintConfig",
    "block_app",
    "blocked_apps",
    "is_paused",
    "parse_quiet_hours",
    "pause",
    "quiet_app_rules",
    "resume",
    "unblock_app",
]

PAUSE_FILE = live_files.PAUSE_FILE
"""Name of the file in the live folder whose presence pauses the agent."""

BLOCKED_APPS_FILE = live_files.BLOCKED_APPS_FILE
"""Apps blocked from the page, in the live folder: ``{"apps": ["xterm", ...]}`` (0600)."""

MAX_APP_NAME = 200
"""Longest app name accepted by :func:`block_app` (characters)."""

DISMISSED_SIMILARITY = 0.92
"""An offer is held (``dismissed_similar``) when the cosine similarity of its query with the
query of an offer dismissed the same day in the same app is at least this
(multilingual-e5-small, :func:`proagent.embedding.embed`). Chosen with
``benchmarks/dismissed_similarity.py`` on the ProactiveBench development sessions: a candidate
task and its rewording at the next event ("the same offer again", 15 pairs) score p50 0.958
(p5 0.923), two different tasks of one event ("a new question about the same screen", 554
pairs) p50 0.868 (p95 0.920); at 0.92, 93% of the rewordings are held and 5% of the new
questions (e5 similarities are compressed towards 1: 0.85 would hold 75% of the new ones)."""

_BLOCK_LOCK = threading.RLock()


def blocked_apps(folder: str | Path | None) -> tuple[str, ...]:
    """The apps blocked from the page in ``folder`` (:data:`BLOCKED_APPS_FILE`), in the order
    they were blocked; none when the file is missing (or ``folder`` is ``None``).

    Raises:
        proagent.errors.DataError: the file is there but cannot be read or is not
            ``{"apps": [names]}`` (damaged, a directory, another shape): never read as empty, so
            offers do not come back in apps the person blocked and a later block does not
            overwrite the list. The message names the file and the repair.
    """
    if folder is None:
        return ()
    path = Path(folder) / BLOCKED_APPS_FILE
    with _BLOCK_LOCK:
        held = _HELD_BLOCKS.get(path)
        if held is not None:  # a list the full disk did not take: try again, and it rules meanwhile
            try:
                _write_blocked(path, held)
            except OSError:
                return tuple(held)
    return _read_blocked(path)


def _read_blocked(path: Path) -> tuple[str, ...]:
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return ()
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(path, f"cannot be read ({_why(e)}); {_BLOCKED_REPAIR}") from None
    try:
        data = json.loads(text)
    except ValueError:
        raise DataError(path, f"is not JSON; {_BLOCKED_REPAIR}") from None
    apps = data.get("apps") if isinstance(data, dict) else None
    if not isinstance(apps, list) or not all(isinstance(a, str) for a in apps):
        raise DataError(path, f'is not {{"apps": [app names]}}; {_BLOCKED_REPAIR}')
    return tuple(a for a in apps if a.strip())


_BLOCKED_REPAIR = (
    'repair it by hand to {"apps": ["app", ...]} or remove it (this unblocks every app blocked from the page)'
)


_HELD_BLOCKS: dict[Path, list[str]] = {}
"""Blocked-app lists that could not be written (disk full), by file: they rule in this process and
are written by the next :func:`blocked_apps` or :func:`block_app` that can."""


def _write_blocked(path: Path, apps: list[str]) -> None:
    """Write the list (atomically, 0600); on success nothing is held for ``path`` any more.
    Called under ``_BLOCK_LOCK``."""
    write_atomic(path, json.dumps({"apps": apps}, ensure_ascii=False) + "\n", mode=0o600)
    _HELD_BLOCKS.pop(path, None)


def _hold(path: Path, apps: list[str], e: OSError) -> RunError:
    _HELD_BLOCKS[path] = apps
    return RunError(
        f"{path} cannot be written ({e.strerror or e}): the change holds in this run and is written "
        "when space frees; free some space"
    )


def _why(e: Exception) -> str:
    if isinstance(e, IsADirectoryError):
        return "a directory"
    if isinstance(e, UnicodeDecodeError):
        return "not UTF-8"
    return (e.strerror if isinstance(e, OSError) else None) or e.__class__.__name__


def _check_app(app: object) -> str:
    if not isinstance(app, str) or not app.strip() or len(app) > MAX_APP_NAME:
        raise ValueError(f"an app name is 1 to {MAX_APP_NAME} characters")
    return app.strip()


def block_app(folder: str | Path, app: str) -> tuple[str, ...]:
    """Never offer in front of ``app`` again (whole words, case-insensitive, as ``--block-app``):
    added to ``folder``'s :data:`BLOCKED_APPS_FILE` (written atomically, 0600). Returns the
    blocked apps.

    Raises:
        ValueError: an empty name or one longer than :data:`MAX_APP_NAME`.
        proagent.errors.DataError: the file is damaged (:func:`blocked_apps`); it is left as it is.
        proagent.errors.RunError: the file cannot be written (disk full...): the new list holds in
            this process (:func:`blocked_apps` returns it) and is written when space frees.
    """
    app = _check_app(app)
    with _BLOCK_LOCK:
        apps = list(_current(folder))
        if app.lower() not in (a.lower() for a in apps):
            apps.append(app)
            path = Path(folder) / BLOCKED_APPS_FILE
            try:
                _write_blocked(path, apps)
            except OSError as e:
                raise _hold(path, apps, e) from None
        return tuple(apps)


def unblock_app(folder: str | Path, app: str) -> bool:
    """Undo :func:`block_app` for ``app`` (case-insensitive); ``True`` when it was blocked.

    Raises:
        ValueError, proagent.errors.DataError, proagent.errors.RunError: as :func:`block_app`.
    """
    app = _check_app(app)
    with _BLOCK_LOCK:
        apps = list(_current(folder))
        keep = [a for a in apps if a.lower() != app.lower()]
        if len(keep) == len(apps):
            return False
        path = Path(folder) / BLOCKED_APPS_FILE
        try:
            _write_blocked(path, keep)
        except OSError as e:
            raise _hold(path, keep, e) from None
        return True


def _current(folder: str | Path) -> tuple[str, ...]:
    """The list as it stands (a held one first), under ``_BLOCK_LOCK``."""
    held = _HELD_BLOCKS.get(Path(folder) / BLOCKED_APPS_FILE)
    if held is not None:
        return tuple(held)
    return _read_blocked(Path(folder) / BLOCKED_APPS_FILE)


def parse_quiet_hours(text: str | None) -> tuple[time, time] | None:
    """``22:00-08:00`` -> (22:00, 08:00); a range may wrap midnight. ``None``/empty -> ``None``.

    Raises:
        proagent.errors.UsageError: not ``HH:MM-HH:MM``, or start equals end (``--quiet-hours``, exit 2).
    """
    if not text:
        return None
    m = re.fullmatch(r"\s*(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})\s*", text)
    if not m or int(m.group(1)) > 23 or int(m.group(3)) > 23 or int(m.group(2)) > 59 or int(m.group(4)) > 59:
        raise UsageError("--quiet-hours", f"quiet hours {text!r}: expected HH:MM-HH:MM, e.g. 22:00-08:00")
    a, b = time(int(m.group(1)), int(m.group(2))), time(int(m.group(3)), int(m.group(4)))
    if a == b:
        raise UsageError("--quiet-hours", f"quiet hours {text!r}: start and end are equal")
    return a, b


@dataclass(frozen=True)
class _Rule:
    kind: str
    app: re.Pattern[str] | None
    title: re.Pattern[str] | None

    def matches(self, app: str, title: str) -> bool:
        return bool((self.app and self.app.search(app)) or (self.title and self.title.search(title)))


def _rule(kind: str, entry: dict) -> _Rule:
    app = entry.get("app")
    title = entry.get("title")
    return _Rule(
        kind,
        re.compile(rf"(?<!\w){re.escape(app)}(?!\w)", re.I) if app else None,
        re.compile(title, re.I) if title else None,
    )


@lru_cache(maxsize=1)
def quiet_app_rules() -> tuple[_Rule, ...]:
    """The bundled call / screen-sharing (``call``) and full-screen (``fullscreen``) rules."""
    data = json.loads(resources.files("proagent").joinpath("data", "live_quiet_apps.json").read_text("utf-8"))
    return tuple(_rule(kind, e) for kind in ("call", "fullscreen") for e in data[kind])


def pause(folder: str | Path, now: datetime | None = None) -> Path:
    """Pause the live agent writing to ``folder`` (it keeps following, offers nothing)."""
    return write_atomic(Path(folder) / PAUSE_FILE, f"{(now or datetime.now()).isoformat(timespec='seconds')}\n")


def resume(folder: str | Path) -> bool:
    """Resume; ``True`` when it was paused."""
    p = Path(folder) / PAUSE_FILE
    existed = p.exists()
    p.unlink(missing_ok=True)
    return existed


def is_paused(folder: str | Path | None) -> bool:
    """True while ``folder`` holds the pause file."""
    return folder is not None and (Path(folder) / PAUSE_FILE).exists()


@dataclass(frozen=True)
class RestraintConfig:
    """Limits on offers (issue 15, "Restraint")."""

    max_per_hour: int = 4
    """At most this many offers in any 60 minutes (0 = none at all)."""
    min_gap_seconds: float = 600.0
    """No offer sooner than this after the previous one (seconds; ``proagent live --min-gap``
    takes minutes, default 10: the issue-21 trial saw two offers 9 s apart and four within 71 s)."""
    one_per_app_session: bool = True
    """At most one offer per app session (a run of consecutive events in one application)
    unless the user accepted that offer."""
    cooldown_seconds: float = 900.0
    """No offer for this many seconds after the user dismissed one."""
    not_now_seconds: float = 300.0
    """No offer for this many seconds after the user answered "not now"."""
    quiet_hours: tuple[time, time] | None = None
    """Local time range with no offers (may wrap midnight), e.g. 22:00-08:00."""
    block_apps: tuple[str, ...] = ()
    """Extra app names (whole words, case-insensitive) never offered in front of."""
    block_titles: tuple[str, ...] = ()
    """Extra window-title regular expressions (case-insensitive) never offered in front of."""
    quiet_apps: bool = True
    """Apply the bundled call / screen-sharing / full-screen list."""


@dataclass
class Restraint:
    """The state of restraint for one live run. Times are the loop's clock (wall
    time live, the log's time in a replay)."""

    config: RestraintConfig = field(default_factory=RestraintConfig)
    folder: Path | None = None
    """Live folder (pause file); ``None`` disables pause."""
    fullscreen: Callable[[], bool | None] | None = None
    """Probe of the real screen (e.g. :func:`proagent.capture.x11_fullscreen`), live only."""
    offers: list[datetime] = field(default_factory=list)
    """Times of offers made in this run."""
    last_dismiss: datetime | None = None
    last_not_now: datetime | None = None
    session: tuple[str, datetime] | None = None
    """The app session (app, start) of the last offer made."""
    session_accepted: bool = False
    """True when the user accepted an offer made in :attr:`session`."""
    dismissed: list[tuple[str, str, datetime]] = field(default_factory=list)
    """Dismissed offers with a query: (app, query, time of the dismiss)."""
    on_warning: Callable[[str], None] | None = None
    """Where a damaged :data:`BLOCKED_APPS_FILE` found while running is reported (one line;
    default: ``Warning: ...`` on stderr). Damaged at the start, it raises instead."""

    def __post_init__(self) -> None:
        self._rules = [_rule("blocked", {"app": a}) for a in self.config.block_apps]
        self._rules += [_rule("blocked", {"title": t}) for t in self.config.block_titles]
        if self.config.quiet_apps:
            self._rules += list(quiet_app_rules())
        self._page_rules: list[_Rule] = []
        self._page_stamp: tuple[int, int] | None = (-1, -1)  # never a file's: the first call reads
        self._page_read = False
        self._page_blocked()  # a damaged file stops the run here, before any offer

    def _page_blocked(self) -> list[_Rule]:
        """The rules of :data:`BLOCKED_APPS_FILE`, read again when the file changed."""
        if self.folder is None:
            return []
        try:
            st = (Path(self.folder) / BLOCKED_APPS_FILE).stat()
            stamp = (st.st_mtime_ns, st.st_ino)
        except OSError:
            stamp = None
        if stamp != self._page_stamp or (Path(self.folder) / BLOCKED_APPS_FILE) in _HELD_BLOCKS:
            try:
                apps = blocked_apps(self.folder)
            except DataError as e:
                if not self._page_read:
                    raise  # at the start: the run stops with the file's one line
                # damaged while running: keep the apps read before (never fewer), say so once
                warn = self.on_warning or (lambda m: print(f"Warning: {m}", file=sys.stderr, flush=True))
                warn(f"{e}; the apps read before stay blocked")
                self._page_stamp = stamp
                return self._page_rules
            self._page_stamp, self._page_read = stamp, True
            self._page_rules = [_rule("blocked", {"app": a}) for a in apps]
        return self._page_rules

    def before(self, current: Event | None, now: datetime) -> str | None:
        """Why not to decide at all now (``paused``, ``quiet_hours``, ``blocked_app``,
        ``call_app``, ``fullscreen``), or ``None``. ``current`` is the foreground event."""
        if is_paused(self.folder):
            return "paused"
        q = self.config.quiet_hours
        if q is not None:
            t = now.time()
            if (q[0] <= t < q[1]) if q[0] < q[1] else (t >= q[0] or t < q[1]):
                return "quiet_hours"
        if current is not None:
            for r in [*self._rules, *self._page_blocked()]:
                if r.matches(current.app_name, current.window_title):
                    return {"blocked": "blocked_app", "call": "call_app", "fullscreen": "fullscreen"}[r.kind]
        if self.fullscreen is not None and self.fullscreen():
            return "fullscreen"
        return None

    def after(self, now: datetime, session: tuple[str, datetime] | None = None) -> str | None:
        """Why to hold back an offer the decider wants (``cooldown``, ``not_now``,
        ``max_per_hour``, ``min_gap``, ``app_session``), or ``None``. ``session`` is the
        foreground app session, ``(app, start of its first event)``."""
        if self.last_dismiss is not None and now - self.last_dismiss < timedelta(seconds=self.config.cooldown_seconds):
            return "cooldown"
        if self.last_not_now is not None and now - self.last_not_now < timedelta(seconds=self.config.not_now_seconds):
            return "not_now"
        hour_ago = now - timedelta(hours=1)
        if sum(1 for t in self.offers if hour_ago < t <= now) >= self.config.max_per_hour:
            return "max_per_hour"
        gap = timedelta(seconds=self.config.min_gap_seconds)
        if any(t <= now < t + gap for t in self.offers):
            return "min_gap"
        if (
            self.config.one_per_app_session
            and session is not None
            and session == self.session
            and not self.session_accepted
        ):
            return "app_session"
        return None

    def dismissed_offer(self, app: str, query: str, at: datetime) -> None:
        """Record that an offer in ``app`` with this query was dismissed at ``at`` (an offer
        without a query, naming only the app, is not compared: :attr:`RestraintConfig.cooldown_seconds`
        covers it)."""
        self.dismissed.append((app, query, at))

    def _dismissed_today(self, app: str, now: datetime) -> list[str]:
        return [t for a, t, at in self.dismissed if a == app and at.date() == now.date() and t.strip()]

    def dismissed_in_app(self, app: str, now: datetime) -> bool:
        """True when an offer with a query in ``app`` was dismissed on ``now``'s day (the loop's clock)."""
        return bool(self._dismissed_today(app, now))

    def dismissed_similar(self, app: str, text: str | None, now: datetime) -> bool:
        """True when an offer in ``app`` dismissed on ``now``'s day had a query whose e5 cosine
        similarity with the query ``text`` is at least :data:`DISMISSED_SIMILARITY`: the same
        context, not offered again that day."""
        old = self._dismissed_today(app, now)
        if not old or not (text or "").strip():
            return False
        from ..embedding import embed  # only when something was dismissed in this app today

        v = embed([text or "", *old])
        return bool((v[1:] @ v[0]).max() >= DISMISSED_SIMILARITY)

    def offered(self, now: datetime, session: tuple[str, datetime] | None = None) -> None:
        """Record an offer made at ``now`` in the app ``session``."""
        self.offers.append(now)
        if session is not None and session != self.session:
            self.session, self.session_accepted = session, False

    def responded(self, response: str, at: datetime) -> None:
        """Record the user's response (starts the cool-down after a dismiss)."""
        if response == "accepted":
            self.session_accepted = True
        elif response == "dismissed":
            self.last_dismiss = max(at, self.last_dismiss or at)
        elif response == "not_now":
            self.last_not_now = max(at, self.last_not_now or at)

    def load(self, offers: Iterable[datetime], responses: Sequence[tuple[str, datetime]]) -> None:
        """Restore state from ``feedback.db`` after a restart (the rate limit and
        cool-down span restarts)."""
        self.offers.extend(offers)
        for r, at in responses:
            self.responded(r, at)
