"""``proagent mcp`` latency on a day of capture: ``search_activity`` and ``current_context`` through
the official SDK's client, beside a brute-force baseline in the same run.

The log: one day of ``proagent synth`` (LifeTrace processed schema, one screenshot row a second:
about 260 events and 18,500 screenshot rows), with screen text on every event's latest
screenshot (about 900 characters of code, chat and mail text holding an e-mail address and a phone
number, so the redactor has work). Timed:

* **start-up**: the first read (redaction only: tools answer from then on), the index build
  (embedding every event; skipped with a ``--state`` cache of an earlier run) and a restart
  (everything from the private cache);
* **search_activity**: ``--queries`` distinct queries (none repeated, so the embedder's in-process
  cache never answers) through ``mcp.Client`` connected in process to the server
  (:func:`proagent.context.build_server`), and the same over stdio to a spawned ``proagent mcp``
  (``--stdio``, the path a host takes); baseline: a stateless server that reads the whole log
  again per query and ranks every event's (cached) vector with a brute-force numpy scan;
* **current_context**: ``--calls`` calls the same two ways; baseline: reading the log again and
  redacting the newest screen per call;
* **growth**: one event appended to the database, then the call that sees it (the follower notices
  the commit, reads the log's end and redacts and embeds only the new event);
* **answer size** (issue 47): ``recent_activity(1440)`` over the day, uncapped (the baseline: what
  the server sent before the cap) beside the pages under the default cap of 10,000 estimated tokens
  (UTF-8 bytes / 2.5, :func:`proagent.context.estimate_tokens`), each also counted by the default
  model's tokenizer (Qwen2.5, from its GGUF) where it is assembled; the pages must give every event once.

Targets (issue 37): search_activity p95 < 50 ms, current_context p95 < 20 ms. Prints the machine's
load first; figures are milliseconds.

    python benchmarks/mcp_latency.py [--queries 100] [--calls 200] [--baseline-runs 20] [--stdio] [--state DIR] [--json out.json]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import guard_network, machine_note, parse_args, percentile, render_table, watchdog, write_result  # noqa: E402

SCREENS = [
    "def load_events(path):\n    conn = sqlite3.connect(path)\n    rows = conn.execute('SELECT * FROM events')\n"
    "Traceback (most recent call last): sqlite3.OperationalError: database is locked",
    "Inbox (3) - Mail\nFrom: Li Wei <li.wei.research@example.com>\nSubject: review of chapter 3\n"
    "Could you send the revised figures before Friday? Call me at +1 415 555 0132.",
    "ChatGPT\nHow do I compute precision and recall for an imbalanced data set?\n"
    "Precision is TP / (TP + FP); recall is TP / (TP + FN). For imbalanced classes use PR curves.",
    "Stack Overflow\nHow to read a SQLite database in Python with pandas\nread_sql_query(sql, con)\n"
    "Answer: use a read-only URI connection when another process writes the database.",
    "实验结果.xlsx - Excel\nAccuracy F1 Precision Recall\n0.812 0.774 0.801 0.749\n第三章 实验设计 3.1 数据集",
    "Terminal\n$ python -m pytest -q tests/\n3 failed, 212 passed in 41.2s\nFAILED tests/test_io.py::test_lock",
]
QUERY_WORDS = [
    "database locked error",
    "precision recall",
    "mail about chapter",
    "pytest failures",
    "excel results",
    "sqlite pandas",
    "figures before friday",
    "imbalanced classes",
    "实验 数据集",
    "traceback",
]


def make_day(root: Path, seed: int, events: int | None = None) -> Path:
    """One synth day with screen text on each event's latest screenshot; returns the database.
    ``events``: keep only the day's first ``events`` events (their screenshots and OCR rows with them;
    ``--smoke``); ``None``: the whole day."""
    from proagent.synth.generator import SynthConfig, generate

    generate(root, SynthConfig(users=1, days=1, seed=seed, screenshot_interval=1.0))
    db = next(root.glob("*/*.db"))
    con = sqlite3.connect(db)
    if events is not None:
        (last_kept,) = con.execute(
            "SELECT max(id) FROM (SELECT id FROM events ORDER BY id LIMIT ?)", (events,)
        ).fetchone()
        gone = "SELECT id FROM screenshots WHERE event_id > ?"
        for table in ("ocr_results", "search_index", "processing_queue"):
            con.execute(f"DELETE FROM {table} WHERE screenshot_id IN ({gone})", (last_kept,))
        con.execute("DELETE FROM screenshots WHERE event_id > ?", (last_kept,))
        con.execute("DELETE FROM events WHERE id > ?", (last_kept,))
    last = con.execute(
        "SELECT event_id, max(id) FROM screenshots WHERE event_id IS NOT NULL GROUP BY event_id"
    ).fetchall()
    for i, (eid, sid) in enumerate(last):
        text = "\n".join(SCREENS[(i + k) % len(SCREENS)] for k in range(5)) + f"\nevent {eid}"
        con.execute("DELETE FROM ocr_results WHERE screenshot_id = ?", (sid,))
        con.execute(
            "INSERT INTO ocr_results (screenshot_id, text_content, confidence, language) VALUES (?,?,0.9,'en')",
            (sid, text),
        )
    con.commit()
    con.close()
    return db


def ms(values: list[float]) -> dict[str, float | None]:
    return {
        "n": len(values),
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "max": max(values) if values else None,
    }


def brute_search(db: Path, query: str, vectors: dict[str, object]) -> list[tuple[str, float]]:
    """Baseline: a stateless server: read the whole log again, look every event's vector up in a
    cache (no embedding), rank all of them by cosine with a numpy scan."""
    import numpy as np

    from proagent.embedding import embed
    from proagent.sources.lifetrace import load_lifetrace

    evs = [e for e in load_lifetrace(db, resolve_files=False).events if e.id in vectors]
    q = embed([query])[0]
    scores = np.stack([vectors[e.id] for e in evs]) @ q
    top = np.argsort(-scores)[:5]
    return [(evs[i].id, float(scores[i])) for i in top]


def brute_current(db: Path) -> str:
    """Baseline: read the log again and redact the newest event's screen."""
    from proagent.curate import clean_text
    from proagent.sources.lifetrace import load_lifetrace

    e = load_lifetrace(db, resolve_files=False).events[-1]
    text = next((s.ocr_text for s in reversed(e.focused_screenshots) if s.ocr_text.strip()), "")
    return clean_text(text)


