"""mkdocs hook: the site's home page is the repository's README.md, so the two cannot drift.

``docs/index.md`` is a placeholder; at build time its source is replaced by README.md with the
README's links into ``docs/`` made relative to the site (``docs/guides/x.md`` -> ``guides/x.md``)
and links to files outside ``docs/`` (``benchmarks/README.md``) turned into plain code text.
"""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


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


def on_page_read_source(page, config):  # noqa: ANN001 (mkdocs hook signature)
    if page.file.src_uri == "index.md":
        return readme_as_home(README.read_text("utf-8"))
    return None
