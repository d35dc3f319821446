"""Background OCR of captured screenshots, in its own process so it never blocks capture.

The worker takes the newest screenshot with ``is_processed = 0`` whose file is still there (the
screen as the person sees it now first, a backlog after it, :func:`ocr_pending`), reads the focused
window's rectangle of it where capture stored one (``screenshots.ocr_region``), runs
RapidOCR on it (PP-OCR det/rec ONNX models shipped inside the ``rapidocr`` wheel; one onnxruntime
thread; :data:`~proagent.ocr.LEAN_PARAMS`; the screen read in horizontal bands, :func:`read_bands`,
so that its resident memory stays near 300 MB on a 1080p screen; only the pixels that changed
since the most alike of the last few reads of the same screen are read again, in a strip of their
rows and columns, :func:`read_screen`; the short boxes of one text row are recognised as one
line, :func:`_joined`), writes one ``ocr_results`` row (lines joined with newlines, mean line
confidence, ``language = 'ch_sim+en'``, ``processing_time`` in seconds) and sets ``is_processed``
and ``processed_at``, all in one transaction. It starts at most one OCR every ``min_interval``
seconds that runs the engine (the bounded rate; a screenshot whose lines are all reused waits
:data:`REUSE_GAP` only), sleeps while nothing is waiting, and exits when its parent recorder
is gone (within :data:`proagent.orphan.PARENT_POLL_S`, even in the middle of an OCR pass, whose
transaction SQLite rolls back) or on SIGTERM. On SIGUSR1 (the recorder stops, :data:`FINISH_SIGNAL`)
it *finishes*: it reads what is waiting without the rate limit and exits once nothing is. The text
is never logged.

Run alone: ``python -m proagent.capture._ocr DIR/lifetrace.db --min-interval 2``.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import math
import os
import signal
import sqlite3
import sys
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..ocr import load_ocr
from ..orphan import exit_when_orphaned
from ._regions import parse_region
from ._store import FINISH_SIGNAL, PENDING_WHERE, SHOTS_DIR, connect, pending_count

__all__ = [
    "REGION_MARGIN",
    "BAND_OVERLAP",
    "BAND_ROWS",
    "FINISH_SIGNAL",
    "MMAP_THRESHOLD",
    "CHANGE_MARGIN",
    "CHANGE_MARGIN_X",
    "JOIN_GAP",
    "COLUMN_BLOCK",
    "READS_PER_SCREEN",
    "WIDTH_BUCKETS",
    "BandStats",
    "OcrEngine",
    "ScreenLine",
    "ScreenRead",
    "ocr_pending",
    "pending_count",
    "read_bands",
    "read_screen",
    "return_freed_memory",
    "scroll_shift",
    "run_worker",
]

OCR_LANGUAGE = "ch_sim+en"
"""``ocr_results.language`` written (the PP-OCR Chinese + English recogniser)."""


BAND_ROWS = 270
"""Rows of the screen each text-detection pass covers (a quarter of a 1080p screen): the
detector's activations grow with the image area (a whole 1920x1080 frame took about 450 MB above
the loaded models), so the worker reads the screen band by band."""
BAND_OVERLAP = 40
"""Rows each band reaches into its neighbours above and below: a text line up to twice this tall
lies whole in the band holding its centre, and is kept from that band only."""


CHANGE_MARGIN = 8
"""Rows around the rows that changed since the previous screenshot of a screen that are read again
with them (and, as in a band, :data:`BAND_OVERLAP` more above and below as context, whose lines the
recogniser no longer reads, :func:`_recognise_rows`). A new line's box lies within its changed glyph
rows and the detector's few rows of dilation; the lines of the previous read that reach into these
rows are read again whole. It was :data:`BAND_OVERLAP` (40): a typed character re-recognised the
three lines above and below it as well (issue 42: capture within 10% of a core)."""


KEPT_READS = 8
"""Screens (``screenshots.screen_id``) whose reads the worker keeps (the least recently read
screen's are dropped first)."""

READS_PER_SCREEN = 6
"""Previous reads the worker keeps per screen (row and block digests and the lines with their
boxes, no pixels: about 0.3 MB each on a 1080p screen), of any size of the part read (the focused
window's region). A screenshot is read against the kept read of its size sharing the most rows
with it (moved by :func:`scroll_shift` where its content moved): switching back to a window seen a
few screenshots before (a shell, a browser, the shell again) reads only what changed since it was
last in front, not the whole window (issue 42: capture within 10% of a core)."""

COLUMN_BLOCK = 64
"""Pixels of a row per column block digest (:func:`_block_digests`): which columns of a changed row
changed, to the nearest block."""

CHANGE_MARGIN_X = 24
"""Pixels left and right of a changed column block read with it: a space or two of a 16-20 pixel
font, across which the detector joins words into one line (a word typed after a space joins the
line before it)."""

COLUMN_GAP = 4
"""Column blocks of unchanged pixels between two changed ones below which they are read as one
strip (a typed word and the cursor after it); wider gaps are read as separate strips."""

COLUMN_CONTEXT = 32
"""Pixels of the screen beside a changed strip given to the detector with it (as
:data:`BAND_OVERLAP` rows above and below): its lines are detected as in a whole-width band."""

WIDTH_BUCKETS = (384, 768, 1152)
"""Widths (pixels) a changed strip is cut to, with the screen's own columns around it: the
detector's input takes one of a few shapes (onnxruntime's first run of each new input shape costs
memory, as strips of new heights did). A strip wider than the largest bucket, or whose bucket is as
wide as the screen, is read across the whole width (the shape of a whole band)."""

REGION_MARGIN = 32
"""Pixels of context around a focused window's region read with it: a text line close to the
region's edge is then detected whole (cut at the edge, the detector's box clipped the line and the
recogniser read an xmessage's "BRAVO MESSAGE 58" as "BRAVO HESSAGE 58"; with 32 pixels of context,
as read on the whole screen). Above and below, the screen's own rows (the window's title bar); left
and right, the window's edge columns repeated, not the windows beside it: a page changing beside
the focused window would otherwise change the rows read and run the engine on every screenshot."""


@dataclass(frozen=True)
class ScreenLine:
    """One text line read on a screen, with where it lies (pixels of the whole screen)."""

    text: str
    score: float
    """Recognition confidence in [0, 1]."""
    x: float
    """Left of the box's first corner (RapidOCR's reading order sorts by it within a row)."""
    y: float
    """Top of the box's first corner."""
    top: float
    """Smallest row of the box."""
    bottom: float
    """Largest row of the box."""
    band: int
    """The band (``centre // rows``) the line belongs to: lines come band by band."""
    centre: float
    """Mean row of the box's corners (the band and region a line belongs to)."""
    left: float = 0.0
    """Smallest column of the box."""
    right: float = math.inf
    """Largest column of the box (``inf``: not known, the line is taken to reach across the screen)."""


@dataclass(frozen=True)
class ScreenRead:
    """What the worker keeps of the previous screenshot of a screen: its shape, a digest of each
    pixel row (BLAKE2b, 16 bytes; the pixels themselves are not kept) and the lines read."""

    shape: tuple[int, ...]
    rows: tuple[bytes, ...]
    lines: tuple[ScreenLine, ...]
    blocks: Any = None
    """Digest of each :data:`COLUMN_BLOCK`-pixel block of each row (:func:`_block_digests`, a
    height x blocks ``uint64`` array; 259 KB for a 1080p screen), which columns of a changed row
    changed; ``None``: not known (a changed row is then read across the whole width)."""


@dataclass
class BandStats:
    """What a worker did, summed over its screenshots (for benchmarks and tests)."""

    read: int = 0
    """Bands run through the engine."""
    blank: int = 0
    """Bands of one colour (no text can show): not run through the engine."""
    lines_reused: int = 0
    """Lines taken over from the previous screenshot of the screen (their rows unchanged)."""
    rows_read: int = 0
    """Screen rows whose lines were read (each band's own rows, overlap not counted)."""
    boxes_skipped: int = 0
    """Text boxes the detector found in a band's context rows, not recognised
    (:func:`_recognise_rows`)."""
    columns_read: int = 0
    """Pixels of width the engine was given, summed over the bands run (a band of a whole 1080p
    screen: 1920; a changed strip narrower, :data:`WIDTH_BUCKETS`)."""
    references: int = 0
    """Screenshots read against a kept read other than the newest one of their screen (a window
    switched back to, :data:`READS_PER_SCREEN`)."""
    boxes_joined: int = 0
    """Text boxes read as part of a longer box of their row (:func:`_joined`): recognitions saved."""
    shifts: int = 0
    """Screenshots whose content had moved up or down since the previous one (a terminal printing,
    a page scrolled, :func:`scroll_shift`): the lines moved with it were reused."""


def _row_digests(arr: Any) -> tuple[bytes, ...]:
    return tuple(hashlib.blake2b(row.tobytes(), digest_size=16).digest() for row in arr)


@functools.lru_cache(maxsize=4)
def _block_keys(n: int) -> Any:
    import numpy as np

    rng = np.random.default_rng(0x0C42)  # fixed: digests of two reads must be comparable
    return rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64, endpoint=True) | np.uint64(1)


