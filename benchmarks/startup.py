"""What a person waits for before and around a small local eval: ``proagent --help``,
``proagent eval --limit 2 --model local/smollm2-135m`` (first time on the machine and
again), and the quick start's second run (``--decider``) after its first.

Each figure is measured for this checkout and for the code of git revision
``--baseline-rev`` (``git archive REV src`` into a temporary folder, as ``scale.py``
does), one after the other in the same command, both byte-compiled first. Every run
is a fresh ``python -m proagent.cli`` process with its own log folder; the caches a run
may reuse (the e5 embedding cache ``PROAGENT_EMBEDDING_CACHE``, the local models'
answer cache ``PROAGENT_ANSWER_CACHE``) start empty for each code:

* ``cold``: the first eval on the machine (empty caches);
* ``again, answer cache off``: the same eval in a new log folder with the embeddings cached
  but every answer computed by the model (the start-up and model costs alone; ``--no-cache-off``
  and ``--smoke`` leave it out);
* ``again``: the same eval in a new log folder (what the first one cached is there);
* ``decider``: ``--decider`` after the plain eval of the same moments (``--decider``
  needs ``proagent train when`` first; trained once, outside the timings).

Columns: ``wall_s`` (wall clock), ``cpu_s`` (user + system CPU of the process and its
children: less disturbed by other load than wall time, but llama.cpp's spinning threads
count too), ``model_calls`` (answers llama.cpp computed: cache hits left out, read from the
log). The load before start is printed first: on the shared 2-core machine other work
inflates wall times several times over.

Run:  python benchmarks/startup.py [--baseline-rev 0a30da7] [--limit 2] [--decider-limit 3] [--model-arg n_threads=1] [--no-cache-off] [--json out.json] [--smoke]
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
from _common import (  # noqa: E402
    DEFAULT_DATA,
    REPO,
    machine_note,
    parse_args,
    render_table,
    run_main,
    source_of,
    watchdog,
    write_result,
)


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, subprocess.CompletedProcess]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-3000:]}")
    return wall, cpu, p


def _model_calls(log_dir: Path) -> tuple[int, int]:
    """(model events, those answered by llama.cpp itself) in the run's log."""
    from inspect_ai.log import read_eval_log

    (f,) = sorted(log_dir.glob("*.eval"))
    log = read_eval_log(str(f))
    events = [e for s in log.samples or [] for e in s.events if e.event == "model"]
    computed = [e for e in events if (e.output.metadata or {}).get("answer_cache") != "hit"]
    return len(events), len(computed)


