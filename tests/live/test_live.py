"""proagent live: replay of real dev sessions with a scripted decider, a growing
LifeTrace database written by a thread, restraint, feedback.db, notify-send
replaced on PATH, and the CLI. The local page in Chromium is in test_live_page.py."""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import threading
import time
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from lifetrace_fixtures import make_participant, tiny_png  # noqa: E402

from proagent.bench.samples import SampleConfig, build_samples, candidate_moments  # noqa: E402
from proagent.cli import cli  # noqa: E402
from proagent.live import (  # noqa: E402
    DesktopNotifier,
    FeedbackStore,
    LiveAgent,
    LiveOptions,
    ReplayClock,
    Restraint,
    RestraintConfig,
    ScriptedDecider,
    block_app,
    feedback_samples,
    moment_sample,
    offer_text,
    parse_quiet_hours,
    pause,
    replay_moments,
    resume,
    run_replay,
    run_watch,
    sample_from_json,
    sample_to_json,
)
from proagent.live._agent import HowModel  # noqa: E402
from proagent.records import Event, Prediction, Screenshot  # noqa: E402
from proagent.sources.proactivebench import read_proactivebench_session  # noqa: E402

DEV = Path(__file__).resolve().parents[2] / ".." / ".." / "shared" / "data" / "proactivebench"
if not DEV.is_dir():
    DEV = Path("/work/shared/data/proactivebench")
CODE13 = DEV / "code_13.json"
needs_dev = pytest.mark.skipif(not CODE13.is_file(), reason="ProactiveBench dev sessions not present")


class Recording(ScriptedDecider):
    """A scripted decider that also keeps the samples it was asked about."""

    def __init__(self, yes: set[str]) -> None:
        super().__init__(yes=yes)
        self.samples = []

    def __call__(self, sample):  # noqa: ANN001, ANN204
        self.samples.append(sample)
        return super().__call__(sample)


def _opts(**kw) -> LiveOptions:  # noqa: ANN003
    # these tests script the decider's Yes moments; the gap and app-session limits have their own tests
    r = kw.pop("restraint", RestraintConfig(min_gap_seconds=0, one_per_app_session=False))
    return LiveOptions(
        notify=kw.pop("notify", ("none",)), every_seconds=kw.pop("every_seconds", 0.0), restraint=r, **kw
    )


# --------------------------------------------------------------------------- replay of a real dev session


@needs_dev
def test_replay_dev_session_exact_decisions_and_benchmark_samples(tmp_path: Path) -> None:
    events = read_proactivebench_session(CODE13)
    yes = {f"{events[i].id}:labelled" for i in (6, 7, 9)}
    d = Recording(yes)
    res = run_replay(CODE13, tmp_path / "run", d, _opts(), speed=0)
    # one decision per observation, in order, Yes exactly where scripted
    assert [x.sample_id for x in res.decisions] == [f"{e.id}:labelled" for e in events]
    assert [x.outcome for x in res.decisions] == ["offer" if f"{e.id}:labelled" in yes else "no" for e in events]
    assert [x.label for x in res.decisions] == [int(bool(e.needs_help)) for e in events]
    # the decider saw exactly the benchmark's samples (same window, same context)
    bench = {s.id: s for s in build_samples(events, SampleConfig(window_seconds=300.0))}
    for s in d.samples:
        b = bench[s.id]
        assert (s.time, s.current.id, [e.id for e in s.context], s.label, s.reference_queries) == (
            b.time,
            b.current.id,
            [e.id for e in b.context],
            b.label,
            b.reference_queries,
        )
    rows = FeedbackStore(tmp_path / "run").decisions()
    assert len(rows) == len(events) and all(r["decide_seconds"] >= 0 for r in rows)
    lines = (tmp_path / "run" / "decisions.jsonl").read_text().splitlines()
    assert len(lines) == len(events) and '"notification": "Need a hand with' in "".join(lines)


