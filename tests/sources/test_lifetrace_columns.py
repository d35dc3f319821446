"""The column reader of LifeTrace screenshots (proagent.sources._lifetrace_shots) and the
faster sample builder give what the per-row reader and the previous builder gave.

Two checks: (1) on every fixture variant, generated data and odd databases, the column
reader's result equals the per-row reader's (the same module with the column reader
switched off); (2) frozen digests of the events and samples that the previous
implementation (git revision ``main`` before issue 17) produced on generated data and
on a fixture. If ``proagent.synth`` or ``lifetrace_fixtures`` change on purpose, rebuild
the digests with the previous implementation's ``src`` on ``PYTHONPATH``
(``git archive <rev> src``) and ``digests()`` below.
"""

from __future__ import annotations

import copy
import hashlib
import pickle
import sqlite3
from datetime import datetime, timedelta

import pytest
from lifetrace_fixtures import VARIANTS, make_participant

import proagent.sources.lifetrace as lifetrace
from proagent.bench.samples import build_samples, candidate_moments, context_reach, window_context
from proagent.records import Event
from proagent.sources._lifetrace_shots import LazyScreenshots
from proagent.sources.load import load_events
from proagent.synth import SynthConfig, generate

FROZEN = {
    "synth_events": "323181d657fd1147",
    "synth_samples": "279472cffb160dd4",
    "synth_candidates": "62f0fe89e0aa9fa9",
    "fixture_events": "57b998af777d4d32",
    "fixture_samples": "d15b98b21231eaed",
}
"""Built by the previous implementation (per-row reader, quadratic sample builder)."""


def _samples_digest(samples) -> str:  # noqa: ANN001
    h = hashlib.sha256()
    for s in samples:
        h.update(
            repr(
                (
                    s.id,
                    s.label,
                    s.split,
                    s.kind,
                    s.time.isoformat(),
                    s.current.id,
                    tuple(e.id for e in s.context),
                    s.reference_queries,
                    s.intention,
                    s.event_id,
                    len(s.current.screenshots),
                )
            ).encode()
        )
    return h.hexdigest()[:16]


def _events_digest(events) -> str:  # noqa: ANN001
    h = hashlib.sha256()
    for e in events:
        h.update(
            repr(
                (
                    e.id,
                    e.user,
                    e.start,
                    e.end,
                    e.app_name,
                    e.window_title,
                    e.summary,
                    e.is_llm_event,
                    e.intention,
                    tuple(
                        (
                            s.id,
                            s.time,
                            s.app_name,
                            s.window_title,
                            s.file_name,
                            s.path is None,
                            s.ocr_text,
                            s.width,
                            s.height,
                            s.file_hash,
                        )
                        for s in e.screenshots
                    ),
                )
            ).encode()
        )
    return h.hexdigest()[:16]


def digests(root) -> dict[str, str]:  # noqa: ANN001
    """The digests of :data:`FROZEN`, computed by the code on the path."""
    generate(root / "synth", SynthConfig(users=2, days=3, seed=0))
    ev = load_events(root / "synth")
    fx = make_participant(root / "fx", "P01", n_events=60, n_llm=8)
    fe = list(lifetrace.load_lifetrace(fx.path).events)
    return {
        "synth_events": _events_digest(ev),
        "synth_samples": _samples_digest(build_samples(ev)),
        "synth_candidates": _samples_digest(candidate_moments(ev)),
        "fixture_events": _events_digest(fe),
        "fixture_samples": _samples_digest(build_samples(fe)),
    }


def _per_row(monkeypatch, path, **kw):  # noqa: ANN001, ANN202
    with monkeypatch.context() as m:
        m.setattr(lifetrace, "read_columns", lambda *a, **k: None)
        return lifetrace.load_lifetrace(path, **kw)


def _columns_used(log) -> bool:  # noqa: ANN001
    return any(isinstance(e.screenshots, LazyScreenshots) for e in log.events)


def test_same_results_as_the_previous_implementation(tmp_path):
    assert digests(tmp_path) == FROZEN


@pytest.mark.parametrize("variant", VARIANTS)
def test_columns_equal_rows_on_every_fixture_variant(tmp_path, monkeypatch, variant):
    fx = make_participant(tmp_path, "P01", variant)
    fast = lifetrace.load_lifetrace(fx.path)
    assert _columns_used(fast)
    slow = _per_row(monkeypatch, fx.path)
    assert not _columns_used(slow)
    assert fast == slow  # events (records made on access), counts, excluded
    assert fast.n_missing_files == slow.n_missing_files and fast.n_orphan_screenshots == slow.n_orphan_screenshots
    if variant == "processed":  # the raw variants carry no LLM-use labels
        assert build_samples(list(fast.events)) == build_samples(list(slow.events))
    later = lifetrace.load_lifetrace(fx.path, min_event_id=20)
    assert later == _per_row(monkeypatch, fx.path, min_event_id=20) and later.events


