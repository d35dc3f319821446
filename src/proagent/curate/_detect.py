"""Personal data in text: presidio-analyzer with pattern recognizers only (no spaCy
model is loaded unless an English NER model is installed), plus recognizers for
what presidio lacks or misses next to Chinese text (whose characters count as word
characters, so presidio's ``\\b`` anchors fail there). Check digits come from
``python-stdnum`` (Luhn, GB 11643 resident IDs, US SSN ranges), not from code here.

Types found by default (the names used in ``privacy.jsonl`` and the tags of cleaned text;
"delete" = high risk, the screenshot is left out; "blur" = its regions are blurred):

=================  ======  ==========================================================
type               risk    how
=================  ======  ==========================================================
``email``          blur    presidio ``EmailRecognizer``, domain checked against
                           tldextract's bundled suffix list (never fetched)
``phone``          blur    presidio ``PhoneRecognizer`` (``phonenumbers``) + Chinese
                           mobiles ``1[3-9]`` + 9 digits, optional ``+86``
``id_number``      delete  Chinese resident ID, 18 characters, ``stdnum.cn.ric``'s
                           birth date and ISO 7064 MOD 11-2 check character
``us_ssn``         delete  presidio ``UsSsnRecognizer`` (``AAA-GG-SSSS``; nine bare digits
                           only beside "SSN"/"social security"), ``stdnum.us.ssn``
``passport``       delete  presidio ``UsPassportRecognizer`` beside the word "passport"
                           or 护照, and any 6-9 letters/digits after a passport label
``bank_card``      delete  presidio ``CreditCardRecognizer`` + 13-19 digits (UnionPay's 19
                           too, next to Chinese text), ``stdnum.luhn``
``iban``           delete  presidio ``IbanRecognizer`` (mod-97)
``bank_account``   delete  presidio ``UsBankRecognizer`` and ``AbaRoutingRecognizer``
                           beside account/routing words (账号, 账户 too)
``ip_address``     blur    presidio ``IpRecognizer``
``api_key``        delete  provider key prefixes, private-key blocks, ``Bearer`` tokens,
                           ``key/token/secret = value``
``password``       delete  the value after a password label (password, passwd, pwd,
                           passcode, 密码, 口令)
``address``        blur    a street line (house number, street name, suffix such as
                           Lane/St/Road, optional city, state, ZIP), a Chinese address
                           (省/市 ... 路/街 ... 号) or the value after an address label
``date_of_birth``  blur    a date after a birth label (date of birth, DOB, born,
                           出生日期, 生日)
``person``         blur    a name after a name label (Name:, Recipient:, 姓名：, 收件人：),
                           a name on the line before (or just before) an address, and
                           spaCy NER where ``en_core_web_sm`` is installed (the optional
                           ``curate-ner`` extra)
=================  ======  ==========================================================

High risk (delete) are numbers that identify a person to an authority or open an account:
government IDs, card and account numbers, credentials. Contact and identity details (email,
phone, address, name, date of birth, IP) are blurred where they are. :func:`pii_types` and
:func:`high_risk_types` read the registry (:data:`RECOGNIZERS`) each time they are called, so
a type registered later is listed and treated by its risk too.
"""

from __future__ import annotations

import functools
import importlib.abc
import re
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = [
    "CHAT_TITLES",
    "NAME_LINE",
    "RECOGNIZERS",
    "STREET_LINE",
    "UNUSED_BY_PRESIDIO",
    "PiiRecognizer",
    "TextFinding",
    "clean_text",
    "find_pii",
    "find_pii_lines",
    "has_ner",
    "high_risk_types",
    "pii_recognizer",
    "pii_types",
    "tag",
    "title_names",
]

_NOT_ALNUM_BEFORE = r"(?<![0-9A-Za-z])"
_NOT_ALNUM_AFTER = r"(?![0-9A-Za-z])"
_FLAGS = re.DOTALL | re.MULTILINE | re.IGNORECASE
_DECIMALS = re.compile(r"(?<![\d.])0\.\d")


@dataclass(frozen=True)
class TextFinding:
    """One piece of personal data in a text."""

    type: str
    """One of :func:`pii_types`."""
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
    min_score: float = 0.0
    """A match scoring lower is dropped even when screening ``strict`` (types whose presidio
    patterns are weak alone and count only once a context word raised them, e.g. a bare
    9-digit passport number: 0.05, 0.4 beside "passport")."""


