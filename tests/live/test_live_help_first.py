"""Issue 42 (help that sees the screen and comes first) and issue 46 items 2 and 13: the help reads
the window in front at Accept, never waits behind How calls, says when it is queued, keeps an
interrupted answer's text, and counts a follow-up's length in characters."""

from __future__ import annotations

import hashlib
import io
import json
import logging
import sqlite3
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from help_fixtures import scripted_reply, store_with_offers, traceback_sample
from test_live_offer_first import ANSWER, SlowHow, _agent
from test_live_restraint import _day, _moments

from proagent.live import LiveHelp, OfferPage, ScriptedHelpModel
from proagent.live._ground import ScreenReader
from proagent.live._notify import TerminalNotifier


def _wait(cond, seconds: float = 30.0) -> None:  # noqa: ANN001
    end = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


class Stalling:
    """A help model that streams ``words`` pieces, then stops writing (a process killed mid-answer
    never writes again) until ``release`` is set."""

    name, local = "stalling", True

    def __init__(self, words: int = 6) -> None:
        self.words = words
        self.release = threading.Event()
        self.sent = threading.Event()

    def stream(self, messages, on_delta):  # noqa: ANN001, ANN201
        for i in range(self.words):
            on_delta(f"word{i} ")
            time.sleep(0.03)
        self.sent.set()
        while not self.release.wait(0.05):
            on_delta("")  # still streaming (a Ctrl-C stops it at its next piece)
        return {"text": "", "prompt_tokens": None, "cached_tokens": None, "completion_tokens": None}


