#!/usr/bin/env bash
# The static checks CI runs (scripts/test.sh --all, so .ci/run): ruff's lint rules of
# pyproject.toml [tool.ruff] and its formatter's check (`ruff format src tests benchmarks` fixes
# both layout and, with `ruff check --fix`, import order) over src, tests, benchmarks and scripts, then mypy over the packages listed in
# [tool.mypy] (those typed cleanly so far). Both are pinned in the dev extra. Run it alone:
#   scripts/lint.sh            (after scripts/setup.sh; uses .venv when there is one)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python; fi
"$PY" -m ruff check --quiet src tests benchmarks scripts
"$PY" -m ruff format --check --quiet src tests benchmarks scripts
echo "ruff: clean (lint and format)"
"$PY" -m mypy --no-error-summary
echo "mypy: clean ($("$PY" -c 'import tomllib; print(len(tomllib.load(open("pyproject.toml", "rb"))["tool"]["mypy"]["files"]))') files of [tool.mypy])"
