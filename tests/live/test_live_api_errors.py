"""Live with a model API (issue 42 item 6, issue 47): a server that is down, refuses the key or has no
such model is one ``Error:`` line naming the endpoint, the fix and the key variable the provider reads
(``VLLM_API_KEY`` for ``openai-api/vllm/...``), at start-up (the warm-up), in a How call and in the
help after Accept; ``openai/<name>`` with a base URL (the Responses API) is refused in one line.
A loopback mock OpenAI server answers with the HTTP status of each case."""

from __future__ import annotations

import socket
import time
from datetime import datetime
from pathlib import Path

import pytest
from help_fixtures import store_with_offers, traceback_sample, write_capture
from mock_openai import MockOpenAI

from proagent.errors import RunError


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    cap = tmp_path_factory.mktemp("api") / "capture"
    ids = write_capture(
        cap,
        datetime(2026, 12, 3, 9, 0, 0),
        [("Code", "app.py - myapp", "def login(): pass"), ("Terminal", "~/myapp", "KeyError: 'user_id'")],
    )
    yes = cap.parent / "yes.txt"
    yes.write_text(f"{ids[1]}\n")
    return cap, yes


def _live(capture: tuple[Path, Path], out: Path, *model: str):  # noqa: ANN202
    from click.testing import CliRunner

    from proagent.cli import cli

    cap, yes = capture
    argv = ["live", "--replay", str(cap), "--out", str(out), "--yes-at", str(yes), "--speed", "0"]
    t0 = time.perf_counter()
    r = CliRunner().invoke(cli, [*argv, "--notify", "none", "--settle", "0", *model])
    return r, time.perf_counter() - t0


def _one_error(r) -> str:  # noqa: ANN001
    errors = [ln for ln in r.output.splitlines() if ln.startswith("Error:")]
    assert len(errors) == 1 and "Traceback" not in r.output, r.output
    assert len(r.output.splitlines()) <= 4, r.output  # the loading line, the error: no traceback
    return errors[0]


