"""``proagent capture`` with default options on a real Chromium window whose tabs are switched
(issue 34 item 3): the scripted desktop's mail inbox -> Gemini chat -> inbox in one window
(tests/scenarios/desktop.py, tab steps), after an xterm and a ChatGPT window. Each page is its
own event although the application stays ``chromium``; with ``--no-split-on-tab`` the four
Chromium pages are one event (LifeTrace's app rule). Both recorders watch the same play-through.
Chromium under Xvfb: marked slow."""

from __future__ import annotations

from pathlib import Path

import pytest
import solo
from system import require_binary, require_module

require_module("imagehash", "noto_cjk_sans_otc")

from scenarios.desktop import PROGRAMS, Desktop, Scenario, Step, match_events, start_capture, stop_captures  # noqa: E402

pytestmark = pytest.mark.slow

SWITCHES = Scenario(
    "tabs",
    (
        Step("term", 4),
        Step("chat", 5),
        Step("inbox", 6),
        Step("gemini", 7, "\n", tab=True),
        Step("inbox", 5, tab=True),
        Step("term", 3),
    ),
)
"""A window switch between two Chromium windows (ChatGPT -> the inbox), then two tab switches."""


def test_tab_switches_in_one_browser_are_events(tmp_path: Path) -> None:
    from proagent.sources.lifetrace import load_lifetrace

    require_binary(*PROGRAMS)
    runs = {"tabs": (), "app-only": ("--no-split-on-tab",)}  # two recorders watching one play-through
    with Desktop(tmp_path / "desktop") as desk:
        with solo.alone(beside=1):  # capture's 1 Hz: real time (no OCR: one worker beside it)
            procs = {
                name: start_capture(desk, tmp_path / name, extra=(*extra, "--no-ocr"), log=tmp_path / f"{name}.log")
                for name, extra in runs.items()
            }
            truth = desk.play(SWITCHES)
            rcs = dict(zip(runs, stop_captures([(procs[name], tmp_path / name) for name in runs])))
    logs = {}
    for name in runs:
        assert rcs[name] == 0, (tmp_path / f"{name}.log").read_text("utf-8")
        logs[name] = (truth, list(load_lifetrace(tmp_path / name / "lifetrace.db").events))
    truth, events = logs["tabs"]
    assert [t["page"] for t in truth["events"]] == ["term", "chat", "inbox", "gemini", "inbox", "term"]
    assert [t["tab"] for t in truth["events"]] == [False, False, False, True, True, False]
    got = [(e.app_name, e.window_title) for e in events]
    assert got == [
        ("xterm", "python app.py"),
        ("chromium", "ChatGPT - Chromium"),
        ("chromium", "Inbox - Mail - Chromium"),
        ("chromium", "Gemini - Chromium"),
        ("chromium", "Inbox - Mail - Chromium"),
        ("xterm", "python app.py"),
    ], got
    match = match_events(truth, events)
    assert [match[t["index"]] for t in truth["events"]] == list(range(6))
    gemini = events[3]
    assert {s.window_title for s in gemini.screenshots} == {"Gemini - Chromium"}  # no mail screen in the chat event
    truth, events = logs["app-only"]
    assert [e.app_name for e in events] == ["xterm", "chromium", "xterm"]
