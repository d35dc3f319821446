"""`proagent train when --teacher MODEL --unlabelled DATA`: a teacher model labels the moments of an
unlabelled log (over a loopback OpenAI-compatible mock) and the decider is fitted on its labels."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from mock_openai import MockOpenAI, last_user_text
from shared_data import DEV

from proagent.cli import cli

pytestmark = pytest.mark.skipif(DEV is None, reason="ProactiveBench dev sessions not present")

TEACHER = "openai-api/mock/teacher"


def test_teacher_labels_train_the_decider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answers: list[str] = []

    def reply(body: dict) -> str:
        assert last_user_text(body)  # one moment's zero-shot prompt per request
        a = (
            "I am not sure."
            if not answers
            else ("Need help: Yes\nQuery: help with this" if len(answers) <= 3 else "Need help: No")
        )
        answers.append(a)
        return a

    with MockOpenAI(reply) as srv:
        srv.env(monkeypatch)
        r = CliRunner().invoke(
            cli,
            [
                "train",
                "when",
                "--teacher",
                TEACHER,
                "--unlabelled",
                str(DEV / "code_13.json"),
                "--teacher-base-url",
                srv.base_url,
                "--features",
                "behaviour,keywords",
                "--cv",
                "moments",
                "--out",
                str(tmp_path / "d"),
            ],
        )
    assert r.exit_code == 0, r.output
    assert len(srv.requests) == len(answers) == 20  # one call per moment of the log
    assert "1 teacher answers did not parse" in r.output
    m = json.loads((tmp_path / "d" / "manifest.json").read_text())
    (src,) = m["training_data"]
    yes = sum(a.startswith("Need help: Yes") for a in answers)
    assert src["selection"] == f"teacher {TEACHER}" and src["n"] == 19 and src["n_positive"] == yes
    assert m["n_positive"] == yes == 3  # the teacher's labels, not the log's own (5 positive)


def test_teacher_needs_unlabelled_and_fails_cleanly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r = CliRunner().invoke(cli, ["train", "when", "--teacher", TEACHER, "--out", str(tmp_path / "d")])
    assert r.exit_code == 2 and "go together" in r.output
    with MockOpenAI(lambda body: 400) as srv:
        srv.env(monkeypatch)
        r = CliRunner().invoke(
            cli,
            [
                "train",
                "when",
                "--teacher",
                TEACHER,
                "--unlabelled",
                str(DEV / "code_13.json"),
                "--teacher-base-url",
                srv.base_url,
                "--out",
                str(tmp_path / "d"),
            ],
        )
    assert r.exit_code == 1 and r.output.startswith("Error: --teacher") and "Traceback" not in r.output
    assert not (tmp_path / "d" / "manifest.json").exists()


def test_a_failing_teacher_api_is_bounded_and_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An endpoint answering HTTP 500 was retried with no output until killed (18 requests in 200 s):
    now inspect's retries are bounded (API_MAX_RETRIES), each retry prints a progress line and the
    final line names the endpoint and the last error."""
    from proagent.bench.running import API_MAX_RETRIES

    monkeypatch.setenv("PROAGENT_API_TIMEOUT", "5")
    monkeypatch.setenv("PROAGENT_API_RETRY_WAIT", "0.2")  # not inspect's 3 s + 6 s (+ jitter) of backoff
    with MockOpenAI(lambda body: 500) as srv:
        srv.env(monkeypatch)
        t0 = time.monotonic()
        r = CliRunner().invoke(
            cli,
            [
                "train",
                "when",
                "--teacher",
                TEACHER,
                "--unlabelled",
                str(DEV / "code_13.json"),
                "--teacher-base-url",
                srv.base_url,
                "--out",
                str(tmp_path / "d"),
            ],
        )
        seconds = time.monotonic() - t0
    lines = r.stderr.strip().splitlines()
    # the wording eval and live share (bench.running.endpoint_problem): the endpoint, what failed, the attempts
    assert r.exit_code == 1 and lines[-1].startswith(
        f"Error: --teacher {TEACHER}: the model API at http://127.0.0.1:"
    ), r.output
    assert lines[-1].endswith(
        f"kept failing (InternalServerError: Error code: 500 - mock failure; gave up after {API_MAX_RETRIES + 1} attempts)"
    ), lines[-1]
    # one progress line per retry (there was ~20 s of silence): endpoint, attempt k of n, the error, the wait
    port = srv.server.server_address[1]
    assert len(lines) == API_MAX_RETRIES + 1 and not r.stdout.strip(), r.output
    for k, line in enumerate(lines[:-1], 1):
        assert re.fullmatch(
            rf"model API at http://127\.0\.0\.1:{port}: attempt {k} of {API_MAX_RETRIES + 1} failed "
            r"\(InternalServerError: Error code: 500 - mock failure\); retrying in 0\.\d s",
            line,
        ), line
    assert "Traceback" not in r.output
    # inspect's attempts (1 + API_MAX_RETRIES), each with the openai client's own 2 quick retries
    assert len(srv.requests) <= (API_MAX_RETRIES + 1) * 3 and seconds < 120
    assert not (tmp_path / "d" / "manifest.json").exists()
