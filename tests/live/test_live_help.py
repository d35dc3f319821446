"""Accept = help (issue 32): an accepted offer is answered from the moment's screen, streamed, with
follow-ups and ratings in feedback.db; screen text to a remote model is redacted by curate's PII
recognizers (a loopback mock OpenAI server records what was sent)."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading
import time
from pathlib import Path

import pytest
from help_fixtures import PLANTED, SCREEN, scripted_reply, store_with_offers, traceback_sample
from mock_openai import MockOpenAI, last_user_text

from proagent.errors import DataError
from proagent.live import LiveHelp, ScriptedHelpModel, help_context, make_help_model, rated_help, screen_region
from proagent.live._help import help_messages


def _wait(cond, seconds: float = 20.0) -> None:  # noqa: ANN001
    end = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


def test_screen_region_starts_at_the_error_and_is_compact() -> None:
    region = screen_region(SCREEN)
    assert region.splitlines()[3] == "Traceback (most recent call last):"  # three rows above the error
    assert "KeyError: 'user_id'" in region and "app.py - editor" not in region
    long = "\n".join(f"row {i} of an editor" for i in range(500))
    r = screen_region(long, 300)
    assert len(r) <= 300 and r.endswith("row 499 of an editor")  # no error: the newest rows
    assert screen_region("") == "" and screen_region("\n \n") == ""


def test_context_raw_and_redacted() -> None:
    s = traceback_sample()
    raw = help_context(s, "Why does app.py raise KeyError: 'user_id'?", "raw")
    assert "KeyError: 'user_id'" in raw.text and PLANTED["EMAIL"] in raw.text and raw.placeholders == {}
    assert raw.question == "Question: Why does app.py raise KeyError: 'user_id'?"
    red = help_context(s, f"Why can {PLANTED['EMAIL']} not log in?", "redacted")
    sent = red.text + red.question
    for v in PLANTED.values():
        assert v not in sent, v
    assert "[EMAIL]" in sent and red.placeholders.get("email", 0) >= 3  # title, screen, question
    assert "KeyError: 'user_id'" in red.text  # the error itself stays
    never = help_context(s, None, "never")
    assert "Traceback" not in never.text and "not sent" in never.text and PLANTED["EMAIL"] not in never.text
    assert "trying to do" in never.question  # the generic question
    assert raw.sha256 != red.sha256 and len(red.sha256) == 64
    with pytest.raises(ValueError):
        help_context(s, None, "sometimes")


def test_accept_streams_an_answer_then_follow_up_and_rating(tmp_path: Path) -> None:
    st, offers = store_with_offers(tmp_path)
    model = ScriptedHelpModel(scripted_reply, delay=0.02)
    help = LiveHelp(st, model, lambda: traceback_sample().time)
    events: list[tuple[str, int, str]] = []
    help.subscribe(lambda k, o, t: events.append((k, o, t)))
    oid = offers[0].id
    assert help.follow_up(oid, "and then?") == "no answer to follow up yet (accept the offer first)"
    assert help.accept(oid, "test") and not help.accept(oid, "test")  # once
    _wait(lambda: not help.busy(oid))
    kinds = [k for k, _, _ in events]
    assert kinds[:2] == ["reading", "start"] and kinds[-1] == "done" and kinds.count("delta") > 5  # streamed
    assert events[0][2] == "reading: Terminal - deploy@203.0.113.57: ~/myapp, 9 lines of screen text"
    turns = help.turns(oid)
    assert [t["role"] for t in turns] == ["user", "assistant"]
    assert "KeyError: 'user_id'" in turns[1]["text"] and turns[1]["status"] == "done"
    assert 0 < turns[1]["first_token_seconds"] <= turns[1]["total_seconds"]
    # the first question is the offer's query, with the screen's error in the context
    first = model.requests[0]
    assert first[0]["role"] == "system" and "Question: Why does app.py raise KeyError" in first[1]["content"]
    assert "Traceback (most recent call last)" in first[1]["content"]
    assert help.follow_up(oid, "   ") == "empty question"
    assert help.follow_up(oid, "What if the user is not logged in?", "test") is None
    _wait(lambda: not help.busy(oid))
    second = model.requests[1]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[1] == first[1] and second[2]["content"] == turns[1]["text"]  # same context, same first turn
    assert help.rate(oid, 1, "test") and help.rate(oid, -1, "test") and not help.rate(offers[1].id, 1)
    assert help.turns(oid)[-1]["rating"] == -1
    help.close()
    st.close()
    labels = rated_help(tmp_path)
    assert (
        len(labels) == 1 and labels[0]["rating"] == -1 and labels[0]["question"] == "What if the user is not logged in?"
    )
    assert labels[0]["sample"].current.app_name == "Terminal"
    assert stat.S_IMODE(os.stat(tmp_path / "feedback.db").st_mode) == 0o600
    with sqlite3.connect(tmp_path / "feedback.db") as c:
        rows = c.execute(
            "SELECT role, completion_tokens, total_seconds, send_screen, sent_sha256 FROM help_turns ORDER BY id"
        ).fetchall()
    assert [r[0] for r in rows] == ["user", "assistant", "user", "assistant"]
    assert rows[1][1] > 0 and rows[1][2] > 0 and rows[1][3] == "raw" and len(rows[1][4]) == 64
    # a damaged rating (a hand edit, a bad disk) is one error naming its row and the repair, not a traceback
    with sqlite3.connect(tmp_path / "feedback.db") as c:
        c.execute("UPDATE help_ratings SET rated_at = 'yesterday' WHERE id = (SELECT max(id) FROM help_ratings)")
    with pytest.raises(DataError, match=r"help rating \d+ \(offer \d+\) is damaged .*DELETE FROM help_ratings"):
        rated_help(tmp_path)


def test_accept_never_blocks_the_caller(tmp_path: Path) -> None:
    st, offers = store_with_offers(tmp_path)
    gate = threading.Event()
    model = ScriptedHelpModel(lambda m: (gate.wait(10), "done")[1], delay=0.0)
    help = LiveHelp(st, model, lambda: traceback_sample().time)
    t0 = time.perf_counter()
    assert help.accept(offers[0].id) and help.accept(offers[1].id)
    assert time.perf_counter() - t0 < 0.5  # queued: the decision loop goes on
    assert help.busy(offers[0].id) and help.busy(offers[1].id)
    queued = help.turns(offers[1].id)[0]  # queued behind the first, and says so with its place
    assert queued["status"] == "queued" and queued["note"] == f"queued: 2nd, after the answer to offer {offers[0].id}"
    gate.set()
    _wait(lambda: not help.busy(offers[1].id))
    assert help.turns(offers[1].id)[1]["text"] == "done"
    assert "trying to do" in help.turns(offers[1].id)[0]["text"]  # a generic offer: the generic question
    help.close()
    st.close()


def test_a_failing_model_is_an_error_turn_and_the_helper_goes_on(tmp_path: Path) -> None:
    st, offers = store_with_offers(tmp_path)
    calls = []

    def reply(messages):  # noqa: ANN001, ANN202
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("model unreachable")
        return "fine"

    help = LiveHelp(st, ScriptedHelpModel(reply, delay=0), lambda: traceback_sample().time)
    seen = []
    help.subscribe(lambda k, o, t: seen.append((k, t)))
    help.accept(offers[0].id)
    _wait(lambda: not help.busy(offers[0].id))
    assert ("error", "model unreachable") in seen and help.turns(offers[0].id)[-1]["status"] == "error"
    help.accept(offers[1].id)
    _wait(lambda: not help.busy(offers[1].id))
    assert help.turns(offers[1].id)[-1]["text"] == "fine"
    help.close()
    st.close()


def test_no_model_accept_is_only_stored(tmp_path: Path) -> None:
    st, offers = store_with_offers(tmp_path)
    help = LiveHelp(st, None, lambda: traceback_sample().time)
    assert not help.accept(offers[0].id) and help.follow_up(offers[0].id, "x") == "no help model (--model none)"
    assert help.turns(offers[0].id) == []
    help.close()
    st.close()


def test_remote_model_gets_no_planted_pii(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The help through an OpenAI-compatible model on loopback: redacted by default, every
    request recorded, no planted value in any of them (follow-up included)."""
    st, offers = store_with_offers(tmp_path)
    with MockOpenAI(lambda body: "Set `session['user_id']` at login.") as srv:
        srv.env(monkeypatch)
        model = make_help_model("openai-api/mock/gpt-test", {}, None)
        assert not model.local
        help = LiveHelp(st, model, lambda: traceback_sample().time)
        assert help.send_screen == "redacted"
        got = []
        help.subscribe(lambda k, o, t: got.append((k, t)))
        help.accept(offers[0].id)
        _wait(lambda: not help.busy(offers[0].id))
        assert help.follow_up(offers[0].id, "And with flask-login?") is None
        _wait(lambda: not help.busy(offers[0].id))
        help.close()
        requests = list(srv.requests)
    assert len(requests) == 2 and ("done", "Set `session['user_id']` at login.") in got
    for body in requests:
        text = json.dumps(body, ensure_ascii=False)
        for v in PLANTED.values():
            assert v not in text, v
        assert "KeyError: 'user_id'" in text and "[EMAIL]" in text
    with sqlite3.connect(tmp_path / "feedback.db") as c:
        row = c.execute(
            "SELECT send_screen, sent_sha256, placeholders, text FROM help_turns WHERE role='assistant' "
            "ORDER BY id LIMIT 1"
        ).fetchone()
    assert row[0] == "redacted" and len(row[1]) == 64 and json.loads(row[2])["email"] >= 2
    st.close()


