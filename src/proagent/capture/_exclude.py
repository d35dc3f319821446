"""Privacy at the source: which foreground windows are never recorded.

A window is excluded when its application name equals (case-insensitively) one of the excluded
apps, or a title pattern (Python regex, case-insensitive, ``re.search``) matches its title. The
default list (``proagent/data/capture_exclusions.json``: private/incognito browser windows and
password managers) applies unless switched off; ``--exclude-app`` and ``--exclude-title`` add to it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources

from ..errors import UsageError
from ._probe import WindowInfo

__all__ = ["Exclusions", "default_exclusions"]


def default_exclusions() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(app_names, title_patterns)`` of the shipped default list."""
    data = json.loads(resources.files("proagent").joinpath("data/capture_exclusions.json").read_text("utf-8"))
    return tuple(data["app_names"]), tuple(data["title_patterns"])


@dataclass(frozen=True)
class Exclusions:
    """Excluded applications and title patterns."""

    apps: frozenset[str]
    """Application names, lower-cased; a window of one of them is excluded."""
    titles: tuple[re.Pattern[str], ...]
    """Compiled title patterns; a window whose title one of them matches is excluded."""

    @classmethod
    def build(cls, apps: Iterable[str] = (), titles: Iterable[str] = (), *, defaults: bool = True) -> Exclusions:
        """Exclusions from user lists, plus the default list when ``defaults``.

        Raises:
            proagent.errors.UsageError: a title pattern is not a valid regular expression (``--exclude-title``).
        """
        d_apps, d_titles = default_exclusions() if defaults else ((), ())
        compiled = []
        for p in (*d_titles, *titles):
            try:
                compiled.append(re.compile(p, re.IGNORECASE))
            except re.error as e:
                raise UsageError("--exclude-title", f"{p!r}: not a valid regular expression ({e})") from None
        return cls(frozenset(a.strip().lower() for a in (*d_apps, *apps) if a.strip()), tuple(compiled))

    def excludes(self, win: WindowInfo) -> bool:
        """True when ``win`` must not be recorded."""
        if win.app_name.lower() in self.apps:
            return True
        return any(p.search(win.window_title) for p in self.titles)
