"""Prompt rendering: taxonomy in the system prompt, current state, context order,
prefix reuse, chain-of-thought steps and OCR screen text."""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path

import pytest

from proagent.agent.prompting import (
    SCREEN_CHARS,
    SUMMARY_CHARS,
    render_event,
    system_prompt,
)
from proagent.agent.solvers import user_prompt
from proagent.bench.samples import SampleConfig, build_samples
from proagent.records import Event, Sample, Screenshot
from proagent.taxonomy import load_taxonomy

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "proactivebench"

T0 = datetime(2025, 9, 15, 9, 0, 0)


def _shot(i: int, at: float, ocr: str = "") -> Screenshot:
    return Screenshot(
        id=i,
        time=T0 + timedelta(seconds=at),
        app_name="Visual Studio Code",
        window_title="main.py - proagent",
        file_name=f"screen_0_{i}.png",
        ocr_text=ocr,
    )


def _event(i: int, at: float, summary: str, app: str = "Google Chrome", title: str = "Docs", **kw) -> Event:
    return Event(
        id=str(i),
        user="U",
        start=T0 + timedelta(seconds=at),
        end=T0 + timedelta(seconds=at + 30),
        app_name=app,
        window_title=title,
        summary=summary,
        **kw,
    )


def _sample(
    summary: str = "Editing the training loop.", shots=(), context=None, window: float = 300.0, description: str = ""
) -> Sample:
    ctx = (
        context
        if context is not None
        else (
            _event(1, 0, "FIRST reads the pytest docs"),
            _event(2, 40, "SECOND opens the terminal", app="Terminal", title="zsh"),
            _event(3, 80, "THIRD runs the failing test", app="Terminal", title="zsh"),
        )
    )
    cur = Event(
        id="9",
        user="U",
        start=T0 + timedelta(seconds=120),
        end=T0 + timedelta(seconds=200),
        app_name="Visual Studio Code",
        window_title="main.py - proagent - Visual Studio Code",
        summary=summary,
        description=description,
        screenshots=tuple(shots),
    )
    return Sample(
        id="U:9:labelled",
        user="U",
        time=cur.end,
        label=1,
        split="test",
        kind="labelled",
        context=tuple(ctx),
        current=cur,
        window_seconds=window,
    )


def _line(prompt: str, label: str) -> str:
    m = re.search(rf"^- {re.escape(label)}: (.*)$", prompt, re.M)
    assert m, f"no '{label}' line in the prompt"
    return m.group(1)


def _screen(prompt: str) -> str:
    m = re.search(r"Screen content:\n(.*?)\n\n", prompt, re.S)
    assert m, "no screen content section"
    return m.group(1)


# --------------------------------------------------------------------------- system prompt


def test_system_prompt_lists_the_16_categories_from_the_data_file():
    data = json.loads(resources.files("proagent").joinpath("data/intentions.json").read_text("utf-8"))
    names = [c["name"] for c in data["categories"]]
    assert len(names) == 16
    sp = system_prompt()
    positions = [sp.find(f"{i}. {n}:") for i, n in enumerate(names, 1)]
    assert all(p >= 0 for p in positions), [n for n, p in zip(names, positions) if p < 0]
    assert positions == sorted(positions)  # in the file's order
    for c in data["categories"]:
        assert c["description"] in sp
    assert "$categories" not in sp


def test_system_prompt_follows_a_custom_taxonomy(tmp_path):
    path = tmp_path / "tax.json"
    path.write_text(
        json.dumps(
            {"categories": [{"name": "Alpha Things", "description": "a"}, {"name": "Other", "description": "rest"}]}
        ),
        "utf-8",
    )
    sp = system_prompt(load_taxonomy(path))
    assert "1. Alpha Things: a" in sp and "2. Other: rest" in sp
    assert "Code Programming" not in sp


def test_system_prompt_is_sample_independent():
    a, b = _sample("Writing an email."), _sample("Debugging a crash.", window=10)
    sp = system_prompt()
    assert sp == system_prompt(load_taxonomy())
    for s in (a, b):
        up = user_prompt(s)
        assert s.current.summary in up and s.current.summary not in sp
    # the user prompts share a common start (history first, current state last)
    pa, pb = user_prompt(a), user_prompt(_sample("Debugging a crash."))
    common = os.path.commonprefix([pa, pb])
    assert "THIRD" in common and "Current state" in common  # the whole context block is shared
    assert pa.index("Recent activity") < pa.index("Current state") < pa.index("Screen content")


