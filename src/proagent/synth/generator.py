"""Synthetic LifeTrace databases at scale (ProAgentBench processed format).

``generate(out, SynthConfig(users=N, days=D, seed=S))`` writes, per user,
``out/U001/lifetrace_privacy_processed.db`` (and ``out/U001/screenshots/``
with tiny PNG files when ``screenshots=True``), plus ``out/synth.json``
describing the run. The databases load with
:func:`proagent.sources.lifetrace.read_lifetrace` as variant ``processed``.

The model, per user (numpy, vectorised; every user has its own random stream
``default_rng([seed, user_index])``, so output is identical for a seed):

* **Sessions**: each day one session starting 08:00-10:30 (weekdays; on a
  weekend day with probability 0.4, shorter), 5-11 h long. "Active time" is
  the concatenation of sessions.
* **LLM moments**: a renewal process in active time whose gaps are Pareto
  with pdf exponent ``alpha`` above ``gap_xmin`` seconds (heavy-tailed and
  bursty; capped at ``gap_cap`` seconds of active time so a user keeps
  asking). Gaps that span a night become longer in wall-clock time, as in
  real logs.
* **Other events**: contiguous app-switch segments between the LLM moments;
  durations are 12% short (0.5-3 s, as LifeTrace records) and otherwise
  lognormal (median 45 s, sigma 1.1), at most 1 h. Each event ends where the
  next starts; the last event of a session ends with the session.
* **Content**: apps and window titles from :mod:`proagent.synth.vocab`
  (English and Chinese, Zipf-like weights); LLM events get an LLM product,
  an intention drawn from the taxonomy's shares (categories without a
  published share split what is left equally), a query of that intention, a
  conversation JSON (``user_queries``, ``llm_responses``,
  ``full_conversation``), ``user_intention`` and ``llm_platform`` columns.
* **Screenshots**: one every ``screenshot_interval`` seconds of each event
  (at least one), file names ``screen_0_YYYYmmdd_HHMMSS_mmm.png`` under a
  Windows capture path; the first screenshot of each event has an OCR row.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import struct
import time
import zlib
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataError, UsageError
from ..io import built_aside, check_output_folder, write_json_atomic
from ..sources.lifetrace_write import PROCESSED_DDL
from ..taxonomy import Taxonomy, load_taxonomy
from .records import MANIFEST, SynthManifest, SynthUser
from .vocab import APPS, LLM_APPS, QUERIES, RESPONSES

__all__ = [
    "DB_NAME",
    "SynthConfig",
    "check_out",
    "check_resources",
    "generate",
    "generate_user",
    "intention_shares",
    "resource_estimate",
]

DB_NAME = "lifetrace_privacy_processed.db"
"""Database file name in each user folder (ProAgentBench layout)."""


@dataclass(frozen=True)
class SynthConfig:
    """What to generate."""

    users: int = 3
    """Participants (one folder and database each)."""
    days: int = 7
    """Calendar days per user, starting at ``start``."""
    seed: int = 0
    """Random seed: same seed and settings -> identical databases."""
    alpha: float = 1.5
    """Pdf exponent of the LLM inter-event times (Pareto, > 1)."""
    gap_xmin: float = 30.0
    """Smallest LLM inter-event time, seconds of active time."""
    gap_cap: float = 6 * 3600.0
    """Largest LLM inter-event time, seconds of active time."""
    screenshot_interval: float = 5.0
    """Seconds between screenshots within an event."""
    screenshots: bool = False
    """Also write tiny PNG files (one per screenshot row)."""
    start: str = "2025-09-15"
    """First day (a Monday by default)."""
    user_prefix: str = "U"
    """User folder names: prefix + 3-digit number."""

    def __post_init__(self) -> None:
        """Raises :class:`~proagent.errors.UsageError` (a ``ValueError``) naming the ``proagent synth`` option."""
        if self.users < 1 or self.days < 1:
            raise UsageError("--users" if self.users < 1 else "--days", "users and days must be >= 1")
        if not self.alpha > 1:
            raise UsageError("--alpha", f"alpha must be > 1 (got {self.alpha})")
        if not 0 < self.gap_xmin < self.gap_cap:
            raise UsageError("--gap-xmin", "need 0 < gap_xmin < gap_cap")
        if self.screenshot_interval <= 0:
            raise UsageError("--screenshot-interval", "screenshot_interval must be > 0")
        try:
            datetime.strptime(self.start, "%Y-%m-%d")
        except ValueError as e:
            raise UsageError("--start", str(e)) from None


def intention_shares(taxonomy: Taxonomy | None = None) -> tuple[list[str], np.ndarray]:
    """Category names and sampling probabilities: published shares as given,
    the rest of the mass split equally among categories without one."""
    tax = taxonomy or load_taxonomy()
    names = list(tax.names)
    shares = np.array([c.share if c.share is not None else np.nan for c in tax.categories], dtype=float)
    known = np.nansum(shares)
    n_unknown = int(np.isnan(shares).sum())
    fill = max(0.0, 1.0 - known) / n_unknown if n_unknown else 0.0
    shares = np.where(np.isnan(shares), fill, shares)
    return names, shares / shares.sum()


def _tiny_png(r: int, g: int, b: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(bytes((0, r, g, b))))
        + chunk(b"IEND", b"")
    )


def _ts(us: np.ndarray) -> list[str]:
    """Microseconds since the epoch -> ``YYYY-MM-DD HH:MM:SS.ffffff`` strings."""
    s = np.datetime_as_string(us.astype("datetime64[us]"), unit="us")
    return np.char.replace(s, "T", " ").tolist()


def _names(us: np.ndarray) -> list[str]:
    """Screenshot file names ``screen_0_YYYYmmdd_HHMMSS_mmm.png``."""
    s = np.datetime_as_string(
        us.astype("datetime64[us]").astype("datetime64[ms]"), unit="ms"
    )  # YYYY-MM-DDTHH:MM:SS.mmm
    return [f"screen_0_{x[0:4]}{x[5:7]}{x[8:10]}_{x[11:13]}{x[14:16]}{x[17:19]}_{x[20:23]}.png" for x in s]


def _sessions(rng: np.random.Generator, cfg: SynthConfig) -> tuple[np.ndarray, np.ndarray]:
    """Session (wall start in epoch seconds, length in seconds) per active day."""
    day0 = (np.datetime64(cfg.start, "s") - np.datetime64("1970-01-01T00:00:00", "s")).astype(np.int64)
    days = np.arange(cfg.days)
    weekday = (np.datetime64(cfg.start, "D") + days).astype("datetime64[D]").view("int64")
    weekday = (weekday + 3) % 7  # 1970-01-01 was a Thursday
    weekend = weekday >= 5
    works = ~weekend | (rng.random(cfg.days) < 0.4)
    begin = day0 + days * 86400 + 8 * 3600 + rng.uniform(0, 2.5 * 3600, cfg.days)
    length = np.where(weekend, rng.uniform(2, 5, cfg.days), rng.uniform(5, 11, cfg.days)) * 3600
    return begin[works], length[works]


def _timeline(rng: np.random.Generator, cfg: SynthConfig) -> dict[str, np.ndarray]:
    """Event starts/ends (epoch seconds) and LLM flags of one user."""
    s_begin, s_len = _sessions(rng, cfg)
    if s_len.size == 0:
        return {"start": np.zeros(0), "end": np.zeros(0), "llm": np.zeros(0, bool)}
    cum_end = np.cumsum(s_len)
    total = float(cum_end[-1])
    # LLM moments: Pareto gaps (pdf exponent alpha) above gap_xmin, capped, in active time
    n_guess = int(total / cfg.gap_xmin) + 16
    u = rng.random(n_guess)
    gaps = np.minimum(cfg.gap_xmin * u ** (-1.0 / (cfg.alpha - 1.0)), cfg.gap_cap)
    llm_t = rng.uniform(0, cfg.gap_xmin) + np.cumsum(gaps)
    llm_t = llm_t[llm_t < total - 1]
    llm_d = np.clip(rng.lognormal(np.log(90), 0.8, llm_t.size), 8, 1800)
    # other events: contiguous segments
    n_guess = int(total / 30) + 64
    short = rng.random(n_guess) < 0.12
    dur = np.where(short, rng.uniform(0.5, 3.0, n_guess), np.clip(rng.lognormal(np.log(45), 1.1, n_guess), 3, 3600))
    other = np.concatenate([[0.0], np.cumsum(dur)])
    while other[-1] < total:  # rare: extend
        more = np.clip(rng.lognormal(np.log(45), 1.1, n_guess), 3, 3600)
        other = np.concatenate([other, other[-1] + np.cumsum(more)])
    other = other[other < total]
    # session starts are event starts too
    sess_start = np.concatenate([[0.0], cum_end[:-1]])
    other = np.union1d(other, sess_start)
    # drop other starts that fall inside an LLM event
    llm_end = np.minimum(llm_t + llm_d, np.concatenate([llm_t[1:], [total]]))
    idx = np.searchsorted(llm_t, other, side="right") - 1
    inside = (idx >= 0) & (other < llm_end[np.maximum(idx, 0)]) & (other >= llm_t[np.maximum(idx, 0)])
    other = other[~inside]
    # resume activity right after an LLM event
    starts = np.concatenate([other, llm_t, llm_end[llm_end < total]])
    flags = np.concatenate(
        [np.zeros(other.size, bool), np.ones(llm_t.size, bool), np.zeros(int((llm_end < total).sum()), bool)]
    )
    order = np.lexsort((~flags, starts))
    starts, flags = starts[order], flags[order]
    keep = np.concatenate([[True], np.diff(starts) > 1e-6])  # equal starts: keep the LLM one (sorted first)
    starts, flags = starts[keep], flags[keep]
    # ends: next start, or the end of the session
    sess = np.searchsorted(cum_end, starts, side="right")
    ends = np.concatenate([starts[1:], [total]])
    ends = np.minimum(ends, cum_end[sess])
    ok = ends - starts > 0.2
    starts, ends, flags, sess = starts[ok], ends[ok], flags[ok], sess[ok]
    # active -> wall clock
    offset = s_begin - sess_start
    return {"start": starts + offset[sess], "end": ends + offset[sess], "llm": flags}


def generate_user(path: str | Path, user_index: int, cfg: SynthConfig, taxonomy: Taxonomy | None = None) -> SynthUser:
    """Write one user's database at ``path`` (replaced atomically); returns its counts."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    user = path.parent.name
    rng = np.random.default_rng([cfg.seed, user_index])
    tl = _timeline(rng, cfg)
    rows, apps, titles = _event_rows(rng, tl, taxonomy)
    shot_rows, ocr_rows, m = _screenshot_rows(rng, tl, cfg, path, rows, apps, titles)
    _write_database(path, rows, shot_rows, ocr_rows)
    return SynthUser(user, len(rows), int(tl["llm"].sum()), m, path)


