"""Generate new ProactiveEval environments from seed examples (ProactiveEval section 3).

Pipeline, every step's artefact kept in the output folder, and every step
skipped when its artefact already exists (so an interrupted run resumes):

1. **Topic tree** (``topics.txt``): per domain, ``branching`` sub-topics per node
   down to ``depth`` levels, seed topics as examples. The run then **stops** so a
   person can review and edit ``topics.txt``; re-run with ``approve_topics``
   (``--approve-topics``), which writes ``topics.approved``.
2. **Environment** per leaf topic (user information + trigger factor) from the
   topic and two seed examples of the domain.
3. **Target ensemble**: ``n_candidates`` (paper: 5) plans at high temperature,
   then one critique-and-merge call gives the reference target and sub-targets.
4. **Difficulty**: 3 reasoners each predict the target; the judge scores each
   prediction against the reference (>= :data:`CORRECT_SCORE` = found). A majority
   that found it = easy.
5. **Refinement**: while easy, rewrite the environment (obfuscation: the need
   made implicit; noise: irrelevant details added) and test again, up to
   ``max_rounds`` (paper: 5) rounds.
6. **Final check**: ``n_checkers`` judges (paper: 5) each pick the best target
   among the reference and the reasoners' predictions (shuffled); a majority must
   pick the reference.
7. **Tiers**: ``fair`` (exactly one reasoner found the target), ``hard`` (none did);
   still easy after the last round, or failing the final check: dropped (kept in
   the artefacts with the reason).

Output: ``items/<key>.json`` (the full history of one topic: every model answer,
every round), ``dataset/{domain}/{fair,hard}.json`` (readable by
:func:`proagent.dialogue.io.read_environments`), ``yield.json`` (per round).
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from inspect_ai.model import Model

from ..errors import DataError, RunError
from ..io import write_atomic
from ..jsontext import first_json_object
from .io import environment_from_item, write_layout
from .judges import ask, judge_plan
from .parsing import parse_plan
from .prompting import render, render_sub_targets
from .records import Environment, GenerationYield, Plan, RoundYield

__all__ = ["CORRECT_SCORE", "GenConfig", "GenModels", "TopicReviewPending", "generate", "read_topics", "topic_tree"]

CORRECT_SCORE = 7.0
"""A reasoner's prediction scoring at least this against the reference counts as finding the target."""


class TopicReviewPending(RunError):
    """The topic tree was written and awaits a person's review (re-run with approve_topics);
    ``proagent dialogue generate`` reports it as an outcome (exit 0), not as a failure."""


@dataclass
class GenConfig:
    """Settings of one generation run (the operational ones stay out of the artefacts' keys)."""

    depth: int = 2
    """Levels of the topic tree below each domain."""
    branching: int = 3
    """Sub-topics per node."""
    n_candidates: int = 5
    """Target candidates per environment (paper: 5)."""
    candidate_temperature: float = 1.0
    """Sampling temperature of the candidates."""
    max_rounds: int = 5
    """Refinement rounds at most (paper: 5)."""
    n_checkers: int = 5
    """Judges of the final check (paper: 5)."""
    max_topics: int | None = None
    """Leaf topics to turn into environments, per domain (None: all)."""
    domains: Sequence[str] | None = None
    """Domains to generate for (default: those of the seeds)."""
    approve_topics: bool = False
    """The topic tree has been reviewed: go on past step 1."""
    seed: int = 0
    """Seed of sampling and shuffling."""


@dataclass
class GenModels:
    """Models of the pipeline (any inspect model)."""

    generator: Model
    """Writes topics, environments, target candidates, merges and rewrites."""
    judge: Model
    """Scores reasoners' predictions against the reference."""
    reasoners: list[Model] = field(default_factory=list)
    """Three reasoners predict the target (default: the generator, sampled with three seeds)."""
    checkers: list[Model] = field(default_factory=list)
    """Judges of the final check (default: the judge, sampled with ``n_checkers`` seeds)."""


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "x"


