"""Knowledge-graph memory of user habits (ProAgentBench section 6.4, Appendix C).

A ``networkx.DiGraph`` per user with four node types:

* ``User`` (one), ``App``, ``Keyword``, ``Intent``;
* ``User -uses-> App`` (weight = records), ``App -next-> App`` (transition
  between consecutive events in different apps, weight = frequency),
  ``App -intent-> Intent`` and ``Keyword -intent-> Intent`` (weight = count,
  ``p`` = P_intent(c|a) or P_intent(c|k)), ``App -has-> Keyword``.

Node statistics: ``App.p_help`` = P_help(a), the share of decision moments in
app a that led to help (LifeTrace: the next event was an LLM use; ProactiveBench:
the help label); ``Keyword.p_help`` likewise (an addition that makes keywords
useful on data without intentions). Intentions are counted on the moments that
led to help (the intention of the request that followed). Keywords: the top 5
informative tokens of each window title: English by word pattern, Chinese
segmented with ``jieba``, stopwords and 1-character tokens removed, ranked
by IDF over the user's training titles. Intents are kept when P(c|a) > 0.05 and
P(c|k) > 0.1.

The graph is serialised as plain-language priors: user-level lines first (the
same for every moment of the user, so llama.cpp reuses them as a prompt
prefix), then the lines for the current app and title keywords. Those lines are
written once per graph (:func:`precompute`: the user lines, one line per app,
one fragment per keyword, the keywords of each training title), so a lookup is
a few dict reads (and tokenizing the title when it is new) instead of a walk
over the graph; :func:`graph_priors` and :func:`moment_priors` walk the graph
and give the same lines.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from ._base import Memory, MemoryItem
from .records import MemoryQuery, MemoryRecord

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
    "KGMemory",
    "KGPriors",
    "build_graph",
    "graph_priors",
    "moment_priors",
    "precompute",
    "title_keywords",
    "tokenize",
]

_STOP_EN = set(
    """a an and are as at be been but by can could did do does for from had has have how i if in into is it its
    just me my new no not of on or our out over so some than that the their them then there these they this to
    up us was we were what when where which who why will with you your - untitled page tab window home
    google chrome microsoft edge firefox safari mozilla visual studio code vs word excel powerpoint app exe
    www com http https html htm org net cn""".split()
)
_STOP_ZH = set(
    "的 了 和 是 在 我 有 与 及 等 之 也 就 都 而 或 一个 这个 那个 你 他 她 它 吗 呢 吧 啊 页 新建 标签".split()
)
_LATIN = re.compile(r"[a-z][a-z0-9+#.]*[a-z0-9+#]|[a-z]", re.IGNORECASE)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_TOKEN_OK = re.compile(r"[\w\u4e00-\u9fff+#.]+")
_HAS_CONTENT = re.compile(r"[A-Za-z0-9\u4e00-\u9fff]")


@lru_cache(maxsize=8192)
def tokenize(title: str) -> tuple[str, ...]:
    """Content tokens of a window title, in order, lowercased; Chinese segmented with jieba."""
    if _CJK.search(title):
        import logging

        import jieba

        jieba.setLogLevel(logging.WARNING)
        raw = [w.strip() for w in jieba.lcut(title)]
    else:
        raw = _LATIN.findall(title)
    out = []
    for w in raw:
        w = w.lower().strip(".")
        if not w or not _TOKEN_OK.fullmatch(w) or w.isdigit() or not _HAS_CONTENT.search(w):
            continue
        if _CJK.search(w):
            if w in _STOP_ZH or len(w) < 2:  # single characters (e.g. an unknown name split apart) say little
                continue
        elif len(w) < 2 or w in _STOP_EN:
            continue
        out.append(w)
    return tuple(out)


def title_keywords(title: str, idf: dict[str, float], k: int = 5) -> list[str]:
    """The ``k`` most informative distinct tokens of a title (highest IDF first;
    unknown tokens count as rarest; ties keep title order)."""
    return _keywords(title, idf, max(idf.values(), default=1.0), k)


def _keywords(title: str, idf: dict[str, float], top: float, k: int) -> list[str]:
    seen: dict[str, int] = {}
    for i, w in enumerate(tokenize(title)):
        seen.setdefault(w, i)
    return sorted(seen, key=lambda w: (-idf.get(w, top), seen[w]))[:k]


def _idf(titles: list[str]) -> dict[str, float]:
    df: Counter[str] = Counter()
    for t in titles:
        df.update(set(tokenize(t)))
    n = len(titles)
    return {w: math.log((1 + n) / (1 + c)) + 1.0 for w, c in df.items()}


def build_graph(
    user: str,
    records: list[MemoryRecord],
    *,
    app_min: float = 0.05,
    keyword_min: float = 0.1,
    keywords_per_title: int = 5,
) -> nx.DiGraph:
    """The habit graph of one user from their (training-period) records."""
    import networkx as nx

    g = nx.DiGraph(user=user)
    g.graph["idf"] = _idf([r.title for r in records])
    g.graph["n_records"] = len(records)
    u = f"user:{user}"
    g.add_node(u, type="User", name=user)
    app_n: Counter[str] = Counter()
    app_dec: Counter[str] = Counter()
    app_help: Counter[str] = Counter()
    app_int: dict[str, Counter[str]] = defaultdict(Counter)
    kw_dec: Counter[str] = Counter()
    kw_help: Counter[str] = Counter()
    kw_int: dict[str, Counter[str]] = defaultdict(Counter)
    app_kw: Counter[tuple[str, str]] = Counter()
    trans: Counter[tuple[str, str]] = Counter()
    prev_app = None
    for r in sorted(records, key=lambda r: (r.time, r.id)):
        a = r.app or "(unknown app)"
        app_n[a] += 1
        if prev_app is not None and prev_app != a:
            trans[(prev_app, a)] += 1
        prev_app = a
        kws = title_keywords(r.title, g.graph["idf"], keywords_per_title)
        for k in kws:
            app_kw[(a, k)] += 1
        if r.needs_help is None:
            continue
        app_dec[a] += 1
        for k in kws:
            kw_dec[k] += 1
        if r.needs_help:
            app_help[a] += 1
            for k in kws:
                kw_help[k] += 1
            if r.intention:
                app_int[a][r.intention] += 1
                for k in kws:
                    kw_int[k][r.intention] += 1
    for a, n in app_n.items():
        g.add_node(
            f"app:{a}",
            type="App",
            name=a,
            n=n,
            n_decisions=app_dec[a],
            n_help=app_help[a],
            p_help=(app_help[a] / app_dec[a]) if app_dec[a] else None,
        )
        g.add_edge(u, f"app:{a}", rel="uses", weight=n)
    for (a, b), w in trans.items():
        g.add_edge(f"app:{a}", f"app:{b}", rel="next", weight=w)
    for k in set(kw_dec) | {k for _, k in app_kw}:
        g.add_node(
            f"kw:{k}",
            type="Keyword",
            name=k,
            n_decisions=kw_dec[k],
            n_help=kw_help[k],
            p_help=(kw_help[k] / kw_dec[k]) if kw_dec[k] else None,
        )
    for (a, k), w in app_kw.items():
        g.add_edge(f"app:{a}", f"kw:{k}", rel="has", weight=w)
    for src, thr, prefix in ((app_int, app_min, "app"), (kw_int, keyword_min, "kw")):
        for name, c in src.items():
            total = sum(c.values())
            for intent, w in c.items():
                p = w / total
                if p > thr:
                    g.add_node(f"intent:{intent}", type="Intent", name=intent)
                    g.add_edge(f"{prefix}:{name}", f"intent:{intent}", rel="intent", weight=w, p=p)
    return g


def _pct(p: float) -> str:
    return f"{100 * p:.0f}%"


def _intents(g: nx.DiGraph, node: str) -> list[tuple[str, float]]:
    out = [(g.nodes[v]["name"], d["p"]) for _, v, d in g.out_edges(node, data=True) if d.get("rel") == "intent"]
    return sorted(out, key=lambda x: (-x[1], x[0]))


def _transitions(g: nx.DiGraph, node: str, top: int) -> list[tuple[str, float, int]]:
    out = [(g.nodes[v]["name"], d["weight"]) for _, v, d in g.out_edges(node, data=True) if d.get("rel") == "next"]
    total = sum(w for _, w in out)
    return [(n, w / total, w) for n, w in sorted(out, key=lambda x: (-x[1], x[0]))[:top]]


def graph_priors(g: nx.DiGraph, *, max_apps: int = 8, top_transitions: int = 3) -> list[str]:
    """User-level priors, one line each (identical for every moment of the user)."""
    apps = sorted((d for _, d in g.nodes(data=True) if d["type"] == "App"), key=lambda d: (-d["n"], d["name"]))[
        :max_apps
    ]
    lines = []
    helps = [
        f"{d['name']} {_pct(d['p_help'])} of {d['n_decisions']} moments" for d in apps if d.get("p_help") is not None
    ]
    if helps:
        lines.append("How often this user needed an AI assistant, by application: " + "; ".join(helps) + ".")
    for d in apps:
        ints = _intents(g, f"app:{d['name']}")
        if ints:
            lines.append(f"For {d['name']}: " + ", ".join(f"{c} {_pct(p)}" for c, p in ints) + ".")
    for d in apps:
        tr = _transitions(g, f"app:{d['name']}", top_transitions)
        if tr:
            lines.append(
                f"After {d['name']} the user usually switches to: "
                + ", ".join(f"{n} {_pct(p)}" for n, p, _ in tr)
                + "."
            )
    return lines


def _app_line(d: dict) -> str:
    return f"Current application {d['name']}: needed help {_pct(d['p_help'])} of {d['n_decisions']} moments before."


def _keyword_part(g: nx.DiGraph, node: str) -> str:
    d = g.nodes[node]
    s = f'"{d["name"]}": needed help {_pct(d["p_help"])} of {d["n_decisions"]}'
    ints = _intents(g, node)
    if ints:
        s += " (" + ", ".join(f"{c} {_pct(p)}" for c, p in ints) + ")"
    return s


def _moment_lines(app_line: str | None, parts: list[str]) -> list[str]:
    lines = [app_line] if app_line else []
    if parts:
        lines.append("Current window keywords: " + "; ".join(parts) + ".")
    return lines


def moment_priors(g: nx.DiGraph, query: MemoryQuery, keywords_per_title: int = 5) -> list[str]:
    """Lines for the current moment: its application and its title keywords
    (walks the graph; :meth:`KGPriors.moment_lines` reads the same lines from tables)."""
    a = f"app:{query.app or '(unknown app)'}"
    app_line = _app_line(g.nodes[a]) if a in g and g.nodes[a].get("p_help") is not None else None
    parts = []
    for k in title_keywords(query.title, g.graph.get("idf", {}), keywords_per_title):
        node = f"kw:{k}"
        if node in g and g.nodes[node].get("p_help") is not None:
            parts.append(_keyword_part(g, node))
    return _moment_lines(app_line, parts)


@dataclass(frozen=True)
class KGPriors:
    """The prompt lines of one habit graph, written out ahead of every lookup."""

    user_lines: tuple[str, ...]
    """:func:`graph_priors` of the graph."""
    app_lines: dict[str, str]
    """App name (``(unknown app)`` for none) -> its "Current application" line,
    for apps with a P_help."""
    keyword_parts: dict[str, str]
    """Keyword -> its fragment of the "Current window keywords" line, for
    keywords with a P_help."""
    idf: dict[str, float]
    """Token IDF over the user's training titles (ranks a title's keywords)."""
    top_idf: float
    """The largest IDF (unknown tokens rank as this)."""
    keywords_per_title: int = 5
    title_keywords: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Keywords of the titles seen in training (a window title recurs: no
    tokenizing at lookup then); other titles are tokenized when asked."""

    def keywords(self, title: str) -> tuple[str, ...]:
        """:func:`title_keywords` of ``title`` under this graph's IDF."""
        kws = self.title_keywords.get(title)
        if kws is None:
            kws = tuple(_keywords(title, self.idf, self.top_idf, self.keywords_per_title))
        return kws

    def moment_lines(self, query: MemoryQuery) -> list[str]:
        """:func:`moment_priors` of the graph for ``query``, from the tables."""
        parts = [p for k in self.keywords(query.title) if (p := self.keyword_parts.get(k)) is not None]
        return _moment_lines(self.app_lines.get(query.app or "(unknown app)"), parts)

    def lines(self, query: MemoryQuery) -> list[str]:
        """User lines, then the moment's lines (what a KG lookup shows)."""
        return [*self.user_lines, *self.moment_lines(query)]


