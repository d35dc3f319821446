"""``mcp.log``: one JSON line per tool call and resource read, never the text itself.

Each line: ``{"time", "method", "name", "args_hash", "bytes", "error"}``, where ``name`` is the
tool's name or the resource's URI, ``args_hash`` the first 16 hex digits of an HMAC-SHA256 of the
canonical JSON of the arguments under a random key of this server run (repeated calls within a
run show as repeats; a short query cannot be recovered from the log by hashing guesses), ``bytes``
the size of the JSON result sent back and ``error`` the MCP error code or ``"tool_error"`` (else
``null``). The file is created 0600 and appended to.

It is a middleware of the SDK's server (``MCPServer(middleware=...)``): it sees every request
before argument validation, so refused calls are logged too.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

from ..io import PRIVATE_FILE_MODE

__all__ = ["AUDIT_FILE", "AuditLog"]

AUDIT_FILE = "mcp.log"
"""Name of the call log in the server's state folder."""
_LOGGED = ("tools/call", "resources/read")


class AuditLog:
    """Appends one line per call to ``path`` (created 0600).

    Raises:
        OSError: the file cannot be created or opened for appending.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE_MODE)
        os.fchmod(fd, PRIVATE_FILE_MODE)
        self._file = os.fdopen(fd, "a", encoding="utf-8")
        self._key = secrets.token_bytes(32)
        self._lock = threading.Lock()

    def args_hash(self, arguments: Any) -> str:
        """Keyed hash of the arguments (16 hex digits)."""
        canon = json.dumps(arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
        return hmac.new(self._key, canon.encode("utf-8"), hashlib.sha256).hexdigest()[:16]

    def write(self, method: str, name: str, arguments: Any, nbytes: int, error: str | int | None) -> None:
        line = {
            "time": datetime.now().isoformat(timespec="milliseconds"),
            "method": method,
            "name": name,
            "args_hash": self.args_hash(arguments),
            "bytes": nbytes,
            "error": error,
        }
        with self._lock:
            self._file.write(json.dumps(line) + "\n")
            self._file.flush()

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        """The SDK middleware: ``(ctx, call_next) -> result``."""
        if ctx.method not in _LOGGED:
            return await call_next(ctx)
        params = dict(ctx.params or {})
        name = str(params.get("name") or params.get("uri") or "")
        arguments = params.get("arguments") or {}
        try:
            result = await call_next(ctx)
        except Exception as e:
            self.write(
                ctx.method, name, arguments, 0, getattr(getattr(e, "error", None), "code", None) or type(e).__name__
            )
            raise
        body = (
            result.model_dump(mode="json", by_alias=True, exclude_none=True)
            if hasattr(result, "model_dump")
            else result
        )
        data = json.dumps(body, ensure_ascii=False, default=str).encode("utf-8")
        is_error = bool(body.get("isError")) if isinstance(body, dict) else False
        self.write(ctx.method, name, arguments, len(data), "tool_error" if is_error else None)
        return result

    def close(self) -> None:
        with self._lock:
            self._file.close()
