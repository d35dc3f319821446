"""Events that switches between editor files and terminals make, against the truth (issue 47 item 2).

    python benchmarks/title_split.py [--json out.json] [--smoke]

On the scripted sequence of foreground editor and terminal windows of
``tests/scenarios/document_titles.py`` (38 moments, one a second: two xterms with bash prompts, vim
and nvim, a clock in a prompt title, emerge's progress, a CLI tool's spinner; VS Code, gedit, Kate,
PyCharm, Emacs with their unsaved markers; 22 true events), prints per event rule the events made,
the false splits (an event starting where the truth has none), the missed splits, and boundary
precision and recall:

* ``app`` (the baseline: LifeTrace's rule, ``capture --no-split-in-app``),
* ``every title`` (``capture --split-on-title``),
* ``document rule, titles`` (the ActivityWatch and screenpipe readers: titles, no window id),
* ``document rule, titles + window ids`` (``proagent capture``'s default: it knows the X11 window).

Pure computation (no model, no screen): the figures do not depend on the machine's load. The full
run is already the smallest setting: ``--smoke`` (CI, ``tests/cross/test_benchmarks_smoke_desktop.py``)
runs it unchanged. The same rules on browser tabs: ``benchmarks/tab_split.py``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _common import machine_note, render_table, write_result  # noqa: E402
from scenarios.document_titles import MOMENTS, truth_starts  # noqa: E402
from tab_split import COLUMNS, boundary_rows  # noqa: E402

from proagent.pages import split_points  # noqa: E402


def rules() -> dict[str, list[int]]:
    """Rule name -> the moments at which it starts an event."""
    titles = [(a, t, None) for a, t, _, _ in MOMENTS]
    return {
        "app (baseline)": split_points(titles, tabs=False),
        "every title": [i for i, m in enumerate(MOMENTS) if i == 0 or m[:2] != MOMENTS[i - 1][:2]],
        "document rule, titles": split_points(titles),
        "document rule, titles + window ids": split_points([(a, t, None, w) for a, t, w, _ in MOMENTS]),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, default=None, help="write the figures here as JSON")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest setting (CI): the same run (38 moments, pure computation, under a second)",
    )
    a = ap.parse_args(argv)
    note, machine = machine_note()
    print(note)
    truth = set(truth_starts())
    rows = boundary_rows(rules(), truth)
    print(f"{len(MOMENTS)} window moments, {len(truth)} true events (tests/scenarios/document_titles.py)")
    columns = COLUMNS
    print(render_table(rows, columns))
    for r in rows[2:]:
        for what in ("missed", "false"):
            at = r[f"{what}_at"]
            if at:
                print(f"{r['rule']}: {what} at {', '.join(f'{MOMENTS[i][0]} {MOMENTS[i][1]!r}' for i in at)}")
    write_result(
        a.json,
        benchmark="title_split",
        rows=rows,
        columns=columns,
        machine=machine,
        baseline="the app rule (LifeTrace's: a new event only when the app changes, capture --no-split-in-app)",
        note=f"{len(MOMENTS)} editor and terminal window moments, {len(truth)} true events "
        "(tests/scenarios/document_titles.py); pure computation, the figures do not depend on the load",
        conditions="--smoke: the same run (the full run is the smallest)" if a.smoke else "",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
