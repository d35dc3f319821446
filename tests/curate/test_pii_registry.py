"""PII recognizers are one registry (issue 25 item 3): a type of personal data is one
``pii_recognizer`` entry in ``curate/_detect.py`` (its presidio recognizers, its entity names,
its risk, its false-positive filter), and find_pii / clean_text pick it up."""

from __future__ import annotations

import pytest

from proagent.curate._detect import HIGH_RISK_TYPES, PII_TYPES, RECOGNIZERS, clean_text, find_pii, pii_recognizer


def test_builtin_types_and_risks_come_from_the_registry() -> None:
    assert PII_TYPES == ("email", "phone", "id_number", "bank_card", "iban", "ip_address", "api_key", "password", "person")
    assert HIGH_RISK_TYPES == {"id_number", "bank_card", "iban", "api_key", "password"}
    assert PII_TYPES == tuple(RECOGNIZERS)[: len(PII_TYPES)]


def test_a_registered_type_is_found_and_tagged() -> None:
    text = "ticket ABC-123456-XY for alice@example.com"
    assert [f.type for f in find_pii(text)] == ["email"]

    @pii_recognizer("ticket", entities=("TICKET_ID",), high_risk=True)
    def _ticket() -> list:
        from presidio_analyzer import Pattern, PatternRecognizer

        return [PatternRecognizer(supported_entity="TICKET_ID", patterns=[Pattern("ticket", r"\bABC-\d{6}-[A-Z]{2}\b", 0.9)])]

    try:
        found = find_pii(text)
        assert [(f.type, text[f.start:f.end]) for f in found] == [("ticket", "ABC-123456-XY"), ("email", "alice@example.com")]
        assert clean_text(text) == "ticket [TICKET] for [EMAIL]"
        with pytest.raises(ValueError, match="already registered"):
            pii_recognizer("ticket", entities=("X",))(lambda: [])
    finally:
        del RECOGNIZERS["ticket"]
    assert [f.type for f in find_pii(text)] == ["email"]


def test_a_type_filters_its_own_false_positives() -> None:
    """The phone entry's filter: rows of decimals are no phone number; short numbers only when strict."""
    assert find_pii("scores 0.812 0.774 0.790 0.801") == []
    assert [f.type for f in find_pii("call +1 415 555 2671")] == ["phone"]
    assert RECOGNIZERS["phone"].accept("555 2671", True) and not RECOGNIZERS["phone"].accept("555 2671", False)
