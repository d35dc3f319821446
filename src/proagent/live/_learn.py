"""Learning When to Assist from the user's own answers while ``proagent live`` runs.

:class:`LearningWhen` is a :class:`~proagent.live.When`: the population decider
(``proagent train when``) personalised by every answered offer of this live
folder (:class:`proagent.agent.decider.PersonalModel`). The live loop calls
:meth:`LearningWhen.sync` whenever it looks at new answers (before every
decision), so the next decision already uses the last answer.

Answers as labels of the offered moment: ``accepted`` -> 1 (help was needed),
``dismissed`` -> 0, ``not_now`` -> 0 with weight :data:`NOT_NOW_WEIGHT` (the
moment was wrong, the help perhaps not); ``ignored`` teaches nothing. A later
answer to the same offer replaces the earlier one. Implicit labels of quiet moments
(``feedback.db`` table ``implicit``, :mod:`proagent.live._implicit`) are learned the same
way: ``missed`` -> 1 with weight 1, ``quiet_focus`` -> 0 with its stored weight
(:data:`proagent.live._implicit.FOCUS_WEIGHT`). Answers to sparse questions (``--ask-rate``,
:mod:`proagent.live._ask`; ``feedback.db`` tables ``questions``, ``question_answers``) are learned
as an offer's: ``yes`` -> 1, ``no`` -> 0, weight 1; a later answer to the same question replaces
the earlier one.

What was learned lives beside ``feedback.db`` in ``learning/``:

``learning/manifest.json``
    format, method and hyper-parameters, the decider folder and its model
    SHA-256, the threshold and the costs it came from, ``last_response_id``
    (answers up to it were looked at), ``reset_after_response_id`` (answers up
    to it are forgotten: ``proagent live reset-learning``), the same two for implicit
    labels (``last_implicit_id``, ``reset_after_implicit_id``, written once there are any) and for
    answers to questions (``last_answer_id``, ``reset_after_answer_id``, likewise), and
    ``learned_from``: one record per answer (offer id, response id, response,
    label, weight, moment, session, SHA-256 of the moment's text; an implicit label has
    ``implicit_id`` and its evidence's event ids instead of the offer and response ids; an answered
    question ``question_id`` and ``answer_id``, response ``question_yes`` or ``question_no``);
``learning/features.npy``
    the feature rows of those moments (a cache: rebuilt from ``feedback.db``
    when it does not match the manifest or the decider).

A restart loads both and learns the answers given since (none twice). A running agent
notices ``proagent live reset-learning`` at its next look at the answers.

**Day one decides by rank, on a budget** (issue 42 item 4, issue 43): until the person has given
:data:`DAY_ONE_LABELS` labels (answers to offers, answered questions and ``missed`` implicit labels:
every label of weight >= 0.5; the weak ``quiet_focus`` negatives do not count, since steady work can
produce many of them before the person has said anything), the decider offers at the moments whose
P(help) ranks highest among the person's recent moments (the last :data:`RANK_WINDOW_SECONDS`),
as many as fill ``max_per_hour`` at the rate moments come, whatever the absolute scores
(:func:`rank_threshold`); then at the cost threshold. A population model trained on a handful of other
people gives scores squeezed into a narrow band for a new person (0.30-0.33 against a threshold of 1/3
in issue 42's trial: nothing was offered all day); its ranking carries what it knows, its level does
not. :attr:`LearningWhen.regime` says which regime is on; ``learning/manifest.json`` records it
(``regime``) for the page.
"""

from __future__ import annotations

import io
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from .. import live_files
from ..errors import DataError
from ..io import write_atomic, write_json_atomic
from ..records import Sample
from ..sources.lifetrace_schema import connect_read_only
from ._feedback import FEEDBACK_DB, FeedbackStore
from .records import LearningManifest

__all__ = [
    "DAY_ONE_LABELS",
    "LEARNING_DIR",
    "LEARNING_FORMAT",
    "NOT_NOW_WEIGHT",
    "RANK_WINDOW_SECONDS",
    "LearningWhen",
    "load_learning_when",
    "rank_threshold",
    "reset_learning",
]

LEARNING_DIR = live_files.LEARNING_DIR
"""Folder, beside ``feedback.db``, of what the live decider learned."""