def test_live_with_its_model_server_down_is_one_line(
    capture: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VLLM_API_KEY", "none")
    port = _closed_port()
    r, seconds = _live(
        capture, tmp_path / "out", "--model", "openai-api/vllm/qwen", "--model-base-url", f"http://127.0.0.1:{port}/v1"
    )
    line = _one_error(r)
    assert r.exit_code == 3 and f"cannot reach the model API at http://127.0.0.1:{port}" in line, line
    assert "start its server or check --model-base-url" in line and "1 attempt of" in line
    assert seconds < 30  # the warm-up's one attempt: no retries before saying it


@pytest.mark.parametrize(
    ("status", "needle"),
    [(401, "refused the API key: check VLLM_API_KEY"), (404, "has no such model or path: check --model")],
)
def test_live_with_a_refusing_model_api_is_one_line_naming_the_key_it_reads(
    capture: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: int, needle: str
) -> None:
    monkeypatch.setenv("VLLM_API_KEY", "wrong")
    with MockOpenAI(lambda body: status) as srv:
        r, _ = _live(capture, tmp_path / "out", "--model", "openai-api/vllm/qwen", "--model-base-url", srv.base_url)
        port = srv.server.server_address[1]
    line = _one_error(r)
    assert r.exit_code == 3 and needle in line and f"127.0.0.1:{port}" in line, line
    assert "OPENAI_API_KEY" not in line and "resume" not in line  # a re-run cannot fix a key


def test_openai_with_a_base_url_is_refused_naming_the_compatible_provider(
    capture: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """inspect sends ``openai/<unknown name>`` to the Responses API (``/v1/responses``), which the mock,
    like llama.cpp's server, does not serve: refused before any request, naming ``openai-api/...``."""
    monkeypatch.setenv("OPENAI_API_KEY", "none")
    with MockOpenAI(lambda body: "Need help: No") as srv:
        r, _ = _live(capture, tmp_path / "out", "--model", "openai/qwen2.5", "--model-base-url", srv.base_url)
        sent = list(srv.requests)
    line = _one_error(r)
    assert r.exit_code == 1 and "Responses API" in line and "openai-api/<provider>/qwen2.5" in line, line
    assert "VLLM_API_KEY" in line and not sent and not (tmp_path / "out").exists()


def test_a_how_call_whose_api_fails_mid_run_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A How call (after a good warm-up) refused by the API raises the one-line RunError, not openai's."""
    from proagent.live import HowModel

    answers = iter(["Need help: No"])
    with MockOpenAI(lambda body: next(answers, 401)) as srv:
        srv.env(monkeypatch)
        how = HowModel("openai-api/mock/how-mid-run")
        how.warm()
        with pytest.raises(RunError) as got:
            how(traceback_sample())
        how.close()
    msg = str(got.value)
    assert "\n" not in msg and "refused the API key: check MOCK_API_KEY" in msg and "127.0.0.1" in msg, msg


def test_the_help_of_a_refusing_api_says_one_line_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from proagent.live import LiveHelp, make_help_model

    st, offers = store_with_offers(tmp_path)
    with MockOpenAI(lambda body: 404) as srv:
        srv.env(monkeypatch)
        help = LiveHelp(st, make_help_model("openai-api/mock/help-404", {}, None), lambda: traceback_sample().time)
        got: list[tuple[str, str]] = []
        help.subscribe(lambda k, o, t: got.append((k, t)))
        assert help.accept(offers[0].id)
        end = time.monotonic() + 20
        while help.busy(offers[0].id) and time.monotonic() < end:
            time.sleep(0.02)
        help.close()
    errors = [t for k, t in got if k == "error"]
    assert len(errors) == 1 and "\n" not in errors[0], got
    assert errors[0].startswith("the model API at http://127.0.0.1:") and "has no such model" in errors[0], errors
    assert "resume" not in errors[0]
    st.close()


def test_key_variable_is_the_one_the_provider_reads() -> None:
    from inspect_ai.model import get_model

    from proagent.models.api import key_variable

    assert key_variable("openai-api/vllm/qwen") == "VLLM_API_KEY"
    assert key_variable("openai-api/together-ai/x") == "TOGETHER_AI_API_KEY"
    assert key_variable("openai/gpt-4o") == "OPENAI_API_KEY" and key_variable("anthropic/claude") == "ANTHROPIC_API_KEY"
    assert key_variable("local/qwen2.5-coder-1.5b") is None and key_variable("mockllm/model") is None
    api = get_model("openai-api/lmstudio/m", base_url="http://127.0.0.1:9/v1", api_key="k").api
    assert key_variable("openai-api/lmstudio/m", api) == "LMSTUDIO_API_KEY"


def test_a_request_the_api_refuses_is_its_providers_line_without_the_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HTTP 400 (a prompt too long, filtered): inspect's error text is the whole request (the screen
    text); the How call and the help say the provider's line only."""
    from help_fixtures import PLANTED

    from proagent.live import HowModel, LiveHelp, make_help_model

    st, offers = store_with_offers(tmp_path)
    with MockOpenAI(lambda body: 400) as srv:
        srv.env(monkeypatch)
        how = HowModel("openai-api/mock/how-400", send_screen="raw")
        with pytest.raises(RunError) as got:
            how(traceback_sample())
        how.close()
        help = LiveHelp(
            st,
            make_help_model("openai-api/mock/help-400", {}, None),
            lambda: traceback_sample().time,
            send_screen="raw",
        )
        lines: list[str] = []
        help.subscribe(lambda k, o, t: lines.append(t) if k == "error" else None)
        assert help.accept(offers[0].id)
        end = time.monotonic() + 20
        while help.busy(offers[0].id) and time.monotonic() < end:
            time.sleep(0.02)
        help.close()
    st.close()
    for text in (str(got.value), *lines):
        assert "\n" not in text and "BadRequestError" in text and "400" in text, text
        assert "KeyError" not in text and not any(v in text for v in PLANTED.values()), text
    assert str(got.value).startswith("the How call to openai-api/mock/how-400 failed: ") and len(lines) == 1


def test_live_whose_api_starts_refusing_after_the_warm_up_stops_with_one_line(
    capture: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VLLM_API_KEY", "revoked-later")
    answers = iter(["ok"])  # the warm-up is answered, every How call after it refused
    with MockOpenAI(lambda body: next(answers, 401)) as srv:
        r, _ = _live(capture, tmp_path / "out", "--model", "openai-api/vllm/later", "--model-base-url", srv.base_url)
        n = len(srv.requests)
    line = _one_error(r)
    assert n >= 2 and r.exit_code == 3 and "refused the API key: check VLLM_API_KEY" in line, (n, r.output)
