"""When-to-Assist decider on the real ProactiveBench dev sessions: leave-one-session-out.

For each of the six dev sessions: train on the other five (``real``), on the
synthetic traces only (``synthetic``), or on both (``real+synthetic``); test on
the held-out session. Every held-out moment of the six folds is pooled, and
accuracy, precision, recall and F1 get 95% bootstrap intervals over those 112
moments (``proagent.bench.metrics.bootstrap_ci``), AUC a percentile bootstrap of
its own. The same is done for the quick start's setting (``time split``: train
on the earlier half of every session, test on the later 57 moments). Beside
them: always-yes, always-no, and the LLM zero-shot, which is always-yes on these
sessions (Qwen2.5-Coder-1.5B said Yes at all 112 candidate points in
``proagent simulate`` and at all 57 test moments in ``proagent eval``; docs/results.md,
Measured results), so it is quoted, not re-run.

For leave-one-session-out, "AUC within session" is the mean of the six held-out
sessions' own AUCs (how well moments are ranked inside a session, apart from the
sessions' different base rates).

Decider latency: p50/p95 of :meth:`Decider.decide` over the held-out moments of
a saved-then-loaded decider, embeddings cached (the live agent's steady state)
and, separately, with the embedding cache cold.

    python benchmarks/decider.py [--data ../shared/data/proactivebench]
        [--synthetic ../shared/data/proactivebench-synthetic] [--models logreg,gbm]
        [--objectives f1,accuracy,balanced-accuracy] [--sources real,synthetic,real+synthetic]
        [--schemes "time split,leave-one-session-out"] [--out runs/decider-bench.json]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
_machine: dict = {}


def _auc_ci(y: np.ndarray, p: np.ndarray, seed: int = 0, n: int = 1000) -> tuple[float, tuple[float, float] | None]:
    from sklearn.metrics import roc_auc_score

    auc = float(roc_auc_score(y, p))
    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(n):
        i = rng.integers(0, len(y), len(y))
        if 0 < y[i].sum() < len(i):
            vals.append(roc_auc_score(y[i], p[i]))
    return auc, (float(np.percentile(vals, 2.5)), float(np.percentile(vals, 97.5))) if vals else None


def _row(name: str, y: np.ndarray, pred: np.ndarray, p: np.ndarray | None) -> dict:
    from proagent.bench.metrics import bootstrap_ci, when_metrics
    from proagent.records import Score

    scores = [Score(sample_id=str(i), label=int(a), predicted=int(b)) for i, (a, b) in enumerate(zip(y, pred))]
    row = {"run": name, "n": len(y), **when_metrics(list(y), list(pred))}
    ci = bootstrap_ci(scores, n_resamples=1000, seed=0)
    row["ci95"] = {k: ci[k] for k in ("accuracy", "precision", "recall", "f1")}
    if p is not None:
        row["auc"], row["ci95"]["auc"] = _auc_ci(y, p)
    row["yes"] = int(pred.sum())
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/proactivebench"))
    ap.add_argument("--synthetic", default=str(ROOT.parent / "shared/data/proactivebench-synthetic"))
    ap.add_argument("--models", default="logreg,gbm")
    ap.add_argument("--objectives", default="f1,accuracy,balanced-accuracy")
    ap.add_argument("--sources", default="real,synthetic,real+synthetic", help="Training sources to compare.")
    ap.add_argument("--schemes", default="time split,leave-one-session-out", help="Evaluation schemes.")
    ap.add_argument("--out", default=None, help="Also write every row as JSON here (as it goes).")
    ap.add_argument(
        "--json", default=None, help="Write the run for render_results.py here (docs/results/decider.json)."
    )
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest setting (CI): logreg, f1, the time split, 30 + 30 synthetic moments",
    )
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import parse_args

    args = parse_args(
        ap, argv, smoke={"models": "logreg", "objectives": "f1", "schemes": "time split"}, existing=("data",)
    )
    warnings.filterwarnings("ignore")
    global _machine
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _common import machine_note

    line, _machine = machine_note()
    print(line, file=sys.stderr)

    from sklearn.metrics import roc_auc_score

    from proagent.agent.decider import EmbeddingCache, FeatureConfig, load_decider, moment_features
    from proagent.io import write_json_atomic
    from proagent.train import TrainingSet, WhenConfig, fit_when, load_split_moments, load_training_data, train_decider

    real, _ = load_split_moments(args.data, "all")
    syn, _ = load_training_data(args.synthetic)
    if args.smoke:  # 30 of each class
        syn = [s for s in syn if s.label][:30] + [s for s in syn if not s.label][:30]
    cache = EmbeddingCache()
    fc = FeatureConfig()
    t0 = time.perf_counter()
    xr, xs = moment_features(real, cache, fc), moment_features(syn, cache, fc)
    print(
        f"features: {len(real)} real moments, {len(syn)} synthetic, {xr.shape[1]} columns ({time.perf_counter() - t0:.1f} s)",
        file=sys.stderr,
    )
    yr = np.array([s.label for s in real])
    ys = np.array([s.label for s in syn])
    ur = np.array([s.user for s in real])
    us = [s.user for s in syn]
    split = np.array([s.split for s in real])
    sessions = sorted(set(ur))

    rows = []
    for scheme in [x.strip() for x in args.schemes.split(",")]:
        mask = np.ones(len(yr), bool) if scheme == "leave-one-session-out" else split == "test"
        y = yr[mask]
        rows.append(_row(f"{scheme} | always-yes", y, np.ones_like(y), None))
        rows.append(_row(f"{scheme} | always-no", y, np.zeros_like(y), None))
        rows.append(
            {
                **_row(
                    f"{scheme} | LLM zero-shot (Qwen2.5-Coder-1.5B, quoted: Yes at every moment)",
                    y,
                    np.ones_like(y),
                    None,
                )
            }
        )
        for model in args.models.split(","):
            for objective in args.objectives.split(","):
                for source in args.sources.split(","):
                    cfg = WhenConfig(model=model, objective=objective)
                    p = np.zeros(len(yr))
                    thr = np.zeros(len(yr))
                    folds = (
                        [(ur != h, ur == h) for h in sessions]
                        if scheme == "leave-one-session-out"
                        else [(split == "train", split == "test")]
                    )
                    t1 = time.perf_counter()
                    for tr, te in folds:
                        xt, yt, gt = [], [], []
                        if source != "synthetic":
                            xt.append(xr[tr])
                            yt.append(yr[tr])
                            gt += list(ur[tr])
                        if source != "real":
                            xt.append(xs)
                            yt.append(ys)
                            gt += us
                        m, t, _ = fit_when(np.vstack(xt), np.concatenate(yt), gt, cfg)
                        p[te] = m.predict_proba(xr[te])[:, 1]
                        thr[te] = t
                    pred = (p[mask] >= thr[mask]).astype(int)
                    row = _row(f"{scheme} | {source} | {model} | {objective}", y, pred, p[mask])
                    row["fit_seconds"] = time.perf_counter() - t1
                    if scheme == "leave-one-session-out":  # ranking within each held-out session
                        row["auc_per_session_mean"] = float(
                            np.mean([roc_auc_score(yr[ur == h], p[ur == h]) for h in sessions])
                        )
                    rows.append(row)
                    print(_line(row), file=sys.stderr, flush=True)
                    if args.out:
                        write_json_atomic(args.out, {"rows": rows})

    # latency of a saved-then-loaded decider (real train split), warm and cold embedding cache
    train, src = load_split_moments(args.data, "train")
    test, _ = load_split_moments(args.data, "test")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "decider"
        train_decider(TrainingSet(tuple(train), (src,), ("real",) * len(train)), folder, cache=cache)
        dec = load_decider(folder, cache=cache)
        dec.warm_up()
        warm = [dec.decide(s).latency_ms for s in test]
        cold_dec = load_decider(folder, cache=EmbeddingCache(Path(tmp) / "cold"))
        cold_dec.warm_up()
        cold = [cold_dec.decide(s).latency_ms for s in test]
    latency = {
        "warm_ms_p50": float(np.percentile(warm, 50)),
        "warm_ms_p95": float(np.percentile(warm, 95)),
        "cold_ms_p50": float(np.percentile(cold, 50)),
        "cold_ms_p95": float(np.percentile(cold, 95)),
        "n": len(test),
    }

    print(_table(rows))
    print(
        f"\ndecider latency over {latency['n']} moments: cached embeddings p50 {latency['warm_ms_p50']:.2f} ms, "
        f"p95 {latency['warm_ms_p95']:.2f} ms; cold cache (embedding every text) p50 {latency['cold_ms_p50']:.1f} ms, "
        f"p95 {latency['cold_ms_p95']:.1f} ms; LLM zero-shot (Qwen, README): p50 10.7 s per moment"
    )
    if args.out:
        write_json_atomic(args.out, {"rows": rows, "latency": latency})
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _common import write_result

    table = []
    for r in rows:
        parts = r["run"].split(" | ")
        ci = r["ci95"]
        table.append(
            {
                "setting": parts[0],
                "train": " / ".join(parts[1:]),
                "n": r["n"],
                "accuracy": _f(r["accuracy"], ci["accuracy"]),
                "precision": r["precision"],
                "recall": r["recall"],
                "f1": _f(r["f1"], ci["f1"]),
                "auc": _f(r.get("auc"), ci.get("auc")),
                "auc_session": r.get("auc_per_session_mean"),
                "yes": r["yes"],
                "baseline": len(parts) == 2,
            }
        )
    defaults = {
        "models": "logreg,gbm",
        "objectives": "f1,accuracy,balanced-accuracy",
        "sources": "real,synthetic,real+synthetic",
        "schemes": "time split,leave-one-session-out",
    }
    cut = [f"--{k} {getattr(args, k)}" for k, v in defaults.items() if getattr(args, k) != v]
    write_result(
        args.json,
        benchmark="decider",
        machine=_machine,
        rows=table,
        columns=[
            ("setting", "setting", ""),
            ("train", "train on / model / objective", ""),
            ("n", "n", ""),
            ("accuracy", "accuracy [95% CI]", ""),
            ("precision", "precision", ".3f"),
            ("recall", "recall", ".3f"),
            ("f1", "F1 [95% CI]", ""),
            ("auc", "AUC [95% CI]", ""),
            ("auc_session", "AUC within session", ".3f"),
            ("yes", "Yes", ""),
        ],
        baseline="always-yes and always-no on the same moments (the LLM zero-shot row is always-yes: "
        "Qwen2.5-Coder-1.5B said Yes at every moment in proagent eval, quoted, not re-run)",
        note=f"decider latency over {latency['n']} moments: cached embeddings p50 {latency['warm_ms_p50']:.2f} ms, "
        f"p95 {latency['warm_ms_p95']:.2f} ms; cold cache p50 {latency['cold_ms_p50']:.1f} ms, "
        f"p95 {latency['cold_ms_p95']:.1f} ms",
        conditions=("a smaller grid (" + ", ".join(cut) + "; the full run compares every model, objective and source)")
        if cut
        else "",
        figures={"latency": latency, "rows": rows},
    )
    return 0


def _f(v: float | None, ci: tuple[float, float] | None = None) -> str:
    if v is None:
        return ""
    return f"{v:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def _line(row: dict) -> str:
    return f"{row['run']}: acc {row['accuracy']:.3f} f1 {row['f1']:.3f} auc {row.get('auc', float('nan')):.3f} yes {row['yes']}/{row['n']}"


def _table(rows: list[dict]) -> str:
    out = [
        "| setting | train on | model | objective | n | accuracy [95% CI] | precision | recall | F1 [95% CI] | AUC [95% CI] | AUC within session | Yes |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        parts = r["run"].split(" | ")
        scheme, rest = parts[0], parts[1:]
        if len(rest) == 1:
            rest = [rest[0], "", ""]
        ci = r["ci95"]
        out.append(
            f"| {scheme} | {' | '.join(rest)} | {r['n']} | {_f(r['accuracy'], ci['accuracy'])} | {_f(r['precision'])} | "
            f"{_f(r['recall'])} | {_f(r['f1'], ci['f1'])} | {_f(r.get('auc'), ci.get('auc'))} | "
            f"{_f(r.get('auc_per_session_mean'))} | {r['yes']} |"
        )
    return "\n".join(out)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    raise SystemExit(main())
