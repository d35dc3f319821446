"""Reader for ProactiveBench's reward-data traces (Lu et al. 2024, THUNLP ProactiveAgent).

Upstream ``dataset/reward_data/{train,test}_data.jsonl`` hold one trace per line:
``{"obs": [{"time": ..., "event": "<sentence>"}, ...], "help_needed": bool, ...}``;
the label belongs to the **last** observation. Two origins are mixed there:

* ``synthetic``: traces the environment simulator (an LLM) wrote from scene
  descriptions; times are relative (``"Day 1, 11:00 PM"``);
* ``real-session``: windows cut from the twelve real ProactiveBench sessions
  (times are Unix seconds): six of them are the public dev sessions, so training
  on them and evaluating on any real session is train/test leakage.

The time format tells the origins apart; :func:`read_reward_traces` tags every
trace and, by default, keeps only the synthetic ones (``../shared/data/
proactivebench-synthetic/synthetic_traces.jsonl`` is exactly those, with the
upstream file recorded in ``split``).

Each trace becomes one labelled moment (:func:`trace_samples`): the last
observation is the current state, the earlier ones inside the context window are
the context (the same rule as :func:`proagent.records.window_context`).
Relative times are placed on a fixed calendar (Day 1 = 2000-01-01) so the clock
hour is kept; the weekday carries no meaning for these traces.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

from ..errors import DataError
from ..records import Event, Sample, window_context
from ._jsonl import jsonl_values

__all__ = ["DAY_ONE", "RewardTrace", "is_reward_trace_file", "read_reward_traces", "relative_time", "trace_samples"]

DAY_ONE = datetime(2000, 1, 1)
"""Calendar day on which relative ``Day 1`` times are placed."""

_RELATIVE = re.compile(r"^\s*Day\s+(\d+),\s*(\d{1,2}):(\d{2})\s*([AP]M)\s*$", re.IGNORECASE)

Origin = Literal["synthetic", "real-session"]


@dataclass(frozen=True)
class RewardTrace:
    """One reward-data trace: observations up to a human-labelled moment.

    Attributes:
        line: 1-based line number in its file.
        split: Upstream file it came from (``train`` / ``test``), or ``""`` when unknown.
        origin: ``synthetic`` (relative ``Day N`` times) or ``real-session`` (Unix seconds).
        events: The observations as events, oldest first. The user is the scenario,
            ``{origin}:{12 hex digits of the first observation's SHA-256}``, shared by
            the traces that are prefixes of one simulated session; event ids
            ``{user}:L{line}:{index}``.
        help_needed: Human label of the last observation: would the user want help now?
    """

    line: int
    split: str
    origin: Origin
    events: tuple[Event, ...]
    help_needed: bool


def relative_time(text: str) -> datetime | None:
    """A synthetic trace's ``Day N, HH:MM AM/PM`` on the fixed calendar (Day 1 =
    :data:`DAY_ONE`), or ``None`` when ``text`` is not such a time."""
    m = _RELATIVE.match(text)
    if not m:
        return None
    day, hour, minute, half = int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4).upper()
    if day < 1 or not 1 <= hour <= 12 or minute > 59:
        return None
    hour = hour % 12 + (12 if half == "PM" else 0)
    return DAY_ONE + timedelta(days=day - 1, hours=hour, minutes=minute)


def _unix_time(text: str) -> datetime | None:
    try:
        t = float(text)
        return datetime(1970, 1, 1) + timedelta(seconds=t)
    except (TypeError, ValueError, OverflowError):
        return None


def is_reward_trace_file(path: Path) -> bool:
    """True when ``path`` is a ``.jsonl`` file whose first line is a trace (has ``obs``
    and ``help_needed``); reads only the first line."""
    if path.suffix.lower() != ".jsonl" or not path.is_file():
        return False
    with open(path, encoding="utf-8", errors="replace") as f:
        first = f.readline()
    try:
        d = json.loads(first)
    except json.JSONDecodeError:
        return False
    return isinstance(d, dict) and "obs" in d and "help_needed" in d


def read_reward_traces(
    path: str | Path, keep: tuple[Origin, ...] = ("synthetic",), split: str | None = None
) -> list[RewardTrace]:
    """Read reward-data traces from a ``.jsonl`` file, tagging each one's origin.

    Args:
        path: ``synthetic_traces.jsonl`` or an upstream ``{train,test}_data.jsonl``.
        keep: Origins to return (default: synthetic only; real-session traces are
            dropped, see the module docstring).
        split: Upstream split to record when the lines carry none (default: the
            line's ``split`` field, else ``""``).

    Raises:
        DataError: missing file, a line that is not JSON, a trace without
            observations or label, or an observation time that is neither
            ``Day N, HH:MM AM/PM`` nor Unix seconds (the message names the line).
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "no such file")
    out: list[RewardTrace] = []
    with open(path, encoding="utf-8") as f:
        for no, d in jsonl_values(path, f):
            obs = d.get("obs") if isinstance(d, dict) else None
            label = d.get("help_needed") if isinstance(d, dict) else None
            if not isinstance(obs, list) or not obs or not isinstance(label, bool):
                raise DataError(
                    path, f"line {no}: not a reward trace (needs a non-empty 'obs' list and a boolean 'help_needed')"
                )
            sp = str(d.get("split") or split or "")
            times, origins = [], set()
            for i, o in enumerate(obs):
                if not isinstance(o, dict) or not isinstance(o.get("event"), str) or not o["event"].strip():
                    raise DataError(path, f"line {no}: observation {i} has no event text")
                raw = str(o.get("time", ""))
                t = relative_time(raw)
                if t is not None:
                    origins.add("synthetic")
                else:
                    t = _unix_time(raw)
                    if t is None:
                        raise DataError(
                            path,
                            f"line {no}: observation {i} time {raw!r} is neither 'Day N, HH:MM AM/PM' nor Unix seconds",
                        )
                    origins.add("real-session")
                times.append(t)
            if len(origins) != 1:
                raise DataError(path, f"line {no}: mixes relative and Unix times; cannot tell its origin")
            origin: Origin = origins.pop()  # type: ignore[assignment]
            if origin not in keep:
                continue
            # traces of one scenario are prefixes of each other: they share a user (its first
            # observation), so cross-validation grouped by user never splits a scenario
            scenario = hashlib.sha256(f"{obs[0].get('time')}|{obs[0]['event'].strip()}".encode()).hexdigest()[:12]
            user = f"{origin}:{scenario}"
            events = []
            for i, (o, t) in enumerate(zip(obs, times)):
                end = max(times[i + 1], t) if i + 1 < len(times) else t
                last = i == len(obs) - 1
                events.append(
                    Event(
                        id=f"{user}:L{no}:{i}",
                        user=user,
                        start=t,
                        end=end,
                        summary=o["event"].strip(),
                        needs_help=label if last else None,
                    )
                )
            out.append(RewardTrace(line=no, split=sp, origin=origin, events=tuple(events), help_needed=label))
    return out


def trace_samples(traces: list[RewardTrace], window_seconds: float = 300.0) -> list[Sample]:
    """One labelled moment per trace: its last observation, with the earlier ones
    inside ``window_seconds`` as context. ``split`` is ``train`` (these are training
    data), ``kind`` ``labelled``, sorted by (user, time)."""
    out = []
    for tr in traces:
        evs = list(tr.events)
        cur = evs[-1]
        out.append(
            Sample(
                id=f"{cur.id}:labelled",
                user=cur.user,
                time=cur.start,
                label=1 if tr.help_needed else 0,
                split="train",
                kind="labelled",
                context=window_context(evs, len(evs) - 1, cur.start, window_seconds),
                current=cur,
                window_seconds=window_seconds,
                event_id=cur.id,
            )
        )
    return sorted(out, key=lambda s: (s.user, s.time, s.id))
