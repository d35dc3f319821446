#!/usr/bin/env bash
# Set up (if needed) and run the test suite, including the small real-model subset.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. .venv/bin/activate
python -m pytest -q "$@"
