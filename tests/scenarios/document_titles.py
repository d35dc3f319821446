"""A scripted sequence of foreground editor and terminal windows, and where its events truly start
(issue 47 item 2: another file, terminal or terminal title in the same app is a new event; a
title's noise is not).

Each moment is ``(app, window title, window id, truth event)``, one moment a second as capture
records it. Titles as the programs write them: bash's Debian prompt title ``user@host: DIR``, a
prompt title with a clock (``PROMPT_COMMAND`` with ``\\t``), vim's ``FILE [+] (DIR) - VIM`` and
nvim's ``- NVIM`` with the ``+`` of an unsaved buffer, emerge's ``(3 of 12)`` progress, a braille
spinner of a tool running in the title; VS Code ``[●] FILE - FOLDER - Visual Studio Code``, gedit
``[*]FILE (DIR) - gedit``, Kate ``FILE [*] — Kate``, JetBrains ``PROJECT – FILE``, Emacs ``BUFFER -
GNU Emacs at HOST``. Window ids are X11 ids (two xterms, one VS Code window, ...).

The truth is a person's reading: a new event when another file is open, another terminal window
comes to the front, or a terminal starts showing another program or directory; none for an unsaved
marker, a counter, a clock or a spinner. Two xterm windows at the same prompt title (``li@lap:
~/shop``) differ only by their window: titles alone cannot tell them apart (the readers of
ActivityWatch and screenpipe logs have no window id; ``proagent capture`` has it).
"""

from __future__ import annotations

__all__ = ["MOMENTS", "truth_starts"]

_VS = " - Visual Studio Code"
T1, T2, VS, GE, KA, PY, EM = 0x1A00007, 0x1C00007, 0x2400003, 0x2600004, 0x2800004, 0x2A0001B, 0x2C00002

MOMENTS: tuple[tuple[str, str, int | None, int], ...] = (
    ("xterm", "li@lap: ~/shop", T1, 0),
    ("xterm", "li@lap: ~/shop", T1, 0),
    ("xterm", "cart.py (~/shop) - VIM", T1, 1),  # vim opened: editing cart.py
    ("xterm", "cart.py + (~/shop) - VIM", T1, 1),  # unsaved
    ("xterm", "cart.py (~/shop) - VIM", T1, 1),  # saved
    ("xterm", "li@lap: ~/shop", T2, 2),  # the second xterm, at the same prompt title
    ("xterm", "emerge: (3 of 12) dev-python/flask-3.0.3 Compile", T2, 3),
    ("xterm", "emerge: (4 of 12) dev-python/jinja2-3.1.4 Compile", T2, 3),  # progress
    ("xterm", "emerge: (5 of 12) dev-python/jinja2-3.1.4 Compile", T2, 3),
    ("xterm", "cart.py (~/shop) - VIM", T1, 4),  # back to the first xterm
    ("xterm", "emerge: (6 of 12) dev-python/click-8.1.7 Compile", T2, 5),
    ("xterm", "cart.py (~/shop) - VIM", T1, 6),
    ("xterm", "li@lap: ~/shop 07:12:58", T1, 7),  # vim quit; a prompt title with a clock
    ("xterm", "li@lap: ~/shop 07:12:59", T1, 7),
    ("xterm", "li@lap: ~/shop 07:13:00", T1, 7),
    ("xterm", "⠋ Fix the cart total", T1, 8),  # a CLI assistant running, a spinner in its title
    ("xterm", "⠙ Fix the cart total", T1, 8),
    ("xterm", "⠹ Fix the cart total", T1, 8),
    ("code", "cart.py - shop" + _VS, VS, 9),
    ("code", "● cart.py - shop" + _VS, VS, 9),
    ("code", "cart.py - shop" + _VS, VS, 9),
    ("code", "test_cart.py - shop" + _VS, VS, 10),  # another file, same window
    ("code", "● test_cart.py - shop" + _VS, VS, 10),
    ("code", "cart.py - shop" + _VS, VS, 11),
    ("gedit", "notes.md (~/shop) - gedit", GE, 12),
    ("gedit", "*notes.md (~/shop) - gedit", GE, 12),
    ("gedit", "todo.txt (~) - gedit", GE, 13),
    ("gedit", "*todo.txt (~) - gedit", GE, 13),
    ("kate", "models.py — Kate", KA, 14),
    ("kate", "models.py * — Kate", KA, 14),
    ("pycharm", "shop – cart.py", PY, 15),
    ("pycharm", "shop – views.py", PY, 16),
    ("emacs", "*scratch* - GNU Emacs at lap", EM, 17),
    ("emacs", "cart.py - GNU Emacs at lap", EM, 18),
    ("xterm", "cart.py + (~/shop) - NVIM", T2, 19),
    ("xterm", "cart.py (~/shop) - NVIM", T2, 19),
    ("xterm", "li@lap: ~/shop", T1, 20),
    ("xterm", "li@lap: ~/shop", T2, 21),  # the same title, the other window
)
"""38 moments, 22 true events."""


def truth_starts() -> list[int]:
    """Indexes of the moments at which a true event starts."""
    return [i for i, m in enumerate(MOMENTS) if i == 0 or m[3] != MOMENTS[i - 1][3]]
