"""Readers are one registry (issue 25 item 3): a recorder's format is one ``register_reader``
entry in ``sources/load.py``; folder search, detection, ``--data`` and the annotation overlay
follow it. Here a made-up recorder ("tally": a SQLite file ``*.tally`` with one table) is added
through the registry alone."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from proagent.records import Event
from proagent.sources import ActivityLog
from proagent.sources.load import (
    LIFETRACE,
    READERS,
    activity_log_kind,
    find_databases,
    load_activity_log,
    load_events,
    register_reader,
)

T0 = datetime(2026, 5, 4, 9, 0, 0)


def _tally_db(path: Path, apps: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE tally_events (id INTEGER PRIMARY KEY, seconds INTEGER, app TEXT)")
    conn.executemany("INSERT INTO tally_events (seconds, app) VALUES (?, ?)", [(60 * i, a) for i, a in enumerate(apps)])
    conn.commit()
    conn.close()
    return path


def _is_tally(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'tally_events'").fetchone() is not None


def _read_tally(path: Path, *, user: str | None = None, since: datetime | None = None) -> ActivityLog:
    user = user or path.parent.name
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = conn.execute("SELECT id, seconds, app FROM tally_events ORDER BY id").fetchall()
    conn.close()
    events = tuple(
        Event(id=str(i), user=user, start=T0 + timedelta(seconds=s), end=T0 + timedelta(seconds=s + 60), app_name=app)
        for i, s, app in rows
    )
    return ActivityLog(
        path=path, user=user, events=tuple(e for e in events if since is None or e.end > since), kind="tally"
    )


@pytest.fixture
def tally():
    register_reader("tally", title="a Tally", sqlite=_is_tally, finds=("*.tally",))(_read_tally)
    try:
        yield READERS["tally"]
    finally:
        del READERS["tally"]


def test_builtin_readers_in_order() -> None:
    assert list(READERS)[:2] == ["activitywatch", "screenpipe"]
    assert LIFETRACE not in READERS


def test_a_registered_reader_is_found_detected_and_read(tmp_path: Path, tally) -> None:  # noqa: ANN001
    a = _tally_db(tmp_path / "logs" / "P01" / "week.tally", ["xterm", "firefox", "code"])
    b = _tally_db(tmp_path / "logs" / "P02" / "week.tally", ["slack"])
    (tmp_path / "logs" / "P02" / "notes.tally").mkdir()  # a folder of that name is no log
    assert find_databases(tmp_path / "logs") == [a, b]
    assert activity_log_kind(a) == "tally"
    assert [e.app_name for e in load_events(a)] == ["xterm", "firefox", "code"]
    events = load_events(tmp_path / "logs")
    assert [(e.user, e.app_name) for e in events] == [
        ("P01", "xterm"),
        ("P01", "firefox"),
        ("P01", "code"),
        ("P02", "slack"),
    ]
    log = load_activity_log(a, since=T0 + timedelta(seconds=90))
    assert log.kind == "tally" and [e.id for e in log.events] == ["2", "3"]


def test_without_the_entry_the_file_is_read_as_lifetrace(tmp_path: Path) -> None:
    a = _tally_db(tmp_path / "P01" / "week.tally", ["xterm"])
    assert activity_log_kind(a) == LIFETRACE
    assert find_databases(tmp_path) == []


def test_registering_twice_or_without_a_test_is_refused(tally) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match="already registered"):
        register_reader("tally", title="a Tally", sqlite=_is_tally)(_read_tally)
    with pytest.raises(ValueError, match="already registered"):
        register_reader(LIFETRACE, title="a LifeTrace", sqlite=_is_tally)(_read_tally)
    with pytest.raises(ValueError, match="sqlite= or file="):
        register_reader("tally2", title="a Tally")(_read_tally)


def test_messages_name_a_reader_registered_later(tmp_path: Path) -> None:
    """The formats a refusal names are read from the registry when it is raised (issue 38 item 1),
    the built-in wording unchanged."""
    from proagent.errors import DataError

    empty = tmp_path / "empty"
    empty.mkdir()
    odd = tmp_path / "notes.txt"
    odd.write_text("hello")
    with pytest.raises(DataError) as e:
        load_events(empty)
    assert e.value.problem == (
        "no ProactiveBench session files, LifeTrace or ActivityWatch databases (*.db), "
        "screenpipe db.sqlite or ActivityWatch exports found here"
    )
    with pytest.raises(DataError) as e:
        load_events(odd)
    assert e.value.problem == (
        "not a ProactiveBench session (.json), an ActivityWatch export (.json) nor a "
        "LifeTrace, ActivityWatch or screenpipe SQLite database"
    )
    register_reader("tally", title="a Tally", sqlite=_is_tally, finds=("*.tally",))(_read_tally)
    try:
        with pytest.raises(DataError) as e:
            load_events(empty)
        assert "screenpipe db.sqlite, Tally *.tally or ActivityWatch exports" in e.value.problem
        with pytest.raises(DataError) as e:
            load_events(odd)
        assert "LifeTrace, ActivityWatch, screenpipe or Tally SQLite database" in e.value.problem
        with pytest.raises(DataError) as e:
            load_activity_log(_lifetrace_like(tmp_path / "lt.db"))
        assert e.value.problem == "not an ActivityWatch, screenpipe or Tally log"
    finally:
        del READERS["tally"]


def _lifetrace_like(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE events (id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    return path


def test_a_readers_own_folder_is_watched(tmp_path: Path) -> None:
    """``live --watch FOLDER`` finds a recorder's own database by the readers' ``folder_db``
    (screenpipe's ``db.sqlite`` was written into live; issue 38 item 1)."""
    from proagent.live._activity_follow import watched_log
    from proagent.sources.load import recorder_folder_db

    folder = tmp_path / "tally-home"
    db = _tally_db(folder / "tally.db", ["xterm"])
    _tally_db(folder / "other.db", ["xterm"])  # two databases: without folder_db, neither is chosen
    assert recorder_folder_db(folder) is None
    register_reader("tally", title="a Tally", sqlite=_is_tally, folder_db="tally.db")(_read_tally)
    try:
        assert recorder_folder_db(folder) == db
        assert watched_log(folder) == (db, "tally")
    finally:
        del READERS["tally"]
