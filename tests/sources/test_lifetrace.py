"""LifeTrace reader and annotation loader: every schema variant, every error."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from datetime import datetime
from pathlib import Path

import pytest
from lifetrace_fixtures import (
    VARIANTS,
    FixtureDB,
    copy_fixture,
    make_foreign_db,
    make_lifetrace_db,
    make_participant,
    write_annotations,
)

from proagent.errors import DataError
from proagent.records import Conversation, Event
from proagent.sources.annotations import Annotations, load_annotations, normalise_event_id
from proagent.sources.lifetrace import (
    detect_schema,
    load_lifetrace,
    parse_conversation,
    parse_timestamp,
    read_lifetrace,
)


@pytest.fixture(scope="session")
def pristine(tmp_path_factory) -> dict[str, FixtureDB]:
    """One default fixture per variant, built once; tests change copies."""
    root = tmp_path_factory.mktemp("lifetrace")
    return {v: make_participant(root / v, "P01", v) for v in VARIANTS}


@pytest.fixture
def lt(pristine, tmp_path):
    """``lt(variant, user)``: a private copy of the default fixture."""

    def make(variant: str = "processed", user: str = "P01") -> FixtureDB:
        return copy_fixture(pristine[variant], tmp_path, user)

    return make


@pytest.fixture(params=VARIANTS)
def fx(request, lt) -> FixtureDB:
    return lt(request.param, "P07")


@pytest.fixture
def processed(lt) -> FixtureDB:
    return lt("processed", "P01")


def _by_id(events: list[Event]) -> dict[str, Event]:
    return {e.id: e for e in events}


def _sql(path: Path, sql: str, *args) -> None:
    con = sqlite3.connect(path)
    con.execute(sql, args)
    con.commit()
    con.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --------------------------------------------------------------------------- detection


@pytest.mark.parametrize(
    "variant, flags",
    [
        ("2025-09", dict(has_ai_fields=False, has_soft_delete=False, has_file_deleted=False, is_processed=False)),
        ("2025-10", dict(has_ai_fields=True, has_soft_delete=False, has_file_deleted=False, is_processed=False)),
        ("2025-11", dict(has_ai_fields=True, has_soft_delete=True, has_file_deleted=True, is_processed=False)),
        ("processed", dict(has_ai_fields=True, has_soft_delete=False, has_file_deleted=False, is_processed=True)),
    ],
)
def test_detect_schema(lt, variant, flags):
    fx = lt(variant)
    info = detect_schema(fx.path)
    assert info.variant == variant
    assert info.has_ocr
    for name, want in flags.items():
        assert getattr(info, name) is want, name
    assert {"events", "screenshots", "ocr_results", "search_index", "processing_queue"} <= set(info.tables)
    assert info.has_conversation is info.has_llm_flag is (variant == "processed")


def test_detect_processed_on_v1_base(tmp_path):
    fx = make_participant(tmp_path, "P02", "processed", processed_base="2025-11")
    info = detect_schema(fx.path)
    assert info.variant == "processed" and info.has_soft_delete and info.has_file_deleted
    events = read_lifetrace(fx.path)
    assert [e.id for e in events] == fx.live_event_ids
    assert fx.deleted_event_ids and not set(fx.deleted_event_ids) & {e.id for e in events}


def test_detect_folder_argument(processed):
    assert detect_schema(processed.path.parent).path == processed.path
    assert [e.id for e in read_lifetrace(processed.path.parent)] == processed.live_event_ids


# --------------------------------------------------------------------------- reading


def test_events_and_screenshots_every_variant(fx):
    log = load_lifetrace(fx.path)
    events = list(log.events)
    assert log.user == "P07" and all(e.user == "P07" for e in events)
    assert [e.id for e in events] == fx.live_event_ids
    assert [e.start for e in events] == sorted(e.start for e in events)
    for e in events:
        assert e.app_name == fx.apps[e.id]
        assert e.window_title == fx.titles[e.id]
        assert e.start == fx.starts[e.id]
        assert e.summary == fx.summaries[e.id]
        assert [s.id for s in e.screenshots] == fx.shots_by_event[e.id]
        times = [s.time for s in e.screenshots]
        assert times == sorted(times)
    assert log.n_screenshots == fx.n_live_screenshots
    assert log.n_orphan_screenshots == len(fx.orphan_screenshot_ids) == 1
    assert log.n_missing_files == len(fx.missing_file_ids) + len(fx.file_deleted_ids)
    # Chinese and English apps both survive
    apps = {e.app_name for e in events}
    assert {"Visual Studio Code", "Google Chrome", "微信"} <= apps
    # short events are kept (filtering is the sample builder's job)
    assert fx.short_event_ids
    for eid in fx.short_event_ids:
        assert _by_id(events)[eid].duration < 3


def test_llm_fields_by_variant(fx):
    events = _by_id(read_lifetrace(fx.path))
    if fx.variant == "processed":
        assert sorted(i for i, e in events.items() if e.is_llm_event) == sorted(fx.llm_event_ids)
        assert all(e.is_llm_event is False for i, e in events.items() if i not in fx.llm_event_ids)
        assert len(fx.llm_event_ids) == 8
        for eid in fx.llm_event_ids:
            conv = events[eid].conversation
            assert isinstance(conv, Conversation)
            assert list(conv.user_queries) == fx.conversations[eid]["user_queries"]
            assert list(conv.llm_responses) == fx.conversations[eid]["llm_responses"]
            assert conv.full_conversation.startswith("User: ")
            assert not conv.is_empty
            assert events[eid].description.startswith(events[eid].summary)
        # NULL and blank conversations -> None
        assert all(e.conversation is None for i, e in events.items() if i not in fx.llm_event_ids)
    else:
        assert all(e.is_llm_event is None and e.conversation is None for e in events.values())
        assert all(e.description == "" for e in events.values())


def test_soft_deleted_rows_are_not_data(lt):
    fx = lt("2025-11", "P03")
    log = load_lifetrace(fx.path)
    ids = {e.id for e in log.events}
    assert len(fx.deleted_event_ids) == 2 and not ids & set(fx.deleted_event_ids)
    shot_ids = {s.id for e in log.events for s in e.screenshots}
    assert fx.deleted_screenshot_ids and not shot_ids & set(fx.deleted_screenshot_ids)
    assert log.n_deleted_events == 2
    assert log.n_deleted_screenshots == len(fx.deleted_screenshot_ids)
    # file_deleted = 1: the row stays, the file does not count even though it is on disk
    (fd,) = fx.file_deleted_ids
    shot = next(s for e in log.events for s in e.screenshots if s.id == fd)
    assert shot.path is None and (fx.screenshots_dir / shot.file_name).exists()
    assert shot.ocr_text == fx.ocr[fd]


def test_blank_deleted_at_is_not_deleted(lt):
    fx = lt("2025-11", "P03")
    _sql(fx.path, "UPDATE events SET deleted_at = '' WHERE id = ?", int(fx.deleted_event_ids[0]))
    ids = [e.id for e in read_lifetrace(fx.path)]
    assert fx.deleted_event_ids[0] in ids and fx.deleted_event_ids[1] not in ids


def test_open_last_event(fx):
    events = read_lifetrace(fx.path)
    assert events[-1].id == fx.open_event_id
    assert events[-1].end is None and events[-1].duration is None
    assert all(e.end is not None for e in events[:-1])


def test_null_end_in_the_middle_ends_at_next_start(processed):
    mid = processed.live_event_ids[5]
    _sql(processed.path, "UPDATE events SET end_time = NULL WHERE id = ?", int(mid))
    log = load_lifetrace(processed.path)
    events = list(log.events)
    i = [e.id for e in events].index(mid)
    assert events[i].end == events[i + 1].start
    assert log.n_filled_ends == 1
    assert events[-1].end is None


def test_screenshot_files_resolved_by_name(fx):
    events = read_lifetrace(fx.path)
    shots = {s.id: s for e in events for s in e.screenshots}
    present = set(fx.present_file_ids) - set(fx.file_deleted_ids)
    assert present and fx.missing_file_ids
    for sid in present:
        s = shots[sid]
        assert s.path is not None and s.path.is_file()
        assert s.path.parent == fx.screenshots_dir
        assert s.file_name == fx.file_names[sid] == s.path.name
    for sid in fx.missing_file_ids:
        assert shots[sid].path is None
        assert shots[sid].file_name == fx.file_names[sid]
    # the capture-side directory is dropped from the name, Windows or POSIX
    assert all("\\" not in s.file_name and "/" not in s.file_name for s in shots.values())
    con = sqlite3.connect(fx.path)
    (fp,) = con.execute("SELECT file_path FROM screenshots LIMIT 1").fetchone()
    con.close()
    assert fp.startswith(fx.capture_root)


def test_explicit_and_absent_screenshots_dir(tmp_path):
    other = tmp_path / "elsewhere" / "shots"
    fx = make_lifetrace_db(tmp_path / "P04" / "lifetrace.db", "2025-10", screenshots_dir=other)
    assert not (fx.path.parent / "screenshots").exists()
    # no local folder and the capture-side path does not exist here: every path is None
    log = load_lifetrace(fx.path)
    assert log.screenshots_dir is None
    assert all(s.path is None for e in log.events for s in e.screenshots)
    assert log.n_missing_files == log.n_screenshots
    # explicit folder
    log = load_lifetrace(fx.path, screenshots_dir=other)
    found = {s.id for e in log.events for s in e.screenshots if s.path is not None}
    assert found == set(fx.present_file_ids)
    with pytest.raises(DataError, match="screenshots folder not found"):
        load_lifetrace(fx.path, screenshots_dir=tmp_path / "nope")


def test_capture_side_folder_used_when_it_exists(tmp_path):
    capture = tmp_path / "capture" / "screenshots"
    fx = make_lifetrace_db(
        tmp_path / "P05" / "lifetrace.db", "2025-09", screenshots_dir=capture, capture_root=str(capture)
    )
    events = read_lifetrace(fx.path)
    found = {s.id for e in events for s in e.screenshots if s.path is not None}
    assert found == set(fx.present_file_ids)


def test_screenshots_in_subfolders_are_found(tmp_path):
    fx = make_participant(tmp_path, "P06", "processed")
    sub = fx.screenshots_dir / "2025-09-15"
    sub.mkdir()
    for sid in fx.present_file_ids[:5]:
        os.replace(fx.screenshots_dir / fx.file_names[sid], sub / fx.file_names[sid])
    shots = {s.id: s for e in read_lifetrace(fx.path) for s in e.screenshots}
    assert all(shots[sid].path == sub / fx.file_names[sid] for sid in fx.present_file_ids[:5])


def test_ocr_joined(fx):
    shots = {s.id: s for e in read_lifetrace(fx.path) for s in e.screenshots}
    for sid, s in shots.items():
        assert s.ocr_text == fx.ocr[sid]
    two = [sid for sid, text in fx.ocr.items() if "second OCR block" in text and sid in shots]
    assert two and "\n第二个文本块 second OCR block" in shots[two[0]].ocr_text
    assert any(s.ocr_text == "" for s in shots.values())


def test_ocr_duplicates_and_blanks_dropped(processed):
    sid = processed.all_live_screenshot_ids[0]
    con = sqlite3.connect(processed.path)
    (text,) = con.execute("SELECT text_content FROM ocr_results WHERE screenshot_id = ?", (sid,)).fetchone()
    con.execute("INSERT INTO ocr_results (screenshot_id, text_content) VALUES (?, ?)", (sid, text))
    con.execute("INSERT INTO ocr_results (screenshot_id, text_content) VALUES (?, ?)", (sid, "   "))
    con.commit()
    con.close()
    shot = read_lifetrace(processed.path)[0].screenshots[0]
    assert shot.id == sid and shot.ocr_text == text


def test_summary_fallbacks(tmp_path):
    fx = make_participant(tmp_path, "P08", "processed", model_columns=True)
    a, b, c, d = (int(i) for i in fx.live_event_ids[:4])
    _sql(fx.path, "UPDATE events SET event_summary = NULL WHERE id = ?", b)
    _sql(fx.path, "UPDATE events SET event_summary = '  ', ai_summary = NULL WHERE id = ?", c)
    _sql(fx.path, "UPDATE events SET event_summary = NULL, ai_summary = NULL, ai_title = NULL WHERE id = ?", d)
    ev = _by_id(read_lifetrace(fx.path))
    assert ev[str(a)].summary.startswith("用户在")  # event_summary
    assert ev[str(b)].summary.startswith("User works in")  # ai_summary
    assert ev[str(c)].summary.endswith("使用")  # ai_title
    assert ev[str(d)].summary.startswith("gpt-4o:")  # a model summary column


def test_user_defaults_to_folder_and_can_be_given(processed):
    assert {e.user for e in read_lifetrace(processed.path)} == {"P01"}
    assert {e.user for e in read_lifetrace(processed.path, user="alice")} == {"alice"}


def test_timestamp_formats_accepted(processed):
    a, b, c = (int(i) for i in processed.live_event_ids[1:4])
    _sql(processed.path, "UPDATE events SET start_time = '2025-09-15 09:01:00' WHERE id = ?", a)
    _sql(processed.path, "UPDATE events SET start_time = '2025-09-15T09:05:00.5' WHERE id = ?", b)
    _sql(processed.path, "UPDATE events SET start_time = '2025-09-15 09:09:00.123456789' WHERE id = ?", c)
    for i in (a, b, c):  # keep each end after its new start (an end before the start is refused)
        _sql(processed.path, "UPDATE events SET end_time = '2025-09-15 09:10:00' WHERE id = ?", i)
    ev = _by_id(read_lifetrace(processed.path))
    assert ev[str(a)].start == datetime(2025, 9, 15, 9, 1)
    assert ev[str(b)].start == datetime(2025, 9, 15, 9, 5, 0, 500000)
    assert ev[str(c)].start == datetime(2025, 9, 15, 9, 9, 0, 123456)


def test_parse_timestamp_rejects():
    for bad in (None, 1757900000, "2025-13-01 00:00:00", "yesterday", "2025-09-15 09:00:00+08:00", ""):
        with pytest.raises(ValueError):
            parse_timestamp(bad)


def test_null_screenshot_time_taken_from_file_name(processed):
    sid = processed.all_live_screenshot_ids[0]
    _sql(processed.path, "UPDATE screenshots SET created_at = NULL WHERE id = ?", sid)
    shot = read_lifetrace(processed.path)[0].screenshots[0]
    assert shot.id == sid and shot.time == datetime(2025, 9, 15, 9, 0, 0, 123000)


def test_input_is_byte_identical_after_reading(fx):
    before = _digest(fx.path)
    listing = sorted(os.listdir(fx.path.parent))
    mtime = fx.path.stat().st_mtime_ns
    detect_schema(fx.path)
    read_lifetrace(fx.path)
    assert _digest(fx.path) == before
    assert fx.path.stat().st_mtime_ns == mtime
    assert sorted(os.listdir(fx.path.parent)) == listing  # no -journal / -wal left behind


def test_read_only_file_can_be_read(processed):
    os.chmod(processed.path, 0o444)
    try:
        assert len(read_lifetrace(processed.path)) == len(processed.live_event_ids)
    finally:
        os.chmod(processed.path, 0o644)


def test_wal_database_closed_cleanly_leaves_no_side_files(processed):
    con = sqlite3.connect(processed.path)
    assert con.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    con.close()
    listing = sorted(os.listdir(processed.path.parent))
    before = _digest(processed.path)
    assert len(read_lifetrace(processed.path)) == len(processed.live_event_ids)
    assert sorted(os.listdir(processed.path.parent)) == listing
    assert _digest(processed.path) == before


def test_wal_database_is_read(processed):
    con = sqlite3.connect(processed.path)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("UPDATE events SET app_name = 'WeChat' WHERE id = 3")
    con.commit()
    try:
        ev = _by_id(read_lifetrace(processed.path))  # sees the un-checkpointed change
        assert ev["3"].app_name == "WeChat"
    finally:
        con.close()


# --------------------------------------------------------------------------- conversation JSON


def test_parse_conversation_shapes():
    assert parse_conversation(None) is None
    assert parse_conversation("  ") is None
    assert parse_conversation("null") is None
    assert parse_conversation("{}") == Conversation()
    c = parse_conversation('{"user_queries": "one", "llm_responses": [{"content": "hi"}], "full_conversation": [1]}')
    assert c == Conversation(("one",), ("hi",), "[1]")
    c = parse_conversation('[{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]')
    assert c.user_queries == ("q",) and c.llm_responses == ("a",)
    for bad in ("{not json", "[1, 2]", '"text"'):
        with pytest.raises(ValueError):
            parse_conversation(bad)


def test_malformed_conversation_is_an_error(processed):
    eid = int(processed.llm_event_ids[2])
    _sql(processed.path, "UPDATE events SET conversation = '{\"user_queries\": [\"unterminated' WHERE id = ?", eid)
    with pytest.raises(DataError) as e:
        read_lifetrace(processed.path)
    msg = str(e.value)
    assert str(processed.path) in msg and f"event {eid}" in msg and "conversation" in msg


def test_bad_llm_flag_is_an_error(processed):
    _sql(processed.path, "UPDATE events SET is_llm_event = 'maybe' WHERE id = 2")
    with pytest.raises(DataError, match=r"events, row id 2, column is_llm_event"):
        read_lifetrace(processed.path)


# --------------------------------------------------------------------------- annotations


@pytest.mark.parametrize("fmt", ["jsonl", "json", "nested"])
def test_annotations_joined(processed, tmp_path, fmt):
    excl = {processed.llm_event_ids[-2]: "privacy: personal chat", processed.live_event_ids[0]: "test run"}
    ann_path = write_annotations(
        processed, tmp_path / f"ann.{'jsonl' if fmt == 'jsonl' else 'json'}", fmt=fmt, exclude=excl
    )
    log = load_lifetrace(processed.path, annotations=ann_path)
    ev = _by_id(list(log.events))
    assert dict(log.excluded) == excl
    assert not set(excl) & set(ev)
    assert len(ev) == len(processed.live_event_ids) - 2
    kept = [i for i in processed.llm_event_ids if i not in excl]
    for eid in kept:
        assert ev[eid].intention == processed.expected_intentions[eid]
        assert ev[eid].llm_platform == processed.platforms[eid]
        assert 0.6 <= ev[eid].intention_confidence <= 1
    # free text mapped to the taxonomy; unknown text -> fallback
    assert "writing polish and editing" in processed.intentions.values()
    assert "Writing Polish & Editing" in {ev[i].intention for i in kept}
    assert "Uncategorized" in {ev[i].intention for i in kept}
    # non-LLM events get nothing
    assert all(e.intention is None for i, e in ev.items() if i not in processed.llm_event_ids)


def test_annotations_object_and_other_user(processed, tmp_path):
    ann_path = write_annotations(processed, tmp_path / "a.jsonl")
    ann = load_annotations(ann_path)
    ev = _by_id(read_lifetrace(processed.path, annotations=ann))
    assert ev[processed.llm_event_ids[0]].intention == "Debugging & Error Resolution"
    # records are for P01: a different user gets none of them
    ev = _by_id(read_lifetrace(processed.path, user="P99", annotations=ann))
    assert all(e.intention is None for e in ev.values())


def test_exclusion_only_file(processed, tmp_path):
    p = write_annotations(processed, tmp_path / "excl.json", fmt="excluded", exclude={"4": "duplicate"})
    log = load_lifetrace(processed.path, annotations=p)
    assert dict(log.excluded) == {"4": "duplicate"} and "4" not in {e.id for e in log.events}


def test_annotation_layouts(tmp_path):
    p = tmp_path / "a.json"
    p.write_text(
        json.dumps(
            {
                "version": 2,
                "P01": {
                    "7": {"user_intention": {"category": "code programming", "confidence": "85%", "rationale": "r"}},
                    "8": "Translation",
                    "excluded": {"9": "privacy"},
                },
                "p02": [{"id": 3.0, "intention": "Summarization", "platform": "Kimi"}],
                "excluded": {"P03": [1, 2], "P04": {"5": {"reason": "test"}}},
                "annotations": [{"participant": "P05", "eid": "11", "llm_platform": "ChatGPT"}],
            },
            ensure_ascii=False,
        ),
        "utf-8",
    )
    ann = load_annotations(p)
    a = ann.get("P01", 7)
    assert a.intention == "code programming" and a.confidence == pytest.approx(0.85) and a.rationale == "r"
    assert ann.get("p01", "8").intention == "Translation"
    assert ann.excluded("P01", "9") == "privacy"
    assert ann.get("P02", "3").llm_platform == "Kimi"  # user keys compared case-folded
    assert ann.excluded("P03", 2) == "excluded (no reason given)"
    assert ann.excluded("P04", "5") == "test"
    assert ann.get("P05", 11).llm_platform == "ChatGPT"
    assert ann.get("P01", 99) is None and ann.excluded("P01", 7) is None
    assert set(ann.users) == {"P01", "p02", "P03", "P04", "P05"}


def test_event_keyed_layouts_without_user(tmp_path):
    p = tmp_path / "P01.json"
    p.write_text(
        '{"12": {"user_intention": "Translation"}, "excluded": {"13": {"reason": "blank screen"}, "14": "dup"}}',
        "utf-8",
    )
    ann = load_annotations(p)
    assert ann.get("P01", 12).intention == "Translation"
    assert ann.excluded("P01", 13) == "blank screen" and ann.excluded("P01", 14) == "dup"


def test_annotations_without_user_apply_to_every_user(tmp_path):
    p = tmp_path / "P01_annotations.jsonl"
    p.write_text('{"event_id": 3, "user_intention": "Translation"}\n\n{"id": 4, "excluded": "blurred"}\n', "utf-8")
    p2 = tmp_path / "later.jsonl"
    p2.write_text('{"user": "P01", "event_id": "3", "confidence": 0.5}\n', "utf-8")
    ann = load_annotations([p, p2])
    assert ann.get("anyone", 3).intention == "Translation" and ann.get("anyone", 3).confidence is None
    a = ann.get("P01", 3)
    assert a.intention == "Translation" and a.confidence == 0.5  # merged field by field
    assert ann.excluded("P09", 4) == "blurred"


def test_annotation_directory(processed, tmp_path):
    d = tmp_path / "ann"
    write_annotations(processed, d / "a.jsonl")
    write_annotations(processed, d / "b.json", fmt="excluded", exclude={"2": "x"})
    ann = load_annotations(d)
    assert ann.excluded("P01", 2) == "x" and ann.get("P01", processed.llm_event_ids[0]).intention
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no \\*.json"):
        load_annotations(tmp_path / "empty")


def test_normalise_event_id():
    assert normalise_event_id(12) == normalise_event_id(12.0) == normalise_event_id(" 12 ") == "12"
    assert normalise_event_id("12.0") == "12" and normalise_event_id("evt-3") == "evt-3"
    for bad in (True, None, "", 1.5):
        with pytest.raises(ValueError):
            normalise_event_id(bad)


def test_malformed_jsonl_annotation(tmp_path):
    p = tmp_path / "ann.jsonl"
    p.write_text(
        '{"user": "P01", "event_id": 1, "user_intention": "Translation"}\n{"user": "P01", "event_id": 2,\n', "utf-8"
    )
    with pytest.raises(DataError) as e:
        load_annotations(p)
    assert str(p) in str(e.value) and "line 2" in str(e.value)


@pytest.mark.parametrize(
    "line, problem",
    [
        ('{"user": "P01", "user_intention": "Translation"}', "no event id"),
        ('{"user": "P01", "event_id": 1, "confidence": 7}', "outside 0-1"),
        ('{"user": "P01", "event_id": 1, "confidence": "high"}', "confidence"),
        ('{"user": "P01", "event_id": 1, "user_intention": ["a"]}', "must be text"),
        ('{"user": "P01", "event_id": 1, "excluded": 5}', "excluded must be"),
        ('[1, 2]', "expected an object"),
    ],
)
def test_malformed_annotation_records(tmp_path, line, problem):
    p = tmp_path / "ann.jsonl"
    p.write_text('{"user": "P01", "event_id": 9}\n' + line + "\n", "utf-8")
    with pytest.raises(DataError, match=problem) as e:
        load_annotations(p)
    assert str(p) in str(e.value) and "line 2" in str(e.value)


def test_malformed_json_annotation_and_missing_file(tmp_path):
    p = tmp_path / "ann.json"
    p.write_text('{\n "P01": {\n  "3": {"user_intention": "Translation",}\n }\n}', "utf-8")
    with pytest.raises(DataError, match="line 3") as e:
        load_annotations(p)
    assert str(p) in str(e.value)
    p.write_text("", "utf-8")
    with pytest.raises(DataError, match="empty"):
        load_annotations(p)
    with pytest.raises(DataError, match="not found"):
        load_annotations(tmp_path / "missing.jsonl")


def test_malformed_annotation_fails_read_before_any_db_work(processed, tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text("{oops\n", "utf-8")
    with pytest.raises(DataError, match="line 1"):
        read_lifetrace(processed.path, annotations=p)


def test_empty_annotations_object():
    ann = Annotations()
    assert len(ann) == 0 and ann.get("P01", 1) is None and ann.excluded("P01", 1) is None


# --------------------------------------------------------------------------- errors


def test_missing_file(tmp_path):
    p = tmp_path / "P01" / "lifetrace_privacy_processed.db"
    for fn in (read_lifetrace, detect_schema):
        with pytest.raises(DataError, match="not found") as e:
            fn(p)
        assert str(p) in str(e.value)
    assert not p.exists() and not p.parent.exists()  # nothing created


def test_random_bytes(tmp_path):
    p = tmp_path / "lifetrace.db"
    p.write_bytes(os.urandom(4096))
    before = _digest(p)
    with pytest.raises(DataError, match="not a SQLite database") as e:
        read_lifetrace(p)
    assert str(p) in str(e.value) and _digest(p) == before


def test_text_file_named_db(tmp_path):
    p = tmp_path / "lifetrace.db"
    p.write_text("id,app_name\n1,Chrome\n" * 200)
    with pytest.raises(DataError, match="not a SQLite database"):
        detect_schema(p)


def test_truncated_db(processed):
    data = processed.path.read_bytes()
    assert len(data) > 16384
    processed.path.write_bytes(data[:8192])
    with pytest.raises(DataError, match="corrupt SQLite database") as e:
        read_lifetrace(processed.path)
    assert str(processed.path) in str(e.value)


def test_empty_file(tmp_path):
    p = tmp_path / "lifetrace.db"
    p.write_bytes(b"")
    with pytest.raises(DataError, match="empty database"):
        read_lifetrace(p)


def test_foreign_sqlite(tmp_path):
    p = make_foreign_db(tmp_path / "places.sqlite")
    with pytest.raises(DataError) as e:
        read_lifetrace(p)
    msg = str(e.value)
    assert str(p) in msg and "not an activity log proagent reads" in msg
    assert "moz_places" in msg and "moz_bookmarks" in msg


def test_incomplete_events_columns(tmp_path):
    p = tmp_path / "lifetrace.db"
    con = sqlite3.connect(p)
    con.executescript(
        "CREATE TABLE events (id INTEGER PRIMARY KEY, app_name TEXT, window_title TEXT, created_at DATETIME);"
        "CREATE TABLE screenshots (id INTEGER PRIMARY KEY, file_path TEXT, created_at DATETIME, event_id INTEGER);"
    )
    con.close()
    with pytest.raises(DataError) as e:
        read_lifetrace(p)
    msg = str(e.value)
    assert str(p) in msg and "incomplete" in msg and "start_time" in msg and "end_time" in msg


def test_incomplete_missing_screenshots_table(tmp_path):
    p = tmp_path / "lifetrace.db"
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, app_name, window_title, start_time, end_time)")
    con.close()
    with pytest.raises(DataError, match="no screenshots table"):
        detect_schema(p)


def test_bad_timestamp_names_file_table_row(processed):
    _sql(processed.path, "UPDATE events SET start_time = '15/09/2025 9:00' WHERE id = 5")
    with pytest.raises(DataError) as e:
        read_lifetrace(processed.path)
    msg = str(e.value)
    assert str(processed.path) in msg and "table events" in msg and "row id 5" in msg and "start_time" in msg


def test_bad_screenshot_timestamp(processed):
    sid = processed.all_live_screenshot_ids[3]
    _sql(processed.path, "UPDATE screenshots SET created_at = 'not a time' WHERE id = ?", sid)
    with pytest.raises(DataError, match=rf"table screenshots, row id {sid}, column created_at"):
        read_lifetrace(processed.path)


def test_bad_timestamp_in_soft_deleted_row_is_ignored(lt):
    fx = lt("2025-11", "P09")
    _sql(fx.path, "UPDATE events SET start_time = 'garbage' WHERE id = ?", int(fx.deleted_event_ids[0]))
    assert [e.id for e in read_lifetrace(fx.path)] == fx.live_event_ids


def test_folder_without_db(tmp_path):
    with pytest.raises(DataError, match="no LifeTrace database"):
        read_lifetrace(tmp_path)
