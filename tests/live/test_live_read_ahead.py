"""Issue 42, items 3 and 5: the read-ahead is warm for the offer on screen. An unchanged window
sends at Accept the prompt read ahead, token for token; a changed one is read again (while the
offer is up, and at Accept); the help's llama.cpp child is its own, so a How call stopped for the
answer costs the answer neither a model load nor its cached prompt."""

from __future__ import annotations

import hashlib
import io
import sqlite3
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from help_fixtures import store_with_offers, traceback_sample

from proagent.live import FeedbackStore, LiveHelp, ScriptedHelpModel
from proagent.live._ground import ScreenReader

T0 = datetime(2026, 12, 5, 10, 0, 0)
SCREEN = "E   assert 0.30000000000000004 == 0.3\nFAILED test_cart.py::test_total - code QX7T9"


def _wait(cond, seconds: float = 30.0) -> None:  # noqa: ANN001
    end = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


def _png(shade: int) -> bytes:
    """A screenshot whose pixels are a function of ``shade`` (a changed window: another shade)."""
    from PIL import Image

    im = Image.new("RGB", (320, 80), (shade, 40, 40))
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


class _Log:
    """A capture log with a terminal in front; screenshots of it with capture's OCR text."""

    def __init__(self, folder: Path) -> None:
        from proagent.capture import Store

        self.folder = folder
        self.store = Store(folder)
        self.term = self.store.open_event("xterm", "pytest - shop", T0)
        self.k = 0

    def shot(self, png: bytes, text: str) -> None:
        self.k += 1
        t = T0 + timedelta(seconds=self.k)
        sid = self.store.add_screenshot(
            event_id=self.term,
            screen_id=0,
            t=t,
            data=png,
            ext="png",
            file_hash=hashlib.sha256(png + bytes([self.k])).hexdigest(),
            width=320,
            height=80,
            app="xterm",
            title="pytest - shop",
        )
        self.store.con.execute(
            "INSERT INTO ocr_results (screenshot_id, text_content, confidence, language, processing_time, "
            "created_at) VALUES (?, ?, 0.9, 'ch', 1.0, ?)",
            (sid, text, t.isoformat(" ")),
        )
        self.store.con.execute("UPDATE screenshots SET is_processed = 1 WHERE id = ?", (sid,))
        self.store.con.commit()

    def sample(self):  # noqa: ANN201
        from proagent.bench.samples import SampleConfig
        from proagent.live._moments import moment_sample
        from proagent.sources.lifetrace import load_lifetrace

        evs = list(load_lifetrace(self.folder, resolve_files=False).events)
        return moment_sample(evs, T0 + timedelta(seconds=5), SampleConfig(), new_event=evs[-1], front=True)


class _Prefilling(ScriptedHelpModel):
    def __init__(self) -> None:
        super().__init__(lambda m: "ok", delay=0)
        self.read: list[list[dict[str, str]]] = []

    def prefill(self, messages):  # noqa: ANN001, ANN201
        self.read.append(messages)
        return {}


def _setup(tmp_path: Path, every: float | None = None):  # noqa: ANN202
    log = _Log(tmp_path / "cap")
    log.shot(_png(10), SCREEN)
    st = FeedbackStore(tmp_path / "live")
    offer = st.add_offer(
        log.sample(),
        text="Need a hand with this? (xterm)",
        query=None,
        intention=None,
        p_help=0.9,
        notifier="page",
        created_at=T0 + timedelta(seconds=6),
        app_name="xterm",
    )
    model = _Prefilling()
    kw = {"read_ahead_every": every} if every else {}
    help = LiveHelp(st, model, lambda: T0, screen=ScreenReader(log.folder / "lifetrace.db", ocr=False), **kw)
    return log, st, offer, model, help


def test_an_unchanged_window_sends_the_prompt_read_ahead_token_for_token(tmp_path: Path) -> None:
    """Capture stored a newer screenshot of the same pixels (a clock changed beside the window) and
    its OCR read it with one space less: the answer still sends the read-ahead's prompt (llama.cpp
    then evaluates only its last token), and says the reading was reused."""
    log, st, offer, model, help = _setup(tmp_path)
    try:
        help.show(offer)
        _wait(lambda: offer.id in help.prepared)
        log.shot(_png(10), SCREEN.replace("E   assert", "E  assert"))
        assert help.accept(offer.id)
        _wait(lambda: not help.busy(offer.id))
        assert model.requests == model.read  # the very prompt read ahead
        assert "QX7T9" in model.requests[0][1]["content"]
        assert help.timings[offer.id]["reused_reading"] is True
        assert help.timings[offer.id]["queue_s"] >= 0 and help.timings[offer.id]["ground_s"] >= 0
    finally:
        help.close()
        st.close()
        log.store.close()


