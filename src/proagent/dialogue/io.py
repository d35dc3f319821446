"""Read and write ProactiveEval environments.

Accepted inputs (:func:`read_environments`):

* a ``.jsonl`` file, one item per line;
* a ``.json`` file holding a list of items (or one item);
* a folder in the published repository's layout, ``dataset/{domain}/{fair,hard}.json``
  (pass the repository root, its ``dataset`` folder, or one domain folder): the
  domain defaults to the folder name and the tier to the file name;
* any other folder: every ``.json``/``.jsonl`` file below it, in name order.

Item format::

    {"id", "domain", "topic",
     "environment": {"user_information": str, "trigger_factor": str},
     "target": str, "sub_target": [str, ...]}

``id`` and ``topic`` may be missing (ids are then ``{domain}-{tier}-{index}``).
A malformed item raises :class:`proagent.errors.DataError` naming the file, the
item (position and id) and the problem; nothing is returned half-loaded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..io import write_atomic
from .records import TIERS, Environment

__all__ = ["environment_from_item", "read_environments", "write_environments", "write_layout"]

_KNOWN = {"id", "domain", "topic", "environment", "target", "sub_target", "tier"}


def _required_text(value: Any, name: str, where: str, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        got = "missing" if value is None else ("empty" if isinstance(value, str) else f"a {type(value).__name__}")
        raise DataError(where, f"{name} must be a non-empty string (got {got})")
    return value.strip()


def environment_from_item(
    item: Any,
    *,
    where: str = "item",
    default_domain: str | None = None,
    default_tier: str | None = None,
    default_id: str | None = None,
) -> Environment:
    """Validate one item and build its :class:`Environment`.

    Raises:
        proagent.errors.DataError: the item is malformed (``path``: ``where``).
    """
    if not isinstance(item, dict):
        raise DataError(where, f"expected an object, got {type(item).__name__}")
    if item.get("id") is not None:
        where = f"{where} (id {item['id']!r})"
    env = item.get("environment")
    if not isinstance(env, dict):
        raise DataError(where, "'environment' must be an object with user_information and trigger_factor")
    domain = item.get("domain", default_domain)
    domain = _required_text(domain, "domain", where)
    tier = item.get("tier", default_tier)
    if tier is not None and tier not in TIERS:
        raise DataError(where, f"tier must be one of {', '.join(TIERS)} (got {tier!r})")
    subs = item.get("sub_target")
    if not isinstance(subs, list) or not subs:
        raise DataError(where, "sub_target must be a non-empty list of strings")
    subs_clean = tuple(_required_text(s, f"sub_target[{i}]", where) for i, s in enumerate(subs))
    ident = item.get("id", default_id)
    if isinstance(ident, int) and not isinstance(ident, bool):
        ident = str(ident)
    return Environment(
        id=_required_text(ident, "id", where),
        domain=domain,
        topic=_required_text(item.get("topic"), "topic", where, required=False),
        user_information=_required_text(env.get("user_information"), "environment.user_information", where),
        trigger_factor=_required_text(env.get("trigger_factor"), "environment.trigger_factor", where),
        target=_required_text(item.get("target"), "target", where),
        sub_target=subs_clean,
        tier=tier,
        extra={k: v for k, v in item.items() if k not in _KNOWN},
    )


def _load_items(path: Path) -> list[Any]:
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(path, f"not UTF-8 text ({e.reason})") from None
    except OSError as e:
        raise DataError(path, f"cannot read ({e.strerror or e})") from None
    if path.suffix.lower() == ".jsonl":
        items = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise DataError(path, f"line {n}: invalid JSON ({e.msg}, column {e.colno})") from None
        return items
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(path, f"invalid JSON ({e.msg}, line {e.lineno} column {e.colno})") from None
    if isinstance(data, dict) and "environment" in data:
        return [data]
    if not isinstance(data, list):
        raise DataError(path, f"expected a list of ProactiveEval items, got a JSON {type(data).__name__}")
    return data


def _read_file(path: Path, default_domain: str | None, default_tier: str | None) -> list[Environment]:
    jsonl = path.suffix.lower() == ".jsonl"
    out = []
    for i, item in enumerate(_load_items(path)):
        where = f"{'line' if jsonl else 'item'} {i + 1}"
        dom = item.get("domain", default_domain) if isinstance(item, dict) else default_domain
        default_id = f"{dom}-{default_tier or 'item'}-{i + 1:03d}" if dom else None
        try:
            out.append(
                environment_from_item(
                    item, where=where, default_domain=default_domain, default_tier=default_tier, default_id=default_id
                )
            )
        except ValueError as e:
            raise DataError(path, str(e)) from None
    return out


def _layout_files(root: Path) -> list[tuple[Path, str | None, str | None]]:
    """(file, default domain, default tier) for a folder."""
    if (root / "dataset").is_dir():
        root = root / "dataset"
    tiers = [(root / f"{t}.json", root.name, t) for t in TIERS if (root / f"{t}.json").is_file()]
    if tiers:  # one domain folder
        return tiers
    layout = [
        (d / f"{t}.json", d.name, t)
        for d in sorted(p for p in root.iterdir() if p.is_dir())
        for t in TIERS
        if (d / f"{t}.json").is_file()
    ]
    if layout:
        return layout
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in {".json", ".jsonl"})
    return [(f, None, f.stem if f.stem in TIERS else None) for f in files]


def read_environments(path: str | Path) -> list[Environment]:
    """Read environments from a file or folder (see the module docstring).

    Raises:
        proagent.errors.DataError: missing path, no items, bad JSON, malformed
            item, or duplicate ids.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(path, "no such file or folder")
    files = _layout_files(path) if path.is_dir() else [(path, None, path.stem if path.stem in TIERS else None)]
    if not files:
        raise DataError(path, "no .json or .jsonl files of ProactiveEval items found")
    envs: list[Environment] = []
    seen: dict[str, Path] = {}
    for f, dom, tier in files:
        for e in _read_file(f, dom, tier):
            if e.id in seen:
                raise DataError(f, f"duplicate id {e.id!r} (also in {seen[e.id]})")
            seen[e.id] = f
            envs.append(e)
    if not envs:
        raise DataError(path, "no ProactiveEval items found")
    return envs


def write_environments(path: str | Path, envs: Iterable[Environment]) -> Path:
    """Write items to ``.jsonl`` (one per line) or ``.json`` (a list), atomically."""
    path = Path(path)
    items = [e.to_item() for e in envs]
    if path.suffix.lower() == ".jsonl":
        text = "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items)
    else:
        text = json.dumps(items, ensure_ascii=False, indent=2) + "\n"
    write_atomic(path, text)
    return path


def write_layout(root: str | Path, envs: Iterable[Environment]) -> list[Path]:
    """Write items in the published layout ``root/{domain}/{tier}.json``.

    Items without a tier go to ``fair.json``. Returns the files written.
    """
    root = Path(root)
    groups: dict[tuple[str, str], list[Environment]] = {}
    for e in envs:
        groups.setdefault((e.domain, e.tier or "fair"), []).append(e)
    return [write_environments(root / dom / f"{tier}.json", items) for (dom, tier), items in sorted(groups.items())]
