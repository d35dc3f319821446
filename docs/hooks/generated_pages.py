"""mkdocs hook: the two pages the site generates at build time, so they cannot drift from their sources.

* ``index.md`` (a placeholder) is the repository's README.md, its links into ``docs/`` made
  relative to the site (``docs/guides/x.md`` -> ``guides/x.md``) and links to files outside
  ``docs/`` (``benchmarks/README.md``) turned into plain code text.
* ``benchmark-runs.md`` (a placeholder) is rendered from ``docs/results/*.json`` by
  ``benchmarks/render_results.py``: the benchmark scripts' own output, never copied by hand.

It also quiets jieba, which the Material search plugin uses to split the pages' Chinese text: its
logger prints "Building prefix dict ..." and "Loading model cost ..." on every build.
"""

from __future__ import annotations

import importlib.util
import logging
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

try:  # jieba sets its logger to DEBUG when imported: import it first, then quiet it
    import jieba

    jieba.setLogLevel(logging.WARNING)
except ImportError:  # no Chinese segmentation in this environment: nothing to quiet
    pass


def readme_as_home(text: str) -> str:
    """README text -> the home page's Markdown (links rewritten as described above)."""
    def link(m: re.Match[str]) -> str:
        label, target = m.group(1), m.group(2)
        if re.match(r"^[a-z]+://", target) or target.startswith("#"):
            return m.group(0)
        if target.startswith("docs/"):
            return f"[{label}]({target[len('docs/'):]})"
        return f"{label} (`{target}`)" if label.strip("`") != target else f"`{target}`"
    return re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", link, text)


def benchmark_runs() -> str:
    """The "Benchmark runs" page (``benchmarks/render_results.py``'s ``render``)."""
    spec = importlib.util.spec_from_file_location("proagent_render_results", ROOT / "benchmarks" / "render_results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.render()


def on_page_read_source(page, config):  # noqa: ANN001 (mkdocs hook signature)
    if page.file.src_uri == "index.md":
        return readme_as_home((ROOT / "README.md").read_text("utf-8"))
    if page.file.src_uri == "benchmark-runs.md":
        return benchmark_runs()
    return None
