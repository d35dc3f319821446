"""A recorded day on a local page (``proagent show DIR``): the events of any log proagent reads
(a capture folder, a curated or annotated folder, ActivityWatch, screenpipe) on a timeline by app,
each with its screenshots (the curated copy when one is given), the text read, what annotate found
and what ``proagent live`` offered and learned, searchable and keyboard-driven, served by
:class:`proagent.serve.LocalServer` (127.0.0.1, a random token).

* :func:`load_day` reads the log and its neighbours into a :class:`Day` (:mod:`.records`);
* :func:`serve_show` serves it (:class:`ShowServer`).
"""

from ._day import load_day, log_days
from ._page import ShowServer, day_strip_svg, serve_show
from .records import Day, ShownAnnotation, ShownEvent, ShownLabel, ShownOffer, ShownShot

__all__ = [
    "Day",
    "ShowServer",
    "ShownAnnotation",
    "ShownEvent",
    "ShownLabel",
    "ShownOffer",
    "ShownShot",
    "day_strip_svg",
    "load_day",
    "log_days",
    "serve_show",
]