def _env_fields(text: str) -> dict[str, str] | None:
    obj = first_json_object(text)
    if not obj:
        return None
    ui, tf = obj.get("user_information"), obj.get("trigger_factor")
    if isinstance(ui, str) and ui.strip() and isinstance(tf, str) and tf.strip():
        return {"user_information": ui.strip(), "trigger_factor": tf.strip()}
    return None


# --------------------------------------------------------------------------- topics


def _topic_lines(text: str, n: int) -> list[str]:
    out = []
    for line in (text or "").splitlines():
        t = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip().strip("\"'`.").strip()
        if t and len(t) <= 60 and not t.endswith(":"):
            s = _slug(t)
            if s not in out:
                out.append(s)
    return out[:n]


async def topic_tree(
    model: Model, seeds: Sequence[Environment], domains: Sequence[str], depth: int, branching: int
) -> list[str]:
    """Leaf topics as ``domain: a/b`` lines."""
    lines = []
    for d in domains:
        examples = ", ".join(sorted({e.topic for e in seeds if e.domain == d and e.topic})) or d
        level = [""]
        for _ in range(depth):
            nxt = []
            for parent in level:
                text, _ = await ask(
                    model,
                    render(
                        "gen_topics",
                        domain=d,
                        examples=examples,
                        branching=branching,
                        parent=parent.replace("/", " / ") or d,
                    ),
                    max_tokens=80,
                )
                nxt += [f"{parent}/{t}" if parent else t for t in _topic_lines(text, branching)]
            level = nxt
        lines += [f"{d}: {t}" for t in level]
    return lines


