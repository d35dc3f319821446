"""The live folder's state files under damage and a full disk: a damaged ``blocked-apps.json`` is
one error naming the file and its repair (never read as empty, never overwritten by the next
block), and an answer or a block that meets a full disk is one clear error (507 on the page) and
is kept, written once space frees."""

from __future__ import annotations

import errno
import json
import sqlite3
import urllib.error
import urllib.request
from datetime import datetime
from pathlib import Path

import pytest
from help_fixtures import store_with_offers

from proagent.errors import DataError, RunError
from proagent.live import OfferPage, Restraint
from proagent.live import _restraint as restraint_mod
from proagent.live._feedback import FeedbackFull
from proagent.live._restraint import BLOCKED_APPS_FILE, block_app, blocked_apps, unblock_app
from proagent.records import Event

DAMAGED = [
    ('{"apps": ["xterm"', "is not JSON"),
    ('["xterm"]', "is not"),
    ('{"apps": "xterm"}', "is not"),
    ('{"apps": [1]}', "is not"),
    (b"\xff\xfe{", "not UTF-8"),
    (None, "a directory"),
]


def _damage(folder: Path, data: str | bytes | None) -> Path:
    p = folder / BLOCKED_APPS_FILE
    folder.mkdir(parents=True, exist_ok=True)
    if data is None:
        p.mkdir()
    elif isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_text(data, "utf-8")
    return p


@pytest.mark.parametrize(("data", "why"), DAMAGED)
def test_a_damaged_blocked_apps_file_is_an_error_naming_it_and_is_not_overwritten(
    tmp_path: Path, data: str | bytes | None, why: str
) -> None:
    p = _damage(tmp_path, data)
    before = p.read_bytes() if p.is_file() else None
    with pytest.raises(DataError, match=why) as e:
        blocked_apps(tmp_path)
    assert e.value.path == str(p) and "remove it" in str(e.value) and "\n" not in str(e.value)
    for change in (block_app, unblock_app):
        with pytest.raises(DataError):
            change(tmp_path, "Terminal")
    assert (p.read_bytes() if p.is_file() else None) == before  # the next block does not overwrite it
    with pytest.raises(DataError):
        Restraint(folder=tmp_path)  # a run does not start offering in apps the person blocked


def _front(app: str) -> Event:
    t = datetime(2026, 12, 3, 9, 0)
    return Event(id="1", user="u", start=t, end=t, app_name=app, window_title=app, summary="")


def test_damaged_while_running_keeps_the_apps_read_before(tmp_path: Path) -> None:
    block_app(tmp_path, "Terminal")
    said: list[str] = []
    r = Restraint(folder=tmp_path, on_warning=said.append)
    now = datetime(2026, 12, 3, 9, 0)
    assert r.before(_front("Terminal"), now) == "blocked_app"
    (tmp_path / BLOCKED_APPS_FILE).write_text("{oops", "utf-8")
    assert r.before(_front("Terminal"), now) == "blocked_app"  # not read as empty
    assert len(said) == 1 and BLOCKED_APPS_FILE in said[0]
    assert r.before(_front("Terminal"), now) == "blocked_app" and len(said) == 1  # said once


# --------------------------------------------------------------------------- the page


