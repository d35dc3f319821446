"""``proagent mcp`` through the official SDK's own client: spawned over stdio and reached over
streamable HTTP, every tool listed and called on a LifeTrace capture whose screen text and titles
hold the scripted desktop day's planted PII; the PII never comes back unredacted, errors come back
as MCP errors, every call lands in ``mcp.log`` without the text."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from system import require_module

require_module("mcp")

import anyio  # noqa: E402
import httpx2  # noqa: E402
from lifetrace_fixtures import make_lifetrace_db  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from scenarios.desktop import BANK_CARD, EMAIL, ID_NUMBER, PHONE  # noqa: E402

import proagent  # noqa: E402
from proagent.context import ActivityView, ContextService  # noqa: E402
from proagent.live import FeedbackStore  # noqa: E402
from proagent.records import Sample  # noqa: E402

SRC = str(Path(proagent.__file__).resolve().parents[1])
PLANTED = (EMAIL, PHONE, BANK_CARD, ID_NUMBER)
SCREEN = (
    f"Contact {EMAIL} or call {PHONE}. Card {BANK_CARD}, resident ID {ID_NUMBER}. "
    "deploy.py failed: sqlite3.OperationalError: database is locked while writing the cache"
)
TOOLS = {"recent_activity", "search_activity", "current_context", "user_profile", "offers", "answer_offer"}


def _leaks(text: str) -> list[str]:
    """Planted values found in ``text`` (also with their spaces dropped)."""
    flat = text.replace(" ", "")
    return [v for v in PLANTED if v in text or v.replace(" ", "") in flat]


@pytest.fixture(scope="module")
def capture(tmp_path_factory) -> tuple[Path, Path, object]:
    """A capture folder (LifeTrace processed on 2025-11, 40 events, 8 annotated LLM events) whose
    open last event's screen and one earlier event's title and screen hold planted PII, and a live
    folder with one open offer that quotes the screen."""
    root = tmp_path_factory.mktemp("mcp")
    cap = root / "cap"
    fx = make_lifetrace_db(cap / "lifetrace.db", "processed", processed_base="2025-11")
    con = sqlite3.connect(fx.path)
    con.execute("ALTER TABLE events ADD COLUMN intention TEXT")  # as `proagent annotate` writes it
    for eid, name in fx.expected_intentions.items():
        con.execute("UPDATE events SET intention = ? WHERE id = ?", (name, int(eid)))
    mid = next(e for e in fx.live_event_ids[10:] if e not in fx.llm_event_ids and fx.shots_by_event.get(e))
    con.execute("UPDATE events SET window_title = ? WHERE id = ?", (f"Inbox - {EMAIL} - Thunderbird", int(mid)))
    for eid in (mid, fx.open_event_id):
        for sid in fx.shots_by_event[eid]:
            con.execute("DELETE FROM ocr_results WHERE screenshot_id = ?", (sid,))
            con.execute(
                "INSERT INTO ocr_results (screenshot_id, text_content, confidence, language) VALUES (?,?,0.9,'en')",
                (sid, SCREEN),
            )
    con.commit()
    con.close()
    live = root / "live"
    store = FeedbackStore(live)
    t = datetime(2025, 9, 15, 12, 0)
    from proagent.records import Event

    ev = Event(id="1", user="u", start=t, end=t, app_name="Thunderbird", window_title=f"Inbox - {EMAIL}")
    sample = Sample(
        id="s1",
        user="u",
        time=t,
        label=None,
        split="test",
        kind="labelled",
        context=(),
        current=ev,
        window_seconds=300.0,
    )
    store.add_offer(
        sample,
        text=f"Reply to {EMAIL} about the locked database?",
        query="fix database is locked",
        intention="Debugging & Error Resolution",
        p_help=0.8,
        notifier="page",
        created_at=t,
    )
    store.close()
    return cap, live, fx


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROAGENT_") or k == "PROAGENT_ANSWER_CACHE"}
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def _stdio(*args: str, **env: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "proagent.cli", "mcp", *args], env=_env(**env))


def _text(result) -> str:  # noqa: ANN001
    return "".join(getattr(c, "text", "") for c in result.content)


async def _call_every_tool(client: Client) -> dict[str, object]:
    out: dict[str, object] = {}
    tools = (await client.list_tools()).tools
    assert {t.name for t in tools} == TOOLS
    for t in tools:
        assert (
            t.input_schema["type"] == "object"
            and t.input_schema["additionalProperties"] is False
            and t.output_schema is not None
        ), t.name
        assert t.description
    for name, args in (
        ("recent_activity", {"minutes": 600}),
        ("search_activity", {"query": "database is locked error", "limit": 3}),
        ("current_context", {}),
        ("user_profile", {}),
        ("offers", {"status": "open"}),
    ):
        r = await client.call_tool(name, args)
        assert not r.is_error, (name, _text(r))
        assert not _leaks(_text(r)) and not _leaks(json.dumps(r.structured_content)), name
        out[name] = r.structured_content
    offer = out["offers"]["offers"][0]
    r = await client.call_tool("answer_offer", {"id": offer["id"], "response": "accepted"})
    assert not r.is_error, _text(r)
    out["answer_offer"] = r.structured_content
    out["answered"] = (await client.call_tool("offers", {"status": "answered"})).structured_content
    res = await client.list_resources()
    assert "proagent://timeline/today" in {str(x.uri) for x in res.resources}
    day = await client.read_resource("proagent://timeline/today")
    out["timeline"] = json.loads(day.contents[0].text)
    assert not _leaks(day.contents[0].text)
    return out


def _check_answers(out: dict, fx, cap: Path, live: Path) -> None:  # noqa: ANN001
    recent = out["recent_activity"]
    assert recent["redacted"] and recent["events"]
    assert recent["events"][-1]["id"] == fx.open_event_id
    cur = out["current_context"]
    assert cur["app"] == fx.apps[fx.open_event_id]
    assert "[EMAIL]" in cur["screen_text"] and "database is locked" in cur["screen_text"]
    hits = out["search_activity"]["hits"]
    assert hits and "database is locked" in hits[0]["snippet"]
    assert out["search_activity"]["indexed"] == out["search_activity"]["searched"] > 30
    prof = out["user_profile"]
    want: dict[str, int] = {}
    for eid in fx.llm_event_ids:
        want[fx.expected_intentions[eid]] = want.get(fx.expected_intentions[eid], 0) + 1
    assert {i["intention"]: i["events"] for i in prof["intentions"]} == want
    assert prof["personas"] and prof["top_apps"]
    assert out["offers"]["offers"][0]["text"] == "Reply to [EMAIL] about the locked database?"
    assert out["answer_offer"]["response"] == "accepted"
    assert out["answered"]["offers"][0]["response"] == "accepted"
    con = sqlite3.connect(live / "feedback.db")
    assert con.execute("SELECT response, source FROM responses").fetchall()[-1] == ("accepted", "mcp")
    con.close()
    assert out["timeline"]["date"] == "2025-09-15" and out["timeline"]["events"]
    log = cap / "mcp.log"
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert {x["name"] for x in lines} >= TOOLS | {"proagent://timeline/today"}
    text = log.read_text()
    assert not _leaks(text) and "database is locked" not in text and "Thunderbird" not in text
    assert all(x["bytes"] > 0 and re.fullmatch(r"[0-9a-f]{16}", x["args_hash"]) for x in lines)
    assert stat.S_IMODE((cap / ".mcp").stat().st_mode) == 0o700


def test_stdio_every_tool_redacted_and_logged(capture) -> None:
    cap, live, fx = capture

    async def main() -> dict:
        async with Client(_stdio(str(cap), "--live", str(live)), read_timeout_seconds=120) as client:
            return await _call_every_tool(client)

    out = anyio.run(main)
    _check_answers(out, fx, cap, live)


def test_errors_are_mcp_errors_and_the_server_keeps_serving(capture) -> None:
    cap, _, _ = capture

    async def main() -> None:
        async with Client(_stdio(str(cap)), read_timeout_seconds=120) as client:
            for name, args, needle in (
                ("recent_activity", {"minutes": -5}, "minutes"),
                ("recent_activity", {"minutes": 99999}, "minutes: Input should be less than or equal to 1440"),
                ("search_activity", {"query": "", "limit": 0}, "query: String should have at least 1 character; limit"),
                ("recent_activity", {"minutes": "soon"}, "minutes"),
                ("search_activity", {"query": "x", "since": "yesterday-ish"}, "since"),
                ("search_activity", {}, "query"),
                ("offers", {}, "--live"),
                ("answer_offer", {"id": 1, "response": "maybe"}, "response"),
                # issue 37: lax pydantic read true as 1 and 2.5 as 2, and dropped an argument it does not take
                ("recent_activity", {"minutes": True}, "minutes: Input should be a valid number"),
                ("search_activity", {"query": "x", "limit": 2.5}, "limit: Input should be a valid integer"),
                ("recent_activity", {"minutes": 5, "app": "Code"}, "app: Extra inputs are not permitted"),
                ("current_context", {"focused": True}, "focused: Extra inputs are not permitted"),
                ("no_such_tool", {}, "no_such_tool"),
            ):
                r = await client.call_tool(name, args)
                assert r.is_error, (name, args)
                assert needle in _text(r), (needle, _text(r))
                assert "\n" not in _text(r).strip() and "pydantic" not in _text(r), _text(r)
            r = await client.call_tool("current_context", {})
            assert not r.is_error and r.structured_content["app"]
            with pytest.raises(Exception, match="2025-13-45|date|YYYY"):
                await client.read_resource("proagent://timeline/2025-13-45")

    anyio.run(main)


@pytest.mark.parametrize("what", ["not-a-log", "encrypted-without-key"])
def test_a_log_it_cannot_open_is_an_error_not_a_hang(tmp_path: Path, what: str) -> None:
    """The command refuses before serving: the client's connection fails with an MCP error,
    and the server's stderr holds one Error line and no traceback."""
    from mcp import MCPError

    if what == "not-a-log":
        target = tmp_path / "notes"
        target.mkdir()
        (target / "notes.txt").write_text("hello")
        env = {}
    else:
        pytest.importorskip("sqlcipher3")
        target = _encrypted(tmp_path / "cap")
        env = {}
    errlog = (tmp_path / "stderr.txt").open("w+")
    caught: list[BaseException] = []

    async def main() -> None:
        from mcp.client.stdio import stdio_client

        try:
            async with stdio_client(_stdio(str(target), **env), errlog=errlog) as streams:
                async with Client(_Streams(streams), read_timeout_seconds=60) as client:
                    await client.list_tools()
        except BaseException as e:  # noqa: BLE001  (anyio wraps it in exception groups)
            caught.append(e)

    t0 = time.monotonic()
    anyio.run(main)
    assert time.monotonic() - t0 < 60
    assert caught and any(isinstance(e, MCPError) for e in _leaves(caught[0])), caught
    errlog.seek(0)
    err = errlog.read()
    assert "Traceback" not in err
    errors = [x for x in err.splitlines() if x.startswith("Error")]
    assert len(errors) == 1 and str(target) in errors[0], err
    if what == "encrypted-without-key":
        assert "PROAGENT_PASSPHRASE" in errors[0] or "keyring" in errors[0]


