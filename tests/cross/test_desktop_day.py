"""End to end on the scripted desktop (issue 21): the short scenario (tests/scenarios/desktop.py)
recorded by ``proagent capture`` with default options, then ``proagent curate`` with one review
decision of each kind made through the review server, ``proagent annotate`` and ``proagent eval
--split all`` (loopback mock models, tests/mock_openai.py: an annotator answering from the screen
text it is sent, and an always-yes decider; this checks the chain, not a model).

Asserted against the scenario's ground truth: every event of the script is captured and survives
curation (a revisited page is not lost to dedup); the moments eval runs on are the moments the
documented sample rules make of the curated events; no planted personal value is in any
published text, database dump or re-OCRed published image; the blurred screen is unreadable.
The script ends with same-browser switches (issue 34: a ChatGPT window, then a mail inbox and a
Gemini chat as two tabs of one Chromium window): each is its own event with default options.
The script is played once: ``proagent live --watch`` watches the same capture (its offers answered,
then a decider retrained on them), so the capture's figures are taken with live beside it, as a
person runs them. About 5-10 minutes on 2 cores (the script is 140 s; OCR does the rest), so
marked slow."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import solo
from system import require_binary, require_module

require_module("rapidocr", "presidio_analyzer", "imagehash", "noto_cjk_sans_otc")

from mock_openai import MockOpenAI  # noqa: E402
from scenarios.desktop import (  # noqa: E402
    PAGES,
    PROGRAMS,
    SHORT,
    Desktop,
    match_events,
    pii_leaks,
    planted_text_share,
    review_one_of_each,
    screen_text_annotator,
    start_capture,
    stop_capture,
    write_truth,
)

pytestmark = pytest.mark.slow


def _proagent(*args: str, timeout: float = 600, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "proagent.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One play-through of :data:`SHORT` recorded by ``proagent capture`` (default options), with
    ``proagent live --watch`` on the same capture when the dev sessions are present (a decider
    trained on them first; :class:`_LiveRun`): the capture tests and the live test read the same
    recording. Only the real-time stretch (capture, live and the script; capture's stop reading its
    OCR backlog) holds the machine alone; the training, the desktop's start and live's last
    seconds after the stop do not."""
    from shared_data import DEV

    require_binary(*PROGRAMS)
    root = tmp_path_factory.mktemp("day")
    cap = root / "capture"
    dec0 = root / "deciders" / "dev"
    train0 = None
    if DEV is not None:  # the decider trains while the desktop starts
        train0 = subprocess.Popen(
            [sys.executable, "-m", "proagent.cli", "train", "when", "--data", str(DEV), "--out", str(dec0)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    out: dict = {"root": root, "cap": cap, "decider": dec0, "live": None}
    with MockOpenAI(_how_or_help) as srv, Desktop(root / "desktop") as desk:
        if train0 is not None:
            text, _ = train0.communicate(timeout=600)
            out["train0"] = (train0.returncode, text)
        live = None
        # capture's 1 Hz and OCR rate, live's ticks: real time; it leaves the 2 cores 80-97% idle
        # (a CI rehearsal's vmstat), so one other worker goes on beside it, as a person's other work would
        with solo.alone(beside=1):
            proc = start_capture(desk, cap, log=root / "capture.log")
            try:
                if train0 is not None and train0.returncode == 0:
                    live = _LiveRun(
                        cap, dec0, {**desk.xs.env, "MOCK_BASE_URL": srv.base_url, "MOCK_API_KEY": "test-key"}
                    )
                truth = desk.play(SHORT)
            finally:
                out["rc"] = stop_capture(proc, cap)
                if live is not None:
                    live.capture_stopped()
        if live is not None:  # live goes on after the stop until its --duration
            out["live"] = live.close(srv.requests)
    write_truth(truth, root / "truth.json")
    out.update(truth=truth, log=(root / "capture.log").read_text("utf-8"))
    return out


def _load(path: Path):  # noqa: ANN202
    from proagent.sources.lifetrace import load_lifetrace

    return load_lifetrace(path)


def test_capture_records_every_scripted_event(day: dict) -> None:
    assert day["rc"] == 0, day["log"]
    log = _load(day["cap"] / "lifetrace.db")
    events = list(log.events)
    match = match_events(day["truth"], events)
    for t in day["truth"]["events"]:
        j = match[t["index"]]
        assert j is not None, t
        assert events[j].app_name == t["app"], (t, events[j])
    # every scripted event is an event of its own, the same-browser switches too (the tab rule)
    assert len({match[t["index"]] for t in day["truth"]["events"]}) == len(day["truth"]["events"])
    tabs = [t for t in day["truth"]["events"] if t["tab"]]
    assert [t["page"] for t in tabs] == ["gemini", "inbox"]
    assert events[match[tabs[0]["index"]]].window_title == PAGES["gemini"].window
    # the second visit of the chat page shows byte-identical screens (the case curate's dedup met)
    chats = [events[match[t["index"]]] for t in day["truth"]["events"] if t["page"] == "chat"]
    assert len(chats) == 2
    h = [{hashlib.sha256(s.path.read_bytes()).hexdigest() for s in c.screenshots} for c in chats]
    assert h[0] & h[1]
    for p in [day["cap"], day["cap"] / "screenshots"]:
        assert stat.S_IMODE(p.stat().st_mode) == 0o700
    for f in [day["cap"] / "lifetrace.db", *(day["cap"] / "screenshots").iterdir()]:
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    # the typed commands changed text only: each one is stored
    term = [events[match[t["index"]]] for t in day["truth"]["events"] if t["page"] == "term"]
    assert all(len(e.screenshots) >= 1 for e in term)
    assert sum(len(e.screenshots) for e in term) > len(term)  # the output of the typed commands
    texts = [s.ocr_text for e in events for s in e.screenshots]
    assert planted_text_share(day["truth"], texts) >= 0.5  # OCR still runs at 1 per 2 s; curate re-reads


@pytest.fixture(scope="module")
def published(day: dict) -> dict:
    """``proagent curate``, one review decision of each kind, curate again, ``proagent annotate``
    (a loopback annotator answering from the screen text it is sent) on the first capture."""
    root, cap = day["root"], day["cap"]
    cur, ann = root / "curated", root / "annotated"
    out = {"curated": cur, "annotated": ann, "curate_1": _proagent("curate", str(cap), "--out", str(cur))}
    out["decided"] = review_one_of_each(cur) if out["curate_1"].returncode == 0 else {}
    out["curate_2"] = _proagent("curate", str(cap), "--out", str(cur))
    with MockOpenAI(screen_text_annotator) as srv:  # answers from the screen text annotate sends
        out["annotate"] = _proagent(
            "annotate",
            str(cur),
            "--out",
            str(ann),
            "--annotator",
            "text:openai-api/mock/screen-reader",
            "--display",
            "none",
            "--log-dir",
            str(root / "logs-annotate"),
            env={"MOCK_BASE_URL": srv.base_url, "MOCK_API_KEY": "test-key"},
        )
    return out


def test_chain_capture_curate_annotate_eval(day: dict, published: dict) -> None:
    from proagent.bench.samples import SampleConfig, build_samples
    from proagent.curate._screen import ocr_lines
    from proagent.sources.load import load_events

    root, cap, truth = day["root"], day["cap"], day["truth"]
    cur = published["curated"]
    r = published["curate_1"]
    assert r.returncode == 0, r.stdout + r.stderr
    assert "<user>" not in r.stdout and str(cur / "capture" / "lifetrace_privacy_processed.db") in r.stdout
    decided = published["decided"]
    r = published["curate_2"]
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 screened now" in r.stdout or "screened now" in r.stdout

    raw = list(_load(cap / "lifetrace.db").events)
    kept = list(_load(cur / "capture").events)
    passing = [e for e in raw if e.end is not None and e.duration is not None and e.duration >= 3 and e.screenshots]
    assert len(kept) == len(passing), "an event was lost in curation"
    assert "no valid screenshot" not in (cur / "curation.jsonl").read_text("utf-8")
    match = match_events(truth, kept)
    assert all(match[t["index"]] is not None for t in truth["events"] if t["seconds"] >= 3)

    priv = {d["screenshot_id"]: d for d in map(json.loads, (cur / "privacy.jsonl").read_text("utf-8").splitlines())}
    for action, sid in decided.items():
        assert priv[sid]["action"] == action and priv[sid]["phase"] == "review", priv[sid]
    assert priv[decided["blur"]]["applied"] == "blurred whole screen"
    assert any(d.get("duplicate_of") for d in priv.values()), "the revisited chat page is a reference"
    for p in [cur, *cur.rglob("*")]:
        assert stat.S_IMODE(p.stat().st_mode) == (0o700 if p.is_dir() else 0o600), p

    ann = published["annotated"]
    r = published["annotate"]
    assert r.returncode == 0, r.stdout + r.stderr
    logs = root / "logs-eval"
    with MockOpenAI(lambda body: "Yes") as srv:  # a decider that always offers help (reports its token usage)
        r = _proagent(
            "eval",
            "--data",
            str(ann),
            "--split",
            "all",
            "--model",
            "openai-api/mock/always-yes",
            "--display",
            "none",
            "--log-dir",
            str(logs),
            env={"MOCK_BASE_URL": srv.base_url, "MOCK_API_KEY": "test-key"},
        )
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads((logs / "results.json").read_text("utf-8"))
    events = load_events(ann)
    want = build_samples(events, SampleConfig(train_fraction=0.0))
    assert res["n"] == len(want) and res["n_positive"] == sum(s.label for s in want)
    llm = [e for e in events if e.is_llm_event]
    assert len(llm) == sum(1 for t in truth["events"] if t["is_llm"])  # both chat visits, the revisit too
    assert res["n_positive"] >= 1

    # no planted value anywhere in what is published (curated and annotated copies)
    assert pii_leaks(truth, [cur, ann]) == []
    # the blurred document: none of its lines readable
    blurred = next(s for e in kept for s in e.screenshots if s.id == decided["blur"])
    read = "".join("".join(ocr_lines(blurred.path)).split()).lower()
    for line in PAGES["doc"].texts:
        assert "".join(line.split()).lower()[:20] not in read


HOW = (
    "Need help: Yes\nIntention: Debugging & Error Resolution\n"
    "Query: Why does app.py raise KeyError: 'user_id' after login?"
)
"""The loopback How-to-Assist model's answer (a query, so each offer quotes one)."""
MIN_GAP_MIN = 0.25
"""``--min-gap`` in the live run: 15 s (the default 10 minutes would allow one offer in 2 minutes).
The run also passes ``--cost-miss 4`` (offers at P(help) >= 0.2 instead of 1/3): the dev-trained
decider is near chance on this desktop (P 0.34-0.55 in a run), so the lower threshold keeps the
three offers :data:`ANSWERS` needs from hanging on its second decimal."""
ANSWERS = (("terminal", "a"), ("page", "accepted"), ("terminal", "d"))
"""How the person answers the live offers: one accept typed on live's terminal, one accept on its
page, one dismiss typed. The terminal's accept goes to the first offer whose help context shows the
planted traceback (:func:`_shows_error`; the page's accept to an earlier offer, if any); a dismiss
starts live's default 15-minute cooldown, so it comes last and no offer follows it."""
ERROR = r"KeyError[\W_]+user_id"
"""The error the scripted xterm shows (``python3 app.py``: ``KeyError: 'user_id'``, as OCR reads its
punctuation): the accepted help must name it."""
ERROR_LINE = rf"^\s*{ERROR}[\W_]*$"
"""The traceback's last line alone (not the chat question that names the same error)."""


def _how_or_help(body: dict) -> str:
    """The loopback model of the live run: a help request (live's help system prompt) is answered
    from the last error line of the screen text and events it was sent (not from its question,
    which :data:`HOW` makes name the error too), any other with :data:`HOW`."""
    import re

    from mock_openai import last_user_text

    first = body["messages"][0]
    if first.get("role") == "system" and "You offered help" in json.dumps(first):
        context = last_user_text(body).rsplit("\nQuestion:", 1)[0]  # the screen and events, not the question
        errors = re.findall(r"^.*\b\w+Error\b.*$", context, re.MULTILINE)
        if errors:
            return f"The screen shows `{errors[-1].strip()}`: set session['user_id'] at login before reading it."
        return "No error on screen; what are you trying to do?"
    return HOW


def _shows_error(sample_json: str) -> bool:
    """Whether live's help for an offer at this moment (its context as sent, redacted) holds the
    traceback's error line (:data:`ERROR_LINE`)."""
    import re

    from proagent.live import help_context, sample_from_json

    text = help_context(sample_from_json(sample_json), None, "redacted").text
    return re.search(ERROR_LINE, text, re.MULTILINE) is not None


class _Terminal:
    """A command on a pseudo-terminal, as a person runs it: stdin is a tty (so ``proagent live``
    reads typed answers), what it prints is collected in a thread."""

    def __init__(self, cmd: list[str], env: dict[str, str]) -> None:
        import pty
        import threading

        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
        os.close(slave)
        self.text = ""
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while True:
            try:
                b = os.read(self.master, 4096)
            except OSError:  # EIO: the command exited
                return
            if not b:
                return
            self.text += b.decode("utf-8", "replace")

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def close(self, timeout: float) -> int:
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait(30)
        self._thread.join(5)
        os.close(self.master)
        return rc


QUERY_WAIT_S = 60.0
"""How long the answerer waits for an offer's query (the loopback How model answers at once; the
rest is live's grounding and a loaded machine)."""


def _answer_offers(term: _Terminal, page_url_file: Path, done, answered: dict[int, tuple[str, str]]) -> None:  # noqa: ANN001
    """Answer each offer live prints as :data:`ANSWERS` says, in order, until ``done`` is set: the
    terminal's accept waits for an offer whose help context shows the planted error (an offer before
    it takes the page's accept, or none once that is used). As a person reads an offer's question
    before answering it, an offer is answered once its query is filled in (its How call ended), or
    :data:`QUERY_WAIT_S` after it was seen: an answer cancels a How call still running (issue 32),
    which would leave the offer without the query the test asserts."""
    import re
    import sqlite3
    import urllib.request

    db = page_url_file.parent / "feedback.db"
    skipped: set[int] = set()
    seen: dict[int, float] = {}
    while not done.wait(0.3):
        for m in re.finditer(r"offer (\d+) at \d\d:\d\d:\d\d", term.text):
            oid = int(m[1])
            if oid in answered or oid in skipped or len(answered) >= len(ANSWERS):
                continue
            con = sqlite3.connect(db.resolve().as_uri() + "?mode=ro", uri=True)
            try:
                row = con.execute("SELECT sample_json, query FROM offers WHERE id = ?", (oid,)).fetchone()
            finally:
                con.close()
            if row[1] is None and time.monotonic() - seen.setdefault(oid, time.monotonic()) < QUERY_WAIT_S:
                break  # the offer is shown, its query not yet: read it first (answering cancels its How call)
            used = set(answered.values())
            if ("terminal", "a") not in used and _shows_error(row[0]):
                how, what = "terminal", "a"
            elif ("page", "accepted") not in used:
                how, what = "page", "accepted"
            elif ("terminal", "a") not in used:
                skipped.add(oid)  # left unanswered: the terminal's accept waits for the error
                continue
            else:
                how, what = "terminal", "d"
            answered[oid] = (how, what)
            if how == "terminal":
                term.type(f"{what} {oid}")
            else:  # the page's own request: POST /respond with the run's token
                url = page_url_file.read_text().strip().replace("/?", "/respond?")
                req = urllib.request.Request(
                    url,
                    data=json.dumps({"id": oid, "response": what}).encode(),
                    method="POST",
                    headers={"Content-Type": "application/json"},
                )
                urllib.request.urlopen(req, timeout=10).read()


def _app_at(truth: dict, t, slack: float = 2.0) -> set[str]:  # noqa: ANN001
    """Apps in front at local time ``t`` by the ground truth (both, within ``slack`` s of a switch)."""
    from datetime import datetime, timedelta

    from scenarios.desktop import TIME_FORMAT

    d = timedelta(seconds=slack)
    return {
        e["app"]
        for e in truth["events"]
        if datetime.strptime(e["start"], TIME_FORMAT) - d <= t <= datetime.strptime(e["end"], TIME_FORMAT) + d
    }


class _LiveRun:
    """``proagent live --watch CAP`` (the decider, a loopback How model :func:`_how_or_help`,
    ``--notify terminal,page``, ``--min-gap`` :data:`MIN_GAP_MIN`, ``--cost-miss 4``, ``--duration``
    :data:`LIVE_SECONDS`) on a pseudo-terminal, started beside a running capture; returns once its
    offers page is up, with a thread answering its offers as :data:`ANSWERS` says."""

    def __init__(self, cap: Path, decider: Path, env: dict[str, str]) -> None:
        import threading

        self.cap, self.done, self.answered = cap, threading.Event(), {}
        self.t_stop = None
        self.ran_past_stop = False
        self.term = _Terminal(
            [sys.executable, "-m", "proagent.cli", "live", "--watch", str(cap), "--decider", str(decider)]
            + ["--model", "openai-api/mock/how", "--notify", "terminal,page", "--min-gap", str(MIN_GAP_MIN)]
            + ["--cost-miss", "4", "--duration", f"{LIVE_SECONDS}s"],
            env=env,
        )
        end = time.monotonic() + 180
        while not (cap / "page-url").exists() and self.term.proc.poll() is None and time.monotonic() < end:
            time.sleep(0.2)
        self.page_up = (cap / "page-url").exists()
        if self.page_up:
            threading.Thread(
                target=_answer_offers, args=(self.term, cap / "page-url", self.done, self.answered), daemon=True
            ).start()

    def capture_stopped(self) -> None:
        """Called once ``capture stop`` returned: notes the time and whether live still runs."""
        from datetime import datetime

        self.t_stop = datetime.now()
        self.ran_past_stop = self.term.proc.poll() is None

    def close(self, requests: list[dict]) -> dict:
        """Wait for live's end (its ``--duration``); what the live test asserts on."""
        self.done.set()
        rc = self.term.close(LIVE_SECONDS + 120)
        return {
            "rc": rc,
            "out": self.term.text.replace("\r\n", "\n"),
            "page_up": self.page_up,
            "answered": dict(self.answered),
            "t_stop": self.t_stop,
            "ran_past_stop": self.ran_past_stop,
            "requests": list(requests),
        }


LIVE_SECONDS = int(SHORT.seconds) + 75 + 60
"""Live's ``--duration``: the script, the window switches and >= one ``--every`` idle, and the up to
60 s capture's stop reads its OCR backlog (``--ocr-finish``'s default): live goes on past the stop."""


def test_chain_live_answers_retrain_eval(day: dict, published: dict) -> None:
    """Past eval: ``proagent live --watch`` ran on the day's capture while the script played (the
    ``day`` fixture: a When decider trained on the dev sessions, a loopback How model,
    ``--notify terminal,page``, ``--min-gap 0.25`` = 15 s, ``--cost-miss 4``); its offers answered as a
    person would, two typed in the terminal, two on the page; the accept typed in the terminal gets
    its help streamed there, naming the planted error; no planted value in anything sent to the
    model; capture stopped while live goes on; then ``proagent train when --feedback`` on that
    live folder and eval of the annotated capture with the dev decider and the retrained one."""
    import sqlite3
    from datetime import datetime

    from shared_data import DEV

    if DEV is None:
        pytest.skip("ProactiveBench dev sessions not present")
    root = day["root"]
    ann = published["annotated"]
    assert published["annotate"].returncode == 0, published["annotate"].stdout + published["annotate"].stderr
    assert day["train0"][0] == 0, day["train0"][1]
    dec0, dec1 = day["decider"], root / "deciders" / "mine"
    cap2, truth2, live = day["cap"], day["truth"], day["live"]
    assert live is not None and live["page_up"], live and live["out"]
    answered, t_stop = live["answered"], live["t_stop"]
    with MockOpenAI(_how_or_help) as srv:
        mock = {"MOCK_BASE_URL": srv.base_url, "MOCK_API_KEY": "test-key"}
        out, rc_cap, rc_live = live["out"], day["rc"], live["rc"]
        live_ran_past_stop = live["ran_past_stop"]
        assert rc_cap == 0, day["log"]
        assert rc_live == 0, out
        assert live_ran_past_stop, out
        assert "moments decided" in out and "offers page: http://127.0.0.1:" in out, out

        con = sqlite3.connect((cap2 / "feedback.db").resolve().as_uri() + "?mode=ro", uri=True)
        offers = con.execute("SELECT id, moment, created_at, app_name, query FROM offers ORDER BY id").fetchall()
        decisions = con.execute("SELECT moment, trigger, outcome, reason FROM decisions ORDER BY id").fetchall()
        responses = con.execute("SELECT offer_id, response, source, responded_at FROM responses ORDER BY id").fetchall()
        con.close()
        assert len(offers) >= len(ANSWERS), (offers, decisions, out)
        # no two offers closer than --min-gap
        made = [datetime.fromisoformat(o[2]) for o in offers]
        gaps = [(b - a).total_seconds() for a, b in zip(made, made[1:])]
        assert min(gaps) >= 60 * MIN_GAP_MIN - 0.5, (gaps, offers)
        # no decision after capture stopped
        late = [d for d in decisions if datetime.fromisoformat(d[0]) > t_stop]
        assert not late, (late, t_stop)
        # each offer names the app in front when it was decided, and quotes the How model's query
        for oid, moment, _, app, query in offers:
            assert app in _app_at(truth2, datetime.fromisoformat(moment)), (oid, moment, app, truth2["events"])
            assert query and query.startswith("Why does app.py raise KeyError"), (oid, query, offers, responses, out)
        # the answers typed in the terminal and posted on the page, each in feedback.db from its source
        assert {(oid, how) for oid, (how, _) in answered.items()} == {(r[0], r[2]) for r in responses}, (
            answered,
            responses,
        )
        want = {oid: {"a": "accepted", "d": "dismissed"}.get(what, what) for oid, (_, what) in answered.items()}
        assert {r[0]: r[1] for r in responses} == want
        for oid, (how, what) in answered.items():
            if how == "terminal":
                assert f"offer {oid}: {want[oid]}" in out, out

        assert sorted(answered.values()) == sorted(ANSWERS), (answered, offers, decisions)
        # the dismiss (the last answer) starts live's cooldown: no offer made after it (the answerer reads
        # each offer's query first, so an offer may be made between the dismissed offer and its dismiss)
        dismissed = max(datetime.fromisoformat(r[3]) for r in responses if r[1] == "dismissed")
        assert all(t <= dismissed for t in made), ("an offer within --cooldown of the dismiss", made, responses)

        # issue 32: the offer accepted in the terminal is answered there, and the answer names the
        # planted error (OCR of the xterm -> the moment's help context -> the model -> the terminal)
        typed = next(oid for oid, a in answered.items() if a == ("terminal", "a"))
        import re

        assert re.search(rf"help {typed}: The screen shows `\s*{ERROR}[\W_]*`", out), out
        con = sqlite3.connect((cap2 / "feedback.db").resolve().as_uri() + "?mode=ro", uri=True)
        turns = con.execute("SELECT offer_id, role, status, send_screen, text FROM help_turns ORDER BY id").fetchall()
        con.close()
        answer = [t for t in turns if t[0] == typed and t[1] == "assistant"]
        assert answer and answer[0][2] == "done" and answer[0][3] == "redacted" and re.search(ERROR, answer[0][4]), (
            turns
        )
        # nothing live sent to the (remote) model holds a planted value: How calls and help, redacted
        sent = "".join(json.dumps(b, ensure_ascii=False) for b in live["requests"])
        sent = "".join(sent.split())
        assert [p for p in truth2["pii"] if "".join(p["value"].split()) in sent] == []

        r = _proagent("train", "when", "--data", str(DEV), "--feedback", str(cap2), "--out", str(dec1))
        assert r.returncode == 0, r.stdout + r.stderr
        m = json.loads((dec1 / "manifest.json").read_text("utf-8"))
        fb = [s for s in m["training_data"] if s["selection"] == "feedback"]
        # the answers, and the implicit labels of the quiet moments (issue 33: own LLM use after a quiet
        # moment is a miss, steady work a weak negative), both learned from feedback.db
        assert len(fb) == 1 and fb[0]["n"] >= len(answered) and fb[0]["n_positive"] >= 2, m["training_data"]

        for name, decider in (("dev", dec0), ("mine", dec1)):
            logs = root / f"logs-eval-{name}"
            r = _proagent(
                "eval",
                "--data",
                str(ann),
                "--split",
                "all",
                "--decider",
                str(decider),
                "--model",
                "openai-api/mock/how",
                "--display",
                "none",
                "--log-dir",
                str(logs),
                env=mock,
            )
            assert r.returncode == 0, r.stdout + r.stderr
            res = json.loads((logs / "results.json").read_text("utf-8"))
            assert res["n"] >= 1 and res["decider"], res
