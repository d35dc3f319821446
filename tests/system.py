"""System programs that some tests drive (Xvfb, a window manager, Chromium, ...).

They are Debian packages listed in ``scripts/system-packages.txt`` and installed by
``scripts/system-packages.sh`` (which ``.ci/run`` calls as root). A test that needs one calls
:func:`require_binary`: without it the test is skipped on a developer's machine, but under
``CI=true`` it fails, so CI can never pass by silently skipping what it was meant to run.
"""

from __future__ import annotations

import os
import shutil

import pytest

__all__ = ["baseline_revision", "require_binary", "require_local_model", "require_module"]


def require_binary(*names: str) -> dict[str, str]:
    """Paths of the programs ``names``; skip (or fail under ``CI=true``) when one is missing."""
    found = {n: shutil.which(n) for n in names}
    missing = [n for n, p in found.items() if p is None]
    if missing:
        msg = f"needs {', '.join(missing)} (scripts/system-packages.sh installs it)"
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(msg)
        pytest.skip(msg)
    return {n: p for n, p in found.items() if p is not None}


def require_local_model(model: str) -> str:
    """The GGUF path of the bundled local model ``model`` (``local/qwen2.5-coder-1.5b``); skip (or
    fail under ``CI=true``, as :func:`require_binary`) when it is not installed: the default model's
    parts come with ``scripts/setup.sh --qwen`` (or ``proagent models prepare NAME``)."""
    from proagent.models.catalog import resolve_gguf

    try:
        return str(resolve_gguf(model.removeprefix("local/")))
    except (OSError, ValueError) as e:  # not installed, or parts that do not assemble
        msg = f"needs the local model {model} (scripts/setup.sh --qwen installs it): {e}"
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(msg)
        pytest.skip(msg)


def require_module(*names: str) -> None:
    """Skip the calling module (or test) unless each Python module of ``names`` is installed, found
    without importing it (``importlib.util.find_spec``): ``pytest.importorskip`` imports it, and at
    collection every xdist worker would pay for that, whether or not it runs the file's tests
    (``presidio_analyzer`` pulls in torch, transformers and spaCy: 6 CPU s)."""
    import importlib.util

    for name in names:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:  # a dotted name whose parent is missing
            found = False
        if not found:
            pytest.skip(f"needs the Python module {name}", allow_module_level=True)


def baseline_revision(wanted: str, *, fallback: str | None = "HEAD") -> str:
    """A git revision of this repository for a benchmark that runs another revision's code beside
    this tree (``--baseline-rev``, ``git archive``): ``wanted`` where this checkout holds it, else
    ``fallback`` (``HEAD``: a shallow clone has only its own commit); skipped when neither is there
    (``fallback=None``: a test whose assertions are about ``wanted``'s code itself)."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for rev in (wanted, fallback):
        if rev is None:
            continue
        r = subprocess.run(
            ["git", "-C", str(root), "cat-file", "-e", f"{rev}^{{commit}}"], capture_output=True, check=False
        )
        if r.returncode == 0:
            return rev
    pytest.skip(f"this checkout does not hold git revision {wanted} (a shallow clone?)")
