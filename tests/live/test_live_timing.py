"""Issue 32: offers about the window in front, on time, and the restraint rules that keep them
welcome. A real ``proagent live --watch`` follows a LifeTrace log this test writes as
``proagent capture`` does (screenshots, then OCR rows); the How model is a loopback
OpenAI-compatible mock that asks about whatever the prompt's current state shows, so the offer
says which window the moment saw. Ctrl-C (SIGINT) on --watch and --replay prints the summary and
exits 130; a slow How call is cancelled by a newer moment; --settle, blocked apps (persisted,
undone through the page's endpoints) and dismissed-similar offers are each held and counted."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from datetime import datetime, timedelta
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from lifetrace_fixtures import tiny_png  # noqa: E402
from mock_openai import MockOpenAI, last_user_text  # noqa: E402

from proagent.live import (  # noqa: E402
    FeedbackStore,
    LiveAgent,
    LiveOptions,
    Restraint,
    RestraintConfig,
    ScriptedDecider,
    WallClock,
    blocked_apps,
    run_watch,
)
from proagent.live._agent import HowModel  # noqa: E402
from proagent.live._sources import Moment  # noqa: E402
from proagent.records import Event, Prediction, Screenshot  # noqa: E402

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _env(**extra: str) -> dict[str, str]:
    env = dict(
        os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), PYTHONUNBUFFERED="1", **extra
    )
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    return env


class Log:
    """A LifeTrace log written as ``proagent capture`` writes it: events, screenshots, and the
    OCR child's rows a moment later."""

    def __init__(self, folder: Path) -> None:
        from proagent.capture import Store

        self.store = Store(folder)
        self.db = self.store.db
        self.prev: int | None = None
        self.k = 0

    def window(self, app: str, title: str, t: datetime | None = None) -> int:
        t = t or datetime.now()
        if self.prev is not None:
            self.store.close_event(self.prev, t)
        self.prev = self.store.open_event(app, title, t)
        return self.prev

    def shot(self, app: str, title: str, text: str | None = None, t: datetime | None = None) -> int:
        self.k += 1
        png = tiny_png(self.k)
        sid = self.store.add_screenshot(
            event_id=self.prev,
            screen_id=0,
            t=t or datetime.now(),
            data=png,
            ext="png",
            file_hash=hashlib.sha256(png).hexdigest(),
            width=4,
            height=4,
            app=app,
            title=title,
            focused=True,
        )
        if text is not None:
            self.ocr(sid, text)
        return sid

    def ocr(self, sid: int, text: str) -> None:
        con = sqlite3.connect(self.db)
        now = datetime.now().strftime("%Y-%m-%d %H:%M:%S.%f")
        with con:
            con.execute(
                "INSERT INTO ocr_results (screenshot_id, text_content, confidence, language, processing_time, "
                "created_at) VALUES (?, ?, 0.9, 'ch', 0.1, ?)",
                (sid, text, now),
            )
            con.execute("UPDATE screenshots SET is_processed = 1, processed_at = ? WHERE id = ?", (now, sid))
        con.close()

    def close(self) -> None:
        self.store.close()


def _about_the_screen(body: dict) -> str:
    """The mock How model: a query about the window and screen text of the prompt's current state."""
    prompt = last_user_text(body)
    if "(starting)" in prompt:
        return "Need help: No"
    title = re.search(r"- Window title: (.*)", prompt).group(1)
    screen = prompt.split("Screen content:\n", 1)[1].split("\n", 1)[0] if "Screen content:\n" in prompt else ""
    return f"Need help: Yes\nIntention: Debugging & Error Resolution\nQuery: Why does {title} show {screen}?"


def _wait_for(pred, timeout: float, what: str) -> None:  # noqa: ANN001
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _offers(folder: Path) -> list[dict]:
    if not (folder / "feedback.db").exists():
        return []
    con = sqlite3.connect(folder / "feedback.db")
    try:
        rows = con.execute("SELECT id, app_name, query, text, moment FROM offers ORDER BY id").fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        con.close()
    return [dict(zip(("id", "app_name", "query", "text", "moment"), r)) for r in rows]


