"""The page of ``proagent show``: a day strip (an inline SVG: a row per app, LLM use, live's
offers and labels), the day's events in a list, and the selected event in full (screenshots,
the text read, the conversation, annotate's findings, offers and answers), served by
:class:`proagent.serve.LocalServer` (127.0.0.1, a random token) and built with
:func:`proagent.report.pages.page`.

Keys: ``j`` / down arrow next event, ``k`` / up arrow previous, ``l`` / right arrow next
screenshot, ``h`` / left arrow previous, ``/`` search (Enter runs it, Esc leaves the box;
Esc again shows every event), ``[`` / ``]`` the day before / after, ``g`` / ``G`` first / last.
Search is case-insensitive over titles, apps, addresses, summaries, conversations, offers and the
text read from every screenshot; every word must occur in the event (the screenshots holding
one are shown first).
"""

from __future__ import annotations

import threading
import zlib
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..report.pages import escape
from ..serve import HttpError, LocalServer, Request, Response
from ..vault import read_file
from .records import Day, ShownEvent

__all__ = ["MAX_HITS", "STRIP_APPS", "ShowServer", "day_strip_svg", "serve_show"]

STRIP_APPS = 8
"""Apps given their own row of the day strip (the most used by time; the rest share ``other``)."""
MAX_HITS = 2000
"""Events a search answers at most."""
_W, _LABEL, _ROW = 1000.0, 120.0, 16.0


def app_colour(app: str) -> str:
    """A stable colour per app name (hue from CRC-32 of the name)."""
    return f"hsl({zlib.crc32(app.encode('utf-8')) % 360},55%,55%)"


_RESPONSE_COLOUR = {"accepted": "#2a2", "dismissed": "#d33", None: "#999"}


def day_strip_svg(day: Day) -> str:
    """The day strip: an SVG with a row per app (the :data:`STRIP_APPS` most used, then
    ``other``), a row of LLM-use events, a row of live's offers (green accepted, red dismissed,
    grey unanswered or other) and one of live's labels, over the hours the events span. Every
    event's bar carries ``data-i`` (its index) and a tooltip."""
    evs = day.events
    if not evs:
        return '<svg class="strip" viewBox="0 0 1120 20"></svg>'
    t0 = min(e.start for e in evs).replace(minute=0, second=0, microsecond=0)
    last = max(e.start + timedelta(seconds=e.seconds) for e in evs)
    t1 = last.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    span = max(1.0, (t1 - t0).total_seconds())

    def x(t: datetime) -> float:
        return _LABEL + (t - t0).total_seconds() / span * _W

    used: dict[str, float] = defaultdict(float)
    for e in evs:
        used[e.app or "?"] += e.seconds
    top = sorted(used, key=lambda a: -used[a])[:STRIP_APPS]
    rows = [*top, *(["other"] if len(used) > len(top) else [])]
    offers = [o for e in evs for o in e.offers] + list(day.unplaced)
    labels = [lab for e in evs for lab in e.labels]
    names = [*rows, "LLM use", "offers", "labels"]
    height = _ROW * len(names) + 18
    out = [
        f'<svg class="strip" viewBox="0 0 {_LABEL + _W + 24:.0f} {height:.0f}" role="img" '
        f'aria-label="the day by app, LLM use and offers">'
    ]
    for r, name in enumerate(names):
        y = r * _ROW
        out.append(
            f'<text x="{_LABEL - 4:.0f}" y="{y + 12:.0f}" text-anchor="end" font-size="11">{escape(name[:18])}</text>'
            f'<line x1="{_LABEL:.0f}" x2="{_LABEL + _W:.0f}" y1="{y + _ROW:.1f}" y2="{y + _ROW:.1f}" stroke="#eee"/>'
        )
    hour = t0
    while hour <= t1:
        hx = x(hour)
        out.append(
            f'<line x1="{hx:.1f}" x2="{hx:.1f}" y1="0" y2="{height - 16:.0f}" stroke="#ddd"/>'
            f'<text x="{hx:.1f}" y="{height - 4:.0f}" font-size="10" text-anchor="middle">{hour:%H:%M}</text>'
        )
        hour += timedelta(hours=1)
    llm_row = len(rows)
    for e in evs:
        row = rows.index(e.app or "?") if (e.app or "?") in top else len(rows) - 1
        w = max(1.0, e.seconds / span * _W)
        tip = escape(f"{e.start:%H:%M:%S} {e.app} - {day.shown(e.title)}")
        bar = f'<rect data-i="{e.index}" x="{x(e.start):.1f}" width="{w:.1f}" height="{_ROW - 3:.0f}"'
        out.append(f'{bar} y="{row * _ROW + 1:.0f}" fill="{app_colour(e.app)}"><title>{tip}</title></rect>')
        if e.llm:
            name = escape(f"{e.platform or 'LLM'}: {e.intention or ''}".rstrip(": "))
            out.append(f'{bar} y="{llm_row * _ROW + 1:.0f}" fill="#c4c"><title>{tip} ({name})</title></rect>')
    for o in offers:
        c = _RESPONSE_COLOUR.get(o.response, "#999")
        ox = x(o.moment)
        out.append(
            f'<path d="M{ox - 4:.1f},{(llm_row + 2) * _ROW - 2:.0f} l4,-11 l4,11 z" fill="{c}">'
            f"<title>{o.moment:%H:%M:%S} offer ({escape(o.response or 'unanswered')}): {escape(day.shown(o.text))}</title></path>"
        )
    for lab in labels:
        c = "#2a2" if lab.label == 1 else "#d33" if lab.label == 0 else "#999"
        lx = x(lab.moment)
        out.append(
            f'<circle cx="{lx:.1f}" cy="{(llm_row + 2.5) * _ROW:.0f}" r="3.5" fill="{c}">'
            f"<title>{lab.moment:%H:%M:%S} {lab.kind}: {escape(lab.response or 'unanswered')}</title></circle>"
        )
    out.append("</svg>")
    return "".join(out)


