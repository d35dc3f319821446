"""The developer suite keeps to its budget (issue 45): ``scripts/test.sh`` records each test's time,
``scripts/test_times.py --budget`` fails naming the files that grew, and a test measured at
``LONG_SECONDS`` or more runs only in the long set."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import conftest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "test_times.py"


def _rows(path: Path, rows: list[tuple[str, float, bool]], waits: dict[str, float] | None = None) -> Path:
    t = 1000.0
    with path.open("w", encoding="utf-8") as f:
        for test, wall, long in rows:
            f.write(
                json.dumps(
                    {
                        "test": test,
                        "worker": "gw0",
                        "start": t,
                        "end": t + wall,
                        "wait_s": (waits or {}).get(test, 0.0),
                        "cpu_s": wall,
                        "long": long,
                    }
                )
                + "\n"
            )
            t += wall
    return path


def _check(
    tmp_path: Path,
    rows: list[tuple[str, float, bool]],
    recorded: dict[str, float],
    waits: dict[str, float] | None = None,
) -> subprocess.CompletedProcess:
    seconds = tmp_path / "seconds.json"
    seconds.write_text(json.dumps(recorded))
    times = _rows(tmp_path / "times.jsonl", rows, waits)
    return subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            str(times),
            "--top",
            "5",
            "--budget",
            "300",
            "--workers",
            "2",
            "--seconds",
            str(seconds),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_over_budget_fails_naming_the_file_that_grew(tmp_path: Path) -> None:
    rows = [
        ("tests/a/test_x.py::test_one", 200.0, False),
        ("tests/a/test_x.py::test_two", 250.0, False),
        ("tests/b/test_y.py::test_y", 180.0, False),
        ("tests/c/test_long.py::test_l", 5000.0, True),
    ]
    r = _check(tmp_path, rows, {"tests/a/test_x.py::test_one": 2.0, "tests/b/test_y.py::test_y": 170.0})
    assert r.returncode == 1, r.stdout + r.stderr
    assert (
        "OVER BUDGET" in r.stderr and "315 s on 2 workers" in r.stderr
    )  # (200 + 250 + 180) / 2; the long test not counted
    grown = [line.strip() for line in r.stderr.splitlines() if line.startswith("  tests/")]
    assert grown[0].startswith("tests/a/test_x.py: 2 s recorded -> 450 s now"), grown
    assert grown[1].startswith("tests/b/test_y.py: 170 s recorded -> 180 s now"), grown
    assert "tests/c/test_long.py" not in r.stderr


def test_within_budget_passes_and_prints_the_slowest_files(tmp_path: Path) -> None:
    rows = [(f"tests/a/test_{i}.py::test", 10.0 * i, False) for i in range(1, 8)] + [("tests/l.py::t", 900.0, True)]
    r = _check(tmp_path, rows, {})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "140 s on 2 workers" in r.stdout and "within it" in r.stdout
    listed = [line.split()[0] for line in r.stdout.splitlines() if line.startswith("tests/")]
    assert listed == ["tests/l.py", "tests/a/test_7.py", "tests/a/test_6.py", "tests/a/test_5.py", "tests/a/test_4.py"]


def test_a_test_measured_long_leaves_the_developer_suite() -> None:
    """Long: named by LONG (as a prefix of its node id) or recorded at LONG_SECONDS or more."""
    at, under = conftest.LONG_SECONDS, conftest.LONG_SECONDS - 0.1
    assert conftest.is_long("tests/x/test_m.py::test_slow", {"tests/x/test_m.py::test_slow": at})
    assert not conftest.is_long("tests/x/test_m.py::test_quick", {"tests/x/test_m.py::test_quick": under})
    assert not conftest.is_long("tests/x/test_m.py::test_new", {})  # not measured yet: the budget check names it
    named = conftest.LONG[0]
    assert conftest.is_long(named + "::test_any", {}) and conftest.is_long(named + "[p]", {})
    assert not conftest.is_long(named.removesuffix(".py") + "_other.py::t", {})
    recorded = conftest._test_seconds()
    assert any(conftest.is_long(t, recorded) for t in recorded if not any(t.startswith(p) for p in conftest.LONG))


def test_time_held_back_by_a_solo_test_is_not_the_tests_own(tmp_path: Path) -> None:
    """In ``--all`` a developer test waits while a long ``solo`` desktop test runs on the other worker
    (the CI rehearsal of 2026-12-05: 121 s for a test of 0.1 s): neither the budget nor ``--write``
    counts that wait as the test's time, so it is not called long for it."""
    rows = [("tests/a/test_x.py::test_held", 250.0, False), ("tests/a/test_x.py::test_other", 200.0, False)]
    r = _check(tmp_path, rows, {}, waits={"tests/a/test_x.py::test_held": 249.9})
    assert r.returncode == 0 and "100 s on 2 workers" in r.stdout, r.stdout + r.stderr  # (0.1 + 200) / 2
    table = tmp_path / "written.json"
    subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "times.jsonl"), "--write", str(table)],
        capture_output=True,
        timeout=60,
        check=True,
    )
    assert json.loads(table.read_text()) == {"tests/a/test_x.py::test_other": 200.0}  # 0.1 s: under 0.5