# --------------------------------------------------------------------------- the real command


def test_watch_offers_about_the_window_in_front_and_ctrl_c_prints_the_summary(tmp_path: Path) -> None:
    cap, out = tmp_path / "cap", tmp_path / "live"
    log = Log(cap)
    log.window("Thunderbird", "Booking to Lisbon")  # history: the window before
    log.shot("Thunderbird", "Booking to Lisbon", "Your booking to Lisbon is confirmed")
    yes = tmp_path / "yes.txt"
    yes.write_text("2\n")  # event row 2, written once the agent runs
    with MockOpenAI(_about_the_screen) as srv:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "proagent.cli",
                "live",
                "--watch",
                str(cap),
                "--out",
                str(out),
                "--yes-at",
                str(yes),
                "--model",
                "openai-api/mock/m",
                "--notify",
                "terminal",
                "--every",
                "0",
                "--settle",
                "1",
            ],
            env=_env(MOCK_BASE_URL=srv.base_url, MOCK_API_KEY="test-key"),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True)
        reader.start()
        try:
            _wait_for(lambda: any(ln.startswith("watching") for ln in lines), 60, "the watch to start")
            _wait_for(lambda: (out / "feedback.db").exists(), 30, "feedback.db")
            time.sleep(2.0)  # the follower opens right after feedback.db: rows before it are history
            # the terminal comes to the front: its first screenshot, its OCR text 0.4 s later (the OCR child)
            log.window("xterm", "pytest -q")
            sid = log.shot("xterm", "pytest -q")
            time.sleep(0.4)
            log.ocr(sid, "E KeyError: 'user_id'")
            _wait_for(lambda: _offers(out), 20, "the offer")
            time.sleep(0.5)
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in the terminal: the whole process group
            rc = proc.wait(30)
        finally:
            if proc.poll() is None:
                proc.kill()
            log.close()
        reader.join(5)
    text = "".join(lines)
    offer = _offers(out)[0]
    # about the window in front (the terminal and its error), not the previous one (the booking)
    assert offer["app_name"] == "xterm"
    assert "pytest -q" in offer["query"] and "KeyError" in offer["query"] and "Lisbon" not in offer["query"], offer
    assert "Lisbon" not in text.split("watching", 1)[1].split("moments decided")[0]
    assert rc == 130, text
    assert "How model ready in" in text and "loading the How model openai-api/mock/m" in text
    assert re.search(r"^1 moments decided: 1 offer$", text, re.M), text
    assert re.search(r"^offer latency: p50 ", text, re.M) and "stopped (Ctrl-C)" in text and "Traceback" not in text


def test_replay_ctrl_c_exits_130_with_the_summary(tmp_path: Path) -> None:
    from lifetrace_fixtures import make_participant

    fx = make_participant(tmp_path, "P01")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "proagent.cli",
            "live",
            "--replay",
            str(fx.path),
            "--out",
            str(tmp_path / "live"),
            "--yes-at",
            str(_empty(tmp_path)),
            "--model",
            "none",
            "--notify",
            "none",
            "--speed",
            "0.01",
        ],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_for(lambda: (tmp_path / "live" / "feedback.db").exists(), 60, "the replay to start")
        _wait_for(lambda: _decided(tmp_path / "live") >= 1, 30, "a first decision")
        os.killpg(proc.pid, signal.SIGINT)
        text, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, text
    assert re.search(r"^\d+ moments decided: ", text, re.M) and "stopped (Ctrl-C)" in text, text
    assert "Traceback" not in text


def _empty(tmp: Path) -> Path:
    p = tmp / "none.txt"
    p.write_text("")
    return p


def _decided(folder: Path) -> int:
    try:
        con = sqlite3.connect(folder / "feedback.db")
        try:
            return int(con.execute("SELECT count(*) FROM decisions").fetchone()[0])
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


# --------------------------------------------------------------------------- a stale How call is cancelled


