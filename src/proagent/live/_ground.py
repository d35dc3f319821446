"""What the help (and the How call) reads of the window in front, read *now* (issue 42).

A moment is decided once its window settled in front; its screen text is what the log held then,
and on a loaded laptop capture's OCR is often behind (a screenshot waits tens of seconds for its
text). :class:`ScreenReader` reads the watched LifeTrace database again when the help is asked
(Accept) or the How call starts: the offer's event as it is now, and the later events of the same
window (the person went away and came back), with the screenshots and OCR text written since.
When the newest screenshot of that window has no text yet, live reads it itself, at once, with
RapidOCR (:func:`proagent.ocr.load_ocr`, the engine capture uses), bounded by
:data:`OCR_SECONDS` instead of waiting behind capture's backlog: the window in front first, the
backlog after. The text live reads is kept in memory only (the log is never written: live opens it
read-only), by screenshot id and by the focused window's pixels: a newer screenshot whose window
rectangle is pixel for pixel one live read already (the window did not change; only the windows
beside it did: a page rewriting its text, a clock) takes that text at once instead of another OCR
(issue 42, item 7: with a busy page beside the terminal, capture stored a screenshot a second, and
each Accept or How call started a new read of the newest one, queued behind the last).

:class:`Grounding` says what was read: ``reading: Terminal - pytest, 38 lines of screen text`` or
``reading: Terminal - pytest, no screen text (...)``; the page and the terminal show it.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ..records import Event, Sample, Screenshot

__all__ = ["OCR_SECONDS", "Grounding", "ScreenReader", "grounding_of"]

log = logging.getLogger("proagent.live.ground")

OCR_SECONDS = 8.0
"""Longest wait for live's own OCR of the newest screenshot of the window in front, seconds. One
1080p screen took 2.2 s of CPU in capture's worker (issue 42) and up to about twice that in wall
time on two loaded cores; past this bound the help goes on with the text the log holds (the OCR
finishes in the background and a follow-up or the next How call uses it)."""
OCR_THREADS = 2
"""onnxruntime threads of live's OCR (one read at a time, while the person waits for it)."""
_KEEP = 64
"""Screenshots whose text live read itself, kept in memory (the newest)."""


@dataclass(frozen=True)
class Grounding:
    """What one help answer (or How call) reads of the window in front."""

    window: str
    """``app - title`` of the window read (titles cut to 80 characters)."""
    lines: int
    """Lines of screen text of that window in the context (0: none)."""
    source: str
    """``log`` (capture's OCR, read now), ``ocr`` (read by live just now), ``moment`` (as the
    moment was decided: no newer text), ``none`` (no screen text at all) or ``not sent``."""
    shot_time: datetime | None = None
    """Time of the screenshot whose text is read."""
    why: str = ""
    """Why there is no screen text (``none``): no screenshot, OCR found none, OCR took too long."""
    pixels: str | None = None
    """Key of the focused-window pixels (SHA-256 and shape, :meth:`ScreenReader.same_window`'s
    test) of the newest screenshot, set only when the text read is that screenshot's; ``None``: no
    screenshot, it could not be decoded, or its text was not read (the text is an older one's).
    The help reuses its read-ahead when this is unchanged at Accept (the window did not change)."""

    def line(self) -> str:
        """``reading: <window>, N lines of screen text`` (or ``, no screen text (why)``)."""
        if self.source == "not sent":
            return f"reading: {self.window}, screen text not sent (--send-screen never)"
        if not self.lines:
            return f"reading: {self.window}, no screen text" + (f" ({self.why})" if self.why else "")
        return f"reading: {self.window}, {self.lines} line{'s' if self.lines != 1 else ''} of screen text"


def _window(e: Event) -> str:
    title = " ".join(e.window_title.split())[:80]
    return " - ".join(p for p in (e.app_name, title) if p) or "(unknown window)"


def grounding_of(sample: Sample, source: str = "moment", why: str = "") -> Grounding:
    """The :class:`Grounding` of ``sample`` as it is (its front event's newest screenshot with text)."""
    cur = sample.current
    shot = next((s for s in reversed(cur.focused_screenshots) if s.ocr_text.strip()), None)
    if shot is None:
        if not why and not cur.screenshots:
            why = "no screenshot of it yet"
        return Grounding(_window(cur), 0, "none", None, why)
    lines = sum(1 for r in shot.ocr_text.splitlines() if r.strip())
    return Grounding(_window(cur), lines, source, shot.time)


