"""The host configurations of ``docs/guides/mcp.md`` work as written: each JSON snippet is read
from the page and the SDK's own client connects with the same command line (the example capture
folder replaced by a test log) or the same URL and header."""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
import httpx2  # noqa: E402
from lifetrace_fixtures import make_lifetrace_db  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

import proagent  # noqa: E402

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "mcp.md"
SRC = str(Path(proagent.__file__).resolve().parents[1])
EXAMPLE = "/home/you/proagent-capture"


def _blocks(lang: str) -> list[str]:
    """The fenced blocks of the page whose fence names ``lang`` ("" for a bare fence)."""
    out, cur = [], None
    for line in PAGE.read_text("utf-8").splitlines():
        if line.startswith("```"):
            if cur is None:
                cur = (line[3:].strip(), [])
            else:
                if cur[0] == lang:
                    out.append("\n".join(cur[1]) + "\n")
                cur = None
        elif cur is not None:
            cur[1].append(line)
    return out


def _configs() -> list[dict]:
    out = []
    for b in _blocks("json"):
        try:
            out.append(json.loads(b))
        except json.JSONDecodeError:
            continue  # an output sample, not a configuration
    return out


def _env(bin_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROAGENT_")}
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    env["PATH"] = str(bin_dir) + os.pathsep + env.get("PATH", "")  # `proagent` as a host finds it on the PATH
    return env


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    cap = tmp_path_factory.mktemp("docs") / "cap"
    make_lifetrace_db(cap / "lifetrace.db", "2025-11")
    return cap


def _proagent_bin(tmp: Path) -> Path:
    """A ``proagent`` on the PATH that runs this checkout (the venv's script may be another one's)."""
    d = tmp / "bin"
    d.mkdir(exist_ok=True)
    exe = d / "proagent"
    exe.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m proagent.cli \"$@\"\n")
    exe.chmod(0o755)
    return d


def test_the_page_has_the_snippets() -> None:
    configs = _configs()
    assert any("mcpServers" in c for c in configs), "Claude Desktop snippet"
    assert sum("servers" in c for c in configs) == 2, "VS Code stdio and http snippets"


@pytest.mark.parametrize("host", ["claude-desktop", "vscode-stdio"])
def test_stdio_snippet_as_written(host: str, log: Path, tmp_path: Path) -> None:
    configs = _configs()
    if host == "claude-desktop":
        entry = next(c for c in configs if "mcpServers" in c)["mcpServers"]["proagent"]
    else:
        entry = next(c for c in configs if "servers" in c and "proagent" in c["servers"])["servers"]["proagent"]
        assert entry["type"] == "stdio"
    args = [str(log) if a == EXAMPLE else a for a in entry["args"]]
    assert args != entry["args"], "the example folder is in the args"
    params = StdioServerParameters(command=entry["command"], args=args, env=_env(_proagent_bin(tmp_path)))

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            assert len((await client.list_tools()).tools) == 6
            r = await client.call_tool("current_context", {})
            assert not r.is_error and r.structured_content["app"]

    anyio.run(main)


def test_http_snippet_as_written(log: Path, tmp_path: Path) -> None:
    command = next(b for b in _blocks("") if b.startswith("proagent mcp") and "--http" in b).strip()
    entry = next(c for c in _configs() if "servers" in c and "proagent-http" in c["servers"])["servers"][
        "proagent-http"
    ]
    assert entry["type"] == "http"
    with socket.socket() as s:  # the page's port may be taken here: a free one, in both places
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = [str(log) if a == EXAMPLE else a for a in shlex.split(command.replace("8765", str(port)))]
    argv = [str(tmp_path / "mcp-token") if a.endswith("/mcp-token") else a for a in argv]
    url = entry["url"].replace("8765", str(port))
    proc = subprocess.Popen(
        argv, env=_env(_proagent_bin(tmp_path)), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        line = proc.stderr.readline()
        assert url in line, line
        token = (tmp_path / "mcp-token").read_text().strip()
        headers = {k: v.replace("${input:proagent-token}", token) for k, v in entry["headers"].items()}

        async def main() -> None:
            async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
                async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60) as client:
                    r = await client.call_tool("recent_activity", {"minutes": 60})
                    assert not r.is_error and r.structured_content["events"]

        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    time.sleep(0)
