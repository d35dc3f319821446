"""Knowledge-graph memory against small hand-computed examples."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from proagent.agent.memory import KGMemory, MemoryCache, MemoryConfig, MemoryQuery, MemoryRecord
from proagent.agent.memory.kg import build_graph, graph_priors, title_keywords, tokenize

T0 = datetime(2025, 9, 15, 9, 0, 0)


def rec(i, app, title, help_, intention=None, user="u"):
    t = T0 + timedelta(minutes=i)
    return MemoryRecord(
        id=f"{user}:{i}",
        user=user,
        time=t,
        known_at=t,
        app=app,
        title=title,
        activity="",
        needs_help=help_,
        intention=intention,
    )


def example():
    """VS Code: 4 decisions, 3 helped (Code Programming x2, Knowledge Q&A x1).
    Browser: 2 decisions, 1 helped (Information Retrieval).
    Terminal: 21 helped, 20 Debugging + 1 Translation (1/21 = 4.8% < 5%).
    Keyword "ruby" (in Browser titles): 10 helped, 9 Code Programming + 1 Knowledge Q&A (exactly 10%).
    App order: VS, VS, Browser, VS, VS, Browser, Terminal x21, Browser x10."""
    rs = [
        rec(0, "VS Code", "main.py - proagent", True, "Code Programming"),
        rec(1, "VS Code", "main.py - proagent", True, "Code Programming"),
        rec(2, "Browser", "docs - proagent", True, "Information Retrieval"),
        rec(3, "VS Code", "utils.py - proagent", True, "Knowledge Q&A"),
        rec(4, "VS Code", "utils.py - proagent", False),
        rec(5, "Browser", "news - proagent", False),
    ]
    i = 6
    for k in range(21):
        rs.append(
            rec(i, "Terminal", "pytest failures", True, "Translation" if k == 0 else "Debugging & Error Resolution")
        )
        i += 1
    for k in range(10):
        rs.append(rec(i, "Browser", "ruby strings", True, "Knowledge Q&A" if k == 0 else "Code Programming"))
        i += 1
    return rs


def test_p_help_and_p_intent_by_app():
    g = build_graph("u", example())
    vs = g.nodes["app:VS Code"]
    assert (vs["n_decisions"], vs["n_help"]) == (4, 3) and vs["p_help"] == pytest.approx(0.75)
    br = g.nodes["app:Browser"]
    assert (br["n_decisions"], br["n_help"]) == (12, 11) and br["p_help"] == pytest.approx(11 / 12)
    assert g.edges["app:VS Code", "intent:Code Programming"]["p"] == pytest.approx(2 / 3)
    assert g.edges["app:VS Code", "intent:Knowledge Q&A"]["p"] == pytest.approx(1 / 3)
    # 1/21 = 0.048 is not above 0.05: dropped; 20/21 kept
    assert not g.has_edge("app:Terminal", "intent:Translation")
    assert g.edges["app:Terminal", "intent:Debugging & Error Resolution"]["p"] == pytest.approx(20 / 21)
    # Browser: 1 IR + 9 CP + 1 KQA of 11 -> KQA 1/11 = 0.09 > 0.05 kept
    assert g.edges["app:Browser", "intent:Knowledge Q&A"]["p"] == pytest.approx(1 / 11)


def test_p_intent_by_keyword_threshold():
    g = build_graph("u", example())
    assert g.nodes["kw:ruby"]["type"] == "Keyword"
    assert g.edges["kw:ruby", "intent:Code Programming"]["p"] == pytest.approx(0.9)
    assert not g.has_edge("kw:ruby", "intent:Knowledge Q&A")  # exactly 0.1 is not above 0.1
    assert g.nodes["kw:ruby"]["p_help"] == pytest.approx(1.0)
    # "proagent" is in 6 titles; 4 helped
    assert (g.nodes["kw:proagent"]["n_decisions"], g.nodes["kw:proagent"]["n_help"]) == (6, 4)


def test_transitions_user_and_node_types():
    g = build_graph("u", example())
    w = {(a, b): d["weight"] for a, b, d in g.edges(data=True) if d["rel"] == "next"}
    assert w == {
        ("app:VS Code", "app:Browser"): 2,
        ("app:Browser", "app:VS Code"): 1,
        ("app:Browser", "app:Terminal"): 1,
        ("app:Terminal", "app:Browser"): 1,
    }
    types = {d["type"] for _, d in g.nodes(data=True)}
    assert types == {"User", "App", "Keyword", "Intent"}
    assert g.edges["user:u", "app:Terminal"]["weight"] == 21


def test_serialised_priors():
    lines = graph_priors(build_graph("u", example()))
    text = "\n".join(lines)
    assert "For VS Code: Code Programming 67%, Knowledge Q&A 33%." in lines
    assert "For Terminal: Debugging & Error Resolution 95%." in lines
    assert "Terminal 100% of 21 moments" in text and "VS Code 75% of 4 moments" in text
    assert "After VS Code the user usually switches to: Browser 100%." in lines


def test_keywords_stopwords_idf_and_chinese():
    idf = {"main.py": 2.0, "proagent": 1.0}
    assert title_keywords("main.py - proagent - Visual Studio Code", idf) == ["main.py", "proagent"]
    assert "the" not in tokenize("The history of the web")
    toks = tokenize("毕业论文_v3.docx - Word")
    assert "毕业论文" in toks and "word" not in toks and "_" not in toks
    toks = tokenize("哔哩哔哩 教程 十分钟学会 Transformer")
    assert "教程" in toks and "transformer" in toks
    assert (
        len(title_keywords("a b c d e f g h i j k l m n o p q r s t u v w x y z alpha beta gamma delta eps zeta", {}))
        == 5
    )


def test_kg_memory_lookup_moment_lines_and_cache(tmp_path):
    recs = example()
    cache = MemoryCache(tmp_path)
    mem = KGMemory({"u": recs}, MemoryConfig(), cache).build()
    q = MemoryQuery("u", T0 + timedelta(days=1), "Browser", "ruby strings - Chrome", "")
    text = "\n".join(it.text for it in mem.lookup(q))
    assert "Current application Browser: needed help 92% of 12 moments before." in text
    assert '"ruby": needed help 100% of 10 (Code Programming 90%)' in text
    # a moment in the middle sees only the graph of earlier records
    mid = MemoryQuery("u", recs[4].known_at, "VS Code", "utils.py", "")
    assert "VS Code 100% of 3 moments" in "\n".join(it.text for it in mem.lookup(mid))
    # second build loads the graph from disk
    assert cache.misses == 1 and cache.hits == 0
    mem2 = KGMemory({"u": recs}, MemoryConfig(), cache).build()
    assert cache.hits == 1
    assert [it.text for it in mem2.lookup(q)] == [it.text for it in mem.lookup(q)]
    # another configuration is another cache entry
    KGMemory({"u": recs}, MemoryConfig(kg_keyword_min=0.2), cache).build()
    assert cache.misses == 2


def _mixed_records(n=400, seed=3):
    """Many apps, English and Chinese titles, some records without a decision."""
    import random

    rng = random.Random(seed)
    apps = ["VS Code", "Browser", "Terminal", "WeChat", "", "Word"]
    words = ["ruby", "python", "budget", "report", "sqlite", "draft", "index", "loss"]
    zh = ["毕业论文", "实验结果", "项目周报", "数据集"]
    intents = ["Code Programming", "Knowledge Q&A", "Translation", "Information Retrieval"]
    out = []
    for i in range(n):
        title = (
            f"{rng.choice(zh)}_{rng.choice(zh)}"
            if rng.random() < 0.3
            else f"{rng.choice(words)} {rng.choice(words)}.py"
        )
        help_ = None if rng.random() < 0.1 else rng.random() < 0.4
        out.append(rec(i, rng.choice(apps), title, help_, rng.choice(intents) if help_ else None))
    return out


def test_precomputed_priors_equal_the_graph_walk():
    from proagent.agent.memory.kg import moment_priors, precompute

    rs = _mixed_records()
    queries = [MemoryQuery("u", T0 + timedelta(days=1), r.app, r.title, "") for r in rs + example()]
    queries += [MemoryQuery("u", T0, "Unknown app", "never seen words here", ""), MemoryQuery("u", T0, "", "", "")]
    for recs in (example(), rs, []):
        g = build_graph("u", recs)
        for titles in ([], [r.title for r in recs]):  # titles tokenized at lookup, or ahead
            pre = precompute(g, titles, top_transitions=2, keywords_per_title=3)
            assert list(pre.user_lines) == graph_priors(g, top_transitions=2)
            assert len(pre.title_keywords) == len({r.title for r in recs} if titles else ())
            for q in queries:
                assert pre.moment_lines(q) == moment_priors(g, q, 3), q
    assert any(
        pre_line.startswith("Current window keywords")
        for q in queries
        for pre_line in precompute(build_graph("u", rs)).moment_lines(q)
    )


def test_kg_lookup_reads_precomputed_lines(tmp_path):
    """A lookup shows the walk's lines, for the full graph and for a prefix of the records."""
    from proagent.agent.memory.kg import moment_priors

    rs = _mixed_records(120)
    mem = KGMemory({"u": rs}, MemoryConfig(), MemoryCache(tmp_path)).build()
    for t, m in ((T0 + timedelta(days=1), 120), (rs[50].known_at, 50)):
        q = MemoryQuery("u", t, rs[7].app, rs[7].title, "")
        g = build_graph("u", rs[:m])
        assert [it.text for it in mem.lookup(q)] == graph_priors(g) + moment_priors(g, q)
    assert set(mem.state["u"]["priors"]) == {120, 50}