async def client_timings(client, queries: list[str], calls: int) -> dict[str, list[float]]:  # noqa: ANN001
    out: dict[str, list[float]] = {"search": [], "current": []}
    await client.call_tool("current_context", {})  # the first call waits for the start-up read
    for q in queries:
        t0 = time.perf_counter()
        r = await client.call_tool("search_activity", {"query": q})
        out["search"].append((time.perf_counter() - t0) * 1000)
        assert not r.is_error and r.structured_content["hits"], r
    for _ in range(calls):
        t0 = time.perf_counter()
        r = await client.call_tool("current_context", {})
        out["current"].append((time.perf_counter() - t0) * 1000)
        assert not r.is_error and r.structured_content["app"], r
    return out


def append_event(db: Path) -> str:
    con = sqlite3.connect(db)
    (t,) = con.execute("SELECT max(end_time) FROM events").fetchone()
    start = datetime.fromisoformat(str(t)) + timedelta(seconds=5)
    cur = con.execute(
        "INSERT INTO events (app_name, window_title, start_time, end_time) VALUES (?,?,?,?)",
        ("Terminal", "kubectl rollout status deploy/web", start.isoformat(" "), None),
    )
    eid = cur.lastrowid
    cols = [r[1] for r in con.execute("PRAGMA table_info(screenshots)")]
    row = {
        "file_path": f"/x/screen_1_{start:%Y%m%d_%H%M%S}_001.png",
        "file_hash": "0" * 64,
        "file_size": 1,
        "width": 1,
        "height": 1,
        "screen_id": 1,
        "app_name": "Terminal",
        "window_title": "kubectl rollout status",
        "created_at": (start + timedelta(seconds=1)).isoformat(" "),
        "event_id": eid,
    }
    row = {k: v for k, v in row.items() if k in cols}
    sid = con.execute(
        f"INSERT INTO screenshots ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values())
    ).lastrowid
    con.execute(
        "INSERT INTO ocr_results (screenshot_id, text_content, confidence, language) VALUES (?,?,0.9,'en')",
        (sid, "Waiting for deployment web rollout to finish: 2 of 3 updated replicas are available"),
    )
    con.commit()
    con.close()
    return str(eid)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--baseline-runs", type=int, default=20)
    ap.add_argument("--stdio", action="store_true", help="also time a spawned `proagent mcp` over stdio")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--state",
        type=Path,
        default=None,
        help="keep the index cache here: a second run with the same --seed skips the index build",
    )
    ap.add_argument("--events", type=int, default=None, help="keep only the day's first N events (default: all)")
    ap.add_argument(
        "--cap",
        type=int,
        default=None,
        help="estimated tokens per recent_activity page in the answer-size figure (default: the server's cap)",
    )
    ap.add_argument(
        "--no-tokenizer",
        action="store_true",
        help="leave out the Qwen2.5 tokenizer's counts beside the estimate (loading it from the GGUF takes minutes)",
    )
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest setting (CI): the day's first 30 events, 5 queries, 5 calls, 2 baseline runs, pages "
        "of 2,000 estimated tokens, no Qwen2.5 tokenizer",
    )
    args = parse_args(
        ap,
        smoke={"queries": 5, "calls": 5, "baseline_runs": 2, "events": 30, "cap": 2000, "no_tokenizer": True},
        positive=("queries", "calls", "baseline_runs", "timeout", "events", "cap"),
        non_negative=("seed",),
    )
    guard_network()
    watchdog(args.timeout)
    note, machine = machine_note()
    print(note, flush=True)

    import anyio
    from mcp import Client, StdioServerParameters

    from proagent.context import ActivityView, ContextService, build_server
    from proagent.embedding import load_model

    load_model()
    queries = [f"{QUERY_WORDS[i % len(QUERY_WORDS)]} {i}" for i in range(args.queries)]
    result: dict = {"machine": machine, "config": vars(args) | {"json": str(args.json)}}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        db = make_day(root / "day", args.seed, args.events)
        state = args.state or root / "state"
        state.mkdir(parents=True, exist_ok=True)
        cached = any(state.glob(".mcp/index-*.npz"))
        con = sqlite3.connect(db)
        n_events, n_shots = (
            con.execute("SELECT count(*) FROM events").fetchone()[0],
            con.execute("SELECT count(*) FROM screenshots").fetchone()[0],
        )
        con.close()
        result["log"] = {"events": n_events, "screenshot_rows": n_shots}
        print(
            f"log: one synth day, {n_events} events, {n_shots} screenshot rows, screen text on every event", flush=True
        )

        t0 = time.perf_counter()
        view = ActivityView(db.parent, state=state)
        view.refresh()
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        view.embed_pending()
        build = time.perf_counter() - t0
        t0 = time.perf_counter()
        view2 = ActivityView(db.parent, state=state)
        view2.refresh()
        view2.embed_pending()
        warm = time.perf_counter() - t0
        view2.close()
        result["startup_s"] = {
            "first_answer": first,
            "index_build": build,
            "warm_from_cache": warm,
            "indexed": view.indexed_count(),
            "cache_was_there": cached,
        }

        service = ContextService(view)
        server = build_server(service)

        async def in_process() -> dict:
            async with Client(server) as client:
                return await client_timings(client, queries, args.calls)

        inproc = anyio.run(in_process)
        t0 = time.perf_counter()
        new_id = append_event(db)
        cur = service.current_context()
        grow = time.perf_counter() - t0
        assert cur.title == "kubectl rollout status deploy/web", cur
        hit = service.search_activity("kubernetes deployment rollout", limit=1).hits[0].event.id
        result["growth_ms"] = {"append_then_current_context": grow * 1000, "found_by_search": hit == new_id}

        stdio = None
        if args.stdio:
            src = str(Path(__file__).resolve().parents[1] / "src")
            env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
            params = StdioServerParameters(
                command=sys.executable,
                args=["-m", "proagent.cli", "mcp", str(db.parent), "--state", str(state)],
                env=env,
            )

            async def over_stdio() -> dict:
                async with Client(params, read_timeout_seconds=600) as client:
                    return await client_timings(client, [q + " stdio" for q in queries], args.calls)

            stdio = anyio.run(over_stdio)

        result["answer_size"] = answer_sizes(view, cap=args.cap, tokenizer=not args.no_tokenizer)

        base_search, base_current = [], []
        vectors = {m.event.id: m.vector for m in view.entries() if m.vector is not None}
        for i in range(args.baseline_runs):
            t0 = time.perf_counter()
            brute_search(db, f"baseline query {i}", vectors)
            base_search.append((time.perf_counter() - t0) * 1000)
        for _ in range(max(3, args.baseline_runs * 3)):
            t0 = time.perf_counter()
            brute_current(db)
            base_current.append((time.perf_counter() - t0) * 1000)
        view.close()

    rows = [
        {"what": "search_activity, SDK client in process", **ms(inproc["search"])},
        *([{"what": "search_activity, SDK client over stdio", **ms(stdio["search"])}] if stdio else []),
        {"what": "search_activity baseline: re-read + numpy scan", **ms(base_search)},
        {"what": "current_context, SDK client in process", **ms(inproc["current"])},
        *([{"what": "current_context, SDK client over stdio", **ms(stdio["current"])}] if stdio else []),
        {"what": "current_context baseline: re-read + redact", **ms(base_current)},
    ]
    columns = [
        ("what", "call", "s"),
        ("n", "calls", "d"),
        ("p50", "p50 ms", ".1f"),
        ("p95", "p95 ms", ".1f"),
        ("max", "max ms", ".1f"),
    ]
    for r in rows:
        r["baseline"] = "baseline" in r["what"]
    print(render_table(rows, columns))
    s = result["startup_s"]
    print(
        f"start-up: first answer after {s['first_answer']:.1f} s (read + redact), index build {s['index_build']:.1f} s "
        f"(embed {s['indexed']} events{'; from an earlier run cache' if s['cache_was_there'] else ''}), "
        f"restart {s['warm_from_cache']:.2f} s (from the cache); one appended event seen by current_context in {result['growth_ms']['append_then_current_context']:.0f} ms, "
        f"found by search: {result['growth_ms']['found_by_search']}"
    )
    z = result["answer_size"]

    def qwen(k):
        return f" (Qwen2.5 tokenizer: {z[k]})" if z.get(k) is not None else ""

    print(
        f"answer size: recent_activity(1440) over the day uncapped {z['uncapped_estimate']} estimated tokens"
        f"{qwen('uncapped_qwen')}; capped at {z['cap']}: {z['pages']} pages, the largest {z['largest_estimate']}"
        f"{qwen('largest_qwen')}, all {z['events_paged']} events once: {z['complete']}; "
        f"estimate / Qwen2.5 tokens {z['ratio_min']}-{z['ratio_max']} (>= 1: the estimate errs large)"
        if z.get("ratio_min") is not None
        else f"answer size: recent_activity(1440) uncapped {z['uncapped_estimate']} estimated tokens; capped at "
        f"{z['cap']}: {z['pages']} pages, the largest {z['largest_estimate']}, complete: {z['complete']}"
    )
    print(
        f"targets: search_activity p95 < 50 ms, current_context p95 < 20 ms; every answer <= {z['cap']} estimated tokens"
    )
    result["rows"] = rows
    load = os.getloadavg()
    result["loadavg_after"] = load
    print(f"load average after: {load[0]:.2f}")
    write_result(
        args.json,
        benchmark="mcp_latency",
        rows=rows,
        columns=columns,
        machine=machine,
        baseline="re-reading the log and scanning its vectors with numpy (search), re-reading and redacting "
        "it (current context) at every call",
        note=f"start-up: first answer after {s['first_answer']:.1f} s, index build {s['index_build']:.1f} s "
        f"({s['indexed']} events embedded), restart {s['warm_from_cache']:.2f} s from the cache; "
        "targets: search_activity p95 < 50 ms, current_context p95 < 20 ms",
        conditions=""
        if (args.queries, args.calls, args.events, args.cap) == (100, 200, None, None)
        else f"smaller (--queries {args.queries} --calls {args.calls} --events {args.events or 'all'} --cap "
        f"{args.cap or 'default'}; the full run: 100 and 200 on the whole day, the server's cap)",
        figures=result,
    )
    return 0


