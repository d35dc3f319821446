"""proagent curate: detectors, quality filters, the three privacy phases, the output layout,
resume, the review page in headless Chromium and the VLM screener against a loopback server."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner
from lifetrace_fixtures import make_participant
from system import require_binary, require_module

require_module("rapidocr", "presidio_analyzer")

from pii_screens import make_pii_corpus  # noqa: E402

from proagent.cli import cli  # noqa: E402
from proagent.curate import (  # noqa: E402
    CurateConfig,
    OcrScreener,
    VlmScreener,
    clean_text,
    curate,
    find_pii,
    load_decisions,
    save_decision,
    serve_review,
)
from proagent.sources.lifetrace import load_lifetrace  # noqa: E402

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


# --------------------------------------------------------------------------- text detectors


@pytest.mark.parametrize(
    "text,kind",
    [
        ("Contact: alice.smith@example.com", "email"),
        ("邮箱：zhang.san@example.org", "email"),
        ("Call +44 20 7946 0958 today", "phone"),
        ("手机号：13812345678", "phone"),
        ("身份证号码11010519491231002X", "id_number"),
        ("Card 4111 1111 1111 1111", "bank_card"),
        ("银行卡号：6222020200000000121", "bank_card"),
        ("IBAN DE89 3704 0044 0532 0130 00", "iban"),
        ("服务器地址：198.51.100.77", "ip_address"),
        ("OPENAI_API_KEY=sk-proj-Q7fK2mX9pL4vR8tB3nW6yZ1c", "api_key"),
        ("访问令牌：ghp_4fT9kLm2Qx7Vb8Nc3Rz6Wy1Pd5Hs0JaEu", "api_key"),
        ("Password: Tr0ub4dor&3x", "password"),
        ("密码：hunter2secret", "password"),
    ],
)
def test_detects_each_type_in_english_and_chinese(text: str, kind: str) -> None:
    found = find_pii(text)
    assert [f.type for f in found] == [kind], found
    cleaned = clean_text(text)
    assert f"[{kind.upper()}]" in cleaned
    assert text[found[0].start : found[0].end] not in cleaned


@pytest.mark.parametrize(
    "text",
    [
        "身份证号码110105194912310021",  # wrong check character
        "Card 4111 1111 1111 1112",  # fails Luhn
        "Accuracy F1 Precision Recall 0.812 0.774 0.790 0.758",
        "第三章 实验设计 3.1 数据集 本文使用的数据集",
        "PS> python -m pytest -q 3 failed, 12 passed in 4.21s",
        "Version 2024.10.11 build 20241011",
    ],
)
def test_no_finding_on_clean_or_invalid_text(text: str) -> None:
    assert find_pii(text) == []


# --------------------------------------------------------------------------- the pipeline on planted PII


@pytest.fixture(scope="module")
def curated(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("curate")
    corpus = make_pii_corpus(
        root / "raw" / "P01", types=("email", "phone", "id_number", "password"), languages=("en", "zh"), n_clean=2
    )
    raw_hash = hashlib.sha256(corpus.db.read_bytes()).hexdigest()
    out = root / "out"
    res = CliRunner().invoke(cli, ["curate", str(corpus.root), "--out", str(out)])
    assert res.exit_code == 0, res.output
    return {"corpus": corpus, "out": out, "raw_hash": raw_hash, "output": res.output}


def _privacy(out: Path) -> dict[int, dict]:
    return {d["screenshot_id"]: d for d in map(json.loads, (out / "privacy.jsonl").read_text("utf-8").splitlines())}


def test_output_layout_is_read_as_processed(curated: dict) -> None:
    out, corpus = curated["out"], curated["corpus"]
    db = out / "P01" / "lifetrace_privacy_processed.db"
    log = load_lifetrace(db)
    assert log.schema.variant == "processed"
    assert len(log.events) == len(corpus.planted) + len(corpus.clean_ids)
    assert hashlib.sha256(corpus.db.read_bytes()).hexdigest() == curated["raw_hash"], "raw input was modified"
    assert "retained" in curated["output"] and "await review" in curated["output"]


def test_high_risk_deleted_moderate_blurred_clean_retained(curated: dict) -> None:
    out, corpus = curated["out"], curated["corpus"]
    priv = _privacy(out)
    shots = {s.id: s for e in load_lifetrace(out / "P01").events for s in e.screenshots}
    for sid, (kind, _lang, _value) in corpus.planted.items():
        assert kind in priv[sid]["types"], (sid, priv[sid])
        want = "delete" if kind in ("id_number", "password") else "blur"
        assert priv[sid]["action"] == want, (sid, priv[sid])
        if want == "delete":
            assert shots[sid].path is None  # file removed, scene description kept in its place
            assert shots[sid].ocr_text.startswith("[deleted screenshot]")
            assert priv[sid]["scene_description"]
        else:
            assert shots[sid].path is not None
    for sid in corpus.clean_ids:
        assert priv[sid]["action"] == "retain" and priv[sid]["types"] == []


def test_no_planted_value_left_in_db_logs_or_images(curated: dict) -> None:
    out, corpus = curated["out"], curated["corpus"]
    con = sqlite3.connect(out / "P01" / "lifetrace_privacy_processed.db")
    dump = "\n".join(con.iterdump())
    con.close()
    texts = dump + (out / "privacy.jsonl").read_text("utf-8") + (out / "curation.jsonl").read_text("utf-8")
    texts += "".join(p.read_text("utf-8") for p in (out / ".curate").rglob("*.json"))
    ocr = OcrScreener(faces=False)
    for sid, (_kind, _lang, value) in corpus.planted.items():
        assert value not in texts and value.replace(" ", "") not in texts, value
    for img in (out / "P01" / "screenshots").iterdir():  # re-OCR what was published
        _regions, lines, _n = ocr.locate(img)
        seen = "".join(lines).replace(" ", "")
        for _sid, (_kind, _lang, value) in corpus.planted.items():
            assert value.replace(" ", "") not in seen, (img.name, value)
        assert find_pii("\n".join(lines)) == []


def test_rerun_resumes_and_applies_review(curated: dict, tmp_path: Path) -> None:
    out, corpus = curated["out"], curated["corpus"]
    clean = corpus.clean_ids[0]
    save_decision(out, "P01", clean, "delete")
    assert load_decisions(out, "P01") == {clean: "delete"}
    res = CliRunner().invoke(cli, ["curate", str(corpus.root), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "0 screened now" in res.output  # phase 1 came from the resume cache
    v = _privacy(out)[clean]
    assert (v["action"], v["phase"]) == ("delete", "review")
    shot = next(s for e in load_lifetrace(out / "P01").events for s in e.screenshots if s.id == clean)
    assert shot.path is None and shot.ocr_text.startswith("[deleted screenshot]")
    # stats read the curated log
    res = CliRunner().invoke(cli, ["stats", str(out), "--out", str(tmp_path / "stats")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "stats" / "stats.json").is_file()


def test_bad_input_and_out_inside_raw_are_one_line_errors(curated: dict, tmp_path: Path) -> None:
    corpus = curated["corpus"]
    res = CliRunner().invoke(cli, ["curate", str(tmp_path / "nope"), "--out", str(tmp_path / "o")])
    assert res.exit_code != 0 and "no such file or folder" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(cli, ["curate", str(corpus.root), "--out", str(corpus.root / "sub")])
    assert res.exit_code != 0 and "inside the raw input folder" in res.output
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("x")
    res = CliRunner().invoke(cli, ["curate", str(corpus.root), "--out", str(other)])
    assert res.exit_code != 0 and "not empty" in res.output
    assert (other / "keep.txt").read_text() == "x"


# --------------------------------------------------------------------------- quality filters


def test_quality_filters_on_a_lifetrace_fixture(tmp_path: Path) -> None:
    fx = make_participant(tmp_path / "raw", "P02", variant="2025-11", missing_every=7)
    out = tmp_path / "out"
    summary = curate(fx.path.parent, out, OcrScreener(faces=False), CurateConfig())
    recs = [json.loads(line) for line in (out / "curation.jsonl").read_text("utf-8").splitlines()]
    excluded_events = {r["event_id"] for r in recs if r["decision"] == "excluded" and "screenshot_id" not in r}
    assert set(fx.short_event_ids) <= excluded_events
    reasons = " ".join(r["reason"] for r in recs)
    assert "shorter than 3 s" in reasons and "screenshot file missing" in reasons
    kept = {e.id for e in load_lifetrace(out / "P02").events}
    assert not kept & set(fx.short_event_ids)
    assert kept and kept <= set(fx.live_event_ids)
    assert summary.users["P02"]["events_out"] == len(kept)


# --------------------------------------------------------------------------- review page in Chromium


def test_review_page_in_headless_chromium(curated: dict) -> None:
    paths = require_binary("chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    out = curated["out"]
    srv = serve_review(out)
    try:
        assert srv.url.startswith("http://127.0.0.1:")
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(srv.url.split("?")[0] + "api/items?token=wrong", timeout=10)
        assert e.value.code == 403
        items = json.loads(urllib.request.urlopen(srv.url.replace("/?", "/api/items?"), timeout=10).read())["items"]
        assert items and all(it["action"] in ("retain", "blur") for it in items)
        assert any(it["regions"] for it in items)
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=paths["chromium"], args=CHROMIUM_ARGS, headless=True)
            page = browser.new_page()
            page.goto(srv.url)
            first = f"P01:{items[0]['screenshot_id']}"
            page.wait_for_selector(f"body[data-ready='{first}']", timeout=20000)
            if items[0]["regions"]:
                assert page.locator(".box").count() == len(items[0]["regions"])
            page.keyboard.press("b")
            page.wait_for_selector(f"body[data-ready='P01:{items[1]['screenshot_id']}']", timeout=20000)
            page.keyboard.press("d")
            page.locator(
                "#status", has_text=re.compile("^saved delete")
            ).wait_for()  # no eval: the page's CSP forbids it
            page.keyboard.press("k")
            page.keyboard.press("r")
            page.locator(
                "#status", has_text=re.compile("^saved retain")
            ).wait_for()  # no eval: the page's CSP forbids it
            browser.close()
        got = load_decisions(out, "P01")
        assert got[items[0]["screenshot_id"]] == "blur"
        assert got[items[1]["screenshot_id"]] == "retain"  # changed back after going to it again
    finally:
        srv.stop()


# --------------------------------------------------------------------------- VLM screener, loopback server


class _MockVlm:
    """An OpenAI-compatible /v1/chat/completions on 127.0.0.1 with scripted answers."""

    def __init__(self, answers: list[str]) -> None:
        self.answers, self.requests = list(answers), []
        mock = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                mock.requests.append(body)
                text = mock.answers.pop(0) if mock.answers else '{"risk_level": "safe"}'
                payload = json.dumps(
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "m"),
                        "choices": [
                            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
                        ],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_vlm_screener_repairs_json_and_retries(curated: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = curated["corpus"]
    sid = next(i for i, (k, _l, _v) in corpus.planted.items() if k == "email")
    image = sorted((corpus.root / "screenshots").iterdir())[sid - 1]
    server = _MockVlm(
        [
            "I cannot tell.",  # unreadable: asked again
            "```json\n{'risk_level': 'Moderate', 'types': ['email'], 'action': 'blur', "
            "'scene_description': 'An account settings page',",  # broken JSON, repaired
        ]
    )
    monkeypatch.setenv("MOCK_API_KEY", "test-key")
    monkeypatch.setenv("MOCK_BASE_URL", server.base_url)
    try:
        s = VlmScreener("openai-api/mock/mock-vlm", locator=OcrScreener(faces=False)).screen(
            image, app="Google Chrome", title="Account settings"
        )
    finally:
        server.stop()
    assert len(server.requests) == 2
    content = server.requests[0]["messages"][0]["content"]
    assert any(
        c.get("type") == "image_url" and c["image_url"]["url"].startswith("data:image/png;base64,") for c in content
    )
    assert (s.risk, s.action, s.screener) == ("moderate", "blur", "vlm:openai-api/mock/mock-vlm")
    assert "email" in s.types and any(r.type == "email" for r in s.regions)
    assert s.scene == "An account settings page"


def test_vlm_screener_fails_safe(curated: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    image = sorted((curated["corpus"].root / "screenshots").iterdir())[0]
    server = _MockVlm(["no", "still no", "nope"])
    monkeypatch.setenv("MOCK_API_KEY", "test-key")
    monkeypatch.setenv("MOCK_BASE_URL", server.base_url)
    try:
        s = VlmScreener("openai-api/mock/mock-vlm", attempts=3, locator=OcrScreener(faces=False)).screen(
            image, app="Chrome", title="x"
        )
    finally:
        server.stop()
    assert len(server.requests) == 3
    assert (s.risk, s.action) == ("high-risk", "delete")


def test_vlm_screener_retries_print_progress_and_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """An endpoint answering HTTP 500: a stderr line per retry, then the screener's one line names
    the last error (it showed tenacity's ``RetryError[<Future ...>]``)."""
    from mock_openai import MockOpenAI
    from PIL import Image

    from proagent.curate import ScreenerError

    image = tmp_path / "s.png"
    Image.new("RGB", (32, 24), (200, 200, 200)).save(image)
    with MockOpenAI(lambda body: 500) as srv:
        srv.env(monkeypatch)
        with pytest.raises(ScreenerError) as e:
            VlmScreener("openai-api/mock/mock-vlm", max_retries=1, locator=OcrScreener(faces=False)).screen(
                image, app="Chrome", title="x"
            )
        port = srv.server.server_address[1]
    assert str(e.value).startswith(
        "screening model openai-api/mock/mock-vlm failed: InternalServerError: Error code: "
        "500 - mock failure (gave up after 2 attempts)"
    ), str(e.value)
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("model API at ")]
    assert len(lines) == 1 and lines[0].startswith(
        f"model API at http://127.0.0.1:{port}: attempt 1 of 2 failed "
        "(InternalServerError: Error code: 500 - mock failure); retrying in"
    )