LEARNING_FORMAT = "proagent-live-learning"
"""``format`` field of ``learning/manifest.json``."""

NOT_NOW_WEIGHT = 0.5
"""Weight of a "not now" answer as a negative label (an accept or dismiss weighs 1)."""

DAY_ONE_LABELS = 10
"""Labels (weight >= 0.5) the person gives before the cost threshold replaces day one's ranking.
Why 10: with ten labels the prior-shift offset's posterior SD is about half its prior's
(``1 / sqrt(1 + 10 p (1 - p))`` logits at p ~ 1/3: 0.55 against 1), and ``benchmarks/personalise.py``
measures its learners "after 10 labels" (issue 43's target: accuracy and F1 >= 0.70 there); before
that the probabilities are the population's, whose level does not transfer to a new person."""

RANK_WINDOW_SECONDS = 3600.0
"""Day one ranks a moment among the person's moments of the last hour (the budget is per hour)."""

RANK_MIN_SPAN_SECONDS = 900.0
"""The rate of moments is counted over at least this span (a run's first minutes would otherwise
extrapolate one moment into an hour of them)."""

_LABELS = {"accepted": (1, 1.0), "dismissed": (0, 1.0), "not_now": (0, NOT_NOW_WEIGHT)}
_ANSWER_LABELS = {"yes": (1, 1.0), "no": (0, 1.0)}


def rank_threshold(scores: list[tuple[float, float]], max_per_hour: int) -> float:
    """The day-one threshold: the score of the ``k``-th highest of ``scores`` (``(seconds, P(help))`` of the
    person's recent moments, the current one last), where ``k = ceil(n * max_per_hour / rate)``, ``n`` the
    moments in the window and ``rate`` the moments per hour they came at (over at least
    :data:`RANK_MIN_SPAN_SECONDS`), so offering at ``p >= threshold`` fills the hourly budget and no
    more, whatever the scores' level. ``max_per_hour`` 0 (no limit) or no scores: 0 (offer)."""
    import math

    if not scores or max_per_hour <= 0:
        return 0.0
    t_now = scores[-1][0]
    recent = [p for t, p in scores if t_now - t <= RANK_WINDOW_SECONDS]
    span = max(t_now - min(t for t, _ in scores if t_now - t <= RANK_WINDOW_SECONDS), RANK_MIN_SPAN_SECONDS)
    rate = len(recent) / (span / 3600.0)
    k = max(1, math.ceil(len(recent) * min(1.0, max_per_hour / rate)))
    return float(sorted(recent, reverse=True)[min(k, len(recent)) - 1])


MAX_ID = 2**62
"""Largest response id or count a learning manifest may hold (SQLite row ids are below 2^63)."""


def _learning_dir(folder: Path) -> Path:
    """``folder/learning``, refused when something else stands at that name.

    Raises:
        DataError: ``learning`` is a file (or another non-folder).
    """
    d = folder / LEARNING_DIR
    if d.exists() and not d.is_dir():
        raise DataError(
            d,
            "is not a folder (the live decider keeps what it learned there); move it away, or "
            "`proagent live reset-learning` starts afresh",
        )
    return d


def _manifest_path(folder: Path) -> Path:
    return folder / LEARNING_DIR / "manifest.json"


