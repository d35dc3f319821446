"""External annotations of LifeTrace / ProAgentBench events (ProAgentBench section 5.3, Appendix B.5).

ProAgentBench keeps some labels outside the processed databases, in JSON or
JSONL files keyed by ``(user, event_id)``:

* ``user_intention`` (the How-to-Assist intention category), with an optional
  ``confidence`` (0-1) and ``rationale``;
* ``llm_platform`` (e.g. ``ChatGPT``, ``豆包``);
* exclusion lists: events that must not be used, each with a reason.

The loader is liberal in what it accepts, because the files come from several
hands:

* Record keys: the user as ``user``, ``user_id``, ``participant``,
  ``participant_id`` or ``uid``; the event as ``event_id``, ``id``, ``eid`` or
  ``event``; the intention as ``user_intention``, ``intention``,
  ``intention_category`` or ``category`` (a string, or an object with
  ``category``/``intention``/``name``/``label`` and optional ``confidence`` and
  ``rationale``); the confidence as ``confidence``, ``intention_confidence`` or
  ``user_intention_confidence`` (a number 0-1 or a string such as ``"0.8"`` or
  ``"80%"``); the rationale as ``rationale``, ``intention_rationale``,
  ``reasoning`` or ``explanation``; the platform as ``llm_platform``,
  ``platform`` or ``llm``. A record is an exclusion when it carries
  ``excluded``/``exclude``/``is_excluded`` set to true (or to a reason string)
  or sits in an exclusion list; its reason is ``exclusion_reason``,
  ``exclude_reason``, ``excluded_reason`` or (in an exclusion list, or next to
  an exclusion flag) ``reason``.
* Layouts: JSONL (one record per line); a JSON list of records; a single JSON
  record; ``{user: {event_id: record-or-intention-string}}``;
  ``{user: [records]}``; ``{event_id: record}`` (a record-like object under a
  key is taken as that event's record); ``{"annotations": [...]}`` (also ``records``,
  ``events``, ``items``, ``data``); and exclusion containers under
  ``excluded``/``exclusions``/``exclude``/``excluded_events``, holding a list of
  records, a list of event ids (within a user), ``{user: [event_ids]}``,
  ``{user: {event_id: reason}}`` or ``{event_id: reason}`` (within a user).
  These nest: a user's block may hold its own ``excluded`` list.
  Scalar values at the top level of a JSON object (``version``, ``source``...)
  are metadata and ignored.

Keys are normalised: users are compared stripped and case-folded; event ids as
text, with integral numbers written without a fraction (``12``, ``12.0`` and
``"12"`` are the same event). A record without a user applies to every user
(for per-participant files that omit it); a record for the exact user wins over
such a wildcard record. When several records share a key, later ones (later
lines, later files) override earlier ones field by field; a ``None`` never
overrides a value.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..taxonomy import load_taxonomy
from ._jsonl import jsonl_values

__all__ = ["Annotation", "Annotations", "load_annotations", "normalise_event_id", "normalise_user"]

USER_KEYS = ("user", "user_id", "participant", "participant_id", "uid")
EVENT_KEYS = ("event_id", "id", "eid", "event")
INTENTION_KEYS = ("user_intention", "intention", "intention_category", "category")
INTENTION_SUBKEYS = ("category", "intention", "name", "label", "value")
CONFIDENCE_KEYS = ("confidence", "intention_confidence", "user_intention_confidence")
RATIONALE_KEYS = ("rationale", "intention_rationale", "reasoning", "explanation")
PLATFORM_KEYS = ("llm_platform", "platform", "llm")
EXCLUDE_FLAG_KEYS = ("excluded", "exclude", "is_excluded")
EXCLUDE_REASON_KEYS = ("exclusion_reason", "exclude_reason", "excluded_reason")
ANNOTATION_CONTAINERS = ("annotations", "records", "events", "items", "data")
EXCLUDE_CONTAINERS = ("excluded", "exclusions", "exclude", "excluded_events")

DEFAULT_EXCLUSION_REASON = "excluded (no reason given)"
"""Reason reported for an exclusion whose file gives none."""


def normalise_user(user: object) -> str:
    """Key form of a user id: text, stripped, case-folded."""
    return str(user).strip().casefold()


def normalise_event_id(event_id: object) -> str:
    """Key form of an event id: text, stripped; integral numbers without a
    fraction (``12.0`` -> ``"12"``).

    Raises:
        ValueError: the id is empty, a boolean, or a non-integral number.
    """
    if isinstance(event_id, bool) or event_id is None:
        raise ValueError(f"bad event id {event_id!r}")
    if isinstance(event_id, float):
        if not math.isfinite(event_id) or event_id != int(event_id):
            raise ValueError(f"bad event id {event_id!r}")
        return str(int(event_id))
    if isinstance(event_id, int):
        return str(event_id)
    if not isinstance(event_id, str):
        raise ValueError(f"bad event id {event_id!r}")
    text = event_id.strip()
    if not text:
        raise ValueError("empty event id")
    m = re.fullmatch(r"[+-]?\d+(?:\.0*)?", text)
    if m:
        return str(int(float(text))) if "." in text else str(int(text))
    return text


@dataclass(frozen=True)
class Annotation:
    """Everything the annotation files say about one event."""

    user: str | None
    """User the record is for, as written; ``None`` when the record names no
    user (it then applies to every user)."""
    event_id: str
    """Event id, normalised (see :func:`normalise_event_id`)."""
    intention: str | None = None
    """Intention as annotated (raw text, not yet mapped to the taxonomy)."""
    confidence: float | None = None
    """Annotator confidence in ``intention``, 0-1."""
    rationale: str = ""
    """Why the annotator chose ``intention`` (may be empty)."""
    llm_platform: str | None = None
    """LLM product used in the event (e.g. ``ChatGPT``)."""
    excluded: str | None = None
    """Exclusion reason when the event must not be used, else ``None``."""
    source: str = ""
    """Where the record came from (``file:line`` or ``file:$path``); several
    sources are joined with ``; ``."""

    def merged(self, later: Annotation) -> Annotation:
        """Combine with a later record for the same key: the later record's
        non-empty fields win."""
        return Annotation(
            user=self.user if self.user is not None else later.user,
            event_id=self.event_id,
            intention=later.intention if later.intention is not None else self.intention,
            confidence=later.confidence if later.confidence is not None else self.confidence,
            rationale=later.rationale or self.rationale,
            llm_platform=later.llm_platform if later.llm_platform is not None else self.llm_platform,
            excluded=later.excluded if later.excluded is not None else self.excluded,
            source="; ".join(s for s in (self.source, later.source) if s),
        )


class Annotations:
    """Annotations indexed by ``(user, event_id)``.

    Look-ups normalise both parts (see the module docstring); a record for the
    exact user is preferred, else a record that names no user.
    """

    def __init__(self, records: Iterable[Annotation] = ()) -> None:
        self._by_key: dict[tuple[str | None, str], Annotation] = {}
        for rec in records:
            self.add(rec)

    def add(self, record: Annotation) -> None:
        """Add one record, merging with an earlier one for the same key."""
        key = (None if record.user is None else normalise_user(record.user), record.event_id)
        old = self._by_key.get(key)
        self._by_key[key] = record if old is None else old.merged(record)

    def update(self, other: Annotations) -> None:
        """Add every record of ``other`` (its records override this one's)."""
        for rec in other:
            self.add(rec)

    def get(self, user: str, event_id: object) -> Annotation | None:
        """The annotation of one event, or ``None`` when there is none."""
        try:
            eid = normalise_event_id(event_id)
        except ValueError:
            return None
        exact = self._by_key.get((normalise_user(user), eid))
        wild = self._by_key.get((None, eid))
        if exact is not None and wild is not None:
            return wild.merged(exact)
        return exact if exact is not None else wild

    def excluded(self, user: str, event_id: object) -> str | None:
        """The exclusion reason of one event, or ``None`` when it is not excluded."""
        ann = self.get(user, event_id)
        return None if ann is None else ann.excluded

    @property
    def users(self) -> tuple[str, ...]:
        """Users named by the records (as first written), sorted."""
        seen: dict[str, str] = {}
        for rec in self._by_key.values():
            if rec.user is not None:
                seen.setdefault(normalise_user(rec.user), rec.user)
        return tuple(sorted(seen.values()))

    def for_user(self, user: str) -> dict[str, Annotation]:
        """All annotations that apply to ``user``, by event id."""
        u = normalise_user(user)
        out: dict[str, Annotation] = {}
        for (k_user, eid), rec in self._by_key.items():
            if k_user is None or k_user == u:
                got = self.get(user, eid)
                if got is not None:
                    out[eid] = got
        return out

    def __iter__(self) -> Iterator[Annotation]:
        return iter(self._by_key.values())

    def __len__(self) -> int:
        return len(self._by_key)

    def __repr__(self) -> str:
        n_ex = sum(1 for r in self if r.excluded is not None)
        return f"Annotations({len(self)} records, {n_ex} exclusions)"


# --------------------------------------------------------------------------- parsing


@dataclass(frozen=True)
class _At:
    """A location inside one annotation file: its line (JSONL) and JSON path."""

    path: Path
    line: int | None
    at: str = "$"

    def sub(self, step: str) -> _At:
        return _At(self.path, self.line, self.at + step)

    @property
    def source(self) -> str:
        """``file:line:$path`` (JSONL) or ``file:$path``, for ``Annotation.source``."""
        return f"{self.path.name}:{self.line}:{self.at}" if self.line is not None else f"{self.path.name}:{self.at}"

    def error(self, problem: str) -> DataError:
        line = f"line {self.line}: " if self.line is not None else ""
        return DataError(self.path, f"{line}{self.at}: {problem}")


def _first(d: dict[str, Any], keys: tuple[str, ...]) -> tuple[str | None, Any]:
    for k in keys:
        if k in d and d[k] is not None:
            return k, d[k]
    return None, None


def _optional_text(value: Any, where: _At, field: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, (dict, list, bool)):
        raise where.error(f"{field} must be text, got {type(value).__name__}")
    text = str(value).strip()
    return text or None


def _confidence(value: Any, where: _At) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise where.error(f"confidence must be a number 0-1, got {value!r}")
    try:
        if isinstance(value, str):
            s = value.strip()
            conf = float(s[:-1]) / 100.0 if s.endswith("%") else float(s)
        elif isinstance(value, (int, float)):
            conf = float(value)
        else:
            raise ValueError
    except ValueError:
        raise where.error(f"confidence must be a number 0-1, got {value!r}") from None
    if not (0.0 <= conf <= 1.0):
        raise where.error(f"confidence {value!r} is outside 0-1")
    return conf


def _exclusion_flag(record: dict[str, Any], where: _At) -> str | None:
    """Reason when the record is flagged excluded, else None."""
    _, reason = _first(record, EXCLUDE_REASON_KEYS)
    _, flag = _first(record, EXCLUDE_FLAG_KEYS)
    if isinstance(flag, str):
        s = flag.strip()
        if s.casefold() in ("false", "no", "0", ""):
            return None
        if s.casefold() not in ("true", "yes", "1"):
            reason = reason or s  # "excluded": "<reason>"
    elif flag is None or flag is False or (type(flag) is int and flag == 0):
        return None
    elif not (flag is True or (type(flag) is int and flag == 1)):
        raise where.error(f"excluded must be true/false or a reason, got {flag!r}")
    if reason is None:
        reason = record.get("reason")
    return _optional_text(reason, where, "reason") or DEFAULT_EXCLUSION_REASON


def _record(
    raw: Any,
    where: _At,
    *,
    user: str | None,
    event_id: Any = None,
    exclusion: bool = False,
) -> Annotation:
    """One record from an object (or, with a known event id, a bare string:
    an intention, or in an exclusion list a reason)."""
    if not isinstance(raw, dict) and event_id is not None:
        if raw is None:
            raw = {}
        elif isinstance(raw, str):
            raw = {"reason": raw} if exclusion else {"user_intention": raw}
        elif exclusion and isinstance(raw, bool):
            raw = {"excluded": raw}
    if not isinstance(raw, dict):
        raise where.error(f"expected an object, got {type(raw).__name__}")
    _, u = _first(raw, USER_KEYS)
    if u is not None:
        if isinstance(u, (dict, list, bool)):
            raise where.error(f"user must be text, got {u!r}")
        user = str(u).strip() or user
    _, e = _first(raw, EVENT_KEYS)
    if e is None:
        e = event_id
    if e is None:
        raise where.error("record has no event id (expected one of " + ", ".join(EVENT_KEYS) + ")")
    try:
        eid = normalise_event_id(e)
    except ValueError as err:
        raise where.error(str(err)) from None

    intention = confidence = None
    rationale: str | None = None
    _, inten = _first(raw, INTENTION_KEYS)
    if isinstance(inten, dict):
        _, sub = _first(inten, INTENTION_SUBKEYS)
        intention = _optional_text(sub, where, "user_intention.category")
        _, c = _first(inten, CONFIDENCE_KEYS)
        confidence = _confidence(c, where)
        _, r = _first(inten, RATIONALE_KEYS)
        rationale = _optional_text(r, where, "user_intention.rationale")
    else:
        intention = _optional_text(inten, where, "user_intention")
    if intention and load_taxonomy().canonical(intention) is None:  # would silently become the fallback
        raise where.error(
            f"unknown intention {intention!r}; expected one of the categories of "
            "src/proagent/data/intentions.json (e.g. " + ", ".join(load_taxonomy().names[:3]) + ", ...)"
        )
    _, c = _first(raw, CONFIDENCE_KEYS)
    if c is not None:
        confidence = _confidence(c, where)
    _, r = _first(raw, RATIONALE_KEYS)
    if r is not None:
        rationale = _optional_text(r, where, "rationale")
    _, p = _first(raw, PLATFORM_KEYS)
    platform = _optional_text(p, where, "llm_platform")

    excluded = _exclusion_flag(raw, where)
    if exclusion and excluded is None:
        flag_key, _ = _first(raw, EXCLUDE_FLAG_KEYS)
        if flag_key is None:  # in an exclusion list without an explicit "excluded": false
            _, reason = _first(raw, EXCLUDE_REASON_KEYS + ("reason",))
            excluded = _optional_text(reason, where, "reason") or DEFAULT_EXCLUSION_REASON
    return Annotation(
        user=user,
        event_id=eid,
        intention=intention,
        confidence=confidence,
        rationale=rationale or "",
        llm_platform=platform,
        excluded=excluded,
        source=where.source,
    )


def _is_record(d: dict[str, Any]) -> bool:
    return any(k in d for k in EVENT_KEYS)


_FIELD_KEYS = frozenset(
    INTENTION_KEYS + CONFIDENCE_KEYS + RATIONALE_KEYS + PLATFORM_KEYS + EXCLUDE_REASON_KEYS
) - frozenset(EXCLUDE_CONTAINERS + ANNOTATION_CONTAINERS)


def _looks_like_record(d: dict[str, Any]) -> bool:
    """True for an object with record fields (so a missing event id is an error,
    not a layout to walk)."""
    return any(k in d for k in _FIELD_KEYS) or any(isinstance(d.get(k), (bool, str)) for k in EXCLUDE_FLAG_KEYS)


def _walk_exclusions(data: Any, where: _At, user: str | None) -> Iterator[Annotation]:
    if isinstance(data, list):
        for i, item in enumerate(data):
            w = where.sub(f"[{i}]")
            if isinstance(item, dict):
                yield _record(item, w, user=user, exclusion=True)
            else:
                # a bare event id (within a user, or for every user)
                try:
                    eid = normalise_event_id(item)
                except ValueError as err:
                    raise w.error(str(err)) from None
                yield Annotation(user, eid, excluded=DEFAULT_EXCLUSION_REASON, source=w.source)
    elif isinstance(data, dict):
        if _is_record(data):
            yield _record(data, where, user=user, exclusion=True)
            return
        for k, v in data.items():
            w = where.sub(f"[{k!r}]")
            record_like = isinstance(v, dict) and not _is_record(v) and (_looks_like_record(v) or "reason" in v)
            if user is None and isinstance(v, (dict, list)) and not record_like:
                yield from _walk_exclusions(v, w, str(k))  # {user: ...}
            else:
                # {event_id: reason-or-record} within a user (or for every user)
                yield _record(v, w, user=user, event_id=k, exclusion=True)
    else:
        raise where.error(f"exclusion list must be a list or an object, got {type(data).__name__}")


def _walk(data: Any, where: _At, user: str | None, top: bool) -> Iterator[Annotation]:
    if isinstance(data, list):
        for i, item in enumerate(data):
            w = where.sub(f"[{i}]")
            if isinstance(item, dict) and not _is_record(item) and _has_container(item):
                yield from _walk(item, w, user, top=False)
            else:
                yield _record(item, w, user=user)
        return
    if not isinstance(data, dict):
        raise where.error(f"expected a list or an object, got {type(data).__name__}")
    if _is_record(data) or _looks_like_record(data):
        yield _record(data, where, user=user)
        return
    # a user's block {"user": "P01", "annotations": [...]} names its user inline
    _, inline_user = _first(data, USER_KEYS)
    if inline_user is not None and not isinstance(inline_user, (dict, list)):
        user = str(inline_user).strip() or user
    for k, v in data.items():
        w = where.sub(f"[{k!r}]")
        if k in USER_KEYS:
            continue
        if k in EXCLUDE_CONTAINERS:
            yield from _walk_exclusions(v, w, user)
        elif k in ANNOTATION_CONTAINERS and isinstance(v, (list, dict)):
            yield from _walk(v, w, user, top=False)
        elif isinstance(v, dict) and not _is_record(v) and _looks_like_record(v):
            yield _record(v, w, user=user, event_id=k)  # {event_id: record}
        elif isinstance(v, (dict, list)):
            if user is None:
                yield from _walk(v, w, str(k), top=False)  # {user: ...}
            else:
                yield _record(v, w, user=user, event_id=k)  # {event_id: record}
        elif user is not None and not top:
            yield _record(v, w, user=user, event_id=k)  # {event_id: intention}
        elif top:
            continue  # metadata such as "version" or "source"
        else:
            raise w.error(f"expected a record, got {type(v).__name__}")


def _has_container(d: dict[str, Any]) -> bool:
    return any(k in d for k in EXCLUDE_CONTAINERS + ANNOTATION_CONTAINERS)


def _read_text(path: Path) -> str:
    try:
        return path.read_text("utf-8-sig")
    except FileNotFoundError:
        raise DataError(path, "annotation file not found") from None
    except IsADirectoryError:
        raise DataError(path, "is a directory, expected an annotation file") from None
    except UnicodeDecodeError as e:
        raise DataError(path, f"not a UTF-8 text file ({e})") from None


def _load_jsonl(path: Path, text: str) -> list[Annotation]:
    out: list[Annotation] = []
    for n, data in jsonl_values(path, text.splitlines()):
        out.extend(_walk(data, _At(path, n), None, top=True))
    return out


def _load_json(path: Path, text: str) -> list[Annotation]:
    if not text.strip():
        raise DataError(path, "empty file, expected JSON annotations")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        if e.msg == "Extra data":  # several JSON documents: treat as JSONL
            return _load_jsonl(path, text)
        raise DataError(
            path, f"line {e.lineno}: invalid JSON ({e.msg.removesuffix(' at')} at column {e.colno})"
        ) from None
    return list(_walk(data, _At(path, None), None, top=True))


def load_annotation_file(path: str | Path) -> Annotations:
    """Load one JSON or JSONL annotation file.

    ``*.jsonl``/``*.ndjson`` files are read line by line; other files as one
    JSON document (falling back to line-by-line when it holds several).

    Raises:
        DataError: the file is missing or unreadable, is not valid JSON (the
            message gives the line number), or a record is malformed (no event
            id, a confidence outside 0-1, a non-text intention...).
    """
    path = Path(path)
    text = _read_text(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        records = _load_jsonl(path, text)
    else:
        records = _load_json(path, text)
    return Annotations(records)


def load_annotations(paths: str | Path | Iterable[str | Path]) -> Annotations:
    """Load annotation files into one :class:`Annotations`.

    Args:
        paths: One path or several, in order (later files override earlier
            ones field by field). A directory stands for its ``*.json``,
            ``*.jsonl`` and ``*.ndjson`` files, in name order.

    Raises:
        DataError: a file is missing or malformed (see :func:`load_annotation_file`),
            or a directory holds no annotation files.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out = Annotations()
    for p in paths:
        p = Path(p)
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in (".json", ".jsonl", ".ndjson"))
            if not files:
                raise DataError(p, "no *.json or *.jsonl annotation files in this folder")
            for f in files:
                out.update(load_annotation_file(f))
        else:
            out.update(load_annotation_file(p))
    return out
