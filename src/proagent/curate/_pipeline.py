"""From a raw log to a shareable one: quality filters, the three privacy phases, and
the writer of ProAgentBench's processed layout (``DIR/<user>/lifetrace_privacy_processed.db``
+ ``DIR/<user>/screenshots/``, ``DIR/curation.jsonl``, ``DIR/privacy.jsonl``).

State that makes runs resumable and reviewable lives in ``DIR/.curate/`` (never shared):
``manifest.json`` (the raw input), per user ``screening.json`` (phase-1 results by image
SHA-256 and screener, saved every few screenshots: risk, types, action, regions, scene
description; never the screen text), ``items.json`` (what the review page shows: ids, paths of
the raw images, cleaned window titles, regions) and ``review.json`` (phase-2 decisions).
Nothing there holds screen text, raw or cleaned: on a re-run, a screenshot whose raw log has no
OCR text gets its cleaned text back from the previous output (which publishes it anyway), else it
is screened again.

Everything written is private to the user running it: folders ``0700``, files ``0600``
(:data:`DIR_MODE`, :data:`FILE_MODE`); a blur with no region marked blurs the whole screen and
publishes no text of it (:data:`WHOLE_SCREEN`).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..io import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, check_output_folder, swap_in, write_atomic, write_json_atomic
from ..records import Event, Screenshot
from ..sources.lifetrace import load_lifetrace
from ..sources.lifetrace_schema import DB_NAMES, connect_read_only, detect_schema, find_lifetrace_db
from ..sources.lifetrace_write import FOCUSED_COLUMN, PROCESSED_DDL
from ._detect import clean_text, find_pii, high_risk_types, title_names
from ._quality import QualityConfig, apply_quality_filters, sha256_file
from ._screen import Screener, ocr_lines
from .records import ACTIONS, CurateManifest, CurateSummary, Region, Screening, Verdict

__all__ = [
    "DB_NAME",
    "DIR_MODE",
    "FILE_MODE",
    "STATE_DIR",
    "TITLE_KEYWORDS",
    "WHOLE_SCREEN",
    "CurateConfig",
    "curate",
    "find_inputs",
    "load_decisions",
    "save_decision",
]

DB_NAME = DB_NAMES[0]
"""``lifetrace_privacy_processed.db``."""
STATE_DIR = ".curate"
"""Folder under the output holding resume and review state."""
DIR_MODE = PRIVATE_DIR_MODE
"""Permission bits of every folder curate writes (screenshots and logs of one person)."""
FILE_MODE = PRIVATE_FILE_MODE
"""Permission bits of every file curate writes."""
TITLE_KEYWORDS = (
    "password",
    "passwd",
    "login",
    "log in",
    "sign in",
    "signin",
    "bank",
    "banking",
    "paypal",
    "wallet",
    "credit card",
    "checkout",
    "payment",
    "1password",
    "bitwarden",
    "keepass",
    "lastpass",
    "private",
    "incognito",
    "密码",
    "登录",
    "登陆",
    "银行",
    "网银",
    "支付",
    "支付宝",
    "钱包",
    "信用卡",
    "身份证",
    "隐私",
    "无痕",
)
"""Window-title keywords that make a screenshot high-risk in phase 3 (matched case-insensitively)."""
_TS = "%Y-%m-%d %H:%M:%S.%f"
_SAVE_SECONDS = 10.0
"""The resume cache is rewritten at most this often (seconds) while screening."""


@dataclass(frozen=True)
class CurateConfig:
    """Everything ``curate`` can be told; defaults are the paper's."""

    quality: QualityConfig = field(default_factory=QualityConfig)
    """Quality filter thresholds (B.3)."""
    title_keywords: tuple[str, ...] = TITLE_KEYWORDS
    """Phase 3: window-title keywords meaning high-risk."""
    neighbour_deletions: int = 2
    """Phase 3: when at least this many screenshots of one event are deleted, the
    neighbours of each deleted one are re-screened strictly (B.4)."""
    blur_radius: float = 0.0
    """Gaussian blur radius in pixels (0: as tall as each region, at least 12)."""


