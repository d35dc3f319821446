"""Scale-out benchmark: ``proagent eval --ray`` at 1, 2 and 4 workers beside the single-machine run.

    python benchmarks/scale_out.py [--samples 48] [--latency 0.5] [--workers 1,2,4] [--json out.json] [--smoke]

The model is an OpenAI-compatible mock endpoint of fixed latency that answers one request at a
time (one model replica, as a llama.cpp server with one slot or one GPU replica); each Ray worker
gets its own endpoint (``--model-base-url`` repeated), the single-machine run one. The same
samples (ProactiveBench-shaped sessions written to a temporary folder) run:

* ``single``: ``proagent eval`` (one machine, one endpoint): the baseline, wall ``T1``;
* ``ray k``: ``proagent eval --ray ADDRESS`` on a running local cluster of ``k`` nodes with one
  CPU each (``ray.cluster_utils.Cluster``, started before the timer), ``k`` endpoints.

``ideal`` is ``T1 / k``; ``wall/ideal`` is Ray's overhead (driver connection, actor start, one task
build and ``eval_set`` per shard, merging), 1.00 meaning none. Every time is the wall time of the
whole command (process start to exit); ``model s`` is samples x latency / k, the part no
scheduler can remove. Results are checked identical to the single run (``same``).

It then turns per-moment, per-event and per-screenshot costs into a plan for ProAgentBench-sized
data (28,528 events): machines and hours with the local model on CPUs, and with a GPU server
(vLLM) at an assumed throughput (``--gpu-moments-per-s``; not measured here: this machine has no
GPU). The CPU costs default to the figures measured in docs/results.md and docs/speed.md (sources printed beside them).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # the cluster binds 127.0.0.1 only

from _common import REPO, guard_network, machine_note, parse_args, render_table, run_main, watchdog, write_result  # noqa: E402

sys.path.insert(0, str(REPO / "tests"))

from memory_fixtures import write_sessions  # noqa: E402
from ray_cluster import MODEL, LatencyEndpoint, local_cluster, ray_env  # noqa: E402

EVENTS = 28_528
"""ProAgentBench's events (Tang et al., arXiv 2602.04482, section 5)."""


