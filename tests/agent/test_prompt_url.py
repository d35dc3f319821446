"""The When/How prompt shows an event's browser URL where its source records one (issue 27):
host and path only (no query, fragment, credentials or port), in the context lines and the
current state; a prompt of an event without a URL is as before."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from proagent.agent.prompting import render_event, web_page
from proagent.agent.solvers import user_prompt
from proagent.records import Event, Sample, Screenshot

T = datetime(2025, 6, 3, 10, 0, 0)


def _event(i: int, url: str | None, title: str = "Issue 12 · repo") -> Event:
    shot = Screenshot(
        id=i,
        time=T + timedelta(seconds=30 * i),
        app_name="firefox",
        window_title=title,
        file_name=f"screen_0_{i}.png",
        ocr_text="Traceback (most recent call last)",
    )
    return Event(
        id=str(i),
        user="u",
        start=T + timedelta(seconds=30 * i),
        end=T + timedelta(seconds=30 * i + 29),
        app_name="firefox",
        window_title=title,
        summary="reads an issue",
        screenshots=(shot,),
        url=url,
    )


def _sample(context: tuple[Event, ...], current: Event) -> Sample:
    return Sample(
        id="u-1",
        user="u",
        time=current.end,
        label=0,
        split="test",
        kind="negative",
        context=context,
        current=current,
        window_seconds=300,
    )


@pytest.mark.parametrize(
    "url, shown",
    [
        ("https://alice:pw@github.com:8443/a/b/issues/12?token=s3cr3t#top", "github.com/a/b/issues/12"),
        ("https://mail.example.com/inbox?email=bob@example.com", "mail.example.com/inbox"),
        ("https://chat.openai.com/", "chat.openai.com"),
        ("file:///home/u/report.pdf", "/home/u/report.pdf"),
        ("http://[::1", ""),  # does not parse: nothing shown
        ("   ", ""),
        (None, ""),
    ],
)
def test_web_page_keeps_host_and_path_only(url: str | None, shown: str) -> None:
    assert web_page(url) == shown
    assert len(web_page("https://x.org/" + "p" * 500)) <= 100


def test_the_prompt_shows_the_page_in_context_and_current_state() -> None:
    url = "https://github.com/a/b/issues/12?token=s3cr3t"
    text = user_prompt(_sample((_event(0, "https://docs.python.org/3/library/?q=asyncio"),), _event(1, url)))
    assert "- Web page: github.com/a/b/issues/12" in text
    assert "| docs.python.org/3/library:" in text  # the context line
    assert "s3cr3t" not in text and "asyncio" not in text and "token" not in text


def test_a_prompt_without_urls_is_unchanged() -> None:
    ctx, cur = _event(0, None), _event(1, None)
    text = user_prompt(_sample((ctx,), cur))
    assert "Web page" not in text
    assert render_event(ctx) == "[10:00:00] firefox | Issue 12 · repo: reads an issue"
    # the same events with a URL differ only by the page: the title line and the context line
    with_url = user_prompt(_sample((replace(ctx, url="https://a.org/x"),), replace(cur, url="https://b.org/y")))
    assert with_url.replace(" | a.org/x", "").replace("\n- Web page: b.org/y", "") == text


def test_activitywatch_urls_reach_the_prompt(tmp_path: Path) -> None:
    from activity_fixtures import write_aw_rust

    from proagent.sources.load import load_events

    events = load_events(write_aw_rust(tmp_path / "aw.db"))
    chat = next(e for e in events if e.url and "chatgpt.com" in e.url)
    before = tuple(e for e in events if e.start < chat.start)
    text = user_prompt(_sample(before, chat))
    assert "- Web page: chatgpt.com/c/1" in text
