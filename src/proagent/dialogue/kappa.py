"""Judge-human agreement: quadratic weighted Cohen's kappa (ProactiveEval section 4.3;
paper: 0.826 for planning, 0.721 for guidance).

Human scores come from a CSV file with a header: an id column (``id``,
``sample_id`` or ``sample``) and a score column (``human``, ``human_score`` or
``score``). An optional ``judge`` column holds the judge's score for the same
item; otherwise judge scores are taken from a ``results.json`` of
``proagent dialogue plan|guide`` (its ``samples``), matched by id.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from ..errors import DataError

__all__ = ["agreement", "judge_scores_from_results", "quadratic_kappa", "read_score_csv"]

_ID_COLS = ("id", "sample_id", "sample")
_HUMAN_COLS = ("human", "human_score", "score")


def _score(value: str, path: Path, line: int, col: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise DataError(path, f"line {line}: {col} {value!r} is not a number") from None
    if not 1 <= v <= 10:
        raise DataError(path, f"line {line}: {col} {v:g} is outside 1-10")
    return v


def read_score_csv(path: str | Path) -> tuple[dict[str, float], dict[str, float]]:
    """(human scores by id, judge scores by id — empty when the CSV has no ``judge`` column).

    Raises:
        proagent.errors.DataError: missing file, no id/score column, bad or duplicate rows.
    """
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            cols = {c.strip().lower(): c for c in (reader.fieldnames or [])}
            id_col = next((cols[c] for c in _ID_COLS if c in cols), None)
            h_col = next((cols[c] for c in _HUMAN_COLS if c in cols), None)
            j_col = cols.get("judge") or cols.get("judge_score")
            if id_col is None or h_col is None:
                raise DataError(
                    path,
                    f"needs an id column ({'/'.join(_ID_COLS)}) and a human score column "
                    f"({'/'.join(_HUMAN_COLS)}); found {', '.join(reader.fieldnames or []) or 'no header'}",
                )
            human: dict[str, float] = {}
            judge: dict[str, float] = {}
            for n, row in enumerate(reader, 2):
                ident = (row.get(id_col) or "").strip()
                if not ident:
                    raise DataError(path, f"line {n}: empty id")
                if ident in human:
                    raise DataError(path, f"line {n}: duplicate id {ident!r}")
                human[ident] = _score(row.get(h_col) or "", path, n, h_col)
                if j_col and (row.get(j_col) or "").strip():
                    judge[ident] = _score(row[j_col], path, n, j_col)
    except OSError as e:
        raise DataError(path, f"cannot read ({e.strerror or e})") from None
    except (UnicodeDecodeError, csv.Error) as e:
        raise DataError(path, f"not a readable CSV file ({e})") from None
    if not human:
        raise DataError(path, "no rows")
    return human, judge


def judge_scores_from_results(path: str | Path) -> dict[str, float]:
    """Judge scores by sample id from a ``results.json`` (or the folder holding it);
    unscored samples are left out.

    Raises:
        proagent.errors.DataError: missing or foreign file.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "results.json"
    try:
        data: Any = json.loads(path.read_text("utf-8"))
    except OSError as e:
        raise DataError(path, f"cannot read ({e.strerror or e})") from None
    except UnicodeDecodeError:
        raise DataError(path, "not UTF-8 text (a binary file?), not a results.json") from None
    except json.JSONDecodeError as e:
        raise DataError(path, f"invalid JSON ({e.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("samples"), list):
        raise DataError(path, "not a results.json of proagent dialogue plan|guide (no 'samples')")
    if not all(isinstance(r, dict) and "id" in r for r in data["samples"]):
        raise DataError(path, "not a results.json of proagent dialogue plan|guide (a sample without an id)")
    return {
        str(r["id"]): float(r["score"])
        for r in data["samples"]
        if isinstance(r.get("score"), (int, float)) and not isinstance(r["score"], bool) and r["score"] >= 1
    }


def quadratic_kappa(human: list[float], judge: list[float]) -> float:
    """Quadratic weighted kappa of two lists of 1-10 scores (rounded to integers)."""
    from sklearn.metrics import cohen_kappa_score

    a = [int(round(x)) for x in human]
    b = [int(round(x)) for x in judge]
    if a == b:
        return 1.0
    return float(cohen_kappa_score(a, b, weights="quadratic", labels=list(range(1, 11))))


def agreement(human: dict[str, float], judge: dict[str, float]) -> dict[str, Any]:
    """Kappa over the ids both sides scored, with counts of the ids only one side has.

    Raises:
        DataError: fewer than 2 common ids.
    """
    common = sorted(set(human) & set(judge))
    if len(common) < 2:
        ids = "1 id has" if len(common) == 1 else f"{len(common)} ids have"
        raise DataError(None, f"only {ids} both a human and a judge score; kappa needs at least 2")
    h = [human[i] for i in common]
    j = [judge[i] for i in common]
    return {
        "n": len(common),
        "kappa_quadratic": round(quadratic_kappa(h, j), 4),
        "human_mean": round(sum(h) / len(h), 3),
        "judge_mean": round(sum(j) / len(j), 3),
        "exact_agreement": round(sum(int(round(a)) == int(round(b)) for a, b in zip(h, j)) / len(common), 3),
        "human_only": sorted(set(human) - set(judge)),
        "judge_only": sorted(set(judge) - set(human)),
    }
