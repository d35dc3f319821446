"""Small helpers shared by the ``proagent`` command groups."""

from __future__ import annotations

import re

import click

__all__ = ["DEFAULT_MODEL", "parse_model_args", "slug"]

DEFAULT_MODEL = "local/qwen2.5-coder-1.5b"
"""Model used when ``--model`` is not given: the bundled local default."""


def slug(text: str, limit: int = 80) -> str:
    """A file-name-safe form of ``text`` (at most ``limit`` characters)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:limit]


def parse_model_args(pairs: tuple[str, ...]) -> dict[str, str]:
    """``--model-arg KEY=VALUE`` pairs as a dict.

    Raises:
        click.BadParameter: a pair without ``=``.
    """
    out = {}
    for p in pairs:
        if "=" not in p:
            raise click.BadParameter(f"{p!r}: expected KEY=VALUE", param_hint="--model-arg")
        k, v = p.split("=", 1)
        out[k.strip()] = v.strip()
    return out
