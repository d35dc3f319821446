"""Measured leak rate of `proagent curate` on a planted-PII corpus.

Builds real rendered screenshots (Pillow, Noto Sans CJK) carrying one kind of personal data
each, in English and in Chinese, plus clean screens, inside a LifeTrace database whose OCR rows
hold the planted text (``tests/pii_screens.py`` ``make_pii_corpus``); runs the curation
with the offline screener; then looks for every planted value everywhere in the output:
the output images re-read with OCR, the output database (every table), ``privacy.jsonl``,
``curation.jsonl``, the resume/review state, and the report of ``proagent stats`` on the
output. Prints, per PII type: screenshots planted, detected by the pipeline (recall), and
values left anywhere in the output; and the false-positive rate on clean screens (any
action other than retain). The baseline column is the raw input (no curation): every
planted value is still there.

    python benchmarks/privacy.py [--json out.json] [--keep DIR] [--smoke]

``--smoke`` (CI): two types (e-mail, blurred; bank card, deleted) in English and Chinese, one
rendering, one clean screen: 5 screenshots instead of 52.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _common import guard_network, machine_note, render_table, smoke_threads, write_result  # noqa: E402

SMOKE_TYPES = ("email", "bank_card")
"""``--smoke``'s planted types: one the risk rule blurs, one it deletes."""


def _norm(s: str) -> str:
    return "".join(s.split()).lower()


