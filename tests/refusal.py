"""Checks shared by the refusal tests: a refused command prints one ``Error:`` line naming
the file or option, exits with its documented code and creates or changes nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path

from click.testing import CliRunner, Result

from proagent.cli import cli

__all__ = ["one_error", "refused", "tree"]


def tree(root: Path) -> dict[str, str]:
    """Every path under ``root`` (folders too) -> its content hash ('dir' for a folder)."""
    return {
        str(p.relative_to(root)): "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
    }


def one_error(r: Result, exit_code: int, *needles: str) -> str:
    """``r`` exited with ``exit_code`` printing no traceback and exactly one ``Error:`` line
    that holds every one of ``needles``; returns that line."""
    assert r.exit_code == exit_code, (r.exit_code, r.output, r.exception)
    assert "Traceback" not in r.output
    errors = [line for line in r.output.splitlines() if line.startswith("Error")]
    assert len(errors) == 1, r.output
    for n in needles:
        assert n in errors[0], (n, r.output)
    return errors[0]


def refused(
    ws: Path, argv: list[str], code: int, needle: str, *, outside: Path | None = None, quiet: bool = True
) -> str:
    """Run ``proagent argv``: :func:`one_error` with ``needle``, a clean exit (no exception
    escaping), nothing under ``ws`` created or changed and, with ``quiet``, nothing printed
    but click's usage lines beside the Error line; ``outside`` must not have been created."""
    before = tree(ws)
    r = CliRunner().invoke(cli, argv)
    line = one_error(r, code, needle)
    assert isinstance(r.exception, SystemExit), repr(r.exception)
    if quiet:
        others = [x for x in r.output.splitlines() if x.strip() and not x.startswith(("Error", "Usage:", "Try "))]
        assert not others, f"printed before refusing: {others}"
    after = tree(ws)
    assert after == before, sorted(set(after) ^ set(before))
    if outside is not None:
        assert not outside.exists(), f"{outside} was created"
    return line
