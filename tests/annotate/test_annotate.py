"""``proagent annotate``: first pass, answer parsing, the run through inspect against a
loopback OpenAI-compatible server, the processed database and annotations.jsonl, and
the end-to-end path raw log -> annotate -> eval / stats."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from lifetrace_fixtures import make_participant
from mock_openai import MockOpenAI, last_user_text

from proagent.annotate import AnswerError, detect_platform, parse_annotation, plan_annotation
from proagent.annotate.records import EventAnnotation
from proagent.cli import cli
from proagent.sources.annotations import load_annotations
from proagent.sources.lifetrace import load_lifetrace
from proagent.sources.load import load_events

MODEL = "openai-api/mock/annotator"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _answer(body: dict) -> str:
    """A well-formed annotation that echoes the first-pass platform of the prompt."""
    text = last_user_text(body)
    m = re.search(r"first-pass hint: (\S+)", text)
    platform = m.group(1) if m else None
    return (
        "Here is the annotation:\n```json\n"
        + json.dumps(
            {
                "is_llm_interaction": True,
                "llm_platform": platform,
                "user_queries": ["How do I fix database is locked?"],
                "llm_responses": ["Close the other connection."],
                "event_summary": "asked an AI how to fix database is locked",
                "detailed_description": "A chat window.",
                "user_intention": "debugging and error resolution",
                "confidence": "90%",
                "rationale": "a chat is visible",
            }
        )
        + "\n```"
    )


# --------------------------------------------------------------------------- first pass and parsing


@pytest.mark.parametrize(
    "app,title,screen,platform,kind",
    [
        ("ChatGPT.exe", "", "", "ChatGPT", "app"),
        ("Google Chrome", "Fix sqlite lock - chat.deepseek.com - Google Chrome", "", "DeepSeek", "domain"),
        ("Microsoft Edge", "Kimi.ai - 帮你看更大的世界 - Microsoft Edge", "", "Kimi", "title"),
        ("豆包", "豆包 - 字节跳动旗下 AI 智能助手", "", "豆包", "app"),
        ("Firefox", "New Tab", "Message ChatGPT\nChatGPT can make mistakes.", "ChatGPT", "screen"),
        ("Google Chrome", "通义千问 - Google Chrome", "", "通义千问", "title"),
    ],
)
def test_first_pass_names_the_platform(app, title, screen, platform, kind):
    hit = detect_platform(app, title, [screen])
    assert hit is not None and (hit.platform, hit.evidence) == (platform, kind)


@pytest.mark.parametrize(
    "app,title,screen",
    [
        ("Visual Studio Code", "main.py - proagent - Visual Studio Code", "def train(model): pass"),
        ("Google Chrome", "Stack Overflow - Where developers learn", "How to read a SQLite database"),
        ("Microsoft Word", "claudette_report.docx - Word", "cursory notes on kimichi"),  # substrings are not names
        # a chat page visible behind the terminal in front (whole-screen capture) is not LLM use
        ("xterm", "python app.py", "ChatGPT\nchatgpt.com/c/1\nMessage ChatGPT\nChatGPT can make mistakes."),
    ],
)
def test_first_pass_ignores_ordinary_screens(app, title, screen):
    assert detect_platform(app, title, [screen]) is None


def test_parse_repairs_fenced_and_truncated_answers():
    a = parse_annotation(_answer({"messages": [{"role": "user", "content": "first-pass hint: chatgpt"}]}))
    assert a["is_llm_event"] and a["llm_platform"] == "ChatGPT"
    assert a["user_intention"] == "Debugging & Error Resolution" and a["confidence"] == pytest.approx(0.9)
    assert a["full_conversation"].startswith("User: How do I fix")
    cut = parse_annotation('{"is_llm_interaction": true, "llm_platform": "doubao", "user_queries": ["帮我翻译这段话')
    assert cut["llm_platform"] == "豆包" and cut["user_queries"] == ("帮我翻译这段话",)
    no = parse_annotation("{'is_llm_interaction': False, 'llm_platform': 'ChatGPT', 'user_queries': ['x'],}")
    assert not no["is_llm_event"] and no["llm_platform"] is None and no["user_queries"] == ()
    long = parse_annotation(json.dumps({"is_llm_interaction": False, "event_summary": " ".join(["word"] * 40)}))
    assert len(long["event_summary"].split()) == 20
    for bad in ("I cannot tell.", '{"summary": "no flag"}', '{"is_llm_interaction": "maybe"}'):
        with pytest.raises(AnswerError):
            parse_annotation(bad)


def test_annotation_record_round_trips_and_the_reader_joins_it(tmp_path):
    a = EventAnnotation(
        user="P01",
        event_id="7",
        is_llm_event=True,
        status="annotated",
        llm_platform="Kimi",
        user_queries=("q",),
        user_intention="Translation",
        confidence=0.7,
        rationale="r",
    )
    assert EventAnnotation.from_json(json.loads(json.dumps(a.to_json()))) == a
    f = tmp_path / "a.jsonl"
    f.write_text(json.dumps(a.to_json()) + "\n", "utf-8")
    got = load_annotations(f).get("P01", 7)
    assert (got.intention, got.llm_platform, got.confidence, got.rationale) == ("Translation", "Kimi", 0.7, "r")


# --------------------------------------------------------------------------- the command


def test_raw_log_is_never_modified_and_needs_out(tmp_path, monkeypatch):
    fx = make_participant(tmp_path / "raw", "P01", variant="2025-11")
    before = _sha(fx.path)
    r = CliRunner().invoke(
        cli, ["annotate", str(tmp_path / "raw"), "--annotator", f"text:{MODEL}", "--log-dir", str(tmp_path / "logs")]
    )
    assert r.exit_code != 0 and "raw LifeTrace database" in r.output and "--out" in r.output
    assert _sha(fx.path) == before and not list((tmp_path / "raw").rglob("annotations.jsonl"))


def _show_query_on_screen(fx, text: str = "How do I fix database is locked? Close the other connection.") -> None:
    """Put the mock's query and reply into the OCR rows of the LLM events' screenshots (a quote
    the model gives is kept only when it stands on the screen)."""
    with sqlite3.connect(fx.path) as db:
        ids = [
            r[0]
            for r in db.execute(
                f"SELECT id FROM screenshots WHERE event_id IN ({','.join('?' * len(fx.llm_event_ids))})",
                [int(i) for i in fx.llm_event_ids],
            )
        ]
        db.executemany("INSERT INTO ocr_results (screenshot_id, text_content) VALUES (?, ?)", [(i, text) for i in ids])


def test_annotate_raw_log_then_eval_and_stats(tmp_path, monkeypatch):
    fx = make_participant(tmp_path / "raw", "P01", variant="2025-11")
    _show_query_on_screen(fx)
    before = _sha(fx.path)
    raw_events = load_events(tmp_path / "raw")
    r = CliRunner().invoke(cli, ["eval", "--data", str(tmp_path / "raw"), "--model", "mockllm/model"])
    assert r.exit_code != 0 and "annotate the log first" in r.output
    out, logs = tmp_path / "out", tmp_path / "logs"
    from proagent.cli import _progress

    monkeypatch.setattr(_progress, "PLAIN_EVERY_SECONDS", 0.0)  # a progress line at every event
    with MockOpenAI(_answer) as srv:
        srv.env(monkeypatch)
        args = [
            "annotate",
            str(tmp_path / "raw"),
            "--out",
            str(out),
            "--annotator",
            f"text:{MODEL}",
            "--log-dir",
            str(logs),
            "--ocr",
            "db",
            "--display",
            "none",
            "--model-base-url",
            srv.base_url,
        ]
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 0, r.output
        n_calls = len(srv.requests)
        # piped: a line as the model run starts (no silent minutes while the model loads: issue 47),
        # then a line per event with the time elapsed and, until the last, an estimate of what is left
        assert r.output.splitlines()[0].startswith("proagent annotate: reading ")
        lines = [ln for ln in r.output.splitlines() if ln.startswith("annotate: ")]
        assert lines[0].startswith(f"annotate: 0 of {n_calls} events, loading the model")
        lines = lines[1:]
        assert len(lines) == n_calls and lines[0].startswith(f"annotate: 1 of {n_calls} events, ")
        assert all(" elapsed" in ln for ln in lines) and lines[-1].startswith(
            f"annotate: {n_calls} of {n_calls} events"
        )
        assert n_calls == 1 or " left" in lines[0]
        # resumable: the same command reuses the finished log, no new model call
        r2 = CliRunner().invoke(cli, args)
        assert r2.exit_code == 0, r2.output
        assert len(srv.requests) == n_calls
    assert _sha(fx.path) == before  # the raw database is only read
    hits = plan_annotation(tmp_path / "raw", ocr="db").asked
    assert n_calls == len(hits) >= len(fx.llm_event_ids)  # one call per candidate (answers parse at once)
    db = out / "P01" / "lifetrace_privacy_processed.db"
    # one person's screens: folders 0700, the files annotate writes 0600 (screenshots are hard links
    # to the input's files and keep their mode: changing it would change the input)
    for p in [out, *out.rglob("*")]:
        if p.parent.name != "screenshots":
            assert p.stat().st_mode & 0o777 == (0o700 if p.is_dir() else 0o600), p
    log = load_lifetrace(db, annotations=out / "annotations.jsonl")
    assert log.schema.is_processed and len(log.events) == len(raw_events)
    llm = {e.id: e for e in log.events if e.is_llm_event}
    assert set(fx.llm_event_ids) <= set(llm)
    for eid in fx.llm_event_ids:
        e = llm[eid]
        assert e.conversation.user_queries == ("How do I fix database is locked?",)
        assert e.intention == "Debugging & Error Resolution" and e.llm_platform == fx.platforms[eid]
        assert e.summary == "asked an AI how to fix database is locked"  # stands on the screen: kept
    assert all(e.is_llm_event is False for e in log.events if e.id not in llm)
    # screenshots travel with the copy, resolved by the reader
    assert (
        sum(s.path is not None for e in log.events for s in e.screenshots)
        == sum(s.path is not None for e in raw_events for s in e.screenshots)
        > 0
    )
    records = [json.loads(line) for line in (out / "annotations.jsonl").read_text("utf-8").splitlines()]
    assert len(records) == len(raw_events) and {r["status"] for r in records} == {"annotated", "not_candidate"}
    assert "success rate 1.000" in r.output and "next: proagent eval" in r.output
    # eval now has ground truth
    r = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(out),
            "--annotations",
            str(out / "annotations.jsonl"),
            "--model",
            "mockllm/model",
            "--split",
            "all",
            "--limit",
            "3",
            "--log-dir",
            str(tmp_path / "eval"),
            "--display",
            "none",
        ],
    )
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "eval" / "results.json").read_text())["n"] == 3
    # stats shows LLM-use burstiness on the annotated log
    r = CliRunner().invoke(cli, ["stats", str(out), "--out", str(tmp_path / "st"), "--no-similarity"])
    assert r.exit_code == 0, r.output
    st = json.loads((tmp_path / "st" / "stats.json").read_text())
    assert st["counts"]["llm_events"] == len(llm) and st["inter_event_llm"]["n"] == len(llm) - 1
    assert st["inter_event_llm"]["burstiness"] is not None


def test_processed_log_is_annotated_in_place_atomically(tmp_path, monkeypatch):
    fx = make_participant(tmp_path / "curated", "P01")  # processed layout
    with MockOpenAI(lambda body: json.dumps({"is_llm_interaction": False, "event_summary": "reading"})) as srv:
        srv.env(monkeypatch)
        r = CliRunner().invoke(
            cli,
            [
                "annotate",
                str(tmp_path / "curated"),
                "--annotator",
                MODEL,
                "--ocr",
                "db",
                "--log-dir",
                str(tmp_path / "logs"),
                "--display",
                "none",
                "--model-base-url",
                srv.base_url,
            ],
        )
    assert r.exit_code == 0, r.output
    assert not list(fx.path.parent.glob(".*.tmp"))  # the copy aside was renamed over
    log = load_lifetrace(fx.path)
    assert not any(e.is_llm_event for e in log.events)  # the model said no everywhere
    asked = {
        str(r["event_id"])
        for r in map(json.loads, (tmp_path / "curated" / "annotations.jsonl").open())
        if r["status"] == "annotated"
    }
    assert asked and all(e.summary == "reading" for e in log.events if e.id in asked)
    assert all(e.conversation is None for e in log.events)


def test_failed_answers_get_the_default_annotation_and_are_recorded(tmp_path, monkeypatch):
    make_participant(tmp_path / "curated", "P01")
    with MockOpenAI(lambda body: 400 if "豆包" in last_user_text(body) else "I am not sure, sorry.") as srv:
        srv.env(monkeypatch)
        r = CliRunner().invoke(
            cli,
            [
                "annotate",
                str(tmp_path / "curated"),
                "--annotator",
                MODEL,
                "--ocr",
                "db",
                "--attempts",
                "2",
                "--log-dir",
                str(tmp_path / "logs"),
                "--display",
                "none",
                "--model-base-url",
                srv.base_url,
            ],
        )
    assert r.exit_code == 0, r.output
    recs = [json.loads(x) for x in (tmp_path / "curated" / "annotations.jsonl").open()]
    failed = [x for x in recs if x["status"] == "default"]
    assert failed and all(x["attempts"] == 2 and x["error"] for x in failed)
    assert any("model error" in x["error"] for x in failed) and any("no JSON object" in x["error"] for x in failed)
    refused = [x["error"] for x in failed if "model error" in x["error"]]
    # the refusal itself in one line (its class and status), never inspect's dump of the request (the prompt: screen text)
    assert refused and all(
        "model error: BadRequestError: Error code: 400 - " in e and "mock failure" in e for e in refused
    )
    assert not any("Request:" in e or "You are an expert" in e or "豆包" in e or "\n" in e for e in refused), refused
    # the default annotation keeps the first pass's verdict and platform, invents nothing
    assert all(
        x["is_llm_event"] and x["llm_platform"] and not x["user_queries"] and x["user_intention"] is None
        for x in failed
    )
    assert "success rate 0.000" in r.output


def test_vlm_mode_sends_the_screenshots(tmp_path, monkeypatch):
    fx = make_participant(tmp_path / "curated", "P01")
    with MockOpenAI(_answer) as srv:
        srv.env(monkeypatch)
        r = CliRunner().invoke(
            cli,
            [
                "annotate",
                str(tmp_path / "curated"),
                "--annotator",
                f"vlm:{MODEL}",
                "--ocr",
                "db",
                "--log-dir",
                str(tmp_path / "logs"),
                "--display",
                "none",
                "--model-base-url",
                srv.base_url,
            ],
        )
        assert r.exit_code == 0, r.output
        sent = [srv.images(i) for i in range(len(srv.requests))]
    files = {p.read_bytes() for p in fx.screenshots_dir.rglob("*.png")}
    assert any(sent) and all(img in files and img.startswith(b"\x89PNG") for imgs in sent for img in imgs)
    assert max(len(x) for x in sent) <= 6


def test_ocr_cache_and_reader_modes(tmp_path):
    from datetime import datetime, timedelta

    from proagent.annotate.screens import OcrReader, sample_screenshots
    from proagent.records import Event, Screenshot

    t = datetime(2025, 9, 15, 9)
    shots = tuple(
        Screenshot(
            id=i,
            time=t + timedelta(seconds=i),
            app_name="a",
            window_title="w",
            file_name=f"{i}.png",
            ocr_text=f"text {i}",
        )
        for i in range(10)
    )
    e = Event(id="1", user="u", start=t, end=t + timedelta(seconds=10), screenshots=shots)
    assert [s.id for s in sample_screenshots(e)] == [0, 1, 2, 7, 8, 9]
    r = OcrReader("db")
    assert r.texts(sample_screenshots(e), chars=4) == ["text"] * 6 and r.n_read == 0
    with pytest.raises(ValueError):
        OcrReader("nope")


# --------------------------------------------------------------------------- eval --modality (Appendix F.2)


@pytest.mark.parametrize("modality", ["image", "text"])
def test_eval_modality_sends_the_screenshot_or_its_text(tmp_path, monkeypatch, modality):
    from proagent.agent.prompting import SCREEN_IMAGE

    fx = make_participant(tmp_path / "data", "P01")
    files = {p.read_bytes() for p in fx.screenshots_dir.rglob("*.png")}
    with MockOpenAI(lambda body: "Need help: Yes\nIntention: Code Programming\nQuery: How do I fix it?") as srv:
        srv.env(monkeypatch)
        r = CliRunner().invoke(
            cli,
            [
                "eval",
                "--data",
                str(tmp_path / "data"),
                "--model",
                "openai-api/mock/vision",
                "--model-base-url",
                srv.base_url,
                "--modality",
                modality,
                "--split",
                "all",
                "--limit",
                "6",
                "--log-dir",
                str(tmp_path / "logs"),
                "--display",
                "none",
            ],
        )
        assert r.exit_code == 0, r.output
        sent = [srv.images(i) for i in range(len(srv.requests))]
        texts = [last_user_text(b) for b in srv.requests]
    assert len(sent) == 6
    if modality == "image":
        with_image = [i for i, imgs in enumerate(sent) if imgs]
        assert with_image and all(img in files for imgs in sent for img in imgs)
        assert all(SCREEN_IMAGE in texts[i] for i in with_image)  # the image replaces the OCR text
    else:
        assert not any(sent) and not any(SCREEN_IMAGE in t for t in texts)


def test_stats_on_a_raw_log_reports_every_event(tmp_path):
    fx = make_participant(tmp_path / "raw", "P01", variant="2025-09")
    r = CliRunner().invoke(cli, ["stats", str(tmp_path / "raw"), "--out", str(tmp_path / "st"), "--no-similarity"])
    assert r.exit_code == 0, r.output
    st = json.loads((tmp_path / "st" / "stats.json").read_text())
    n = len(fx.live_event_ids)
    assert st["counts"]["events"] == n and st["counts"]["llm_events"] is None
    assert st["inter_event_all"]["n"] == n - 1 and st["inter_event_all"]["burstiness"] is not None
    assert (
        f"apps: {st['apps']['distinct']} distinct" in r.output and "inter-event times of all events: n = " in r.output
    )
    assert st["durations"]["all"]["n"] > 0 and (tmp_path / "st" / "durations.png").is_file()


@pytest.mark.slow
def test_annotate_with_the_real_local_runtime(tmp_path):
    """SmolLM2-135M through llama.cpp: every candidate is answered or gets a recorded default."""
    fx = make_participant(tmp_path / "raw", "P01", variant="2025-10")
    r = CliRunner().invoke(
        cli,
        [
            "annotate",
            str(tmp_path / "raw"),
            "--out",
            str(tmp_path / "out"),
            "--ocr",
            "db",
            "--annotator",
            "text:local/smollm2-135m",
            "--attempts",
            "2",
            "--limit",
            "3",
            "--model-arg",
            "n_threads=1",
            "--log-dir",
            str(tmp_path / "logs"),
            "--display",
            "none",
        ],
    )
    assert r.exit_code == 0, r.output
    recs = [json.loads(x) for x in (tmp_path / "out" / "annotations.jsonl").open()]
    asked = [x for x in recs if x["status"] != "not_candidate"]
    assert len(asked) == 3 and all(1 <= x["attempts"] <= 2 for x in asked)
    assert all(x["error"] for x in asked if x["status"] == "default")
    pending = len(plan_annotation(tmp_path / "raw", ocr="db").asked) - 3
    assert f"{pending} pending (--limit)" in r.output and len(recs) == len(fx.live_event_ids) - pending


def test_all_asks_about_every_event_also_where_no_chat_is_on_screen(tmp_path: Path) -> None:
    """``--all`` asks the model about every event: the screen layout finding no chat turn holds an
    event back only without it (a fresh user saw "14 not asked" after --all)."""
    make_participant(tmp_path / "raw", "P01", variant="2025-11", n_events=14, n_llm=3)
    cache = tmp_path / "ocr-cache.json"  # RapidOCR reads each screen once; the second plan reads the cache
    first = plan_annotation(tmp_path / "raw", ocr="auto", ocr_cache=cache)
    every = plan_annotation(tmp_path / "raw", ocr="auto", all_events=True, ocr_cache=cache)
    assert any(p.layout_read and not p.ask for p in first.events)  # the layout rule held some back
    assert len(every.asked) == len(every.events) > len(first.asked)


def test_an_endpoint_that_keeps_failing_fails_the_run_and_writes_nothing(tmp_path, monkeypatch):
    """HTTP 500 on every call (retries exhausted): one line naming the API, exit 3, no
    annotations written with the default (a 400 on one event stays that event's failed attempt,
    above); the answers a later run gives are not mixed with defaults."""
    monkeypatch.setenv("PROAGENT_API_TIMEOUT", "5")
    monkeypatch.setenv("PROAGENT_API_RETRY_WAIT", "0.2")  # not inspect's 3 s + 6 s (+ jitter) of backoff
    make_participant(tmp_path / "curated", "P01")
    with MockOpenAI(lambda body: 500) as srv:
        srv.env(monkeypatch)
        r = CliRunner().invoke(
            cli,
            [
                "annotate",
                str(tmp_path / "curated"),
                "--annotator",
                MODEL,
                "--ocr",
                "db",
                "--log-dir",
                str(tmp_path / "logs"),
                "--display",
                "none",
                "--model-base-url",
                srv.base_url,
            ],
        )
    assert r.exit_code == 3, r.output  # EXIT_RUN: a run error, re-running the same command resumes
    assert r.output.strip().splitlines()[-1].startswith("Error: the model API at http://127.0.0.1:"), r.output
    assert "kept failing" in r.output and "127.0.0.1" in r.output and "Traceback" not in r.output, r.output
    assert not (tmp_path / "curated" / "annotations.jsonl").exists()


def test_endpoint_failure_tells_the_endpoint_from_the_request() -> None:
    from tenacity import RetryError

    from proagent.bench.running import endpoint_failure

    class APIConnectionError(Exception):
        pass

    class AuthenticationError(Exception):
        pass

    class BadRequestError(Exception):
        pass

    assert endpoint_failure(RetryError(None)) and endpoint_failure(APIConnectionError("x"))  # type: ignore[arg-type]
    assert endpoint_failure(AuthenticationError("401"))
    try:
        try:
            raise APIConnectionError("refused")
        except APIConnectionError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert endpoint_failure(outer)  # chained
    assert not endpoint_failure(BadRequestError("400: too long")) and not endpoint_failure(ValueError("x"))


def test_a_refusal_that_quotes_the_prompt_is_withheld():
    """An endpoint's 400 that echoes the request (screen text) is recorded by its class alone."""
    from inspect_ai.model import ChatMessageUser

    from proagent.annotate.task import _request_error

    screen = "my bank password is hunter2 and my IBAN is DE89 3704 0044 0532 0130 00"
    quoting = ValueError(f"Error code: 400 - bad content: {screen[:40]}")
    assert _request_error(quoting, [ChatMessageUser(content=screen)]) == (
        "ValueError: (its message quotes the prompt; withheld)"
    )
    plain = ValueError("Error code: 400 - {'error': {'message': 'context too long'}}")
    assert _request_error(plain, [ChatMessageUser(content=screen)]) == f"ValueError: {plain}"