@pytest.mark.slow
def test_local_model_streams_from_llama_cpp(tmp_path: Path) -> None:
    """SmolLM2 through the llama.cpp child: pieces arrive one by one, tokens and timings stored."""
    st, offers = store_with_offers(tmp_path)
    model = make_help_model("local/smollm2-135m", {"n_threads": "1"})
    help = LiveHelp(st, model, lambda: traceback_sample().time)
    pieces = []
    help.subscribe(lambda k, o, t: pieces.append(k))
    help.show(offers[0])  # the offer is on screen: its prompt is read ahead
    _wait(lambda: offers[0].id in help.prepared, 120)
    help.accept(offers[0].id)
    _wait(lambda: not help.busy(offers[0].id), 120)
    t = help.turns(offers[0].id)[-1]
    assert t["status"] == "done" and t["completion_tokens"] > 3 and pieces.count("delta") > 3
    assert help.follow_up(offers[0].id, "Show the fixed line only.") is None
    _wait(lambda: not help.busy(offers[0].id), 120)
    help.close()
    with sqlite3.connect(tmp_path / "feedback.db") as c:
        rows = c.execute(
            "SELECT cached_tokens, prompt_tokens FROM help_turns WHERE role='assistant' ORDER BY id"
        ).fetchall()
    assert rows[0][0] > 100 and rows[0][1] < 5  # the answer reused the prompt read ahead (llama.cpp prefix reuse)
    assert rows[1][0] > 100  # the follow-up reused the first turn's prompt
    st.close()


