"""ActivityWatch and screenpipe logs through the whole path: annotate (through a LifeTrace copy)
-> eval and stats, with a loopback OpenAI-compatible annotator."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from pathlib import Path

import pytest
from activity_fixtures import FRAMES, utc, write_aw_core, write_aw_rust, write_screenpipe
from click.testing import CliRunner
from mock_openai import MockOpenAI

from proagent.cli import cli
from proagent.sources.lifetrace import load_lifetrace
from proagent.sources.load import load_events

MODEL = "openai-api/mock/annotator"


def _answer(body: dict) -> str:
    return json.dumps(
        {
            "is_llm_interaction": True,
            "llm_platform": "ChatGPT",
            "user_queries": ["How do I sort a dict by value?"],
            "llm_responses": ["Use sorted(d.items(), key=lambda kv: kv[1])."],
            "event_summary": "asked ChatGPT about sorting",
            "detailed_description": "A chat.",
            "user_intention": "code programming",
            "confidence": 0.9,
            "rationale": "chat",
        }
    )


def _cycles(n: int) -> list:
    """``n`` rounds of editor (30 s), ChatGPT in Firefox (20 s), terminal (25 s), as ActivityWatch buckets."""
    win, web = [], []
    t = utc(10, 0)
    for _ in range(n):
        for app, title, secs in (
            ("Code", "main.py - Code", 30),
            ("Firefox", "ChatGPT — Mozilla Firefox", 20),
            ("Terminal", "bash", 25),
        ):
            win.append((t, float(secs), {"app": app, "title": title}))
            if app == "Firefox":
                web.append((t, float(secs), {"url": "https://chatgpt.com/c/1", "title": "ChatGPT"}))
            t += timedelta(seconds=secs)
    afk = [(utc(10, 0), (t - utc(10, 0)).total_seconds(), {"status": "not-afk"})]
    return [
        ("aw-watcher-window_host", "currentwindow", "aw-watcher-window", win),
        ("aw-watcher-afk_host", "afkstatus", "aw-watcher-afk", afk),
        ("aw-watcher-web-firefox_host", "web.tab.current", "aw-client-web", web),
    ]


def _annotate(data: Path, out: Path, logs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with MockOpenAI(_answer) as srv:
        srv.env(monkeypatch)
        r = CliRunner().invoke(
            cli,
            [
                "annotate",
                str(data),
                "--out",
                str(out),
                "--annotator",
                f"text:{MODEL}",
                "--log-dir",
                str(logs),
                "--ocr",
                "db",
                "--display",
                "none",
                "--model-base-url",
                srv.base_url,
            ],
        )
        assert r.exit_code == 0, r.output
        assert len(srv.requests) > 0


@pytest.mark.parametrize("server", ["aw-server-rust", "aw-core"])
def test_activitywatch_annotate_then_eval_and_stats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: str
) -> None:
    (tmp_path / "alice").mkdir()
    if server == "aw-core":  # the database written by ActivityWatch's own Python storage
        pytest.importorskip("aw_datastore")
        db = write_aw_core(tmp_path / "alice" / "sqlite.v1.db", "sqlite", buckets=_cycles(6))
    else:
        db = write_aw_rust(tmp_path / "alice" / "sqlite.db", buckets=_cycles(6))
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    source = load_events(db)
    r = CliRunner().invoke(cli, ["eval", "--data", str(db), "--model", "mockllm/model"])
    assert r.exit_code == 1 and "annotate the log first" in r.output
    out = tmp_path / "out"
    _annotate(db, out, tmp_path / "logs", monkeypatch)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before  # the ActivityWatch database is only read
    log = load_lifetrace(out / "alice" / "lifetrace_privacy_processed.db")
    assert [(e.id, e.app_name, e.start, e.end, e.url) for e in log.events] == [
        (e.id, e.app_name, e.start, e.end, e.url) for e in source
    ]  # same ids: annotations fit both
    assert all(not e.screen_recorded and e.is_activity() for e in log.events)
    llm = [e for e in log.events if e.is_llm_event]
    assert [e.app_name for e in llm] == ["Firefox"] * 6  # the first pass saw ChatGPT in the title and URL
    # no screen to check the model's quote against: the query is unknown, never the model's invention
    assert all(not e.conversation.user_queries for e in llm)
    # no screen recorded: a flagged LLM event is a When positive without a How reference
    r = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(out),
            "--model",
            "mockllm/model",
            "--split",
            "all",
            "--log-dir",
            str(tmp_path / "eval"),
            "--display",
            "none",
        ],
    )
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "eval" / "results.json").read_text())
    assert res["n"] > 0 and res["semantic_similarity"] is None  # no reference query to compare with
    # 75 s cycles leave no moment 120 s clear of an LLM event (no negative): eval flags one class
    assert res["one_class"] and "one class only" in r.output
    r = CliRunner().invoke(cli, ["stats", str(out), "--out", str(tmp_path / "st"), "--no-similarity"])
    assert r.exit_code == 0, r.output
    st = json.loads((tmp_path / "st" / "stats.json").read_text())
    assert st["counts"]["llm_events"] == 6


def test_screenpipe_annotate_copies_video_frames(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("cv2")
    frames = [(sec + 16 * k, app, win, url, text) for k in range(4) for sec, app, win, url, text in FRAMES]
    write_screenpipe(tmp_path / "bob", frames)
    out = tmp_path / "out"
    _annotate(tmp_path / "bob", out, tmp_path / "logs", monkeypatch)
    log = load_lifetrace(out / "bob" / "lifetrace_privacy_processed.db")
    assert [e.app_name for e in log.events] == ["Code", "Firefox", "Terminal"] * 4
    shots = [s for e in log.events for s in e.screenshots]
    assert len(shots) == len(frames) and all(s.path is not None and s.path.is_file() for s in shots)
    assert shots[0].file_name.startswith("screen_1_") and shots[0].width == 64 and shots[0].height == 48
    assert shots[3].ocr_text == "How do I sort a dict?"
    assert [e.is_llm_event for e in log.events][:3] == [False, True, False]
    r = CliRunner().invoke(cli, ["stats", str(tmp_path / "bob"), "--out", str(tmp_path / "st"), "--no-similarity"])
    assert r.exit_code == 0, r.output
