"""``proagent ablate``: a tiny grid with mockllm renders the table and the report,
and a second run resumes every cell instead of re-running it."""

from __future__ import annotations

import csv
import glob

import pytest
from click.testing import CliRunner
from memory_fixtures import write_sessions

from proagent.cli import cli
from proagent.records import Score
from proagent.report.effects import paired_effect
from proagent.report.tidy import TIDY_COLUMNS

pytestmark = pytest.mark.usefixtures("in_tmp_path")  # working folder and caches in tmp_path (conftest)


def test_ablate_tiny_grid_renders_report_and_resumes(tmp_path):
    data = write_sessions(tmp_path / "sessions", n=10)
    out = tmp_path / "ablate"
    args = [
        "ablate",
        "--data",
        str(data),
        "--methods",
        "zero-shot",
        "--memory",
        "none,kg",
        "--windows",
        "30s,5m",
        "--models",
        "mockllm/model",
        "--limit",
        "4",
        "--out",
        str(out),
    ]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, (r.output, r.exception)
    assert "cells: 4" in r.output and "report:" in r.output
    cells = sorted(p.name for p in (out / "cells").iterdir())
    assert cells == [
        "model__zero-shot__kg__30s",
        "model__zero-shot__kg__5m",
        "model__zero-shot__none__30s",
        "model__zero-shot__none__5m",
    ]
    with open(out / "results.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == TIDY_COLUMNS
    acc = [x for x in rows if x["system"] == "model" and x["metric"] == "accuracy"]
    assert (
        len(acc) == 4
        and {x["memory"] for x in acc} == {"none", "kg"}
        and {x["window_seconds"] for x in acc} == {"30.0", "300.0"}
    )
    assert {x["system"] for x in rows} == {"model", "always-yes", "always-no"}
    assert all(x["n"] == "4" for x in acc)
    import pyarrow.parquet as pq

    assert pq.read_table(out / "results.parquet").num_rows == len(rows)
    html = (out / "report.html").read_text("utf-8")
    assert html.count('src="data:image/png;base64,') == 3  # by method x memory, vs window, latency
    assert "http://" not in html and "https://" not in html  # opens offline
    for needle in ("Baselines", "Effect of each memory", "always-yes", "derived fields", "kg"):
        assert needle in html
    assert sorted(p.name for p in (out / "figures").glob("*.png")) == [
        "latency_by_method.png",
        "metric_vs_window.png",
        "metrics_by_method_memory.png",
    ]
    effects = list(csv.DictReader(open(out / "effects.csv", encoding="utf-8")))
    assert {(e["window"], e["metric"]) for e in effects} >= {
        ("30s", "accuracy"),
        ("30s", "f1"),
        ("5m", "accuracy"),
        ("5m", "f1"),
    }
    logs_before = sorted(glob.glob(str(out / "cells" / "*" / "*.eval")))
    assert len(logs_before) == 4
    # again: every cell is complete, eval_set reuses its log
    r2 = CliRunner().invoke(cli, args)
    assert r2.exit_code == 0, (r2.output, r2.exception)
    assert sorted(glob.glob(str(out / "cells" / "*" / "*.eval"))) == logs_before
    assert r.output.count("cell reused") == 0 and r2.output.count("cell reused") == 4  # by the logs, not the clock


def test_a_value_given_twice_is_one_grid_point():
    from proagent.report.grid import cells

    grid = cells(["m"], ["zero-shot", "zero-shot"], ["none"], ["5m", "30s", "5m"])
    assert [(c.method, c.window) for c in grid] == [("zero-shot", "5m"), ("zero-shot", "30s")]


def test_ablate_rejects_bad_lists(tmp_path):
    r = CliRunner().invoke(
        cli, ["ablate", "--data", str(tmp_path), "--memory", "none,magic", "--out", str(tmp_path / "o")]
    )
    assert r.exit_code == 2 and "magic" in r.output
    r = CliRunner().invoke(cli, ["ablate", "--data", str(tmp_path), "--windows", "5m,7x", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "7x" in r.output


def test_cells_are_parsed_once_on_the_driver_and_a_bad_one_refused_before_any_runs(tmp_path):
    """Issue 38: a cell runner (``ablate --ray``'s workers) receives each cell's parsed task options,
    not strings to parse again; a bad value in the Python API's grid is refused before cell 1 runs."""
    from proagent.bench.options import AssistOptions
    from proagent.errors import UsageError
    from proagent.report.ablation import run_ablation

    data = write_sessions(tmp_path / "sessions", n=4)
    seen = []

    def runner(grid, cells_dir, options, run_kw):  # noqa: ANN001, ANN202
        for cell, opts in zip(grid, options):
            seen.append((cell.slug, opts, dict(run_kw)))
            yield cell, RuntimeError("not run here")

    with pytest.raises(UsageError, match="window"):
        run_ablation(
            str(data),
            tmp_path / "bad",
            models=["mockllm/model"],
            methods=["zero-shot"],
            memories=["none"],
            windows=["5m", "7x"],
            run_cells=runner,
            echo=lambda _: None,
        )
    assert seen == [] and not (tmp_path / "bad" / "cells").exists()
    out = run_ablation(
        str(data),
        tmp_path / "ok",
        models=["mockllm/model"],
        methods=["zero-shot", "cot"],
        memories=["none"],
        windows=["30s"],
        run_cells=runner,
        echo=lambda _: None,
        split="all",
        seed=3,
        limit=2,
    )
    assert out["failed"] == ["model__zero-shot__none__30s", "model__cot__none__30s"]
    assert [type(o) for _, o, _ in seen] == [AssistOptions, AssistOptions]
    assert [(o.method, o.window.seconds, o.split, o.seed) for _, o, _ in seen] == [
        ("zero-shot", 30.0, "all", 3),
        ("cot", 30.0, "all", 3),
    ]
    assert all(kw == {"limit": 2} for _, _, kw in seen)  # run settings only: the task's are in the record


def test_paired_effect_hand_computed():
    a = [Score(str(i), label=1, predicted=0) for i in range(5)] + [
        Score(str(i), label=0, predicted=0) for i in range(5, 10)
    ]
    b = [Score(str(i), label=1, predicted=1) for i in range(5)] + [
        Score(str(i), label=0, predicted=0) for i in range(5, 10)
    ]
    e = paired_effect(a, b, "accuracy")
    assert e.delta == pytest.approx(0.5) and e.n == 10
    assert 0 < e.ci_low <= 0.5 <= e.ci_high <= 1.0
    assert paired_effect(a, a, "f1").delta == 0
    sa = [Score(str(i), label=1, predicted=1, semantic_similarity=0.5) for i in range(4)]
    sb = [Score(str(i), label=1, predicted=1, semantic_similarity=0.5 + 0.1 * i) for i in range(4)]
    e = paired_effect(sa, sb, "semantic_similarity")
    assert e.delta == pytest.approx(0.15) and e.n == 4


def _hand_rolled(a, b, metric, n_resamples=1000, seed=0):
    """The paired bootstrap ablate used before scipy's (kept here as the reference)."""
    import numpy as np

    ids = [s.sample_id for s in b]
    sa = {s.sample_id: s for s in a}
    sb = {s.sample_id: s for s in b}
    rng = np.random.default_rng(seed)
    if metric == "semantic_similarity":
        d = np.asarray([sb[i].semantic_similarity - sa[i].semantic_similarity for i in ids])
        boots = np.asarray([d[rng.integers(0, len(d), len(d))].mean() for _ in range(n_resamples)])
        delta = d.mean()
    else:
        y = np.asarray([sa[i].label for i in ids], dtype=float)
        pa = np.asarray([sa[i].predicted for i in ids], dtype=float)
        pb = np.asarray([sb[i].predicted for i in ids], dtype=float)

        def when(y, p):
            if metric == "accuracy":
                return float(np.mean(y == p))
            tp, den = float(np.sum(p * y)), float(np.sum(p) + np.sum(y))
            return 2 * tp / den if den else 0.0

        def diff(idx):
            return when(y[idx], pb[idx]) - when(y[idx], pa[idx])

        n = len(ids)
        boots = np.asarray([diff(rng.integers(0, n, n)) for _ in range(n_resamples)])
        delta = diff(np.arange(n))
    return delta, np.percentile(boots, 2.5), np.percentile(boots, 97.5), np.mean(boots <= 0)


@pytest.mark.parametrize("metric", ["accuracy", "f1", "semantic_similarity"])
def test_paired_effect_matches_the_hand_rolled_bootstrap(metric):
    """scipy's bootstrap gives the old figures: the same delta, intervals and p within resampling noise."""
    import numpy as np

    rng = np.random.default_rng(7)
    n = 300
    y = rng.integers(0, 2, n)
    pa = np.where(rng.random(n) < 0.6, y, 1 - y)
    pb = np.where(rng.random(n) < 0.7, y, 1 - y)
    a = [Score(str(i), int(y[i]), int(pa[i]), semantic_similarity=float(rng.random())) for i in range(n)]
    b = [Score(str(i), int(y[i]), int(pb[i]), semantic_similarity=float(rng.random()) + 0.05) for i in range(n)]
    e = paired_effect(a, b, metric)
    delta, lo, hi, p = _hand_rolled(a, b, metric)
    assert e.delta == pytest.approx(delta, abs=1e-12) and e.n == n
    width = hi - lo
    assert e.ci_low == pytest.approx(lo, abs=0.1 * width) and e.ci_high == pytest.approx(hi, abs=0.1 * width)
    assert e.p_le_0 == pytest.approx(p, abs=0.03)
    assert paired_effect(a, b, metric, seed=1) != e  # the seed is the resampling's
    assert paired_effect(a, b, metric) == e  # and fixes it


def test_paired_effect_scores_unparsed_answers_as_wrong():
    """An unparsed answer is the wrong decision in an effect too (bench.metrics.UNPARSED_RULE):
    on a No sample it is a false positive, so F1 drops."""
    from proagent.bench.metrics import when_metrics

    a = [Score("p0", 1, 1), Score("p1", 1, 1), Score("n0", 0, 0), Score("n1", 0, 0)]
    b = [Score("p0", 1, 1), Score("p1", 1, 1), Score("n0", 0, None), Score("n1", 0, 0)]
    want = when_metrics([1, 1, 0, 0], [1, 1, None, 0])["f1"] - 1.0
    assert want < 0
    assert paired_effect(a, b, "f1").delta == pytest.approx(want)
    assert paired_effect(a, b, "accuracy").delta == pytest.approx(-0.25)


def test_grid_progress_estimates_what_is_left():
    """After each cell: its time, the grid done so far, and the rest at the mean of the cells that
    ran; reused cells (resumed) are named and left out of the mean (issue 36)."""
    from proagent.report.ablation import grid_progress

    assert grid_progress(1, 48, 120.0, [120.0]) == "cell 2 min; 1 of 48 done, about 1.6 h left"
    assert grid_progress(2, 48, 0.2, [120.0], reused=True) == "cell reused; 2 of 48 done, about 1.5 h left"
    assert grid_progress(3, 3, 30.0, [120.0, 30.0]) == "cell 30 s; 3 of 3 done"
    assert grid_progress(1, 4, 0.1, [], reused=True) == "cell reused; 1 of 4 done"
    # a quick cell that ran (a fast mock) is not called reused; a failed one says so
    assert grid_progress(1, 4, 0.4, [0.4]).startswith("cell 0 s; 1 of 4 done")
    assert grid_progress(1, 4, 0.3, [0.3], failed=True).startswith("cell failed after 0 s; 1 of 4 done")
    assert grid_progress(1, 100, 4000.0, [4000.0]).endswith("about 110.0 h left")
