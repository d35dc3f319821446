#!/usr/bin/env bash
# Set up (if needed) and run the test suite on two pytest-xdist workers (whole files per worker,
# longest files first: tests/conftest.py, tests/test_seconds.json).
#   scripts/test.sh          the suite a developer runs: everything but the long tests
#                            (tests/conftest.py LONG: the desktop day, the soak, the Ray cluster
#                            tests, the real training runs), with the small real-model subset
#   scripts/test.sh --all    everything, as CI runs it (.ci/run), after the static checks
#                            (scripts/lint.sh: ruff, mypy)
# Extra arguments go to pytest: scripts/test.sh -n 0 runs in one process; scripts/test.sh -m "not slow"
# leaves out the real-model and desktop subset too.
set -euo pipefail
cd "$(dirname "$0")/.."
skip=(--skip-long)
lint=0
if [ "${1:-}" = "--all" ]; then
    skip=()
    lint=1
    shift
fi
scripts/setup.sh
. .venv/bin/activate
if [ "$lint" = 1 ]; then scripts/lint.sh; fi
python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder ${skip[@]+"${skip[@]}"} "$@"
