"""The document rule of event splitting (proagent.documents; issue 47 item 2): which document an
editor's or terminal's title names, what noise it drops, and how events split on it (through
proagent.pages, the one place the in-app split is decided, used by capture and the readers)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from proagent.documents import app_kind, document_key
from proagent.pages import EventSplit, in_app_key, moves, split_points, splits_in_app, tab_rule_default

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scenarios.document_titles import MOMENTS, truth_starts  # noqa: E402


def test_app_kinds() -> None:
    for app in (
        "xterm",
        "gnome-terminal-server",
        "konsole",
        "Alacritty",
        "kitty",
        "foot",
        "wezterm-gui",
        "WindowsTerminal.exe",
        "iTerm2",
    ):
        assert app_kind(app) == "terminal", app
    for app in (
        "code",
        "Code",
        "gedit",
        "sublime_text",
        "emacs",
        "kate",
        "mousepad",
        "featherpad",
        "pycharm64.exe",
        "jetbrains-pycharm-ce",
        "idea64.exe",
        "Notepad++.exe",
    ):
        assert app_kind(app) == "editor", app
    for app in ("chromium", "gimp", "Slack", "Xmessage"):
        assert app_kind(app) is None and document_key(app, "a - b") is None
    assert splits_in_app("xterm") and splits_in_app("chromium") and not splits_in_app("gimp")


@pytest.mark.parametrize(
    ("app", "a", "b"),
    [
        ("code", "cart.py - shop - Visual Studio Code", "● cart.py - shop - Visual Studio Code"),
        ("gedit", "notes.md (~/shop) - gedit", "*notes.md (~/shop) - gedit"),
        ("mousepad", "cart.py - Mousepad", "*cart.py - Mousepad"),
        ("featherpad", "cart.py (~/shop) - FeatherPad", "*cart.py (~/shop) - FeatherPad"),
        ("kate", "models.py — Kate", "models.py * — Kate"),
        ("sublime_text", "~/shop/cart.py (shop) - Sublime Text", "~/shop/cart.py • (shop) - Sublime Text"),
        ("xterm", "cart.py (~/shop) - VIM", "cart.py + (~/shop) - VIM"),
        ("xterm", "cart.py (~/shop) - NVIM", "cart.py [+] (~/shop) - NVIM"),
        ("xterm", "pytest - shop 7%", "pytest - shop 84%"),
        ("xterm", "emerge: (3 of 12) flask-3.0.3", "emerge: (4 of 12) flask-3.0.3"),
        ("xterm", "li@lap: ~/shop 07:12:59", "li@lap: ~/shop 07:13:00"),
        ("xterm", "⠋ Fix the cart total", "⠙ Fix the cart total"),
    ],
)
def test_title_noise_is_the_same_document(app: str, a: str, b: str) -> None:
    assert document_key(app, a) == document_key(app, b) is not None


@pytest.mark.parametrize(
    ("app", "a", "b"),
    [
        ("code", "cart.py - shop - Visual Studio Code", "test_cart.py - shop - Visual Studio Code"),
        ("gedit", "notes.md (~/shop) - gedit", "todo.txt (~) - gedit"),
        ("emacs", "*scratch* - GNU Emacs at lap", "cart.py - GNU Emacs at lap"),
        ("pycharm", "shop – cart.py", "shop – views.py"),
        ("xterm", "li@lap: ~/shop", "vim cart.py"),
        ("xterm", "vim cart.py", "vim cart2.py"),  # a number inside a word is a name, not a counter
        ("gnome-terminal-server", "li@lap: ~/shop", "li@lap: ~/blog"),
    ],
)
def test_another_file_or_terminal_title_is_another_document(app: str, a: str, b: str) -> None:
    assert document_key(app, a) != document_key(app, b)
    s = EventSplit()
    assert s.starts(app, a) and s.starts(app, b)


def test_windows_split_documents_where_known() -> None:
    one, two = in_app_key("xterm", "li@lap: ~/shop", window=1), in_app_key("xterm", "li@lap: ~/shop", window=2)
    assert moves(one, two) and not moves(one, in_app_key("xterm", "li@lap: ~/shop", window=1))
    assert in_app_key("xterm", "", window=None) is None and not moves(in_app_key("xterm", "", window=1), one)
    s = EventSplit()
    assert s.starts("xterm", "", window=1)
    assert not s.starts("xterm", "vim a.py", window=1)  # the event's document becomes known: no split
    assert s.starts("xterm", "vim b.py", window=1)
    assert not s.starts("xterm", "vim b.py", window=None)  # a log without window ids: the title decides
    assert (
        EventSplit(tabs=False).starts("xterm", "a")
        and not split_points([("xterm", "a", None), ("xterm", "b", None)], tabs=False)[1:]
    )


def test_the_switch_in_the_environment_and_its_old_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROAGENT_SPLIT_IN_APP", raising=False)
    monkeypatch.delenv("PROAGENT_SPLIT_ON_TAB", raising=False)
    assert tab_rule_default()
    monkeypatch.setenv("PROAGENT_SPLIT_IN_APP", "0")
    assert not tab_rule_default()
    monkeypatch.setenv("PROAGENT_SPLIT_ON_TAB", "1")
    assert not tab_rule_default()  # the new name wins
    monkeypatch.delenv("PROAGENT_SPLIT_IN_APP")
    monkeypatch.setenv("PROAGENT_SPLIT_ON_TAB", "off")
    assert not tab_rule_default()  # the old name still works


def _score(starts: list[int]) -> tuple[int, int, int]:
    truth = set(truth_starts())
    got = set(starts)
    return len(starts), len(got - truth), len(truth - got)


def test_event_counts_on_scripted_editor_and_terminal_switches() -> None:
    """The figures of benchmarks/title_split.py and docs/guides/capture-events.md."""
    assert len(MOMENTS) == 38 and len(truth_starts()) == 22
    titles = [(a, t, None) for a, t, _, _ in MOMENTS]
    every_title = [i for i, m in enumerate(MOMENTS) if i == 0 or m[:2] != MOMENTS[i - 1][:2]]
    assert _score(split_points(titles, tabs=False)) == (7, 0, 15)  # app changes only
    assert _score(every_title) == (36, 15, 1)  # every marker, counter, clock and spinner
    assert _score(split_points(titles)) == (22, 1, 1)  # titles only (ActivityWatch, screenpipe)
    assert _score(split_points([(a, t, None, w) for a, t, w, _ in MOMENTS])) == (23, 1, 0)  # capture: window ids