def find_inputs(raw: Path) -> list[tuple[str, Path]]:
    """``(user, database)`` pairs under ``raw``: a LifeTrace database file, a folder
    holding one (a participant or capture folder), or a folder of participant folders.

    Raises:
        DataError: nothing found, or two participants share a folder name.
    """
    if not raw.exists():
        raise DataError(raw, "no such file or folder")
    if raw.is_file():
        db = find_lifetrace_db(raw)
        return [(Path(os.path.abspath(db)).parent.name, db)]
    direct = [p for p in raw.glob("*.db") if p.is_file()]
    if direct:
        db = find_lifetrace_db(raw)
        return [(raw.resolve().name, db)]
    found: list[tuple[str, Path]] = []
    for sub in sorted(p for p in raw.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if any(q.is_file() for q in sub.glob("*.db")):
            found.append((sub.name, find_lifetrace_db(sub)))
    if not found:
        raise DataError(raw, "no LifeTrace database here or in its subfolders (*.db)")
    return found


def _check_out(raw: Path, out: Path) -> None:
    """:func:`proagent.io.check_output_folder` (new, empty or an earlier curate output, outside
    the raw input), and an earlier output must be of this same input."""
    # the line names the option: it says which of the two folders to change
    check_output_folder(
        out, marker=f"{STATE_DIR}/manifest.json", run="curate", data=raw, data_name="the raw input", option="--out"
    )
    man = out / STATE_DIR / "manifest.json"
    old = CurateManifest.read(man).raw if man.is_file() else None
    if old and Path(old) != raw.resolve():
        raise DataError(out, f"--out holds the curation of another input ({old})")


def _read_json(path: Path, default: Any) -> Any:
    if not path.is_file():
        return default
    try:
        return json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError as e:
        raise DataError(
            path, f"invalid JSON ({e.msg.removesuffix(' at')} at line {e.lineno}); delete it to start this state afresh"
        ) from None


def load_decisions(out: Path, user: str) -> dict[int, str]:
    """Phase-2 decisions of ``user``: screenshot id -> ``retain``/``blur``/``delete``."""
    raw = _read_json(out / STATE_DIR / user / "review.json", {})
    return {int(k): v for k, v in raw.items() if v in ACTIONS}


def save_decision(out: Path, user: str, screenshot_id: int, action: str) -> None:
    """Record one phase-2 decision at once (atomic rewrite of ``review.json``).

    Raises:
        ValueError: ``action`` is not retain/blur/delete.
    """
    if action not in ACTIONS:
        raise ValueError(f"action must be one of {', '.join(ACTIONS)}")
    path = out / STATE_DIR / user / "review.json"
    cur = _read_json(path, {})
    cur[str(int(screenshot_id))] = action
    _private_dirs(path.parent)
    write_json_atomic(path, dict(sorted(cur.items(), key=lambda kv: int(kv[0]))), mode=FILE_MODE)


def _private_dirs(*folders: Path) -> None:
    """Create ``folders`` (and missing parents) and make each ``0700``."""
    for f in folders:
        f.mkdir(parents=True, exist_ok=True)
        os.chmod(f, DIR_MODE)


def _file_sizes(db: Path) -> dict[int, int | None]:
    conn = connect_read_only(db)
    try:
        cols = {r["name"].lower() for r in conn.execute("PRAGMA table_info(screenshots)")}
        if "file_size" not in cols:
            return {}
        return {
            int(r["id"]): (int(r["file_size"]) if r["file_size"] is not None else None)
            for r in conn.execute("SELECT id, file_size FROM screenshots")
        }
    finally:
        conn.close()


def _copy_plain(src: Path, dest: Path) -> None:
    """Copy a retained screenshot into the curated output (decrypted when the raw capture is
    encrypted: a curated folder is the shareable one)."""
    from ..vault import is_encrypted_file, read_file

    if is_encrypted_file(src):
        dest.write_bytes(read_file(src))
    else:
        shutil.copyfile(src, dest)


WHOLE_SCREEN = "blurred whole screen"
"""``applied`` of a blur with no region: the image is blurred whole and its OCR row holds only
``[blurred screenshot] <scene description>``."""


def _blur(src: Path, dest: Path, regions: tuple[Region, ...], radius: float) -> str:
    """Pixelate then blur each region of ``src`` (the whole image when ``regions`` is empty: a
    reviewer's blur with nothing marked hides the screen) into ``dest``; returns what was done
    (``blurred N region(s)`` or ``blurred whole screen``)."""
    from PIL import Image, ImageFilter

    from ..vault import open_image

    with open_image(src) as im:
        img = im.convert("RGB")
    done = f"blurred {len(regions)} region(s)"
    if not regions:
        regions = (Region(0, 0, img.width, img.height, "screen"),)
        done = WHOLE_SCREEN
    for r in regions:
        box = (max(0, r.x0), max(0, r.y0), min(img.width, r.x1), min(img.height, r.y1))
        if box[2] <= box[0] or box[3] <= box[1]:
            continue
        crop = img.crop(box)
        rad = radius or max(12.0, float(box[3] - box[1]))
        # pixelate first (nothing legible survives), then blur the blocks away
        small = crop.resize((max(1, crop.width // 12), max(1, crop.height // 12)), Image.Resampling.BILINEAR)
        crop = small.resize(crop.size, Image.Resampling.BILINEAR).filter(ImageFilter.GaussianBlur(rad))
        img.paste(crop, box[:2])
    fmt = {".jpg": "JPEG", ".jpeg": "JPEG", ".webp": "WEBP"}.get(dest.suffix.lower(), "PNG")
    img.save(dest, format=fmt)
    return done


def _clean_conversation(ev: Event) -> str | None:
    c = ev.conversation
    if c is None:
        return None
    return json.dumps(
        {
            "user_queries": [clean_text(q) for q in c.user_queries],
            "llm_responses": [clean_text(r) for r in c.llm_responses],
            "full_conversation": clean_text(c.full_conversation),
        },
        ensure_ascii=False,
    )


class _Cache:
    """Phase-1 results of one user, keyed by ``sha256:screener[:strict]``, saved at most
    every :data:`_SAVE_SECONDS` while new entries come in (and at the end), so that an
    interrupted run loses at most that many seconds of screening."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, dict] = _read_json(path, {})
        self.new = 0
        self.saved_at = time.monotonic()

    def get(self, key: str) -> Screening | None:
        d = self.data.get(key)
        return Screening.from_json(d) if d is not None else None

    def put(self, key: str, s: Screening) -> None:
        self.data[key] = {k: v for k, v in s.to_json().items() if k != "ocr_text"}  # no screen text on disk
        self.new += 1
        if time.monotonic() - self.saved_at >= _SAVE_SECONDS:
            self.save()

    def save(self) -> None:
        if self.new:
            write_json_atomic(self.path, self.data, mode=FILE_MODE)
            self.new = 0
        self.saved_at = time.monotonic()


def _phase3(
    shot: Screenshot, title: str, s: Screening, action: str, cfg: CurateConfig
) -> tuple[str, list[str], set[str]]:
    """Rules: title keywords, then the recorded OCR text. Only ever makes the action stricter."""
    reasons: list[str] = []
    types: set[str] = set()
    low = title.lower()
    hit = next((k for k in cfg.title_keywords if k.lower() in low), None)
    if hit is not None and action != "delete":
        action = "delete"
        reasons.append(f"title keyword '{hit}'")
    text_types = {f.type for f in find_pii(shot.ocr_text, names=title_names(title))}
    if text_types:
        types |= text_types
        located = {r.type for r in s.regions}
        if action != "delete" and (text_types & high_risk_types() or not text_types <= located):
            action = "delete"
            reasons.append("ocr text: " + ", ".join(sorted(text_types)))
        elif action == "retain":
            action = "blur"
            reasons.append("ocr text: " + ", ".join(sorted(text_types)))
    return action, reasons, types


def _overridden(reviewed: str, s: Screening, phase: str, action: str, reasons: list[str]) -> tuple[str, ...]:
    """The automatic decisions a review decision ``reviewed`` overrode (``phase: action (why)``):
    the screener's when it differs, and the rules' when they changed it and it differs."""
    out = []
    if s.action != reviewed:
        out.append(f"screen: {s.action}" + (f" ({', '.join(s.types)})" if s.types else ""))
    if phase == "rules" and action != reviewed:
        out.append(f"rules: {action} ({'; '.join(reasons)})")
    return tuple(out)


IMAGE_PROBES = 20
"""Screenshot files opened before curating, to tell a screenshots folder from one holding no image."""


def _check_images(user: str, db: Path) -> None:
    """Refuse an input whose screenshot rows have no file at all, or whose files are none of
    them images (the first :data:`IMAGE_PROBES` present are opened): curating it would exclude
    every screenshot and report success.

    Raises:
        DataError: naming the folder the screenshots were looked for in.
    """
    from ..vault import open_image

    log = load_lifetrace(db, user=user)
    shots = [sh for ev in log.events for sh in ev.screenshots]
    if not shots:
        return
    present = [Path(sh.path) for sh in shots if sh.path is not None and Path(sh.path).is_file()]
    where = db.parent / "screenshots"
    if not present:
        raise DataError(
            where,
            f"none of the {len(shots)} screenshots {user}'s database lists is there "
            "(the screenshots folder is missing or moved); curate needs the images",
        )
    for path in present[:IMAGE_PROBES]:
        try:
            with open_image(path) as im:
                im.verify()
            return
        except Exception:  # noqa: BLE001, S112 - PIL raises many kinds on a non-image
            continue
    raise DataError(
        present[0].parent,
        f"none of the first {min(len(present), IMAGE_PROBES)} screenshot files of "
        f"{user} is an image (damaged or replaced); curate needs the images",
    )


def _published_texts(out: Path, user: str) -> dict[int, str]:
    """Screenshot id -> OCR text of the previous output of ``user`` (deleted screenshots' scene
    lines left out); empty when there is none or it cannot be read."""
    db = out / user / DB_NAME
    if not db.is_file():
        return {}
    try:
        con = connect_read_only(db)
        try:
            return {
                int(r[0]): str(r[1])
                for r in con.execute("SELECT screenshot_id, text_content FROM ocr_results")
                if r[1] and not str(r[1]).startswith(("[deleted screenshot]", "[blurred screenshot]"))
            }
        finally:
            con.close()
    except (sqlite3.Error, DataError):
        return {}


def _curate_user(
    user: str,
    db: Path,
    out: Path,
    screener: Screener,
    cfg: CurateConfig,
    summary: CurateSummary,
    progress: Callable[[str], None],
) -> tuple[list[dict], list[dict]]:
    state = out / STATE_DIR / user
    _private_dirs(out, out / STATE_DIR, state)
    log = load_lifetrace(db, user=user)
    q = apply_quality_filters(user, list(log.events), _file_sizes(db), cfg.quality)
    cache = _Cache(state / "screening.json")
    decisions = load_decisions(out, user)
    published = _published_texts(out, user)
    counts = {
        "events_in": len(log.events),
        "events_out": len(q.events),
        "screenshots_in": log.n_screenshots,
        "retain": 0,
        "blur": 0,
        "delete": 0,
        "screened": 0,
        "excluded_screenshots": sum(1 for r in q.records if "screenshot_id" in r),
        "duplicates": len(q.duplicate_of),
        "flags": sum(1 for r in q.records if r["decision"] == "flagged"),
    }

    def screen(shot: Screenshot, strict: bool) -> Screening:
        key = f"{q.hashes[shot.id]}:{screener.name}" + (":strict" if strict else "")
        got = cache.get(key)
        if got is not None and not shot.ocr_text.strip():  # the output needs a text, the cache holds none
            got = replace(got, ocr_text=published[shot.id]) if shot.id in published else None
        if got is None:
            got = screener.screen(
                shot.path,
                app=shot.app_name,
                title=shot.window_title,
                strict=strict,  # type: ignore[arg-type]
                text=shot.ocr_text,
            )
            cache.put(key, got)
            counts["screened"] += 1
        return got

    n_total = sum(len(v) for _, v in q.events)
    verdicts: dict[int, Verdict] = {}
    screenings: dict[int, Screening] = {}
    items: list[dict] = []
    done = 0
    try:
        for ev, shots in q.events:
            for shot in shots:
                s = screen(shot, False)
                done += 1
                if done % 10 == 0 or done == n_total:
                    progress(f"{user}: screened {done}/{n_total}")
                screenings[shot.id] = s
                orig = q.duplicate_of.get(shot.id)
                if orig is None and s.action != "delete":  # a duplicate is reviewed once, as its first copy
                    items.append(
                        {
                            "screenshot_id": shot.id,
                            "event_id": ev.id,
                            "image": str(shot.path),
                            "risk": s.risk,
                            "types": list(s.types),
                            "action": s.action,
                            "regions": [r.to_json() for r in s.regions],
                            "app": shot.app_name,
                            "title": clean_text(shot.window_title),
                        }
                    )
                action, phase, reasons = s.action, "screen", []
                new, why, text_types = _phase3(shot, shot.window_title, s, action, cfg)
                if new != action:
                    action, phase, reasons = new, "rules", why
                types = tuple(sorted(set(s.types) | text_types))
                reviewed = decisions.get(shot.id if orig is None else orig)
                overrode: tuple[str, ...] = ()
                if reviewed is not None:  # the reviewer's word is final over every automatic phase
                    overrode = _overridden(reviewed, s, phase, action, reasons)
                    action, phase, reasons = reviewed, "review", []
                elif orig is None and s.action != "delete":
                    summary.pending_review += 1
                risk = "high-risk" if action == "delete" else ("moderate" if action == "blur" else s.risk)
                if phase == "review" and action == "retain":
                    risk = "safe"
                verdicts[shot.id] = Verdict(
                    user,
                    ev.id,
                    shot.id,
                    risk,
                    types,
                    action,
                    s.scene,
                    phase,
                    s.screener,  # type: ignore[arg-type]
                    tuple(reasons),
                    len(s.regions),
                    overrode=overrode,
                    duplicate_of=orig,
                )
            # consistency: re-screen the neighbours of deleted screenshots strictly
            deleted = [i for i, sh in enumerate(shots) if verdicts[sh.id].action == "delete"]
            if len(deleted) >= cfg.neighbour_deletions:
                for i in sorted({j for d in deleted for j in (d - 1, d + 1) if 0 <= j < len(shots)} - set(deleted)):
                    sh = shots[i]
                    if verdicts[sh.id].phase == "review":  # reviewed: final
                        continue
                    strict = screen(sh, True)
                    if strict.types:
                        v = verdicts[sh.id]
                        verdicts[sh.id] = replace(
                            v,
                            action="delete",
                            risk="high-risk",
                            phase="rules",
                            types=tuple(sorted(set(v.types) | set(strict.types))),
                            reasons=v.reasons + ("neighbour of deleted screenshots, strict re-screen",),
                        )
    finally:
        cache.save()  # an interrupted run keeps every screening done so far
    write_json_atomic(state / "items.json", items, mode=FILE_MODE)
    verdicts = _write_user(user, out, q.events, verdicts, screenings, cfg)
    for v in verdicts.values():
        counts[v.action] += 1
    summary.users[user] = counts
    return q.records, [v.to_json() for v in verdicts.values()]


def _publish(
    shot: Screenshot,
    v: Verdict,
    s: Screening,
    dest: Path,
    first: dict[tuple[int, str], tuple[Path, str]],
    cfg: CurateConfig,
) -> tuple[str, int | None]:
    """Write the published image of a retained or blurred ``shot`` to ``dest``; a duplicate whose
    first copy got the same action is a hard link to that copy's file. Returns what was done and
    the id of the screenshot whose file it shares (``None``: its own)."""
    ref = first.get((v.duplicate_of, v.action)) if v.duplicate_of is not None else None
    if ref is not None:
        try:
            os.link(ref[0], dest)
        except OSError:  # a file system without hard links: a copy of the same bytes
            shutil.copyfile(ref[0], dest)
        os.chmod(dest, FILE_MODE)
        return ref[1], v.duplicate_of
    if v.action == "blur":
        done = _blur(shot.path, dest, s.regions, cfg.blur_radius)  # type: ignore[arg-type]
    else:
        _copy_plain(shot.path, dest)  # type: ignore[arg-type]
        done = "copied"
    os.chmod(dest, FILE_MODE)
    first[(shot.id, v.action)] = (dest, done)
    return done, None


def _text_as_read(shot: Screenshot, s: Screening) -> str:
    """The OCR text of a screenshot the reviewer retained and whose raw log holds no text: the
    screening's (cleaned) text when it found nothing, else the image read again (the resume cache
    never keeps screen text), so that a tag such as ``[PHONE]`` does not replace what the
    reviewer kept."""
    if not s.types or shot.path is None:
        return s.ocr_text
    return "\n".join(ocr_lines(shot.path))


def _write_user(
    user: str,
    out: Path,
    events: list[tuple[Event, list[Screenshot]]],
    verdicts: dict[int, Verdict],
    screenings: dict[int, Screening],
    cfg: CurateConfig,
) -> dict[int, Verdict]:
    """Build ``out/<user>`` aside (in the state folder), then move it into place; returns the
    verdicts with what was actually done to each image (``applied``, ``duplicate_of``)."""
    from PIL import Image

    build = out / STATE_DIR / f"{user}.build"
    if build.exists():
        shutil.rmtree(build)
    _private_dirs(build, build / "screenshots")
    first: dict[tuple[int, str], tuple[Path, str]] = {}  # (screenshot id, action) -> published file, what was done
    texts: dict[int, str] = {}  # screenshot id -> published OCR text
    done: dict[int, Verdict] = {}
    con = sqlite3.connect(build / DB_NAME)
    try:
        con.executescript(PROCESSED_DDL)
        con.execute(f"ALTER TABLE screenshots ADD COLUMN {FOCUSED_COLUMN}")  # the focused screen, as captured
        ocr_id = 0
        for ev, shots in events:
            con.execute(
                "INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    int(ev.id) if ev.id.isdigit() else ev.id,
                    ev.app_name,
                    clean_text(ev.window_title),
                    ev.start.strftime(_TS),
                    ev.end.strftime(_TS) if ev.end else None,
                    ev.start.strftime(_TS),
                    None,
                    None,
                    None if ev.is_llm_event is None else int(ev.is_llm_event),
                    clean_text(ev.summary),
                    clean_text(ev.description),
                    _clean_conversation(ev),
                    ev.intention,
                    ev.llm_platform,
                ),
            )
            for shot in shots:
                v, s = verdicts[shot.id], screenings[shot.id]
                dest = build / "screenshots" / shot.file_name
                width, height = shot.width or 0, shot.height or 0
                if v.action == "delete":
                    text = "[deleted screenshot] " + v.scene_description
                    digest, size = "", 0
                    done[shot.id] = replace(v, applied="left out", duplicate_of=None)
                else:
                    applied, ref = _publish(shot, v, s, dest, first, cfg)
                    with Image.open(dest) as im:
                        width, height = im.size
                    digest, size = sha256_file(dest), dest.stat().st_size
                    if ref is not None:  # the same OCR as the copy it shares its file with
                        text = texts[ref]
                    elif applied == WHOLE_SCREEN:  # a screen hidden whole keeps no text either
                        text = "[blurred screenshot] " + v.scene_description
                    elif v.phase == "review" and v.action == "retain":  # the reviewer saw it: nothing to hide
                        text = shot.ocr_text if shot.ocr_text.strip() else _text_as_read(shot, s)
                    else:
                        names = title_names(shot.window_title)  # a chat's person, on its screen too
                        text = clean_text(shot.ocr_text, names=names) if shot.ocr_text.strip() else s.ocr_text
                    texts[shot.id] = text
                    done[shot.id] = replace(v, applied=applied, duplicate_of=ref)
                created = shot.time.strftime(_TS)
                con.execute(
                    "INSERT INTO screenshots VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        shot.id,
                        shot.file_name,
                        digest,
                        size,
                        width,
                        height,
                        0,
                        shot.app_name,
                        clean_text(shot.window_title),
                        created,
                        created,
                        1,
                        int(ev.id) if ev.id.isdigit() else ev.id,
                        None if shot.focused is None else int(shot.focused),
                    ),
                )
                if text.strip():
                    ocr_id += 1
                    con.execute(
                        "INSERT INTO ocr_results VALUES (?,?,?,?,?,?,?)",
                        (ocr_id, shot.id, text, None, "ch_sim+en", None, created),
                    )
        con.commit()
    finally:
        con.close()
    os.chmod(build / DB_NAME, FILE_MODE)
    swap_in(build, out / user, old=out / STATE_DIR / f"{user}.old")
    return done


def curate(
    raw: str | Path,
    out: str | Path,
    screener: Screener,
    config: CurateConfig | None = None,
    progress: Callable[[str], None] | None = None,
) -> CurateSummary:
    """Curate every participant under ``raw`` into ``out`` (see the module docstring).

    The raw input is only read (databases opened read-only). Re-running resumes: phase-1
    results are reused, phase-2 decisions applied, and each user's folder is rebuilt aside
    and swapped in whole.

    Raises:
        DataError: bad input (missing, not LifeTrace, corrupt) or an ``--out`` that is
            not new, empty or an earlier curation of the same input.
    """
    raw, out = Path(raw), Path(out)
    cfg = config or CurateConfig()
    progress = progress or (lambda _msg: None)
    inputs = find_inputs(raw)
    for _user, db in inputs:  # every input readable as LifeTrace, its screenshots there, before --out is touched
        detect_schema(db)
    _check_out(raw, out)
    for user, db in inputs:
        _check_images(user, db)
    _private_dirs(out, out / STATE_DIR)
    write_json_atomic(
        out / STATE_DIR / "manifest.json",
        CurateManifest(raw=str(raw.resolve()), users={u: str(db.resolve()) for u, db in inputs}),
        mode=FILE_MODE,
    )
    summary = CurateSummary(out=str(out))
    curation: list[dict] = []
    privacy: list[dict] = []
    for user, db in inputs:
        c, p = _curate_user(user, db, out, screener, cfg, summary, progress)
        curation += c
        privacy += p
    write_atomic(
        out / "curation.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in curation), mode=FILE_MODE
    )
    write_atomic(
        out / "privacy.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in privacy), mode=FILE_MODE
    )
    return summary
