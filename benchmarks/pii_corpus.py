"""Recall per personal-data type, each type ALONE on a screen, and false positives on ordinary pages,
through the real curate path (issue 34 item 1).

Renders the screens of ``tests/pii_screens.py`` (:data:`ALONE`: one planted type among ordinary lines,
English and Chinese; :data:`ORDINARY`: code, pytest output, chats and LLM replies full of numbers,
prices, dates, order and tracking numbers, documents) as images in a LifeTrace folder with no OCR
rows, and curates it with the offline screener: RapidOCR reads every image (``ocr.load_ocr``),
``find_pii`` finds the data, the risk rule decides delete / blur / retain. The same corpus is curated
by the code of ``--baseline-rev`` (``git archive REV src``, main before this change) in the same
run. Per type: screens, recall (the planted type detected and the screen not retained), what was
done, and planted values left in the published database text; on ordinary pages: screens changed
and findings per screen.

    python benchmarks/pii_corpus.py [--baseline-rev 1a1b08a] [--json out.json] [--keep DIR] [--smoke]

``--smoke`` (CI): three screens (:data:`SMOKE`: an e-mail address, a US SSN, an order page) beside
the same baseline, and ``find_pii``'s cost over their lines once instead of ten times.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _common import REPO, guard_network, machine_note, render_table, smoke_threads, source_of, write_result  # noqa: E402

CHILD = """
import json, sys, time
from proagent.curate import OcrScreener, curate
t = time.perf_counter()
curate(sys.argv[1], sys.argv[2], OcrScreener())
print(json.dumps({"seconds": time.perf_counter() - t}))
"""


def _curate(src: Path, raw: Path, out: Path) -> float:
    """Curate ``raw`` into ``out`` with the proagent package under ``src`` (a child process);
    returns the seconds curate took."""
    env = dict(os.environ, PYTHONPATH=str(src))
    res = subprocess.run(
        [sys.executable, "-c", CHILD, str(raw), str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    if res.returncode != 0:
        raise SystemExit(f"curate with {src} failed:\n{res.stderr[-2000:]}")
    return float(json.loads(res.stdout.strip().splitlines()[-1])["seconds"])


TEXT_CHILD = """
import json, sys, time
from proagent.curate import find_pii
lines = json.loads(sys.stdin.read())
find_pii("warm up alice@example.com +1 415 555 2671")
best = None
for _ in range(3):
    t = time.process_time()
    for line in lines:
        find_pii(line)
    best = min(best or 1e9, time.process_time() - t)
print(json.dumps({"ms_per_line": 1000 * best / len(lines)}))
"""


def _text_cost(src: Path, lines: list[str]) -> float:
    """CPU ms per line of ``find_pii`` (the package under ``src``) over ``lines``, best of 3."""
    env = dict(os.environ, PYTHONPATH=str(src))
    res = subprocess.run(
        [sys.executable, "-c", TEXT_CHILD],
        input=json.dumps(lines),
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=True,
    )
    return float(json.loads(res.stdout.strip().splitlines()[-1])["ms_per_line"])


SMOKE = ("email", "us_ssn", "order")
"""``--smoke``'s screens (names in ``tests/pii_screens.py``): a type blurred, a type deleted, an ordinary page."""


def _norm(s: str) -> str:
    return "".join(s.split()).lower()