@needs_dev
def test_replay_rate_limit_and_resume(tmp_path: Path) -> None:
    events = read_proactivebench_session(CODE13)
    d = ScriptedDecider(yes={e.id for e in events})  # Yes at every moment (event ids match too)
    res = run_replay(
        CODE13,
        tmp_path / "r",
        d,
        _opts(restraint=RestraintConfig(min_gap_seconds=0, one_per_app_session=False, max_per_hour=3)),
        speed=0,
    )
    outcomes = [x.outcome for x in res.decisions]
    # the session lasts 9 minutes: three offers, then every Yes is held by the hourly limit
    assert outcomes == ["offer"] * 3 + ["held"] * (len(events) - 3)
    assert {x.reason for x in res.decisions[3:]} == {"max_per_hour"}
    # re-running the same command decides nothing twice
    again = run_replay(
        CODE13,
        tmp_path / "r",
        d,
        _opts(restraint=RestraintConfig(min_gap_seconds=0, one_per_app_session=False, max_per_hour=3)),
        speed=0,
    )
    assert again.decisions == []
    assert len(FeedbackStore(tmp_path / "r").decisions()) == len(events)
    # other options in the same folder are refused
    from proagent.errors import DataError

    with pytest.raises(DataError, match="other options") as refused:
        run_replay(
            CODE13,
            tmp_path / "r",
            d,
            _opts(restraint=RestraintConfig(min_gap_seconds=0, one_per_app_session=False, max_per_hour=5)),
            speed=0,
        )
    # the refusal says what the folder's run used, so that run can be resumed (a changed default)
    said = str(refused.value)
    assert "restraint.max_per_hour: 3 there, 5 now" in said and "min_gap" not in said


@needs_dev
def test_replay_speed_runs_in_accelerated_time(tmp_path: Path) -> None:
    events = read_proactivebench_session(CODE13)[:4]
    span = (events[-1].start - events[0].start).total_seconds()
    import json as _json

    data = _json.loads(CODE13.read_text())
    key = next(k for k, v in data.items() if isinstance(v, list)) if isinstance(data, dict) else None
    small = tmp_path / "code_13.json"
    if key is None:
        small.write_text(_json.dumps(data[:4]))
    else:
        small.write_text(_json.dumps({**data, key: data[key][:4]}))
    speed = span / 1.0  # the 4 events in about one second of wall time
    t0 = time.monotonic()
    res = run_replay(small, tmp_path / "s", ScriptedDecider(yes=set()), _opts(), speed=speed)
    wall = time.monotonic() - t0
    assert len(res.decisions) == 4
    assert 0.8 <= wall <= 5.0


def test_replay_lifetrace_log_matches_candidate_moments(tmp_path: Path) -> None:
    fx = make_participant(tmp_path, "P01")
    d = Recording(set())
    # settle_seconds=None: the benchmark's candidate moments (each event at its start, the one before it in front)
    res = run_replay(fx.path, tmp_path / "run", d, _opts(settle_seconds=None), speed=0)
    from proagent.sources.load import load_events

    cands = {s.id: s for s in candidate_moments(load_events(fx.path), SampleConfig(window_seconds=300.0))}
    seen = {s.id: s for s in d.samples}
    # every benchmark candidate moment is decided live, with the same sample
    assert set(cands) <= set(seen)
    for sid, b in cands.items():
        s = seen[sid]
        assert (s.time, s.current.id, [e.id for e in s.context], s.label) == (
            b.time,
            b.current.id,
            [e.id for e in b.context],
            b.label,
        )
    # moments without real activity before them are skipped, not decided
    skipped = [x for x in res.decisions if x.outcome == "skipped"]
    assert skipped and {x.reason for x in skipped} <= {"no_context", "call_app", "fullscreen", "blocked_app"}
    assert len(res.decisions) == len(fx.live_event_ids)


