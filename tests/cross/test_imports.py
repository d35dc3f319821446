"""Layout guards: proagent's modules import each other without cycles, and each
one imports on its own.

* The import graph is read from each module's top-level statements (``ast``:
  imports in the module body, in ``try``/``if`` blocks, not inside functions,
  not under ``if TYPE_CHECKING``). An edge goes to the module named (``from .x
  import y`` goes to ``x.y`` when that is a module, else to ``x``). A cycle there
  is an import order that only works by luck; the test prints it.
* The same graph with the imports inside functions as well (``lazy``) has no cycle among
  proagent's modules either, except the edges of :data:`ALLOWED_LAZY_EDGES` (each with why
  it is still there): an import deferred into a function is still a dependency, and a
  cycle through one is two modules that cannot be understood (or moved) apart.
* Every module is imported in a fresh interpreter of its own (one subprocess
  runs them all, each in a child process), so a module that works only when
  something else was imported first (a registry filled as a side effect) fails.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import proagent

SRC = Path(proagent.__file__).resolve().parent
ROOT = "proagent"


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    out: dict[str, Path] = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _top_level_imports(body: list[ast.stmt]):  # noqa: ANN202
    """Import statements that run when the module is imported."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _top_level_imports(node.body)
            yield from _top_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _top_level_imports(block)
        elif isinstance(node, ast.With):
            yield from _top_level_imports(node.body)


def _every_import(body: list[ast.stmt]):  # noqa: ANN202
    """Every import statement, also inside functions (not under ``if TYPE_CHECKING``)."""
    for node in body:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _every_import(node.orelse)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                yield from _every_import(getattr(node, field, None) or [])


def import_graph(files: dict[str, Path] | None = None, *, lazy: bool = False) -> dict[str, set[str]]:
    """Module -> proagent modules it imports at top level (``lazy``: also inside functions)."""
    files = files or module_files()
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        is_pkg = path.name == "__init__.py"
        package = name if is_pkg else name.rpartition(".")[0]
        edges: set[str] = set()
        body = ast.parse(path.read_text("utf-8"), str(path)).body
        for node in (_every_import if lazy else _top_level_imports)(body):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in files else mod for a in node.names]
            for t in targets:
                # ``import a.b.c`` names a.b.c; keep the longest prefix that is one of ours
                while t and t not in files:
                    t = t.rpartition(".")[0]
                if t.startswith(ROOT) and t != name:
                    edges.add(t)
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a path ``[a, b, ..., a]``, or ``None``."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_graph_reader_sees_a_cycle(tmp_path: Path) -> None:
    """The guard itself: a two-module cycle and a TYPE_CHECKING-only edge."""
    pkg = tmp_path / ROOT
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from . import a\n")
    (pkg / "sub" / "a.py").write_text("from .b import f\n\ndef g():\n    from ..c import h\n")
    (pkg / "sub" / "b.py").write_text("import proagent.sub.a\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .sub import a\n")
    files = {
        n: p
        for n, p in [
            ("proagent", pkg / "__init__.py"),
            ("proagent.sub", pkg / "sub" / "__init__.py"),
            ("proagent.sub.a", pkg / "sub" / "a.py"),
            ("proagent.sub.b", pkg / "sub" / "b.py"),
            ("proagent.c", pkg / "c.py"),
        ]
    }
    graph = import_graph(files)
    assert graph["proagent.sub"] == {"proagent.sub.a"}
    assert graph["proagent.sub.a"] == {"proagent.sub.b"}  # the function-level import is not an edge
    assert graph["proagent.c"] == set()  # TYPE_CHECKING only
    assert find_cycle(graph) == ["proagent.sub.a", "proagent.sub.b", "proagent.sub.a"]
    graph["proagent.sub.b"] = set()
    assert find_cycle(graph) is None


def test_no_import_cycles() -> None:
    graph = import_graph()
    assert len(graph) > 50, "the package was not found"
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