def test_a_newer_moment_cancels_a_slow_how_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first How request takes 30 s at the mock; the second window's moment cancels it and
    its own offer (answered at once) is shown within seconds, not after the first call."""
    started: list[float] = []

    def reply(body: dict) -> str:
        prompt = last_user_text(body)
        started.append(time.monotonic())
        if re.search(r"- Window title: first\.py$", prompt, re.M):  # the first moment's own call (a later
            # prompt may name first.py among its earlier events: that one must not sleep)
            time.sleep(30)  # the 105 s call of issue 32, shortened
        return _about_the_screen(body)

    cap, out = tmp_path / "cap", tmp_path / "live"
    log = Log(cap)
    log.window("Code", "notes.md")
    log.shot("Code", "notes.md", "notes")
    decisions: list = []
    with MockOpenAI(reply) as srv:
        srv.env(monkeypatch)
        how = HowModel("openai-api/mock/m")
        stop = threading.Event()
        th = threading.Thread(
            target=lambda: run_watch(
                cap,
                out,
                ScriptedDecider({"2", "3"}),
                LiveOptions(
                    notify=("none",), every_seconds=0, settle_seconds=0.5, restraint=RestraintConfig(min_gap_seconds=0)
                ),
                how=how,
                poll_seconds=0.02,
                stop=stop,
                on_decision=decisions.append,
                offer_wait_seconds=0.5,
            ),
            daemon=True,
        )
        th.start()
        _wait_for(lambda: (out / "feedback.db").exists(), 30, "the watch to start")
        time.sleep(0.5)
        log.window("Code", "first.py")
        log.shot("Code", "first.py", "def first(): pass")
        _wait_for(lambda: len(started) >= 1, 20, "the first How call")
        t_second = time.monotonic()
        log.window("xterm", "second.sh")
        log.shot("xterm", "second.sh", "bash: second: command not found")
        _wait_for(lambda: len(_offers(out)) >= 2 and _offers(out)[1]["query"], 20, "the second offer's query")
        late = time.monotonic() - t_second
        stop.set()
        th.join(20)
        log.close()
        how.close()
    first, second = _offers(out)
    assert "first.py" not in (first["query"] or "")  # cancelled: its generic offer stays, no query
    assert "second.sh" in second["query"]
    assert late < 10, late  # not behind the first call's 30 s
    d1 = next(d for d in decisions if d.offer_id == first["id"])
    assert d1.reason == "how_cancelled" and d1.how_seconds < 10


# --------------------------------------------------------------------------- restraint rules


def _ev(eid: str, app: str, start: datetime, shots: list[float], text: str = "some text") -> Event:
    ss = tuple(
        Screenshot(
            id=int(eid) * 100 + i,
            time=start + timedelta(seconds=s),
            app_name=app,
            window_title=app,
            file_name="x.png",
            ocr_text=text,
        )
        for i, s in enumerate(shots)
    )
    return Event(id=eid, user="u", start=start, end=None, app_name=app, window_title=app, screenshots=ss)


def test_settle_holds_moments_while_the_screen_changes_every_tick(tmp_path: Path) -> None:
    from proagent.live._sources import ReplayClock

    t0 = datetime(2026, 12, 3, 10, 0)
    typing = _ev("2", "xterm", t0 + timedelta(seconds=20), [k * 1.0 for k in range(1, 20)])  # a change every second
    paused = _ev("3", "Code", t0 + timedelta(seconds=40), [1, 2, 9])  # settles 3 s after the shot at 2 s
    prev = _ev("1", "Firefox", t0, [1])
    from proagent.live._settle import settled_at

    assert settled_at(typing, typing.start, paused.start, 3.0) is None
    assert settled_at(paused, paused.start, None, 3.0) == paused.start + timedelta(seconds=5)
    agent = LiveAgent(
        tmp_path,
        ScriptedDecider({"2", "3"}),
        clock=ReplayClock(0),
        restraint=Restraint(RestraintConfig(min_gap_seconds=0, one_per_app_session=False)),
    )
    ms = [
        Moment(
            t=typing.start,
            user="u",
            trigger="event",
            history=(prev, typing),
            new_event=typing,
            noticed=0.0,
            front=True,
            settled=False,
        ),
        Moment(
            t=paused.start + timedelta(seconds=5),
            user="u",
            trigger="event",
            history=(prev, typing, paused),
            new_event=paused,
            noticed=time.perf_counter(),
            front=True,
        ),
    ]
    out = [agent.decide(m) for m in ms]
    assert [(d.outcome, d.reason) for d in out] == [("skipped", "settle"), ("offer", "")]
    from proagent.live import summarise

    assert summarise(out).reasons == {"settle": 1}


def _watch_settling(cap: Path, out: Path) -> tuple[Log, list, threading.Event, threading.Thread]:
    """A log with one window, and ``run_watch`` on it (``--settle 1``, nothing offered) started in a
    thread: ``(log, decisions so far, stop, thread)`` once the watch is up."""
    log = Log(cap)
    log.window("Code", "a.py")
    log.shot("Code", "a.py", "a")
    decided: list = []
    stop = threading.Event()
    th = threading.Thread(
        target=lambda: run_watch(
            cap,
            out,
            ScriptedDecider(set()),
            LiveOptions(notify=("none",), every_seconds=0, settle_seconds=1.0),
            poll_seconds=0.02,
            stop=stop,
            on_decision=decided.append,
        ),
        daemon=True,
    )
    th.start()
    _wait_for(lambda: (out / "feedback.db").exists(), 30, "the watch to start")
    time.sleep(0.3)
    return log, decided, stop, th


def test_watch_waits_for_a_pause_before_deciding(tmp_path: Path) -> None:
    cap, out = tmp_path / "cap", tmp_path / "live"
    log, decided, stop, th = _watch_settling(cap, out)
    log.window("xterm", "typing")
    t_start = time.monotonic()
    for k in range(12):  # typing: a new screen every 0.25 s for 3 s
        log.shot("xterm", "typing", f"line {k}")
        typed = time.monotonic()
        time.sleep(0.25)
    _wait_for(lambda: decided, 10, "the decision after the pause")
    waited = time.monotonic() - typed
    log.window("Code", "b.py")  # typing without a pause, then the next window: skipped (settle)
    for k in range(8):
        log.shot("Code", "b.py", f"b {k}")
        time.sleep(0.25)
    log.window("Firefox", "docs")
    log.shot("Firefox", "docs", "docs")
    _wait_for(lambda: len(decided) >= 3, 15, "three decisions")
    stop.set()
    th.join(10)
    log.close()
    assert decided[0].outcome == "no" and time.monotonic() - t_start > 3.0
    assert 0.9 <= waited <= 3.0, waited  # decided one --settle after the last change, not while typing
    assert (decided[0].moment - datetime.now()).total_seconds() < 0
    assert (decided[1].outcome, decided[1].reason) == ("skipped", "settle")
    assert decided[2].outcome == "no"


def _busy_beside(k: int) -> bytes:
    """A 40x20 screen: the window in front (left half, ``ocr_region`` 0,0,20,20) the same in every
    shot, a page beside it (right half) repainted with ``k``'s colour."""
    import io

    from PIL import Image

    im = Image.new("RGB", (40, 20), (250, 250, 250))
    im.paste((k * 37 % 256, k * 91 % 256, k * 53 % 256), (20, 0, 40, 20))
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