RECOGNIZERS: dict[str, PiiRecognizer] = {}
"""Every type :func:`find_pii` reports, by name, in registration order (overlaps of equal
length and risk go to the earlier one), filled by :func:`pii_recognizer`."""


def pii_recognizer(
    type: str,
    *,
    entities: tuple[str, ...],
    high_risk: bool = False,  # noqa: A002 (privacy.jsonl's word)
    accept: Callable[[str, bool], bool] | None = None,
    min_score: float = 0.0,
) -> Callable[[Callable[[], list]], Callable[[], list]]:
    """Register a type of personal data: decorate the function that builds its presidio
    recognizers (imports inside it: presidio loads only when text is first screened).

    Raises:
        ValueError: ``type`` is registered already by another function.
    """

    def add(build: Callable[[], list]) -> Callable[[], list]:
        old = RECOGNIZERS.get(type)
        if old is not None and old.build is not build:
            raise ValueError(f"PII type {type!r} is already registered")
        RECOGNIZERS[type] = PiiRecognizer(
            type, tuple(entities), build, bool(high_risk), accept or (lambda span, strict: True), float(min_score)
        )
        return build

    return add


def pii_types() -> tuple[str, ...]:
    """Every text type :func:`find_pii` reports now, in registration order (read from
    :data:`RECOGNIZERS` on each call: a type registered after import is listed)."""
    return tuple(RECOGNIZERS)


def high_risk_types() -> frozenset[str]:
    """Types that make a screenshot high-risk (deleted, replaced by a scene description); the
    others (and faces) make it moderate (blurred). ProAgentBench B.4 deletes high-risk shots.
    Read from :data:`RECOGNIZERS` on each call."""
    return frozenset(t for t, r in RECOGNIZERS.items() if r.high_risk)


def tag(type: str) -> str:  # noqa: A002 (privacy.jsonl's word)
    """Replacement tag of a type in cleaned text, e.g. ``[EMAIL]``."""
    return f"[{type.upper()}]"


@functools.lru_cache(maxsize=1)
def has_ner() -> bool:
    """True when spaCy's English NER model ``en_core_web_sm`` is installed."""
    import importlib.util

    return importlib.util.find_spec("en_core_web_sm") is not None


def _pattern(entity: str, name: str, regex: str, score: float, cls: type | None = None, flags: int = _FLAGS):  # noqa: ANN202
    """A presidio pattern recognizer of one regex (``cls``: a subclass that validates matches;
    presidio matches with the ``regex`` module, whose look-behinds may vary in width)."""
    from presidio_analyzer import Pattern, PatternRecognizer

    return (cls or PatternRecognizer)(
        supported_entity=entity, patterns=[Pattern(name, regex, score)], global_regex_flags=flags
    )


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

    return [
        PhoneRecognizer(supported_regions=("US", "GB", "DE", "FR", "CN", "HK", "TW", "JP", "IN", "CA", "AU")),
        _pattern(
            "CN_MOBILE",
            "cn_mobile",
            _NOT_ALNUM_BEFORE + r"(?:\+?86[ \-]?)?1[3-9]\d[ \-]?\d{4}[ \-]?\d{4}" + _NOT_ALNUM_AFTER,
            0.8,
        ),
    ]


def _weak(cls: type, context: list[str], **kw: object) -> object:
    """A presidio recognizer class whose own patterns are weak alone (a bare number, score 0.05
    to 0.1), given the context words that raise a match to 0.4 (:func:`_analyzer`'s enhancer:
    one of them among the five words before the match, presidio's default window). Its own
    context lists are replaced: ``us``, ``check`` and ``save`` match inside many words."""
    return cls(context=context, **kw)


