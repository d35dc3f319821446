"""The reviewer's decision is final (issue 34 item 5): retain / blur / delete made on `proagent review`'s
page (posted to its server, saved in ``OUT/.curate/<user>/review.json``) win over the screener, the
rules phase (title keywords, the recorded OCR text) and the strict re-screen of neighbours, and
``privacy.jsonl`` records phase ``review`` with the automatic decisions it overrode."""

from __future__ import annotations

import json
import sqlite3
import urllib.request
from pathlib import Path

from click.testing import CliRunner
from system import require_module

require_module("rapidocr", "presidio_analyzer")

from pii_screens import Screen, make_screens_corpus  # noqa: E402

from proagent.cli import cli  # noqa: E402
from proagent.curate import serve_review  # noqa: E402

SCREENS = (
    # a number in an LLM reply that the detector takes for a phone number: the screener blurs it
    Screen(
        "reply",
        "Google Chrome",
        "ChatGPT - Google Chrome",
        ("What is 20.75 percent of 2,107,550,000?", "Roughly +1 415 555 2671, as a number."),
    ),
    # a title keyword: the rules phase deletes it
    Screen("checkout", "Google Chrome", "Checkout - Google Chrome", ("Your basket", "2 items, total 31.80")),
    Screen("notes", "Mousepad", "notes.txt - Mousepad", ("Standup notes", "Ship the retry budget fix today")),
    Screen("docs", "Google Chrome", "Docs - Google Chrome", ("Chapter 3", "We use 12 participants")),
)


def _curate(raw: Path, out: Path) -> None:
    res = CliRunner().invoke(cli, ["curate", str(raw), "--out", str(out)])
    assert res.exit_code == 0, res.output


def _post(srv, sid: int, action: str) -> None:  # noqa: ANN001
    body = json.dumps({"user": "P01", "screenshot_id": sid, "action": action}).encode()
    req = urllib.request.Request(
        srv.url.replace("/?", "/api/decision?"), data=body, method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200


def test_review_decisions_win_over_every_automatic_phase(tmp_path: Path) -> None:
    shown = make_screens_corpus(tmp_path / "raw" / "P01", SCREENS, ocr_rows=True)
    ids = {sc.name: sid for sid, sc in shown.items()}
    out = tmp_path / "out"
    _curate(tmp_path / "raw" / "P01", out)
    first = {d["screenshot_id"]: d for d in map(json.loads, (out / "privacy.jsonl").read_text("utf-8").splitlines())}
    assert (first[ids["reply"]]["action"], first[ids["reply"]]["types"]) == ("blur", ["phone"])
    assert (first[ids["checkout"]]["action"], first[ids["checkout"]]["phase"]) == ("delete", "rules")

    srv = serve_review(out)
    try:
        _post(srv, ids["reply"], "retain")
        _post(srv, ids["checkout"], "retain")
        _post(srv, ids["notes"], "delete")
        _post(srv, ids["docs"], "blur")
    finally:
        srv.stop()
    assert json.loads((out / ".curate" / "P01" / "review.json").read_text()) == {
        str(ids["reply"]): "retain",
        str(ids["checkout"]): "retain",
        str(ids["notes"]): "delete",
        str(ids["docs"]): "blur",
    }
    _curate(tmp_path / "raw" / "P01", out)

    got = {d["screenshot_id"]: d for d in map(json.loads, (out / "privacy.jsonl").read_text("utf-8").splitlines())}
    reply, checkout, notes, docs = (got[ids[n]] for n in ("reply", "checkout", "notes", "docs"))
    assert (reply["action"], reply["phase"], reply["applied"]) == ("retain", "review", "copied")
    assert reply["overrode"] == ["screen: blur (phone)"] and reply["types"] == ["phone"]
    assert (checkout["action"], checkout["phase"], checkout["applied"]) == ("retain", "review", "copied")
    assert checkout["overrode"] == ["rules: delete (title keyword 'checkout')"]
    assert (notes["action"], notes["phase"], notes["applied"]) == ("delete", "review", "left out")
    assert notes["overrode"] == ["screen: retain"]
    assert (docs["action"], docs["phase"], docs["applied"]) == ("blur", "review", "blurred whole screen")
    # a neighbour re-screen (two deletions in one event) never touches a reviewed screenshot: one event each here
    con = sqlite3.connect(out / "P01" / "lifetrace_privacy_processed.db")
    texts = dict(con.execute("SELECT screenshot_id, text_content FROM ocr_results"))
    con.close()
    assert "+1 415 555 2671" in texts[ids["reply"]] and "[PHONE]" not in texts[ids["reply"]]  # the reviewer kept it
    assert texts[ids["notes"]].startswith("[deleted screenshot]")
