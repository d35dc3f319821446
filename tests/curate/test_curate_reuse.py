"""curate reuses the OCR text the raw log holds (issue 24): a screenshot whose recorded text shows
no personal data is not read by RapidOCR again; one whose text does is (its word boxes locate the
blur), and the verdicts are those of a run that reads every image itself."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from system import require_module

require_module("rapidocr", "presidio_analyzer")

from pii_screens import make_pii_corpus  # noqa: E402

from proagent.curate import (  # noqa: E402
    OcrScreener,
    _screen,  # noqa: E402
    curate,
)


class _Counting:
    """Counts calls to the RapidOCR engine (the real one answers)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, threads: int | None = None):  # noqa: ANN204
        engine = _REAL(threads)

        def run(*a, **k):  # noqa: ANN002, ANN003, ANN202
            self.calls += 1
            return engine(*a, **k)

        return run


_REAL = _screen.load_ocr


def _verdicts(out: Path) -> dict[int, tuple]:
    rows = [json.loads(line) for line in (out / "privacy.jsonl").read_text("utf-8").splitlines()]
    return {d["screenshot_id"]: (d["action"], tuple(d["types"]), d["n_regions"] > 0, d["applied"]) for d in rows}


def test_recorded_ocr_text_spares_the_second_ocr_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = make_pii_corpus(tmp_path / "raw" / "P01", types=("email", "password"), languages=("en",), n_clean=3)
    bare = tmp_path / "bare" / "P01"  # the same log without its OCR rows: every image is read
    shutil.copytree(corpus.root, bare)
    con = sqlite3.connect(bare / "lifetrace.db")
    con.execute("DELETE FROM ocr_results")
    con.commit()
    con.close()

    counting = _Counting()
    monkeypatch.setattr(_screen, "load_ocr", counting)
    curate(corpus.root, tmp_path / "out", OcrScreener(faces=False))
    reused = counting.calls
    counting.calls = 0
    curate(bare, tmp_path / "out-bare", OcrScreener(faces=False))
    n = len(corpus.planted) + len(corpus.clean_ids)
    assert counting.calls == n  # without OCR rows every screenshot is read once
    assert reused == len(corpus.planted)  # with them, only those whose text holds personal data
    assert _verdicts(tmp_path / "out") == _verdicts(tmp_path / "out-bare")
    for sid in corpus.planted:  # the planted value was located on the image: a region to blur or a deletion
        action, _types, has_region, _applied = _verdicts(tmp_path / "out")[sid]
        assert action == "delete" or has_region


def test_locate_reads_the_image_only_when_the_text_holds_personal_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PIL import Image

    img = tmp_path / "screen_0_20260105_090000_000.png"
    Image.new("RGB", (400, 120), (250, 250, 250)).save(img)
    counting = _Counting()
    monkeypatch.setattr(_screen, "load_ocr", counting)
    regions, lines, n = OcrScreener(faces=False).locate(img, text="def train(model):\n\n    return loss")
    assert (regions, lines, n, counting.calls) == ([], ["def train(model):", "    return loss"], 2, 0)
    OcrScreener(faces=False).locate(img, text="mail li.wei.research@example.com")
    assert counting.calls == 1  # personal data in the recorded text: read again to locate it
