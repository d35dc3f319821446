"""Chat layouts rendered as real pages (Playwright on Debian's Chromium, RapidOCR on the PNGs): the
Gemini-like (question beside an avatar) and labelled (``You:`` / ``ChatGPT:``) layouts are LLM use
with the planted question stored; a mail thread, a forum thread and a messenger chat that name an
LLM product are not (issue 34). The per-layout figures: ``benchmarks/chat_layouts.py``."""

from __future__ import annotations

import pytest
from chat_layouts import build_layouts
from system import require_binary, require_module

from proagent.annotate import plan_annotation
from proagent.annotate.conversation import on_screen

require_module("rapidocr", "playwright.sync_api")

KEYS = ("gemini-avatar", "labelled", "mail", "forum", "messenger")


@pytest.fixture(scope="module")
def layouts(tmp_path_factory):
    chromium = require_binary("chromium")["chromium"]
    root = tmp_path_factory.mktemp("layouts") / "raw"
    labels = build_layouts(root, keys=KEYS, chromium=chromium, per_layout=1)
    return root, labels


def test_left_aligned_and_labelled_chats_are_found_people_are_not(layouts):
    root, labels = layouts
    assert sorted(c.layout for c in labels.values()) == sorted(KEYS)
    plan = plan_annotation(root, ocr="auto", ocr_cache=root.parent / "ocr-cache.json")
    by_id = {p.event.id: p for p in plan.events}
    for eid, c in labels.items():
        p = by_id[eid]
        assert p.hit is not None, c.layout  # every page names an LLM product: the first pass asks
        if c.platform:
            assert p.ask and p.chat is not None, (c.layout, p.reason)
            queries, replies = p.chat
            assert on_screen(queries[-1], c.query, 0.9) and on_screen(c.query, queries[-1], 0.9), (c.layout, queries)
            assert replies and on_screen(replies[0], c.answer, 0.9), (c.layout, replies)
        else:
            assert not p.ask and p.chat is None and "people writing to each other" in p.reason, (c.layout, p.reason)