def read_topics(path: Path) -> list[tuple[str, str]]:
    """(domain, topic) pairs of ``topics.txt`` (blank lines and lines starting with
    ``#`` ignored; a ``#`` inside a topic, as in ``C# books``, is kept).

    Raises:
        proagent.errors.DataError: the file is not UTF-8 text, or a line is not ``domain: topic``
            (names the line).
    """
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(path, f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        d, _, t = (x.strip() for x in line.partition(":"))
        if not (d and t):
            raise DataError(path, f"line {n}: expected 'domain: topic/sub-topic', got {line!r}")
        out.append((d, t))
    return out


# --------------------------------------------------------------------------- one topic


class _Item:
    """The artefact of one topic, saved after every step."""

    def __init__(self, path: Path, domain: str, topic: str) -> None:
        self.path = path
        self.data: dict[str, Any] = (
            json.loads(path.read_text("utf-8")) if path.is_file() else {"domain": domain, "topic": topic, "rounds": []}
        )

    def save(self) -> None:
        write_atomic(self.path, json.dumps(self.data, ensure_ascii=False, indent=2) + "\n")


def _as_env(data: dict, env: dict, ident: str) -> Environment:
    t = data["target"]
    return environment_from_item(
        {
            "id": ident,
            "domain": data["domain"],
            "topic": data["topic"],
            "environment": env,
            "target": t["target"],
            "sub_target": t["sub_target"],
        },
        where=f"generated {ident}",
    )


async def _difficulty(models: GenModels, env: Environment, seed: int) -> dict[str, Any]:
    answers, scores = [], []
    for i, r in enumerate(models.reasoners):
        text, _ = await ask(
            r,
            render("plan_user", user_information=env.user_information, trigger_factor=env.trigger_factor),
            system=render("plan_system"),
            temperature=0.7 if len(set(map(id, models.reasoners))) == 1 else 0.0,
            seed=seed + i,
        )
        plan = parse_plan(text)
        answers.append({"raw": text, "target": plan.target, "sub_target": list(plan.sub_target)})
        if plan.parsed:
            j = await judge_plan(models.judge, env, plan)
            scores.append({"score": j.score, "reasoning": j.reasoning})
        else:
            scores.append({"score": None, "reasoning": "unparsed prediction"})
    correct = sum(1 for s in scores if s["score"] is not None and s["score"] >= CORRECT_SCORE)
    verdict = "easy" if correct * 2 > len(models.reasoners) else ("fair" if correct >= 1 else "hard")
    return {"answers": answers, "scores": scores, "correct": correct, "verdict": verdict}


async def _final_check(models: GenModels, env: Environment, rivals: list[str], seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    options = [env.target] + [r for r in rivals if r and r.strip() and r.strip() != env.target]
    votes = []
    for i, c in enumerate(models.checkers):
        order = options[:]
        rng.shuffle(order)
        letters = "ABCDEFGH"[: len(order)]
        text, _ = await ask(
            c,
            render(
                "gen_final_check",
                user_information=env.user_information,
                trigger_factor=env.trigger_factor,
                options="\n".join(f"{letters[k]}. {o}" for k, o in enumerate(order)),
            ),
            temperature=0.7 if len(set(map(id, models.checkers))) == 1 else 0.0,
            seed=seed + i,
            max_tokens=120,
        )
        picks = re.findall(r"best\W{0,4}([A-H])\b", text, re.IGNORECASE)
        pick = picks[-1].upper() if picks else None
        chose_ref = pick is not None and letters.find(pick) >= 0 and order[letters.find(pick)] == env.target
        votes.append({"raw": text, "pick": pick, "options": order, "chose_reference": chose_ref})
    yes = sum(v["chose_reference"] for v in votes)
    return {"votes": votes, "reference_votes": yes, "passed": yes * 2 > len(votes)}


async def _run_topic(item: _Item, models: GenModels, seeds: list[Environment], cfg: GenConfig, ident: str) -> None:
    """One topic's steps, each saved as it finishes (a rerun skips what is saved): its environment,
    target candidates, the merged target, obfuscation rounds until it is no longer easy, and
    the final check; ``status`` says how it ended."""
    d = item.data
    if d.get("status"):
        return
    if not await _write_environment(item, models, seeds, cfg):
        return
    await _plan_candidates(item, models, cfg)
    if not await _merge_target(item, models):
        return
    env_fields = await _harden(item, models, cfg, ident)
    verdict = d["rounds"][-1]["difficulty"]["verdict"]
    if verdict == "easy":
        d["status"] = "dropped: still easy after the last round"
        item.save()
        return
    if "final_check" not in d:
        env = _as_env(d, env_fields, ident)
        rivals = [a["target"] for a in d["rounds"][-1]["difficulty"]["answers"] if a["target"]]
        d["final_check"] = await _final_check(models, env, rivals, cfg.seed)
        item.save()
    d["tier"] = verdict
    d["status"] = (
        "kept" if d["final_check"]["passed"] else "dropped: final check (the reference was not the judges' best)"
    )
    item.save()


def _fail(item: _Item, status: str) -> bool:
    """End the topic with ``status`` (saved); ``False``, for the step to return."""
    item.data["status"] = status
    item.save()
    return False


async def _write_environment(item: _Item, models: GenModels, seeds: list[Environment], cfg: GenConfig) -> bool:
    """The topic's environment from the generator (two seed environments of its domain as
    examples); ``False`` when the answer is unreadable (the topic failed)."""
    d = item.data
    if "environment" in d:
        return True
    ex = [e for e in seeds if e.domain == d["domain"]][:2] or seeds[:2]
    examples = "\n".join(
        json.dumps(
            {"topic": e.topic, "user_information": e.user_information, "trigger_factor": e.trigger_factor},
            ensure_ascii=False,
        )
        for e in ex
    )
    raw, _ = await ask(
        models.generator,
        render("gen_environment", domain=d["domain"], topic=d["topic"], examples=examples),
        seed=cfg.seed,
    )
    d["environment_raw"] = raw
    env = _env_fields(raw)
    if env is None:
        return _fail(item, "failed: unreadable environment")
    d["environment"] = env
    item.save()
    return True


async def _plan_candidates(item: _Item, models: GenModels, cfg: GenConfig) -> None:
    """``n_candidates`` target plans of the environment, sampled at ``candidate_temperature``."""
    d = item.data
    if "candidates" not in d:
        d["candidates"] = []
        item.save()
    while len(d["candidates"]) < cfg.n_candidates:
        k = len(d["candidates"])
        raw, _ = await ask(
            models.generator,
            render("plan_user", **d["environment"]),
            system=render("plan_system"),
            temperature=cfg.candidate_temperature,
            seed=cfg.seed + k,
        )
        p = parse_plan(raw)
        d["candidates"].append({"raw": raw, "target": p.target, "sub_target": list(p.sub_target)})
        item.save()


async def _merge_target(item: _Item, models: GenModels) -> bool:
    """One target with sub-targets merged from the readable candidates (else the first complete
    candidate); ``False`` when there is none (the topic failed)."""
    d = item.data
    if "target" in d:
        return True
    good = [c for c in d["candidates"] if c["target"]]
    if not good:
        return _fail(item, "failed: no readable target candidate")
    listing = "\n".join(
        f"{i}. {c['target']} (steps: {render_sub_targets(c['sub_target']) or 'none'})" for i, c in enumerate(good, 1)
    )
    raw, _ = await ask(
        models.generator, render("gen_target_merge", **d["environment"], candidates=listing), max_tokens=400
    )
    merged = parse_plan(raw)
    if not merged.parsed or not merged.sub_target:  # fall back to the first complete candidate
        first = next((c for c in good if c["sub_target"]), None)
        merged = Plan(first["target"], tuple(first["sub_target"]), "fallback") if first else merged
    d["merge_raw"] = raw
    if not merged.parsed or not merged.sub_target:
        return _fail(item, "failed: no target with sub-targets")
    d["target"] = {"target": merged.target, "sub_target": list(merged.sub_target), "method": merged.parse_method}
    item.save()
    return True


async def _harden(item: _Item, models: GenModels, cfg: GenConfig, ident: str) -> dict[str, str]:
    """Difficulty rounds: round 0 judges the environment as written; while the reasoners find it
    easy (up to ``max_rounds`` more), obfuscate it and add noise, and judge again. Returns the
    last round's environment fields."""
    d = item.data
    env_fields = d["rounds"][-1]["environment"] if d["rounds"] else d["environment"]
    while True:
        rnd = len(d["rounds"])
        last = d["rounds"][-1] if d["rounds"] else None
        if last and "difficulty" in last and last["difficulty"]["verdict"] != "easy":
            break
        if last and "difficulty" in last and rnd > cfg.max_rounds:
            break
        if last is None or "difficulty" in last:  # start a round (round 0 = the environment as written)
            if last is not None:
                obf, _ = await ask(
                    models.generator,
                    render("gen_obfuscate", target=d["target"]["target"], **env_fields),
                    seed=cfg.seed + rnd,
                )
                env1 = _env_fields(obf) or env_fields
                noisy, _ = await ask(models.generator, render("gen_noise", **env1), seed=cfg.seed + rnd)
                env_fields = _env_fields(noisy) or env1
                d["rounds"].append({"round": rnd, "obfuscate_raw": obf, "noise_raw": noisy, "environment": env_fields})
            else:
                d["rounds"].append({"round": 0, "environment": env_fields})
            item.save()
        env = _as_env(d, env_fields, ident)
        d["rounds"][-1]["difficulty"] = await _difficulty(models, env, cfg.seed + 100 * len(d["rounds"]))
        item.save()
    return env_fields


def _yield_table(items: list[dict[str, Any]], max_rounds: int) -> GenerationYield:
    per_round = []
    for r in range(max_rounds + 1):
        tested = [i for i in items if len(i.get("rounds", [])) > r and "difficulty" in i["rounds"][r]]
        v = [i["rounds"][r]["difficulty"]["verdict"] for i in tested]
        per_round.append(RoundYield(r, len(tested), v.count("easy"), v.count("fair"), v.count("hard")))
    status: dict[str, int] = {}
    for i in items:
        s = i.get("status", "unfinished")
        status[s] = status.get(s, 0) + 1
    kept = [i for i in items if i.get("status") == "kept"]
    return GenerationYield(
        len(items),
        tuple(per_round),
        status,
        kept_fair=sum(i["tier"] == "fair" for i in kept),
        kept_hard=sum(i["tier"] == "hard" for i in kept),
    )


async def generate(out: Path, seeds: list[Environment], models: GenModels, cfg: GenConfig) -> GenerationYield:
    """Run (or resume) the pipeline into ``out``; returns the yield summary.

    Raises:
        TopicReviewPending: ``topics.txt`` was written (or exists) and is not yet approved.
        proagent.errors.DataError: ``topics.txt`` is not UTF-8, has a malformed line, an unknown domain or no
            topic to generate from.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if not models.reasoners:
        models.reasoners = [models.generator] * 3
    if not models.checkers:
        models.checkers = [models.judge] * cfg.n_checkers
    domains = list(cfg.domains or dict.fromkeys(e.domain for e in seeds))
    topics_file = out / "topics.txt"
    if not topics_file.is_file():
        lines = await topic_tree(models.generator, seeds, domains, cfg.depth, cfg.branching)
        header = (
            "# Topic tree: one 'domain: topic/sub-topic' per line. Edit freely (delete, add, rename),\n"
            "# then re-run the same command with --approve-topics.\n"
        )
        write_atomic(topics_file, header + "\n".join(lines) + "\n")
    if not (out / "topics.approved").is_file():
        if not cfg.approve_topics:
            raise TopicReviewPending(f"review {topics_file}, then re-run with --approve-topics")
        write_atomic(out / "topics.approved", "approved\n")
    listed = read_topics(topics_file)
    unknown = sorted({d for d, _ in listed} - set(domains)) if cfg.domains is None else []
    if unknown:
        raise DataError(
            topics_file,
            f"domain(s) {', '.join(map(repr, unknown))} are neither seed domains "
            f"({', '.join(domains)}) nor given with --domains; fix the spelling or pass --domains",
        )
    pairs = [(d, t) for d, t in listed if d in domains]
    if not pairs:
        raise DataError(
            None,
            f"{topics_file} has no topics"  # the sentence names the file (no "path:" prefix)
            + (f" for the domains {', '.join(domains)}" if cfg.domains else "")
            + "; add 'domain: topic' lines",
        )
    if cfg.max_topics is not None:
        count: dict[str, int] = {}
        kept_pairs = []
        for d, t in pairs:
            count[d] = count.get(d, 0) + 1
            if count[d] <= cfg.max_topics:
                kept_pairs.append((d, t))
        pairs = kept_pairs
    items = []
    for n, (d, t) in enumerate(pairs, 1):
        key = f"{_slug(d)}--{_slug(t)}"
        item = _Item(out / "items" / f"{key}.json", d, t)
        await _run_topic(item, models, seeds, cfg, f"gen-{key}")
        items.append(item.data)
    envs = []
    for d in items:
        if d.get("status") == "kept":
            key = f"gen-{_slug(d['domain'])}--{_slug(d['topic'])}"
            e = _as_env(d, d["rounds"][-1]["environment"], key)
            envs.append(replace(e, tier=d["tier"]))
    if envs:
        write_layout(out / "dataset", envs)
    summary = _yield_table(items, cfg.max_rounds)
    write_atomic(out / "yield.json", json.dumps(summary.to_json(), indent=2) + "\n")
    return summary


def run_generate(out: Path, seeds: list[Environment], models: GenModels, cfg: GenConfig) -> GenerationYield:
    """Synchronous wrapper of :func:`generate`."""
    return asyncio.run(generate(out, seeds, models, cfg))
