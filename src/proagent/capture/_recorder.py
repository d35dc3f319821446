"""The capture loop: probes -> events -> storage, once per tick (1 s by default).

Per tick: read the control file (pause/resume/stop); read the foreground window; if it is
excluded, grab nothing; else grab every monitor, read the foreground window again (one that changed
during the grab stores nothing this tick: the images may show either window) and take each monitor's
:class:`~._change.Frame` (pHash, 64 bits, and a half-size grey image). :class:`Segmenter` decides whether the open event goes on, ends, or a new one starts. A
screenshot is stored when it is the first of its screen in the event, or it is not a duplicate of
the last stored one of that screen: its pHash is more than ``dedup_distance`` bits (Hamming) away
(LifeTrace: <= 5 is a duplicate) or its text changed (:func:`~._change.is_duplicate`). The open event's heartbeat (``updated_at``) is written every tick. OCR runs in a
separate process (:mod:`proagent.capture._ocr`) at a bounded rate; at stop it is given
``ocr_finish`` seconds to read its backlog at full speed, and the stop line says how many
screenshots stay unread (:func:`_finish_ocr`). Events split on the app, and by default on a
browser's page moving to another site or page kind, an editor's file or terminal's title changing
beyond its noise, or another window of an editor or terminal (:class:`Segmenter`,
:mod:`proagent.pages`, :mod:`proagent.documents`).

Idle (DESIGN: LifeTrace has no idle rule; the issue asks for one): the user is idle when, for
``idle`` seconds, there was no keyboard/mouse input (when the platform tells it), the screen did
not change (:func:`~._change.is_duplicate` against the previous tick on every screen) and the foreground window did not
change; idle closes the open event at the tick idleness is seen, and activity opens a new one.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from ..errors import RunError, UsageError
from ..pages import in_app_key, keeps, moves, splits_in_app
from ..vault import create_vault, vault_of
from ._change import Frame, frame, is_duplicate
from ._control import ControlFile, FolderLock, write_status
from ._exclude import Exclusions
from ._platform import DisplayGone
from ._probe import CaptureError, ScreenSource, WindowInfo, WindowProbe, open_screen_source, open_window_probe
from ._regions import mask_windows, window_region
from ._store import EXCLUDED_APP, FINISH_SIGNAL, Store, pending_count

__all__ = ["CaptureConfig", "CaptureStats", "Segmenter", "record"]

DEDUP_DISTANCE = 5
"""pHash Hamming distance at or below which two screenshots are duplicates (LifeTrace's rule)."""
PNG_LEVEL = 1
"""zlib level of stored PNGs: 1 is several times faster than the default 6 for ~20% more bytes
(see benchmarks/capture.py)."""
WEBP_QUALITY = 80
"""Lossy WebP quality of stored WebP screenshots."""
MAX_INTERVAL = 3600.0
"""Longest ``--interval`` / ``--ocr-interval`` accepted, in seconds (one capture an hour; the loop
wakes every 0.25 s whatever the interval, so ``--duration`` and stop are honoured within a second)."""


@dataclass(frozen=True)
class CaptureConfig:
    """What and how to capture."""

    out: Path
    """Capture folder: ``lifetrace.db`` and ``screenshots/`` go there (created when missing; an
    existing capture folder is continued)."""
    interval: float = 1.0
    """Seconds between ticks (ProAgentBench: 1 Hz)."""
    split_on_title: bool = False
    """Also start a new event when the window title changes (LifeTrace: app changes only)."""
    split_on_tab: bool = True
    """Also start a new event when what one app shows changes (``--split-in-app``, formerly
    ``--split-on-tab``): a browser's page moves to another site or page kind (the tab rule,
    :mod:`proagent.pages`: mail -> an LLM chat in one Chromium window), an editor's file or a
    terminal's title changes beyond its noise, or another window of the editor or terminal comes
    to the front (the document rule, :mod:`proagent.documents`); ``False``: LifeTrace's app changes
    only. ``split_on_title`` splits on every title change anyway."""
    idle: float = 300.0
    """Seconds without input, screen change or window change after which the open event is closed."""
    image_format: Literal["png", "webp"] = "png"
    """Stored image format (PNG lossless; WebP lossy, smaller)."""
    dedup_distance: int = DEDUP_DISTANCE
    """pHash Hamming distance at or below which a screenshot duplicates the last stored one."""
    ocr: bool = True
    """Run the background OCR worker."""
    ocr_interval: float = 2.0
    """At most one OCR started every this many seconds."""
    max_days: float | None = None
    """Remove screenshot files older than this many days (``None``: keep)."""
    max_gb: float | None = None
    """Keep screenshot files under this many GB (10^9 bytes), oldest removed first (``None``: no cap)."""
    exclude_apps: tuple[str, ...] = ()
    """Application names never recorded (added to the default list)."""
    exclude_titles: tuple[str, ...] = ()
    """Title regexes never recorded (added to the default list)."""
    default_exclusions: bool = True
    """Apply the shipped list of private/incognito windows and password managers."""
    duration: float | None = None
    """Stop by itself after this many seconds (``None``: until stopped)."""
    encrypt: bool = False
    """Make a new folder an encrypted capture (:mod:`proagent.vault`); an encrypted folder is
    continued encrypted either way."""
    ocr_finish: float = 60.0
    """At stop, seconds the OCR worker is given to read the screenshots it has not reached (at
    full speed, no ``ocr_interval``), with a progress line every 5 s; 0: stop at once. What is
    still unread is named in the stop line: ``proagent curate`` reads each of those screenshots
    with a whole-screen OCR pass of its own."""
    ocr_region: Literal["window", "screen"] = "window"
    """What the OCR worker reads of a stored screenshot: ``window``, the focused window's rectangle
    where the platform tells it (X11, sway; the whole screen elsewhere and on the other screens);
    ``screen``, the whole screen (the text of every window shown, at several times the CPU)."""
    text_change: bool = True
    """Also compare half-size grey images, so that text changes are stored (``False``:
    LifeTrace's pHash rule alone, for comparison in ``benchmarks/desktop_day.py``)."""

    def __post_init__(self) -> None:
        for name, value in (
            ("--interval", self.interval),
            ("--ocr-interval", self.ocr_interval),
            ("--max-days", self.max_days),
            ("--max-gb", self.max_gb),
            ("--duration", self.duration),
        ):
            if value is not None and not math.isfinite(value):
                raise UsageError(name, f"must be a finite number (got {value})")
        if not 0 < self.interval <= MAX_INTERVAL:
            raise UsageError("--interval", f"must be > 0 and at most {MAX_INTERVAL:g} seconds (got {self.interval:g})")
        if not self.idle > 0:
            raise UsageError("--idle", f"must be > 0 seconds (got {self.idle})")
        if not 0 <= self.dedup_distance <= 64:
            raise UsageError("--dedup-distance", "must be within 0..64 bits")
        if self.max_days is not None and not self.max_days > 0:
            raise UsageError("--max-days", f"must be > 0 (got {self.max_days})")
        if self.max_gb is not None and not self.max_gb > 0:
            raise UsageError("--max-gb", f"must be > 0 (got {self.max_gb})")
        if not (math.isfinite(self.ocr_finish) and 0 <= self.ocr_finish <= MAX_INTERVAL):
            raise UsageError("--ocr-finish", f"must be within 0..{MAX_INTERVAL:g} seconds (got {self.ocr_finish:g})")
        if not 0 < self.ocr_interval <= MAX_INTERVAL:
            raise UsageError(
                "--ocr-interval", f"must be > 0 and at most {MAX_INTERVAL:g} seconds (got {self.ocr_interval:g})"
            )
        if self.ocr_region not in ("window", "screen"):
            raise UsageError("--ocr-region", f"must be window or screen (got {self.ocr_region!r})")
        if self.max_gb is not None and self.max_gb * 1e9 >= 2**62:
            raise UsageError("--max-gb", f"is too large (got {self.max_gb:g})")


@dataclass
class CaptureStats:
    """Counts of one capture run."""

    ticks: int = 0
    """Ticks run (not counting paused ones)."""
    grabs: int = 0
    """Monitor images grabbed."""
    stored: int = 0
    """Screenshots stored."""
    duplicates: int = 0
    """Grabbed images not stored because they duplicated the last stored one."""
    excluded_ticks: int = 0
    """Ticks whose foreground window was excluded (nothing grabbed)."""
    switched_ticks: int = 0
    """Ticks whose foreground window changed while the screens were grabbed (nothing stored)."""
    events: int = 0
    """Events opened."""
    recovered: int = 0
    """Events a crash had left open, closed at their last heartbeat at start."""
    removed: int = 0
    """Screenshot files removed by retention."""
    bytes_stored: int = 0
    """Bytes of image files written."""
    late_ticks: int = 0
    """Ticks skipped because the loop fell behind schedule."""
    ocr_finished: int = 0
    """Screenshots the OCR worker read while capture stopped (:attr:`CaptureConfig.ocr_finish`)."""
    ocr_unread: int = 0
    """Screenshots left without OCR when capture stopped (curate reads them itself)."""
    masked: int = 0
    """Screenshots in which an excluded window's pixels were filled (:func:`~._regions.mask_windows`)."""
    screens: list[tuple[int, int]] = field(default_factory=list)
    """(width, height) of each monitor at the first grab."""


Key = tuple[Any, ...]


class Segmenter:
    """Event boundaries: a new event when the key changes: the app; with ``split_on_title`` the
    app and title; with ``split_on_tab`` (the default; ``--split-in-app``) what the app shows too,
    as :func:`proagent.pages.moves` says: a browser's page (another site or page kind; a page whose
    site the title does not tell stays in the open event), an editor's file or a terminal's title
    without its noise, or another window of the editor or terminal (its window id). No event while
    idle, paused or stopped (key ``None``)."""

    def __init__(self, split_on_title: bool = False, split_on_tab: bool = True) -> None:
        self.split_on_title = split_on_title
        self.split_on_tab = split_on_tab
        self.current: Key | None = None

    def key(self, win: WindowInfo | None, *, excluded: bool = False) -> Key | None:
        """The segmentation key of ``win`` (``None``: no event)."""
        if win is None:
            return None
        if excluded:
            return (EXCLUDED_APP,)
        if self.split_on_title:
            return (win.app_name, win.window_title)
        if self.split_on_tab and splits_in_app(win.app_name):
            return (win.app_name, in_app_key(win.app_name, win.window_title, window=win.window_id))
        return (win.app_name,)

    def step(self, key: Key | None) -> tuple[bool, bool]:
        """Feed this tick's key; returns ``(close_open_event, open_new_event)``."""
        prev, self.current = self.current, key
        if key == prev:
            return False, False
        if (
            prev is not None
            and key is not None
            and len(prev) == len(key) == 2
            and prev[0] == key[0]
            and not self.split_on_title
            and not moves(prev[1], key[1])
        ):
            self.current = (prev[0], keeps(prev[1], key[1]))  # the event keeps its first known page
            return False, False
        return prev is not None, key is not None


def _encode(img: Any, fmt: str) -> bytes:
    buf = io.BytesIO()
    if fmt == "webp":
        img.save(buf, format="WEBP", quality=WEBP_QUALITY, method=4)
    else:
        img.save(buf, format="PNG", compress_level=PNG_LEVEL)
    return buf.getvalue()


def _start_ocr(db: Path, interval: float) -> subprocess.Popen[bytes]:
    cmd = [
        sys.executable,
        "-m",
        "proagent.capture._ocr",
        str(db),
        "--min-interval",
        str(interval),
        "--parent",
        str(os.getpid()),
    ]
    # its own process group: a terminal's Ctrl-C goes to the recorder, which stops the worker
    # (_stop_ocr, _finish_ocr); one that came while the worker was still importing killed it
    # with a KeyboardInterrupt traceback, before it could ignore SIGINT
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, process_group=0)


