"""The desktop and privacy benchmarks cannot break unseen (issue 38): each script's ``--smoke`` (the
smallest setting, the real X session, browser, OCR and curate path) runs here with ``--json``, and
the result record (``benchmarks/_common.write_result``) must hold the figures a working run makes,
beside its baseline. The model and eval benchmarks are ``tests/cross/test_benchmarks_smoke.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from system import baseline_revision, require_binary

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
X_SESSION = ("Xvfb", "openbox", "xterm", "xdotool", "xprop")


def _record(name: str, tmp: Path, *extra: str, timeout: float = 600) -> dict[str, Any]:
    """Run ``benchmarks/NAME --smoke --json R EXTRA...`` (proagent's disk caches under ``tmp``, never the
    user's) and return the record it wrote; the run must exit 0 and say it was a smoke run."""
    out = tmp / "result.json"
    env = {
        **os.environ,
        "PROAGENT_EMBEDDING_CACHE": str(tmp / "emb"),
        "PROAGENT_MEMORY_CACHE": str(tmp / "mem"),
        "PROAGENT_ANSWER_CACHE": "off",
    }
    r = subprocess.run(
        [sys.executable, str(BENCH / name), "--smoke", "--json", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
        cwd=tmp,
    )
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    rec = json.loads(out.read_text("utf-8"))
    assert rec["benchmark"] == Path(name).stem and "--smoke" in rec["command"], rec["command"]
    assert rec["machine"]["cpus"] >= 1 and rec["baseline"], rec
    return rec


def _rev(default: str) -> tuple[str, str]:
    """``--baseline-rev REV``: ``default`` where this checkout holds it, else ``HEAD`` (:func:`baseline_revision`)."""
    return "--baseline-rev", baseline_revision(default)


def _rows(rec: dict[str, Any], key: str) -> dict[str, dict[str, Any]]:
    return {r[key]: r for r in rec["rows"]}


def test_tab_split_smoke(tmp_path: Path) -> None:
    rows = _rows(_record("tab_split.py", tmp_path), "rule")
    assert rows["app (baseline)"]["baseline"] and not rows["tab rule, titles + URLs"]["baseline"]
    # the tab rule with URLs finds every boundary; the app rule misses the same-browser switches
    assert rows["tab rule, titles + URLs"]["recall"] == 1.0 and rows["tab rule, titles + URLs"]["false_splits"] == 0
    assert rows["app (baseline)"]["missed_splits"] > 0


def test_privacy_smoke(tmp_path: Path) -> None:
    pytest.importorskip("presidio_analyzer")
    pytest.importorskip("rapidocr")
    rec = _record("privacy.py", tmp_path)
    rows = _rows(rec, "type")
    assert set(rows) == {"email", "bank_card", "all"} and rec["conditions"].startswith("--smoke")
    assert rows["email"]["blur"] == 2 and rows["bank_card"]["delete"] == 2  # the risk rule: blur vs delete
    total = rows["all"]
    assert total["n"] == 4 and total["recall"] == 1.0 and total["left_db"] == total["left_img"] == 0
    assert total["raw_db"] == 4 and total["raw_img"] >= 3  # the baseline: the planted values are in the input
    assert rec["figures"]["n_clean"] == 1 and rec["figures"]["false_positives"] == 0


@pytest.mark.slow
def test_pii_corpus_smoke(tmp_path: Path) -> None:
    """Three screens curated by this tree and by the baseline revision (two children reading with RapidOCR)."""
    pytest.importorskip("presidio_analyzer")
    pytest.importorskip("rapidocr")
    rec = _record("pii_corpus.py", tmp_path, *_rev("1a1b08a"))
    rows = _rows(rec, "type")
    assert set(rows) == {"email", "us_ssn"}
    assert rows["email"]["recall"] == rows["us_ssn"]["recall"] == 1.0 and rows["us_ssn"]["delete"] == 1
    assert all(r["left"] == 0 and r["base_recall"] is not None for r in rows.values())  # the baseline ran
    results = rec["figures"]["results"]
    assert len(results) == 2 and all(
        r["ordinary"]["n"] == 1 and r["find_pii_ms_per_line"] > 0 for r in results.values()
    )
    assert results["this tree"]["ordinary"]["changed"] == 0


@pytest.mark.slow
def test_curate_smoke(tmp_path: Path) -> None:
    """Five children, each loading RapidOCR: the OCR pass, curate on OCR rows (this tree, the baseline
    revision), curate on a log without them."""
    pytest.importorskip("rapidocr")
    rec = _record("curate.py", tmp_path, *_rev("0a30da7"))
    rows = rec["rows"]
    assert [(r["row"], r["code"] == "this tree") for r in rows] == [
        ("RapidOCR pass (word boxes)", True),
        ("curate, OCR rows", True),
        ("curate, OCR rows", False),
        ("curate, no OCR rows", True),
    ]
    assert [r["baseline"] for r in rows] == [True, False, True, False]
    # the second screenshot shows an e-mail address: blurred, the other retained, by every code
    assert all(r["shots"] == 2 and r["wall_s"] > 0 and r["cpu_s"] > 0 for r in rows)
    assert all(r["actions"] == "blur 1, retain 1" for r in rows[1:]), rows
    assert rows[0]["vs_ocr_cpu"] == 1.0 and rows[1]["vs_ocr_cpu"] > 0


def test_ocr_worker_smoke(tmp_path: Path) -> None:
    pytest.importorskip("rapidocr")
    rows = _record("ocr_worker.py", tmp_path, *_rev("0a30da7"))["rows"]
    assert [r["baseline"] for r in rows] == [False, True] and rows[0]["code"] == "this tree"
    for r in rows:  # both workers read both screenshots: the title bar and 8 code lines each
        assert r["shots"] == r["processed"] == 2 and r["lines"] >= 12 and 0 < r["peak_rss_mb"] and r["cpu_s"] > 0, r
    # the same text as the baseline's whole-frame read, but for OCR noise of a band read alone: on the distinct
    # session ocr42's worker read 'step 7' where the whole frame gave 'step_7' (1 character of ~500)
    assert rows[0]["same"] in ("1 of 2", "2 of 2") and rows[0]["chars_in_common"] >= 0.98, rows


def test_capture_smoke(tmp_path: Path) -> None:
    require_binary(*X_SESSION, "xmessage")
    pytest.importorskip("imagehash")
    rec = _record("capture.py", tmp_path)
    res = rec["figures"]
    assert res["returncode"] == 0 and rec["conditions"].startswith("--smoke")
    # three xterms and an xmessage: the second switch brings another application, a second event
    assert res["events"] >= 2 and res["screenshots_stored"] >= 2 and res["duplicates"] >= 1, res
    # the OCR worker ran (how far it got in 12 s depends on the machine's load)
    assert res["capture_rss_mb"] > 10 and res["ocr_rss_mb"] > 10, res
    assert res["ocr_done"] + res["backlog_at_stop"] == res["screenshots_stored"], res
    assert {e["format"] for e in res["encode"]} >= {"png zlib 1 (stored)", "webp q80 (stored)"}
    assert {r["figure"] for r in rec["rows"]} >= {"capture loop CPU, % of one core", "disk per hour, MB"}


def test_chat_layouts_smoke(tmp_path: Path) -> None:
    """Four conversations rendered by Playwright on Chromium, read by RapidOCR, planned by this tree and
    by the committed code (``--baseline-rev HEAD``: a revision every checkout has)."""
    require_binary("chromium")
    pytest.importorskip("playwright.sync_api")
    pytest.importorskip("rapidocr")
    rec = _record("chat_layouts.py", tmp_path, *_rev("HEAD"))
    rows = _rows(rec, "layout")
    assert set(rows) == {"bubbles", "labelled", "mail", "pricing"} and rec["baseline_columns"], rec
    # chatgpt.com's pricing columns: indented cells with text beside them on their rows are no bubbles
    assert rows["pricing"]["kind"] == "look-alike" and rows["pricing"]["this code:found"] == 0
    for code in ("this code", "HEAD"):
        assert rows["bubbles"][f"{code}:found"] == rows["labelled"][f"{code}:found"] == 1
        assert rows["mail"][f"{code}:found"] == 0  # people writing to each other: not LLM use
        assert rows["bubbles"][f"{code}:sim"] > 0.9 and rows["labelled"][f"{code}:sim"] > 0.9
    assert rec["figures"]["runs"]["this code"]["total"]["precision"] == 1.0


@pytest.mark.slow
def test_soak_smoke(tmp_path: Path) -> None:
    """20 s of live --watch following a real capture in Xvfb, capture SIGKILLed and restarted half-way."""
    require_binary(*X_SESSION)
    rec = _record("soak.py", tmp_path)
    res = rec["figures"]
    assert res["capture_killed_and_restarted"] and res["live_exit"] == 130, res  # stopped as by Ctrl-C
    assert res["events"] >= 3 and res["decisions"] >= 2 and res["samples"] >= 2, res
    assert res["missed"] == res["repeated"] == 0, res  # every event after live's start decided exactly once
    assert [r["what"] for r in rec["rows"]] == ["live RSS MB", "live open descriptors"]
    assert rec["rows"][0]["start"] > 10 and rec["conditions"], rec


@pytest.mark.slow
def test_desktop_day_smoke(tmp_path: Path) -> None:
    """The smallest scripted day (about 24 s of script in Xvfb with Chromium and an xterm) through capture ->
    curate (+ review) -> annotate -> eval (loopback mocks) -> live."""
    pytest.importorskip("presidio_analyzer")
    pytest.importorskip("rapidocr")
    pytest.importorskip("noto_cjk_sans_otc")
    sys.path.insert(0, str(BENCH.parent / "tests"))
    from scenarios.desktop import PROGRAMS

    require_binary(*PROGRAMS)
    rec = _record("desktop_day.py", tmp_path, timeout=1200)
    rows = _rows(rec, "rule")
    assert rows["pHash only (LifeTrace)"]["baseline"] and not rows["text-aware (default)"]["baseline"]
    assert all(r["events"] >= 4 and r["stored"] >= 4 for r in rows.values()), rows
    figures = rec["figures"]["figures"]
    assert figures["events kept by curate"] >= 4 and figures["scripted events lost"] == 0, figures
    assert figures["planted PII values"] > 0 and figures["planted PII found in published output"] == 0, figures
    assert rec["figures"]["annotate"]["tp"] == 1, rec["figures"]["annotate"]  # the one chat question asked
    stages = {r["stage"].split(" (")[0] for r in rec["tables"][0]["rows"]}
    assert {"curate", "annotate", "eval --split all"} <= stages, stages


def test_title_split_smoke(tmp_path: Path) -> None:
    """benchmarks/title_split.py (issue 47 item 2): the document rule with window ids finds every
    editor and terminal switch; the app rule misses them; every title splits on the noise."""
    rows = _rows(_record("title_split.py", tmp_path), "rule")
    assert rows["app (baseline)"]["baseline"] and not rows["document rule, titles + window ids"]["baseline"]
    ours = rows["document rule, titles + window ids"]
    assert ours["recall"] == 1.0 and ours["false_splits"] <= 1, ours
    assert rows["app (baseline)"]["missed_splits"] > 10 and rows["every title"]["false_splits"] > 10, rows
