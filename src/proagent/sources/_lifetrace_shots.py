"""Screenshot rows of a LifeTrace database kept as columns, made into
:class:`~proagent.records.Screenshot` records only when an event's screenshots are used.

A 1 Hz log holds about 15 screenshot rows per event; most uses of an event need only
how many it has (the valid-event rule) or the last one. One Python record per row
made reading a 1M-row database slow and large, so the reader
(:mod:`proagent.sources.lifetrace`) keeps the rows here instead: ids, sizes and
flags in arrays, file names and capture times in one string per chunk of 16384 rows,
SHA-256 hashes as bytes, app names and titles shared (about 300 MB for 1M rows). Each event gets a :class:`LazyScreenshots` over its
rows, which builds the records on first use, exactly as the per-row reader does.

The column reader takes a database only when every row it reads has the shape
LifeTrace writes (integer ids, times as ``YYYY-MM-DD HH:MM:SS.ffffff`` or
``str(datetime)``, 0/1 flags, text columns, valid UTF-8); :func:`read_columns` returns ``None`` otherwise and the reader falls
back to one record per row, which applies every rule of the module docstring of
:mod:`proagent.sources.lifetrace`. Both give equal events.
"""

from __future__ import annotations

import operator
import sqlite3
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from itertools import accumulate, repeat
from pathlib import Path
from typing import Any

from ..records import Screenshot
from ._lifetrace_values import EARLIEST, LATEST, cell_text
from .lifetrace_schema import SchemaInfo

__all__ = ["LazyScreenshots", "ScreenshotColumns", "read_columns"]

_NONE = -(2**63)
"""NULL, in the integer columns (``event_id``, ``width``, ``height``)."""
_SHIFT = 14
_CHUNK = 1 << _SHIFT
WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""What ``str.strip`` removes (every character whose ``isspace()`` is true), for SQLite's ``trim``."""
_DELETED = "(deleted_at IS NOT NULL AND trim(deleted_at, :ws) <> '')"


class _OtherShape(Exception):
    """A row the column reader does not take (the per-row reader reads the database)."""


class _Unordered(Exception):
    """Rows not in (event id, time, row id) order: read them again sorted by SQLite."""


def _packed(texts: tuple[str, ...] | list[str]) -> tuple[str, array]:
    """Texts as one string and their offsets in it."""
    return "".join(texts), array("q", accumulate(map(len, texts), initial=0))


def _unpacked(packed: tuple[str, array], j: int) -> str:
    text, offsets = packed
    return text[offsets[j] : offsets[j + 1]]