def test_an_offer_on_screen_has_its_prompt_read_ahead(tmp_path: Path) -> None:
    st, offers = store_with_offers(tmp_path)
    read: list[list[dict[str, str]]] = []

    class Prefilling(ScriptedHelpModel):
        def prefill(self, messages):  # noqa: ANN001, ANN202
            read.append(messages)
            return {}

    model = Prefilling(scripted_reply, delay=0)
    help = LiveHelp(st, model, lambda: traceback_sample().time)
    help.show(offers[0])
    _wait(lambda: offers[0].id in help.prepared)
    help.accept(offers[0].id)
    _wait(lambda: not help.busy(offers[0].id))
    assert read == [model.requests[0]]  # the prompt read ahead is the one Accept sends
    help.show(offers[0])  # answered: nothing more to read ahead
    help.close()
    help.close()  # twice is harmless (the run closes it as a notifier and as the helper)
    assert len(read) == 1
    st.close()


def test_help_messages_order() -> None:
    ctx = help_context(traceback_sample(), "q?", "raw")
    m = help_messages(ctx, [("assistant", "a1"), ("user", "f1")])
    assert [x["role"] for x in m] == ["system", "user", "assistant", "user"] and m[1]["content"].endswith(
        "Question: q?"
    )


def test_help_benchmark_moments_from_the_desktop_script() -> None:
    """benchmarks/help.py's default moments: the three first chat questions of the long desktop day,
    each at the moment before it, with the screen in front and the reply the person got."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "help.py"
    spec = importlib.util.spec_from_file_location("help_benchmark", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    ms = bench.moments(bench.scripted_events())
    assert [q for _, q, _ in ms] == [
        "Why does my Flask app raise KeyError: 'user_id' right after login?",
        "如何用 pandas 按月份汇总销售额？",
        "Translate this sentence into French: The meeting is moved to Thursday.",
    ]
    second = ms[1][0]  # the pandas question comes right after the failing program in the xterm
    assert second.current.app_name == "xterm" and "KeyError: 'user_id'" in second.current.screenshots[0].ocr_text
    assert all(s.current.id != s.event_id for s, _, _ in ms)  # the moment before the query: not the chat itself
    assert bench.paired_ci([3.0, 5.0], [1.0, 1.0])[0] == 3.0


def test_every_request_live_sends_to_a_remote_model_is_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 32, privacy: ``proagent live`` with a remote model (a loopback mock OpenAI server) on a
    capture whose window titles and screen text hold the planted values. The How call (the offer's
    query), the model's warm-up and the help after Accept are all recorded by the server: no planted
    value is in any request, the error still is, and the log has the hashes and placeholder counts only.
    (A model name of its own: inspect keeps each model it made, with its server's address.)
    The mock echoes an e-mail address of the How prompt into its query: a leak would reach the offer."""
    import logging
    import re
    from datetime import datetime

    from click.testing import CliRunner
    from help_fixtures import write_capture

    from proagent.cli import cli
    from proagent.live import FeedbackStore

    cap, out = tmp_path / "capture", tmp_path / "live"
    t0 = datetime(2026, 12, 3, 9, 0, 0)
    ids = write_capture(
        cap,
        t0,
        [
            ("Firefox", f"Inbox - {PLANTED['EMAIL']} - Mail", f"From {PLANTED['EMAIL']}\nHi"),
            ("Code", "app.py - myapp", "def login(request):\n    return session['user_id']"),
            ("Terminal", f"deploy@{PLANTED['IP']}: ~/myapp", SCREEN),
            ("Firefox", "Flask docs - sessions", ""),
        ],
    )
    yes = tmp_path / "yes.txt"
    yes.write_text(f"{ids[2]}\n{ids[3]}\n")

    def reply(body: dict) -> str:
        system = json.dumps(body["messages"][0]) if body["messages"][0]["role"] == "system" else ""
        user = last_user_text(body)
        if "Intention" in system:  # the How call
            seen = re.findall(r"[\w.+-]+@[\w-]+\.[\w.]+|\[EMAIL\]", user)
            return (
                "Need help: Yes\nIntention: Debugging & Error Resolution\n"
                f"Query: Why does app.py raise KeyError: 'user_id' for {seen[0] if seen else 'me'}?"
            )
        return "Set `session['user_id']` at login; the traceback ends in KeyError: 'user_id'."

    with MockOpenAI(reply) as srv:
        srv.env(monkeypatch)
        with caplog.at_level(logging.INFO, logger="proagent.live"):
            r = CliRunner().invoke(
                cli,
                [
                    "live",
                    "--replay",
                    str(cap),
                    "--out",
                    str(out),
                    "--yes-at",
                    str(yes),
                    "--model",
                    "openai-api/mock/gpt-live",
                    "--speed",
                    "0",
                    "--notify",
                    "none",
                    "--settle",
                    "0",
                ],
            )
            assert r.exit_code == 0, r.output
            st = FeedbackStore(out)
            offers = st.offers()
            assert offers and offers[0]["query"], (r.output, offers)
            model = make_help_model("openai-api/mock/gpt-live", {}, None)
            help = LiveHelp(st, model, lambda: t0)  # what an Accept in that run does
            assert help.accept(offers[0]["id"])
            _wait(lambda: not help.busy(offers[0]["id"]))
            help.close()
            st.close()
        requests = list(srv.requests)
    how = [b for b in requests if "Intention" in json.dumps(b["messages"][:1])]
    assert len(how) >= 2 and len(requests) > len(how)  # the warm-up, at least one How call, the help
    for body in requests:
        text = json.dumps(body, ensure_ascii=False)
        for v in PLANTED.values():
            assert v not in text, v
    assert any("KeyError: 'user_id'" in json.dumps(b, ensure_ascii=False) and "[EMAIL]" in json.dumps(b) for b in how)
    assert "[EMAIL]" in offers[0]["query"]  # the model saw the placeholder, never the address
    logged = "\n".join(rec.getMessage() for rec in caplog.records)
    assert re.search(
        r"how call for \S+: to openai-api/mock/gpt-live \(send-screen redacted\), sha256 [0-9a-f]{64}, "
        r"placeholders \{.*'email': [1-9]",
        logged,
    ), logged
    for v in PLANTED.values():
        assert v not in logged, v


def test_how_prompt_under_each_send_screen() -> None:
    """The How call's user message: raw as the benchmark's prompt, redacted with typed placeholders
    (titles and screen), never without any screen text; the default follows the model."""
    from proagent.agent.solvers import user_prompt
    from proagent.live import HowModel

    s = traceback_sample()
    assert HowModel("mockllm/model").send_screen == "raw"
    assert HowModel("mockllm/model").prompt(s) == user_prompt(s, "zero-shot")
    red_model = HowModel("mockllm/model", send_screen="redacted")
    red = red_model.prompt(s)
    assert "KeyError: 'user_id'" in red and "[EMAIL]" in red and "[IP_ADDRESS]" in red
    assert red_model.last_sent["placeholders"]["email"] >= 2 and len(red_model.last_sent["sha256"]) == 64
    never = HowModel("mockllm/model", send_screen="never").prompt(s)
    assert "Traceback" not in never and "(no screen text)" in never and "Terminal" in never
    for text in (red, never):
        for v in PLANTED.values():
            assert v not in text, v
    with pytest.raises(ValueError):
        HowModel("mockllm/model", send_screen="sometimes")
