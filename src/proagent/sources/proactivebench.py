"""Reader for ProactiveBench session files (Lu et al. 2024, THUNLP ProactiveAgent).

Each file is one session: a JSON list, oldest first, of
``{"observation": {"time": "<unix seconds>", "event": "<sentence>"},
"agent_response": {"candidate_task": [...]}, "task_status": bool}``.

Every observation becomes one :class:`~proagent.records.Event` with
``summary`` = the sentence, ``needs_help`` = ``task_status`` and
``candidate_tasks`` = the candidate tasks. The session (file stem) is the user.
Unix times are converted to naive UTC datetimes so results do not depend on the
machine's time zone. An event ends where the next one starts; the last event
has zero duration, and an event followed by an earlier time (steps out of time
order, as in two of the public sessions) has an unknown end (``None``), not a
zero or negative duration. Times must be unix seconds between 1990 and 2100
(:data:`~proagent.sources._lifetrace_values.EARLIEST` .. ``LATEST``); a boolean
is not a time. Files may start with a UTF-8 byte-order mark.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from ..errors import DataError
from ..records import Event
from ._lifetrace_values import EARLIEST, LATEST

__all__ = ["is_proactivebench_file", "read_proactivebench", "read_proactivebench_session"]


def _utc(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=timezone.utc).replace(tzinfo=None)


def read_proactivebench_session(path: str | Path, user: str | None = None) -> list[Event]:
    """Read one session file into events, oldest first.

    Args:
        path: A ``*.json`` session file.
        user: Session id to use (default: the file stem, e.g. ``code_11``).

    Raises:
        DataError: the file is missing, not JSON, or an item lacks a field or has
            the wrong type (the message names the item index and field).
    """
    path = Path(path)
    user = user or path.stem
    try:
        data = json.loads(path.read_text("utf-8-sig"))
    except FileNotFoundError:
        raise DataError(path, "file not found") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DataError(path, f"not a ProactiveBench session (invalid JSON: {e})") from None
    except RecursionError:
        raise DataError(path, "not a ProactiveBench session (JSON nested too deeply)") from None
    except OSError as e:
        raise DataError(path, f"cannot read ({e.strerror or e})") from None
    if not isinstance(data, list) or not data:
        raise DataError(path, "not a ProactiveBench session (expected a non-empty JSON list of steps)")
    raw: list[tuple[float, str, bool, tuple[str, ...]]] = []
    for i, item in enumerate(data):
        where = f"item {i}"
        if not isinstance(item, dict):
            raise DataError(path, f"{where}: expected an object, got {type(item).__name__}")
        obs = item.get("observation")
        if not isinstance(obs, dict) or "time" not in obs or "event" not in obs:
            raise DataError(path, f"{where}: missing observation.time or observation.event")
        try:
            if isinstance(obs["time"], bool):  # float(True) is 1.0: 1970-01-01, not a time
                raise TypeError
            t = float(obs["time"])
            if not EARLIEST <= _utc(t) < LATEST:  # NaN, inf or out-of-range times are bad input too
                raise ValueError
        except (TypeError, ValueError, OverflowError, OSError):
            raise DataError(
                path,
                f"{where}: observation.time {obs['time']!r} is not unix seconds "
                f"between {EARLIEST.year} and {LATEST.year}",
            ) from None
        if not isinstance(obs["event"], str) or not obs["event"].strip():
            raise DataError(path, f"{where}: observation.event is empty or not text")
        status = item.get("task_status")
        if not isinstance(status, bool):
            raise DataError(path, f"{where}: task_status must be true or false, got {status!r}")
        response = item.get("agent_response") or {}
        if not isinstance(response, dict):
            raise DataError(path, f"{where}: agent_response must be an object, got {type(response).__name__}")
        tasks = response.get("candidate_task") or []
        if not isinstance(tasks, list) or not all(isinstance(x, str) for x in tasks):
            raise DataError(path, f"{where}: agent_response.candidate_task must be a list of text")
        raw.append((t, obs["event"].strip(), status, tuple(x.strip() for x in tasks if x.strip())))
    events = []
    for i, (t, sentence, status, tasks) in enumerate(raw):
        end = raw[i + 1][0] if i + 1 < len(raw) else t
        events.append(
            Event(
                id=f"{user}:{i}",
                user=user,
                start=_utc(t),
                end=_utc(end) if end >= t else None,  # the next step is earlier: end unknown
                summary=sentence,
                needs_help=status,
                candidate_tasks=tasks,
            )
        )
    return events


def is_proactivebench_file(path: Path) -> bool:
    """True when ``path`` looks like a session file: a ``.json`` file holding a
    JSON list whose first item has ``observation`` (a UTF-8 byte-order mark
    allowed). Reads the first 4 KiB, and the whole file only when it is a list
    whose first ``"observation"`` key comes later.

    Raises:
        DataError: the file cannot be read (e.g. no permission).
    """
    if path.suffix.lower() != ".json" or not path.is_file():
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(4096).decode("utf-8", "replace").removeprefix("\ufeff").lstrip()
            if not head.startswith("["):
                return False
            if '"observation"' in head:
                return True
            f.seek(0)
            data = json.loads(f.read().decode("utf-8-sig"))
    except OSError as e:
        raise DataError(path, f"cannot read ({e.strerror or e})") from None
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and "observation" in data[0]


def read_proactivebench(path: str | Path) -> list[Event]:
    """Read a session file, or every session file in a folder (sorted by name).

    Raises:
        DataError: the path does not exist, a folder holds no session file, or a
            session file is malformed.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(path, "no such file or folder")
    if path.is_file():
        return read_proactivebench_session(path)
    files = sorted(p for p in path.iterdir() if is_proactivebench_file(p))
    if not files:
        raise DataError(path, "no ProactiveBench session files (*.json lists of observations) in this folder")
    stems: dict[str, Path] = {}
    for f in files:  # the stem is the user: a.json and a.JSON would be one user read twice
        other = stems.setdefault(f.stem, f)
        if other is not f:
            raise DataError(path, f"{other.name} and {f.name} name the same session ({f.stem}); keep one")
    events: list[Event] = []
    for f in files:
        events.extend(read_proactivebench_session(f))
    return events
