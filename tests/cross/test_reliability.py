"""Reliability: no silent wrong result, no lost or mixed run, no screen text outside the log folder.

Readers that used to drop or misread data, the run lock, and (slow: real processes on the tiny
local model SmolLM2-135M) kills mid-run with resume, concurrent runs on one log folder and an
API that cannot be reached.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner
from test_bad_input import session

from proagent.cli import cli
from proagent.io import LOCK_NAME, FolderBusy, folder_lock
from proagent.sources.load import load_events

# ------------------------------------------------------------------ readers


def test_a_session_with_a_byte_order_mark_is_read(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(session()), "utf-8")
    (tmp_path / "b.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(session()).encode())
    assert {e.user for e in load_events(tmp_path)} == {"a", "b"}  # before: b was skipped without a word


def test_a_session_whose_observation_key_comes_late_is_read(tmp_path):
    steps = [
        {
            "agent_response": {"candidate_task": ["x" * 5000]},
            "task_status": s["task_status"],
            "observation": s["observation"],
        }
        for s in session()
    ]
    (tmp_path / "a.json").write_text(json.dumps(session()), "utf-8")
    (tmp_path / "late.json").write_text(json.dumps(steps), "utf-8")
    assert '"observation"' not in (tmp_path / "late.json").read_text()[:4096]
    assert {e.user for e in load_events(tmp_path)} == {"a", "late"}
    # a JSON list that is not a session stays out
    (tmp_path / "other.json").write_text(json.dumps([{"x": 1}] * 2000), "utf-8")
    assert {e.user for e in load_events(tmp_path)} == {"a", "late"}


def test_steps_out_of_time_order_have_an_unknown_duration(tmp_path):
    steps = session(4)
    steps[2]["observation"]["time"] = str(float(steps[0]["observation"]["time"]) - 5)  # earlier than step 1
    (tmp_path / "s.json").write_text(json.dumps(steps), "utf-8")
    ev = load_events(tmp_path / "s.json")
    assert ev[1].end is None and ev[1].duration is None  # before: 0 s (max(next, t))
    assert all(e.duration is None or e.duration >= 0 for e in ev)
    assert ev[0].duration == 20.0


def test_stats_names_a_bad_input_file_once_and_does_not_blame_out(tmp_path):
    bad = tmp_path / "t.json"
    bad.write_text(json.dumps(session(time=True)), "utf-8")
    r = CliRunner().invoke(cli, ["stats", str(bad), "--out", str(tmp_path / "st"), "--no-similarity"])
    assert r.exit_code == 1 and r.output.count(str(bad)) == 1 and "--out" not in r.output, r.output


# ------------------------------------------------------------------ run lock


def _hold(folder: Path) -> subprocess.Popen:
    code = (
        "import sys, time\nfrom proagent.io import folder_lock\n"
        "with folder_lock(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(120)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code, str(folder)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def test_folder_lock_refuses_another_process_and_survives_its_kill(tmp_path):
    p = _hold(tmp_path / "run")
    try:
        with pytest.raises(FolderBusy, match=rf"in use by process {p.pid}"):
            with folder_lock(tmp_path / "run"):
                pass
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    # the kernel released the lock with the process; its pid is still in the file (a stale lock)
    assert (tmp_path / "run" / LOCK_NAME).read_text().strip() == str(p.pid)
    with folder_lock(tmp_path / "run") as stale:
        assert stale == p.pid
        with folder_lock(tmp_path / "run") as again:  # re-entrant within one process
            assert again is None
        assert (tmp_path / "run" / LOCK_NAME).read_text().strip() == str(os.getpid())
    assert (tmp_path / "run" / LOCK_NAME).read_text() == ""


def test_a_second_synth_into_a_busy_folder_is_refused(tmp_path):
    p = _hold(tmp_path / "syn")
    try:
        r = CliRunner().invoke(cli, ["synth", "--users", "1", "--days", "1", "--out", str(tmp_path / "syn")])
    finally:
        p.kill()
        p.wait()
    assert r.exit_code == 1 and f"in use by process {p.pid}" in r.output
    assert sorted(x.name for x in (tmp_path / "syn").iterdir()) == [LOCK_NAME]


# ------------------------------------------------------------------ real processes (tiny local model)

MODEL = ["--model", "local/smollm2-135m", "--model-arg", "n_threads=1", "--display", "none"]


@pytest.fixture
def pb(tmp_path) -> Path:
    d = tmp_path / "pb"
    d.mkdir()
    for name in ("code_1", "writing_1"):
        (d / f"{name}.json").write_text(json.dumps(session(12)), "utf-8")
    return d


def _env(tmp_path: Path) -> dict[str, str]:
    """The child's environment: its own XDG data folder, to see what inspect writes outside the log folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROAGENT_")}
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")
    env["PROAGENT_ANSWER_CACHE"] = "off"  # each run computes its answers (the kill lands mid-answer)
    return env


