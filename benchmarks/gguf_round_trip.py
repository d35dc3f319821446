"""GGUF -> transformers -> GGUF with no training: does llama.cpp answer as with the original?

Loads a bundled GGUF with transformers' GGUF loader (dequantised to 32-bit floats),
writes it back with :func:`proagent.train._gguf_export.export_gguf` in each weight
type, and runs the original and every copy in llama.cpp (the local provider's
engine) on one prompt at temperature 0: greedy answer, first-token top-5
log-probabilities, file size and export time, side by side.

    python benchmarks/gguf_round_trip.py [--model smollm2-135m] [--types f16,f32,q8_0] [--threads 2] [--json out.json] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_note, parse_args, run_main, write_result  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--types", default="f16,f32,q8_0")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--prompt", default="What is the capital of France? Answer in one sentence.")
    p.add_argument("--json", type=Path, default=None, help="write the run here (docs/results/gguf_round_trip.json)")
    p.add_argument(
        "--smoke", action="store_true", help="the smallest setting (CI): SmolLM2, one copy (q8_0), one thread"
    )
    # one llama.cpp thread under --smoke: the test suite runs two workers on two cores (issue 45)
    a = parse_args(p, smoke={"model": 'smollm2-135m', "types": 'q8_0', "threads": 1}, positive=("threads",))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    line, machine = machine_note()
    print(line)
    rows = []

    from proagent.models.local import _engine
    from proagent.train._gguf_export import export_gguf
    from proagent.train.finetune import load_base

    t = time.monotonic()
    model, _, src = load_base(a.model)
    print(f"loaded {src.name} in transformers: {time.monotonic() - t:.1f} s")
    req = {
        "messages": [{"role": "user", "content": a.prompt}],
        "max_tokens": 24,
        "temperature": 0.0,
        "logprobs": True,
        "top_logprobs": 5,
        "cache_prompt": False,
    }
    with tempfile.TemporaryDirectory() as tmp:
        files = [("original", Path(src), None)]
        for dtype in a.types.split(","):
            t = time.monotonic()
            out = Path(tmp) / f"copy-{dtype}.gguf"
            export_gguf(model, src, out, dtype=dtype)
            files.append((dtype, out, time.monotonic() - t))
        ref = None
        for name, path, secs in files:
            r = _engine(str(path), 512, a.threads).chat(dict(req))["choices"][0]
            top = [(x["token"], x["logprob"]) for x in r["logprobs"]["content"][0]["top_logprobs"]]
            ref = ref or dict(top)
            diff = max((abs(lp - ref[tok]) for tok, lp in top if tok in ref), default=float("nan"))
            print(
                f"{name:<9} {path.stat().st_size / 1e6:7.1f} MB  export {'-' if secs is None else f'{secs:.1f} s':>7}  "
                f"answer {r['message']['content']!r}"
            )
            print(
                f"{'':<9} top-5 first token: "
                + ", ".join(f"{tok!r} {lp:.3f}" for tok, lp in top)
                + (f"  (max |diff| vs original {diff:.3f})" if name != "original" else "")
            )
            rows.append(
                {
                    "file": name,
                    "mb": path.stat().st_size / 1e6,
                    "export_s": secs,
                    "answer": r["message"]["content"],
                    "diff": None if name == "original" else diff,
                    "baseline": name == "original",
                }
            )
    write_result(
        a.json,
        benchmark="gguf_round_trip",
        rows=rows,
        machine=machine,
        columns=[
            ("file", "weights", ""),
            ("mb", "MB", ".1f"),
            ("export_s", "export s", ".1f"),
            ("answer", "greedy answer", ""),
            ("diff", "max abs diff, first-token top-5 logprob", ".3f"),
        ],
        baseline=f"the original GGUF of {a.model} in the same llama.cpp engine, same prompt, temperature 0",
        note=f"prompt: {a.prompt!r}; {a.threads} llama.cpp threads",
        conditions="" if a.types == "f16,f32,q8_0" else f"--types {a.types} (the full run: f16,f32,q8_0)",
    )


if __name__ == "__main__":
    run_main(main)