def _event_row(e: ShownEvent, d: Day) -> dict[str, Any]:
    """An event as the list shows it (no screen text: the detail route sends that)."""
    return {
        "index": e.index,
        "id": e.id,
        "user": e.user,
        "time": f"{e.start:%H:%M:%S}",
        "seconds": round(e.seconds, 1),
        "app": e.app,
        "title": d.shown(e.title),
        "colour": app_colour(e.app),
        "llm": e.llm,
        "shots": len(e.shots),
        "offers": len(e.offers),
        "response": next((o.response for o in e.offers if o.response), None),
    }


def _event_detail(e: ShownEvent, d: Day) -> dict[str, Any]:
    def iso(t: datetime | None) -> str | None:
        return None if t is None else t.isoformat(sep=" ", timespec="seconds")

    t = d.shown
    return _event_row(e, d) | {
        "start": iso(e.start),
        "end": iso(e.end),
        "url": e.url,
        "summary": t(e.summary),
        "description": t(e.description),
        "platform": e.platform,
        "intention": e.intention,
        "queries": [t(q) for q in e.queries],
        "responses": [t(r) for r in e.responses],
        "annotation": None if e.annotation is None else vars(e.annotation) | {"rationale": t(e.annotation.rationale)},
        "shots": [
            {
                "id": s.id,
                "time": f"{s.time:%H:%M:%S}",
                "text": t(s.ocr_text),
                "image": s.image,
                "curated": s.curated,
                "removed": s.removed,
            }
            for s in e.shots
        ],
        "offers": [
            vars(o) | {"moment": f"{o.moment:%H:%M:%S}", "text": t(o.text), "query": o.query and t(o.query)}
            for o in e.offers
        ],
        "labels": [vars(x) | {"moment": f"{x.moment:%H:%M:%S}"} for x in e.labels],
    }


