"""Activity statistics: burstiness and power-law fits on known distributions, an
independent hand computation on the real dev sessions, and the report files."""

from __future__ import annotations

import hashlib
import json
import warnings
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from lifetrace_fixtures import make_participant

from proagent.cli.stats import stats_cmd
from proagent.io import write_json_atomic
from proagent.records import Conversation, Event
from proagent.stats import (
    analyze,
    burstiness,
    burstiness_finite_size,
    fit_power_law,
    inter_event_times,
    run_stats,
    summary_text,
    top_k_precursors,
)

DEV = Path(__file__).resolve().parents[3] / "shared" / "data" / "proactivebench"


def fake_embed(texts):
    """Deterministic unit vectors from text hashes (no model): equal texts -> cosine 1."""
    out = []
    for t in texts:
        seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little")
        v = np.random.default_rng(seed).normal(size=16)
        out.append(v / np.linalg.norm(v))
    return np.array(out)


# --------------------------------------------------------------------------- burstiness


def test_burstiness_poisson_near_zero():
    gaps = np.random.default_rng(7).exponential(30.0, 20000)
    assert abs(burstiness(gaps)) < 0.03
    assert abs(burstiness_finite_size(gaps)) < 0.03


def test_burstiness_periodic_is_minus_one():
    assert burstiness(np.full(100, 60.0)) == pytest.approx(-1.0)
    jitter = 60 + np.random.default_rng(1).normal(0, 0.5, 1000)
    assert burstiness(jitter) < -0.98


def test_burstiness_heavy_tail_positive_and_edge_cases():
    gaps = (np.random.default_rng(2).pareto(0.5, 5000) + 1) * 5
    assert burstiness(gaps) > 0.5
    assert burstiness([]) is None and burstiness([3.0]) is None and burstiness([0.0, 0.0]) is None
    with pytest.raises(ValueError):
        burstiness([1.0, -2.0])


def test_inter_event_times_never_cross_users():
    t0 = datetime(2025, 1, 6, 9)
    evs = [
        Event(id=str(i), user=u, start=t0 + timedelta(seconds=s), end=None)
        for i, (u, s) in enumerate([("a", 0), ("b", 5), ("a", 10), ("b", 100), ("a", 40)])
    ]
    assert sorted(inter_event_times(evs).tolist()) == [10.0, 30.0, 95.0]
    assert inter_event_times(evs, lambda e: e.user == "a").tolist() == [10.0, 30.0]


# --------------------------------------------------------------------------- fits


def test_pareto_alpha_recovered_within_se():
    # continuous Pareto with pdf exponent alpha = 1.5 (numpy's Lomax index a = alpha - 1)
    # (a 1-SE criterion holds for about 2 seeds in 3 by construction; this seed is fixed)
    x = (np.random.default_rng(2024).pareto(0.5, 800) + 1) * 10.0
    r = fit_power_law(x)
    assert r.ok and r.alpha_se is not None and r.alpha_se < 0.05
    assert abs(r.alpha - 1.5) <= r.alpha_se
    assert r.xmin >= 10.0
    exp = r.comparisons["exponential"]
    assert exp["R"] > 0 and exp["p"] < 0.01 and exp["favours"] == "power_law"
    assert r.llr["exponential"] > 0


def test_alpha_not_capped_at_three():
    x = (np.random.default_rng(5).pareto(3.0, 800) + 1) * 2.0  # alpha = 4
    r = fit_power_law(x, xmin=2.0)
    assert r.alpha > 3.5


def test_exponential_samples_favour_exponential():
    x = np.random.default_rng(11).exponential(60.0, 1500)
    r = fit_power_law(x)
    assert r.ok
    whole = r.full_range["exponential"]
    assert whole["R"] < 0 and whole["p"] < 1e-6 and whole["favours"] == "exponential"
    assert whole["llr"] < 0
    tail = r.comparisons["exponential"]  # KS-chosen tail: at most inconclusive, never a significant power law
    assert not (tail["R"] > 0 and tail["significant"])


def test_too_few_points_reports_reason():
    r = fit_power_law([1.0, 2.0, 3.0])
    assert not r.ok and "positive values" in r.reason
    r = fit_power_law([5.0] * 30)
    assert not r.ok and "distinct" in r.reason
    assert fit_power_law([0.0] * 40).reason.startswith("only 0 positive")


