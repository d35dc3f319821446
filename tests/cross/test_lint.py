"""The static checks of scripts/lint.sh hold on the tree (issue 38 item 7): ``ruff check`` with
pyproject.toml's rules and ``ruff format --check``, so a lint or layout failure shows in the test
suite too, not only in CI."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_ruff_rules_hold_on_the_tree() -> None:
    rules = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["ruff"]["lint"]["select"]
    assert {"E9", "F"} <= set(rules), rules  # syntax errors, undefined names, unused imports at least
    run = _ruff("src", "tests", "benchmarks")
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_tree_is_in_ruff_format_and_import_order(tmp_path: Path) -> None:
    """``ruff format --check`` holds on the tree, and the guard fails on a file out of layout or order."""
    run = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "--no-cache", "src", "tests", "benchmarks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nimport os\n\nprint(os.sep,sys.argv)\n")
    cfg = ("--config", str(ROOT / "pyproject.toml"))
    fmt = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "--no-cache", *cfg, str(bad)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert fmt.returncode == 1
    order = _ruff(*cfg, "--output-format", "concise", str(bad), cwd=tmp_path)
    assert order.returncode == 1 and "I001" in order.stdout


def test_ruff_with_our_rules_finds_an_undefined_name_and_an_unused_import(tmp_path: Path) -> None:
    """The guard itself: the configured rules do fail on the bugs they are there for."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\n\ndef f():\n    return undefined_name\n")
    run = _ruff("--config", str(ROOT / "pyproject.toml"), "--output-format", "concise", str(bad), cwd=tmp_path)
    assert run.returncode == 1
    assert "F401" in run.stdout and "F821" in run.stdout


def _mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--config-file", str(ROOT / "pyproject.toml"), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.skipif(
    os.environ.get("PROAGENT_LINT_PASSED") == "1",
    reason="scripts/test.sh --all ran scripts/lint.sh first: the same mypy over [tool.mypy] passed (about 20 s)",
)
def test_mypy_holds_on_its_modules() -> None:
    """mypy over pyproject's [tool.mypy] files. A plain pytest run checks it; ``scripts/test.sh --all``
    (and CI) skips it here because scripts/lint.sh has just run the same mypy and passed."""
    files = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["mypy"]["files"]
    assert "src/proagent/errors.py" in files and all((ROOT / f).is_file() for f in files), files
    run = _mypy()
    assert run.returncode == 0, run.stdout + run.stderr


def test_mypy_with_our_settings_refuses_an_untyped_def_and_a_wrong_return(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('def f(x):\n    return x\n\n\ndef g() -> int:\n    return "s"\n')
    run = _mypy(str(bad))
    assert run.returncode == 1 and "no-untyped-def" in run.stdout and "return-value" in run.stdout, run.stdout
