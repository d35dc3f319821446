#!/usr/bin/env bash
# Set up (if needed) and run the test suite on pytest-xdist workers (whole files per worker,
# longest files first: tests/conftest.py, tests/test_seconds.json).
#   scripts/test.sh          the suite a developer runs: everything but the long tests
#                            (tests/conftest.py LONG, and every test measured at LONG_SECONDS or more:
#                            the desktop day, the soak, the Ray cluster, real training runs, the
#                            benchmark smoke runs), within five minutes on two cores
#   scripts/test.sh --all    everything, as CI runs it (.ci/run), after the static checks
#                            (scripts/lint.sh: ruff, mypy)
# Extra arguments go to pytest: scripts/test.sh -n 0 runs in one process; scripts/test.sh -m "not slow"
# leaves out the real-model and desktop subset too.
# At the end it prints its wall time and the five slowest files (scripts/test_times.py); a run of the
# whole suite (no extra arguments) then checks the developer suite's time against its budget
# (tests/conftest.py DEV_BUDGET_S) and fails naming the files that grew.
set -euo pipefail
cd "$(dirname "$0")/.."
skip=(--skip-long)
lint=0
# Two workers for the developer suite (two cores, CPU-bound tests). Three for --all: its long set holds
# stretches of real time in which a worker's core idles (the scripted desktop day plays 140 s of a
# desktop, the Ray cluster starts and waits on its nodes, capture waits for the next screenshot); a
# third worker fills them (CI rehearsal: see docs/contributing.md).
workers=2
if [ "${1:-}" = "--all" ]; then
    skip=()
    lint=1
    workers=3
    shift
fi
scripts/setup.sh
. .venv/bin/activate
if [ "$lint" = 1 ]; then
    scripts/lint.sh
    # the suite's own mypy test (tests/cross/test_lint.py) would repeat the same 20 s check: it skips
    export PROAGENT_LINT_PASSED=1
fi
times=${PROAGENT_TEST_TIMES:-}
if [ -z "$times" ]; then
    times=$(mktemp "${TMPDIR:-/tmp}/proagent-test-times.XXXXXX")
    trap 'rm -f "$times"' EXIT
fi
export PROAGENT_TEST_TIMES="$times"
# Two workers on two cores: a second OpenMP/BLAS/torch thread per process only spin-waits beside the other
# worker (one SmolLM2 forward pass: 4.1 CPU s with one thread vs 11.3 with two at load 16), and every
# subprocess a test starts inherits this. A caller's own setting wins.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
# RapidOCR's onnxruntime ignores OMP_NUM_THREADS (one intra-op thread per core by default): one thread
# too (proagent.ocr.OCR_THREADS_ENV; benchmarks/privacy.py --smoke 34.7 -> 29.3 CPU s with it).
export PROAGENT_OCR_THREADS="${PROAGENT_OCR_THREADS:-1}"
whole=$#
start=$SECONDS
rc=0
python -m pytest -q -n "$workers" --dist loadfile --no-loadscope-reorder ${skip[@]+"${skip[@]}"} "$@" || rc=$?
took=$((SECONDS - start))
echo "scripts/test.sh: $((took / 60)) min $((took % 60)) s wall; the slowest files:"
if [ -s "$times" ]; then
    budget=()
    if [ "$whole" = 0 ]; then
        budget=(--budget "$(python -c 'import sys; sys.path.insert(0, "tests"); import conftest; print(conftest.DEV_BUDGET_S)')")
    fi
    python scripts/test_times.py "$times" --top 5 --workers "$workers" ${budget[@]+"${budget[@]}"} || { [ "$rc" != 0 ] || rc=1; }
fi
exit "$rc"
