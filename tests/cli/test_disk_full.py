"""A full disk is one line, exit 3, no traceback, and the last good output stays: the commands run
as ``proagent`` processes under a file-size limit (``RLIMIT_FSIZE``: every write past it fails as
on a full disk, EFBIG for files and SQLite's I/O error for inspect's sample buffer), which needs
no tmpfs mount and so runs wherever CI runs."""

from __future__ import annotations

import hashlib
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from mock_openai import MockOpenAI
from shared_data import DEV

pytestmark = pytest.mark.skipif(DEV is None, reason="ProactiveBench dev sessions not present")


def _run(cwd: Path, limit: int | None, *argv: str) -> subprocess.CompletedProcess:
    def cap() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-c", "from proagent.cli import main; main()", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        preexec_fn=cap,
    )


@pytest.mark.parametrize("limit", [1_000, 30_000])
def test_eval_on_a_full_disk_is_one_line_and_keeps_the_last_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    session = sorted(DEV.glob("*.json"))[0]
    answer = "Decision: Yes\nIntention: Code Programming\nQuery: How do I fix this error?"
    with MockOpenAI(lambda body: answer) as srv:
        srv.env(monkeypatch)
        argv = (
            "eval",
            "--data",
            str(session),
            "--model",
            "openai-api/mock/m",
            "--split",
            "all",
            "--log-dir",
            "logs/run",
        )
        good = _run(tmp_path, None, *argv, "--limit", "2")
        assert good.returncode == 0, good.stderr[-2000:]
        results = tmp_path / "logs" / "run" / "results.json"
        before = hashlib.sha256(results.read_bytes()).hexdigest()
        r = _run(tmp_path, limit, *argv, "--limit", "6")
    out = r.stdout + r.stderr
    errors = [ln for ln in out.splitlines() if ln.startswith("Error:")]
    if r.returncode == 0:  # everything fitted under the limit (not expected at these sizes)
        pytest.fail(f"eval wrote past a {limit}-byte file-size limit:\n{out[-2000:]}")
    assert r.returncode == 3 and len(errors) == 1 and "free some space" in errors[0], out[-3000:]
    assert "Traceback" not in out
    assert hashlib.sha256(results.read_bytes()).hexdigest() == before
