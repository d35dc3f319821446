"""Phase 2, human review: a one-page web app on 127.0.0.1 behind a random token.

It lists what phase 1 retained or rated moderate (``DIR/.curate/<user>/items.json``),
shows each original screenshot (read from the raw input, never copied) with the
detected regions drawn, and records retain / blur / delete per screenshot as it is
made (``review.json``, rewritten atomically after every decision). ``proagent curate``
applies the decisions when run again. Keys: ``r`` retain, ``b`` blur, ``d`` delete,
``j``/right arrow next, ``k``/left arrow previous.
"""

from __future__ import annotations

import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from ..errors import DataError
from ._pipeline import STATE_DIR, load_decisions, save_decision

__all__ = ["ReviewServer", "serve_review"]

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>proagent review</title>
<style>
body{font-family:sans-serif;margin:0;background:#222;color:#eee}
header{padding:8px 12px;background:#333;display:flex;gap:16px;align-items:center}
#stage{position:relative;display:inline-block;margin:12px}
#shot{max-width:calc(100vw - 40px);max-height:calc(100vh - 140px);display:block}
.box{position:absolute;border:2px solid #f33;background:rgba(255,0,0,.15)}
.box span{position:absolute;top:-16px;left:0;font-size:11px;background:#f33;color:#fff;padding:0 3px}
#decision{font-weight:bold} .retain{color:#6c6} .blur{color:#fc3} .delete{color:#f66}
button{font-size:14px}
</style></head><body>
<header><span id="pos"></span><span id="meta"></span>
<span>decision: <span id="decision"></span></span>
<button data-a="retain">retain (r)</button><button data-a="blur">blur (b)</button>
<button data-a="delete">delete (d)</button><button id="prev">prev (k)</button><button id="next">next (j)</button>
<span id="status"></span></header>
<div id="stage"><img id="shot" alt="screenshot"></div>
<script>
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
</script></body></html>
"""


def _load_items(out: Path) -> tuple[list[dict[str, Any]], dict[tuple[str, int], Path]]:
    state = out / STATE_DIR
    man = state / "manifest.json"
    if not man.is_file():
        raise DataError(out, "not a curate output (no .curate/manifest.json): run proagent curate RAW --out DIR first")
    users = json.loads(man.read_text("utf-8")).get("users", {})
    items: list[dict[str, Any]] = []
    images: dict[tuple[str, int], Path] = {}
    for user in users:
        path = state / user / "items.json"
        if not path.is_file():
            continue
        decisions = load_decisions(out, user)
        for it in json.loads(path.read_text("utf-8")):
            sid = int(it["screenshot_id"])
            images[(user, sid)] = Path(it["image"])
            items.append({k: v for k, v in it.items() if k != "image"} | {"user": user, "decision": decisions.get(sid)})
    return items, images


class ReviewServer:
    """The review page's HTTP server (``ThreadingHTTPServer`` bound to 127.0.0.1)."""

    def __init__(self, out: str | Path, port: int = 0) -> None:
        self.out = Path(out)
        self.items, self.images = _load_items(self.out)
        self.token = secrets.token_urlsafe(18)
        """The random token every request must carry (``?token=...``)."""
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The page's address, token included."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/?token={self.token}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        srv = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # request lines carry the token

            def _send(self, code: int, body: bytes, ctype: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("Referrer-Policy", "no-referrer")
                self.end_headers()
                self.wfile.write(body)

            def _authorised(self) -> bool:
                q = parse_qs(urlparse(self.path).query)
                ok = secrets.compare_digest((q.get("token") or [""])[0], srv.token)
                if not ok:
                    self._send(403, b"forbidden: missing or wrong token", "text/plain")
                return ok

            def do_GET(self) -> None:  # noqa: N802
                if not self._authorised():
                    return
                path = urlparse(self.path).path
                if path == "/":
                    self._send(200, _PAGE.encode("utf-8"), "text/html; charset=utf-8")
                elif path == "/api/items":
                    self._send(200, json.dumps({"items": srv.items}, ensure_ascii=False).encode("utf-8"),
                               "application/json")
                elif path.startswith("/img/"):
                    parts = path.split("/")
                    try:
                        from urllib.parse import unquote

                        key = (unquote(parts[2]), int(parts[3]))
                    except (IndexError, ValueError):
                        self._send(404, b"not found", "text/plain")
                        return
                    img = srv.images.get(key)
                    if img is None or not img.is_file():
                        self._send(404, b"not found", "text/plain")
                        return
                    ctype = "image/jpeg" if img.suffix.lower() in (".jpg", ".jpeg") else "image/png"
                    self._send(200, img.read_bytes(), ctype)
                else:
                    self._send(404, b"not found", "text/plain")

            def do_POST(self) -> None:  # noqa: N802
                if not self._authorised():
                    return
                if urlparse(self.path).path != "/api/decision":
                    self._send(404, b"not found", "text/plain")
                    return
                try:
                    body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                    user, sid, action = str(body["user"]), int(body["screenshot_id"]), str(body["action"])
                    if (user, sid) not in srv.images:
                        raise ValueError("unknown screenshot")
                    save_decision(srv.out, user, sid, action)
                except (ValueError, KeyError, TypeError, json.JSONDecodeError) as e:
                    self._send(400, f"bad decision: {e}".encode(), "text/plain")
                    return
                for it in srv.items:
                    if it["user"] == user and it["screenshot_id"] == sid:
                        it["decision"] = action
                self._send(200, b'{"saved": true}', "application/json")

        return Handler

    def start(self) -> ReviewServer:
        """Serve in a background thread."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.httpd.shutdown()
        self.httpd.server_close()


def serve_review(out: str | Path, port: int = 0) -> ReviewServer:
    """Load the review items of a curate output and start serving them (background thread).

    Raises:
        DataError: ``out`` is not a curate output.
        OSError: the port cannot be bound.
    """
    return ReviewServer(out, port).start()
