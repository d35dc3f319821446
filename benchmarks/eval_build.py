"""``proagent eval --limit N``'s task build on an empty embedding cache: the code of
``--baseline-rev`` (``git archive``) embeds the reference queries of the whole split, this
checkout only those of the first N samples (``references_embedded_later`` +
``embed_task_references``, as ``proagent eval`` does). Each in a fresh process with its own
empty ``PROAGENT_EMBEDDING_CACHE``, alternating, ``--repeats`` times; prints wall and CPU
seconds (user + system of the child: steadier than wall on a loaded machine) and the load.

Run:  python benchmarks/eval_build.py [--baseline-rev 8650458] [--limit 2] [--repeats 3] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA, REPO, machine_note, parse_args, render_table, run_main, source_of, write_result  # noqa: E402

OLD = """
import sys
from proagent.bench.tasks import assist
t = assist(data=sys.argv[1])
"""
NEW = """
import sys
from proagent.bench.tasks import assist, embed_task_references, references_embedded_later
with references_embedded_later():
    t = assist(data=sys.argv[1])
print(embed_task_references(t, int(sys.argv[2])))
"""


def _one(src: Path, code: str, data: Path, limit: int, cache: Path) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": str(src), "PROAGENT_EMBEDDING_CACHE": str(cache)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, str(data), str(limit)], env=env, check=True, capture_output=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline-rev", default="8650458")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--limit", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None, help="write the run here (docs/results/eval_build.json)")
    ap.add_argument("--smoke", action="store_true", help="the smallest setting (CI): --limit 1, one repeat")
    a = parse_args(ap, smoke={"limit": 1, "repeats": 1}, positive=("limit", "repeats"), existing=("data",))
    note, machine = machine_note()
    print(note, flush=True)
    with tempfile.TemporaryDirectory(prefix="proagent-eval-build-") as tmp:
        old = source_of(a.baseline_rev, Path(tmp) / "old")
        new = REPO / "src"
        for src in (old, new):
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True)
        runs: dict[str, list[tuple[float, float]]] = {"old": [], "new": []}
        for r in range(a.repeats):
            runs["old"].append(_one(old, OLD, a.data, a.limit, Path(tmp) / f"emb-old-{r}"))
            runs["new"].append(_one(new, NEW, a.data, a.limit, Path(tmp) / f"emb-new-{r}"))
    rows = [
        {
            "code": f"baseline {a.baseline_rev}: every reference of the split",
            "wall": statistics.median(w for w, _ in runs["old"]),
            "cpu": statistics.median(c for _, c in runs["old"]),
        },
        {
            "code": f"this checkout: the first {a.limit} samples' references",
            "wall": statistics.median(w for w, _ in runs["new"]),
            "cpu": statistics.median(c for _, c in runs["new"]),
        },
    ]
    columns = [
        ("code", "task build, empty embedding cache", ""),
        ("wall", "wall s (median)", ".2f"),
        ("cpu", "CPU s (median)", ".2f"),
    ]
    rows[0]["baseline"] = True
    print(render_table(rows, columns))
    print(f"repeats {a.repeats}; load average at the end: {os.getloadavg()[0]:.2f}")
    write_result(
        a.json,
        benchmark="eval_build",
        rows=rows,
        columns=columns,
        machine=machine,
        baseline=f"the code of {a.baseline_rev} (git archive), embedding every reference of the split",
        note=f"eval --limit {a.limit}'s task build in a fresh process on an empty embedding cache, "
        f"old and new alternating, median of {a.repeats}",
        conditions=""
        if a.repeats >= 3 and a.limit == 2
        else f"--limit {a.limit} --repeats {a.repeats} (the documented run: --limit 2 --repeats 3)",
    )


if __name__ == "__main__":
    run_main(main)