def _qwen_counter():  # noqa: ANN202
    """Token counts by the default model's tokenizer (Qwen2.5, read from its GGUF by transformers),
    or ``None`` where the model is not assembled."""
    try:
        from transformers import AutoTokenizer
    except ImportError:
        return None
    folder = Path.home() / ".cache" / "proagent" / "models"
    gguf = folder / "qwen2.5-coder-1.5b.gguf"
    if not gguf.is_file():
        return None
    try:
        tok = AutoTokenizer.from_pretrained(str(folder), gguf_file=gguf.name)
    except Exception:  # noqa: BLE001  (an optional cross-check; the figure says when it is missing)
        return None
    return lambda text: len(tok(text)["input_ids"])


def answer_sizes(view, cap: int | None = None, tokenizer: bool = True) -> dict:  # noqa: ANN001
    """recent_activity(1440) over the whole day: the uncapped answer's size (the baseline: what the
    server sent before the cap) beside the pages under the cap (``cap`` estimated tokens, default the
    server's), each by the stated estimate (UTF-8 bytes / 2.5) and, where the default model is
    assembled and ``tokenizer``, by the Qwen2.5 tokenizer."""
    from proagent.context import DEFAULT_MAX_TOKENS, ContextService, answer_json, estimate_tokens

    cap = cap or DEFAULT_MAX_TOKENS
    count = _qwen_counter() if tokenizer else None
    whole = ContextService(view, max_tokens=10**9).recent_activity(1440)
    capped = ContextService(view, max_tokens=cap)
    pages, cursor = [], None
    while True:
        page = capped.recent_activity(1440, cursor)
        pages.append(page)
        cursor = page.next_cursor
        if cursor is None or len(pages) > 1000:
            break
    ids = [e.id for p in reversed(pages) for e in p.events]
    largest = max(pages, key=estimate_tokens)
    out = {
        "cap": cap,
        "uncapped_estimate": estimate_tokens(whole),
        "pages": len(pages),
        "largest_estimate": estimate_tokens(largest),
        "events_paged": len(ids),
        "complete": ids == [e.id for e in whole.events],
        "uncapped_qwen": None,
        "largest_qwen": None,
        "ratio_min": None,
        "ratio_max": None,
    }
    if count is not None:
        ratios = [estimate_tokens(p) / count(answer_json(p).decode()) for p in [whole, *pages]]
        out.update(
            uncapped_qwen=count(answer_json(whole).decode()),
            largest_qwen=count(answer_json(largest).decode()),
            ratio_min=round(min(ratios), 2),
            ratio_max=round(max(ratios), 2),
        )
    return out


if __name__ == "__main__":
    sys.exit(main())