def _event_rows(
    rng: np.random.Generator, tl: dict[str, np.ndarray], taxonomy: Taxonomy | None
) -> tuple[list[tuple[Any, ...]], list[str], list[str]]:
    """The ``events`` rows of a timeline (app, title, summary; an LLM event's conversation,
    intention and platform), with each event's app and title."""
    n = tl["start"].size
    llm = tl["llm"]
    app_w = np.array([a[1] for a in APPS], float) * rng.uniform(0.5, 1.5, len(APPS))  # per-user taste
    app_i = rng.choice(len(APPS), size=n, p=app_w / app_w.sum())
    subj = rng.integers(0, 1 << 30, n)
    tmpl = rng.integers(0, 1 << 30, n)
    llm_w = np.array([a[3] for a in LLM_APPS], float)
    llm_i = rng.choice(len(LLM_APPS), size=n, p=llm_w / llm_w.sum())
    names, probs = intention_shares(taxonomy)
    int_i = rng.choice(len(names), size=n, p=probs)
    q_i = rng.integers(0, 1 << 30, n)
    follow = rng.random(n) < 0.3
    apps: list[str] = []
    titles: list[str] = []
    rows = []
    start_s = _ts(np.round(tl["start"] * 1e6).astype(np.int64))
    end_s = _ts(np.round(tl["end"] * 1e6).astype(np.int64))
    for k in range(n):
        if llm[k]:
            app, title, platform, _w = LLM_APPS[llm_i[k]]
            intention = names[int_i[k]]
            qs = QUERIES.get(intention) or QUERIES["Uncategorized"]
            q = qs[q_i[k] % len(qs)]
            resp = RESPONSES[q_i[k] % len(RESPONSES)]
            queries = [q] + (["能再详细一点吗？"] if follow[k] else [])
            responses = [f"{resp}（关于：{q[:16]}）"] + (["当然，下面是更详细的说明。"] if follow[k] else [])
            conv = json.dumps(
                {
                    "user_queries": queries,
                    "llm_responses": responses,
                    "full_conversation": "\n".join(f"User: {a}\nAssistant: {b}" for a, b in zip(queries, responses)),
                },
                ensure_ascii=False,
            )
            summary = f"用户在 {platform} 中向 AI 提问：{q[:24]}"
            rows.append(
                (
                    k + 1,
                    app,
                    title,
                    start_s[k],
                    end_s[k],
                    start_s[k],
                    f"{platform}提问",
                    summary,
                    1,
                    summary,
                    f"{summary}。屏幕显示 {title} 的对话界面。",
                    conv,
                    intention,
                    platform,
                )
            )
        else:
            app, _w, tmpls, subjects = APPS[app_i[k]]
            title = tmpls[tmpl[k] % len(tmpls)].format(subjects[subj[k] % len(subjects)])
            summary = f"用户在 {app} 中浏览“{title}”" if k % 2 else f"User works in {app}: {title}"
            rows.append(
                (
                    k + 1,
                    app,
                    title,
                    start_s[k],
                    end_s[k],
                    start_s[k],
                    app[:10],
                    summary,
                    0,
                    summary,
                    f"{summary}. Screen shows {title}.",
                    None,
                    None,
                    None,
                )
            )
        apps.append(app)
        titles.append(title)
    return rows, apps, titles


