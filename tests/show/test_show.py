"""``proagent show``: a recorded day read with what every stage wrote about it (annotate's
``annotations.jsonl``, live's ``feedback.db``, curate's copies), and its page driven by keyboard in
headless Chromium (Debian's, through Playwright)."""

from __future__ import annotations

import json
import re
import sqlite3
import urllib.error
import urllib.request
from datetime import timedelta
from pathlib import Path

import pytest
from system import require_binary

from proagent.errors import DataError, UsageError
from proagent.records import Sample
from proagent.show import load_day, serve_show
from proagent.show._page import search
from proagent.sources.lifetrace import load_lifetrace
from proagent.synth import SynthConfig, generate

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
WORD = "Zebrafinch"
"""A word planted in one screenshot's text (and drawn into its image)."""


def _png_with_text(path: Path, text: str) -> None:
    """A 960x540 screenshot-like PNG with ``text`` drawn in it (PIL), written over ``path``."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (960, 540), "white")
    d = ImageDraw.Draw(img)
    d.rectangle((0, 0, 960, 40), fill=(40, 40, 60))
    for k, line in enumerate(text.splitlines()):
        d.text((30, 70 + 30 * k), line, fill="black")
    img.save(path)


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A synthesized day (one user, with screenshots), one screenshot's text and image made to
    hold :data:`WORD`, an ``annotations.jsonl`` record and a ``feedback.db`` offer answered."""
    out = tmp_path_factory.mktemp("show") / "day"
    generate(out, SynthConfig(users=1, days=1, seed=4, screenshots=True, screenshot_interval=15.0))
    db = out / "U001" / "lifetrace_privacy_processed.db"
    log = load_lifetrace(db)
    llm = next(e for e in log.events if e.is_llm_event and len(e.screenshots) >= 2)
    index = sorted(log.events, key=lambda e: (e.start, e.user, e.id)).index(llm)
    shot = llm.screenshots[1]
    text = f"Quarterly report draft\n{WORD} migration table\nmail alice.zhang@example.com"
    con = sqlite3.connect(db)
    with con:
        con.execute("UPDATE ocr_results SET text_content = ? WHERE screenshot_id = ?", (text, shot.id))
        if con.execute("SELECT changes()").fetchone()[0] == 0:
            con.execute(
                "INSERT INTO ocr_results (screenshot_id, text_content, confidence, language, processing_time, "
                "created_at) VALUES (?, ?, 0.9, 'en', 0.1, ?)",
                (shot.id, text, shot.time.isoformat(sep=" ")),
            )
    con.close()
    assert shot.path is not None
    _png_with_text(shot.path, text)
    (out / "annotations.jsonl").write_text(
        json.dumps(
            {
                "user": "U001",
                "event_id": llm.id,
                "is_llm_event": True,
                "status": "annotated",
                "llm_platform": llm.llm_platform,
                "user_intention": llm.intention,
                "confidence": 0.83,
                "rationale": "asked a chat assistant about the deadline",
            }
        )
        + "\n",
        "utf-8",
    )
    from proagent.live import FeedbackStore

    store = FeedbackStore(out)
    moment = llm.start + timedelta(seconds=1)
    sample = Sample(
        id="U001:offer", user="U001", time=moment, label=1, split="test", kind="candidate",
        context=(), current=llm, window_seconds=300.0,
    )  # fmt: skip
    offer = store.add_offer(
        sample, text="Want the answer summarised?", query="summarise", intention=llm.intention,
        p_help=0.9, notifier="page", created_at=moment,
    )  # fmt: skip
    store.respond(offer.id, "accepted", moment + timedelta(seconds=5))
    store.add_implicit(
        sample, response="missed", label=1, weight=1.0, evidence={"llm_event": llm.id}, at=moment + timedelta(seconds=9)
    )
    q = store.add_question(sample, asked_at=moment, p_help=0.4, threshold=0.5, risk=0.2, app_name=llm.app_name)
    store.answer_question(q.id, "yes", moment + timedelta(seconds=4))
    store.close()
    return {"out": out, "llm": llm, "index": index, "shot": shot}


def test_day_holds_every_stage(day: dict) -> None:
    d = load_day(day["out"])
    assert d.live is not None and d.annotations is not None and not d.redacted
    e = d.events[day["index"]]
    assert (e.id, e.llm, e.platform) == (day["llm"].id, True, day["llm"].llm_platform)
    assert e.queries and e.annotation is not None and e.annotation.confidence == 0.83
    assert [(o.text, o.response) for o in e.offers] == [("Want the answer summarised?", "accepted")]
    assert sorted((x.kind, x.response, x.label) for x in e.labels) == [
        ("implicit", "missed", 1),
        ("question", "yes", 1),
    ]
    s = e.shots[1]
    assert WORD in s.ocr_text and "alice.zhang@example.com" in s.ocr_text  # raw: the person's own page
    assert d.images[s.id] == day["shot"].path
    assert sum(len(x.shots) for x in d.events) == len(d.images) > 100
    assert [h["index"] for h in search(d, WORD.lower())] == [day["index"]]
    assert search(d, f"{WORD} nowhere-at-all") == []


def test_redact_and_bad_options(day: dict) -> None:
    pytest.importorskip("presidio_analyzer")
    d = load_day(day["out"], redact=True)
    shot = d.events[day["index"]].shots[1]
    assert "alice.zhang@example.com" in shot.ocr_text  # the record keeps what was recorded
    text = d.shown(shot.ocr_text)  # the page shows it redacted
    assert d.redacted and WORD in text and "alice.zhang@example.com" not in text and "[EMAIL]" in text
    assert load_day(day["out"]).shown(shot.ocr_text) == shot.ocr_text
    with pytest.raises(UsageError, match="--day"):
        load_day(day["out"], day="2001-01-01")
    with pytest.raises(UsageError, match="--user"):
        load_day(day["out"], user="U999")
    with pytest.raises(DataError, match="curate output"):
        load_day(day["out"], curated=day["out"])


