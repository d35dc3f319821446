"""Personal data in text: presidio-analyzer with pattern recognizers only (no spaCy
model is loaded unless an English NER model is installed), plus recognizers for
what presidio lacks or misses next to Chinese text (whose characters count as word
characters, so presidio's ``\\b`` anchors fail there).

Types found (the names used in ``privacy.jsonl`` and the tags of cleaned text):

``email`` (presidio ``EmailRecognizer``, domain checked against tldextract's
bundled suffix list, never fetched), ``phone`` (presidio ``PhoneRecognizer``
through ``phonenumbers`` for international numbers, plus Chinese mobile
numbers ``1[3-9]`` + 9 digits, optional ``+86``), ``id_number`` (Chinese
resident identity number, 18 characters with the GB 11643-1999 ISO 7064
MOD 11-2 check character), ``bank_card`` (13-19 digits, spaces or dashes
allowed, Luhn checksum), ``iban`` (presidio, mod-97 checked), ``ip_address``
(presidio IPv4/IPv6), ``api_key`` (provider key prefixes: OpenAI ``sk-``,
GitHub ``ghp_``..., AWS ``AKIA``, Slack ``xox?-``, Google ``AIza``, JWTs,
``Bearer`` tokens, and ``key/token/secret = value`` assignments), ``password``
(the value after a password label, English or Chinese: password, passwd,
pwd, 密码, 口令) and ``person`` (only where spaCy's ``en_core_web_sm`` is
installed: the optional ``curate-ner`` extra).
"""

from __future__ import annotations

import functools
import importlib.abc
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["HIGH_RISK_TYPES", "PII_TYPES", "RECOGNIZERS", "TAGS", "UNUSED_BY_PRESIDIO", "PiiRecognizer", "TextFinding",
           "clean_text", "find_pii", "has_ner", "pii_recognizer"]

_NOT_ALNUM_BEFORE = r"(?<![0-9A-Za-z])"
_NOT_ALNUM_AFTER = r"(?![0-9A-Za-z])"
_FLAGS = re.DOTALL | re.MULTILINE | re.IGNORECASE
_DECIMALS = re.compile(r"(?<![\d.])0\.\d")
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"


@dataclass(frozen=True)
class TextFinding:
    """One piece of personal data in a text."""

    type: str
    """One of :data:`PII_TYPES`."""
    start: int
    """Start offset in the text (characters)."""
    end: int
    """End offset in the text (characters, exclusive)."""
    score: float
    """Recognizer confidence in [0, 1]."""


@dataclass(frozen=True)
class PiiRecognizer:
    """One type of personal data: the presidio recognizers that find it and how it is treated."""

    type: str
    """The name in ``privacy.jsonl`` and, upper-cased, the tag of cleaned text (``email``)."""
    entities: tuple[str, ...]
    """The presidio entity names its recognizers report (``EMAIL_ADDRESS``)."""
    build: Callable[[], list]
    """The presidio recognizers (made once, when the analyzer is first built; may be ``[]``)."""
    high_risk: bool
    """A screenshot showing it is deleted (ProAgentBench B.4), not blurred."""
    accept: Callable[[str, bool], bool]
    """``accept(span, strict)``: keep a match (drops a type's known false positives)."""


RECOGNIZERS: dict[str, PiiRecognizer] = {}
"""Every type :func:`find_pii` reports, by name, in registration order (overlaps of equal
length and risk go to the earlier one), filled by :func:`pii_recognizer`."""