# --------------------------------------------------------------------------- real dev sessions


def _hand_gaps() -> np.ndarray:
    gaps = []
    for f in sorted(DEV.glob("*.json")):
        items = json.loads(f.read_text("utf-8"))
        t = np.sort([float(it["observation"]["time"]) for it in items if it["task_status"]])
        gaps.append(np.diff(t))
    return np.concatenate(gaps)


def _hand_fit(x: np.ndarray) -> tuple[float, float, int, float]:
    """Clauset et al. by hand: every distinct value but the largest as xmin, analytic
    continuous MLE alpha, KS distance with the empirical CDF i/n (as powerlaw)."""
    x = np.sort(x[x > 0])
    best = None
    for xm in np.unique(x)[:-1]:
        tail = x[x >= xm]
        m = tail.size
        alpha = 1 + m / np.sum(np.log(tail / xm))
        d = np.max(np.abs(np.arange(m) / m - (1 - (tail / xm) ** (1 - alpha))))
        if best is None or d < best[0]:
            best = (d, xm, alpha, m)
    d, xm, alpha, m = best
    return xm, alpha, m, d


@pytest.mark.skipif(not DEV.is_dir(), reason="real dev sessions not present")
def test_real_dev_sessions_match_hand_computation():
    from proagent.sources.load import load_events

    events = load_events(DEV)
    res = analyze(events, similarity=False)
    hand = _hand_gaps()
    got = res["_gaps_llm"]
    assert got.size == hand.size == 32
    np.testing.assert_allclose(np.sort(got), np.sort(hand), atol=2e-3)  # ms-resolution times
    b = (hand.std() - hand.mean()) / (hand.std() + hand.mean())
    assert res["inter_event_llm"]["burstiness"] == pytest.approx(b, abs=1e-6)
    xm, alpha, m, d = _hand_fit(hand)
    pl = res["power_law"]
    assert pl["ok"]
    assert pl["xmin"] == pytest.approx(xm, abs=2e-3)
    assert pl["n_tail"] == m
    assert pl["alpha"] == pytest.approx(alpha, rel=1e-3)  # > 3 here: the cap is off
    assert pl["alpha_se"] == pytest.approx((alpha - 1) / np.sqrt(m), rel=1e-3)
    assert pl["ks_distance"] == pytest.approx(d, abs=1e-3)
    # normalised LLR vs exponential, by hand (exponential MLE above xmin)
    tail = np.sort(hand)[np.sort(hand) >= xm]
    lam = 1 / (tail.mean() - xm)
    diff = (np.log(alpha - 1) - np.log(xm) - alpha * np.log(tail / xm)) - (np.log(lam) - lam * (tail - xm))
    r_hand = diff.sum() / np.sqrt(tail.size * diff.var())
    assert pl["comparisons"]["exponential"]["R"] == pytest.approx(r_hand, abs=0.02)
    assert res["source_kind"] == "proactivebench" and "task_status" in res["llm_definition"]


# --------------------------------------------------------------------------- precursors


def test_top_k_precursors_window_order_and_similarity():
    t0 = datetime(2025, 3, 3, 10)
    ev = lambda i, s, text, llm=False: Event(  # noqa: E731
        id=str(i),
        user="u",
        start=t0 + timedelta(seconds=s),
        end=None,
        summary=text,
        is_llm_event=llm,
        conversation=Conversation(user_queries=("fix sqlite lock",)) if llm else None,
    )
    events = [
        ev(1, 0, "too old: fix sqlite lock"),  # 700 s before: outside 10 min
        ev(2, 200, "fix sqlite lock"),  # identical text to the query: top-1
        ev(3, 650, "reading news"),
        ev(4, 700, "LLM", llm=True),
        ev(5, 710, "fix sqlite lock"),  # after: never a precursor
    ]
    r = top_k_precursors(events, lambda e: bool(e.is_llm_event), ks=(1, 3), embed=fake_embed)
    assert r["n_targets"] == 1 and r["n_with_candidates"] == 1
    assert r["by_k"]["1"]["seconds"] == [500.0]
    assert sorted(r["by_k"]["3"]["seconds"]) == [50.0, 500.0]
    assert r["by_k"]["1"]["mean_similarity"] == pytest.approx(1.0, abs=1e-6)


