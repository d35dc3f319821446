"""``proagent curate`` and ``proagent review``: the command-line face of :mod:`proagent.curate`."""

from __future__ import annotations

import time
from pathlib import Path

import click

from ._errors import stopped_by_ctrl_c
from ._options import Finite, ray_option

__all__ = ["curate_cmd", "review_cmd"]


@click.command("curate")
@click.argument("raw", type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Output folder (new, empty, or an earlier curation of RAW: re-running resumes and applies reviews).",
)
@click.option(
    "--screener",
    default="ocr",
    show_default=True,
    help="Phase-1 screener: 'ocr' (offline: RapidOCR + presidio + face detector) or 'vlm:MODEL' (any inspect vision model).",
)
@click.option("--model-base-url", default=None, help="Base URL of an OpenAI-compatible server (vlm screener).")
@click.option(
    "--min-event-seconds", type=Finite(min=0), default=3.0, show_default=True, help="Exclude shorter events (B.3)."
)
@click.option(
    "--review-event-seconds",
    type=Finite(min=0),
    default=3600.0,
    show_default=True,
    help="Flag longer events for review (B.3).",
)
@click.option(
    "--min-llm-screenshots",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Flag LLM events with fewer valid screenshots (B.3).",
)
@click.option(
    "--dedup/--no-dedup",
    default=True,
    show_default=True,
    help="Store a SHA-256 duplicate screenshot once: it stays in its event as a reference to the first copy (same file, same OCR).",
)
@click.option(
    "--check-file-size/--no-check-file-size",
    default=True,
    show_default=True,
    help="A file whose size differs from the recorded file_size is invalid.",
)
@click.option(
    "--neighbour-deletions",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Re-screen neighbours strictly when this many screenshots of one event are deleted (B.4).",
)
@ray_option("the screenshots' screening")
def curate_cmd(
    raw: Path,
    out: Path,
    screener: str,
    model_base_url: str | None,
    min_event_seconds: float,
    review_event_seconds: float,
    min_llm_screenshots: int,
    dedup: bool,
    check_file_size: bool,
    neighbour_deletions: int,
    ray_address: str | None,
) -> None:
    """Turn a raw log RAW (a LifeTrace database, a participant or capture folder, or a folder of
    participants) into a shareable one in OUT: quality filters, SHA-256 dedup (a duplicate references
    its first copy; no event is dropped for it), screening, review
    decisions and rules; OUT/<user>/lifetrace_privacy_processed.db + screenshots/, OUT/curation.jsonl,
    OUT/privacy.jsonl.

    Example: proagent curate data/raw/P01 --out data/curated
    """
    from ..curate import CurateConfig, QualityConfig, curate, make_screener

    if ray_address is not None:
        from ..scale import require_ray

        require_ray()

    scr = make_screener(screener, base_url=model_base_url)  # UsageError (--screener)
    cfg = CurateConfig(
        quality=QualityConfig(min_event_seconds, review_event_seconds, min_llm_screenshots, dedup, check_file_size),
        neighbour_deletions=neighbour_deletions,
    )
    t0 = time.monotonic()
    try:
        if ray_address is None:
            summary = curate(raw, out, scr, cfg, progress=lambda m: click.echo(m, err=True))
        else:
            from ..scale.curate import curate_on_ray

            summary = curate_on_ray(
                raw,
                out,
                scr,
                screener,
                model_base_url,
                cfg,
                address=ray_address,
                progress=lambda m: click.echo(m, err=True),
                echo=lambda m: click.echo(m, err=True),
            )
    except OSError as e:  # a failing screener is a RunError (re-run to resume), mapped by its kind
        raise click.ClickException(f"--out {out}: cannot write there ({e.strerror or e})") from None
    for user, c in summary.users.items():
        click.echo(
            f"{user}: {c['events_out']} of {c['events_in']} events kept, {c['screenshots_in']} screenshots: "
            f"{c['retain']} retained, {c['blur']} blurred, {c['delete']} deleted, "
            f"{c['excluded_screenshots']} excluded, {c['duplicates']} duplicate(s) stored once; "
            f"{c['flags']} flag(s); {c['screened']} screened now"
        )
    users = ", ".join(str(out / u / "lifetrace_privacy_processed.db") for u in summary.users)
    click.echo(
        f"wrote {users} + screenshots/, {out / 'curation.jsonl'}, {out / 'privacy.jsonl'} "
        f"in {time.monotonic() - t0:.1f} s"
    )
    if summary.pending_review:
        click.echo(
            f"{summary.pending_review} screenshot(s) await review: proagent review {out} "
            f"(then run this command again to apply the decisions)"
        )


@click.command("review")
@click.argument("out", type=click.Path(path_type=Path))
@click.option(
    "--port",
    type=click.IntRange(min=0, max=65535),
    default=0,
    show_default=True,
    help="Port on 127.0.0.1 (0: any free one).",
)
def review_cmd(out: Path, port: int) -> None:
    """Phase-2 review of a curate output OUT: serves a page on 127.0.0.1 behind a random token
    showing what the screener retained or rated moderate, with the detected regions drawn;
    r / b / d retain, blur or delete (saved at once), j / k next and previous. Ctrl-C stops.

    Example: proagent review data/curated
    """
    from ..curate import serve_review

    try:
        srv = serve_review(out, port)
    except OSError as e:
        raise click.ClickException(f"--port {port}: cannot listen on 127.0.0.1 ({e.strerror or e})") from None
    try:  # Ctrl-C at any point from here stops the page: the normal end of a review, exit 0
        click.echo(f"{len(srv.items)} screenshot(s) to review at {srv.url}")
        click.echo("decisions are saved as you make them; Ctrl-C stops; then re-run proagent curate to apply them")
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        stopped_by_ctrl_c()
    finally:
        srv.stop()
