"""Issue 46: every ``help_turns`` row live reads from ``feedback.db`` is validated on load; a damaged
one is one :class:`~proagent.errors.DataError` naming the file, the row and the repair (at a
restart, in :meth:`LiveHelp.turns` and the page's ``/help``), never read as empty, never a traceback."""

from __future__ import annotations

import json
import sqlite3
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from help_fixtures import scripted_reply, store_with_offers, traceback_sample

from proagent.errors import DataError
from proagent.live import LiveHelp, OfferPage, ScriptedHelpModel

DAMAGES = [
    ("status", "'thinking'", "status 'thinking' is none of"),
    ("role", "'system'", "neither user nor assistant"),
    ("text", "X'00ff'", "its text is bytes"),
    ("offer_id", "'abc'", "offer id 'abc' is not an integer"),
    ("sent_sha256", "'not-a-hash'", "sent_sha256 is not 64 hex digits"),
    ("placeholders", "'[1'", "placeholders are not a JSON object"),
    ("total_seconds", "'slow'", "total_seconds is not a number"),
]


def _answered(tmp_path: Path):  # noqa: ANN202
    st, offers = store_with_offers(tmp_path)
    help = LiveHelp(st, ScriptedHelpModel(scripted_reply, delay=0), lambda: traceback_sample().time)
    oid = offers[0].id
    assert help.accept(oid)
    end = time.monotonic() + 30
    while help.busy(oid) or len(help.turns(oid)) < 2:
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)
    return st, help, oid


def _damage(folder: Path, column: str, value: str) -> int:
    """Write ``value`` (SQL) into the last turn's ``column`` as a damaged file holds it."""
    with sqlite3.connect(folder / "feedback.db") as c:
        c.execute("PRAGMA ignore_check_constraints = ON")
        rid = c.execute("SELECT max(id) FROM help_turns").fetchone()[0]
        c.execute(f"UPDATE help_turns SET {column} = {value} WHERE id = ?", (rid,))
    return int(rid)


def _one_line(msg: str, folder: Path, rid: int) -> None:
    assert "\n" not in msg and str(folder / "feedback.db") in msg
    assert f"help turn row {rid} is damaged" in msg
    assert f"DELETE FROM help_turns WHERE id = {rid}" in msg


@pytest.mark.parametrize(("column", "value", "why"), DAMAGES)
def test_a_damaged_turn_is_refused_at_restart_naming_the_row_and_the_repair(
    tmp_path: Path, column: str, value: str, why: str
) -> None:
    st, help, oid = _answered(tmp_path)
    help.close()
    rid = _damage(tmp_path, column, value)
    with pytest.raises(DataError) as e:
        LiveHelp(st, None, lambda: traceback_sample().time)  # the restart (marks 'streaming' interrupted)
    _one_line(str(e.value), tmp_path, rid)
    assert why in str(e.value)
    with sqlite3.connect(tmp_path / "feedback.db") as c:  # the repair it names works; the rest stays
        c.execute(f"DELETE FROM help_turns WHERE id = {rid}")
    again = LiveHelp(st, None, lambda: traceback_sample().time)
    assert [t["role"] for t in again.turns(oid)] == ["user"]
    again.close()
    st.close()


@pytest.mark.parametrize(("column", "value", "why"), [d for d in DAMAGES if d[0] != "offer_id"])
def test_a_turn_damaged_while_running_is_refused_not_read(tmp_path: Path, column: str, value: str, why: str) -> None:
    st, help, oid = _answered(tmp_path)
    rid = _damage(tmp_path, column, value)
    with pytest.raises(DataError) as e:
        help.turns(oid)
    _one_line(str(e.value), tmp_path, rid)
    assert why in str(e.value)
    help.close()
    st.close()


def test_the_page_answers_a_damaged_turn_with_409_and_the_repair(tmp_path: Path) -> None:
    st, help, oid = _answered(tmp_path)
    page = OfferPage(st, lambda: traceback_sample().time, help=help)
    try:
        rid = _damage(tmp_path, "status", "'thinking'")
        url = f"http://127.0.0.1:{page.port}/help?token={page.token}&id={oid}"
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(url, timeout=10)
        assert e.value.code == 409
        body = e.value.read().decode()
        msg = json.loads(body).get("error", body) if body.startswith("{") else body
        _one_line(msg, tmp_path, rid)
    finally:
        page.close()
        help.close()
        st.close()
