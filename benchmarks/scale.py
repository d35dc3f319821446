"""Scale benchmark: generate synthetic LifeTrace databases of about 100k and 1M
screenshot rows, then time reading them (``load_events``) and building
When/How-to-Assist samples (``build_samples``), with peak memory; with
``--baseline-rev REV`` the same databases are also read by the code of git revision
``REV`` (``git archive REV src`` in a temporary folder), and both are printed side by side.

    python benchmarks/scale.py [--sizes 100k,1m] [--keep DIR] [--baseline-rev main] [--json out.json]

The machine's load average is printed first (figures taken under load are slower).
Each size and code version runs in a fresh child process so its peak resident memory
(``ru_maxrss``) is its own; Python-level peak allocation is measured with
``tracemalloc`` in a second, separate pass (tracemalloc slows Python down, so
the timed pass runs without it). Sizes: ``100k`` = 1 user x 21 days,
``1m`` = 10 users x 21 days (5 s between screenshot rows, seed 0). ``same`` says
whether both versions gave the same samples (SHA-256 over ids, labels and context ids).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_note, source_of, write_result  # noqa: E402

SIZES = {"smoke": (1, 1), "100k": (1, 21), "1m": (10, 21)}
"""(users, days) of each size; ``smoke`` is the smallest setting, run by the tests so a refactor cannot break this script unseen."""
REPO = Path(__file__).resolve().parent.parent


def child(size: str, root: Path, trace: bool) -> dict:
    from proagent.bench.samples import build_samples
    from proagent.sources.load import load_events
    from proagent.synth import SynthConfig, generate
    from proagent.synth.records import SynthManifest

    users, days = SIZES[size]
    out = root / size
    res = {"size": size}
    if not (out / "synth.json").is_file():
        t = time.perf_counter()
        g = generate(out, SynthConfig(users=users, days=days, seed=0))
        res["generate_s"] = time.perf_counter() - t
    else:
        g = SynthManifest.from_json(json.loads((out / "synth.json").read_text()))
        res["generate_s"] = None
    res.update(users=users, events=g.events, llm_events=g.llm_events, screenshots=g.screenshots)
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if trace:
        import tracemalloc

        tracemalloc.start()
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    t = time.perf_counter()
    events = load_events(out)
    res["read_s"] = time.perf_counter() - t
    t = time.perf_counter()
    samples = build_samples(events)
    res["samples_s"] = time.perf_counter() - t
    res["samples"] = len(samples)
    done = resource.getrusage(resource.RUSAGE_SELF)
    res["cpu_s"] = done.ru_utime - cpu.ru_utime + done.ru_stime - cpu.ru_stime
    if trace:
        res["py_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
    res["rss_peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    res["rss_before_mb"] = base_rss
    digest = hashlib.sha256()
    for s in samples:
        digest.update(f"{s.id}|{s.label}|{s.split}|{s.current.id}|{','.join(e.id for e in s.context)}\n".encode())
    res["digest"] = digest.hexdigest()[:12]
    return res



def _run(size: str, root: Path, src: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src)}
    r: dict = {}
    for trace in ("0", "1"):
        p = subprocess.run([sys.executable, __file__, "--child", size, str(root), trace],
                           capture_output=True, text=True, check=True, env=env)
        got = json.loads(p.stdout.strip().splitlines()[-1])
        if trace == "0":
            r = got
        else:
            r["py_peak_mb"] = got["py_peak_mb"]
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100k,1m")
    ap.add_argument("--keep", type=Path, default=None, help="Folder for the databases (default: a temporary one).")
    ap.add_argument("--baseline-rev", default=None, help="Also run the code of this git revision on the same databases.")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child[0], Path(a.child[1]), a.child[2] == "1")))
        return
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg())
          + f" on {os.cpu_count()} CPUs", flush=True)
    _, machine = machine_note()
    tmp = None if a.keep else tempfile.TemporaryDirectory(prefix="proagent-scale-")
    root = a.keep or Path(tmp.name)
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="proagent-baseline-") as base_dir:
            base_src = source_of(a.baseline_rev, Path(base_dir)) if a.baseline_rev else None
            for size in a.sizes.split(","):
                new = _run(size, root, REPO / "src")
                new["code"] = "this tree"
                rows.append(new)
                if base_src is not None:
                    old = _run(size, root, base_src)
                    old["code"] = a.baseline_rev
                    new["same"] = old["same"] = "yes" if old["digest"] == new["digest"] else "NO"
                    rows.append(old)
                    rows.append({"size": size, "code": "ratio old/new",
                                 **{k: old[k] / new[k] for k in ("read_s", "samples_s", "cpu_s", "rss_peak_mb") if new.get(k)}})
    finally:
        if tmp is not None:
            tmp.cleanup()
    cols = ["size", "code", "users", "events", "llm_events", "screenshots", "samples", "generate_s", "read_s",
            "samples_s", "cpu_s", "rss_peak_mb", "py_peak_mb", "same"]
    fmt = lambda v: f"{v:.2f}" if isinstance(v, float) else ("-" if v is None else str(v))  # noqa: E731
    table = [cols] + [[fmt(r.get(c)) for c in cols] for r in rows]
    w = [max(len(t[i]) for t in table) for i in range(len(cols))]
    for t in table:
        print("  ".join(x.rjust(n) for x, n in zip(t, w)))
    print("generate_s: synth time; read_s: load_events (all DBs); samples_s: build_samples (default config); "
          "rss_peak_mb: peak resident memory of the child (generate + read + samples); py_peak_mb: tracemalloc peak "
          "of read + samples (separate pass); same: both versions gave the same samples")
    for r in rows:
        r["baseline"] = r.get("code") == a.baseline_rev
    write_result(a.json, benchmark="scale", machine=machine, rows=rows,
                 columns=[("size", "size", ""), ("code", "code", ""), ("screenshots", "screenshot rows", ""),
                          ("events", "events", ""), ("samples", "samples", ""), ("read_s", "read s", ".2f"),
                          ("samples_s", "samples s", ".2f"), ("cpu_s", "CPU s", ".2f"), ("rss_peak_mb", "peak RSS MB", ".0f"),
                          ("same", "same samples", "")],
                 baseline=f"the code of {a.baseline_rev} (git archive) on the same databases" if a.baseline_rev
                 else "none (run with --baseline-rev)",
                 note="read s: load_events of all the databases; samples s: build_samples (default config); peak RSS: "
                      "the child process (generate + read + samples); databases generated by proagent synth, seed 0",
                 conditions="" if a.sizes == "100k,1m" else f"smaller databases (--sizes {a.sizes}; the full run: 100k,1m)")


if __name__ == "__main__":
    main()
