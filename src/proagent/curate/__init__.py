"""Curation: turn a raw activity log into a shareable one (ProAgentBench sections 5.1-5.2,
Appendix B.3-B.4): quality filters, SHA-256 dedup, and privacy in three phases (a screener
rates every screenshot, the participant reviews what it kept, rules catch the rest), written
in ProAgentBench's processed layout with only cleaned OCR text.
"""

from ._detect import TextFinding, clean_text, find_pii, high_risk_types, pii_recognizer, pii_types
from ._pipeline import STATE_DIR, TITLE_KEYWORDS, CurateConfig, curate, load_decisions, save_decision
from ._quality import QualityConfig
from ._review import serve_review
from ._screen import OcrScreener, Screener, ScreenerError, VlmScreener, make_screener
from .records import CurateManifest, CurateSummary, Region, Screening, Verdict

__all__ = [
    "STATE_DIR",
    "TITLE_KEYWORDS",
    "CurateConfig",
    "CurateManifest",
    "CurateSummary",
    "OcrScreener",
    "QualityConfig",
    "Region",
    "Screener",
    "ScreenerError",
    "Screening",
    "TextFinding",
    "Verdict",
    "VlmScreener",
    "clean_text",
    "curate",
    "find_pii",
    "high_risk_types",
    "load_decisions",
    "make_screener",
    "pii_recognizer",
    "pii_types",
    "save_decision",
    "serve_review",
]
