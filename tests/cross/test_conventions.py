"""The package convention and the one-of-each helpers of ``docs/architecture.md``, checked on
the source (``ast``, nothing imported):

* every package's ``__init__.py`` has a docstring and an ``__all__``;
* a module whose name starts with ``_`` is private to its package (and the packages inside
  it): no module of another package imports it, not even inside a function;
* one ``<style>`` in ``src/`` (``report/pages.py``'s stylesheet);
* no file rename (``os.replace``, ``os.rename``, ``Path.rename``/``Path.replace``,
  ``shutil.move``) outside ``proagent.io``;
* every prompt is a file under a stage's ``prompts/`` (no module defines a ``*_PROMPT``
  string constant).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import proagent

SRC = Path(proagent.__file__).resolve().parent


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def private_imports(root: Path) -> list[str]:
    """``module:line -> target`` for every import of another package's ``_private`` module."""
    mods = _modules(root)
    found = []
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for t in targets:
                parts = t.split(".")
                if parts[0] != root.name:
                    continue
                for i, part in enumerate(parts):
                    if part.startswith("_") and not part.startswith("__"):
                        owner = ".".join(parts[:i])
                        if package != owner and not package.startswith(owner + "."):
                            found.append(f"{name}:{node.lineno} -> {t}")
                        break
    return found


def renames(root: Path, allowed: str = "io.py") -> list[str]:
    """``file:line`` of every file rename outside ``root/allowed``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path == root / allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            f = node.func
            owner = f.value.id if isinstance(f.value, ast.Name) else None
            if (
                (owner == "os" and f.attr in ("replace", "rename", "renames"))
                or (owner == "shutil" and f.attr == "move")
                or (f.attr == "rename" and owner not in ("os", "shutil"))
                # Path.replace(target): one positional argument; str.replace takes two
                or (f.attr == "replace" and owner != "os" and len(node.args) == 1 and not node.keywords)
            ):
                found.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return found


def test_every_package_states_its_job_and_its_public_names() -> None:
    missing = []
    for init in sorted(SRC.rglob("__init__.py")):
        tree = ast.parse(init.read_text("utf-8"))
        has_all = any(
            isinstance(n, (ast.Assign, ast.AnnAssign))
            and any(
                getattr(t, "id", None) == "__all__" for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            )
            for n in tree.body
        )
        if not ast.get_docstring(tree) or not has_all:
            missing.append(str(init.relative_to(SRC.parent)))
    assert not missing, f"__init__.py without a docstring or __all__: {missing}"


def test_no_package_imports_another_packages_private_module() -> None:
    assert private_imports(SRC) == []


def test_one_stylesheet() -> None:
    places = [
        f"{p.relative_to(SRC)}:{i}"
        for p in sorted(SRC.rglob("*.py"))
        for i, line in enumerate(p.read_text("utf-8").splitlines(), 1)
        if "<style" in line
    ]
    assert places == [places[0]] and places[0].startswith("report/pages.py:"), places


def test_every_rename_goes_through_proagent_io() -> None:
    assert renames(SRC) == []


def test_prompts_are_files() -> None:
    inline = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.parse(path.read_text("utf-8")).body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
                and any(getattr(t, "id", "").endswith("_PROMPT") for t in node.targets)
            ):
                inline.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert not inline, f"inline prompts (put them in the stage's prompts/ folder): {inline}"


@pytest.mark.parametrize(
    "code, bad",
    [
        ("from ..b._x import f\n", True),  # another package's private module
        ("def g():\n    from proagent.b import _x\n", True),  # inside a function, absolute, as a name
        ("from ._y import f\n", False),  # its own
        ("from ..b import f\n", False),  # the other package's public API
    ],
)
def test_the_private_import_guard_itself(tmp_path: Path, code: str, bad: bool) -> None:
    pkg = tmp_path / "proagent"
    for sub in ("a", "b"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text('"""x"""\n__all__ = []\n')
    (pkg / "__init__.py").write_text("")
    (pkg / "b" / "_x.py").write_text("def f(): ...\n")
    (pkg / "a" / "_y.py").write_text("def f(): ...\n")
    (pkg / "a" / "m.py").write_text(code)
    assert bool(private_imports(pkg)) == bad


def test_the_rename_guard_itself(tmp_path: Path) -> None:
    pkg = tmp_path / "proagent"
    pkg.mkdir()
    (pkg / "io.py").write_text("import os\nos.replace('a', 'b')\n")
    (pkg / "ok.py").write_text("s = 'a'.replace('a', 'b')\n")
    (pkg / "bad.py").write_text(
        "import os, shutil\nfrom pathlib import Path\nos.replace('a', 'b')\nPath('a').rename('b')\n"
        "shutil.move('a', 'b')\nPath('a').replace(Path('b'))\n"
    )
    assert renames(pkg) == ["proagent/bad.py:3", "proagent/bad.py:4", "proagent/bad.py:5", "proagent/bad.py:6"]
