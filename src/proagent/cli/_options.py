"""Options that several commands take, written once.

Each function returns a click decorator; a help text that differs between commands is an
argument, everything else (type, default, range) is the same everywhere. Method and memory
choices are read from their registries (:data:`proagent.agent.solvers.METHODS`,
:func:`proagent.agent.memory.memory_names`) when first needed, so ``proagent --help`` does
not import the agent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import click

from ._util import DEFAULT_MODEL

__all__ = [
    "DISPLAYS",
    "Finite",
    "RegistryChoice",
    "RegistryHelpOption",
    "Share",
    "ShownChoice",
    "compose",
    "data_option",
    "display_option",
    "endpoint_options",
    "log_dir_option",
    "memory_names",
    "method_names",
    "method_option",
    "model_option",
    "names_help",
    "notifier_names",
    "ray_option",
    "sample_options",
    "training_data_options",
    "training_window_options",
    "window_option",
]

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

DISPLAYS = ("full", "rich", "plain", "log", "none")
"""inspect's progress displays (``--display``)."""


def method_names() -> tuple[str, ...]:
    """The registered prompting methods (``zero-shot``, ``cot``, ``sc``)."""
    from ..agent.solvers import METHODS

    return tuple(METHODS)


def memory_names() -> tuple[str, ...]:
    """The registered long-term memories, ``none`` first."""
    from ..agent.memory import memory_names as names

    return names()


def notifier_names() -> tuple[str, ...]:
    """The registered notifiers of ``live --notify`` (``terminal``, ``desktop``, ``page``, ``none``)."""
    from ..live import NOTIFIERS

    return tuple(NOTIFIERS)


class RegistryHelpOption(click.Option):
    """A :class:`click.Option` whose help text is built by ``help_from()`` each time it is read
    (``--help``, the mkdocs-click reference): a help that lists a registry's names lists one
    registered after the command was built too. Pass it as ``cls=`` with ``help_from=``."""

    def __init__(self, *args: Any, help_from: Callable[[], str], **kwargs: Any) -> None:  # noqa: D107
        self._help_from = help_from
        super().__init__(*args, **kwargs)

    @property  # type: ignore[override]
    def help(self) -> str:
        return self._help_from()

    @help.setter
    def help(self, value: str | None) -> None:  # click.Option.__init__ sets it; the text is built when read
        pass


def names_help(prefix: str, names: Callable[[], Iterable[str]], suffix: str = ".") -> Callable[[], str]:
    """A ``help_from`` for :class:`RegistryHelpOption`: ``prefix`` then the registry's names, comma-separated."""
    return lambda: f"{prefix}{', '.join(names())}{suffix}"


class RegistryChoice(click.Choice):
    """:class:`click.Choice` over the names of a registry, read when needed (each time: a
    method or memory registered after the command was built is a choice too)."""

    def __init__(self, names: Callable[[], Iterable[str]]) -> None:  # noqa: D107 (click.Choice's state, lazily)
        self._names = names
        self.case_sensitive = True

    @property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(self._names())


class ShownChoice(RegistryChoice):
    """Help shows the choices (``[none|rag|kg|persona]``) but the value is passed on unchecked:
    the rule's own parser checks it (``eval --memory``: :func:`proagent.agent.memory.check_memory`),
    so the command line and ``inspect eval -T`` refuse it with the same one line."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return value


class Finite(click.FloatRange):
    """A :class:`click.FloatRange` that also refuses ``nan`` and, unless a bound allows it,
    ``inf`` (every range comparison lets ``nan`` through, and an open upper end lets ``inf``)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        rv = super().convert(value, param, ctx)
        if rv != rv or rv in (float("inf"), float("-inf")):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return rv

    def _describe_range(self) -> str:
        # click describes an unbounded range as "x<=None" in --help: say nothing instead
        return "" if self.min is None and self.max is None else super()._describe_range()


Share = Finite
"""A share (``--train-fraction``): :class:`Finite` within its bounds."""


def compose(*decorators: Decorator) -> Decorator:
    """One decorator applying ``decorators`` so that options appear in the given order."""

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        for d in reversed(decorators):
            f = d(f)
        return f

    return wrap


data_option = click.option(
    "--data",
    required=True,
    type=click.Path(path_type=Path),
    help="ProactiveBench session file/folder, LifeTrace database/folder, ActivityWatch database or export, "
    "or screenpipe db.sqlite/folder.",
)


def method_option() -> Decorator:
    """``--method``: one registered prompting method."""
    return click.option(
        "--method", type=RegistryChoice(method_names), default="zero-shot", show_default=True, help="Prompting method."
    )


