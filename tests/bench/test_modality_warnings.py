"""``eval --modality image`` says when it cannot do what it says (issue 36): a text-only model
would see no screen, and moments without a screenshot file keep their OCR text."""

from __future__ import annotations

from types import SimpleNamespace

from click.testing import CliRunner
from memory_fixtures import write_sessions

from proagent.bench.tasks import image_modality_warnings
from proagent.cli import cli


def _task(*shown: str) -> SimpleNamespace:
    return SimpleNamespace(dataset=[SimpleNamespace(metadata={"modality": m}) for m in shown])


def test_a_text_only_model_with_screenshots():
    (line,) = image_modality_warnings(_task("image", "image"), "local/qwen2.5-coder-1.5b")
    assert "local/qwen2.5-coder-1.5b, a text-only model" in line and "at 2 of 2 moments" in line


def test_a_vision_model_some_moments_without_a_screenshot():
    (line,) = image_modality_warnings(_task("image", "text", "text"), "openai-api/mock/vision")
    assert line.startswith("--modality image: 2 of 3 moments have no screenshot file")
    assert image_modality_warnings(_task("image", "image"), "openai/gpt-4o") == []


def test_eval_without_screenshots_says_so(tmp_path):
    data = write_sessions(tmp_path / "sessions", n=2)
    r = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(data),
            "--model",
            "mockllm/model",
            "--modality",
            "image",
            "--limit",
            "2",
            "--log-dir",
            str(tmp_path / "run"),
            "--display",
            "none",
        ],
    )
    assert r.exit_code == 0, r.output
    warned = [ln for ln in r.output.splitlines() if ln.startswith("warning: --modality image")]
    assert len(warned) == 1 and "none of the" in warned[0] and "as with --modality text" in warned[0], r.output
    r = CliRunner().invoke(
        cli,
        [
            "eval",
            "--data",
            str(data),
            "--model",
            "mockllm/model",
            "--limit",
            "2",
            "--log-dir",
            str(tmp_path / "run-text"),
            "--display",
            "none",
        ],
    )
    assert r.exit_code == 0 and "--modality" not in r.output
