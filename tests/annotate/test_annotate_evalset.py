"""The annotation evaluation set on real rendered screens: Chromium renders the chat
pages, RapidOCR reads the PNGs, and the first pass finds the platforms from what
was read (the model-quality figures come from ``benchmarks/annotate.py``)."""

from __future__ import annotations

import json
import shutil

import pytest
from annotate_evalset import PAGES, build_evalset
from click.testing import CliRunner
from mock_openai import MockOpenAI, last_user_text
from system import require_binary, require_module

from proagent.annotate import plan_annotation
from proagent.cli import cli

require_module("rapidocr")


@pytest.fixture(scope="module")
def evalset(tmp_path_factory):
    browser = require_binary("chromium")["chromium"]
    root = tmp_path_factory.mktemp("evalset") / "raw"
    labels = build_evalset(root, browser=browser)
    cache = root.parent / "ocr-cache.json"
    plan_annotation(root, ocr="auto", ocr_cache=cache)  # RapidOCR reads every screen once
    return root, labels, cache


def test_screens_are_read_and_the_first_pass_finds_the_platforms(evalset, tmp_path):
    root, labels, cache = evalset
    assert len(labels) == len(PAGES) == 12
    plan = plan_annotation(root, ocr="auto", ocr_cache=cache)
    by_id = {p.event.id: p for p in plan.events}
    for eid, page in labels.items():
        p = by_id[eid]
        text = " ".join(p.texts)
        assert p.texts and len(p.texts) == 2  # both captures read, nothing from the database
        if page.platform:
            # the user's question is on screen and OCR read (most of) it
            words = [w for w in page.query.split() if len(w) > 3] or [page.query[:6]]
            assert sum(w in text for w in words) >= 0.6 * len(words), (page.key, text[:300])
            assert p.hit is not None and p.hit.platform == page.platform, (page.key, p.hit)
        elif page.key != "news-about-llm":
            assert p.hit is None, (page.key, p.hit)
    # a news article about an LLM names one, but its screens show no chat turn: not asked, not LLM use
    news = next(by_id[k] for k, pg in labels.items() if pg.key == "news-about-llm")
    assert (
        news.hit is not None and not news.ask and news.chat is None and "no screenshot shows a chat turn" in news.reason
    )
    assert all(by_id[k].ask and by_id[k].chat for k, pg in labels.items() if pg.platform)
    # the generic-title ChatGPT page is found from the screen text alone
    generic = next(by_id[k] for k, pg in labels.items() if pg.key == "chatgpt-generic-title")
    assert generic.hit.evidence == "screen"
    assert len(json.loads(cache.read_text())) == 2 * len(labels)  # texts read from images are cached


def test_the_conversation_is_read_from_the_screen_and_only_the_intention_asked(evalset, tmp_path, monkeypatch):
    """Layout, not the model, gives the query and the reply: the planted query is stored, the
    reply is the page's, browser chrome and sidebar never reach the prompt, the news page that
    names an AI product is not LLM use, and the processed DB holds intention and platform."""
    import sqlite3

    from proagent.annotate.conversation import on_screen
    from proagent.bench.similarity import best_similarity

    root, labels, cache = evalset
    (tmp_path / "logs").mkdir()
    shutil.copy(cache, tmp_path / "logs" / "ocr-cache.json")  # no second OCR pass
    screens = {p.event.id: p.screen for p in plan_annotation(root, ocr="auto", ocr_cache=cache).events}
    by_query = {p.query: p.intention for p in PAGES if p.platform}
    prompts = []

    def reply(body):
        text = last_user_text(body)
        prompts.append(text)
        intention = next((i for q, i in by_query.items() if q[:12] in text), "Uncategorized")
        return json.dumps({"user_intention": intention, "event_summary": "asked the assistant"})

    with MockOpenAI(reply) as srv:
        srv.env(monkeypatch)
        r = CliRunner().invoke(
            cli,
            [
                "annotate",
                str(root),
                "--out",
                str(tmp_path / "out"),
                "--annotator",
                "text:openai-api/mock/m",
                "--model-base-url",
                srv.base_url,
                "--log-dir",
                str(tmp_path / "logs"),
                "--display",
                "none",
            ],
        )
    assert r.exit_code == 0, r.output
    llm = {k: p for k, p in labels.items() if p.platform}
    assert len(prompts) == len(llm)  # one short intention call per chat, none for the news page
    assert all(
        len(t) < 1200 and "New chat" not in t and "6820a1f3" not in t and "chat-export" not in t for t in prompts
    ), prompts
    recs = {str(x["event_id"]): x for x in map(json.loads, (tmp_path / "out" / "annotations.jsonl").open())}
    for k, page in labels.items():
        rec = recs[k]
        assert rec["is_llm_event"] is bool(page.platform), (page.key, rec)
        if not page.platform:
            continue
        assert rec["llm_platform"] == page.platform and rec["query_source"] == "screen", (page.key, rec)
        assert best_similarity(rec["user_queries"][0], [page.query]) >= 0.9, (page.key, rec["user_queries"])
        # the reply is the screen's text as OCR read it (never the model's), which is the page's answer
        assert rec["llm_responses"] and all(on_screen(x, screens[k]) for x in rec["llm_responses"]), page.key
        assert rec["user_intention"] == page.intention, page.key
    # RapidOCR misreads a long line now and then (通义千问's one-line reply): most replies are the page's
    assert sum(all(on_screen(x, p.answer, 0.6) for x in recs[k]["llm_responses"]) for k, p in llm.items()) >= 7
    news = next(k for k, p in labels.items() if p.key == "news-about-llm")
    assert recs[news]["status"] == "not_candidate" and "no screenshot shows a chat turn" in recs[news]["rationale"]
    with sqlite3.connect(tmp_path / "out" / "P01" / "lifetrace_privacy_processed.db") as db:
        rows = {str(i): (p, u) for i, p, u in db.execute("SELECT id, llm_platform, user_intention FROM events")}
    assert all(rows[k] == (p.platform, p.intention) for k, p in llm.items())
    assert all(rows[k] == (None, None) for k in labels if k not in llm)
