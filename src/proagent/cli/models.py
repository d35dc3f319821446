"""``proagent models``: the bundled local models (list, prepare)."""

from __future__ import annotations

import click

__all__ = ["models"]


@click.group("models")
def models() -> None:
    """Bundled local models."""


@models.command("list")
def models_list() -> None:
    """List the bundled local models: ready (file verified), installed (parts present, assembled on
    first use or by `proagent models prepare`), or not installed.

    Example: proagent models list
    """
    from ..models.catalog import MODELS, assembled_gguf, parts_installed, resolve_gguf

    for name, spec in MODELS.items():
        try:
            if spec.relative_file:
                state = f"ready ({resolve_gguf(name)})"
            elif assembled_gguf(spec) is not None:
                state = f"ready ({assembled_gguf(spec)})"
            elif parts_installed(spec):
                state = f"installed; assembled on first use (or now: proagent models prepare {name})"
            else:
                state = "not installed"
        except (FileNotFoundError, ValueError) as e:
            state = f"not installed: {e}"
        click.echo(f"local/{name}: {state}")


@models.command("prepare")
@click.argument("name", default="qwen2.5-coder-1.5b")
def models_prepare(name: str) -> None:
    """Assemble a bundled model into the cache and verify its SHA-256.

    Example: proagent models prepare qwen2.5-coder-1.5b
    """
    from ..models.catalog import resolve_gguf

    try:
        path = resolve_gguf(name.removeprefix("local/"))
    except (FileNotFoundError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"local/{name.removeprefix('local/')}: {path} ({path.stat().st_size / 1e6:.0f} MB, verified)")
