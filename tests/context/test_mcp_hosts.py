"""What MCP hosts expect of ``proagent mcp`` (issue 47) and how it stands up to faults (issue 46),
through the official SDK's own client: prompts a host shows as slash commands, the ``now``
resource, answers under a token cap with cursors that page through the rest, and clear tool
errors (never "Error executing tool" alone, never a traceback) when an id is out of range, the
database is replaced or deleted while serving, or the token file is under /proc."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from system import require_module

require_module("mcp")

import anyio  # noqa: E402
from lifetrace_fixtures import make_lifetrace_db  # noqa: E402
from mcp import Client, MCPError, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

import proagent  # noqa: E402
from proagent.context import ActivityView, ContextService, build_server, estimate_tokens  # noqa: E402
from proagent.live import FeedbackStore  # noqa: E402

SRC = str(Path(proagent.__file__).resolve().parents[1])
PROMPTS = {"what_was_i_doing", "find_where_i_saw", "summarise_my_day"}


def _text(result) -> str:  # noqa: ANN001
    return "".join(getattr(c, "text", "") for c in result.content)


def _tokens_sent(result) -> int:  # noqa: ANN001
    """The stated estimate (UTF-8 bytes / 2.5) of the text the client received."""
    return -(-len(_text(result).encode("utf-8")) * 2 // 5)


@pytest.fixture(scope="module")
def cap(tmp_path_factory) -> Path:
    """A LifeTrace capture of one day (2025-09-15, 120 events, long Chinese and English titles)."""
    folder = tmp_path_factory.mktemp("hosts") / "cap"
    fx = make_lifetrace_db(folder / "lifetrace.db", "processed", n_events=120, soft_delete=False)
    con = sqlite3.connect(fx.path)
    for (eid,) in con.execute("SELECT id FROM events").fetchall():
        title = f"第{eid}章 实验结果与讨论 - report-{eid}.docx - notes on the nightly deploy and its locked database"
        con.execute("UPDATE events SET window_title = ? WHERE id = ?", (title, eid))
    con.commit()
    con.close()
    return folder


async def _all_pages(client: Client, tool: str, args: dict, cap_tokens: int) -> list[dict]:
    pages, cursor = [], None
    for _ in range(100):
        r = await client.call_tool(tool, {**args, **({"cursor": cursor} if cursor else {})})
        assert not r.is_error, _text(r)
        assert _tokens_sent(r) <= cap_tokens, (_tokens_sent(r), cap_tokens)
        assert estimate_tokens(r.structured_content) <= cap_tokens
        pages.append(r.structured_content)
        cursor = r.structured_content["next_cursor"]
        if cursor is None:
            return pages
    raise AssertionError("the cursors never ended")


def test_recent_activity_fits_the_cap_and_cursors_page_through_the_rest(cap: Path, tmp_path: Path) -> None:
    """recent_activity under a 1,500-token cap: every answer's text is under it (by the stated
    estimate), a cut answer says so and gives a cursor, and following the cursors yields every
    event of the window once, newest page first, in one fixed window."""
    whole = ContextService(ActivityView(cap, state=tmp_path), max_tokens=10**9).recent_activity(1440)
    assert len(whole.events) > 60
    service = ContextService(ActivityView(cap, state=tmp_path), max_tokens=1500)

    async def main() -> None:
        async with Client(build_server(service)) as client:
            pages = await _all_pages(client, "recent_activity", {"minutes": 1440}, 1500)
            assert len(pages) > 2
            first = pages[0]
            assert first["note"] and "1500 tokens" in first["note"] and first["remaining"] > 0
            ids = [e["id"] for p in reversed(pages) for e in p["events"]]
            assert ids == [e.id for e in whole.events]  # all, once, oldest first when pages are put back
            assert pages[-1]["remaining"] == 0 and pages[-1]["note"] is None
            assert {p["since"] for p in pages} == {first["since"]}  # one window for every page

    anyio.run(main)


def test_search_pages_by_falling_score(tmp_path: Path) -> None:
    """search_activity with limit 20 under a 1,500-token cap: cut answers say so, the cursors give
    every eligible event once, best first across pages; a cursor of another tool or another
    search is refused with a reason."""
    small = tmp_path / "cap"
    make_lifetrace_db(small / "lifetrace.db", "processed", n_events=24, soft_delete=False)
    service = ContextService(ActivityView(small, state=tmp_path), max_tokens=1500)

    async def main() -> None:
        async with Client(build_server(service)) as client:
            recent = (await client.call_tool("recent_activity", {"minutes": 5})).structured_content
            hits = await _all_pages(client, "search_activity", {"query": "deploy database locked", "limit": 20}, 1500)
            assert any(p["note"] and "1500 tokens" in p["note"] for p in hits)
            found = [h["event"]["id"] for p in hits for h in p["hits"]]
            assert len(found) == len(set(found)) == hits[0]["searched"] > 20
            scores = [h["score"] for p in hits for h in p["hits"]]
            assert scores == sorted(scores, reverse=True)

            r = await client.call_tool("recent_activity", {"minutes": 30, "cursor": hits[0]["next_cursor"]})
            assert r.is_error and "cursor" in _text(r) and "recent_activity" in _text(r)
            r = await client.call_tool("search_activity", {"query": "something else", "cursor": hits[0]["next_cursor"]})
            assert r.is_error and "another search" in _text(r)
            r = await client.call_tool("search_activity", {"query": "x", "cursor": "not-a-cursor!"})
            assert r.is_error and "cursor" in _text(r) and "Error executing" not in _text(r)

            assert recent["next_cursor"] is None

    anyio.run(main)


def test_the_default_cap_holds_a_whole_day(cap: Path, tmp_path: Path) -> None:
    """With the default cap (10,000 estimated tokens, where Claude Code starts to warn) a day of
    events with long titles is cut, said so, and fits; the day's timeline resource too."""
    service = ContextService(ActivityView(cap, state=tmp_path))
    assert service.max_tokens == 10_000
    full = ContextService(ActivityView(cap), max_tokens=10**9).timeline("2025-09-15")

    async def main() -> None:
        async with Client(build_server(service)) as client:
            r = await client.call_tool("recent_activity", {"minutes": 1440})
            assert not r.is_error and r.structured_content["next_cursor"], "a day of long titles is over 10k"
            assert 8_000 < _tokens_sent(r) <= 10_000
            day = await client.read_resource("proagent://timeline/2025-09-15")
            tl = json.loads(day.contents[0].text)
            assert (
                tl["truncated"]
                and tl["total_events"] == len(full.events)
                and -(-len(day.contents[0].text.encode()) * 2 // 5) <= 10_000
            )
            ends = [tl["events"][0]["id"], tl["events"][-1]["id"]]
            assert ends == [full.events[0].id, full.events[-1].id]  # spread over the day, not its morning

    anyio.run(main)


def test_prompts_and_the_now_resource(cap: Path, tmp_path: Path, monkeypatch) -> None:
    """The three prompts are listed (hosts show them as slash commands) and render a request naming
    the tools, with proagent://now embedded; now gives the local time in the zone TZ says, ready
    ranges and the log's reach; bad prompt arguments are protocol errors with a reason."""
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    time.tzset()
    try:
        service = ContextService(ActivityView(cap, state=tmp_path))

        async def main() -> None:
            async with Client(build_server(service)) as client:
                listed = {p.name: p for p in (await client.list_prompts()).prompts}
                assert set(listed) == PROMPTS
                assert [a.name for a in listed["find_where_i_saw"].arguments] == ["what", "when"]
                assert listed["find_where_i_saw"].arguments[0].required

                res = await client.read_resource("proagent://now")
                now = json.loads(res.contents[0].text)
                utc = datetime.utcnow()
                local = datetime.fromisoformat(now["local_time"])
                assert abs(local - (utc + timedelta(hours=8))) < timedelta(minutes=2)
                assert now["utc_offset"] == "+08:00" and now["time_zone"] == "Asia/Shanghai"
                today = now["ranges"]["today"]
                assert today["since"] == local.date().isoformat() + "T00:00:00" and today["until"] == now["local_time"]
                y = now["ranges"]["yesterday"]
                assert y["until"] == (local.date() - timedelta(days=1)).isoformat() + "T23:59:59"
                assert now["log_last"].startswith("2025-09-15") and "recent_activity counts back" in now["note"]

                got = await client.get_prompt("what_was_i_doing", {"minutes": "45"})
                text = got.messages[0].content.text
                assert "recent_activity with minutes=45" in text and "current_context" in text
                emb = got.messages[1].content.resource
                assert str(emb.uri) == "proagent://now" and json.loads(emb.text)["time_zone"] == "Asia/Shanghai"

                got = await client.get_prompt(
                    "find_where_i_saw", {"what": "the locked database error", "when": "yesterday"}
                )
                assert "search_activity" in got.messages[0].content.text and "yesterday" in got.messages[0].content.text

                got = await client.get_prompt("summarise_my_day", {})
                assert "2025-09-15" in got.messages[0].content.text
                tl = got.messages[1].content.resource
                assert str(tl.uri) == "proagent://timeline/2025-09-15" and json.loads(tl.text)["events"]

                for name, args, needle in (
                    ("what_was_i_doing", {"minutes": "soon"}, "minutes"),
                    ("summarise_my_day", {"day": "2025-13-45"}, "YYYY-MM-DD"),
                    ("find_where_i_saw", {"what": "  "}, "what"),
                ):
                    with pytest.raises(MCPError, match=needle):
                        await client.get_prompt(name, args)

        anyio.run(main)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROAGENT_")}
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return env


class _Streams:
    def __init__(self, streams) -> None:  # noqa: ANN001
        self.streams = streams

    async def __aenter__(self):  # noqa: ANN204
        return self.streams

    async def __aexit__(self, *exc) -> None:  # noqa: ANN002
        return None


def test_faults_while_serving_are_clear_tool_errors(tmp_path: Path) -> None:
    """Issue 46: over stdio, an offer id of 2**63, a damaged feedback.db, the capture's database
    replaced by another log and then by a damaged file, and the capture folder deleted: each call
    answers a one-line tool error with its reason (or the new log's events), the deleted log's
    events are not served from memory, and the server's stderr holds no traceback."""
    cap = tmp_path / "cap"
    make_lifetrace_db(cap / "lifetrace.db", "processed", n_events=30)
    live = tmp_path / "live"
    FeedbackStore(live).close()
    other = tmp_path / "other"
    make_lifetrace_db(other / "lifetrace.db", "processed", n_events=12, start=datetime(2025, 9, 20, 9, 0, 0))
    errlog = (tmp_path / "stderr.txt").open("w+")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "proagent.cli", "mcp", str(cap), "--live", str(live)], env=_env()
    )

    async def call(client: Client, name: str, args: dict) -> tuple[bool, str, dict | None]:
        r = await client.call_tool(name, args)
        return r.is_error, _text(r), r.structured_content

    async def main() -> None:
        async with stdio_client(params, errlog=errlog) as streams:
            async with Client(_Streams(streams), read_timeout_seconds=120) as client:
                err, text, _ = await call(client, "answer_offer", {"id": 2**63, "response": "accepted"})
                assert err and text.startswith("answer_offer: id:") and "9223372036854775807" in text, text
                err, text, _ = await call(client, "answer_offer", {"id": 2**63 - 1, "response": "accepted"})
                assert err and "no offer 9223372036854775807" in text, text

                err, _, before = await call(client, "recent_activity", {"minutes": 1440})
                assert not err and before["events"][0]["start"].startswith("2025-09-15")

                (live / "feedback.db").write_bytes(b"this is no database " * 400)
                err, text, _ = await call(client, "offers", {"status": "all"})
                assert err and text.startswith("offers: ") and "database" in text and "Error executing" not in text, (
                    text
                )

                os.replace(other / "lifetrace.db", cap / "lifetrace.db")  # replaced while serving
                err, text, now = await call(client, "recent_activity", {"minutes": 1440})
                assert not err, text
                assert now["events"] and all(e["start"].startswith("2025-09-20") for e in now["events"]), now

                (cap / "lifetrace.db").write_bytes(b"\x00garbage" * 2000)
                err, text, _ = await call(client, "current_context", {})
                assert err and "not a SQLite database" in text, text

                shutil.rmtree(cap)
                for name, args in (
                    ("recent_activity", {"minutes": 1440}),
                    ("current_context", {}),
                    ("search_activity", {"query": "database"}),
                    ("user_profile", {}),
                ):
                    err, text, out = await call(client, name, args)
                    assert err and "the log is gone" in text and text.startswith(f"{name}: "), (name, text, out)
                with pytest.raises(MCPError, match="the log is gone"):
                    await client.read_resource("proagent://timeline/today")

    anyio.run(main)
    errlog.seek(0)
    err = errlog.read()
    assert "Traceback" not in err and "╭" not in err, err