def test_replay_decides_each_event_once_it_settled_in_front(tmp_path: Path) -> None:
    # issue 32: the current state of a new event's moment is that event (the window in front),
    # decided at its first screenshot plus a pause of --settle seconds, never seeing later screens
    fx = make_participant(tmp_path, "P01")
    d = Recording(set())
    res = run_replay(fx.path, tmp_path / "run", d, _opts(settle_seconds=2.0), speed=0)
    from proagent.live import settled_at
    from proagent.sources.load import load_events

    events = {e.id: e for e in load_events(fx.path)}
    decided = [s for s in d.samples if s.kind == "candidate" and s.id.endswith(":candidate")]
    assert decided
    assert any(events[s.event_id].is_llm_event for s in decided) and not all(
        events[s.event_id].is_llm_event for s in decided
    )
    for s in decided:
        e = events[s.event_id]
        if e.is_llm_event:  # recorded LLM use keeps the benchmark's moment: its start, before the person's query
            assert s.time == e.start and s.current.id != e.id and s.label == 1
            continue
        assert s.current.id == s.event_id  # the window in front, not the one before it
        assert s.time == settled_at(e, e.start, None, 2.0) > e.start
        assert all(sh.time <= s.time for sh in s.current.screenshots) and s.current.end is None
        assert all(c.start < e.start for c in s.context)
    assert len(res.decisions) == len(fx.live_event_ids)


def test_ticks_inside_long_events_never_see_the_future(tmp_path: Path) -> None:
    fx = make_participant(tmp_path, "P01")
    moments = list(replay_moments(fx.path, every_seconds=30.0))
    ticks = [m for m in moments if m.trigger == "tick"]
    assert ticks
    cfg = SampleConfig()
    n = 0
    for m in ticks:
        s = moment_sample(list(m.history), m.t, cfg)
        if s is None:
            continue
        n += 1
        assert s.current.start < m.t
        assert all(sh.time <= m.t for sh in s.current.screenshots)
        assert s.current.end is None or s.current.end <= m.t
        assert all(e.start < m.t for e in s.context)
    assert n > 0


# --------------------------------------------------------------------------- restraint


def _ev(app: str, title: str, start: datetime, seconds: float = 10.0, eid: str = "1") -> Event:
    shot = Screenshot(
        id=int(eid), time=start + timedelta(seconds=1), app_name=app, window_title=title, file_name="x.png"
    )
    return Event(
        id=eid,
        user="u",
        start=start,
        end=start + timedelta(seconds=seconds),
        app_name=app,
        window_title=title,
        screenshots=(shot,),
    )


def test_restraint_before_deciding(tmp_path: Path) -> None:
    now = datetime(2026, 3, 2, 14, 0)
    r = Restraint(
        RestraintConfig(
            quiet_hours=parse_quiet_hours("22:00-08:00"), block_apps=("KeePassXC",), block_titles=(r"bank",)
        ),
        folder=tmp_path,
    )
    assert r.before(_ev("Visual Studio Code", "main.py", now), now) is None
    assert r.before(_ev("zoom.us", "Zoom Meeting", now), now) == "call_app"
    assert r.before(_ev("Google Chrome", "Meet - abc-defg-hij - Google Chrome", now), now) == "call_app"
    assert r.before(_ev("腾讯会议", "腾讯会议", now), now) == "call_app"
    assert r.before(_ev("Microsoft PowerPoint", "PowerPoint Slide Show - talk.pptx", now), now) == "fullscreen"
    assert r.before(_ev("Obsidian", "notes - Obsidian", now), now) is None  # 'obs' is a whole word only
    assert r.before(_ev("KeePassXC", "Passwords", now), now) == "blocked_app"
    assert r.before(_ev("Firefox", "My Bank - login", now), now) == "blocked_app"
    assert r.before(_ev("Code", "x", now), datetime(2026, 3, 2, 23, 30)) == "quiet_hours"
    assert r.before(_ev("Code", "x", now), datetime(2026, 3, 2, 7, 59)) == "quiet_hours"
    assert r.before(_ev("Code", "x", now), datetime(2026, 3, 2, 8, 0)) is None
    pause(tmp_path)
    assert r.before(_ev("Code", "x", now), now) == "paused"
    assert resume(tmp_path) and r.before(_ev("Code", "x", now), now) is None
    assert Restraint(RestraintConfig(quiet_apps=False)).before(_ev("zoom.us", "Zoom Meeting", now), now) is None
    r2 = Restraint(fullscreen=lambda: True)
    assert r2.before(_ev("Code", "x", now), now) == "fullscreen"
    with pytest.raises(ValueError):
        parse_quiet_hours("22-8")


