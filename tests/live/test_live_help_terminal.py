"""Help in a real terminal: the live agent follows a capture folder in a pseudo-terminal; ``a 1``
accepts the offer and its answer streams in under the offer's id, ``f 1 ...`` asks a follow-up,
``+ 1`` rates it; everything lands in feedback.db. (The page's twin is test_live_help_page.py.)"""

from __future__ import annotations

import os
import pty
import select
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from help_fixtures import SCREEN, write_capture

import proagent

DRIVER = textwrap.dedent("""
    import sys
    from help_fixtures import scripted_reply
    from proagent.live import LiveOptions, ScriptedDecider, ScriptedHelpModel, run_watch

    cap, out, yes = sys.argv[1:4]
    try:
        run_watch(cap, out, ScriptedDecider(yes={yes}), LiveOptions(notify=("terminal",), every_seconds=0),
                  answers=sys.stdin, duration=120, poll_seconds=0.05,
                  help_model=ScriptedHelpModel(scripted_reply, delay=0.05))
    except KeyboardInterrupt:
        pass
    print("driver stopped", flush=True)
""")


class Pty:
    """A child process on a pseudo-terminal: what it printed so far, and typed lines."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, start_new_session=True
        )
        os.close(slave)
        self.text = ""

    def read(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            r, _, _ = select.select([self.master], [], [], 0.05)
            if r:
                try:
                    self.text += os.read(self.master, 65536).decode("utf-8", "replace").replace("\r\n", "\n")
                except OSError:
                    return

    def expect(self, needle: str, seconds: float = 30.0, count: int = 1) -> None:
        end = time.monotonic() + seconds
        while self.text.count(needle) < count:
            assert time.monotonic() < end, f"{needle!r} not seen; terminal so far:\n{self.text}"
            self.read(0.1)

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def stop(self) -> None:
        """Ctrl-C (SIGINT to its process group), reading what it prints meanwhile: a child whose
        output nobody reads blocks once the pseudo-terminal's buffer is full, and would not exit
        (a real terminal always reads); SIGKILL after 15 s."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            end = time.monotonic() + 15
            while self.proc.poll() is None and time.monotonic() < end:
                self.read(0.1)
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self.read(0.2)
        os.close(self.master)


def test_accept_follow_up_and_rate_in_a_terminal(tmp_path: Path) -> None:
    cap, out = tmp_path / "capture", tmp_path / "live"
    t0 = datetime.now().replace(microsecond=0) - timedelta(seconds=60)
    write_capture(
        cap,
        t0,
        [
            ("Code", "app.py - myapp", "def login(request):\n    return session['user_id']"),
            ("Terminal", "~/myapp", SCREEN),
        ],
    )
    tests = Path(__file__).resolve().parents[1]
    src = Path(proagent.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(tests), str(tests / "live")]), "TERM": "dumb"}
    term = Pty([sys.executable, "-c", DRIVER, str(cap), str(out), "3"], env, tmp_path)
    try:
        for _ in range(200):  # the follower starts once feedback.db is there
            if (out / "feedback.db").exists():
                break
            term.read(0.05)
        term.read(1.0)
        write_capture(cap, t0 + timedelta(seconds=40), [("Firefox", "Flask docs - sessions", "")])  # event 3: a moment
        term.expect("offer 1 at", 30)
        term.type("a 1")
        term.expect("offer 1: accepted")
        term.expect("help 1: ")
        term.expect("help 1 done", 30)
        answer = term.text.split("help 1: ", 1)[1].split("help 1 done", 1)[0]
        assert "KeyError: 'user_id'" in answer and 'session["user_id"] = user.id' in answer  # read the screen
        term.type("f 1 What if the user is not logged in yet?")
        term.expect("help 1 > What if the user is not logged in yet?")
        term.expect("help 1 done", 30, count=2)
        term.type("+ 1")
        term.expect("help 1: rated helpful")
        term.type("f 9 nothing here")
        term.expect("help 9: no answer to follow up yet")
    finally:
        term.stop()
    assert "driver stopped" in term.text, term.text[-2000:]  # Ctrl-C ended live, not the SIGKILL after 15 s
    with sqlite3.connect(out / "feedback.db") as c:
        turns = c.execute(
            "SELECT role, source, status, completion_tokens > 0, first_token_seconds > 0 FROM help_turns ORDER BY id"
        ).fetchall()
        ratings = c.execute("SELECT rating, source FROM help_ratings").fetchall()
    assert turns == [
        ("user", "terminal", "done", None, None),
        ("assistant", "", "done", 1, 1),
        ("user", "terminal", "done", None, None),
        ("assistant", "", "done", 1, 1),
    ]
    assert ratings == [(1, "terminal")]


@pytest.mark.slow
def test_the_default_model_names_the_planted_error(tmp_path: Path) -> None:
    """The real default model (Qwen2.5-Coder-1.5B, local) answers the traceback offer: its answer
    names the error planted on the screen."""
    from help_fixtures import store_with_offers, traceback_sample
    from system import require_local_model

    from proagent.live import LiveHelp
    from proagent.live._help import LocalHelpModel

    require_local_model("local/qwen2.5-coder-1.5b")
    st, offers = store_with_offers(tmp_path, 1)
    # 120 tokens are enough to name the error; on a loaded 2-core machine a whole 400-token answer takes minutes
    help = LiveHelp(st, LocalHelpModel("local/qwen2.5-coder-1.5b", {}, max_tokens=120), lambda: traceback_sample().time)
    help.accept(offers[0].id)
    end = time.monotonic() + 1800
    while help.busy(offers[0].id):
        assert time.monotonic() < end
        time.sleep(0.2)
    t = help.turns(offers[0].id)[-1]
    help.close()
    st.close()
    assert t["status"] == "done", t
    assert "user_id" in t["text"] and ("KeyError" in t["text"] or "session" in t["text"]), t["text"]
