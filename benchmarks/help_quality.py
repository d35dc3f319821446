"""Help quality (issue 44): is ``proagent live``'s help, given with the moment's screen, better than
the same model's answer to the same question asked cold?

The set: ``benchmarks/data/help_quality/moments.jsonl`` (its README says where each moment comes
from and how each rubric was written and checked). Each moment has its screen context (app, window
title, URL, the screen text as OCR gives it, the earlier windows), the person's question (their
real query where the log has one, else the offer's predicted query, or none: live's generic
question) and a rubric written before any answer: 2-5 items, some checkable by text (regular
expressions), and what makes an answer wrong.

For each moment (in a seeded random order, so a run stopped early holds a random subset):

* **in context**: live's help (:func:`proagent.live.help_context`, :func:`proagent.live._help.help_messages`,
  ``--send-screen`` default by the model as live's: raw for a local model, redacted for another),
  the model and answer budget live uses (:data:`proagent.live._help.HELP_MAX_TOKENS`);
* **context-free**: the same system prompt and question with no screen, events or app
  (:func:`proagent.live._help.context_free_messages`), same model;
* **rubric checks**: each checkable item on each answer (``check``: ``all`` patterns must match,
  one of ``any``, none of ``none``; case-insensitive) and the moment's ``wrong_patterns``;
* **pairwise judging**: each judge sees the screen (a fixed view, the same for every lever), the
  question, the rubric, and the two answers, in both orders, under two prompts compared on the same pairs
  (:data:`PROMPTS`: ``checklist``, which answer helps more; ``rubric``, which satisfies more of the rubric's
  items). A local judge is read, not sampled: its next-token probabilities of the labels ``A`` and ``B``
  give ``p_first``, its probability that the first answer shown is better. Two verdicts per pair
  (:func:`pair_record`):

  - **position-debiased** (the headline): ``p_x``, the judge's probability that the in-context answer is
    better, averaged over the two orders; it wins when ``p_x > 0.5``. This is balanced position
    calibration (Wang et al. 2023, "Large Language Models are not Fair Evaluators", arXiv 2305.17926): a
    judge that adds a constant to whichever answer comes first adds it to both sides once, so it cancels.
    Small judges need it: in the first run (5 moments) every judge here chose the first answer shown, by
    its likelier letter, in 10 of 10 orders, which leaves no pair whose orders agree.
  - **strict**: a win or a loss only when the likelier letter picks the same answer in both orders, else
    "orders disagree" (the swap of Zheng et al. 2023, MT-Bench, arXiv 2306.05685).

  Each judge's position bias: its mean ``p_first`` over every order (0.5 is none), and the share of
  first-position choices with scipy's exact binomial test. Which prompt's figures lead is fixed by a
  rule written before either ran on the set (:data:`PROMPT_RULE`): more pairs whose orders agree.
* **panel**: PoLL-style (Verga et al. 2024, arXiv 2404.18796) majority of the judges' verdicts (each kind);
  Cohen's kappa between judges (``sklearn.metrics.cohen_kappa_score``) on their per-moment verdicts and
  with the rubric's text checks.
* **win rate**: wins / (wins + losses) over the pairs with a verdict, with the Wilson 95% interval
  (``scipy.stats.binomtest(...).proportion_ci(method="wilson")``).

Levers (``--lever KEY=VALUE``, repeatable): a variant of the in-context help compared pairwise,
both orders, with the default in-context help: ``screen_chars=N`` (the screen region's size,
live's :data:`~proagent.live._help.SCREEN_CHARS`), ``max_tokens=N`` (the answer budget),
``prompt=FILE`` (a system prompt file in ``proagent/live/prompts/`` instead of ``help_system.txt``).
Each lever's row also gives the variant's and the default's answer tokens (median) and the share of
answers cut at their budget (all of it used: cut off, not ended).

Other modes:

* ``--rate``: pairs (order hidden, drawn at random per pair) in the terminal; the person's choice
  (1, 2, s to skip, q to quit) is stored 0600 in ``--work``'s ``ratings.jsonl``, and the next run
  reports judge-human kappa on the rated moments;
* ``--from-feedback DIR``: the Helpful / Not helpful ratings a person gave in ``proagent live``
  (``feedback.db``'s help ratings, :func:`proagent.live.rated_help`) read back as How labels: their
  count, the helpful share with its Wilson interval, and each judge's agreement with them (the
  rated answer against the context-free answer to the same question).

Answers and verdicts are kept in a :class:`proagent.cache.DiskCache` under ``--work`` (default
``~/.cache/proagent/help_quality``, 0700), so a stopped run resumes where it stopped; the summary
is rewritten after every moment (``--json``).

    python benchmarks/help_quality.py [--moments FILE] [--limit N] [--judge MODEL]... [--judge-prompt P] [--lever K=V]...
        [--model local/qwen2.5-coder-1.5b] [--work DIR] [--json docs/results/help_quality.json] [--smoke]
    python benchmarks/help_quality.py --rate [--work DIR]
    python benchmarks/help_quality.py --from-feedback ~/activity/live [--judge MODEL]...
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import re
import secrets
import statistics
import sys
import time
from collections import Counter
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEFAULT_DATA, guard_network, machine_note, parse_args, render_table, watchdog, write_result  # noqa: E402

MOMENTS = ROOT / "benchmarks" / "data" / "help_quality" / "moments.jsonl"
DATA = next(
    (p for p in (DEFAULT_DATA, ROOT.parents[1] / "shared" / "data" / "proactivebench") if p.is_dir()), DEFAULT_DATA
)
"""The ProactiveBench dev sessions: ``shared/`` beside the checkout, or beside its parent (a worktree)."""
DEFAULT_MODEL = "local/qwen2.5-coder-1.5b"
DEFAULT_JUDGES = ("local/qwen2.5-coder-1.5b", "local/smollm2-135m")
"""Two instruction-tuned model families that run offline here: Qwen2.5-Coder-1.5B-Instruct (Alibaba's Qwen)
and SmolLM2-135M-Instruct (Hugging Face's SmolLM, Llama architecture). The catalogue's third,
``local/gemma3-270m``, is Gemma 3 270M *pretrained* (not instruction-tuned): it never put A or B among its
likeliest first tokens (it continues the chat markup), so it cannot judge; no other instruction-tuned model
is on disk or in the catalogue. Give another with ``--judge`` (an OpenAI-compatible endpoint included)."""
JUDGE_MODEL_ARGS = {"local/smollm2-135m": {"n_ctx": 4096}}
"""SmolLM2's catalogue context (2,048 tokens) is too short for a judge prompt with two answers."""
JUDGE_SCREEN_CHARS = 2500
"""Screen text shown to a judge (characters): fixed, so levers that change the helper's view do not
change the judge's."""
JUDGE_ANSWER_CHARS = 1600
"""Each answer as a judge sees it, characters (about live's 400-token budget)."""
SOURCES = ("proactivebench", "desktop_day", "written", "feedback")
KINDS = ("error", "fix", "file", "fact", "no_invented", "other")

# --------------------------------------------------------------------------- the set


class MomentError(ValueError):
    """A moment record that cannot be used (the message names its line and field)."""


def _patterns(check: dict[str, Any] | None, where: str) -> dict[str, list[re.Pattern[str]]]:
    out: dict[str, list[re.Pattern[str]]] = {}
    for key, pats in (check or {}).items():
        if key not in ("any", "all", "none") or not isinstance(pats, list) or not pats:
            raise MomentError(f"{where}: check.{key} must be a non-empty list under any/all/none")
        try:
            out[key] = [re.compile(p, re.IGNORECASE | re.MULTILINE) for p in pats]
        except re.error as e:
            raise MomentError(f"{where}: bad pattern in check.{key}: {e}") from None
    return out


def load_moments(path: Path = MOMENTS) -> list[dict[str, Any]]:
    """The moments of ``path`` (JSON lines), checked: unique ids, a known source, 2-5 rubric items
    each with text and kind, patterns that compile. Compiled patterns are added as ``_checks``.

    Raises:
        MomentError: a bad record (line number and field in the message).
        OSError: the file cannot be read.
    """
    out, seen = [], set()
    for n, line in enumerate(Path(path).read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            m = json.loads(line)
        except json.JSONDecodeError as e:
            raise MomentError(f"{where}: not JSON ({e})") from None
        if not isinstance(m, dict) or not isinstance(m.get("id"), str) or m["id"] in seen:
            raise MomentError(f"{where}: a record needs a unique text id")
        seen.add(m["id"])
        if m.get("source") not in SOURCES:
            raise MomentError(f"{where}: source must be one of {', '.join(SOURCES)}")
        rubric = m.get("rubric")
        if not isinstance(rubric, list) or not 2 <= len(rubric) <= 5:
            raise MomentError(f"{where}: rubric must hold 2-5 items")
        checks = {}
        for it in rubric:
            if not isinstance(it, dict) or not it.get("id") or not it.get("text") or it.get("kind") not in KINDS:
                raise MomentError(f"{where}: each rubric item needs id, text and a kind of {', '.join(KINDS)}")
            if it.get("check"):
                checks[it["id"]] = _patterns(it["check"], f"{where} item {it['id']}")
        if not m.get("wrong_if"):
            raise MomentError(f"{where}: wrong_if (what makes an answer wrong) is missing")
        wrong = _patterns({"any": m["wrong_patterns"]} if m.get("wrong_patterns") else None, f"{where} wrong_patterns")
        if m["source"] == "proactivebench":
            ref = m.get("ref") or {}
            if not isinstance(ref.get("session"), str) or not isinstance(ref.get("index"), int):
                raise MomentError(f"{where}: a proactivebench moment needs ref.session and ref.index")
        elif not isinstance(m.get("screen"), str):
            raise MomentError(f"{where}: screen (the screen text) is missing")
        m["_checks"], m["_wrong"] = checks, wrong.get("any", [])
        out.append(m)
    return out


def check_answer(moment: dict[str, Any], text: str) -> dict[str, Any]:
    """The rubric's text checks on ``text``: ``{"items": {id: bool}, "passed", "checkable", "wrong"}``
    (``wrong``: one of the moment's ``wrong_patterns`` matches)."""
    items = {}
    for iid, pats in moment["_checks"].items():
        ok = all(p.search(text) for p in pats.get("all", []))
        ok = ok and (not pats.get("any") or any(p.search(text) for p in pats["any"]))
        ok = ok and not any(p.search(text) for p in pats.get("none", []))
        items[iid] = bool(ok)
    return {
        "items": items,
        "passed": sum(items.values()),
        "checkable": len(items),
        "wrong": any(p.search(text) for p in moment["_wrong"]),
    }


_QUOTED = re.compile(r"'([^']{3,})'")


def _pb_sample(moment: dict[str, Any], data: Path) -> tuple[Any, str]:
    from proagent.bench.samples import SampleConfig
    from proagent.errors import DataError
    from proagent.live import moment_sample
    from proagent.sources.proactivebench import read_proactivebench_session

    ref = moment["ref"]
    try:
        events = read_proactivebench_session(data / f"{ref['session']}.json")
    except DataError as e:
        raise MomentError(f"{moment['id']}: {e} (the dev sessions: --data)") from None
    i = ref["index"]
    if not 0 <= i < len(events):
        raise MomentError(f"{moment['id']}: {ref['session']} has no step {i}")
    q = _QUOTED.search(events[i].summary)
    if q is None:
        raise MomentError(f"{moment['id']}: step {i} quotes no query")
    sample = moment_sample(events[: i + 1], events[i].start, SampleConfig(), new_event=events[i])
    if sample is None:
        raise MomentError(f"{moment['id']}: no sample at step {i}")
    return sample, q.group(1)


def sample_of(moment: dict[str, Any], data: Path = DATA) -> tuple[Any, str | None]:
    """The moment as live's :class:`~proagent.records.Sample` and its question (``None``: live's
    generic question). A ProactiveBench moment is read from ``data`` (never copied into the
    repository: its README says so) with live's own :func:`proagent.live.moment_sample`; its
    question is the person's search query quoted in that step's sentence. Any other moment is
    built from its record: one event per earlier window (its screen text as one screenshot's OCR
    text), then the window in front, 20 s into it."""
    if moment["source"] == "proactivebench":
        return _pb_sample(moment, data)
    from proagent.records import Event, Sample, Screenshot

    t = datetime(2026, 12, 1, 10, 0)
    events = []
    for k, b in enumerate([*moment.get("before", []), {**moment, "seconds": 20}]):
        shot = Screenshot(
            id=k,
            time=t + timedelta(seconds=1),
            app_name=b.get("app", ""),
            window_title=b.get("window_title", ""),
            file_name=f"{moment['id']}_{k}.png",
            ocr_text=b.get("screen", ""),
        )
        secs = float(b.get("seconds", 30))
        events.append(
            Event(
                id=f"{moment['id']}:{k}",
                user="help-quality",
                start=t,
                end=t + timedelta(seconds=secs),
                app_name=b.get("app", ""),
                window_title=b.get("window_title", ""),
                summary=b.get("summary", ""),
                screenshots=(shot,),
                url=b.get("url"),
            )
        )
        t += timedelta(seconds=secs)
    cur = events[-1]
    cur = Event(**{**cur.__dict__, "end": None})  # still in front at the moment
    sample = Sample(
        id=moment["id"],
        user="help-quality",
        time=t,
        label=1,
        split="test",
        kind="candidate",
        context=tuple(events[:-1]),
        current=cur,
        window_seconds=300.0,
        event_id=cur.id,
    )
    return sample, moment.get("question")


def judge_view(moment: dict[str, Any], sample: Any) -> str:
    """What a judge sees of the screen: app, window, page, the earlier windows and the screen text
    of the window in front (its first :data:`JUDGE_SCREEN_CHARS` characters), or for a moment with
    no screen text the earlier events' descriptions."""
    from proagent.agent.prompting import render_event

    cur = sample.current
    shot = next((s.ocr_text for s in reversed(cur.screenshots) if s.ocr_text.strip()), "")
    lines = [f"App: {cur.app_name or '(unknown)'}", f"Window: {cur.window_title or '(unknown)'}"]
    if cur.url:
        lines.append(f"Web page: {cur.url}")
    ctx = list(sample.context)[-6:]
    if ctx:
        lines.append("Before (oldest first):")
        for e in ctx:
            seen = next((s.ocr_text for s in e.screenshots if s.ocr_text.strip()), "")
            lines.append(render_event(e) + (f"\n  screen: {' / '.join(seen.splitlines()[:12])[:400]}" if seen else ""))
    if cur.summary:
        lines.append(f"Now: {cur.summary}")
    lines.append("Screen text of the window in front:\n" + (shot[:JUDGE_SCREEN_CHARS] or "(none)"))
    return "\n".join(lines)


# --------------------------------------------------------------------------- models, cached


def _key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


class Answerer:
    """The help model (live's :class:`~proagent.live._help.LocalHelpModel` or inspect for another),
    its answers kept in ``cache`` by model, budget and messages."""

    def __init__(self, model: str, model_args: dict[str, Any], cache: Any, max_tokens: int | None = None) -> None:
        from proagent.live._help import HELP_MAX_TOKENS, InspectHelpModel, LocalHelpModel

        self.name, self.args, self.cache = model, model_args, cache
        self.key_args = {k: v for k, v in model_args.items() if k != "n_threads"}
        """The model arguments that name an answer (a thread count only changes how fast it comes)."""
        self.max_tokens = max_tokens or HELP_MAX_TOKENS
        self._models: dict[int, Any] = {}
        self._local, self._inspect = LocalHelpModel, InspectHelpModel

    def _model(self, max_tokens: int) -> Any:
        if max_tokens not in self._models:
            self._models[max_tokens] = (
                self._local(self.name, self.args, max_tokens=max_tokens)
                if self.name.startswith("local/")
                else self._inspect(self.name, self.args, max_tokens=max_tokens)
            )
        return self._models[max_tokens]

    def __call__(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> dict[str, Any]:
        budget = max_tokens or self.max_tokens
        key = _key("answer", self.name, self.key_args, budget, messages)
        hit = self.cache.get(key)
        if hit is not None:
            return {**json.loads(hit), "cached": True}
        t0, cpu0 = time.perf_counter(), time.process_time()
        out = self._model(budget).stream(messages, lambda _: None)
        rec = {
            "text": out.get("text") or "",
            "seconds": time.perf_counter() - t0,
            "completion_tokens": out.get("completion_tokens"),
            "prompt_tokens": out.get("prompt_tokens"),
        }
        del cpu0
        self.cache.set(key, json.dumps(rec).encode("utf-8"))
        return {**rec, "cached": False}


_LETTER = re.compile(r"\b([AB])\b")
TOP_LOGPROBS = 20
"""Alternatives read at a local judge's first token (llama.cpp's ``n_probs``, from the full softmax
before sampling). A label missing from them is given the smallest listed log-probability: an upper
bound on its own, so the judge's preference is if anything pulled toward 0.5 (``bounded`` in the record)."""
PROMPTS = {"checklist": "help_pairwise.txt", "rubric": "help_pairwise_rubric.txt"}
"""The judge's prompts (``proagent/live/prompts/``), compared on the same pairs: ``checklist`` asks
which answer helps more, with the rubric as a checklist; ``rubric`` (rubric-grounded) shows the same
text and asks which answer satisfies more of the rubric's items. The two share everything up to the
final instruction, so llama.cpp evaluates the second only from there (prefix reuse)."""
PROMPT_RULE = (
    "kept: the prompt under which more of the local judges' pairs have both orders' choices agree (summed over "
    "the judges); on a tie, the one whose position-debiased verdicts agree more often with the rubric's text "
    "checks; on a tie, checklist (the prompt in place). Written before either prompt was run on the set."
)
"""Which prompt's figures are the headline (:func:`keep_prompt`). Consistency across orders is a
property of the judge reading the answers, not of which answer wins, so the rule cannot favour a result."""


def _logsumexp(xs: list[float]) -> float:
    import math

    m = max(xs)
    return m + math.log(sum(math.exp(x - m) for x in xs))


def label_logprobs(top: list[tuple[str, float]]) -> dict[str, Any]:
    """The two labels' log-probabilities at the judge's first token, from ``top`` (token, log-probability)
    pairs: each label's variants (``"A"``, ``" A"``, ``"a"``) summed in probability. Returns
    ``{"lp": {"A": float, "B": float} | None, "p_first": P(A) / (P(A) + P(B)) | None, "bounded": [labels
    given the smallest listed log-probability because absent]}``; ``lp`` is ``None`` when neither label is
    listed."""
    import math

    found: dict[str, list[float]] = {"A": [], "B": []}
    seen: set[tuple[str, float]] = set()
    for tok, lp in top:
        if (tok, lp) in seen:
            continue
        seen.add((tok, lp))
        t = tok.strip().upper()
        if t in found:
            found[t].append(lp)
    if not top or not (found["A"] or found["B"]):
        return {"lp": None, "p_first": None, "bounded": []}
    floor = min(lp for _, lp in top)
    lp = {k: _logsumexp(v) if v else floor for k, v in found.items()}
    d = lp["A"] - lp["B"]
    p = 1.0 / (1.0 + math.exp(-d)) if d > -700 else 0.0
    return {"lp": lp, "p_first": p, "bounded": [k for k, v in found.items() if not v]}


class Judge:
    """One pairwise judge. ``local/...``: inspect's local provider (llama.cpp) with log-probabilities: the
    judge's next-token probabilities for the labels ``A`` and ``B`` (:func:`label_logprobs`) give
    ``p_first``, its probability that the first answer shown is better, and its choice (the likelier
    label: a forced choice, so a small model that would ramble still chooses); any other model: the first
    standalone A or B of its text (``p_first`` 1 or 0). Verdicts are kept in ``cache``. A remote judge's
    prompt is redacted (live's ``--send-screen`` default for a remote model) unless ``send_screen`` says
    otherwise."""

    def __init__(
        self,
        name: str,
        cache: Any,
        base_url: str | None = None,
        send_screen: str | None = None,
        model_args: dict[str, Any] | None = None,
    ) -> None:
        from proagent.live._privacy import default_send_screen

        self.name, self.cache, self.base_url = name, cache, base_url
        self.model_args = {**JUDGE_MODEL_ARGS.get(name, {}), **(model_args or {})}
        self.send_screen = send_screen or default_send_screen(name)
        self._model: Any = None
        self._loop = asyncio.new_event_loop()

    def _get(self) -> Any:
        if self._model is None:
            from inspect_ai.model import get_model

            self._model = get_model(self.name, base_url=self.base_url, **self.model_args)
        return self._model

    @staticmethod
    def _usable(rec: dict[str, Any]) -> dict[str, Any] | None:
        """A cached record, brought to this shape: one from before ``p_first`` was kept is read from its
        A-minus-B ``margin`` (P(A) / (P(A) + P(B)) is the logistic of it) when both labels were listed;
        ``None`` (judge again) when they were not."""
        if "p_first" in rec or rec.get("how") != "logprob":
            return rec
        m = rec.get("margin")
        if m is None or abs(m) > 1e6:
            return None
        import math

        return {**rec, "p_first": 1.0 / (1.0 + math.exp(-m)), "bounded": []}

    def choose(self, prompt: str) -> dict[str, Any]:
        """``{"choice": "A"|"B"|None, "p_first": float|None, "how": "logprob"|"text"|"none", "text", ...}``
        for ``prompt``."""
        from inspect_ai.model import ChatMessageUser, GenerateConfig

        from proagent.live._privacy import outgoing

        prompt = outgoing([prompt], self.send_screen).texts[0]
        key = _key("judge", self.name, prompt)
        hit = self.cache.get(key)
        if hit is not None:
            rec = self._usable(json.loads(hit))
            if rec is not None:
                return rec
        local = self.name.startswith("local/")
        cfg = GenerateConfig(
            temperature=0.0,
            max_tokens=1 if local else 4,
            seed=0,
            logprobs=local,
            top_logprobs=TOP_LOGPROBS if local else None,
        )
        out = self._loop.run_until_complete(self._get().generate([ChatMessageUser(content=prompt)], config=cfg))
        text = out.completion or ""
        rec: dict[str, Any] = {"choice": None, "p_first": None, "how": "none", "text": text[:80]}
        lp = out.choices[0].logprobs if out.choices and out.choices[0].logprobs else None
        if lp is not None and lp.content:
            first = lp.content[0]
            got = label_logprobs([(t.token, t.logprob) for t in [*(first.top_logprobs or []), first]])
            if got["lp"] is not None:
                rec.update(
                    choice="A" if got["p_first"] >= 0.5 else "B",
                    how="logprob",
                    p_first=got["p_first"],
                    lp=got["lp"],
                    bounded=got["bounded"],
                    margin=got["lp"]["A"] - got["lp"]["B"],
                )
        if rec["choice"] is None:
            m = _LETTER.search(text)
            if m:
                rec.update(choice=m.group(1), how="text", p_first=1.0 if m.group(1) == "A" else 0.0)
        self.cache.set(key, json.dumps(rec).encode("utf-8"))
        return rec


def rubric_text(moment: dict[str, Any]) -> str:
    return "\n".join(f"- {it['text']}" for it in moment["rubric"])


def pair_prompt(moment: dict[str, Any], view: str, question: str, a: str, b: str, prompt: str = "checklist") -> str:
    """The judge's prompt :data:`PROMPTS` ``[prompt]`` with answer ``a`` first."""
    from proagent.prompt_files import prompt_template

    return prompt_template("live", PROMPTS[prompt]).substitute(
        context=view,
        question=question,
        rubric=rubric_text(moment),
        wrong_if=moment["wrong_if"],
        answer_a=a[:JUDGE_ANSWER_CHARS] or "(empty)",
        answer_b=b[:JUDGE_ANSWER_CHARS] or "(empty)",
    )


def pair_record(xy: dict[str, Any], yx: dict[str, Any]) -> dict[str, Any]:
    """A judge's two orders of one pair (``xy``: ``x`` shown first) as verdicts:

    * ``verdict`` (strict, Zheng et al. 2023, MT-Bench's swap): ``"x"`` / ``"y"`` when both orders' choices
      pick the same answer, ``"inconsistent"`` when they differ, ``None`` when an order gave no choice;
    * ``p_x``: the judge's probability that ``x`` is better, averaged over the two orders,
      ``(p_first(xy) + 1 - p_first(yx)) / 2`` (balanced position calibration, Wang et al. 2023, "Large
      Language Models are not Fair Evaluators", arXiv 2305.17926): a constant preference for one position
      adds the same amount to A in both orders and cancels;
    * ``debiased``: ``"x"`` when ``p_x > 0.5``, ``"y"`` when below, ``None`` at 0.5 (to 1e-9) or without both
      probabilities.
    """
    first = {"A": "x", "B": "y"}.get(xy.get("choice") or "")
    second = {"A": "y", "B": "x"}.get(yx.get("choice") or "")
    verdict = None if first is None or second is None else first if first == second else "inconsistent"
    a, b = xy.get("p_first"), yx.get("p_first")
    p_x = None if a is None or b is None else (a + 1.0 - b) / 2.0
    debiased = None if p_x is None or abs(p_x - 0.5) < 1e-9 else "x" if p_x > 0.5 else "y"  # a tie to rounding
    return {"xy": xy, "yx": yx, "verdict": verdict, "p_x": p_x, "debiased": debiased}


def judge_pair(
    judge: Judge, moment: dict[str, Any], view: str, question: str, x: str, y: str, prompt: str = "checklist"
) -> dict[str, Any]:
    """``x`` against ``y`` in both orders under one prompt: :func:`pair_record`."""
    xy = judge.choose(pair_prompt(moment, view, question, x, y, prompt))
    yx = judge.choose(pair_prompt(moment, view, question, y, x, prompt))
    return pair_record(xy, yx)


def judge_pairs(
    judge: Judge, moment: dict[str, Any], view: str, question: str, x: str, y: str, prompts: list[str]
) -> dict[str, dict[str, Any]]:
    """:func:`judge_pair` under each of ``prompts``, ``{prompt: record}``; the calls go order by order
    (xy under every prompt, then yx) so that each prompt after the first reuses the evaluated prefix."""
    got: dict[tuple[str, str], dict[str, Any]] = {}
    for order, (a, b) in (("xy", (x, y)), ("yx", (y, x))):
        for p in prompts:
            got[p, order] = judge.choose(pair_prompt(moment, view, question, a, b, p))
    return {p: pair_record(got[p, "xy"], got[p, "yx"]) for p in prompts}


# --------------------------------------------------------------------------- statistics


def wilson(k: int, n: int) -> tuple[float, float] | None:
    """Wilson 95% interval of ``k`` of ``n`` (scipy's ``binomtest(...).proportion_ci``); ``None`` for n = 0."""
    if n == 0:
        return None
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


def win_stats(verdicts: list[str | None], win: str = "x", loss: str = "y") -> dict[str, Any]:
    """Wins, losses, inconsistent and unjudged pairs; win rate over consistent pairs with its Wilson interval."""
    c = Counter(verdicts)
    w, l_ = c[win], c[loss]
    ci = wilson(w, w + l_)
    return {
        "pairs": len(verdicts),
        "wins": w,
        "losses": l_,
        "inconsistent": c["inconsistent"],
        "unjudged": c[None],
        "consistent": w + l_,
        "win_rate": w / (w + l_) if w + l_ else None,
        "ci95": list(ci) if ci else None,
    }


def position_bias(records: list[dict[str, Any]]) -> dict[str, Any]:
    """A judge's position bias over every order it judged: ``p_first_mean``, the mean of its probability
    that the first answer shown is better (0.5: none; each pair is shown both ways, so an unbiased judge
    averages 0.5 whatever the answers), and ``first_share``, the share of its choices that took the first
    answer, with the exact binomial test's p-value against 0.5 (scipy)."""
    from scipy.stats import binomtest

    ch = [r["choice"] for r in records if r.get("choice")]
    ps = [r["p_first"] for r in records if r.get("p_first") is not None]
    a = sum(c == "A" for c in ch)
    return {
        "choices": len(ch),
        "p_first_mean": sum(ps) / len(ps) if ps else None,
        "first_share": a / len(ch) if ch else None,
        "p_value": float(binomtest(a, len(ch)).pvalue) if ch else None,
        "unparsed": len(records) - len(ch),
        "bounded": sum(bool(r.get("bounded")) for r in records),
    }


def kappa(a: list[Any], b: list[Any]) -> dict[str, Any]:
    """Cohen's kappa of two label lists over the items both labelled (``None`` left out);
    ``sklearn.metrics.cohen_kappa_score``. ``kappa`` is ``None`` with fewer than 2 shared items or
    one label only."""
    pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    if len(pairs) < 2 or len({*[p[0] for p in pairs], *[p[1] for p in pairs]}) < 2:
        return {"n": len(pairs), "kappa": None, "agreement": None}
    from sklearn.metrics import cohen_kappa_score

    xs, ys = zip(*pairs)
    k = cohen_kappa_score(xs, ys)
    return {
        "n": len(pairs),
        "kappa": None if k != k else float(k),
        "agreement": sum(x == y for x, y in pairs) / len(pairs),
    }


def panel_verdict(verdicts: list[str | None]) -> str | None:
    """Majority of the judges' consistent verdicts (``x``/``y``); ``None`` on a tie or none."""
    c = Counter(v for v in verdicts if v in ("x", "y"))
    if not c or c["x"] == c["y"]:
        return None
    return "x" if c["x"] > c["y"] else "y"


def rubric_verdict(cx: dict[str, Any], cy: dict[str, Any]) -> str | None:
    """The text checks as a judge: the answer passing more checkable items (a wrong pattern counts as
    one item failed) wins; ``None`` on a tie or when nothing is checkable."""
    if not cx["checkable"]:
        return None
    sx, sy = cx["passed"] - cx["wrong"], cy["passed"] - cy["wrong"]
    return None if sx == sy else "x" if sx > sy else "y"


# --------------------------------------------------------------------------- levers


def parse_lever(text: str) -> tuple[str, str]:
    key, _, value = text.partition("=")
    if key not in ("screen_chars", "max_tokens", "prompt") or not value:
        raise SystemExit(f"Error: --lever {text!r}: use screen_chars=N, max_tokens=N or prompt=FILE")
    if key != "prompt" and not value.isdigit():
        raise SystemExit(f"Error: --lever {text!r}: {key} takes a whole number")
    if key == "prompt" and not (ROOT / "src" / "proagent" / "live" / "prompts" / value).is_file():
        raise SystemExit(f"Error: --lever {text!r}: no such file in proagent/live/prompts/")
    return key, value


def help_messages_for(sample: Any, question: str | None, send_screen: str, lever: tuple[str, str] | None = None):
    """Live's help messages for the moment (``lever``: one change applied): ``(messages,
    context-free messages, max_tokens or None)``."""
    from proagent.live import _help
    from proagent.prompt_files import prompt_text

    key, value = lever or ("", "")
    orig = _help.screen_region
    try:
        if key == "screen_chars":
            _help.screen_region = partial(orig, chars=int(value))  # help_context reads it at call time
        ctx = _help.help_context(sample, question, send_screen)
    finally:
        _help.screen_region = orig
    msgs = _help.help_messages(ctx)
    if key == "prompt":
        msgs[0] = {"role": "system", "content": prompt_text("live", value).strip()}
    return msgs, _help.context_free_messages(ctx), (int(value) if key == "max_tokens" else None), ctx.question


# --------------------------------------------------------------------------- the run


def run_moment(
    m: dict[str, Any],
    answerer: Answerer,
    judges: list[Judge],
    levers: list[tuple[str, str]],
    data: Path,
    send: str,
    prompts: list[str] | None = None,
) -> dict[str, Any]:
    """One moment: both answers, their text checks, every judge in both orders under each of ``prompts``
    (default: every prompt of :data:`PROMPTS`; ``rec["judges"][judge][prompt]`` is a :func:`pair_record`),
    and each lever's variant against the default in-context answer."""
    prompts = prompts or list(PROMPTS)
    sample, question = sample_of(m, data)
    msgs, free_msgs, _, asked = help_messages_for(sample, question, send)
    ctx_a, free_a = answerer(msgs), answerer(free_msgs)
    view = judge_view(m, sample)
    rec: dict[str, Any] = {
        "id": m["id"],
        "source": m["source"],
        "kind": m.get("kind"),
        "lang": m.get("lang"),
        "question": asked,
        "context": {k: ctx_a[k] for k in ("text", "seconds", "completion_tokens")},
        "free": {k: free_a[k] for k in ("text", "seconds", "completion_tokens")},
        "checks": {"context": check_answer(m, ctx_a["text"]), "free": check_answer(m, free_a["text"])},
        "judges": {},
        "levers": {},
    }
    # an answer that used its whole budget was cut off, not ended (issue 42 item 5: answers that end on their own)
    rec["context"]["at_budget"] = (ctx_a["completion_tokens"] or 0) >= answerer.max_tokens
    rec["rubric_verdict"] = rubric_verdict(rec["checks"]["context"], rec["checks"]["free"])
    for j in judges:
        rec["judges"][j.name] = judge_pairs(j, m, view, asked, ctx_a["text"], free_a["text"], prompts)
    for lever in levers:
        vm, _, budget, _ = help_messages_for(sample, question, send, lever)
        va = answerer(vm, budget)
        lrec: dict[str, Any] = {
            "text": va["text"],
            "completion_tokens": va["completion_tokens"],
            "at_budget": (va["completion_tokens"] or 0) >= (budget or answerer.max_tokens),
            "checks": check_answer(m, va["text"]),
            "judges": {},
        }
        lrec["rubric_verdict"] = rubric_verdict(lrec["checks"], rec["checks"]["context"])
        for j in judges:
            lrec["judges"][j.name] = judge_pairs(j, m, view, asked, va["text"], ctx_a["text"], prompts)
        rec["levers"]["=".join(lever)] = lrec
    return rec


def _judged(records: list[dict[str, Any]], judge: str, prompt: str) -> list[dict[str, Any] | None]:
    return [r["judges"].get(judge, {}).get(prompt) for r in records]


def prompt_summary(records: list[dict[str, Any]], judges: list[str], prompt: str) -> dict[str, Any]:
    """Under one judge prompt: per judge the position-debiased and the strict win rate (:func:`pair_record`),
    mean ``p_x``, its spread (mean distance from 0.5: how decided the judge is once position is averaged out)
    and position bias; the panel's two win rates (PoLL majority of the judges' verdicts of each
    kind); Cohen's kappa of each two judges' verdicts (and with the rubric's text checks), both kinds;
    how often each judge's debiased verdict agrees with the rubric checks'."""
    out: dict[str, Any] = {"judges": {}, "kappa": {}, "kappa_strict": {}}
    rub = [r["rubric_verdict"] for r in records]
    for j in judges:
        prs = [p for p in _judged(records, j, prompt) if p is not None]
        pxs = [p["p_x"] for p in prs if p.get("p_x") is not None]
        deb = [p["debiased"] for p in prs]
        agree = [(d, v) for d, v in zip([p["debiased"] if p else None for p in _judged(records, j, prompt)], rub)]
        both = [(d, v) for d, v in agree if d in ("x", "y") and v in ("x", "y")]
        out["judges"][j] = {
            "debiased": win_stats(deb),
            "strict": win_stats([p["verdict"] for p in prs]),
            "p_x_mean": sum(pxs) / len(pxs) if pxs else None,
            "p_x_spread": sum(abs(x - 0.5) for x in pxs) / len(pxs) if pxs else None,
            "position_bias": position_bias([o for p in prs for o in (p["xy"], p["yx"])]),
            "rubric_agreement": sum(d == v for d, v in both) / len(both) if both else None,
            "rubric_agreement_n": len(both),
        }
    for kind, field in (("debiased", "debiased"), ("strict", "verdict")):
        per = {j: [(p or {}).get(field) for p in _judged(records, j, prompt)] for j in judges}
        out.setdefault("panel", {})[kind] = win_stats(
            [panel_verdict([per[j][i] for j in judges]) for i in range(len(records))]
        )
        per["rubric"] = rub
        names = [*judges, "rubric"]
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                out["kappa" if kind == "debiased" else "kappa_strict"][f"{a} ~ {b}"] = kappa(
                    [v if v in ("x", "y") else None for v in per[a]], [v if v in ("x", "y") else None for v in per[b]]
                )
    return out


def keep_prompt(by_prompt: dict[str, dict[str, Any]], judges: list[str]) -> str:
    """The prompt whose figures are the headline, by :data:`PROMPT_RULE` (local judges only)."""
    local = [j for j in judges if j.startswith("local/")] or judges

    def score(p: str) -> tuple[int, float, int]:
        js = by_prompt[p]["judges"]
        consistent = sum(js[j]["strict"]["consistent"] for j in local if j in js)
        agree = [js[j]["rubric_agreement"] for j in local if j in js and js[j]["rubric_agreement"] is not None]
        return consistent, (sum(agree) / len(agree) if agree else 0.0), p == "checklist"

    return max(by_prompt, key=score)


def summarise(
    records: list[dict[str, Any]], judges: list[str], levers: list[str], prompts: list[str] | None = None
) -> dict[str, Any]:
    """The figures of the finished moments: under each judge prompt (:func:`prompt_summary`) and, for the
    prompt kept by :data:`PROMPT_RULE`, at the top level (``judges``, ``panel``, ``kappa``); the rubric's
    text checks; each lever (its win rates under the kept prompt)."""
    prompts = prompts or list(PROMPTS)
    out: dict[str, Any] = {"n": len(records), "prompts": {}, "levers": {}}
    for p in prompts:
        out["prompts"][p] = prompt_summary(records, judges, p)
    kept = keep_prompt(out["prompts"], judges) if judges else prompts[0]
    out.update(kept_prompt=kept, prompt_rule=PROMPT_RULE)
    out.update({k: out["prompts"][kept][k] for k in ("judges", "panel", "kappa", "kappa_strict")})
    out["rubric"] = win_stats([r["rubric_verdict"] for r in records])
    cc = [r["checks"]["context"] for r in records if r["checks"]["context"]["checkable"]]
    fc = [r["checks"]["free"] for r in records if r["checks"]["free"]["checkable"]]
    out["checks"] = {
        "context_pass": sum(c["passed"] for c in cc) / max(sum(c["checkable"] for c in cc), 1),
        "free_pass": sum(c["passed"] for c in fc) / max(sum(c["checkable"] for c in fc), 1),
        "context_wrong": sum(c["wrong"] for c in cc),
        "free_wrong": sum(c["wrong"] for c in fc),
        "items": sum(c["checkable"] for c in cc),
    }
    answers = [r.get("context") or {} for r in records]  # live's in-context answers (older records: none)
    toks = [a["completion_tokens"] for a in answers if a.get("completion_tokens")]
    out["answers"] = {  # their length, and how many were cut off at the budget
        "tokens_p50": statistics.median(toks) if toks else None,
        "at_budget": sum(bool(a.get("at_budget")) for a in answers) / max(len(answers), 1),
    }
    for lv in levers:
        rs = [r["levers"][lv] for r in records if lv in r["levers"]]
        lo: dict[str, Any] = {"n": len(rs), "judges": {}}
        for j in judges:
            prs = [x["judges"][j][kept] for x in rs if j in x["judges"]]
            lo["judges"][j] = {
                "debiased": win_stats([p["debiased"] for p in prs]),
                "strict": win_stats([p["verdict"] for p in prs]),
            }
        lo["panel"] = {
            kind: win_stats([panel_verdict([x["judges"][j][kept][f] for j in judges]) for x in rs])
            for kind, f in (("debiased", "debiased"), ("strict", "verdict"))
        }
        lo["rubric"] = win_stats([x["rubric_verdict"] for x in rs])
        ch = [x["checks"] for x in rs if x["checks"]["checkable"]]
        lo["pass"] = sum(c["passed"] for c in ch) / max(sum(c["checkable"] for c in ch), 1)
        vt = [x["completion_tokens"] for x in rs if x.get("completion_tokens")]
        lo["tokens_p50"] = statistics.median(vt) if vt else None
        lo["at_budget"] = sum(bool(x.get("at_budget")) for x in rs) / max(len(rs), 1)
        out["levers"][lv] = lo
    return out


def _ci(w: dict[str, Any]) -> str:
    return "-" if not w["ci95"] else f"{w['ci95'][0]:.2f}-{w['ci95'][1]:.2f}"


def _row(
    name: str, prompt: str, deb: dict[str, Any], strict: dict[str, Any] | None, p_first: Any, spread: Any = None
) -> dict[str, Any]:
    strict = strict or {}
    return {
        "judge": name,
        "prompt": prompt,
        "pairs": deb["pairs"],
        "wins": deb["wins"],
        "losses": deb["losses"],
        "win_rate": deb["win_rate"],
        "ci": _ci(deb),
        "strict_wins": strict.get("wins"),
        "strict_losses": strict.get("losses"),
        "inconsistent": strict.get("inconsistent"),
        "strict_win_rate": strict.get("win_rate"),
        "strict_ci": _ci(strict) if strict else None,
        "p_first": p_first,
        "spread": spread,
    }


def _rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    kept = summary["kept_prompt"]
    rows = []
    for p in sorted(summary["prompts"], key=lambda q: q != kept):
        ps = summary["prompts"][p]
        label = p + (" (kept)" if p == kept and len(summary["prompts"]) > 1 else "")
        for name, s in ps["judges"].items():
            rows.append(
                _row(name, label, s["debiased"], s["strict"], s["position_bias"]["p_first_mean"], s["p_x_spread"])
            )
        rows.append(_row("panel (majority)", label, ps["panel"]["debiased"], ps["panel"]["strict"], None))
    rows.append(_row("rubric checks", "-", summary["rubric"], None, None))
    return rows


COLUMNS = [
    ("judge", "judge", "s"),
    ("prompt", "judge prompt", "s"),
    ("pairs", "moments", "d"),
    ("wins", "in context preferred", "d"),
    ("losses", "context-free preferred", "d"),
    ("win_rate", "win rate (orders averaged)", ".2f"),
    ("ci", "95% CI", "s"),
    ("strict_wins", "both orders: in context", "d"),
    ("strict_losses", "both orders: context-free", "d"),
    ("inconsistent", "orders disagree", "d"),
    ("strict_win_rate", "win rate (both orders agree)", ".2f"),
    ("strict_ci", "95% CI (both orders)", "s"),
    ("p_first", "mean P(first shown)", ".3f"),
    ("spread", "mean distance of P(in context) from 0.5", ".3f"),
]


def _lever_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for lv, s in summary["levers"].items():
        for name, w in [*s["judges"].items(), ("panel (majority)", s["panel"]), ("rubric checks", None)]:
            deb = w["debiased"] if w else s["rubric"]
            strict = w["strict"] if w else None
            rows.append(
                {
                    "lever": lv,
                    "judge": name,
                    "n": s["n"],
                    "wins": deb["wins"],
                    "losses": deb["losses"],
                    "win_rate": deb["win_rate"],
                    "ci": _ci(deb),
                    "strict_win_rate": (strict or {}).get("win_rate"),
                    "inconsistent": (strict or {}).get("inconsistent"),
                    "pass": s["pass"],
                    "default_pass": summary["checks"]["context_pass"],
                    "tokens_p50": s.get("tokens_p50"),
                    "default_tokens_p50": summary.get("answers", {}).get("tokens_p50"),
                    "at_budget": s.get("at_budget"),
                    "default_at_budget": summary.get("answers", {}).get("at_budget"),
                }
            )
    return rows


LEVER_COLUMNS = [
    ("lever", "variant", "s"),
    ("judge", "judge", "s"),
    ("n", "moments", "d"),
    ("wins", "variant preferred", "d"),
    ("losses", "default preferred", "d"),
    ("win_rate", "variant win rate (orders averaged)", ".2f"),
    ("ci", "95% CI", "s"),
    ("strict_win_rate", "variant win rate (both orders agree)", ".2f"),
    ("inconsistent", "orders disagree", "d"),
    ("pass", "variant checks passed", ".2f"),
    ("default_pass", "default checks passed", ".2f"),
    ("tokens_p50", "variant answer tokens p50", ".0f"),
    ("default_tokens_p50", "default answer tokens p50", ".0f"),
    ("at_budget", "variant cut at the budget", ".0%"),
    ("default_at_budget", "default cut at the budget", ".0%"),
]


def _fmt(v: Any) -> str:
    return "-" if v is None else f"{v:.2f}"


def write_summary(
    path: Path | None, args: argparse.Namespace, summary: dict[str, Any], records, machine, total: int
) -> None:
    from proagent.io import write_json_atomic
    from proagent.live._help import HELP_MAX_TOKENS

    if path is None:
        return
    panel = summary["panel"]
    done = summary["n"]
    cond = (
        f"{done} of the set's {getattr(args, 'set_size', total)} moments"
        + ("" if done == getattr(args, "set_size", total) else " (the first of a seeded random order: a random subset)")
        + f"; model {args.model}, answers of at most {args.max_tokens or HELP_MAX_TOKENS} tokens (live's budget unless --max-tokens)"
    )
    bias = ", ".join(
        f"{j} {_fmt(s['position_bias']['p_first_mean'])} (first chosen {_fmt(s['position_bias']['first_share'])})"
        for j, s in summary["judges"].items()
    )
    note = (
        f"Each judge sees every pair in both orders and gives its probability that the first answer shown is "
        f"better (its next-token probabilities of A and B). Win rate (orders averaged): the in-context help wins a "
        f"pair when that probability, averaged over the two orders, favours it (balanced position calibration, Wang "
        f"et al. 2023: a constant position preference cancels). Both orders agree: a win or a loss only when the "
        f"likelier letter picks the same answer in both orders (Zheng et al. 2023); the rest are 'orders disagree'. "
        f"Mean P(first shown) far from 0.50 is position bias (kept prompt: {bias}). The mean distance of the judge's "
        f"orders-averaged P(in context is better) from 0.5 says how decided it is once the order is averaged out (0: a "
        f"coin flip; a verdict from a distance of 0.01 is a lean, not a judgement). Judge prompts: {summary['prompt_rule']} "
        f"Rubric checks (text patterns written before any answer): "
        f"{summary['checks']['context_pass']:.2f} of {summary['checks']['items']} items passed in context, "
        f"{summary['checks']['free_pass']:.2f} context-free; wrong patterns hit {summary['checks']['context_wrong']} "
        f"and {summary['checks']['free_wrong']} times. Cohen's kappa of per-moment verdicts (orders averaged / both "
        f"orders agree): "
        + ", ".join(
            f"{n} {_fmt(v['kappa'])} / {_fmt(summary['kappa_strict'][n]['kappa'])}" for n, v in summary["kappa"].items()
        )
        + "."
    )
    tables = []
    if summary["levers"]:
        tables.append(
            {
                "title": f"Levers: each variant against live's default help, both orders ({summary['kept_prompt']} prompt)",
                "columns": LEVER_COLUMNS,
                "rows": _lever_rows(summary),
            }
        )
    rec = write_result(
        path,
        benchmark=Path(path).stem if Path(path).stem.startswith("help_quality") else "help_quality",
        rows=_rows(summary),
        columns=COLUMNS,
        machine=machine,
        baseline="the same model answering the same question without the moment's screen, events or app (context-free), same moments",
        note=note,
        conditions=cond,
        tables=tables or None,
        baseline_columns=["losses", "strict_losses"],
        figures={
            "summary": summary,
            "moments": [{k: v for k, v in r.items() if k not in ("context", "free")} for r in records],
        },
    )
    assert rec is not None
    rec.update(
        n=done,
        judges=list(summary["judges"]),
        judge_prompt=summary["kept_prompt"],
        win_rate=panel["debiased"]["win_rate"],
        ci95=panel["debiased"]["ci95"],
        win_rate_strict=panel["strict"]["win_rate"],
        ci95_strict=panel["strict"]["ci95"],
    )
    write_json_atomic(path, rec, indent=1, mode=0o644)


def work_dir(arg: Path | None) -> Path:
    from proagent.models.catalog import cache_dir

    d = arg or (cache_dir() / "help_quality")
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(d, 0o700)
    return d


def run(args: argparse.Namespace) -> int:
    from proagent.cache import DiskCache
    from proagent.live._privacy import default_send_screen

    note, machine = machine_note()
    print(note, flush=True)
    moments = load_moments(args.moments)
    if args.only:
        keep = set(args.only.split(","))
        moments = [m for m in moments if m["id"] in keep]
    random.Random(args.seed).shuffle(moments)
    args.set_size = len(moments)
    moments = moments[: args.limit] if args.limit else moments
    work = work_dir(args.work)
    cache = DiskCache(work / "cache")
    margs = dict(a.split("=", 1) for a in args.model_arg)
    answerer = Answerer(args.model, margs, cache, args.max_tokens)
    threads = {k: v for k, v in margs.items() if k == "n_threads"}  # a local judge runs on the helper's threads
    judges = [
        Judge(j, cache, base_url=args.judge_base_url)
        if not j.startswith("local/")
        else Judge(j, cache, model_args=threads)
        for j in args.judge
    ]
    levers = [parse_lever(x) for x in args.lever]
    prompts = list(PROMPTS) if args.judge_prompt == "both" else [args.judge_prompt]
    lever_names = ["=".join(x) for x in levers]
    send = args.send_screen or default_send_screen(args.model)
    print(
        f"{len(moments)} moments; model {args.model} (send-screen {send}); judges {', '.join(args.judge)}", flush=True
    )
    records = []
    t0 = time.perf_counter()
    for i, m in enumerate(moments, 1):
        try:
            rec = run_moment(m, answerer, judges, levers, args.data, send, prompts)
        except MomentError as e:
            print(f"  skipped {m['id']}: {e}", flush=True)
            continue
        records.append(rec)
        js = " ".join(
            f"{j.split('/')[-1]}[{p}]={pr['debiased']}/{pr['verdict']} p_x={_fmt(pr['p_x'])}"
            for j in args.judge
            for p, pr in rec["judges"][j].items()
        )
        lv = " ".join(
            f"{k}: rubric={v['rubric_verdict']}"
            + (
                f" {args.judge[0].split('/')[-1]}={v['judges'][args.judge[0]][prompts[0]]['debiased']}"
                if args.judge
                else ""
            )
            for k, v in rec["levers"].items()
        )
        print(
            f"[{i}/{len(moments)} {time.perf_counter() - t0:.0f}s] {m['id']}: checks ctx {rec['checks']['context']['passed']}/"
            f"{rec['checks']['context']['checkable']} free {rec['checks']['free']['passed']}/{rec['checks']['free']['checkable']}; "
            f"{js} {lv}",
            flush=True,
        )
        write_summary(
            args.json, args, summarise(records, args.judge, lever_names, prompts), records, machine, len(moments)
        )
    summary = summarise(records, args.judge, lever_names, prompts)
    write_summary(args.json, args, summary, records, machine, len(moments))
    print(render_table(_rows(summary), COLUMNS))
    if summary["levers"]:
        print(render_table(_lever_rows(summary), LEVER_COLUMNS))
    print("checks:", json.dumps(summary["checks"]))
    print(f"judge prompt kept: {summary['kept_prompt']} ({summary['prompt_rule']})")
    for n, v in summary["kappa"].items():
        print(f"kappa {n}: {v} (both orders agree: {summary['kappa_strict'][n]})")
    human = _human_agreement(work, records, args.judge, summary["kept_prompt"])
    if human:
        print("judge-human agreement:", json.dumps(human))
    return 0


# --------------------------------------------------------------------------- a person as judge


def _ratings(work: Path) -> list[dict[str, Any]]:
    p = work / "ratings.jsonl"
    if not p.exists():
        return []
    return [json.loads(x) for x in p.read_text("utf-8").splitlines() if x.strip()]


def _human_agreement(
    work: Path, records: list[dict[str, Any]], judges: list[str], prompt: str = "checklist"
) -> dict[str, Any]:
    """Cohen's kappa of the person's ``--rate`` choices with each judge's position-debiased verdict (under
    ``prompt``) and with the rubric checks, on the moments both rated."""
    rated = {r["id"]: r["verdict"] for r in _ratings(work) if r.get("verdict") in ("x", "y")}
    if not rated:
        return {}
    recs = [r for r in records if r["id"] in rated]
    human = [rated[r["id"]] for r in recs]
    out = {"rated": len(rated), "human_win_rate": win_stats(list(rated.values()))}
    for j in [*judges, "rubric"]:
        vs = [
            r["rubric_verdict"] if j == "rubric" else (r["judges"].get(j, {}).get(prompt) or {}).get("debiased")
            for r in recs
        ]
        out[j] = kappa(human, [v if v in ("x", "y") else None for v in vs])
    return out


def rate(args: argparse.Namespace) -> int:
    """Show each answered moment's two answers in a random order and store the person's choice."""
    from proagent.cache import DiskCache
    from proagent.io import write_atomic
    from proagent.live._privacy import default_send_screen

    work = work_dir(args.work)
    cache = DiskCache(work / "cache")
    answerer = Answerer(args.model, dict(a.split("=", 1) for a in args.model_arg), cache, args.max_tokens)
    send = args.send_screen or default_send_screen(args.model)
    done = {r["id"] for r in _ratings(work)}
    lines = [json.dumps(r, ensure_ascii=False) for r in _ratings(work)]
    rng = secrets.SystemRandom()
    for m in load_moments(args.moments):
        if m["id"] in done:
            continue
        try:
            sample, question = sample_of(m, args.data)
        except MomentError:
            continue
        msgs, free_msgs, _, asked = help_messages_for(sample, question, send)
        key_c, key_f = (
            _key("answer", args.model, answerer.key_args, answerer.max_tokens, msgs),
            _key("answer", args.model, answerer.key_args, answerer.max_tokens, free_msgs),
        )
        hc, hf = cache.get(key_c), cache.get(key_f)
        if hc is None or hf is None:
            continue  # only moments the benchmark has answered
        c, f = json.loads(hc)["text"], json.loads(hf)["text"]
        swap = rng.random() < 0.5
        first, second = (f, c) if swap else (c, f)
        print("\n" + "=" * 78 + f"\n{m['id']}\n" + judge_view(m, sample) + f"\n\nQuestion: {asked}\n")
        print("--- Answer 1 ---\n" + first + "\n--- Answer 2 ---\n" + second + "\n")
        try:
            ans = input("Which helps more? 1 / 2 / s(kip) / q(uit): ").strip().lower()
        except EOFError:
            break
        if ans == "q":
            break
        if ans not in ("1", "2"):
            continue
        picked_first = ans == "1"
        verdict = ("x" if picked_first else "y") if not swap else ("y" if picked_first else "x")
        lines.append(json.dumps({"id": m["id"], "verdict": verdict, "rated_at": datetime.now().isoformat()}))
        write_atomic(work / "ratings.jsonl", "\n".join(lines) + "\n")  # 0600 in the 0700 work folder
    print(f"{len(lines)} ratings in {work / 'ratings.jsonl'} (x = the in-context help was chosen)")
    return 0


def feedback_moments(folder: Path) -> list[dict[str, Any]]:
    """The Helpful / Not helpful ratings a person gave in ``proagent live`` (``feedback.db``,
    :func:`proagent.live.rated_help`) as How labels in the set's record shape (``source:
    feedback``): the moment's screen as live's help saw it, the question asked, the ``answer`` rated
    and its ``rating`` (+1 helpful, -1 not). No rubric was written for them: their label is the rating.

    Raises:
        proagent.errors.DataError: no readable ``feedback.db`` in ``folder``.
    """
    from proagent.live import rated_help

    out = []
    for x in rated_help(folder):
        s = x["sample"]
        shot = next((t.ocr_text for t in reversed(s.current.screenshots) if t.ocr_text.strip()), "")
        out.append(
            {
                "id": f"feedback-{x['offer_id']}",
                "source": "feedback",
                "ref": {"offer_id": x["offer_id"], "rated_at": x["rated_at"].isoformat()},
                "app": s.current.app_name,
                "window_title": s.current.window_title,
                "url": s.current.url,
                "screen": shot,
                "question": x["question"] or x["query"],
                "question_kind": "real" if x["question"] and x["question"] != x["query"] else "predicted",
                "answer": x["answer"],
                "rating": x["rating"],
                "_sample": s,
            }
        )
    return out


def from_feedback(args: argparse.Namespace) -> int:
    """The person's live ratings as How labels (kept 0600 in ``--work``'s ``feedback_labels.jsonl``),
    and each judge's agreement with them: the rated answer against the same model's context-free
    answer to the same question, both orders; a judge "agrees" when it prefers a helpful answer or
    does not prefer an unhelpful one."""
    from proagent.cache import DiskCache
    from proagent.io import write_atomic
    from proagent.live._help import context_free_messages, help_context

    labels = feedback_moments(args.from_feedback)
    helpful = [x for x in labels if x["rating"] > 0]
    ci = wilson(len(helpful), len(labels))
    print(f"{len(labels)} rated answers, {len(helpful)} helpful" + (f" (95% CI {ci[0]:.2f}-{ci[1]:.2f})" if ci else ""))
    work = work_dir(args.work)
    keep = [json.dumps({k: v for k, v in x.items() if not k.startswith("_")}, ensure_ascii=False) for x in labels]
    write_atomic(work / "feedback_labels.jsonl", "\n".join(keep) + ("\n" if keep else ""))
    out: dict[str, Any] = {
        "rated": len(labels),
        "helpful": len(helpful),
        "ci95": list(ci) if ci else None,
        "judges": {},
    }
    if labels and args.judge:
        cache = DiskCache(work / "cache")
        answerer = Answerer(args.model, dict(a.split("=", 1) for a in args.model_arg), cache, args.max_tokens)
        rubric = {
            "rubric": [{"text": "answers the question, specific to the screen"}, {"text": "invents nothing"}],
            "wrong_if": "it is wrong for this screen",
        }
        for name in args.judge:
            j = Judge(name, cache, base_url=args.judge_base_url if not name.startswith("local/") else None)
            human, judged = [], []
            for x in labels:
                ctx = help_context(x["_sample"], x["question"], "raw")
                free = answerer(context_free_messages(ctx))["text"]
                view = judge_view({"id": x["id"]}, x["_sample"])
                v = judge_pair(j, rubric, view, x["question"] or ctx.question, x["answer"], free)["debiased"]
                human.append("helpful" if x["rating"] > 0 else "not")
                judged.append({"x": "helpful", "y": "not"}.get(v or ""))
            out["judges"][name] = kappa(human, judged)
            print(f"{name}: {out['judges'][name]}")
    rows = [{"judge": n, **k} for n, k in out["judges"].items()]
    write_result(
        args.json,
        benchmark="help_quality_feedback",
        rows=rows,
        columns=[
            ("judge", "judge", "s"),
            ("n", "rated answers", "d"),
            ("kappa", "kappa with you", ".2f"),
            ("agreement", "agreement", ".2f"),
        ],
        machine=machine_note()[1],
        baseline="the person's own Helpful / Not helpful ratings in proagent live",
        baseline_columns=["n"],
        note=f"{len(labels)} rated answers, {len(helpful)} helpful",
        figures={k: v for k, v in out.items() if k != "judges"},
    )
    return 0


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--moments", type=Path, default=MOMENTS)
    ap.add_argument("--data", type=Path, default=DATA, help="the ProactiveBench dev sessions' folder")
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--model-arg", action="append", default=[], help="KEY=VALUE for a local model (e.g. n_threads=2)")
    ap.add_argument("--max-tokens", type=int, default=None, help="answer budget, tokens (default: live's)")
    ap.add_argument("--send-screen", choices=("never", "redacted", "raw"), default=None)
    ap.add_argument(
        "--judge",
        action="append",
        default=None,
        help=f"a judge model (repeatable; default {', '.join(DEFAULT_JUDGES)}; none: the text checks only)",
    )
    ap.add_argument(
        "--judge-base-url", default=None, help="base URL of an OpenAI-compatible judge (--judge openai-api/NAME/MODEL)"
    )
    ap.add_argument(
        "--judge-prompt",
        choices=(*PROMPTS, "both"),
        default="both",
        help="the judge's prompt: checklist (which helps more), rubric (which meets more rubric items) or both",
    )
    ap.add_argument(
        "--lever", action="append", default=[], help="screen_chars=N, max_tokens=N or prompt=FILE (repeatable)"
    )
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--only", default=None, help="comma-separated moment ids")
    ap.add_argument("--seed", type=int, default=0, help="the order of the moments")
    ap.add_argument(
        "--work", type=Path, default=None, help="answer cache and ratings (default ~/.cache/proagent/help_quality)"
    )
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--timeout", type=float, default=6 * 3600.0)
    ap.add_argument("--rate", action="store_true", help="rate answered pairs yourself (order hidden)")
    ap.add_argument("--from-feedback", type=Path, default=None, help="a live folder: its help ratings as How labels")
    ap.add_argument("--smoke", action="store_true", help="SmolLM2 answers and judges one moment, answers of 16 tokens")
    args = parse_args(
        ap,
        argv,
        smoke={"model": "local/smollm2-135m", "max_tokens": 16, "limit": 1},
        positive=("max_tokens", "limit", "timeout"),
        non_negative=("seed",),
        existing=("moments", "from_feedback"),
    )
    if args.data != DATA and not args.data.exists():  # the default is needed only by ProactiveBench moments
        ap.error(f"--data: {args.data} does not exist")
    if args.smoke:
        args.judge = args.judge or ["local/smollm2-135m"]
        args.only = args.only or "sheet-q1-total"
    args.judge = [] if args.judge == ["none"] else args.judge or list(DEFAULT_JUDGES)
    for j in args.judge:
        if not j.startswith("local/") and "/" not in j:
            raise SystemExit(f"Error: --judge {j!r}: name a model as PROVIDER/MODEL (local/..., openai-api/...)")
    guard_network() if not args.judge_base_url else None
    watchdog(args.timeout)
    try:
        if args.rate:
            return rate(args)
        if args.from_feedback:
            return from_feedback(args)
        return run(args)
    except MomentError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