# --------------------------------------------------------------------------- current state


def test_current_state_summary_is_cut_to_200_characters():
    long = "The user scrolls through a very long stack trace in the editor and " * 12
    p = user_prompt(_sample(long))
    shown = _line(p, "Screen summary")
    assert len(shown) <= SUMMARY_CHARS == 200
    assert shown.endswith("…")
    assert long.startswith(shown[:-1].rstrip())
    short = "Editing the training loop."
    assert _line(user_prompt(_sample(short)), "Screen summary") == short


def test_summary_whitespace_and_description_fallback():
    p = user_prompt(_sample("Line one\n\n   line   two"))
    assert _line(p, "Screen summary") == "Line one line two"
    p = user_prompt(_sample("", description="Detailed: the user edits slides."))
    assert _line(p, "Screen summary") == "Detailed: the user edits slides."
    assert _line(user_prompt(_sample("")), "Screen summary") == "(none)"


def test_current_state_fields():
    s = _sample()
    p = user_prompt(s)
    assert _line(p, "Application") == "Visual Studio Code"
    assert _line(p, "Window title") == "main.py - proagent - Visual Studio Code"
    assert _line(p, "Time").startswith(f"{s.time:%Y-%m-%d %H:%M:%S}")
    assert "last 5 min" in p
    assert "last 10 s" in user_prompt(_sample(window=10))


# --------------------------------------------------------------------------- context


def test_context_is_oldest_first():
    p = user_prompt(_sample())
    i1, i2, i3 = p.index("FIRST"), p.index("SECOND"), p.index("THIRD")
    assert i1 < i2 < i3 < p.index("Current state")
    assert render_event(_event(2, 40, "SECOND opens the terminal", app="Terminal", title="zsh")) in p
    assert "[09:00:40] Terminal | zsh: SECOND opens the terminal" in p


def test_context_order_from_built_samples():
    # labelled events given newest first: the builder sorts them, the prompt keeps that order
    evs = [
        Event(
            id=f"s:{i}",
            user="s",
            start=T0 + timedelta(seconds=20 * i),
            end=T0 + timedelta(seconds=20 * i + 20),
            summary=f"step number {i:02d} happens",
            needs_help=i % 2 == 0,
        )
        for i in reversed(range(8))
    ]
    samples = build_samples(evs, SampleConfig(window_seconds=600))
    last = samples[-1]
    assert len(last.context) == 7
    p = user_prompt(last)
    pos = [p.index(f"step number {i:02d} happens") for i in range(7)]
    assert pos == sorted(pos)
    assert "step number 07 happens" not in p.split("Current state")[0]  # the current event is not history


def test_empty_context():
    p = user_prompt(_sample(context=()))
    assert "(nothing earlier in the window)" in p


@pytest.mark.skipif(
    not (SHARED / "code_11.json").is_file(), reason=f"real ProactiveBench sessions not found at {SHARED}"
)
def test_real_sample_prompt():
    from proagent.sources.proactivebench import read_proactivebench

    samples = build_samples(read_proactivebench(SHARED), SampleConfig(window_seconds=600))
    s = max(samples, key=lambda x: len(x.context))
    assert len(s.context) >= 3
    p = user_prompt(s)
    lines = re.findall(r"^\[(\d\d:\d\d:\d\d)\] ", p, re.M)
    assert len(lines) == len(s.context)
    assert lines == [f"{c.start:%H:%M:%S}" for c in s.context]
    assert lines == sorted(lines) or s.context[0].start.date() != s.context[-1].start.date()


# --------------------------------------------------------------------------- methods


def test_cot_instruction_has_the_four_steps():
    s = _sample()
    cot = user_prompt(s, "cot")
    steps = ["Step 1 (Describe)", "Step 2 (Analyse needs)", "Step 3 (Judge)", "Step 4 (Classify intention)"]
    pos = [cot.find(x) for x in steps]
    assert all(p >= 0 for p in pos) and pos == sorted(pos)
    tail = cot[pos[-1] :]
    assert "Need help: Yes or No" in tail and "Intention:" in tail and "Query:" in tail
    zs = user_prompt(s, "zero-shot")
    assert "Step 1" not in zs and "Need help: Yes or No" in zs
    # the observation part is the same for both methods
    assert cot.split("Screen content:")[0] == zs.split("Screen content:")[0]
    with pytest.raises(KeyError):
        user_prompt(s, "tree-of-thought")


