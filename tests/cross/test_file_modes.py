"""Private by default: every file and folder the commands create, their libraries' included
(inspect's ``.eval`` logs and ``logs.json``, stats figures, the memory and embedding caches), is
0600 / 0700, since any of them may hold window titles or screen text (issue 35: they were 0644 in
0755 folders). The commands run as a person runs them, as ``proagent`` processes; the walk covers
everything they left under the test's folder."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from mock_openai import MockOpenAI
from shared_data import DEV

pytestmark = pytest.mark.skipif(DEV is None, reason="ProactiveBench dev sessions not present")


def _proagent(tmp: Path, *argv: str) -> None:
    env = {
        **os.environ,
        "HOME": str(tmp / "home"),
        "PROAGENT_MEMORY_CACHE": str(tmp / "home/.cache/proagent/memory"),
        "PROAGENT_EMBEDDING_CACHE": str(tmp / "home/.cache/proagent/embeddings"),
    }
    env.pop("PROAGENT_EVAL_LOG_DIR", None)
    r = subprocess.run(
        [sys.executable, "-c", "from proagent.cli import main; main()", *argv],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-2000:]


def _not_private(root: Path) -> list[str]:
    bad = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            if stat.S_ISLNK(st.st_mode):
                continue
            if st.st_mode & 0o077:
                bad.append(f"{p.relative_to(root)} {stat.filemode(st.st_mode)}")
    return bad


def test_every_output_of_eval_stats_and_train_is_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = tmp_path / "in" / "session.json"
    session.parent.mkdir()
    session.write_bytes(sorted(DEV.glob("*.json"))[0].read_bytes())
    os.chmod(session.parent, 0o700)
    os.chmod(session, 0o600)
    answer = "Decision: Yes\nIntention: Code Programming\nQuery: How do I fix this error?"
    with MockOpenAI(lambda body: answer) as srv:  # a loopback API: the process reads MOCK_BASE_URL
        srv.env(monkeypatch)
        _proagent(
            tmp_path,
            "eval",
            "--data",
            str(session),
            "--model",
            "openai-api/mock/m",
            "--limit",
            "2",
            "--memory",
            "rag",
            "--split",
            "all",
            "--log-dir",
            "logs/run",
        )
    _proagent(tmp_path, "stats", str(session), "--out", "stats/run", "--no-similarity")
    _proagent(tmp_path, "train", "when", "--data", str(session), "--out", "deciders/mine", "--features", "behaviour")
    made = {p.name for p in (tmp_path / "logs" / "run").iterdir()}
    assert any(n.endswith(".eval") for n in made) and "results.json" in made
    assert (tmp_path / "stats" / "run" / "index.html").is_file()
    assert any((tmp_path / "home" / ".cache" / "proagent" / "memory").rglob("*.*"))
    assert _not_private(tmp_path) == []