def test_columns_equal_rows_on_generated_data(tmp_path, monkeypatch):
    generate(tmp_path / "g", SynthConfig(users=1, days=2, seed=3))
    db = next((tmp_path / "g").glob("*/*.db"))
    fast, slow = lifetrace.load_lifetrace(db), _per_row(monkeypatch, db)
    assert _columns_used(fast) and fast == slow and fast.n_screenshots == slow.n_screenshots > 0
    assert candidate_moments(list(fast.events)) == candidate_moments(list(slow.events))


def _edit(path, sql: str, *args) -> None:  # noqa: ANN001
    con = sqlite3.connect(path)
    con.execute(sql, args)
    con.commit()
    con.close()


@pytest.mark.parametrize(
    "sql, columns",
    [
        (
            "UPDATE screenshots SET created_at = replace(created_at, ' ', 'T') WHERE id = 3",
            False,
        ),  # accepted, other shape
        ("UPDATE screenshots SET created_at = substr(created_at, 1, 16) WHERE id = 5", False),  # no seconds
        ("UPDATE screenshots SET window_title = CAST(x'e4b8ad80ff' AS TEXT) WHERE id = 4", False),  # not UTF-8
        ("UPDATE screenshots SET event_id = 'e3' WHERE id = 5", False),  # a key that is not a number
        ("UPDATE screenshots SET file_deleted = 'yes' WHERE id = 8", False),  # a flag as text
        ("UPDATE screenshots SET created_at = substr(created_at, 1, 19) WHERE id = 7", True),  # the short form
    ],
)
def test_other_shapes_read_as_by_the_per_row_reader(tmp_path, monkeypatch, sql, columns):
    fx = make_participant(tmp_path, "P01", "2025-11")
    _edit(fx.path, sql)
    log = lifetrace.load_lifetrace(fx.path)
    assert _columns_used(log) is columns
    assert log == _per_row(monkeypatch, fx.path)


def test_equal_instants_written_two_ways_keep_the_per_row_order(tmp_path, monkeypatch):
    fx = make_participant(tmp_path, "P01", "processed")
    con = sqlite3.connect(fx.path)
    eid, a, b = con.execute(
        "SELECT event_id, min(id), max(id) FROM screenshots GROUP BY event_id HAVING count(*) >= 2 LIMIT 1"
    ).fetchone()
    con.execute("UPDATE screenshots SET created_at = '2025-09-15 10:00:00.000000' WHERE id = ?", (a,))
    con.execute("UPDATE screenshots SET created_at = '2025-09-15 10:00:00' WHERE id = ?", (b,))
    con.commit()
    con.close()
    fast = lifetrace.load_lifetrace(fx.path)
    assert fast == _per_row(monkeypatch, fx.path)
    shots = next(e.screenshots for e in fast.events if e.id == str(eid))
    same = [s.id for s in shots if s.time == datetime(2025, 9, 15, 10)]
    assert same == sorted(same)


def test_bad_time_is_the_same_error(tmp_path):
    fx = make_participant(tmp_path, "P01", "processed")
    _edit(fx.path, "UPDATE screenshots SET created_at = '2025-02-30 10:00:00.000000' WHERE id = 2")
    with pytest.raises(lifetrace.DataError, match="table screenshots, row id 2, column created_at"):
        lifetrace.load_lifetrace(fx.path)


def test_lazy_screenshots_behave_as_their_tuple(tmp_path):
    fx = make_participant(tmp_path, "P01", "processed")
    e = next(e for e in lifetrace.load_lifetrace(fx.path).events if len(e.screenshots) >= 2)
    lazy = e.screenshots
    assert isinstance(lazy, LazyScreenshots) and lazy._items is None  # len needs no records
    as_tuple = tuple(lazy)
    assert lazy == as_tuple and as_tuple == lazy and hash(lazy) == hash(as_tuple) and lazy != list(as_tuple)
    assert lazy[-1] is as_tuple[-1] and list(reversed(lazy)) == list(reversed(as_tuple))
    assert pickle.loads(pickle.dumps(lazy)) == as_tuple and type(copy.deepcopy(lazy)) is tuple
    assert copy.deepcopy(e) == e


def test_window_context_with_reach_equals_the_plain_scan():
    t0 = datetime(2025, 1, 1)
    evs = []
    for i in range(200):  # some events reach far (long, overlapping), some are open
        start = t0 + timedelta(seconds=7 * i)
        end = None if i % 37 == 0 else start + timedelta(seconds=(400 if i % 11 == 0 else 5))
        evs.append(Event(id=str(i), user="u", start=start, end=end))
    reach = context_reach(evs)
    for upto in range(0, 200, 3):
        for window in (10.0, 60.0, 300.0):
            t = t0 + timedelta(seconds=7 * upto)
            assert window_context(evs, upto, t, window, reach=reach) == window_context(evs, upto, t, window)