def _stop_ocr(proc: subprocess.Popen[bytes] | None) -> None:
    """SIGTERM (the worker exits after its current OCR), then SIGKILL after 2 s: an OCR takes
    seconds, and killing it mid-transaction loses only that OCR (SQLite rolls it back)."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(2)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def record(
    cfg: CaptureConfig,
    *,
    probe: WindowProbe | None = None,
    grabber: ScreenSource | None = None,
    say: Callable[[str], None] = print,
    on_ocr_start: Callable[[int], None] | None = None,
) -> CaptureStats:
    """Capture until stopped (Ctrl-C, SIGTERM, ``proagent capture stop``, or ``cfg.duration``).

    Args:
        cfg: settings.
        probe, grabber: injected probes (default: this platform's, see :mod:`._probe`).
        say: where status lines go (start, pause, resume, stop).
        on_ocr_start: called with the OCR worker's pid (benchmarks measure it apart).

    Returns:
        The run's :class:`CaptureStats`.

    Raises:
        CaptureError: the session is unsupported, a dependency is missing, or another recorder
            runs in ``cfg.out``.
        proagent.errors.UsageError: an ``--exclude-title`` pattern is not a valid regex.
    """
    try:
        import imagehash  # noqa: F401  (used by ._change)
    except ImportError:
        raise CaptureError("imagehash is not installed: pip install 'proagent[capture]'") from None

    excl = Exclusions.build(cfg.exclude_apps, cfg.exclude_titles, defaults=cfg.default_exclusions)
    lock = _lock_folder(cfg)
    stats = CaptureStats()
    store: Store | None = None
    ocr: subprocess.Popen[bytes] | None = None
    own_probe = probe is None
    own_grabber = grabber is None
    signals = 0

    def _signal(*_: object) -> None:  # the first stops capture; a second one skips the OCR finish
        nonlocal signals
        signals += 1

    old = {s: signal.signal(s, _signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        probe = probe or open_window_probe()
        grabber = grabber or open_screen_source()
        store = Store(cfg.out)
        stats.recovered = store.recover()
        control = ControlFile(cfg.out)
        if cfg.ocr:
            ocr = _start_ocr(store.db, cfg.ocr_interval)
            if on_ocr_start:
                on_ocr_start(ocr.pid)
        ticks = _Ticks(cfg, probe, grabber, excl, store, stats)
        say(f"capturing to {cfg.out} every {cfg.interval:g} s; stop with Ctrl-C or: proagent capture stop {cfg.out}")
        gone: DisplayGone | None = None
        try:
            _tick_until_stopped(ticks, control, lambda: signals > 0, say)
        except DisplayGone as e:  # stop as at a stop request: the open event closed, OCR finished
            gone = e
        ticks.close()
        _finish_ocr(ocr, store, cfg, stats, say, skip=lambda: signals > 1 or control.poll() == "stop")
        unread = f"; {stats.ocr_unread} screenshots unread by OCR" + (
            " (curate reads each of them with a whole-screen OCR pass of its own)" if stats.ocr_unread else ""
        )
        say(
            f"capture stopped: {stats.events} events, {stats.stored} screenshots stored, {stats.duplicates} duplicates "
            f"skipped, {stats.excluded_ticks} excluded ticks{unread}"
        )
        write_status(
            cfg.out,
            state="stopped",
            unread=stats.ocr_unread,
            finished=stats.ocr_finished,
            events=stats.events,
            stored=stats.stored,
        )
        if gone is not None:
            raise RunError(f"{gone.problem}: capture stopped; what it recorded is kept in {cfg.out}") from None
        return stats
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        _stop_ocr(ocr)
        if store is not None:
            store.close()
        if own_probe and probe is not None:
            probe.close()
        if own_grabber and grabber is not None:
            grabber.close()
        lock.release()


def _tick_until_stopped(
    ticks: _Ticks, control: ControlFile, stopped: Callable[[], bool], say: Callable[[str], None]
) -> None:
    """Run a tick every ``interval`` until ``stopped()`` (a signal), a ``stop`` in the control file
    or the end of ``duration``; pause and resume as the control file says (within a quarter second)."""
    cfg = ticks.cfg
    paused = False
    t_start = time.monotonic()
    ticks.last_activity = t_start
    next_tick = t_start
    deadline = t_start + cfg.duration if cfg.duration is not None else math.inf
    while not stopped():
        mono = time.monotonic()
        if cfg.duration is not None and mono - t_start >= cfg.duration:
            break
        cmd = control.poll()
        if cmd == "stop":
            break
        if cmd in ("pause", "resume") and paused != (cmd == "pause"):
            paused = cmd == "pause"
            say(f"capture {'paused' if paused else 'resumed'}")
            ticks.last_activity = mono
        ticks.run(mono, datetime.now(), paused)
        next_tick = _next_tick(next_tick, cfg.interval, ticks.stats)
        while not stopped() and (left := min(next_tick, deadline) - time.monotonic()) > 0:
            time.sleep(min(left, 0.25))
            if control.changed():  # stop/pause/resume within a quarter second, not the next tick
                break


FINISH_PROGRESS_S = 5.0
"""Seconds between the progress lines while the OCR worker finishes at stop."""


def _finish_ocr(
    proc: subprocess.Popen[bytes] | None,
    store: Store,
    cfg: CaptureConfig,
    stats: CaptureStats,
    say: Callable[[str], None],
    skip: Callable[[], bool],
) -> None:
    """At stop: tell the OCR worker to read what it has not reached at full speed
    (:data:`~._store.FINISH_SIGNAL`) and wait for it up to ``cfg.ocr_finish`` seconds, saying how
    far it got every :data:`FINISH_PROGRESS_S` s, unless ``skip()`` (Ctrl-C again, another stop).
    Sets ``stats.ocr_finished`` and ``stats.ocr_unread``."""
    total = pending_count(store.con)
    if not total or proc is None or proc.poll() is not None or cfg.ocr_finish <= 0 or FINISH_SIGNAL is None or skip():
        _stop_ocr(proc)  # its current OCR ends first: then the count is final
        stats.ocr_unread = pending_count(store.con)
        return
    say(
        f"capture stopping: OCR has {total} screenshots to read; reading them (up to {cfg.ocr_finish:g} s; "
        "Ctrl-C again to stop now, --ocr-finish 0 not to wait)"
    )
    until = time.time() + cfg.ocr_finish
    write_status(cfg.out, state="finishing-ocr", unread=total, total=total, until=until)
    t0 = time.monotonic()
    end, next_say = t0 + cfg.ocr_finish, t0 + FINISH_PROGRESS_S
    proc.send_signal(FINISH_SIGNAL)
    left, skipped = total, False
    while proc.poll() is None and time.monotonic() < end and not (skipped := skip()):
        time.sleep(0.25)
        if time.monotonic() >= next_say:
            left = pending_count(store.con)
            say(f"OCR: {total - left} of {total} read, {left} left")
            write_status(cfg.out, state="finishing-ocr", unread=left, total=total, until=until)
            next_say += FINISH_PROGRESS_S
    _stop_ocr(proc)  # stopped or out of time: the worker ends its current OCR first, then the count
    left = pending_count(store.con)
    stats.ocr_finished, stats.ocr_unread = total - left, left
    say(
        f"OCR: {total - left} of {total} read in {time.monotonic() - t0:.0f} s"
        + (f" ({'told to stop' if skipped else 'time limit'}; {left} left)" if left else "")
    )


def _lock_folder(cfg: CaptureConfig) -> FolderLock:
    """Create ``cfg.out``, take the recorder's lock on it and, with ``cfg.encrypt``, make it a vault.

    Raises:
        CaptureError: another recorder runs there.
    """
    cfg.out.mkdir(parents=True, exist_ok=True)
    lock = FolderLock(cfg.out)
    lock.acquire()
    if cfg.encrypt and vault_of(cfg.out) is None:
        try:
            create_vault(cfg.out)
        except BaseException:
            lock.release()
            raise
    return lock


def _next_tick(next_tick: float, interval: float, stats: CaptureStats) -> float:
    """The monotonic time of the next tick: one interval on; a loop that fell behind skips the
    missed ticks (counted in ``stats.late_ticks``) and keeps the schedule."""
    next_tick += interval
    behind = time.monotonic() - next_tick
    if behind > 0:
        missed = int(behind // interval) + 1
        stats.late_ticks += missed
        next_tick += missed * interval
    return next_tick


class _Ticks:
    """What one capture run carries from tick to tick: the open event, the last stored and the
    previous frame of each screen, the last window and activity time (idle), and the counts."""

    def __init__(
        self,
        cfg: CaptureConfig,
        probe: WindowProbe,
        grabber: ScreenSource,
        excl: Exclusions,
        store: Store,
        stats: CaptureStats,
    ) -> None:
        self.cfg, self.probe, self.grabber, self.excl, self.store, self.stats = cfg, probe, grabber, excl, store, stats
        self.seg = Segmenter(cfg.split_on_title, cfg.split_on_tab)
        self.max_bytes = int(cfg.max_gb * 1e9) if cfg.max_gb is not None else None
        self.event_id: int | None = None
        self.stored_hash: dict[int, Frame] = {}  # screen -> frame of the last stored screenshot in this event
        self.prev_hash: dict[int, Frame] = {}  # screen -> frame at the previous tick (idle detection)
        self.last_win: WindowInfo | None = None
        self.last_activity = 0.0  # monotonic time of the last change of screen, window or pause state

    def run(self, mono: float, now: datetime, paused: bool) -> None:
        """One tick at monotonic time ``mono`` (local time ``now``): look, segment, store, retain."""
        stats = self.stats
        win, excluded, shots, focus = self._look(paused)
        hashes = {sid: frame(img, text=self.cfg.text_change) for sid, img in shots}
        if not stats.screens and shots:
            stats.screens = [img.size for _, img in shots]
        idle = self._idle(mono, win, hashes)
        close, open_ = self._segment(now, None if idle else win, excluded)
        if self.event_id is not None:
            self._store(now, win, shots, hashes, focus)
            if not close and not open_:
                self.store.heartbeat(self.event_id, now)
        stats.grabs += len(shots)
        cfg = self.cfg
        if (cfg.max_days is not None or self.max_bytes is not None) and stats.ticks % 60 == 1:
            stats.removed += self.store.enforce_retention(now, max_days=cfg.max_days, max_bytes=self.max_bytes)

    def close(self) -> None:
        """Close the open event (the run stops)."""
        if self.event_id is not None:
            self.store.close_event(self.event_id, datetime.now())
            self.event_id = None

    def _look(self, paused: bool) -> tuple[WindowInfo | None, bool, list[tuple[int, Any]], int | None]:
        """``(window, excluded, [(screen id, image)], focused screen id)`` of this tick; nothing
        while paused, no screen grabbed while the window is excluded."""
        if paused:
            return None, False, [], None
        self.stats.ticks += 1
        win = self.probe.foreground()
        excluded = self.excl.excludes(win)
        shots = [] if excluded else self._mask(self.grabber.grab())
        if shots:
            # the window in front read again: one that changed during the grab (a switch, or an
            # excluded window coming to the front) leaves images that may show either window, so
            # none is stored; the event follows the newer window and the next tick grabs it
            # (X11 probe: 0.3 ms of CPU). Without it the old event got a frame of the new window.
            after = self.probe.foreground()
            after_excluded = self.excl.excludes(after)
            if self.seg.key(after, excluded=after_excluded) != self.seg.key(win, excluded=False):
                win, excluded, shots = after, after_excluded, []
                self.stats.switched_ticks += 1
        focus = self.grabber.focused_screen(win) if shots else None
        if excluded:
            self.stats.excluded_ticks += 1
        return win, excluded, shots, focus

    def _screen_rect(self, sid: int) -> tuple[int, int, int, int] | None:
        rect = getattr(self.grabber, "screen_rect", None)
        return rect(sid) if rect is not None else None

    def _mask(self, shots: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
        """``shots`` with the visible pixels of excluded windows filled (module :mod:`._regions`),
        where the probe lists the visible windows (X11, sway)."""
        listing = getattr(self.probe, "visible_windows", None)
        if listing is None or not shots:
            return shots
        windows = listing()
        if not any(self.excl.excludes(w) for w in windows):
            return shots
        out = []
        for sid, img in shots:
            img, n = mask_windows(img, windows, self.excl.excludes, self._screen_rect(sid))
            self.stats.masked += n > 0
            out.append((sid, img))
        return out

    def _idle(self, mono: float, win: WindowInfo | None, hashes: dict[int, Frame]) -> bool:
        """Whether the user is idle (module docstring): no screen or window change for ``idle``
        seconds, and no input for as long where the platform tells it."""
        dist = self.cfg.dedup_distance
        changed = any(
            sid not in self.prev_hash or not is_duplicate(hashes[sid], self.prev_hash[sid], dist) for sid in hashes
        )
        self.prev_hash.update(hashes)
        if changed or win != self.last_win:
            self.last_activity = mono
        self.last_win = win
        idle_in = self.probe.idle_seconds() if win is not None else None
        return (mono - self.last_activity >= self.cfg.idle) and (idle_in is None or idle_in >= self.cfg.idle)

    def _segment(self, now: datetime, win: WindowInfo | None, excluded: bool) -> tuple[bool, bool]:
        """Close and open events as :class:`Segmenter` says for ``win`` (``None``: idle or
        paused); returns its ``(closed, opened)``."""
        close, open_ = self.seg.step(self.seg.key(win, excluded=excluded))
        if close and self.event_id is not None:
            self.store.close_event(self.event_id, now)
            self.event_id = None
        if open_ and win is not None:
            self.event_id = self.store.open_event(
                EXCLUDED_APP if excluded else win.app_name, None if excluded else win.window_title, now
            )
            self.stats.events += 1
            self.stored_hash.clear()
        return close, open_

    def _store(
        self,
        now: datetime,
        win: WindowInfo | None,
        shots: list[tuple[int, Any]],
        hashes: dict[int, Frame],
        focus: int | None,
    ) -> None:
        """Store each screen's image in the open event unless it duplicates the screen's last stored one."""
        assert self.event_id is not None
        for sid, img in shots:
            assert win is not None  # screens are grabbed only with a window
            h = hashes[sid]
            if sid in self.stored_hash and is_duplicate(h, self.stored_hash[sid], self.cfg.dedup_distance):
                self.stats.duplicates += 1
                continue
            data = _encode(img, self.cfg.image_format)
            self.store.add_screenshot(
                event_id=self.event_id,
                screen_id=sid,
                t=now,
                data=data,
                ext=self.cfg.image_format,
                file_hash=hashlib.sha256(data).hexdigest(),
                width=img.width,
                height=img.height,
                app=win.app_name,
                title=win.window_title,
                focused=None if focus is None else sid == focus,
                ocr_region=window_region(win, self._screen_rect(sid), img.size)
                if self.cfg.ocr_region == "window" and sid == focus
                else None,
            )
            self.stored_hash[sid] = h
            self.stats.stored += 1
            self.stats.bytes_stored += len(data)
