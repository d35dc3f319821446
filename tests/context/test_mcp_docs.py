"""The host snippets of ``docs/guides/mcp.md`` work as written: each one (Claude Code's
``claude mcp add`` line, VS Code's ``code --add-mcp`` and ``mcp.json``, Cursor's install link and
``mcp.json``, Claude Desktop's configuration, the HTTP command and VS Code's HTTP entry) is read
from the page, and the command it names is started with ``HOME`` pointing at a folder whose
``proagent-capture`` is a test capture, and the SDK's own client connects to it."""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from system import require_module

require_module("mcp")

import anyio  # noqa: E402
import httpx2  # noqa: E402
from lifetrace_fixtures import make_lifetrace_db  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

import proagent  # noqa: E402

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "mcp.md"
SRC = str(Path(proagent.__file__).resolve().parents[1])
COMMAND = ["mcp", "~/proagent-capture", "--block-app", "KeePassXC"]
"""The arguments every stdio snippet gives ``proagent``."""


def _sections() -> dict[str, list[tuple[str, str]]]:
    """The fenced blocks of the page under each ``###`` (or ``##``) heading: (fence language, text)."""
    out: dict[str, list[tuple[str, str]]] = {}
    head, cur = "", None
    for line in PAGE.read_text("utf-8").splitlines():
        if cur is None and line.startswith("#"):
            head = line.lstrip("#").strip()
        elif line.startswith("```"):
            if cur is None:
                cur = (line[3:].strip(), [])
            else:
                out.setdefault(head, []).append((cur[0], "\n".join(cur[1]) + "\n"))
                cur = None
        elif cur is not None:
            cur[1].append(line)
    return out


def _json(section: str) -> list[dict]:
    return [json.loads(text) for lang, text in _sections()[section] if lang == "json"]


def _line(section: str, starts: str) -> list[str]:
    return next(shlex.split(t) for lang, t in _sections()[section] if lang in ("bash", "") and t.startswith(starts))


def _stdio_snippets() -> dict[str, tuple[str, list[str]]]:
    """Every stdio snippet of the page as the (command, args) a host would run."""
    out: dict[str, tuple[str, list[str]]] = {}
    claude = _line("Claude Code", "claude mcp add")
    assert claude[:4] == ["claude", "mcp", "add", "proagent"] and claude[4] == "--", claude
    out["claude-code"] = (claude[5], claude[6:])
    vs = _line("VS Code", "code --add-mcp")
    assert vs[:2] == ["code", "--add-mcp"] and len(vs) == 3, vs
    entry = json.loads(vs[2])
    assert entry["name"] == "proagent"
    out["vscode-add-mcp"] = (entry["command"], entry["args"])
    entry = _json("VS Code")[0]["servers"]["proagent"]
    assert entry["type"] == "stdio"
    out["vscode-mcp-json"] = (entry["command"], entry["args"])
    link = re.search(r"cursor://anysphere\.cursor-deeplink/mcp/install\?[^`\s)]+", PAGE.read_text("utf-8")).group(0)
    q = parse_qs(urlparse(link).query)
    assert q["name"] == ["proagent"]
    entry = json.loads(base64.b64decode(q["config"][0]))
    out["cursor-link"] = (entry["command"], entry["args"])
    entry = _json("Cursor")[0]["mcpServers"]["proagent"]
    out["cursor-mcp-json"] = (entry["command"], entry["args"])
    entry = _json("Claude Desktop")[0]["mcpServers"]["proagent"]
    out["claude-desktop"] = (entry["command"], entry["args"])
    return out


def _env(home: Path, bin_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROAGENT_")}
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    env["PATH"] = str(bin_dir) + os.pathsep + env.get("PATH", "")  # `proagent` as a host finds it on the PATH
    env["HOME"] = str(home)
    return env


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """A home folder whose ``proagent-capture`` is a test capture (LifeTrace, 40 events)."""
    h = tmp_path_factory.mktemp("home")
    make_lifetrace_db(h / "proagent-capture" / "lifetrace.db", "2025-11")
    return h


def _proagent_bin(tmp: Path) -> Path:
    """A ``proagent`` on the PATH that runs this checkout (the venv's script may be another one's)."""
    d = tmp / "bin"
    d.mkdir(exist_ok=True)
    exe = d / "proagent"
    exe.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m proagent.cli \"$@\"\n")
    exe.chmod(0o755)
    return d


def test_the_page_has_a_snippet_for_each_host() -> None:
    """Claude Code, VS Code (two ways), Cursor (two ways) and Claude Desktop, all one command."""
    snippets = _stdio_snippets()
    assert len(snippets) == 6
    for host, (command, args) in snippets.items():
        assert (command, args) == ("proagent", COMMAND), host


@pytest.mark.parametrize("host", ["claude-desktop", "claude-code"])
def test_stdio_snippet_as_written(host: str, home: Path, tmp_path: Path) -> None:
    """The command of the JSON snippets (``~`` left for proagent to expand: no shell) and of the
    ``claude mcp add`` line (``~`` expanded, as the shell does) start a server the SDK's client
    uses: six tools, three prompts, an answer from the test capture."""
    command, args = _stdio_snippets()[host]
    env = _env(home, _proagent_bin(tmp_path))
    if host == "claude-code":
        args = [str(home) + a[1:] if a.startswith("~/") else a for a in args]
    params = StdioServerParameters(command=command, args=args, env=env)

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            assert len((await client.list_tools()).tools) == 6
            assert len((await client.list_prompts()).prompts) == 3
            r = await client.call_tool("current_context", {})
            assert not r.is_error and r.structured_content["app"]

    anyio.run(main)


def test_http_snippet_as_written(home: Path, tmp_path: Path) -> None:
    command = next(t for lang, t in _sections()["Over HTTP (one server for several hosts)"] if lang == "").strip()
    entry = _json("Over HTTP (one server for several hosts)")[0]["servers"]["proagent-http"]
    assert entry["type"] == "http"
    with socket.socket() as s:  # the page's port may be taken here: a free one, in both places
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = shlex.split(command.replace("8765", str(port)))
    url = entry["url"].replace("8765", str(port))
    proc = subprocess.Popen(
        argv, env=_env(home, _proagent_bin(tmp_path)), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        line = proc.stderr.readline()
        assert url in line, line
        token = (home / "proagent-capture" / "mcp-token").read_text().strip()
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
