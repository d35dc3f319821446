"""Fetch public data sets from their upstream source (the only code that uses the network).

``proagent data fetch proactivebench`` downloads the six public development
sessions of ProactiveBench from the THUNLP ProactiveAgent repository
(Apache-2.0) and checks each file's SHA-256; ``--from DIR`` copies them from an
offline mirror instead, with the same checks. ``proagent data fetch
proactivebench-synthetic`` downloads ProactiveBench's reward-data traces at a
pinned commit, checks both upstream files, keeps only the synthetic traces
(relative ``Day N`` times; the real-session traces are dropped, see
:mod:`proagent.sources.proactivebench_synthetic`) with their upstream split tagged,
and checks the result against its own SHA-256. Files are written to a temporary
name and renamed only when their checksum matches, so a failed fetch never
leaves a half-written file or replaces a good one.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import urllib.request
from pathlib import Path

from ..errors import DataError
from ..io import write_atomic
from .proactivebench_synthetic import relative_time

__all__ = [
    "PROACTIVEBENCH_FILES",
    "PROACTIVEBENCH_URL",
    "SYNTHETIC_FILE",
    "SYNTHETIC_SHA256",
    "SYNTHETIC_UPSTREAM",
    "SYNTHETIC_URL",
    "FetchError",
    "fetch_proactivebench",
    "fetch_proactivebench_synthetic",
    "synthetic_only",
]

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


class FetchError(DataError):
    """A download failed or a file did not match its checksum (``path``: the address or file)."""


def _download(url: str, timeout: float) -> bytes:
    """The body at ``url`` (a fixed https address of the upstream repository).

    Raises:
        FetchError: the download failed (the message suggests ``--from`` with an offline copy).
    """
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 (fixed https URL)
            return r.read()
    except OSError as e:
        raise FetchError(url, f"download failed ({e}); use --from DIR with an offline copy") from e


def _install(data: bytes, name: str, expected: str, dest: Path, source: str) -> Path:
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected:
        raise FetchError(source, f"SHA-256 {digest} does not match the expected {expected}")
    dest.mkdir(parents=True, exist_ok=True)  # only once something verified is to be written
    return write_atomic(dest / name, data)  # public data: 0644 like any downloaded file


def _check_dest(dest: str | Path) -> Path:
    """``dest`` as a path, refused when it exists and is not a folder; it is created only
    when the first verified file is written, so a failed fetch leaves no empty folder.

    Raises:
        NotADirectoryError: ``dest`` (or the nearest existing folder above it) is a file.
        PermissionError: that folder cannot be written.
    """
    dest = Path(dest)
    here = dest
    while not here.exists() and here != here.parent:
        here = here.parent
    if here.exists() and not here.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(here))
    if here.exists() and not os.access(here, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, "permission denied", str(here))
    return dest


def fetch_proactivebench(dest: str | Path, source_dir: str | Path | None = None, timeout: float = 60.0) -> list[Path]:
    """Download (or copy from ``source_dir``) the ProactiveBench dev sessions.

    Files already present with the right checksum are kept as they are.

    Args:
        dest: Folder to write ``*.json`` into (created when the first file is written).
        source_dir: An offline mirror holding the same file names; no network used.
        timeout: Per-request timeout in seconds.

    Returns:
        The paths of the six session files.

    Raises:
        FetchError: a file is missing from the mirror, a download fails, or a
            checksum does not match (nothing is written for that file).
    """
    dest = _check_dest(dest)
    out = []
    for name, sha in PROACTIVEBENCH_FILES.items():
        target = dest / name
        if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == sha:
            out.append(target)
            continue
        if source_dir is not None:
            src = Path(source_dir) / name
            if not src.is_file():
                raise FetchError(src, "missing from the offline mirror")
            data = src.read_bytes()
            where = str(src)
        else:
            where = PROACTIVEBENCH_URL.format(name=name)
            data = _download(where, timeout)
        out.append(_install(data, name, sha, dest, where))
    license_src = Path(source_dir) / "LICENSE" if source_dir else None
    if license_src is not None and license_src.is_file() and not (dest / "LICENSE").exists():
        shutil.copyfile(license_src, dest / "LICENSE")
    return out


SYNTHETIC_URL = (
    "https://raw.githubusercontent.com/thunlp/ProactiveAgent/"
    "86383616ee530e9bcd1e9fe2269703ef3e3d8478/dataset/reward_data/{name}"
)
"""Upstream location of one reward-data file, at the pinned commit."""

SYNTHETIC_UPSTREAM: dict[str, tuple[str, str]] = {
    "train": ("train_data.jsonl", "e3a7303c469f5a6de4ca28cbeea31adc7232353767fd29de87c914bb4e5b0c53"),
    "test": ("test_data.jsonl", "1ce3c041f6ed5e4de1122ef18e71fa151b340b23247737ee7991b00c83978224"),
}
"""Upstream split -> (file name, SHA-256): 1,629 and 120 traces, synthetic and real-session mixed."""

SYNTHETIC_FILE = "synthetic_traces.jsonl"
"""The derived file: synthetic traces only, one per line, ``split`` first."""

SYNTHETIC_SHA256 = "9caf84deca7044690bf123576faff2cc26839c463fbc357d2e391b4341abdf30"
"""SHA-256 of :data:`SYNTHETIC_FILE` (427 traces: 399 train, 28 test)."""


def synthetic_only(upstream: dict[str, bytes]) -> tuple[bytes, dict[str, int]]:
    """The synthetic traces of the upstream reward-data files, in order, each line
    ``{"split": <upstream split>, **trace}`` (UTF-8, not ASCII-escaped).

    Args:
        upstream: split name (``train``, ``test``) -> that file's bytes.

    Returns:
        (the derived file's bytes, counts ``{"synthetic": n, "real-session": m}``
        where m traces were dropped).

    Raises:
        FetchError: a line is not JSON or has no observation times.
    """
    import json

    lines, counts = [], {"synthetic": 0, "real-session": 0}
    for split, data in upstream.items():
        for no, line in enumerate(data.decode("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
                times = [str(o["time"]) for o in d["obs"]]
            except (json.JSONDecodeError, KeyError, TypeError) as e:
                raise FetchError(f"{split}_data.jsonl line {no}", f"not a reward trace ({e})") from None
            if times and all(relative_time(t) is not None for t in times):
                counts["synthetic"] += 1
                lines.append(json.dumps({"split": split, **d}, ensure_ascii=False) + "\n")
            else:
                counts["real-session"] += 1
    return "".join(lines).encode("utf-8"), counts


def fetch_proactivebench_synthetic(
    dest: str | Path, source_dir: str | Path | None = None, timeout: float = 60.0
) -> tuple[Path, dict[str, int]]:
    """Download (or copy from ``source_dir``) ProactiveBench's synthetic traces.

    Downloads both upstream reward-data files at the pinned commit
    (:data:`SYNTHETIC_URL`), checks their SHA-256, keeps the synthetic traces
    (:func:`synthetic_only`) and writes :data:`SYNTHETIC_FILE` only when it matches
    :data:`SYNTHETIC_SHA256`. A mirror may hold the derived file (as
    ``../shared/data/proactivebench-synthetic`` does) or the two upstream files.
    A good file already in ``dest`` is kept.

    Returns:
        (the written file, counts ``{"synthetic": kept, "real-session": dropped}``;
        ``dropped`` is 0 when the file was copied or already present).

    Raises:
        FetchError: a download fails, a file is missing from the mirror, or a
            checksum does not match (nothing is written).
    """
    dest = _check_dest(dest)
    target = dest / SYNTHETIC_FILE

    def kept(data: bytes) -> int:
        return sum(1 for line in data.splitlines() if line.strip())

    if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == SYNTHETIC_SHA256:
        return target, {"synthetic": kept(target.read_bytes()), "real-session": 0}
    counts = None
    if source_dir is not None and (Path(source_dir) / SYNTHETIC_FILE).is_file():
        src = Path(source_dir) / SYNTHETIC_FILE
        data, where = src.read_bytes(), str(src)
        counts = {"synthetic": kept(data), "real-session": 0}
    else:
        upstream = {}
        for split, (name, sha) in SYNTHETIC_UPSTREAM.items():
            if source_dir is not None:
                src = Path(source_dir) / name
                if not src.is_file():
                    raise FetchError(Path(source_dir), f"holds neither {SYNTHETIC_FILE} nor the upstream {name}")
                raw, where = src.read_bytes(), str(src)
            else:
                where = SYNTHETIC_URL.format(name=name)
                raw = _download(where, timeout)
            digest = hashlib.sha256(raw).hexdigest()
            if digest != sha:
                raise FetchError(where, f"SHA-256 {digest} does not match the expected {sha}")
            upstream[split] = raw
        data, counts = synthetic_only(upstream)
        where = f"synthetic traces derived from {', '.join(n for n, _ in SYNTHETIC_UPSTREAM.values())}"
    _install(data, SYNTHETIC_FILE, SYNTHETIC_SHA256, dest, where)
    license_src = Path(source_dir) / "LICENSE" if source_dir else None
    if license_src is not None and license_src.is_file() and not (dest / "LICENSE").exists():
        shutil.copyfile(license_src, dest / "LICENSE")
    return target, counts
