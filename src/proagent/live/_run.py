"""Running the live agent: replay of a recorded log, or following a growing one."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from .. import live_files
from ..bench.progress import duration_text
from ..bench.samples import SampleConfig
from ..capture import started_by, x11_fullscreen
from ..errors import DataError, ProagentError, RunError
from ..io import to_jsonable, write_atomic, write_json_atomic
from ._activity_follow import open_follower, watched_log
from ._agent import OFFER_WAIT_SECONDS, LiveAgent, When
from ._feedback import FeedbackStore
from ._ground import ScreenReader
from ._help import LiveHelp
from ._notify import DesktopNotifier, Notifier, NotifyContext, PageNotifier, open_notifiers
from ._page import OfferPage
from ._restraint import Restraint, RestraintConfig
from ._settle import SETTLE_SECONDS
from ._sources import REPLAY_SKIP_GAP_SECONDS, LifeTraceFollower, Moment, ReplayClock, WallClock, replay_moments
from .records import DecisionSummary, Latency, LiveDecision

__all__ = [
    "LiveOptions",
    "ReplayProgress",
    "RunSummary",
    "run_replay",
    "run_watch",
    "start_capture",
    "summarise",
    "warm_how",
]


@dataclass(frozen=True)
class LiveOptions:
    """Everything a live or replay run is configured with (recorded in ``run.json``)."""

    window_seconds: float = 300.0
    """Context window of each moment (seconds; ProAgentBench default 5 min)."""
    every_seconds: float = 30.0
    """A moment every this many seconds within a long event (0: only at new events)."""
    notify: tuple[str, ...] = ("terminal",)
    """Notifiers: ``terminal``, ``desktop``, ``page`` (``none``: record only)."""
    port: int = 0
    """Local page port on 127.0.0.1 (0: a free one)."""
    restraint: RestraintConfig = field(default_factory=RestraintConfig)
    """Offer limits."""
    ignore_after_seconds: float = 600.0
    """An offer unanswered this long counts as ignored (loop clock seconds)."""
    decider: str = ""
    """What decides When (folder or ``scripted``), for the record."""
    model: str = ""
    """The How model (empty: none), for the record."""
    settle_seconds: float | None = SETTLE_SECONDS
    """Decide a moment once its window settled in front and its screen paused this long
    (seconds, ``--settle``; :mod:`proagent.live._settle`); ``None``: the benchmark's candidate
    moments (each event at its start, the event before it as current state)."""
    ask_rate: int | None = 0
    """Sparse questions: at most this many a day at quiet moments the decider is unsure of
    (``--ask-rate``, :mod:`proagent.live._ask`); 0: none; ``None``: the default (3 a day for the
    folder's first 7 days)."""


@dataclass
class RunSummary:
    """What a run did, for the command's last lines."""

    decisions: list[LiveDecision]
    folder: Path
    page_url: str | None = None
    interrupted: bool = False
    """The run was stopped (Ctrl-C) before its end: the summary is of what it decided until then."""

    @property
    def counts(self) -> Counter[str]:
        return Counter(d.outcome for d in self.decisions)


def summarise(decisions: Sequence[LiveDecision]) -> DecisionSummary:
    """Counts by outcome and reason, and latency percentiles (seconds) of decisions and offers."""
    import numpy as np

    dec = [d.decide_seconds for d in decisions if d.decide_seconds is not None]
    how = [d.how_seconds for d in decisions if d.how_seconds is not None]
    offer = [
        d.offer_seconds if d.offer_seconds is not None else d.decide_seconds + d.how_seconds
        for d in decisions
        if d.outcome == "offer"
        and (d.offer_seconds is not None or (d.decide_seconds is not None and d.how_seconds is not None))
    ]

    def pct(xs: list[float]) -> Latency | None:
        return Latency(float(np.percentile(xs, 50)), float(np.percentile(xs, 95)), len(xs)) if xs else None

    return DecisionSummary(
        moments=len(decisions),
        outcomes=dict(Counter(d.outcome for d in decisions)),
        reasons=dict(Counter(d.reason for d in decisions if d.reason)),
        decide_seconds=pct(dec),
        how_seconds=pct(how),
        offer_seconds=pct(offer),
    )


@dataclass(frozen=True)
class ReplayProgress:
    """How far a replay got (``run_replay``'s ``on_progress``, about once a second)."""

    done: int
    """Moments decided, those of an earlier run of the folder included."""
    total: int
    """Moments of the whole log."""
    clock: datetime | None
    """The replay clock (log time; ``None`` before the first moment)."""
    left_seconds: float | None
    """Wall seconds still to go: the log time left to wait out at this speed (gaps longer than
    :data:`~proagent.live._sources.REPLAY_SKIP_GAP_SECONDS` count 0) plus the mean wall time a
    moment took to decide so far, times the moments left; ``None`` until one moment was decided."""


class _Played:
    """The moments of a replay as the agent's loop takes them: says each gap it skips, keeps the
    count and the estimate for :class:`ReplayProgress`."""

    def __init__(
        self,
        moments: Sequence[Moment],
        done: int,
        total: int,
        clock: ReplayClock,
        on_status: Callable[[str], None] | None,
    ) -> None:
        self.moments, self.done, self.total, self.clock, self.on_status = moments, done, total, clock, on_status
        # log seconds still to wait after each moment, gaps beyond the skip bound counted 0
        waits = [0.0] * (len(moments) + 1)
        for i in range(len(moments) - 1, 0, -1):
            gap = (moments[i].t - moments[i - 1].t).total_seconds()
            waits[i - 1] = waits[i] + (gap if 0 < gap <= REPLAY_SKIP_GAP_SECONDS else 0.0)
        self._waits = waits
        self._index = 0
        self._decide_wall = 0.0
        self._decided = 0
        self._lock = threading.Lock()

    def __iter__(self):  # noqa: ANN204
        clock = self.clock
        for i, m in enumerate(self.moments):
            if clock.speed and i:
                ahead = (m.t - clock.now()).total_seconds()
                if ahead > REPLAY_SKIP_GAP_SECONDS and (skipped := clock.skip_to(m.t)):
                    if self.on_status is not None:
                        self.on_status(
                            f"skipping a {duration_text(skipped)} gap in the log ({m.t - timedelta(seconds=skipped):%Y-%m-%d %H:%M}"
                            f" -> {m.t:%Y-%m-%d %H:%M}) instead of waiting {duration_text(skipped / clock.speed)}"
                            f" (gaps over {REPLAY_SKIP_GAP_SECONDS / 60:g} min are not waited out)"
                        )
            wait = max(0.0, (m.t - clock.now()).total_seconds()) / clock.speed if clock.speed else 0.0
            t0 = time.monotonic()
            with self._lock:
                self._index = i
            yield m
            with self._lock:  # back here once the loop waited for m and decided it
                self._decide_wall += max(0.0, time.monotonic() - t0 - wait)
                self._decided += 1
                self.done += 1

    def progress(self) -> ReplayProgress:
        with self._lock:
            started = self.clock._origin is not None  # noqa: SLF001 (the clock stands still before the first moment)
            left = None
            if self._decided and self.moments:
                i = min(self._index, len(self.moments) - 1)  # the moment being waited for or decided
                wait = (
                    max(0.0, (self.moments[i].t - self.clock.now()).total_seconds()) if started else 0.0
                ) + self._waits[i]
                rest = len(self.moments) - self._decided
                left = (wait / self.clock.speed if self.clock.speed else 0.0) + self._decide_wall / self._decided * rest
            return ReplayProgress(self.done, self.total, self.clock.now() if started else None, left)


def _notifiers(
    names: Sequence[str],
    store: FeedbackStore,
    now: Callable,
    *,
    port: int,
    answers: Any = None,
    out: Any = None,
    help: Any = None,
) -> tuple[list[Notifier], OfferPage | None]:
    notifiers = open_notifiers(names, NotifyContext(store, now, port=port, answers=answers, out=out, help=help))
    return notifiers, next((n.page for n in notifiers if isinstance(n, PageNotifier)), None)


NOT_IDENTITY = ("speed",)
"""Keys of an older ``run.json`` that are not part of a run's identity: a replay resumed at
another ``--speed`` is the same run (the speed changes when moments are decided, not what)."""


def warm_how(how: Any, model: str) -> float:
    """:meth:`HowModel.warm <proagent.live.HowModel.warm>` with its failure as one line: a model
    that cannot be loaded or reached (a server at a closed port, a refused key) stops the run
    before its first moment. Returns the seconds warming took.

    Raises:
        proagent.errors.RunError: naming ``--model`` and the provider's error (one line).
    """
    from ..bench.running import error_line

    try:
        return float(how.warm())
    except ProagentError:  # a model API's failure, already one line naming the endpoint and its fix
        how.close()
        raise
    except Exception as e:  # noqa: BLE001 - any other provider's failure, said in one line
        how.close()
        raise RunError(
            f"--model {model}: the How model cannot be reached or loaded ({error_line(e)}); "
            "start its server or choose another --model (--model none: offers without a query)"
        ) from None


def _flat(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with each nested object's keys spelt ``outer.inner`` (one level), so a refusal names the option."""
    out: dict[str, Any] = {}
    for k, v in record.items():
        if isinstance(v, dict) and v:
            out.update({f"{k}.{ik}": iv for ik, iv in v.items()})
        else:
            out[k] = v
    return out


def _short(value: Any, limit: int = 80) -> str:
    """A recorded option's value for one line: JSON, cut in the middle to ``limit`` characters (the
    end of a decider's name says its learning method)."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    half = (limit - 3) // 2
    return text if len(text) <= limit else text[:half] + "..." + text[-half:]


def _check_run(folder: Path, record: dict[str, Any]) -> None:
    p = folder / live_files.RUN_FILE
    if p.exists() or p.is_symlink():
        repair = "it records the options of the run in this folder: restore it, or choose a new --out"
        try:
            data = json.loads(p.read_text("utf-8"))
        except IsADirectoryError:
            raise DataError(p, f"is a directory; {repair}") from None
        except (OSError, UnicodeDecodeError, ValueError) as e:
            raise DataError(p, f"cannot be read ({getattr(e, 'strerror', None) or 'not JSON'}); {repair}") from None
        if not isinstance(data, dict):
            raise DataError(p, f"is not a JSON object; {repair}")
        old = {k: v for k, v in data.items() if k not in NOT_IDENTITY}
        if old != record:
            was, now = _flat(old), _flat(record)
            diff = sorted(k for k in set(was) | set(now) if was.get(k) != now.get(k))
            said = "; ".join(f"{k}: {_short(was.get(k))} there, {_short(now.get(k))} now" for k in diff)
            raise DataError(
                folder,
                f"holds a run with other options ({said}); give that run's options to resume it, or choose a new --out",
            )
    else:
        write_json_atomic(p, record)


def run_replay(
    data: str | Path,
    folder: str | Path,
    decider: When,
    options: LiveOptions,
    *,
    speed: float = 60.0,
    how: Callable | None = None,
    answers: Any = None,
    out: Any = None,
    on_decision: Callable[[LiveDecision], None] | None = None,
    on_page: Callable[[str], None] | None = None,
    stop: threading.Event | None = None,
    before_write: Callable[[], None] | None = None,
    help_model: Any = None,
    send_screen: str | None = None,
    on_progress: Callable[[ReplayProgress], None] | None = None,
    on_status: Callable[[str], None] | None = None,
    progress_seconds: float = 1.0,
) -> RunSummary:
    """Play a recorded log (ProactiveBench sessions, LifeTrace database or folder)
    through the live loop at ``speed`` times real time (0: as fast as possible),
    writing every decision, its latency and the notification it would show to
    ``feedback.db`` and, as it goes, ``decisions.jsonl`` in ``folder`` (a line per decision,
    the whole file rewritten from ``feedback.db`` at the start and the end, where answers have
    labelled some). A gap between moments longer than
    :data:`~proagent.live._sources.REPLAY_SKIP_GAP_SECONDS` of log time is not waited out: the
    clock jumps over it and ``on_status`` gets a line saying so. ``on_progress`` gets a
    :class:`ReplayProgress` every ``progress_seconds`` of wall time and once at the end.

    Re-running into the same folder resumes after the last moment decided (at any ``--speed``:
    the speed is not part of the run's identity); a folder holding a run with other options is
    refused. ``before_write`` is called once the
    data was read, before ``folder`` is created (a command checks and locks its folder there).
    ``help_model`` (:func:`~proagent.live.make_help_model`) answers accepted offers (:class:`~proagent.live.LiveHelp`,
    ``send_screen``: ``never|redacted|raw``, default by the model); ``None``: an accept is only stored.

    Raises:
        DataError: unreadable data, or ``folder`` holds another run.
        ValueError: bad options.
    """
    folder = Path(folder)
    record = {"mode": "replay", "data": str(Path(data).resolve()), **to_jsonable(_opts(options))}
    moments = list(replay_moments(data, every_seconds=options.every_seconds, settle_seconds=options.settle_seconds))
    if not moments:
        raise DataError(data, "no events to replay")
    if before_write is not None:
        before_write()
    folder.mkdir(parents=True, exist_ok=True)  # only once the data could be read
    _check_run(folder, record)
    store = FeedbackStore(folder)
    clock = ReplayClock(speed)
    helper = LiveHelp(store, help_model, clock.now, send_screen=send_screen)
    notifiers, page = _notifiers(
        options.notify, store, clock.now, port=options.port, answers=answers, out=out, help=helper
    )
    if page is not None and on_page is not None:
        on_page(page.url)
    if page is not None:
        write_atomic(folder / live_files.PAGE_URL_FILE, page.url + "\n", mode=0o600)
    journal = _DecisionsFile(folder / live_files.DECISIONS_FILE, store)
    ticker = None
    try:
        journal.rewrite()  # what an earlier, interrupted run of the folder decided
        agent = LiveAgent(
            folder,
            decider,
            how=how,
            notifiers=[*notifiers, helper],  # the helper reads offers ahead
            restraint=Restraint(options.restraint, folder=folder),
            clock=clock,
            config=SampleConfig(window_seconds=options.window_seconds),
            ignore_after_seconds=options.ignore_after_seconds,
            feedback=store,
            on_decision=journal.chain(on_decision),
            ask_rate=options.ask_rate,
        )
        done = journal.count
        played = _Played(moments[done:], done, len(moments), clock, on_status)
        if on_progress is not None:
            ticker = _Ticker(lambda: on_progress(played.progress()), progress_seconds)
        agent.replay(iter(played), clock, stop)
        if ticker is not None:
            ticker.close()
            on_progress(played.progress())
        interrupted = stop is not None and stop.is_set()
        journal.rewrite()
        for n in notifiers:
            if isinstance(n, DesktopNotifier):
                n.wait(5.0)
        return RunSummary(agent.decisions, folder, page.url if page else None, interrupted)
    finally:
        if ticker is not None:
            ticker.close()
        journal.close()
        helper.close()
        for n in notifiers:
            n.close()
        if page is not None:
            page.close()
        store.close()


class _DecisionsFile:
    """``decisions.jsonl`` of a replay, appended a line per decision as the loop records it (so
    an interrupted or killed replay keeps what it decided) and rewritten whole from
    ``feedback.db`` by :meth:`rewrite` (0600, as every file that may hold screen text)."""

    def __init__(self, path: Path, store: FeedbackStore) -> None:
        self.path, self.store = path, store
        self.count = 0
        self._last_id = 0
        self._file: Any = None
        self._lock = threading.Lock()

    def rewrite(self) -> None:
        with self._lock:
            rows = self.store.decisions()
            if self._file is not None:
                self._file.close()
                self._file = None
            write_atomic(self.path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), mode=0o600)
            self.count = len(rows)
            self._last_id = max((int(r["id"]) for r in rows), default=0)

    def chain(self, then: Callable[[LiveDecision], None] | None) -> Callable[[LiveDecision], None]:
        def on_decision(d: LiveDecision) -> None:
            self.append()
            if then is not None:
                then(d)

        return on_decision

    def append(self) -> None:
        with self._lock:
            rows = self.store.decisions(after_id=self._last_id)
            if not rows:
                return
            if self._file is None:
                self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (kept open for the run)
            self._file.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
            self._file.flush()
            self.count += len(rows)
            self._last_id = int(rows[-1]["id"])

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


class _Ticker:
    """Calls ``fn`` every ``seconds`` in a daemon thread until :meth:`close`."""

    def __init__(self, fn: Callable[[], None], seconds: float) -> None:
        self._stop = threading.Event()
        self._fn, self._seconds = fn, seconds
        self._thread = threading.Thread(target=self._run, name="replay-progress", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._seconds):
            self._fn()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5)


def _opts(o: LiveOptions) -> dict[str, Any]:
    from dataclasses import asdict

    d = asdict(o)
    d.pop("port")
    if not d.get("ask_rate"):
        d.pop("ask_rate", None)  # a folder written before --ask-rate resumes as it was
    q = d["restraint"].get("quiet_hours")
    if q:
        d["restraint"]["quiet_hours"] = [t.isoformat() for t in q]
    return d


def run_watch(
    db: str | Path,
    folder: str | Path,
    decider: When,
    options: LiveOptions,
    *,
    how: Callable | None = None,
    poll_seconds: float = 0.05,
    stop: threading.Event | None = None,
    duration: float | None = None,
    max_moments: int | None = None,
    answers: Any = None,
    out: Any = None,
    on_decision: Callable[[LiveDecision], None] | None = None,
    on_page: Callable[[str], None] | None = None,
    user: str | None = None,
    stale_after_seconds: float | None = 300.0,
    offer_wait_seconds: float | None = OFFER_WAIT_SECONDS,
    on_status: Callable[[str], None] | None = None,
    help_model: Any = None,
    send_screen: str | None = None,
    screen_ocr: bool = True,
) -> RunSummary:
    """Follow a growing LifeTrace database (a capture folder or ``.db``), or an ActivityWatch or
    screenpipe database (:mod:`._activity_follow`), and decide
    every new event row (and every ``every_seconds`` within a long event) until
    ``stop`` is set, ``duration`` seconds passed or ``max_moments`` moments were
    decided. Restarting resumes after the last event row decided (rows written
    meanwhile are all decided; offers for moments older than
    ``stale_after_seconds`` are held with reason ``stale``; ``offer_wait_seconds``: see
    :class:`~proagent.live.LiveAgent`; ``on_status``: one line when the log stops growing; ``help_model``,
    ``send_screen``: as :func:`run_replay`). In a LifeTrace log, the help at Accept and each How call
    read the window in front again (:class:`~proagent.live._ground.ScreenReader`; ``screen_ocr``:
    live reads a screenshot capture has not read yet itself), and the help goes first: How calls
    wait while an answer is written (:class:`~proagent.live.LiveAgent`'s ``help``).
    A moment is decided once its window settled in front (``options.settle_seconds``). The
    summary's ``interrupted`` is true when ``stop`` ended it (not ``duration`` or ``max_moments``).

    Raises:
        DataError: missing, foreign or unreadable database.
    """
    folder = Path(folder)
    watched_log(db)  # a missing, foreign or unreadable database is refused before feedback.db is made
    folder.mkdir(parents=True, exist_ok=True)
    store = FeedbackStore(folder)
    follower = open_follower(db, last_id=store.last_row_id(), window_seconds=options.window_seconds, user=user)
    clock = WallClock()
    stop = stop or threading.Event()
    timed_out = threading.Event()  # a stop by the timer is the end of --duration, not an interruption
    timer = threading.Timer(duration, lambda: (timed_out.set(), stop.set())) if duration else None
    screen = None  # reads the window in front: the help, the How call and the settle pause (its pixels)
    reads = help_model is not None or how is not None
    if isinstance(follower, LifeTraceFollower):
        screen = ScreenReader(follower.path, ocr=screen_ocr and reads)
        if reads:
            threading.Thread(target=screen.warm, daemon=True, name="proagent-ocr-warm").start()
    helper = LiveHelp(store, help_model, clock.now, send_screen=send_screen, screen=screen if reads else None)
    notifiers, page = _notifiers(
        options.notify, store, clock.now, port=options.port, answers=answers, out=out, help=helper
    )
    try:
        if page is not None:
            write_atomic(folder / live_files.PAGE_URL_FILE, page.url + "\n", mode=0o600)
            if on_page is not None:
                on_page(page.url)
        agent = LiveAgent(
            folder,
            decider,
            how=how,
            notifiers=[*notifiers, helper],  # the helper reads offers ahead
            restraint=Restraint(options.restraint, folder=folder, fullscreen=x11_fullscreen),
            clock=clock,
            config=SampleConfig(window_seconds=options.window_seconds),
            ignore_after_seconds=options.ignore_after_seconds,
            feedback=store,
            on_decision=on_decision,
            stale_after_seconds=stale_after_seconds,
            offer_wait_seconds=offer_wait_seconds,
            settle_seconds=options.settle_seconds,
            on_status=on_status,
            ask_rate=options.ask_rate,
            help=helper if help_model is not None else None,
            ground=(lambda s: screen.ground(s)[0]) if screen is not None and how is not None else None,
            still=screen.same_window if screen is not None else None,
        )
        if timer is not None:
            timer.daemon = True
            timer.start()
        agent.follow(
            follower, every_seconds=options.every_seconds, poll_seconds=poll_seconds, stop=stop, max_moments=max_moments
        )
        return RunSummary(
            agent.decisions, folder, page.url if page else None, interrupted=stop.is_set() and not timed_out.is_set()
        )
    finally:
        if timer is not None:
            timer.cancel()
        helper.close()
        for n in notifiers:
            n.close()
        if page is not None:
            page.close()
        follower.close()
        store.close()


def start_capture(folder: Path, extra: Sequence[str] = (), wait: float = 30.0) -> subprocess.Popen:
    """Start ``proagent capture --out folder`` in a child process and wait for its database.

    Until the database is there and the child holds the folder (its pid in ``capture.pid``, so a
    folder continued from an earlier run, whose database is there from the start, counts only
    once this capture took it) the child's stderr is held back: a capture that refuses to start
    (a bad ``--capture-option``, a folder in use) becomes one error naming its reason; afterwards
    its stderr goes on to this process's.

    Raises:
        DataError: the capture exited, or did not take the folder and write its database within
            ``wait`` seconds.
    """
    proc = subprocess.Popen(
        [sys.executable, "-c", "from proagent.cli import main; main()", "capture", "--out", str(folder), *extra],
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
    )
    held: list[str] = []
    started = threading.Event()
    lock = threading.Lock()

    def relay() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            with lock:
                if started.is_set():
                    sys.stderr.write(line)
                    sys.stderr.flush()
                else:
                    held.append(line)

    reader = threading.Thread(target=relay, daemon=True, name="proagent-capture-stderr")
    reader.start()
    end = time.monotonic() + wait
    db = folder / "lifetrace.db"
    while not (db.exists() and started_by(folder, proc.pid)):
        if proc.poll() is not None:
            reader.join(2.0)
            with lock:
                why = [ln.strip()[len("Error:") :].strip() for ln in held if ln.startswith("Error:")]
            raise DataError(
                folder,
                f"proagent capture exited (code {proc.returncode}) before it started recording"
                + (f": {why[-1]}" if why else ""),
            )
        if time.monotonic() > end:
            proc.terminate()
            raise DataError(folder, f"proagent capture did not start recording within {wait:g} s")
        time.sleep(0.2)
    with lock:
        started.set()
        sys.stderr.write("".join(held))
        sys.stderr.flush()
    return proc
