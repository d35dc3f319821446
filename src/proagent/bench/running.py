"""Run one inspect task to completion in its own log folder, resumably.

Every proagent command that runs a task (``eval``, ``simulate``, ``ablate``
cells) goes through :func:`run_task`, so resuming, refusing a folder of another
run, the run lock and the messages of a stopped run are the same everywhere.

Private data stays in the log folder: inspect keeps a sample buffer (every prompt
and answer of the samples in flight) under its data folder, by default
``~/.local/share/inspect_ai/samplebuffer``, and a run killed with SIGKILL leaves it
there. For a proagent run inspect's data folder is :data:`INSPECT_DATA` inside
the log folder (``XDG_DATA_HOME`` for the duration of the run), so the buffer, and
inspect's traces, live and are recovered there, and nowhere else.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import Resume, RunError
from ..io import FolderBusy, folder_lock
from ..models.local import LocalModelError
from ._inspect_hooks import (
    OtherRunInFolder,
    after_folder_check,
    error_line,
    failure_line,
    failure_types,
    hook_mock_token_count,
    hook_no_retry_advice,
    hook_retry_progress,
    hook_retry_wait,
    hook_short_errors,
    hook_unknown_task_args,
    prerequisite_error,
    remove_sample_buffer,
    task_input_errors,
)

__all__ = [
    "API_MAX_RETRIES",
    "API_TIMEOUT",
    "INSPECT_DATA",
    "RunError",
    "api_error_line",
    "api_failure",
    "api_limits",
    "endpoint_failure",
    "endpoint_problem",
    "error_line",
    "remote_model",
    "show_retry_progress",
    "task_input_errors",
    "finished_samples",
    "inspect_hooks_for_tasks",
    "offline_mock",
    "run_task",
]

API_TIMEOUT = 60
"""Seconds one request to a model API may take (inspect's ``GenerateConfig.attempt_timeout``)
before it is abandoned; local models have none. ``PROAGENT_API_TIMEOUT`` (seconds)
overrides it."""
API_MAX_RETRIES = 2
"""Retries of a failed API request (inspect's ``max_retries``; its backoff is exponential
from 3 s, or from ``PROAGENT_API_RETRY_WAIT`` seconds when set), so an API that cannot be
reached fails the run within about ``(API_MAX_RETRIES + 1) * API_TIMEOUT`` + 20 seconds
instead of retrying for 30 minutes."""

CONTROL_SERVER = False
"""inspect's control server (``inspect ctl``: an HTTP server on an AF_UNIX socket under its data
folder) is off for proagent runs: that folder is inside the log folder (:data:`INSPECT_DATA`), so
the socket path easily passes the 108-byte ``sun_path`` limit and inspect warned "Control server
failed to start" on every run; proagent needs none of it (Ctrl-C stops a run, the same command
resumes it, and progress is in the log). Off explicitly: no socket, no warning."""

_UNREACHABLE = re.compile(r"Connect|Timeout|Unreachable|NameResolution", re.I)
"""Exception class names that mean the model API could not be reached (openai's
``APIConnectionError``, ``APITimeoutError``; httpx's ``ConnectError``, ``ReadTimeout``; ...)."""

INSPECT_DATA = ".inspect-data"
"""Folder inside a run's log folder that holds inspect's data folder during the run
(its ``samplebuffer``: prompts and answers of unfinished samples; ``traces``)."""


def run_task(
    task: Any,
    log_dir: str | Path,
    model: str,
    *,
    model_base_url: str | None = None,
    model_args: dict[str, Any] | None = None,
    limit: int | None = None,
    display: str | None = None,
    model_roles: dict[str, Any] | None = None,
    on_start: Callable[[], None] | None = None,
) -> Any:
    """Run ``task`` through inspect's ``eval_set`` (finished samples in ``log_dir``
    are reused) and return the complete :class:`~inspect_ai.log.EvalLog`.

    A local model runs one sample at a time, so per-sample seconds are true
    latencies rather than queue time. ``model_roles`` names the other roles'
    models (``judge``, ``user``, ...), as inspect's ``eval_set`` takes them.
    ``on_start`` is called once, after the folder was found to hold no run of other
    options and before any sample runs (a command prints its header there, so a
    refused folder is one ``Error`` line).

    The run holds the run lock on ``log_dir`` (:func:`proagent.io.folder_lock`):
    a folder in use by another process is refused at once.

    Raises:
        RunError: ``log_dir`` is in use by another process, holds a run of other
            options, the run was interrupted, or it failed (e.g. a prompt over
            the model's context).
    """
    try:
        with folder_lock(log_dir), _inspect_data_in(Path(log_dir)), after_folder_check(on_start):
            return _run(
                task,
                log_dir,
                model,
                model_base_url=model_base_url,
                model_args=model_args,
                limit=limit,
                display=display,
                model_roles=model_roles,
            )
    except FolderBusy as e:
        raise RunError(str(e)) from None


@contextmanager
def _inspect_data_in(log_dir: Path) -> Iterator[None]:
    """inspect's data folder (``platformdirs.user_data_path``, read at each use) inside ``log_dir``."""
    home = log_dir.resolve() / INSPECT_DATA
    home.mkdir(mode=0o700, exist_ok=True)
    old = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = str(home)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("XDG_DATA_HOME", None)
        else:
            os.environ["XDG_DATA_HOME"] = old


_API_REFUSALS = {
    "AuthenticationError": "refused the API key: check {key}",
    "PermissionDeniedError": "refused this key access to the model: check {key} and --model",
    "NotFoundError": "has no such model or path: check --model and --model-base-url",
}
"""openai's exception classes (HTTP 401, 403, 404) that a re-run cannot fix, and what the line says
(``{key}``: the variable the provider reads its key from, :func:`proagent.models.api.key_variable`)."""


def endpoint_problem(
    types: set[str] | frozenset[str],
    detail: str,
    host: str,
    key: str | None,
    *,
    attempts: int = API_MAX_RETRIES + 1,
    timeout: float | None = None,
) -> tuple[str, bool] | None:
    """What a model API's failure says in one line, and whether the same command may succeed later,
    from the exception class names of the failure (``types``: the raised one and those chained to
    it) and its first line (``detail``), or ``None`` when it is not the endpoint's failure (a request
    refused on its own, a bug): the one wording of ``eval`` (:func:`run_task`) and ``live`` (its How
    call and help, :func:`api_failure`).

    * unreachable (:data:`_UNREACHABLE`): ``cannot reach the model API at HOST (APIConnectionError;
      gave up after N attempts of at most T s): start its server or check --model-base-url``, resumable;
    * refused (:data:`_API_REFUSALS`, HTTP 401/403/404): ``the model API at HOST refused the API key:
      check VLLM_API_KEY (AuthenticationError: ...)``, naming ``key``, not resumable;
    * rate limit, retries run out (HTTP 5xx): ``kept refusing`` / ``kept failing``, resumable.
    """
    unreachable = sorted(t for t in types if _UNREACHABLE.search(t))
    if unreachable:
        why = next((t for t in unreachable if t.startswith("API")), unreachable[0])
        limit = f" of at most {timeout:g} s" if timeout else ""
        return (
            f"cannot reach the model API at {host} ({why}; gave up after {_attempts(attempts)}{limit}): "
            "start its server or check --model-base-url",
            True,
        )
    refused = _API_REFUSALS.keys() & set(types)
    if refused:
        kind = min(refused)
        what = _API_REFUSALS[kind].format(key=key or "the key its provider reads")
        detail = " ".join(str(detail).split()).removeprefix(f"{kind}: ")
        return f"the model API at {host} {what} ({kind}: {detail[:200]})", False
    if "RateLimitError" in types:
        return f"the model API at {host} kept refusing for its rate limit after {_attempts(attempts)}", True
    if "RetryError" in types:  # HTTP 5xx and other transient failures, retried to the end
        return f"the model API at {host} kept failing ({detail}; gave up after {_attempts(attempts)})", True
    return None


def _attempts(n: int) -> str:
    return f"{n} attempt" + ("" if n == 1 else "s")


def api_failure(
    ex: BaseException,
    model: str,
    base_url: str | None = None,
    *,
    api: Any = None,
    attempts: int = API_MAX_RETRIES + 1,
    timeout: float | None = None,
) -> RunError | None:
    """A model call's exception as the :class:`RunError` of :func:`endpoint_problem` (one line:
    the endpoint, what failed, the fix, the key variable), or ``None`` when it is not the
    endpoint's failure (:func:`endpoint_failure`). ``api``: the model's inspect ``ModelAPI`` (its
    ``base_url`` and key variables), ``attempts``/``timeout``: what the call was given."""
    if not endpoint_failure(ex):
        return None
    from ..models.api import key_variable

    types = _exception_types(ex)
    base = base_url or getattr(api, "base_url", None)
    found = endpoint_problem(
        types, error_line(ex), _address(base, model), key_variable(model, api), attempts=attempts, timeout=timeout
    )
    if found is None:
        return None
    problem, again = found
    return RunError(problem, resume=Resume.SAME_COMMAND if again else None)


def _exception_types(ex: BaseException) -> set[str]:
    """Class names of ``ex`` and every exception chained to it (``__cause__``, ``__context__``, a
    tenacity ``RetryError``'s last attempt)."""
    from ._inspect_hooks import retried_error

    seen: set[int] = set()
    names: set[str] = set()
    todo: list[BaseException | None] = [ex]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        names.add(type(e).__name__)
        inner = retried_error(e)
        todo += [e.__cause__, e.__context__, inner if inner is not e else None]
    return names


def _run(
    task: Any,
    log_dir: str | Path,
    model: str,
    *,
    model_base_url: str | None,
    model_args: dict[str, Any] | None,
    limit: int | None,
    display: str | None,
    model_roles: dict[str, Any] | None,
) -> Any:
    from inspect_ai import eval_set
    from inspect_ai.log import read_eval_log

    local = model.startswith("local/")
    limits = {} if local else api_limits()
    offline_mock()
    hook_short_errors()
    hook_no_retry_advice()  # the resume is the same proagent command, not inspect eval-retry
    try:
        _, logs = eval_set(
            [task],
            log_dir=str(log_dir),
            model=model,
            model_base_url=model_base_url,
            model_args=model_args or {},
            model_roles=model_roles or None,
            limit=limit,
            display=display,
            retry_attempts=0,
            retry_immediate=False,
            log_model_api=False,
            max_samples=1 if local else None,
            ctl_server=CONTROL_SERVER,
            # a local model answers one sample in seconds: write each finished one to the log
            # at once, so a kill loses only the sample in flight
            **({"log_buffer": 1} if local else limits),
        )
    except OtherRunInFolder:
        raise RunError(f"{log_dir} holds a run with other options", resume=Resume.SAME_OPTIONS_OR_NEW_FOLDER) from None
    except prerequisite_error() as e:
        raise RunError(re.sub(r"\[/?[a-z ]+\]", "", str(e)).strip()) from None  # rich markup off
    if not logs or logs[0].status == "cancelled":  # interrupted (Ctrl-C)
        raise RunError("run interrupted", resume=Resume.SAME_COMMAND, folder=log_dir, interrupted=True)
    log = logs[0]
    if log.status != "success":
        msg = log.error.message if log.error else log.status
        types = failure_types(log.error)
        if LocalModelError.__name__ in types:  # llama.cpp refused the request: the same command would fail the same way
            raise RunError(f"run did not finish: {msg}")
        found = None
        if remote_model(model) and endpoint_problem(types, "", "", None) is not None:  # not for mockllm/
            from ..models.api import key_variable

            detail = failure_line(log.error) if "RetryError" in types else msg
            found = endpoint_problem(
                types,
                detail,
                _host(model, model_base_url, model_args),
                key_variable(model, _api_of(model, model_base_url, model_args)),
                timeout=limits.get("attempt_timeout"),
            )
        if found is not None:  # a refusal: the same command would be refused the same way, no resume advice
            problem, again = found
            raise RunError(problem, resume=Resume.SAME_COMMAND if again else None, folder=log_dir if again else None)
        raise RunError(
            f"run did not finish ({failure_line(log.error) or msg})", resume=Resume.SAME_COMMAND, folder=log_dir
        )
    _remove_superseded(Path(log_dir), log.location)
    full = read_eval_log(log.location)
    full.location = log.location.removeprefix("file://")  # a resumed run reports a file:// URI; keep a path
    return full


def offline_mock() -> None:
    """inspect's ``mockllm/`` needs no network: its token usage is counted as characters / 4, not
    with tiktoken's table, which tiktoken downloads on first use (``_inspect_hooks`` shim 11).
    Called wherever a mock model may answer (``run_task``, live's How and help models)."""
    hook_mock_token_count()


def inspect_hooks_for_tasks() -> None:
    """What inspect's own command line needs of proagent (called when inspect loads proagent's
    tasks): an unknown ``-T`` argument of a ``proagent/`` task is one ``Error:`` line and exit 1
    (shim 12), and ``mockllm/`` needs no network (:func:`offline_mock`)."""
    hook_unknown_task_args()
    offline_mock()


def api_limits() -> dict[str, int]:
    """inspect ``GenerateConfig`` fields that bound one call to a model API (not a local model):
    ``attempt_timeout`` (:data:`API_TIMEOUT` or ``PROAGENT_API_TIMEOUT``) and ``max_retries``
    (:data:`API_MAX_RETRIES`): eval, the teacher of ``train when`` and live's How model alike.
    Every call that gets these limits also prints one stderr line per retry (endpoint, attempt k
    of n, the error's first line, the wait: :func:`proagent.bench._inspect_hooks.retry_line`),
    installed here once per process.

    ``PROAGENT_API_RETRY_WAIT`` (seconds, e.g. ``0.5``) sets the first wait between retries of a
    provider without a wait of its own (then doubling, plus up to as much jitter; default inspect's
    3 s): a local proxy that restarts in a second, or a test of the retries, need not wait 9-15 s.

    Raises:
        RunError: ``PROAGENT_API_TIMEOUT`` is not a whole number of seconds >= 1, or
            ``PROAGENT_API_RETRY_WAIT`` not a number of seconds in (0, 60].
    """
    limits = {"attempt_timeout": _api_timeout(), "max_retries": API_MAX_RETRIES}
    show_retry_progress(API_MAX_RETRIES + 1)
    return limits


def show_retry_progress(attempts: int) -> None:
    """From now on, print one stderr line per retried model call (endpoint, attempt k of
    ``attempts``, the error's first line, the wait), for callers with retry limits of their own
    (curate's screener); :func:`api_limits` does it for the rest. Also applies
    ``PROAGENT_API_RETRY_WAIT`` (see :func:`api_limits`).

    Raises:
        RunError: ``PROAGENT_API_RETRY_WAIT`` is set but not a number of seconds in (0, 60].
    """
    hook_retry_wait(_api_retry_wait())
    hook_retry_progress(attempts)


def api_error_line(ex: BaseException, attempts: int = API_MAX_RETRIES + 1) -> str:
    """One line for a model API call that failed after its retries: ``Class: first line`` of the
    last attempt's exception (inspect raises a tenacity ``RetryError`` whose text names only a
    Future), e.g. ``InternalServerError: Error code: 500 - ...``, then ``(gave up after N
    attempts)`` when the retries ran out (``attempts``: what the call was given)."""
    from tenacity import RetryError

    gave_up = f" (gave up after {attempts} attempts)" if isinstance(ex, RetryError) else ""
    return error_line(ex) + gave_up


def endpoint_failure(ex: BaseException) -> bool:
    """Whether a model call's exception is the endpoint's failure, which every later call would meet
    too, rather than this request's own: the retries ran out (a tenacity ``RetryError``: HTTP 5xx,
    rate limit, a dropped connection), the API could not be reached (:data:`_UNREACHABLE`), or it
    refused the key or the model (:data:`_API_REFUSALS`: HTTP 401, 403, 404). A request refused on
    its own (HTTP 400: too long, filtered) is not. The exception itself and those chained to it
    (``__cause__``, ``__context__``, a ``RetryError``'s last attempt) are looked at."""
    from tenacity import RetryError

    seen: set[int] = set()
    todo: list[BaseException | None] = [ex]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        name = type(e).__name__
        if isinstance(e, RetryError) or name in _API_REFUSALS or _UNREACHABLE.search(name):
            return True
        todo += [e.__cause__, e.__context__]
    return False


def finished_samples(log_dir: str | Path) -> int:
    """How many samples the logs already in ``log_dir`` hold finished without an error: what a
    resumed :func:`run_task` reuses instead of running again (the most of any one log; 0 for a new
    or empty folder). Reads the logs' sample summaries only, never a sample's messages."""
    from inspect_ai.log import list_eval_logs, read_eval_log_sample_summaries

    if not Path(log_dir).is_dir():
        return 0
    best = 0
    for info in list_eval_logs(str(log_dir), recursive=False):
        try:
            summaries = read_eval_log_sample_summaries(info)
        except Exception:  # noqa: BLE001 - a log cut by a kill: inspect recovers or replaces it, reuse nothing from it
            continue
        best = max(best, sum(1 for s in summaries if s.completed and s.error is None))
    return best


def _api_timeout() -> int:
    """:data:`API_TIMEOUT`, or ``PROAGENT_API_TIMEOUT`` when set to a whole number of seconds >= 1."""
    raw = os.environ.get("PROAGENT_API_TIMEOUT", "").strip()
    if not raw:
        return API_TIMEOUT
    if not raw.isdigit() or int(raw) < 1:
        raise RunError(f"PROAGENT_API_TIMEOUT={raw!r}: expected a whole number of seconds >= 1")
    return int(raw)


def _api_retry_wait() -> float | None:
    """``PROAGENT_API_RETRY_WAIT`` in seconds (a number in (0, 60]), ``None`` when unset (inspect's 3 s)."""
    raw = os.environ.get("PROAGENT_API_RETRY_WAIT", "").strip()
    if not raw:
        return None
    try:
        first = float(raw)
    except ValueError:
        first = float("nan")
    if not 0 < first <= 60:  # nan, inf and negatives fail here too
        raise RunError(f"PROAGENT_API_RETRY_WAIT={raw!r}: expected seconds in (0, 60], e.g. 0.5")
    return first


def remote_model(model: str) -> bool:
    """Whether ``model`` is reached over a network API (not ``local/``, ``mockllm/`` or ``none``):
    the rules of :func:`endpoint_problem` apply to it only (a mock's failure is not an API's)."""
    return not str(model).startswith(("local/", "mockllm/")) and str(model) != "none"


def _api_of(model: str, base_url: str | None, model_args: dict[str, Any] | None) -> Any:
    """The inspect ``ModelAPI`` of ``model`` (for its base URL and key variables), ``None`` when it
    cannot be made."""
    try:
        from inspect_ai.model import get_model

        return get_model(model, base_url=base_url, **(model_args or {})).api
    except Exception:  # noqa: BLE001 (only for a message)
        return None


def _host(model: str, base_url: str | None, model_args: dict[str, Any] | None) -> str:
    """The address a model API is reached at, for error messages (no keys)."""
    if not base_url:
        base_url = getattr(_api_of(model, base_url, model_args), "base_url", None)
    return _address(base_url, model)


def _address(base_url: str | None, model: str) -> str:
    """``scheme://host:port`` of ``base_url`` (no path, no credentials), or what stands for the
    provider's default address."""
    from urllib.parse import urlsplit

    if not base_url:
        return f"the default address of {model.split('/')[0]}"
    u = urlsplit(str(base_url))
    return f"{u.scheme}://{u.hostname}{f':{u.port}' if u.port else ''}" if u.hostname else str(base_url)


def _remove_superseded(log_dir: Path, final: str) -> None:
    """After a successful run, remove the logs of earlier attempts that never
    finished (status ``started``: killed; their finished samples were carried
    into the final log by the retry) and every sample buffer left in the log
    folder by a process that is gone, so the folder holds one run."""
    from inspect_ai.log import read_eval_log

    final_path = Path(final.removeprefix("file://")).resolve()
    for f in sorted(log_dir.glob("*.eval")):
        if f.resolve() == final_path:
            continue
        try:
            header = read_eval_log(str(f), header_only=True)
        except Exception:  # noqa: BLE001 (an unreadable partial log is left for the user to see)
            continue
        if header.status == "started":
            remove_sample_buffer(str(f.resolve()))
            f.unlink(missing_ok=True)
    for db in (log_dir / INSPECT_DATA).glob("inspect_ai/samplebuffer/*/*.*.db"):
        pid = db.name.rsplit(".", 2)[1]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            for part in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
                part.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