def measure(
    code: str,
    src: Path,
    work: Path,
    data: Path,
    model: str,
    limit: int,
    decider_limit: int,
    decider: Path | None,
    help_repeats: int,
    model_args: list[str],
    cache_off: bool = True,
) -> list[dict]:
    env = {
        **os.environ,
        "PYTHONPATH": str(src),
        "PROAGENT_EMBEDDING_CACHE": str(work / "emb"),
        "PROAGENT_ANSWER_CACHE": str(work / "answers"),
    }
    env.pop("NO_COLOR", None)
    cli = [sys.executable, "-m", "proagent.cli"]
    rows = []
    helps = [_timed(cli + ["--help"], env)[0] for _ in range(help_repeats)]
    rows.append({"figure": "proagent --help", "code": code, "wall_s": statistics.median(helps), "cpu_s": None})
    base = cli + ["eval", "--data", str(data), "--model", model, "--display", "none"]
    for arg in model_args:
        base += ["--model-arg", arg]
    for name in ("cold", "again, answer cache off", "again") if cache_off else ("cold", "again"):
        log = work / f"eval-{name.split(',')[0]}{'-off' if 'off' in name else ''}"
        run_env = {**env, "PROAGENT_ANSWER_CACHE": "off"} if "off" in name else env
        wall, cpu, _ = _timed(base + ["--limit", str(limit), "--log-dir", str(log)], run_env)
        n, computed = _model_calls(log)
        rows.append(
            {
                "figure": f"eval --limit {limit} ({name})",
                "code": code,
                "wall_s": wall,
                "cpu_s": cpu,
                "model_calls": f"{computed}/{n}",
            }
        )
    if decider is not None:
        plain = work / "eval-plain"
        _timed(base + ["--limit", str(decider_limit), "--log-dir", str(plain)], env)
        log = work / "eval-decider"
        wall, cpu, _ = _timed(
            base + ["--limit", str(decider_limit), "--decider", str(decider), "--log-dir", str(log)], env
        )
        n, computed = _model_calls(log)
        rows.append(
            {
                "figure": f"eval --decider --limit {decider_limit}, after the plain eval",
                "code": code,
                "wall_s": wall,
                "cpu_s": cpu,
                "model_calls": f"{computed}/{n}",
            }
        )
    for r in rows:
        print(f"  {r['code']}: {r['figure']}: {r['wall_s']:.2f} s wall", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline-rev", default="0a30da7", help="git revision measured beside this checkout")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--model", default="local/smollm2-135m")
    ap.add_argument("--limit", type=int, default=2)
    ap.add_argument("--decider-limit", type=int, default=3, help="moments of the decider pair (0: leave it out)")
    ap.add_argument("--help-repeats", type=int, default=5)
    ap.add_argument("--model-arg", action="append", default=[], help="passed to every eval, e.g. n_threads=1")
    ap.add_argument(
        "--no-cache-off",
        dest="cache_off",
        action="store_false",
        help="leave out the 'again, answer cache off' eval of each code (--smoke: left out)",
    )
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest setting (CI): SmolLM2 on 1 thread (llama.cpp's threads wait on each other when other "
        "work shares the cores), --limit 1, no decider pair, --help-repeats 1, --no-cache-off (two evals a code: "
        "each fresh eval process costs about 13 s of CPU on 2 cores)",
    )
    a = parse_args(
        ap,
        smoke={
            "model": "local/smollm2-135m",
            "limit": 1,
            "decider_limit": 0,
            "help_repeats": 1,
            "model_arg": ["n_threads=1"],
            "cache_off": False,
        },
        positive=("limit", "help_repeats", "timeout"),
        non_negative=("decider_limit",),
        existing=("data",),
    )
    watchdog(a.timeout)
    note, info = machine_note()
    print(note, flush=True)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="proagent-startup-") as tmp:
        tmp_p = Path(tmp)
        old_src = source_of(a.baseline_rev, tmp_p / "old")
        new_src = REPO / "src"
        for src in (old_src, new_src):
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True)
        decider = None
        if a.decider_limit:
            decider = tmp_p / "decider"
            env = {**os.environ, "PYTHONPATH": str(new_src), "PROAGENT_EMBEDDING_CACHE": str(tmp_p / "emb-train")}
            _timed(
                [sys.executable, "-m", "proagent.cli", "train", "when", "--data", str(a.data), "--out", str(decider)],
                env,
            )
        for code, src in ((f"baseline {a.baseline_rev}", old_src), ("this checkout", new_src)):
            rows += measure(
                code,
                src,
                tmp_p / code.split()[0],
                a.data,
                a.model,
                a.limit,
                a.decider_limit,
                decider,
                a.help_repeats,
                a.model_arg,
                a.cache_off,
            )
            print(f"  {code}: done", flush=True)
    after = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    columns = [
        ("figure", "figure", ""),
        ("code", "code", ""),
        ("wall_s", "wall s", ".2f"),
        ("cpu_s", "CPU s", ".2f"),
        ("model_calls", "model calls computed/asked", ""),
    ]
    for r in rows:
        r["baseline"] = str(r["code"]).startswith("baseline")
    print(render_table(rows, columns))
    print(f"load average after: {after:.2f}" if after is not None else "")
    write_result(
        a.json,
        benchmark="startup",
        rows=rows,
        columns=columns,
        machine=info,
        baseline=f"the code of {a.baseline_rev} (git archive) doing the same work",
        note=f"model {a.model}; each figure a fresh process (caches as named); CPU s: the child's user + system",
        conditions=""
        if (a.limit, a.decider_limit, a.help_repeats, a.cache_off) == (2, 3, 5, True)
        else f"--limit {a.limit} --decider-limit {a.decider_limit} --help-repeats {a.help_repeats}"
        f"{'' if a.cache_off else ' --no-cache-off'} (the documented run: 2, 3, 5, every eval)",
    )


if __name__ == "__main__":
    run_main(main)
