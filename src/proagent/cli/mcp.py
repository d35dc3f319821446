"""``proagent mcp``: an MCP server over an activity log (options and messages only;
the server is :mod:`proagent.context`)."""

from __future__ import annotations

import re
from pathlib import Path

import click

from ..context import DEFAULT_MAX_TOKENS, MIN_MAX_TOKENS
from ..errors import DataError
from ._errors import stopped_by_ctrl_c

__all__ = ["mcp_cmd"]


def _check_titles(titles: tuple[str, ...]) -> None:
    for t in titles:
        try:
            re.compile(t)
        except re.error as e:
            raise click.BadParameter(f"{t!r}: {e}", param_hint="--block-title") from None


@click.command("mcp")
@click.argument("log", type=click.Path(path_type=Path))
@click.option("--http", is_flag=True, help="Serve streamable HTTP on 127.0.0.1 (a bearer token) instead of stdio.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="HTTP port on 127.0.0.1 (0: any free port, printed at start).",
)
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="HTTP: read the bearer token from this file, or write a new one there (0600). "
    "Default: a new token each start, printed on stderr.",
)
@click.option(
    "--live",
    "live",
    type=click.Path(path_type=Path),
    default=None,
    help="The folder of `proagent live` (its feedback.db): serve the offers and take answers.",
)
@click.option(
    "--raw",
    is_flag=True,
    help="Show titles and screen text unredacted (default: PII replaced by typed placeholders such as [EMAIL]).",
)
@click.option("--block-app", multiple=True, help="Never show events of this app (whole words; repeatable), as live.")
@click.option(
    "--block-title",
    multiple=True,
    help="Never show events whose window title matches this regex (repeatable), as live.",
)
@click.option(
    "--state",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder of mcp.log and the private index cache (default: the log's folder).",
)
@click.option(
    "--persona-model",
    default=None,
    help="An inspect model (e.g. local/qwen2.5-coder-1.5b) that writes a persona paragraph for each "
    "kind of activity user_profile shows, in the background (cached; a remote model gets "
    "redacted text). Default: clusters without texts.",
)
@click.option("--model-base-url", default=None, help="Base URL of an OpenAI-compatible API for --persona-model.")
@click.option(
    "--max-tokens",
    type=click.IntRange(MIN_MAX_TOKENS, 25_000),
    default=DEFAULT_MAX_TOKENS,
    show_default=True,
    help="Cap on one answer in estimated tokens (UTF-8 bytes / 2.5); a longer list is cut and the answer "
    "says so, with a next_cursor where it continues (Claude Code warns above 10,000, refuses above 25,000).",
)
def mcp_cmd(
    log: Path,
    http: bool,
    port: int,
    token_file: Path | None,
    live: Path | None,
    raw: bool,
    block_app: tuple[str, ...],
    block_title: tuple[str, ...],
    state: Path | None,
    persona_model: str | None,
    model_base_url: str | None,
    max_tokens: int,
) -> None:
    """Serve an activity log to MCP hosts (Claude Desktop, VS Code, ...): recent activity, semantic
    search, the current screen, the user profile and the live agent's offers; prompts for the
    common asks and a `now` resource with the local time.

    LOG is a capture folder, a LifeTrace, ActivityWatch or screenpipe database (or folder), or an
    ActivityWatch export; an encrypted capture needs its key (keyring or PROAGENT_PASSPHRASE).
    Every call is logged to mcp.log (tool, a keyed hash of the arguments, bytes returned; never
    the text). stdio by default.

    Example: proagent mcp ~/proagent-capture --block-app KeePassXC
    """
    from ..context import run

    # a host starts the server without a shell: `~` in a configuration's args is expanded here
    log = log.expanduser()
    live, state, token_file = (None if p is None else p.expanduser() for p in (live, state, token_file))
    if (port or token_file) and not http:
        raise click.UsageError("--port and --token-file apply to --http")
    _check_titles(block_title)
    if state is not None and not state.is_dir():
        raise DataError(state, "no such folder", option="--state")
    if model_base_url and not persona_model:
        raise click.UsageError("--model-base-url applies to --persona-model")
    if model_base_url and persona_model.startswith("local/"):
        raise click.UsageError("--model-base-url applies to an API model, not a local/ one")
    if token_file is not None and not token_file.parent.is_dir():
        raise DataError(token_file.parent, "no such folder", option="--token-file")
    if persona_model:
        from ._util import check_model

        check_model(persona_model, model_base_url, {}, option="--persona-model")
    try:
        run(
            log,
            raw=raw,
            block_apps=block_app,
            block_titles=block_title,
            live=live,
            http=http,
            port=port,
            token_file=token_file,
            state=state,
            persona_model=persona_model,
            model_base_url=model_base_url,
            max_tokens=max_tokens,
            announce=lambda line: click.echo(line, err=True),
        )
    except KeyboardInterrupt:  # Ctrl-C is how a server is stopped: not an error, nothing to resume
        click.echo("proagent mcp: stopped", err=True)
        stopped_by_ctrl_c()
