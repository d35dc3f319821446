"""PII recognizers are one registry (issue 25 item 3): a type of personal data is one
``pii_recognizer`` entry in ``curate/_detect.py`` (its presidio recognizers, its entity names,
its risk, its false-positive filter), and find_pii / clean_text pick it up. The lists of types and
of high-risk types are read from the registry when used (issue 38 item 1): a high-risk type
registered later, outside ``_detect.py``, is listed, and curate deletes a screenshot showing it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proagent.curate import high_risk_types, pii_types
from proagent.curate._detect import RECOGNIZERS, clean_text, find_pii, pii_recognizer


def test_builtin_types_and_risks_come_from_the_registry() -> None:
    assert pii_types() == (
        "email",
        "phone",
        "id_number",
        "us_ssn",
        "passport",
        "bank_card",
        "iban",
        "bank_account",
        "ip_address",
        "api_key",
        "password",
        "address",
        "date_of_birth",
        "person",
    )
    assert high_risk_types() == {
        "id_number",
        "us_ssn",
        "passport",
        "bank_card",
        "iban",
        "bank_account",
        "api_key",
        "password",
    }
    assert pii_types() == tuple(RECOGNIZERS)


def _register_ticket() -> None:
    @pii_recognizer("ticket", entities=("TICKET_ID",), high_risk=True)
    def _ticket() -> list:
        from presidio_analyzer import Pattern, PatternRecognizer

        return [
            PatternRecognizer(
                supported_entity="TICKET_ID", patterns=[Pattern("ticket", r"\bABC-\d{6}-[A-Z]{2}\b", 0.9)]
            )
        ]


def test_a_registered_type_is_found_and_tagged() -> None:
    text = "ticket ABC-123456-XY for alice@example.com"
    assert [f.type for f in find_pii(text)] == ["email"]
    _register_ticket()
    try:
        found = find_pii(text)
        assert [(f.type, text[f.start : f.end]) for f in found] == [
            ("ticket", "ABC-123456-XY"),
            ("email", "alice@example.com"),
        ]
        assert clean_text(text) == "ticket [TICKET] for [EMAIL]"
        with pytest.raises(ValueError, match="already registered"):
            pii_recognizer("ticket", entities=("X",))(lambda: [])
    finally:
        del RECOGNIZERS["ticket"]
    assert [f.type for f in find_pii(text)] == ["email"]


def test_a_late_high_risk_type_is_listed_and_deleted_by_curate(tmp_path: Path) -> None:
    """Registered after curate was imported: listed by pii_types/high_risk_types and in the VLM
    screener's prompt, and a screenshot showing it is DELETED (not blurred) by curate."""
    pytest.importorskip("rapidocr")
    from pii_screens import Screen, make_screens_corpus

    from proagent.curate import OcrScreener, curate
    from proagent.curate._screen import vlm_prompt

    shown = make_screens_corpus(
        tmp_path / "raw" / "P01",
        (Screen("ticket", "Jira", "Support - Jira", ("Support queue", "Ticket ABC-123456-XY is open"), ("ticket",)),),
        ocr_rows=True,
    )
    _register_ticket()
    try:
        assert "ticket" in pii_types() and "ticket" in high_risk_types()
        assert "ticket" in vlm_prompt("Jira", "Support", strict=False)
        curate(tmp_path / "raw" / "P01", tmp_path / "out", OcrScreener(faces=False))
    finally:
        del RECOGNIZERS["ticket"]
    (sid,) = shown
    (verdict,) = map(json.loads, (tmp_path / "out" / "privacy.jsonl").read_text("utf-8").splitlines())
    assert verdict["screenshot_id"] == sid
    assert (verdict["action"], verdict["risk"], verdict["types"]) == ("delete", "high-risk", ["ticket"])
    assert (
        not (tmp_path / "out" / "P01" / "screenshots")
        .joinpath(next(iter((tmp_path / "raw" / "P01" / "screenshots").iterdir())).name)
        .exists()
    )
    assert "ticket" not in pii_types()


def test_a_type_filters_its_own_false_positives() -> None:
    """The phone entry's filter: rows of decimals are no phone number; short numbers only when strict."""
    assert find_pii("scores 0.812 0.774 0.790 0.801") == []
    assert [f.type for f in find_pii("call +1 415 555 2671")] == ["phone"]
    assert RECOGNIZERS["phone"].accept("555 2671", True) and not RECOGNIZERS["phone"].accept("555 2671", False)


def test_weak_types_need_their_context_even_when_strict() -> None:
    """A bare 9-digit number is presidio's weak passport/SSN/bank match (0.05): min_score keeps it out
    of strict screening too; beside its word it counts."""
    assert find_pii("build 581234567 done", strict=True) == []
    assert [f.type for f in find_pii("Passport number: 581234567", strict=True)] == ["passport"]
    assert [f.type for f in find_pii("SSN 536224781")] == ["us_ssn"]
