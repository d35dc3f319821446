"""The README and the documentation site (docs/, mkdocs.yml): every command example is either run
here on small data with its key printed lines checked, or marked as needing what it needs and
pointing at the test that covers it; the README stays short and its links resolve.

Markers, an HTML comment on the line before a fenced ``bash``/``console``/``sh`` block (invisible
on the site and on GitHub):

* ``<!-- example: runnable -->`` (or ``runnable slow``: it runs a real model such as the e5
  embedder): a ``console`` block whose ``$ `` lines are commands and whose other lines are
  expected output. The blocks of one page run in order in one scratch folder (so a later block
  uses what an earlier one wrote), beside ``../shared/data/proactivebench`` (the public dev
  sessions, linked in when this checkout has them). Each command must exit 0 and each expected
  line must appear in its output, in order, as a substring (``...`` lines are skipped; ``...``
  inside a line stands for any text on that line, e.g. a time: ``in ... s``), so put the stable
  part of a line there.
* ``<!-- example: synopsis -->``: a usage line with placeholders, not a command to run.
* ``<!-- example: needs KIND: tests/PATH.py -->``: needs a real desktop, model, API key, network,
  cluster or the reader's own data; KIND is one of :data:`KINDS` and the test file named covers it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from shared_data import DEV

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
KINDS = ("desktop", "model", "api", "network", "cluster", "data", "gpu", "ci")
"""What a ``needs`` example needs (``ci``: what `.ci/run` runs, e.g. the test suite and the site build)."""
COMMAND_LANGS = ("bash", "console", "sh", "shell")
NOT_YET_MARKED: set[str] = set()
"""Pages other helpers write (reserved in mkdocs.yml): their examples are marked when they land."""
README_MAX_LINES = 250

_FENCE = re.compile(r"^(\s*)(```+)\s*([\w-]*)")
_MARK = re.compile(r"^\s*<!-- example: (runnable(?: slow)?|synopsis|needs (\w+): (\S+)) -->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str
    line: int
    lang: str
    marker: str | None
    body: list[str]


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.parts)]


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of ``path`` with the marker on the line before each (``None`` if none)."""
    lines = path.read_text("utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, ticks, lang = m.groups()
        prev = next((ln for ln in reversed(lines[:i]) if ln.strip()), "")
        mark = _MARK.match(prev)
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(ticks):
            j += 1
        body = [ln[len(indent) :] if ln.startswith(indent) else ln.lstrip() for ln in lines[i + 1 : j]]
        out.append(Block(str(path.relative_to(ROOT)), i + 1, lang, mark.group(1) if mark else None, body))
        i = j + 1
    return out


def _rel(path: Path) -> str:
    return str(path.relative_to(DOCS)) if DOCS in path.parents else path.name


def test_every_command_example_is_marked():
    unmarked = [
        f"{b.page}:{b.line}"
        for p in pages()
        if _rel(p) not in NOT_YET_MARKED
        for b in blocks(p)
        if b.lang in COMMAND_LANGS and b.marker is None
    ]
    assert not unmarked, f"command examples without a marker (see this file's docstring): {unmarked}"


def test_needs_markers_name_a_kind_and_an_existing_test():
    for p in pages():
        for b in blocks(p):
            m = _MARK.match(f"<!-- example: {b.marker} -->") if b.marker else None
            if m and m.group(2):
                assert m.group(2) in KINDS, f"{b.page}:{b.line}: needs {m.group(2)}?"
                assert (ROOT / m.group(3)).is_file(), f"{b.page}:{b.line}: {m.group(3)} does not exist"


def test_runnable_blocks_are_console_sessions():
    for p in pages():
        for b in blocks(p):
            if b.marker and b.marker.startswith("runnable"):
                assert b.lang == "console" and b.body and b.body[0].startswith("$ "), f"{b.page}:{b.line}"


def _runnable_pages() -> list[pytest.param]:
    out = []
    for p in pages():
        bs = [b for b in blocks(p) if b.marker and b.marker.startswith("runnable")]
        if bs:
            marks = [pytest.mark.slow] if any(b.marker == "runnable slow" for b in bs) else []
            out.append(pytest.param(p, bs, id=str(p.relative_to(ROOT)), marks=marks))
    return out


def _steps(body: list[str]) -> list[tuple[str, list[str]]]:
    """``(command, expected lines)`` per ``$ `` line (a trailing ``\\`` continues a command)."""
    steps: list[tuple[str, list[str]]] = []
    cont = False
    for line in body:
        if line.startswith("$ ") or cont:
            text = line[2:] if line.startswith("$ ") and not cont else line
            if cont:
                steps[-1] = (steps[-1][0] + "\n" + text, steps[-1][1])
            else:
                steps.append((text, []))
            cont = text.endswith("\\")
        elif line.strip() and line.strip() != "..." and steps:
            steps[-1][1].append(line.strip())
    return steps


def _find_line(out: str, want: str, pos: int) -> int:
    """Where ``want`` ends in ``out`` from ``pos`` (-1: not there); ``...`` inside ``want`` matches
    any text within one line."""
    pattern = r"[^\n]*?".join(re.escape(part) for part in want.split("..."))
    m = re.compile(pattern).search(out, pos)
    return m.end() if m else -1


def test_a_wildcard_in_an_expected_line_stays_within_the_line():
    assert _find_line("wrote 2 rows in 0.7 s (18,129 rows/s)\n", "wrote 2 rows in ... s (... rows/s)", 0) > 0
    assert _find_line("wrote 2 rows in\n0.7 s\n", "rows in ... s", 0) == -1
    assert _find_line("a b c", "a b", 0) == 3


@pytest.mark.parametrize(("page", "runnable"), _runnable_pages())
def test_runnable_examples(page: Path, runnable: list[Block], tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "shared" / "data").mkdir(parents=True)
    text = "\n".join(ln for b in runnable for ln in b.body)
    if "../shared/data/proactivebench" in text:
        if DEV is None:
            pytest.skip("needs the ProactiveBench dev sessions (../shared/data/proactivebench)")
        (tmp_path / "shared" / "data" / "proactivebench").symlink_to(DEV)
    env = dict(
        os.environ,
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        COLUMNS="200",
        NO_COLOR="1",
    )
    src = str(ROOT / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for b in runnable:
        for command, expected in _steps(b.body):
            r = subprocess.run(
                ["bash", "-c", command],
                cwd=work,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=600,
            )
            out = r.stdout
            where = f"{b.page}:{b.line}: $ {command}"
            assert r.returncode == 0, f"{where}\nexit {r.returncode}\n{out[-3000:]}"
            pos = 0
            for want in expected:
                end = _find_line(out, want, pos)
                assert end >= 0, f"{where}\nexpected (in order): {want!r}\ngot:\n{out[-3000:]}"
                pos = end


def test_readme_is_short_and_its_links_resolve():
    text = (ROOT / "README.md").read_text("utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    assert "load average" not in text  # no measurement log: figures and their conditions live in docs/
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+://", target) or target.startswith("#"):
            continue
        assert (ROOT / target.split("#")[0]).exists(), target


def test_readme_test_command_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text("utf-8")
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert "scripts/test.sh" in readme and "scripts/quickstart.sh" in readme
    assert re.search(r"^bash scripts/test.sh --all$", ci, re.M)
    assert re.search(r"mkdocs build --strict", ci)


def test_every_nav_page_exists_and_every_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text("utf-8")
    listed = {m for m in re.findall(r"^\s*- (?:[^:#\n]+: )?([\w/.-]+\.md)\s*$", nav, re.M)}
    for page in listed:
        assert (DOCS / page).is_file(), page
    on_disk = {_rel(p) for p in pages()[1:]}
    assert on_disk - NOT_YET_MARKED <= listed, sorted(on_disk - listed)
    for reserved in NOT_YET_MARKED:  # reserved in a commented nav line until the page lands, then listed
        if (DOCS / reserved).is_file():
            assert reserved in listed, f"{reserved} landed: uncomment its nav line in mkdocs.yml"
        else:
            assert re.search(rf"^\s*# - [^:\n]+: {re.escape(reserved)}$", nav, re.M), reserved


def test_architecture_page_keeps_its_path():
    # tests and docstrings cite docs/architecture.md by path
    assert (DOCS / "architecture.md").read_text("utf-8").startswith("# proagent architecture")


def _render_results():
    import importlib.util

    spec = importlib.util.spec_from_file_location("render_results", ROOT / "benchmarks" / "render_results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmark_runs_page_is_rendered_from_the_kept_json():
    rr = _render_results()
    page = rr.render()
    for path in sorted((DOCS / "results").glob("*.json")):
        run = json.loads(path.read_text("utf-8"))
        assert f"## {run['benchmark']}" in page and f"`{run['command']}`" in page
        assert any(r.get("baseline") is True for r in run["rows"]) or run.get("baseline_columns"), (
            f"{path.name}: no same-run baseline row or column"
        )
    run = {
        "benchmark": "demo",
        "command": "python benchmarks/demo.py --json x.json",
        "commit": "abc1234",
        "date": "2026-12-03T10:00:00+00:00",
        "machine": {"cpus": 2, "busy_before": 0.9, "loadavg_before": [9.5, 1, 1], "loadavg_after": [10.25, 1, 1]},
        "baseline": "the naive path",
        "columns": [["what", "what", ""], ["s", "seconds", ".2f"]],
        "rows": [{"what": "new | fast", "s": 1.234}, {"what": "naive", "s": 2.5, "baseline": True}],
    }
    text = rr.render_run(run)
    assert "load average 9.50 before and 10.25 after, CPU busy 90% before the start (other processes" in text
    assert "| new \\| fast | 1.23 |  |" in text and "| naive | 2.50 | yes |" in text
    del run["baseline"]
    with pytest.raises(ValueError, match="missing baseline"):
        rr.render_run(run, "demo.json")


def test_results_and_speed_pages_are_what_render_results_makes_of_the_kept_json():
    # the figures in <!-- results: NAME --> blocks come from docs/results/NAME.json; after a new run:
    # python benchmarks/render_results.py --pages
    rr = _render_results()
    blocks = 0
    for page in rr.PAGES:
        text = page.read_text("utf-8")
        blocks += len(rr.BLOCK.findall(text))
        assert rr.fill_page(text) == text, (
            f"{page.name} differs from its JSON: run python benchmarks/render_results.py --pages"
        )
    assert blocks >= 5
    run = {
        "benchmark": "demo",
        "command": "python benchmarks/demo.py --json x.json",
        "commit": "abc1234",
        "date": "2026-12-03T10:00:00+00:00",
        "machine": {"cpus": 2, "loadavg_before": [1.5, 1, 1]},
        "baseline": "b",
        "conditions": "smoke settings (--n 2)",
        "columns": [["s", "seconds", ".1f"]],
        "rows": [{"s": 1.0}],
        "baseline_columns": ["s"],
    }
    text = rr.render_run(run, heading=False)
    assert (
        not text.startswith("## ") and "Conditions: smoke settings (--n 2)" in text and "| seconds (baseline) |" in text
    )


def test_every_benchmark_writes_its_run_through_the_one_helper():
    scripts = [p for p in (ROOT / "benchmarks").glob("*.py") if p.name not in ("_common.py", "render_results.py")]
    assert scripts
    for p in scripts:
        text = p.read_text("utf-8")
        assert "write_result(" in text, f"{p.name}: write its figures through _common.write_result"
        assert "write_json_atomic(a.json" not in text and "write_json_atomic(args.json" not in text, p.name


MACHINE_PATH = re.compile(
    r"(?<![\w~.$])(?:/work/|/root/|/tmp/|/var/folders/|/private/var/"
    r"|/home/(?!you/)[\w.-]+/|/Users/(?!you/)[\w.-]+/|[A-Z]:\\+Users\\+(?!you\\)[\w.-]+)"
)
"""An absolute path of some machine: the folders this project's machines work in (``/work/``, ``/root/``,
``/tmp/``: a helper's scratch run, pytest's ``/tmp/pytest-of-...``) and a named person's home. A page says
``~/activity``, ``DIR``, ``<capture>``, a relative path, or ``/home/you/`` where a host's
configuration needs an absolute one."""


def test_no_machine_paths_in_the_pages():
    """Docs true by construction: no page (README and every page under docs/) quotes a path of the
    machine it was written on; a placeholder (``~/activity``, ``/home/you/...``) stays."""
    found = []
    for page in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:
        for n, line in enumerate(page.read_text("utf-8").splitlines(), 1):
            found += [f"{page.relative_to(ROOT)}:{n}: {m.group(0)}" for m in MACHINE_PATH.finditer(line)]
    assert not found, "machine paths in the docs (write ~/activity, DIR, <capture>):\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("line", "bad"),
    [
        ("proagent show ~/activity", False),
        ("proagent mcp /home/you/proagent-capture", False),
        ("--out /tmp/pytest-of-root/pytest-3/x", True),
        ("wrote /work/dd-long/result.json", True),
        ("/root/.cache/proagent/models/x.gguf", True),
        ("/home/alice/activity", True),
        ("C:\\Users\\bob\\activity", True),
        ("https://example.com/tmp/x", False),
    ],
)
def test_machine_path_pattern(line: str, bad: bool):
    assert bool(MACHINE_PATH.search(line)) is bad


def test_site_build_quiets_jieba():
    """``mkdocs build`` printed jieba's "Building prefix dict ..." lines (the Material search plugin
    splits the pages' Chinese with it): the site's hook quiets jieba's logger."""
    import importlib.util
    import logging

    jieba = pytest.importorskip("jieba")
    jieba.setLogLevel(logging.DEBUG)  # as jieba leaves it when imported
    spec = importlib.util.spec_from_file_location("proagent_docs_hook", DOCS / "hooks" / "generated_pages.py")
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    assert logging.getLogger("jieba").level >= logging.WARNING