def _eval(data: Path, log_dir: Path, urls: list[str], address: str | None, limit: int) -> tuple[float, dict]:
    args = [
        sys.executable,
        "-m",
        "proagent.cli",
        "eval",
        "--data",
        str(data),
        "--model",
        MODEL,
        "--log-dir",
        str(log_dir),
        "--display",
        "none",
        "--limit",
        str(limit),
    ]
    for u in urls:
        args += ["--model-base-url", u]
    if address:
        args += ["--ray", address]
    t = time.perf_counter()
    r = subprocess.run(args, cwd=log_dir.parent, env={**os.environ, **ray_env()}, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(f"benchmark: {' '.join(args[3:])} failed:\n{(r.stdout + r.stderr)[-2000:]}")
    return wall, json.loads((log_dir / "results.json").read_text("utf-8"))


KEYS = ("accuracy", "precision", "recall", "f1", "semantic_similarity", "n", "ci95")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=48, help="samples per run")
    ap.add_argument("--latency", type=float, default=0.5, help="mock model seconds per request")
    ap.add_argument("--workers", default="1,2,4", help="comma-separated worker counts")
    ap.add_argument(
        "--moment-s",
        type=float,
        default=10.9,
        help="local model core-seconds per moment (README: Qwen2.5-Coder-1.5B p50 5.45 s on 2 cores)",
    )
    ap.add_argument(
        "--screenshot-s",
        type=float,
        default=6.9,
        help="curate core-seconds per screenshot (README: 6.9 s, curate section; taken as one core)",
    )
    ap.add_argument(
        "--event-s",
        type=float,
        default=172.0,
        help="annotate core-seconds per event, local text model (README: annotate benchmark p50, n_threads=1)",
    )
    ap.add_argument(
        "--shots-per-event",
        type=float,
        default=6.0,
        help="screenshots curated per event (the paper samples the first and last 3)",
    )
    ap.add_argument(
        "--gpu-moments-per-s",
        type=float,
        default=20.0,
        help="ASSUMED moments per second of one GPU vLLM server (not measured here)",
    )
    ap.add_argument("--cpus-per-machine", type=int, default=16, help="CPU cores per machine in the plan")
    ap.add_argument("--hours", type=float, default=8.0, help="target wall hours of the plan")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument(
        "--smoke", action="store_true", help="the smallest setting (CI): 4 samples, 0.05 s latency, 1 Ray worker"
    )
    a = parse_args(
        ap,
        smoke={"samples": 4, "latency": 0.05, "workers": '1'},
        positive=("samples", "workers", "moment_s", "screenshot_s", "event_s", "shots_per_event", "gpu_moments_per_s")
        + ("cpus_per_machine", "hours", "timeout"),
        non_negative=("latency",),
    )
    guard_network()
    watchdog(a.timeout)
    note, info = machine_note()
    print(note, flush=True)
    workers = [int(w) for w in a.workers.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="pa-scale-") as tmp:
        tmp = Path(tmp)
        data = write_sessions(tmp / "sessions", n=a.samples)  # two users; the test split holds n samples
        with LatencyEndpoint(a.latency) as ep:
            t1, base = _eval(data, tmp / "single", [ep.base_url], None, a.samples)
        n = base["n"]
        rows.append(
            {"run": "single", "workers": 1, "wall": t1, "ideal": t1, "ratio": 1.0, "model": n * a.latency, "same": "-"}
        )
        print(f"single: {n} samples in {t1:.1f} s", flush=True)
        for k in workers:
            eps = [LatencyEndpoint(a.latency) for _ in range(k)]
            for e in eps:
                e.__enter__()
            try:
                with local_cluster(k) as cluster:
                    wall, res = _eval(data, tmp / f"ray{k}", [e.base_url for e in eps], cluster.address, a.samples)
            finally:
                for e in eps:
                    e.__exit__(None, None, None)
            same = all(res[x] == base[x] for x in KEYS)
            rows.append(
                {
                    "run": f"ray {k}",
                    "workers": k,
                    "wall": wall,
                    "ideal": t1 / k,
                    "ratio": wall / (t1 / k),
                    "model": n * a.latency / k,
                    "same": "yes" if same else "NO",
                }
            )
            print(f"ray {k}: {wall:.1f} s", flush=True)
    cols = [
        ("run", "run", ""),
        ("workers", "workers", "d"),
        ("wall", "wall s", ".1f"),
        ("ideal", "ideal s", ".1f"),
        ("ratio", "wall/ideal", ".2f"),
        ("model", "model s", ".1f"),
        ("same", "same results", ""),
    ]
    print(f"\n{n} samples, mock model {a.latency} s per request, one endpoint per worker")
    print(render_table(rows, cols))
    plan = _plan(a)
    print(
        f"\nplan for {EVENTS:,} events ({a.cpus_per_machine}-core machines, one worker per core, {a.hours:g} h target):"
    )
    print(
        render_table(
            plan,
            [
                ("stage", "stage", ""),
                ("unit_s", "core-s per unit", ".2f"),
                ("units", "units", ","),
                ("cpu_h", "core- or GPU-hours", ",.1f"),
                ("machines", f"machines for {a.hours:g} h", "d"),
                ("source", "cost from", ""),
            ],
        )
    )
    print(
        "\nwall/ideal above multiplies these hours when shards are as short as in this run; "
        "longer shards (more moments each) amortise the per-shard cost."
    )
    for r in rows:
        r["baseline"] = not str(r["run"]).startswith("ray")
    write_result(
        a.json,
        benchmark="scale_out",
        rows=rows,
        columns=cols,
        machine=info,
        baseline="the same eval in one process, without Ray",
        note=f"{n} samples, mock model {a.latency} s per request, one endpoint per worker; the plan for "
        f"{EVENTS:,} events is arithmetic from the costs it names",
        tables=[
            {
                "title": f"Plan for {EVENTS:,} events ({a.cpus_per_machine}-core machines, {a.hours:g} h)",
                "rows": plan,
                "columns": [
                    ("stage", "stage", ""),
                    ("unit_s", "core-s per unit", ".2f"),
                    ("units", "units", ","),
                    ("cpu_h", "core- or GPU-hours", ",.1f"),
                    ("machines", f"machines for {a.hours:g} h", "d"),
                    ("source", "cost from", ""),
                ],
            }
        ],
        figures={"config": vars(a) | {"json": str(a.json)}},
    )


def _plan(a: argparse.Namespace) -> list[dict]:
    """Core-hours and machines for the stages over :data:`EVENTS` events (one moment per event)."""
    out = []
    for stage, unit_s, units, source in (
        ("eval, local 1.5B on CPU", a.moment_s, EVENTS, "README: seconds per sample, Qwen p50 x 2 cores"),
        ("curate (OCR + privacy)", a.screenshot_s, int(EVENTS * a.shots_per_event), "README: curate, s per screenshot"),
        ("annotate, local text model", a.event_s, EVENTS, "README: annotate benchmark, p50 per event"),
    ):
        core_h = unit_s * units / 3600
        out.append(
            {
                "stage": stage,
                "unit_s": unit_s,
                "units": units,
                "cpu_h": core_h,
                "machines": max(1, math.ceil(core_h / a.hours / a.cpus_per_machine)),
                "source": source,
            }
        )
    gpu_h = EVENTS / a.gpu_moments_per_s / 3600
    out.append(
        {
            "stage": "eval, vLLM on 1 GPU / machine",
            "unit_s": 1 / a.gpu_moments_per_s,
            "units": EVENTS,
            "cpu_h": gpu_h,
            "machines": max(1, math.ceil(gpu_h / a.hours)),
            "source": "ASSUMED --gpu-moments-per-s (GPU-hours)",
        }
    )
    return out


if __name__ == "__main__":
    run_main(main)
