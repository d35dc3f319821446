"""Ctrl-C stops every server proagent runs within about a second: the review page, live's offer
page, ``mcp --http`` and a local model's llama.cpp child. Each command is started as a person
starts it (a process in its own session, loopback only), and once it says it is serving, SIGINT
goes to its process group (Ctrl-C in a terminal) and the time to its exit is measured."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import psutil
import pytest
from mock_openai import MockOpenAI

LIMIT_S = 1.0
"""Seconds from SIGINT to the process's exit (the issue's bound)."""
SLACK_S = float(os.environ.get("PROAGENT_TEST_SIGINT_SLACK", "0"))
"""Extra seconds allowed on a machine too loaded for the bound (``PROAGENT_TEST_SIGINT_SLACK``; none by
default: the servers exit in 0.01-0.22 s at load 5-8 on 2 cores, mcp and live took 1.0-1.9 s before)."""


def _capture(folder: Path) -> Path:
    """A plain capture folder with one closed event, through the recorder's Store."""
    from proagent.capture import Store

    st = Store(folder)
    t = datetime.now() - timedelta(minutes=2)
    eid = st.open_event("xterm", "pytest -q", t)
    st.close_event(eid, t + timedelta(seconds=30))
    st.close()
    return folder


def _stop_time(
    argv: list[str],
    ready: Callable[[str], bool],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    children: bool = False,
) -> tuple[float, int, str]:
    """Start ``proagent ARGV``, wait (up to 120 s) for an output line that ``ready`` accepts, send
    SIGINT to its process group and return (seconds to exit, exit code, output). ``children``: also
    wait for every child process it had to be gone (a model's llama.cpp child)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    proc = subprocess.Popen(
        [sys.executable, "-c", "from proagent.cli import main; main()", *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    seen = threading.Event()

    def read() -> None:
        for line in iter(proc.stdout.readline, ""):
            lines.append(line)
            if ready(line):
                seen.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        assert seen.wait(120), "".join(lines)[-3000:]
        kids = psutil.Process(proc.pid).children(recursive=True) if children else []
        time.sleep(0.3)
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        rc = proc.wait(30)
        parent_s = time.monotonic() - t0
        if kids:
            psutil.wait_procs(kids, timeout=30)
        seconds = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    # shown with a failure: which of the two was late, the command or a child it had to stop
    print(f"{argv[0]}: exit {rc} {parent_s:.2f} s after SIGINT, its children gone at {seconds:.2f} s")
    return seconds, rc, "".join(lines)


def test_review_page(tmp_path: Path) -> None:
    (tmp_path / ".curate").mkdir()
    (tmp_path / ".curate" / "manifest.json").write_text('{"users": {}}', "utf-8")
    seconds, rc, out = _stop_time(["review", str(tmp_path)], lambda ln: "to review at http://127.0.0.1:" in ln)
    assert rc == 0 and seconds < LIMIT_S + SLACK_S and "Traceback" not in out, (seconds, out)


def test_mcp_http(tmp_path: Path) -> None:
    cap = _capture(tmp_path / "cap")
    seconds, rc, out = _stop_time(
        ["mcp", str(cap), "--http", "--token-file", str(tmp_path / "token"), "--state", str(tmp_path)],
        lambda ln: "http://127.0.0.1:" in ln,
    )
    assert rc == 0 and seconds < LIMIT_S + SLACK_S and "Traceback" not in out, (seconds, out)


def test_live_page(tmp_path: Path) -> None:
    cap = _capture(tmp_path / "cap")
    (tmp_path / "yes.txt").write_text("", "utf-8")  # a scripted decider that never says Yes
    with MockOpenAI(lambda body: "Need help: No") as srv:
        seconds, rc, out = _stop_time(
            [
                "live",
                "--watch",
                str(cap),
                "--out",
                str(tmp_path / "live"),
                "--yes-at",
                str(tmp_path / "yes.txt"),
                "--model",
                "openai-api/mock/m",
                "--notify",
                "page",
                "--every",
                "0",
                "--settle",
                "1",
            ],
            lambda ln: ln.startswith("watching"),
            env={"MOCK_BASE_URL": srv.base_url, "MOCK_API_KEY": "k"},
        )
    assert rc == 130 and seconds < LIMIT_S + SLACK_S and "Traceback" not in out, (seconds, out)


@pytest.mark.slow
def test_live_with_a_local_model_and_its_child(tmp_path: Path) -> None:
    """The llama.cpp child leaves with its parent."""
    from proagent.models.catalog import MODELS, parts_installed

    if not parts_installed(MODELS["smollm2-135m"]):
        pytest.skip("SmolLM2 not installed")
    cap = _capture(tmp_path / "cap")
    (tmp_path / "yes.txt").write_text("", "utf-8")
    seconds, rc, out = _stop_time(
        [
            "live",
            "--watch",
            str(cap),
            "--out",
            str(tmp_path / "live"),
            "--yes-at",
            str(tmp_path / "yes.txt"),
            "--model",
            "local/smollm2-135m",
            "--model-arg",
            "n_threads=1",
            "--notify",
            "page",
            "--every",
            "0",
            "--settle",
            "1",
        ],
        lambda ln: ln.startswith("watching"),
        children=True,
    )
    assert rc == 130 and seconds < LIMIT_S + SLACK_S and "Traceback" not in out, (seconds, out)
