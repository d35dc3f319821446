"""The annotation evaluation set on real rendered screens: Chromium renders the chat
pages, RapidOCR reads the PNGs, and the first pass finds the platforms from what
was read (the model-quality figures come from ``benchmarks/annotate.py``)."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from annotate_evalset import PAGES, build_evalset
from mock_openai import MockOpenAI, last_user_text
from proagent.annotate import plan_annotation
from proagent.cli import cli
from system import require_binary

pytest.importorskip("rapidocr")


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
    # a news article about an LLM names one: the first pass must ask the model, which decides
    news = next(by_id[k] for k, pg in labels.items() if pg.key == "news-about-llm")
    assert news.hit is not None and news.ask
    # the generic-title ChatGPT page is found from the screen text alone
    generic = next(by_id[k] for k, pg in labels.items() if pg.key == "chatgpt-generic-title")
    assert generic.hit.evidence == "screen"
    assert len(json.loads(cache.read_text())) == 2 * len(labels)  # texts read from images are cached


def test_the_annotator_sees_the_ocr_text_of_rendered_screens(evalset, tmp_path, monkeypatch):
    root, labels, cache = evalset
    (tmp_path / "logs").mkdir()
    shutil.copy(cache, tmp_path / "logs" / "ocr-cache.json")  # no second OCR pass
    prompts = {}

    def reply(body):
        text = last_user_text(body)
        prompts[len(prompts)] = text
        return json.dumps({"is_llm_interaction": "Message ChatGPT" in text, "llm_platform": "ChatGPT"})

    with MockOpenAI(reply) as srv:
        srv.env(monkeypatch)
        r = CliRunner().invoke(cli, ["annotate", str(root), "--out", str(tmp_path / "out"), "--annotator",
                                     "text:openai-api/mock/m", "--model-base-url", srv.base_url,
                                     "--log-dir", str(tmp_path / "logs"), "--display", "none"])
    assert r.exit_code == 0, r.output
    assert any("sort a list of dictionaries" in t for t in prompts.values())
    recs = {str(x["event_id"]): x for x in map(json.loads, (tmp_path / "out" / "annotations.jsonl").open())}
    chatgpt = [k for k, p in labels.items() if p.platform == "ChatGPT"]
    assert all(recs[k]["is_llm_event"] and recs[k]["llm_platform"] == "ChatGPT" for k in chatgpt)
    assert sum(x["is_llm_event"] for x in recs.values()) == len(chatgpt)
