"""Suite-wide guards: no test reaches the network.

* Every socket connection to an internet address (AF_INET/AF_INET6) other than
  loopback fails at once, so a test that would download something fails loudly
  instead of hanging or passing only online.
* Local models answer every request themselves: the answer cache
  (``PROAGENT_ANSWER_CACHE``, proagent.models._answers) is off unless a test sets it.
* inspect's mockllm fills in token usage with tiktoken, whose table is
  downloaded on first use; tokens are counted as characters / 4 instead.

Two rules for running under pytest-xdist (``scripts/test.sh`` hands whole files to two
workers, three with ``--all``, ``--dist loadfile --no-loadscope-reorder``):

* the test files that hold a ``slow`` test (a real model, a scripted desktop, a
  training run: the longest files) run first, each file's tests together and in their
  own order, so the longest files start at once and the short ones fill in beside them
  instead of one long file running alone at the end;
* each test holds its worker's lock, shared, while it runs; a stretch that measures real time
  (``solo.alone()``, or a test marked ``solo``) holds the other workers back meanwhile
  (``beside=1``: all but one, for a stretch that leaves most of the cores idle; :mod:`solo`).
"""

from __future__ import annotations

import ipaddress
import json
import os
import resource
import signal
import socket
import tempfile
import time
from pathlib import Path

import pytest
import solo


