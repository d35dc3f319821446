"""The local page: a live list of offers with Accept / Dismiss / Not now.

Served on 127.0.0.1 only, on a random free port by default. Every request
must carry the run's random token (``?token=...``, 128 bits from
:mod:`secrets`, compared in constant time) and a ``Host`` of 127.0.0.1 or
localhost (no DNS rebinding); anything else gets 403. Routes:

``GET /?token=T``
    the page (polls ``/offers`` every 2 s).
``GET /offers?token=T``
    JSON ``{"offers": [{id, moment, created_at, text, query, intention, p_help, app_name, response}, ...]}``, newest first.
``POST /respond?token=T`` with JSON ``{"id": 3, "response": "accepted"|"dismissed"|"not_now"}``
    stores the response in ``feedback.db``; 200 ``{"ok": true}``, 400 for an
    unknown offer or response.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from collections.abc import Callable
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from ._feedback import FeedbackStore

__all__ = ["OfferPage"]

_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>proagent offers</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;color:#222}
li{list-style:none;border:1px solid #ccc;border-radius:6px;padding:.6rem .8rem;margin:.5rem 0}
li.answered{opacity:.55} .meta{font-size:.8rem;color:#666} button{margin-right:.4rem}
</style></head><body>
<h1>proagent offers</h1>
<p class="meta" id="status">loading…</p>
<ul id="offers"></ul>
<script>
const token = new URLSearchParams(location.search).get("token");
function el(tag, attrs, text){const e=document.createElement(tag);for(const k in attrs)e.setAttribute(k,attrs[k]);if(text)e.textContent=text;return e;}
async function respond(id, response){
  await fetch("/respond?token="+encodeURIComponent(token),{method:"POST",headers:{"Content-Type":"application/json"},
    body:JSON.stringify({id:id,response:response})});
  await refresh();
}
async function refresh(){
  const r = await fetch("/offers?token="+encodeURIComponent(token));
  if(!r.ok){document.getElementById("status").textContent="error "+r.status;return;}
  const data = await r.json(); const ul = document.getElementById("offers"); ul.replaceChildren();
  for(const o of data.offers){
    const li = el("li",{"id":"offer-"+o.id,"data-response":o.response||""});
    if(o.response) li.className="answered";
    li.appendChild(el("div",{"class":"text"},o.text));
    const p = o.p_help==null?"":" · p="+o.p_help.toFixed(2);
    li.appendChild(el("div",{"class":"meta"},o.moment.replace("T"," ")+" · "+(o.app_name||"?")+(o.intention?" · "+o.intention:"")+p));
    if(o.response){li.appendChild(el("div",{"class":"meta response"},o.response.replace("_"," ")));}
    else for(const [k,label] of [["accepted","Accept"],["dismissed","Dismiss"],["not_now","Not now"]]){
      const b = el("button",{"class":k,"data-id":o.id},label); b.onclick=()=>respond(o.id,k); li.appendChild(b);}
    ul.appendChild(li);
  }
  document.getElementById("status").textContent = data.offers.length+" offer(s)";
}
refresh(); setInterval(refresh, 2000);
</script></body></html>
"""


class OfferPage:
    """The local page server (a daemon thread) for one live folder's ``feedback.db``.

    Args:
        store: the feedback database.
        now: the loop's clock (response times).
        port: TCP port on 127.0.0.1 (0: a free one).

    Raises:
        OSError: the port cannot be bound.
    """

    def __init__(self, store: FeedbackStore, now: Callable[[], datetime], port: int = 0) -> None:
        self.store, self.now = store, now
        self.token = secrets.token_urlsafe(16)
        page = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: object) -> None:  # no request log: URLs carry the token
                pass

            def _send(self, code: int, body: bytes, ctype: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("X-Content-Type-Options", "nosniff")
                self.send_header("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline' 'self'; "
                                 "style-src 'unsafe-inline'")
                self.end_headers()
                self.wfile.write(body)

            def _json(self, code: int, obj: object) -> None:
                self._send(code, json.dumps(obj, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8")

            def _authorised(self) -> bool:
                host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
                tok = parse_qs(urlparse(self.path).query).get("token", [""])[0]
                return host in ("127.0.0.1", "localhost") and hmac.compare_digest(tok.encode(), page.token.encode())

            def do_GET(self) -> None:  # noqa: N802
                if not self._authorised():
                    return self._json(403, {"error": "forbidden"})
                route = urlparse(self.path).path
                if route == "/":
                    return self._send(200, _HTML.encode("utf-8"), "text/html; charset=utf-8")
                if route == "/offers":
                    return self._json(200, {"offers": page.store.offers(limit=100)})
                return self._json(404, {"error": "not found"})

            def do_POST(self) -> None:  # noqa: N802
                if not self._authorised():
                    return self._json(403, {"error": "forbidden"})
                if urlparse(self.path).path != "/respond":
                    return self._json(404, {"error": "not found"})
                try:
                    n = min(int(self.headers.get("Content-Length") or 0), 4096)
                    body = json.loads(self.rfile.read(n) or b"{}")
                    oid, resp = int(body["id"]), str(body["response"])
                except (ValueError, KeyError, TypeError):
                    return self._json(400, {"error": "expected JSON {id, response}"})
                if resp == "ignored" or not page.store.respond(oid, resp, page.now(), source="page"):
                    return self._json(400, {"error": "unknown offer or response"})
                return self._json(200, {"ok": True})

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.5},
                                        daemon=True, name="proagent-page")
        self._thread.start()

    @property
    def url(self) -> str:
        """The page's address, with the token."""
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
