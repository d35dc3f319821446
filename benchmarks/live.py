"""proagent live: latency from a new event row to a decision, and CPU use.

A writer thread appends events to a LifeTrace 2025-11 database the way
``proagent capture`` does (its ``Store``: WAL, one short transaction per row),
each ``--gap`` seconds after the previous one was decided (so latency has no queueing), after preloading ``--preload`` events (a working
day's log, so the follower's windowed read is measured on a realistic size).
Event texts (window title, OCR) are the real ProactiveBench dev observations.
The live loop (:func:`proagent.live.run_watch`, the real follower, sample
builder, restraint, feedback.db) follows it with

* **decider alone**: a When decider trained by ``proagent train when`` on the
  dev sessions' train split (default features: e5 embeddings, similarity,
  behaviour, keywords), embedding cache cold for the new texts;
* **decider + How**: the same decider with threshold 0 (every moment is an
  offer), the How call to the local model (default Qwen2.5-Coder-1.5B,
  ``n_threads=1``) for ``--offers`` moments.

The How phase runs twice on new rows, in the same command: **before**, the offer shown
after the How answer (``offer_wait_seconds=None``, the code before issue 24), and **after**,
this code's default (the offer shown at most 2 s after the Yes, its query filled in when the
answer comes); restraint's gap and one-per-app-session limits are off so every moment offers.

Latency = wall time from the writer's commit of the event row to the decision
(or to the offer being shown, stamped by a benchmark notifier; ``row->query shown``: to the
offer's query on screen), so it includes the follower's poll interval
(``--poll``). CPU = process CPU time / wall time (100% = one core) while idle
(following a database nobody writes, ``--idle`` seconds) and while deciding.
The baseline beside them: the LLM itself as the When decider, zero-shot
Qwen2.5-Coder-1.5B on the same sessions, quoted from docs/results.md's measured
``proagent eval`` run (10.73 s p50 per moment on 2 cores), not re-run.

    python benchmarks/live.py [--data ../shared/data/proactivebench] [--events 40] [--gap 0.5]
        [--offers 5] [--model local/qwen2.5-coder-1.5b] [--idle 20] [--json out.json] [--smoke]
"""

from __future__ import annotations

import argparse
import atexit
import faulthandler
import hashlib
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    DEFAULT_DATA,
    cpu_busy,
    guard_network,
    machine_note,
    parse_args,
    percentile,
    render_table,
    run_main,
    watchdog,
    write_result,
)

LLM_WHEN_P50 = 10.73
"""Seconds per moment, zero-shot Qwen2.5-Coder-1.5B as the When decider (README quick start table, 2 cores)."""


def _texts(data: Path) -> list[tuple[str, str]]:
    from proagent.sources.load import load_events

    evs = load_events(data)
    return [(e.summary[:120] or "activity", (e.description or e.summary)[:600]) for e in evs]


class Writer(threading.Thread):
    """Appends events like ``proagent capture``; records the commit time of each row."""

    def __init__(
        self,
        folder: Path,
        texts: list[tuple[str, str]],
        n: int,
        gap: float,
        t0: datetime,
        start: int = 0,
        wait_s: float = 600.0,
    ) -> None:
        super().__init__(daemon=True)
        self.folder, self.texts, self.n, self.gap, self.t0, self.start_i = folder, texts, n, gap, t0, start
        self.wait_s = wait_s
        self.committed: dict[int, float] = {}
        self.missed: list[int] = []
        """Event ids of rows live did not decide within ``wait_s`` (the next row is written anyway)."""
        self.go = threading.Event()
        self.decided = threading.Event()
        """Set by the loop at each decision: the next row is written only after it (no queueing)."""

    def write(self, st, i: int, prev: int | None) -> int:  # noqa: ANN001
        from proagent.capture import Store  # noqa: F401

        apps = ("Visual Studio Code", "Google Chrome", "Microsoft Word", "Windows PowerShell", "Slack")
        title, ocr = self.texts[i % len(self.texts)]
        t = self.t0 + timedelta(seconds=15 * i)  # history ends now; rows written while following are 15 s apart
        if prev is not None:
            st.close_event(prev, t)
        eid = st.open_event(apps[i % len(apps)], title, t)
        png = hashlib.sha256(f"{i}".encode()).digest()
        sid = st.add_screenshot(
            event_id=eid,
            screen_id=0,
            t=t + timedelta(seconds=1),
            data=png,
            ext="png",
            file_hash=hashlib.sha256(png).hexdigest(),
            width=1920,
            height=1080,
            app=apps[i % len(apps)],
            title=title,
        )
        st.con.execute(
            "INSERT INTO ocr_results (screenshot_id, text_content, confidence, language, created_at) "
            "VALUES (?, ?, 0.9, 'en', ?)",
            (sid, ocr, t.isoformat(sep=' ')),
        )
        return eid

    def run(self) -> None:
        from proagent.capture import Store

        st = Store(self.folder)
        prev = int(st.con.execute("SELECT max(id) FROM events").fetchone()[0] or 0) or None
        self.go.wait()
        for i in range(self.start_i, self.start_i + self.n):
            self.decided.clear()
            prev = self.write(st, i, prev)
            self.committed[prev] = time.perf_counter()
            if not self.decided.wait(self.wait_s):
                self.missed.append(prev)
                print(f"event {prev}: no decision within {self.wait_s:g} s; writing the next row", flush=True)
                faulthandler.dump_traceback(sys.stdout, all_threads=True)  # where live's loop is
            time.sleep(self.gap)
        st.close()