def test_a_changed_window_is_read_again_while_the_offer_is_up_and_at_accept(tmp_path: Path) -> None:
    """The window changed while the offer was on screen: the read-ahead is redone with the new text
    (no Accept needed), and the answer reads the new text, never the read-ahead's stale one."""
    log, st, offer, model, help = _setup(tmp_path, every=0.1)
    try:
        help.show(offer)
        _wait(lambda: len(model.read) == 1)
        log.shot(_png(200), "E   KeyError: 'ZK44W'")
        _wait(lambda: any("ZK44W" in m[1]["content"] for m in model.read), 10)  # read ahead again
        assert "QX7T9" not in model.read[-1][1]["content"]
        n = len(model.read)
        time.sleep(0.5)
        assert len(model.read) == n  # unchanged since: no more work
        log.shot(_png(90), "E   ValueError: 'PV2M8'")  # changed again, just before Accept
        assert help.accept(offer.id)
        _wait(lambda: not help.busy(offer.id))
        sent = model.requests[0][1]["content"]
        assert "PV2M8" in sent and "ZK44W" not in sent
        assert help.timings[offer.id]["reused_reading"] is False
    finally:
        help.close()
        st.close()
        log.store.close()


def test_a_dismissed_offer_is_not_read_ahead_again(tmp_path: Path) -> None:
    log, st, offer, model, help = _setup(tmp_path, every=0.1)
    try:
        help.show(offer)
        _wait(lambda: len(model.read) == 1)
        st.respond(offer.id, "dismissed", T0 + timedelta(seconds=8))
        log.shot(_png(200), "E   KeyError: 'ZK44W'")
        time.sleep(0.6)
        assert len(model.read) == 1
    finally:
        help.close()
        st.close()
        log.store.close()


@pytest.mark.slow
def test_a_how_call_stopped_for_the_answer_costs_it_no_model_load(tmp_path: Path) -> None:
    """Help first stops the How call in flight at Accept (its llama.cpp child is killed): the
    help's own child keeps the prompt read ahead, so the answer loads nothing and evaluates only
    the tail (SmolLM2, one thread)."""
    from proagent.live import HowModel
    from proagent.live._agent import _HowCall
    from proagent.live._help import LocalHelpModel
    from proagent.models import local

    margs = {"n_threads": "1"}
    st, offers = store_with_offers(tmp_path, n=1)
    model = LocalHelpModel("local/smollm2-135m", margs, max_tokens=8)
    help = LiveHelp(st, model, lambda: traceback_sample().time)
    how = HowModel("local/smollm2-135m", margs)
    try:
        help.show(offers[0])
        _wait(lambda: offers[0].id in help.prepared, 120)
        how.warm()
        shared = next(e for k, e in local._ENGINES.items() if len(k) == 4 or k[-1] == "")  # the How calls' child
        loads = getattr(shared.server, "loads", 0)
        call = _HowCall(how, traceback_sample("u1:9:candidate"))
        _wait(lambda: shared.server._current is not None or call.done, 60)
        flying = not call.done
        assert help.accept(offers[0].id)
        call.cancel()  # LiveAgent.help_first
        _wait(lambda: not help.busy(offers[0].id), 120)
        assert help.turns(offers[0].id)[-1]["status"] == "done"
        with sqlite3.connect(tmp_path / "feedback.db") as c:
            prompt, cached = c.execute(
                "SELECT prompt_tokens, cached_tokens FROM help_turns WHERE role = 'assistant'"
            ).fetchone()
        assert cached > 100 and prompt <= 2, (prompt, cached)  # the prompt read ahead, reused
        if flying:  # (its answer had not come before the cancel: its child was killed, not reloaded)
            _wait(lambda: shared.server._proc is None or shared.server._proc.poll() is not None, 10)
            assert shared.server.loads == loads
        assert help.timings[offers[0].id]["load_s"] == 0
    finally:
        help.close()
        how.close()
        st.close()
