"""Context for other assistants: an MCP server (Model Context Protocol, the official ``mcp`` SDK)
over any activity log proagent reads, so Claude Desktop, VS Code or any MCP host can ask what the
person was doing, what is on their screen and what they work on (``proagent mcp DIR``).

:mod:`.server` holds the tools, resources and transports; :mod:`.records` their typed results;
the log view (follow, redact, block, embed, index) and the call log are private modules.
The ``mcp`` SDK is the optional ``mcp`` extra, imported only when a server is built.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
    "AUDIT_FILE": "._audit",
    "AuditLog": "._audit",
    "ActivityView": "._view",
    "Poller": "._view",
    "DEFAULT_MAX_TOKENS": "._paging",
    "MIN_MAX_TOKENS": "._paging",
    "answer_json": "._paging",
    "estimate_tokens": "._paging",
    "ContextService": ".server",
    "ToolFailure": ".server",
    "build_server": ".server",
    "run": ".server",
}
_RECORDS = (
    "ActivityItem",
    "CurrentContext",
    "IntentionShare",
    "Now",
    "OfferAnswer",
    "OfferItem",
    "OfferList",
    "PersonaCluster",
    "RecentActivity",
    "SearchHit",
    "SearchResult",
    "Timeline",
    "TimeRange",
    "UserProfile",
)
_WHERE.update({n: ".records" for n in _RECORDS})

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:  # noqa: ANN401
    """Names are imported on first use (PEP 562): ``proagent mcp --help`` and the other commands
    load neither numpy nor the server; ``from proagent.context import X`` works as before."""
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_WHERE[name], __name__), name)
    globals()[name] = value
    return value
