"""``proagent capture``: record an activity log; ``proagent capture stop|pause|resume DIR``."""

from __future__ import annotations

from pathlib import Path

import click

from ._options import Finite
from ._util import check_writable_dir, window_seconds

__all__ = ["capture"]


@click.group("capture", invoke_without_command=True)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Capture folder: lifetrace.db (LifeTrace 2025-11 schema) and screenshots/ go there; an existing "
    "capture folder is continued.",
)
@click.option(
    "--interval",
    type=Finite(),
    default=1.0,
    show_default=True,
    help="Seconds between captures (1 Hz as ProAgentBench).",
)
@click.option(
    "--split-on-title",
    is_flag=True,
    default=False,
    help="Also start a new event when the window title changes (LifeTrace: app changes only).",
)
@click.option(
    "--split-in-app/--no-split-in-app",
    "--split-on-tab/--no-split-on-tab",
    "split_on_tab",
    default=True,
    show_default=True,
    help="Also start a new event inside one app where a person would: a browser's page moving to another "
    "site or page kind (mail -> an LLM chat in one window), another file in an editor, another terminal "
    "window or title (not on an unsaved marker, a counter or a clock); --no-split-in-app: app changes only, "
    "as LifeTrace. --split-on-tab/--no-split-on-tab: the same switch's earlier name.",
)
@click.option(
    "--idle",
    "idle",
    default="5m",
    show_default=True,
    help="No input, screen or window change for this long closes the open event (1s .. 24h).",
)
@click.option(
    "--format",
    "image_format",
    type=click.Choice(["png", "webp"]),
    default="png",
    show_default=True,
    help="Screenshot file format.",
)
@click.option(
    "--dedup-distance",
    type=click.IntRange(0, 64),
    default=5,
    show_default=True,
    help="A screenshot within this many pHash bits (Hamming) of the last stored one is a duplicate and not stored "
    "(LifeTrace: 5; 0: only identical pHashes are duplicates).",
)
@click.option(
    "--ocr/--no-ocr", default=True, show_default=True, help="OCR screenshots (RapidOCR) in a background process."
)
@click.option(
    "--ocr-interval",
    type=Finite(),
    default=2.0,
    show_default=True,
    help="Start at most one OCR every this many seconds.",
)
@click.option(
    "--ocr-region",
    type=click.Choice(["window", "screen"]),
    default="window",
    show_default=True,
    help="What OCR reads of a screenshot: the focused window (X11, sway; the whole screen elsewhere) or the whole "
    "screen (every window's text, at several times the CPU).",
)
@click.option(
    "--ocr-finish",
    type=Finite(),
    default=60.0,
    show_default=True,
    help="At stop, give OCR up to this many seconds to read the screenshots it has not reached (full speed, "
    "a progress line every 5 s; Ctrl-C again stops at once); 0: stop at once. The stop line says how "
    "many stay unread: curate OCRs each of them itself.",
)
@click.option(
    "--max-days",
    type=Finite(),
    default=None,
    help="Remove screenshot files older than this many days (rows and OCR stay).",
)
@click.option(
    "--max-gb", type=Finite(), default=None, help="Keep screenshot files under this many GB, removing the oldest first."
)
@click.option(
    "--exclude-app", "exclude_app", multiple=True, help="Never record this application (process name; repeatable)."
)
@click.option(
    "--exclude-title",
    "exclude_title",
    multiple=True,
    help="Never record windows whose title matches this regex (case-insensitive; repeatable).",
)
@click.option(
    "--default-exclusions/--no-default-exclusions",
    default=True,
    show_default=True,
    help="Exclude private/incognito browser windows and password managers (proagent/data/capture_exclusions.json).",
)
@click.option("--duration", default=None, help="Stop by itself after this long (e.g. 30s, 2h); default: until stopped.")
@click.option(
    "--encrypt",
    is_flag=True,
    default=False,
    help="Encrypt a new capture folder at rest: SQLCipher database, AES-256-GCM screenshots; the key in the OS "
    "keyring, or derived from PROAGENT_PASSPHRASE when set (an encrypted folder stays encrypted).",
)
@click.pass_context
def capture(
    ctx: click.Context,
    out: Path | None,
    interval: float,
    split_on_title: bool,
    split_on_tab: bool,
    idle: str,
    image_format: str,
    dedup_distance: int,
    ocr: bool,
    ocr_interval: float,
    ocr_region: str,
    ocr_finish: float,
    max_days: float | None,
    max_gb: float | None,
    exclude_app: tuple[str, ...],
    exclude_title: tuple[str, ...],
    default_exclusions: bool,
    duration: str | None,
    encrypt: bool,
) -> None:
    """Record the screen (every monitor), the foreground app and window title and events into
    OUT/lifetrace.db until Ctrl-C or `proagent capture stop OUT`. Linux X11 and sway (tested),
    GNOME/KDE Wayland through the desktop portal (tested against a mock), Windows and macOS
    (untested); nothing leaves the machine.

    Example: proagent capture --out ~/activity --exclude-app signal-desktop
    """
    if ctx.invoked_subcommand is not None:
        if out is not None:
            raise click.UsageError(
                f"--out goes with recording, not with '{ctx.invoked_subcommand}' (give DIR after it)"
            )
        return
    if out is None:
        raise click.UsageError("give --out DIR to record, or one of: stop DIR, pause DIR, resume DIR")
    import sqlite3

    from ..capture import (
        CaptureConfig,
        Exclusions,
        check_capture_folder,
        check_encryption,
        check_session,
        record,
        removed_if_refused,
    )

    # every option value (UsageError, exit 2), then the session and the folder (CaptureError,
    # DataError: exit 1), before the folder (or its lock) is created
    idle_s = window_seconds(idle, "--idle", what="duration")
    duration_s = window_seconds(duration, "--duration", what="duration") if duration else None
    cfg = CaptureConfig(
        out=out,
        interval=interval,
        split_on_title=split_on_title,
        split_on_tab=split_on_tab,
        idle=idle_s,
        image_format=image_format,
        dedup_distance=dedup_distance,
        ocr=ocr,
        ocr_interval=ocr_interval,
        ocr_region=ocr_region,
        ocr_finish=ocr_finish,
        max_days=max_days,
        max_gb=max_gb,
        exclude_apps=exclude_app,
        exclude_titles=exclude_title,
        default_exclusions=default_exclusions,
        duration=duration_s,
        encrypt=encrypt,
    )  # type: ignore[arg-type]
    Exclusions.build(exclude_app, exclude_title, defaults=default_exclusions)
    check_session()
    continued = check_capture_folder(out)
    check_encryption(out, encrypt, continued)
    missing = [d for d in (out, *out.parents) if not d.exists()]
    check_writable_dir(out, "--out")
    with removed_if_refused(
        out, continued=continued, missing=missing
    ):  # a refused new capture leaves no half-made folder
        try:
            record(cfg, say=click.echo)
        except (sqlite3.Error, OSError) as e:  # disk full, folder removed, ...: what was committed is kept
            raise click.ClickException(f"capture in {out} stopped: {e}") from None


