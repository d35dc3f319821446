"""The synthetic baseline of ProAgentBench section 4.2: a model decides, at each
of the human log's candidate time points, whether the user would turn to an LLM
now and what they would ask; the answers are written as a dataset in the
input's own format, so ``proagent stats --compare human synthetic`` puts the
human and the model-simulated behaviour side by side (paper: human B = 0.787 vs
LLM-synthesised B = 0.166).

The decisions come from an ``assist`` run over
:func:`~proagent.bench.samples.candidate_moments` (``proagent simulate`` runs
it); this module turns that run's log into the dataset:

* ProactiveBench sessions -> session files of the same name, every item kept,
  ``task_status`` = the model's decision and ``agent_response.candidate_task``
  = ``[predicted query]`` when it said yes (else ``[]``);
* LifeTrace databases -> a copy of each database (``<user>/<db name>``) whose
  ``events`` carry the model's decisions: ``is_llm_event`` = 1 exactly at the
  events starting where the model said yes (0 everywhere else), ``conversation``
  = ``{"user_queries": [predicted query]}``, the intention column = the
  predicted intention. Missing processed columns are added.

An unparsed answer counts as "no" (and is counted). A user whose candidate
points were not all decided (``--limit``) is left out, never written half.
The output folder is built beside ``out`` and swapped in at the end, so a
crash never leaves a mix of old and new files.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import defaultdict
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import DataError, UsageError
from ..io import check_output_folder, swap_in
from ..records import Sample
from ..sources.lifetrace_schema import connect_read_only
from ..sources.lifetrace_write import copy_with_event_columns
from ..sources.load import databases_by_user, find_databases, is_sqlite_file
from ..sources.proactivebench import is_proactivebench_file
from .records import SimulateManifest
from .scorers import sample_prediction

__all__ = [
    "MANIFEST",
    "CandidatePoint",
    "Decision",
    "candidate_points",
    "check_limit",
    "check_output",
    "decisions_from_log",
    "write_simulated",
]


MANIFEST = "simulate.json"
"""The summary file of a simulate output (also what marks a folder as one)."""


class CandidatePoint(NamedTuple):
    """One candidate time point: the user and the event starting there."""

    user: str
    event_id: str


def candidate_points(dataset: Any) -> list[CandidatePoint]:
    """The candidate points of an ``assist(candidates=True)`` task's dataset (from
    its sample metadata), so the log is not read a second time to list them."""
    return [CandidatePoint(str(s.metadata["user"]), str(s.metadata["event_id"])) for s in dataset]


def check_limit(candidates: Sequence[Sample | CandidatePoint], limit: int | None, option: str = "--limit") -> None:
    """Refuse a ``limit`` under which no user would have every candidate point decided
    (the run decides the first ``limit`` points in order), before any model work.

    Raises:
        UsageError: not one user's candidate points all lie within the first ``limit``.
    """
    if limit is None or limit >= len(candidates):
        return
    last: dict[str, int] = {}
    for i, s in enumerate(candidates):
        last[str(s.user)] = i + 1
    if not last:
        return
    need = min(last.values())
    if limit < need:
        first = min(last, key=lambda u: (last[u], u))
        raise UsageError(
            option,
            f"{limit} points leave every user partly decided (the smallest, {first!r}, needs the "
            f"first {need}); raise --limit to at least {need} or drop it",
        )


@dataclass(frozen=True)
class Decision:
    """The model's answer at one candidate time point."""

    user: str
    """User (ProactiveBench session or LifeTrace participant)."""
    event_id: str
    """Event starting at the point (``Sample.event_id``)."""
    human: int
    """What the human did there: 1 = turned to an LLM (or needed help), 0 = not."""
    needs_help: bool | None
    """The model's decision; ``None`` when its answer was unparsed."""
    intention: str | None = None
    """Predicted intention category (taxonomy name)."""
    query: str | None = None
    """Predicted user query."""

    @property
    def llm_use(self) -> bool:
        """True when the model said the user turns to an LLM now (unparsed = no)."""
        return self.needs_help is True


def decisions_from_log(log: Any) -> list[Decision]:
    """The decisions of an ``assist`` eval log (one per scored sample).

    Raises:
        proagent.errors.DataError: a sample lacks the user/event metadata (a log of another task).
    """
    out = []
    for s in log.samples or []:
        md = s.metadata or {}
        if not md.get("user") or md.get("event_id") is None:
            raise DataError(None, f"sample {s.id}: no user/event_id metadata; not a log of proagent's assist task")
        pred = sample_prediction(s)
        out.append(
            Decision(
                user=str(md["user"]),
                event_id=str(md["event_id"]),
                human=int(md["label"]),
                needs_help=pred.needs_help if pred else None,
                intention=pred.intention if pred else None,
                query=pred.query if pred else None,
            )
        )
    return out


def _sources(data: Path) -> tuple[str, dict[str, Path]]:
    """``(kind, {user: file})`` of the human data, named as the readers name users."""
    data = Path(data)
    if data.is_file():
        if is_proactivebench_file(data):
            return "proactivebench", {data.stem: data}
        if is_sqlite_file(data):
            return "lifetrace", {Path(os.path.abspath(data)).parent.name or data.stem: data}
        raise DataError(data, "not a ProactiveBench session nor a LifeTrace database")
    sessions = sorted(p for p in data.iterdir() if is_proactivebench_file(p))
    if sessions:
        return "proactivebench", {p.stem: p for p in sessions}
    dbs = find_databases(data)
    if not dbs:
        raise DataError(data, "no ProactiveBench sessions or LifeTrace databases here")
    return "lifetrace", databases_by_user(dbs)