def _preload(folder: Path, texts, n: int, t0: datetime) -> None:  # noqa: ANN001
    from proagent.capture import Store

    st = Store(folder)
    w = Writer(folder, texts, 0, 0, t0)
    prev = None
    st.con.execute("BEGIN")
    for i in range(n):
        prev = w.write(st, i, prev)
    st.con.execute("COMMIT")
    st.close()


SHOWN: dict[str, float] = {}
"""Offer sample id -> perf_counter when the benchmark's notifier was asked to show it."""
FILLED: dict[str, float] = {}
"""Offer sample id -> perf_counter when its query was filled in (an offer shown before its How answer)."""


def _bench_notifier() -> None:
    from proagent.live._notify import NOTIFIERS, register_notifier

    if "bench" in NOTIFIERS:
        return

    class Stamp:
        name = "bench"

        def show(self, offer) -> None:  # noqa: ANN001
            SHOWN.setdefault(offer.sample_id, time.perf_counter())

        def update(self, offer) -> None:  # noqa: ANN001
            FILLED.setdefault(offer.sample_id, time.perf_counter())

        def close(self) -> None:
            pass

    register_notifier("bench")(lambda ctx: Stamp())


def _phase(
    name: str,
    folder: Path,
    live: Path,
    when,
    how,
    texts,
    n: int,
    gap: float,
    start: int,
    t0: datetime,  # noqa: ANN001
    poll: float,
    offer_wait: float | None = 2.0,
    settle: float = 1.0,
    wait_s: float = 600.0,
) -> dict:
    from proagent.live import LiveOptions, RestraintConfig, run_watch

    _bench_notifier()

    w = Writer(folder, texts, n, gap, t0, start=start, wait_s=wait_s)
    w.start()
    stamps: dict[str, float] = {}
    done = threading.Event()
    got = []

    def on_decision(d) -> None:  # noqa: ANN001
        stamps[d.sample_id] = time.perf_counter()
        w.decided.set()

    opts = LiveOptions(
        every_seconds=0,
        notify=("bench",),
        restraint=RestraintConfig(max_per_hour=10_000, min_gap_seconds=0, one_per_app_session=False, quiet_apps=False),
    )

    def run() -> None:
        got.extend(
            run_watch(
                folder,
                live,
                when,
                opts,
                how=how,
                poll_seconds=poll,
                max_moments=n,
                duration=n * (gap + wait_s) + settle + 5,
                on_decision=on_decision,
                offer_wait_seconds=offer_wait,
            ).decisions
        )
        done.set()

    th = threading.Thread(target=run, daemon=True)
    c0, t_0 = time.process_time(), time.perf_counter()
    th.start()
    time.sleep(settle)  # the follower is up before the first row
    w.go.set()
    done.wait()
    cpu = (time.process_time() - c0) / (time.perf_counter() - t_0) * 100
    lat, filled = [], []
    for d in got:
        rid = int(d.sample_id.split(":")[1])
        if rid in w.committed and d.sample_id in stamps:
            # an offer: when it was shown; any other decision: when it was recorded
            at = SHOWN.get(d.sample_id, stamps[d.sample_id]) if d.outcome == "offer" else stamps[d.sample_id]
            lat.append(at - w.committed[rid])
            if d.outcome == "offer" and d.reason not in ("no_query", "how_said_no"):
                # the query on screen: at the show, or when it was filled in later
                filled.append(
                    (FILLED.get(d.sample_id) or SHOWN.get(d.sample_id, stamps[d.sample_id])) - w.committed[rid]
                )
    inner = [d.decide_seconds for d in got if d.decide_seconds is not None]
    how_s = [d.how_seconds for d in got if d.how_seconds is not None]
    return {
        "phase": name,
        "moments": len(got),
        "missed": len(w.missed),
        "offers": sum(d.outcome == "offer" for d in got),
        "p50": percentile(lat, 50),
        "p95": percentile(lat, 95),
        "decide_p50": percentile(inner, 50),
        "how_p50": percentile(how_s, 50),
        "cpu_pct": cpu,
        "query_p50": percentile(filled, 50),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--decider", type=Path, default=None, help="Decider folder (default: train one on the train split)")
    ap.add_argument("--preload", type=int, default=2000)
    ap.add_argument("--events", type=int, default=40)
    ap.add_argument("--gap", type=float, default=0.5)
    ap.add_argument("--poll", type=float, default=0.05)
    ap.add_argument("--offers", type=int, default=5)
    ap.add_argument("--model", default="local/qwen2.5-coder-1.5b")
    ap.add_argument("--threads", default="1")
    ap.add_argument("--idle", type=float, default=20.0)
    ap.add_argument(
        "--settle", type=float, default=1.0, help="seconds the follower runs before the first row of each phase"
    )
    ap.add_argument("--how-gap", type=float, default=2.0, help="--gap of the two phases with the How model")
    ap.add_argument(
        "--lag",
        type=float,
        default=0.0,
        help="seconds the rows' log times lie behind the clock (rows are 15 s of log time apart, so followed rows "
        "run ahead of the clock and each waits for live's 3-s settle; a lag of 15 x the rows followed + 5 and "
        "under live's 300-s stale limit removes those waits)",
    )
    ap.add_argument(
        "--decide-timeout",
        type=float,
        default=600.0,
        help="seconds the writer waits for live's decision on a row before it counts the row as missed and writes "
        "the next",
    )
    ap.add_argument("--no-cold", action="store_true", help="leave out the cold first How call (the warm() comparison)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest setting (CI): 10 events preloaded (the How prompt's 5-minute window holds them all: "
        "about 200 new prompt tokens a How call, not 800), 3 followed, 1 offer by SmolLM2 (no cold How call), "
        "1 s idle, 0.2 s settle and gaps, rows 65 s behind the clock (--lag: no settle waits), 60 s for a decision",
    )
    a = parse_args(
        ap,
        smoke={
            "preload": 10,
            "events": 3,
            "gap": 0.2,
            "offers": 1,
            "model": "local/smollm2-135m",
            "idle": 1.0,
            "settle": 0.2,
            "how_gap": 0.2,
            "no_cold": True,
            "lag": 65.0,
            "decide_timeout": 60.0,
        },
        positive=("preload", "events", "poll", "timeout", "threads", "decide_timeout"),
        non_negative=("gap", "offers", "idle", "settle", "how_gap", "lag"),
        existing=("data", "decider"),
    )
    guard_network()
    watchdog(a.timeout)
    note, machine = machine_note()
    print(note)
    busy = cpu_busy()
    print(f"CPU busy before start: {busy:.0%}" if busy is not None else "")

    from proagent.live import LifeTraceFollower, ScriptedDecider
    from proagent.live._when import DeciderWhen, load_when

    tmp = Path(tempfile.mkdtemp(prefix="proagent-live-bench-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)  # nothing left behind, Ctrl-C or error included
    texts = _texts(a.data)
    if a.decider is None:
        from proagent.train.data import TrainingSet, load_split_moments
        from proagent.train.when import train_decider

        train, src = load_split_moments(a.data, "train")
        a.decider = tmp / "decider"
        train_decider(TrainingSet(tuple(train), (src,), ("real",) * len(train)), a.decider)
    when = load_when(a.decider)
    folder = tmp / "capture"
    lag = timedelta(seconds=a.lag)
    t0 = datetime.now().replace(microsecond=0) - timedelta(seconds=15 * a.preload) - lag
    t_pre = time.perf_counter()
    _preload(folder, texts, a.preload, t0)
    print(f"preloaded {a.preload} events in {time.perf_counter() - t_pre:.1f} s; following {folder}")

    # idle: the follower on a database nobody writes
    f = LifeTraceFollower(folder)
    from proagent.live import LiveAgent

    agent = LiveAgent(tmp / "idle", ScriptedDecider(set()))
    stop = threading.Event()
    th = threading.Thread(
        target=agent.follow, args=(f,), kwargs={"every_seconds": 0, "poll_seconds": a.poll, "stop": stop}
    )
    th.start()
    time.sleep(a.settle)
    c0, w0 = time.process_time(), time.perf_counter()
    time.sleep(a.idle)
    idle_cpu = (time.process_time() - c0) / (time.perf_counter() - w0) * 100
    stop.set()
    th.join()
    f.close()

    rows = [
        {
            "phase": "idle (following, nothing written)",
            "moments": 0,
            "offers": 0,
            "p50": None,
            "p95": None,
            "decide_p50": None,
            "how_p50": None,
            "cpu_pct": idle_cpu,
        }
    ]
    starts: list[dict] = []
    rows.append(
        _phase(
            "decider alone",
            folder,
            tmp / "live1",
            when,
            None,
            texts,
            a.events,
            a.gap,
            a.preload,
            t0,
            a.poll,
            settle=a.settle,
            wait_s=a.decide_timeout,
        )
    )
    rows[-1]["phase"] = "decider alone"
    if a.offers > 0 and a.model != "none":
        from proagent.bench.samples import build_samples
        from proagent.live import HowModel
        from proagent.sources.load import load_events

        first = build_samples(load_events(a.data))[0]
        # the first offer's How call: before, the model loaded and read the whole prompt there (cold);
        # now `proagent live` calls HowModel.warm() at start (load + system prompt) before following
        if not a.no_cold:
            cold = HowModel(a.model, {"n_threads": a.threads})
            t = time.perf_counter()
            cold(first)
            starts.append(
                {
                    "start": "cold: first How call (before)",
                    "warm_s": None,
                    "first_s": time.perf_counter() - t,
                    "evaluated": getattr(cold.last_usage, "input_tokens", None),
                    "reused": getattr(cold.last_usage, "input_tokens_cache_read", None),
                }
            )
            cold.close()
            del cold
        how = HowModel(a.model, {"n_threads": a.threads})
        warm_s = how.warm()
        t = time.perf_counter()
        how(first)
        starts.append(
            {
                "start": "warm() at start, then first How call (after)",
                "warm_s": warm_s,
                "first_s": time.perf_counter() - t,
                "evaluated": getattr(how.last_usage, "input_tokens", None),
                "reused": getattr(how.last_usage, "input_tokens_cache_read", None),
            }
        )
        always = DeciderWhen(when.decider)
        always.threshold = 0.0
        usage: list = []

        def how_seen(sample):  # noqa: ANN001, ANN202
            pred = how(sample)
            usage.append(how.last_usage)
            return pred

        # the rows of this phase are stamped from now on: the model starts above may have taken longer than the
        # decider phase's stamps reach ahead, and a moment older than live's stale limit is held, not offered
        t_how = max(t0, datetime.now().replace(microsecond=0) - timedelta(seconds=15 * (a.preload + a.events)) - lag)
        # the same moments twice: offer after the How answer (the code before: offer_wait None), then this code's
        # offer shown after at most 2 s and its query filled in
        rows.append(
            _phase(
                f"before: offer after the How answer ({a.model}, n_threads={a.threads})",
                folder,
                tmp / "live2-before",
                always,
                how,
                texts,
                a.offers,
                a.how_gap,
                a.preload + a.events,
                t_how,
                a.poll,
                offer_wait=None,
                settle=a.settle,
                wait_s=a.decide_timeout,
            )
        )
        t_how = max(
            t0,
            datetime.now().replace(microsecond=0) - timedelta(seconds=15 * (a.preload + a.events + a.offers)) - lag,
        )
        rows.append(
            _phase(
                f"after: offer at most 2 s after the Yes, query filled in ({a.model}, n_threads={a.threads})",
                folder,
                tmp / "live2",
                always,
                how_seen,
                texts,
                a.offers,
                a.how_gap,
                a.preload + a.events + a.offers,
                t_how,
                a.poll,
                settle=a.settle,
                wait_s=a.decide_timeout,
            )
        )
        ev = [u.input_tokens for u in usage if u is not None]
        re_ = [u.input_tokens_cache_read or 0 for u in usage if u is not None]
        out_t = [u.output_tokens for u in usage if u is not None]
        if ev:
            starts.append(
                {
                    "start": f"How calls of the offers phase (mean of {len(ev)})",
                    "warm_s": None,
                    "first_s": rows[-1]["how_p50"],
                    "evaluated": round(sum(ev) / len(ev)),
                    "reused": round(sum(re_) / len(re_)),
                    "output": round(sum(out_t) / len(out_t)),
                }
            )
    rows.append(
        {
            "phase": "baseline: LLM zero-shot as When (README)",
            "moments": 57,
            "offers": None,
            "p50": LLM_WHEN_P50,
            "p95": 23.84,
            "decide_p50": None,
            "how_p50": None,
            "cpu_pct": None,
        }
    )

    def fmt(v, unit="s"):  # noqa: ANN001, ANN202
        if v is None:
            return "-"
        return f"{v * 1000:.1f} ms" if unit == "s" and v < 1 else (f"{v:.2f} s" if unit == "s" else f"{v:.2f}%")

    table = [
        {
            "phase": r["phase"],
            "moments": str(r["moments"]),
            "missed": str(r.get("missed", "-")),
            "offers": "-" if r["offers"] is None else str(r["offers"]),
            "p50": fmt(r["p50"]),
            "p95": fmt(r["p95"]),
            "decide": fmt(r["decide_p50"]),
            "how": fmt(r["how_p50"]),
            "cpu": fmt(r["cpu_pct"], "%"),
            "query": fmt(r.get("query_p50")),
        }
        for r in rows
    ]
    columns = [
        ("phase", "phase", ""),
        ("moments", "moments", ""),
        ("missed", "rows not decided", ""),
        ("offers", "offers", ""),
        ("p50", "row->decision/offer p50", ""),
        ("p95", "p95", ""),
        ("decide", "read->decision p50", ""),
        ("how", "How call p50", ""),
        ("query", "row->query shown p50", ""),
        ("cpu", "CPU (% of one core)", ""),
    ]
    for t, r in zip(table, rows):
        t["baseline"] = str(r["phase"]).startswith("baseline") or "before" in str(r["phase"])
    print(render_table(table, columns))
    if starts:
        print(
            render_table(
                starts,
                [
                    ("start", "How model start", ""),
                    ("warm_s", "warm() s", ".2f"),
                    ("first_s", "How call s", ".2f"),
                    ("evaluated", "prompt tokens evaluated", ""),
                    ("reused", "reused from cache", ""),
                    ("output", "answer tokens", ""),
                ],
            )
        )
    print(
        "row->decision/offer: writer's commit of the event row to the decision (decider alone) or to the offer shown\n"
        "(decider + How), including the follower's poll interval; read->decision: from the follower reading the new\n"
        f"row (windowed read of a {a.preload}-event database, sample, restraint, decider); targets: decision p50 < 100 ms,\n"
        "offer p50 < 5 s, idle CPU < 2% of one core. row->query shown: to the offer's query on screen (with the offer,\n"
        "or filled in after it). CPU seconds of the whole run and the load average: last line."
    )
    ru = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"CPU: {ru.ru_utime + ru.ru_stime:.1f} s this process, {ch.ru_utime + ch.ru_stime:.1f} s finished children "
        f"(llama.cpp's child still runs: its CPU is not counted); load average at the end: {os.getloadavg()[0]:.2f}"
    )
    write_result(
        a.json,
        benchmark="live",
        rows=table,
        columns=columns,
        machine=machine,
        baseline="the offer shown after the How answer (the code before issue 24) in the same run; the LLM "
        "zero-shot as When decider is quoted from an earlier eval, not re-run",
        note="row->decision/offer: the writer's commit of the event row to the decision (decider alone) or "
        "to the offer shown (decider + How), the poll interval included; targets: decision p50 < 100 ms, "
        "offer p50 < 5 s, idle CPU < 2% of one core",
        tables=[
            {
                "title": "How model start",
                "rows": starts,
                "columns": [
                    ("start", "How model start", ""),
                    ("warm_s", "warm() s", ".2f"),
                    ("first_s", "How call s", ".2f"),
                    ("evaluated", "prompt tokens evaluated", ""),
                    ("reused", "reused from cache", ""),
                    ("output", "answer tokens", ""),
                ],
            }
        ]
        if starts
        else None,
        figures={"rows": rows, "config": {k: str(v) for k, v in vars(a).items()}},
        conditions=f"smoke: {a.preload} events preloaded, {a.events} followed, {a.offers} offer, {a.model}, "
        f"{'no cold How call, ' if a.no_cold else ''}{a.settle:g} s settle, How-phase gap {a.how_gap:g} s, "
        f"rows {a.lag:g} s behind the clock"
        if a.smoke
        else "",
    )


if __name__ == "__main__":
    run_main(main)
