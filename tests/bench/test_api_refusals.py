"""A model API that refuses (wrong key: HTTP 401, no such model: 404) is one line naming the
endpoint, with no advice to resume (a re-run cannot fix a key), and inspect's error panel shows
one line instead of its 160-line traceback (bench._inspect_hooks shim 6). Run as a person runs
it: a ``proagent eval`` process against a loopback OpenAI-compatible server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mock_openai import MockOpenAI
from shared_data import DEV

pytestmark = pytest.mark.skipif(DEV is None, reason="ProactiveBench dev sessions not present")


@pytest.mark.parametrize(("status", "needle"), [(401, "refused the API key"), (404, "has no such model")])
def test_a_refusing_api_is_one_line_without_resume_advice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: int,
                                                          needle: str) -> None:
    session = sorted(DEV.glob("*.json"))[0]
    with MockOpenAI(lambda body: status) as srv:
        srv.env(monkeypatch)
        r = subprocess.run([sys.executable, "-c", "from proagent.cli import main; main()", "eval", "--data", str(session),
                            "--model", "openai-api/mock/m", "--limit", "1", "--split", "all", "--log-dir", "logs/k"],
                           cwd=tmp_path, env={**os.environ, "COLUMNS": "100"}, capture_output=True, text=True,
                           timeout=300, check=False)
    out = r.stdout + r.stderr
    errors = [ln for ln in out.splitlines() if ln.startswith("Error:")]
    assert r.returncode == 3, out[-2000:]
    assert len(errors) == 1 and needle in errors[0] and "127.0.0.1" in errors[0], out[-2000:]
    assert "resume" not in errors[0] and "Traceback" not in out
    assert len(out.splitlines()) < 30, out


def test_a_missing_key_names_the_one_variable_to_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """inspect names Azure and Entra ID for a local OpenAI-compatible server; the line names the variable."""
    from click.testing import CliRunner

    from proagent.cli import cli

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["eval", "--data", str(sorted(DEV.glob("*.json"))[0]), "--model", "openai/gpt-4o",
                                 "--model-base-url", "http://127.0.0.1:9/v1", "--limit", "1"])
    assert r.exit_code == 1 and r.output.count("Error:") == 1
    assert "no API key: set OPENAI_API_KEY" in r.output and "Azure" not in r.output and "Entra" not in r.output
    assert not (tmp_path / "logs").exists()
