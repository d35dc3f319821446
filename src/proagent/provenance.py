"""What produced a result: installed package versions (recorded in results.json and
decider manifests, so a figure can be traced to the code that made it)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["package_versions"]


def package_versions(*packages: str) -> dict[str, str]:
    """``{distribution name: installed version}`` for each of ``packages`` that is
    installed (missing ones are left out, not an error)."""
    out = {}
    for pkg in packages:
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out