def search(day: Day, query: str) -> list[dict[str, Any]]:
    """Events of ``day`` holding every word of ``query`` (case-insensitive) in their title, app,
    address, summary, conversation, offers or screen text as shown (:meth:`Day.shown`: a redacted
    value is not found): ``[{"index", "shots"}]``, ``shots``
    the positions of the screenshots whose text holds a word (at most :data:`MAX_HITS` events)."""
    words = [w.casefold() for w in query.split()]
    if not words:
        return []
    hits = []
    for e in day.events:
        t = day.shown
        meta = " ".join(
            [e.app, t(e.title), e.url or "", t(e.summary), t(e.description), e.platform or "", e.intention or ""]
            + [t(q) for q in e.queries]
            + [t(r) for r in e.responses]
            + [f"{t(o.text)} {t(o.query or '')}" for o in e.offers]
        ).casefold()
        texts = [t(s.ocr_text).casefold() for s in e.shots]
        if all(w in meta or any(w in t for t in texts) for w in words):
            hits.append({"index": e.index, "shots": [i for i, t in enumerate(texts) if any(w in t for w in words)]})
            if len(hits) >= MAX_HITS:
                break
    return hits


_BODY = """
<header class="bar"><b id="dayname">$day</b><span class="about" id="about">$about</span>
<span id="daynav">$nav</span>
<input id="q" type="search" placeholder="search (/)" aria-label="search" autocomplete="off">
<span id="count"></span></header>
<p class="note">j / k or arrows: event · h / l or arrows: screenshot · /: search · Esc: all events · [ ]: day</p>
<div id="strip">$strip</div>
<div id="show"><ol id="events"></ol><section id="detail"></section></div>
"""