def precompute(
    g: nx.DiGraph, titles: Iterable[str] = (), *, top_transitions: int = 3, keywords_per_title: int = 5
) -> KGPriors:
    """Write out every line a lookup in ``g`` can show (one pass over the graph),
    and the keywords of ``titles`` (the training titles the graph was built from)."""
    idf = g.graph.get("idf", {})
    top = max(idf.values(), default=1.0)
    apps, parts = {}, {}
    for node, d in g.nodes(data=True):
        if d.get("p_help") is None:
            continue
        if d["type"] == "App":
            apps[d["name"]] = _app_line(d)
        elif d["type"] == "Keyword":
            parts[d["name"]] = _keyword_part(g, node)
    known = {t: tuple(_keywords(t, idf, top, keywords_per_title)) for t in set(titles)}
    return KGPriors(
        tuple(graph_priors(g, top_transitions=top_transitions)), apps, parts, idf, top, keywords_per_title, known
    )


class KGMemory(Memory):
    """Plain-language priors from a per-user habit graph."""

    name = "kg"
    source = "habits learned from this user's earlier activity"

    def _graph(self, user: str, records: list[MemoryRecord]) -> nx.DiGraph:
        c = self.config
        return build_graph(
            user,
            records,
            app_min=c.kg_app_min,
            keyword_min=c.kg_keyword_min,
            keywords_per_title=c.kg_keywords_per_title,
        )

    def _build_user(self, user: str, records: list[MemoryRecord]) -> dict:
        import networkx as nx

        key = self.key(user)
        data = self.cache.get_json("kg", key)
        if data is not None:
            g = nx.node_link_graph(data, directed=True, edges="edges")
        else:
            g = self._graph(user, records)
            self.cache.put_json("kg", key, nx.node_link_data(g, edges="edges"))
        return {"full": g, "prefix": {}, "priors": {len(records): self._precompute(g, records)}}

    def _precompute(self, g: nx.DiGraph, records: list[MemoryRecord]) -> KGPriors:
        return precompute(
            g,
            (r.title for r in records),
            top_transitions=self.config.kg_top_transitions,
            keywords_per_title=self.config.kg_keywords_per_title,
        )

    def graph_at(self, user: str, m: int) -> nx.DiGraph:
        """The graph of the user's first ``m`` records (all: the cached full graph)."""
        st = self.state[user]
        recs = self.records[user]
        if m >= len(recs):
            return st["full"]
        if m not in st["prefix"]:
            st["prefix"][m] = self._graph(user, recs[:m])
        return st["prefix"][m]

    def priors_at(self, user: str, m: int) -> KGPriors:
        """The precomputed lines of :meth:`graph_at` ``(user, m)``."""
        st = self.state[user]
        m = min(m, len(self.records[user]))
        if m not in st["priors"]:
            st["priors"][m] = self._precompute(self.graph_at(user, m), self.records[user][:m])
        return st["priors"][m]

    def _retrieve(self, query: MemoryQuery) -> list[MemoryItem]:
        m = self.eligible(query.user, query.time)
        if m == 0:
            return []
        known = self.records[query.user][m - 1].known_at
        lines = self.priors_at(query.user, m).lines(query)
        return [MemoryItem(f"{query.user}:kg:{i}", query.user, known, line) for i, line in enumerate(lines)]