def _screenshot_rows(
    rng: np.random.Generator,
    tl: dict[str, np.ndarray],
    cfg: SynthConfig,
    path: Path,
    rows: list[tuple[Any, ...]],
    apps: list[str],
    titles: list[str],
) -> tuple[Any, list[tuple[Any, ...]], int]:
    """The ``screenshots`` rows (one every ``cfg.screenshot_interval`` s of each event; tiny PNG
    files beside ``path`` with ``cfg.screenshots``) and one ``ocr_results`` row per event;
    returns them and the screenshot count."""
    user = path.parent.name
    n = tl["start"].size
    dur = tl["end"] - tl["start"]
    per = np.maximum(1, np.ceil(dur / cfg.screenshot_interval).astype(np.int64))
    m = int(per.sum())
    ev_of = np.repeat(np.arange(n), per)
    first = np.concatenate([[0], np.cumsum(per)[:-1]])
    k_in = np.arange(m) - np.repeat(first, per)
    jitter = rng.integers(0, 1000, m)  # ms
    t_us = (
        np.round(tl["start"] * 1e6).astype(np.int64)[ev_of]
        + (k_in * cfg.screenshot_interval * 1e6).astype(np.int64)
        + jitter * 1000
    )
    t_us = np.minimum(t_us, np.round(tl["end"] * 1e6).astype(np.int64)[ev_of] - 1)
    t_us = np.maximum.accumulate(t_us)  # non-decreasing, unique names below
    file_names = _names(t_us)
    # guarantee unique names (same millisecond): bump the millisecond of repeats
    dup = (
        np.concatenate([[False], np.array(file_names[1:]) == np.array(file_names[:-1])]) if m > 1 else np.zeros(m, bool)
    )
    while dup.any():
        t_us[dup] += 1000
        t_us = np.maximum.accumulate(t_us)
        file_names = _names(t_us)
        arr = np.array(file_names)
        dup = np.concatenate([[False], arr[1:] == arr[:-1]])
    shot_ts = _ts(t_us)
    root = f"C:\\Users\\{user}\\AppData\\Roaming\\LifeTrace\\data\\screenshots\\"
    colours = rng.integers(0, 256, (m, 3), dtype=np.uint8) if cfg.screenshots else None
    if cfg.screenshots:
        shots_dir = path.parent / "screenshots"
        shots_dir.mkdir(exist_ok=True)
        hashes, sizes = [], []
        for i in range(m):
            png = _tiny_png(*map(int, colours[i]))
            (shots_dir / file_names[i]).write_bytes(png)
            hashes.append(hashlib.sha256(png).hexdigest())
            sizes.append(len(png))
    else:
        hx = rng.bytes(32 * m).hex()
        hashes = [hx[64 * i : 64 * i + 64] for i in range(m)]
        sizes = rng.integers(150_000, 900_000, m).tolist()
    ev_list = (ev_of + 1).tolist()
    shot_rows = zip(
        range(1, m + 1),
        (root + f for f in file_names),
        hashes,
        sizes,
        [2560] * m,
        [1440] * m,
        [0] * m,
        (apps[e] for e in ev_of.tolist()),
        (titles[e] for e in ev_of.tolist()),
        shot_ts,
        shot_ts,
        [1] * m,
        ev_list,
    )
    first_ids = (first + 1).tolist()
    ocr_rows = [
        (i + 1, sid, f"{titles[i]}\n{rows[i][7]}", 0.93, "ch_sim+en", 0.4, shot_ts[sid - 1])
        for i, sid in enumerate(first_ids)
    ]
    return shot_rows, ocr_rows, m


