"""The one place proagent reaches into inspect_ai's internals (written against inspect_ai 0.3.285).

inspect's public API lacks four hooks :func:`proagent.bench.running.run_task` needs; each
shim here names the hook it stands in for. ``tests/bench/test_inspect_hooks.py`` checks that every
internal used still has the shape this module expects, so an inspect upgrade that moves one
fails that test instead of a user's run. Nothing else in proagent imports ``inspect_ai._...``.

1. :func:`hook_folder_check`: ``eval_set`` checks that its log folder holds only logs of the
   tasks it runs (``inspect_ai._eval.evalset.validate_eval_set_prerequisites``) and raises
   ``PrerequisiteError``, which it also raises for other prerequisites, told apart only by
   message text; and it offers no callback once the check passed. Missing hooks: a typed
   error for "the folder holds logs of another task" and an "about to run" callback. The
   shim wraps the check: :class:`OtherRunInFolder` (a :class:`~proagent.errors.RunError`),
   then the callback given to :func:`after_folder_check`.
2. :func:`hook_folder_check` also makes no logs read as not done: ``all_evals_succeeded([])``
   is true, so after a Ctrl-C that left no log ``eval_set`` printed "Completed all tasks ...
   successfully". Missing hook: none; the predicate itself is wrong for an empty list.
3. :func:`prerequisite_error`: the class of inspect's prerequisite errors
   (``inspect_ai._util.error.PrerequisiteError``), not exported.
4. :func:`remove_sample_buffer`: the sample buffer of a superseded log
   (``inspect_ai.log._recorders.buffer.buffer.cleanup_sample_buffers_for_log``), not exported.
5. :func:`failure_types`: a failed run's exception survives only as text
   (``EvalError.message``, ``.traceback``): the exception class names are read from the
   traceback, so callers tell failures apart by class name, not by message wording.
6. :func:`hook_short_errors`: a failed task's panel shows the whole rich traceback
   (``inspect_ai._display.core.results.rich_traceback``, 160-400 lines for a wrong API key or
   an unreachable endpoint) above proagent's own one-line error. Missing hook: an option for
   the panel's body. The shim shows the exception's class and first line there; the whole
   traceback stays in the log (``inspect view``).
7. :func:`hook_retry_progress`: inspect retries a failed model call (tenacity, its
   ``before_sleep`` calls ``inspect_ai.model._model.log_model_retry``) and logs each retry at its
   ``HTTP`` level, which is not shown, so an endpoint answering HTTP 500 or refusing connections
   was ~20-30 s of silence. inspect's public ``Hooks.on_model_retry`` gives the attempt and the
   wait but not the exception (its message, the address it went to). Missing hook: the retry's
   exception. The shim wraps ``log_model_retry`` (looked up at each ``generate`` call) and prints
   one line per retry to stderr (:func:`retry_line`), then calls inspect's own.
8. :func:`hook_no_retry_advice`: an interrupted task's panel ends with "Resume task with:
   inspect eval-retry LOG" (``inspect_ai._display.core.results.task_can_retry``), wrong for a
   proagent command, which resumes by running the same command again (its own ``Error: run
   interrupted; re-run the same command to resume ...`` line follows). Missing hook: an option for
   the advice. The shim answers "cannot retry" there, so the panel says only how many samples
   were logged.
9. :func:`task_input_errors`: inspect's command line (``inspect eval proagent/help -T data=...``)
   prints a task's exception with its whole traceback, except its ``PrerequisiteError``, which it
   prints as its message alone (``inspect_ai._util.error.exception_hook``). Missing hook: a way
   for a task to refuse its arguments in one line. The shim (a decorator under ``@task``) turns a
   :class:`~proagent.errors.DataError` or :class:`~proagent.errors.UsageError` raised while the
   task is built into that class, with proagent's ``Error: ...`` line as its message, only when
   inspect's command line is the program (``inspect_ai._cli.main`` loaded); ``proagent``
   commands and Python callers get the error itself. A missing or unknown argument (bound against
   the task's signature before it is called) and a ``ValueError`` raised while the task is built
   (``-T seed=abc``) are refused the same way.
11. :func:`hook_mock_token_count`: inspect's ``mockllm/`` provider fills in each answer's token
   usage with tiktoken's ``o200k_base`` table (``inspect_ai.model._tokens.count_text_tokens``),
   which tiktoken downloads on first use: an offline ``--model mockllm/model`` failed with a
   connection error (blamed on "the model API"). Missing hook: a token counter per provider. The
   shim gives ``MockLLM`` (``inspect_ai.model._providers.mockllm``) a count of characters / 4
   (OpenAI's rule of thumb for English text): a mock's usage figures, nothing downloaded.
12. :func:`hook_unknown_task_args`: inspect drops a ``-T`` argument a task does not take with a
   warning ("param 'foo' not used by task", ``inspect_ai._eval.registry.task_create``) and runs
   the task without it. Missing hook: a way to refuse it. The shim is a filter on that module's
   logger that raises inspect's ``PrerequisiteError`` instead (``Error: -T foo=...: not an
   argument of this task``, exit 1) for a ``proagent/`` task.
13. :func:`hook_retry_wait`: inspect waits between the retries of a failed model call with
   tenacity's ``wait_exponential_jitter(initial=3, max=1800, jitter=3)``
   (``inspect_ai.model._retry.model_retry_config``) unless the provider's ``ModelAPI.retry_wait()``
   returns a wait of its own (the base class returns ``None``; vLLM, SGLang and Grok override it).
   Missing hook: a setting for the wait. The shim gives the base class a ``retry_wait`` that,
   while a first wait is configured (``PROAGENT_API_RETRY_WAIT``), returns the same curve scaled
   to it (``initial=jitter=`` that wait), else inspect's own.
10. :func:`error_line`: a provider's failed request reaches the caller of ``Model.generate`` as
   ``inspect_ai.model._model.ModelGenerateError`` (not exported), whose text is the whole request
   (every prompt: screen text) before the provider's error, raised ``from`` that error. Missing
   hook: the provider's exception itself. The shim reads the error it was raised from.
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from ..errors import RunError, UsageError

__all__ = [
    "OtherRunInFolder",
    "after_folder_check",
    "failure_types",
    "hook_folder_check",
    "error_line",
    "hook_mock_token_count",
    "hook_unknown_task_args",
    "failure_line",
    "hook_no_retry_advice",
    "hook_retry_progress",
    "hook_retry_wait",
    "hook_short_errors",
    "prerequisite_error",
    "provider_error",
    "remove_sample_buffer",
    "retried_error",
    "retry_line",
    "task_input_errors",
]

INSPECT_VERSION = "0.3.285"
"""The inspect_ai release these shims were written against (``pyproject.toml`` pins it)."""


class OtherRunInFolder(RunError):
    """The log folder holds logs of a task other than the one being run (other options)."""

    def __init__(self) -> None:
        super().__init__("the log folder holds a run with other options")


_after_check: list[Callable[[], None]] = []
"""The pending callback of the run in progress (emptied once called; inspect may run its
folder check in another thread, so not a context variable)."""


@contextmanager
def after_folder_check(callback: Callable[[], None] | None) -> Iterator[None]:
    """Call ``callback`` once, when the folder check of the ``eval_set`` run inside this block
    passed (before any sample runs); with no hooked check (:func:`hook_folder_check` false),
    at once."""
    _after_check[:] = [callback] if callback is not None else []
    try:
        if not hook_folder_check():
            _folder_checked()
        yield
    finally:
        _after_check.clear()


def _folder_checked() -> None:
    while _after_check:
        _after_check.pop()()


def hook_folder_check() -> bool:
    """Install shims 1 and 2 (once per process). False when this inspect has no folder check
    to wrap (then no run is refused as another run's folder and no callback waits for it)."""
    from inspect_ai._eval import evalset

    check = getattr(evalset, "all_evals_succeeded", None)
    if check is not None and not getattr(check, "_proagent", False):

        def succeeded(logs: list) -> bool:
            return bool(logs) and check(logs)

        succeeded._proagent = True  # type: ignore[attr-defined]
        evalset.all_evals_succeeded = succeeded

    validate = getattr(evalset, "validate_eval_set_prerequisites", None)
    if validate is None:
        return False
    if getattr(validate, "_proagent", False):
        return True

    def validated(resolved_tasks: Any, all_logs: list, log_dir_allow_dirty: bool, eval_set_args: Any) -> list:
        ours = validate(resolved_tasks, all_logs, True, eval_set_args)  # the logs of these tasks
        if not log_dir_allow_dirty and len(ours) < len(all_logs):
            raise OtherRunInFolder
        _folder_checked()
        return ours

    validated._proagent = True  # type: ignore[attr-defined]
    evalset.validate_eval_set_prerequisites = validated
    return True


def hook_short_errors() -> bool:
    """Install shim 6 (once per process). False when this inspect renders no such panel."""
    from inspect_ai._display.core import results

    full = getattr(results, "rich_traceback", None)
    if full is None:
        return False
    if getattr(full, "_proagent", False):
        return True

    def short(exc_type: Any, exc_value: BaseException, exc_traceback: Any, *a: Any, **k: Any) -> Any:
        from rich.text import Text

        return Text(f"{error_line(exc_value)}\n(the whole traceback is in the log: inspect view)")

    short._proagent = True  # type: ignore[attr-defined]
    results.rich_traceback = short
    return True


def hook_no_retry_advice() -> bool:
    """Install shim 8 (once per process; proagent's runs only, :func:`proagent.bench.running.run_task`).
    False when this inspect gives no such advice."""
    from inspect_ai._display.core import results

    can_retry = getattr(results, "task_can_retry", None)
    if can_retry is None:
        return False
    if getattr(can_retry, "_proagent", False):
        return True

    def never(profile: Any) -> bool:
        return False

    never._proagent = True  # type: ignore[attr-defined]
    results.task_can_retry = never
    return True


def hook_retry_progress(attempts: int) -> bool:
    """Install shim 7 (once per process): one stderr line per retried model call
    (:func:`retry_line`), ``attempts`` being the attempts a call gets in all (``max_retries`` + 1,
    what proagent configures for every model API). False when this inspect has no such function."""
    from inspect_ai.model import _model

    original = getattr(_model, "log_model_retry", None)
    if original is None:
        return False
    _retry_attempts[:] = [attempts]
    if getattr(original, "_proagent", False):
        return True

    async def progress(model_name: str, retry_state: Any, *a: Any, **k: Any) -> None:
        try:
            print(retry_line(model_name, retry_state, _retry_attempts[0]), file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001 - a progress line never stops a call
            pass
        await original(model_name, retry_state, *a, **k)

    progress._proagent = True  # type: ignore[attr-defined]
    progress.__wrapped__ = original  # type: ignore[attr-defined]
    _model.log_model_retry = progress
    return True


_retry_attempts: list[int] = [0]
"""Attempts per call in all, as :func:`hook_retry_progress` was last told (0: unknown)."""


def hook_retry_wait(first_s: float | None) -> bool:
    """Install shim 13 (once per process) and set the first retry wait of a model API call that
    has no wait of its own: ``first_s`` seconds (then doubling, plus up to ``first_s`` of jitter,
    at most 30 minutes: inspect's curve with 3 replaced), or ``None`` for inspect's own 3 s.
    False when this inspect's ``ModelAPI`` has no ``retry_wait``."""
    from inspect_ai.model import ModelAPI

    original = getattr(ModelAPI, "retry_wait", None)
    if original is None:
        return False
    _retry_wait_s[:] = [first_s]
    if getattr(original, "_proagent", False):
        return True

    def retry_wait(self: Any) -> Any:
        first = _retry_wait_s[0]
        if first is None:
            return original(self)
        from tenacity import wait_exponential_jitter

        return wait_exponential_jitter(initial=first, max=30 * 60, jitter=first)

    retry_wait._proagent = True  # type: ignore[attr-defined]
    retry_wait.__wrapped__ = original  # type: ignore[attr-defined]
    ModelAPI.retry_wait = retry_wait  # type: ignore[method-assign]
    return True


_retry_wait_s: list[float | None] = [None]
"""The first retry wait (s) :func:`hook_retry_wait` was last given (``None``: inspect's own)."""


def retry_line(model_name: str, retry_state: Any, attempts: int = 0) -> str:
    """The progress line of one retry, from tenacity's ``RetryCallState`` (``attempt_number``:
    the attempt that failed, from 1; ``upcoming_sleep``: seconds before the next; ``outcome``:
    the failed attempt). Names the address the request went to (scheme, host, port: no path,
    no key) when the exception carries its request, else the model, and the exception's class
    and first line (at most 200 characters), e.g. ``model API at http://127.0.0.1:8000: attempt
    1 of 3 failed (InternalServerError: Error code: 500 ...); retrying in 4 s``."""
    ex = retry_state.outcome.exception() if retry_state.outcome is not None else None
    where = _request_address(retried_error(ex)) or model_name
    k = retry_state.attempt_number
    of = f" of {attempts}" if attempts >= k else ""
    return (
        f"model API at {where}: attempt {k}{of} failed ({error_line(ex)}); "
        f"retrying in {_seconds(retry_state.upcoming_sleep)} s"
    )


def _seconds(s: float) -> str:
    """Whole seconds, or tenths below 1 s (a short ``PROAGENT_API_RETRY_WAIT``): 4, 0.3."""
    return f"{s:.0f}" if s >= 1 else f"{s:.1f}"


def retried_error(ex: BaseException | None) -> BaseException | None:
    """A tenacity ``RetryError`` (what inspect raises once a call's retries ran out, and what a
    provider's own retry loop below inspect's raises) unwrapped to its last attempt's exception."""
    from tenacity import RetryError

    while isinstance(ex, RetryError) and ex.last_attempt is not None and ex.last_attempt.exception() is not None:
        ex = ex.last_attempt.exception()
    return ex


def error_line(ex: BaseException | None) -> str:
    """``Class: first line`` of an exception (unwrapped by :func:`retried_error`; the line cut at
    200 characters): a model API's failure in one line."""
    ex = provider_error(retried_error(ex))
    if ex is None:
        return "no answer"
    line = _first_line(ex)
    cause = ex.__cause__
    if cause is not None and _first_line(cause) and _first_line(cause) not in line:
        line += (
            f" ({_first_line(cause)})"  # openai's "Connection error." hides httpx's "[Errno 111] Connection refused"
        )
    return f"{type(ex).__name__}: {line[:200]}" if line else type(ex).__name__


def provider_error(ex: BaseException | None) -> BaseException | None:
    """Shim 10: inspect's ``ModelGenerateError`` (its text: the request, then the provider's error)
    unwrapped to the provider's exception it was raised from (``__cause__``, e.g. openai's
    ``BadRequestError``); any other exception as it is."""
    from inspect_ai.model import _model

    wrapper = getattr(_model, "ModelGenerateError", None)
    while wrapper is not None and isinstance(ex, wrapper) and ex.__cause__ is not None:
        ex = ex.__cause__
    return ex


def _first_line(ex: BaseException) -> str:
    return next((ln.strip() for ln in str(ex).splitlines() if ln.strip()), "")


def _request_address(ex: BaseException | None) -> str:
    """``scheme://host:port`` of the request an (openai, httpx) exception carries; '' when none."""
    try:
        url = ex.request.url  # type: ignore[union-attr]
        port = f":{url.port}" if url.port else ""
        return f"{url.scheme}://{url.host}{port}" if url.host else ""
    except Exception:  # noqa: BLE001 - not every exception carries a request
        return ""


_F = TypeVar("_F", bound=Callable[..., Any])


def task_input_errors(fn: _F) -> _F:
    """Shim 9, a decorator under ``@task``: on inspect's command line a task's arguments are
    bound against its signature before it is called (a missing or unknown one, or a value that
    is not the ``int``/``float``/``bool`` its annotation names, e.g. ``-T seed=abc``: a
    :class:`~proagent.errors.UsageError` naming ``-T NAME=...``), and a ``ValueError`` (so a
    :class:`~proagent.errors.DataError` or :class:`~proagent.errors.UsageError`) raised while the
    task is built reaches inspect as its ``PrerequisiteError`` (printed as ``Error: <its first
    line>``, exit code 1, no traceback). Anywhere else (``proagent eval``, a Python caller) the
    task is called as it is and its errors propagate unchanged. The signature is kept
    (``functools.wraps``), so ``-T`` arguments are read as before."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def built(*args: Any, **kwargs: Any) -> Any:
        if "inspect_ai._cli.main" not in sys.modules:  # not inspect's command line
            return fn(*args, **kwargs)
        try:
            _check_arguments(signature, args, kwargs)
            return fn(*args, **kwargs)
        except ValueError as e:
            from rich.text import Text

            line = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), type(e).__name__)
            raise prerequisite_error()(Text(f"Error: {line}")) from None  # Text: no rich markup read from a path

    return built  # type: ignore[return-value]


_KINDS: dict[Any, tuple[type, str]] = {
    "int": (int, "an integer"),
    int: (int, "an integer"),
    "float": (float, "a number"),
    float: (float, "a number"),
    "bool": (bool, "true or false"),
    bool: (bool, "true or false"),
}
"""Annotations whose values :func:`_check_arguments` checks (``from __future__ import
annotations`` leaves them as strings), with what inspect's ``-T`` (YAML) makes of a good value."""


def _check_arguments(signature: inspect.Signature, args: tuple, kwargs: dict[str, Any]) -> None:
    """Raise :class:`~proagent.errors.UsageError` (``-T NAME=...``) for the first missing or
    unknown argument, or one whose value is not of its ``int``/``float``/``bool`` annotation."""
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        params = signature.parameters
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            for name in kwargs:
                if name not in params:
                    raise UsageError(
                        f"-T {name}=...", f"not an argument of this task (it takes {', '.join(params)})"
                    ) from None
        for i, (name, p) in enumerate(params.items()):
            if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                if name not in kwargs and i >= len(args):
                    raise UsageError(f"-T {name}=...", "missing (a required argument of this task)") from None
        raise
    for name, value in bound.arguments.items():
        kind = _KINDS.get(signature.parameters[name].annotation)
        if kind is None or value is None:
            continue
        ok = (
            isinstance(value, bool) if kind[0] is bool else isinstance(value, (int, float) if kind[0] is float else int)
        )
        if not ok or (kind[0] is not bool and isinstance(value, bool)):
            raise UsageError(f"-T {name}={value}", f"expected {kind[1]}")


def hook_mock_token_count() -> bool:
    """Install shim 11: inspect's ``MockLLM`` counts tokens as characters / 4 (no tiktoken table,
    nothing downloaded). Idempotent; False when this inspect has no such provider."""
    try:
        from inspect_ai.model._providers.mockllm import MockLLM
    except ImportError:
        return False
    if getattr(MockLLM.count_text_tokens, "_proagent", False):
        return True

    async def count_text_tokens(self: Any, text: str) -> int:
        return max(1, len(str(text)) // 4)

    count_text_tokens._proagent = True  # type: ignore[attr-defined]
    MockLLM.count_text_tokens = count_text_tokens  # type: ignore[method-assign]
    return True


_UNUSED_PARAM = re.compile(r"^param '(?P<name>[^']+)' not used by task '(?P<task>proagent/[^']+)'$")


class _UnknownTaskArgs:
    """The logging filter of shim 12 (raises on inspect's "param ... not used by task" warning)."""

    _proagent = True

    def filter(self, record: Any) -> bool:
        m = _UNUSED_PARAM.match(str(record.getMessage()))
        if m is None:
            return True
        from rich.text import Text

        # one short line (rich wraps a long one): the task's docstring lists its arguments
        raise prerequisite_error()(Text(f"Error: -T {m['name']}=...: not an argument of {m['task']}"))


def hook_unknown_task_args() -> bool:
    """Install shim 12 (once per process): an unknown ``-T`` argument of a ``proagent/`` task is
    inspect's ``PrerequisiteError`` (one ``Error:`` line, exit 1), not a warning before a run
    without it."""
    import logging

    log = logging.getLogger("inspect_ai._eval.registry")
    if not any(getattr(f, "_proagent", False) for f in log.filters):
        log.addFilter(_UnknownTaskArgs())
    return True


def prerequisite_error() -> type[Exception]:
    """inspect's ``PrerequisiteError`` (raised by ``eval_set`` before any sample runs)."""
    from inspect_ai._util.error import PrerequisiteError

    return PrerequisiteError


def remove_sample_buffer(log_location: str) -> None:
    """Remove the sample buffer inspect keeps for the log at ``log_location``."""
    from inspect_ai.log._recorders.buffer.buffer import cleanup_sample_buffers_for_log

    cleanup_sample_buffers_for_log(log_location)


_EXC_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?([A-Z]\w*(?:Error|Exception|Exceeded|Timeout|Retry\w*))\b", re.M)


_EXC_TEXT = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?([A-Z]\w*(?:Error|Exception|Exceeded|Timeout)): (.+)$", re.M)


def failure_line(error: Any) -> str:
    """``Class: message`` of the innermost cause in a failed run's ``EvalError`` traceback other
    than tenacity's ``RetryError`` (whose text names only a Future), e.g. ``InternalServerError:
    Error code: 500 - ...``; the error's message when the traceback has none; '' for ``None``."""
    if error is None:
        return ""
    found = [(c, m.strip()) for c, m in _EXC_TEXT.findall(getattr(error, "traceback", "") or "") if c != "RetryError"]
    if found:
        return f"{found[0][0]}: {found[0][1][:200]}"
    return " ".join(str(getattr(error, "message", "") or "").split())[:200]


def failure_types(error: Any) -> set[str]:
    """The exception class names (unqualified, e.g. ``APIConnectionError``,
    ``LocalModelError``) in a failed run's ``EvalError`` traceback: the raised one and those
    chained to it; empty for ``None``."""
    if error is None:
        return set()
    text = f"{getattr(error, 'traceback', '') or ''}\n{getattr(error, 'message', '') or ''}"
    return set(_EXC_LINE.findall(text))
