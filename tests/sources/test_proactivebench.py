"""ProactiveBench reader (real sessions, malformed files) and the checksum-verified fetch."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import shutil
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

import pytest

from proagent.errors import DataError
from proagent.sources.fetch import PROACTIVEBENCH_FILES, PROACTIVEBENCH_URL, FetchError, fetch_proactivebench
from proagent.sources.proactivebench import (
    is_proactivebench_file,
    read_proactivebench,
    read_proactivebench_session,
)

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "proactivebench"
"""The real ProactiveBench dev sessions (read-only), beside the repository."""

needs_shared = pytest.mark.skipif(
    not (SHARED / "code_11.json").is_file(),
    reason=f"real ProactiveBench sessions not found at {SHARED} (expected <root>/shared beside <root>/main)",
)

SESSIONS = ("code_11", "code_12", "code_13", "writing_11", "writing_12", "writing_13")


def _raw(stem: str) -> list[dict]:
    return json.loads((SHARED / f"{stem}.json").read_text("utf-8"))


# --------------------------------------------------------------------------- real sessions


@needs_shared
def test_real_sessions_counts_users_and_labels():
    events = read_proactivebench(SHARED)
    assert len(events) == 112
    assert sum(e.needs_help is True for e in events) == 38
    assert all(isinstance(e.needs_help, bool) for e in events)
    assert {e.user for e in events} == set(SESSIONS)
    assert {len(e.candidate_tasks) for e in events} <= {0, 5}
    assert any(len(e.candidate_tasks) == 5 for e in events)
    assert len({(e.user, e.id) for e in events}) == 112  # ids unique


@needs_shared
@pytest.mark.parametrize("stem", SESSIONS)
def test_real_session_matches_file(stem):
    raw = _raw(stem)
    events = read_proactivebench_session(SHARED / f"{stem}.json")
    assert len(events) == len(raw)
    for i, (e, item) in enumerate(zip(events, raw)):
        assert e.id == f"{stem}:{i}"
        assert e.user == stem
        assert e.summary == item["observation"]["event"].strip()
        assert e.needs_help is item["task_status"]
        assert e.candidate_tasks == tuple(item["agent_response"]["candidate_task"])
        # UTC-naive: same value as the unix time read in UTC, whatever the local zone
        expected = datetime.fromtimestamp(float(item["observation"]["time"]), tz=timezone.utc).replace(tzinfo=None)
        assert e.start.tzinfo is None and e.start == expected
        next_time = float(raw[i + 1]["observation"]["time"]) if i + 1 < len(raw) else None
        if next_time is not None and next_time < float(item["observation"]["time"]):
            assert e.end is None and e.duration is None  # the next step is earlier: end unknown, not 0 s
        else:
            assert e.end is not None and e.end.tzinfo is None and e.end >= e.start
            assert e.duration is not None and e.duration >= 0


@needs_shared
def test_out_of_order_step_has_an_unknown_end():
    raw = _raw("writing_11")
    times = [float(x["observation"]["time"]) for x in raw]
    back = [i for i in range(1, len(times)) if times[i] < times[i - 1]]
    assert back, "writing_11 is expected to hold a step older than the previous one"
    events = read_proactivebench_session(SHARED / "writing_11.json")
    for i in back:
        assert events[i].start < events[i - 1].start
        assert events[i - 1].end is None  # the step before the jump back: its end is unknown (not 0 s)
        assert events[i].end is None or events[i].end >= events[i].start
    assert events[-1].end == events[-1].start  # last step: zero duration


@needs_shared
def test_times_do_not_depend_on_local_time_zone(monkeypatch):
    if not hasattr(time, "tzset"):
        pytest.skip("time.tzset not available on this platform")
    before = read_proactivebench_session(SHARED / "code_11.json")
    try:
        monkeypatch.setenv("TZ", "Asia/Shanghai")
        time.tzset()
        after = read_proactivebench_session(SHARED / "code_11.json")
    finally:
        monkeypatch.undo()
        time.tzset()
    assert [e.start for e in after] == [e.start for e in before]


@needs_shared
def test_single_file_and_detection():
    assert is_proactivebench_file(SHARED / "code_11.json")
    assert not is_proactivebench_file(SHARED / "README.md")
    assert len(read_proactivebench(SHARED / "code_12.json")) == len(_raw("code_12"))


# --------------------------------------------------------------------------- malformed files

GOOD_ITEM = {
    "observation": {"time": "1717377997.0", "event": "The user opens main.py in VS Code."},
    "agent_response": {"candidate_task": ["Explain the code.", "Suggest tests."]},
    "task_status": True,
}


def _session(n: int = 4) -> list[dict]:
    out = []
    for i in range(n):
        item = copy.deepcopy(GOOD_ITEM)
        item["observation"]["time"] = str(1717377997.0 + 10 * i)
        item["task_status"] = i % 2 == 0
        out.append(item)
    return out


def _write(path: Path, data) -> Path:
    path.write_text(data if isinstance(data, str) else json.dumps(data), "utf-8")
    return path


def test_good_synthetic_session(tmp_path):
    events = read_proactivebench(_write(tmp_path / "s1.json", _session()))
    assert [e.needs_help for e in events] == [True, False, True, False]
    assert events[0].user == "s1"
    assert [e.end for e in events[:-1]] == [e.start for e in events[1:]]


def _break(item: dict, how: str) -> None:
    if how == "missing_observation":
        del item["observation"]
    elif how == "missing_time":
        del item["observation"]["time"]
    elif how == "missing_event":
        del item["observation"]["event"]
    elif how == "bad_time":
        item["observation"]["time"] = "yesterday"
    elif how == "null_time":
        item["observation"]["time"] = None
    elif how == "status_string":
        item["task_status"] = "true"
    elif how == "status_int":
        item["task_status"] = 1
    elif how == "status_missing":
        del item["task_status"]
    elif how == "tasks_string":
        item["agent_response"]["candidate_task"] = "Explain the code."
    elif how == "tasks_not_text":
        item["agent_response"]["candidate_task"] = ["ok", 3]
    elif how == "empty_event":
        item["observation"]["event"] = "  "
    elif how == "time_nan":
        item["observation"]["time"] = "nan"
    elif how == "time_inf":
        item["observation"]["time"] = "inf"
    elif how == "time_out_of_range":
        item["observation"]["time"] = "1e20"
    elif how == "response_list":
        item["agent_response"] = ["Explain the code."]
    elif how == "response_text":
        item["agent_response"] = "Explain the code."
    else:  # pragma: no cover
        raise AssertionError(how)


@pytest.mark.parametrize(
    "how",
    [
        "missing_observation",
        "missing_time",
        "missing_event",
        "bad_time",
        "null_time",
        "status_string",
        "status_int",
        "status_missing",
        "tasks_string",
        "tasks_not_text",
        "empty_event",
        "time_nan",
        "time_inf",
        "time_out_of_range",
        "response_list",
        "response_text",
    ],
)
def test_malformed_item_names_file_and_index(tmp_path, how):
    data = _session()
    _break(data[2], how)
    path = _write(tmp_path / "broken.json", data)
    with pytest.raises(DataError) as ei:
        read_proactivebench(path)
    msg = str(ei.value)
    assert str(path) in msg and ei.value.path == str(path)
    assert "item 2" in msg
    # also through the folder reader
    with pytest.raises(DataError, match="item 2"):
        read_proactivebench(tmp_path)


def test_item_not_an_object(tmp_path):
    data = _session()
    data[1] = ["not", "an", "object"]
    path = _write(tmp_path / "s.json", data)
    with pytest.raises(DataError, match=r"item 1"):
        read_proactivebench_session(path)


@pytest.mark.parametrize(
    "text",
    ['[{"observation": {"time": "1", "event": "x"}', "not json at all", "", '{"observation": {}}', "[]", "null"],
    ids=["truncated", "text", "empty_file", "object", "empty_list", "null"],
)
def test_not_a_session(tmp_path, text):
    path = _write(tmp_path / "bad.json", text)
    with pytest.raises(DataError) as ei:
        read_proactivebench_session(path)
    assert str(path) in str(ei.value)


def test_not_utf8(tmp_path):
    path = tmp_path / "bin.json"
    path.write_bytes(b'[{"observation": \xff\xfe}]')
    with pytest.raises(DataError, match="bin.json"):
        read_proactivebench_session(path)


def test_folder_without_sessions(tmp_path):
    with pytest.raises(DataError) as ei:
        read_proactivebench(tmp_path)
    assert str(tmp_path) in str(ei.value)
    _write(tmp_path / "other.json", {"observation": 1})
    (tmp_path / "notes.txt").write_text("[observation]")
    with pytest.raises(DataError, match="no ProactiveBench session"):
        read_proactivebench(tmp_path)


def test_missing_path(tmp_path):
    with pytest.raises(DataError, match="nope"):
        read_proactivebench(tmp_path / "nope")
    with pytest.raises(DataError, match="not found"):
        read_proactivebench_session(tmp_path / "nope.json")


def test_one_bad_file_in_folder_fails_whole_folder(tmp_path):
    _write(tmp_path / "a.json", _session())
    data = _session()
    data[3]["task_status"] = None
    _write(tmp_path / "b.json", data)
    with pytest.raises(DataError) as ei:
        read_proactivebench(tmp_path)
    assert "b.json" in str(ei.value) and "item 3" in str(ei.value)


# --------------------------------------------------------------------------- fetch


def _no_network(*a, **k):  # pragma: no cover - only called on a bug
    raise AssertionError("the offline fetch must not touch the network")


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setattr(urllib.request, "urlopen", _no_network)


@pytest.fixture
def mirror(tmp_path) -> Path:
    if not (SHARED / "code_11.json").is_file():
        pytest.skip(f"real ProactiveBench sessions not found at {SHARED}")
    m = tmp_path / "mirror"
    m.mkdir()
    for name in PROACTIVEBENCH_FILES:
        shutil.copyfile(SHARED / name, m / name)
    if (SHARED / "LICENSE").is_file():
        shutil.copyfile(SHARED / "LICENSE", m / "LICENSE")
    return m


def _temps(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith(".")]


@needs_shared
def test_shared_checksums_match_catalog():
    for name, sha in PROACTIVEBENCH_FILES.items():
        assert hashlib.sha256((SHARED / name).read_bytes()).hexdigest() == sha, name


@needs_shared
def test_fetch_from_shared_folder(tmp_path, offline):
    dest = tmp_path / "data" / "pb"
    files = fetch_proactivebench(dest, source_dir=SHARED)
    assert [p.name for p in files] == list(PROACTIVEBENCH_FILES)
    assert sorted(p.name for p in dest.glob("*.json")) == sorted(PROACTIVEBENCH_FILES)
    for p in files:
        assert p.read_bytes() == (SHARED / p.name).read_bytes()
    assert not _temps(dest)
    if (SHARED / "LICENSE").is_file():
        assert (dest / "LICENSE").read_bytes() == (SHARED / "LICENSE").read_bytes()
    assert len(read_proactivebench(dest)) == 112


@needs_shared
def test_fetch_keeps_good_files(tmp_path, mirror, offline):
    dest = tmp_path / "dest"
    fetch_proactivebench(dest, source_dir=mirror)
    before = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in dest.glob("*.json")}
    # with every file already good, even a tampered or emptied mirror is not read
    (mirror / "code_12.json").write_text("[]")
    (mirror / "writing_13.json").unlink()
    files = fetch_proactivebench(dest, source_dir=mirror)
    assert len(files) == 6
    after = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in dest.glob("*.json")}
    assert after == before


def test_fetch_tampered_mirror_file(tmp_path, mirror, offline):
    dest = tmp_path / "dest"
    dest.mkdir()
    # a good file from an earlier fetch, and a local non-matching copy of the tampered one
    shutil.copyfile(SHARED / "code_11.json", dest / "code_11.json")
    local = b'[{"local": "copy the user edited"}]'
    (dest / "code_12.json").write_bytes(local)
    data = json.loads((mirror / "code_12.json").read_text("utf-8"))
    data[0]["task_status"] = not data[0]["task_status"]
    (mirror / "code_12.json").write_text(json.dumps(data), "utf-8")

    with pytest.raises(FetchError) as ei:
        fetch_proactivebench(dest, source_dir=mirror)
    msg = str(ei.value)
    assert "code_12.json" in msg and PROACTIVEBENCH_FILES["code_12.json"] in msg
    assert (dest / "code_11.json").read_bytes() == (SHARED / "code_11.json").read_bytes()
    assert (dest / "code_12.json").read_bytes() == local  # not overwritten by the tampered copy
    assert not (dest / "code_13.json").exists()  # stopped at the bad file
    assert not _temps(dest)


def test_fetch_tampered_file_never_replaces_good_one(tmp_path, mirror, offline):
    dest = tmp_path / "dest"
    fetch_proactivebench(dest, source_dir=mirror)
    good = (dest / "writing_12.json").read_bytes()
    # corrupt one dest file; the mirror copy is tampered too: the fetch must fail and write nothing
    (dest / "writing_12.json").write_bytes(good[:-10])
    (mirror / "writing_12.json").write_bytes(good.replace(b"true", b"fals", 1))
    with pytest.raises(FetchError, match="writing_12.json"):
        fetch_proactivebench(dest, source_dir=mirror)
    assert (dest / "writing_12.json").read_bytes() == good[:-10]
    assert not _temps(dest)
    # restoring the mirror repairs it
    (mirror / "writing_12.json").write_bytes(good)
    fetch_proactivebench(dest, source_dir=mirror)
    assert (dest / "writing_12.json").read_bytes() == good


def test_fetch_missing_mirror_file(tmp_path, mirror, offline):
    (mirror / "code_13.json").unlink()
    dest = tmp_path / "dest"
    with pytest.raises(FetchError) as ei:
        fetch_proactivebench(dest, source_dir=mirror)
    assert "code_13.json" in str(ei.value) and "mirror" in str(ei.value)
    assert not (dest / "code_13.json").exists()
    assert not _temps(dest)


@needs_shared
def test_download_path_verifies_checksums(tmp_path, monkeypatch):
    calls: list[tuple[str, float]] = []

    def fake_urlopen(url, timeout=None):
        calls.append((url, timeout))
        name = url.rsplit("/", 1)[-1]
        return io.BytesIO((SHARED / name).read_bytes())

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    dest = tmp_path / "dl"
    files = fetch_proactivebench(dest, timeout=7.5)
    assert [u for u, _ in calls] == [PROACTIVEBENCH_URL.format(name=n) for n in PROACTIVEBENCH_FILES]
    assert all(u.startswith("https://") for u, _ in calls)
    assert {t for _, t in calls} == {7.5}
    assert [p.read_bytes() for p in files] == [(SHARED / n).read_bytes() for n in PROACTIVEBENCH_FILES]
    assert not (dest / "LICENSE").exists()  # only copied from a mirror
    assert not _temps(dest)

    # again: all files good, nothing downloaded
    calls.clear()
    fetch_proactivebench(dest)
    assert calls == []


@needs_shared
def test_download_with_wrong_bytes_fails_and_writes_nothing(tmp_path, monkeypatch):
    def fake_urlopen(url, timeout=None):
        name = url.rsplit("/", 1)[-1]
        data = (SHARED / name).read_bytes()
        return io.BytesIO(data + b"\n" if name == "code_13.json" else data)

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    dest = tmp_path / "dl"
    with pytest.raises(FetchError) as ei:
        fetch_proactivebench(dest)
    assert PROACTIVEBENCH_URL.format(name="code_13.json") in str(ei.value)
    assert sorted(p.name for p in dest.iterdir()) == ["code_11.json", "code_12.json"]


def test_download_failure_is_fetch_error(tmp_path, monkeypatch):
    def fail(url, timeout=None):
        raise urllib.error.URLError("no route to host")

    monkeypatch.setattr(urllib.request, "urlopen", fail)
    with pytest.raises(FetchError, match="--from"):
        fetch_proactivebench(tmp_path / "dl")
    assert not (tmp_path / "dl").exists()  # nothing written, not even the folder


def test_folder_mixing_sessions_and_databases_is_refused(tmp_path):
    from proagent.sources.load import load_events

    (tmp_path / "s.json").write_text(
        '[{"observation": {"time": "1", "event": "The user opens a file."}, "task_status": false}]'
    )
    (tmp_path / "other.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    with pytest.raises(DataError, match="both ProactiveBench sessions and SQLite databases"):
        load_events(tmp_path)