def _leaves(e: BaseException) -> list[BaseException]:
    if isinstance(e, BaseExceptionGroup):
        return [x for sub in e.exceptions for x in _leaves(sub)]
    return [e]


class _Streams:
    """A transport over already open streams (the SDK's ``Transport`` protocol)."""

    def __init__(self, streams) -> None:  # noqa: ANN001
        self.streams = streams

    async def __aenter__(self):  # noqa: ANN204
        return self.streams

    async def __aexit__(self, *exc) -> None:  # noqa: ANN002
        return None


def _encrypted(folder: Path, passphrase: str = "correct horse battery staple") -> Path:
    """An encrypted capture made through the recorder's own Store (as capture --encrypt)."""
    from proagent import vault
    from proagent.capture import Store

    old = os.environ.get(vault.PASSPHRASE_ENV)
    os.environ[vault.PASSPHRASE_ENV] = passphrase
    try:
        folder.mkdir(parents=True)
        vault.create_vault(folder)
        st = Store(folder)
        t = datetime(2025, 11, 3, 10, 0, 0)
        for i in range(3):
            eid = st.open_event("code", f"window {i}", t + timedelta(seconds=60 * i))
            st.add_screenshot(
                event_id=eid,
                screen_id=0,
                t=t + timedelta(seconds=60 * i + 1),
                data=b"x" * 64,
                ext="png",
                file_hash="0" * 64,
                width=64,
                height=48,
                app="code",
                title=f"window {i}",
            )
            st.close_event(eid, t + timedelta(seconds=60 * i + 50))
        st.close()
    finally:
        if old is None:
            os.environ.pop(vault.PASSPHRASE_ENV, None)
        else:
            os.environ[vault.PASSPHRASE_ENV] = old
        vault._KEYS.clear()
    return folder