def test_restraint_after_limits() -> None:
    t = datetime(2026, 3, 2, 10, 0)
    r = Restraint(
        RestraintConfig(
            min_gap_seconds=0, one_per_app_session=False, max_per_hour=2, cooldown_seconds=600, not_now_seconds=60
        )
    )
    r.offered(t)
    assert r.after(t + timedelta(minutes=1)) is None
    r.offered(t + timedelta(minutes=1))
    assert r.after(t + timedelta(minutes=2)) == "max_per_hour"
    assert r.after(t + timedelta(minutes=60, seconds=1)) is None  # the first offer left the hour
    r.responded("dismissed", t + timedelta(minutes=70))
    assert r.after(t + timedelta(minutes=79)) == "cooldown"
    assert r.after(t + timedelta(minutes=80, seconds=1)) is None
    r.responded("not_now", t + timedelta(minutes=90))
    assert r.after(t + timedelta(minutes=90, seconds=30)) == "not_now"


@needs_dev
def test_dismiss_starts_cooldown_in_replay(tmp_path: Path) -> None:
    events = read_proactivebench_session(CODE13)
    store = FeedbackStore(tmp_path)

    class Dismisser:
        name = "dismisser"

        def show(self, offer):  # noqa: ANN001, ANN202
            store.respond(offer.id, "dismissed", offer.moment, source="test")

        def close(self):  # noqa: ANN202
            pass

    clock = ReplayClock(0)
    agent = LiveAgent(
        tmp_path,
        ScriptedDecider(yes={e.id for e in events}),
        notifiers=[Dismisser()],
        clock=clock,
        restraint=Restraint(
            RestraintConfig(min_gap_seconds=0, one_per_app_session=False, max_per_hour=100, cooldown_seconds=120),
            folder=tmp_path,
        ),
        feedback=store,
    )
    out = agent.replay(replay_moments(CODE13), clock)
    offers = [x for x in out if x.outcome == "offer"]
    # after each dismiss, no offer for 120 s of log time; then one again
    for a, b in zip(offers, offers[1:]):
        assert (b.moment - a.moment).total_seconds() >= 120
    held = [x for x in out if x.outcome == "held"]
    assert held and {x.reason for x in held} == {"cooldown"}
    assert len(offers) >= 3


# --------------------------------------------------------------------------- a growing database


