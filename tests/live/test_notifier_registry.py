"""Notifiers are one registry (issue 25 item 3): a notifier is one ``register_notifier``
factory in ``live/_notify.py``; ``live --notify`` choices and a run's notifiers come from it."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from shared_data import DEV

from proagent.errors import UsageError
from proagent.live import NOTIFIERS, LiveOptions, NotifyContext, ScriptedDecider, register_notifier, run_replay
from proagent.live._notify import open_notifiers
from proagent.sources.proactivebench import read_proactivebench_session


def test_builtin_notifiers_in_order() -> None:
    assert list(NOTIFIERS)[:4] == ["terminal", "desktop", "page", "none"]


def test_an_unknown_notifier_is_a_usage_error(tmp_path: Path) -> None:
    from proagent.live import FeedbackStore

    store = FeedbackStore(tmp_path)
    try:
        with pytest.raises(UsageError) as e:
            open_notifiers(["terminal", "pager"], NotifyContext(store, datetime.now))
        assert e.value.option == "--notify" and "'pager'" in e.value.problem and "terminal" in e.value.problem
        assert open_notifiers(["none"], NotifyContext(store, datetime.now)) == []
    finally:
        store.close()


@pytest.mark.skipif(DEV is None, reason="no ProactiveBench dev sessions")
def test_a_registered_notifier_shows_the_runs_offers(tmp_path: Path) -> None:
    shown: list[str] = []

    class Collect:
        name = "collect"

        def show(self, offer) -> None:  # noqa: ANN001
            shown.append(offer.text)

        def close(self) -> None:
            pass

    register_notifier("collect")(lambda ctx: Collect())
    try:
        session = DEV / "code_13.json"
        events = read_proactivebench_session(session)
        res = run_replay(
            session,
            tmp_path / "run",
            ScriptedDecider(yes={f"{events[9].id}:labelled"}),
            LiveOptions(notify=("collect",), every_seconds=0.0),
            speed=0,
        )
        offers = [d for d in res.decisions if d.outcome == "offer"]
        assert len(offers) == 1 and len(shown) == 1
        with pytest.raises(ValueError, match="already registered"):
            register_notifier("collect")(lambda ctx: None)
    finally:
        del NOTIFIERS["collect"]


def test_live_help_lists_a_notifier_registered_later() -> None:
    """``live --notify``'s help is built from the registry when shown (issue 38 item 1)."""
    from click.testing import CliRunner

    from proagent.cli import cli

    def help_text() -> str:
        r = CliRunner().invoke(cli, ["live", "--help"])
        assert r.exit_code == 0, r.output
        return " ".join(r.output.split())

    assert "Comma-separated: terminal, desktop, page, none" in help_text()
    register_notifier("pager")(lambda ctx: None)
    try:
        assert "Comma-separated: terminal, desktop, page, none, pager" in help_text()
    finally:
        del NOTIFIERS["pager"]
