"""Writes and reads of the disk caches: one file per entry (before) vs :class:`proagent.cache.DiskCache`.

    python benchmarks/disk_cache.py [--entries 2000] [--json out.json] [--smoke]

The answers, embeddings and memory caches kept one file per entry, written with
:func:`proagent.io.write_atomic` (temporary file, fsync, rename) and read with one ``open``
each; they now share one bounded ``diskcache`` database per folder (issue 38 item 3). Both
are run here in the same process on the same entries, in fresh folders under a temporary
directory: ``--entries`` entries of each kind (an embedding: 384 float32, 1.5 kB; a model
answer: ~3 kB of JSON; a memory artefact: a 1000 x 384 float32 ``.npy``, 1.5 MB, one tenth as
many), then every entry read back once, then a presence check of each (what
``EmbeddingCache.missing`` asks). Figures are microseconds per entry (wall clock) and the
bytes on disk afterwards. ``--smoke``: 50 entries, for CI.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import guard_network, machine_note, parse_args, render_table, write_result  # noqa: E402

from proagent.cache import DiskCache  # noqa: E402
from proagent.io import write_atomic  # noqa: E402


class FilePerEntry:
    """The caches before: ``root/<key[:2]>/<key>`` files written atomically."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / key

    def set(self, key: str, value: bytes) -> None:
        write_atomic(self._path(key), value)

    def get(self, key: str) -> bytes | None:
        try:
            return self._path(key).read_bytes()
        except OSError:
            return None

    def __contains__(self, key: str) -> bool:
        return self._path(key).is_file()


def _values(kind: str, n: int, rng: np.random.Generator) -> list[bytes]:
    if kind == "embedding":
        return [rng.standard_normal(384).astype("<f4").tobytes() for _ in range(n)]
    if kind == "answer":
        text = "Decision: Yes\nIntention: Code Programming\nQuery: " + "how do I fix this error " * 100
        return [
            json.dumps({"choices": [{"message": {"content": f"{i} {text}"}}], "usage": {"prompt_tokens": i}}).encode()
            for i in range(n)
        ]
    out = []
    for _ in range(n):
        buf = io.BytesIO()
        np.save(buf, rng.standard_normal((1000, 384)).astype(np.float32), allow_pickle=False)
        out.append(buf.getvalue())
    return out


def _disk_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def _run(store: object, values: list[bytes], root: Path) -> dict[str, float]:
    keys = [f"{i:064x}" for i in range(len(values))]
    t0 = time.perf_counter()
    for k, v in zip(keys, values):
        store.set(k, v)  # type: ignore[attr-defined]
    t1 = time.perf_counter()
    for k, v in zip(keys, values):
        assert store.get(k) == v  # type: ignore[attr-defined]
    t2 = time.perf_counter()
    for k in keys:
        assert k in store  # type: ignore[operator]
    t3 = time.perf_counter()
    n = len(values)
    return {
        "write_us": (t1 - t0) / n * 1e6,
        "read_us": (t2 - t1) / n * 1e6,
        "contains_us": (t3 - t2) / n * 1e6,
        "disk_mb": _disk_bytes(root) / 1e6,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", type=int, default=2000)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--smoke", action="store_true", help="50 entries (CI)")
    args = parse_args(ap, positive=("entries",))
    guard_network()
    n = 50 if args.smoke else args.entries
    line, machine = machine_note()
    print(line, flush=True)
    rng = np.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("embedding", "answer", "memory"):
            values = _values(kind, max(1, n // 10) if kind == "memory" else n, rng)
            for name, make in (("file per entry", FilePerEntry), ("diskcache", DiskCache)):
                root = Path(tmp) / f"{kind}-{name.replace(' ', '-')}"
                store = make(root)
                rows.append(
                    {
                        "kind": kind,
                        "store": name,
                        "entries": len(values),
                        "baseline": make is FilePerEntry,
                        **_run(store, values, root),
                    }
                )
                if isinstance(store, DiskCache):
                    store.close()
    columns = [
        ("kind", "entry", ""),
        ("store", "store", ""),
        ("entries", "n", "d"),
        ("write_us", "write us", ".0f"),
        ("read_us", "read us", ".0f"),
        ("contains_us", "in us", ".1f"),
        ("disk_mb", "disk MB", ".1f"),
    ]
    print(render_table(rows, columns))
    if args.json:
        write_result(
            args.json,
            benchmark="disk_cache",
            rows=rows,
            columns=columns,
            machine=machine,
            baseline="one file per entry written with proagent.io.write_atomic (the caches before issue 38)",
            note="microseconds per entry, wall clock, same process and entries",
        )


if __name__ == "__main__":
    main()