class ScreenReader:
    """Reads the window in front of a moment again from the watched LifeTrace database.

    Args:
        db: the database (``lifetrace.db``) live follows.
        ocr: read the newest screenshot itself when it has no text yet (``False``: only the log).
        ocr_seconds: the bound on that read (:data:`OCR_SECONDS`).

    Thread-safe: the help's worker and the How call use it; one OCR runs at a time.
    """

    def __init__(self, db: str | Path, *, ocr: bool = True, ocr_seconds: float = OCR_SECONDS) -> None:
        self.db = Path(db)
        self.shots = self.db.parent / "screenshots"
        self.ocr, self.ocr_seconds = ocr, float(ocr_seconds)
        self._texts: OrderedDict[int, str] = OrderedDict()
        self._by_pixels: OrderedDict[str, str] = OrderedDict()  # SHA-256 of the region's pixels -> text
        self._lock = threading.Lock()  # the caches
        self._ocr_lock = threading.Lock()  # one read at a time
        self._running: dict[str, threading.Event] = {}  # by the region's pixels
        self._digests: OrderedDict[int, str] = OrderedDict()  # screenshot id -> SHA-256 of its region's pixels
        self.read_now = 0
        """Screenshots live read itself so far."""

    def warm(self) -> None:
        """Load the OCR engine (about a second), so the first Accept does not pay it. Never raises."""
        if not self.ocr:
            return
        try:
            from ..ocr import load_ocr

            load_ocr(OCR_THREADS, lean=True)
        except Exception as e:  # noqa: BLE001 - no OCR installed: the help reads the log's text only
            log.info("live's own OCR is off: %s", e)
            self.ocr = False

    # ------------------------------------------------------------ reading
    def _events(self, front: Event) -> list[Event]:
        from ..sources.lifetrace import load_lifetrace

        try:
            first = int(front.id)
        except ValueError:
            return []
        return list(load_lifetrace(self.db, user=front.user, min_event_id=first, resolve_files=False).events)

    def _ocr_text(self, shot: Screenshot) -> str | None:
        """The text of ``shot`` read by live (``None``: not read within the bound, or no OCR).

        The focused window's rectangle is decoded first (milliseconds); when its pixels are those of
        a screenshot read (or being read) already, that text is used (or awaited) instead of a new read."""
        with self._lock:
            if shot.id in self._texts:
                return self._texts[shot.id]
        path = self.shots / Path(shot.file_name).name
        if not self.ocr or not path.is_file():
            return None
        try:
            arr = self._pixels(shot.id, path)
        except Exception as e:  # noqa: BLE001 - an image still being written, removed: no text (never logged)
            log.debug("live could not open screenshot %s: %s", shot.id, type(e).__name__)
            return ""
        key = self._remember(shot.id, arr)
        with self._lock:
            text = self._by_pixels.get(key)
            if text is not None:
                self._by_pixels.move_to_end(key)
                self._keep(self._texts, shot.id, text)
                return text
            done = self._running.get(key)
            if done is None:
                done = self._running[key] = threading.Event()
                threading.Thread(
                    target=self._read, args=(key, arr, done), daemon=True, name="proagent-live-ocr"
                ).start()
        done.wait(self.ocr_seconds)
        with self._lock:
            text = self._by_pixels.get(key)
            if text is not None:
                self._keep(self._texts, shot.id, text)
            return text

    def same_window(self, a: Screenshot, b: Screenshot) -> bool:
        """True when the window in front has the same pixels in screenshot ``b`` as in ``a`` (its
        focused rectangle, ``screenshots.ocr_region``; the whole screen where capture recorded
        none): ``b`` was stored for a change elsewhere on the screen (:func:`~._settle.settled_at`'s
        ``still``). ``False`` when either image cannot be read yet (a change, as without this test).
        One decode per screenshot (cached by id; tens of milliseconds for a 1080p PNG)."""
        da, db = self._digest(a), self._digest(b)
        return da is not None and da == db

    def _digest(self, shot: Screenshot) -> str | None:
        with self._lock:
            if shot.id in self._digests:
                return self._digests[shot.id]
        path = self.shots / Path(shot.file_name).name
        try:
            arr = self._pixels(shot.id, path)
        except Exception:  # noqa: BLE001 - still being written, removed: not cached, asked again next time
            return None
        return self._remember(shot.id, arr)

    def _remember(self, sid: int, arr: Any) -> str:
        """The key of screenshot ``sid``'s region pixels ``arr`` (SHA-256 and shape), kept by id."""
        import hashlib

        key = hashlib.sha256(arr.tobytes()).hexdigest() + f":{arr.shape}"
        with self._lock:
            self._keep(self._digests, sid, key)
        return key

    @staticmethod
    def _keep(cache: OrderedDict, key: object, text: str) -> None:  # type: ignore[type-arg]
        cache[key] = text
        cache.move_to_end(key)
        while len(cache) > _KEEP:
            cache.popitem(last=False)

    def _pixels(self, sid: int, path: Path):  # noqa: ANN202 - numpy array (numpy imported lazily)
        """The pixels live reads of screenshot ``sid``: its focused window's rectangle (BGR), or the
        whole screen when capture recorded none.

        Raises:
            OSError, ValueError: the image cannot be read (still being written, removed)."""
        import numpy as np

        from ..vault import open_image

        region = self._region(sid)
        with open_image(path) as im:
            arr = np.asarray(im.convert("RGB"))
        if region is not None:  # the focused window only, as capture's own OCR reads it
            x, y, w, h = region
            crop = arr[y : y + h, x : x + w]
            arr = crop if crop.size else arr
        return np.ascontiguousarray(arr[:, :, ::-1])

    def _region(self, sid: int) -> tuple[int, int, int, int] | None:
        """The focused window's rectangle capture stored with screenshot ``sid``
        (``screenshots.ocr_region``, :func:`proagent.capture.parse_region`), or ``None``: not
        recorded (another recorder, the whole screen read, an older capture) or unreadable."""
        from ..capture import parse_region
        from ..sources.lifetrace_schema import SQLITE_READ_ERRORS, connect_read_only

        try:
            con = connect_read_only(self.db)
            try:
                if "ocr_region" not in {r[1] for r in con.execute('PRAGMA table_info("screenshots")')}:
                    return None
                row = con.execute("SELECT ocr_region FROM screenshots WHERE id = ?", (int(sid),)).fetchone()
            finally:
                con.close()
        except (*SQLITE_READ_ERRORS, ValueError):
            return None
        return parse_region(row[0]) if row is not None else None

    def _read(self, key: str, arr, done: threading.Event) -> None:  # noqa: ANN001 - a numpy array
        text = ""
        try:
            from ..ocr import load_ocr

            with self._ocr_lock:
                res = load_ocr(OCR_THREADS, lean=True)(arr)
            text = "\n".join(str(t) for t in (getattr(res, "txts", None) or ()))
            self.read_now += 1
        except Exception as e:  # noqa: BLE001 - no OCR: no text (never logged)
            log.debug("live could not read a screenshot: %s", type(e).__name__)
        with self._lock:
            self._keep(self._by_pixels, key, text)
            self._running.pop(key, None)
        done.set()

    def ground(self, sample: Sample) -> tuple[Sample, Grounding]:
        """``sample`` with its window in front as it is now, and what it reads.

        The current event is replaced by the log's row as it is now, with the screenshots of the
        later events of the same window (same app and title) appended; when the newest of those
        has no text yet, live reads it (:data:`OCR_SECONDS` at most) and puts its text in. The
        moment's context events are kept. A log that cannot be read now (moved, locked) leaves the
        sample as it was (``source`` ``moment``). Never raises for a bad log.
        """
        cur = sample.current
        try:
            evs = self._events(cur)
        except Exception as e:  # noqa: BLE001 - the help goes on with the moment as it was
            log.info("reading the window in front again failed: %s", e)
            evs = []
        now = next((e for e in evs if e.id == cur.id), None)
        if now is None:
            return sample, grounding_of(sample)
        same = [e for e in evs if e.id != cur.id and e.app_name == cur.app_name and e.window_title == cur.window_title]
        shots: list[Screenshot] = list(now.focused_screenshots)
        for e in same:
            shots += list(e.focused_screenshots)
        shots.sort(key=lambda s: (s.time, s.id))
        source, why = "log", ""
        if shots and not shots[-1].ocr_text.strip():
            text = self._ocr_text(shots[-1])
            if text is None:
                why = "its newest screenshot was not read within {:g} s".format(self.ocr_seconds) if self.ocr else ""
            elif text.strip():
                shots[-1] = replace(shots[-1], ocr_text=text)
                source = "ocr"
            else:
                why = "OCR found no text on its newest screenshot"
        fresh = replace(now, screenshots=tuple(shots), end=max((x.end or x.start for x in [now, *same]), default=None))
        out = replace(sample, current=fresh)
        # the window's pixels, when the text read is the newest screenshot's (decoded once per screenshot)
        pixels = self._digest(shots[-1]) if shots and shots[-1].ocr_text.strip() else None
        return out, replace(grounding_of(out, source, why), pixels=pixels)
