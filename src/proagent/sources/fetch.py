"""Fetch public data sets from their upstream source (the only code that uses the network).

``proagent data fetch proactivebench`` downloads the six public development
sessions of ProactiveBench from the THUNLP ProactiveAgent repository
(Apache-2.0) and checks each file's SHA-256; ``--from DIR`` copies them from an
offline mirror instead, with the same checks. Files are written to a temporary
name and renamed only when their checksum matches, so a failed fetch never
leaves a half-written file or replaces a good one.
"""

from __future__ import annotations

import hashlib
import shutil
import urllib.request
from pathlib import Path

from ..io import write_atomic

__all__ = ["PROACTIVEBENCH_FILES", "PROACTIVEBENCH_URL", "FetchError", "fetch_proactivebench"]

PROACTIVEBENCH_URL = "https://raw.githubusercontent.com/thunlp/ProactiveAgent/main/dataset/test_data/{name}"
"""Upstream location of one session file."""

PROACTIVEBENCH_FILES: dict[str, str] = {
    "code_11.json": "c5c4f0635a207df8248a190760c23af3f23096fc67edaa9e4ec15b934e99bdd7",
    "code_12.json": "416028bc0fb747b3322592950f718933dac81ed8cae05aa53d71f972ebaf62aa",
    "code_13.json": "cd6fb734b318272a2f711648b97f0602bf57c237903d8605db2c967f6200214e",
    "writing_11.json": "8033aeef485660a37e36974ff1706c436a02b45db9376d553df5e125882ff074",
    "writing_12.json": "8d94eb9a5e39a94e129d3ad53b49e1ff2bead571d07fcb04b1c489abc74d0667",
    "writing_13.json": "35440bb20735c510ec2301a1968472a305dfbff99b75ef2cb8204f754683bb75",
}
"""The public development sessions (112 events, 38 positive) and their SHA-256."""


class FetchError(RuntimeError):
    """A download failed or a file did not match its checksum."""


def _install(data: bytes, name: str, expected: str, dest: Path, source: str) -> Path:
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected:
        raise FetchError(f"{source}: SHA-256 {digest} does not match the expected {expected}")
    return write_atomic(dest / name, data)  # public data: 0644 like any downloaded file


def fetch_proactivebench(dest: str | Path, source_dir: str | Path | None = None, timeout: float = 60.0) -> list[Path]:
    """Download (or copy from ``source_dir``) the ProactiveBench dev sessions.

    Files already present with the right checksum are kept as they are.

    Args:
        dest: Folder to write ``*.json`` into (created if needed).
        source_dir: An offline mirror holding the same file names; no network used.
        timeout: Per-request timeout in seconds.

    Returns:
        The paths of the six session files.

    Raises:
        FetchError: a file is missing from the mirror, a download fails, or a
            checksum does not match (nothing is written for that file).
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for name, sha in PROACTIVEBENCH_FILES.items():
        target = dest / name
        if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == sha:
            out.append(target)
            continue
        if source_dir is not None:
            src = Path(source_dir) / name
            if not src.is_file():
                raise FetchError(f"{src}: missing from the offline mirror")
            data = src.read_bytes()
            where = str(src)
        else:
            url = PROACTIVEBENCH_URL.format(name=name)
            try:
                with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 (fixed https URL)
                    data = r.read()
            except OSError as e:
                raise FetchError(f"{url}: download failed ({e}); use --from DIR with an offline copy") from e
            where = url
        out.append(_install(data, name, sha, dest, where))
    license_src = Path(source_dir) / "LICENSE" if source_dir else None
    if license_src is not None and license_src.is_file() and not (dest / "LICENSE").exists():
        shutil.copyfile(license_src, dest / "LICENSE")
    return out