def _write_database(path: Path, rows: list[tuple[Any, ...]], shot_rows: Any, ocr_rows: list[tuple[Any, ...]]) -> None:
    """The processed database at ``path``, built aside and renamed over it."""
    with built_aside(path) as tmp:  # private like every output (0600)
        con = sqlite3.connect(tmp)
        try:
            con.execute("PRAGMA journal_mode = OFF")
            con.execute("PRAGMA synchronous = OFF")
            con.executescript(PROCESSED_DDL)
            con.execute("BEGIN")
            con.executemany(f"INSERT INTO events VALUES ({','.join('?' * 14)})", rows)
            con.executemany(f"INSERT INTO screenshots VALUES ({','.join('?' * 13)})", shot_rows)
            con.executemany("INSERT INTO ocr_results VALUES (?,?,?,?,?,?,?)", ocr_rows)
            con.execute("COMMIT")
        finally:
            con.close()


MEMORY_PER_DAY = 6_000_000
"""Peak memory per generated day of one user, bytes (users are generated one at a
time). Measured: 60 MB peak RSS for 5 days, 123 MB for 20 days (4.2 MB/day over a
38 MB base), rounded up."""
DISK_PER_USER_DAY = 2_500_000
"""Database bytes per user-day (measured 2.25 MB: 11.3 MB for 5 days, 44.6 MB for 20)."""
SHOT_FILE_BYTES = 4096
"""Disk taken by one tiny screenshot file (one file-system block); about 5,000 per user-day."""
SHOTS_PER_DAY = 5_000
"""Screenshot rows per user-day at the default 5 s interval (measured 4,940)."""