ALLOWED_LAZY_EDGES: dict[tuple[str, str], str] = {}
"""Function-level import edges a module-cycle check tolerates, with the reason."""


def test_no_import_cycles_through_imports_inside_functions() -> None:
    """Issue 38 item 2: solvers <-> prompting <-> calibration (the method registry) and
    capture._probe <-> capture._wayland (the platform registry) were cycles only through
    imports inside functions, which the top-level graph does not see."""
    graph = import_graph(lazy=True)
    for (a, b), why in ALLOWED_LAZY_EDGES.items():
        assert b in graph[a], f"{a} no longer imports {b}: drop it from ALLOWED_LAZY_EDGES ({why})"
        graph[a].discard(b)
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle (imports inside functions included): " + " -> ".join(cycle)


def test_lazy_graph_reader_sees_a_cycle_inside_a_package(tmp_path: Path) -> None:
    """The guard itself: two modules of one package tied by an import inside a function."""
    pkg = tmp_path / ROOT
    (pkg / "x").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "x" / "__init__.py").write_text("")
    (pkg / "x" / "a.py").write_text("from .b import f\n")
    (pkg / "x" / "b.py").write_text(
        "def f():\n    try:\n        from . import a\n    except ImportError:\n        pass\n"
    )
    files = {
        "proagent": pkg / "__init__.py",
        "proagent.x": pkg / "x" / "__init__.py",
        "proagent.x.a": pkg / "x" / "a.py",
        "proagent.x.b": pkg / "x" / "b.py",
    }
    assert find_cycle(import_graph(files)) is None
    assert find_cycle(import_graph(files, lazy=True)) == ["proagent.x.a", "proagent.x.b", "proagent.x.a"]


def stage_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph collapsed to stages: ``proagent.bench.tasks`` -> ``proagent.bench``
    (a module at the top, ``proagent.records``, is its own node); edges inside a stage dropped."""

    def stage(m: str) -> str:
        return ".".join(m.split(".")[:2])

    out: dict[str, set[str]] = {}
    for a, targets in graph.items():
        out.setdefault(stage(a), set()).update(stage(b) for b in targets if stage(b) != stage(a))
    return out


def test_stage_graph_reader_sees_a_lazy_cycle(tmp_path: Path) -> None:
    """The guard itself: an import inside a function is an edge between stages."""
    pkg = tmp_path / ROOT
    for d in ("x", "y"):
        (pkg / d).mkdir(parents=True)
        (pkg / d / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "x" / "a.py").write_text("from ..y.b import f\n")
    (pkg / "y" / "b.py").write_text("def f():\n    from ..x import a\n")
    files = {
        "proagent": pkg / "__init__.py",
        "proagent.x": pkg / "x" / "__init__.py",
        "proagent.y": pkg / "y" / "__init__.py",
        "proagent.x.a": pkg / "x" / "a.py",
        "proagent.y.b": pkg / "y" / "b.py",
    }
    assert find_cycle(stage_graph(import_graph(files))) is None
    assert find_cycle(stage_graph(import_graph(files, lazy=True))) == ["proagent.x", "proagent.y", "proagent.x"]


def test_no_import_cycles_between_stages() -> None:
    """Stages import down the data flow only, also inside functions (issue 25: bench <-> train,
    bench <-> sources, train -> live -> bench were cycles)."""
    stages = stage_graph(import_graph(lazy=True))
    for a, b in (
        ("proagent.bench", "proagent.train"),
        ("proagent.sources", "proagent.bench"),
        ("proagent.live", "proagent.train"),
        ("proagent.sources", "proagent.train"),
    ):
        assert b not in stages[a], f"{a} imports {b}"
    cycle = find_cycle(stages)
    assert cycle is None, "import cycle between stages: " + " -> ".join(cycle)


_CHILD = textwrap.dedent("""
    # Imports each module named on the command line in a forked child of a
    # parent that holds no proagent module (only heavy third-party libraries,
    # preloaded to keep the run short); prints the failures.
    import importlib, os, sys, traceback

    for lib in ("numpy", "click", "inspect_ai", "inspect_ai.model", "inspect_ai.solver", "inspect_ai.scorer"):
        try:
            importlib.import_module(lib)
        except ImportError:
            pass
    ours = [m for m in sys.modules if m == "proagent" or m.startswith("proagent.")]
    assert not ours, f"the parent imported {ours}"
    failed = []
    for name in sys.argv[1:]:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                importlib.import_module(name)
                msg = b""
            except BaseException:
                msg = traceback.format_exc(limit=-4).encode()
            os.write(w, msg[-4000:])
            os._exit(0)
        os.close(w)
        with os.fdopen(r, "rb") as f:
            msg = f.read().decode()
        _, status = os.waitpid(pid, 0)
        if msg or status:
            failed.append(f"{name}: {msg or f'exit status {status}'}")
    print("\\n".join(failed))
    sys.exit(1 if failed else 0)
