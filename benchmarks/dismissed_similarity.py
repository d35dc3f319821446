"""Where ``proagent live`` draws the line between "the offer the person dismissed, again" and "a new
offer in the same app" (:data:`proagent.live.DISMISSED_SIMILARITY`, e5 cosine of the two queries).

Pairs of How-to-Assist queries from the ProactiveBench development sessions (the six real sessions
in ``shared/data/proactivebench``; the held-out six are not read), chosen without the embedding:

* **again** (should be held): a candidate task of one event and a task of the session's next event
  that says nearly the same (token Jaccard >= 0.5): the same offer, reworded, a moment later;
* **new** (should pass): two different candidate tasks of one event (token Jaccard < 0.3): another
  question about the same screen.

For thresholds 0.85 .. 0.97 it prints the share of "again" pairs held and of "new" pairs held
(wrongly), beside the baseline of holding only an identical query (exact match). Writes JSON with
``--json``.

    python benchmarks/dismissed_similarity.py [--data ../shared/data/proactivebench] [--json out.json]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import guard_network, machine_note, parse_args, percentile, render_table, watchdog, write_result  # noqa: E402

_WORD = re.compile(r"\w+")


def _tokens(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def jaccard(a: str, b: str) -> float:
    """Token Jaccard similarity of two texts (0-1)."""
    x, y = _tokens(a), _tokens(b)
    return len(x & y) / len(x | y) if x | y else 0.0


def pairs(data: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(again, new) query pairs of the sessions in ``data`` (see the module docstring)."""
    from proagent.sources.load import load_events

    by_session: dict[str, list] = defaultdict(list)
    for e in load_events(data):
        by_session[e.user].append(e)
    again, new = [], []
    for evs in by_session.values():
        evs.sort(key=lambda e: e.start)
        for a, b in zip(evs, evs[1:]):
            for q in a.candidate_tasks:
                best = max(b.candidate_tasks, key=lambda r: jaccard(q, r), default=None)
                if best is not None and jaccard(q, best) >= 0.5 and q != best:
                    again.append((q, best))
        for e in evs:
            ts = list(e.candidate_tasks)
            new += [
                (ts[i], ts[j]) for i in range(len(ts)) for j in range(i + 1, len(ts)) if jaccard(ts[i], ts[j]) < 0.3
            ]
    return again, new


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "proactivebench"
    )
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--smoke", action="store_true", help="the smallest setting (CI): the first 10 pairs of each kind")
    args = parse_args(ap, positive=("timeout",), existing=("data",))
    guard_network()
    watchdog(args.timeout)
    note, info = machine_note()
    print(note)
    data = args.data if args.data.is_dir() else Path("/work/shared/data/proactivebench")
    from proagent.embedding import embed
    from proagent.live import DISMISSED_SIMILARITY

    again, new = pairs(data)
    if args.smoke:
        again, new = again[:10], new[:10]
    t0 = time.perf_counter()

    def cosines(ps: list[tuple[str, str]]) -> list[float]:
        a, b = embed([p[0] for p in ps]), embed([p[1] for p in ps])
        return [float(x) for x in (a * b).sum(axis=1)]

    ca, cn = cosines(again), cosines(new)
    took = time.perf_counter() - t0
    rows = [
        {
            "rule": "exact match (baseline)",
            "again": sum(p[0] == p[1] for p in again) / len(again),
            "new": sum(p[0] == p[1] for p in new) / len(new),
        }
    ]
    for th in (0.85, 0.88, 0.90, 0.91, 0.92, 0.93, 0.94, 0.95, 0.97):
        mark = "  <- DISMISSED_SIMILARITY" if abs(th - DISMISSED_SIMILARITY) < 1e-9 else ""
        rows.append(
            {
                "rule": f"e5 cosine >= {th:.2f}{mark}",
                "again": sum(c >= th for c in ca) / len(ca),
                "new": sum(c >= th for c in cn) / len(cn),
            }
        )
    print(
        f"{len(again)} 'again' pairs (next event, Jaccard >= 0.5), {len(new)} 'new' pairs (same event, "
        f"Jaccard < 0.3); {len(again) + len(new)} pairs embedded in {took:.1f} s"
    )
    for name, cs in (("again", ca), ("new", cn)):
        print(
            f"  {name}: cosine p5 {percentile(cs, 5):.3f}, p50 {percentile(cs, 50):.3f}, p95 {percentile(cs, 95):.3f}"
        )
    columns = [("rule", "hold rule", ""), ("again", "'again' held", ".1%"), ("new", "'new' held (wrongly)", ".1%")]
    rows[0]["baseline"] = True
    print(render_table(rows, columns))
    write_result(
        args.json,
        benchmark="dismissed_similarity",
        rows=rows,
        columns=columns,
        machine=info,
        baseline="holding only an identical query (exact match)",
        note=f"{len(again)} 'again' pairs (a task of the next event, token Jaccard >= 0.5) and {len(new)} "
        "'new' pairs (two tasks of one event, Jaccard < 0.3) from the six ProactiveBench dev sessions; "
        f"live holds a query at e5 cosine >= DISMISSED_SIMILARITY = {DISMISSED_SIMILARITY}",
        figures={
            "n_again": len(again),
            "n_new": len(new),
            "again_cosines": ca,
            "new_cosines": cn,
            "threshold": DISMISSED_SIMILARITY,
            "embed_seconds": took,
        },
    )


if __name__ == "__main__":
    main()
