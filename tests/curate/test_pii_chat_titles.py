"""A person a chat app's window title names (issue 42 item 6): ``<name> (DM) - <workspace> - Slack``
was published by curate and sent to a remote model by live. The title rules (curate/_detect.py
``CHAT_TITLES``) ship with every install (no NER model); the name is then found wherever the same
text, or the same window's screen text, mentions it."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from pathlib import Path

import pytest

from proagent.curate import clean_text


@pytest.mark.parametrize(
    ("title", "cleaned"),
    [
        ("Priya Raman (DM) - Acme Corp - Slack", "[PERSON] (DM) - Acme Corp - Slack"),
        ("Zoë O'Neil-Brown (DM) - Acme - Slack", "[PERSON] (DM) - Acme - Slack"),
        ("Priya, Tom Lee (DM) - Acme - Slack", "[PERSON] (DM) - Acme - Slack"),
        ("priya.raman (DM) - acme - Slack", "[PERSON] (DM) - acme - Slack"),
        ("Chat | Priya Raman | Microsoft Teams", "Chat | [PERSON] | Microsoft Teams"),
        ("@priya_r - Discord", "[PERSON] - Discord"),
        ("Priya Raman | Messenger", "[PERSON] | Messenger"),
        ("Direct message with Tom Lee", "Direct message with [PERSON]"),
        # no person: kept as it is
        ("#general - Acme Corp - Slack", "#general - Acme Corp - Slack"),
        ("app.py - myapp - Visual Studio Code", "app.py - myapp - Visual Studio Code"),
        ("a call with the team about support", "a call with the team about support"),
        ("Slack | Acme Corp", "Slack | Acme Corp"),
    ],
)
def test_chat_titles_lose_the_person_they_name(title: str, cleaned: str) -> None:
    assert clean_text(title) == cleaned


def test_the_name_is_found_elsewhere_in_the_same_text_and_screen() -> None:
    from proagent.curate._detect import find_pii, title_names

    text = "Slack | Priya Raman (DM) - Acme - Slack\nPriya Raman  9:41 AM\nthanks Priya, on it"
    assert clean_text(text) == "Slack | [PERSON] (DM) - Acme - Slack\n[PERSON]  9:41 AM\nthanks [PERSON], on it"
    names = title_names("Priya Raman (DM) - Acme - Slack")
    assert names == ("Priya Raman",) and title_names("Inbox - Mail") == ()
    assert [f.type for f in find_pii("Raman: ship it", names=names)] == ["person"]
    assert find_pii("Ramanujan wrote it", names=names) == []  # whole words only


def test_curate_publishes_no_name_from_a_dm_window(tmp_path: Path) -> None:
    """``proagent curate`` of a capture with a Slack DM window: neither the title nor the screen text
    of the published log, nor its privacy and curation records, keep the name."""
    import sys

    from click.testing import CliRunner

    sys.path.insert(0, str(Path(__file__).parents[1] / "live"))
    from help_fixtures import write_capture

    from proagent.cli import cli

    cap, out = tmp_path / "capture", tmp_path / "out"
    write_capture(
        cap,
        datetime(2026, 12, 3, 9, 0, 0),
        [
            ("Slack", "Priya Raman (DM) - Acme Corp - Slack", "Priya Raman 9:41 AM\ncan you look at the deploy?"),
            ("Code", "app.py - myapp", "def login(request):\n    return session['user_id']"),
            ("Firefox", "Flask docs - sessions", ""),
        ],
    )
    r = CliRunner().invoke(cli, ["curate", str(cap), "--out", str(out)])
    assert r.exit_code == 0, r.output
    con = sqlite3.connect(next(out.rglob("lifetrace_privacy_processed.db")))
    dump = "\n".join(con.iterdump())
    titles = [t for (t,) in con.execute("SELECT window_title FROM events")]
    con.close()
    records = "".join(p.read_text("utf-8") for p in out.glob("*.jsonl"))
    records += "".join(p.read_text("utf-8") for p in out.rglob("*.json"))
    for text in (dump, records, r.output):
        assert "Priya" not in text and "Raman" not in text
    assert "[PERSON] (DM) - Acme Corp - Slack" in titles
    assert all(json.loads(line) for line in (out / "privacy.jsonl").read_text("utf-8").splitlines())
