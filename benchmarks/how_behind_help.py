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

With ``--accepts N`` (issue 42, items 1, 3 and 5) it measures what a person waits for after
Accept, N accepts per arm, the two arms alternating in the same command:

* each accept: a capture folder (``proagent capture``'s Store) whose terminal window was decided
  *blind* (its first screenshot had no text yet: capture's OCR behind), then a newer screenshot of
  the same window showing a failing test that names a value nobody would guess, which capture has
  not read either; an offer on it; the offer's own How call in flight when Accept comes;
* **baseline** (the code before issue 42, by the in-process toggle): the help reads the moment as it
  was decided (``LiveHelp(screen=None)``) and waits on the one llama.cpp child behind the How call;
* **help first + grounded**: the help reads the window now (:class:`proagent.live._ground.ScreenReader`:
  live's own OCR of the newest screenshot) and the How call is stopped at Accept (what
  ``LiveAgent.help_first`` does within one loop turn; a local model's child is killed and loaded again);
* figures: seconds from Accept to the first words and to the whole answer (p50/p95), and the share of
  answers whose context holds the window's screen text (the planted value).

With ``--against REF`` (issue 42, items 3 and 5: the read-ahead warm) the accepts are timed as live
runs them, once with this tree's code and once with ``REF``'s (``git archive REF src``, e.g.
``main``), each arm in a child process of its own, in the same command: the window in front (its
screenshot already read by capture), the offer's How call started, the offer shown 2 s later
(``LiveHelp.show``: its help prompt read ahead), the person reading it ``--dwell`` seconds, then
Accept, with the How call stopped for the answer (``LiveAgent.help_first``). Figures per arm: Accept
to the first words and to the whole answer (p50/p95), the prompt tokens llama.cpp evaluated
after Accept (the answer's, and any read-ahead that Accept waited for) and those the answer reused
from its cache (medians), the answer's tokens (median) and the share of answers cut at the budget
(``--help-tokens``: an answer that used all of it was cut off, not ended), the llama.cpp children
started after Accept (model loads), the grounded share, the CPU seconds of the run and its llama.cpp
children per accept (Accept to the end), and the load average before and after the arm. This tree's
arm also times one model load and one How call alone (reload or wait: what stopping a How call for
the answer costs against waiting for it).

With ``--beside-capture`` (issue 42 item 5's condition) each ``--against`` arm runs while the real
``proagent capture`` records ordinary work on an Xvfb screen of its own (benchmarks/capture.py's
``--page article`` workload: a shell, vim and a long Chromium page, each in front in turn; its OCR
worker reading, niced as it ships), started before the arm's first accept and stopped after its
last; the table adds capture's CPU (% of one core) and its OCR backlog at stop for each arm.

With ``--capture-read`` (on in ``--smoke``) capture's OCR has already written the newer
screenshot's text when Accept comes: help first reads it from the log (no OCR of its own), so its
share is exactly 100% and the baseline's 0% (the moment was decided before that text); a help that
did not read the window again would score 0%.

    python benchmarks/how_behind_help.py [--model local/smollm2-135m] [--model-arg n_threads=1]
        [--help-tokens N (live's 400)] [--accepts N [--accepts-only]] [--capture-read] [--against REF [--dwell S] [--beside-capture]]
        [--json out.json] [--smoke]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import apply_smoke, guard_network, machine_note, parse_args, render_table, watchdog, write_result  # noqa: E402


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
    from proagent.live._help import HELP_MAX_TOKENS

    ap.add_argument(
        "--help-tokens",
        type=int,
        default=HELP_MAX_TOKENS,
        help=f"the help answer's budget, tokens (default {HELP_MAX_TOKENS}: live's, HELP_MAX_TOKENS)",
    )
    ap.add_argument(
        "--accepts", type=int, default=0, help="also time N accepts per arm, baseline vs help first (issue 42)"
    )
    ap.add_argument(
        "--capture-read",
        action="store_true",
        help="--accepts: capture's OCR has already written the newer screenshot's text (the help reads it "
        "from the log; no OCR of live's own): the grounding is then exact, 100%% for help first (--smoke)",
    )
    ap.add_argument(
        "--accepts-only",
        action="store_true",
        help="time only the --accepts (not the three How-call cases before them)",
    )
    ap.add_argument(
        "--against",
        default=None,
        metavar="REF",
        help="--accepts: time them as live runs them (offer shown and read ahead, How call in flight, "
        "Accept after --dwell), this tree's code beside REF's (a git ref, e.g. main), each in a child process",
    )
    ap.add_argument("--dwell", type=float, default=8.0, help="--against: seconds the offer is up before Accept")
    ap.add_argument(
        "--beside-capture",
        action="store_true",
        help="--against: each arm runs while the real `proagent capture` (this tree's) records ordinary work "
        "on an Xvfb screen (benchmarks/capture.py's --page article workload, its OCR worker reading)",
    )
    ap.add_argument("--arm-out", type=Path, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--arm-probe", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest setting (CI): SmolLM2 on one thread, a help answer of 16 tokens, one accept per arm",
    )
    args = parse_args(ap, argv, positive=("help_tokens", "timeout"), non_negative=("accepts", "dwell"))
    if args.help_tokens < 1 or args.accepts < 0:
        ap.error("--help-tokens must be >= 1 and --accepts >= 0")
    if args.accepts_only and not args.accepts:
        ap.error("--accepts-only needs --accepts N")
    if args.against is not None and not args.accepts:
        ap.error("--against needs --accepts N")
    if args.beside_capture and args.against is None:
        ap.error("--beside-capture needs --against REF")
    if args.arm_out is not None:  # one arm of --against, in its own process (the code on PYTHONPATH)
        return _arm(args)
    if args.smoke:  # explicit values stay (apply_smoke says which)
        # one llama.cpp thread: the test suite runs two workers on two cores, where a second thread only
        # spin-waits for the first (issue 45)
        smoke = {"model": "local/smollm2-135m", "model_arg": ["n_threads=1"], "help_tokens": 16, "accepts": 1}
        apply_smoke(ap, args, {**smoke, "capture_read": True}, argv)
    guard_network()
    watchdog(args.timeout)
    note, machine = machine_note()
    print(note, flush=True)
    if args.against is not None:
        return _against(args, argv if argv is not None else sys.argv[1:], machine)
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

    columns = [
        ("case", "case", "s"),
        ("how_s", "How call s", ".1f"),
        ("help_s", "help answer s", ".1f"),
        ("help", "help answer", "s"),
    ]
    if not args.accepts_only:
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
        print(render_table(rows, columns))
    figures: dict[str, Any] = {"model": args.model, "help_tokens": args.help_tokens}
    if args.accepts:
        accept_rows = _accepts(args, margs, how)
        cols = [
            ("arm", "arm", "s"),
            ("n", "accepts", "d"),
            ("first_p50", "first words p50 s", ".1f"),
            ("first_p95", "p95 s", ".1f"),
            ("total_p50", "whole answer p50 s", ".1f"),
            ("total_p95", "p95 s", ".1f"),
            ("grounded", "context holds the screen", ".0%"),
        ]
        print(render_table(accept_rows, cols))
        figures["accepts"] = accept_rows
        figures["capture_read"] = args.capture_read
        if args.accepts_only:
            rows, columns = accept_rows, cols
    how.close()
    if not args.accepts_only:
        rows[0]["baseline"] = True
    write_result(
        args.json,
        benchmark="how_behind_help",
        rows=rows,
        columns=columns,
        machine=machine,
        baseline="the accepts' baseline arm (before issue 42)"
        if args.accepts_only
        else "a How call on the warmed model with nothing else running",
        note=f"{args.model}, a help answer of up to {args.help_tokens} tokens streaming on the same llama.cpp child",
        figures=figures,
    )
    return 0


def _png(text: str) -> bytes:
    import io

    from PIL import Image, ImageDraw, ImageFont

    try:
        font: Any = ImageFont.truetype("DejaVuSansMono.ttf", 18)
    except OSError:
        font = ImageFont.load_default()
    im = Image.new("RGB", (1280, 40 + 26 * len(text.splitlines())), (20, 20, 20))
    draw = ImageDraw.Draw(im)
    for i, line in enumerate(text.splitlines()):
        draw.text((16, 16 + 26 * i), line, fill=(230, 230, 230), font=font)
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


def _accepts(args: argparse.Namespace, margs: dict[str, Any], how: Any) -> list[dict[str, Any]]:
    """``--accepts``: N accepts per arm (see the module docstring), alternating."""
    import hashlib
    import random
    import tempfile
    from datetime import datetime, timedelta

    from _common import percentile

    from proagent.bench.samples import SampleConfig
    from proagent.capture import Store
    from proagent.live import FeedbackStore, LiveHelp
    from proagent.live._agent import _HowCall
    from proagent.live._ground import ScreenReader
    from proagent.live._help import LocalHelpModel
    from proagent.live._moments import moment_sample
    from proagent.sources.lifetrace import load_lifetrace

    class Recording(LocalHelpModel):
        def stream(self, messages, on_delta):  # noqa: ANN001, ANN202
            self.sent = messages
            return super().stream(messages, on_delta)

    rng = random.Random(42)
    got: dict[str, list[dict[str, Any]]] = {"baseline (before issue 42)": [], "help first + grounded": []}
    with tempfile.TemporaryDirectory(prefix="pa-accepts-") as tmp:
        if not args.capture_read:  # the OCR engine loads once per run (live warms it at start)
            ScreenReader(Path(tmp) / "none.db").warm()
        for i in range(args.accepts):
            for arm in got:
                new = arm.startswith("help first")
                value = "".join(rng.choice("ABCDEFGHJKMNPQRSTUVWXYZ23456789") for _ in range(6))
                work = Path(tmp) / f"{i}-{new}"
                t0 = datetime(2026, 12, 5, 10, 0, 0) + timedelta(minutes=2 * i + int(new))
                cap = Store(work / "cap")
                ed = cap.open_event("code", "cart.py - shop", t0)
                cap.close_event(ed, t0 + timedelta(seconds=30))
                term = cap.open_event("xterm", f"pytest - shop {i}", t0 + timedelta(seconds=30))
                for k, text in enumerate(["$ pytest -q", f"$ pytest -q\n{_SCREEN.format(value=value)}"]):
                    png = _png(text)
                    sid = cap.add_screenshot(
                        event_id=term,
                        screen_id=0,
                        t=t0 + timedelta(seconds=31 + 8 * k),
                        data=png,
                        ext="png",
                        file_hash=hashlib.sha256(png).hexdigest(),
                        width=1280,
                        height=80,
                        app="xterm",
                        title=f"pytest - shop {i}",
                    )
                    if k == 1 and args.capture_read:  # capture's OCR wrote it (after the moment was decided)
                        cap.con.execute(
                            "INSERT INTO ocr_results (screenshot_id, text_content, confidence, language, "
                            "processing_time, created_at) VALUES (?, ?, 0.9, 'ch', 1.0, ?)",
                            (sid, text, (t0 + timedelta(seconds=41)).isoformat(" ")),
                        )
                        cap.con.execute("UPDATE screenshots SET is_processed = 1 WHERE id = ?", (sid,))
                    cap.con.commit()
                    if k == 0:  # the moment is decided here: its window had no text yet
                        evs = list(load_lifetrace(work / "cap", resolve_files=False).events)
                        sample = moment_sample(
                            evs, t0 + timedelta(seconds=36), SampleConfig(), new_event=evs[-1], front=True
                        )
                cap.close()
                st = FeedbackStore(work / "live")
                offer = _xterm_offer(st, sample, t0 + timedelta(seconds=37))
                model = Recording(args.model, margs, max_tokens=args.help_tokens)
                screen = ScreenReader(work / "cap" / "lifetrace.db") if new else None
                helper = LiveHelp(st, model, lambda: t0, screen=screen)
                call = _HowCall(how, sample)  # the offer's How call, in flight at Accept
                time.sleep(0.5)
                helper.accept(offer.id)
                if new:
                    call.cancel()  # LiveAgent.help_first: the How call stops while an answer is written
                while helper.busy(offer.id):
                    time.sleep(0.05)
                call.wait(600)
                turn = helper.turns(offer.id)[-1]
                sent = json.dumps(getattr(model, "sent", []))
                got[arm].append(
                    {
                        "first": turn["first_token_seconds"],
                        "total": turn["total_seconds"],
                        "grounded": value in sent,
                        "status": turn["status"],
                    }
                )
                print(
                    f"  accept {i + 1} {arm}: first words {turn['first_token_seconds'] or float('nan'):.1f} s, "
                    f"whole {turn['total_seconds'] or float('nan'):.1f} s, screen text {'yes' if value in sent else 'no'}"
                    f" ({turn.get('reading')})",
                    flush=True,
                )
                helper.close()
                st.close()
    out = []
    for arm, xs in got.items():
        first = [x["first"] for x in xs if x["first"] is not None]
        total = [x["total"] for x in xs if x["total"] is not None]
        out.append(
            {
                "arm": arm,
                "n": len(xs),
                "first_p50": percentile(first, 50),
                "first_p95": percentile(first, 95),
                "total_p50": percentile(total, 50),
                "total_p95": percentile(total, 95),
                "grounded": sum(x["grounded"] for x in xs) / len(xs) if xs else None,
                "baseline": arm.startswith("baseline"),
            }
        )
    return out


def _xterm_offer(st: Any, sample: Any, at: Any) -> Any:
    """The Yes moment's offer as live shows it: without its query, which the How call brings later."""
    return st.add_offer(
        sample,
        text="Need a hand with this? (xterm)",
        query=None,
        intention=None,
        p_help=0.9,
        notifier="page",
        created_at=at,
        app_name="xterm",
    )


def _cpu() -> float:
    """CPU seconds of this process, its ended children and its running ones (llama.cpp), user + system."""
    import os

    import psutil

    t = os.times()
    out = t.user + t.system + t.children_user + t.children_system
    for c in psutil.Process().children(recursive=True):
        try:
            ct = c.cpu_times()
            out += ct.user + ct.system
        except psutil.Error:
            pass
    return out


def _arm(args: argparse.Namespace) -> int:
    """One arm of ``--against``: ``--accepts`` accepts as live runs them, with the ``proagent`` on
    ``PYTHONPATH`` (this tree's or the reference's); raw records to ``--arm-out`` (JSON)."""
    import hashlib
    import os
    import random
    import tempfile
    from datetime import datetime, timedelta

    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "live")]
    from proagent.bench.samples import SampleConfig
    from proagent.capture import Store
    from proagent.live import FeedbackStore, HowModel, LiveHelp
    from proagent.live._agent import _HowCall
    from proagent.live._ground import ScreenReader
    from proagent.live._help import LocalHelpModel
    from proagent.live._moments import moment_sample
    from proagent.sources.lifetrace import load_lifetrace

    margs = dict(a.split("=", 1) for a in args.model_arg)
    how = HowModel(args.model, margs)
    how.warm()

    class Recording(LocalHelpModel):
        prefills: list[tuple[float, dict[str, Any]]] = []  # (when it ended, llama.cpp's usage)

        def stream(self, messages, on_delta):  # noqa: ANN001, ANN202
            self.sent = messages
            return super().stream(messages, on_delta)

        def prefill(self, messages):  # noqa: ANN001, ANN202
            usage = super().prefill(messages)
            self.prefills.append((time.perf_counter(), usage))
            return usage

    import psutil

    def llama_pids() -> set[int]:
        return {c.pid for c in psutil.Process().children(recursive=True)}

    model = Recording(args.model, margs, max_tokens=args.help_tokens)  # one help model for the run, as live
    if hasattr(model, "warm"):  # live loads its help model at start (LiveHelp's first job), long before an offer
        model.warm()
    probe: dict[str, float] = {}
    if args.arm_probe:  # reload or wait? a model load, and a How call from start to end, on this machine now
        from help_fixtures import traceback_sample

        from proagent.models._llama_process import LlamaProcess
        from proagent.models.engine import engine_args

        gguf, n_ctx, n_threads, _ = engine_args(
            args.model.removeprefix("local/"), margs.get("n_ctx"), margs.get("n_threads")
        )
        t = time.perf_counter()
        LlamaProcess(gguf, n_ctx, n_threads).close()
        probe["load_s"] = time.perf_counter() - t
        t = time.perf_counter()
        how(traceback_sample("u1:probe:candidate"))
        probe["how_call_s"] = time.perf_counter() - t
        print(f"  a model load {probe['load_s']:.1f} s, a How call {probe['how_call_s']:.1f} s", flush=True)

    rng = random.Random(42)
    load0 = os.getloadavg()
    recs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="pa-warm-") as tmp:
        for i in range(args.accepts):
            value = "".join(rng.choice("ABCDEFGHJKMNPQRSTUVWXYZ23456789") for _ in range(6))
            work = Path(tmp) / str(i)
            t0 = datetime(2026, 12, 5, 10, 0, 0) + timedelta(minutes=2 * i)
            cap = Store(work / "cap")
            ed = cap.open_event("code", "cart.py - shop", t0)
            cap.close_event(ed, t0 + timedelta(seconds=30))
            title = f"pytest - shop {i}"
            term = cap.open_event("xterm", title, t0 + timedelta(seconds=30))
            text = f"$ pytest -q\n{_SCREEN.format(value=value)}"
            png = _png(text)
            sid = cap.add_screenshot(
                event_id=term,
                screen_id=0,
                t=t0 + timedelta(seconds=31),
                data=png,
                ext="png",
                file_hash=hashlib.sha256(png).hexdigest(),
                width=1280,
                height=80,
                app="xterm",
                title=title,
            )
            cap.con.execute(  # capture's OCR read it (the window has been in front a few seconds)
                "INSERT INTO ocr_results (screenshot_id, text_content, confidence, language, "
                "processing_time, created_at) VALUES (?, ?, 0.9, 'ch', 1.0, ?)",
                (sid, text, (t0 + timedelta(seconds=33)).isoformat(" ")),
            )
            cap.con.execute("UPDATE screenshots SET is_processed = 1 WHERE id = ?", (sid,))
            cap.con.commit()
            evs = list(load_lifetrace(work / "cap", resolve_files=False).events)
            sample = moment_sample(evs, t0 + timedelta(seconds=36), SampleConfig(), new_event=evs[-1], front=True)
            cap.close()
            st = FeedbackStore(work / "live")
            helper = LiveHelp(st, model, lambda: t0, screen=ScreenReader(work / "cap" / "lifetrace.db", ocr=False))
            call = _HowCall(how, sample)  # the Yes moment's How call
            time.sleep(2.0)  # OFFER_WAIT_SECONDS: the offer is shown without its query
            offer = _xterm_offer(st, sample, t0 + timedelta(seconds=38))
            helper.show(offer)  # live shows it to every notifier: the help reads its prompt ahead
            time.sleep(args.dwell)  # the person reads the offer
            cpu0, pids0, accepted = _cpu(), llama_pids(), time.perf_counter()
            helper.accept(offer.id)
            flying = not call.done
            call.cancel()  # LiveAgent.help_first: the How call stops while an answer is written
            while helper.busy(offer.id):
                time.sleep(0.05)
            cpu = _cpu() - cpu0
            loads = len(llama_pids() - pids0)  # llama.cpp children started after Accept: model loads
            late = [u for t, u in model.prefills if t > accepted]  # read-ahead work that Accept waited for
            turn = helper.turns(offer.id)[-1]
            with __import__("sqlite3").connect(work / "live" / "feedback.db") as c:
                prompt, cached, written, answer = c.execute(
                    "SELECT prompt_tokens, cached_tokens, completion_tokens, text FROM help_turns "
                    "WHERE role = 'assistant' ORDER BY id DESC"
                ).fetchone()
            timing = getattr(helper, "timings", {}).get(offer.id, {})
            sent = json.dumps(getattr(model, "sent", []))
            recs.append(
                {
                    "first": turn["first_token_seconds"],
                    "total": turn["total_seconds"],
                    "status": turn["status"],
                    "grounded": value in sent,
                    "prompt_tokens": prompt,
                    "cached_tokens": cached,
                    "completion_tokens": written,
                    "at_budget": written is not None and written >= args.help_tokens,  # cut off, not ended
                    "evaluated_after_accept": (prompt or 0) + sum(u.get("prompt_tokens") or 0 for u in late),
                    "loads_after_accept": loads,
                    "reused_reading": timing.get("reused_reading"),
                    "load_s": timing.get("load_s"),
                    "queue_s": timing.get("queue_s"),
                    "ground_s": timing.get("ground_s"),
                    "read_ahead_s": helper.prepared.get(offer.id),
                    "how_in_flight": flying,
                    "cpu_s": cpu,
                }
            )
            print(
                f"  accept {i + 1}: first words {turn['first_token_seconds'] or float('nan'):.1f} s, whole "
                f"{turn['total_seconds'] or float('nan'):.1f} s, answer's prompt tokens evaluated {prompt} (reused "
                f"{cached}), read ahead after Accept {sum(u.get('prompt_tokens') or 0 for u in late)}, model loads "
                f"after Accept {loads}, How call {'stopped' if flying else 'done'}, CPU {cpu:.1f} s, {timing or ''}",
                flush=True,
            )
            # the answer's length and its end: did it end on its own or at the budget (mid-sentence)?
            tail = " ".join((answer or "").split())[-160:]
            print(
                f"    answer: {written} tokens{' (cut at the budget)' if recs[-1]['at_budget'] else ''}, ends: ...{tail}"
            )
            helper.close()
            st.close()
            call.wait(60)
    how.close()
    from proagent.io import write_atomic

    write_atomic(args.arm_out, json.dumps({"records": recs, "load": [load0, os.getloadavg()], "probe": probe}))
    return 0


def _against(args: argparse.Namespace, argv: list[str], machine: dict[str, Any]) -> int:
    """``--against REF``: the accepts with ``REF``'s code, then with this tree's, each in a child process."""
    import os
    import subprocess
    import tempfile
    from statistics import median

    from _common import percentile

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="pa-against-") as tmp:
        ref = Path(tmp) / "ref"
        ref.mkdir()
        arch = subprocess.run(["git", "-C", str(ROOT), "archive", args.against, "src"], capture_output=True, timeout=60)
        if arch.returncode:
            print(f"Error: git archive {args.against}: {arch.stderr.decode(errors='replace').strip()}", file=sys.stderr)
            return 2
        subprocess.run(["tar", "-x", "-C", str(ref)], input=arch.stdout, check=True, timeout=60)
        keep = [a for a in argv if a != "--beside-capture" and not a.startswith(("--json", "--arm-out"))]
        if "--json" in argv:  # its value too
            j = argv.index("--json")
            keep = [a for k, a in enumerate(argv) if k not in (j, j + 1) and a in keep]
        for label, src in ((f"{args.against} (baseline)", ref / "src"), ("this tree", ROOT / "src")):
            out = Path(tmp) / f"{len(rows)}.json"
            env = {**os.environ, "PYTHONPATH": str(src)}
            print(f"{label}: {args.accepts} accepts (PYTHONPATH={src}) ...", flush=True)
            probe = ["--arm-probe"] if src == ROOT / "src" else []
            beside = _Beside() if args.beside_capture else None
            try:
                p = subprocess.run(
                    [sys.executable, str(Path(__file__).resolve()), *keep, *probe, "--arm-out", str(out)],
                    env=env,
                    timeout=args.timeout,
                )
            finally:
                cap = beside.close() if beside is not None else {}
            if p.returncode or not out.is_file():
                print(f"Error: the {label} arm failed (exit status {p.returncode})", file=sys.stderr)
                return 2
            got = json.loads(out.read_text())
            xs = got["records"]
            first = [x["first"] for x in xs if x["first"] is not None]
            total = [x["total"] for x in xs if x["total"] is not None]

            def med(key: str) -> float | None:
                v = [x[key] for x in xs if x.get(key) is not None]
                return median(v) if v else None

            rows.append(
                {
                    "arm": label,
                    "n": len(xs),
                    "first_p50": percentile(first, 50),
                    "first_p95": percentile(first, 95),
                    "total_p50": percentile(total, 50),
                    "total_p95": percentile(total, 95),
                    "evaluated_p50": med("evaluated_after_accept"),
                    "reused_p50": med("cached_tokens"),
                    "written_p50": med("completion_tokens"),
                    "at_budget": sum(bool(x.get("at_budget")) for x in xs) / len(xs) if xs else None,
                    "reused_reading": sum(bool(x.get("reused_reading")) for x in xs) / len(xs) if xs else None,
                    "loads": sum(x["loads_after_accept"] for x in xs),
                    "grounded": sum(x["grounded"] for x in xs) / len(xs) if xs else None,
                    "cpu_p50": med("cpu_s"),
                    "load_before": got["load"][0][0],
                    "load_after": got["load"][1][0],
                    "capture_pct": cap.get("capture_total_cpu_pct"),
                    "capture_backlog": cap.get("backlog_at_stop"),
                    "capture": {k: v for k, v in cap.items() if k not in ("encode", "replay")} or None,
                    "baseline": label.endswith("(baseline)"),
                    "records": xs,
                    **{f"probe_{k}": v for k, v in got.get("probe", {}).items()},
                }
            )
    cols = [
        ("arm", "arm", "s"),
        ("n", "accepts", "d"),
        ("first_p50", "first words p50 s", ".1f"),
        ("first_p95", "p95 s", ".1f"),
        ("total_p50", "whole p50 s", ".1f"),
        ("total_p95", "p95 s", ".1f"),
        ("evaluated_p50", "tokens evaluated after Accept p50", ".0f"),
        ("reused_p50", "answer's reused p50", ".0f"),
        ("written_p50", "answer tokens p50", ".0f"),
        ("at_budget", "cut at the budget", ".0%"),
        ("loads", "model loads after Accept", "d"),
        ("grounded", "grounded", ".0%"),
        ("cpu_p50", "CPU s p50", ".1f"),
        ("load_before", "load avg before", ".1f"),
        ("load_after", "after", ".1f"),
    ]
    if args.beside_capture:
        cols += [("capture_pct", "capture beside, % of a core", ".1f"), ("capture_backlog", "its backlog", "d")]
    print(render_table(rows, cols))
    write_result(
        args.json,
        benchmark="how_behind_help",
        rows=rows,
        columns=cols,
        machine=machine,
        baseline=f"the same accepts with {args.against}'s code",
        note=f"{args.model}, answers of up to {args.help_tokens} tokens, offer up {args.dwell:g} s before Accept "
        "with its How call in flight (stopped at Accept)",
        figures={
            "model": args.model,
            "help_tokens": args.help_tokens,
            "dwell": args.dwell,
            "against": args.against,
            "beside_capture": args.beside_capture,
        },
    )
    return 0


class _Beside:
    """``--beside-capture``: the real ``proagent capture`` (this tree's) recording benchmarks/capture.py's
    ordinary work (``--page article``: a shell, vim and a long Chromium page, each in front in turn) on
    its own Xvfb screen, in a thread of this process, from before an arm's first accept to its end.
    The constructor returns once capture and its OCR worker run; :meth:`close` stops capture as a
    person does and returns benchmarks/capture.py's figures for the stretch (CPU, backlog at stop)."""

    def __init__(self) -> None:
        import capture as bench  # benchmarks/capture.py

        self.ready, self.stop, self.out = threading.Event(), threading.Event(), {}
        a = argparse.Namespace(
            seconds=86400.0, format="png", interval=1.0, ocr_interval=2.0, type_every=10.0, switch_every=30.0,
            dedup_distance=5, page="article", replay=0, keep=None,
        )  # fmt: skip

        def run() -> None:
            try:
                self.out.update(bench.run_capture(a, ROOT / "src", ready=self.ready, stop=self.stop))
            except Exception as e:  # noqa: BLE001 - said in the figures, the arm's timings stand
                self.out["error"] = f"{type(e).__name__}: {e}"[:200]
            finally:
                self.ready.set()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        self.ready.wait(300)
        if "error" in self.out:
            raise RuntimeError(f"capture beside the arm did not start: {self.out['error']}")

    def close(self) -> dict[str, Any]:
        self.stop.set()
        self.thread.join(300)
        return dict(self.out)


_SCREEN = """============================= FAILURES =============================
___________________________ test_total ___________________________
    def test_total():
>       assert cart.total(code="{value}") == 0.3
E       assert 0.30000000000000004 == 0.3
FAILED test_cart.py::test_total - discount code {value} not applied"""


if __name__ == "__main__":
    sys.exit(main())
