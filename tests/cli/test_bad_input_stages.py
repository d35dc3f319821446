"""Issue 26's findings against the newer commands (capture, annotate, curate, review, live, train
when / sft / lora, eval --decider, stats, synth, simulate), each as a new user might trip on it.

Every refusal is checked with :func:`refusal.refused`: the documented exit code, one ``Error:``
line naming the file or option, no traceback, and nothing under the workspace created or changed
(no lock, no empty ``--out``, no ``logs/``). The capture cases that get past the display check run
in a real X server (Xvfb) and skip without one.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from refusal import one_error, refused
from system import require_binary
from test_bad_input import _write, make_raw_db, session

from proagent.cli import cli

MOCK = ("--model", "mockllm/model")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    w = tmp_path / "w"
    _write(w / "pb" / "code_1.json", session())
    monkeypatch.chdir(w)
    for var in [v for v in os.environ if v.startswith("PROAGENT_") and v != "PROAGENT_ANSWER_CACHE"]:
        monkeypatch.delenv(var)
    for var in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(var, raising=False)
    return w


@pytest.fixture(scope="module")
def display():
    """A bare Xvfb display (no window manager): enough for capture's session check and a grab."""
    require_binary("Xvfb")
    from xsession import XSession

    with XSession(320, 240, wm=False) as xs:
        yield xs


# ------------------------------------------------------------------ capture: options (no display needed)


@pytest.mark.parametrize(
    "args, needle",
    [
        (("--interval", "inf"), "--interval"),
        (("--interval", "nan"), "--interval"),
        (("--interval", "3601"), "--interval"),
        (("--interval", "-1"), "--interval"),
        (("--ocr-interval", "inf"), "--ocr-interval"),
        (("--max-gb", "inf"), "--max-gb"),
        (("--max-gb", "1e300"), "--max-gb"),
        (("--max-days", "nan"), "--max-days"),
        (("--duration", "0s"), "--duration"),
        (("--duration", "25h"), "--duration"),
        (("--duration", "soon"), "--duration"),
        (("--idle", "-5m"), "--idle"),
        (("--split-in-app=no",), "--split-in-app"),  # a switch: --no-split-in-app
        (("--dedup-distance", "65"), "--dedup-distance"),
        (("--exclude-title", "(("), "--exclude-title"),
        (("--format", "bmp"), "--format"),
    ],
)
def test_capture_bad_options(ws: Path, args: tuple[str, ...], needle: str) -> None:
    refused(ws, ["capture", "--out", str(ws / "cap"), "--no-ocr", *args], 2, needle, outside=ws / "cap")


def test_capture_out_a_file_is_a_usage_error(ws: Path) -> None:
    refused(ws, ["capture", "--out", str(ws / "pb" / "code_1.json"), "--no-ocr"], 2, "--out")


# ------------------------------------------------------------------ capture: --out (in an X session)


def _foreign_db(w: Path) -> Path:
    (w / "foreign").mkdir()
    (w / "foreign" / "lifetrace.db").write_bytes(b"not sqlite at all" * 100)
    return w / "foreign"


def _old_db(w: Path) -> Path:
    from proagent.sources.lifetrace_write import lifetrace_ddl

    (w / "old").mkdir()
    con = sqlite3.connect(w / "old" / "lifetrace.db")
    con.executescript(lifetrace_ddl("2025-09"))
    con.close()
    return w / "old"


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda w: w / "pb", "not a capture folder"),  # a ProactiveBench data folder: never recorded into
        (_foreign_db, "cannot continue"),
        (_old_db, "2025-09"),
        (lambda w: (w / "pb" / "screenshots").mkdir() or w / "pb", "not a capture folder"),
    ],
)
def test_capture_refuses_an_out_that_is_not_its_own(
    ws: Path,
    display,
    monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
    make,
    needle: str,
) -> None:  # noqa: ANN001
    out = make(ws)
    monkeypatch.setenv("DISPLAY", display.display)
    line = refused(ws, ["capture", "--out", str(out), "--no-ocr", "--duration", "2s"], 1, needle)
    assert "--out" in line


