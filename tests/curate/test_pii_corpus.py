"""Every common personal-data type is caught when it stands ALONE on a screen (issue 34 item 1), and
ordinary pages (code, chats, numbers in LLM replies, prices, dates, order numbers) are left alone.
The full measured corpus is ``benchmarks/pii_corpus.py``; here: the text path over every screen of
``tests/pii_screens.py``, and a few screens rendered and curated through RapidOCR."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from system import require_module

require_module("presidio_analyzer")

from pii_screens import ALONE, ORDINARY, make_screens_corpus  # noqa: E402

from proagent.curate import high_risk_types  # noqa: E402
from proagent.curate._detect import find_pii_lines  # noqa: E402

LISTED = {
    "email",
    "phone",
    "bank_card",
    "iban",
    "bank_account",
    "us_ssn",
    "id_number",
    "passport",
    "address",
    "person",
    "api_key",
    "password",
    "date_of_birth",
}
"""The types issue 34 lists (ip_address too is planted)."""


def _types(lines: tuple[str, ...]) -> set[str]:
    return {f.type for fs in find_pii_lines(list(lines)) for f in fs}


def test_every_listed_type_is_planted_alone() -> None:
    assert LISTED <= {t for sc in ALONE for t in sc.planted}
    assert all(len(sc.planted) == 1 or sc.planted == ("person", "address") for sc in ALONE)


@pytest.mark.parametrize("screen", ALONE, ids=[sc.name for sc in ALONE])
def test_each_type_alone_is_found_on_its_screen(screen) -> None:  # noqa: ANN001
    assert set(screen.planted) <= _types(screen.lines)


def test_recall_per_type_is_one_and_ordinary_pages_have_no_finding() -> None:
    found: dict[str, list[bool]] = {}
    for sc in ALONE:
        got = _types(sc.lines)
        for t in sc.planted:
            found.setdefault(t, []).append(t in got)
    assert {t: sum(v) / len(v) for t, v in found.items()} == {t: 1.0 for t in found}
    false = {sc.name: sorted(_types(sc.lines + (sc.title,))) for sc in ORDINARY}
    assert sum(bool(v) for v in false.values()) == 0, false


SUBSET = ("us_ssn", "passport", "name+address", "date_of_birth", "order", "llm-numbers")


def test_a_rendered_subset_through_ocr_and_curate(tmp_path: Path) -> None:
    """The issue's three misses (SSN, passport, a name with an address) and a birth date, beside two
    ordinary pages full of numbers, rendered and curated with RapidOCR reading each image."""
    pytest.importorskip("rapidocr")
    from proagent.curate import OcrScreener, curate

    screens = tuple(sc for sc in ALONE + ORDINARY if sc.name in SUBSET)
    shown = make_screens_corpus(tmp_path / "raw" / "P01", screens)
    curate(tmp_path / "raw" / "P01", tmp_path / "out", OcrScreener(faces=False))
    got = {
        d["screenshot_id"]: d for d in map(json.loads, (tmp_path / "out" / "privacy.jsonl").read_text().splitlines())
    }
    published = (tmp_path / "out" / "P01" / "lifetrace_privacy_processed.db").read_bytes().decode("utf-8", "replace")
    for sid, sc in shown.items():
        v = got[sid]
        if not sc.planted:
            assert (v["action"], v["types"]) == ("retain", []), (sc.name, v)
            continue
        assert set(sc.planted) <= set(v["types"]), (sc.name, v)
        assert v["action"] == ("delete" if set(sc.planted) & high_risk_types() else "blur"), (sc.name, v)
        for value in sc.values:
            assert value not in published, (sc.name, value)