def test_encrypted_capture_with_its_passphrase(tmp_path: Path) -> None:
    pytest.importorskip("sqlcipher3")
    cap = _encrypted(tmp_path / "cap", "s3cret words here")

    async def main() -> dict:
        async with Client(
            _stdio(str(cap), PROAGENT_PASSPHRASE="s3cret words here"), read_timeout_seconds=120
        ) as client:
            r = await client.call_tool("recent_activity", {"minutes": 10})
            assert not r.is_error, _text(r)
            return r.structured_content

    out = anyio.run(main)
    assert [e["title"] for e in out["events"]] == ["window 0", "window 1", "window 2"]
    assert (cap / "mcp.log").is_file() and not (cap / ".mcp").exists()  # no screen text in plain files


def test_http_token_host_and_origin(capture, tmp_path: Path) -> None:
    cap, _, _ = capture
    token_file = tmp_path / "token"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "proagent.cli",
            "mcp",
            str(cap),
            "--http",
            "--token-file",
            str(token_file),
            "--state",
            str(tmp_path),
        ],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stderr.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", line)
        assert m, line
        url, port = m.group(0), int(m.group(1))
        token = token_file.read_text().strip()
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600 and len(token) >= 16
        assert token not in line

        async def main() -> None:
            headers = {"Authorization": f"Bearer {token}"}
            async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
                async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60) as client:
                    assert {t.name for t in (await client.list_tools()).tools} == TOOLS
                    r = await client.call_tool("current_context", {})
                    assert not r.is_error and "[EMAIL]" in r.structured_content["screen_text"]
                    assert not _leaks(_text(r))
            init = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
            async with httpx2.AsyncClient(timeout=30) as raw:
                for hdrs, code in (
                    ({}, 401),
                    ({"Authorization": "Bearer wrong-token-000000"}, 401),
                    ({**headers, "Host": f"evil.example:{port}"}, 421),
                    ({**headers, "Origin": "http://evil.example"}, 403),
                    ({**headers, "Sec-Fetch-Site": "cross-site"}, 403),
                ):
                    r = await raw.post(url, json=init, headers={**base, **hdrs})
                    assert r.status_code == code, (hdrs, r.status_code, r.text)
                    assert token not in r.text

        anyio.run(main)
        assert (tmp_path / "mcp.log").is_file()
        proc.send_signal(signal.SIGINT)  # Ctrl-C is how a server stops: exit 0, no "Error: ... resume"
        rest = proc.communicate(timeout=30)[1]
        assert proc.returncode == 0 and "stopped" in rest and "Error:" not in rest, rest
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(timeout=30)