def _post(page: OfferPage, path: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(
        f"http://127.0.0.1:{page.port}{path}?token={page.token}",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.fixture()
def page(tmp_path: Path):  # noqa: ANN201
    st, offers = store_with_offers(tmp_path / "live", n=2)
    p = OfferPage(st, datetime.now)
    yield p, st
    p.close()
    try:
        st.close()
    except FeedbackFull:
        pass


def test_the_page_refuses_to_block_over_a_damaged_list(page) -> None:  # noqa: ANN001
    p, st = page
    f = _damage(st.path.parent, '["xterm"]')
    status, body = _post(p, "/block-app", {"app": "Terminal"})
    assert status == 409 and BLOCKED_APPS_FILE in body["error"] and "remove it" in body["error"]
    assert f.read_text("utf-8") == '["xterm"]'


def _fill(conn: sqlite3.Connection) -> None:
    """Make the database full for real: cap its pages at what it has, then fill the pages the
    answers go to (SQLite answers SQLITE_FULL, "database or disk is full", as on a full disk)."""
    n = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {n}")
    for sql, row in [
        ("INSERT INTO responses (offer_id, response, responded_at, source) VALUES (?,?,?,?)", (0, "ignored", "", "")),
        ("INSERT INTO question_answers (question_id, answer, answered_at, source) VALUES (?,?,?,?)", (0, "no", "", "")),
    ]:
        for _ in range(10_000):
            try:
                with conn:
                    conn.execute(sql, row)
            except sqlite3.OperationalError as e:
                assert "full" in str(e)
                break
        else:
            raise AssertionError("the database never filled")


def test_accept_on_a_full_disk_is_507_and_the_answer_is_kept(page) -> None:  # noqa: ANN001
    p, st = page
    _fill(st._conn)
    status, body = _post(p, "/respond", {"id": 1, "response": "accepted"})
    assert status == 507, body
    assert "disk is full" in body["error"] and "kept" in body["error"]
    assert st.held == 1
    status, _ = _post(p, "/respond", {"id": 2, "response": "dismissed"})
    assert status == 507 and st.held == 2
    st._conn.execute("PRAGMA max_page_count = 1000000")  # space frees
    assert st.write_held() == 0
    assert {o["id"]: o["response"] for o in st.offers()} == {1: "accepted", 2: "dismissed"}


def test_a_held_answer_is_written_by_the_next_poll(page) -> None:  # noqa: ANN001
    p, st = page
    _fill(st._conn)
    assert _post(p, "/respond", {"id": 1, "response": "not_now"})[0] == 507
    st._conn.execute("PRAGMA max_page_count = 1000000")
    with urllib.request.urlopen(f"http://127.0.0.1:{p.port}/offers?token={p.token}", timeout=10) as r:
        offers = json.loads(r.read())["offers"]
    assert {o["id"]: o["response"] for o in offers}[1] == "not_now" and st.held == 0


def test_block_app_on_a_full_disk_is_507_and_the_block_holds(page, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    p, st = page
    folder = st.path.parent
    real = restraint_mod.write_atomic

    def full(*a: object, **k: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(restraint_mod, "write_atomic", full)
    r = Restraint(folder=folder)
    status, body = _post(p, "/block-app", {"app": "Terminal"})
    assert status == 507, body
    assert "No space left" in body["error"] and "free some space" in body["error"]
    assert r.before(_front("Terminal"), datetime(2026, 12, 3, 9, 0)) == "blocked_app"  # it holds in this run
    monkeypatch.setattr(restraint_mod, "write_atomic", real)
    assert blocked_apps(folder) == ("Terminal",)  # written now
    assert json.loads((folder / BLOCKED_APPS_FILE).read_text("utf-8")) == {"apps": ["Terminal"]}
    assert not restraint_mod._HELD_BLOCKS


def test_closing_with_held_answers_says_how_many_are_lost(tmp_path: Path) -> None:
    st, _ = store_with_offers(tmp_path)
    _fill(st._conn)
    with pytest.raises(FeedbackFull):
        st.respond(1, "accepted", datetime.now())
    with pytest.raises(RunError, match="1 answer not written"):
        st.close()


# --------------------------------------------------------------------------- implicit rows


@pytest.mark.parametrize(
    ("column", "value", "why"),
    [
        ("evidence", "{not json", "evidence is not JSON"),
        ("sample_json", '{"context": "x", "current": [1]}', "not a stored sample"),
        ("sample_json", '{"id": "u", "context": [["a"]], "current": {}, "time": "2026"}', "not a stored sample"),
        ("weight", "heavy", "weight"),
        ("label", 7, "label"),
    ],
)
def test_a_damaged_implicit_row_is_one_error_naming_the_row_and_the_repair(
    tmp_path: Path, column: str, value: object, why: str
) -> None:
    from click.testing import CliRunner

    from proagent.cli import cli
    from proagent.live import feedback_samples

    st, _ = store_with_offers(tmp_path)
    sample_json = st._conn.execute("SELECT sample_json FROM offers WHERE id = 1").fetchone()[0]
    row = {"sample_json": sample_json, "evidence": "{}", "weight": 0.3, "label": 0}
    row[column] = value
    with st._conn:
        st._conn.execute(
            "INSERT INTO implicit (decision_id, sample_id, user, moment, response, label, weight, evidence, "
            "labelled_at, sample_json) VALUES (1, 's', 'u1', '2026-12-03T09:00:00', 'quiet_focus', ?, ?, ?, "
            "'2026-12-03T09:05:00', ?)",
            (row["label"], row["weight"], row["evidence"], row["sample_json"]),
        )
    if column != "sample_json":
        with pytest.raises(DataError, match=why) as e:
            st.implicit_since(0)
        assert "implicit label row 1" in str(e.value) and "DELETE FROM implicit WHERE id = 1" in str(e.value)
    st.close()
    if column == "evidence":
        return  # training reads no evidence; the live learner (implicit_since) does
    with pytest.raises(DataError, match=why):
        feedback_samples(tmp_path)
    r = CliRunner().invoke(cli, ["train", "when", "--feedback", str(tmp_path), "--out", str(tmp_path / "dec")])
    assert r.exit_code == 1, r.output
    assert "Traceback" not in r.output and [ln for ln in r.output.splitlines() if ln.startswith("Error")]
    assert "implicit label row 1" in r.output


def test_a_how_model_at_a_closed_port_is_one_line() -> None:
    """The How model's first call (warming) failing as inspect raises it after its retries (a
    tenacity RetryError around openai's APIConnectionError) stops the run with one line."""
    import httpx
    import openai
    from tenacity import Future, RetryError

    from proagent.live import warm_how

    req = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    fut = Future(1)
    fut.set_exception(openai.APIConnectionError(request=req))

    class How:
        closed = False

        def warm(self) -> float:
            raise RetryError(fut)

        def close(self) -> None:
            self.closed = True

    how = How()
    with pytest.raises(RunError) as e:
        warm_how(how, "openai-api/local/m")
    msg = str(e.value)
    assert "\n" not in msg and "--model openai-api/local/m" in msg and "APIConnectionError" in msg
    assert how.closed


def test_stats_reads_a_capture_folder_live_wrote_feedback_db_into(tmp_path: Path) -> None:
    """``live --watch CAPTURE`` writes feedback.db beside capture's lifetrace.db: stats still reads
    the capture (live's files are named by proagent.live_files) instead of refusing feedback.db."""
    from click.testing import CliRunner
    from help_fixtures import write_capture

    from proagent.cli import cli
    from proagent.live import FeedbackStore

    cap = tmp_path / "cap"
    write_capture(cap, datetime(2026, 12, 3, 9, 0), [("xterm", "t", "a"), ("firefox", "f", "b"), ("xterm", "t", "c")])
    FeedbackStore(cap).close()
    r = CliRunner().invoke(cli, ["stats", str(cap), "--no-similarity", "--out", str(tmp_path / "st")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "st" / "stats.json").is_file() and "feedback.db" not in r.output
