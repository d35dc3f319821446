"""Fine-tune the When/How-to-Assist LLM: supervised fine-tuning (SFT) or LoRA, then back to GGUF.

ProAgentBench section 6.6 (Table 3/5) fine-tunes LLaMA-3.1-8B on 741 real moments
(SFT: learning rate 2e-5; LoRA: r = 16, learning rate 2e-4; both batch 16, 3 epochs)
and compares training on real against synthetic data. This module does the same
for any transformers causal LM, with Hugging Face ``trl`` (``SFTTrainer``) and
``peft`` (LoRA) on ``transformers``:

* **Examples** (:func:`chat_examples`): the system and zero-shot user prompt that
  ``proagent eval`` sends (:mod:`proagent.agent.prompting`), and as the answer the
  labelled three-line format: ``Need help: Yes`` with ``Intention:`` (when the
  moment has an intention label) and ``Query:`` (the first reference query, when
  there is one); ``Need help: No`` for a negative. The loss is on the answer only
  (trl's prompt-completion format).
* **Base model** (:func:`load_base`): a bundled model name (``smollm2-135m``,
  ``qwen2.5-coder-1.5b``) or a ``.gguf`` path, read with transformers' GGUF loader
  (dequantised to 32-bit floats; a small one is kept so dequantised on disk:
  :mod:`proagent.train._base_cache`), or a Hugging Face model folder.
* **Output folder**: ``checkpoints/`` (every ``save_steps`` optimiser steps; a
  re-run with the same data and settings resumes from the last one),
  ``adapter/`` (LoRA), ``model.gguf`` (merged weights, GGUF bases only:
  :mod:`proagent.train._gguf_export`) and ``manifest.json`` (settings, the ids of
  the training moments for the leakage guard, loss before and after).

torch, transformers, trl, peft and gguf come with ``pip install 'proagent[train]'``;
they are imported only when training starts (:func:`require_train_extra`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Literal

from ..agent.prompting import system_prompt
from ..errors import DataError, UsageError
from ..io import write_json_atomic
from ..models.catalog import MODELS, resolve_gguf
from ..records import Sample
from . import _base_cache
from ._gguf_export import GGUF_TYPES, export_gguf
from .data import training_moments
from .records import FINETUNE_KIND, FinetuneManifest

__all__ = [
    "DEFAULT_LEARNING_RATE",
    "FinetuneConfig",
    "MANIFEST",
    "TrainExtraMissing",
    "answer_text",
    "chat_examples",
    "finetune",
    "check_base",
    "load_base",
    "read_manifest",
    "require_train_extra",
    "subsample",
    "trained_folder",
]

MANIFEST = "manifest.json"
"""Name of the run record in the output folder."""

DEFAULT_LEARNING_RATE = {"sft": 2e-5, "lora": 2e-4}
"""Learning rate of each method (ProAgentBench section 6.6)."""

TRAIN_EXTRA = ("torch", "transformers", "trl", "peft", "gguf", "datasets", "accelerate")
"""Modules the ``train`` extra provides."""


class TrainExtraMissing(DataError):
    """The ``train`` extra is not installed; the message says what to install (no ``path``)."""

    def __init__(self, problem: str) -> None:
        super().__init__(None, problem)


def require_train_extra() -> None:
    """Check that the training libraries import.

    Raises:
        TrainExtraMissing: a module of the extra is missing (names it and the command).
    """
    import importlib.util

    missing = [m for m in TRAIN_EXTRA if importlib.util.find_spec(m) is None]
    if missing:
        raise TrainExtraMissing(
            f"fine-tuning needs {', '.join(missing)}: pip install 'proagent[train]' "
            "(install torch==2.13.0 first for the CPU build, see docs/guides/finetuning.md)"
        )


@dataclass(frozen=True)
class FinetuneConfig:
    """Settings of one fine-tuning run. Defaults: ProAgentBench section 6.6."""

    method: Literal["sft", "lora"] = "lora"
    """``sft`` (every weight trained) or ``lora`` (low-rank adapters, merged on export)."""
    learning_rate: float | None = None
    """Peak learning rate; ``None``: 2e-5 for SFT, 2e-4 for LoRA (:data:`DEFAULT_LEARNING_RATE`)."""
    batch_size: int = 16
    """Examples per optimiser step (the paper's 16), reached by gradient accumulation."""
    micro_batch_size: int = 1
    """Examples per forward pass; ``batch_size`` must be a multiple of it."""
    epochs: float = 3.0
    """Passes over the training examples (the paper's 3)."""
    max_steps: int = -1
    """Stop after this many optimiser steps (``-1``: run the epochs)."""
    lora_r: int = 16
    """LoRA rank r (the paper's 16)."""
    lora_alpha: int = 32
    """LoRA scaling alpha (2 r; the paper gives none)."""
    lora_dropout: float = 0.05
    """Dropout on the LoRA input (the paper gives none)."""
    max_length: int = 2048
    """Longest example in tokens; longer ones are left out (counted in the manifest)."""
    save_steps: int = 25
    """Checkpoint every this many optimiser steps (resume point)."""
    seed: int = 0
    """Seed of shuffling, dropout and LoRA initialisation."""
    gguf_type: str = "f16"
    """Weight type of ``model.gguf``: ``f16``, ``f32`` or ``q8_0``."""
    loss_probe: int = 32
    """Training examples on which the loss is measured before and after training (0: skip)."""

    def lr(self) -> float:
        """The learning rate used (explicit, or the method's default)."""
        return float(self.learning_rate if self.learning_rate is not None else DEFAULT_LEARNING_RATE[self.method])


def answer_text(sample: Sample) -> str:
    """The answer ``proagent eval`` would score as right for ``sample`` (zero-shot format).

    ``Need help: No`` for a negative; for a positive ``Need help: Yes``, then
    ``Intention: <label>`` when the sample has one and ``Query: <first reference
    query>`` when it has one (nothing is invented for missing labels).
    """
    if not sample.label:
        return "Need help: No"
    lines = ["Need help: Yes"]
    if sample.intention:
        lines.append(f"Intention: {sample.intention}")
    query = next((q.strip() for q in sample.reference_queries if q.strip()), None)
    if query:
        lines.append(f"Query: {' '.join(query.split())}")
    return "\n".join(lines)


def chat_examples(samples: list[Sample]) -> list[dict[str, Any]]:
    """Prompt-completion chat examples (trl's conversational format), one per sample.

    Returns:
        ``[{"id", "prompt": [system, user], "completion": [assistant]}]``: the
        prompt is what ``proagent eval --method zero-shot`` sends for the sample.
    """
    from ..agent.solvers import user_prompt  # the method registry pulls in inspect_ai: only when used

    system = system_prompt()
    return [
        {
            "id": s.id,
            "prompt": [{"role": "system", "content": system}, {"role": "user", "content": user_prompt(s, "zero-shot")}],
            "completion": [{"role": "assistant", "content": answer_text(s)}],
        }
        for s in samples
    ]


def subsample(samples: list[Sample], n: int, seed: int = 0) -> list[Sample]:
    """``n`` of ``samples`` drawn at random, stratified by label (the positive rate
    is kept), in their original order; all of them when ``n >= len(samples)``.

    Raises:
        UsageError: (a ``ValueError``; option ``--limit``) ``n < 1``, or ``n`` too small to hold both
            labels when both occur.
    """
    if n < 1:
        raise UsageError("--limit", f"subsample size {n}: must be >= 1")
    if n >= len(samples):
        return list(samples)
    from sklearn.model_selection import train_test_split

    labels = [s.label for s in samples]
    idx = list(range(len(samples)))
    strat = labels if len(set(labels)) > 1 else None
    try:
        keep, _ = train_test_split(idx, train_size=n, random_state=seed, stratify=strat)
    except ValueError as e:
        raise UsageError("--limit", f"cannot draw {n} of {len(samples)} moments stratified by label: {e}") from None
    return [samples[i] for i in sorted(keep)]


def _gguf_of(base: str) -> Path | None:
    name = base.removeprefix("local/")  # local/smollm2-135m, local//abs/path.gguf
    if name in MODELS or name.lower().endswith(".gguf"):
        return resolve_gguf(name)
    return None


def check_base(base: str) -> None:
    """Refuse, before anything is created, a ``base`` that cannot be loaded: not a bundled
    model, a ``.gguf`` file nor a Hugging Face folder whose ``config.json`` is a JSON object
    naming its ``model_type`` (a truncated or foreign config).

    Raises:
        proagent.errors.DataError: no such model, file or folder, or the folder's ``config.json``
            is damaged (the message names it; ``option`` is ``--base``).
    """
    try:
        if _gguf_of(base) is not None:
            return
    except (FileNotFoundError, ValueError) as e:  # resolve_gguf's "FILE: problem" (missing, or a bad checksum)
        where, _, problem = str(e).partition(": ")
        raise DataError(where, problem or where, option="--base") from None
    cfg = Path(base) / "config.json"
    if not cfg.is_file():
        raise DataError(base, "not a bundled model, a .gguf file nor a model folder with config.json", option="--base")
    try:
        data = json.loads(cfg.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DataError(cfg, f"not a readable model config ({e.__class__.__name__}: {e})", option="--base") from None
    if not isinstance(data, dict) or not isinstance(data.get("model_type"), str):
        raise DataError(cfg, "not a Hugging Face model config (no model_type)", option="--base")


def load_base(base: str) -> tuple[Any, Any, Path | None]:
    """Load a base model and its tokenizer in full precision.

    Args:
        base: a bundled model (``smollm2-135m``, ``local/qwen2.5-coder-1.5b``), a
            ``.gguf`` file (Llama and Qwen2 architectures dequantise) or a Hugging
            Face model folder.

    A GGUF file of at most 300 MB (SmolLM2-135M, gemma3-270m) is dequantised once and kept
    in a disk cache (``$PROAGENT_BASE_CACHE``, default ``~/.cache/proagent/bases``, keyed by
    the file's SHA-256): later loads take seconds instead of transformers' GGUF path's half
    minute (:mod:`proagent.train._base_cache`).

    Returns:
        ``(model, tokenizer, source_gguf)``; ``source_gguf`` is ``None`` for a folder.

    Raises:
        proagent.errors.DataError: neither a bundled model, a GGUF file nor a model folder; a model
            transformers cannot load; GGUF weights it left in blocks.
    """
    gguf = _gguf_of(base)
    if gguf is not None:
        kw = {"gguf_file": gguf.name}
        folder = str(gguf.parent)
    else:
        if not (Path(base) / "config.json").is_file():
            raise DataError(base, "not a bundled model, a .gguf file nor a model folder with config.json")
        kw, folder = {}, base
    check_base(base)
    cache = _base_cache.cache_folder(gguf) if gguf is not None else None
    cached = _base_cache.load_cached(cache) if cache is not None else None
    if cached is not None:
        model, tok = cached
    else:
        model, tok = _load_transformers(base, folder, kw, gguf)
        if cache is not None:
            _base_cache.store(cache, model, tok)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return model, tok, gguf


def _load_transformers(base: str, folder: str, kw: dict[str, Any], gguf: Path | None) -> tuple[Any, Any]:
    """``(model, tokenizer)`` through transformers (its GGUF loader when ``kw`` names a file)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(folder, **kw)
        model = AutoModelForCausalLM.from_pretrained(folder, dtype="float32", **kw)
    except (OSError, ValueError, KeyError) as e:  # transformers: missing/damaged weights or tokenizer files
        first = (str(e).strip().splitlines() or [e.__class__.__name__])[0]
        raise DataError(base, f"cannot load the model ({first})") from None
    quantizer = getattr(model, "hf_quantizer", None)
    if gguf is not None and quantizer is not None:
        # the loader dequantised every weight (no GGUF matmul kernel on this path); it still
        # marks the model quantized, which the trainer refuses: check, then drop the mark
        packed = [n for n, p in model.named_parameters() if not p.dtype.is_floating_point]
        if packed:
            raise DataError(gguf, f"weights stayed in GGUF blocks ({packed[0]}, ...); cannot train them")
        quantizer.remove_quantization_config(model)
    return model, tok


def read_manifest(folder: str | Path) -> FinetuneManifest | None:
    """The ``manifest.json`` of a fine-tuning output folder, or ``None`` when there is none.

    Raises:
        proagent.errors.DataError: the file exists but is not a fine-tuning manifest (not JSON, not an
            object, another kind, or a field missing or of the wrong type).
    """
    path = Path(folder) / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError as e:
        raise DataError(path, f"not JSON ({e.msg})") from None
    if not isinstance(data, dict) or data.get("kind") != FINETUNE_KIND:
        raise DataError(path, "not a fine-tuning manifest")
    try:
        return FinetuneManifest.from_json(data)
    except (KeyError, TypeError, ValueError) as e:
        raise DataError(path, f"not a fine-tuning manifest ({type(e).__name__}: {e})") from None


def trained_folder(model: str) -> Path | None:
    """The output folder of a fine-tuning run when ``model`` (an inspect model name,
    ``local//path/model.gguf``) is the GGUF it wrote, else ``None``: its manifest
    lists the training moments that evaluation must not score it on."""
    if not model.startswith("local/") or not model.lower().endswith(".gguf"):
        return None
    path = Path(model[len("local/") :]).expanduser()
    try:
        m = read_manifest(path.parent)
    except ValueError:
        return None
    if m is not None and m.model_gguf == path.name:
        return path.parent
    return None


def _fingerprint(config: FinetuneConfig, base: str, ids: list[str], sources: list[dict[str, Any]]) -> str:
    keep = {k: v for k, v in asdict(config).items() if k not in {"save_steps", "gguf_type", "loss_probe"}}
    text = json.dumps({"config": keep, "base": base, "ids": ids, "sources": sources}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _callback(echo: Callable[[str], None]) -> Any:
    from transformers import TrainerCallback

    class LossLog(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001, ANN003, ANN201
            if logs and "loss" in logs:
                row = {
                    "step": int(state.global_step),
                    "epoch": round(float(state.epoch or 0), 3),
                    "loss": float(logs["loss"]),
                }
                echo(f"step {row['step']}/{state.max_steps}  epoch {row['epoch']:.2f}  loss {row['loss']:.4f}")

    return LossLog()


def _last_checkpoint(folder: Path) -> str | None:
    from transformers.trainer_utils import get_last_checkpoint

    return get_last_checkpoint(str(folder)) if folder.is_dir() else None


def finetune(
    train: list[Sample],
    base: str,
    out: str | Path,
    config: FinetuneConfig = FinetuneConfig(),
    *,
    sources: list[dict[str, Any]] | None = None,
    echo: Callable[[str], None] = print,
    threads: int | None = None,
) -> FinetuneManifest:
    """Fine-tune ``base`` on ``train`` and write the run to ``out``.

    Args:
        train: the training moments (e.g. the train split of real sessions, or
            synthetic traces); never the moments a run is evaluated on.
        base: see :func:`load_base`.
        out: output folder (created); a re-run with the same data, base and
            settings resumes from its last checkpoint, or returns at once when done.
        config: hyper-parameters.
        sources: where the moments came from (recorded in the manifest).
        echo: receives one progress line per logged step.
        threads: CPU threads for torch (default: torch's choice).

    Returns:
        The manifest (also written to ``out/manifest.json``; ``loss_before``/``loss_after``
        on up to ``loss_probe`` training examples).

    Raises:
        TrainExtraMissing: the ``train`` extra is not installed.
        proagent.errors.DataError: no training moments, settings that cannot run, ``out`` holds
            another run, ``base`` not found or not loadable (:func:`load_base`), no example fits
            ``max_length``. The settings' refusals are data errors (exit 1, as ``proagent train``
            has always printed them), not usage errors: they compare two options.
    """
    require_train_extra()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # offline by design: never ask the Hub for anything
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    if not train:
        raise DataError(None, "no training moments")
    _check_config(config)
    out = Path(out)
    sources = list(sources or [])
    ids = [s.id for s in train]
    if len(set(ids)) != len(ids):
        raise DataError(None, "training moments have duplicate ids; pass each moment once")
    fp = _fingerprint(config, base, ids, sources)
    old = read_manifest(out)
    if old is not None:
        if old.fingerprint != fp:
            raise DataError(
                out, "holds another fine-tuning run (other data, base or settings); choose a new --out or delete it"
            )
        if old.done and (old.model_gguf is None or Path(out, old.model_gguf).is_file()):
            echo(f"{out}: already trained ({old.n_examples} examples); nothing to do")
            return old

    import datasets
    import torch
    from datasets import Dataset

    datasets.disable_progress_bars()  # one line per step from the callback is the progress

    if threads:
        torch.set_num_threads(int(threads))
    started = time.monotonic()
    echo(f"loading {base}")
    model, tok, source_gguf = load_base(base)

    kept, lengths = _fitting_examples(train, tok, config, echo)
    dataset = Dataset.from_list([{"prompt": e["prompt"], "completion": e["completion"]} for e in kept])
    probe = dataset.select(range(min(config.loss_probe, len(dataset)))) if config.loss_probe > 0 else None

    manifest = _first_manifest(train, base, config, fp, source_gguf, sources, n_examples=len(kept), lengths=lengths)
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / MANIFEST, manifest.to_json())

    cuda = torch.cuda.is_available()
    trainer = _trainer(model, tok, dataset, probe, config, out, echo)
    resume = _last_checkpoint(out / "checkpoints")
    if resume and old is not None and old.loss_before is not None:
        manifest = replace(manifest, loss_before=old.loss_before)  # measured before the interrupted run
    if probe is not None and manifest.loss_before is None:
        manifest = replace(manifest, loss_before=float(trainer.evaluate()["eval_loss"]))
        echo(f"loss before training {manifest.loss_before:.4f} on {len(probe)} training examples")
        write_json_atomic(out / MANIFEST, manifest.to_json())
    if resume:
        echo(f"resuming from {resume}")
    trainer.train(resume_from_checkpoint=resume)
    if probe is not None:
        manifest = replace(manifest, loss_after=float(trainer.evaluate()["eval_loss"]))
        echo(f"loss after training {manifest.loss_after:.4f}")
    losses = tuple(
        {"step": int(r["step"]), "epoch": float(r.get("epoch") or 0), "loss": float(r["loss"])}
        for r in trainer.state.log_history
        if "loss" in r
    )
    manifest = replace(
        manifest,
        losses=losses,
        steps=int(trainer.state.global_step),
        **_save_model(trainer.model, tok, config, out, source_gguf, echo),
    )
    manifest = replace(
        manifest,
        status="done",
        seconds=round(time.monotonic() - started, 1),
        device="cuda" if cuda else "cpu",
        threads=int(torch.get_num_threads()),
    )
    write_json_atomic(out / MANIFEST, manifest.to_json())
    return manifest


def _first_manifest(
    train: list[Sample],
    base: str,
    config: FinetuneConfig,
    fingerprint: str,
    source_gguf: Path | None,
    sources: list[dict[str, Any]],
    *,
    n_examples: int,
    lengths: list[int],
) -> FinetuneManifest:
    """The manifest written before training: settings, data, and example lengths (``lengths``:
    tokens of each moment's example; ``n_examples`` of them fit ``max_length``)."""
    return FinetuneManifest(
        status="training",
        fingerprint=fingerprint,
        method=config.method,
        base=base,
        source_gguf=str(source_gguf) if source_gguf else None,
        config=asdict(config),
        learning_rate=config.lr(),
        sources=tuple(sources),
        training_ids=tuple(s.id for s in train),
        # the leakage guard's record (proagent.train.data.training_moments): eval refuses these moments
        training_moments=tuple(training_moments(train)),
        n_examples=n_examples,
        n_too_long=len(lengths) - n_examples,
        n_positive=sum(1 for s, n in zip(train, lengths) if s.label and n <= config.max_length),
        example_tokens={"min": min(lengths), "max": max(lengths), "mean": round(sum(lengths) / len(lengths), 1)},
    )


def _check_config(config: FinetuneConfig) -> None:
    """Refuse settings that cannot run (before the base is loaded).

    Raises:
        proagent.errors.DataError: an unknown method or GGUF type, or a batch size that is not a
            positive multiple of the micro-batch.
    """
    if config.method not in DEFAULT_LEARNING_RATE:
        raise DataError(None, f"method {config.method!r}: choose sft or lora")
    if config.batch_size < 1 or config.micro_batch_size < 1 or config.batch_size % config.micro_batch_size:
        raise DataError(
            None,
            f"batch size {config.batch_size} must be a positive multiple of the micro-batch {config.micro_batch_size}",
        )
    if config.gguf_type not in GGUF_TYPES:
        raise DataError(None, f"GGUF type {config.gguf_type!r}: choose from {', '.join(GGUF_TYPES)}")


def _fitting_examples(
    train: list[Sample], tok: Any, config: FinetuneConfig, echo: Callable[[str], None]
) -> tuple[list[dict[str, Any]], list[int]]:
    """The chat examples of ``train`` no longer than ``config.max_length`` tokens, and the token
    length of every example (kept or not).

    Raises:
        proagent.errors.DataError: every example is too long.
    """
    examples = chat_examples(train)
    lengths = [
        len(tok.apply_chat_template(e["prompt"] + e["completion"], tokenize=True, return_dict=True)["input_ids"])
        for e in examples
    ]
    kept = [e for e, n in zip(examples, lengths) if n <= config.max_length]
    if not kept:
        raise DataError(None, f"every example is longer than max_length {config.max_length} tokens")
    if len(kept) < len(examples):
        echo(
            f"{len(examples) - len(kept)} of {len(examples)} examples are longer than {config.max_length} tokens and are left out"
        )
    return kept, lengths


def _trainer(
    model: Any, tok: Any, dataset: Any, probe: Any, config: FinetuneConfig, out: Path, echo: Callable[[str], None]
) -> Any:
    """TRL's ``SFTTrainer`` for ``config`` (LoRA adapters with ``method="lora"``; completion-only
    loss, checkpoints under ``out/checkpoints``, one ``echo`` line per logged step)."""
    import torch
    from trl import SFTConfig, SFTTrainer

    cuda = torch.cuda.is_available()
    peft_config = None
    if config.method == "lora":
        from peft import LoraConfig

        peft_config = LoraConfig(
            r=config.lora_r,
            lora_alpha=config.lora_alpha,
            lora_dropout=config.lora_dropout,
            target_modules="all-linear",
            task_type="CAUSAL_LM",
        )
    args = SFTConfig(
        output_dir=str(out / "checkpoints"),
        per_device_train_batch_size=config.micro_batch_size,
        per_device_eval_batch_size=config.micro_batch_size,
        gradient_accumulation_steps=config.batch_size // config.micro_batch_size,
        learning_rate=config.lr(),
        num_train_epochs=config.epochs,
        max_steps=config.max_steps,
        logging_steps=1,
        save_strategy="steps",
        save_steps=config.save_steps,
        save_total_limit=2,
        seed=config.seed,
        data_seed=config.seed,
        report_to="none",
        max_length=config.max_length,
        packing=False,
        completion_only_loss=True,
        bf16=bool(cuda and torch.cuda.is_bf16_supported()),
        disable_tqdm=True,
        dataloader_num_workers=0,
        gradient_checkpointing=False,  # small models: recomputing activations only costs time
        dataloader_pin_memory=cuda,
    )
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        eval_dataset=probe,
        processing_class=tok,
        peft_config=peft_config,
        callbacks=[_callback(echo)],
    )
    return trainer


def _save_model(
    final: Any, tok: Any, config: FinetuneConfig, out: Path, source_gguf: Path | None, echo: Callable[[str], None]
) -> dict[str, Any]:
    """Write the trained model (the LoRA adapter, then the merged model as ``model.gguf`` when
    the base came from a GGUF, else a Hugging Face folder ``model/``); returns the
    :class:`~.records.FinetuneManifest` fields naming what was written."""
    files: dict[str, Any] = {}
    if config.method == "lora":
        final.save_pretrained(str(out / "adapter"))
        files["adapter"] = "adapter"
        final = final.merge_and_unload()
    else:
        files["adapter"] = None
    final.eval()
    if source_gguf is not None:
        echo(f"writing {out / 'model.gguf'} ({config.gguf_type})")
        info = export_gguf(final, source_gguf, out / "model.gguf", dtype=config.gguf_type)
        files["model_gguf"] = "model.gguf"
        files["gguf_bytes"] = info["bytes"]
    else:
        final.save_pretrained(str(out / "model"))
        tok.save_pretrained(str(out / "model"))
        files["model_gguf"] = None
        files["model_folder"] = "model"
        echo(
            "the base is a Hugging Face folder: merged model saved to model/ (convert it with llama.cpp's "
            "convert_hf_to_gguf.py to evaluate it with local//...)"
        )
    return files