def pii_recognizer(type: str, *, entities: tuple[str, ...], high_risk: bool = False,  # noqa: A002 (privacy.jsonl's word)
                   accept: Callable[[str, bool], bool] | None = None) -> Callable[[Callable[[], list]], Callable[[], list]]:
    """Register a type of personal data: decorate the function that builds its presidio
    recognizers (imports inside it: presidio loads only when text is first screened).

    Raises:
        ValueError: ``type`` is registered already by another function.
    """
    def add(build: Callable[[], list]) -> Callable[[], list]:
        old = RECOGNIZERS.get(type)
        if old is not None and old.build is not build:
            raise ValueError(f"PII type {type!r} is already registered")
        RECOGNIZERS[type] = PiiRecognizer(type, tuple(entities), build, bool(high_risk), accept or (lambda span, strict: True))
        return build

    return add


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def cn_id_checksum_ok(text: str) -> bool:
    """True when an 18-character Chinese resident ID has the right check character
    (GB 11643-1999: weights 2^(17-i) mod 11, ISO 7064 MOD 11-2)."""
    s = text.upper()
    if len(s) != 18 or not s[:17].isdigit():
        return False
    total = sum(int(c) * w for c, w in zip(s[:17], _ID_WEIGHTS))
    return _ID_CHECK[total % 11] == s[17]


@functools.lru_cache(maxsize=1)
def has_ner() -> bool:
    """True when spaCy's English NER model ``en_core_web_sm`` is installed."""
    import importlib.util

    return importlib.util.find_spec("en_core_web_sm") is not None


def _pattern(entity: str, name: str, regex: str, score: float, cls: type | None = None):  # noqa: ANN202
    """A presidio pattern recognizer of one regex (``cls``: a subclass that validates matches)."""
    from presidio_analyzer import Pattern, PatternRecognizer

    return (cls or PatternRecognizer)(supported_entity=entity, patterns=[Pattern(name, regex, score)], global_regex_flags=_FLAGS)


@pii_recognizer("email", entities=("EMAIL_ADDRESS",))
def _email() -> list:
    """Presidio's email recognizer with the domain checked against tldextract's bundled
    public-suffix snapshot (no download)."""
    from presidio_analyzer.predefined_recognizers import EmailRecognizer

    class OfflineEmail(EmailRecognizer):
        def validate_result(self, pattern_text: str) -> bool:  # noqa: D102
            return _tld_extract()(pattern_text.split("@")[-1]).suffix != ""

    return [OfflineEmail()]


def _phone_ok(span: str, strict: bool) -> bool:
    """phonenumbers also matches rows of decimal numbers such as "0.812 0.774 0.790"; outside
    ``strict``, fewer than 8 digits are no phone number."""
    if _DECIMALS.search(span) or sum("." in tok for tok in span.split()) > 1:
        return False
    return strict or sum(c.isdigit() for c in span) >= 8


@pii_recognizer("phone", entities=("PHONE_NUMBER", "CN_MOBILE"), accept=_phone_ok)
def _phone() -> list:
    """International numbers (presidio through ``phonenumbers``) and Chinese mobile numbers
    (``1[3-9]`` + 9 digits, optional ``+86``)."""
    from presidio_analyzer.predefined_recognizers import PhoneRecognizer

    return [PhoneRecognizer(supported_regions=("US", "GB", "DE", "FR", "CN", "HK", "TW", "JP", "IN", "CA", "AU")),
            _pattern("CN_MOBILE", "cn_mobile", _NOT_ALNUM_BEFORE + r"(?:\+?86[ \-]?)?1[3-9]\d[ \-]?\d{4}[ \-]?\d{4}"
                     + _NOT_ALNUM_AFTER, 0.8)]


@pii_recognizer("id_number", entities=("CN_RESIDENT_ID",), high_risk=True)
def _id_number() -> list:
    """Chinese resident identity numbers: 18 characters with the GB 11643-1999 check character."""
    from presidio_analyzer import PatternRecognizer

    class CnResidentId(PatternRecognizer):
        def validate_result(self, pattern_text: str) -> bool:  # noqa: D102
            return cn_id_checksum_ok(pattern_text)

    return [_pattern("CN_RESIDENT_ID", "cn_id", _NOT_ALNUM_BEFORE + r"[1-9]\d{16}[\dXx]" + _NOT_ALNUM_AFTER, 0.9, CnResidentId)]