# --------------------------------------------------------------------------- reports


@pytest.fixture(scope="module")
def participant(tmp_path_factory):
    root = tmp_path_factory.mktemp("stats_fx")
    return make_participant(root, "P01", n_events=60, n_llm=14)


def test_run_stats_writes_json_figures_html(participant, tmp_path):
    out = tmp_path / "out"
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res = run_stats(participant.path, out, embed=fake_embed)
    data = json.loads((out / "stats.json").read_text("utf-8"), parse_constant=lambda c: pytest.fail(c))
    assert data["counts"]["llm_events"] == 14 and data["source_kind"] == "lifetrace"
    assert data["intentions"]["labelled_llm_events"] == 0 or data["intentions"]["distribution"]
    assert data["apps"]["distinct"] >= 5
    assert data["inter_event_llm"]["n"] == 13 and data["inter_event_llm"]["burstiness"] is not None
    assert data["power_law"]["ok"] is True or data["power_law"]["reason"]
    assert data["precursors"]["by_k"]["1"]["n"] > 0
    for name in ("weekday_hour", "apps", "durations", "inter_event", "time_to_event"):
        assert (out / f"{name}.png").stat().st_size > 1000 and (out / f"{name}.svg").is_file()
    page = (out / "index.html").read_text("utf-8")
    assert "data:image/png;base64," in page and "http://" not in page.replace("http://www.w3.org", "")
    assert res["files"]["json"].endswith("stats.json")
    assert not list(out.glob(".*.tmp"))


def test_too_few_llm_events_do_not_crash(tmp_path):
    t0 = datetime(2025, 3, 3, 10)
    evs = [
        Event(
            id=str(i),
            user="u",
            start=t0 + timedelta(seconds=60 * i),
            end=t0 + timedelta(seconds=60 * i + 30),
            app_name="Code",
            is_llm_event=(i == 2),
        )
        for i in range(5)
    ]
    res = analyze(evs, embed=fake_embed)
    write_json_atomic(tmp_path / "stats.json", res)
    data = json.loads((tmp_path / "stats.json").read_text("utf-8"))
    assert "B = n/a" in summary_text(res, "tiny")
    assert data["power_law"]["ok"] is False and "positive values" in data["power_law"]["reason"]
    assert "burstiness needs at least 2" in data["inter_event_llm"]["reason"]
    assert res["inter_event_llm"]["burstiness"] is None


def test_compare_and_cli(participant, tmp_path):
    runner = CliRunner()
    r = runner.invoke(
        stats_cmd, ["--compare", str(participant.path), str(participant.path), "--out", str(tmp_path / "cmp")]
    )
    assert r.exit_code == 0, r.output
    data = json.loads((tmp_path / "cmp" / "stats.json").read_text("utf-8"))
    assert len(data["table"]["columns"]) == 3
    rows = {row[0]: row[1:] for row in data["table"]["rows"]}
    assert rows["B"][0] == rows["B"][1] and "R vs exponential" in rows
    assert (tmp_path / "cmp" / "index.html").is_file() and "B " in r.output
    assert data["table"]["columns"][1] != data["table"]["columns"][2]
    r = runner.invoke(stats_cmd, [])
    assert r.exit_code != 0 and "give DATA" in r.output


def test_png_figures_draw_chinese_glyphs(tmp_path):
    """Chinese app names must not render as boxes: the bundled Noto Sans CJK covers them."""
    from proagent.stats.figures import _plt

    plt = _plt()
    fig, ax = plt.subplots()
    ax.barh(["微信", "实验结果.xlsx - Excel", "VS Code"], [3, 2, 1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(tmp_path / "cjk.png")
    plt.close(fig)
    assert not [w for w in caught if "missing" in str(w.message).lower()]


def test_log_bins_hold_their_largest_value() -> None:
    """10**log10(hi) can round below hi: the largest value then fell outside every bin and a density
    histogram of it divided by zero (RuntimeWarning; issue 45, every warning fixed)."""
    import warnings

    import numpy as np

    from proagent.stats.figures import _log_bins

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for v in np.random.default_rng(0).uniform(0.1, 1e4, 300):
            edges = _log_bins(np.array([v / 3, v]))
            h, _ = np.histogram(np.array([v]), bins=edges, density=True)
            assert edges[-1] == v and h.sum() > 0
