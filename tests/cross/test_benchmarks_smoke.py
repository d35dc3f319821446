"""Benchmarks cannot break unseen: each script's smallest setting runs here (issue 38: scale.py had
failed since the synth manifest became a typed record, and nothing ran it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def test_scale_smoke_generates_then_reuses(tmp_path: Path) -> None:
    for n in (1, 2):  # the second run reads the kept synth.json (the path that failed)
        r = subprocess.run([sys.executable, str(BENCH / "scale.py"), "--sizes", "smoke", "--keep", str(tmp_path / "dbs"),
                            "--json", str(tmp_path / f"r{n}.json")], capture_output=True, text=True, timeout=300,
                           check=False)
        assert r.returncode == 0, r.stderr[-2000:]
    rows = [json.loads((tmp_path / f"r{n}.json").read_text()) for n in (1, 2)]
    text = json.dumps(rows)
    assert '"samples"' in text and '"events"' in text


def test_scale_smoke_beside_a_revision_from_before_the_typed_manifest(tmp_path: Path) -> None:
    # 0a30da7 predates proagent.synth.records: its child must still read the databases this tree wrote
    r = subprocess.run([sys.executable, str(BENCH / "scale.py"), "--sizes", "smoke", "--keep", str(tmp_path / "dbs"),
                        "--baseline-rev", "0a30da7", "--json", str(tmp_path / "r.json")], capture_output=True, text=True,
                       timeout=600, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    run = json.loads((tmp_path / "r.json").read_text())
    codes = [row["code"] for row in run["rows"]]
    assert codes[:2] == ["this tree", "0a30da7"] and [row["baseline"] for row in run["rows"][:2]] == [False, True]
    assert run["rows"][0]["same"] == run["rows"][1]["same"] == "yes" and run["conditions"]