class ScreenshotColumns:
    """The kept screenshot rows of one database, ordered by (event id, time, row id)."""

    def __init__(self, *, want_dirs: bool = False) -> None:
        self.ids = array("q")
        self.event_ids = array("q")
        self._times: list[tuple[str, array]] = []
        self.widths = array("q")
        self.heights = array("q")
        self.file_deleted = bytearray()
        self.focused = bytearray()
        """Per row: 1 focused screen, 0 another screen, 2 not recorded (NULL or no column)."""
        self.apps: list[str | None] = []
        self.titles: list[str | None] = []
        self._names: list[tuple[str, array]] = []
        self._hashes: list[bytes | tuple[str | None, ...]] = []
        self._shared: dict[str | None, str | None] = {}
        self._last: tuple | None = None
        self.ocr: Mapping[int, str] = {}
        """Screenshot id -> its OCR text."""
        self.index: Mapping[str, Path] = {}
        """File name -> local file."""
        self.dirs: set[str] | None = set() if want_dirs else None
        """Capture-side folders named by ``file_path`` (with their trailing separator), when wanted."""

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, rows: list[tuple]) -> None:
        """Append one chunk of rows (at most ``_CHUNK``) as read by :func:`read_columns`.

        Raises:
            _OtherShape: a row has another shape than LifeTrace writes.
        """
        ids, eids, times, paths, apps, titles, widths, heights, hashes, deleted, focused = zip(*rows)
        try:
            stamps = list(map(datetime.fromisoformat, times))
            if _as_written(stamps, times) is None or min(stamps) < EARLIEST or max(stamps) >= LATEST:
                raise _OtherShape  # not as LifeTrace writes them: the per-row reader's rules apply
            keys = list(zip(eids, stamps, ids))
            if keys != sorted(keys) or (self._last is not None and keys[0] < self._last):
                raise _Unordered
            self._last = keys[-1]
            if not set(deleted) <= {0, 1} or not set(focused) <= {0, 1, 2}:
                raise _OtherShape
            names, dirs = _file_names(paths)
            self.ids.extend(ids)
            self.event_ids.extend(eids)
            self.widths.extend(widths)
            self.heights.extend(heights)
        except (TypeError, ValueError, AttributeError):
            raise _OtherShape from None
        self.file_deleted.extend(deleted)
        self.focused.extend(focused)
        self._times.append(_packed(times))
        self.apps.extend(map(self._shared.setdefault, apps, apps))
        self.titles.extend(map(self._shared.setdefault, titles, titles))
        self._names.append(_packed(names))
        if self.dirs is not None:
            self.dirs.update(dirs)
        self._hashes.append(_packed_hashes(hashes))

    def name(self, k: int) -> str:
        """File name of row ``k``."""
        return _unpacked(self._names[k >> _SHIFT], k & (_CHUNK - 1))

    def _hash(self, k: int) -> str | None:
        chunk = self._hashes[k >> _SHIFT]
        j = k & (_CHUNK - 1)
        if isinstance(chunk, bytes):
            return chunk[32 * j : 32 * j + 32].hex()
        return cell_text(chunk[j]) or None

    def span(self, event_id: int) -> tuple[int, int]:
        """Rows ``[lo, hi)`` of one event."""
        return bisect_left(self.event_ids, event_id), bisect_right(self.event_ids, event_id)

    def missing(self, lo: int, hi: int) -> int:
        """Rows in ``[lo, hi)`` whose file is not found locally (or was deleted on purpose)."""
        if not self.index:
            return hi - lo
        return sum(1 for k in range(lo, hi) if self.file_deleted[k] or not (n := self.name(k)) or n not in self.index)

    def screenshot(self, k: int) -> Screenshot:
        """The record of row ``k``, as the per-row reader makes it."""
        name, rid, w, h = self.name(k), self.ids[k], self.widths[k], self.heights[k]
        return Screenshot(
            id=rid,
            time=datetime.fromisoformat(_unpacked(self._times[k >> _SHIFT], k & (_CHUNK - 1))),
            app_name=cell_text(self.apps[k]),
            window_title=cell_text(self.titles[k]),
            file_name=name,
            path=None if (self.file_deleted[k] or not name) else self.index.get(name),
            ocr_text=self.ocr.get(rid, ""),
            width=None if w == _NONE else w,
            height=None if h == _NONE else h,
            file_hash=self._hash(k),
            focused=None if self.focused[k] == 2 else bool(self.focused[k]),
        )


def _as_written(stamps: list[datetime], texts: tuple[str, ...]) -> bool | None:
    """Whether each text is its time as LifeTrace's SQLAlchemy writes it
    (``YYYY-MM-DD HH:MM:SS.ffffff``) or as ``str(datetime)`` does (the same without
    ``.000000``), so the per-row reader parses it to the same time: ``True`` when all
    are written one of these ways (then their text order is their time order),
    ``False`` when both ways occur, ``None`` when a text is written otherwise."""
    texts_ = list(texts)
    if list(map(datetime.isoformat, stamps, repeat(" "), repeat("microseconds"))) == texts_:
        return True
    short = list(map(str, stamps))
    if short == texts_:
        return True
    full = map(datetime.isoformat, stamps, repeat(" "), repeat("microseconds"))
    return False if all(t == a or t == b for t, a, b in zip(texts_, full, short)) else None


def _file_names(paths: tuple[str | None, ...]) -> tuple[list[str], set[str]]:
    """File names of capture-side paths (``proagent.sources._lifetrace_values.file_name_of``
    of the stripped text) and their folders (with the trailing separator)."""
    if None not in paths:
        stripped = list(map(str.strip, paths))
        first = stripped[0] if stripped else ""
        cut = max(first.rfind("/"), first.rfind("\\")) + 1
        folder = first[:cut]
        if all(map(str.startswith, stripped, repeat(folder))):  # one folder: the usual case, without a loop
            names = list(map(operator.getitem, stripped, repeat(slice(cut, None))))
            joined = "".join(names)
            if "/" not in joined and "\\" not in joined:
                return names, {folder} if folder else set()
    stripped = [p.strip() if p else "" for p in paths]
    cuts = [max(p.rfind("/"), p.rfind("\\")) + 1 for p in stripped]
    return [p[c:] for p, c in zip(stripped, cuts)], {p[:c] for p, c in zip(stripped, cuts) if c}