def _write_session(src: Path, dst: Path, decided: dict[str, Decision], user: str) -> None:
    items = json.loads(src.read_text("utf-8"))
    for i, item in enumerate(items):
        d = decided.get(f"{user}:{i}")
        yes = bool(d and d.llm_use)
        item["task_status"] = yes
        response = item.get("agent_response") if isinstance(item.get("agent_response"), dict) else {}
        response["candidate_task"] = [d.query] if yes and d.query else []
        item["agent_response"] = response
    dst.write_text(json.dumps(items, ensure_ascii=False, indent=1) + "\n", "utf-8")


def _write_database(src: Path, dst: Path, decided: dict[str, Decision]) -> None:
    with closing(connect_read_only(src)) as probe:
        cols = {r[1] for r in probe.execute("PRAGMA table_info(events)")}
    intention_col = next((c for c in ("user_intention", "intention") if c in cols), "user_intention")
    target = copy_with_event_columns(
        src, dst, (("is_llm_event", "BOOLEAN"), ("conversation", "TEXT"), (intention_col, "VARCHAR(64)"))
    )
    try:
        extra = ", llm_platform = NULL" if "llm_platform" in cols else ""
        with target:
            target.execute(f"UPDATE events SET is_llm_event = 0, conversation = NULL, {intention_col} = NULL{extra}")
            rows = [
                (
                    json.dumps({"user_queries": [d.query] if d.query else [], "llm_responses": []}, ensure_ascii=False),
                    d.intention,
                    int(eid) if eid.lstrip("-").isdigit() else eid,
                )
                for eid, d in decided.items()
                if d.llm_use
            ]
            target.executemany(
                f"UPDATE events SET is_llm_event = 1, conversation = ?, {intention_col} = ? WHERE id = ?", rows
            )
    finally:
        target.close()


def check_output(data: str | Path, out: str | Path) -> None:
    """Refuse an output folder that :func:`write_simulated` must not replace (before the model runs).

    Raises:
        DataError: ``out`` is a file, a non-empty folder that is not an earlier
            simulate output, holds ``data`` itself, lies inside ``data``, or
            cannot be created or written (:func:`proagent.io.check_output_folder`).
    """
    check_output_folder(
        out, marker=MANIFEST, run="simulate", data=data, data_name="the human data", writable_parent=True
    )


def write_simulated(
    data: str | Path, decisions: list[Decision], candidates: Sequence[Sample | CandidatePoint], out: str | Path
) -> SimulateManifest:
    """Write the synthetic dataset of ``decisions`` in the format of ``data``.

    Args:
        data: The human log the decisions were made on (as given to ``simulate``).
        decisions: :func:`decisions_from_log` of the run.
        candidates: Every candidate time point of ``data``
            (:func:`~proagent.bench.samples.candidate_moments`, or
            :func:`candidate_points` of the run's dataset); a user is written
            only when all of theirs were decided.
        out: Output folder (replaced as a whole at the end).

    Returns:
        The dataset's summary, as written to ``out/simulate.json``.

    Raises:
        DataError: ``data`` is not a log the readers know, the decisions
            name users the data does not have, or ``out`` holds anything but an
            earlier simulate output (it is replaced as a whole).
        ValueError: no user had all of their candidate points decided.
        OSError: ``out`` cannot be written (nothing under ``out`` is changed).
    """
    out = Path(out)
    check_output(data, out)
    kind, users = _sources(Path(data))
    by_user: dict[str, dict[str, Decision]] = defaultdict(dict)
    for d in decisions:
        if d.user not in users:
            raise DataError(Path(data), f"the run's decisions name user {d.user!r}, which this data does not have")
        by_user[d.user][d.event_id] = d
    wanted: dict[str, set[str]] = defaultdict(set)
    for s in candidates:
        wanted[s.user].add(str(s.event_id))
    complete = sorted(u for u in users if wanted[u] and wanted[u] <= set(by_user[u]))
    if not complete:
        first = min((u for u in users if wanted[u]), key=lambda u: len(wanted[u]), default=None)
        need = f" (the smallest, {first!r}, has {len(wanted[first])} points)" if first else ""
        raise DataError(
            None, f"no user had every candidate time point decided{need}; raise --limit or drop it. Nothing was written"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    files = []
    try:
        for u in complete:
            src = users[u]
            if kind == "proactivebench":
                dst = tmp / src.name
                _write_session(src, dst, by_user[u], u)
            else:
                (tmp / u).mkdir()
                dst = tmp / u / src.name
                _write_database(src, dst, by_user[u])
            files.append(str(out / dst.relative_to(tmp)))
        written = [d for u in complete for d in by_user[u].values()]
        summary = SimulateManifest(
            kind=kind,
            data=str(data),
            users=tuple(complete),
            skipped_users=tuple(sorted(set(users) - set(complete))),
            candidates=len(written),
            llm_moments=sum(d.llm_use for d in written),
            human_moments=sum(d.human for d in written),
            unparsed=sum(d.needs_help is None for d in written),
            files=tuple(files),
        )
        (tmp / MANIFEST).write_text(json.dumps(summary.to_json(), indent=2, ensure_ascii=False) + "\n", "utf-8")
        swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return summary