def model_option(help: str) -> Decorator:  # noqa: A002 (click's name)
    """``--model``: any inspect model, the bundled local default."""
    return click.option("--model", default=DEFAULT_MODEL, show_default=True, help=help)


def endpoint_options(
    model_arg_help: str = "Model argument KEY=VALUE (repeatable).",
    base_url_help: str = "Base URL of an OpenAI-compatible server.",
    pool: bool = False,
) -> Decorator:
    """``--model-base-url`` and ``--model-arg KEY=VALUE`` (repeatable); with ``pool`` the URL is
    repeatable too (a tuple: a pool of endpoints that ``--ray`` spreads shards over)."""
    if pool:
        base_url_help += " Repeatable with --ray: a pool of endpoints, shards spread over them."
    return compose(
        click.option("--model-base-url", default=None, multiple=pool, help=base_url_help),
        click.option("--model-arg", "model_arg", multiple=True, help=model_arg_help),
    )


def ray_option(what: str) -> Decorator:
    """``--ray [ADDRESS]``: run the work as shards on a Ray cluster (:mod:`proagent.scale`); a bare
    ``--ray`` is ``local``."""
    return click.option(
        "--ray",
        "ray_address",
        is_flag=False,
        flag_value="local",
        default=None,
        metavar="[ADDRESS]",
        help=f"Run {what} as shards on a Ray cluster: auto (the running cluster), HOST:PORT of its head, "
        "or local (a private cluster of this machine; a bare --ray). Needs the ray extra.",
    )


def window_option(help: str) -> Decorator:  # noqa: A002
    """``--window``: the context before each moment (``5m``)."""
    return click.option("--window", default="5m", show_default=True, help=help)


def sample_options(limit_help: str) -> Decorator:
    """The When/How-to-Assist samples: ``--split``, ``--train-fraction``, ``--limit``, ``--seed``,
    ``--sc-samples``, ``--annotations`` (eval and ablate)."""
    return compose(
        click.option(
            "--split",
            type=click.Choice(["test", "train", "all"]),
            default="test",
            show_default=True,
            help="Time-based split within each user.",
        ),
        click.option(
            "--train-fraction",
            type=Share(0.0, 1.0, max_open=True),
            default=0.5,
            show_default=True,
            help="Earliest share of each user's moments in the train split.",
        ),
        click.option("--limit", type=click.IntRange(min=1), default=None, help=limit_help),
        click.option(
            "--seed",
            type=click.IntRange(min=0),
            default=0,
            show_default=True,
            help="Seed for sampling negatives and generation (>= 0).",
        ),
        click.option(
            "--sc-samples",
            type=click.IntRange(1, 100),
            default=5,
            show_default=True,
            help="Self-consistency: answers per moment.",
        ),
        click.option(
            "--annotations",
            multiple=True,
            type=click.Path(exists=True, path_type=Path),
            help="External annotation JSON/JSONL (LifeTrace; repeatable).",
        ),
    )


def log_dir_option(help: str) -> Decorator:  # noqa: A002
    """``--log-dir``: the inspect log folder (default: a name built from the options; re-running resumes)."""
    return click.option("--log-dir", type=click.Path(path_type=Path), default=None, help=help)


def display_option(default: str | None = None, help: str = "inspect progress display.") -> Decorator:  # noqa: A002
    """``--display``: inspect's progress display."""
    return click.option(
        "--display", type=click.Choice(list(DISPLAYS)), default=default, show_default=default is not None, help=help
    )


def training_data_options() -> Decorator:
    """``--data`` (an activity log's train split) and ``--train-data`` (whole data sets, repeatable):
    the labelled moments of ``proagent train when|sft|lora``."""
    return compose(
        click.option(
            "--data",
            type=click.Path(exists=True, path_type=Path),
            default=None,
            help="Activity log (as eval reads it): its train split (time split within each user) is used.",
        ),
        click.option(
            "--train-data",
            "train_data",
            multiple=True,
            type=click.Path(exists=True, path_type=Path),
            help="A whole data set to train on (repeatable): an activity log (all moments) or ProactiveBench "
            "synthetic traces (synthetic_traces.jsonl or its folder).",
        ),
    )


def training_window_options() -> Decorator:
    """``--window`` and ``--train-fraction`` of the moments a model is trained on, as eval builds them."""
    return compose(
        window_option("Context window before each moment, as eval uses it."),
        click.option(
            "--train-fraction",
            type=Share(0.0, 1.0, min_open=True, max_open=True),
            default=0.5,
            show_default=True,
            help="Earliest share of each user's moments in the train split of --data.",
        ),
    )
