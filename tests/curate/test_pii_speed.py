"""Issue 24, curate's text screening: presidio is imported without torch and transformers (which it
imports although no recognizer here uses them), and a text too short in digits for any phone number
skips phonenumbers' matcher; both leave every finding as it was."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from system import require_module

require_module("presidio_analyzer")

from proagent.curate import _detect  # noqa: E402
from proagent.curate._detect import find_pii  # noqa: E402

TEXTS = [
    "mail alice@example.com and call +1 415 555 2671",
    "call 0664 1234",  # 8 digits: Austrian numbers may be this short
    "tel 555 2671",
    "room 1234",
    "+43 1 234",
    "card 4111 1111 1111 1111, pwd: hunter22",
    "    loss_12 = criterion(model(batch.x12), batch.y) + reg * 12.5",
    "0.812 0.774 0.790 0.801",
    "ip 192.168.1.20 port 8080",
    "IBAN DE89 3704 0044 0532 0130 00",
    "身份证 11010519491231002X 手机 13812345678",
    "api_key = sk-proj-abcdefghijklmnop1234",
    "+86 138 1234 5678",
    "1 2 3 4 5 6 7",
    "Ln 28, Col 1   Spaces: 4   UTF-8",
    "phone: (212) 555-0147 ext 12",
    "no digits here at all",
]


@pytest.mark.parametrize("strict", [False, True])
def test_skipping_the_phone_matcher_changes_no_finding(strict: bool, monkeypatch) -> None:  # noqa: ANN001
    fast = [find_pii(t, strict=strict) for t in TEXTS]
    monkeypatch.setattr(_detect, "PHONE_MIN_DIGITS", 0)
    monkeypatch.setattr(_detect, "_min_phone_digits", lambda: 0)
    assert [find_pii(t, strict=strict) for t in TEXTS] == fast
    assert any(f.type == "phone" for fs in fast for f in fs)  # the matcher still runs where a number fits


def test_min_phone_digits_is_below_the_non_strict_bound() -> None:
    # phonenumbers' metadata holds 4-digit national numbers (Austria): strict keeps those
    assert 1 <= _detect._min_phone_digits() <= 4 < _detect.PHONE_MIN_DIGITS


def test_presidio_loads_without_torch_and_transformers_which_stay_importable() -> None:
    code = (
        "import sys, json\n"
        "from proagent.curate._detect import find_pii, UNUSED_BY_PRESIDIO\n"
        "f = find_pii('mail alice@example.com')\n"
        "loaded = [n for n in UNUSED_BY_PRESIDIO if n in sys.modules]\n"
        "finders = [type(x).__name__ for x in sys.meta_path]\n"
        "import importlib.util\n"
        "spec = importlib.util.find_spec('transformers')\n"
        "print(json.dumps({'types': [x.type for x in f], 'loaded': loaded, 'finders': finders,\n"
        "                  'findable': spec is not None}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["types"] == ["email"]
    assert got["loaded"] == []
    assert "_HideModules" not in got["finders"]
    assert got["findable"] is True  # hidden only while presidio loaded
