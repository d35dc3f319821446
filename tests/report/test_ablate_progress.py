"""``proagent ablate`` shows how far each cell got (issue 36: a cell was silent until it ended):
piped, a line per sample here (the interval set to 0) with the time elapsed and an estimate."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from memory_fixtures import write_sessions

from proagent.cli import _progress, cli

pytestmark = pytest.mark.usefixtures("in_tmp_path")  # working folder and caches in tmp_path (conftest)


def test_ablate_cell_prints_sample_progress_when_piped(tmp_path, monkeypatch):
    monkeypatch.setattr(_progress, "PLAIN_EVERY_SECONDS", 0.0)
    data = write_sessions(tmp_path / "sessions", n=10)
    r = CliRunner().invoke(
        cli,
        [
            "ablate",
            "--data",
            str(data),
            "--methods",
            "zero-shot",
            "--memory",
            "none",
            "--windows",
            "5m",
            "--models",
            "mockllm/model",
            "--limit",
            "3",
            "--out",
            str(tmp_path / "a"),
        ],
    )
    assert r.exit_code == 0, (r.output, r.exception)
    lines = [ln.strip() for ln in r.output.splitlines() if ln.strip().startswith("cell: ")]
    assert [ln.split(",")[0] for ln in lines] == [
        "cell: 1 of 3 samples",
        "cell: 2 of 3 samples",
        "cell: 3 of 3 samples",
    ]
    assert all(" elapsed" in ln for ln in lines) and " left" in lines[0] and " left" not in lines[-1]
    out = r.output  # inside the cell: after its grid line, before its closing line
    assert out.index("[1/1]") < out.index("  cell: 1 of 3") < out.index("1 of 1 done")
