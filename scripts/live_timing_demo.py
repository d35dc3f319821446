"""The run shown in docs/guides/live-timing.md: a real ``proagent live --watch`` (default local
model) on an activity log this script writes the way ``proagent capture`` does (screenshot rows,
then OCR rows), for machines without a display. Then Ctrl-C.

    python scripts/live_timing_demo.py [MODEL]      # TAIL=60: seconds between the last window and Ctrl-C
"""

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "live"))
sys.path.insert(0, str(ROOT / "tests"))
from test_live_timing import Log, _env  # noqa: E402 - after the path it needs

root = Path(tempfile.mkdtemp(prefix="live-timing-"))
cap, out = root / "activity", root / "live"
log = Log(cap)
log.window("Thunderbird", "Booking to Lisbon - Inbox")
log.shot(
    "Thunderbird", "Booking to Lisbon - Inbox", "Your booking to Lisbon is confirmed. Flight TP1351 departs 07:40."
)
(root / "yes.txt").write_text("2\n3\n4\n")
model = sys.argv[1] if len(sys.argv) > 1 else "local/qwen2.5-coder-1.5b"
cmd = [
    "proagent",
    "live",
    "--watch",
    str(cap),
    "--out",
    str(out),
    "--yes-at",
    str(root / "yes.txt"),
    "--model",
    model,
    "--model-arg",
    "n_threads=2",
    "--notify",
    "terminal",
    "--every",
    "0",
    "--min-gap",
    "0",
]
print("$ " + " ".join(c.replace(str(root) + "/", "") for c in cmd), flush=True)
t0 = time.monotonic()
proc = subprocess.Popen(
    [sys.executable, "-m", "proagent.cli", *cmd[1:]],
    env=_env(),
    stdout=subprocess.PIPE,
    stderr=subprocess.STDOUT,
    text=True,
    start_new_session=True,
)
lines = []


def read():
    for ln in iter(proc.stdout.readline, ""):
        lines.append(ln)
        print(f"[{time.monotonic() - t0:6.1f} s] {ln}", end="", flush=True)


threading.Thread(target=read, daemon=True).start()
while not any(ln.startswith("watching") for ln in lines):
    time.sleep(0.1)
time.sleep(3)


def note(s):
    print(f"[{time.monotonic() - t0:6.1f} s] # {s}", flush=True)


note("xterm comes to the front; pytest fails; typing for 4 s")
log.window("xterm", "pytest -q - xterm")
for k in range(8):
    sid = log.shot("xterm", "pytest -q - xterm")
    log.ocr(
        sid,
        "$ pytest -q\nE   KeyError: 'user_id'\napp.py:42: in login\n    return session['user_id']\nFAILED tests/test_login.py::test_login - KeyError: 'user_id'\n"
        + "x" * k,
    )
    time.sleep(0.5)
note("typing stopped")
while not any("“" in ln for ln in lines) and time.monotonic() - t0 < 400:
    time.sleep(0.2)
time.sleep(2)
note("the editor comes to the front")
log.window("Code", "app.py - proj - Visual Studio Code")
sid = log.shot("Code", "app.py - proj - Visual Studio Code")
log.ocr(sid, "def login(request):\n    session = request.session\n    return session['user_id']\n")
time.sleep(6)
note("a mail window, 4 s later, while the editor's How call may still run")
log.window("Thunderbird", "Re: Booking to Lisbon - Inbox")
sid = log.shot("Thunderbird", "Re: Booking to Lisbon - Inbox")
log.ocr(sid, "Can you change the booking to Lisbon to the 9:15 flight?")
time.sleep(float(os.environ.get("TAIL", "60")))
note("Ctrl-C")
os.killpg(proc.pid, signal.SIGINT)
rc = proc.wait(60)
time.sleep(0.5)
print(f"exit status {rc}")
log.close()