def test_curated_copy_replaces_or_hides_the_image(day: dict, tmp_path: Path) -> None:
    cur = tmp_path / "cur"
    (cur / ".curate").mkdir(parents=True)
    (cur / ".curate" / "manifest.json").write_text("{}")
    (cur / "U001" / "screenshots").mkdir(parents=True)
    kept = day["shot"]
    (cur / "U001" / "screenshots" / kept.file_name).write_bytes(b"blurred")
    d = load_day(day["out"], curated=cur)
    shots = d.events[day["index"]].shots
    assert shots[1].curated and d.images[shots[1].id] == cur / "U001" / "screenshots" / kept.file_name
    assert shots[0].removed and not shots[0].image and d.images[shots[0].id] is None


def test_page_by_keyboard_in_chromium(day: dict, tmp_path: Path) -> None:
    paths = require_binary("chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    srv = serve_show(day["out"])
    try:
        base = srv.url.split("?")[0]
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(base + "api/day?token=wrong", timeout=10)
        assert e.value.code == 403
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=paths["chromium"], args=CHROMIUM_ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1300, "height": 1000})
            page.goto(srv.url)
            page.wait_for_selector("body[data-ready='0:0']", timeout=30000)
            assert page.locator("#strip svg rect[data-i]").count() >= len(srv.day.events)
            assert page.locator("#events li").count() == len(srv.day.events)
            page.keyboard.press("j")
            page.keyboard.press("ArrowDown")
            page.wait_for_selector("body[data-ready='2:0']", timeout=20000)
            page.keyboard.press("k")
            page.wait_for_selector("body[data-ready='1:0']", timeout=20000)
            page.keyboard.press("/")
            page.keyboard.type(WORD.lower())
            page.keyboard.press("Enter")
            i = day["index"]
            page.wait_for_selector(f"body[data-ready='{i}:1']", timeout=20000)  # the hit's screenshot first
            assert page.locator("#count").text_content() == "1 event(s) match"
            assert page.locator("#ocr mark").first.text_content() == WORD
            assert "alice.zhang@example.com" in (page.locator("#ocr").text_content() or "")
            assert "Want the answer summarised?" in (page.locator("#detail").text_content() or "")
            assert "asked a chat assistant about the deadline" in (page.locator("#detail").text_content() or "")
            assert "implicit: missed" in (page.locator("#detail").text_content() or "")
            assert page.locator("#strip svg circle").count() == 2 and page.locator("#strip svg path").count() == 1
            page.wait_for_function("document.getElementById('shot').naturalWidth === 960", timeout=20000)
            page.keyboard.press("h")
            page.wait_for_selector(f"body[data-ready='{i}:0']", timeout=20000)
            page.keyboard.press("Escape")
            page.wait_for_function(
                f"document.querySelectorAll('#events li').length === {len(srv.day.events)}", timeout=20000
            )
            page.locator(f"#strip rect[data-i='{i}']").first.click()
            page.wait_for_selector(f"body[data-ready='{i}:0']", timeout=20000)
            assert re.search(r"offers", page.locator("#about").text_content() or "")
            page.screenshot(path=str(tmp_path / "show.png"))
            browser.close()
        assert (tmp_path / "show.png").stat().st_size > 10_000
    finally:
        srv.stop()


def test_activitywatch_and_screenpipe_logs(tmp_path: Path) -> None:
    """The other recorders' logs through the sources readers: ActivityWatch has titles and no
    screenshots; screenpipe's frames have the text read and no image to show (video)."""
    import activity_fixtures as af

    (tmp_path / "aw").mkdir()
    (tmp_path / "sp").mkdir()
    aw = af.write_aw_rust(tmp_path / "aw" / "sqlite.db")
    d = load_day(aw.parent)
    assert d.kind.startswith("activitywatch") and d.events and all(not e.shots for e in d.events)
    sp = af.write_screenpipe(tmp_path / "sp")
    d = load_day(sp)
    shots = [s for e in d.events for s in e.shots]
    assert d.kind == "screenpipe" and shots and all(not s.image and d.images[s.id] is None for s in shots)
    word = shots[0].ocr_text.split()[0]
    assert search(d, word) and search(d, word)[0]["shots"]


def test_command_prints_the_address_and_stops_on_ctrl_c(day: dict) -> None:
    """``proagent show DIR`` prints one line with the page's address (its token), serves the day
    there, and Ctrl-C ends it with exit 0."""
    import signal
    import subprocess
    import sys

    p = subprocess.Popen(
        [sys.executable, "-c", "from proagent.cli import main; main()", "show", str(day["out"])],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        line = p.stdout.readline() if p.stdout else ""
        m = re.search(
            r"^(\d+) event\(s\) of (\S+) \(1 day\(s\) recorded\) at (http://127\.0\.0\.1:\d+/\?token=\S+)$", line
        )
        assert m, line
        got = json.loads(urllib.request.urlopen(m.group(3).replace("/?", "/api/day?"), timeout=20).read())
        assert len(got["events"]) == int(m.group(1)) and got["day"] == m.group(2)
        p.send_signal(signal.SIGINT)
        assert p.wait(timeout=20) == 0
    finally:
        p.kill()
        p.wait()
