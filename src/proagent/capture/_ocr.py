"""Background OCR of captured screenshots, in its own process so it never blocks capture.

The worker takes the oldest screenshot with ``is_processed = 0`` whose file is still there, runs
RapidOCR on it (PP-OCR det/rec ONNX models shipped inside the ``rapidocr`` wheel; one onnxruntime
thread; :data:`~proagent.ocr.LEAN_PARAMS`; the screen read in horizontal bands, :func:`read_bands`,
so that its resident memory stays near 300 MB on a 1080p screen; a band whose pixels are those of
the previous screenshot of the same screen is not read again, :func:`read_bands_reusing`), writes one ``ocr_results`` row (lines joined with newlines, mean line
confidence, ``language = 'ch_sim+en'``, ``processing_time`` in seconds) and sets ``is_processed``
and ``processed_at``, all in one transaction. It starts at most one OCR every ``min_interval``
seconds (the bounded rate), sleeps while nothing is waiting, and exits when its parent recorder
is gone (checked every second) or on SIGTERM. The text is never logged.

Run alone: ``python -m proagent.capture._ocr DIR/lifetrace.db --min-interval 2``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import signal
import sqlite3
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..ocr import load_ocr
from ._store import SHOTS_DIR, connect

__all__ = ["BAND_OVERLAP", "BAND_ROWS", "MMAP_THRESHOLD", "BandRead", "BandStats", "OcrEngine", "ocr_pending", "read_bands",
           "read_bands_reusing", "return_freed_memory", "run_worker"]

OCR_LANGUAGE = "ch_sim+en"
"""``ocr_results.language`` written (the PP-OCR Chinese + English recogniser)."""


BAND_ROWS = 270
"""Rows of the screen each text-detection pass covers (a quarter of a 1080p screen): the
detector's activations grow with the image area (a whole 1920x1080 frame took about 450 MB above
the loaded models), so the worker reads the screen band by band."""
BAND_OVERLAP = 40
"""Rows each band reaches into its neighbours above and below: a text line up to twice this tall
lies whole in the band holding its centre, and is kept from that band only."""


@dataclass(frozen=True)
class BandRead:
    """What one band of a screen held: its rows, a digest of its pixels and the lines kept from it."""

    y0: int
    """First row read (the band's top minus the overlap)."""
    y1: int
    """Row after the last one read."""
    digest: bytes
    """BLAKE2b (16 bytes) of the pixels of rows ``y0:y1`` and their shape: the pixels themselves are
    not kept."""
    lines: tuple[tuple[str, float], ...]
    """``(text, confidence)`` of each line kept from this band, top to bottom."""


@dataclass
class BandStats:
    """Bands handled by a worker, by how (counters for benchmarks and tests)."""

    read: int = 0
    """Bands run through the engine."""
    reused: int = 0
    """Bands whose pixels equal those of the same band of the previous screenshot of the screen:
    its lines were taken over, the engine not run."""
    blank: int = 0
    """Bands of one colour (no text can show): not run through the engine."""


def _digest(band: Any) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    h.update(repr(band.shape).encode())
    h.update(band.tobytes())
    return h.digest()


def read_bands_reusing(engine: Any, arr: Any, previous: Sequence[BandRead] = (), rows: int = BAND_ROWS,
                       overlap: int = BAND_OVERLAP, stats: BandStats | None = None
                       ) -> tuple[list[str], list[float], list[BandRead]]:
    """:func:`read_bands`, reusing ``previous`` (the :class:`BandRead` list of the previous screenshot
    of the same screen): a band whose rows ``y0:y1`` hold exactly the pixels they held there is not
    read again (the engine is deterministic: it would read the same lines), and a band of one colour
    is not read at all (no text shows on it). Returns the lines, their confidences and this
    screenshot's band reads (for the next one).

    On a screen where a person types, scrolls a pane or a clock ticks, most bands of a stored
    screenshot are those of the previous one (issue 24: text-aware dedup stores many
    near-identical screens)."""
    import numpy as np

    h = int(arr.shape[0])
    before = {(b.y0, b.y1): b for b in previous}
    txts: list[str] = []
    scores: list[float] = []
    reads: list[BandRead] = []
    for top in range(0, h, rows):
        y0, y1 = max(0, top - overlap), min(h, top + rows + overlap)
        band = np.ascontiguousarray(arr[y0:y1])
        digest = _digest(band)
        old = before.get((y0, y1))
        if old is not None and old.digest == digest:
            lines = old.lines
            if stats is not None:
                stats.reused += 1
        elif band.size == 0 or bool((band == (band.reshape(-1, band.shape[-1])[0] if band.ndim == 3 else band.flat[0])).all()):
            lines = ()
            if stats is not None:
                stats.blank += 1
        else:
            out: Any = engine(band)
            kept = []
            if out.boxes is not None:
                for box, text, score in zip(out.boxes, out.txts or (), out.scores or ()):
                    centre = y0 + float(np.mean(np.asarray(box)[:, 1]))
                    if top <= centre < top + rows and text and text.strip():
                        kept.append((text, float(score)))
            lines = tuple(kept)
            if stats is not None:
                stats.read += 1
        reads.append(BandRead(y0, y1, digest, lines))
        txts.extend(t for t, _ in lines)
        scores.extend(c for _, c in lines)
    return txts, scores, reads


def read_bands(engine: Any, arr: Any, rows: int = BAND_ROWS, overlap: int = BAND_OVERLAP) -> tuple[list[str], list[float]]:
    """Text lines (top to bottom) and their confidences of the RGB array ``arr`` (height x width x 3),
    read by ``engine`` one horizontal band of ``rows`` rows (+ ``overlap`` above and below) at a time;
    a line belongs to the band holding the centre of its box (bands of one colour are skipped)."""
    txts, scores, _ = read_bands_reusing(engine, arr, (), rows, overlap)
    return txts, scores


class OcrEngine:
    """RapidOCR with one onnxruntime thread (bounded CPU) and :data:`~proagent.ocr.LEAN_PARAMS`,
    loaded once; reads a screen band by band (:func:`read_bands`, bounded memory), reusing the bands
    unchanged since the previous screenshot of the same screen (:func:`read_bands_reusing`)."""

    def __init__(self, threads: int = 1) -> None:
        self._engine = load_ocr(threads, lean=True)
        self._previous: dict[Any, list[BandRead]] = {}
        self.stats = BandStats()
        """Bands read, reused and blank so far."""

    def read(self, path: Path, screen: Any = None) -> tuple[str, float | None]:
        """``(text, mean confidence)`` of the image at ``path`` (empty text, ``None`` when none).
        ``screen``: the screen it shows (``screenshots.screen_id``); the bands of the previous
        screenshot read for the same screen are reused where their pixels are unchanged."""
        import numpy as np

        from ..vault import open_image

        with open_image(path) as im:  # decrypted in memory in an encrypted capture
            arr = np.asarray(im.convert("RGB"))
        txts, scores, reads = read_bands_reusing(self._engine, arr, self._previous.get(screen, ()), stats=self.stats)
        self._previous[screen] = reads
        return "\n".join(txts), (sum(scores) / len(scores) if scores else None)


def ocr_pending(con: sqlite3.Connection, engine: OcrEngine, shots_dir: Path) -> bool:
    """OCR the oldest unprocessed screenshot; False when none is waiting."""
    row = con.execute(
        "SELECT id, file_path, screen_id FROM screenshots WHERE COALESCE(is_processed, 0) = 0 AND COALESCE(file_deleted, 0) = 0 "
        "AND deleted_at IS NULL ORDER BY id LIMIT 1").fetchone()
    if row is None:
        return False
    sid, file_path = int(row[0]), str(row[1])
    path = shots_dir / Path(file_path).name
    t0 = time.perf_counter()
    try:
        text, conf = engine.read(path, screen=row[2])
        ok = True
    except (OSError, ValueError):  # file removed by retention meanwhile, or unreadable
        text, conf, ok = "", None, False
    took = time.perf_counter() - t0
    now = datetime.now().strftime("%Y-%m-%d %H:%M:%S.%f")
    con.execute("BEGIN IMMEDIATE")
    try:
        if ok:
            con.execute("INSERT INTO ocr_results (screenshot_id, text_content, confidence, language, processing_time, "
                        "created_at) VALUES (?, ?, ?, ?, ?, ?)", (sid, text, conf, OCR_LANGUAGE, took, now))
        con.execute("UPDATE screenshots SET is_processed = 1, processed_at = ? WHERE id = ?", (now, sid))
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return True


MMAP_THRESHOLD = 64 * 1024
"""Bytes above which the worker's allocations are their own memory maps (glibc ``M_MMAP_THRESHOLD``),
returned to the system when freed. glibc's default threshold grows with the first large frees, after
which the detector's and recogniser's tensors come from the heap and stay resident: one 1080p OCR
left 465 MB resident (737 MB peak) with the default and 158 MB (525 MB peak) with this."""


def return_freed_memory(threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold at ``threshold`` bytes for this process (see :data:`MMAP_THRESHOLD`);
    False where the C library is not glibc (nothing changed)."""
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(-3, int(threshold)))  # -3: M_MMAP_THRESHOLD (malloc.h)
    except (OSError, AttributeError):
        return False


def run_worker(db: Path, *, min_interval: float = 2.0, parent: int | None = None, threads: int = 1) -> None:
    """Process screenshots of ``db`` until the parent process ends (see the module docstring)."""
    return_freed_memory()  # before the models load
    stop = False

    def _term(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, _term)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the recorder, which stops us
    engine = OcrEngine(threads)
    con = connect(db)
    shots = db.parent / SHOTS_DIR
    try:
        while not stop:
            if parent is not None and os.getppid() != parent:
                break  # the recorder died (kill -9): do not outlive it
            t0 = time.monotonic()
            did = ocr_pending(con, engine, shots)
            wait = max(min_interval - (time.monotonic() - t0), 0.0) if did else max(min_interval, 1.0)
            end = time.monotonic() + wait
            while not stop and time.monotonic() < end:
                time.sleep(min(0.5, max(end - time.monotonic(), 0.0)))
                if parent is not None and os.getppid() != parent:
                    stop = True
    finally:
        con.close()


def main(argv: list[str] | None = None) -> None:
    """``python -m proagent.capture._ocr DB [--min-interval S] [--parent PID]``."""
    ap = argparse.ArgumentParser(prog="proagent-capture-ocr")
    ap.add_argument("db", type=Path)
    ap.add_argument("--min-interval", type=float, default=2.0)
    ap.add_argument("--parent", type=int, default=None)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args(argv)
    try:
        run_worker(a.db, min_interval=a.min_interval, parent=a.parent, threads=a.threads)
    except KeyboardInterrupt:
        pass
    except sqlite3.DatabaseError as e:
        print(f"capture OCR worker: {a.db}: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