class Writer(threading.Thread):
    """Writes events into a capture folder like ``proagent capture`` does (its Store)."""

    def __init__(self, folder: Path, n: int, start_index: int = 0, gap: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.folder, self.n, self.start_index, self.gap = folder, n, start_index, gap
        self.ids: list[int] = []

    def run(self) -> None:
        from proagent.capture import Store

        st = Store(self.folder)
        t0 = datetime(2026, 3, 2, 9, 0)
        apps = [
            ("Visual Studio Code", "main.py - proj"),
            ("Google Chrome", "Stack Overflow - Chrome"),
            ("Windows PowerShell", "pytest -q"),
        ]
        prev = None
        for i in range(self.start_index, self.start_index + self.n):
            app, title = apps[i % len(apps)]
            t = t0 + timedelta(seconds=20 * i)
            if prev is not None:
                st.close_event(prev, t)
            eid = st.open_event(app, title, t)
            png = tiny_png(i)
            st.add_screenshot(
                event_id=eid,
                screen_id=0,
                t=t + timedelta(seconds=1),
                data=png,
                ext="png",
                file_hash=hashlib.sha256(png).hexdigest(),
                width=4,
                height=4,
                app=app,
                title=title,
            )
            self.ids.append(eid)
            prev = eid
            time.sleep(self.gap)
        st.close()


def test_follower_picks_up_each_new_event_once_and_resumes_after_restart(tmp_path: Path) -> None:
    cap = tmp_path / "capture"
    first = Writer(cap, 3, gap=0.0)
    first.run()  # rows present before the agent starts are history, not moments
    d = Recording(set())
    w = Writer(cap, 8, start_index=3)
    got = []
    th = threading.Thread(
        target=lambda: got.extend(
            run_watch(cap, tmp_path / "live", d, _opts(), poll_seconds=0.02, max_moments=5, duration=30).decisions
        )
    )
    th.start()
    for _ in range(200):  # the follower starts right after feedback.db is created
        if (tmp_path / "live" / "feedback.db").exists():
            break
        time.sleep(0.02)
    time.sleep(0.5)
    w.start()
    th.join(30)
    assert not th.is_alive()
    w.join(30)
    # the agent stopped after 5 moments; the writer went on with 3 more. A restart decides those
    later = run_watch(cap, tmp_path / "live", d, _opts(), poll_seconds=0.02, max_moments=3, duration=20).decisions
    rows = FeedbackStore(tmp_path / "live").decisions()
    row_ids = [r["row_id"] for r in rows]
    assert row_ids == w.ids  # every new row exactly once, in order, none of the 3 history rows
    assert len(got) == 5 and len(later) == 3
    # the second row's moment sees the first as current state (real activity >= 3 s with a screenshot)
    assert all(x.outcome == "no" for x in got + later)
    assert d.samples[0].current.app_name in ("Visual Studio Code", "Google Chrome", "Windows PowerShell")
    assert [s.event_id for s in d.samples] == [str(i) for i in w.ids]
    # the whole 5-min window is there, also for the rows caught up after the restart (events 20 s apart)
    for s in d.samples:
        r = int(s.event_id)
        assert s.current.id == str(r)
        # decided 1 s (first screenshot) + 3 s (--settle) after its start: events 20 s apart overlap the 5 min
        assert s.time == s.current.start + timedelta(seconds=4)
        assert [e.id for e in s.context] == [str(k) for k in range(max(1, r - 15), r)]


def test_follower_idle_reads_nothing(tmp_path: Path) -> None:
    cap = tmp_path / "c"
    Writer(cap, 2, gap=0.0).run()
    from proagent.live import LifeTraceFollower

    f = LifeTraceFollower(cap)
    assert f.poll() == []  # nothing new since start
    assert not f.changed()  # no commit since: the idle check reads no table
    Writer(cap, 1, start_index=2, gap=0.0).run()
    ms = f.poll()
    assert [m.row_id for m in ms] == [3] and ms[0].trigger == "event"
    assert f.poll() == []
    f.close()


# --------------------------------------------------------------------------- feedback and notifiers


@needs_dev
def test_feedback_samples_labels_and_roundtrip(tmp_path: Path) -> None:
    events = read_proactivebench_session(CODE13)
    s = build_samples(events)[7]
    assert sample_from_json(sample_to_json(s)) == s
    st = FeedbackStore(tmp_path)
    now = datetime(2026, 3, 2, 10, 0)
    offers = [
        st.add_offer(
            replace(s, id=f"m{i}"), text="t", query="q", intention=None, p_help=0.9, notifier="x", created_at=now
        )
        for i in range(4)
    ]
    st.respond(offers[0].id, "accepted", now)
    st.respond(offers[1].id, "not_now", now)
    st.respond(offers[1].id, "dismissed", now + timedelta(seconds=5))  # the latest answer counts
    st.respond(offers[2].id, "not_now", now)
    assert not st.respond(999, "accepted", now) and not st.respond(offers[3].id, "maybe", now)
    got = feedback_samples(tmp_path)
    assert [(x.id, x.label) for x in got] == [("feedback:m0", 1), ("feedback:m1", 0)]
    assert got[0].context == s.context and got[0].current == s.current
    assert stat.S_IMODE(os.stat(tmp_path / "feedback.db").st_mode) == 0o600


def _fake_notify_send(tmp_path: Path, answer: str) -> Path:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "notify-args.txt"
    script = bindir / "notify-send"
    script.write_text(
        f"#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> {log}; done\necho '--' >> {log}\necho {answer}\n"
    )
    script.chmod(0o755)
    return log


@needs_dev
def test_desktop_notifications_through_notify_send(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _fake_notify_send(tmp_path, "dismissed")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    events = read_proactivebench_session(CODE13)
    res = run_replay(
        CODE13, tmp_path / "run", ScriptedDecider(yes={f"{events[6].id}:labelled"}), _opts(notify=("desktop",)), speed=0
    )
    offer = next(x for x in res.decisions if x.outcome == "offer")
    args = log.read_text().split("--\n")[0].splitlines()
    assert args[:3] == ["--app-name=proagent", "--urgency=low", "--expire-time=60000"]
    assert "--action=accepted=Accept" in args and "--action=dismissed=Dismiss" in args
    assert args[-1] == offer.notification
    st = FeedbackStore(tmp_path / "run")
    assert st.offers()[0]["response"] == "dismissed"


def test_desktop_notifier_needs_notify_send(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="notify-send"):
        DesktopNotifier(FeedbackStore(tmp_path), datetime.now)


@needs_dev
def test_terminal_answers_are_stored(tmp_path: Path) -> None:
    import io

    events = read_proactivebench_session(CODE13)
    out = io.StringIO()
    r, w = os.pipe()
    answers = os.fdopen(r)
    res = run_replay(
        CODE13,
        tmp_path / "run",
        ScriptedDecider(yes={f"{events[9].id}:labelled"}),
        _opts(notify=("terminal",)),
        speed=0,
        answers=answers,
        out=out,
    )
    oid = next(x.offer_id for x in res.decisions if x.outcome == "offer")
    assert f"offer {oid} at" in out.getvalue()
    st = FeedbackStore(tmp_path / "run")
    from proagent.live import TerminalNotifier

    TerminalNotifier(st, datetime.now, out=out, answers=io.StringIO(f"a {oid}\nd 99\n"))._thread.join(5)
    assert st.offers()[0]["response"] == "accepted"
    assert "offer 99: no such offer" in out.getvalue()
    os.close(w)


# --------------------------------------------------------------------------- How to Assist


@needs_dev
def test_how_model_through_inspect(tmp_path: Path) -> None:
    from inspect_ai.model import ModelOutput, get_model

    events = read_proactivebench_session(CODE13)
    answer = "Need help: Yes\nIntention: Debugging & Error Resolution\nQuery: Why does my pytest run fail with an ImportError?"
    model = get_model("mockllm/model", custom_outputs=[ModelOutput.from_content("mockllm/model", answer)])
    how = HowModel(model)
    res = run_replay(
        CODE13, tmp_path / "run", ScriptedDecider(yes={f"{events[6].id}:labelled"}), _opts(), speed=0, how=how
    )
    offer = next(x for x in res.decisions if x.outcome == "offer")
    assert offer.notification == "Want help with this? “Why does my pytest run fail with an ImportError?”"
    assert offer.how_seconds is not None and offer.how_seconds >= 0
    row = FeedbackStore(tmp_path / "run").offers()[0]
    assert row["query"].startswith("Why does my pytest") and row["intention"] == "Debugging & Error Resolution"
    assert offer_text(Prediction("x", True, query="")) is None


@pytest.mark.slow
@needs_dev
def test_how_with_local_smollm(tmp_path: Path) -> None:
    events = read_proactivebench_session(CODE13)
    how = HowModel("local/smollm2-135m", {"n_threads": "1"})
    res = run_replay(
        CODE13, tmp_path / "run", ScriptedDecider(yes={f"{events[6].id}:labelled"}), _opts(), speed=0, how=how
    )
    d = next(x for x in res.decisions if x.sample_id == f"{events[6].id}:labelled")
    assert d.outcome in ("offer", "no_offer") and d.how_seconds > 0


# --------------------------------------------------------------------------- CLI


@needs_dev
def test_cli_replay_pause_resume_and_errors(tmp_path: Path) -> None:
    events = read_proactivebench_session(CODE13)
    yes = tmp_path / "yes.txt"
    yes.write_text(f"{events[6].id}:labelled\n{events[7].id}:labelled\n")
    runner = CliRunner()
    r = runner.invoke(
        cli,
        [
            "live",
            "--replay",
            str(CODE13),
            "--yes-at",
            str(yes),
            "--model",
            "none",
            "--speed",
            "0",
            "--out",
            str(tmp_path / "o"),
            "--notify",
            "terminal",
        ],
    )
    assert r.exit_code == 0, r.output
    # the two scripted Yes moments are seconds apart: the default --min-gap (10 min) holds the second
    assert "20 moments decided: 1 held, 18 no, 1 offer" in r.output and "min_gap 1" in r.output
    assert "decision latency: p50" in r.output
    assert (tmp_path / "o" / "decisions.jsonl").is_file()
    r = runner.invoke(cli, ["live", "pause", str(tmp_path / "o")])
    assert r.exit_code == 0 and (tmp_path / "o" / "live.paused").exists()
    r = runner.invoke(
        cli,
        [
            "live",
            "--replay",
            str(CODE13),
            "--yes-at",
            str(yes),
            "--model",
            "none",
            "--speed",
            "0",
            "--out",
            str(tmp_path / "p"),
            "--quiet-hours",
            "25:00-01:00",
        ],
    )
    assert r.exit_code != 0 and "--quiet-hours" in r.output and "Traceback" not in r.output
    r = runner.invoke(cli, ["live", "--replay", str(CODE13), "--model", "none"])
    assert r.exit_code != 0 and "--decider DIR" in r.output
    r = runner.invoke(cli, ["live", "resume", str(tmp_path / "o")])
    assert r.exit_code == 0 and not (tmp_path / "o" / "live.paused").exists()


def test_paused_agent_decides_nothing(tmp_path: Path) -> None:
    fx = make_participant(tmp_path, "P01")
    out = tmp_path / "run"
    out.mkdir()
    pause(out)
    d = Recording({"x"})
    res = run_replay(fx.path, out, d, _opts(), speed=0)
    assert d.samples == [] and {x.reason for x in res.decisions} == {"paused"}


def _heartbeat(cap: Path, event_id: int, stop: threading.Event, every: float = 0.05) -> threading.Thread:
    """Keep adding screenshots of one open event, as a running capture does."""

    def run() -> None:
        from proagent.capture import Store

        st = Store(cap)
        k = 0
        while not stop.is_set():
            k += 1
            png = tiny_png(100 + k)
            st.add_screenshot(
                event_id=event_id,
                screen_id=0,
                t=datetime.now(),
                data=png,
                ext="png",
                file_hash=hashlib.sha256(png).hexdigest(),
                width=4,
                height=4,
                app="Google Chrome",
                title="Stack Overflow - Chrome",
            )
            stop.wait(every)
        st.close()

    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th


def test_watch_ticks_within_a_long_event(tmp_path: Path) -> None:
    cap = tmp_path / "c"
    w = Writer(cap, 2, gap=0.0)
    w.run()  # the second event stays open: the user is still in it, and capture goes on writing
    stop = threading.Event()
    beat = _heartbeat(cap, w.ids[-1], stop)
    d = Recording(set())
    try:
        # settle 0: the heartbeat changes the screen every 0.05 s, which --settle's pause would hold (its own test)
        res = run_watch(
            cap,
            tmp_path / "live",
            d,
            _opts(every_seconds=0.3, settle_seconds=0),
            poll_seconds=0.02,
            max_moments=2,
            duration=20,
        )
    finally:
        stop.set()
        beat.join(5)
    assert [x.trigger for x in res.decisions] == ["tick", "tick"]
    assert [s.current.id for s in d.samples] == ["2", "2"]
    assert d.samples[0].context == ()  # event 1 lies months before now, outside the 5-min window
    assert all(s.time > datetime(2026, 3, 2, 9, 1) for s in d.samples)  # ticks are at wall-clock now
    assert all(":2:t" in s.id for s in d.samples)


def test_watch_into_the_capture_folder_leaves_it_a_capture_folder(tmp_path: Path) -> None:
    """`live --watch CAP` writes beside the log by default; `proagent capture --out CAP` then
    continues CAP (its folder check knows every file live wrote there)."""
    from proagent.capture import check_capture_folder

    cap = tmp_path / "c"
    w = Writer(cap, 2, gap=0.0)
    w.run()
    stop = threading.Event()
    beat = _heartbeat(cap, w.ids[-1], stop)
    block_app(cap, "xterm")
    try:
        run_watch(
            cap,
            cap,
            Recording(set()),
            _opts(every_seconds=0.3, settle_seconds=0, notify=("page",)),
            poll_seconds=0.02,
            max_moments=1,
            duration=20,
        )
    finally:
        stop.set()
        beat.join(5)
    pause(cap)
    written = {p.name for p in cap.iterdir()}
    assert {"feedback.db", "live.paused", "blocked-apps.json", "page-url"} <= written, written
    assert check_capture_folder(cap) is True
