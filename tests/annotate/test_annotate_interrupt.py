"""``proagent annotate`` stopped with Ctrl-C (a real SIGINT to the command, a loopback model that is
slow to answer): it ends with proagent's own resume line (the same command), as ``proagent eval``
does, not inspect's ``inspect eval-retry`` advice (issue 35)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from lifetrace_fixtures import make_participant
from mock_openai import MockOpenAI
from test_annotate import MODEL, _answer, _show_query_on_screen


def test_ctrl_c_says_re_run_the_same_command(tmp_path: Path) -> None:
    fx = make_participant(tmp_path / "raw", "P01", variant="2025-11")
    _show_query_on_screen(fx)

    def slow(body: dict) -> str:
        if srv.requests and len(srv.requests) > 1:  # the first answers at once (a sample logged), the rest hang
            time.sleep(30)
        return _answer(body)

    with MockOpenAI(slow) as srv:
        env = {**os.environ, "MOCK_BASE_URL": srv.base_url, "MOCK_API_KEY": "test-key", "COLUMNS": "200"}
        cmd = [
            sys.executable,
            "-c",
            "from proagent.cli import main; main()",
            "annotate",
            str(tmp_path / "raw"),
            "--out",
            str(tmp_path / "out"),
            "--annotator",
            f"text:{MODEL}",
            "--log-dir",
            str(tmp_path / "logs"),
            "--ocr",
            "db",
            "--display",
            "plain",
            "--model-base-url",
            srv.base_url,
        ]
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path)
        try:
            t0 = time.monotonic()
            while len(srv.requests) < 2:  # one answered, the next in flight
                assert p.poll() is None, p.communicate()[0]
                assert time.monotonic() - t0 < 120, "no second model call"
                time.sleep(0.1)
            time.sleep(1.0)
            p.send_signal(signal.SIGINT)
            out, _ = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert p.returncode == 130, out
    assert "Traceback" not in out, out
    assert "eval-retry" not in out and "Resume task with" not in out, out
    assert "interrupted; re-run the same command to resume" in out, out
