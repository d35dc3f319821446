"""Fine-tuning on real vs synthetic moments (ProAgentBench section 6.6, Table 3/5), measured.

Trains the same base model with the same settings twice, once on real moments and
once on as many synthetic ones, evaluates both and the untrained base (zero-shot)
on the same real test moments with ``proagent eval``, and prints them beside the
always-yes / always-no baselines.

* real: the train split (time split within each session) of the ProactiveBench dev
  sessions; synthetic: ProactiveBench's LLM-written traces
  (``../shared/data/proactivebench-synthetic``), drawn at random (stratified by
  label) to the same count; test: the dev sessions' test split.
* ``--loso``: leave one session out instead of the time split: for each dev
  session, train on every moment of the other five (synthetic: as many traces),
  evaluate on all of its moments; the metrics pool the six folds' moments.

CPU (what this repository measured, see docs/results.md)::

    python benchmarks/finetune_real_vs_synthetic.py --out runs/ft-cpu --threads 2

GPU recipe (a machine with CUDA torch; Qwen2.5-Coder-1.5B needs ``scripts/setup.sh --qwen``;
install a CUDA torch build instead of the CPU one first)::

    python benchmarks/finetune_real_vs_synthetic.py --base qwen2.5-coder-1.5b --loso \\
        --micro-batch-size 4 --out runs/ft-gpu

Every training and evaluation run resumes when the script is re-run with the same ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = next(
    (p / "shared" / "data" for p in (REPO.parent, REPO.parent.parent) if (p / "shared" / "data").is_dir()),
    REPO.parent / "shared" / "data",
)  # ../shared beside the repository (or beside its worktree folder)
DEV = SHARED / "proactivebench"
SYNTHETIC = SHARED / "proactivebench-synthetic"


def _proagent(args: list[str], log: Path) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "proagent.cli", *args]
    print("$ proagent " + " ".join(args), flush=True)
    with open(log, "a", encoding="utf-8") as f:
        rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=REPO).returncode
    if rc != 0:
        sys.exit(f"failed ({rc}): see {log}")


def _train(method: str, source: list[str], base: str, out: Path, limit: int | None, a: argparse.Namespace) -> Path:
    args = [
        "train",
        method,
        *source,
        "--base",
        base,
        "--out",
        str(out),
        "--seed",
        str(a.seed),
        "--micro-batch-size",
        str(a.micro_batch_size),
        "--max-length",
        str(a.max_length),
    ]
    if limit:
        args += ["--limit", str(limit)]
    if a.threads:
        args += ["--threads", str(a.threads)]
    if a.epochs is not None:
        args += ["--epochs", str(a.epochs)]
    if a.batch_size is not None:
        args += ["--batch-size", str(a.batch_size)]
    if a.loss_probe is not None:
        args += ["--loss-probe", str(a.loss_probe)]
    t = time.monotonic()
    _proagent(args, out.with_suffix(".log"))
    m = json.loads((out / "manifest.json").read_text())
    print(
        f"  trained {m['n_examples']} examples ({m['n_positive']} positive), {m['steps']} steps, "
        f"loss {m.get('loss_before', float('nan')):.3f} -> {m.get('loss_after', float('nan')):.3f}, "
        f"{m['seconds']:.0f} s ({time.monotonic() - t:.0f} s with loading)",
        flush=True,
    )
    return out / "model.gguf"


def _eval(model: str, data: Path, split: str, log_dir: Path, a: argparse.Namespace) -> dict:
    args = [
        "eval",
        "--data",
        str(data),
        "--model",
        model,
        "--split",
        split,
        "--log-dir",
        str(log_dir),
        "--display",
        "none",
        "--seed",
        str(a.seed),
    ]
    if a.threads:
        args += ["--model-arg", f"n_threads={a.threads}"]
    if a.eval_limit:
        args += ["--limit", str(a.eval_limit)]
    _proagent(args, log_dir.with_suffix(".log"))
    return json.loads((log_dir / "results.json").read_text())


def _session_dirs(out: Path) -> list[tuple[str, Path, Path]]:
    """(session, train folder = the other sessions, test folder = this one), as symlinks."""
    sessions = sorted(p for p in DEV.glob("*.json"))
    folds = []
    for s in sessions:
        train, test = out / "folds" / s.stem / "train", out / "folds" / s.stem / "test"
        for d, files in ((train, [x for x in sessions if x != s]), (test, [s])):
            d.mkdir(parents=True, exist_ok=True)
            for f in files:
                link = d / f.name
                if not link.exists():
                    link.symlink_to(f)
        folds.append((s.stem, train, test))
    return folds


def _pooled(runs: list[dict]) -> dict:
    """The metrics of several eval runs' moments together (proagent's own summary)."""
    from inspect_ai.log import read_eval_log

    from proagent.bench.metrics import summarize
    from proagent.report.results import log_scores

    scores = [sc for r in runs for sc in log_scores(read_eval_log(r["run"]["log"]))]
    return summarize(scores, n_resamples=200)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", default="smollm2-135m")
    p.add_argument("--method", choices=["lora", "sft"], default="lora")
    p.add_argument("--out", type=Path, default=REPO / "runs" / "finetune-real-vs-synthetic")
    p.add_argument("--loso", action="store_true", help="leave one session out instead of the time split")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--micro-batch-size", type=int, default=1)
    p.add_argument("--max-length", type=int, default=2048)
    p.add_argument("--epochs", type=float, default=None, help="default: the paper's 3")
    p.add_argument("--batch-size", type=int, default=None, help="default: the paper's 16")
    p.add_argument(
        "--limit",
        type=int,
        default=None,
        help="train on N real moments (stratified draw) and as many synthetic ones (default: all real)",
    )
    p.add_argument("--loss-probe", type=int, default=None, help="examples for the loss before/after (default 32)")
    p.add_argument("--eval-limit", type=int, default=None, help="evaluate only the first N test moments")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--json", type=Path, default=None, help="write the run here (docs/results/finetune_real_vs_synthetic.json)"
    )
    p.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest setting (CI): LoRA on SmolLM2, 2 examples, 1 epoch, one step, no loss probe, "
        "evaluated on 1 test moment, one thread (torch and llama.cpp)",
    )
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import parse_args

    a = parse_args(
        p,
        positive=(
            "threads",
            "micro_batch_size",
            "max_length",
            "epochs",
            "batch_size",
            "loss_probe",
            "eval_limit",
            "limit",
        ),
        non_negative=("seed",),
    )
    if a.smoke:  # explicit values stay (apply_smoke says which)
        from _common import apply_smoke

        smoke = {"base": "smollm2-135m", "method": "lora", "loso": False, "limit": 2, "epochs": 1.0}
        # one thread: the test suite runs two workers on two cores, where a second torch thread only
        # spin-waits (a forward pass over one 800-token example: 4 s of CPU with one thread, 11 s with
        # two at load 16; issue 45). Two examples (the fewest a draw stratified by label takes), one
        # step, no loss probe (two more forward passes per run) and one test moment: the least that
        # still trains, exports and evaluates both models (issue 45 item 1)
        apply_smoke(p, a, {**smoke, "batch_size": 2, "loss_probe": 0, "eval_limit": 1, "threads": 1})
    from _common import machine_note, write_result

    line, machine = machine_note()
    print(line, flush=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    started = time.monotonic()
    base_model = f"local/{a.base}" if "/" not in a.base else f"local/{Path(a.base).resolve()}"
    rows: dict[str, list[dict]] = {"zero-shot": [], "real": [], "synthetic": []}
    if a.loso:
        folds = [(name, ["--train-data", str(tr)], te, "all") for name, tr, te in _session_dirs(a.out)]
    else:
        folds = [("time-split", ["--data", str(DEV)], DEV, "test")]
    for name, real_source, test_data, split in folds:
        print(f"== {name}", flush=True)
        real = _train(a.method, real_source, a.base, a.out / name / "real", a.limit, a)
        n_real = json.loads((a.out / name / "real" / "manifest.json").read_text())["n_examples"]
        synth = _train(a.method, ["--train-data", str(SYNTHETIC)], a.base, a.out / name / "synthetic", n_real, a)
        for label, model in (
            ("zero-shot", base_model),
            ("real", f"local/{real.resolve()}"),
            ("synthetic", f"local/{synth.resolve()}"),
        ):
            r = _eval(model, test_data, split, a.out / name / f"eval-{label}", a)
            rows[label].append(r)
    print(
        f"\n{a.method} on {a.base}, {'leave-one-session-out' if a.loso else 'time split'}; "
        f"{time.monotonic() - started:.0f} s in all"
    )
    print(f"{'model':<22}{'n':>5}{'accuracy':>10}{'precision':>11}{'recall':>8}{'F1':>7}{'unparsed':>10}")
    pooled = {label: _pooled(runs) for label, runs in rows.items()}
    table = [(label, m) for label, m in pooled.items()]
    table += [
        (b.replace("_", "-"), {**pooled["real"]["baselines"][b], "n": pooled["real"]["n"], "unparsed_rate": 0.0})
        for b in ("always_yes", "always_no")
    ]
    for label, m in table:
        print(
            f"{label:<22}{m['n']:>5}{m['accuracy']:>10.3f}{m['precision']:>11.3f}{m['recall']:>8.3f}"
            f"{m['f1']:>7.3f}{m['unparsed_rate']:>10.3f}"
        )
    acc = {label: m.get("ci95", {}).get("accuracy") for label, m in pooled.items()}
    print(
        "accuracy 95% bootstrap intervals: " + ", ".join(f"{k} [{v[0]:.2f}, {v[1]:.2f}]" for k, v in acc.items() if v)
    )
    cut = [
        f"--{k.replace('_', '-')} {getattr(a, k)}"
        for k in ("limit", "epochs", "batch_size", "eval_limit")
        if getattr(a, k) is not None
    ]
    write_result(
        a.json,
        benchmark="finetune_real_vs_synthetic",
        machine=machine,
        rows=[
            {
                "model": label,
                **{k: m[k] for k in ("n", "accuracy", "precision", "recall", "f1")},
                "unparsed": m["unparsed_rate"],
                "baseline": label not in ("real", "synthetic"),
            }
            for label, m in table
        ],
        columns=[
            ("model", "model", ""),
            ("n", "n", ""),
            ("accuracy", "accuracy", ".3f"),
            ("precision", "precision", ".3f"),
            ("recall", "recall", ".3f"),
            ("f1", "F1", ".3f"),
            ("unparsed", "unparsed", ".3f"),
        ],
        baseline=f"the untrained base {a.base} (zero-shot), always-yes and always-no on the same test moments",
        note=f"{a.method} on {a.base}, {'leave-one-session-out' if a.loso else 'time split'}; trained on "
        "real moments or as many synthetic traces; "
        + "accuracy 95% intervals: "
        + ", ".join(f"{k} [{v[0]:.2f}, {v[1]:.2f}]" for k, v in acc.items() if v),
        conditions=("smaller than the paper's recipe (" + ", ".join(cut) + ")") if cut else "",
    )


if __name__ == "__main__":
    main()
