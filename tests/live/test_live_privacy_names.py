"""--send-screen and people's names (issue 42 item 6): a Slack direct-message window's title
``Priya Raman (DM) - Acme Corp - Slack`` was sent to a remote model under ``never``. Every request
``proagent live`` sends a remote model (a loopback mock OpenAI server records them: the warm-up, the
How calls, the help after Accept) holds neither the name, from the title or the screen, nor, under
``never``, any screen text."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path

import pytest
from help_fixtures import write_capture
from mock_openai import MockOpenAI

NAME = ("Priya", "Raman")
SCREEN_TEXT = "can you look at the deploy before the 3pm release"
TITLE = "Priya Raman (DM) - Acme Corp - Slack"


@pytest.mark.parametrize("send_screen", ["never", "redacted"])
def test_no_name_and_no_screen_text_reach_a_remote_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, send_screen: str
) -> None:
    from click.testing import CliRunner

    from proagent.cli import cli
    from proagent.live import FeedbackStore, LiveHelp, make_help_model

    cap, out = tmp_path / "capture", tmp_path / "live"
    t0 = datetime(2026, 12, 3, 9, 0, 0)
    ids = write_capture(
        cap,
        t0,
        [
            ("Slack", TITLE, f"Priya Raman  9:41 AM\n{SCREEN_TEXT}\nthanks Priya, on it"),
            ("Code", "deploy.py - release", "def deploy():\n    raise RuntimeError('no tag')"),
            ("Slack", TITLE, f"Priya Raman  9:43 AM\nping\n{SCREEN_TEXT}"),
            ("Firefox", "Release checklist", ""),
        ],
    )
    yes = tmp_path / "yes.txt"
    yes.write_text(f"{ids[2]}\n")

    def reply(body: dict) -> str:
        if "Intention" in json.dumps(body["messages"][:1]):  # the How call
            return "Need help: Yes\nIntention: Communication\nQuery: How do I answer about the deploy?"
        return "Say the deploy waits for the tag."

    with MockOpenAI(reply) as srv:
        srv.env(monkeypatch)
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
                f"openai-api/mock/names-{send_screen}",
                "--send-screen",
                send_screen,
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
        assert offers, r.output
        help = LiveHelp(
            st, make_help_model(f"openai-api/mock/names-{send_screen}", {}, None), lambda: t0, send_screen=send_screen
        )
        assert help.accept(offers[0]["id"])
        end = time.monotonic() + 30
        while help.busy(offers[0]["id"]) and time.monotonic() < end:
            time.sleep(0.02)
        help.close()
        st.close()
        requests = list(srv.requests)
    how = [b for b in requests if "Intention" in json.dumps(b["messages"][:1])]
    assert len(how) >= 2 and len(requests) > len(how)  # the warm-up, the How call, the help
    for body in requests:
        text = json.dumps(body, ensure_ascii=False)
        for part in NAME:
            assert part not in text, (part, text[:3000])
        if send_screen == "never":
            assert SCREEN_TEXT not in text and "9:41 AM" not in text, text[:3000]
    sent = json.dumps(how[-1], ensure_ascii=False)
    assert "[PERSON] (DM) - Acme Corp - Slack" in sent, sent[:3000]  # the title's rest stays: a chat with someone
    if send_screen == "redacted":
        assert "[PERSON] 9:43 AM" in sent  # the screen text is sent, the name in it replaced


def test_how_prompt_redacts_a_dm_title_under_never() -> None:
    """The How call's user message (no server): the title's name is replaced, no screen text is in."""
    from dataclasses import replace

    from help_fixtures import traceback_sample

    from proagent.live import HowModel

    s = traceback_sample()
    ctx = list(s.context)
    shots = tuple(
        replace(x, window_title=TITLE, ocr_text=f"Priya Raman 9:41 AM\n{SCREEN_TEXT}") for x in ctx[0].screenshots
    )
    ctx[0] = replace(ctx[0], app_name="Slack", window_title=TITLE, screenshots=shots)
    s = replace(s, context=tuple(ctx))
    raw = HowModel("mockllm/model", send_screen="raw").prompt(s)
    assert "Priya Raman (DM)" in raw
    for mode in ("never", "redacted"):
        text = HowModel("mockllm/model", send_screen=mode).prompt(s)
        assert "Priya" not in text and "Raman" not in text and "[PERSON] (DM)" in text, (mode, text)