@pii_recognizer("bank_card", entities=("BANK_CARD", "CREDIT_CARD"), high_risk=True)
def _bank_card() -> list:
    """13-19 digits, spaces or dashes allowed, with a valid Luhn checksum."""
    from presidio_analyzer import PatternRecognizer

    class BankCard(PatternRecognizer):
        def validate_result(self, pattern_text: str) -> bool:  # noqa: D102
            digits = re.sub(r"\D", "", pattern_text)
            return 13 <= len(digits) <= 19 and _luhn_ok(digits)

    return [_pattern("BANK_CARD", "bank_card", _NOT_ALNUM_BEFORE + r"\d(?:[ \-]?\d){12,18}" + _NOT_ALNUM_AFTER, 0.7, BankCard)]


@pii_recognizer("iban", entities=("IBAN_CODE",), high_risk=True)
def _iban() -> list:
    """Presidio's IBAN recognizer (mod-97 checked)."""
    from presidio_analyzer.predefined_recognizers import IbanRecognizer

    return [IbanRecognizer()]


@pii_recognizer("ip_address", entities=("IP_ADDRESS",))
def _ip_address() -> list:
    """Presidio's IPv4/IPv6 recognizer."""
    from presidio_analyzer.predefined_recognizers import IpRecognizer

    return [IpRecognizer()]


_KEY_PATTERN = (
    r"(?:sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|AKIA[0-9A-Z]{16}|xox[abpors]-[A-Za-z0-9\-]{10,}|AIza[0-9A-Za-z_\-]{30,}"
    r"|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})"
)


@pii_recognizer("api_key", entities=("API_KEY",), high_risk=True)
def _api_key() -> list:
    """Provider key prefixes (OpenAI ``sk-``, GitHub ``ghp_``..., AWS ``AKIA``, Slack ``xox?-``,
    Google ``AIza``, JWTs), ``Bearer`` tokens and ``key/token/secret = value`` assignments."""
    from presidio_analyzer import Pattern, PatternRecognizer

    return [PatternRecognizer(
        supported_entity="API_KEY",
        patterns=[
            Pattern("provider_key", _NOT_ALNUM_BEFORE + _KEY_PATTERN, 0.9),
            Pattern("bearer", r"(?<=\bbearer\s+)[A-Za-z0-9_\-\.=]{16,}", 0.8),
            Pattern(
                "assigned_secret",
                r"(?<=\b(?:api[_\- ]?key|access[_\- ]?key|secret(?:[_\- ]?key)?|token|auth|密钥|令牌)"
                r"[\"']?\s*[:：=]\s*[\"']?)[A-Za-z0-9_\-\.+/=]{12,}",
                0.8,
            ),
        ],
        global_regex_flags=_FLAGS,
    )]


@pii_recognizer("password", entities=("PASSWORD",), high_risk=True)
def _password() -> list:
    """The value after a password label, English or Chinese (password, passwd, pwd, 密码, 口令)."""
    return [_pattern("PASSWORD", "password_field",
                     r"(?<=(?:pass(?:word|wd)?|pwd|密码|口令)[\"']?\s*[:：=]\s*[\"']?)[^\s\"',;]{3,}", 0.9)]


@pii_recognizer("person", entities=("PERSON",))
def _person() -> list:
    """spaCy's NER (``en_core_web_sm``, the optional ``curate-ner`` extra); nothing without it."""
    if not has_ner():
        return []
    from presidio_analyzer.predefined_recognizers import SpacyRecognizer

    return [SpacyRecognizer(supported_entities=["PERSON"])]


PII_TYPES = tuple(RECOGNIZERS)
"""Every text type :func:`find_pii` reports (the built-in registrations, in order)."""

HIGH_RISK_TYPES = frozenset(t for t, r in RECOGNIZERS.items() if r.high_risk)
"""Types that make a screenshot high-risk (deleted, replaced by a scene description); the
others (and faces) make it moderate (blurred). ProAgentBench B.4 deletes high-risk shots."""

TAGS = {t: f"[{t.upper()}]" for t in PII_TYPES}
"""Replacement tag of each type in cleaned text, e.g. ``[EMAIL]``."""


@functools.lru_cache(maxsize=1)
def _tld_extract():  # noqa: ANN202
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True)