def _packed_hashes(hashes: tuple[str | None, ...]) -> bytes | tuple[str | None, ...]:
    """A chunk's SHA-256 hex texts as 32 bytes each when every one is 64 lowercase hex digits."""
    if None in hashes or set(map(len, hashes)) != {64}:
        return hashes
    text = "".join(hashes)  # type: ignore[arg-type]
    if text != text.lower():
        return hashes
    try:
        packed = bytes.fromhex(text)
    except ValueError:
        return hashes
    return packed if len(packed) == 32 * len(hashes) else hashes


class LazyScreenshots(Sequence[Screenshot]):
    """One event's screenshots, oldest first: a read-only sequence whose length needs no
    records; the records are made on first access and kept. Equal to the tuple of the
    same records (and hashes like it); pickles and copies as that tuple."""

    __slots__ = ("_cols", "_hi", "_items", "_lo")

    def __init__(self, cols: ScreenshotColumns, lo: int, hi: int) -> None:
        self._cols, self._lo, self._hi = cols, lo, hi
        self._items: tuple[Screenshot, ...] | None = None

    def _all(self) -> tuple[Screenshot, ...]:
        if self._items is None:
            self._items = tuple(self._cols.screenshot(k) for k in range(self._lo, self._hi))
        return self._items

    def __len__(self) -> int:
        return self._hi - self._lo

    def __getitem__(self, i: Any) -> Any:
        return self._all()[i]

    def __iter__(self) -> Iterator[Screenshot]:
        return iter(self._all())

    def __reversed__(self) -> Iterator[Screenshot]:
        return reversed(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyScreenshots):
            other = other._all()
        return self._all() == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return repr(self._all())

    def __reduce__(self) -> tuple:
        return (tuple, (self._all(),))


def read_columns(
    conn: sqlite3.Connection, schema: SchemaInfo, min_event_id: int | None = None, *, want_dirs: bool = False
) -> tuple[ScreenshotColumns, list[str]] | None:
    """Read the screenshot rows (of events with id >= ``min_event_id`` when given) into
    columns, or ``None`` when a row has another shape than LifeTrace writes (see the
    module docstring) or text that is not UTF-8: then the per-row reader reads them.

    Args:
        want_dirs: also collect the folders named by ``file_path``
            (:attr:`ScreenshotColumns.dirs`).

    Returns:
        ``(columns of the rows not soft-deleted, file_path of each soft-deleted row)``.
    """
    cols = schema.screenshot_columns
    params: dict[str, Any] = {"ws": WHITESPACE, "min": min_event_id}
    where = "" if min_event_id is None else " AND event_id >= :min"
    deleted = _DELETED if "deleted_at" in cols else "0"
    opt = {c: (c if c in cols else "NULL") for c in ("app_name", "window_title", "file_hash")}
    size = {c: (f"coalesce({c}, {_NONE})" if c in cols else str(_NONE)) for c in ("width", "height")}
    file_deleted = "coalesce(file_deleted, 0)" if "file_deleted" in cols else "0"
    focused = "coalesce(focused, 2)" if "focused" in cols else "2"  # proagent capture's column; 2: not recorded
    sql = (
        f"SELECT id, coalesce(event_id, {_NONE}) AS eid, created_at, file_path, {opt['app_name']}, "
        f"{opt['window_title']}, {size['width']}, {size['height']}, {opt['file_hash']}, {file_deleted}, {focused} "
        f'FROM "screenshots" WHERE NOT {deleted}{where}'
    )
    factory = conn.text_factory
    conn.text_factory = str
    try:
        if conn.execute("SELECT count(*) FROM \"events\" WHERE typeof(id) <> 'integer'").fetchone()[0]:
            return None
        # rows are usually stored in time order, one event after another: sort only when they are not
        for order in ("", " ORDER BY eid, created_at, id"):
            out = ScreenshotColumns(want_dirs=want_dirs)
            cur = conn.execute(sql + order, params)
            try:
                while rows := cur.fetchmany(_CHUNK):
                    out.add(rows)
                break
            except _Unordered:
                if order:
                    return None  # equal times written two ways: the per-row reader orders them
        gone = [r[0] for r in conn.execute(f'SELECT file_path FROM "screenshots" WHERE {deleted}{where}', params)]
    except (_OtherShape, sqlite3.OperationalError):  # OperationalError: text that is not UTF-8 (decoded with
        return None  # replacement by the per-row reader)
    finally:
        conn.text_factory = factory
    return out, gone