def test_a_page_changing_beside_the_window_in_front_does_not_hold_its_moment(tmp_path: Path) -> None:
    """Issue 42 item 7: capture stores a screenshot every tick while a page beside the window in
    front rewrites itself; the window in front has paused, so its moment settles (it never did)."""
    cap, out = tmp_path / "cap", tmp_path / "live"
    log, decided, stop, th = _watch_settling(cap, out)
    eid = log.window("xterm", "KeyError")
    t_front = time.monotonic()
    seen_at = None
    for k in range(24):  # 6 s of a new screenshot every 0.25 s, only the page beside changing
        png = _busy_beside(k)
        sid = log.store.add_screenshot(
            event_id=eid,
            screen_id=0,
            t=datetime.now(),
            data=png,
            ext="png",
            file_hash=hashlib.sha256(png).hexdigest(),
            width=40,
            height=20,
            app="xterm",
            title="KeyError",
            focused=True,
            ocr_region=(0, 0, 20, 20),
        )
        log.ocr(sid, "KeyError: 'ZQX'")
        if seen_at is None and decided:
            seen_at = time.monotonic() - t_front
        time.sleep(0.25)
    stop.set()
    th.join(10)
    log.close()
    assert seen_at is not None, [(d.outcome, d.reason) for d in decided]  # before: not while the page changed
    assert decided[0].outcome == "no" and seen_at < 5.0, seen_at  # one --settle after the window's last change


