"""Calibrated When-to-Assist decisions from token log-probabilities.

A small model asked "Need help: Yes|No" may answer Yes at every moment, which
ties the always-yes baseline. Its *probability* of Yes still ranks moments: the
decision token's log-probabilities give

    p_yes = P(Yes) / (P(Yes) + P(No))

summed over the top alternatives of the token that follows ``Need help:``
(``Yes``, ``yes``, `` YES`` ... and the same for No; ``是``/``否`` too). A
threshold chosen on the training split (maximising balanced accuracy, i.e.
Youden's J = TPR - FPR on the ROC curve) then decides ``p_yes >= threshold``
on the test split.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["MIN_CALIBRATION_MOMENTS", "calibrate", "p_yes_from_logprobs", "separates", "youden_threshold"]

_LABEL = re.compile(r"need(?:s)?[\s_-]*help[\"'*_`]*\s*[:：=][*\s]*\"?$|需要帮助\s*[:：]\s*$", re.IGNORECASE)
_ECHO = re.compile(r"^\s*(?:or\b|/|\|)", re.IGNORECASE)
_YES = frozenset({"yes", "y", "是", "true"})
_NO = frozenset({"no", "n", "否", "false"})


def _side(token: str) -> str | None:
    t = re.sub(r"[^\w\u4e00-\u9fff]", "", token).lower()
    return "yes" if t in _YES else "no" if t in _NO else None


def p_yes_from_logprobs(logprobs: Any) -> float | None:
    """P(Yes) / (P(Yes) + P(No)) at the answer token after ``Need help:``.

    When the label occurs more than once (chain of thought restates it), the
    last one that is followed by a yes/no token counts, as in the parsing
    cascade (:mod:`proagent.agent.parsing`).

    Args:
        logprobs: inspect :class:`~inspect_ai.model.Logprobs` of the answer
            (``content``: tokens with ``top_logprobs``), or ``None``.

    Returns:
        A probability in [0, 1], or ``None`` when there are no log-probabilities,
        no ``Need help:`` label, or no yes/no token right after one.
    """
    content = getattr(logprobs, "content", None) or []
    text, found = "", None
    for i, tok in enumerate(content):
        text += tok.token
        if not _LABEL.search(text):
            continue
        rest = [t for t in content[i + 1 :] if t.token.strip() not in {"", "*", "**", '"'}]
        nxt = rest[0] if rest else None
        if nxt is None or _side(nxt.token) is None:
            continue
        if len(rest) > 1 and _ECHO.match(rest[1].token):
            continue  # "Need help: Yes or No" / "Yes|No": the template echoed, not a decision
        alternatives = list(nxt.top_logprobs or [])
        if all(a.token != nxt.token for a in alternatives):
            alternatives.append(nxt)
        mass = {"yes": 0.0, "no": 0.0}
        for a in alternatives:
            side = _side(a.token)
            if side:
                mass[side] += math.exp(a.logprob)
        total = mass["yes"] + mass["no"]
        if total > 0:  # every alternative may underflow to 0
            found = mass["yes"] / total
    return found


def youden_threshold(p_yes: Sequence[float], labels: Sequence[int]) -> float:
    """The threshold on ``p_yes`` that maximises balanced accuracy (Youden's J)
    on labelled moments (scikit-learn's ROC curve; ties: the threshold nearest 0.5).
    Candidates are the observed scores (ROC's "never Yes" point is left out: it
    cannot be expressed as a threshold in [0, 1] when a score is exactly 1).

    Raises:
        ValueError: fewer than one positive and one negative, or lengths differ.
    """
    if len(p_yes) != len(labels):
        raise ValueError(f"{len(p_yes)} scores but {len(labels)} labels")
    if not (0 < sum(labels) < len(labels)):
        raise ValueError("choosing a threshold needs both positive and negative training moments")
    from sklearn.metrics import roc_curve

    fpr, tpr, thresholds = roc_curve(list(labels), list(p_yes))
    finite = [i for i in range(len(thresholds)) if math.isfinite(thresholds[i])]
    best = max(finite, key=lambda i: (round(tpr[i] - fpr[i], 12), -abs(thresholds[i] - 0.5)))
    return float(thresholds[best])


MIN_CALIBRATION_MOMENTS = 20
"""Fewer labelled train moments than this make a chosen threshold unreliable (a warning, not a refusal)."""


def calibrate(p_yes: Sequence[float], labels: Sequence[int]) -> dict[str, float | int]:
    """Choose the threshold on labelled train moments and say what it rests on.

    Args:
        p_yes: P(Yes) per moment (:func:`p_yes_from_logprobs`), each in [0, 1].
        labels: 1 where the user needed help, else 0; same length.

    Returns:
        ``threshold`` (:func:`youden_threshold`), ``n_train`` (moments), ``n_train_positive``,
        ``balanced_accuracy`` at the threshold (scikit-learn's ``balanced_accuracy_score``:
        mean of TPR and TNR) and ``auc`` (ROC AUC of ``p_yes``; 0.5 is chance).

    Raises:
        ValueError: no moments, or not both classes (nothing to choose on).
    """
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    if not p_yes:
        raise ValueError(
            "no readable P(Yes) on the train split (no token log-probabilities, or no 'Need help:' answers)"
        )
    t = youden_threshold(p_yes, labels)
    y, p = [int(v) for v in labels], [float(v) for v in p_yes]
    return {
        "threshold": t,
        "n_train": len(p),
        "n_train_positive": sum(y),
        "balanced_accuracy": float(balanced_accuracy_score(y, [int(v >= t) for v in p])),
        "auc": float(roc_auc_score(y, p)),
    }


def separates(calibration: dict[str, float | int]) -> bool:
    """Whether a :func:`calibrate` result can be trusted to help: P(Yes) ranks the train
    moments better than chance (AUC > 0.5) on at least :data:`MIN_CALIBRATION_MOMENTS`."""
    return calibration["auc"] > 0.5 and calibration["n_train"] >= MIN_CALIBRATION_MOMENTS