# ------------------------------------------------------------------ in process (fast)


def test_block_rules_and_raw(capture, tmp_path: Path) -> None:
    cap, _, fx = capture
    mid_title = next(t for t in [_title(cap, e) for e in fx.live_event_ids] if "Thunderbird" in t)
    blocked = ContextService(ActivityView(cap, block_apps=(fx.apps[fx.open_event_id],), block_titles=("thunderbird",)))
    cur = blocked.current_context()
    assert cur.withheld and cur.app is None and cur.screen_text is None
    recent = blocked.recent_activity(600)
    assert recent.withheld >= 1 and all("Thunderbird" not in e.title for e in recent.events)
    assert all(
        h.event.app != fx.apps[fx.open_event_id] for h in blocked.search_activity("database is locked", limit=20).hits
    )
    raw = ContextService(ActivityView(cap, raw=True))
    assert EMAIL in raw.current_context().screen_text
    assert any(e.title == mid_title for e in raw.recent_activity(1440).events)
    assert not raw.recent_activity(1440).redacted


def _title(cap: Path, eid: str) -> str:
    con = sqlite3.connect(cap / "lifetrace.db")
    try:
        return con.execute("SELECT window_title FROM events WHERE id = ?", (int(eid),)).fetchone()[0]
    finally:
        con.close()


