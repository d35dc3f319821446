"""A Ctrl-C that comes while a helper child is still starting does not reach it.

proagent's Python children (a local model's llama.cpp process, capture's OCR worker) ignore
SIGINT so that the parent decides how to stop them; but a child can only ignore it once its
own code runs, and the terminal's Ctrl-C goes to the whole foreground process group. One that
came during the child's imports printed a ``KeyboardInterrupt`` traceback (CI, stop 53) and
killed the child. Each child now runs in a process group of its own. Here a parent in its own
session starts one child, and SIGINT goes to the parent's group at once, while the child imports."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil

_PARENT = textwrap.dedent(
    """
    import signal, sys, time
    signal.signal(signal.SIGINT, lambda *a: None)  # the parent stays; a handler is not inherited
    {start}
    print(proc.pid, flush=True)
    time.sleep(0.05)  # let the SIGINT land while the child imports
    {finish}
    """
)


def _run_parent(start: str, finish: str) -> tuple[int, str]:
    code = _PARENT.format(start=start, finish=finish)
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    child = int(proc.stdout.readline())
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in the parent's terminal
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE
    return proc.returncode, out + err


def test_llama_child_started_under_ctrl_c(tmp_path: Path) -> None:
    """The child lives to give its answer (here: the model cannot be loaded), no traceback."""
    missing = tmp_path / "missing.gguf"
    rc, out = _run_parent(
        "from proagent.models._llama_process import _spawn\n"
        f"proc, send, recv = _spawn({{'path': {str(missing)!r}, 'n_ctx': 512, 'n_threads': 1, 'n_cache_reuse': 0}})",
        "print(recv.recv_bytes().decode(), flush=True); proc.wait()",
    )
    assert rc == 0 and "cannot load missing.gguf" in out and "KeyboardInterrupt" not in out, out


def test_ocr_worker_started_under_ctrl_c(tmp_path: Path) -> None:
    """The OCR worker is still running a second after the Ctrl-C (the recorder stops it)."""
    from proagent.capture import Store

    Store(tmp_path / "cap").close()
    db = tmp_path / "cap" / "lifetrace.db"
    rc, out = _run_parent(
        "from pathlib import Path\n"
        "from proagent.capture._recorder import _start_ocr, _stop_ocr\n"
        f"proc = _start_ocr(Path({str(db)!r}), 2.0)",
        "time.sleep(1.0); print('alive' if proc.poll() is None else f'gone {proc.returncode}', flush=True); _stop_ocr(proc)",
    )
    assert rc == 0 and "alive" in out and "KeyboardInterrupt" not in out, out
