#!/usr/bin/env python3
"""Sum a test run's per-test times per file (the rows ``tests/conftest.py`` writes when the run
has ``PROAGENT_TEST_TIMES=FILE``, e.g. ``PROAGENT_TEST_TIMES=/tmp/t.jsonl scripts/test.sh``).

    python scripts/test_times.py FILE [--top N] [--write tests/test_seconds.json] [--budget S [--workers N]]

Prints, longest first, for each test file: its tests, the wall seconds of its tests (setup, call
and teardown, summed), the CPU seconds (user + sys of the worker and the children it waited for),
the seconds spent waiting for ``tests/solo.py``'s locks, the worker(s) that ran it and the span
from its first start to its last end (minutes after the run's first test); then, per worker, the
busy and lock-waiting seconds and when its last test ended. ``--write JSON`` also writes the own wall seconds of each
test of 0.5 s or more (less its solo-lock wait) into JSON (an object of test id -> seconds; entries of tests this run did not
run are kept), from which ``tests/conftest.py`` orders the files it hands to the workers and picks
the long tests. ``--budget S`` checks the developer suite (the rows not marked ``long``) against S
seconds on ``--workers`` workers (their test seconds divided by the workers): over it, it names the
files that grew against ``tests/test_seconds.json`` and exits 1 (``scripts/test.sh`` runs it after
a whole-suite run; the budget is ``tests/conftest.py DEV_BUDGET_S``). Exits 2 naming FILE and the
line when a row is not one of those JSON objects.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path


def load(path: Path) -> list[dict]:
    """The rows of ``path`` (one JSON object a line: test, worker, start, end, wait_s, cpu_s)."""
    rows = []
    for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            float(row["start"]), float(row["end"]), float(row["wait_s"]), float(row["cpu_s"])
            str(row["test"]), str(row["worker"])
        except (ValueError, KeyError, TypeError) as e:
            raise SystemExit(f"error: {path}:{n}: not a test-times row ({e})") from None
        rows.append(row)
    if not rows:
        raise SystemExit(f"error: {path}: no test-times rows")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("--top", type=int, default=15, help="files to list (default 15; 0: all)")
    ap.add_argument(
        "--write",
        type=Path,
        metavar="JSON",
        help="merge {test id: wall seconds} of the tests of 0.5 s or more into it (tests/test_seconds.json)",
    )
    ap.add_argument(
        "--budget",
        type=float,
        metavar="S",
        help="fail (exit 1) when the tests not marked long took more than S seconds on --workers workers",
    )
    ap.add_argument("--workers", type=int, default=2, help="workers the suite ran on (default 2, as scripts/test.sh)")
    ap.add_argument(
        "--seconds",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "tests" / "test_seconds.json",
        help="the recorded seconds the files that grew are named against (default tests/test_seconds.json)",
    )
    a = ap.parse_args(argv)
    if a.workers < 1 or (a.budget is not None and not a.budget > 0):
        print("error: --workers must be at least 1 and --budget a positive number of seconds", file=sys.stderr)
        return 2
    if not a.file.is_file():
        print(f"error: {a.file}: no such file", file=sys.stderr)
        return 2
    try:
        rows = load(a.file)
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 2
    t0 = min(r["start"] for r in rows)
    t1 = max(r["end"] for r in rows)
    files: dict[str, dict] = defaultdict(
        lambda: {"n": 0, "wall": 0.0, "cpu": 0.0, "wait": 0.0, "workers": set(), "first": float("inf"), "last": 0.0}
    )
    workers: dict[str, dict] = defaultdict(lambda: {"busy": 0.0, "wait": 0.0, "last": 0.0, "cpu": 0.0})
    for r in rows:
        f = files[r["test"].split("::")[0]]
        wall = r["end"] - r["start"]
        f["n"] += 1
        f["wall"] += wall
        f["cpu"] += r["cpu_s"]
        f["wait"] += r["wait_s"]
        f["workers"].add(r["worker"])
        f["first"] = min(f["first"], r["start"])
        f["last"] = max(f["last"], r["end"])
        w = workers[r["worker"]]
        w["busy"] += wall
        w["wait"] += r["wait_s"]
        w["cpu"] += r["cpu_s"]
        w["last"] = max(w["last"], r["end"])
    ranked = sorted(files.items(), key=lambda kv: -kv[1]["wall"])
    if a.write:
        try:
            table = json.loads(a.write.read_text("utf-8")) if a.write.exists() else {}
        except ValueError as e:
            print(f"error: {a.write}: not JSON ({e}); nothing written", file=sys.stderr)
            return 2
        for r in rows:
            table.pop(r["test"], None)
            if own_seconds(r) >= 0.5:
                table[r["test"]] = round(own_seconds(r), 1)
        table = dict(sorted(table.items()))
        tmp = a.write.with_name(a.write.name + ".tmp")
        tmp.write_text(json.dumps(table, indent=0) + "\n", "utf-8")
        tmp.replace(a.write)  # whole or not at all
    if a.top:
        ranked = ranked[: a.top]
    print(
        f"{len(rows)} tests in {len(files)} files, {(t1 - t0) / 60:.1f} min from the first test's start to the last's end"
    )
    print(f"{'file':58} {'tests':>5} {'wall s':>7} {'cpu s':>7} {'wait s':>7}  worker  span (min)")
    for name, f in ranked:
        span = f"{(f['first'] - t0) / 60:5.1f}-{(f['last'] - t0) / 60:.1f}"
        print(
            f"{name:58} {f['n']:5d} {f['wall']:7.1f} {f['cpu']:7.1f} {f['wait']:7.1f}  {','.join(sorted(f['workers'])):6}  {span}"
        )
    print(
        f"all files{'':49} {len(rows):5d} {sum(f['wall'] for f in files.values()):7.1f} "
        f"{sum(f['cpu'] for f in files.values()):7.1f} {sum(f['wait'] for f in files.values()):7.1f}"
    )
    for name, w in sorted(workers.items()):
        print(
            f"worker {name}: busy {w['busy']:.0f} s (of which {w['wait']:.0f} s waiting for a solo lock), "
            f"cpu {w['cpu']:.0f} s, last test ended at {(w['last'] - t0) / 60:.1f} min"
        )
    if a.budget is not None:
        return check_budget(rows, a.budget, a.workers, a.seconds)
    return 0


def own_seconds(row: dict) -> float:
    """A test's own wall seconds: its span less the time it waited for :mod:`solo`'s locks (held back by
    a ``solo`` test on the other worker: in ``--all`` a long desktop test's, which is not this test's
    time and does not happen in the developer suite)."""
    return max(0.0, row["end"] - row["start"] - row["wait_s"])


def check_budget(rows: list[dict], budget: float, workers: int, seconds: Path) -> int:
    """0 when the rows not marked ``long`` took at most ``budget`` seconds on ``workers`` workers (the
    sum of their own wall seconds, :func:`own_seconds`, divided by the workers), else 1 after naming
    the files whose tests took more than ``seconds`` (tests/test_seconds.json) records for them, most
    grown first."""
    dev = [r for r in rows if not r.get("long")]
    took = sum(own_seconds(r) for r in dev) / workers
    line = (
        f"developer suite: {len(dev)} tests, {took:.0f} s on {workers} workers "
        f"(test seconds / workers); budget {budget:.0f} s"
    )
    if took <= budget:
        print(line + ": within it")
        return 0
    try:
        recorded = json.loads(seconds.read_text("utf-8"))
    except (OSError, ValueError):
        recorded = {}
    now: dict[str, float] = defaultdict(float)
    before: dict[str, float] = defaultdict(float)
    for r in dev:
        name = r["test"].split("::")[0]
        now[name] += own_seconds(r)
        before[name] += float(recorded.get(r["test"], 0.0))
    grown = sorted(((now[f] - before[f], f) for f in now if now[f] - before[f] >= 1.0), reverse=True)
    print(line + ": OVER BUDGET", file=sys.stderr)
    for d, f in grown[:15]:
        print(f"  {f}: {before[f]:.0f} s recorded -> {now[f]:.0f} s now (+{d:.0f} s)", file=sys.stderr)
    print(
        "  move a test of minutes to the long set (tests/conftest.py LONG), shrink it, or record a run's "
        f"times (python scripts/test_times.py FILE --write {seconds.name}): tests measured at tests/conftest.py LONG_SECONDS or more are long",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
