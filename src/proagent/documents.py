"""Which document an editor's or terminal's window shows: the *document rule* of event splitting.

An editor or a terminal is one application, so LifeTrace's app rule (ProAgentBench section 5.1)
merges a person's switches between two files of one editor, or between two terminals, into one
event (issue 47 item 2: four switches between two xterms were ``1 events``); splitting on every
title change cuts one file or one terminal into many events (an unsaved marker, a running
command's progress counter, a clock). The document rule sits between, as the tab rule
(:mod:`proagent.pages`) does for browsers: an editor's or terminal's event ends when its window
shows another **document**: :func:`document_key` of its title.

Which apps (:func:`app_kind`, by application name case-folded, ``.exe`` and a trailing ``64``
dropped): :data:`EDITORS` (VS Code and its forks, gedit, GNOME Text Editor, Sublime Text, Emacs,
gVim, Kate, KWrite, Mousepad, FeatherPad, Pluma, xed, Geany, Notepad++, the JetBrains IDEs, ...)
and :data:`TERMINALS` (xterm, GNOME Terminal, Konsole, Alacritty, kitty, foot, WezTerm,
xfce4-terminal, Terminator, Tilix, urxvt, st, Windows Terminal, macOS Terminal and iTerm2, ...).
vim or nvim in a terminal sets the terminal's title (``cart.py + (~/shop) - NVIM``), so it is
read as a terminal's document.

The document is the title with its **noise** taken out (what changes while a person stays on one
file or one terminal):

* unsaved markers: ``●``/``•`` anywhere (VS Code ``● cart.py - shop - Visual Studio Code``,
  Sublime), a leading ``*`` (gedit, Mousepad, FeatherPad ``*cart.py (~/shop) - gedit``; not
  Emacs' ``*scratch*``), a lone `` *`` (Kate ``cart.py * — Kate``), ``[+]``, ``[-]``,
  ``[Modified]``, ``(modified)``, and vim's ``+``/``-`` flag before its folder (`` + (~/shop)``);
* spinners at the start (braille dots ``⠋``, ``✳``): a running tool animating its title;
* in terminals only, every number standing alone (``42``, ``42%``, ``3/10``, ``07:12:03``,
  ``1.5s``) becomes ``#``: a progress counter (``pytest [42%]``), a clock (``top - 07:12:03 up``)
  or a count does not make a new terminal; numbers inside a word (``cart2.py``) stay.

Two windows of one app (two xterms, two VS Code windows) are two documents where the recorder
knows the window (``proagent capture``: the X11 or sway window id), even when their titles are
the same. An empty title (after the noise) is unknown: it never starts an event.

Not seen: a switch between two files or terminals whose titles are the same after the noise
(two tabs of one terminal at one prompt, in one window) and, in terminals, two titles that
differ only by a number (``vim notes 1.md`` and ``vim notes 2.md``).
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["EDITORS", "TERMINALS", "app_kind", "document_key"]

EDITORS = frozenset(
    {
        "code",
        "code - oss",
        "code-oss",
        "codium",
        "vscodium",
        "visual studio code",
        "cursor",
        "windsurf",
        "gedit",
        "org.gnome.gedit",
        "gnome-text-editor",
        "org.gnome.texteditor",
        "text editor",
        "sublime_text",
        "sublime text",
        "subl",
        "emacs",
        "emacs-gtk",
        "gvim",
        "vim",
        "nvim",
        "neovide",
        "kate",
        "org.kde.kate",
        "kwrite",
        "mousepad",
        "org.xfce.mousepad",
        "featherpad",
        "pluma",
        "xed",
        "geany",
        "leafpad",
        "notepad",
        "notepad++",
        "notepadqq",
        "textedit",
        "zed",
        "zed-editor",
        "bbedit",
        "pycharm",
        "idea",
        "intellij idea",
        "webstorm",
        "clion",
        "goland",
        "rider",
        "phpstorm",
        "rubymine",
        "datagrip",
        "rustrover",
        "android studio",
        "studio",
    }
)
"""Application names (case-folded; ``.exe`` and a trailing ``64`` dropped) of text editors and
IDEs: their title names the open file. X11 window classes ``jetbrains-*`` count too
(``jetbrains-pycharm-ce``)."""

TERMINALS = frozenset(
    {
        "xterm",
        "uxterm",
        "gnome-terminal",
        "gnome-terminal-server",
        "org.gnome.terminal",
        "gnome-console",
        "kgx",
        "org.gnome.console",
        "ptyxis",
        "konsole",
        "org.kde.konsole",
        "alacritty",
        "kitty",
        "foot",
        "footclient",
        "wezterm",
        "wezterm-gui",
        "org.wezfurlong.wezterm",
        "xfce4-terminal",
        "terminator",
        "tilix",
        "com.gexperts.tilix",
        "urxvt",
        "rxvt",
        "rxvt-unicode",
        "st",
        "st-256color",
        "lxterminal",
        "qterminal",
        "mate-terminal",
        "terminology",
        "sakura",
        "guake",
        "tilda",
        "yakuake",
        "ghostty",
        "com.mitchellh.ghostty",
        "terminal",
        "iterm2",
        "iterm",
        "warp",
        "hyper",
        "tabby",
        "windowsterminal",
        "cmd",
        "powershell",
        "pwsh",
        "conhost",
        "mintty",
    }
)
"""Application names (case-folded; ``.exe`` dropped) of terminal emulators: their title is set by
the shell (``user@host: ~/shop``) or the program running in it (``vim cart.py``, ``pytest``)."""

_DOTS = re.compile(r"[●•⬤]")  # unsaved: VS Code, Sublime
_LEAD_STAR = re.compile(r"^\*(?!\S*\*)")  # gedit/Mousepad "*cart.py"; not Emacs' "*scratch*"
_LONE_STAR = re.compile(r"(?<=\s)\*(?=\s|$)")  # Kate "cart.py * — Kate"
_FLAGS = re.compile(r"\[(?:\+|-|\+-|modified)\]|\(modified\)", re.IGNORECASE)
_VIM_FLAG = re.compile(r"\s[+-]{1,2}(?=\s\(|\s-\s(?:n?vim|gvim)\s*$)", re.IGNORECASE)  # vim's %M
_SPINNER = re.compile(r"^[\u2800-\u28ff✳✶✻✽✢◐◓◑◒|/\\\-]+\s+")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.:,/]\d+)*(?:%|s|ms)?(?![\w])")
_SPACE = re.compile(r"\s+")


def _app(name: str) -> str:
    name = name.strip().casefold()
    return name[:-4] if name.endswith(".exe") else name


def app_kind(app_name: str) -> Literal["editor", "terminal"] | None:
    """``"editor"`` or ``"terminal"`` when ``app_name`` is one of :data:`EDITORS` or
    :data:`TERMINALS` (or a ``jetbrains-*`` window class), else ``None``."""
    app = _app(app_name)
    if app in TERMINALS:
        return "terminal"
    if app in EDITORS or app.removesuffix("64") in EDITORS or app.startswith("jetbrains-"):
        return "editor"
    return None


def document_key(app_name: str, window_title: str) -> str | None:
    """The document an editor's or terminal's window shows: its title without the noise (module
    docstring); ``None`` when ``app_name`` is neither (:func:`app_kind`) or nothing is left.

    Examples: ``● cart.py - shop - Visual Studio Code`` -> ``cart.py - shop - Visual Studio Code``;
    ``cart.py + (~/shop) - NVIM`` -> ``cart.py (~/shop) - NVIM``; in a terminal ``pytest [42%]``
    -> ``pytest [#]``.
    """
    kind = app_kind(app_name)
    if kind is None:
        return None
    t = _SPACE.sub(" ", window_title).strip()
    t = _SPINNER.sub("", t)
    t = _DOTS.sub(" ", t)
    t = _FLAGS.sub(" ", t)
    t = _LEAD_STAR.sub("", t.strip())
    t = _LONE_STAR.sub(" ", t)
    t = _VIM_FLAG.sub("", t)
    if kind == "terminal":
        t = _NUMBER.sub("#", t)
    t = _SPACE.sub(" ", t).strip()
    return t or None
