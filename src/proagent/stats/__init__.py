"""Activity statistics and bursty-behaviour analysis (ProAgentBench section 4.2).

* :func:`analyze` - every statistic of an event log as a dictionary;
* :func:`burstiness`, :func:`inter_event_times` - Goh-Barabasi ``B``;
* :func:`fit_power_law` - Clauset-Shalizi-Newman fit and likelihood-ratio tests;
* :func:`top_k_precursors` - similar earlier events before each LLM moment;
* :func:`run_stats`, :func:`run_compare` - JSON, figures and HTML in a folder
  (the ``proagent stats`` command, :mod:`proagent.cli.stats`).
"""

from .analysis import analyze, llm_selector
from .burstiness import burstiness, burstiness_finite_size, inter_event_times
from .fits import PowerLawResult, fit_power_law
from .precursors import top_k_precursors
from .report import render_compare, run_compare, run_stats, summary_text

__all__ = [
    "PowerLawResult",
    "analyze",
    "burstiness",
    "burstiness_finite_size",
    "fit_power_law",
    "inter_event_times",
    "llm_selector",
    "render_compare",
    "run_compare",
    "run_stats",
    "summary_text",
    "top_k_precursors",
]
