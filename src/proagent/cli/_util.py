"""Small helpers shared by the ``proagent`` command groups."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..errors import RunError
from ..io import slug
from ._errors import click_error

__all__ = [
    "DEFAULT_MODEL",
    "check_can_create",
    "check_model",
    "check_writable_dir",
    "default_log_dir",
    "parse_model_args",
    "run_eval_set",
    "slug",
    "window_seconds",
    "window_slug",
]

DEFAULT_MODEL = "local/qwen2.5-coder-1.5b"
"""Model used when ``--model`` is not given: the bundled local default."""


def window_slug(seconds: float) -> str:
    """A context window as it appears in default log folder names (``300s``), so
    spellings of the same window (``5m``, ``300``, ``5 M``) resume the same run."""
    return f"{seconds:g}s"


def default_log_dir(*parts: str) -> Path:
    """The log folder a command uses when ``--log-dir`` is not given: ``logs/<parts joined by ->``,
    made file-name safe, so the same options always resume the same folder."""
    return Path("logs") / slug("-".join(parts))


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


def check_model(model: str, base_url: str | None, model_args: dict[str, Any], option: str = "--model") -> None:
    """Resolve a model before any work starts, so a typo, a missing file, a bad
    model argument or a missing provider SDK is one clear line, not a traceback
    after part of a run. A local model is loaded here (and stays loaded for the run).

    Raises:
        click.ClickException: the model cannot be created.
    """
    from inspect_ai.model import get_model

    from ..models.api import responses_refusal

    try:
        made = get_model(model, base_url=base_url, **model_args)
    except Exception as e:  # noqa: BLE001 (providers raise many kinds; all mean "cannot use this model")
        msg = " ".join(re.sub(r"\[/?[a-z ]+\]", "", str(e)).split())
        key = re.search(r"\bNo ([A-Z][A-Z0-9_]*_API_KEY)\b", msg)
        if key:  # inspect names every variable its provider could read (Azure, Entra ID for openai/...)
            msg = f"no API key: set {key[1]}" + (
                f" (a local OpenAI-compatible server that checks no key takes any value, e.g. {key[1]}=none)"
                if base_url
                else ""
            )
        raise click.ClickException(f"{option} {model}: {msg or type(e).__name__}") from None
    refused = responses_refusal(model, base_url, getattr(made, "api", None))
    if refused:
        raise click.ClickException(f"{option} {model}: {refused}")


def check_can_create(path: Path, option: str) -> None:
    """Refuse, before any work, a ``path`` that could not be written later: its nearest existing
    folder (``path`` itself when it exists) must take a new file. The probe (a temporary folder)
    is removed at once, so nothing is left by the check or by a refusal.

    Raises:
        click.ClickException: a file stands in the way, or the folder refuses writes (``/proc``,
            a read-only disk, no permission); the message names ``option`` and the folder.
    """
    path = Path(path)
    base = path
    while not base.exists() and base != base.parent:
        base = base.parent
    if not base.is_dir():
        raise click.ClickException(f"{option} {path}: {base} is a file, not a folder")
    try:
        probe = tempfile.mkdtemp(prefix=".write-check-", dir=base)
        os.rmdir(probe)
    except OSError as e:
        raise click.ClickException(f"{option} {path}: cannot write under {base} ({e.strerror or e})") from None


def check_writable_dir(path: Path, option: str, *, lock: bool = True) -> None:
    """Create ``path`` if needed, make sure files can be written in it and, with
    ``lock``, hold the run lock on it (:func:`proagent.io.folder_lock`) until the
    running command ends, so a second proagent process writing there is refused at once;
    a command refused later leaves no lock file, and no folder this call created, behind.

    Raises:
        click.ClickException: the path is a file, or the folder cannot be written.
        proagent.io.FolderBusy: another proagent process is using it (the message names
            ``option`` and its pid; ``cli/_errors.py`` prints it as a data error, exit 1).
    """
    from ..io import folder_lock

    missing = [d for d in (path, *path.parents) if not d.exists()]  # removed again if the run leaves them empty
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-check-", dir=path)
        os.close(fd)
        os.unlink(probe)
        ctx = click.get_current_context(silent=True)
        if lock and ctx is not None:
            ctx.with_resource(folder_lock(path, tidy=missing, option=option))  # FolderBusy names the option
    except OSError as e:
        raise click.ClickException(f"{option} {path}: cannot write there ({e.strerror or e})") from None


def run_eval_set(
    task: Any,
    log_dir: Path,
    model: str,
    *,
    model_base_url: str | None = None,
    model_args: dict[str, Any] | None = None,
    limit: int | None = None,
    display: str | None = None,
    model_roles: dict[str, Any] | None = None,
    on_start: Callable[[], None] | None = None,
) -> Any:
    """:func:`proagent.bench.running.run_task` for commands: a run that did not
    finish is one line (:class:`click.ClickException`, exit 3) saying how to resume,
    naming ``--log-dir`` where another folder is the way out; an interrupted one
    (Ctrl-C) exits with status 130 (:func:`proagent.cli._errors.click_error`).
    ``on_start`` (e.g. printing the command's header) runs once the log folder is accepted."""
    from ..bench.running import run_task

    try:
        return run_task(
            task,
            log_dir,
            model,
            model_base_url=model_base_url,
            model_args=model_args,
            limit=limit,
            display=display,
            model_roles=model_roles,
            on_start=on_start,
        )
    except RunError as e:
        raise click_error(e, folder_option="--log-dir") from None


def window_seconds(text: str, option: str = "--window", *, what: str | None = "window") -> float:
    """A context window or other duration option (``5m``, ``90s``, ``300``) in seconds, 1 s .. 24 h;
    ``what`` names it in the message (:func:`proagent.bench.samples.parse_window`).

    Raises:
        proagent.errors.UsageError: not a duration in that range (naming ``option``; exit 2,
            printed by :mod:`proagent.cli._errors` as click's ``Invalid value for '--window'``).
    """
    from ..bench.samples import parse_window

    return parse_window(text, what=what, option=option)