def score(out: Path, shown: dict) -> dict:
    """Figures of one curated output: per planted type and on ordinary pages."""
    priv = {d["screenshot_id"]: d for d in map(json.loads, (out / "privacy.jsonl").read_text("utf-8").splitlines())}
    con = sqlite3.connect(f"file:{out / 'P01' / 'lifetrace_privacy_processed.db'}?mode=ro", uri=True)
    published = _norm("\n".join(con.iterdump()))
    con.close()
    per: dict[str, dict] = {}
    ordinary = {"n": 0, "changed": 0, "findings": 0, "types": set()}
    for sid, sc in shown.items():
        v = priv[sid]
        if not sc.planted:
            ordinary["n"] += 1
            ordinary["changed"] += int(v["action"] != "retain")
            ordinary["findings"] += len(v["types"])
            ordinary["types"] |= set(v["types"])
            continue
        for t in sc.planted:
            d = per.setdefault(t, {"n": 0, "found": 0, "delete": 0, "blur": 0, "retain": 0, "left": 0})
            d["n"] += 1
            d["found"] += int(t in v["types"] and v["action"] != "retain")
            d[v["action"]] += 1
        per_left = sum(_norm(val) in published for val in sc.values)
        for t in sc.planted:
            per[t]["left"] += int(per_left > 0)
    ordinary["types"] = sorted(ordinary["types"])
    return {"per_type": per, "ordinary": ordinary}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline-rev", default="1a1b08a", help="git revision curated beside this tree ('': none)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument("--keep", type=Path, default=None, help="build the corpus and outputs here (kept)")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help=f"the smallest setting (CI): the screens {', '.join(SMOKE)} beside the same baseline",
    )
    a = ap.parse_args(argv)
    if a.smoke:
        smoke_threads()  # one RapidOCR thread (issue 45)
    guard_network()
    note, machine = machine_note()
    print(note, flush=True)
    from pii_screens import ALONE, ORDINARY, make_screens_corpus

    work = a.keep or Path(tempfile.mkdtemp(prefix="proagent-pii-corpus-"))
    raw = work / "raw" / "P01"
    screens = tuple(sc for sc in ALONE + ORDINARY if not a.smoke or sc.name in SMOKE)
    shown = make_screens_corpus(raw, screens)
    codes = [("this tree", REPO / "src")]
    if a.baseline_rev:
        codes.append((a.baseline_rev, source_of(a.baseline_rev, work / "baseline")))
    results = {}
    for code, src in codes:
        t = time.perf_counter()
        secs = _curate(src, raw, work / f"out-{len(results)}")
        results[code] = score(work / f"out-{len(results)}", shown) | {"seconds": secs}
        print(f"{code}: curated {len(shown)} screens in {time.perf_counter() - t:.0f} s", flush=True)
    lines = [line for sc in screens for line in (sc.title, *sc.lines)] * (1 if a.smoke else 10)
    for code, src in codes:
        results[code]["find_pii_ms_per_line"] = _text_cost(src, lines)
    new, base = results["this tree"], results.get(a.baseline_rev)
    rows = []
    for t, d in new["per_type"].items():
        b = base["per_type"].get(t) if base else None
        rows.append(
            {
                "type": t,
                "n": d["n"],
                "recall": d["found"] / d["n"],
                "delete": d["delete"],
                "blur": d["blur"],
                "retain": d["retain"],
                "left": d["left"],
                "base_recall": (b["found"] / b["n"]) if b else None,
                "base_left": b["left"] if b else None,
            }
        )
    print()
    columns = [
        ("type", "type", ""),
        ("n", "screens", "d"),
        ("recall", "recall", ".2f"),
        ("delete", "deleted", "d"),
        ("blur", "blurred", "d"),
        ("retain", "retained", "d"),
        ("left", "value published", "d"),
        ("base_recall", f"recall {a.baseline_rev}", ".2f"),
        ("base_left", f"published {a.baseline_rev}", "d"),
    ]
    print(render_table(rows, columns))
    for code, r in results.items():
        o = r["ordinary"]
        print(
            f"ordinary pages ({code}): {o['changed']} of {o['n']} changed, {o['findings'] / max(1, o['n']):.2f} "
            f"findings per screen"
            + (f" ({', '.join(o['types'])})" if o["types"] else "")
            + f"; curate {r['seconds']:.1f} s for {len(shown)} screens; find_pii "
            f"{r['find_pii_ms_per_line']:.2f} ms CPU per line ({len(lines)} lines, best of 3)"
        )
    print(
        "recall: screens whose planted type curate detected and did not retain; value published: screens whose "
        "planted value is in the output database text (spaces and case ignored)"
    )
    ordinary = "; ".join(
        f"{code}: {r['ordinary']['changed']} of {r['ordinary']['n']} ordinary pages changed"
        for code, r in results.items()
    )
    write_result(
        a.json,
        benchmark="pii_corpus",
        rows=rows,
        columns=columns,
        machine=machine,
        baseline_columns=["base_recall", "base_left"],
        baseline=f"the code of {a.baseline_rev} (git archive) curating the same screens",
        note=f"{len(shown)} rendered screens (each personal-data type alone among ordinary lines, and "
        f"ordinary pages), curated with the offline screener; {ordinary}. recall: screens whose "
        "planted type was detected and not retained; value published: screens whose planted value "
        "is in the output database text",
        conditions=f"--smoke: the screens {', '.join(SMOKE)} (the full run: {len(ALONE + ORDINARY)})"
        if a.smoke
        else "",
        figures={"results": results},
    )
    if not a.keep:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
