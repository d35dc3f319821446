"""tests/system.py's require_module: a test module's optional dependency checked without importing it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from system import require_module

HERE = Path(__file__).resolve().parent


def test_a_missing_module_or_package_skips() -> None:
    for name in ("proagent_no_such_module", "proagent_no_such_package.sub"):
        with pytest.raises(pytest.skip.Exception, match=name):
            require_module(name)


def test_an_installed_module_is_found_and_not_imported() -> None:
    """presidio_analyzer pulls in torch, transformers and spaCy when imported (6 CPU s); found, it is not."""
    require_module("presidio_analyzer")
    code = (
        f"import sys; sys.path.insert(0, {str(HERE)!r}); from system import require_module; "
        "require_module('presidio_analyzer', 'json'); print('presidio_analyzer' in sys.modules, 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]