def _read_manifest(folder: Path) -> LearningManifest | None:
    """The folder's ``learning/manifest.json``, ``None`` when there is none.

    Raises:
        DataError: unreadable, not a learning manifest, a field out of range (a count below 0 or
            past :data:`MAX_ID`, a threshold outside 0..1, an object that is not one), or
            ``learning`` is not a folder.
    """
    p = _learning_dir(folder) / "manifest.json"
    if not p.is_file():
        return None
    try:
        m = json.loads(p.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DataError(
            p, f"unreadable learning manifest ({e}); `proagent live reset-learning` starts afresh"
        ) from None
    if not isinstance(m, dict) or m.get("format") != LEARNING_FORMAT:
        raise DataError(p, "not a proagent live learning manifest; `proagent live reset-learning` starts afresh")
    try:
        got = LearningManifest.from_json(m)
        counts = (
            got.last_response_id,
            got.reset_after_response_id,
            got.last_implicit_id,
            got.reset_after_implicit_id,
            got.last_answer_id,
            got.reset_after_answer_id,
            got.n,
            got.n_positive,
        )
        if min(counts) < 0 or max(counts) > MAX_ID or got.n_positive > got.n:
            raise ValueError("a count out of range")
        for name in ("config", "decider", "costs", "model"):
            if getattr(got, name) is not None and not isinstance(getattr(got, name), Mapping):
                raise ValueError(f"{name} is not an object")
        if got.threshold is not None and not (isinstance(got.threshold, (int, float)) and 0 <= got.threshold <= 1):
            raise ValueError("threshold is not a probability")
        return got
    except (TypeError, ValueError, OverflowError, AttributeError) as e:
        raise DataError(p, f"damaged learning manifest ({e}); `proagent live reset-learning` starts afresh") from None


class LearningWhen:
    """The population decider personalised online by this live folder's answers.

    It binds to the live folder of the first ``feedback.db`` it syncs with (``learning/`` is
    written beside it) and loads what was learned there before.

    Args:
        decider: a loaded :class:`proagent.agent.decider.Decider`.
        config: a :class:`proagent.agent.decider.LearnConfig` (method, hyper-parameters).
        threshold: offer at P(help) >= this (0-1; :func:`proagent.agent.decider.cost_threshold`).
        costs: ``(cost of a false alarm, cost of a miss)`` the threshold came from, for the manifest.
        population_data: ``(X, y)`` of the decider's training moments (the ``refit`` method only).
        max_per_hour: the offer budget day one fills by rank (``--max-per-hour``; module docstring);
            ``None``: no day one, the cost threshold from the start.
        day_one_labels: labels before the cost threshold takes over (:data:`DAY_ONE_LABELS`).

    Raises:
        DataError: an unreadable ``learning/manifest.json``.
        ValueError: ``refit`` without ``population_data``.
    """

    def __init__(
        self,
        decider: Any,
        config: Any,
        threshold: float,
        costs: tuple[float, float] | None = None,
        population_data: tuple[np.ndarray, np.ndarray] | None = None,
        max_per_hour: int | None = None,
        day_one_labels: int = DAY_ONE_LABELS,
    ) -> None:
        from ..agent.decider import PersonalModel

        self.decider = decider
        self.folder: Path | None = None
        self.config = config
        self.cost_threshold = float(threshold)
        """Offer at P(help) >= this once day one is over (the costs' threshold)."""
        self.threshold = float(threshold)
        """The threshold of the last decision: day one's rank threshold, or :attr:`cost_threshold`."""
        self.max_per_hour = max_per_hour
        self.day_one_labels = int(day_one_labels)
        self._scores: list[tuple[float, float]] = []
        self.costs = costs
        self.model = PersonalModel(
            decider.model, config, population_data, embedding_columns=decider.features.groups[0] == "embedding"
        )
        self.learned: list[dict[str, Any]] = []
        self._rows: list[np.ndarray] = []
        self.last_response_id = 0
        self.reset_after = 0
        self.last_implicit_id = 0
        self.reset_after_implicit = 0
        self.last_answer_id = 0
        self.reset_after_answer = 0
        self._stale = False
        self._saved_mtime: int | None = None

    # ------------------------------------------------------------ deciding
    def features(self, samples: list[Sample]) -> np.ndarray:
        from ..agent.decider import moment_features

        return moment_features(samples, self.decider.cache, self.decider.features)

    @property
    def labels(self) -> int:
        """Labels of weight >= 0.5 learned so far (what ends day one)."""
        return sum(1 for r in self.learned if float(r.get("weight", 1.0)) >= 0.5)

    @property
    def regime(self) -> str:
        """``rank`` (day one: offers at the person's top-ranked recent moments, filling ``max_per_hour``)
        or ``cost`` (offers at P(help) >= :attr:`cost_threshold`)."""
        return "rank" if self.max_per_hour is not None and self.labels < self.day_one_labels else "cost"

    def describe_regime(self) -> str:
        """One line on how the decider offers now, for the summary and the page."""
        if self.regime == "rank":
            return (
                f"day one: offering at your top-ranked moments of the last hour, up to {self.max_per_hour} an hour "
                f"({self.labels} of {self.day_one_labels} labels so far)"
            )
        return f"learned: offering at P(help) >= {self.cost_threshold:.3f} (after {self.labels} labels)"

    def __call__(self, sample: Sample) -> float:
        """Personal P(help needed at ``sample.time``); sets :attr:`threshold` for this decision (day one:
        :func:`rank_threshold` over the recent moments, this one included)."""
        p = float(self.model.probabilities(self.features([sample]))[0])
        t = sample.time.timestamp()
        self._scores = [(u, q) for u, q in self._scores if t - u <= RANK_WINDOW_SECONDS and u <= t] + [(t, p)]
        if self.regime == "rank":
            self.threshold = rank_threshold(self._scores, int(self.max_per_hour or 0))
        else:
            self.threshold = self.cost_threshold
        return p

    # ------------------------------------------------------------ learning
    def sync(self, store: FeedbackStore) -> int:
        """Learn every answer stored since the last look; refit and save when any.

        Returns:
            How many answers were learned (0: nothing changed).
        """
        if self.folder is None:
            self.folder = store.path.parent
            self._load()
            if not _manifest_path(self.folder).is_file():
                self.save()  # the manifest says from the start what this run learns (nothing yet)
        else:
            self._reset_from_disk()
        new = store.responses_since(max(self.last_response_id, self.reset_after))
        quiet = store.implicit_since(max(self.last_implicit_id, self.reset_after_implicit))
        asked = store.answers_since(max(self.last_answer_id, self.reset_after_answer))
        if self._stale:
            self._rebuild(store)
        n = 0
        for rid, oid, response, _at in new:
            self.last_response_id = rid
            if response not in _LABELS:
                continue
            sample = store.offer_sample(oid)
            if sample is None:
                continue
            label, weight = _LABELS[response]
            self._put(
                "offer_id",
                sample,
                {"offer_id": oid, "response_id": rid, "response": response, "label": label, "weight": weight},
            )
            n += 1
        for q in quiet:
            self.last_implicit_id = q["id"]
            sample = store.implicit_sample(q["id"])
            if sample is None:
                continue
            self.learned.append(
                {
                    "implicit_id": q["id"],
                    "decision_id": q["decision_id"],
                    "response": q["response"],
                    "label": int(q["label"]),
                    "weight": float(q["weight"]),
                    "moment": sample.time.isoformat(),
                    "user": sample.user,
                    "event_ids": list(q["evidence"].get("event_ids", [])),
                    **_text_key(sample),
                }
            )
            self._rows.append(self.features([sample])[0])
            n += 1
        for aid, qid, answer, _at in asked:
            self.last_answer_id = aid
            sample = store.question_sample(qid)
            if answer not in _ANSWER_LABELS or sample is None:
                continue
            label, weight = _ANSWER_LABELS[answer]
            self._put(
                "question_id",
                sample,
                {
                    "question_id": qid,
                    "answer_id": aid,
                    "response": f"question_{answer}",
                    "label": label,
                    "weight": weight,
                },
            )
            n += 1
        if new or quiet or asked or self._stale:
            if n or self._stale:
                self._refit()
            self._stale = False
            self.save()
        return n

    def _put(self, key: str, sample: Sample, rec: dict[str, Any]) -> None:
        """Learn ``rec`` (an answer to the offer or question ``rec[key]``) at ``sample``'s moment; a later
        answer to the same offer or question replaces the earlier one."""
        rec = {**rec, "moment": sample.time.isoformat(), "user": sample.user, **_text_key(sample)}
        old = next((i for i, r in enumerate(self.learned) if r.get(key) == rec[key]), None)
        row = self.features([sample])[0]
        if old is not None:
            self.learned[old], self._rows[old] = rec, row
        else:
            self.learned.append(rec)
            self._rows.append(row)

    def _reset_from_disk(self) -> None:
        """Forget in memory too when ``proagent live reset-learning`` ran meanwhile (checked by mtime)."""
        assert self.folder is not None
        try:
            mtime = _manifest_path(self.folder).stat().st_mtime_ns
        except OSError:
            return
        if mtime == self._saved_mtime:
            return
        self._saved_mtime = mtime
        m = _read_manifest(self.folder)
        after = m.reset_after_response_id if m is not None else 0
        after_q = m.reset_after_implicit_id if m is not None else 0
        after_a = m.reset_after_answer_id if m is not None else 0
        if after > self.reset_after or after_q > self.reset_after_implicit or after_a > self.reset_after_answer:
            self.reset_after = self.last_response_id = max(after, self.reset_after)
            self.reset_after_implicit = self.last_implicit_id = max(after_q, self.reset_after_implicit)
            self.reset_after_answer = self.last_answer_id = max(after_a, self.reset_after_answer)
            self.learned, self._rows = [], []
            self._refit()

    def _refit(self) -> None:
        if self.learned:
            self.model.fit(
                np.vstack(self._rows), [r["label"] for r in self.learned], [r["weight"] for r in self.learned]
            )
        else:
            self.model.fit(np.zeros((0, 0)), [])

    def _rebuild(self, store: FeedbackStore) -> None:
        samples = [
            store.implicit_sample(r["implicit_id"])
            if r.get("implicit_id") is not None
            else store.question_sample(r["question_id"])
            if r.get("question_id") is not None
            else store.offer_sample(r["offer_id"])
            for r in self.learned
        ]
        keep = [i for i, s in enumerate(samples) if s is not None]
        self.learned = [self.learned[i] for i in keep]
        self._rows = list(self.features([samples[i] for i in keep])) if keep else []
        self._refit()

    # ------------------------------------------------------------ disk
    def _decider_id(self) -> dict[str, Any]:
        return {
            "path": str(self.decider.path) if self.decider.path else None,
            "model_sha256": self.decider.manifest.model_sha256,
            "n_features": self.decider.manifest.n_features,
        }

    def _load(self) -> None:
        assert self.folder is not None
        m = _read_manifest(self.folder)
        if m is None:
            return
        self.reset_after = m.reset_after_response_id
        self.last_response_id = m.last_response_id
        self.reset_after_implicit = m.reset_after_implicit_id
        self.last_implicit_id = m.last_implicit_id
        self.reset_after_answer = m.reset_after_answer_id
        self.last_answer_id = m.last_answer_id
        self.learned = [dict(r) for r in m.learned_from]
        rows = None
        p = self.folder / LEARNING_DIR / "features.npy"
        same = (m.decider or {}).get("model_sha256") == self._decider_id()["model_sha256"]
        if self.learned and same and p.is_file():
            try:
                rows = np.load(p, allow_pickle=False)
            except (OSError, ValueError):
                rows = None
            if rows is not None and (rows.dtype.kind not in "fiu" or not np.isfinite(rows).all()):
                rows = None  # NaN/inf or a foreign array: rebuilt from feedback.db below, never learned from
        if rows is not None and rows.shape == (len(self.learned), self._decider_id()["n_features"]):
            self._rows = list(rows)
            self._refit()
        elif self.learned:
            self._stale = True  # features rebuilt from feedback.db at the first sync
            self._rows = []

    def manifest(self) -> LearningManifest:
        """The learning manifest (what :meth:`save` writes)."""
        from dataclasses import asdict

        return LearningManifest(
            format=LEARNING_FORMAT,
            method=self.config.method,
            config=asdict(self.config),
            decider=self._decider_id(),
            threshold=self.cost_threshold,
            regime={
                "regime": self.regime,
                "labels": self.labels,
                "day_one_labels": self.day_one_labels,
                "max_per_hour": self.max_per_hour,
                "text": self.describe_regime(),
            },
            costs=None if self.costs is None else {"false_alarm": self.costs[0], "miss": self.costs[1]},
            last_response_id=self.last_response_id,
            reset_after_response_id=self.reset_after,
            last_implicit_id=self.last_implicit_id,
            reset_after_implicit_id=self.reset_after_implicit,
            last_answer_id=self.last_answer_id,
            reset_after_answer_id=self.reset_after_answer,
            n=len(self.learned),
            n_positive=sum(r["label"] for r in self.learned),
            model=self.model.describe(),
            learned_from=tuple(self.learned),
            updated=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        )

    def save(self) -> None:
        """Write ``learning/features.npy`` then ``learning/manifest.json`` (each atomically)."""
        if self.folder is None:
            raise ValueError("not bound to a live folder yet (sync with its feedback store first)")
        d = _learning_dir(self.folder)
        buf = io.BytesIO()
        width = int(self._decider_id()["n_features"] or 0)
        np.save(buf, np.vstack(self._rows) if self._rows else np.zeros((0, width)), allow_pickle=False)
        write_atomic(d / "features.npy", buf.getvalue(), mode=0o600)
        write_json_atomic(
            d / "manifest.json", self.manifest().to_json(), nan="null", mode=0o600
        )  # moments of screen activity
        self._saved_mtime = (d / "manifest.json").stat().st_mtime_ns


def _text_key(sample: Sample) -> dict[str, str]:
    from ..agent.decider import event_text, text_sha256

    return {"text_sha256": text_sha256(event_text(sample.current))}


def reset_learning(folder: str | Path) -> int:
    """Forget what the live decider in ``folder`` learned: every answer (implicit label, answered question) stored so far
    is skipped from now on (``feedback.db`` itself is kept: ``proagent train when
    --feedback`` still reads it); the next run starts from the population decider.

    Returns:
        How many learned answers were forgotten.

    Raises:
        DataError: no ``feedback.db`` in ``folder``, or it is unreadable.
    """
    folder = Path(folder)
    db = folder / FEEDBACK_DB
    if not db.is_file():
        raise DataError(folder, "not a live folder (no feedback.db)")
    try:
        conn = connect_read_only(db)
        try:
            last = conn.execute("SELECT max(id) FROM responses").fetchone()[0] or 0
            has = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'implicit'").fetchone()
            last_q = (conn.execute("SELECT max(id) FROM implicit").fetchone()[0] or 0) if has else 0
            has_a = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'question_answers'"
            ).fetchone()
            last_a = (conn.execute("SELECT max(id) FROM question_answers").fetchone()[0] or 0) if has_a else 0
        finally:
            conn.close()
    except sqlite3.DatabaseError as e:
        raise DataError(db, f"cannot read feedback database ({e})") from None
    d = folder / LEARNING_DIR
    if d.exists() and not d.is_dir():
        d.unlink()  # a file where the folder belongs: what reset is for
    try:
        old = _read_manifest(folder) or LearningManifest()
    except DataError:
        old = LearningManifest()
    try:  # rows learned, as the feature file holds them (a damaged manifest still had them)
        rows = int(np.load(d / "features.npy", allow_pickle=False).shape[0]) if (d / "features.npy").is_file() else 0
    except (OSError, ValueError, IndexError):
        rows = 0
    m = replace(
        old,
        format=LEARNING_FORMAT,
        last_response_id=int(last),
        reset_after_response_id=int(last),
        last_implicit_id=int(last_q),
        reset_after_implicit_id=int(last_q),
        last_answer_id=int(last_a),
        reset_after_answer_id=int(last_a),
        n=0,
        n_positive=0,
        model=None,
        learned_from=(),
        updated=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    (d / "features.npy").unlink(missing_ok=True)
    write_json_atomic(_manifest_path(folder), m.to_json(), nan="null", mode=0o600)
    return max(old.n, len(old.learned_from), rows)


def load_learning_when(
    decider_folder: str | Path,
    config: Any,
    threshold: float,
    costs: tuple[float, float] | None = None,
    population_data: Any = None,
    max_per_hour: int | None = None,
) -> LearningWhen:
    """Load a decider folder (and its embedding model, now) as a :class:`LearningWhen`; ``population_data`` may be a callable ``decider -> (X, y)`` (called only for
    the ``refit`` method); ``max_per_hour``: day one's budget (module docstring; ``None``: no day one).

    Raises:
        ValueError: not a decider folder, or one made for other features
            (:class:`proagent.agent.decider.DeciderError`).
        DataError: an unreadable learning manifest, or the decider's training data is gone (refit).
    """
    from ..agent.decider import load_decider

    d = load_decider(decider_folder)
    d.warm_up()
    data = population_data(d) if callable(population_data) and config.method == "refit" else population_data
    return LearningWhen(d, config, threshold, costs, data, max_per_hour=max_per_hour)
