#!/usr/bin/env bash
# Set up (if needed) and run the test suite, including the small real-model subset, on two
# pytest-xdist workers (whole files per worker; the files holding slow tests start first, see
# tests/conftest.py). Extra arguments go to pytest: scripts/test.sh -n 0 runs in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. .venv/bin/activate
python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder "$@"