@pii_recognizer("id_number", entities=("CN_RESIDENT_ID",), high_risk=True)
def _id_number() -> list:
    """Chinese resident identity numbers: 18 characters with ``stdnum.cn.ric``'s check character
    (GB 11643-1999, ISO 7064 MOD 11-2) and birth date. Not ``ric.is_valid``: it also requires the
    first six digits to name a county that existed in the birth year, which rejects real numbers
    issued after a district was created or renamed (440308, Shenzhen Yantian since 1998, for
    anyone born before)."""
    from presidio_analyzer import PatternRecognizer
    from stdnum.cn import ric
    from stdnum.exceptions import ValidationError

    class CnResidentId(PatternRecognizer):
        def validate_result(self, pattern_text: str) -> bool:  # noqa: D102
            number = pattern_text.upper()
            try:
                ric.get_birth_date(number)
            except ValidationError:
                return False
            return ric.calc_check_digit(number) == number[17]

    return [
        _pattern(
            "CN_RESIDENT_ID", "cn_id", _NOT_ALNUM_BEFORE + r"[1-9]\d{16}[\dXx]" + _NOT_ALNUM_AFTER, 0.9, CnResidentId
        )
    ]


_SSN_CONTEXT = ["ssn", "ss#", "social", "security", "社会安全"]


def _ssn_ok(span: str, strict: bool) -> bool:
    """``stdnum.us.ssn``: no area 000, 666 or 9xx, no group 00, no serial 0000, not one of the
    numbers published in advertisements (078-05-1120, 123-45-6789...)."""
    from stdnum.us import ssn

    return bool(ssn.is_valid(re.sub(r"[ .]", "-", span)))


@pii_recognizer("us_ssn", entities=("US_SSN",), high_risk=True, accept=_ssn_ok, min_score=0.4)
def _us_ssn() -> list:
    """presidio's ``UsSsnRecognizer``: ``AAA-GG-SSSS`` (0.5) alone, nine bare digits only beside
    an SSN word; validated by ``stdnum.us.ssn``."""
    from presidio_analyzer.predefined_recognizers import UsSsnRecognizer

    return [_weak(UsSsnRecognizer, _SSN_CONTEXT)]


_PASSPORT_LABEL = r"(?:passport|护照)(?:\s*(?:no\.?|number|num\.?|#|号码|号))?\s*[:：#]?\s*"


@pii_recognizer("passport", entities=("US_PASSPORT", "PASSPORT"), high_risk=True, min_score=0.4)
def _passport() -> list:
    """presidio's ``UsPassportRecognizer`` (9 digits, or a letter and 8 digits, as China's E-numbers)
    beside the word passport/护照, and 6-9 letters and digits holding at least 5 digits after a
    passport label (other countries' formats, e.g. Germany's ``C01X00T47``)."""
    from presidio_analyzer.predefined_recognizers import UsPassportRecognizer

    return [
        _weak(UsPassportRecognizer, ["passport", "护照"]),
        _pattern(
            "PASSPORT",
            "passport_label",
            r"(?<=" + _PASSPORT_LABEL + r")(?=(?:[A-Z]*\d){5})[A-Z0-9]{6,9}" + _NOT_ALNUM_AFTER,
            0.85,
        ),
    ]


@pii_recognizer("bank_card", entities=("BANK_CARD", "CREDIT_CARD"), high_risk=True)
def _bank_card() -> list:
    """presidio's ``CreditCardRecognizer`` and 13-19 digits (spaces or dashes allowed; also
    UnionPay's 19 digits and numbers next to Chinese text, where presidio's ``\\b`` fails), each
    valid by ``stdnum.luhn``."""
    from presidio_analyzer import PatternRecognizer
    from presidio_analyzer.predefined_recognizers import CreditCardRecognizer
    from stdnum import luhn

    class BankCard(PatternRecognizer):
        def validate_result(self, pattern_text: str) -> bool:  # noqa: D102
            digits = re.sub(r"\D", "", pattern_text)
            return 13 <= len(digits) <= 19 and bool(luhn.is_valid(digits))

    return [
        CreditCardRecognizer(),
        _pattern(
            "BANK_CARD", "bank_card", _NOT_ALNUM_BEFORE + r"\d(?:[ \-]?\d){12,18}" + _NOT_ALNUM_AFTER, 0.7, BankCard
        ),
    ]


@pii_recognizer("iban", entities=("IBAN_CODE",), high_risk=True)
def _iban() -> list:
    """Presidio's IBAN recognizer (mod-97 checked)."""
    from presidio_analyzer.predefined_recognizers import IbanRecognizer

    return [IbanRecognizer()]