_SCRIPT = """
const P = new URLSearchParams(location.search), token = P.get("token"), day = document.body.dataset.day;
const qs = extra => "?token=" + encodeURIComponent(token) + "&day=" + encodeURIComponent(day) + (extra || "");
const $ = id => document.getElementById(id);
let events = [], order = [], pos = 0, cur = null, shot = 0, words = [], hitShots = {};
function el(tag, cls, text) {
  const e = document.createElement(tag); if (cls) e.className = cls; if (text != null) e.textContent = text; return e;
}
function marked(text) {  // text with the search words in <mark>, built from text nodes (never innerHTML)
  const out = document.createDocumentFragment(); const low = text.toLowerCase(); let i = 0;
  while (i < text.length) {
    let best = -1, len = 0;
    for (const w of words) { const j = low.indexOf(w, i); if (j >= 0 && (best < 0 || j < best)) { best = j; len = w.length; } }
    if (best < 0) { out.append(text.slice(i)); break; }
    out.append(text.slice(i, best)); out.append(el("mark", null, text.slice(best, best + len))); i = best + len;
  }
  return out;
}
async function load() {
  const r = await fetch("/api/day" + qs()); const d = await r.json();
  events = d.events; order = events.map(e => e.index); renderList();
  if (order.length) select(0); else { $("detail").textContent = "no events this day"; document.body.dataset.ready = "empty"; }
}
function renderList() {
  const ol = $("events"); ol.textContent = "";
  order.forEach((i, n) => {
    const e = events[i], li = el("li"); li.dataset.i = i;
    const c = el("span", "chip"); c.style.background = e.colour;
    li.append(c, el("span", "t", e.time), el("span", "a", e.app), el("span", "ti", e.title));
    if (e.llm) li.append(el("span", "badge llm", "LLM"));
    if (e.offers) li.append(el("span", "badge offer " + (e.response || ""), e.response || "offer"));
    li.addEventListener("click", () => select(n)); ol.append(li);
  });
}
async function select(n) {
  if (!order.length) return;
  pos = Math.max(0, Math.min(n, order.length - 1)); const i = order[pos];
  document.querySelectorAll("#events li.sel").forEach(x => x.classList.remove("sel"));
  const li = $("events").children[pos]; if (li) { li.classList.add("sel"); li.scrollIntoView({block: "nearest"}); }
  document.querySelectorAll("#strip .sel").forEach(x => x.classList.remove("sel"));
  document.querySelectorAll('#strip [data-i="' + i + '"]').forEach(x => x.classList.add("sel"));
  const r = await fetch("/api/event/" + i + qs()); const e = await r.json();
  if (order[pos] !== i) return;  // another key was pressed meanwhile
  cur = e; shot = (hitShots[i] && hitShots[i].length) ? hitShots[i][0] : 0; renderDetail();
}
function kv(parent, key, value) {
  if (value == null || value === "") return; const p = el("div", "kv"); p.append(el("b", null, key + " "), marked(String(value))); parent.append(p);
}
function renderDetail() {
  const e = cur, d = $("detail"); d.textContent = "";
  const h = el("h2"); h.append(el("span", "chip"), " ", marked(e.app + " - " + e.title)); h.firstChild.style.background = e.colour; d.append(h);
  d.append(el("div", "meta", e.start + (e.end ? " to " + e.end.slice(11) : " (open)") + " · " + e.seconds + " s · " + e.shots.length + " screenshot(s) · " + e.user + " #" + e.id));
  kv(d, "address", e.url); kv(d, "summary", e.summary); kv(d, "description", e.description);
  if (e.llm || e.annotation) {
    const a = el("div", "found"); a.append(el("h3", null, e.llm ? "LLM use" : "annotate"));
    kv(a, "platform", e.platform); kv(a, "intention", e.intention);
    if (e.annotation) { kv(a, "annotate", e.annotation.status + (e.annotation.confidence != null ? " (confidence " + e.annotation.confidence + ")" : ""));
      kv(a, "why", e.annotation.rationale); kv(a, "evidence", e.annotation.evidence); kv(a, "error", e.annotation.error); }
    const n = Math.max(e.queries.length, e.responses.length);
    for (let k = 0; k < n; k++) {
      if (k < e.queries.length) { const t = el("div", "turn user"); t.append(el("b", null, "asked "), marked(e.queries[k])); a.append(t); }
      if (k < e.responses.length) { const t = el("div", "turn"); t.append(el("b", null, "answer "), marked(e.responses[k])); a.append(t); }
    }
    d.append(a);
  }
  if (e.offers.length || e.labels.length) {
    const o = el("div", "found"); o.append(el("h3", null, "live"));
    for (const x of e.offers) {
      const t = el("div", "turn offer " + (x.response || "")); t.append(el("b", null, x.moment + " offer (" + (x.response || "unanswered") + ") "), marked(x.text));
      if (x.query) t.append(el("div", "meta", "query: " + x.query + (x.intention ? " · " + x.intention : "") + (x.p_help != null ? " · P(help) " + x.p_help.toFixed(2) : "")));
      o.append(t);
    }
    for (const x of e.labels) o.append(el("div", "turn", x.moment + " " + x.kind + ": " + (x.response || "unanswered") + (x.weight != null ? " (weight " + x.weight + ")" : "")));
    d.append(o);
  }
  const s = el("div", "shots"); s.id = "shots"; d.append(s); renderShot();
}
function renderShot() {
  const e = cur, s = $("shots"); s.textContent = "";
  if (!e.shots.length) { s.append(el("p", "note", "no screenshots (the log has none for this event)")); document.body.dataset.ready = e.index + ":-"; return; }
  shot = Math.max(0, Math.min(shot, e.shots.length - 1)); const sh = e.shots[shot];
  s.append(el("div", "meta", "screenshot " + (shot + 1) + " / " + e.shots.length + " at " + sh.time + (sh.curated ? " (curated copy)" : "") + (sh.removed ? " (deleted by curate)" : "")));
  if (sh.image) { const img = el("img", "big"); img.id = "shot"; img.alt = "screenshot " + sh.time; img.src = "/img/" + sh.id + qs(); s.append(img); }
  else s.append(el("p", "note", sh.removed ? "curate deleted this screenshot" : "no image to show"));
  const th = el("div"); th.id = "thumbs";
  const step = Math.max(1, Math.ceil(e.shots.length / 40));
  e.shots.forEach((x, k) => {
    if (k % step && k !== shot) return;
    if (!x.image) return;
    const t = el("img", k === shot ? "sel" : ""); t.alt = x.time; t.src = "/img/" + x.id + qs(); t.loading = "lazy";
    t.addEventListener("click", () => { shot = k; renderShot(); }); th.append(t);
  });
  s.append(th);
  s.append(el("h3", null, "text read"));
  const pre = el("pre"); pre.id = "ocr"; pre.append(marked(sh.text || "(no text read)")); s.append(pre);
  document.body.dataset.ready = e.index + ":" + shot;
}
async function search(text) {
  words = text.toLowerCase().split(/\\s+/).filter(Boolean);
  if (!words.length) { clearSearch(); return; }
  const r = await fetch("/api/search" + qs("&q=" + encodeURIComponent(text))); const d = await r.json();
  hitShots = {}; for (const h of d.hits) hitShots[h.index] = h.shots;
  order = d.hits.map(h => h.index); $("count").textContent = order.length + " event(s) match";
  renderList(); if (order.length) select(0); else { $("detail").textContent = "nothing matches"; document.body.dataset.ready = "none"; }
  $("q").blur();
}
function clearSearch() {
  words = []; hitShots = {}; $("q").value = ""; $("count").textContent = "";
  const i = order[pos]; order = events.map(e => e.index); renderList(); select(i == null ? 0 : i);
}
function go(link) { const a = document.getElementById(link); if (a) location.href = a.href; }
document.addEventListener("keydown", e => {
  if (e.target === $("q")) {
    if (e.key === "Enter") { e.preventDefault(); search($("q").value); } else if (e.key === "Escape") { $("q").blur(); }
    return;
  }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const k = e.key;
  if (k === "j" || k === "ArrowDown") { e.preventDefault(); select(pos + 1); }
  else if (k === "k" || k === "ArrowUp") { e.preventDefault(); select(pos - 1); }
  else if (k === "l" || k === "ArrowRight") { e.preventDefault(); if (cur) { shot++; renderShot(); } }
  else if (k === "h" || k === "ArrowLeft") { e.preventDefault(); if (cur) { shot--; renderShot(); } }
  else if (k === "/") { e.preventDefault(); $("q").focus(); $("q").select(); }
  else if (k === "Escape") clearSearch();
  else if (k === "g") select(0); else if (k === "G") select(order.length - 1);
  else if (k === "[") go("prevday"); else if (k === "]") go("nextday");
});
$("strip").addEventListener("click", e => {
  const t = e.target.closest("[data-i]"); if (!t) return;
  words = []; hitShots = {}; $("q").value = ""; $("count").textContent = "";
  order = events.map(x => x.index); renderList(); select(Number(t.dataset.i));
});
load();
"""


