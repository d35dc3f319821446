"""Render the benchmark runs kept in docs/results/*.json (written by each benchmark's ``--json``
through ``_common.write_result``) as Markdown, so no figure is copied by hand: each table carries
its command, commit, date, the machine's load and the run's conditions, and marks its same-run
baseline rows.

    python benchmarks/render_results.py [docs/results] [--out page.md]   # the "Benchmark runs" page
    python benchmarks/render_results.py --pages [--check]                # the marked blocks of the pages

* The site's "Benchmark runs" page (every run) is rendered at every build
  (docs/hooks/generated_pages.py).
* The Results and Speed pages (:data:`PAGES`) hold blocks between
  ``<!-- results: NAME -->`` and ``<!-- /results -->``: ``--pages`` rewrites each from
  ``docs/results/NAME.json``; ``--check`` only says which differ (exit 1), and
  ``tests/test_docs.py`` fails when a committed page is not what this renders from the committed
  JSON, so the two cannot drift.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "docs" / "results"
PAGES = (ROOT / "docs" / "results.md", ROOT / "docs" / "speed.md")
"""Pages with ``<!-- results: NAME -->`` blocks."""
BLOCK = re.compile(r"(<!-- results: ([\w.-]+) -->\n)(.*?)(<!-- /results -->)", re.S)
REQUIRED = ("benchmark", "command", "date", "machine", "baseline", "columns", "rows")
"""Keys every run file must have (``_common.write_result`` writes them)."""


def _cell(v: Any, spec: str) -> str:
    if v is None:
        return "-"
    text = format(v, spec) if spec else str(v)
    return text.replace("|", "\\|")


def _load(load: Any) -> str:
    return "?" if not load else f"{load[0]:.2f}"


def _table(columns: list, rows: list[dict[str, Any]], baseline_columns: list[str] = ()) -> list[str]:
    heads = [
        h.replace("|", "\\|") + (" (baseline)" if k in baseline_columns and "baseline" not in h else "")
        for k, h, _ in columns
    ]
    lines = ["| " + " | ".join(heads) + " | baseline |", "|" + " --- |" * (len(columns) + 1)]
    for r in rows:
        lines.append(
            "| "
            + " | ".join(_cell(r.get(k), spec) for k, _, spec in columns)
            + f" | {'yes' if r.get('baseline') is True else ''} |"
        )
    return lines


def render_run(run: dict[str, Any], name: str = "", *, heading: bool = True) -> str:
    """One run as Markdown: heading (unless ``heading=False``: a block inside a page), command,
    conditions, table (baseline rows marked), further tables, note.

    Raises:
        ValueError: a key of :data:`REQUIRED` is missing (``name`` says which file).
    """
    missing = [k for k in REQUIRED if k not in run]
    if missing:
        raise ValueError(f"{name or run.get('benchmark', '?')}: missing {', '.join(missing)}")
    m = run["machine"]
    busy = m.get("busy_before")
    lines = [f"## {run['benchmark']}", ""] if heading else []
    lines += [
        f"`{run['command']}`",
        "",
        f"Commit `{run.get('commit') or '?'}`, {run['date']}; {m.get('cpus', '?')} cores, load average "
        f"{_load(m.get('loadavg_before'))} before and {_load(m.get('loadavg_after'))} after"
        + (f", CPU busy {busy:.0%} before the start" if busy is not None else "")
        + (
            " (other processes held the cores: read the times as upper bounds)."
            if busy is not None and busy > 0.25
            else "."
        )
        + (f" Conditions: {run['conditions'].rstrip('.')}." if run.get("conditions") else ""),
        "",
        f"Baseline, measured in the same run: {run['baseline']}.",
        "",
    ]
    lines += _table(run["columns"], run["rows"], run.get("baseline_columns") or [])
    for t in run.get("tables") or []:
        lines += ["", f"{t['title']}:", ""] + _table(t["columns"], t["rows"])
    if run.get("note"):
        lines += ["", run["note"]]
    return "\n".join(lines) + "\n"


def fill_page(text: str, folder: Path = FOLDER) -> str:
    """``text`` with each ``<!-- results: NAME -->`` block rendered from ``folder/NAME.json``.

    Raises:
        FileNotFoundError: a block names a run that is not kept.
    """

    def block(m: re.Match[str]) -> str:
        path = folder / f"{m.group(2)}.json"
        run = json.loads(path.read_text("utf-8"))
        return m.group(1) + "\n" + render_run(run, path.name, heading=False) + "\n" + m.group(4)

    return BLOCK.sub(block, text)


def render(folder: Path = FOLDER) -> str:
    """The whole page: an introduction, then each ``*.json`` run in ``folder`` by file name."""
    runs = sorted(folder.glob("*.json"))
    head = [
        "# Benchmark runs",
        "",
        "Rendered at every build from the JSON files in `docs/results/` that the benchmark scripts write "
        "(`python benchmarks/NAME.py ... --json docs/results/NAME.json`; `benchmarks/render_results.py`): "
        "nothing here is copied by hand. Each run carries its command, commit, date, the machine's load and "
        "its conditions, and its same-run baseline rows are marked. The [Results](results.md) and "
        "[Speed](speed.md) pages quote these runs in rendered blocks, beside earlier figures that no kept "
        "run produced (marked there as quoted by hand).",
        "",
    ]
    if not runs:
        head.append("No run is kept yet.")
    body = [render_run(json.loads(p.read_text("utf-8")), p.name) for p in runs]
    return "\n".join(head) + "\n" + "\n".join(body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", type=Path, default=FOLDER)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--pages", action="store_true", help="rewrite the results blocks of the Results and Speed pages")
    ap.add_argument("--check", action="store_true", help="with --pages: only say which page differs (exit 1)")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import parse_args

    a = parse_args(ap, existing=("folder",))
    if a.pages:
        stale = []
        for page in PAGES:
            text = page.read_text("utf-8")
            new = fill_page(text, a.folder)
            if new != text:
                stale.append(page)
                if not a.check:
                    page.write_text(new, "utf-8")
        for page in stale:
            print(f"{'differs' if a.check else 'rewrote'}: {page.relative_to(ROOT)}")
        sys.exit(1 if a.check and stale else 0)
    text = render(a.folder)
    if a.out:
        a.out.write_text(text, "utf-8")
    else:
        print(text, end="")


if __name__ == "__main__":
    main()
