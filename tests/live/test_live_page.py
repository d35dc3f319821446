"""The local offers page of proagent live, driven in headless Chromium (the system
browser through Playwright; no browser is downloaded): Accept / Dismiss / Not now
land in feedback.db; requests without the token are refused."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
from system import require_binary

from proagent.bench.samples import build_samples
from proagent.live import FeedbackStore, OfferPage
from proagent.sources.proactivebench import read_proactivebench_session

DEV = Path("/work/shared/data/proactivebench/code_13.json")
for _p in Path(__file__).resolve().parents:
    if (_p / "shared" / "data" / "proactivebench" / "code_13.json").is_file():
        DEV = _p / "shared" / "data" / "proactivebench" / "code_13.json"
        break

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture()
def page_with_offers(tmp_path: Path):  # noqa: ANN201
    if not DEV.is_file():
        pytest.skip("ProactiveBench dev sessions not present")
    samples = build_samples(read_proactivebench_session(DEV))
    st = FeedbackStore(tmp_path)
    now = datetime(2026, 3, 2, 10, 0)
    offers = [
        st.add_offer(
            replace(samples[i], id=f"m{i}"),
            text=f"Want help with this? “question {i}”",
            query=f"question {i}",
            intention="Code Programming",
            p_help=0.8,
            notifier="page",
            created_at=now,
        )
        for i in range(3)
    ]
    page = OfferPage(st, datetime.now)
    yield page, st, offers
    page.close()
    st.close()


def test_page_refuses_requests_without_the_token(page_with_offers) -> None:  # noqa: ANN001
    page, _, _ = page_with_offers
    for url in (f"http://127.0.0.1:{page.port}/", f"http://127.0.0.1:{page.port}/offers?token=wrong"):
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(url, timeout=5)
        assert e.value.code == 403
    req = urllib.request.Request(
        f"http://127.0.0.1:{page.port}/offers?token={page.token}", headers={"Host": "evil.example"}
    )
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=5)
    assert e.value.code == 403
    body = json.loads(
        urllib.request.urlopen(f"http://127.0.0.1:{page.port}/offers?token={page.token}", timeout=5).read()
    )
    assert [o["query"] for o in body["offers"]] == ["question 2", "question 1", "question 0"]
    bad = urllib.request.Request(
        f"http://127.0.0.1:{page.port}/respond?token={page.token}",
        method="POST",
        data=json.dumps({"id": 1, "response": "ignored"}).encode(),
    )
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(bad, timeout=5)
    assert e.value.code == 400


def test_accept_dismiss_not_now_in_chromium_land_in_feedback_db(page_with_offers) -> None:  # noqa: ANN001
    chromium = require_binary("chromium")["chromium"]
    sync_api = pytest.importorskip("playwright.sync_api")
    page, st, offers = page_with_offers
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            tab = browser.new_page()
            tab.goto(page.url)
            tab.wait_for_selector(f"#offer-{offers[0].id} button.accepted")
            assert tab.inner_text(f"#offer-{offers[1].id} .text") == "Want help with this? “question 1”"
            tab.click(f"#offer-{offers[0].id} button.accepted")
            tab.wait_for_selector(f"#offer-{offers[0].id}[data-response=accepted]")
            tab.click(f"#offer-{offers[1].id} button.dismissed")
            tab.wait_for_selector(f"#offer-{offers[1].id}[data-response=dismissed]")
            tab.click(f"#offer-{offers[2].id} button.not_now")
            tab.wait_for_selector(f"#offer-{offers[2].id}[data-response=not_now]")
            assert tab.locator("button").count() == 0  # answered offers have no buttons left
        finally:
            browser.close()
    got = {o["id"]: o["response"] for o in st.offers()}
    assert got == {offers[0].id: "accepted", offers[1].id: "dismissed", offers[2].id: "not_now"}
    rows = st.responses_since(0)
    assert [r[2] for r in rows] == ["accepted", "dismissed", "not_now"]
