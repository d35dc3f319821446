"""Offer and question ids from people and clients are checked strictly: the terminal's answer
reader and every route of the offer page answer one clear line for an id that is no row id (too
large for SQLite, a superscript digit, ``1.7``, ``true``), and keep working after it."""

from __future__ import annotations

import io
import json
import urllib.error
import urllib.request
from datetime import datetime
from pathlib import Path

import pytest
from help_fixtures import store_with_offers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proagent.live import OfferPage, TerminalNotifier
from proagent.live._feedback import MAX_ROW_ID, parse_row_id
from proagent.live._notify import ANSWER_HINT


def _terminal(folder: Path, text: str) -> tuple[str, object]:
    st, offers = store_with_offers(folder)
    out = io.StringIO()
    t = TerminalNotifier(st, datetime.now, out=out, answers=io.StringIO(text))
    t._thread.join(10)
    assert not t._thread.is_alive()
    return out.getvalue(), (st, offers)


@pytest.mark.parametrize("bad", ["a 99999999999999999999999", "a ²", "d ³", "q ² yes", "n 9223372036854775808", "a -1"])
def test_a_bad_number_is_one_line_of_help_and_the_reader_keeps_working(tmp_path: Path, bad: str) -> None:
    out, (st, _) = _terminal(tmp_path, f"{bad}\na 1\n")
    lines = out.splitlines()
    assert lines[0].startswith("not understood: ") and ANSWER_HINT in lines[0], out
    assert "Traceback" not in out
    assert lines[1] == "offer 1: accepted"  # the next answer still lands
    assert st.offers()[-1]["response"] == "accepted"


_ANSWER_LINE = st.one_of(
    st.text(max_size=40),
    st.builds(
        lambda k, n, rest: f"{k} {n}{rest}",
        st.sampled_from(["a", "d", "n", "q", "f", "+", "-", "accept", "later", "A"]),
        st.one_of(
            st.integers(min_value=-(2**70), max_value=2**70).map(str),
            st.text(alphabet="0123456789²³¹٣੩.e-+", min_size=1, max_size=25),
        ),
        st.one_of(st.just(""), st.text(max_size=10).map(lambda t: " " + t), st.just(" yes")),
    ),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_ANSWER_LINE, min_size=1, max_size=6))
def test_the_terminal_reader_survives_any_line(tmp_path_factory: pytest.TempPathFactory, lines: list[str]) -> None:
    """Property: whatever is typed, the reader answers every non-blank line with one line (no
    traceback) and a valid ``d 1`` typed after it is still applied."""
    lines = [ln.replace("\r", " ").replace("\n", " ").replace("\x0b", " ").replace("\x0c", " ") for ln in lines]
    lines = [" ".join(ln.split()) for ln in lines]  # one typed line each (str.splitlines breaks on more)
    folder = tmp_path_factory.mktemp("term")
    out, (st_, _) = _terminal(folder, "".join(f"{ln}\n" for ln in lines) + "d 1\n")
    assert "Traceback" not in out and "could not apply" not in out, out
    assert out.splitlines()[-1] == "offer 1: dismissed", out
    assert st_.offers()[-1]["response"] == "dismissed"
    st_.close()


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1, 1), ("7", 7), (MAX_ROW_ID, MAX_ROW_ID), (MAX_ROW_ID + 1, None), (True, None), (1.7, None), (1.0, None)]
    + [("²", None), ("1e3", None), ("0", None), (0, None), (-3, None), ("", None), (None, None), ("٣", None)],
)
def test_parse_row_id(value: object, expected: int | None) -> None:
    assert parse_row_id(value) == expected


# --------------------------------------------------------------------------- the page


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    st_, offers = store_with_offers(tmp_path_factory.mktemp("page"), n=3)
    p = OfferPage(st_, datetime.now)
    yield p, st_
    p.close()
    st_.close()


def _post(page: OfferPage, path: str, body: bytes) -> tuple[int, dict]:
    req = urllib.request.Request(
        f"http://127.0.0.1:{page.port}{path}?token={page.token}",
        data=body,
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def _get(page: OfferPage, path: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{page.port}{path}&token={page.token}", timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.mark.parametrize("oid", ["9223372036854775808", "99999999999999999999999", "1.7", "true", "1e0", '"1"'])
def test_the_page_refuses_an_id_that_is_no_row_id_with_400(page, oid: str) -> None:  # noqa: ANN001
    p, st_ = page
    before = [o["response"] for o in st_.offers()]
    for path, body in [
        ("/respond", f'{{"id": {oid}, "response": "dismissed"}}'),
        ("/respond", f'{{"question": {oid}, "answer": "yes"}}'),
        ("/rate", f'{{"id": {oid}, "rating": 1}}'),
        ("/follow-up", f'{{"id": {oid}, "text": "why?"}}'),
    ]:
        status, answer = _post(p, path, body.encode())
        assert status == 400, (path, oid, status, answer)
        assert answer["error"]
    if not oid.startswith('"'):  # a query parameter is text: ?id=1 is offer 1
        assert _get(p, f"/help?id={oid}")[0] == 400
    assert [o["response"] for o in st_.offers()] == before  # nothing answered by a bad id


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_KEYED = st.fixed_dictionaries(
    {},
    optional={
        "id": _JSON,
        "question": _JSON,
        "response": st.sampled_from(["accepted", "dismissed", "not_now", "ignored", "x"]) | _JSON,
        "answer": st.sampled_from(["yes", "no"]) | _JSON,
        "rating": _JSON,
        "text": _JSON,
        "app": _JSON,
    },
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    route=st.sampled_from(["/respond", "/rate", "/follow-up", "/block-app", "/unblock-app"]),
    body=st.one_of(_KEYED, _JSON).map(lambda v: json.dumps(v).encode()) | st.binary(max_size=40),
)
def test_every_page_route_answers_any_json_body_with_a_clear_status(page, route: str, body: bytes) -> None:  # noqa: ANN001
    """Property: any body to any write route is answered 200 or 4xx with a JSON error, never 500."""
    p, _ = page
    status, answer = _post(p, route, body)
    assert status in (200, 400), (route, body, status, answer)
    assert status == 200 or answer.get("error")


def test_the_page_still_answers_after_bad_bodies(page) -> None:  # noqa: ANN001
    p, _ = page
    assert _post(p, "/respond", b'{"id": 1e400, "response": "accepted"}')[0] == 400
    assert _post(p, "/respond", b'{"id": 2, "response": "not_now"}')[0] == 200
