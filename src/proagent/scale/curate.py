"""``proagent curate --ray``: the screenshots' phase-1 screening (OCR and PII detection, or a VLM
call: the costly part of curation) in shards on a Ray cluster.

The single-machine :func:`proagent.curate.curate` runs unchanged, on the driver, with a
:class:`PrescreenedScreener`: the first screenshot it asks for starts every shard on the
cluster (by then ``curate`` has checked ``--out`` and written its manifest), and each answer is
the worker's screening of that screenshot, waited for shard by shard, in curate's own order.
The screener keeps the inner screener's name, so curate's screening cache, its verdicts and the
processed database are those of a single-machine run; a screenshot no shard holds (a strict
re-screen of a deleted screenshot's neighbour) is screened on the driver by the inner screener.

Each shard's screenings are written to ``OUT/.curate/ray/shard-NNN.json`` (the state
folder, :data:`proagent.curate.STATE_DIR`) when it finishes; a re-run reads finished shards back.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ProagentError, Resume, RunError
from ..io import write_json_atomic

__all__ = ["SHARD_SCREENSHOTS", "PrescreenedScreener", "curate_on_ray", "screen_shard", "screenshots_of"]

_SCREENERS: dict[tuple[str, str | None], Any] = {}
"""Screeners made in this worker process (one OCR engine load per worker, reused across shards)."""


def screen_shard(spec: str, base_url: str | None, items: Sequence[tuple[str, str, str]], dest: str) -> str:
    """On a worker: screen ``items`` (image path, app, window title) with the screener ``spec``
    (:func:`proagent.curate.make_screener`) and write ``{path: screening}`` to ``dest`` (atomically);
    returns ``dest``.

    Raises:
        proagent.curate.ScreenerError: the screening model failed (the run stops; finished shards are kept).
    """
    from ..curate import make_screener

    key = (spec, base_url)
    if key not in _SCREENERS:
        _SCREENERS[key] = make_screener(spec, base_url=base_url)
    scr = _SCREENERS[key]
    out = {path: scr.screen(Path(path), app=app, title=title).to_json() for path, app, title in items}
    write_json_atomic(dest, out)
    return dest


class PrescreenedScreener:
    """A :class:`proagent.curate.Screener` whose non-strict screenings come from shards on the
    connected Ray cluster (see the module docstring); ``inner`` screens the rest."""

    def __init__(
        self,
        inner: Any,
        spec: str,
        base_url: str | None,
        items: Sequence[tuple[str, str, str]],
        out: Path,
        *,
        workers: int,
        shard_size: int,
        echo: Any = print,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self._spec, self._base_url, self._out, self._workers, self._echo = spec, base_url, Path(out), workers, echo
        self._shards = [list(items[i : i + shard_size]) for i in range(0, len(items), shard_size)]
        self._where = {path: n for n, shard in enumerate(self._shards) for path, _, _ in shard}
        self._done: dict[int, dict[str, Any]] = {}
        self._ready = [threading.Event() for _ in self._shards]
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self.from_shards = 0
        """Screenings answered from the shards."""
        self.here = 0
        """Screenings made on this machine by the inner screener (strict re-screens, files no shard holds)."""

    def _folder(self) -> Path:
        from ..curate import STATE_DIR

        return self._out / STATE_DIR / "ray"

    def _start(self) -> None:
        from . import _pool

        folder = self._folder()
        folder.mkdir(parents=True, exist_ok=True)
        jobs, index = [], []
        for n, shard in enumerate(self._shards):
            f = folder / f"shard-{n:03d}.json"
            try:
                got = json.loads(f.read_text("utf-8"))
                if set(got) == {p for p, _, _ in shard}:
                    self._finish(n, got)
                    continue
            except (OSError, ValueError):
                pass
            jobs.append(_pool.Job(f.stem, screen_shard, (self._spec, self._base_url, shard, str(f))))
            index.append(n)
        self._echo(
            f"ray: {len(self._shards)} shard(s) of {len(self._where)} screenshots, {len(jobs)} to screen, "
            f"results under {folder}"
        )

        def run() -> None:
            try:
                for i, dest in _pool.run_jobs(jobs, self._workers):
                    self._finish(index[i], json.loads(Path(dest).read_text("utf-8")))
            except BaseException as e:  # noqa: BLE001 (handed to the thread that waits)
                self._error = e
                for ev in self._ready:
                    ev.set()

        self._thread = threading.Thread(target=run, name="proagent-ray-screening", daemon=True)
        self._thread.start()

    def _finish(self, n: int, got: dict[str, Any]) -> None:
        self._done[n] = got
        self._ready[n].set()

    def screen(self, image: Path, *, app: str, title: str, strict: bool = False, text: str = "") -> Any:
        from ..curate import Screening

        n = self._where.get(str(image))
        if strict or n is None:
            self.here += 1
            return self.inner.screen(image, app=app, title=title, strict=strict, text=text)
        if self._thread is None and not self._ready[n].is_set():
            self._start()
        self._ready[n].wait()
        if n not in self._done:
            e = self._error
            if isinstance(e, ProagentError | RuntimeError):
                raise e
            raise RunError(f"screening stopped ({type(e).__name__})", resume=Resume.SAME_COMMAND) from None
        self.from_shards += 1
        return Screening.from_json(self._done[n][str(image)])


def screenshots_of(raw: Path) -> list[tuple[str, str, str]]:
    """Every screenshot file of the raw input (image path, app, window title), in curate's order
    (participants, events, screenshots); a superset of what curate screens (it drops short events
    and duplicates first)."""
    from ..sources.load import load_events

    out = []
    for ev in load_events(raw):
        for shot in ev.screenshots:
            if shot.path is not None and Path(shot.path).is_file():
                out.append((str(shot.path), shot.app_name, shot.window_title))
    return out


SHARD_SCREENSHOTS = 32
"""Screenshots per shard (fixed, so a re-run on a cluster of another size finds the same shards)."""


def curate_on_ray(
    raw: Path,
    out: Path,
    inner: Any,
    spec: str,
    base_url: str | None,
    config: Any,
    *,
    address: str,
    progress: Any = None,
    echo: Any = print,
) -> Any:
    """``curate --ray ADDRESS``: :func:`proagent.curate.curate` with a :class:`PrescreenedScreener`
    on the cluster at ``address`` (:func:`proagent.scale.connect`), one worker per CPU.

    Raises:
        DataError: bad input (as ``curate``).
        UsageError: Ray is missing or no cluster answers at ``address``.
        RunError: a shard failed, or its worker died more than :data:`~proagent.scale.MAX_RETRIES` times.
    """
    from ..curate import curate
    from ._cluster import connect, worker_count

    items = screenshots_of(raw)
    with connect(address):
        scr = PrescreenedScreener(
            inner, spec, base_url, items, out, workers=worker_count(), shard_size=SHARD_SCREENSHOTS, echo=echo
        )
        try:
            summary = curate(raw, out, scr, config, progress=progress)
        except KeyboardInterrupt:
            raise RunError("curation interrupted", resume=Resume.SAME_COMMAND, folder=out, interrupted=True) from None
    echo(f"ray: {scr.from_shards} screening(s) from the shards, {scr.here} on this machine")
    return summary