def _eval_cmd(pb: Path, log_dir: Path, limit: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "proagent.cli",
        "eval",
        "--data",
        str(pb),
        "--limit",
        str(limit),
        "--log-dir",
        str(log_dir),
        *MODEL,
    ]


def _logs(log_dir: Path) -> list:
    from inspect_ai.log import read_eval_log

    out = []
    for f in sorted(glob.glob(str(log_dir / "*.eval"))):
        try:
            out.append(read_eval_log(f))
        except Exception:  # noqa: BLE001 (being written)
            pass
    return out


def _wait_for_samples(log_dir: Path, n: int, proc: subprocess.Popen, timeout: float = 240) -> dict[str, str]:
    """Sample id -> uuid of the samples written to the (unfinished) log once it holds >= n."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        assert proc.poll() is None, proc.communicate()
        for log in _logs(log_dir):
            if len(log.samples or []) >= n:
                return {str(s.id): s.uuid for s in log.samples}
        time.sleep(0.3)
    raise AssertionError(f"no {n} samples within {timeout} s")


def _private_files(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and "samplebuffer" in str(p)] if root.exists() else []


def _check_resumed(log_dir: Path, limit: int, before: dict[str, str]) -> None:
    logs = _logs(log_dir)
    assert [x.status for x in logs] == ["success"], [(x.location, x.status) for x in logs]  # one run, no stale log
    final = logs[0]
    ids = [str(s.id) for s in final.samples]
    assert len(ids) == limit == len(set(ids))  # no sample lost, none twice
    uuids = {str(s.id): s.uuid for s in final.samples}
    assert all(uuids[i] == u for i, u in before.items())  # finished before the kill: kept, not redone
    res = json.loads((log_dir / "results.json").read_text("utf-8"))
    assert res["n"] == limit and res["run"]["status"] == "success"
    assert res["run"]["log"] == final.location and not res["run"]["log"].startswith("file://")
    assert Path(res["run"]["log"]).is_file()
    assert not _private_files(log_dir / ".inspect-data")  # the buffer of the killed run is gone too


SIGINT_EXIT_S = 3.0
"""Seconds from SIGINT (sent while the local model is answering) to exit allowed: target 1-2 s.
Before (issue 26): the generation in flight ran to its end (67 s with Qwen on a loaded machine),
as xllamacpp's call cannot be cancelled, then the interpreter's teardown of inspect's modules took
5-6 s. Now the engine is a child process killed on cancel (``proagent.models._llama_process``) and
an interrupted command skips the teardown (``proagent.cli._exit_now``)."""


def _busy_engine(proc: subprocess.Popen, timeout: float = 120) -> psutil.Process:
    """The llama.cpp child of ``proc`` once it is computing (a request in flight; idle, it uses no CPU)."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        assert proc.poll() is None, proc.communicate()
        for child in psutil.Process(proc.pid).children(recursive=True):
            try:
                if "_llama_process" in " ".join(child.cmdline()):
                    cpu = sum(child.cpu_times()[:2])
                    time.sleep(0.5)
                    if sum(child.cpu_times()[:2]) - cpu > 0.05:
                        return child
            except psutil.NoSuchProcess:
                pass
        time.sleep(0.2)
    raise AssertionError("no generation in flight")


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_kill_mid_run_then_resume(sig, pb, tmp_path):
    log_dir, limit = tmp_path / "logs" / "run", 5
    env = _env(tmp_path)
    p = subprocess.Popen(
        _eval_cmd(pb, log_dir, limit), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        before = _wait_for_samples(log_dir, 2, p)
        if sig == signal.SIGKILL:
            # while it runs, the sample buffer (prompts: screen text) is inside the log folder only
            assert _private_files(log_dir / ".inspect-data") and not _private_files(tmp_path / "xdg")
        engine = _busy_engine(p)  # in the middle of the next sample's generation
        t0 = time.time()
        p.send_signal(sig)
        out, _ = p.communicate(timeout=120)
        waited = time.time() - t0
    finally:
        if p.poll() is None:
            p.kill()
    if sig == signal.SIGINT:
        print(f"exit {waited:.2f} s after SIGINT")  # pytest -s shows it (README, Failure behaviour)
        assert p.returncode == 130, out
        assert waited < SIGINT_EXIT_S, f"exit took {waited:.1f} s after SIGINT"
        assert "interrupted; re-run the same command to resume" in out and "Traceback" not in out
        assert "successfully" not in out
    else:
        assert p.returncode == -signal.SIGKILL
    try:  # no orphan engine computing on: killed by its parent, or leaving by itself within 0.5 s
        engine.wait(timeout=5)
    except psutil.TimeoutExpired:
        raise AssertionError("the llama.cpp child outlived its parent") from None
    assert not _private_files(tmp_path / "xdg")
    r = subprocess.run(_eval_cmd(pb, log_dir, limit), env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    _check_resumed(log_dir, limit, before)
    assert not _private_files(tmp_path / "xdg")


@pytest.mark.slow
def test_two_runs_on_one_log_folder(pb, tmp_path):
    log_dir = tmp_path / "logs" / "run"
    env = _env(tmp_path)
    first = subprocess.Popen(
        _eval_cmd(pb, log_dir, 3), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        t0 = time.time()
        while not ((log_dir / LOCK_NAME).is_file() and (log_dir / LOCK_NAME).read_text().strip()):
            assert time.time() - t0 < 120 and first.poll() is None
            time.sleep(0.2)
        for limit in (3, 4):  # the same options, and other options: both refused at once
            t1 = time.time()
            r = subprocess.run(_eval_cmd(pb, log_dir, limit), env=env, capture_output=True, text=True, timeout=120)
            assert r.returncode == 1 and f"in use by process {first.pid}" in r.stderr, r.stderr
            assert "Traceback" not in r.stderr and time.time() - t1 < 60
        out, _ = first.communicate(timeout=600)
        assert first.returncode == 0, out
    finally:
        if first.poll() is None:
            first.kill()
    logs = _logs(log_dir)
    assert len(logs) == 1 and logs[0].status == "success" and len(logs[0].samples) == 3
    assert json.loads((log_dir / "results.json").read_text())["n"] == 3


# ------------------------------------------------------------------ an API that cannot be reached


REPLY = "Need help: Yes\nIntention: Code Programming\nQuery: Refactor this function"


class _Api(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a) -> None:  # noqa: ANN002
        pass

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.mark.slow
def test_an_unreachable_api_fails_fast_naming_the_host_and_the_run_resumes(pb, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    hole = socket.socket()  # accepts connections (the kernel's backlog) and never answers
    hole.bind(("127.0.0.1", 0))
    hole.listen(64)
    port = hole.getsockname()[1]
    monkeypatch.setenv("VLLM_API_KEY", "none")
    monkeypatch.setenv("VLLM_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("PROAGENT_API_TIMEOUT", "2")
    monkeypatch.setenv("PROAGENT_API_RETRY_WAIT", "0.2")  # not inspect's 3 s + 6 s (+ jitter) of backoff
    argv = [
        "eval",
        "--data",
        str(pb),
        "--model",
        "openai-api/vllm/m",
        "--limit",
        "3",
        "--log-dir",
        "logs/api",
        "--display",
        "none",
    ]
    t0 = time.time()
    r = CliRunner().invoke(cli, argv)
    hole.close()
    assert r.exit_code == 3 and isinstance(r.exception, SystemExit), r.output
    assert f"cannot reach the model API at http://127.0.0.1:{port}" in r.output and "re-run" in r.output
    assert time.time() - t0 < 90  # before: silent for more than 4 minutes
    # the API comes back (same address): the same command resumes and finishes
    server = ThreadingHTTPServer(("127.0.0.1", port), _Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        r = CliRunner().invoke(cli, argv)
    finally:
        server.shutdown()
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "logs" / "api" / "results.json").read_text())
    assert res["n"] == 3 and res["unparsed_rate"] == 0.0