UNUSED_BY_PRESIDIO = ("torch", "transformers")
"""Packages presidio-analyzer imports when it is imported although the recognizers here never use
them: ``presidio_analyzer.nlp_engine`` imports ``transformers`` (for its Hugging Face NER engine,
inside ``try/except ImportError``) and its device detector and spaCy's ``thinc`` import ``torch``
(both guarded the same way). Importing presidio with them took 3.5 s on an idle core (2.0 s of
it ``transformers``, 0.8 s ``torch``; ``python -X importtime -c 'import presidio_analyzer'``) and
116-159 s under load; without them 0.6 s. :func:`_import_presidio` hides them from the importing
thread while presidio loads."""


class _HideModules(importlib.abc.MetaPathFinder):
    """A finder that makes ``import NAME`` fail (``ModuleNotFoundError``) for the top-level
    ``names`` in one thread only; other threads import them as usual."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = frozenset(names)
        self.thread = threading.get_ident()

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:  # noqa: D102
        if threading.get_ident() == self.thread and fullname.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r} (hidden while presidio loads)", name=fullname)
        return None


_PRESIDIO_LOCK = threading.Lock()


def _import_presidio() -> None:
    """Import ``presidio_analyzer`` with :data:`UNUSED_BY_PRESIDIO` hidden from it (those already
    imported in this process stay visible: they cost nothing more). Its optional engines that need
    them (``TransformersNlpEngine``; a CUDA device) are then unavailable in this process; the
    pattern recognizers and spaCy NER used here need neither."""
    with _PRESIDIO_LOCK:
        if "presidio_analyzer" in sys.modules:
            return
        hidden = tuple(n for n in UNUSED_BY_PRESIDIO if n not in sys.modules)
        finder = _HideModules(hidden)
        sys.meta_path.insert(0, finder)
        try:
            import presidio_analyzer  # noqa: F401
            import presidio_analyzer.nlp_engine  # noqa: F401
            import presidio_analyzer.predefined_recognizers  # noqa: F401
        finally:
            sys.meta_path.remove(finder)


@functools.lru_cache(maxsize=1)
def _analyzer(types: tuple[str, ...]):  # noqa: ANN202
    """A presidio AnalyzerEngine over the :data:`RECOGNIZERS` entries ``types`` (built once per
    process, again when a type is registered later).

    Without ``en_core_web_sm`` it gets a no-op NLP engine, so presidio never tries to
    load or download a spaCy model; with it, spaCy's NER adds ``person``. presidio is imported
    without ``torch`` and ``transformers`` (:data:`UNUSED_BY_PRESIDIO`)."""
    _import_presidio()
    from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
    from presidio_analyzer.nlp_engine import NlpArtifacts, NlpEngine

    registry = RecognizerRegistry(supported_languages=["en"])
    for t in types:
        for r in RECOGNIZERS[t].build():
            registry.add_recognizer(r)
    if has_ner():
        from presidio_analyzer.nlp_engine import SpacyNlpEngine

        nlp = SpacyNlpEngine(models=[{"lang_code": "en", "model_name": "en_core_web_sm"}])
        nlp.load()
    else:

        class NoNlp(NlpEngine):
            """No tokens, no entities: pattern recognizers need neither."""

            def load(self) -> None:
                pass

            def is_loaded(self) -> bool:
                return True

            def process_text(self, text: str, language: str) -> NlpArtifacts:
                return NlpArtifacts(entities=[], tokens=[], tokens_indices=[], lemmas=[], nlp_engine=self,
                                    language=language)

            def process_batch(self, texts, language, batch_size=1, n_process=1, **kw):  # noqa: ANN001, ANN201
                for t in texts:
                    yield t, self.process_text(t, language)

            def is_stopword(self, word: str, language: str) -> bool:
                return False

            def is_punct(self, word: str, language: str) -> bool:
                return False

            def get_supported_entities(self) -> list[str]:
                return []

            def get_supported_languages(self) -> list[str]:
                return ["en"]

        nlp = NoNlp()
    return AnalyzerEngine(registry=registry, nlp_engine=nlp, supported_languages=["en"])


PHONE_MIN_DIGITS = 8
"""Digits a phone finding must hold outside ``strict`` (:func:`_phone_ok`): a text with fewer is not
run through presidio's ``PhoneRecognizer`` at all. That recognizer is phonenumbers' matcher once per
supported region (11), 0.63 of the 0.80 ms that :func:`find_pii` took per line of code on an idle
core (1000 lines; every other recognizer together 0.05 ms), and a screen is screened line by line."""


@functools.lru_cache(maxsize=1)
def _min_phone_digits() -> int:
    """The fewest digits any number phonenumbers calls valid can have (``strict`` keeps phone matches
    of any length): the smallest possible national-number length over its metadata (4, Austria, in
    phonenumbers 9.0)."""
    import phonenumbers
    from phonenumbers import PhoneMetadata

    metas = [PhoneMetadata.metadata_for_region(r) for r in phonenumbers.SUPPORTED_REGIONS]
    metas += [PhoneMetadata.metadata_for_nongeo_region(c) for c in phonenumbers.COUNTRY_CODES_FOR_NON_GEO_REGIONS]
    lengths = [n for m in metas if m is not None and m.general_desc is not None
               for n in (m.general_desc.possible_length or ()) if n > 0]
    return min(lengths, default=1)


@functools.lru_cache(maxsize=4)
def _entities_but_phone(analyzer) -> list[str]:  # noqa: ANN001
    """Every entity ``analyzer`` supports except presidio's ``PHONE_NUMBER``."""
    return [e for e in analyzer.get_supported_entities(language="en") if e != "PHONE_NUMBER"]