def _is_loopback(host: object) -> bool:
    try:
        return ipaddress.ip_address(str(host)).is_loopback
    except ValueError:
        return str(host) == "localhost"


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    real_connect = socket.socket.connect

    def guarded(self, address, *a, **k):  # noqa: ANN001, ANN202
        if isinstance(address, tuple) and not _is_loopback(address[0]):
            raise OSError(f"test tried to reach the network: {address}")
        return real_connect(self, address, *a, **k)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setenv("PROAGENT_ANSWER_CACHE", "off")
    from inspect_ai.model._providers.mockllm import MockLLM

    async def count(self, text) -> int:  # noqa: ANN001
        return max(1, len(str(text)) // 4)

    monkeypatch.setattr(MockLLM, "count_text_tokens", count)


@pytest.fixture
def in_tmp_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A test that runs commands as a user would, in ``tmp_path``: it is the working folder
    (default log and output folders land there), proagent's disk caches of built memory and
    of embeddings are inside it, and the ``PROAGENT_EVAL_*`` defaults of the environment are
    unset. A test file takes it for every test with
    ``pytestmark = pytest.mark.usefixtures("in_tmp_path")``. Returns ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PROAGENT_MEMORY_CACHE", str(tmp_path / "memcache"))
    monkeypatch.setenv("PROAGENT_EMBEDDING_CACHE", str(tmp_path / "emb"))
    for var in ("PROAGENT_EVAL_MODEL", "PROAGENT_EVAL_DATA", "PROAGENT_EVAL_WINDOW", "PROAGENT_EVAL_LOG_DIR"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def _cpu_s() -> float:
    """CPU seconds (user + sys) of this process and of its children that have been waited for."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    """Each test (setup, call, teardown) holds its worker's :mod:`solo` lock, shared; a test marked
    ``solo`` runs while the other workers wait (``solo(beside=1)``: all but one of them).

    With ``PROAGENT_TEST_TIMES=FILE`` each test appends one JSON line to FILE: ``test`` (node id),
    ``worker`` (xdist worker id, ``main`` without xdist), ``start``/``end`` (epoch s), ``wait_s`` (s
    spent waiting for :mod:`solo`'s locks: held back by the other worker's ``solo`` stretch, or a
    ``solo`` stretch waiting for the other worker's test), ``cpu_s`` (user + sys
    s of the worker and its waited-for children, so a model process kept alive between tests is
    not counted). ``scripts/test_times.py FILE`` sums them per file."""
    times = os.environ.get("PROAGENT_TEST_TIMES")
    t0, c0, w0 = time.time(), _cpu_s() if times else 0.0, solo.waited_s()
    with solo.shared():
        try:
            lone = item.get_closest_marker("solo")
            if lone is not None:
                with solo.alone(beside=lone.kwargs.get("beside", 0)):
                    return (yield)
            return (yield)
        finally:
            if times:
                row = {
                    "test": item.nodeid,
                    "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
                    "start": round(t0, 3),
                    "end": round(time.time(), 3),
                    "wait_s": round(solo.waited_s() - w0, 3),
                    "cpu_s": round(_cpu_s() - c0, 3),
                    "long": item.get_closest_marker("long") is not None,
                }
                with open(times, "a", encoding="utf-8") as f:  # one short line per write: appends do not interleave
                    f.write(json.dumps(row) + "\n")


LONG = (
    "tests/cross/test_desktop_day.py",  # two scripted captures of the desktop scenario, live, retraining
    "tests/cross/test_soak.py",  # 45 s of real capture (solo, one other worker beside it)
    "tests/live/test_live_desktop_grounding.py",  # live --capture on a busy desktop, the default model (solo)
    "tests/scale/test_scale_ray.py",  # a local multi-node Ray cluster, eval/ablate/curate/annotate on it
    # 12 chat pages rendered by Chromium and read by RapidOCR once for both tests (a module fixture, ~50 CPU s):
    # measured per test, the fixture's cost lands on whichever test runs first, so the test measured long and
    # the other (2 s in --all, 61 s in a developer run) would trade places each time the times are recorded
    "tests/annotate/test_annotate_evalset.py",
    "tests/train/test_finetune.py::test_lora_run_lowers_the_loss_and_records_its_moments",  # CPU training runs
    "tests/train/test_finetune.py::test_trained_gguf_evaluates_offline_and_refuses_its_training_moments",
    "tests/train/test_finetune.py::test_gguf_round_trip_answers_like_the_original",
    "tests/train/test_finetune.py::test_sft_run_lowers_the_loss_and_its_gguf_answers",
    # mypy over its modules, 20-25 s; under --all it skips after scripts/lint.sh ran the same mypy, so the
    # times --all records (under 1 s) would put it back in the developer suite
    "tests/cross/test_lint.py::test_mypy_holds_on_its_modules",
)
"""The ``long`` tests named here (node-id prefixes, relative to the repository root): minutes of real
capture, real training or a Ray cluster each, whatever they measured. ``scripts/test.sh`` leaves them
out (``--skip-long``: the suite a developer runs); ``scripts/test.sh --all``, ``.ci/run`` and a plain
``python -m pytest`` run them. Every test measured at :data:`LONG_SECONDS` or more is long as well."""

LONG_SECONDS = 4.0
"""A test whose wall seconds in :data:`TEST_SECONDS` reach this is ``long``: the developer suite
(``scripts/test.sh``) must fit :data:`DEV_BUDGET_S` on two cores. With 6 s it took 283-289 s per
worker near idle and 316-342 s on the same shared machine in busier hours (the same tests' CPU
seconds 13% higher, median): a budget with no margin fails on the machine, not the code. 4 s moves
28 tests of 4-6 s (~87 s per worker) to the long set, which CI runs (issue 45). Measured, so a test
that grows past it moves to the long set when ``scripts/test_times.py FILE --write
tests/test_seconds.json`` records it; until then ``scripts/test.sh``'s budget check names the file
that grew."""

DEV_BUDGET_S = 300
"""Seconds the developer suite may take on two idle cores (issue 45: five minutes). ``scripts/test.sh``
checks its own run against it (``scripts/test_times.py --budget``): the test seconds of the tests
that are not long, divided by the two workers."""

TEST_SECONDS = Path(__file__).with_name("test_seconds.json")
"""Wall seconds (setup, call and teardown) of each test of 0.5 s or more in a measured run
(``scripts/test_times.py FILE --write`` writes it): a file's figure is the sum over its tests that
the run selected, and xdist hands out files in that order, longest first."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--skip-long",
        action="store_true",
        help="leave out the long tests (tests/conftest.py LONG); scripts/test.sh without --all",
    )


def pytest_configure(config: pytest.Config) -> None:
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # started in the background by a shell without job control (nohup, `&` in a script, a CI runner):
        # SIGINT is ignored and every process a test starts would inherit that, so a test's Ctrl-C (a
        # SIGINT to a child) did nothing there and SIGKILL ended the child 15 s later; a test sees a
        # person's terminal instead, as proagent.cli.main restores it for a command
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if not hasattr(config, "workerinput") and config.pluginmanager.hasplugin("xdist"):
        # the controller names the run (xdist would, with a uuid of its own) so that it can remove
        # :mod:`solo`'s lock files at the end (pytest_sessionfinish)
        if config.getoption("testrunuid", None) is None:
            import uuid

            config.option.testrunuid = uuid.uuid4().hex
    config.addinivalue_line(
        "markers",
        "long: minutes of real capture, training or a Ray cluster (tests/conftest.py LONG), or measured "
        "at LONG_SECONDS or more (tests/test_seconds.json); scripts/test.sh leaves them out, --all and CI run them",
    )


def _test_seconds() -> dict[str, float]:
    try:
        data = json.loads(TEST_SECONDS.read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except ValueError as e:
        raise pytest.UsageError(f"{TEST_SECONDS}: not JSON ({e}); rewrite it with scripts/test_times.py --write") from e
    if not isinstance(data, dict) or not all(isinstance(v, (int, float)) for v in data.values()):
        raise pytest.UsageError(
            f"{TEST_SECONDS}: not an object of test id -> seconds; rewrite it with scripts/test_times.py --write"
        )
    return data


def is_long(nodeid: str, seconds: dict[str, float]) -> bool:
    """Whether the test ``nodeid`` is long: named by :data:`LONG` (a node-id prefix) or measured at
    :data:`LONG_SECONDS` or more in ``seconds`` (:data:`TEST_SECONDS`' table)."""
    named = any(nodeid == p or nodeid.startswith((p + "::", p + "[")) for p in LONG)
    return named or seconds.get(nodeid, 0.0) >= LONG_SECONDS


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the :data:`LONG` tests and those measured at :data:`LONG_SECONDS` or more ``long`` (and
    drop them under ``--skip-long``), then order the
    files for xdist's ``--dist loadfile``, which hands out whole files in this order: longest first
    by :data:`TEST_SECONDS` summed over the file's selected tests (a worker that draws a long file early finishes with the other, instead
    of running it alone at the end), then the files holding a ``slow`` test, then the rest. The sort
    is stable: a file's tests keep their order."""
    seconds = _test_seconds()
    for item in items:  # node ids are relative to the rootdir (the repository root, where pyproject.toml is)
        if is_long(item.nodeid, seconds):
            item.add_marker(pytest.mark.long)
    if config.getoption("skip_long"):
        keep = [item for item in items if not item.get_closest_marker("long")]
        if len(keep) < len(items):
            config.hook.pytest_deselected(items=[item for item in items if item.get_closest_marker("long")])
            items[:] = keep
    per_file: dict[Path, float] = {}
    for item in items:
        per_file[item.path] = per_file.get(item.path, 0.0) + seconds.get(item.nodeid, 0.0)
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}

    def key(item: pytest.Item) -> tuple[float, bool]:
        return -per_file[item.path], item.path not in slow_files

    items.sort(key=key)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The controller removes :mod:`solo`'s lock files of this run (one ``alone`` and two per worker)."""
    config = session.config
    run = None if hasattr(config, "workerinput") else config.getoption("testrunuid", None)
    if run and config.getoption("numprocesses", None):
        for f in Path(tempfile.gettempdir()).glob(f"proagent-tests-{run}.*.lock"):
            f.unlink(missing_ok=True)
