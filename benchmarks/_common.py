"""Helpers shared by the benchmark scripts (not part of the ``proagent`` package)."""

from __future__ import annotations

import ipaddress
import os
import subprocess
import sys
import tarfile
import threading
from pathlib import Path
from typing import Any

# benchmarks time the model itself: no answers from the local models' answer cache
# (proagent.models._answers), here or in the commands they start, unless asked for
os.environ.setdefault("PROAGENT_ANSWER_CACHE", "off")

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "proactivebench"

_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}
OFF_HOST_ATTEMPTS: list[str] = []
"""Non-loopback connects that the guard refused (should stay empty)."""


def _is_loopback(host: object) -> bool:
    if not isinstance(host, str):
        return False
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def guard_network() -> None:
    """Refuse every socket connect that is not to a loopback address.

    An audit hook (cannot be removed): a benchmark must measure this machine
    only, so any attempt to reach another host fails loudly and is recorded in
    :data:`OFF_HOST_ATTEMPTS`.
    """

    def hook(event: str, args: tuple) -> None:
        if event == "socket.connect":
            address = args[1]
            if isinstance(address, tuple) and not _is_loopback(address[0]):
                OFF_HOST_ATTEMPTS.append(f"{address[0]}:{address[1] if len(address) > 1 else ''}")
                raise ConnectionRefusedError(f"benchmark network guard: refused connect to {address!r}")

    sys.addaudithook(hook)


def watchdog(seconds: float, on_expire=None) -> threading.Timer:  # noqa: ANN001
    """Kill the whole process after ``seconds`` (after calling ``on_expire``)."""

    def fire() -> None:
        print(f"\nbenchmark: time limit of {seconds:.0f} s reached, stopping", file=sys.stderr, flush=True)
        try:
            if on_expire is not None:
                on_expire()
        finally:
            os._exit(3)

    t = threading.Timer(seconds, fire)
    t.daemon = True
    t.start()
    return t


