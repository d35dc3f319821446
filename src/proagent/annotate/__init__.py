"""Event annotation (ProAgentBench section 5.3, Appendix B.5): turn any LifeTrace log
into a benchmark by finding its LLM-use events and extracting what the user asked.

* :mod:`~proagent.annotate.platforms` - the cheap first pass: LLM platforms named by
  app, title or screen text (``data/llm_platforms.json``);
* :mod:`~proagent.annotate.screens` - the first 3 + last 3 screenshots and 500 OCR
  characters of each (database OCR rows, else RapidOCR);
* :mod:`~proagent.annotate.conversation` - the chat read from the screen: user turns by a
  terminal client's prompt, role labels, an avatar, a right-aligned bubble or input echo;
* :mod:`~proagent.annotate.prompting`, :mod:`~proagent.annotate.parsing` - the prompt
  and the JSON answer (json-repair, default annotation, echoed template slots dropped);
* :mod:`~proagent.annotate.grounding` - nothing invented: a model's summary, description and
  rationale kept only where they stand on the screen or in the event's record;
* :mod:`~proagent.annotate.task` - the inspect task (text or VLM mode, retries), resumable;
* :mod:`~proagent.annotate.writer` - the processed database and ``annotations.jsonl``;
* :mod:`proagent.cli.annotate` - ``proagent annotate``.
"""

from .parsing import AnswerError, default_fields, parse_annotation
from .platforms import PlatformHit, detect_platform, event_platform, load_platforms
from .records import AnnotationSummary, EventAnnotation
from .screens import OcrReader, sample_screenshots
from .summary import annotation_summary
from .task import AnnotationPlan, annotate_events, find_logs, plan_annotation
from .writer import annotations_from_log, write_in_place, write_out

__all__ = [
    "AnnotationPlan",
    "AnnotationSummary",
    "AnswerError",
    "EventAnnotation",
    "OcrReader",
    "PlatformHit",
    "annotate_events",
    "annotation_summary",
    "annotations_from_log",
    "default_fields",
    "detect_platform",
    "event_platform",
    "find_logs",
    "load_platforms",
    "parse_annotation",
    "plan_annotation",
    "sample_screenshots",
    "write_in_place",
    "write_out",
]
