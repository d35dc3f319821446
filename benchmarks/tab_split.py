"""Events a browser's tab switches make, against the truth (issue 34 item 3).

    python benchmarks/tab_split.py [--json out.json] [--smoke]

On the scripted sequence of foreground windows with real browser titles of
``tests/scenarios/browser_titles.py`` (33 moments: Gmail, Outlook, ChatGPT, Gemini, Claude, Kimi,
DeepSeek, GitHub, Stack Overflow, Flask/Python/pandas docs, Google Docs, an xterm; 19 true
events), prints per event rule the events made, the false splits (an event starting where the
truth has none), the missed splits, and boundary precision and recall:

* ``app`` (the baseline: LifeTrace's rule, ``capture --no-split-in-app``),
* ``every title`` (``capture --split-on-title``),
* ``tab rule, titles`` (``capture``'s default; LifeTrace-format logs have titles only),
* ``tab rule, titles + URLs`` (ActivityWatch with its web watcher, screenpipe's ``browser_url``).

Pure computation (no model, no screen): the figures do not depend on the machine's load. The full
run is already the smallest setting: ``--smoke`` (CI, ``tests/cross/test_benchmarks_smoke_desktop.py``)
runs it unchanged.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _common import machine_note, render_table, write_result  # noqa: E402
from scenarios.browser_titles import MOMENTS, truth_starts  # noqa: E402

from proagent.pages import split_points  # noqa: E402


def rules() -> dict[str, list[int]]:
    """Rule name -> the moments at which it starts an event."""
    titles = [(a, t, None) for a, t, _, _ in MOMENTS]
    return {
        "app (baseline)": split_points(titles, tabs=False),
        "every title": [i for i, m in enumerate(MOMENTS) if i == 0 or m[:2] != MOMENTS[i - 1][:2]],
        "tab rule, titles": split_points(titles),
        "tab rule, titles + URLs": split_points([(a, t, u) for a, t, u, _ in MOMENTS]),
    }


COLUMNS = [
    ("rule", "rule", "s"),
    ("events", "events", "d"),
    ("true_events", "truth", "d"),
    ("false_splits", "false splits", "d"),
    ("missed_splits", "missed splits", "d"),
    ("precision", "boundary P", ".3f"),
    ("recall", "boundary R", ".3f"),
]
"""The table of an event-splitting benchmark (this one and ``title_split.py``)."""


def boundary_rows(rules: dict[str, list[int]], truth: set[int]) -> list[dict]:
    """One row per rule: events made, false and missed splits against ``truth`` (the moments where
    a true event starts), boundary precision and recall; a rule named ``... (baseline)`` is the baseline."""
    rows = []
    for name, starts in rules.items():
        got = set(starts)
        tp = len(got & truth)
        rows.append(
            {
                "rule": name,
                "events": len(starts),
                "true_events": len(truth),
                "false_splits": len(got - truth),
                "missed_splits": len(truth - got),
                "precision": round(tp / len(got), 3) if got else None,
                "recall": round(tp / len(truth), 3),
                "missed_at": sorted(truth - got),
                "false_at": sorted(got - truth),
                "baseline": "baseline" in name,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, default=None, help="write the figures here as JSON")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest setting (CI): the same run (33 moments, pure computation, under a second)",
    )
    a = ap.parse_args(argv)
    note, machine = machine_note()
    print(note)
    truth = set(truth_starts())
    rows = boundary_rows(rules(), truth)
    print(f"{len(MOMENTS)} window moments, {len(truth)} true events (tests/scenarios/browser_titles.py)")
    columns = COLUMNS
    print(render_table(rows, columns))
    for r in rows:
        if r["missed_at"]:
            print(f"{r['rule']}: missed at {', '.join(repr(MOMENTS[i][1]) for i in r['missed_at'])}")
    write_result(
        a.json,
        benchmark="tab_split",
        rows=rows,
        columns=columns,
        machine=machine,
        baseline="the app rule (LifeTrace's: a new event only when the app changes, capture --no-split-in-app)",
        note=f"{len(MOMENTS)} window moments with real browser titles, {len(truth)} true events "
        "(tests/scenarios/browser_titles.py); pure computation, the figures do not depend on the load",
        conditions="--smoke: the same run (the full run is the smallest)" if a.smoke else "",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