def _rows(folder: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(folder / "feedback.db") as c:
        return c.execute("SELECT role, status, text FROM help_turns ORDER BY id").fetchall()


def test_a_killed_answer_keeps_its_text_and_is_answered_again_after_restart(tmp_path: Path) -> None:
    st, offers = store_with_offers(tmp_path)
    model = Stalling()
    first = LiveHelp(st, model, lambda: traceback_sample().time, persist_seconds=0.05)
    oid = offers[0].id
    assert first.accept(oid)
    _wait(model.sent.is_set)
    time.sleep(0.2)
    # as SIGKILL leaves it: nothing more is written by that run; its text so far is on disk
    assert _rows(tmp_path)[-1][:2] == ("assistant", "streaming") and "word4" in _rows(tmp_path)[-1][2]
    again = LiveHelp(st, ScriptedHelpModel(scripted_reply, delay=0), lambda: traceback_sample().time)  # restart
    turns = again.turns(oid)
    assert turns[-1]["status"] == "interrupted" and turns[-1]["text"].startswith("word0 word1")
    assert again.accept(oid)  # accepting again answers it anew (no "thinking..." forever)
    _wait(lambda: not again.busy(oid))
    turns = again.turns(oid)
    assert [(t["role"], t["status"]) for t in turns] == [
        ("user", "done"),
        ("assistant", "interrupted"),
        ("assistant", "done"),
    ]
    assert "KeyError: 'user_id'" in turns[-1]["text"] and not again.accept(oid)  # answered: once
    model.release.set()
    again.close()
    first.close(timeout=1)
    st.close()


def test_ctrl_c_during_an_answer_keeps_its_text_interrupted_without_error_lines(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    st, offers = store_with_offers(tmp_path)
    model = Stalling()
    out = io.StringIO()
    help = LiveHelp(st, model, lambda: traceback_sample().time)
    TerminalNotifier(st, lambda: traceback_sample().time, out=out, help=help)
    oid = offers[0].id
    caplog.set_level(logging.DEBUG, logger="proagent.live.help")
    help.accept(oid)
    _wait(model.sent.is_set)
    t0 = time.perf_counter()
    help.close(timeout=3)
    assert time.perf_counter() - t0 < 2.5  # stopped at its next piece, not waited out
    model.release.set()
    assert help.turns(oid) == [] and not help.rate(oid, 1)  # after the stop: nothing, no error
    assert _rows(tmp_path)[-1][:2] == ("assistant", "interrupted")
    assert _rows(tmp_path)[-1][2].startswith("word0 word1 word2 word3 word4 word5")
    assert "closed database" not in caplog.text and "Traceback" not in caplog.text
    assert "help 1 interrupted" in out.getvalue()
    st.close()


def test_a_second_accept_is_told_its_place_and_the_terminal_keeps_one_message_a_line(tmp_path: Path) -> None:
    st, offers = store_with_offers(tmp_path, n=3)
    gate = threading.Event()
    out = io.StringIO()

    def reply(messages):  # noqa: ANN001, ANN202
        gate.wait(10)
        return "First line of the answer.\nSecond line."

    help = LiveHelp(st, ScriptedHelpModel(reply, delay=0.01), lambda: traceback_sample().time)
    term = TerminalNotifier(st, lambda: traceback_sample().time, out=out, help=help)
    a, b, c = (o.id for o in offers)
    assert help.accept(a) and help.accept(b) and help.accept(c)
    assert help.answering()
    assert help.turns(b)[-1]["note"] == f"queued: 2nd, after the answer to offer {a}"
    assert help.turns(c)[-1]["note"] == f"queued: 3rd, after the answer to offer {b}"
    gate.set()
    time.sleep(0.05)
    term.show(offers[2])  # an offer line while an answer streams
    _wait(lambda: not help.answering())
    lines = out.getvalue().splitlines()
    assert f"help {b}: queued: 2nd, after the answer to offer {a}" in lines
    # every line is one message: an offer line never shares a line with streamed text
    for ln in lines:
        assert ln.startswith(("help ", "offer ")), ln
        assert not (ln.startswith("help ") and "offer " in ln and "(a " in ln), ln
    # the answer's lines, each under its id (an offer printed mid-line ends that line first)
    pieces = [ln[len(f"help {a}: ") :] for ln in lines if ln.startswith(f"help {a}: ")]
    assert "".join(pieces) == "First line of the answer.Second line." and len(pieces) >= 2
    help.close()
    st.close()


def test_follow_up_counts_characters_like_the_box_and_refuses_a_dismissed_offer(tmp_path: Path) -> None:
    st, offers = store_with_offers(tmp_path)
    help = LiveHelp(st, ScriptedHelpModel(scripted_reply, delay=0), lambda: traceback_sample().time)
    page = OfferPage(st, lambda: traceback_sample().time, help=help)
    try:
        oid = offers[0].id
        help.accept(oid)
        _wait(lambda: not help.busy(oid))

        def post(body: dict) -> tuple[int, dict]:
            req = urllib.request.Request(
                f"http://127.0.0.1:{page.port}/follow-up?token={page.token}",
                data=json.dumps(body).encode("utf-8"),
                headers={"Content-Type": "application/json"},
                method="POST",
            )
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    return r.status, json.loads(r.read())
            except urllib.error.HTTPError as e:
                return e.code, json.loads(e.read() or b"{}")

        code, _ = post({"id": oid, "text": "ü" * 1400})  # 1,400 characters, 2,800 bytes in UTF-8
        assert code == 200
        _wait(lambda: not help.busy(oid))
        code, _ = post({"id": oid, "text": "\u00fc" * 2000})  # escaped by json.dumps: 12,000 bytes
        assert code == 200
        _wait(lambda: not help.busy(oid))
        code, body = post({"id": oid, "text": "ü" * 2001})
        assert code == 400 and "2,000 characters" in body["error"]
        st.respond(oid, "dismissed", traceback_sample().time + timedelta(minutes=5))
        code, body = post({"id": oid, "text": "and now?"})
        assert code == 400 and "dismissed" in body["error"]
        assert help.follow_up(oid, "and now?") == "the offer was dismissed (accept it again to ask about it)"
    finally:
        page.close()
        help.close()
        st.close()


class FakeHelp:
    """The run's help as the loop sees it: answering or not."""

    def __init__(self) -> None:
        self.busy = False

    def answering(self) -> bool:
        return self.busy


def test_how_calls_wait_while_the_help_answers_and_a_dismissed_offers_call_is_cancelled(tmp_path: Path) -> None:
    how = SlowHow(0.6)
    agent, store = _agent(tmp_path, how, 0.05, [])
    agent.help = FakeHelp()
    ms = _moments(_day([("xterm", 60), ("chromium", 60), ("xterm", 60)]))
    # an answer is being written: the Yes shows its offer at once and its How call is held
    agent.help.busy = True
    assert agent.decide(ms[0], defer=True) is None
    assert not how.started.is_set() and agent.how_held == 1
    offer = store.offers()[0]
    assert offer["query"] is None
    time.sleep(0.3)
    assert not how.started.is_set()
    agent.help.busy = False
    agent.help_first()  # the answer is written: the held call starts
    _wait(how.started.is_set)
    # an accept comes while it runs: it is stopped and held again, then started once more
    agent.help.busy = True
    agent.help_first()
    assert agent.how_held == 2
    agent.help.busy = False
    how.started.clear()
    agent.help_first()
    _wait(how.started.is_set)
    _wait(lambda: agent.poll_how() is not None, 10)
    assert store.offers()[0]["query"] == ANSWER.query
    # a dismissed offer's How call is cancelled at the next look at the answers
    how.started.clear()
    how.seconds = 5.0
    assert agent.decide(ms[1], defer=True) is None
    _wait(how.started.is_set)
    second = store.offers()[0]["id"]
    store.respond(second, "dismissed", ms[1].t + timedelta(seconds=5))
    t0 = time.perf_counter()
    agent.sync_responses()
    assert agent._job is None and time.perf_counter() - t0 < 1.0  # noqa: SLF001
    assert agent.decisions[-1].reason == "how_cancelled"
    store.close()


def _png_with_text(text: str) -> bytes:
    from PIL import Image, ImageDraw, ImageFont

    try:
        font = ImageFont.truetype("DejaVuSansMono.ttf", 22)
    except OSError:
        pytest.skip("DejaVu fonts are not installed (fonts-dejavu-core)")
    im = Image.new("RGB", (900, 160), "white")
    draw = ImageDraw.Draw(im)
    for i, line in enumerate(text.splitlines()):
        draw.text((20, 20 + 34 * i), line, fill=(20, 20, 20), font=font)
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


def test_accept_reads_the_window_in_front_now_and_ocrs_its_newest_screenshot(tmp_path: Path) -> None:
    """The moment was decided with no screen text (capture's OCR behind); at Accept the log holds a
    newer screenshot of the same window that capture has not read: live reads it itself."""
    pytest.importorskip("rapidocr")
    from proagent.bench.samples import SampleConfig
    from proagent.capture import Store
    from proagent.live._moments import moment_sample
    from proagent.sources.lifetrace import load_lifetrace

    cap = tmp_path / "cap"
    t0 = datetime(2026, 12, 5, 10, 0, 0)
    store = Store(cap)
    editor = store.open_event("code", "cart.py - shop", t0)
    store.close_event(editor, t0 + timedelta(seconds=30))
    term = store.open_event("xterm", "pytest - shop", t0 + timedelta(seconds=30))

    def shot(eid: int, t: datetime, png: bytes, app: str, title: str) -> int:
        return store.add_screenshot(
            event_id=eid,
            screen_id=0,
            t=t,
            data=png,
            ext="png",
            file_hash=hashlib.sha256(png).hexdigest(),
            width=900,
            height=160,
            app=app,
            title=title,
        )

    shot(term, t0 + timedelta(seconds=31), _png_with_text("$ pytest"), "xterm", "pytest - shop")
    store.con.commit()
    evs = list(load_lifetrace(cap, resolve_files=False).events)
    sample = moment_sample(evs, t0 + timedelta(seconds=36), SampleConfig(), new_event=evs[-1], front=True)
    assert sample is not None and not sample.current.screenshots[-1].ocr_text  # decided blind
    shot(
        term,
        t0 + timedelta(seconds=40),
        _png_with_text("E   assert 0.30000000000000004 == 0.3\nFAILED test_cart.py::test_total_QX7T9"),
        "xterm",
        "pytest - shop",
    )
    store.con.commit()
    st = __import__("proagent.live", fromlist=["FeedbackStore"]).FeedbackStore(tmp_path / "live")
    offer = st.add_offer(
        sample,
        text="Need a hand with this? (xterm)",
        query=None,
        intention=None,
        p_help=0.9,
        notifier="page",
        created_at=t0 + timedelta(seconds=37),
        app_name="xterm",
    )
    model = ScriptedHelpModel(lambda m: "ok", delay=0)
    events: list[tuple[str, str]] = []
    help = LiveHelp(st, model, lambda: t0, screen=ScreenReader(cap / "lifetrace.db", ocr_seconds=60))
    help.subscribe(lambda k, o, t: events.append((k, t)))
    try:
        assert help.accept(offer.id)
        _wait(lambda: not help.busy(offer.id), 120)
        sent = model.requests[0][1]["content"]
        assert "QX7T9" in sent and "0.30000000000000004" in sent.replace(" ", "")
        reading = next(t for k, t in events if k == "reading")
        assert reading.startswith("reading: xterm - pytest - shop, ") and "lines of screen text" in reading
        assert help.turns(offer.id)[-1]["reading"] == reading
    finally:
        help.close()
        st.close()
        store.close()


def test_with_no_screen_text_the_answer_says_so(tmp_path: Path) -> None:
    st, offers = store_with_offers(tmp_path, n=1)
    sample = traceback_sample()
    from dataclasses import replace

    blind = replace(sample, current=replace(sample.current, screenshots=()))
    o = st.add_offer(
        blind,
        text="x",
        query=None,
        intention=None,
        p_help=0.9,
        notifier="page",
        created_at=sample.time,
        app_name="Terminal",
    )
    help = LiveHelp(st, ScriptedHelpModel(lambda m: "ok", delay=0), lambda: sample.time)
    seen: list[tuple[str, str]] = []
    help.subscribe(lambda k, i, t: seen.append((k, t)))
    help.accept(o.id)
    _wait(lambda: not help.busy(o.id))
    reading = next(t for k, t in seen if k == "reading")
    assert reading.startswith("reading: Terminal - ") and reading.endswith("no screen text (no screenshot of it yet)")
    help.close()
    st.close()


def test_the_how_call_reads_the_window_in_front_again(tmp_path: Path) -> None:
    seen: list[str] = []

    def how(sample):  # noqa: ANN001, ANN202
        seen.append(sample.current.screenshots[-1].ocr_text if sample.current.screenshots else "")
        return ANSWER

    def ground(sample):  # noqa: ANN001, ANN202 - what ScreenReader.ground gives: the text written since
        from dataclasses import replace

        shot = replace(sample.current.screenshots[-1], ocr_text="FAILED test_cart.py - QX7T9")
        return replace(sample, current=replace(sample.current, screenshots=(shot,)))

    agent, store = _agent(tmp_path, how, 5.0, [])
    agent.ground = ground
    m = _moments(_day([("xterm", 60), ("chromium", 60)]))[0]
    agent.decide(m, defer=True)
    _wait(lambda: bool(seen))
    assert seen == ["FAILED test_cart.py - QX7T9"]
    assert store.offers()[0]["query"] == ANSWER.query
    store.close()


def test_live_reads_only_the_focused_window_capture_recorded(tmp_path: Path) -> None:
    """Capture stores the focused window's rectangle (screenshots.ocr_region); live's own OCR at
    Accept reads that rectangle, as capture's OCR does: text beside the window is not read."""
    pytest.importorskip("rapidocr")
    from PIL import Image, ImageDraw, ImageFont

    from proagent.capture import Store
    from proagent.records import Screenshot

    try:
        font = ImageFont.truetype("DejaVuSansMono.ttf", 22)
    except OSError:
        pytest.skip("DejaVu fonts are not installed (fonts-dejavu-core)")
    im = Image.new("RGB", (900, 160), "white")
    draw = ImageDraw.Draw(im)
    draw.text((20, 60), "BESIDE WK4RT", fill=(20, 20, 20), font=font)  # another window's text
    draw.text((480, 60), "INSIDE QX7T9", fill=(20, 20, 20), font=font)  # the focused window
    buf = io.BytesIO()
    im.save(buf, "PNG")
    png = buf.getvalue()
    cap = tmp_path / "cap"
    t0 = datetime(2026, 12, 5, 10, 0, 0)
    store = Store(cap)
    try:
        eid = store.open_event("xterm", "pytest - shop", t0)
        sid = store.add_screenshot(
            event_id=eid,
            screen_id=0,
            t=t0,
            data=png,
            ext="png",
            file_hash=hashlib.sha256(png).hexdigest(),
            width=900,
            height=160,
            app="xterm",
            title="pytest - shop",
            ocr_region=(450, 0, 450, 160),
        )
        store.con.commit()
        name = store.con.execute("SELECT file_path FROM screenshots WHERE id = ?", (sid,)).fetchone()[0]
    finally:
        store.close()
    reader = ScreenReader(cap / "lifetrace.db", ocr_seconds=120)
    shot = Screenshot(id=sid, file_name=str(name), time=t0, app_name="xterm", window_title="pytest - shop")
    text = reader._ocr_text(shot) or ""
    assert "QX7T9" in text.replace(" ", "") and "WK4RT" not in text.replace(" ", ""), text


def test_a_window_unchanged_beside_a_busy_page_is_read_once(tmp_path: Path) -> None:
    """Issue 42, item 7: a page beside the terminal rewrites its text, so capture stores a new
    screenshot every second; the terminal's own rectangle stays the same. Live reads it once: a
    newer screenshot with the same pixels in the focused window takes that text at once (no second
    OCR queued behind the first, which left the help blind on a busy desktop)."""
    pytest.importorskip("rapidocr")
    from PIL import Image, ImageDraw, ImageFont

    from proagent.capture import Store
    from proagent.records import Screenshot

    try:
        font = ImageFont.truetype("DejaVuSansMono.ttf", 22)
    except OSError:
        pytest.skip("DejaVu fonts are not installed (fonts-dejavu-core)")
    cap = tmp_path / "cap"
    t0 = datetime(2026, 12, 5, 10, 0, 0)
    store = Store(cap)
    shots = []
    try:
        eid = store.open_event("xterm", "pytest - shop", t0)
        for k, ticker in enumerate(["alpha 31337", "omega 27182"]):
            im = Image.new("RGB", (900, 160), "white")
            draw = ImageDraw.Draw(im)
            draw.text((480, 60), f"TICK {ticker}", fill=(20, 20, 20), font=font)  # the busy page, beside
            draw.text((20, 60), "KeyError ZQX-7KM4P", fill=(20, 20, 20), font=font)  # the terminal
            buf = io.BytesIO()
            im.save(buf, "PNG")
            png = buf.getvalue()
            t = t0 + timedelta(seconds=k)
            sid = store.add_screenshot(
                event_id=eid,
                screen_id=0,
                t=t,
                data=png,
                ext="png",
                file_hash=hashlib.sha256(png).hexdigest(),
                width=900,
                height=160,
                app="xterm",
                title="pytest - shop",
                ocr_region=(0, 0, 450, 160),
            )
            store.con.commit()
            name = store.con.execute("SELECT file_path FROM screenshots WHERE id = ?", (sid,)).fetchone()[0]
            shots.append(
                Screenshot(id=sid, file_name=str(name), time=t, app_name="xterm", window_title="pytest - shop")
            )
    finally:
        store.close()
    reader = ScreenReader(cap / "lifetrace.db", ocr_seconds=120)
    first = reader._ocr_text(shots[0]) or ""
    assert "ZQX-7KM4P" in first.replace(" ", "") and reader.read_now == 1, first
    t = time.monotonic()
    assert reader._ocr_text(shots[1]) == first  # the same window: its text at once, no second read
    assert reader.read_now == 1 and time.monotonic() - t < 5