def _block_digests(arr: Any) -> Any:
    """A ``uint64`` digest of each :data:`COLUMN_BLOCK`-pixel block of each row of ``arr``
    (height x ceil(width / block)): the block's bytes as 64-bit words, each times a fixed odd
    random key, summed modulo 2**64 (a multiply-sum universal hash, Carter and Wegman 1979; numpy,
    about 10 ms for a 1080p screen where BLAKE2b of each block would take a Python call per block).
    Only used to narrow a row whose BLAKE2b digest changed to its changed columns: a change whose
    blocks all collide leaves the row read across the whole width (:func:`_changed_columns`)."""
    import numpy as np

    h, w = int(arr.shape[0]), int(arr.shape[1])
    flat = np.ascontiguousarray(arr).reshape(h, -1)
    c = flat.shape[1] // max(w, 1)
    nb = -(-w // COLUMN_BLOCK)
    width = COLUMN_BLOCK * c
    word = 8 // math.gcd(width, 8)  # blocks padded to whole 64-bit words
    width_padded = -(-width // 8) * 8 if word > 1 else width
    if nb * width != flat.shape[1] or width_padded != width:
        blocks = np.zeros((h, nb, width_padded), np.uint8)
        full = np.zeros((h, nb * width), np.uint8)
        full[:, : flat.shape[1]] = flat
        blocks[:, :, :width] = full.reshape(h, nb, width)
    else:
        blocks = flat.reshape(h, nb, width)
    words = np.ascontiguousarray(blocks).view(np.uint64)
    return (words * _block_keys(words.shape[2])).sum(axis=2, dtype=np.uint64)


def _uniform(band: Any) -> bool:
    first = band.reshape(-1, band.shape[-1])[0] if band.ndim == 3 else band.flat[0]
    return band.size == 0 or bool((band == first).all())


def _recognise_rows(
    engine: Any,
    band: Any,
    lo: float,
    hi: float,
    stats: BandStats | None = None,
    cols: tuple[float, float] | None = None,
) -> Any:
    """``engine(band)`` recognising only the text boxes whose centre row lies in ``lo:hi`` (rows of
    ``band``), and whose centre column lies in ``cols`` (columns of ``band``; ``None``: any): the
    detector's other boxes (the context rows above and below a band and columns beside a strip,
    kept by the caller from the band that holds their centre, or reused) are dropped before the
    recogniser runs.
    With one line per recognition batch (:data:`~proagent.ocr.LEAN_PARAMS`) each kept line reads as
    in a whole call. An engine that is not a RapidOCR object (a stand-in) is called as it is.

    The hook is RapidOCR 3.10's ``detect_and_crop`` (boxes in the detector's frame, mapped back as its
    ``build_final_output`` maps them), replaced on the instance for the one call."""
    det = getattr(engine, "detect_and_crop", None)
    if det is None or not hasattr(engine, "preprocess_img"):
        return engine(band)  # a stand-in: the caller drops what lies outside by each box's centre
    import copy

    import numpy as np
    from rapidocr.utils.process_img import map_boxes_to_original

    h, w = int(band.shape[0]), int(band.shape[1])
    crop = engine.crop_text_regions
    seen: list[Any] = []

    def cropped(img: Any, boxes: Any) -> Any:
        seen[:] = [img]  # the image the detector saw (padded), for the joined boxes' crops
        return crop(img, boxes)

    def kept(img: Any, op_record: dict[str, Any]) -> Any:
        crops, res = det(img, op_record)
        if res.boxes is None or not len(res.boxes):
            return crops, res
        mapped = map_boxes_to_original(copy.deepcopy(np.asarray(res.boxes, dtype=np.float32)), op_record, h, w)
        keep = [
            i
            for i, b in enumerate(mapped)
            if lo <= float(np.mean(b[:, 1])) < hi and (cols is None or cols[0] <= float(np.mean(b[:, 0])) < cols[1])
        ]
        if stats is not None:
            stats.boxes_skipped += len(crops) - len(keep)
        if not keep:  # RapidOCR's own "nothing detected": the call returns no boxes, quietly
            from rapidocr.main import RapidOCRError

            raise RapidOCRError("no text box in the band's own rows")
        if len(keep) < len(crops):
            res.boxes = np.asarray(res.boxes)[keep]
            if res.scores is not None:
                res.scores = [res.scores[i] for i in keep]
            crops = [crops[i] for i in keep]
        return _joined(crops, res, seen[0] if seen else None, crop, stats)

    engine.detect_and_crop = kept
    engine.crop_text_regions = cropped
    try:
        return engine(band)
    finally:
        del engine.detect_and_crop
        del engine.crop_text_regions


REC_HEIGHT, REC_MIN_WIDTH = 48, 320
"""The recogniser's input height and smallest width in pixels (RapidOCR 3.10's ``Rec.rec_img_shape``
``[3, 48, 320]``): every box is scaled to 48 rows and padded to at least 320 columns, so a box of
one short word costs the recogniser as much as a 320-pixel line (36 ms on this machine)."""
JOIN_GAP = 1.0
"""Largest gap, in box heights, between two boxes of one text row that :func:`_joined` reads as
one line (the columns of ``ls -la``, a word the detector split off; a wider gap is two texts).
On three real ``ls -l`` screens of an xterm (``benchmarks/capture.py``'s shell font) 1.0 kept
0.949 of the words of the true listing (2.0: 0.941; no joining: 0.944)."""


def _join_cost(w: float, h: float) -> float:
    return max(float(REC_MIN_WIDTH), w * REC_HEIGHT / max(h, 1.0))


def _joined(crops: list[Any], res: Any, img: Any, crop: Any, stats: BandStats | None) -> tuple[list[Any], Any]:
    """``(crops, res)`` with short boxes of one text row joined into one box each where the joined
    box costs the recogniser less than its parts (:data:`REC_MIN_WIDTH`: a short box is padded to a
    320-pixel line; the joined box holds the real pixels between its parts, read as a space). Boxes
    are of one row when their centres lie within a quarter of the lower one's height and their
    heights differ by at most half; neighbours in a row join when the gap between them is under
    :data:`JOIN_GAP` heights (their unclipped boxes may overlap). Long boxes stay as they are
    (joining them saves nothing), so a line read whole today reads the same; an ``ls -la`` listing
    (about 230 boxes a screen, most one column of one row) is read in about 80 recognitions, its
    recogniser CPU about halved (issue 42 item 2, docs/speed.md). The groups keep the detector's
    reading order of their first box. ``img``: the image the boxes are in (``None``: nothing
    joined); ``crop``: RapidOCR's ``crop_text_regions``."""
    import numpy as np

    boxes = np.asarray(res.boxes, dtype=np.float32)
    if img is None or len(boxes) < 2:
        return crops, res
    ext = [(float(b[:, 0].min()), float(b[:, 1].min()), float(b[:, 0].max()), float(b[:, 1].max())) for b in boxes]
    mid = [(e[1] + e[3]) / 2 for e in ext]
    tall = [e[3] - e[1] for e in ext]
    rows: list[list[int]] = []  # boxes of one text row (centres within a quarter height), top to bottom
    for i in sorted(range(len(boxes)), key=lambda i: (mid[i], ext[i][0])):
        if tall[i] >= 1.5 * (ext[i][2] - ext[i][0]):  # upright (RapidOCR turns such crops): alone
            rows.append([i])
            continue
        for r in reversed(rows[-4:]):
            c, t = sum(mid[j] for j in r) / len(r), min(tall[j] for j in r)
            if (
                len(r)
                and tall[r[0]] < 1.5 * (ext[r[0]][2] - ext[r[0]][0])
                and abs(mid[i] - c) <= 0.25 * min(t, tall[i])
                and max(t, tall[i]) <= 1.5 * min(t, tall[i])
            ):
                r.append(i)
                break
        else:
            rows.append([i])
    groups: list[list[int]] = []
    for r in rows:
        r.sort(key=lambda i: ext[i][0])
        g, span = [r[0]], list(ext[r[0]])
        for i in r[1:]:
            x0, y0, x1, y1 = ext[i]
            hs = max(span[3] - span[1], tall[i])
            near = -0.5 * hs <= x0 - span[2] <= JOIN_GAP * hs
            parts = sum(_join_cost(ext[j][2] - ext[j][0], tall[j]) for j in g) + _join_cost(x1 - x0, tall[i])
            joint = [min(span[0], x0), min(span[1], y0), max(span[2], x1), max(span[3], y1)]
            if near and _join_cost(joint[2] - joint[0], joint[3] - joint[1]) < parts:
                g.append(i)
                span = joint
            else:
                groups.append(g)
                g, span = [i], list(ext[i])
        groups.append(g)
    groups.sort(key=min)  # the detector's reading order of each group's first box
    if len(groups) == len(boxes):
        return crops, res
    out_crops: list[Any] = []
    out_boxes: list[Any] = []
    out_scores: list[float] = []
    scores = list(res.scores) if res.scores is not None else [1.0] * len(boxes)
    for g in groups:
        if len(g) == 1:
            out_crops.append(crops[g[0]])
            out_boxes.append(boxes[g[0]])
            out_scores.append(scores[g[0]])
            continue
        x0 = min(ext[j][0] for j in g)
        y0 = min(ext[j][1] for j in g)
        x1 = max(ext[j][2] for j in g)
        y1 = max(ext[j][3] for j in g)
        box = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float32)
        out_crops.extend(crop(img, [box]))
        out_boxes.append(box)
        out_scores.append(float(min(scores[j] for j in g)))
    if stats is not None:
        stats.boxes_joined += len(boxes) - len(groups)
    res.boxes = np.asarray(out_boxes, dtype=np.float32)
    if res.scores is not None:
        res.scores = out_scores
    return out_crops, res


def _strip_columns(c0: int, c1: int, w: int) -> tuple[int, int]:
    """The columns ``x0:x1`` of a screen ``w`` wide given to the detector for a strip whose lines
    lie in columns ``c0:c1``: the strip with :data:`COLUMN_CONTEXT` pixels either side, widened with
    the screen's own columns to the smallest of :data:`WIDTH_BUCKETS` that holds it; ``(0, w)``
    when none does or that bucket is the screen's width."""
    need = c1 - c0 + 2 * COLUMN_CONTEXT
    bucket = next((b for b in WIDTH_BUCKETS if b >= need), None)
    if bucket is None or bucket >= w:
        return 0, w
    x0 = min(max(0, c0 - COLUMN_CONTEXT - (bucket - need) // 2), w - bucket)
    return x0, x0 + bucket


def _read_span(
    engine: Any,
    arr: Any,
    r0: int,
    r1: int,
    rows: int,
    overlap: int,
    stats: BandStats | None,
    pad: bool = False,
    cols: tuple[int, int] | None = None,
) -> list[ScreenLine]:
    """The lines whose box centre lies in rows ``r0:r1`` (and columns ``cols``, ``None``: any), read
    in bands of ``rows`` rows from ``r0`` (+ ``overlap`` rows of context above and below each; of
    ``cols`` only the columns :func:`_strip_columns` gives), in reading order band by band. ``pad``:
    give the engine every band at the height of a whole band (``rows + 2 * overlap``), padded with
    copies of its last row."""
    import numpy as np

    h, w = int(arr.shape[0]), int(arr.shape[1])
    c0, c1 = cols if cols is not None else (0, w)
    x0, x1 = _strip_columns(c0, c1, w) if cols is not None else (0, w)
    lines: list[ScreenLine] = []
    for top in range(r0, r1, rows):
        end = min(top + rows, r1)
        y0, y1 = max(0, top - overlap), min(h, end + overlap)
        band = np.ascontiguousarray(arr[y0:y1, x0:x1])
        if stats is not None:
            stats.rows_read += end - top
        if _uniform(band):
            if stats is not None:
                stats.blank += 1
            continue
        full = min(h, rows + 2 * overlap)
        if pad and band.shape[0] < full:
            # a changed region's strip, padded to a whole band's height with copies of its last row: the
            # engine sees one shape (strips of new heights raised the worker's peak resident memory
            # from 287 to 333 MB on the typing session; padded, 280 MB)
            band = np.pad(band, [(0, full - band.shape[0])] + [(0, 0)] * (band.ndim - 1), mode="edge")
        whole = (x0, x1) == (0, w) and (c0, c1) == (0, w)
        out: Any = _recognise_rows(engine, band, top - y0, end - y0, stats, None if whole else (c0 - x0, c1 - x0))
        if stats is not None:
            stats.read += 1
            stats.columns_read += x1 - x0
        if out.boxes is None:
            continue
        for box, text, score in zip(out.boxes, out.txts or (), out.scores or ()):
            b = np.asarray(box, dtype=float)
            centre = y0 + float(np.mean(b[:, 1]))
            middle = x0 + float(np.mean(b[:, 0]))
            if top <= centre < end and c0 <= middle < c1 and text and text.strip():
                lines.append(
                    ScreenLine(
                        text,
                        float(score),
                        x0 + float(b[0, 0]),
                        y0 + float(b[0, 1]),
                        y0 + float(b[:, 1].min()),
                        y0 + float(b[:, 1].max()),
                        int(centre // rows),
                        centre,
                        x0 + float(b[:, 0].min()),
                        x0 + float(b[:, 0].max()),
                    )
                )
    return lines


Rect = tuple[int, int, int, int]
"""``(r0, r1, c0, c1)``: rows ``r0:r1`` and columns ``c0:c1`` of a screen."""


def _changed_columns(
    previous: ScreenRead, blocks: Any, changed: list[int], w: int, margin: int
) -> list[tuple[int, int]]:
    """The column ranges of rows ``changed`` (whose row digests differ from ``previous``) whose
    :data:`COLUMN_BLOCK` blocks changed, ``margin`` pixels around them, ranges closer than
    :data:`COLUMN_GAP` blocks joined; the whole width where a row's blocks are not known (no block
    digests, a row that came in with a scroll) or none of them differs (a digest collision)."""
    import numpy as np

    if blocks is None or previous.blocks is None or previous.blocks.shape != blocks.shape:
        return [(0, w)]
    if any(not previous.rows[y] for y in changed):  # a row that came in with a scroll: nothing to compare
        return [(0, w)]
    diff = (blocks[changed] != previous.blocks[changed]).any(axis=0)
    idx = np.flatnonzero(diff)
    if not len(idx):
        return [(0, w)]
    spans: list[list[int]] = []
    for i in idx.tolist():
        if spans and i - spans[-1][1] <= COLUMN_GAP:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    return [(max(0, a * COLUMN_BLOCK - margin), min(w, (b + 1) * COLUMN_BLOCK + margin)) for a, b in spans]


def _meets(ln: ScreenLine, r: Rect, h: int, w: int) -> bool:
    """Whether the box of ``ln`` reaches into ``r``."""
    r0, r1, c0, c1 = r
    return ln.top < r1 and ln.bottom + 1 > r0 and ln.left < c1 and min(ln.right, w) + 1 > c0


def _owns(ln: ScreenLine, r: Rect) -> bool:
    """Whether ``ln`` is one of the lines of ``r``: its centre row in ``r``'s rows and its box
    reaching into ``r``'s columns (read again with ``r``, not reused)."""
    r0, r1, c0, c1 = r
    return r0 <= ln.centre < r1 and ln.left < c1 and ln.right + 1 > c0


def _settle(regions: list[Rect], lines: tuple[ScreenLine, ...], w: int) -> list[Rect]:
    """``regions`` widened sideways until each holds whole every line it owns (:func:`_owns`: a line
    is read whole or reused whole, never cut at a strip's edge), those whose columns overlap and
    whose rows overlap or touch joined (one engine run, not two)."""
    out = list(regions)
    changed = True
    while changed:
        changed = False
        for k, (r0, r1, c0, c1) in enumerate(out):
            lo, hi = c0, c1
            for ln in lines:
                if _owns(ln, (r0, r1, lo, hi)):
                    lo, hi = min(lo, max(0, int(ln.left))), max(hi, min(w, int(math.ceil(min(ln.right, w))) + 1))
            if (lo, hi) != (c0, c1):
                out[k], changed = (r0, r1, lo, hi), True
        merged: list[Rect] = []
        for r in sorted(out):
            for j, m in enumerate(merged):
                if r[0] <= m[1] and m[0] <= r[1] and r[2] < m[3] and m[2] < r[3]:  # rows touch, columns overlap
                    merged[j] = (min(r[0], m[0]), max(r[1], m[1]), min(r[2], m[2]), max(r[3], m[3]))
                    changed = True
                    break
            else:
                merged.append(r)
        out = merged
    return sorted(out)


def _changed_rects(
    previous: ScreenRead, digests: tuple[bytes, ...], h: int, margin: int, w: int | None = None, blocks: Any = None
) -> tuple[list[Rect], list[Rect]]:
    """``(core, regions)``: ``core``, the rows whose digest changed with ``margin`` rows around them,
    cut to the columns that changed in them (:func:`_changed_columns`, with :data:`CHANGE_MARGIN_X`
    pixels around; the whole width ``w`` without ``blocks``); ``regions``, each core rectangle widened to
    the whole boxes of the lines of ``previous`` that reach into it (once downwards: lines of a page
    often touch their neighbours, so widening again would spread over the screen), then sideways
    to whole lines (:func:`_settle`). The regions are read again; a line of ``previous`` clear of
    the core and owned by no region is reused."""
    w = int(previous.shape[1]) if w is None else w
    core_rows: list[list[int]] = []
    for y in range(h):
        if digests[y] != previous.rows[y]:
            a, b = max(0, y - margin), min(h, y + 1 + margin)
            if core_rows and a <= core_rows[-1][1]:
                core_rows[-1][1] = max(core_rows[-1][1], b)
            else:
                core_rows.append([a, b])
    core: list[Rect] = []
    for a, b in core_rows:
        changed = [y for y in range(a, b) if digests[y] != previous.rows[y]]
        core.extend((a, b, c0, c1) for c0, c1 in _changed_columns(previous, blocks, changed, w, CHANGE_MARGIN_X))
    regions: list[Rect] = []
    for r in core:
        r0, r1, c0, c1 = r
        for ln in previous.lines:
            if _meets(ln, r, h, w):
                top, bottom = max(0, int(ln.top)), min(h, int(ln.bottom) + 1)  # a box may reach past the edge
                left, right = max(0, int(ln.left)), min(w, int(math.ceil(min(ln.right, w))) + 1)
                r0, r1, c0, c1 = min(r0, top), max(r1, bottom), min(c0, left), max(c1, right)
        regions.append((r0, r1, c0, c1))
    return core, _settle(regions, previous.lines, w)


MIN_SHIFT_SHARE = 0.3
"""Share of a screen's rows (rows of one colour aside) that must match the previous screenshot's rows
moved by one same offset for :func:`scroll_shift` to take the screen as scrolled."""


def scroll_shift(previous: ScreenRead, digests: tuple[bytes, ...], uniform: frozenset[bytes] = frozenset()) -> int:
    """The vertical offset ``d`` (rows) by which the content of ``previous`` moved up on the new
    screen (row ``y`` now shows what row ``y + d`` showed; a terminal printing output, a page
    scrolled), ``0`` when none: the most common ``d != 0`` among the rows whose digest is unique on
    both screens, when at least :data:`MIN_SHIFT_SHARE` of the new screen's unique rows (``uniform``
    digests, rows of one colour, aside) agree on it."""
    where: dict[bytes, int] = {}
    seen_twice: set[bytes] = set()
    for y, dg in enumerate(previous.rows):
        if dg in where:
            seen_twice.add(dg)
        where[dg] = y
    votes: dict[int, int] = {}
    counted = 0
    repeated = {dg for dg, n in Counter(digests).items() if n > 1}  # blank rows, repeated patterns
    for y, dg in enumerate(digests):
        if dg in uniform or dg in repeated:
            continue
        counted += 1
        if dg in where and dg not in seen_twice:
            d = where[dg] - y
            votes[d] = votes.get(d, 0) + 1
    votes.pop(0, None)
    if not votes or not counted:
        return 0
    d, n = max(votes.items(), key=lambda kv: kv[1])
    return d if n >= MIN_SHIFT_SHARE * counted else 0


def _shifted(previous: ScreenRead, d: int, rows: int) -> ScreenRead:
    """``previous`` as it shows after its content moved up by ``d`` rows: row digests moved (rows
    that came in empty digests, which match nothing), block digests moved with them, lines moved,
    those no longer whole dropped."""
    import numpy as np

    h = len(previous.rows)
    moved = tuple(previous.rows[y + d] if 0 <= y + d < h else b"" for y in range(h))
    blocks = None
    if previous.blocks is not None:
        blocks = np.zeros_like(previous.blocks)
        lo, hi = max(0, -d), min(h, h - d)
        if lo < hi:
            blocks[lo:hi] = previous.blocks[lo + d : hi + d]
    lines = []
    for ln in previous.lines:
        top, bottom = ln.top - d, ln.bottom - d
        if top < 0 or bottom >= h:
            continue
        c = ln.centre - d
        lines.append(ScreenLine(ln.text, ln.score, ln.x, ln.y - d, top, bottom, int(c // rows), c, ln.left, ln.right))
    return ScreenRead(previous.shape, moved, tuple(lines), blocks)


def _aligned(
    previous: ScreenRead, digests: tuple[bytes, ...], blank: frozenset[bytes], rows: int
) -> tuple[ScreenRead, int]:
    """``(reference, d)``: ``previous`` moved by its :func:`scroll_shift` ``d`` (0: unmoved)."""
    d = scroll_shift(previous, digests, blank)
    return (_shifted(previous, d, rows), d) if d else (previous, 0)


def _shared(previous: ScreenRead, digests: tuple[bytes, ...]) -> tuple[int, int]:
    """``(shared, distinct)``: of the rows of ``digests`` whose digest occurs once on that screen
    (not a blank or repeated row, which most screens share), how many have the digest of the same
    row of ``previous``, and how many there are."""
    repeated = {dg for dg, n in Counter(digests).items() if n > 1}
    distinct = [y for y, dg in enumerate(digests) if dg not in repeated]
    return sum(previous.rows[y] == digests[y] for y in distinct), len(distinct)


def read_screen(
    engine: Any,
    arr: Any,
    previous: ScreenRead | list[ScreenRead] | None = None,
    rows: int = BAND_ROWS,
    overlap: int = BAND_OVERLAP,
    margin: int = CHANGE_MARGIN,
    stats: BandStats | None = None,
) -> tuple[list[str], list[float], ScreenRead]:
    """:func:`read_bands` of the RGB array ``arr``, reading again only what changed since
    ``previous`` (the :class:`ScreenRead` of an earlier screenshot of the same screen, same size, or
    a list of them, of which the one sharing the most rows with ``arr``, moved by its
    :func:`scroll_shift`, is taken): the rows whose pixels differ and ``margin`` rows around them,
    cut to the columns that changed in them (:data:`COLUMN_BLOCK` blocks, :data:`CHANGE_MARGIN_X`
    pixels around), widened to the whole lines reaching into them, are read (in bands, with
    ``overlap`` rows and :data:`COLUMN_CONTEXT` columns of context, a strip cut to one of
    :data:`WIDTH_BUCKETS`); every other line is the one read before, where its pixels are the same
    (one a new line covers is dropped). Without ``previous`` (or at another size) the whole screen
    is read band by band, as :func:`read_bands` does. Bands of one colour are not run through the
    engine (no text shows on them). The lines read again have the text of a whole-screen read;
    where a long line lies, the detector may split it at another gap (the context differs).
    Returns the lines (band by band; within a band, new and reused lines merged by their top),
    their confidences and this screenshot's :class:`ScreenRead`.

    On a screen where a person types or a clock ticks, a stored screenshot differs from the previous
    one in a few rows and columns (issue 24: text-aware dedup stores many near-identical screens)."""
    h, w = int(arr.shape[0]), int(arr.shape[1])
    digests = _row_digests(arr)
    blocks = _block_digests(arr)
    shape = tuple(arr.shape)
    candidates = [
        p for p in (previous if isinstance(previous, list) else [previous]) if p is not None and p.shape == shape
    ]
    reference: ScreenRead | None = None
    chosen = len(candidates) - 1
    same = [k for k, p in enumerate(candidates) if p.rows == digests]
    if same:
        chosen = same[-1]
        reference = candidates[chosen]
    elif candidates:
        one_colour = (arr == arr[:, :1]).reshape(h, -1).all(axis=1)  # rows of one colour
        blank = frozenset(dg for dg, flat in zip(digests, one_colour) if flat)
        best, moved = -1, 0
        for k, p in enumerate(candidates):
            aligned, d = _aligned(p, digests, blank, rows)
            score = _shared(aligned, digests)[0]
            if score >= best:  # ties: the most recent
                best, moved, chosen, reference = score, d, k, aligned
        if stats is not None:
            stats.shifts += moved != 0
    if stats is not None and reference is not None and chosen != len(candidates) - 1:
        stats.references += 1
    if reference is None:
        core: list[Rect] = []
        regions: list[Rect] = [(0, h, 0, w)]
        keep: list[ScreenLine] = []
    else:
        core, regions = _changed_rects(reference, digests, h, margin, w, blocks)
        keep = [
            ln
            for ln in reference.lines  # clear of the changed pixels, and not read again with a region
            if not any(_meets(ln, r, h, w) for r in core) and not any(_owns(ln, r) for r in regions)
        ]
    partial = regions != [(0, h, 0, w)]
    new: list[ScreenLine] = []
    for r0, r1, c0, c1 in regions:
        cols = None if (c0, c1) == (0, w) else (c0, c1)
        new.extend(_read_span(engine, arr, r0, r1, rows, overlap, stats, pad=partial, cols=cols))
    if new and keep:  # a line read again whole (the detector joined it to a new word beside it)
        keep = [ln for ln in keep if not any(_overlap(ln, n) for n in new)]
    if stats is not None:
        stats.lines_reused += len(keep)
    ordered: list[ScreenLine] = []
    for band in sorted({ln.band for ln in keep} | {ln.band for ln in new}):
        fresh = [ln for ln in new if ln.band == band]
        kept = [ln for ln in keep if ln.band == band]
        ordered.extend(_reading_order(kept + fresh) if fresh and kept else kept or fresh)
    return (
        [ln.text for ln in ordered],
        [ln.score for ln in ordered],
        ScreenRead(shape, digests, tuple(ordered), blocks),
    )


READING_ROW = 10
"""Pixels between the tops of two boxes below which they are one row of text, read left to right
(RapidOCR 3.10's ``_BOX_SORT_Y_THRESHOLD``, its text detector's ``sorted_boxes``)."""


def _reading_order(lines: list[ScreenLine]) -> list[ScreenLine]:
    """``lines`` in RapidOCR's reading order (its detector's ``sorted_boxes``): by the top of each
    box's first corner, boxes whose tops are less than :data:`READING_ROW` pixels below the one
    before taken as one row, each row left to right. Reused lines and lines read again then come
    in the order a whole read gives them (a clock beside a line, read again, stays after it)."""
    by_y = sorted(lines, key=lambda ln: ln.y)
    row, out, last = 0, [], None
    for ln in by_y:
        if last is not None and ln.y - last >= READING_ROW:
            row += 1
        out.append((row, ln.x, ln))
        last = ln.y
    out.sort(key=lambda t: (t[0], t[1]))
    return [t[2] for t in out]


def _overlap(old: ScreenLine, new: ScreenLine) -> bool:
    """Whether ``new``'s box covers more than half of ``old``'s (the same line read again)."""
    rows = min(old.bottom, new.bottom) - max(old.top, new.top)
    cols = min(old.right, new.right) - max(old.left, new.left)
    area = (old.bottom - old.top) * (min(old.right, 1e9) - old.left)
    return rows > 0 and cols > 0 and rows * cols > 0.5 * area


def read_bands(
    engine: Any, arr: Any, rows: int = BAND_ROWS, overlap: int = BAND_OVERLAP
) -> tuple[list[str], list[float]]:
    """Text lines (top to bottom) and their confidences of the RGB array ``arr`` (height x width x 3),
    read by ``engine`` one horizontal band of ``rows`` rows (+ ``overlap`` above and below) at a time;
    a line belongs to the band holding the centre of its box (bands of one colour are skipped)."""
    txts, scores, _ = read_screen(engine, arr, None, rows, overlap)
    return txts, scores


class OcrEngine:
    """RapidOCR with one onnxruntime thread (bounded CPU) and :data:`~proagent.ocr.LEAN_PARAMS`,
    loaded once; reads a screen band by band (:func:`read_bands`, bounded memory), reading again
    only what changed since the previous screenshot of the same screen (:func:`read_screen`)."""

    def __init__(self, threads: int = 1) -> None:
        self._engine = load_ocr(threads, lean=True)
        self._previous: dict[Any, list[ScreenRead]] = {}  # screen -> its reads, least recently read first
        self._loaded: tuple[Any, Any] | None = None
        self.stats = BandStats()
        """Bands read and blank, lines reused and rows read so far."""

    def read(
        self, path: Path, screen: Any = None, region: tuple[int, int, int, int] | None = None
    ) -> tuple[str, float | None]:
        """``(text, mean confidence)`` of the image at ``path`` (empty text, ``None`` when none).
        ``screen``: the screen it shows (``screenshots.screen_id``); the lines of the kept read of
        the same screen at the same size (a window's region) sharing the most rows with it
        (:data:`READS_PER_SCREEN`) are reused where their pixels are unchanged (:func:`read_screen`). ``region``: ``(x, y, width, height)`` of the part to read (the
        focused window, ``screenshots.ocr_region``), clipped to the image; ``None``: all of it.
        A region whose pixels are those of the previous read of the screen costs the row digests
        only: every line is reused.

        Raises:
            OSError, ValueError: the file is missing or not a readable image (the previous
                screenshot kept for the screen is then unchanged).
        """
        arr = self._load(path, region)
        self._loaded = None
        kept = self._previous.pop(screen, [])
        txts, scores, read = read_screen(self._engine, arr, kept, stats=self.stats)
        kept = [p for p in kept if not _supersedes(read, p)]
        kept.append(read)
        self._previous[screen] = kept[-READS_PER_SCREEN:]
        while len(self._previous) > KEPT_READS:
            self._previous.pop(next(iter(self._previous)))  # the least recently read screen
        return "\n".join(txts), (sum(scores) / len(scores) if scores else None)

    def _load(self, path: Path, region: tuple[int, int, int, int] | None) -> Any:
        """The RGB array of ``path`` cut to ``region`` (+ :data:`REGION_MARGIN`), kept for the next
        call with the same arguments (:meth:`needs_engine` then :meth:`read` decode once)."""
        import numpy as np

        if self._loaded is not None and self._loaded[0] == (path, region):
            return self._loaded[1]
        arr = _decode(path)
        if region is not None:
            x, y, w, h = region
            m = REGION_MARGIN
            crop = arr[max(0, y - m) : max(0, y + h + m), max(0, x) : max(0, x + w)]
            if crop.shape[0] and crop.shape[1]:  # the columns beside: its edge columns repeated
                arr = np.ascontiguousarray(np.pad(crop, [(0, 0), (m, m), (0, 0)], mode="edge"))
        self._loaded = ((path, region), arr)
        return arr

    def needs_engine(self, path: Path, screen: Any = None, region: tuple[int, int, int, int] | None = None) -> bool:
        """Whether :meth:`read` of these arguments would run the engine: ``False`` when the part read
        has the shape and every pixel row of a kept read of ``screen`` (its lines are reused).

        Raises:
            OSError, ValueError: as :meth:`read`.
        """
        arr = self._load(path, region)
        shape = tuple(arr.shape)
        kept = [p for p in self._previous.get(screen, []) if p.shape == shape]
        if not kept:
            return True
        digests = _row_digests(arr)
        return not any(p.rows == digests for p in kept)


def _supersedes(read: ScreenRead, kept: ScreenRead) -> bool:
    """Whether ``read`` takes the place of ``kept`` among a screen's kept reads: the same size, and
    at least half of its rows that are not blank or repeated are those of ``kept`` (the same window,
    a line typed since)."""
    if read.shape != kept.shape:
        return False
    shared, distinct = _shared(kept, read.rows)
    return distinct > 0 and 2 * shared >= distinct


def _decode(path: Path) -> Any:
    """The RGB array (height x width x 3, uint8) of the screenshot at ``path``, decrypted in memory
    in an encrypted capture. OpenCV's decoder (a dependency of RapidOCR) where it is installed: on a
    1080p PNG screenshot it took 10 ms of CPU beside Pillow's 25 ms (``benchmarks/capture.py``: the
    worker decodes every stored screenshot to compare its region's rows); Pillow otherwise.

    Raises:
        OSError, ValueError: the file is missing or not a readable image.
    """
    import numpy as np

    from ..vault import open_image, read_file

    try:
        import cv2
    except ImportError:
        with open_image(path) as im:  # decrypted in memory in an encrypted capture
            return np.asarray(im.convert("RGB"))
    data = read_file(path)  # decrypted when encrypted
    arr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR_RGB)
    if arr is None:
        raise ValueError(f"{Path(path).name}: not a readable image")
    return arr


def _has_region(con: sqlite3.Connection) -> bool:
    return "ocr_region" in {r[1] for r in con.execute('PRAGMA table_info("screenshots")')}


def ocr_pending(
    con: sqlite3.Connection,
    engine: OcrEngine,
    shots_dir: Path,
    *,
    newest_first: bool = True,
    engine_ready: bool = True,
) -> bool | None:
    """OCR one unprocessed screenshot; False when none is waiting; ``None`` when ``engine_ready``
    is False and that screenshot would run the engine (:meth:`OcrEngine.needs_engine`: nothing
    read, it waits for the rate limit).

    ``newest_first`` (the default): the newest one, so that the text of what the person looks at
    now is there first and a backlog is read after, newest to oldest (capture stores a screenshot
    only when its screen changed: the newest is the screen as it is); ``False``: the oldest. Where
    the row has an ``ocr_region`` (:data:`~._store.OCR_REGION_COLUMN`) only that part is read."""
    region_col = "ocr_region" if _has_region(con) else "NULL"
    row = con.execute(
        f"SELECT id, file_path, screen_id, {region_col} FROM screenshots WHERE {PENDING_WHERE} "
        f"ORDER BY id {'DESC' if newest_first else 'ASC'} LIMIT 1"
    ).fetchone()
    if row is None:
        return False
    sid, file_path = int(row[0]), str(row[1])
    path = shots_dir / Path(file_path).name
    region = parse_region(row[3])
    t0 = time.perf_counter()
    if not engine_ready:
        try:
            if engine.needs_engine(path, screen=row[2], region=region):
                return None
        except (OSError, ValueError):
            pass  # read below: recorded as unreadable
    try:
        text, conf = engine.read(path, screen=row[2], region=region)
        ok = True
    except (OSError, ValueError):  # file removed by retention meanwhile, or unreadable
        text, conf, ok = "", None, False
    took = time.perf_counter() - t0
    now = datetime.now().strftime("%Y-%m-%d %H:%M:%S.%f")
    con.execute("BEGIN IMMEDIATE")
    try:
        if ok:
            con.execute(
                "INSERT INTO ocr_results (screenshot_id, text_content, confidence, language, processing_time, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (sid, text, conf, OCR_LANGUAGE, took, now),
            )
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


REUSE_GAP = 0.05
"""Seconds the worker waits after a screenshot it read without running the engine (its region's
rows unchanged since the previous read, or one colour): the rate limit (``min_interval``) bounds
the engine's CPU, and such a read costs the image's decoding and row digests only (a browser page
that changes beside a still terminal stores a screenshot a second, each read at once)."""


def run_worker(db: Path, *, min_interval: float = 2.0, parent: int | None = None, threads: int = 1) -> None:
    """Process screenshots of ``db`` until SIGTERM, or until the process ``parent`` is no longer this
    one's parent (see the module docstring)."""
    if parent is not None:
        exit_when_orphaned(parent)  # first: the engine's load and each OCR pass take seconds
    return_freed_memory()  # before the models load
    stop = finish = False

    def _term(*_: object) -> None:
        nonlocal stop
        stop = True

    def _finish(*_: object) -> None:
        nonlocal finish
        finish = True

    signal.signal(signal.SIGTERM, _term)
    if FINISH_SIGNAL is not None:
        signal.signal(FINISH_SIGNAL, _finish)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the recorder, which stops us
    engine = OcrEngine(threads)
    con = connect(db)
    shots = db.parent / SHOTS_DIR
    next_engine = 0.0  # monotonic time from which the engine may run again (the rate limit)
    try:
        while not stop:
            t0 = time.monotonic()
            passes = engine.stats.read
            did = ocr_pending(con, engine, shots, engine_ready=finish or t0 >= next_engine)
            if finish:  # the recorder stops: no rate limit, and done once nothing waits
                if did is False:
                    break
                continue  # None: it came while that screenshot waited for the rate limit
            if did is None:  # the newest screenshot needs the engine: wait for the rate limit (not
                wait = next_engine - t0  # polling newer ones meanwhile: each check decodes an image)
            elif did:
                if engine.stats.read > passes:
                    next_engine = t0 + min_interval
                wait = REUSE_GAP
            else:
                wait = max(min(min_interval, 1.0), REUSE_GAP)
            end = time.monotonic() + wait
            while not stop and not finish and time.monotonic() < end:
                time.sleep(min(0.5, max(end - time.monotonic(), 0.0)))
    finally:
        con.close()


OCR_NICENESS = 10
"""How much the OCR child lowers its own scheduling priority (``os.nice``): its reading is
background work that may wait, while the person's programs, live's own read of the window in front
at Accept and the model writing the answer may not (issue 42: on 2 cores the backlog OCR ran at the
same priority as the answer it delayed). Desktop indexers do the same (GNOME's Tracker and KDE's
Baloo run their extractors at the lowest CPU priority). Its CPU time is unchanged; on an idle
machine it reads as fast as before."""


def lower_priority(niceness: int = OCR_NICENESS) -> int:
    """Lower this process's CPU priority by ``niceness`` (POSIX ``nice``); returns the niceness now,
    or 0 where the platform has none (Windows) or refuses (never raises)."""
    try:
        return os.nice(niceness)
    except (AttributeError, OSError):
        return 0


def main(argv: list[str] | None = None) -> None:
    """``python -m proagent.capture._ocr DB [--min-interval S] [--parent PID]``, at
    :data:`OCR_NICENESS` below the recorder's priority."""
    ap = argparse.ArgumentParser(prog="proagent-capture-ocr")
    ap.add_argument("db", type=Path)
    ap.add_argument("--min-interval", type=float, default=2.0)
    ap.add_argument("--parent", type=int, default=None)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args(argv)
    lower_priority()
    try:
        run_worker(a.db, min_interval=a.min_interval, parent=a.parent, threads=a.threads)
    except KeyboardInterrupt:
        pass
    except sqlite3.DatabaseError as e:
        print(f"capture OCR worker: {a.db}: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
