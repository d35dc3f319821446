"""Where the six public ProactiveBench dev sessions are: ``<root>/shared/data/proactivebench``
beside the checkout (the first folder above this file that holds it), else ``/work/shared``;
``None`` when neither is present (tests using it skip)."""

from __future__ import annotations

from pathlib import Path

DEV: Path | None = None
for _p in Path(__file__).resolve().parents:
    if (_p / "shared" / "data" / "proactivebench" / "code_13.json").is_file():
        DEV = _p / "shared" / "data" / "proactivebench"
        break
if DEV is None and Path("/work/shared/data/proactivebench").is_dir():
    DEV = Path("/work/shared/data/proactivebench")
