"""A model API that refuses (wrong key: HTTP 401, no such model: 404) is one line naming the
endpoint, with no advice to resume (a re-run cannot fix a key), and inspect's error panel shows
one line instead of its 160-line traceback (bench._inspect_hooks shim 6). Run as a person runs
it: a ``proagent eval`` process against a loopback OpenAI-compatible server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mock_openai import MockOpenAI
from shared_data import DEV

pytestmark = pytest.mark.skipif(DEV is None, reason="ProactiveBench dev sessions not present")


def _eval_one(cwd: Path) -> subprocess.CompletedProcess:
    """``proagent eval`` of one dev sample with ``openai-api/mock/m`` (MOCK_BASE_URL set by the caller), as a process."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from proagent.cli import main; main()",
            "eval",
            "--data",
            str(sorted(DEV.glob("*.json"))[0]),
            "--model",
            "openai-api/mock/m",
            "--limit",
            "1",
            "--split",
            "all",
            "--log-dir",
            "logs/k",
        ],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "100"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(
    ("status", "needle"), [(401, "refused the API key: check MOCK_API_KEY"), (404, "has no such model")]
)
def test_a_refusing_api_is_one_line_without_resume_advice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: int, needle: str
) -> None:
    with MockOpenAI(lambda body: status) as srv:
        srv.env(monkeypatch)
        r = _eval_one(tmp_path)
    out = r.stdout + r.stderr
    errors = [ln for ln in out.splitlines() if ln.startswith("Error:")]
    assert r.returncode == 3, out[-2000:]
    assert len(errors) == 1 and needle in errors[0] and "127.0.0.1" in errors[0], out[-2000:]
    assert "resume" not in errors[0] and "Traceback" not in out
    assert "OPENAI_API_KEY" not in errors[0]  # issue 47: openai-api/mock/... reads MOCK_API_KEY
    assert len(out.splitlines()) < 30, out


def test_a_missing_key_names_the_one_variable_to_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """inspect names Azure and Entra ID for a local OpenAI-compatible server; the line names the variable."""
    from click.testing import CliRunner

    from proagent.cli import cli

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(sorted(DEV.glob("*.json"))[0]),
            "--model",
            "openai/gpt-4o",
            "--model-base-url",
            "http://127.0.0.1:9/v1",
            "--limit",
            "1",
        ],
    )
    assert r.exit_code == 1 and r.output.count("Error:") == 1
    assert "no API key: set OPENAI_API_KEY" in r.output and "Azure" not in r.output and "Entra" not in r.output
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize(
    ("status", "error", "final"),
    [
        (
            500,
            "InternalServerError: Error code: 500 - mock failure",
            "kept failing (InternalServerError: Error code: 500",
        ),
        (429, "RateLimitError: Error code: 429 - mock failure", "kept refusing for its rate limit"),
    ],
)
def test_retries_print_progress_then_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: int, error: str, final: str
) -> None:
    """An endpoint answering HTTP 500 or 429 was retried for ~25 s with no output: each retry is
    now one stderr line (endpoint, attempt k of n, the error's first line, the wait), then the one
    ``Error:`` line naming the endpoint and the last error. The waits follow
    ``PROAGENT_API_RETRY_WAIT`` (0.2 s, doubling, plus jitter; inspect's own are 3 s and 6 s,
    plus up to 3 s each: 9-15 s of this test's 22-28 s)."""
    from proagent.bench.running import API_MAX_RETRIES

    monkeypatch.setenv("PROAGENT_API_RETRY_WAIT", "0.2")
    with MockOpenAI(lambda body: status) as srv:
        srv.env(monkeypatch)
        r = _eval_one(tmp_path)
        port = srv.server.server_address[1]
    n = API_MAX_RETRIES + 1
    progress = [ln for ln in r.stderr.splitlines() if ln.startswith("model API at ")]
    assert len(progress) == API_MAX_RETRIES, r.stderr
    for k, line in enumerate(progress, 1):
        assert re.fullmatch(
            rf"model API at http://127\.0\.0\.1:{port}: attempt {k} of {n} failed \({re.escape(error)}\); "
            r"retrying in 0\.\d s",  # the configured first wait (0.2-0.4 s), then 0.4-0.6 s
            line,
        ), line
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("Error:")]
    assert r.returncode == 3 and len(errors) == 1 and final in errors[0] and f"127.0.0.1:{port}" in errors[0], r.stderr
    assert "resume" in errors[0] and "RetryError" not in r.stdout + r.stderr and "Traceback" not in r.stdout + r.stderr


def test_a_refused_connection_reads_as_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """openai's "Connection error." carries httpx's cause; the retry line shows both, and the address."""
    import openai
    from tenacity import RetryCallState, Retrying

    from proagent.bench._inspect_hooks import error_line, retry_line

    client = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="k", max_retries=0)  # nothing listens on port 9
    state = RetryCallState(Retrying(), None, (), {})
    try:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    except openai.APIConnectionError:
        state.set_exception(sys.exc_info())
    state.upcoming_sleep = 4.2
    line = retry_line("m", state, 3)
    assert re.fullmatch(
        r"model API at http://127\.0\.0\.1:9: attempt 1 of 3 failed \(APIConnectionError: Connection "
        r"error\. \(.*(refused|failed).*\)\); retrying in 4 s",
        line,
    ), line
    assert error_line(None) == "no answer"
