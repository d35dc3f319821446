"""Nothing invented, no fact erased (issue 34 items 4 and 7): a model that invents stores nothing
of its invention; the first pass's platform survives a weak model's empty answer; echoed
template slots are dropped; the success rate counts only events with platform and intention."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from activity_fixtures import utc, write_aw_rust
from click.testing import CliRunner
from lifetrace_fixtures import make_participant
from mock_openai import MockOpenAI

from proagent.annotate.grounding import grounded
from proagent.annotate.parsing import parse_annotation, parse_intent
from proagent.annotate.task import _platform, _settle
from proagent.cli import cli

MODEL = "openai-api/mock/annotator"
SCREEN = "User: how do I undo git commit? Assistant: use git reset --soft HEAD~1 to keep the changes"
INVENTED = ("mortgage", "123-456-7890", "one sentence")


def test_a_paraphrase_of_the_screen_passes_an_invention_does_not():
    src = [SCREEN, "Google Chrome", "ChatGPT - Google Chrome"]
    assert grounded("The user asked ChatGPT how to undo a git commit and keep the changes.", src)
    assert grounded("The user chatted with an AI assistant.", src)  # nothing specific: nothing invented
    assert not grounded("The user looked up the phone number for the mortgage payment calculation", src)
    assert not grounded("asked how to undo commit 4 times: 123-456-7890", src)  # a number not on screen
    assert grounded("用户询问 git", ["用户询问 git 怎么撤销提交"]) and not grounded(
        "用户询问房贷利率", ["git 怎么撤销提交"]
    )


def test_echoed_template_slots_are_no_answer():
    got = parse_annotation(
        json.dumps(
            {
                "is_llm_interaction": True,
                "llm_platform": "the AI product's name, or null",
                "event_summary": "what the user did, at most 20 words",
                "detailed_description": "two or three sentences describing the screens",
                "rationale": "one sentence: why",
                "user_intention": "code programming",
            }
        )
    )
    assert (got["event_summary"], got["detailed_description"], got["rationale"], got["llm_platform"]) == (
        "",
        "",
        "",
        None,
    )
    assert got["user_intention"] == "Code Programming"  # a real value beside the echoes is kept
    assert parse_annotation('{"is_llm_interaction": true, "rationale": "One sentence"}')["rationale"] == ""
    assert (
        parse_intent('{"user_intention": "translation", "event_summary": "what the user did, at most 20 words"}')[
            "event_summary"
        ]
        == ""
    )


def test_the_first_pass_platform_stays_unless_the_model_is_better_supported():
    meta = {
        "hit": ["ChatGPT", "screen"],
        "record": ["Google Chrome", "Sorting - Google Chrome", ""],
        "screen": "Message ChatGPT\nhow do I sort a list",
    }
    assert _platform(None, meta) == "ChatGPT"  # an empty answer erases nothing
    assert _platform("Claude", meta) == "ChatGPT"  # named nowhere: not better supported
    assert _platform("DeepSeek", {**meta, "record": ["Google Chrome", "DeepSeek - Google Chrome", ""]}) == "DeepSeek"
    nohit = {**meta, "hit": None}
    assert _platform("ChatGPT", nohit) == "ChatGPT" and _platform("Gemini", nohit) is None
    # the intention path keeps the first pass's summary when the model's is not on screen
    default = {"event_summary": "Google Chrome: Sorting - Google Chrome"}
    got = _settle({"event_summary": "calculated a mortgage"}, {**meta, "default": default}, intent=True)
    assert got["event_summary"] == default["event_summary"] and "not on the screen" in got["rationale"]


def _strings(v) -> list[str]:  # noqa: ANN001
    if isinstance(v, str):
        return [v]
    if isinstance(v, dict):
        return [s for x in v.values() for s in _strings(x)]
    if isinstance(v, list):
        return [s for x in v for s in _strings(x)]
    return []


def test_a_model_that_invents_stores_nothing_invented(tmp_path, monkeypatch):
    fx = make_participant(tmp_path / "curated", "P01")
    with sqlite3.connect(fx.path) as db:
        ids = [r[0] for r in db.execute("SELECT id FROM screenshots WHERE event_id = ?", (int(fx.llm_event_ids[0]),))]
        db.executemany(
            "INSERT INTO ocr_results (screenshot_id, text_content) VALUES (?, ?)", [(i, SCREEN) for i in ids]
        )
    answer = json.dumps(
        {
            "is_llm_interaction": True,
            "llm_platform": "",
            "user_queries": ["how do I undo git commit?"],
            "llm_responses": ["Call the bank at 123-456-7890."],
            "event_summary": "Looked up the phone number for the mortgage payment calculation 123-456-7890",
            "detailed_description": "The user compares mortgage offers from two banks and notes a phone number.",
            "user_intention": "Code Programming",
            "confidence": 0.9,
            "rationale": "one sentence: why",
        }
    )
    with MockOpenAI(lambda body: answer) as srv:
        srv.env(monkeypatch)
        r = CliRunner().invoke(
            cli,
            [
                "annotate",
                str(tmp_path / "curated"),
                "--annotator",
                MODEL,
                "--ocr",
                "db",
                "--log-dir",
                str(tmp_path / "logs"),
                "--display",
                "none",
                "--model-base-url",
                srv.base_url,
            ],
        )
    assert r.exit_code == 0, r.output
    recs = [json.loads(x) for x in (tmp_path / "curated" / "annotations.jsonl").open()]
    asked = [x for x in recs if x["status"] == "annotated"]
    assert asked
    for rec in asked:  # every text stored: nothing of the invention
        text = " ".join(_strings(rec)).casefold()
        assert not any(w in text for w in INVENTED), rec
        assert rec["detailed_description"] == "" and rec["llm_platform"]  # the first pass's platform, not erased
    shown = next(x for x in asked if str(x["event_id"]) == fx.llm_event_ids[0])
    assert shown["user_queries"] == ["how do I undo git commit?"] and shown["llm_responses"] == []
    assert "summary, description" in shown["rationale"]  # says what was dropped
    with sqlite3.connect(fx.path) as db:
        cells = [
            c
            for row in db.execute("SELECT event_summary, detailed_description, conversation, llm_platform FROM events")
            for c in row
            if isinstance(c, str)
        ]
    assert cells and not any(w in c.casefold() for c in cells for w in INVENTED)


def _aw_log(path: Path) -> Path:
    """Four rounds of editor, ChatGPT in Firefox (URL chatgpt.com), terminal, as ActivityWatch buckets."""
    win, web = [], []
    t = utc(10, 0)
    for _ in range(4):
        for app, title, secs in (
            ("Code", "main.py - Code", 30),
            ("Firefox", "Sorting help — Mozilla Firefox", 20),
            ("Terminal", "bash", 25),
        ):
            win.append((t, float(secs), {"app": app, "title": title}))
            if app == "Firefox":
                web.append((t, float(secs), {"url": "https://chatgpt.com/c/1", "title": "Sorting help"}))
            t += timedelta(seconds=secs)
    afk = [(utc(10, 0), (t - utc(10, 0)).total_seconds(), {"status": "not-afk"})]
    return write_aw_rust(
        path,
        buckets=[
            ("aw-watcher-window_host", "currentwindow", "aw-watcher-window", win),
            ("aw-watcher-afk_host", "afkstatus", "aw-watcher-afk", afk),
            ("aw-watcher-web-firefox_host", "web.tab.current", "aw-client-web", web),
        ],
    )


@pytest.mark.parametrize("intention", [None, "code programming"])
def test_a_weak_annotator_on_activitywatch_erases_no_platform(tmp_path, monkeypatch, intention):
    (tmp_path / "alice").mkdir()
    db = _aw_log(tmp_path / "alice" / "sqlite.db")
    weak = json.dumps(
        {
            "is_llm_interaction": True,
            "llm_platform": None,
            "user_queries": [],
            "llm_responses": [],
            "event_summary": "what the user did, at most 20 words",
            "user_intention": intention,
            "rationale": "one sentence: why",
            "confidence": "a number from 0 to 1",
        }
    )
    out = tmp_path / "out"
    with MockOpenAI(lambda body: weak) as srv:
        srv.env(monkeypatch)
        r = CliRunner().invoke(
            cli,
            [
                "annotate",
                str(db),
                "--out",
                str(out),
                "--annotator",
                f"text:{MODEL}",
                "--log-dir",
                str(tmp_path / "logs"),
                "--ocr",
                "db",
                "--display",
                "none",
                "--model-base-url",
                srv.base_url,
            ],
        )
    assert r.exit_code == 0, r.output
    recs = [json.loads(x) for x in (out / "annotations.jsonl").open()]
    llm = [x for x in recs if x["is_llm_event"]]
    assert len(llm) == 4 and all(x["evidence"] == "domain: chatgpt.com" for x in llm)
    assert all(x["llm_platform"] == "ChatGPT" for x in llm)  # the URL's platform stays
    assert not any("one sentence" in x["rationale"] or "at most 20 words" in x["event_summary"] for x in recs)
    assert all(x["event_summary"] == "Firefox: Sorting help — Mozilla Firefox" for x in llm)  # the echo gave none
    summary = json.loads((out / "annotate.json").read_text())
    if intention is None:  # read, but the intention unknown: no success
        assert summary["annotated"] == 4 and summary["complete"] == 0 and summary["success_rate"] == 0.0
        assert "success rate 0.000 (0 of 4 asked: answer read with the platform and intention known" in r.output
    else:
        assert summary["complete"] == 4 and summary["success_rate"] == 1.0 and "success rate 1.000" in r.output