def _texts_of(folder: Path) -> str:
    """Every text file and database under ``folder``, as one string."""
    parts: list[str] = []
    for p in sorted(folder.rglob("*")):
        if not p.is_file():
            continue
        if p.suffix == ".db":
            con = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
            parts.append("\n".join(con.iterdump()))
            con.close()
        elif p.suffix in {".json", ".jsonl", ".html", ".svg", ".txt", ".csv"}:
            parts.append(p.read_text("utf-8", "replace"))
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument(
        "--keep", type=Path, default=None, help="build the corpus and output here (kept) instead of a temp dir"
    )
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest setting (CI): e-mail and bank card, en/zh, one style, 1 clean screen",
    )
    args = ap.parse_args(argv)
    if args.smoke:
        smoke_threads()  # one RapidOCR thread (issue 45)
    guard_network()
    note, machine = machine_note()
    print(note)

    from click.testing import CliRunner
    from pii_screens import STYLES, make_pii_corpus

    from proagent.cli import cli
    from proagent.curate import OcrScreener, curate, find_pii
    from proagent.curate._screen import ocr_lines

    work = args.keep or Path(tempfile.mkdtemp(prefix="proagent-privacy-"))

    styles = STYLES[:1] if args.smoke else STYLES
    corpus = make_pii_corpus(
        work / "raw" / "P01", styles=styles, **({"types": SMOKE_TYPES, "n_clean": 1} if args.smoke else {})
    )
    out = work / "out"
    n_shots = len(corpus.planted) + len(corpus.clean_ids)
    t0 = time.monotonic()
    curate(corpus.root, out, OcrScreener())
    seconds = time.monotonic() - t0
    stats_dir = work / "stats"
    res = CliRunner().invoke(cli, ["stats", str(out), "--out", str(stats_dir)])
    if res.exit_code != 0:
        print(f"proagent stats on the output failed: {res.output.strip()}", file=sys.stderr)
        return 1

    privacy = {d["screenshot_id"]: d for d in map(json.loads, (out / "privacy.jsonl").read_text("utf-8").splitlines())}
    images = sorted((out / "P01" / "screenshots").iterdir())
    reocr = {p.name: "\n".join(ocr_lines(p)) for p in images}
    text_out = _norm(_texts_of(out) + _texts_of(stats_dir))
    image_text = _norm("\n".join(reocr.values()))
    raw_text = _norm(_texts_of(corpus.root))
    raw_images = _norm("\n".join("\n".join(ocr_lines(p)) for p in sorted((corpus.root / "screenshots").iterdir())))

    rows = []
    per: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for sid, (kind, lang, value) in corpus.planted.items():
        d = per[kind]
        d["n"] += 1
        d["detected"] += int(kind in privacy[sid]["types"])
        v = _norm(value)
        d["left_db_logs"] += int(v in text_out)
        d["left_images"] += int(v in image_text)
        d["raw_db"] += int(v in raw_text)
        d["raw_images"] += int(v in raw_images)
        d[privacy[sid]["action"]] += 1
    for kind, d in per.items():
        rows.append(
            {
                "type": kind,
                "n": d["n"],
                "recall": d["detected"] / d["n"],
                "blur": d["blur"],
                "delete": d["delete"],
                "left_db": d["left_db_logs"],
                "left_img": d["left_images"],
                "raw_db": d["raw_db"],
                "raw_img": d["raw_images"],
            }
        )
    tot = {k: sum(r[k] for r in rows) for k in ("n", "blur", "delete", "left_db", "left_img", "raw_db", "raw_img")}
    tot["recall"] = sum(per[k]["detected"] for k in per) / tot["n"]
    rows.append({"type": "all", **tot})
    fp = sum(privacy[s]["action"] != "retain" for s in corpus.clean_ids)
    fp_types = sorted({t for s in corpus.clean_ids for t in privacy[s]["types"]})
    leftover_pii = [f.type for txt in reocr.values() for f in find_pii(txt)]
    print(
        f"\ncorpus: {len(corpus.planted)} planted screenshots ({len(per)} types x en/zh x {len(styles)} styles), "
        f"{len(corpus.clean_ids)} clean; curate took {seconds:.1f} s ({seconds / n_shots:.2f} s/screenshot)\n"
    )
    columns = [
        ("type", "type", ""),
        ("n", "n", "d"),
        ("recall", "recall", ".3f"),
        ("blur", "blurred", "d"),
        ("delete", "deleted", "d"),
        ("left_db", "left: db+logs+reports", "d"),
        ("left_img", "left: re-OCR images", "d"),
        ("raw_db", "raw: db", "d"),
        ("raw_img", "raw: OCR images", "d"),
    ]
    print(render_table(rows, columns))
    print(
        f"\nclean screens changed (false positives): {fp} of {len(corpus.clean_ids)} "
        f"(rate {fp / max(1, len(corpus.clean_ids)):.3f})" + (f", types: {', '.join(fp_types)}" if fp_types else "")
    )
    print(
        f"structured PII found by the detectors in re-OCR of published images: {len(leftover_pii)}"
        + (f" ({', '.join(sorted(set(leftover_pii)))})" if leftover_pii else "")
    )
    print(
        "recall: planted screenshots whose type the pipeline detected; left: planted values (spaces ignored) "
        "still found in the output; raw: the same search in the uncurated input (baseline)"
    )
    write_result(
        args.json,
        benchmark="privacy",
        rows=rows,
        columns=columns,
        machine=machine,
        baseline_columns=["raw_db", "raw_img"],
        baseline="the same search for every planted value in the uncurated input (raw: db, raw: OCR images)",
        note=f"{len(corpus.planted)} planted screenshots, {len(corpus.clean_ids)} clean ones; curate (offline "
        f"screener) took {seconds:.1f} s ({seconds / n_shots:.2f} s/screenshot); clean screens changed "
        f"(false positives): {fp} of {len(corpus.clean_ids)}; structured PII the detectors find in the "
        f"re-OCR of the published images: {len(leftover_pii)}. recall: planted screenshots whose type "
        "was detected; left: planted values (spaces ignored) still found in the output",
        conditions=f"--smoke: types {', '.join(SMOKE_TYPES)}, style {styles[0]}, 1 clean screen (the full "
        "run: every type, both styles, 10 clean screens)"
        if args.smoke
        else "",
        figures={
            "seconds": seconds,
            "n_screenshots": n_shots,
            "false_positives": fp,
            "n_clean": len(corpus.clean_ids),
            "leftover_pii": leftover_pii,
        },
    )
    if not args.keep:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