def find_pii(text: str, *, strict: bool = False) -> list[TextFinding]:
    """Personal data in ``text`` (English and Chinese), sorted by start offset, overlaps
    merged into the longer (then higher-risk) finding.

    Args:
        text: any text (OCR output, window title, conversation).
        strict: also keep weak matches (presidio score below 0.4, and phone numbers of
            fewer than 8 digits), as used for re-screening the neighbours of
            deleted screenshots.
    """
    if not text or not text.strip():
        return []
    threshold = 0.0 if strict else 0.4
    kind = {e: entry for entry in RECOGNIZERS.values() for e in entry.entities}
    found: list[TextFinding] = []
    analyzer = _analyzer(tuple(RECOGNIZERS))
    entities = None
    if sum(c.isdigit() for c in text) < (_min_phone_digits() if strict else PHONE_MIN_DIGITS):
        entities = _entities_but_phone(analyzer)  # no phone number fits: skip its costly matcher
    for r in analyzer.analyze(text=text, language="en", entities=entities, score_threshold=threshold):
        entry = kind.get(r.entity_type)
        if entry is None or r.end <= r.start or not entry.accept(text[r.start:r.end], strict):
            continue
        found.append(TextFinding(entry.type, r.start, r.end, float(r.score)))
    rank = {t: int(entry.high_risk) for t, entry in RECOGNIZERS.items()}
    found.sort(key=lambda f: (f.start, -(f.end - f.start), -rank[f.type]))
    merged: list[TextFinding] = []
    for f in found:
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            if rank[f.type] > rank[last.type]:
                merged[-1] = TextFinding(f.type, last.start, max(last.end, f.end), max(f.score, last.score))
            elif f.end > last.end:
                merged[-1] = TextFinding(last.type, last.start, f.end, last.score)
            continue
        merged.append(f)
    return merged


def clean_text(text: str, findings: list[TextFinding] | None = None, *, strict: bool = False) -> str:
    """``text`` with every finding replaced by its type tag (:data:`TAGS`), e.g.
    ``"mail alice@example.com"`` -> ``"mail [EMAIL]"``. ``findings`` default to
    :func:`find_pii` of the text."""
    if not text:
        return text
    findings = find_pii(text, strict=strict) if findings is None else findings
    out, pos = [], 0
    for f in sorted(findings, key=lambda f: f.start):
        if f.start < pos:
            continue
        out.append(text[pos:f.start])
        out.append(f"[{f.type.upper()}]")  # TAGS[f.type], also for a type registered later
        pos = f.end
    out.append(text[pos:])
    return "".join(out)