def resource_estimate(cfg: SynthConfig) -> dict[str, float]:
    """Memory (peak, bytes) and disk (bytes) a run of ``cfg`` needs, from the
    measured per-day figures above (screenshot files scaled by ``screenshot_interval``)."""
    disk = cfg.users * cfg.days * DISK_PER_USER_DAY
    if cfg.screenshots:
        disk += cfg.users * cfg.days * SHOTS_PER_DAY * (5.0 / cfg.screenshot_interval) * SHOT_FILE_BYTES
    return {"memory": 40e6 + cfg.days * MEMORY_PER_DAY * max(1.0, 5.0 / cfg.screenshot_interval), "disk": float(disk)}


def check_resources(cfg: SynthConfig, out: str | Path) -> dict[str, float]:
    """Refuse a run that this machine cannot hold, before any work.

    Returns:
        The :func:`resource_estimate`.

    Raises:
        proagent.errors.DataError: the estimated peak memory exceeds 80% of the memory available
            now, or the estimated disk use exceeds the free space where ``out`` goes
            (the message gives the estimate and what is there).
    """
    import psutil

    est = resource_estimate(cfg)
    avail = psutil.virtual_memory().available
    if est["memory"] > 0.8 * avail:
        raise DataError(
            None,
            f"--days {cfg.days}: a user needs about {est['memory'] / 1e9:.1f} GB of memory "
            f"(~{MEMORY_PER_DAY / 1e6:.0f} MB per day), more than the {avail / 1e9:.1f} GB available; "
            f"use at most {max(1, int((0.8 * avail - 40e6) / MEMORY_PER_DAY))} days",
        )
    where = Path(os.path.abspath(out))
    while not where.exists() and where != where.parent:
        where = where.parent
    free = shutil.disk_usage(where).free
    if est["disk"] > free:
        raise DataError(
            None,
            f"--users {cfg.users} x --days {cfg.days}: needs about {est['disk'] / 1e9:.1f} GB of disk "
            f"under {where}, more than the {free / 1e9:.1f} GB free",
        )
    return est