def render_table(rows: list[dict[str, Any]], columns: list[tuple[str, str, str]]) -> str:
    """Plain fixed-width table. ``columns``: (key, header, format spec)."""
    cells = [[h for _, h, _ in columns]]
    for r in rows:
        line = []
        for key, _, spec in columns:
            v = r.get(key)
            line.append("-" if v is None else format(v, spec) if spec else str(v))
        cells.append(line)
    widths = [max(len(c[i]) for c in cells) for i in range(len(columns))]
    out = []
    for n, line in enumerate(cells):
        out.append("  ".join(c.rjust(w) for c, w in zip(line, widths)).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def percentile(values: list[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in 0..100) of ``values``; None when empty."""
    if not values:
        return None
    v = sorted(values)
    k = (len(v) - 1) * q / 100.0
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def cpu_busy(seconds: float = 1.0) -> float | None:
    """Share (0..1) of all cores busy over ``seconds`` (from /proc/stat); None where unreadable."""

    def read() -> tuple[int, int] | None:
        try:
            with open("/proc/stat") as f:
                parts = [int(x) for x in f.readline().split()[1:]]
        except (OSError, ValueError):
            return None
        idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
        return idle, sum(parts)

    import time

    a = read()
    time.sleep(seconds)
    b = read()
    if a is None or b is None or b[1] == a[1]:
        return None
    return 1.0 - (b[0] - a[0]) / (b[1] - a[1])


def machine_note() -> tuple[str, dict[str, Any]]:
    """One line on how busy the machine is right before a benchmark, and the same as data.

    Figures taken while other processes load the cores are noisy (llama.cpp in
    particular slows down many times over when its threads are oversubscribed).
    """
    busy = cpu_busy(1.0)
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    cpus = os.cpu_count() or 1
    info = {"cpus": cpus, "busy_before": busy, "loadavg_before": load}
    line = f"machine: {cpus} cores, CPU busy before start {'?' if busy is None else f'{busy:.0%}'}"
    if load:
        line += f", load average {load[0]:.2f}"
    if busy is not None and busy > 0.25:
        line += "  WARNING: other processes are using the CPU; figures will be noisy"
    return line, info


def _proc_stat() -> tuple[int, int] | None:
    try:
        with open("/proc/stat") as f:
            parts = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return parts[3] + (parts[4] if len(parts) > 4 else 0), sum(parts)


class OthersCpu:
    """Context manager: how much of the machine's CPU *other* processes used meanwhile.

    ``share`` (0..1 of all cores) = busy time of all cores minus this process's
    own CPU time (threads included), over the elapsed capacity. Child processes
    still running (e.g. a mock server) count as "others". None where /proc is
    not readable.
    """

    share: float | None = None

    def __enter__(self) -> "OthersCpu":
        self._a = _proc_stat()
        t = os.times()
        self._own = t.user + t.system
        return self

    def __exit__(self, *exc: object) -> None:
        b = _proc_stat()
        t = os.times()
        if self._a is None or b is None or b[1] == self._a[1]:
            return
        hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        total = b[1] - self._a[1]
        busy = total - (b[0] - self._a[0])
        own = (t.user + t.system - self._own) * hz
        self.share = max(0.0, busy - own) / total


def source_of(rev: str, into: Path) -> Path:
    """``src/`` of git revision ``rev`` of this repository, extracted under ``into`` (created):
    the baseline code a benchmark runs beside this checkout's (``PYTHONPATH`` at the returned
    folder). Raises ``subprocess.CalledProcessError`` when git does not know ``rev``."""
    into.mkdir(parents=True, exist_ok=True)
    archive = into / "src.tar"
    with open(archive, "wb") as f:
        subprocess.run(["git", "-C", str(REPO), "archive", rev, "src"], stdout=f, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


RESULTS_DIR = REPO / "docs" / "results"
"""Where the benchmark runs the site quotes are kept (``--json docs/results/NAME.json``);
``benchmarks/render_results.py`` renders them into the site's "Benchmark runs" page and into the
marked blocks of the Results and Speed pages."""


def write_result(
    path: Path | str | None,
    *,
    benchmark: str,
    rows: list[dict[str, Any]],
    columns: list[tuple[str, str, str]],
    machine: dict[str, Any],
    baseline: str,
    note: str = "",
    conditions: str = "",
    tables: list[dict[str, Any]] | None = None,
    figures: dict[str, Any] | None = None,
    baseline_columns: list[str] | None = None,
) -> dict[str, Any] | None:
    """Write one benchmark run as JSON for ``render_results.py`` (the one helper every script under
    ``benchmarks/`` writes its figures through): its command line, commit, date, machine (cores, CPU
    busy and load average before, load average after), the table's columns and rows (each row with
    ``"baseline": true`` when it is the same-run baseline; only ``True`` marks a row), what the baseline is, a note on how to
    read the figures, the ``conditions`` that make it smaller or different from the full run (e.g.
    ``"smoke settings: --sizes 1000,10000; the full run adds 100000"``), further ``tables`` (each
    ``{"title", "columns", "rows"}``) and other ``figures`` (kept in the file, not rendered).
    ``path`` ``None``: nothing is written (the script's ``--json`` was not given). Returns what it wrote.

    ``columns``: ``(key, header, format spec)`` as for :func:`render_table`.
    """
    if path is None:
        return None
    import datetime
    import json
    import shlex

    try:
        commit = (
            subprocess.run(
                ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10
            ).stdout.strip()
            or None
        )
    except (OSError, subprocess.SubprocessError):
        commit = None
    script = Path(sys.argv[0]).resolve()
    record = {
        "benchmark": benchmark,
        "command": "python "
        + " ".join(
            shlex.quote(a)
            for a in [str(script.relative_to(REPO)) if script.is_relative_to(REPO) else sys.argv[0], *sys.argv[1:]]
        ),
        "commit": commit,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {**machine, "loadavg_after": os.getloadavg() if hasattr(os, "getloadavg") else None},
        "baseline": baseline,
        "conditions": conditions,
        "note": note,
        "columns": [list(c) for c in columns],
        "rows": rows,
    }
    if baseline_columns:
        record["baseline_columns"] = list(baseline_columns)
    if tables:
        record["tables"] = [{**t, "columns": [list(c) for c in t["columns"]]} for t in tables]
    if figures:
        record["figures"] = figures
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, default=str) + "\n", "utf-8")
    return record


def parse_args(
    ap: Any,
    argv: list[str] | None = None,
    *,
    smoke: dict[str, Any] | None = None,
    positive: tuple[str, ...] = (),
    non_negative: tuple[str, ...] = (),
    existing: tuple[str, ...] = (),
) -> Any:
    """Parse a benchmark's arguments and refuse bad ones before any work (argparse's usage and one
    ``error:`` line, exit 2), so a bad value never ends in a traceback, nor only after a long run.

    ``positive`` / ``non_negative``: option dests whose number (or every comma-separated number)
    must be > 0 / >= 0 (and finite); ``existing``: dests of paths that must exist (``None`` passes).
    ``smoke``: the values ``--smoke`` sets, by dest; one given explicitly on the command line is
    kept, and a line on stderr says so (``--smoke`` never silently overrides an explicit value).
    """
    import math

    argv = sys.argv[1:] if argv is None else argv
    a = ap.parse_args(argv)
    if smoke and getattr(a, "smoke", False):
        apply_smoke(ap, a, smoke, argv)
    for dest in (*positive, *non_negative):
        value = getattr(a, dest)
        if value is None or isinstance(value, bool):
            continue
        for part in str(value).split(","):
            try:
                x = float(part)
            except ValueError:
                ap.error(f"--{dest.replace('_', '-')}: {part.strip()!r} is not a number")
            if not math.isfinite(x) or x < 0 or (x == 0 and dest in positive):
                ap.error(f"--{dest.replace('_', '-')}: {value} must be {'> 0' if dest in positive else '>= 0'}")
    for dest in existing:
        value = getattr(a, dest)
        if value is not None and not Path(value).exists():
            ap.error(f"--{dest.replace('_', '-')}: {value} does not exist")
    return a


def apply_smoke(ap: Any, a: Any, values: dict[str, Any], argv: list[str] | None = None) -> None:
    """Set ``--smoke``'s ``values`` (by dest) on the parsed ``a``, except those the command line
    ``argv`` gave explicitly: they are kept, and one line on stderr says which."""
    import argparse

    argv = sys.argv[1:] if argv is None else argv
    unset = object()
    probe = argparse.Namespace(**{act.dest: unset for act in ap._actions if act.dest != "help"})
    ap.parse_args(argv, namespace=probe)  # argparse sets only what the command line gives
    kept = []
    for dest, value in values.items():
        if getattr(probe, dest, unset) is unset:
            setattr(a, dest, value)
        else:
            kept.append(f"--{dest.replace('_', '-')} {getattr(a, dest)}")
    if kept:
        print(f"--smoke: keeping {', '.join(kept)} as given", file=sys.stderr, flush=True)


def smoke_threads() -> None:
    """``--smoke``'s RapidOCR threads (the OCR benchmarks' ``main`` calls it under ``--smoke``; not
    :func:`parse_args`, which tests call in their own process): one for this process and the children
    it starts (``PROAGENT_OCR_THREADS=1``, :data:`proagent.ocr.OCR_THREADS_ENV`)
    unless the environment sets it. The test suite runs two workers on two cores, where onnxruntime's
    second thread mostly spin-waits (issue 45), as llama.cpp's does (the model smokes' ``n_threads=1``)."""
    os.environ.setdefault("PROAGENT_OCR_THREADS", "1")


def run_main(main: Any) -> None:
    """Run a benchmark's ``main()``: proagent's refusals (a decider folder that is none, a bad data
    file: :class:`proagent.errors.ProagentError`) are one ``Error:`` line and exit 1, not a traceback."""
    from proagent.errors import ProagentError

    try:
        main()
    except ProagentError as e:
        print(f"Error: {e}", file=sys.stderr, flush=True)
        sys.exit(1)
