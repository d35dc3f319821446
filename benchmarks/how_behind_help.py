"""Does a How call wait behind a streaming help answer on the one local model? (issue 32, item 4)

``proagent live`` with a ``local/...`` model has one llama.cpp child for everything: the How calls
(an offer's predicted query) and the help after Accept (:func:`proagent.models.local.stream_chat`)
share it, and its requests are serialised (:class:`proagent.models._llama_process.LlamaProcess`).
So a Yes moment while an answer streams waits for that answer to end before its How call starts.

Three measurements on one moment (``tests/live/help_fixtures.py``: a traceback on screen):

* **alone** (the baseline): a How call on the warmed model, nothing else running;
* **behind help**: the help answer starts streaming; once its first piece arrived, the How call
  is submitted: its seconds from submit to answer, and the help's own seconds;
* **cancelled while queued**: as above, but the How call is cancelled 0.5 s after submit (what a
  newer moment does to a stale How call, ``LiveAgent.cancel_how``): does the help answer survive?

    python benchmarks/how_behind_help.py [--model local/smollm2-135m] [--model-arg n_threads=1]
        [--help-tokens 200] [--json out.json] [--smoke]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import apply_smoke, guard_network, machine_note, render_table, watchdog, write_result  # noqa: E402


def _help_thread(
    model: Any, messages: list[dict[str, str]], first: threading.Event, out: dict[str, Any]
) -> threading.Thread:
    def run() -> None:
        t0 = time.perf_counter()
        try:
            usage = model.stream(messages, lambda _: first.set())
            out.update(status="done", tokens=usage.get("completion_tokens"))
        except Exception as e:  # noqa: BLE001 - what happened to the help is the measurement
            out.update(status=f"error: {type(e).__name__}: {e}"[:120])
        out["seconds"] = time.perf_counter() - t0
        first.set()

    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="local/smollm2-135m")
    ap.add_argument("--model-arg", action="append", default=[], help="KEY=VALUE (e.g. n_threads=1)")
    ap.add_argument("--help-tokens", type=int, default=200, help="the help answer's budget, tokens")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument(
        "--smoke", action="store_true", help="the smallest setting (CI): SmolLM2, a help answer of 16 tokens"
    )
    args = ap.parse_args(argv)
    if args.smoke:  # explicit values stay (apply_smoke says which)
        apply_smoke(ap, args, {"model": "local/smollm2-135m", "help_tokens": 16}, argv)
    guard_network()
    watchdog(args.timeout)
    note, machine = machine_note()
    print(note, flush=True)
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "live")]
    from dataclasses import replace
    from datetime import timedelta

    from help_fixtures import traceback_sample

    from proagent.live import HowModel, help_context
    from proagent.live._help import LocalHelpModel, help_messages

    margs = dict(a.split("=", 1) for a in args.model_arg)
    base = traceback_sample()
    # one moment per How call, a minute apart: each prompt differs (no answer from the answer cache)
    moments = [replace(base, id=f"u1:{k}:candidate", time=base.time + timedelta(minutes=k)) for k in range(3)]
    sample = base
    how = HowModel(args.model, margs)
    helper = LocalHelpModel(args.model, margs, max_tokens=args.help_tokens)
    messages = help_messages(help_context(sample, "Why does app.py raise KeyError: 'user_id'?"))
    print(f"warming {args.model} ...", flush=True)
    how.warm()
    rows: list[dict[str, Any]] = []

    t0 = time.perf_counter()
    how(moments[0])
    rows.append({"case": "alone (baseline)", "how_s": time.perf_counter() - t0, "help_s": None, "help": "-"})
    print(f"  alone: How {rows[-1]['how_s']:.1f} s", flush=True)

    first, out = threading.Event(), {}
    th = _help_thread(helper, messages, first, out)
    first.wait()
    t0 = time.perf_counter()
    how(moments[1])
    how_s = time.perf_counter() - t0
    th.join()
    rows.append(
        {
            "case": "behind a streaming help",
            "how_s": how_s,
            "help_s": out["seconds"],
            "help": f"{out['status']} ({out.get('tokens')} tokens)",
        }
    )
    print(f"  behind help: How {how_s:.1f} s, help {out['seconds']:.1f} s {out['status']}", flush=True)

    first, out = threading.Event(), {}
    th = _help_thread(helper, messages, first, out)
    first.wait()
    fut = how.submit(moments[2])
    time.sleep(0.5)
    fut.cancel()
    th.join()
    try:
        fut.result(timeout=0)
        cancelled = "answered"
    except concurrent.futures.CancelledError:
        cancelled = "cancelled"
    except concurrent.futures.TimeoutError:
        cancelled = "still running"
    rows.append(
        {
            "case": f"How queued, then {cancelled}",
            "how_s": None,
            "help_s": out["seconds"],
            "help": f"{out['status']} ({out.get('tokens')} tokens)",
        }
    )
    print(f"  cancelled while queued: help {out['seconds']:.1f} s {out['status']}", flush=True)
    columns = [
        ("case", "case", "s"),
        ("how_s", "How call s", ".1f"),
        ("help_s", "help answer s", ".1f"),
        ("help", "help answer", "s"),
    ]
    print(render_table(rows, columns))
    how.close()
    rows[0]["baseline"] = True
    write_result(
        args.json,
        benchmark="how_behind_help",
        rows=rows,
        columns=columns,
        machine=machine,
        baseline="a How call on the warmed model with nothing else running",
        note=f"{args.model}, a help answer of up to {args.help_tokens} tokens streaming on the same llama.cpp child",
        figures={"model": args.model, "help_tokens": args.help_tokens},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
