"""Curate on a capture-shaped log (issue 21 items 1, 2 and 8): going back to the same page
keeps its event (a duplicate is a reference to the stored copy), a review blur blurs (the marked
regions, or the whole screen when none is marked), and everything written is private.

The raw log is written by capture's own :class:`~proagent.capture.Store` with rendered screens
(Noto Sans CJK, 1024x640), as a real capture leaves it: OCR rows for some screenshots, none for
the last one (the OCR worker's backlog at stop)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from system import require_module

require_module("rapidocr", "presidio_analyzer")

from proagent.capture import Store  # noqa: E402
from proagent.cli import cli  # noqa: E402
from proagent.curate import save_decision  # noqa: E402
from proagent.sources.lifetrace import load_lifetrace  # noqa: E402

EMAIL = "li.wei.research@example.com"
SECRET_WORD = "Falconridge"


def _screen(lines: list[str]) -> bytes:
    import io

    from noto_cjk_sans_otc import FONT_PATH
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", (1024, 640), (250, 250, 250))
    d = ImageDraw.Draw(img)
    font = ImageFont.truetype(FONT_PATH, 24)
    for i, line in enumerate(lines):
        d.text((30, 30 + 44 * i), line, fill=(15, 15, 15), font=font)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


CHAT = [
    "ChatGPT",
    "You: Why does my Flask app raise KeyError 'user_id'?",
    "ChatGPT: The session has no user_id key yet; use session.get.",
]
TERM = ["$ python app.py", "Traceback (most recent call last):", "KeyError: 'user_id'"]
MAIL = ["Inbox - Mail", "From: Li Wei", f"Reply to {EMAIL} before Friday"]
DOC = ["Quarterly plan - Docs", f"Project {SECRET_WORD} budget review", "Milestones for the next quarter"]

# (app, title, screen lines, OCR text recorded by capture or None)
EVENTS = [
    ("chromium", "ChatGPT - Chromium", CHAT, "\n".join(CHAT)),
    ("xterm", "python app.py", TERM, "\n".join(TERM)),
    ("chromium", "Inbox - Mail - Chromium", MAIL, "\n".join(MAIL)),
    ("xterm", "python app.py", TERM + ["$ "], "\n".join(TERM)),
    ("chromium", "Quarterly plan - Docs - Chromium", DOC, "\n".join(DOC)),
    ("xterm", "vim notes.txt", ["notes.txt", "remember the milk"], "notes.txt\nremember the milk"),
    ("chromium", "ChatGPT - Chromium", CHAT, None),
]  # back to the same page: byte-identical screen


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> dict:
    import hashlib

    folder = tmp_path_factory.mktemp("desk") / "capture"
    st = Store(folder)
    t = datetime(2026, 3, 2, 9, 0, 0)
    ids: list[int] = []
    for app, title, lines, ocr in EVENTS:
        ev = st.open_event(app, title, t)
        data = _screen(lines)
        sid = st.add_screenshot(
            event_id=ev,
            screen_id=0,
            t=t + timedelta(seconds=1),
            data=data,
            ext="png",
            file_hash=hashlib.sha256(data).hexdigest(),
            width=1024,
            height=640,
            app=app,
            title=title,
        )
        if ocr is not None:
            st.con.execute(
                "INSERT INTO ocr_results (screenshot_id, text_content, confidence, language, "
                "processing_time, created_at) VALUES (?, ?, 0.9, 'ch_sim+en', 1.0, ?)",
                (sid, ocr, (t + timedelta(seconds=2)).strftime("%Y-%m-%d %H:%M:%S.%f")),
            )
            st.con.execute("UPDATE screenshots SET is_processed = 1 WHERE id = ?", (sid,))
        st.close_event(ev, t + timedelta(seconds=20))
        ids.append(sid)
        t += timedelta(seconds=30)
    st.close()
    return {"folder": folder, "ids": ids}


@pytest.fixture(scope="module")
def curated(raw: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("desk-out") / "curated"
    first = CliRunner().invoke(cli, ["curate", str(raw["folder"]), "--out", str(out)])
    assert first.exit_code == 0, first.output
    ids = raw["ids"]
    user = raw["folder"].name
    save_decision(out, user, ids[4], "blur")  # the document: nothing detected, the reviewer blurs it
    save_decision(out, user, ids[1], "delete")  # the traceback
    save_decision(out, user, ids[0], "retain")  # the chat page (and so its later duplicate)
    second = CliRunner().invoke(cli, ["curate", str(raw["folder"]), "--out", str(out)])
    assert second.exit_code == 0, second.output
    priv = {d["screenshot_id"]: d for d in map(json.loads, (out / "privacy.jsonl").read_text("utf-8").splitlines())}
    return {
        "out": out,
        "user": user,
        "ids": ids,
        "first": first.output,
        "second": second.output,
        "priv": priv,
        "raw": raw["folder"],
    }


def test_revisited_page_keeps_its_event_as_a_reference(curated: dict) -> None:
    out, user, ids, priv = curated["out"], curated["user"], curated["ids"], curated["priv"]
    log = load_lifetrace(out / user)
    assert len(log.events) == len(EVENTS), "no event lost to dedup"
    shots = {s.id: s for e in log.events for s in e.screenshots}
    first, again = shots[ids[0]], shots[ids[-1]]
    assert first.path is not None and again.path is not None
    assert os.stat(first.path).st_ino == os.stat(again.path).st_ino  # one file, hard-linked
    assert again.ocr_text == first.ocr_text and "KeyError" in again.ocr_text  # the same OCR
    assert priv[ids[-1]]["duplicate_of"] == ids[0] and priv[ids[-1]]["action"] == "retain"
    assert priv[ids[-1]]["phase"] == "review"  # the decision on the first copy covers it
    assert "1 duplicate(s) stored once" in curated["second"]
    assert "0 screened now" in curated["second"]  # the duplicate's text came back from the first output
    recs = (out / "curation.jsonl").read_text("utf-8")
    assert "duplicate" not in recs and "no valid screenshot" not in recs
    items = json.loads((out / ".curate" / user / "items.json").read_text("utf-8"))
    assert ids[-1] not in {it["screenshot_id"] for it in items}  # reviewed once, as its first copy


def _ocr_text(path: Path) -> str:
    """What OCR reads in an image, uncleaned, spaces removed."""
    from proagent.curate._screen import ocr_lines

    return "".join(ocr_lines(path)).replace(" ", "")


def test_review_blur_with_no_region_blurs_the_whole_screen(curated: dict) -> None:
    import numpy as np
    from PIL import Image

    out, user, ids, priv = curated["out"], curated["user"], curated["ids"], curated["priv"]
    v = priv[ids[4]]
    assert (v["action"], v["phase"], v["n_regions"], v["applied"]) == ("blur", "review", 0, "blurred whole screen")
    raw_img = sorted((curated["raw"] / "screenshots").iterdir())[4]
    published = out / user / "screenshots" / raw_img.name
    a = np.asarray(Image.open(raw_img).convert("L"), dtype=np.int16)
    b = np.asarray(Image.open(published).convert("L"), dtype=np.int16)
    dark = a < 128  # the text's pixels
    assert np.count_nonzero(dark) > 1000
    assert np.count_nonzero(np.abs(a - b)[dark] > 40) > 0.9 * np.count_nonzero(dark)  # all of them changed
    assert np.count_nonzero(b < 128) == 0  # no glyph stroke left anywhere
    assert SECRET_WORD.lower() in _ocr_text(raw_img).lower()  # OCR reads the raw screen ...
    assert SECRET_WORD.lower() not in _ocr_text(published).lower()  # ... not the published one
    shot = next(s for e in load_lifetrace(out / user).events for s in e.screenshots if s.id == ids[4])
    assert shot.ocr_text.startswith("[blurred screenshot]") and SECRET_WORD not in shot.ocr_text  # nor its text


def test_detected_region_is_blurred_and_the_rest_kept(curated: dict) -> None:
    import numpy as np
    from PIL import Image

    out, user, ids, priv = curated["out"], curated["user"], curated["ids"], curated["priv"]
    v = priv[ids[2]]
    assert v["action"] == "blur" and "email" in v["types"] and v["applied"] == f"blurred {v['n_regions']} region(s)"
    assert v["n_regions"] >= 1
    raw_img = sorted((curated["raw"] / "screenshots").iterdir())[2]
    published = out / user / "screenshots" / raw_img.name
    assert EMAIL.replace(" ", "") in _ocr_text(raw_img)
    seen = _ocr_text(published)
    assert EMAIL not in seen and "example.com" not in seen
    assert "Inbox" in seen  # only the region is blurred
    a = np.asarray(Image.open(raw_img).convert("L"), dtype=np.int16)
    b = np.asarray(Image.open(published).convert("L"), dtype=np.int16)
    assert np.count_nonzero(np.abs(a - b) > 40) > 0
    dump = "\n".join(sqlite3.connect(out / user / "lifetrace_privacy_processed.db").iterdump())
    assert EMAIL not in dump


def test_outputs_are_private_and_state_holds_no_screen_text(curated: dict) -> None:
    out = curated["out"]
    for p in [out, *out.rglob("*")]:
        mode = stat.S_IMODE(p.stat().st_mode)
        assert mode == (0o700 if p.is_dir() else 0o600), (p, oct(mode))
    state = "".join(p.read_text("utf-8") for p in (out / ".curate").rglob("*.json"))
    for word in (SECRET_WORD, "Flask", "remember the milk", "Traceback", EMAIL):
        assert word not in state, word
    assert "<user>" not in curated["second"]
    assert str(out / curated["user"] / "lifetrace_privacy_processed.db") in curated["second"]


def test_no_dedup_copies_each_screenshot(raw: dict, tmp_path: Path) -> None:
    src = tmp_path / "cap"
    shutil.copytree(raw["folder"], src)
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["curate", str(src), "--out", str(out), "--no-dedup"])
    assert res.exit_code == 0, res.output
    shots = {s.id: s for e in load_lifetrace(out / "cap").events for s in e.screenshots}
    first, again = shots[raw["ids"][0]], shots[raw["ids"][-1]]
    assert os.stat(first.path).st_ino != os.stat(again.path).st_ino
    assert "0 duplicate(s)" in res.output
