"""Context for other assistants: an MCP server (Model Context Protocol, the official ``mcp`` SDK)
over any activity log proagent reads, so Claude Desktop, VS Code or any MCP host can ask what the
person was doing, what is on their screen and what they work on (``proagent mcp DIR``).

:mod:`.server` holds the tools, resources and transports; :mod:`.records` their typed results;
the log view (follow, redact, block, embed, index) and the call log are private modules.
The ``mcp`` SDK is the optional ``mcp`` extra, imported only when a server is built.
"""

from ._audit import AUDIT_FILE, AuditLog
from ._view import ActivityView, Poller
from .records import (
    ActivityItem,
    CurrentContext,
    IntentionShare,
    OfferAnswer,
    OfferItem,
    OfferList,
    PersonaCluster,
    RecentActivity,
    SearchHit,
    SearchResult,
    Timeline,
    UserProfile,
)
from .server import ContextService, ToolFailure, build_server, run

__all__ = [
    "AUDIT_FILE",
    "ActivityItem",
    "ActivityView",
    "AuditLog",
    "ContextService",
    "CurrentContext",
    "IntentionShare",
    "OfferAnswer",
    "OfferItem",
    "OfferList",
    "PersonaCluster",
    "Poller",
    "RecentActivity",
    "SearchHit",
    "SearchResult",
    "Timeline",
    "ToolFailure",
    "UserProfile",
    "build_server",
    "run",
]