def _run_capture(display, out: Path, *args: str) -> subprocess.Popen[str]:  # noqa: ANN001
    return subprocess.Popen(
        [sys.executable, "-m", "proagent.cli", "capture", "--out", str(out), "--no-ocr", *args],
        env=display.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_capture_duration_is_honoured_whatever_the_interval(ws: Path, display) -> None:  # noqa: ANN001
    t0 = time.monotonic()
    proc = _run_capture(display, ws / "cap", "--interval", "30", "--duration", "2s")
    text, _ = proc.communicate(timeout=60)
    took = time.monotonic() - t0
    assert proc.returncode == 0, text
    assert "capture stopped" in text
    assert took < 2 + 1 + 8, f"--duration 2s took {took:.1f} s"  # 2 s, within 1 s, plus start-up
    start = [ln for ln in text.splitlines() if ln.startswith("capturing")]
    assert start


def test_capture_stop_is_honoured_within_a_second_with_a_long_interval(ws: Path, display) -> None:  # noqa: ANN001
    out = ws / "cap"
    proc = _run_capture(display, out, "--interval", "600")
    db = out / "lifetrace.db"
    end = time.monotonic() + 30
    while not (db.exists() and (out / "capture.pid").exists()) and time.monotonic() < end:
        time.sleep(0.1)
    time.sleep(0.5)
    t0 = time.monotonic()
    r = CliRunner().invoke(cli, ["capture", "stop", str(out)])
    assert r.exit_code == 0, r.output
    text, _ = proc.communicate(timeout=20)
    assert time.monotonic() - t0 < 3 and proc.returncode == 0, text


def test_a_refused_new_capture_leaves_no_folder(ws: Path, display, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    from proagent.capture import _probe

    monkeypatch.setenv("DISPLAY", display.display)

    def no_window_probe():  # noqa: ANN202 - a probe that fails after the folder checks (as xdotool missing would)
        raise _probe.CaptureError("the window probe failed")

    monkeypatch.setattr("proagent.capture._recorder.open_window_probe", no_window_probe)
    refused(
        ws,
        ["capture", "--out", str(ws / "new" / "cap"), "--no-ocr", "--duration", "2s"],
        1,
        "window probe",
        outside=ws / "new",
    )


# ------------------------------------------------------------------ annotate


def test_annotate_reads_a_zero_byte_screenshot_as_no_text(ws: Path) -> None:
    db = ws / "raw" / "lifetrace.db"
    make_raw_db(db)
    shots = ws / "raw" / "screenshots"
    shots.mkdir()
    (shots / "a.png").write_bytes(b"")
    (shots / "b.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(200))  # a truncated/corrupt PNG
    con = sqlite3.connect(db)
    for i, name in ((1, "a.png"), (2, "b.png")):
        con.execute(
            "INSERT INTO screenshots (id, event_id, file_path, file_hash, file_size, width, height, screen_id, "
            "app_name, window_title, created_at) VALUES (?, 1, ?, ?, ?, 10, 10, 0, 'chrome', 'ChatGPT', ?)",
            (
                i,
                str(shots / name),
                hashlib.sha256(name.encode()).hexdigest(),
                (shots / name).stat().st_size,
                f"2025-11-03 10:00:{i:02d}.000000",
            ),
        )
    con.commit()
    con.close()
    r = CliRunner().invoke(cli, ["annotate", str(db), "--annotator", "text:mockllm/model", "--out", str(ws / "ann")])
    assert r.exit_code == 0, (r.output, r.exception)
    assert "Traceback" not in r.output


def test_annotate_without_rapidocr_is_one_line(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Screenshots without OCR rows must be read; RapidOCR missing is annotate.screens' DataError
    (one line, exit 1), not a RuntimeError the command converts."""
    db = ws / "raw" / "lifetrace.db"
    make_raw_db(db)
    (ws / "raw" / "screenshots").mkdir()
    png = ws / "raw" / "screenshots" / "a.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(64))
    con = sqlite3.connect(db)
    con.execute(
        "INSERT INTO screenshots (id, event_id, file_path, file_hash, file_size, width, height, screen_id, "
        "app_name, window_title, created_at) VALUES (1, 1, ?, 'h', ?, 10, 10, 0, 'chrome', 'ChatGPT', "
        "'2025-11-03 10:00:01.000000')",
        (str(png), png.stat().st_size),
    )
    con.commit()
    con.close()

    def no_rapidocr():  # noqa: ANN202
        raise ImportError("No module named 'rapidocr'")

    monkeypatch.setattr("proagent.annotate.screens.load_ocr", no_rapidocr)
    # annotate says it started reading before the first screenshot finds RapidOCR missing (issue 47: no silent
    # start), so its start line may stand before the one Error line; nothing else is printed
    r = CliRunner().invoke(
        cli, ["annotate", str(db), "--annotator", "text:mockllm/model", "--ocr", "image", "--out", str(ws / "ann")]
    )
    one_error(r, 1, "reading screenshots needs RapidOCR")
    others = [x for x in r.output.splitlines() if x.strip() and not x.startswith("Error")]
    assert all(x.startswith("proagent annotate: reading ") for x in others), others
    assert not (ws / "ann").exists()


@pytest.mark.parametrize(
    "argv, code, needle",
    [
        (["--annotator", "telepathy"], 1, "--annotator"),
        (["--annotator", "text:nosuch/provider"], 1, "--annotator"),
        (["--annotator", "text:mockllm/model", "--limit", "0"], 2, "--limit"),
        (["--annotator", "text:mockllm/model", "--out", "{w}/raw"], 1, "would replace the log"),
    ],
)
def test_annotate_refusals_leave_no_logs_folder(ws: Path, argv: list[str], code: int, needle: str) -> None:
    make_raw_db(ws / "raw" / "lifetrace.db")
    argv = ["annotate", str(ws / "raw" / "lifetrace.db"), *argv]
    if "--out" not in argv:
        argv += ["--out", str(ws / "ann")]
    refused(ws, [a.replace("{w}", str(ws)) for a in argv], code, needle, outside=ws / "logs")


# ------------------------------------------------------------------ review


def _curate_output(w: Path) -> Path:
    out = w / "cur"
    (out / ".curate" / "P01").mkdir(parents=True)
    (out / ".curate" / "manifest.json").write_text(json.dumps({"raw": "x", "users": {"P01": "x"}}))
    (out / ".curate" / "P01" / "items.json").write_text(json.dumps([{"screenshot_id": 1, "image": "x.png"}]))
    return out


@pytest.mark.parametrize(
    "damage, needle",
    [
        (lambda o: (o / ".curate" / "manifest.json").write_text('{"raw": "x", "users": {"P0'), "manifest.json"),
        (lambda o: (o / ".curate" / "manifest.json").write_bytes(b"\xff\xfe\x00binary"), "manifest.json"),
        (lambda o: (o / ".curate" / "manifest.json").write_text("[1, 2]"), "manifest.json"),
        (lambda o: (o / ".curate" / "manifest.json").write_text('{"users": 7}'), "manifest.json"),
        (lambda o: (o / ".curate" / "P01" / "items.json").write_bytes(os.urandom(64) + b"\xff"), "items.json"),
        (lambda o: (o / ".curate" / "P01" / "items.json").write_text('[{"screenshot_id": 1, "ima'), "items.json"),
        (
            lambda o: (o / ".curate" / "P01" / "items.json").write_text('[{"screenshot_id": "one", "image": "a"}]'),
            "items.json",
        ),
        (lambda o: (o / ".curate" / "P01" / "items.json").write_text('{"screenshot_id": 1}'), "items.json"),
        (lambda o: (o / ".curate" / "P01" / "items.json").write_text('[7]'), "items.json"),
        (lambda o: (o / ".curate" / "manifest.json").write_text(""), "manifest.json"),
    ],
)
def test_review_refuses_a_damaged_curate_output(ws: Path, damage, needle: str) -> None:  # noqa: ANN001
    out = _curate_output(ws)
    damage(out)
    refused(ws, ["review", str(out)], 1, needle)


# ------------------------------------------------------------------ live


@pytest.mark.parametrize("speed", ["nan", "inf", "-inf", "1e-300", "-1", "1e7"])
def test_live_replay_bad_speed_creates_nothing(ws: Path, speed: str) -> None:
    (ws / "yes.json").write_text("[]")
    refused(
        ws,
        [
            "live",
            "--replay",
            str(ws / "pb"),
            "--out",
            str(ws / "live"),
            "--yes-at",
            str(ws / "yes.json"),
            "--model",
            "none",
            "--speed",
            speed,
        ],
        2,
        "--speed",
        outside=ws / "live",
    )


# ------------------------------------------------------------------ train sft / lora, train when


@pytest.mark.parametrize(
    "config, needle",
    [
        ('{"model_type": "llama", "hidden', "config.json"),
        ("[]", "config.json"),
        ('{"hidden_size": 8}', "model_type"),
    ],
)
def test_train_lora_damaged_base_is_one_line_and_no_out(ws: Path, config: str, needle: str) -> None:
    pytest.importorskip("peft")
    base = ws / "base"
    base.mkdir()
    (base / "config.json").write_text(config)
    refused(
        ws,
        ["train", "lora", "--data", str(ws / "pb"), "--base", str(base), "--out", str(ws / "ft")],
        1,
        needle,
        outside=ws / "ft",
        quiet=False,
    )


@pytest.mark.parametrize("fraction", ["1.5", "0", "1", "nan", "-0.2"])
def test_train_when_train_fraction_is_a_usage_error(ws: Path, fraction: str) -> None:
    refused(
        ws,
        ["train", "when", "--data", str(ws / "pb"), "--out", str(ws / "dec"), "--train-fraction", fraction],
        2,
        "--train-fraction",
        outside=ws / "dec",
    )


def test_train_when_refusal_leaves_no_out(ws: Path) -> None:
    _write(ws / "bad" / "x.json", "{not json")
    refused(
        ws,
        ["train", "when", "--data", str(ws / "bad"), "--out", str(ws / "dec")],
        1,
        "bad",
        outside=ws / "dec",
        quiet=False,
    )


# ------------------------------------------------------------------ eval --decider


def _decider(w: Path, model: object, **manifest: object) -> Path:
    import skops.io as sio

    from proagent.agent.decider._embedding import EMBEDDING_MODEL
    from proagent.agent.decider._features import FEATURE_VERSION, FeatureConfig, feature_names
    from proagent.agent.decider._model import MANIFEST_FORMAT, MANIFEST_VERSION

    folder = w / "dec"
    folder.mkdir()
    sio.dump(model, folder / "model.skops")
    groups = FeatureConfig()
    m = {
        "format": MANIFEST_FORMAT,
        "manifest_version": MANIFEST_VERSION,
        "feature_version": FEATURE_VERSION,
        "embedding_model": EMBEDDING_MODEL,
        "feature_groups": list(groups.groups),
        "threshold": 0.5,
        "n_features": len(feature_names(groups)),
        "model_file": "model.skops",
        "model_sha256": hashlib.sha256((folder / "model.skops").read_bytes()).hexdigest(),
        **manifest,
    }
    (folder / "manifest.json").write_text(json.dumps(m))
    return folder


def test_eval_decider_that_is_not_a_classifier_is_refused_up_front(ws: Path) -> None:
    import numpy as np
    from sklearn.preprocessing import StandardScaler

    from proagent.agent.decider._features import FeatureConfig, feature_names

    folder = _decider(ws, StandardScaler().fit(np.zeros((3, len(feature_names(FeatureConfig()))))))
    line = refused(
        ws,
        ["eval", "--data", str(ws / "pb"), "--decider", str(folder), *MOCK],
        1,
        "classifier",
        outside=ws / "logs",
        quiet=False,
    )
    assert "resume" not in line


def test_eval_decider_model_file_outside_the_folder_is_refused(ws: Path) -> None:
    from sklearn.dummy import DummyClassifier

    folder = _decider(ws, DummyClassifier())
    (ws / "elsewhere.skops").write_bytes((folder / "model.skops").read_bytes())
    m = json.loads((folder / "manifest.json").read_text())
    m["model_file"] = "../elsewhere.skops"
    (folder / "manifest.json").write_text(json.dumps(m))
    refused(
        ws,
        ["eval", "--data", str(ws / "pb"), "--decider", str(folder), *MOCK],
        1,
        "model_file",
        outside=ws / "logs",
        quiet=False,
    )


# ------------------------------------------------------------------ stats, synth, simulate


def test_stats_on_decreasing_times_says_how_few_durations_it_has(ws: Path) -> None:
    steps = session()
    for i, s in enumerate(steps):
        s["observation"]["time"] = str(1717377997 + 1000 - 100 * i)
    _write(ws / "dec" / "code_1.json", steps)
    r = CliRunner().invoke(cli, ["stats", str(ws / "dec")])
    assert r.exit_code == 0, r.output
    line = next(ln for ln in r.output.splitlines() if ln.startswith("durations:"))
    assert "n = 1 of 6 events" in line and "unknown end" in line


@pytest.mark.parametrize(
    "argv",
    [
        ["synth", "--out", "/proc/x"],
        ["synth", "--out", "/proc/x/y", "--users", "1", "--days", "1"],
        ["simulate", "{w}/pb", "--out", "/proc/x", *MOCK],
    ],
)
def test_output_under_proc_is_refused_before_any_work(ws: Path, argv: list[str]) -> None:
    t0 = time.monotonic()
    line = refused(ws, [a.replace("{w}", str(ws)) for a in argv], 1, "--out", outside=ws / "logs")
    assert "cannot write" in line and "GB" not in line
    assert time.monotonic() - t0 < 20


# ------------------------------------------------------------------ curate


@pytest.fixture
def lt_shots(ws: Path) -> Path:
    from proagent.synth.generator import SynthConfig, generate

    generate(ws / "lt", SynthConfig(users=1, days=1, seed=1, screenshots=True))
    return ws / "lt" / "U001"


def test_curate_refuses_a_missing_screenshots_folder(ws: Path, lt_shots: Path) -> None:
    import shutil

    shutil.rmtree(lt_shots / "screenshots")
    refused(ws, ["curate", str(lt_shots), "--out", str(ws / "cur")], 1, "screenshots", outside=ws / "cur")


def test_curate_refuses_screenshots_that_are_not_images(ws: Path, lt_shots: Path) -> None:
    for p in (lt_shots / "screenshots").rglob("*.png"):
        p.write_text("not an image")
    line = refused(ws, ["curate", str(lt_shots), "--out", str(ws / "cur")], 1, "image", outside=ws / "cur")
    assert "screenshots" in line


def test_one_error_helper_is_strict() -> None:  # the helper itself can fail
    r = CliRunner().invoke(cli, ["stats", "/nonexistent/x"])
    with pytest.raises(AssertionError):
        one_error(r, 0)


# ------------------------------------------------------------------ inspect's control server


def test_no_control_server_warning_with_a_long_log_folder(ws: Path, capfd: pytest.CaptureFixture) -> None:
    log_dir = ws / ("logs-" + "x" * 90)  # the socket would be <log-dir>/.inspect-data/inspect_ai/control/<pid>.sock
    r = CliRunner().invoke(cli, ["eval", "--data", str(ws / "pb"), *MOCK, "--limit", "1", "--log-dir", str(log_dir)])
    seen = r.output + "".join(capfd.readouterr())
    assert r.exit_code == 0, seen
    assert "Control server" not in seen and "AF_UNIX" not in seen
    assert not list(log_dir.rglob("*.sock"))


# ------------------------------------------------------------------ per-command suites (>= 15 cases each)


def _base(w: Path) -> None:
    make_raw_db(w / "raw" / "lifetrace.db")
    (w / "yes.json").write_text("[]")


SUITE = [
    # live
    ("live-yes-at-missing", "live --replay {w}/pb --out {w}/l --yes-at {w}/nope.json --model none", 2, "--yes-at"),
    (
        "live-yes-at-data-file",
        "live --replay {w}/pb --out {w}/l --yes-at {w}/pb/code_1.json --model none",
        2,
        "--yes-at",
    ),
    (
        "live-every-text",
        "live --replay {w}/pb --out {w}/l --yes-at {w}/yes.json --model none --every abc",
        2,
        "--every",
    ),
    (
        "live-quiet-25h",
        "live --replay {w}/pb --out {w}/l --yes-at {w}/yes.json --model none --quiet-hours 25:00-01:00",
        2,
        "--quiet-hours",
    ),
    (
        "live-quiet-empty-range",
        "live --replay {w}/pb --out {w}/l --yes-at {w}/yes.json --model none --quiet-hours 10:00-10:00",
        2,
        "--quiet-hours",
    ),
    (
        "live-max-per-hour",
        "live --replay {w}/pb --out {w}/l --yes-at {w}/yes.json --model none --max-per-hour -1",
        2,
        "--max-per-hour",
    ),
    (
        "live-notify-empty",
        "live --replay {w}/pb --out {w}/l --yes-at {w}/yes.json --model none --notify ''",
        2,
        "--notify",
    ),
    ("live-port", "live --replay {w}/pb --out {w}/l --yes-at {w}/yes.json --model none --port 70000", 2, "--port"),
    ("live-out-file", "live --replay {w}/pb --out {w}/pb/code_1.json --yes-at {w}/yes.json --model none", 2, "--out"),
    (
        "live-two-sources",
        "live --replay {w}/pb --watch {w}/raw --out {w}/l --yes-at {w}/yes.json --model none",
        2,
        "exactly one",
    ),
    ("live-decider-not-one", "live --replay {w}/pb --out {w}/l --decider {w}/pb --model none", 1, "--decider"),
    ("live-decider-missing", "live --replay {w}/pb --out {w}/l --decider {w}/nope --model none", 2, "--decider"),
    ("live-model-unknown", "live --replay {w}/pb --out {w}/l --yes-at {w}/yes.json --model nosuch/model", 1, "--model"),
    ("live-watch-no-db", "live --watch {w}/pb --out {w}/l --yes-at {w}/yes.json --model none", 1, "pb"),
    ("live-watch-missing", "live --watch {w}/nope --out {w}/l --yes-at {w}/yes.json --model none", 2, "--watch"),
    ("live-window-0", "live --replay {w}/pb --out {w}/l --yes-at {w}/yes.json --model none --window 0s", 2, "--window"),
    (
        "live-ignore-after-text",
        "live --replay {w}/pb --out {w}/l --yes-at {w}/yes.json --model none --ignore-after xyz",
        2,
        "--ignore-after",
    ),
    (
        "live-duration-replay",
        "live --replay {w}/pb --out {w}/l --yes-at {w}/yes.json --model none --duration 1m",
        2,
        "--duration applies to --watch and --capture",
    ),
    ("live-pause-missing", "live pause {w}/nope", 2, "DIR"),
    ("live-resume-file", "live resume {w}/pb/code_1.json", 2, "DIR"),
    # review
    ("review-missing", "review {w}/nope", 1, "nope"),
    ("review-a-file", "review {w}/pb/code_1.json", 1, "code_1.json"),
    ("review-port-high", "review {w}/raw --port 70000", 2, "--port"),
    ("review-port-negative", "review {w}/raw --port -1", 2, "--port"),
    ("review-raw-log", "review {w}/raw", 1, "not a curate output"),
    # curate
    ("curate-out-data-folder", "curate {w}/raw --out {w}/pb", 1, "--out"),
    ("curate-out-file", "curate {w}/raw --out {w}/pb/code_1.json", 2, "--out"),
    ("curate-out-is-raw", "curate {w}/raw --out {w}/raw", 1, "--out"),
    ("curate-not-lifetrace", "curate {w}/pb --out {w}/cur", 1, "pb"),
    ("curate-min-event-negative", "curate {w}/raw --out {w}/cur --min-event-seconds -1", 2, "--min-event-seconds"),
    (
        "curate-review-seconds-nan",
        "curate {w}/raw --out {w}/cur --review-event-seconds nan",
        2,
        "--review-event-seconds",
    ),
    ("curate-min-event-inf", "curate {w}/raw --out {w}/cur --min-event-seconds inf", 2, "--min-event-seconds"),
    ("curate-min-llm-negative", "curate {w}/raw --out {w}/cur --min-llm-screenshots -2", 2, "--min-llm-screenshots"),
    ("curate-vlm-no-model", "curate {w}/raw --out {w}/cur --screener vlm:", 2, "--screener"),
    ("curate-neighbours-0", "curate {w}/raw --out {w}/cur --neighbour-deletions 0", 2, "--neighbour-deletions"),
    ("curate-json-as-db", "curate {w}/yes.json --out {w}/cur", 1, "yes.json"),
    ("curate-out-proc", "curate {w}/raw --out /proc/x", 1, "--out"),
    ("curate-screener-typo", "curate {w}/raw --out {w}/cur --screener ocr:fast", 2, "--screener"),
    # annotate
    ("annotate-proactivebench", "annotate {w}/pb --annotator text:mockllm/model --out {w}/ann", 1, "pb"),
    (
        "annotate-out-file",
        "annotate {w}/raw/lifetrace.db --annotator text:mockllm/model --out {w}/pb/code_1.json",
        1,
        "code_1.json",
    ),
    (
        "annotate-ocr-mode",
        "annotate {w}/raw/lifetrace.db --annotator text:mockllm/model --out {w}/ann --ocr magic",
        2,
        "--ocr",
    ),
    ("annotate-text-no-model", "annotate {w}/raw/lifetrace.db --annotator text: --out {w}/ann", 2, "--annotator"),
    (
        "annotate-limit-negative",
        "annotate {w}/raw/lifetrace.db --annotator vlm:mockllm/model --out {w}/ann --limit -3",
        2,
        "--limit",
    ),
    (
        "annotate-model-arg",
        "annotate {w}/raw/lifetrace.db --annotator text:mockllm/model --out {w}/ann --model-arg novalue",
        2,
        "--model-arg",
    ),
    ("annotate-out-proc", "annotate {w}/raw/lifetrace.db --annotator text:mockllm/model --out /proc/x", 1, "--out"),
    ("annotate-json-as-db", "annotate {w}/yes.json --annotator text:mockllm/model --out {w}/ann", 1, "yes.json"),
    (
        "annotate-log-dir-file",
        "annotate {w}/raw/lifetrace.db --annotator text:mockllm/model --out {w}/ann --log-dir {w}/pb/code_1.json",
        1,
        "--log-dir",
    ),
    ("annotate-vlm-no-model", "annotate {w}/raw/lifetrace.db --annotator vlm: --out {w}/ann", 2, "--annotator"),
    ("annotate-missing", "annotate {w}/nope --annotator text:mockllm/model --out {w}/ann", 2, "nope"),
    # train when
    ("when-data-missing", "train when --data {w}/nope --out {w}/dec", 2, "--data"),
    ("when-out-file", "train when --data {w}/pb --out {w}/pb/code_1.json", 1, "--out"),
    ("when-objective", "train when --data {w}/pb --out {w}/dec --objective auc", 2, "--objective"),
    (
        "when-objective-recall",
        "train when --data {w}/pb --out {w}/dec --objective precision-at-recall:2",
        2,
        "--objective",
    ),
    ("when-window-0", "train when --data {w}/pb --out {w}/dec --window 0s", 2, "--window"),
    ("when-feedback-not-live", "train when --data {w}/pb --out {w}/dec --feedback {w}/pb", 1, "feedback"),
    ("when-features", "train when --data {w}/pb --out {w}/dec --features nope", 2, "--features"),
    ("when-out-proc", "train when --data {w}/pb --out /proc/x", 1, "--out"),
    ("when-no-data", "train when --out {w}/dec", 2, "--data"),
    ("when-json-not-session", "train when --data {w}/yes.json --out {w}/dec", 1, "yes.json"),
    ("when-raw-unlabelled", "train when --data {w}/raw --out {w}/dec", 1, "ground truth"),
    ("when-c-nan", "train when --data {w}/pb --out {w}/dec --c nan", 2, "--c"),
    # train lora
    ("lora-base-unknown", "train lora --data {w}/pb --base nosuch --out {w}/ft", 1, "--base"),
    ("lora-base-data-folder", "train lora --data {w}/pb --base {w}/pb --out {w}/ft", 1, "--base"),
    ("lora-no-data", "train lora --out {w}/ft --base nosuch", 1, "--base"),
    ("lora-gguf-missing", "train lora --data {w}/pb --base {w}/nope.gguf --out {w}/ft", 1, "--base"),
    ("lora-base-json", "train lora --data {w}/pb --base {w}/yes.json --out {w}/ft", 1, "--base"),
    ("lora-limit-0", "train lora --data {w}/pb --out {w}/ft --limit 0", 2, "--limit"),
    ("lora-limit-1-two-labels", "train lora --data {w}/pb --out {w}/ft --limit 1", 2, "--limit: cannot draw 1"),
    ("lora-epochs-0", "train lora --data {w}/pb --out {w}/ft --epochs 0", 2, "--epochs"),
    ("lora-epochs-inf", "train lora --data {w}/pb --out {w}/ft --epochs inf", 2, "--epochs"),
    ("lora-r-0", "train lora --data {w}/pb --out {w}/ft --lora-r 0", 2, "--lora-r"),
    ("lora-lr-negative", "train lora --data {w}/pb --out {w}/ft --learning-rate -1", 2, "--learning-rate"),
    ("lora-window-99h", "train lora --data {w}/pb --out {w}/ft --window 99h", 2, "--window"),
    ("lora-out-proc", "train lora --data {w}/pb --out /proc/x", 1, "--out"),
    ("lora-data-missing", "train lora --data {w}/nope --out {w}/ft", 2, "--data"),
    ("lora-raw-unlabelled", "train lora --data {w}/raw --out {w}/ft", 1, "ground truth"),
]


@pytest.mark.parametrize("argv, code, needle", [c[1:] for c in SUITE], ids=[c[0] for c in SUITE])
def test_suite(ws: Path, argv: str, code: int, needle: str) -> None:
    import shlex

    if argv.startswith("train lora"):
        pytest.importorskip("peft")
    _base(ws)
    refused(ws, [a.replace("{w}", str(ws)) for a in shlex.split(argv)], code, needle, quiet=False, outside=ws / "logs")


def test_each_new_command_has_15_cases() -> None:
    from collections import Counter

    n = Counter(c[1].split()[0] if not c[1].startswith("train") else " ".join(c[1].split()[:2]) for c in SUITE)
    n["review"] += 10  # test_review_refuses_a_damaged_curate_output
    n["curate"] += 2  # missing / non-image screenshots
    n["annotate"] += 4  # test_annotate_refusals_leave_no_logs_folder
    n["live"] += 6  # --speed
    n["train when"] += 6  # --train-fraction and a refused run
    n["train lora"] += 3  # damaged base config
    for cmd in ("live", "review", "curate", "annotate", "train when", "train lora"):
        assert n[cmd] >= 15, (cmd, n[cmd])


def _sk_model():  # noqa: ANN202
    from sklearn.dummy import DummyClassifier

    return DummyClassifier()


@pytest.mark.parametrize(
    "edit, needle",
    [
        ({"format": "other"}, "not a proagent decider manifest"),
        ({"manifest_version": 7}, "manifest version"),
        ({"feature_version": 999}, "feature version"),
        ({"embedding_model": "bge"}, "embeddings"),
        ({"n_features": 3}, "feature count"),
        ({"threshold": 2.0}, "threshold"),
        ({"threshold": "high"}, "incomplete manifest"),
        ({"feature_groups": None}, "incomplete manifest"),
        ({"model_sha256": "0" * 64}, "SHA-256"),
        ({"model_file": ""}, "model_file"),
        ({"model_file": "/etc/passwd"}, "model_file"),
        ({"model_file": "sub/model.skops"}, "model_file"),
        ({"model_file": "nope.skops"}, "missing"),
    ],
)
def test_eval_decider_damaged_manifest(ws: Path, edit: dict, needle: str) -> None:
    folder = _decider(ws, _sk_model(), **edit)
    refused(
        ws,
        ["eval", "--data", str(ws / "pb"), "--decider", str(folder), *MOCK],
        1,
        needle,
        outside=ws / "logs",
        quiet=False,
    )


@pytest.mark.parametrize(
    "damage, needle",
    [
        (lambda f: (f / "manifest.json").write_text('{"format": "proagent-decider", '), "manifest"),
        (lambda f: (f / "manifest.json").write_bytes(b"\xff\xfe\x00"), "manifest"),
        (lambda f: (f / "manifest.json").write_text("[1, 2, 3]"), "manifest"),
    ],
)
def test_eval_decider_unreadable_manifest(ws: Path, damage, needle: str) -> None:  # noqa: ANN001
    folder = _decider(ws, _sk_model())
    damage(folder)
    refused(
        ws,
        ["eval", "--data", str(ws / "pb"), "--decider", str(folder), *MOCK],
        1,
        needle,
        outside=ws / "logs",
        quiet=False,
    )


def test_eval_decider_symlinked_model_file_is_refused(ws: Path) -> None:
    folder = _decider(ws, _sk_model())
    (ws / "elsewhere.skops").write_bytes((folder / "model.skops").read_bytes())
    (folder / "model.skops").unlink()
    (folder / "model.skops").symlink_to(ws / "elsewhere.skops")
    refused(
        ws,
        ["eval", "--data", str(ws / "pb"), "--decider", str(folder), *MOCK],
        1,
        "model_file",
        outside=ws / "logs",
        quiet=False,
    )
