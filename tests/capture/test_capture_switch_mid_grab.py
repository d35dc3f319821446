"""A window switch that happens while capture grabs the screens (found under load in
test_capture_monitors: the old event got a frame of the new window). The tick's images may show
either window, so none is stored; the event follows the newer window and the next tick grabs it.
Also the privacy case: an excluded window that comes to the front during the grab."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from PIL import Image

from proagent.capture import CaptureConfig, record
from proagent.capture._platform import WindowInfo
from proagent.capture._store import EXCLUDED_APP

pytest.importorskip("imagehash")

NOTES = WindowInfo("xterm", "notes", pid=10, window_id=1)
MAIL = WindowInfo("thunderbird", "Inbox", pid=11, window_id=2)
VAULT = WindowInfo("keepassxc", "Passwords", pid=12, window_id=3)
COLOURS = {1: (200, 30, 30), 2: (30, 30, 200), 3: (30, 200, 30)}


class Desktop:
    """One screen whose window in front changes during the grab number ``switch_at`` (1-based):
    the image shows the new window while the probe read the old one just before."""

    def __init__(self, first: WindowInfo, then: WindowInfo, switch_at: int) -> None:
        self.win, self.then, self.switch_at, self.grabs = first, then, switch_at, 0
        self.shown: list[int] = []  # window id shown by each grab

    # the probe
    def foreground(self) -> WindowInfo:
        return self.win

    def idle_seconds(self) -> float | None:
        return 0.0

    # the screen source
    def grab(self) -> list[tuple[int, Image.Image]]:
        self.grabs += 1
        if self.grabs == self.switch_at:
            self.win = self.then
        assert self.win.window_id is not None
        self.shown.append(self.win.window_id)
        img = Image.new("RGB", (320, 200), COLOURS[self.win.window_id])
        img.paste((255, 255, 255), (20 + 40 * self.win.window_id, 20, 60 + 40 * self.win.window_id, 60))
        return [(0, img)]

    def focused_screen(self, win: WindowInfo | None) -> int | None:
        return 0

    def close(self) -> None:
        pass


def _run(tmp_path: Path, desktop: Desktop) -> tuple[list[tuple[str, int]], list[tuple[int, tuple[int, int, int]]]]:
    out = tmp_path / "cap"
    cfg = CaptureConfig(out=out, interval=0.05, duration=0.6, ocr=False, exclude_apps=("keepassxc",))
    stats = record(cfg, probe=desktop, grabber=desktop, say=lambda _: None)
    assert stats.switched_ticks == 1
    with sqlite3.connect(out / "lifetrace.db") as con:
        events = con.execute("SELECT app_name, id FROM events ORDER BY id").fetchall()
        shots = con.execute("SELECT event_id, file_path FROM screenshots ORDER BY id").fetchall()
    return events, [(eid, Image.open(fp).convert("RGB").getpixel((0, 0))) for eid, fp in shots]


def test_a_switch_during_the_grab_stores_no_frame_in_the_old_event(tmp_path: Path) -> None:
    desktop = Desktop(NOTES, MAIL, switch_at=2)
    events, shots = _run(tmp_path, desktop)
    assert desktop.grabs >= 4  # the ticks after the switch grab the new window
    assert [a for a, _ in events] == ["xterm", "thunderbird"]
    by_event = {eid: {c for e, c in shots if e == eid} for _, eid in events}
    assert by_event == {events[0][1]: {COLOURS[1]}, events[1][1]: {COLOURS[2]}}, by_event


def test_an_excluded_window_in_front_during_the_grab_is_not_stored(tmp_path: Path) -> None:
    desktop = Desktop(NOTES, VAULT, switch_at=2)
    events, shots = _run(tmp_path, desktop)
    assert desktop.shown == [1, 3]  # the vault was grabbed once, mid-switch; then never again
    assert [c for _, c in shots] == [COLOURS[1]], shots  # and what was grabbed of it is not stored
    assert [a for a, _ in events] == ["xterm", EXCLUDED_APP]
