#!/usr/bin/env python
"""Prefix reuse: local-model seconds per sample with and without llama.cpp KV prefix reuse.

Runs the real ``assist`` task on ProactiveBench sessions with an in-process
local model twice, over the same N consecutive samples (split ``all``, dataset
order: the samples of one session follow each other, so consecutive prompts
share the system message and the older context events):

* ``reuse on``  model arg ``cache_prompt=true`` (the provider's default), and
* ``reuse off`` model arg ``cache_prompt=false`` (every prompt evaluated in full),

each with ``max_samples=1`` (true per-sample latencies), ``cache=False`` (no
inspect response cache) and a fresh temporary log dir. Token counts come from
the logs' ModelUsage, which the provider fills from llama.cpp's timings:
``input_tokens`` = prompt tokens llama.cpp actually evaluated (``prompt_n``),
``input_tokens_cache_read`` = prompt tokens it reused from its KV cache
(``cache_n``). The reference queries of the N samples run are embedded once before the
timings (as ``proagent eval --limit N`` does; not the whole split's), so the scorer adds the
same small cost to both settings.

Run:  python benchmarks/prefix_reuse.py [--model local/smollm2-135m] [--n 20] [--json out.json] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (  # noqa: E402
    DEFAULT_DATA,
    OFF_HOST_ATTEMPTS,
    OthersCpu,
    guard_network,
    machine_note,
    parse_args,
    percentile,
    render_table,
    watchdog,
    write_result,
)

DEFINITIONS = {
    "sample_p50/mean": "per-sample total_time from the log, seconds (model call + solver + scorer)",
    "model_p50/mean": "per-sample model time llama.cpp reported (prompt_ms + predicted_ms), seconds",
    "prompt_mean": "seconds per sample llama.cpp spent evaluating the prompt (timings.prompt_ms), mean: what reuse saves",
    "decode_mean": "seconds per sample spent generating (timings.predicted_ms), mean: reuse does not change it per token",
    "prompt_eval": "prompt tokens llama.cpp evaluated, summed over samples (timings.prompt_n)",
    "eval/smp": "prompt tokens evaluated per sample, mean",
    "prompt_reused": "prompt tokens reused from the KV cache, summed (timings.cache_n)",
    "reused_%": "prompt_reused / (prompt_eval + prompt_reused)",
    "out_tok": "completion tokens, summed (ModelUsage.output_tokens)",
    "wall_s": "seconds of the whole inspect_ai.eval() call (model already loaded by the warm-up)",
    "others_%": "CPU used by other processes during the setting, % of all cores (max over runs): noise above ~10",
    "speed-up": "mean seconds per sample with reuse off / with reuse on",
    "repeats": "with --repeats R > 1: per-sample seconds are the minimum over R runs, wall_s the fastest run",
}

COLUMNS = [
    ("setting", "setting", ""),
    ("n", "n", ""),
    ("sample_p50", "sample_p50", ".3f"),
    ("sample_mean", "sample_mean", ".3f"),
    ("model_p50", "model_p50", ".3f"),
    ("model_mean", "model_mean", ".3f"),
    ("prompt_mean", "prompt_mean", ".3f"),
    ("decode_mean", "decode_mean", ".3f"),
    ("prompt_eval", "prompt_eval", ""),
    ("eval_per_sample", "eval/smp", ".0f"),
    ("prompt_reused", "prompt_reused", ""),
    ("reused_pct", "reused_%", ".1f"),
    ("out_tok", "out_tok", ""),
    ("wall_s", "wall_s", ".1f"),
    ("others_pct", "others_%", ".0f"),
]


def warm_up(model: str, n_ctx: int | None, n_threads: int | None) -> float:
    """Load the model and run one tiny prompt outside every timing (first-call costs)."""
    from proagent.models.local import LocalLlamaAPI

    t = time.perf_counter()
    api = LocalLlamaAPI(model.removeprefix("local/"), n_ctx=n_ctx, n_threads=n_threads, cache_prompt=False)
    api._engine.chat(
        {
            "messages": [{"role": "user", "content": "Say hi."}],
            "max_tokens": 4,
            "temperature": 0.0,
            "cache_prompt": False,
        }
    )
    return time.perf_counter() - t


def run_setting(
    task: Any,
    model: str,
    n: int,
    reuse: bool,
    n_ctx: int | None,
    n_threads: int | None,
    log_dir: str,
    cache_reuse: int = 0,
) -> dict[str, Any]:
    """One eval; returns its wall time, the other processes' CPU share and per-sample rows."""
    import inspect_ai
    from inspect_ai.log import read_eval_log

    model_args: dict[str, Any] = {"cache_prompt": "true" if reuse else "false", "answer_cache": "false"}
    if cache_reuse:
        model_args["cache_reuse"] = cache_reuse
    if n_ctx:
        model_args["n_ctx"] = n_ctx
    if n_threads:
        model_args["n_threads"] = n_threads
    with OthersCpu() as others:
        t0 = time.perf_counter()
        logs = inspect_ai.eval(
            task,
            model=model,
            model_args=model_args,
            limit=n,
            log_dir=log_dir,
            display="none",
            log_model_api=False,
            max_samples=1,
            max_connections=1,
            cache=False,
            retry_on_error=0,
            fail_on_error=True,
        )
        wall = time.perf_counter() - t0
    log = logs[0]
    if log.status != "success":
        raise RuntimeError(
            f"reuse {'on' if reuse else 'off'}: eval {log.status}: {log.error.message if log.error else ''}"
        )
    per_sample = []
    for s in read_eval_log(log.location).samples or []:
        ev = rd = ot = 0
        for u in (s.model_usage or {}).values():
            ev += u.input_tokens or 0
            rd += u.input_tokens_cache_read or 0
            ot += u.output_tokens or 0
        split = (s.output.metadata or {}) if s.output else {}
        per_sample.append(
            {
                "id": str(s.id),
                "total_time": s.total_time,
                "model_time": s.output.time if s.output else None,
                "prompt_s": split.get("prompt_s"),
                "decode_s": split.get("decode_s"),
                "prompt_eval": ev,
                "prompt_reused": rd,
                "out_tok": ot,
            }
        )
    return {"wall_s": wall, "others": others.share, "samples": per_sample}


