"""Property-based layer (hypothesis) over the readers and option parsers: random bytes,
truncations of good files, unicode and huge values. Each may only succeed or raise its one
documented error (DataError for files, ValueError / click's BadParameter for options); anything
else (a KeyError, a RecursionError, an OverflowError...) is a bug that would show as a traceback."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import click
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_bad_input import session  # noqa: E402

from proagent.errors import DataError  # noqa: E402

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

GOOD_SESSION = json.dumps(session()).encode()


def _write(tmp: Path, name: str, data: bytes) -> Path:
    p = tmp / name
    p.write_bytes(data)
    return p


# ---------------------------------------------------------------- ProactiveBench sessions


@FAST
@given(data=st.binary(max_size=2000))
def test_session_reader_on_random_bytes(tmp_path_factory, data: bytes) -> None:  # noqa: ANN001
    from proagent.sources.proactivebench import read_proactivebench_session

    p = _write(tmp_path_factory.mktemp("pb"), "s.json", data)
    try:
        read_proactivebench_session(p)
    except DataError:
        pass


@FAST
@given(cut=st.integers(min_value=0, max_value=len(GOOD_SESSION)))
def test_session_reader_on_truncations(tmp_path_factory, cut: int) -> None:  # noqa: ANN001
    from proagent.sources.proactivebench import read_proactivebench_session

    p = _write(tmp_path_factory.mktemp("pb"), "s.json", GOOD_SESSION[:cut])
    try:
        events = read_proactivebench_session(p)
    except DataError:
        return
    assert cut == len(GOOD_SESSION) and len(events) == 6


@FAST
@given(
    event=st.text(max_size=300),
    t=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(), st.text(max_size=30)),
)
def test_session_reader_on_odd_values(tmp_path_factory, event: str, t: object) -> None:  # noqa: ANN001
    from proagent.sources.proactivebench import read_proactivebench_session

    steps = session()
    steps[0]["observation"]["event"] = event
    steps[1]["observation"]["time"] = t if not isinstance(t, float) or math.isfinite(t) else str(t)
    p = _write(tmp_path_factory.mktemp("pb"), "s.json", json.dumps(steps).encode())
    try:
        read_proactivebench_session(p)
    except DataError:
        pass


# ---------------------------------------------------------------- LifeTrace databases


@pytest.fixture(scope="module")
def good_db(tmp_path_factory) -> bytes:  # noqa: ANN001
    from proagent.synth.generator import SynthConfig, generate

    out = tmp_path_factory.mktemp("lt")
    generate(out, SynthConfig(users=1, days=1, seed=3))
    return (out / "U001" / "lifetrace_privacy_processed.db").read_bytes()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=4096), header=st.booleans())
def test_lifetrace_reader_on_random_bytes(tmp_path_factory, data: bytes, header: bool) -> None:  # noqa: ANN001
    from proagent.sources.lifetrace import load_lifetrace

    blob = (b"SQLite format 3\x00" + data) if header else data
    p = _write(tmp_path_factory.mktemp("lt"), "lifetrace.db", blob)
    try:
        load_lifetrace(p)
    except DataError:
        pass


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frac=st.floats(min_value=0.0, max_value=1.0), flip=st.integers(min_value=0, max_value=2**20))
# byte 2553 lies in sqlite_master's schema text: SQLite's "malformed database schema" message then quotes
# the damaged byte and Python could not decode it (UnicodeDecodeError out of the reader; issue 45)
@example(frac=1.0, flip=2553)
def test_lifetrace_reader_on_truncated_or_flipped_databases(
    tmp_path_factory,
    good_db: bytes,
    frac: float,  # noqa: ANN001
    flip: int,
) -> None:
    from proagent.sources.lifetrace import load_lifetrace

    blob = bytearray(good_db[: int(len(good_db) * frac)])
    if blob and flip % 3 == 0:
        blob[flip % len(blob)] ^= 0xFF
    p = _write(tmp_path_factory.mktemp("lt"), "lifetrace.db", bytes(blob))
    try:
        log = load_lifetrace(p)
        _ = [(e.start, e.app_name) for e in log.events]
    except DataError:
        pass


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    app=st.text(max_size=200),
    title=st.one_of(st.none(), st.text(max_size=500)),
    start=st.one_of(st.text(max_size=40), st.integers(min_value=-(2**63), max_value=2**63 - 1), st.floats()),
)
def test_lifetrace_reader_on_odd_rows(tmp_path_factory, app: str, title: str | None, start: object) -> None:  # noqa: ANN001
    from proagent.sources.lifetrace import load_lifetrace
    from proagent.sources.lifetrace_write import lifetrace_ddl

    p = tmp_path_factory.mktemp("lt") / "lifetrace.db"
    con = sqlite3.connect(p)
    con.executescript(lifetrace_ddl("2025-11"))
    con.execute(
        "INSERT INTO events (id, app_name, window_title, start_time, end_time) VALUES (1, ?, ?, ?, NULL)",
        (app, title, start),
    )
    con.commit()
    con.close()
    try:
        load_lifetrace(p)
    except DataError:
        pass


# ---------------------------------------------------------------- option parsers


@FAST
@given(text=st.one_of(st.text(max_size=30), st.from_regex(r"\s*\d{1,30}(\.\d{1,30})?\s*(s|m|h|min|sec)?\s*")))
def test_window_parser(text: str) -> None:
    from proagent.bench.samples import parse_window

    try:
        v = parse_window(text)
    except ValueError:
        return
    assert 1 <= v <= 86400 and math.isfinite(v)


@FAST
@given(text=st.text(max_size=30))
def test_quiet_hours_parser(text: str) -> None:
    from proagent.live import parse_quiet_hours

    try:
        parse_quiet_hours(text)
    except ValueError:
        pass


@FAST
@given(
    interval=st.floats(), ocr=st.floats(), gb=st.one_of(st.none(), st.floats()), days=st.one_of(st.none(), st.floats())
)
def test_capture_config(tmp_path_factory, interval: float, ocr: float, gb: float | None, days: float | None) -> None:  # noqa: ANN001
    from proagent.capture import CaptureConfig

    try:
        cfg = CaptureConfig(out=Path("x"), interval=interval, ocr_interval=ocr, max_gb=gb, max_days=days)
    except ValueError as e:
        assert str(e).startswith("--")  # names the option
        return
    assert 0 < cfg.interval <= 3600 and math.isfinite(cfg.interval)
    if cfg.max_gb is not None:
        int(cfg.max_gb * 1e9)  # the recorder's byte cap: never an OverflowError


@FAST
@given(value=st.one_of(st.text(max_size=20), st.floats().map(str)))
def test_train_fraction_type(value: str) -> None:
    from proagent.cli._options import Share

    try:
        v = Share(0.0, 1.0, min_open=True, max_open=True).convert(value, None, None)
    except click.BadParameter:
        return
    assert 0 < v < 1


@FAST
@given(speed=st.floats())
def test_replay_speed(speed: float) -> None:
    from proagent.live import MAX_SPEED, MIN_SPEED, ReplayClock

    try:
        ReplayClock(speed)
    except ValueError:
        return
    assert speed == 0 or MIN_SPEED <= speed <= MAX_SPEED


# ---------------------------------------------------------------- page bodies, review items, encrypted files


@FAST
@given(body=st.binary(max_size=500))
def test_request_json(body: bytes) -> None:
    from proagent.serve import HttpError, Request

    try:
        Request("POST", "/", {}, body).json()
    except HttpError as e:
        assert e.status == 400


@FAST
@given(manifest=st.binary(max_size=300), items=st.binary(max_size=300))
def test_review_items_on_random_files(tmp_path_factory, manifest: bytes, items: bytes) -> None:  # noqa: ANN001
    from proagent.curate._review import _load_items

    out = tmp_path_factory.mktemp("cur")
    (out / ".curate" / "P01").mkdir(parents=True)
    (out / ".curate" / "manifest.json").write_bytes(manifest)
    (out / ".curate" / "P01" / "items.json").write_bytes(items)
    try:
        _load_items(out)
    except DataError:
        pass


@FAST
@given(blob=st.binary(max_size=200), name=st.text(max_size=20))
def test_decrypt_random_blobs(blob: bytes, name: str) -> None:
    pytest.importorskip("cryptography")
    from proagent import vault

    for b in (blob, vault.MAGIC + blob):
        try:
            vault.decrypt(b"k" * 32, b, name)
        except DataError:
            pass
