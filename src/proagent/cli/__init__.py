"""The ``proagent`` command line: one module per command group; options, messages and exit codes only.

Every option can also be set from the environment: ``PROAGENT_<COMMAND>_<OPTION>``,
e.g. ``PROAGENT_EVAL_MODEL=local/smollm2-135m`` (click's ``auto_envvar_prefix``).

Exit codes (:mod:`proagent.cli._errors`, the one mapping of :mod:`proagent.errors`):
0 done; 1 refused input (:class:`~proagent.errors.DataError`: a file or folder that cannot be
used; a model that cannot be created; a folder in use); 2 usage (:class:`~proagent.errors.UsageError`
and click's usage errors); 3 a run that did not finish (:class:`~proagent.errors.RunError`; the
message says how to resume); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from ._errors import EXIT_INTERRUPTED, map_errors, was_stopped_by_ctrl_c
from .ablate import ablate_cmd
from .annotate import annotate_cmd
from .capture import capture
from .curate import curate_cmd, review_cmd
from .data import data
from .dialogue import dialogue
from .doctor import doctor_cmd
from .eval import eval_cmd
from .live import live_cmd
from .mcp import mcp_cmd
from .models import models
from .show import show_cmd
from .stats import stats_cmd
from .synth import simulate_cmd, synth_cmd
from .train import train

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "PROAGENT"})
@click.version_option(package_name="proagent")
def cli() -> None:
    """proagent: proactive assistants that decide when to help and what to offer."""


for _command in (
    eval_cmd,
    ablate_cmd,
    data,
    models,
    capture,
    annotate_cmd,
    dialogue,
    stats_cmd,
    synth_cmd,
    simulate_cmd,
    train,
    curate_cmd,
    review_cmd,
    show_cmd,
    live_cmd,
    doctor_cmd,
    mcp_cmd,
):
    cli.add_command(_command)
map_errors(cli)


def main() -> None:
    """Entry point of the ``proagent`` script. Ctrl-C at any point exits with 130
    (click alone would print "Aborted!" and exit with 1), at once (:func:`_exit_now`).

    The process's umask is ``077``: every file and folder a command creates, its own and those
    of the libraries it drives (inspect's logs, matplotlib's figures, Ray's session folder, the
    disk caches under ``~/.cache/proagent``), is private to the account (0600 / 0700), since any
    of them may hold window titles or screen text. SIGINT stops a command even when the shell that
    started it in the background set it to be ignored (a review page that ``kill -INT`` left
    running for good)."""
    import os
    import signal

    os.umask(0o077)
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # started with & by a shell without job control
        signal.signal(signal.SIGINT, signal.default_int_handler)  # `kill -INT` still stops it (review, live)
    try:
        rc = cli.main(standalone_mode=False)
    except click.ClickException as e:
        e.show()
        if e.exit_code == EXIT_INTERRUPTED:  # a run stopped by Ctrl-C (RunError, interrupted)
            _exit_now(EXIT_INTERRUPTED)
        sys.exit(e.exit_code)
    except (KeyboardInterrupt, click.exceptions.Abort):
        click.echo("Error: interrupted; re-run the same command to resume", err=True)
        _exit_now(EXIT_INTERRUPTED)
    rc = rc if isinstance(rc, int) else 0
    if rc == EXIT_INTERRUPTED or was_stopped_by_ctrl_c():  # live's 130, a server's Ctrl-C: out within a second
        _exit_now(rc)
    sys.exit(rc)


def _exit_now(code: int) -> NoReturn:
    """Exit after the ``atexit`` handlers and a flush of stdout/stderr, without the interpreter's
    teardown of every imported module: after ``eval`` has imported inspect, that teardown alone
    took 5-6 s on a loaded 2-core machine, most of the wait after Ctrl-C (issue 26). Whatever a
    run keeps is written and closed by then (the log, the lock, the model's child process)."""
    import atexit
    import os

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
