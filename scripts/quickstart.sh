#!/usr/bin/env bash
# Quick start: set up, then run When/How-to-Assist on the real ProactiveBench dev
# sessions with the bundled default model (Qwen2.5-Coder-1.5B, in process, offline).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
phase() { echo "quick start: $1 done after $(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s" >&2; }
scripts/setup.sh --qwen
phase "setup"
. .venv/bin/activate
if [ -d ../shared/data/proactivebench ]; then
  proagent data fetch proactivebench --from ../shared/data/proactivebench --dest data/proactivebench
else
  proagent data fetch proactivebench --dest data/proactivebench
fi
proagent eval --data data/proactivebench --method zero-shot --model local/qwen2.5-coder-1.5b "$@"
phase "first eval"
# the learned When-to-Assist decider: trained on the train split (earlier half of each session),
# it decides When on the test split; the model is asked How only at its Yes moments, the same
# prompts as in the first eval, so the local model's answer cache answers them (no model run)
proagent train when --data data/proactivebench --out deciders/proactivebench-dev
proagent eval --data data/proactivebench --method zero-shot --model local/qwen2.5-coder-1.5b \
    --decider deciders/proactivebench-dev "$@"
phase "second eval with the decider"
