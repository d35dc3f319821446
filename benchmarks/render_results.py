"""Render the benchmark runs kept in docs/results/*.json (written by each benchmark's ``--json``
through ``_common.write_result``) as the Markdown of the site's "Benchmark runs" page, so no figure
there is copied by hand: each table carries its command, commit, date and the machine's load, and
marks its same-run baseline rows.

    python benchmarks/render_results.py [docs/results] [--out page.md]

The site renders it at every build (docs/hooks/generated_pages.py); run it by hand to read the page
as text.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).resolve().parent.parent / "docs" / "results"
REQUIRED = ("benchmark", "command", "date", "machine", "baseline", "columns", "rows")
"""Keys every run file must have (``_common.write_result`` writes them)."""


def _cell(v: Any, spec: str) -> str:
    if v is None:
        return "-"
    text = format(v, spec) if spec else str(v)
    return text.replace("|", "\\|")


def _load(load: Any) -> str:
    return "?" if not load else f"{load[0]:.2f}"


def render_run(run: dict[str, Any], name: str = "") -> str:
    """One run as a Markdown section: heading, conditions, table (baseline rows marked), note.

    Raises:
        ValueError: a key of :data:`REQUIRED` is missing (``name`` says which file).
    """
    missing = [k for k in REQUIRED if k not in run]
    if missing:
        raise ValueError(f"{name or run.get('benchmark', '?')}: missing {', '.join(missing)}")
    m = run["machine"]
    busy = m.get("busy_before")
    lines = [f"## {run['benchmark']}", "", f"`{run['command']}`", "",
             f"Commit `{run.get('commit') or '?'}`, {run['date']}; {m.get('cpus', '?')} cores, load average "
             f"{_load(m.get('loadavg_before'))} before and {_load(m.get('loadavg_after'))} after"
             + (f", CPU busy {busy:.0%} before the start" if busy is not None else "")
             + (" (other processes held the cores: read the times as upper bounds)." if busy is not None and busy > 0.25
                else "."),
             "", f"Baseline, measured in the same run: {run['baseline']}.", ""]
    cols = run["columns"]
    lines.append("| " + " | ".join(h for _, h, _ in cols) + " | baseline |")
    lines.append("|" + " --- |" * (len(cols) + 1))
    for r in run["rows"]:
        lines.append("| " + " | ".join(_cell(r.get(k), spec) for k, _, spec in cols) + f" | {'yes' if r.get('baseline') else ''} |")
    if run.get("note"):
        lines += ["", run["note"]]
    return "\n".join(lines) + "\n"


def render(folder: Path = FOLDER) -> str:
    """The whole page: an introduction, then each ``*.json`` run in ``folder`` by file name."""
    runs = sorted(folder.glob("*.json"))
    head = ["# Benchmark runs", "",
            "Rendered at every build from the JSON files in `docs/results/` that the benchmark scripts write "
            "(`python benchmarks/NAME.py ... --json docs/results/NAME.json`; `benchmarks/render_results.py`): "
            "nothing here is copied by hand. Each run carries its command, commit, date and the machine's load, "
            "and its same-run baseline rows are marked. The [Results](results.md) page has the figures measured "
            "before the scripts wrote these files, each with its command and conditions.", ""]
    if not runs:
        head.append("No run is kept yet.")
    body = [render_run(json.loads(p.read_text("utf-8")), p.name) for p in runs]
    return "\n".join(head) + "\n" + "\n".join(body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", type=Path, default=FOLDER)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    text = render(a.folder)
    if a.out:
        a.out.write_text(text, "utf-8")
    else:
        print(text, end="")


if __name__ == "__main__":
    main()