def _control(name: str, help_text: str) -> click.Command:
    @click.command(name, help=help_text)
    @click.argument("folder", metavar="DIR", type=click.Path(exists=True, file_okay=False, path_type=Path))
    def cmd(folder: Path) -> None:
        from ..capture import read_status, send_command

        def progress(status: dict) -> None:
            click.echo(
                f"capture in {folder}: OCR finishing, {status.get('unread')} of {status.get('total')} "
                "screenshots left to read"
            )

        pid = send_command(folder, name, progress=progress)  # type: ignore[arg-type]  # CaptureError: exit 1
        past = {"stop": "stopped", "pause": "told to pause", "resume": "told to resume"}[name]
        status = read_status(folder) if name == "stop" else {}
        unread = ""
        if status.get("state") == "stopped":
            unread = f"; {status.get('unread')} screenshots unread by OCR" + (
                " (curate OCRs each of them itself)" if status.get("unread") else ""
            )
        click.echo(f"capture in {folder} (pid {pid}) {past}{unread}")

    return cmd


for _name, _help in (
    (
        "stop",
        "Stop the capture running in DIR (waits up to 10 s for it to exit, longer while its OCR "
        "finishes, see --ocr-finish) and say how many screenshots stay unread by OCR.",
    ),
    ("pause", "Pause the capture running in DIR: nothing is recorded until resume."),
    ("resume", "Resume the paused capture running in DIR."),
):
    capture.add_command(_control(_name, _help))
