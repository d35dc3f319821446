"""Chinese pages render as text, not boxes (issue 34 item 8): ``scripts/system-packages.txt`` installs a
CJK font (``fonts-noto-cjk``); headless Chromium renders a Chinese page and RapidOCR reads the Chinese
back from the screenshot (without a CJK font every glyph is a box and nothing is read)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from system import require_binary, require_module

require_module("rapidocr")

PAGE = """<html><head><meta charset="utf-8"></head><body style="font-size:30px;background:#fff;margin:24px">
<p>收货地址和会议时间</p><p>今天也要加油</p></body></html>"""


def test_chromium_renders_a_chinese_page_that_ocr_reads(tmp_path: Path) -> None:
    chromium = require_binary("chromium")["chromium"]
    page, shot = tmp_path / "zh.html", tmp_path / "zh.png"
    page.write_text(PAGE, "utf-8")
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            f"--screenshot={shot}",
            "--window-size=700,240",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    from proagent.ocr import load_ocr

    read = "".join(load_ocr()(str(shot)).txts or ())
    assert "收货地址" in read and "今天也要加油" in read, read