""")


def test_every_module_imports_on_its_own(tmp_path: Path) -> None:
    """Each module in a fresh process: no module needs another imported first."""
    script = tmp_path / "import_each.py"
    script.write_text(_CHILD)
    names = sorted(n for n in module_files() if not n.endswith(".__main__"))  # those run a program on import
    run = subprocess.run(
        [sys.executable, str(script), *names],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(SRC.parent)},
    )
    assert run.returncode == 0, run.stdout + run.stderr


_REGISTRIES = textwrap.dedent("""
    from proagent.agent.memory._base import MEMORIES, get_memory
    assert sorted(MEMORIES) == ["kg", "persona", "rag"], MEMORIES
    assert get_memory("rag").name == "rag"
    from proagent.agent.solvers import METHODS
    assert list(METHODS) == ["zero-shot", "cot", "sc"], METHODS
    from proagent.curate._detect import RECOGNIZERS
    assert len(RECOGNIZERS) == 14, RECOGNIZERS
    from proagent.live._notify import NOTIFIERS
    assert list(NOTIFIERS) == ["terminal", "desktop", "page", "none"], NOTIFIERS
    from proagent.capture._probe import platforms
    assert [p.name for p in platforms()][-1] == "x11" and len(platforms()) == 6
    import proagent._registry
    from inspect_ai._util.registry import registry_find, registry_info
    names = {(registry_info(x).type, registry_info(x).name) for x in registry_find(lambda i: i.name.startswith("proagent/"))}
    want = {("modelapi", "proagent/local"), ("task", "proagent/assist"), ("task", "proagent/annotate_events"),
            ("task", "proagent/dialogue_plan"), ("task", "proagent/dialogue_guide")}
    assert want <= names, sorted(want - names)
""")


def test_registries_are_full_from_any_entry() -> None:
    """The memory, method, PII, notifier and capture-platform registries are full from their
    own modules, and inspect's entry point registers ``local/...`` and the ``proagent/...``
    tasks, in a fresh interpreter."""
    # the installed (editable) package, as inspect finds it: with src/ put first on PYTHONPATH,
    # the build's src/proagent.egg-info (no direct_url.json) hides the editable install and
    # inspect registers the names without their "proagent/" package prefix
    run = subprocess.run([sys.executable, "-c", _REGISTRIES], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr


def test_register_memory_refuses_a_taken_or_missing_name() -> None:
    from proagent.agent.memory import MEMORIES, Memory, RagMemory, register_memory

    class Other(RagMemory):
        pass

    class Nameless(Memory):
        name = ""

    assert register_memory(RagMemory) is RagMemory  # registering the same class again is harmless
    with pytest.raises(ValueError, match="already registered"):
        register_memory(Other)
    with pytest.raises(ValueError, match="needs a name"):
        register_memory(Nameless)
    assert MEMORIES["rag"] is RagMemory
