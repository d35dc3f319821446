"""``proagent live``'s decider set-up: a scripted decider (``--yes-at``), or a decider folder at the
cost threshold (``--cost-false-alarm``, ``--cost-miss``), learning from the answers or not
(``--learn``, ``--learn-method``); and what it learned, for the run's last line.

The command parses and prints; the rules (which file is a script, which costs can be used, which
folder is a decider) raise :class:`~proagent.errors.UsageError` / :class:`~proagent.errors.DataError`
naming the option, and ``cli/_errors.py`` maps them to one line and an exit code.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DataError, UsageError
from ._agent import ScriptedDecider, When

__all__ = ["LearnedCounts", "LiveDecider", "learned_counts", "scripted_decider", "set_up_decider"]


@dataclass(frozen=True)
class LiveDecider:
    """The When decider of a live run (:func:`set_up_decider`)."""

    when: When
    """Sample -> P(help), with its threshold."""
    name: str
    """What decides, for ``run.json``: ``scripted:PATH``, or the folder with its threshold, costs and learning."""
    learn_method: str | None = None
    """How it learns from the answers (``--learn-method``); ``None``: it does not."""


def scripted_decider(path: Path) -> ScriptedDecider:
    """``--yes-at FILE``: the sample or event ids to say Yes at (one a line, ``#`` comments, or a
    JSON list of strings or numbers).

    Raises:
        proagent.errors.UsageError: unreadable, or not a list of ids (``--yes-at``, exit 2).
    """
    try:
        text = path.read_text("utf-8")
        ids = json.loads(text) if text.lstrip().startswith("[") else [ln.strip() for ln in text.splitlines()]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UsageError("--yes-at", f"{path}: {e}") from None
    if not isinstance(ids, list) or any(not isinstance(i, (str, int)) or isinstance(i, bool) for i in ids):
        raise UsageError("--yes-at", f"{path}: expected sample or event ids (one a line, or a JSON list of "
                                     "strings or numbers), not a data file")
    return ScriptedDecider(yes={str(i) for i in ids if str(i).strip() and not str(i).startswith("#")})


def set_up_decider(decider: Path | None, yes_at: Path | None = None, *, learn: bool = False, learn_method: str = "knn",
                   costs: tuple[float, float] = (1.0, 2.0),
                   population_data: Callable[[Any], Any] | None = None) -> LiveDecider:
    """The decider of a live run: the script ``yes_at`` when given, else the ``decider`` folder
    offering at P(help) >= ``c_fa / (c_fa + c_miss)`` of ``costs``
    (:func:`proagent.agent.decider.cost_threshold`), personalised from every answer with ``learn``
    (:func:`~proagent.live.load_learning_when`; ``population_data(decider) -> (X, y)`` gives the
    ``refit`` method the decider's training moments: ``proagent.train.personal.decider_training_data``,
    passed in by the command, since live does not import train). Loaded now (its embedding model too).

    Raises:
        proagent.errors.UsageError: neither is given (``--decider``); as :func:`scripted_decider`; a
            cost that is not a positive number (``--cost-false-alarm/--cost-miss``).
        proagent.errors.DataError: not a usable decider folder, or its training data is gone (``--decider``, exit 1).
    """
    if yes_at is not None:
        return LiveDecider(scripted_decider(yes_at), f"scripted:{yes_at}")
    if decider is None:
        raise UsageError("--decider", "give --decider DIR (written by `proagent train when`) or --yes-at FILE (scripted)")
    from ..agent.decider import LearnConfig, cost_threshold
    from ._learn import load_learning_when
    from ._when import load_when

    threshold = cost_threshold(*costs)  # UsageError naming both cost options
    name = f"{decider} (threshold {threshold:.4f} from costs {costs[0]:g}:{costs[1]:g}"
    try:
        if not learn:
            return LiveDecider(load_when(decider, threshold), name + ", not learning)")
        when = load_learning_when(decider, LearnConfig(method=learn_method), threshold, costs, population_data)
        return LiveDecider(when, name + f", learning: {learn_method})", learn_method)
    except DataError as e:  # the folder's rule names no option: this is the one that named the folder
        if e.option is not None:
            raise
        raise DataError(e.path, e.problem, option="--decider") from None
    except OSError as e:
        raise DataError(e.filename or decider, e.strerror or str(e), option="--decider") from None


@dataclass(frozen=True)
class LearnedCounts:
    """What a learning decider learned from in a run (the last line of ``proagent live``)."""

    answers: int
    """Answers to offers."""
    questions: int
    """Answered sparse questions (``--ask-rate``)."""
    implicit: int
    """Implicit labels of quiet moments."""


def learned_counts(when: When) -> LearnedCounts | None:
    """What ``when`` learned from, when it is a learning decider (:class:`~proagent.live.LearningWhen`), else ``None``."""
    from ._learn import LearningWhen

    if not isinstance(when, LearningWhen):
        return None
    implicit = sum(1 for r in when.learned if r.get("implicit_id") is not None)
    asked = sum(1 for r in when.learned if r.get("question_id") is not None)
    return LearnedCounts(answers=when.model.n - implicit - asked, questions=asked, implicit=implicit)