def test_the_index_grows_with_the_log_and_is_cached(capture, tmp_path: Path, monkeypatch) -> None:
    import shutil

    from proagent.agent.memory import rag

    cap, _, fx = capture
    copy = tmp_path / "cap"
    shutil.copytree(cap, copy, ignore=shutil.ignore_patterns("mcp.log", ".mcp"))
    state = tmp_path / "state"
    service = ContextService(ActivityView(copy, state=state))
    n0 = service.search_activity("sqlite", limit=1).indexed
    embedded: list[int] = []
    real = rag.embed_texts
    monkeypatch.setattr(rag, "embed_texts", lambda texts: embedded.append(len(texts)) or real(texts))
    con = sqlite3.connect(copy / "lifetrace.db")
    start = datetime(2025, 9, 15, 23, 0, 0)
    con.execute(
        "UPDATE events SET end_time = ? WHERE end_time IS NULL", ((start - timedelta(seconds=5)).isoformat(" "),)
    )
    cur = con.execute(
        "INSERT INTO events (app_name, window_title, start_time, end_time) VALUES (?,?,?,?)",
        ("Terminal", "kubectl rollout status deploy/web", start.isoformat(" "), None),
    )
    eid = cur.lastrowid
    cols = [r[1] for r in con.execute("PRAGMA table_info(screenshots)")]
    row = {
        "file_path": "/x/screen_1_20250915_230001_000.png",
        "file_hash": "0" * 64,
        "file_size": 1,
        "width": 1,
        "height": 1,
        "screen_id": 1,
        "app_name": "Terminal",
        "window_title": "kubectl rollout status deploy/web",
        "created_at": (start + timedelta(seconds=1)).isoformat(" "),
        "event_id": eid,
    }
    row = {k: v for k, v in row.items() if k in cols}
    con.execute(f"INSERT INTO screenshots ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
    con.commit()
    con.close()
    cur_ctx = service.current_context()
    assert cur_ctx.app == "Terminal" and cur_ctx.title == "kubectl rollout status deploy/web"
    assert sum(embedded) <= 4, embedded  # the new event and the one it closed, never the whole log
    hits = service.search_activity("kubernetes deployment rollout", limit=1)
    assert hits.indexed == n0 + 1 and hits.hits[0].event.id == str(eid)
    assert stat.S_IMODE((state / ".mcp" / "index-redacted.npz").stat().st_mode) == 0o600
    embedded.clear()
    again = ContextService(ActivityView(copy, state=state))
    assert again.search_activity("kubernetes deployment rollout", limit=1).hits[0].event.id == str(eid)
    assert embedded == [1], embedded  # a restart embeds only the query: every event from the cache


@pytest.mark.parametrize("kind", ["screenpipe", "activitywatch-rust", "activitywatch-export"])
def test_other_recorders_logs(kind: str, tmp_path: Path) -> None:
    """screenpipe (focused monitor's OCR text and page host) and ActivityWatch (database, followed;
    export, read once) through the same tools."""
    from activity_fixtures import write_aw_export, write_aw_rust, write_screenpipe

    if kind == "screenpipe":
        path = write_screenpipe(tmp_path / ".screenpipe", video=False).parent
    elif kind == "activitywatch-rust":
        (tmp_path / "aw").mkdir()
        path = write_aw_rust(tmp_path / "aw" / "sqlite.db")
    else:
        path = write_aw_export(tmp_path / "aw-export.json")
    service = ContextService(ActivityView(path))
    recent = service.recent_activity(60)
    apps = [e.app for e in recent.events]
    assert {"Code", "Firefox"} <= set(apps), apps
    chat = next(e for e in recent.events if e.app == "Firefox")
    assert chat.host == "chatgpt.com"
    cur = service.current_context()
    if kind == "screenpipe":
        assert cur.app == "Terminal" and "3 passed" in cur.screen_text  # the focused monitor, not the mail one
    else:
        assert cur.app == "Code" and cur.screen_text is None  # ActivityWatch records no screen
    hit = service.search_activity("chatgpt conversation in the browser", limit=1).hits[0]
    assert hit.event.app == "Firefox"
    assert service.timeline().events


def _wait(cond, seconds: float = 60.0) -> None:
    end = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


def test_persona_texts_in_the_background_cached_and_redacted_for_a_remote_model(
    capture, tmp_path: Path, monkeypatch
) -> None:
    """``--persona-model``: user_profile answers at once with the clusters, the texts follow from a
    background writer (one request per cluster, the persona memory's prompt), a restart reads them
    from the private cache; a remote model never sees a planted value, also under ``--raw``; a
    failing model leaves the texts empty with its one-line error and the tools keep answering."""
    from mock_openai import MockOpenAI, last_user_text

    from proagent.context._personas import PersonaWriter

    cap, _, _ = capture
    state = tmp_path / "state"

    def reply(body: dict) -> str | int:
        if "refuse" in last_user_text(body):
            return 401
        return "Works on deploy scripts and mail; asks an AI assistant when a database error stays. And then"

    with MockOpenAI(reply) as srv:
        srv.env(monkeypatch)
        view = ActivityView(cap, raw=True, state=state)
        writer = PersonaWriter(
            "openai-api/mock/persona-writer", cache_file=view.cache_dir / "personas.json", redact=view.redact
        )
        service = ContextService(view, None, writer)
        service.search_activity("database")  # the index: clusters need every event's vector
        first = service.user_profile()
        assert first.persona_model == "openai-api/mock/persona-writer" and len(first.personas) >= 2
        _wait(lambda: service.user_profile().personas_pending == 0)
        done = service.user_profile()
        assert all(
            c.persona == "Works on deploy scripts and mail; asks an AI assistant when a database error stays."
            for c in done.personas
        ), [c.persona for c in done.personas]
        assert len(srv.requests) == len({p for p in service._profile[2]}) and done.persona_error is None
        assert any("Write this user's persona" in last_user_text(b) for b in srv.requests)
        assert writer.texts([f"a title with {EMAIL} and {PHONE}"]) == [None]
        _wait(lambda: writer.pending == 0)
        sent = json.dumps(srv.requests)
        assert not _leaks(sent) and "[EMAIL]" in sent
        cache = state / ".mcp" / "personas.json"
        assert stat.S_IMODE(cache.stat().st_mode) == 0o600 and not _leaks(cache.read_text())
        writer.close()
        n = len(srv.requests)
        again = ContextService(
            ActivityView(cap, raw=True, state=state),
            None,
            PersonaWriter("openai-api/mock/persona-writer", cache_file=cache),
        )
        again.search_activity("database")
        prof = again.user_profile()
        assert prof.personas_pending == 0 and all(c.persona for c in prof.personas) and len(srv.requests) == n
        failing = PersonaWriter("openai-api/mock/persona-writer")
        before = len(srv.requests)
        assert failing.texts(["refuse this", "refuse that too"]) == [None, None]
        _wait(lambda: failing.pending == 0)
        assert len(srv.requests) == before + 1  # one failure per call, not one per cluster
        assert failing.error.startswith("AuthenticationError: ") and "Future" not in failing.error, failing.error
        assert "\n" not in failing.error and failing.texts(["refuse this"]) == [None]
        assert failing.pending == 0  # a failed text is not asked for again in this run
        failing.close()


def test_a_slow_call_does_not_hold_the_others(capture, tmp_path: Path, monkeypatch) -> None:
    """The SDK runs each (synchronous) tool in a worker thread: while a search waits 3 s on its
    query's embedding, current_context calls are answered at their usual speed."""
    from proagent.agent.memory import rag
    from proagent.context import build_server

    cap, _, _ = capture
    service = ContextService(ActivityView(cap, state=tmp_path))
    service.search_activity("warm the index")
    real = rag.embed_texts
    monkeypatch.setattr(rag, "embed_texts", lambda texts: time.sleep(3.0) or real(texts))
    times: list[float] = []

    async def main() -> None:
        async with Client(build_server(service)) as client:

            async def slow() -> None:
                r = await client.call_tool("search_activity", {"query": "database is locked"})
                assert not r.is_error

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                await anyio.sleep(0.3)
                for _ in range(5):
                    t0 = time.monotonic()
                    r = await client.call_tool("current_context", {})
                    times.append(time.monotonic() - t0)
                    assert not r.is_error and r.structured_content["app"]

    t0 = time.monotonic()
    anyio.run(main)
    assert time.monotonic() - t0 >= 3.0 and max(times) < 1.0, times
