"""The local page: a live list of offers with Accept / Dismiss / Not now.

Served by :class:`proagent.serve.LocalServer` (127.0.0.1, a random free port by default,
the run's random token, Host / Origin / Sec-Fetch-Site checks, capped and timed-out bodies,
JSON errors). Routes:

``GET /?token=T``
    the page (polls ``/offers`` every 2 s).
``GET /offers?token=T``
    JSON ``{"offers": [{id, moment, created_at, text, query, intention, p_help, app_name, response}, ...]}``, newest first.
``POST /respond?token=T`` with JSON ``{"id": 3, "response": "accepted"|"dismissed"|"not_now"}``
    stores the response in ``feedback.db``; 200 ``{"ok": true}``, 400 for an
    unknown offer or response.
``POST /block-app?token=T`` with JSON ``{"app": "xterm"}``
    "Not in this app": no offer in front of that app again, in this run and the next ones
    (the live folder's ``blocked-apps.json``, :func:`proagent.live.block_app`); 200
    ``{"ok": true, "blocked": ["xterm", ...]}``, 400 for a missing, empty or over-long name.
``POST /unblock-app?token=T`` with JSON ``{"app": "xterm"}``
    undo: 200 ``{"ok": true, "removed": true|false, "blocked": [...]}``.
``GET /blocked-apps?token=T``
    JSON ``{"blocked": [...]}``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from ..serve import HttpError, LocalServer, Request, Response
from ._feedback import FeedbackStore
from ._restraint import block_app, blocked_apps, unblock_app

__all__ = ["OfferPage"]

_BODY = '<p class="meta" id="status">loading…</p><ul id="offers"></ul>'

_SCRIPT = """
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
"""


class OfferPage:
    """The local page server (a daemon thread, :class:`proagent.serve.LocalServer`) for one
    live folder's ``feedback.db``.

    Args:
        store: the feedback database.
        now: the loop's clock (response times).
        port: TCP port on 127.0.0.1 (0: a free one).

    Raises:
        OSError: the port cannot be bound.
    """

    def __init__(self, store: FeedbackStore, now: Callable[[], datetime], port: int = 0) -> None:
        self.store, self.now = store, now
        self._server = srv = LocalServer("proagent-page", port, max_body=4096)
        self.token = srv.token
        self.port = srv.port
        page_html = srv.html_page("proagent offers", _BODY, script=_SCRIPT)
        srv.route("GET", "/", lambda req: Response.html(page_html))
        srv.route("GET", "/offers", lambda req: Response.json({"offers": store.offers(limit=100)}))
        srv.route("POST", "/respond", self._respond)
        srv.route("POST", "/block-app", self._block_app)
        srv.route("POST", "/unblock-app", self._unblock_app)
        srv.route("GET", "/blocked-apps", lambda req: Response.json({"blocked": list(blocked_apps(self.folder))}))
        srv.start()

    @property
    def folder(self):  # noqa: ANN201
        """The live folder (beside ``feedback.db``), where blocked apps are kept."""
        return self.store.path.parent

    def _app(self, req: Request) -> str:
        body = req.json()
        app = body.get("app") if isinstance(body, dict) else None
        if not isinstance(app, str) or not app.strip():
            raise HttpError(400, "expected JSON {app}")
        return app

    def _block_app(self, req: Request) -> Response:
        try:
            apps = block_app(self.folder, self._app(req))
        except ValueError as e:
            raise HttpError(400, str(e)) from None
        return Response.json({"ok": True, "blocked": list(apps)})

    def _unblock_app(self, req: Request) -> Response:
        try:
            removed = unblock_app(self.folder, self._app(req))
        except ValueError as e:
            raise HttpError(400, str(e)) from None
        return Response.json({"ok": True, "removed": removed, "blocked": list(blocked_apps(self.folder))})

    def _respond(self, req: Request) -> Response:
        body = req.json()
        try:
            oid, resp = int(body["id"]), str(body["response"])
        except (ValueError, KeyError, TypeError, OverflowError):
            raise HttpError(400, "expected JSON {id, response}") from None
        if resp == "ignored" or not self.store.respond(oid, resp, self.now(), source="page"):
            raise HttpError(400, "unknown offer or response")
        return Response.json({"ok": True})

    @property
    def url(self) -> str:
        """The page's address, with the token."""
        return self._server.url

    def close(self) -> None:
        """Stop serving."""
        self._server.close()