@pii_recognizer("bank_account", entities=("US_BANK_NUMBER", "ABA_ROUTING_NUMBER"), high_risk=True, min_score=0.4)
def _bank_account() -> list:
    """presidio's ``UsBankRecognizer`` (8-17 digits) and ``AbaRoutingRecognizer`` (9 digits with
    the ABA check digit), both only beside an account or routing word (English or Chinese)."""
    from presidio_analyzer.predefined_recognizers import AbaRoutingRecognizer, UsBankRecognizer

    class AbaBesideWords(AbaRoutingRecognizer):
        def validate_result(self, pattern_text: str) -> bool | None:  # noqa: D102
            # a valid check digit leaves the weak score (presidio would make it 1.0: one 9-digit
            # number in ten passes): the context word decides; an invalid one is dropped
            return None if super().validate_result(pattern_text) else False

    words = ["account", "acct", "a/c", "bank", "routing", "aba", "账号", "账户", "帐号", "帐户"]
    return [_weak(UsBankRecognizer, words), _weak(AbaBesideWords, words)]


@pii_recognizer("ip_address", entities=("IP_ADDRESS",))
def _ip_address() -> list:
    """Presidio's IPv4/IPv6 recognizer."""
    from presidio_analyzer.predefined_recognizers import IpRecognizer

    return [IpRecognizer()]


_KEY_PATTERN = (
    r"(?:sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|AKIA[0-9A-Z]{16}|xox[abpors]-[A-Za-z0-9\-]{10,}|AIza[0-9A-Za-z_\-]{30,}"
    r"|(?:sk|rk)_live_[A-Za-z0-9]{16,}|hf_[A-Za-z0-9]{30,}|glpat-[A-Za-z0-9_\-]{20,}"
    r"|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})"
)