class ShowServer:
    """The page's server (:class:`proagent.serve.LocalServer`: 127.0.0.1, token, GET only).

    Args:
        first: The day shown first (read before the server starts, so a bad log fails early).
        loader: Reads another day (``YYYY-MM-DD``) of the same log with the same options.
        port: TCP port (0: a free one).
    """

    def __init__(self, first: Day, loader: Callable[[str], Day], port: int = 0) -> None:
        self.day = first
        self._loader = loader
        self._days: dict[str, Day] = {first.day.isoformat(): first}
        self._lock = threading.Lock()
        self._server = srv = LocalServer("proagent-show", port, max_body=0)
        self.token = srv.token
        """The random token every request must carry (``?token=...``)."""
        srv.route("GET", "/", self._page)
        srv.route("GET", "/api/day", lambda req: Response.json(self._day_json(self._get(req))))
        srv.route("GET", "/api/event/", self._event, prefix=True)
        srv.route("GET", "/api/search", self._search)
        srv.route("GET", "/img/", self._image, prefix=True)

    @property
    def url(self) -> str:
        """The page's address, token included."""
        return self._server.url

    def _get(self, req: Request) -> Day:
        key = (req.query.get("day") or [""])[0] or self.day.day.isoformat()
        with self._lock:
            if key not in self._days:
                if key not in {d.isoformat() for d in self.day.days}:
                    raise HttpError(404, f"no events on {key!r}")
                self._days = {self.day.day.isoformat(): self.day, key: self._loader(key)}  # two days kept
            return self._days[key]

    def _page(self, req: Request) -> Response:
        d = self._get(req)
        days = [x.isoformat() for x in d.days]
        k = days.index(d.day.isoformat())
        tok = escape(self.token)
        links = []
        if k > 0:
            links.append(f'<a id="prevday" href="/?token={tok}&amp;day={days[k - 1]}">&larr; {days[k - 1]}</a>')
        if k < len(days) - 1:
            links.append(f'<a id="nextday" href="/?token={tok}&amp;day={days[k + 1]}">{days[k + 1]} &rarr;</a>')
        shots = sum(len(e.shots) for e in d.events)
        about = (
            f"{len(d.events)} events · {shots} screenshots · {sum(e.llm for e in d.events)} LLM use · "
            f"{sum(len(e.offers) for e in d.events) + len(d.unplaced)} offers · {d.kind} · "
            + ("screen text redacted" if d.redacted else "screen text as recorded")
        )
        body = (
            _BODY.replace("$day", escape(f"{d.day:%A %Y-%m-%d}"))
            .replace("$about", escape(about))
            .replace("$nav", " ".join(links))
            .replace("$strip", day_strip_svg(d))
        )
        html = self._server.html_page(f"proagent show: {d.path.name or d.path}", body, script=_SCRIPT)
        html = html.replace("<body>", f'<body data-day="{d.day.isoformat()}">', 1)
        return Response.html(html)

    @staticmethod
    def _day_json(d: Day) -> dict[str, Any]:
        return {
            "day": d.day.isoformat(),
            "days": [x.isoformat() for x in d.days],
            "redacted": d.redacted,
            "events": [_event_row(e, d) for e in d.events],
        }

    def _event(self, req: Request) -> Response:
        d = self._get(req)
        try:
            return Response.json(_event_detail(d.events[int(req.parts[2])], d))
        except (IndexError, ValueError):
            raise HttpError(404, "no such event") from None

    def _search(self, req: Request) -> Response:
        q = (req.query.get("q") or [""])[0][:500]
        return Response.json({"query": q, "hits": search(self._get(req), q)})

    def _image(self, req: Request) -> Response:
        d = self._get(req)
        try:
            n = int(req.parts[1])
            img = d.images[n] if n >= 0 else None
        except (IndexError, ValueError):
            raise HttpError(404, "not found") from None
        if img is None or not img.is_file():
            raise HttpError(404, "not found")
        suffix = img.suffix.lower()
        ctype = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}.get(suffix, "image/png")
        return Response(read_file(img), ctype)  # decrypted in memory for an encrypted capture

    def start(self) -> ShowServer:
        """Serve in a background thread."""
        self._server.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.close()


def serve_show(
    path: str | Path,
    *,
    day: str | None = None,
    user: str | None = None,
    curated: str | Path | None = None,
    live: str | Path | None = None,
    redact: bool = False,
    port: int = 0,
) -> ShowServer:
    """Read a day of the log at ``path`` (:func:`proagent.show.load_day`, whose arguments these
    are) and serve its page (background thread).

    Raises:
        DataError, UsageError: as :func:`~proagent.show.load_day`.
        OSError: the port cannot be bound.
    """
    from ._day import load_day

    def loader(d: str | None) -> Day:
        return load_day(path, day=d, user=user, curated=curated, live=live, redact=redact)

    return ShowServer(loader(day), loader, port).start()
