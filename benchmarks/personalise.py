"""Online personalisation of When to Assist, measured prequentially on the real dev sessions.

Protocol (issue 22): for each of the six ProactiveBench dev sessions, the
population decider (``proagent train when``'s default: e5 + behaviour + keyword
features, class-weighted logistic regression, sigmoid calibration) is trained
on the other five; the held-out session is replayed in time order; each moment
is decided *before* its label is revealed, then the label is given to the
learner as the user's answer to that moment (full feedback: every moment is
answered). Nothing is tuned on the held-out session: the learners'
hyper-parameters are fixed in :class:`proagent.agent.decider.LearnConfig`, the
threshold is ``c_fa / (c_fa + c_miss)`` from the costs given on the command
line (default 1 and 1).

Rows: always-yes, always-no, the population model alone (at its F1 threshold
chosen on the five training sessions, and at the cost threshold), and each
online method (:data:`proagent.agent.decider.LEARNING_METHODS`) at the cost threshold.
The LLM zero-shot is not re-run: Qwen2.5-Coder-1.5B said Yes at every dev
moment (docs/results.md), so it is the always-yes row.

Figures over the 112 pooled moments: accuracy, precision, recall, F1 (95%
bootstrap intervals, ``proagent.bench.metrics.bootstrap_ci``), AUC (percentile
bootstrap), offers per hour of session time, the share of offers accepted
(= precision), expected cost per hour (``c_fa * FP + c_miss * FN`` over the
sessions' hours), and the same metrics over the moments decided after at least
10 answers. The learning curve (accuracy and F1 by the number of answers
already given, in bins of 5) is written as a PNG.

``--signals``: leave-one-session-out AUC of population-model variants (item 3
of issue 22) on the same six sessions: compact features (no embeddings),
gradient boosting on them, compact features normalised within the user's own
earlier moments, and the auxiliary target (the reference agent proposed
candidate tasks) as the training label.

    python benchmarks/personalise.py [--data ../shared/data/proactivebench]
        [--cost-false-alarm 1] [--cost-miss 1] [--figure runs/personalise-curve.png]
        [--out runs/personalise.json] [--signals] [--quick-start]

``--quick-start``: the quick start's setting instead (time split within the same
sessions) for each training target, at the trained and the cost threshold.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BINS = ((0, 5), (5, 10), (10, 15), (15, 20), (20, 10_000))


def _hours(samples: list) -> float:
    by: dict[str, list] = {}
    for s in samples:
        by.setdefault(s.user, []).append(s.time)
    return sum((max(t) - min(t)).total_seconds() for t in by.values()) / 3600.0


def _metrics(name: str, y: np.ndarray, pred: np.ndarray, p: np.ndarray | None, hours: float, c_fa: float,
             c_miss: float, k: np.ndarray) -> dict:
    from decider import _row  # benchmarks/decider.py: metrics with bootstrap intervals

    row = _row(name, y, pred, p)
    fp = int(np.sum((pred == 1) & (y == 0)))
    fn = int(np.sum((pred == 0) & (y == 1)))
    row["offers_per_hour"] = float(pred.sum()) / hours
    row["accepted_share"] = float(np.mean(y[pred == 1])) if pred.sum() else None
    row["cost_per_hour"] = (c_fa * fp + c_miss * fn) / hours
    late = k >= 10
    if late.sum() >= 2:
        r10 = _row(name, y[late], pred[late], None)
        row["after10"] = {"n": int(late.sum()), "yes": int(pred[late].sum()), "ci95": r10["ci95"],
                          **{m: r10[m] for m in ("accuracy", "precision", "recall", "f1")}}
    row["curve"] = []
    for lo, hi in BINS:
        sel = (k >= lo) & (k < hi)
        if sel.any():
            from proagent.bench.metrics import when_metrics

            row["curve"].append({"answers": f"{lo}-{hi - 1}" if hi < 10_000 else f"{lo}+", "n": int(sel.sum()),
                                 **when_metrics(list(y[sel]), list(pred[sel]))})
    return row


def prequential(x: np.ndarray, y: np.ndarray, users: np.ndarray, threshold: float, feedback: str = "all",
                 y_fit: np.ndarray | None = None, target: str = "help") -> dict[str, dict]:
    """Leave-one-session-out prequential replay: P(help) of every moment (in the
    order given, which is time order within each session) for every method.
    ``feedback="all"``: every moment's label is revealed after its decision;
    ``"offered"``: only the moments the method offered at (as in ``proagent live``,
    where only an offer gets an answer). The population model is fitted on ``y_fit``
    (the training target; default ``y``), its threshold and everything else on ``y``.

    Returns:
        ``{name: {"p": (n,), "pred": (n,), "k": (n,)}}`` where ``k`` is how many of
        the user's answers the decision had seen.
    """
    from proagent.agent.decider import LEARNING_METHODS, LearnConfig, PersonalModel
    from proagent.train import WhenConfig, fit_when

    n = len(y)
    out = {name: {"p": np.zeros(n), "pred": np.zeros(n, int)} for name in ("population (F1 threshold)", "population", *LEARNING_METHODS)}
    k = np.zeros(n, int)
    for h in sorted(set(users)):
        tr, te = np.flatnonzero(users != h), np.flatnonzero(users == h)
        yf = y if y_fit is None else y_fit
        model, thr, _ = fit_when(x[tr], y[tr], list(users[tr]), WhenConfig(target=target), yf[tr])
        pop = model.predict_proba(x[te])[:, 1]
        out["population (F1 threshold)"]["p"][te] = pop
        out["population (F1 threshold)"]["pred"][te] = pop >= thr
        out["population"]["p"][te] = pop
        out["population"]["pred"][te] = pop >= threshold
        k[te] = np.arange(len(te))
        for m in LEARNING_METHODS:
            pm = PersonalModel(model, LearnConfig(method=m), population_data=(x[tr], yf[tr]))
            t0 = time.perf_counter()
            for i in te:  # decide, then reveal the label
                p = float(pm.probabilities(x[i])[0])
                out[m]["p"][i] = p
                out[m]["pred"][i] = p >= threshold
                if feedback == "all" or p >= threshold:
                    pm.update(x[i], int(y[i]))
                    out[m].setdefault("answers", np.zeros(n, int))[i] = 1
            out[m].setdefault("seconds", 0.0)
            out[m]["seconds"] += time.perf_counter() - t0
        print(f"  {h}: {len(te)} moments replayed", file=sys.stderr, flush=True)
    for v in out.values():
        v["k"] = k
        if "answers" in v:  # answers seen before each decision, within its session
            a = v["answers"]
            v["k"] = np.concatenate([np.cumsum(a[users == h]) - a[users == h] for h in sorted(set(users))])
    return out


def _answers_to_beat(y: np.ndarray, pred: np.ndarray, k: np.ndarray, most: int = 15) -> dict[str, int | None]:
    """The fewest answers ``a`` (0..``most``) such that, over the moments decided after at least
    ``a`` answers, the decisions beat always-yes F1, always-no accuracy, and both, on those same moments
    (``None``: not within ``most``)."""
    from proagent.bench.metrics import when_metrics

    out: dict[str, int | None] = {"always_yes_f1": None, "always_no_accuracy": None, "both": None}
    for a in range(most + 1):
        sel = k >= a
        if sel.sum() < 10:
            break
        m = when_metrics(list(y[sel]), list(pred[sel]))
        f1_yes = when_metrics(list(y[sel]), [1] * int(sel.sum()))["f1"]
        acc_no = float(np.mean(y[sel] == 0))
        beats = {"always_yes_f1": m["f1"] > f1_yes, "always_no_accuracy": m["accuracy"] > acc_no}
        beats["both"] = beats["always_yes_f1"] and beats["always_no_accuracy"]
        for key, ok in beats.items():
            if ok and out[key] is None:
                out[key] = a
    return out


def _compact(samples: list, cache) -> tuple[np.ndarray, list[str]]:  # noqa: ANN001
    from proagent.agent.decider import FeatureConfig, feature_names, moment_features

    fc = FeatureConfig(("similarity", "behaviour", "keywords"))
    return moment_features(samples, cache, fc), feature_names(fc)


def _user_normalised(x: np.ndarray, users: np.ndarray) -> np.ndarray:
    """Each row z-scored against the same user's *earlier* rows (0 before two of them)."""
    out = np.zeros_like(x)
    for u in set(users):
        idx = np.flatnonzero(users == u)
        for j, i in enumerate(idx):
            prev = x[idx[:j]]
            if len(prev) >= 2:
                sd = prev.std(axis=0)
                out[i] = (x[i] - prev.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    return out


def signals(samples: list, x: np.ndarray, y: np.ndarray, users: np.ndarray, cache) -> list[dict]:  # noqa: ANN001
    """Leave-one-session-out AUC of population-model variants."""
    from sklearn.metrics import roc_auc_score

    from decider import _auc_ci
    from proagent.train import WhenConfig, fit_when

    xc, _ = _compact(samples, cache)
    aux = np.array([1 if s.current.candidate_tasks else 0 for s in samples])
    variants = {
        "default features, logreg (population model)": (x, y, WhenConfig()),
        "compact features (no embeddings), logreg": (xc, y, WhenConfig(c=0.1)),
        "compact features, gradient boosting": (xc, y, WhenConfig(model="gbm")),
        "compact + normalised within the user's earlier moments, logreg": (np.hstack([xc, _user_normalised(xc, users)]), y, WhenConfig(c=0.1)),
        "default features, trained on the auxiliary target (candidate tasks proposed)": (x, aux, WhenConfig()),
        "default features, trained on help or candidate tasks (train when --target help-or-candidates)":
            (x, np.maximum(y, aux), WhenConfig()),
    }
    rows = []
    for name, (xv, target, cfg) in variants.items():
        p = np.zeros(len(y))
        for h in sorted(set(users)):
            tr, te = users != h, users == h
            m, _, _ = fit_when(xv[tr], target[tr], list(users[tr]), cfg)
            p[te] = m.predict_proba(xv[te])[:, 1]
        auc, ci = _auc_ci(y, p)
        within = float(np.mean([roc_auc_score(y[users == h], p[users == h]) for h in sorted(set(users))
                                if 0 < y[users == h].sum() < (users == h).sum()]))
        rows.append({"variant": name, "auc": auc, "ci95": ci, "auc_within_session": within})
        print(f"  {name}: AUC {auc:.3f}", file=sys.stderr, flush=True)
    return rows


def quick_start_rows(data: str, cache) -> list[dict]:  # noqa: ANN001
    """The quick start's setting (train on the earlier half of every session, test on the later
    57 moments) for each training target, at the trained F1 threshold and at the cost threshold 1/3."""
    from proagent.agent.decider import FeatureConfig, moment_features
    from proagent.train import WhenConfig, fit_when, load_split_moments
    from proagent.train.when import training_target

    tr, _ = load_split_moments(data, "train")
    te, _ = load_split_moments(data, "test")
    fc = FeatureConfig()
    xtr, xte = moment_features(tr, cache, fc), moment_features(te, cache, fc)
    ytr, yte = np.array([s.label for s in tr]), np.array([s.label for s in te])
    from decider import _row

    rows = []
    for target in ("help", "help-or-candidates"):
        model, thr, _ = fit_when(xtr, ytr, [s.user for s in tr], WhenConfig(target=target), training_target(tr, target))
        p = model.predict_proba(xte)[:, 1]
        for name, t in ((f"F1 threshold {thr:.3f}", thr), ("cost threshold 1/3", 1 / 3)):
            rows.append(_row(f"--target {target}, {name}", yte, (p >= t).astype(int), p))
    return rows


def _figure(rows: list[dict], path: Path, threshold: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, metric in zip(axes, ("accuracy", "f1")):
        for r in rows:
            xs = [c["answers"] for c in r["curve"]]
            style = "--" if r["run"].startswith(("always", "population")) else "-"
            ax.plot(xs, [c[metric] for c in r["curve"]], style, marker="o", label=r["run"])
        ax.set_xlabel("answers the user had given before the moment")
        ax.set_ylabel(metric if metric == "accuracy" else "F1")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    n = [c["n"] for c in rows[0]["curve"]]
    axes[0].set_title(f"accuracy (moments per bin: {', '.join(map(str, n))})", fontsize=9)
    axes[1].set_title(f"F1 of 'needs help' (threshold {threshold:.2f} from the costs)", fontsize=9)
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="center right")
    fig.suptitle("Prequential learning curve, 6 ProactiveBench dev sessions (leave-one-session-out)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 0.78, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _f(v: float | None, ci=None) -> str:  # noqa: ANN001
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def table(rows: list[dict]) -> str:
    out = ["| decider | accuracy [95% CI] | precision | recall | F1 [95% CI] | AUC [95% CI] | offers/hour | share accepted | "
           "cost/hour | after 10 answers: accuracy / precision / F1 (n) |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        ci = r["ci95"]
        a = r.get("after10")
        late = (f"{_f(a['accuracy'], a['ci95']['accuracy'])} / {_f(a['precision'], a['ci95']['precision'])} / "
                f"{_f(a['f1'], a['ci95']['f1'])} ({a['n']})") if a else "-"
        out.append(f"| {r['run']} | {_f(r['accuracy'], ci['accuracy'])} | {_f(r['precision'], ci['precision'])} | "
                   f"{_f(r['recall'], ci['recall'])} | {_f(r['f1'], ci['f1'])} | {_f(r.get('auc'), ci.get('auc'))} | "
                   f"{r['offers_per_hour']:.1f} | {_f(r['accepted_share'])} | {r['cost_per_hour']:.1f} | {late} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/proactivebench"))
    ap.add_argument("--cost-false-alarm", type=float, default=1.0)
    ap.add_argument("--cost-miss", type=float, default=1.0)
    ap.add_argument("--figure", default=str(ROOT / "runs" / "personalise-curve.png"))
    ap.add_argument("--out", default=None, help="Also write every row as JSON here.")
    ap.add_argument("--feedback", choices=("all", "offered"), default="all",
                    help="Reveal every moment's label after its decision, or only where the method offered.")
    ap.add_argument("--target", choices=("help", "help-or-candidates"), default="help",
                    help="Training target of the population model (proagent train when --target).")
    ap.add_argument("--quick-start", action="store_true",
                    help="Also the quick start's time split (earlier half of each session -> later 57 moments) per --target.")
    ap.add_argument("--signals", action="store_true", help="Also measure population-model variants (LOSO AUC).")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")

    from proagent.agent.decider import EmbeddingCache, FeatureConfig, cost_threshold, moment_features
    from proagent.io import write_json_atomic
    from proagent.train import load_split_moments

    from _common import guard_network, machine_note

    guard_network()
    print(machine_note()[0], file=sys.stderr)
    c_fa, c_miss = args.cost_false_alarm, args.cost_miss
    threshold = cost_threshold(c_fa, c_miss)
    real, _ = load_split_moments(args.data, "all")
    real.sort(key=lambda s: (s.user, s.time))
    cache = EmbeddingCache()
    x = moment_features(real, cache, FeatureConfig())
    y = np.array([s.label for s in real])
    users = np.array([s.user for s in real])
    hours = _hours(real)
    print(f"{len(real)} moments, {len(set(users))} sessions, {hours * 60:.1f} minutes; threshold {threshold:.3f} "
          f"(cost of a false alarm {c_fa:g}, of a miss {c_miss:g}); labels revealed: {args.feedback}; "
          f"population target: {args.target}", file=sys.stderr)
    from proagent.train.when import training_target

    runs = prequential(x, y, users, threshold, args.feedback, training_target(real, args.target), args.target)
    k = runs["population"]["k"]
    rows = [_metrics("always-yes (= LLM zero-shot, quoted)", y, np.ones_like(y), None, hours, c_fa, c_miss, k),
            _metrics("always-no", y, np.zeros_like(y), None, hours, c_fa, c_miss, k)]
    for name, r in runs.items():
        row = _metrics(name, y, r["pred"], r["p"], hours, c_fa, c_miss, r["k"])
        row["answers_to_beat"] = _answers_to_beat(y, r["pred"], r["k"])
        if "seconds" in r:
            row["update_ms"] = 1000 * r["seconds"] / len(y)
        rows.append(row)
    print(table(rows))
    for r in rows:
        if "update_ms" in r:
            b = r["answers_to_beat"]
            print(f"{r['run']}: {r['update_ms']:.1f} ms per decision + update; answers before it beats always-yes F1: "
                  f"{b['always_yes_f1']}, always-no accuracy: {b['always_no_accuracy']}, both: {b['both']}")
    result = {"feedback": args.feedback, "target": args.target, "threshold": threshold, "cost_false_alarm": c_fa, "cost_miss": c_miss, "hours": hours, "rows": rows}
    if args.signals:
        result["signals"] = signals(real, x, y, users, cache)
        print("\n| population-model variant (leave-one-session-out) | AUC [95% CI] | AUC within session |\n| --- | --- | --- |")
        for s in result["signals"]:
            print(f"| {s['variant']} | {_f(s['auc'], s['ci95'])} | {_f(s['auc_within_session'])} |")
    if args.quick_start:
        result["quick_start"] = quick_start_rows(args.data, cache)
        print("\n| time split (quick start), population decider | n | accuracy [95% CI] | precision | recall | "
              "F1 [95% CI] | AUC [95% CI] | Yes |\n| --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in result["quick_start"]:
            ci = r["ci95"]
            print(f"| {r['run']} | {r['n']} | {_f(r['accuracy'], ci['accuracy'])} | {_f(r['precision'])} | "
                  f"{_f(r['recall'])} | {_f(r['f1'], ci['f1'])} | {_f(r['auc'], ci['auc'])} | {r['yes']} |")
    _figure(rows, Path(args.figure), threshold)
    print(f"\nlearning curve: {args.figure}")
    if args.out:
        write_json_atomic(args.out, result)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    raise SystemExit(main())