def _page_call(url: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    base, token = url.split("/?token=")
    req = urllib.request.Request(
        f"{base}{path}?token={token}",
        method="POST" if body is not None else "GET",
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def test_not_in_this_app_is_persisted_counted_and_undone_through_the_page(tmp_path: Path) -> None:
    from proagent.live import OfferPage
    from proagent.live._sources import ReplayClock

    store = FeedbackStore(tmp_path)
    page = OfferPage(store, datetime.now)
    try:
        assert _page_call(page.url, "/block-app", {"app": "xterm"}) == (200, {"ok": True, "blocked": ["xterm"]})
        assert _page_call(page.url, "/block-app", {"app": ""})[0] == 400
        assert _page_call(page.url, "/block-app", {"app": "x" * 201})[0] == 400
        assert _page_call(page.url, "/block-app", {"name": "xterm"})[0] == 400
        assert _page_call(page.url, "/blocked-apps") == (200, {"blocked": ["xterm"]})
        # the page server's rules: no token, no write
        nobody = page.url.split("?token=")[0] + "?token=wrong"
        assert _page_call(nobody, "/block-app", {"app": "Firefox"})[0] == 403
        assert blocked_apps(tmp_path) == ("xterm",)
        assert oct((tmp_path / "blocked-apps.json").stat().st_mode & 0o777) == "0o600"

        t0 = datetime(2026, 12, 3, 10, 0)

        def decide_xterm(agent: LiveAgent, k: int):  # noqa: ANN202
            e = _ev(str(k), "xterm", t0 + timedelta(minutes=k), [1])
            return agent.decide(
                Moment(
                    t=e.start + timedelta(seconds=4),
                    user="u",
                    trigger="event",
                    history=(e,),
                    new_event=e,
                    noticed=time.perf_counter(),
                    front=True,
                )
            )

        cfg = RestraintConfig(min_gap_seconds=0, one_per_app_session=False)
        agent = LiveAgent(
            tmp_path,
            ScriptedDecider({"u:2:candidate", "u:3:candidate", "u:4:candidate"}),
            clock=ReplayClock(0),
            restraint=Restraint(cfg, folder=tmp_path),
            feedback=store,
        )
        assert (decide_xterm(agent, 2).outcome, agent.decisions[-1].reason) == ("skipped", "blocked_app")
        # a later run (a new agent on the same folder) reads the rule again
        again = LiveAgent(
            tmp_path, agent.decider, clock=ReplayClock(0), restraint=Restraint(cfg, folder=tmp_path), feedback=store
        )
        assert decide_xterm(again, 3).reason == "blocked_app"
        # undo on the page: the running agent offers again
        assert _page_call(page.url, "/unblock-app", {"app": "XTERM"}) == (
            200,
            {"ok": True, "removed": True, "blocked": []},
        )
        assert _page_call(page.url, "/unblock-app", {"app": "xterm"})[1]["removed"] is False
        assert decide_xterm(again, 4).outcome == "offer"
        assert blocked_apps(tmp_path) == ()
        from proagent.live import summarise

        assert summarise(agent.decisions + again.decisions).reasons == {"blocked_app": 2}
    finally:
        page.close()
        store.close()


def test_an_offer_like_one_dismissed_today_in_the_app_is_held(tmp_path: Path) -> None:
    from proagent.live import summarise
    from proagent.live._sources import ReplayClock

    t0 = datetime(2026, 12, 3, 10, 0)
    queries = iter(
        [
            "How do I fix the KeyError 'user_id' raised in app.py after login?",
            "Why does app.py raise KeyError 'user_id' after the login?",  # the same question, reworded
            "How do I write a unit test for the login view?",  # another question in the same app
            "How do I fix the KeyError 'user_id' raised in app.py after login?",
        ]
    )  # the next day

    class How:
        def __call__(self, sample):  # noqa: ANN001, ANN204
            return Prediction(
                sample_id=sample.id, needs_help=True, intention="Debugging & Error Resolution", query=next(queries)
            )

    store = FeedbackStore(tmp_path)
    agent = LiveAgent(
        tmp_path,
        ScriptedDecider({f"u:{k}:candidate" for k in range(1, 6)}),
        how=How(),
        clock=ReplayClock(0),
        feedback=store,
        restraint=Restraint(RestraintConfig(min_gap_seconds=0, one_per_app_session=False, cooldown_seconds=0)),
    )

    def decide(k: int, at: datetime, app: str = "Code"):  # noqa: ANN202
        e = _ev(str(k), app, at, [1])
        return agent.decide(
            Moment(
                t=at + timedelta(seconds=4),
                user="u",
                trigger="event",
                history=(e,),
                new_event=e,
                noticed=time.perf_counter(),
                front=True,
            )
        )

    first = decide(1, t0)
    assert first.outcome == "offer"
    store.respond(first.offer_id, "dismissed", t0 + timedelta(minutes=1), source="test")
    assert (decide(2, t0 + timedelta(minutes=5)).outcome, agent.decisions[-1].reason) == ("held", "dismissed_similar")
    assert decide(3, t0 + timedelta(minutes=10)).outcome == "offer"
    assert decide(4, t0 + timedelta(days=1)).outcome == "offer"  # not the same day
    assert summarise(agent.decisions).reasons == {"dismissed_similar": 1}


@pytest.mark.slow
def test_cancelling_a_local_how_call_kills_its_llama_process_and_the_next_call_answers() -> None:
    from proagent.records import Sample

    how = HowModel("local/smollm2-135m", {"n_threads": "1"})
    try:
        how.warm()
        t0 = datetime(2026, 12, 3, 10, 0)
        screen = "\n".join(
            f"line {k}: Traceback (most recent call last) File app.py KeyError user_id" for k in range(150)
        )
        e = _ev("1", "xterm", t0, [1], text=screen)
        sample = Sample(
            id="u:1:candidate",
            user="u",
            time=t0 + timedelta(seconds=4),
            label=0,
            split="test",
            kind="candidate",
            context=(),
            current=e,
            window_seconds=300.0,
        )
        engine = how._model.api._engine.server
        fut = how.submit(sample)
        time.sleep(1.0)
        child = engine._proc
        assert child is not None and child.poll() is None and not fut.done()  # still reading the long screen
        t = time.monotonic()
        assert fut.cancel()
        child.wait(5)  # killed at once, not after its answer
        assert time.monotonic() - t < 5 and child.returncode is not None
        short = Sample(
            id="u:2:candidate",
            user="u",
            time=sample.time,
            label=0,
            split="test",
            kind="candidate",
            context=(),
            current=_ev("2", "xterm", t0, [1], text="ok"),
            window_seconds=300.0,
        )
        pred = how(short)  # a new child is started for it
        assert pred.sample_id == "u:2:candidate" and engine._proc is not child
    finally:
        how.close()


@pytest.mark.slow
def test_cancelling_a_queued_how_call_leaves_the_streaming_help_alone() -> None:
    """Issue 32, item 4, and issue 42: a newer moment (or help first) cancelling a How call must not
    kill the help streaming (on one shared child it did: the help's own request died with it). The
    help now has a llama.cpp child of its own: a How call cancelled while the answer streams (in
    flight, its child killed) leaves the answer and its child alone, and the next How call answers."""
    import threading

    from proagent.live._help import LocalHelpModel
    from proagent.records import Sample

    how = HowModel("local/smollm2-135m", {"n_threads": "1"})
    helper = LocalHelpModel("local/smollm2-135m", {"n_threads": "1"}, max_tokens=60)
    try:
        how.warm()
        t0 = datetime(2026, 12, 3, 10, 0)
        samples = [
            Sample(
                id=f"u:{k}:candidate",
                user="u",
                time=t0 + timedelta(minutes=k),
                label=0,
                split="test",
                kind="candidate",
                context=(),
                current=_ev(str(k), "xterm", t0, [1], text=f"ok {k}"),
                window_seconds=300.0,
            )
            for k in range(2)
        ]
        engine = how._model.api._engine.server
        first, out = threading.Event(), {}

        def answer() -> None:
            try:
                out["usage"] = helper.stream(
                    [{"role": "user", "content": "Explain KeyError in Python."}], lambda _: first.set()
                )
            except Exception as e:  # noqa: BLE001 - the assertion says what happened
                out["error"] = e
            first.set()

        th = threading.Thread(target=answer, daemon=True)
        th.start()
        assert first.wait(180)
        from proagent.models import local

        help_engine = next(e.server for k, e in local._ENGINES.items() if k[-1] == "help")
        assert help_engine is not engine
        help_child = help_engine._proc
        fut = how.submit(samples[0])  # runs beside the answer, in the How calls' own child
        time.sleep(0.5)
        fut.cancel()
        th.join(180)
        assert "error" not in out, out
        assert out["usage"]["completion_tokens"] > 5 and help_engine._proc is help_child and help_child.poll() is None
        assert how(samples[1]).sample_id == "u:1:candidate"  # the next call answers
    finally:
        how.close()


def test_a_log_that_does_not_grow_is_said_once_until_it_grows_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import proagent.live._agent as agent_mod

    monkeypatch.setattr(agent_mod, "QUIET_LOG_SECONDS", 0.6)
    cap, out = tmp_path / "cap", tmp_path / "live"
    log = Log(cap)
    log.window("Code", "a.py")
    log.shot("Code", "a.py", "a")
    said: list[tuple[float, str]] = []
    stop = threading.Event()
    t0 = time.monotonic()
    th = threading.Thread(
        target=lambda: run_watch(
            cap,
            out,
            ScriptedDecider(set()),
            LiveOptions(notify=("none",), every_seconds=0),
            poll_seconds=0.02,
            stop=stop,
            on_status=lambda line: said.append((time.monotonic() - t0, line)),
        ),
        daemon=True,
    )
    th.start()
    _wait_for(lambda: said, 20, "the first quiet line")
    time.sleep(1.0)
    assert len(said) == 1  # one line, not one per poll
    log.shot("Code", "a.py", "b")  # the log grows again, then stops again: said once more
    _wait_for(lambda: len(said) >= 2, 20, "the second quiet line")
    time.sleep(1.0)
    stop.set()
    th.join(10)
    log.close()
    assert len(said) == 2 and "has not grown for 1 s" in said[0][1] and "still watching" in said[0][1]


def test_a_window_that_had_not_settled_when_capture_stopped_is_not_decided_after_the_stop(tmp_path: Path) -> None:
    from proagent.capture._control import FolderLock

    cap, out = tmp_path / "cap", tmp_path / "live"
    log = Log(cap)
    log.window("Code", "a.py")
    log.shot("Code", "a.py", "a")
    rec = FolderLock(cap)
    rec.acquire()  # the recorder runs
    decided: list = []
    stop = threading.Event()
    th = threading.Thread(
        target=lambda: run_watch(
            cap,
            out,
            ScriptedDecider(set()),
            LiveOptions(notify=("none",), every_seconds=0, settle_seconds=2.0),
            poll_seconds=0.02,
            stop=stop,
            on_decision=decided.append,
        ),
        daemon=True,
    )
    th.start()
    _wait_for(lambda: (out / "feedback.db").exists(), 30, "the watch to start")
    time.sleep(0.5)
    log.window("xterm", "make")
    log.shot("xterm", "make", "building")
    time.sleep(0.3)
    rec.release()  # capture stops 0.3 s later, before the 2 s pause
    stopped = datetime.now()
    _wait_for(lambda: decided, 10, "the moment's record")
    stop.set()
    th.join(10)
    log.close()
    assert [(d.outcome, d.reason) for d in decided] == [("skipped", "settle")]
    assert decided[0].moment < stopped
