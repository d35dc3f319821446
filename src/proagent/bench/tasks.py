"""The When/How-to-Assist benchmark as an inspect_ai task.

Run it with ``proagent eval`` or with plain inspect::

    inspect eval proagent/assist -T data=../shared/data/proactivebench \\
        -T method=zero-shot --model local/smollm2-135m --limit 5
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.dataset import Sample as InspectSample
from inspect_ai.model import GenerateConfig

from ..agent.decider import decider_gate, load_decider
from ..agent.memory import build_memory, derived_fields_summary, memory_context
from ..agent.prompting import observation_prompt
from ..agent.solvers import METHODS, method_solver
from ..errors import DataError
from ..records import Event, Sample
from ..sources.load import load_events
from ._inspect_hooks import task_input_errors
from .leakage import manifest_training_moments, refuse_leaks
from .options import AssistOptions, parse_assist_options
from .samples import SampleConfig, build_samples, candidate_moments, no_samples_reason
from .scorers import assist_scorer
from .similarity import embed_references

__all__ = [
    "assist",
    "build_assist",
    "embed_task_references",
    "image_modality_warnings",
    "references_embedded_later",
    "to_inspect_samples",
]


TEXT_ONLY_PREFIXES = ("local/", "mockllm/")
"""Model prefixes whose models read no image: proagent's in-process llama.cpp provider passes a
message's text only (``models.local``), inspect's mock answers without reading its input."""


def image_modality_warnings(task: Any, model: str) -> list[str]:
    """What ``eval --modality image`` should tell before it runs ``task`` (one line each, no
    "warning:" prefix): a model that reads no image sees no screen at all (the screenshot
    replaces the OCR text, issue 36), and moments without a screenshot file keep their OCR text
    (all of them: the run is a ``--modality text`` run). Empty when neither holds.
    """
    shown = [s.metadata.get("modality") for s in task.dataset]
    images = sum(m == "image" for m in shown)
    out = []
    if images and model.startswith(TEXT_ONLY_PREFIXES):
        out.append(
            f"--modality image with {model}, a text-only model: the screenshot replaces the OCR text "
            f"at {images} of {len(shown)} moments and the model drops images, so it sees no screen there; "
            "use --modality text, or a vision model"
        )
    if not images:
        out.append(
            f"--modality image: none of the {len(shown)} moments has a screenshot file, so each shows its "
            "OCR text, as with --modality text"
        )
    elif images < len(shown):
        out.append(
            f"--modality image: {len(shown) - images} of {len(shown)} moments have no screenshot file "
            "and show their OCR text"
        )
    return out


def to_inspect_samples(samples: list[Sample], modality: str = "text") -> list[InspectSample]:
    """Render samples as their observations (:func:`~proagent.agent.prompting.observation_prompt`;
    each method's solver adds its instruction); metadata carries the ground truth for the scorer.

    ``modality="image"``: a sample whose current screenshot file exists shows the
    image instead of the OCR text (``metadata["modality"]``); one without keeps the text.
    """
    out = []
    for s in samples:
        shots = s.current.focused_screenshots
        shot = shots[-1].path if shots and shots[-1].path else None
        shown = "image" if modality == "image" and shot and shot.is_file() else "text"
        out.append(
            InspectSample(
                id=s.id,
                input=observation_prompt(s, modality=shown),
                target="Yes" if s.label else "No",
                metadata={
                    "label": s.label,
                    "user": s.user,
                    "kind": s.kind,
                    "split": s.split,
                    "time": s.time.isoformat(),
                    "intention": s.intention,
                    "reference_queries": list(s.reference_queries),
                    "event_id": s.event_id,
                    "screenshot": str(shot) if shot else None,
                    "modality": shown,
                },
            )
        )
    return out


@task
@task_input_errors
def assist(
    data: str,
    method: str = "zero-shot",
    window: str = "5m",
    split: str = "test",
    train_fraction: float = 0.5,
    seed: int = 0,
    sc_samples: int = 5,
    sc_temperature: float = 0.7,
    images: bool = False,
    annotations: str | None = None,
    memory: str = "none",
    candidates: bool = False,
    logprobs: bool = False,
    threshold: float | None = None,
    decider: str | None = None,
    modality: str = "text",
    finetuned: str | None = None,
) -> Task:
    """When/How-to-Assist on an activity log (ProAgentBench section 5).

    Args:
        data: ProactiveBench session file/folder, or LifeTrace database/folder.
        method: A method of :data:`proagent.agent.solvers.METHODS`: ``zero-shot``, ``cot``
            or ``sc`` (self-consistency over CoT).
        window: Context window (``10s`` .. ``10m``; paper default ``5m``).
        split: ``test``, ``train`` or ``all`` (time-based split within each user).
        train_fraction: Earliest share of each user's moments used for training.
        seed: Seed of hard-negative sampling and generation.
        sc_samples: Answers sampled per moment for self-consistency.
        sc_temperature: Sampling temperature for self-consistency (> 0).
        images: Also attach the current screenshot to the text prompt (for vision models).
        modality: ``text`` (the current screen as OCR text) or ``image`` (the
            current screenshot instead, to a vision model; ProAgentBench Appendix F.2).
        annotations: Comma-separated external annotation files (LifeTrace).
        memory: Long-term memory: ``none``, ``rag``, ``kg`` or ``persona``
            (``proagent.agent.memory``), built per user from the training period.
        candidates: Judge every candidate time point of the log
            (:func:`~proagent.bench.samples.candidate_moments`) instead of the
            benchmark's positives and hard negatives; the synthetic baseline
            (``proagent simulate``) runs this.
        logprobs: Request token log-probabilities (top 10) and record each
            answer's ``p_yes`` (:mod:`proagent.agent.calibration`).
        threshold: Decide When to Assist by ``p_yes >= threshold`` instead of
            the answer text (implies ``logprobs``; methods that record ``p_yes``: zero-shot and cot).
            Answers without a readable ``p_yes`` keep their text decision.
        decider: A decider folder (``proagent train when``): it decides When at
            every moment and the model is asked (How to Assist) only where it
            says Yes (:func:`proagent.agent.decider.decider_gate`). Refused when
            an evaluated moment is one of the decider's training moments.
        finetuned: The output folder of ``proagent train sft|lora`` whose model
            is evaluated (``proagent eval`` fills it in for ``local//.../model.gguf``):
            refused when an evaluated moment is one of its training moments.

    Every argument goes through :func:`proagent.bench.options.parse_assist_options`, the parser
    ``proagent eval`` uses (:func:`build_assist` builds from options it parsed).

    Raises:
        proagent.errors.UsageError: unknown method, modality, split or memory; a bad window; a
            threshold out of [0, 1], with a method that records no ``p_yes`` or with a decider
            (:func:`~proagent.bench.options.parse_assist_options`).
        proagent.errors.DataError: unreadable data; no sample in the split.
    """
    opts = _PARSED.get()
    if opts is None:  # inspect eval -T ..., or a caller with the task's arguments: the one parser
        opts = parse_assist_options(
            data,
            method=method,
            window=window,
            split=split,
            train_fraction=train_fraction,
            seed=seed,
            sc_samples=sc_samples,
            sc_temperature=sc_temperature,
            images=images,
            annotations=annotations,
            memory=memory,
            candidates=candidates,
            logprobs=logprobs,
            threshold=threshold,
            decider=decider,
            modality=modality,
            finetuned=finetuned,
        )
    return _assist_task(opts)


_PARSED: ContextVar[AssistOptions | None] = ContextVar("proagent_assist_options", default=None)
"""Set by :func:`build_assist` around its call of :func:`assist`: the parsed options to build from."""


def build_assist(opts: AssistOptions) -> Task:
    """The ``assist`` task of options already parsed (``proagent eval``, a Ray worker of
    ``eval --ray``): built from ``opts`` as they are, and registered by inspect as ``assist`` with the
    arguments :meth:`~proagent.bench.options.AssistOptions.task_args` (what the log records and a
    resumed run is matched by), as if ``assist(**opts.task_args())`` had been called.

    Raises:
        proagent.errors.DataError: unreadable data; no sample in the split; a leak of a decider's or
            a fine-tuned model's training moments.
    """
    token = _PARSED.set(opts)
    try:
        return assist(**opts.task_args())
    finally:
        _PARSED.reset(token)


def _assist_task(opts: AssistOptions) -> Task:
    """The task of :func:`assist`, from its parsed options."""
    solver = method_solver(
        opts.method, sc_samples=opts.sc_samples, sc_temperature=opts.sc_temperature, images=opts.images
    )
    cfg = SampleConfig(window_seconds=opts.window.seconds, train_fraction=opts.train_fraction, seed=opts.seed)
    events, all_samples, samples = _evaluated_samples(opts.data, opts.annotations, opts.candidates, opts.split, cfg)
    if opts.finetuned:
        refuse_leaks(
            "fine-tuned model",
            opts.finetuned,
            manifest_training_moments(Path(opts.finetuned) / "manifest.json"),
            samples,
        )
    metadata: dict[str, Any] = {"method": opts.method, "window_seconds": cfg.window_seconds, "split": opts.split}
    if opts.candidates:
        metadata["candidates"] = True
    if opts.modality != "text":
        metadata["modality"] = opts.modality
    if opts.threshold is not None:
        metadata["threshold"] = opts.threshold
    if opts.memory != "none":
        solver = _with_memory(opts.memory, events, all_samples, samples, solver, metadata)
    if opts.decider:
        solver = _gated(opts.decider, samples, solver)
        metadata["decider"] = str(opts.decider)
    if opts.finetuned:
        metadata["finetuned"] = str(opts.finetuned)
    # the scorer compares positives' predicted queries with their references: embed those once, here
    # (or, under references_embedded_later(), those of the samples run: embed_task_references)
    if not _REFERENCES_LATER.get():
        embed_references(s.reference_queries for s in samples if s.label == 1)
    return Task(
        dataset=MemoryDataset(to_inspect_samples(samples, opts.modality), name="assist"),
        solver=solver,
        scorer=assist_scorer(threshold=opts.threshold),
        config=GenerateConfig(
            temperature=0.0,
            max_tokens=METHODS[opts.method].max_tokens,
            seed=opts.seed,
            **({"logprobs": True, "top_logprobs": 10} if opts.logprobs else {}),
        ),
        metadata=metadata,
    )


_REFERENCES_LATER: ContextVar[bool] = ContextVar("proagent_references_later", default=False)


@contextmanager
def references_embedded_later() -> Iterator[None]:
    """Within this block :func:`assist` does not embed its dataset's reference queries; the
    caller embeds those of the samples it runs with :func:`embed_task_references` (``proagent
    eval --limit 2`` embeds 2 samples' references, not the whole split's 74: issue 24)."""
    token = _REFERENCES_LATER.set(True)
    try:
        yield
    finally:
        _REFERENCES_LATER.reset(token)


def embed_task_references(task: Task, limit: int | None = None) -> int:
    """Embed (:func:`~proagent.bench.similarity.embed_references`) the reference queries of the
    positive samples among the first ``limit`` of ``task`` (all when ``None``): those inspect
    runs with ``limit`` (it takes the dataset's first ``limit`` samples). Returns how many distinct
    texts that was."""
    samples = list(task.dataset)
    samples = samples[:limit] if limit else samples
    return embed_references((s.metadata or {}).get("reference_queries") or [] for s in samples if s.target == "Yes")


def _evaluated_samples(
    data: str, annotations: tuple[str, ...], candidates: bool, split: str, cfg: SampleConfig
) -> tuple[list[Event], list[Sample], list[Sample]]:
    """``(events, every sample, the samples of split)`` of ``data`` (``annotations``: external
    annotation files; ``candidates``: every candidate moment instead of the benchmark's samples).

    Raises:
        proagent.errors.DataError: unreadable data, or the split holds no sample (the message says why).
    """
    events = load_events(data, annotations=list(annotations) or None)
    all_samples = (candidate_moments if candidates else build_samples)(events, cfg)
    samples = all_samples
    if split != "all":
        samples = [s for s in samples if s.split == split]
    if not samples:
        raise DataError(
            data,
            ("no samples: " if split == "all" else f"no {split}-split samples: ")
            + no_samples_reason(events, all_samples, split, cfg, curation=_curation_records(data)),
        )
    return events, all_samples, samples


def _with_memory(
    memory: str,
    events: list[Event],
    all_samples: list[Sample],
    samples: list[Sample],
    solver: Any,
    metadata: dict[str, Any],
) -> list[Any]:
    """``solver`` behind the ``memory`` context step; the memory's fields go into ``metadata``.

    The memory is built from the training period of every user (all samples define it) and
    used at each moment only through records known strictly before it.
    """
    store = build_memory(memory, events, all_samples)
    metadata.update(
        memory=memory,
        memory_derived=derived_fields_summary(store),
        memory_build_seconds=round(sum(store.build_seconds.values()), 3),
    )
    return [memory_context(store, {s.id: s for s in samples}), solver]


def _curation_records(data: str) -> list[dict]:
    """The ``curation.jsonl`` records of a curated folder holding ``data`` (the folder
    itself, or up to two levels above a database), ``[]`` when there is none or it is unreadable."""
    import json

    p = Path(data)
    for folder in ([p] if p.is_dir() else []) + list(p.parents)[:2]:
        f = folder / "curation.jsonl"
        if f.is_file():
            try:
                return [
                    r
                    for r in (json.loads(line) for line in f.read_text("utf-8").splitlines() if line.strip())
                    if isinstance(r, dict)
                ]
            except (OSError, ValueError):
                return []
    return []


def _gated(folder: str, samples: list[Sample], solver):  # noqa: ANN001, ANN202
    """The decider gate around ``solver``, after the leakage guard."""
    dec = load_decider(folder)
    refuse_leaks("decider", folder, dec.manifest.training_moments or [], samples)
    dec.warm_up()
    inner = solver if isinstance(solver, list) else [solver]
    return decider_gate(dec, {s.id: s for s in samples}, inner)