# --------------------------------------------------------------------------- faces


def test_face_in_a_screenshot_is_found_and_blurred_away(tmp_path: Path) -> None:
    import matplotlib.cbook
    from PIL import Image

    from proagent.curate._pipeline import _blur
    from proagent.curate._screen import find_faces

    with matplotlib.cbook.get_sample_data("grace_hopper.jpg") as f:  # a portrait shipped with matplotlib
        portrait = Image.open(f).convert("RGB").resize((180, 230))
    shot = Image.new("RGB", (640, 300), (245, 245, 245))
    shot.paste(portrait, (400, 40))
    src = tmp_path / "screen_0_20250915_090000_000.png"
    shot.save(src)
    s = OcrScreener().screen(src, app="微信", title="微信")
    faces = [r for r in s.regions if r.type == "face"]
    assert faces and s.risk == "moderate" and s.action == "blur"
    assert all(400 <= r.x0 and r.x1 <= 580 + 3 for r in faces)
    dest = tmp_path / "out.png"
    _blur(src, dest, s.regions, 0.0)
    with Image.open(dest) as im:
        assert find_faces(im.convert("RGB")) == []
    clean = tmp_path / "clean.png"
    Image.new("RGB", (640, 300), (245, 245, 245)).save(clean)
    assert OcrScreener().screen(clean, app="x", title="x").types == ()


def test_review_and_screener_errors_are_one_line(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["review", str(tmp_path)])
    assert res.exit_code != 0 and "not a curate output" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(cli, ["curate", str(tmp_path), "--out", str(tmp_path / "o"), "--screener", "magic"])
    assert res.exit_code != 0 and "--screener" in res.output and "vlm:MODEL" in res.output


def test_review_stops_on_sigint_even_when_started_with_sigint_ignored(tmp_path) -> None:  # noqa: ANN001
    """A shell without job control starts `proagent review &` with SIGINT ignored; `kill -INT` left the
    page running for good (past 15 s). proagent restores the handler: it stops within seconds."""
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / ".curate").mkdir()
    (tmp_path / ".curate" / "manifest.json").write_text('{"users": {}}', "utf-8")
    p = subprocess.Popen(
        [sys.executable, "-c", "from proagent.cli import main; main()", "review", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        assert "to review at http://127.0.0.1:" in p.stdout.readline()
        p.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        p.wait(timeout=15)
        assert time.monotonic() - t0 < 5 and p.returncode == 0
    finally:
        p.kill()
        p.wait()