@pii_recognizer("api_key", entities=("API_KEY",), high_risk=True)
def _api_key() -> list:
    """Provider key prefixes (OpenAI/Anthropic ``sk-``, GitHub ``ghp_``..., AWS ``AKIA``, Slack ``xox?-``,
    Google ``AIza``, Stripe ``sk_live_``, Hugging Face ``hf_``, GitLab ``glpat-``, JWTs; the
    prefixes detect-secrets' plugins look for), PEM private-key headers, ``Bearer`` tokens and
    ``key/token/secret = value`` assignments."""
    from presidio_analyzer import Pattern, PatternRecognizer

    return [
        PatternRecognizer(
            supported_entity="API_KEY",
            patterns=[
                Pattern("provider_key", _NOT_ALNUM_BEFORE + _KEY_PATTERN, 0.9),
                Pattern("private_key", r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----", 0.9),
                Pattern("bearer", r"(?<=\bbearer\s+)[A-Za-z0-9_\-\.=]{16,}", 0.8),
                Pattern(
                    "assigned_secret",
                    r"(?<=\b(?:api[_\- ]?key|access[_\- ]?key|secret(?:[_\- ]?key)?|token|auth|密钥|令牌)"
                    r"[\"']?\s*[:：=]\s*[\"']?)[A-Za-z0-9_\-\.+/=]{12,}",
                    0.8,
                ),
            ],
            global_regex_flags=_FLAGS,
        )
    ]


@pii_recognizer("password", entities=("PASSWORD",), high_risk=True)
def _password() -> list:
    """The value after a password label, English or Chinese (password, passwd, passcode, pwd, 密码, 口令)."""
    return [
        _pattern(
            "PASSWORD",
            "password_field",
            r"(?<=(?:pass(?:word|wd|code)?|pwd|密码|口令)[\"']?\s*[:：=]\s*[\"']?)[^\s\"',;]{3,}",
            0.9,
        )
    ]


_STREET_SUFFIX = (
    r"(?:Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Drive|Dr|Boulevard|Blvd|Court|Ct|Way|Place|Pl|Terrace|Ter"
    r"|Circle|Cir|Parkway|Pkwy|Highway|Hwy|Square|Sq|Trail|Trl|Crescent|Close|Grove|Gardens|Row|Alley)"
)
STREET_LINE = (
    r"(?<![\w.,:/#-])\d{1,6}[A-Z]?(?:\s+(?:[NSEW]\.?|North|South|East|West))?(?:\s+[A-Z][A-Za-z'\-]*){1,4}\s+"
    + _STREET_SUFFIX
    + r"\.?(?![A-Za-z])"
    r"(?:,?\s+(?:Apt|Suite|Unit|Flat|#)\.?\s*[A-Za-z0-9\-]+)?"
    r"(?:,\s*[A-Z][a-z][A-Za-z.'\-]*(?:\s+[A-Z][a-z][A-Za-z.'\-]*){0,2}){0,2}"
    r"(?:,?\s+[A-Z]{2}\s+\d{5}(?:-\d{4})?)?"
)
"""A street line, case-sensitive: house number, one to four capitalised words, a USPS street suffix,
then optionally a unit, up to two ``, Town`` parts and ``ST 12345`` (``1427 Maple Lane, Springfield,
IL 62704``)."""
_CN_ADDRESS = (
    r"[\u4e00-\u9fff]{2,8}?(?:省|市|自治区)[\u4e00-\u9fff]{0,12}?(?:市|区|县|旗)[\u4e00-\u9fff\d]{1,20}?"
    r"(?:路|街|道|巷|弄|村|镇)(?:[\d\-]{1,6}号)?(?:[\d\-]+(?:号楼|栋|幢|单元|室|层))*"
)
_ADDRESS_LABEL = (
    r"(?:(?:^|(?<=\n))[ \t]*address(?:[ \t]+line[ \t]*\d)?"
    r"|(?:home|current|mailing|postal|shipping|billing|delivery|residential|permanent|street|physical"
    r"|correspondence)[ \t]+address)[ \t]*[:：][ \t]*"
)
_CN_ADDRESS_LABEL = r"(?:住址|家庭住址|家庭地址|收货地址|通讯地址|联系地址|居住地址|现住址|户籍地址|详细地址|邮寄地址|寄送地址|^[ \t]*地址)[ \t]*[:：]?[ \t]*"


@pii_recognizer("address", entities=("STREET_ADDRESS", "LABELLED_ADDRESS"))
def _address() -> list:
    """Postal addresses (presidio has no recognizer for them): a street line (:data:`STREET_LINE`),
    a Chinese address (province or city, district, road or village, number), and the value after
    an address label (``Home address:``, ``Address:`` at a line's start, 住址, 收货地址...) when
    it holds a word and a number (Chinese: a 省/市/区/路/号 character)."""
    return [
        _pattern("STREET_ADDRESS", "street_line", STREET_LINE, 0.7, flags=re.MULTILINE),
        _pattern("STREET_ADDRESS", "cn_address", _CN_ADDRESS, 0.7, flags=re.MULTILINE),
        _pattern(
            "LABELLED_ADDRESS",
            "labelled_address",
            r"(?<=" + _ADDRESS_LABEL + r")(?=[^\n]*\d)(?=[^\n]*(?<![A-Za-z])[A-Za-z]{3,}(?![A-Za-z0-9]))"
            r"[^\s:：][^\n]{5,120}?(?=[ \t]*(?:$|\n))",
            0.75,
        ),
        _pattern(
            "LABELLED_ADDRESS",
            "labelled_cn_address",
            r"(?<=" + _CN_ADDRESS_LABEL + r")(?=[^\n]*[省市区县路街道号村镇])[^\s:：][^\n]{3,80}?(?=[ \t]*(?:$|\n))",
            0.75,
        ),
    ]


_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
_DATE = (
    r"(?:\d{4}[-/.年]\s*\d{1,2}\s*[-/.月]\s*\d{1,2}日?|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}"
    r"|" + _MONTH + r"\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}|\d{1,2}(?:st|nd|rd|th)?\s+" + _MONTH + r",?\s+\d{4})"
)
_DOB_LABEL = r"(?:date[ \t]+of[ \t]+birth|birth[ \t]*date|birthday|d\.?o\.?b\.?|born(?:[ \t]+on)?|出生日期|出生年月日?|生日)[ \t]*[:：]?[ \t]*"


@pii_recognizer("date_of_birth", entities=("DATE_OF_BIRTH",))
def _date_of_birth() -> list:
    """A date after a birth label (date of birth, DOB, born, birthday, 出生日期, 生日): ISO and
    Chinese ``1990年3月12日``, numeric ``12/03/1990``, and month names (``March 12, 1990``,
    ``12 March 1990``). presidio's ``DateRecognizer`` finds every date, birth or not."""
    return [_pattern("DATE_OF_BIRTH", "dob", r"(?<=" + _DOB_LABEL + r")" + _DATE, 0.85)]


_NAME = r"(?:(?:Mr|Mrs|Ms|Miss|Dr|Prof)\.?\s+)?[A-Z][a-z'\-]+(?:\s+[A-Z]\.)?(?:\s+[A-Z][a-z'\-]+){1,2}"
_NAME_LABEL = (
    r"(?:(?:Full|Legal|First|Last|Given|Family|Customer|Patient|Contact|Your|Account)\s+[Nn]ame|Name|NAME"
    r"|Recipient|Addressee|Cardholder|Card\s+holder|Account\s+holder|Ship\s+to|Bill\s+to|Deliver\s+to)\s*[:：]\s*"
)
NAME_LINE = re.compile(r"[ \t]*(" + _NAME + r")[ \t]*,?[ \t]*")
"""A line that is only a person's name (two or three capitalised words, an optional title and
middle initial): a name when the next line, or the rest of its line, is an address."""


_CHAT_NAME = r"(?<![\w.'’@\-])[^\W\d_][\w.'’\-]*(?:(?:,[ \t]*|[ \t]+)[^\W\d_][\w.'’\-]*){0,5}"
"""One to six words of a person's name or handle as a chat app writes it (``Priya Raman``, ``priya.raman``,
``Zoë O'Neil-Brown``, ``Priya, Tom Lee`` for a group), not starting inside a word."""
CHAT_TITLES: tuple[tuple[str, str], ...] = (
    ("slack_dm", _CHAT_NAME + r"(?=[ \t]*\((?:DM|dm|Direct [Mm]essage)\))"),
    ("teams_chat", r"(?<=\bChat[ \t]*\|[ \t]*)" + _CHAT_NAME + r"(?=[ \t]*\|[ \t]*Microsoft Teams)"),
    ("discord_dm", r"(?<![\w.])@[\w.]{2,32}(?=[ \t]*[-|–—][ \t]*Discord\b)"),
    ("discord_dm_after", r"(?<=\bDiscord[ \t]*[-|–—][ \t]*)@[\w.]{2,32}"),
    ("messenger", _CHAT_NAME + r"(?=[ \t]*[|\-–—][ \t]*Messenger\b)"),
    (
        "chat_with",
        r"(?<=\b(?:[Dd]irect [Mm]essages? with|DMs? with|[Cc]hat with|[Cc]onversation with|[Cc]all with)[ \t]+)"
        r"(?<![\w.'’@\-])\p{Lu}[\w.'’\-]*(?:[ \t]+\p{Lu}[\w.'’\-]*){0,3}",  # capitalised: "chat with the team" is no one
    ),
)
"""Where a chat app's window title names the person talked to, as ``(name, regex)``: Slack's
``<name> (DM) - <workspace> - Slack``, Teams' ``Chat | <name> | Microsoft Teams``, Discord's
``@<handle> - Discord``, Messenger's ``<name> | Messenger``, and "direct message/chat/conversation/call
with <name>". Pattern rules (no NER model: they ship with every install); the name found is then
looked for in the rest of the text (:func:`find_pii`), and in the same window's screen text (:func:`title_names`)."""


@pii_recognizer("person", entities=("PERSON", "LABELLED_NAME", "CHAT_TITLE_NAME"))
def _person() -> list:
    """A name after a name label (``Name:``, ``Full name:``, ``Recipient:``, 姓名：, 收件人：...), the
    person a chat app's title names (:data:`CHAT_TITLES`); :func:`find_pii` adds a name beside an
    address (:data:`NAME_LINE`) and every other mention of a name a chat title gave. spaCy's NER too
    where ``en_core_web_sm`` is installed (the optional ``curate-ner`` extra)."""
    found = [_pattern("CHAT_TITLE_NAME", name, regex, 0.85, flags=re.MULTILINE) for name, regex in CHAT_TITLES] + [
        _pattern(
            "LABELLED_NAME",
            "labelled_name",
            r"(?<=" + _NAME_LABEL + r")" + _NAME + r"(?![A-Za-z])",
            0.8,
            flags=re.MULTILINE,
        ),
        _pattern(
            "LABELLED_NAME",
            "labelled_cn_name",
            r"(?<=(?:姓名|收件人|收货人|联系人|持卡人|户名|开户名|寄件人)[ \t]*[:：]?[ \t]*)[\u4e00-\u9fff·]{2,5}"
            r"(?![\u4e00-\u9fff])",
            0.8,
        ),
    ]
    if has_ner():
        from presidio_analyzer.predefined_recognizers import SpacyRecognizer

        found.append(SpacyRecognizer(supported_entities=["PERSON"]))
    return found


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


_WORD = re.compile(r"\w+|[^\w\s]+")
"""A word (a run of letters and digits; a Chinese run is one word) or a run of punctuation."""


@functools.lru_cache(maxsize=1)
def _analyzer(types: tuple[str, ...]):  # noqa: ANN202
    """A presidio AnalyzerEngine over the :data:`RECOGNIZERS` entries ``types`` (built once per
    process, again when a type is registered later).

    Without ``en_core_web_sm`` it gets an NLP engine that only splits words (:data:`_WORD`; no
    entities), so presidio never tries to load or download a spaCy model, and its context
    enhancer (``LemmaContextAwareEnhancer``: +0.35, at least 0.4, a context word among the five
    words before a match, presidio's defaults) still sees the words beside a match; with the
    model, spaCy's tokens and NER (``person``). presidio is imported without ``torch`` and
    ``transformers`` (:data:`UNUSED_BY_PRESIDIO`)."""
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
                words = list(_WORD.finditer(text))
                return NlpArtifacts(
                    entities=[],
                    tokens=[m.group() for m in words],
                    tokens_indices=[m.start() for m in words],
                    lemmas=[m.group().lower() for m in words],
                    nlp_engine=self,
                    language=language,
                )

            def process_batch(self, texts, language, batch_size=1, n_process=1, **kw):  # noqa: ANN001, ANN201
                for t in texts:
                    yield t, self.process_text(t, language)

            def is_stopword(self, word: str, language: str) -> bool:
                return False

            def is_punct(self, word: str, language: str) -> bool:
                return not any(c.isalnum() for c in word)

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
    lengths = [
        n
        for m in metas
        if m is not None and m.general_desc is not None
        for n in (m.general_desc.possible_length or ())
        if n > 0
    ]
    return min(lengths, default=1)


@functools.lru_cache(maxsize=4)
def _entities_but_phone(analyzer) -> list[str]:  # noqa: ANN001
    """Every entity ``analyzer`` supports except presidio's ``PHONE_NUMBER``."""
    return [e for e in analyzer.get_supported_entities(language="en") if e != "PHONE_NUMBER"]


_THRESHOLD = 0.4
"""Lowest presidio score kept outside ``strict`` screening (presidio's own weak patterns score
0.05-0.1; its context enhancer raises a match with a context word beside it to 0.4)."""


def _names_beside_addresses(text: str, addresses: list[TextFinding]) -> list[TextFinding]:
    """``person`` findings for a name (:data:`NAME_LINE`) that is the whole line before an address
    finding, or the part of its line before it (``Jane Doe, 1427 Maple Lane``): an envelope or a
    form's name-and-address block."""
    found: list[TextFinding] = []
    for a in addresses:
        line_start = text.rfind("\n", 0, a.start) + 1
        m = NAME_LINE.fullmatch(text, line_start, a.start)
        if m is None and not text[line_start : a.start].strip() and line_start > 0:
            prev_start = text.rfind("\n", 0, line_start - 1) + 1
            m = NAME_LINE.fullmatch(text, prev_start, line_start - 1)
        if m is not None:
            found.append(TextFinding("person", m.start(1), m.end(1), 0.7))
    return found


def _mentions(text: str, names: Sequence[str]) -> list[TextFinding]:
    """``person`` findings for every mention in ``text`` of a name a chat title gave (:data:`CHAT_TITLES`:
    ``Priya Raman (DM) - Acme - Slack`` and, on the screen below it, ``Priya Raman 9:41 AM``, ``thanks
    Priya``): the whole name and each of its words of three letters or more, as whole words."""
    words = {w for n in names for w in re.split(r"[\s,]+", n.lstrip("@")) if len(w) >= 3}
    parts = sorted({n for n in names if n} | words, key=len, reverse=True)
    if not parts:
        return []
    alt = "|".join(re.escape(p) for p in parts)
    return [
        TextFinding("person", m.start(), m.end(), 0.7)
        for m in re.finditer(r"(?<![\w.'’@\-])@?(?:" + alt + r")(?![\w'’\-])", text)
    ]


def title_names(title: str) -> tuple[str, ...]:
    """The people a window title names as a chat app writes it (:data:`CHAT_TITLES`), e.g.
    ``("Priya Raman",)`` for ``Priya Raman (DM) - Acme Corp - Slack``; ``()`` for any other title.
    Pass them as ``names`` to :func:`find_pii` / :func:`clean_text` of the same window's screen text."""
    if not title or not title.strip() or "person" not in RECOGNIZERS:
        return ()
    analyzer = _analyzer(tuple(RECOGNIZERS))
    found = analyzer.analyze(text=title, language="en", entities=["CHAT_TITLE_NAME"], score_threshold=_THRESHOLD)
    return tuple(dict.fromkeys(title[r.start : r.end] for r in sorted(found, key=lambda r: r.start)))


def find_pii_lines(lines: list[str], *, strict: bool = False, names: Sequence[str] = ()) -> list[list[TextFinding]]:
    """:func:`find_pii` of each line (offsets within the line), plus a name that is the whole
    line before a line with an address (:func:`_names_beside_addresses`, which one line alone
    cannot see): what OCR reads line by line finds what the whole text would. ``names``: as for
    :func:`find_pii`."""
    out = [find_pii(line, strict=strict, names=names) for line in lines]
    for i in range(1, len(lines)):
        if out[i - 1] or not any(f.type == "address" and not lines[i][: f.start].strip() for f in out[i]):
            continue
        m = NAME_LINE.fullmatch(lines[i - 1])
        if m is not None:
            out[i - 1] = [TextFinding("person", m.start(1), m.end(1), 0.7)]
    return out


def find_pii(text: str, *, strict: bool = False, names: Sequence[str] = ()) -> list[TextFinding]:
    """Personal data in ``text`` (English and Chinese), sorted by start offset, overlaps
    merged into the longer (then higher-risk) finding. A person a chat title in ``text`` names
    (:data:`CHAT_TITLES`) is found wherever else ``text`` mentions them.

    Args:
        text: any text (OCR output, window title, conversation).
        strict: also keep weak matches (presidio score below 0.4, and phone numbers of
            fewer than 8 digits), as used for re-screening the neighbours of
            deleted screenshots.
        names: people known to be in ``text``'s window (:func:`title_names` of its title):
            every mention of them is a ``person`` finding.
    """
    if not text or not text.strip():
        return []
    threshold = 0.0 if strict else _THRESHOLD
    kind = {e: entry for entry in RECOGNIZERS.values() for e in entry.entities}
    found: list[TextFinding] = []
    titled: list[str] = []
    analyzer = _analyzer(tuple(RECOGNIZERS))
    entities = None
    if sum(c.isdigit() for c in text) < (_min_phone_digits() if strict else PHONE_MIN_DIGITS):
        entities = _entities_but_phone(analyzer)  # no phone number fits: skip its costly matcher
    for r in analyzer.analyze(text=text, language="en", entities=entities, score_threshold=threshold):
        entry = kind.get(r.entity_type)
        if (
            entry is None
            or r.end <= r.start
            or r.score < entry.min_score
            or not entry.accept(text[r.start : r.end], strict)
        ):
            continue
        found.append(TextFinding(entry.type, r.start, r.end, float(r.score)))
        if r.entity_type == "CHAT_TITLE_NAME":
            titled.append(text[r.start : r.end])
    if "address" in RECOGNIZERS and "person" in RECOGNIZERS:
        found += _names_beside_addresses(text, [f for f in found if f.type == "address"])
    if titled or names:  # the person a chat title names, wherever else the text mentions them
        found += _mentions(text, [*names, *titled])
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


def clean_text(
    text: str, findings: list[TextFinding] | None = None, *, strict: bool = False, names: Sequence[str] = ()
) -> str:
    """``text`` with every finding replaced by its type tag (:func:`tag`), e.g.
    ``"mail alice@example.com"`` -> ``"mail [EMAIL]"``. ``findings`` default to
    :func:`find_pii` of the text (with ``names``)."""
    if not text:
        return text
    findings = find_pii(text, strict=strict, names=names) if findings is None else findings
    out, pos = [], 0
    for f in sorted(findings, key=lambda f: f.start):
        if f.start < pos:
            continue
        out.append(text[pos : f.start])
        out.append(tag(f.type))
        pos = f.end
    out.append(text[pos:])
    return "".join(out)
