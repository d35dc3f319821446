"""Phase 2, human review: a one-page web app on 127.0.0.1 behind a random token
(:class:`proagent.serve.LocalServer`).

It lists what phase 1 retained or rated moderate (``DIR/.curate/<user>/items.json``),
shows each original screenshot (read from the raw input, never copied) with the
detected regions drawn, and records retain / blur / delete per screenshot as it is
made (``review.json``, rewritten atomically after every decision). ``proagent curate``
applies the decisions when run again. Keys: ``r`` retain, ``b`` blur, ``d`` delete,
``j``/right arrow next, ``k``/left arrow previous.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..serve import HttpError, LocalServer, Request, Response
from ..vault import read_file
from ._pipeline import STATE_DIR, load_decisions, save_decision
from .records import CurateManifest

__all__ = ["ReviewServer", "serve_review"]

_BODY = """
<header class="bar"><span id="pos"></span><span id="meta"></span>
<span>decision: <span id="decision"></span></span>
<button data-a="retain">retain (r)</button><button data-a="blur">blur (b)</button>
<button data-a="delete">delete (d)</button><button id="prev">prev (k)</button><button id="next">next (j)</button>
<span id="status"></span></header>
<div id="stage"><img id="shot" alt="screenshot"></div>
"""

_SCRIPT = """
const token = new URLSearchParams(location.search).get("token");
let items = [], i = 0;
const $ = id => document.getElementById(id);
async function load() {
  const r = await fetch("/api/items?token=" + token);
  items = (await r.json()).items; show();
}
function show() {
  document.querySelectorAll(".box").forEach(b => b.remove());
  if (!items.length) { $("pos").textContent = "nothing to review"; return; }
  const it = items[i];
  $("pos").textContent = (i + 1) + " / " + items.length;
  $("meta").textContent = it.user + " #" + it.screenshot_id + " " + it.app + " - " + it.title +
      " [" + it.risk + (it.types.length ? ": " + it.types.join(", ") : "") + "]";
  const d = it.decision || ("(proposed) " + it.action);
  $("decision").textContent = d; $("decision").className = it.decision || it.action;
  const img = $("shot");
  img.onload = () => {
    const sx = img.clientWidth / img.naturalWidth, sy = img.clientHeight / img.naturalHeight;
    for (const g of it.regions) {
      const b = document.createElement("div"); b.className = "box";
      b.style.left = (g.x0 * sx) + "px"; b.style.top = (g.y0 * sy) + "px";
      b.style.width = ((g.x1 - g.x0) * sx) + "px"; b.style.height = ((g.y1 - g.y0) * sy) + "px";
      const s = document.createElement("span"); s.textContent = g.type; b.appendChild(s);
      $("stage").appendChild(b);
    }
    document.body.dataset.ready = it.user + ":" + it.screenshot_id;
  };
  img.src = "/img/" + encodeURIComponent(it.user) + "/" + it.screenshot_id + "?token=" + token;
}
async function decide(action) {
  const it = items[i];
  const r = await fetch("/api/decision?token=" + token, {method: "POST",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify({user: it.user, screenshot_id: it.screenshot_id, action})});
  if (r.ok) { it.decision = action; $("status").textContent = "saved " + action + " #" + it.screenshot_id;
              if (i < items.length - 1) i++; show(); }
  else { $("status").textContent = "not saved: " + (await r.text()); }
}
document.addEventListener("keydown", e => {
  const k = e.key;
  if (k === "r") decide("retain"); else if (k === "b") decide("blur"); else if (k === "d") decide("delete");
  else if (k === "j" || k === "ArrowRight") { if (i < items.length - 1) { i++; show(); } }
  else if (k === "k" || k === "ArrowLeft") { if (i > 0) { i--; show(); } }
});
document.querySelectorAll("button[data-a]").forEach(b => b.onclick = () => decide(b.dataset.a));
$("next").onclick = () => { if (i < items.length - 1) { i++; show(); } };
$("prev").onclick = () => { if (i > 0) { i--; show(); } };
load();
"""


def _read_json(path: Path, what: str) -> Any:
    """``path`` parsed as JSON; a damaged file is one :class:`DataError` naming it."""
    try:
        return json.loads(path.read_text("utf-8"))
    except UnicodeDecodeError:
        raise DataError(path, f"{what} is not UTF-8 text (damaged); re-run proagent curate") from None
    except json.JSONDecodeError as e:
        raise DataError(
            path, f"{what} is not valid JSON ({e.msg} at line {e.lineno}); re-run proagent curate"
        ) from None
    except OSError as e:
        raise DataError(path, f"cannot read {what} ({e.strerror or e})") from None


def _load_items(out: Path) -> tuple[list[dict[str, Any]], dict[tuple[str, int], Path]]:
    state = out / STATE_DIR
    man = state / "manifest.json"
    if not man.is_file():
        raise DataError(out, "not a curate output (no .curate/manifest.json): run proagent curate RAW --out DIR first")
    users = CurateManifest.read(man).users
    items: list[dict[str, Any]] = []
    images: dict[tuple[str, int], Path] = {}
    for user in users:
        path = state / str(user) / "items.json"
        if not path.is_file():
            continue
        decisions = load_decisions(out, str(user))
        rows = _read_json(path, "the review items")
        try:
            for it in rows:
                sid = int(it["screenshot_id"])
                images[(str(user), sid)] = Path(str(it["image"]))
                items.append(
                    {k: v for k, v in it.items() if k != "image"} | {"user": str(user), "decision": decisions.get(sid)}
                )
        except (TypeError, KeyError, ValueError, AttributeError) as e:
            raise DataError(
                path, f"not a list of review items ({e.__class__.__name__}: {e}); re-run proagent curate"
            ) from None
    return items, images


class ReviewServer:
    """The review page's server (:class:`proagent.serve.LocalServer` on 127.0.0.1: token, Host,
    Origin and body checks)."""

    def __init__(self, out: str | Path, port: int = 0) -> None:
        self.out = Path(out)
        self.items, self.images = _load_items(self.out)
        self._server = srv = LocalServer("proagent-review", port, max_body=4096)
        self.token = srv.token
        """The random token every request must carry (``?token=...``)."""
        page = srv.html_page("proagent review", _BODY, script=_SCRIPT)
        srv.route("GET", "/", lambda req: Response.html(page))
        srv.route("GET", "/api/items", lambda req: Response.json({"items": self.items}))
        srv.route("GET", "/img/", self._image, prefix=True)
        srv.route("POST", "/api/decision", self._decide)

    @property
    def url(self) -> str:
        """The page's address, token included."""
        return self._server.url

    def _image(self, req: Request) -> Response:
        parts = req.parts
        try:
            key = (parts[1], int(parts[2]))
        except (IndexError, ValueError):
            raise HttpError(404, "not found") from None
        img = self.images.get(key)
        if img is None or not img.is_file():
            raise HttpError(404, "not found")
        ctype = "image/jpeg" if img.suffix.lower() in (".jpg", ".jpeg") else "image/png"
        return Response(read_file(img), ctype)  # decrypted in memory for an encrypted capture

    def _decide(self, req: Request) -> Response:
        body = req.json()
        try:
            user, sid, action = str(body["user"]), int(body["screenshot_id"]), str(body["action"])
            if (user, sid) not in self.images:
                raise ValueError("unknown screenshot")
            save_decision(self.out, user, sid, action)
        except (ValueError, KeyError, TypeError, OverflowError) as e:
            raise HttpError(400, f"bad decision: {e}") from None
        for it in self.items:
            if it["user"] == user and it["screenshot_id"] == sid:
                it["decision"] = action
        return Response.json({"saved": True})

    def start(self) -> ReviewServer:
        """Serve in a background thread."""
        self._server.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.close()


def serve_review(out: str | Path, port: int = 0) -> ReviewServer:
    """Load the review items of a curate output and start serving them (background thread).

    Raises:
        DataError: ``out`` is not a curate output, or its manifest or items are damaged.
        OSError: the port cannot be bound.
    """
    return ReviewServer(out, port).start()