# --------------------------------------------------------------------------- screen text


def test_ocr_from_latest_screenshot_with_text():
    shots = [_shot(1, 121, "OLD SCREEN TEXT"), _shot(2, 150, "LATEST SCREEN TEXT"), _shot(3, 190, "   ")]
    screen = _screen(user_prompt(_sample(shots=shots)))
    assert screen == "LATEST SCREEN TEXT"
    shots = [_shot(1, 121, "OLD SCREEN TEXT"), _shot(2, 150, "NEWER\n  TEXT")]
    assert _screen(user_prompt(_sample(shots=shots))) == "NEWER TEXT"


def test_no_ocr_text():
    assert _screen(user_prompt(_sample(shots=[_shot(1, 121), _shot(2, 130)]))) == "(no screen text)"
    assert _screen(user_prompt(_sample(shots=[]))) == "(no screen text)"


def test_long_ocr_is_cut():
    text = "token " * 400
    screen = _screen(user_prompt(_sample(shots=[_shot(1, 121, text)])))
    assert len(screen) <= SCREEN_CHARS and screen.endswith("…")


# --------------------------------------------------------------------------- through inspect (prefix reuse)


def test_solver_sends_identical_system_message(monkeypatch, tmp_path):
    """Run the zero-shot solver through inspect with a mock model: every request
    starts with the same system message, followed by the rendered user prompt."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import MemoryDataset
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from proagent.agent.solvers import method_solver
    from proagent.bench.scorers import assist_scorer
    from proagent.bench.tasks import to_inspect_samples

    seen: list[list] = []

    def answer(messages, tools, tool_choice, config):
        seen.append(messages)
        out = ModelOutput.from_content(model="mockllm", content="Need help: No\nIntention: Uncategorized\nQuery: N/A")
        out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return out

    samples = [
        _sample("Writing an email to the team."),
        _sample("Debugging a crash.", shots=[_shot(1, 121, "Traceback (most recent call last)")]),
        _sample("Reading the paper.", context=()),
    ]
    samples = [replace(s, id=f"U:{i}:labelled") for i, s in enumerate(samples)]
    task = Task(
        dataset=MemoryDataset(to_inspect_samples(samples)), solver=method_solver("zero-shot"), scorer=assist_scorer()
    )
    model = get_model("mockllm/model", custom_outputs=answer)
    logs = eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none", max_samples=1)
    assert logs[0].status == "success", logs[0].error
    assert len(seen) == 3
    systems = [m[0] for m in seen]
    assert all(m.role == "system" for m in systems)
    assert len({m.text for m in systems}) == 1
    assert systems[0].text == system_prompt()
    users = sorted(m[1].text for m in seen)
    assert users == sorted(user_prompt(s) for s in samples)


def test_consecutive_moments_share_the_whole_earlier_prompt_but_its_tail():
    """Prompt layout for prefix reuse: a moment's user prompt starts with the whole
    history of the moment before it (the window grows by appending); only the newest
    event, the current state, the screen and the instruction follow."""
    evs = [
        Event(
            id=f"s:{i}",
            user="s",
            start=T0 + timedelta(seconds=20 * i),
            end=T0 + timedelta(seconds=20 * i + 20),
            summary=f"step number {i:02d} happens",
            needs_help=True,
        )
        for i in range(6)
    ]
    samples = sorted(build_samples(evs, SampleConfig(window_seconds=600)), key=lambda s: s.time)
    assert len(samples) >= 4 and not samples[0].context
    for a, b in zip(samples[1:], samples[2:]):  # the first moment has the empty-history placeholder
        pa, pb = user_prompt(a), user_prompt(b)
        history = pa.split("\n\nCurrent state")[0]
        assert os.path.commonprefix([pa, pb]).startswith(history)
        tail = pb[len(history) :]
        assert tail.startswith(f"\n{render_event(b.context[-1])}\n\nCurrent state:")  # the newest event, then the state
