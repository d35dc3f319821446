"""The offers page with help, in headless Chromium (Debian's chromium through Playwright): offers
collapsed to one line with the app; Accept opens the offer and its answer streams in as Markdown
(code blocks with a copy button, no HTML from the model); a follow-up and a rating land in
feedback.db; "Not in this app" posts /block-app and undoes it; ``#offer-N`` opens offer N."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from help_fixtures import scripted_reply, store_with_offers, traceback_sample
from system import require_binary
from test_live_page import CHROMIUM_ARGS

from proagent.live import LiveHelp, OfferPage, ScriptedHelpModel


@pytest.fixture()
def help_page(tmp_path: Path):  # noqa: ANN201
    st, offers = store_with_offers(tmp_path, 3)

    def reply(messages):  # noqa: ANN001, ANN202
        if "evil" in messages[-1]["content"]:
            return "<script>window.pwned=1</script><img src=x onerror=window.pwned=2> [x](javascript:alert(1))"
        return scripted_reply(messages)

    help = LiveHelp(st, ScriptedHelpModel(reply, delay=0.12), lambda: traceback_sample().time)
    page = OfferPage(st, lambda: traceback_sample().time, help=help)
    yield page, st, offers, help, tmp_path
    page.close()
    help.close()
    st.close()


def _browser(p):  # noqa: ANN001, ANN202
    chromium = require_binary("chromium")["chromium"]
    return p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)


def test_accept_streams_the_answer_then_follow_up_and_rating(help_page) -> None:  # noqa: ANN001
    sync_api = pytest.importorskip("playwright.sync_api")
    page, st, offers, help, folder = help_page
    oid = offers[0].id
    with sync_api.sync_playwright() as p:
        browser = _browser(p)
        try:
            ctx = browser.new_context()
            ctx.grant_permissions(["clipboard-read", "clipboard-write"])
            tab = ctx.new_page()
            tab.goto(page.url)
            tab.wait_for_selector(f"#offer-{oid} button.accepted")
            # collapsed: one line with the app, the body hidden
            assert tab.inner_text(f"#offer-{oid} .app") == "Terminal"
            assert not tab.is_visible(f"#offer-{oid} .body")
            tab.click(f"#offer-{oid} .text")
            assert tab.is_visible(f"#offer-{oid} .body") and tab.is_visible(f"#offer-{oid} button.block-app")
            tab.click(f"#offer-{oid} .text")
            assert not tab.is_visible(f"#offer-{oid} .body")
            tab.click(f"#offer-{oid} button.accepted")
            # streaming: part of the answer is on the page before the whole of it
            tab.wait_for_selector(f"#offer-{oid} .turn.assistant.streaming p", timeout=20000)
            partial = tab.inner_text(f"#offer-{oid} .turn.assistant")
            tab.wait_for_selector(f"#offer-{oid} .turn.assistant.done", timeout=30000)
            whole = tab.inner_text(f"#offer-{oid} .turn.assistant")
            assert partial and len(partial) < len(whole)
            assert "KeyError: 'user_id'" in whole and "first words after" in whole
            assert tab.inner_text(f"#offer-{oid} .turn.user").startswith("Question: Why does app.py raise KeyError")
            # Markdown: inline code and a fenced block with a copy button
            assert tab.locator(f"#offer-{oid} .turn.assistant code").count() >= 2
            assert tab.inner_text(f"#offer-{oid} pre code").strip() == 'session["user_id"] = user.id'
            tab.click(f"#offer-{oid} pre button.copy")
            tab.wait_for_selector(f"#offer-{oid} pre button.copy:text-is('Copied')")
            assert tab.evaluate("navigator.clipboard.readText()").strip() == 'session["user_id"] = user.id'
            # a follow-up under the answer
            tab.fill(f"#offer-{oid} .ask input", "What if the user is not logged in yet?")
            tab.click(f"#offer-{oid} .ask button.ask-send")
            tab.wait_for_selector(f"#offer-{oid} .turn.assistant.done >> nth=1", timeout=30000)
            assert "Follow-up on" in tab.locator(f"#offer-{oid} .turn.assistant").nth(1).inner_text()
            # a rating
            tab.click(f"#offer-{oid} button.rate-up")
            tab.wait_for_selector(f"#offer-{oid} button.rate-up.rated")
            # a model's HTML is text, not markup
            other = offers[1].id
            tab.click(f"#offer-{other} button.accepted")
            tab.wait_for_selector(f"#offer-{other} .turn.assistant.done", timeout=30000)
            tab.fill(f"#offer-{other} .ask input", "evil")
            tab.click(f"#offer-{other} .ask button.ask-send")
            tab.wait_for_selector(f"#offer-{other} .turn.assistant.done >> nth=1", timeout=30000)
            assert tab.evaluate("window.pwned === undefined")
            assert "<script>" in tab.locator(f"#offer-{other} .turn.assistant").nth(1).inner_text()
            assert tab.locator(f"#offer-{other} a[href^='javascript']").count() == 0
        finally:
            browser.close()
    with sqlite3.connect(folder / "feedback.db") as c:
        turns = c.execute(
            "SELECT role, source, status FROM help_turns WHERE offer_id = ? ORDER BY id", (oid,)
        ).fetchall()
        rating = c.execute("SELECT rating, source FROM help_ratings WHERE offer_id = ?", (oid,)).fetchall()
    assert turns == [
        ("user", "page", "done"),
        ("assistant", "", "done"),
        ("user", "page", "done"),
        ("assistant", "", "done"),
    ]
    assert rating == [(1, "page")]
    assert {o["id"]: o["response"] for o in st.offers()}[oid] == "accepted"


def test_not_in_this_app_posts_block_app_with_undo_and_the_hash_opens_an_offer(help_page) -> None:  # noqa: ANN001
    sync_api = pytest.importorskip("playwright.sync_api")
    page, st, offers, help, folder = help_page
    posted: list[tuple[str, dict]] = []
    oid = offers[2].id
    with sync_api.sync_playwright() as p:
        browser = _browser(p)
        try:
            tab = browser.new_page()

            def fake(route, request):  # noqa: ANN001, ANN202 - the rule side (offers32) serves these routes
                posted.append((request.url.split("?")[0].rsplit("/", 1)[1], json.loads(request.post_data)))
                route.fulfill(status=200, content_type="application/json", body='{"ok": true}')

            tab.route("**/block-app?*", fake)
            tab.route("**/unblock-app?*", fake)
            tab.goto(page.url + f"#offer-{oid}")
            tab.wait_for_selector(f"#offer-{oid}.open .body button.block-app")  # opened by the address
            assert not tab.is_visible(f"#offer-{offers[0].id} .body")
            tab.click(f"#offer-{oid} button.block-app")
            tab.wait_for_selector(f"#offer-{oid} .blockmsg button.undo")
            assert "no more offers in Terminal" in tab.inner_text(f"#offer-{oid} .blockmsg")
            tab.click(f"#offer-{oid} .blockmsg button.undo")
            tab.wait_for_selector(f"#offer-{oid} button.block-app", state="visible")
        finally:
            browser.close()
    assert posted == [("block-app", {"app": "Terminal"}), ("unblock-app", {"app": "Terminal"})]