def check_out(out: str | Path, option: str | None = None) -> None:
    """Refuse an output folder :func:`generate` must not write into (``option``: the
    command-line option that named it, which the message then starts with).

    Raises:
        DataError: ``out`` is a file or a non-empty folder without ``synth.json``
            (the run lock's file aside; :func:`proagent.io.check_output_folder`).
    """
    check_output_folder(out, marker=MANIFEST, run="synth", option=option)


def generate(out: str | Path, cfg: SynthConfig, taxonomy: Taxonomy | None = None) -> SynthManifest:
    """Write every user's database under ``out`` and ``out/synth.json``.

    ``out`` must be new, empty, or an earlier ``synth`` output; in the last case
    the participants of the earlier run that this one does not write are removed,
    so the folder holds exactly this run's databases.

    Returns:
        The run's manifest (as written to ``synth.json``), with its ``seconds``.

    Raises:
        DataError: ``out`` is a non-empty folder without ``synth.json``
            (nothing is written).
        ValueError: the run would not fit in memory or on disk (:func:`check_resources`).
    """
    out = Path(out)
    check_out(out)
    check_resources(cfg, out)
    old = SynthManifest.read(out)
    earlier = {u.user for u in old.users} if old is not None else set()
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    users = tuple(
        generate_user(out / f"{cfg.user_prefix}{i + 1:03d}" / DB_NAME, i, cfg, taxonomy) for i in range(cfg.users)
    )
    manifest = SynthManifest(
        asdict(cfg),
        users,
        events=sum(u.events for u in users),
        llm_events=sum(u.llm_events for u in users),
        screenshots=sum(u.screenshots for u in users),
    )
    write_json_atomic(out / MANIFEST, manifest.to_json())
    for stale in sorted(earlier - {u.user for u in users}):
        if stale and "/" not in stale and stale not in {".", ".."}:
            shutil.rmtree(out / stale, ignore_errors=True)
    return replace(manifest, seconds=time.perf_counter() - t0)