def summarize(reuse: bool, runs: list[dict[str, Any]], label: str | None = None) -> dict[str, Any]:
    """One row from R runs of a setting: per-sample seconds = min over the runs, tokens of the first run."""
    first = runs[0]["samples"]
    by_id: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        for s in run["samples"]:
            by_id.setdefault(s["id"], []).append(s)

    def best(sid: str, key: str) -> float | None:
        v = [s[key] for s in by_id[sid] if s[key] is not None]
        return min(v) if v else None

    sample_s = [x for x in (best(s["id"], "total_time") for s in first) if x is not None]
    prompt_s = [x for x in (best(s["id"], "prompt_s") for s in first) if x is not None]
    decode_s = [x for x in (best(s["id"], "decode_s") for s in first) if x is not None]
    model_s = [x for x in (best(s["id"], "model_time") for s in first) if x is not None]
    evaluated = sum(s["prompt_eval"] for s in first)
    reused = sum(s["prompt_reused"] for s in first)
    others = [r["others"] for r in runs if r["others"] is not None]
    return {
        "setting": label or ("reuse on" if reuse else "reuse off"),
        "cache_prompt": reuse,
        "n": len(first),
        "repeats": len(runs),
        "sample_p50": percentile(sample_s, 50),
        "sample_mean": sum(sample_s) / len(sample_s) if sample_s else None,
        "model_p50": percentile(model_s, 50),
        "model_mean": sum(model_s) / len(model_s) if model_s else None,
        "prompt_mean": sum(prompt_s) / len(prompt_s) if prompt_s else None,
        "decode_mean": sum(decode_s) / len(decode_s) if decode_s else None,
        "prompt_eval": evaluated,
        "eval_per_sample": evaluated / len(first) if first else None,
        "prompt_reused": reused,
        "reused_pct": 100.0 * reused / (evaluated + reused) if evaluated + reused else None,
        "out_tok": sum(s["out_tok"] for s in first),
        "wall_s": min(r["wall_s"] for r in runs),
        "others_pct": 100.0 * max(others) if others else None,
        "runs": runs,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=None, help="ProactiveBench folder (default: ../shared/data/proactivebench)")
    ap.add_argument(
        "--model",
        default="local/smollm2-135m",
        help="local model (default local/smollm2-135m; or local/qwen2.5-coder-1.5b)",
    )
    ap.add_argument("--n", type=int, default=20, help="consecutive samples per setting (default 20)")
    ap.add_argument("--split", default="all", choices=["all", "test", "train"], help="task split (default all)")
    ap.add_argument(
        "--method", default="zero-shot", choices=["zero-shot", "cot"], help="prompting method (default zero-shot)"
    )
    ap.add_argument("--window", default="5m", help="context window (default 5m)")
    ap.add_argument("--n-ctx", type=int, default=None, help="model context length (default: the model's)")
    ap.add_argument("--n-threads", type=int, default=None, help="llama.cpp threads (default: all cores)")
    ap.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="run each setting R times, alternating on/off; per-sample seconds = min over runs (default 1)",
    )
    ap.add_argument(
        "--timeout", type=float, default=1200, help="hard limit for the whole benchmark, seconds (default 1200)"
    )
    ap.add_argument("--json", default=None, help="also write the figures (and per-sample rows) to this JSON file")
    ap.add_argument(
        "--cache-reuse",
        type=int,
        default=0,
        help="also run reuse on with model arg cache_reuse=N (llama.cpp chunk reuse, off by default; 0: leave out)",
    )
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest setting (CI): SmolLM2 on 1 thread (llama.cpp's threads wait on each other when other "
        "work shares the cores), 2 consecutive samples (the second reuses the first's prefix)",
    )
    args = parse_args(  # --smoke keeps an explicit --model, --n, --repeats or --n-threads (and says so)
        ap,
        argv,
        smoke={"model": "local/smollm2-135m", "n": 2, "repeats": 1, "n_threads": 1},
        positive=("n", "n_ctx", "n_threads", "repeats", "timeout"),
        non_negative=("cache_reuse",),
        existing=("data",),
    )
    if not args.model.startswith("local/"):
        ap.error("--model must be a local/... model (prefix reuse is a property of the in-process provider)")
    if args.n < 1 or args.repeats < 1:
        ap.error("--n and --repeats must be positive")

    guard_network()
    watchdog(args.timeout)
    note, machine = machine_note()
    print(note, file=sys.stderr, flush=True)
    data = args.data or str(DEFAULT_DATA)

    from proagent import embedding
    from proagent.bench.tasks import assist, embed_task_references, references_embedded_later

    with references_embedded_later():  # only the references of the samples run, below
        task = assist(data=data, split=args.split, method=args.method, window=args.window)
    n = min(args.n, len(task.dataset))
    users = sorted({s.metadata["user"] for s in list(task.dataset)[:n]})
    embedding.load_model()  # embedding model loaded once, outside every timing
    embed_task_references(task, n)  # the scorer's reference vectors, outside every timing
    load_s = warm_up(args.model, args.n_ctx, args.n_threads)
    print(f"model load + warm-up (untimed): {load_s:.1f} s", file=sys.stderr, flush=True)
    runs: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    for r in range(args.repeats):
        for reuse in (True, False):
            with tempfile.TemporaryDirectory(prefix="proagent-bench-") as tmp:
                run = run_setting(task, args.model, n, reuse, args.n_ctx, args.n_threads, tmp)
            runs[reuse].append(run)
            print(
                f"reuse {'on' if reuse else 'off'} (run {r + 1}/{args.repeats}): {run['wall_s']:.1f} s",
                file=sys.stderr,
                flush=True,
            )
    rows = [summarize(True, runs[True]), summarize(False, runs[False])]
    on, off = rows
    chunk = None
    if args.cache_reuse:
        with tempfile.TemporaryDirectory(prefix="proagent-bench-") as tmp:
            run = run_setting(task, args.model, n, True, args.n_ctx, args.n_threads, tmp, cache_reuse=args.cache_reuse)
        chunk = summarize(True, [run], label=f"reuse on + cache_reuse={args.cache_reuse}")
        rows.append(chunk)
        print(f"reuse on + cache_reuse={args.cache_reuse}: {run['wall_s']:.1f} s", file=sys.stderr, flush=True)
    speedup = {
        "sample_mean": off["sample_mean"] / on["sample_mean"] if on["sample_mean"] else None,
        "sample_p50": off["sample_p50"] / on["sample_p50"] if on["sample_p50"] else None,
        "model_mean": off["model_mean"] / on["model_mean"] if on["model_mean"] else None,
        "prompt_mean": off["prompt_mean"] / on["prompt_mean"] if on["prompt_mean"] else None,
        "prompt_eval": off["prompt_eval"] / on["prompt_eval"] if on["prompt_eval"] else None,
    }

    def fmt(x: float | None) -> str:
        return "-" if x is None else f"{x:.2f}x"

    print(
        f"prefix reuse: task assist (split {args.split}, {args.method}, window {args.window}), model {args.model}, "
        f"first {n} samples ({', '.join(users)}), max_samples=1, n_threads {args.n_threads or 'all cores'}, "
        f"repeats {args.repeats}"
    )
    print(note)
    print(render_table(rows, COLUMNS))
    print(
        f"speed-up (off/on): sample mean {fmt(speedup['sample_mean'])}, sample p50 {fmt(speedup['sample_p50'])}, "
        f"model mean {fmt(speedup['model_mean'])}, prompt evaluation {fmt(speedup['prompt_mean'])}; prompt tokens evaluated {fmt(speedup['prompt_eval'])} fewer with reuse"
    )
    print()
    for key, text in DEFINITIONS.items():
        if key != "repeats" or args.repeats > 1:
            print(f"  {key:<16} {text}")
    if chunk is not None and chunk["prompt_eval"]:
        print(
            f"with cache_reuse={args.cache_reuse}: prompt tokens evaluated {off['prompt_eval'] / chunk['prompt_eval']:.2f}x "
            f"fewer than reuse off (chunks of the history moved into place when the window drops its oldest events; "
            f"answers then depend on the previous prompt, so it is off by default); out_tok {chunk['out_tok']} vs "
            f"{on['out_tok']} with reuse on (a model running on would show here)"
        )
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    if OFF_HOST_ATTEMPTS:
        print(f"WARNING: refused non-loopback connects: {OFF_HOST_ATTEMPTS}")
    for r in rows:
        r["baseline"] = r is rows[1]  # reuse off
    write_result(
        args.json,
        benchmark="prefix_reuse",
        rows=rows,
        columns=COLUMNS,
        machine=machine,
        baseline="the same samples with llama.cpp's prefix reuse off (cache_prompt false)",
        note=f"model {args.model}, first {n} samples ({', '.join(users)}), n_threads "
        f"{args.n_threads or 'all cores'}; speed-up off/on: sample mean {fmt(speedup['sample_mean'])}, "
        f"model mean {fmt(speedup['model_mean'])}, prompt evaluation {fmt(speedup['prompt_mean'])}; "
        f"prompt tokens evaluated {fmt(speedup['prompt_eval'])} fewer with reuse",
        conditions="" if n >= 12 else f"{n} samples (the documented run: --n 12)",
        figures={
            "config": {
                "model": args.model,
                "n": n,
                "split": args.split,
                "method": args.method,
                "window": args.window,
                "n_ctx": args.n_ctx,
                "n_threads": args.n_threads,
                "data": data,
                "users": users,
                "warmup_s": load_s,
            },
            "definitions": DEFINITIONS,
            "speedup": speedup,
            "off_host_connects": OFF_HOST_ATTEMPTS,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
