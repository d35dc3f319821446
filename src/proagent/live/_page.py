"""The local page: a live list of offers with Accept / Dismiss / Not now.

Served by :class:`proagent.serve.LocalServer` (127.0.0.1, a random free port by default,
the run's random token, Host / Origin / Sec-Fetch-Site checks, capped and timed-out bodies,
JSON errors). Routes:

``GET /?token=T``
    the page (polls ``/offers`` every 2 s).
``GET /offers?token=T``
    JSON ``{"offers": [{id, moment, created_at, text, query, intention, p_help, app_name, response}, ...],
    "questions": [{id, moment, asked_at, p_help, app_name, text, answer}, ...]}``, newest first; ``questions``:
    the sparse questions not answered yet (``--ask-rate``, :mod:`proagent.live._ask`; at most 5).
``POST /respond?token=T`` with JSON ``{"id": 3, "response": "accepted"|"dismissed"|"not_now"}``
    stores the response in ``feedback.db``; 200 ``{"ok": true, "help": started}``, 400 for an
    unknown offer or response. An accept starts the offer's help (:class:`~proagent.live.LiveHelp`).
    With JSON ``{"question": 2, "answer": "yes"|"no"}`` it answers a sparse question instead:
    200 ``{"ok": true}``, 400 for an unknown question or answer.
``GET /help?token=T&id=3``
    ``{"available": bool, "busy": bool, "turns": [{id, role, text, html, status, first_token_seconds,
    total_seconds, completion_tokens, rating}]}``: the offer's help so far (an answer being streamed:
    its text so far; ``html``: the answer rendered from Markdown, raw HTML escaped).
``POST /follow-up?token=T`` with JSON ``{"id": 3, "text": "..."}``
    asks a follow-up under the answer; 400 with the reason when it cannot be asked now.
``POST /rate?token=T`` with JSON ``{"id": 3, "rating": 1|-1}``
    rates the offer's latest answer (a How-to-Assist label).
``POST /block-app?token=T`` with JSON ``{"app": "xterm"}``
    "Not in this app": no offer in front of that app again, in this run and the next ones
    (the live folder's ``blocked-apps.json``, :func:`proagent.live.block_app`); 200
    ``{"ok": true, "blocked": ["xterm", ...]}``, 400 for a missing, empty or over-long name.
``POST /unblock-app?token=T`` with JSON ``{"app": "xterm"}``
    undo: 200 ``{"ok": true, "removed": true|false, "blocked": [...]}``.
``GET /blocked-apps?token=T``
    JSON ``{"blocked": [...]}``.

The page lists offers collapsed to one line (app and offer, the answer buttons); a click opens
one (its moment, "Not in this app", which posts ``/block-app`` ``{"app": ...}`` and offers an undo
through ``/unblock-app``, and its help: the answer streaming in, polled every 0.3 s while it
comes, code blocks with a copy button, thumbs up/down, a follow-up box). ``#offer-N`` in the
address opens offer N (a desktop notification's Accept opens the page there).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from ..errors import DataError, RunError, UsageError
from ..serve import HttpError, LocalServer, Request, Response
from ._feedback import FeedbackStore, parse_row_id
from ._restraint import block_app, blocked_apps, unblock_app

__all__ = ["OfferPage"]

MAX_BODY = 16 * 1024
"""Largest request body accepted, bytes: a follow-up of :data:`~proagent.live._help.MAX_QUESTION_CHARS`
characters (the box's limit) in JSON, each character up to 6 bytes (``\\uXXXX``; 4 in UTF-8), fits."""


@contextmanager
def _stored() -> Iterator[None]:
    """What the live folder's files refuse, as the page's answer: a damaged file (a
    :class:`~proagent.errors.DataError`, naming the file and its repair) is 409, a full disk (the
    answer is held in memory and written when space frees) 507, a bad value 400."""
    try:
        yield
    except HttpError:
        raise
    except DataError as e:
        raise HttpError(409, str(e)) from None
    except RunError as e:  # FeedbackFull, a blocked-app list held
        raise HttpError(507, str(e)) from None
    except ValueError as e:
        raise HttpError(400, str(e)) from None


def _json_id(value: Any) -> int | None:
    """An id in a JSON body: an integer 1 to 2**63-1 only (``true``, ``1.7``, ``"1"`` are refused)."""
    return parse_row_id(value) if isinstance(value, int) else None


_BODY = '<p class="meta" id="status">loading…</p><ul id="questions"></ul><ul id="offers"></ul>'

_SCRIPT = """
const token = new URLSearchParams(location.search).get("token");
const q = "?token="+encodeURIComponent(token);
const items = {}; const open = new Set(); const streaming = new Set();
let wanted = (location.hash.match(/^#offer-(\\d+)$/)||[])[1];
function el(tag, attrs, text){const e=document.createElement(tag);for(const k in attrs)e.setAttribute(k,attrs[k]);if(text)e.textContent=text;return e;}
async function post(path, body){
  const r = await fetch(path+q,{method:"POST",headers:{"Content-Type":"application/json"},body:JSON.stringify(body)});
  let data = {}; try{data = await r.json();}catch(e){}
  return {ok:r.ok, status:r.status, data:data};
}
async function respond(id, response){
  if(response==="accepted"){open.add(id); streaming.add(id);}
  await post("/respond",{id:id,response:response});
  await refresh();
}
function toggle(id){ if(open.has(id)) open.delete(id); else open.add(id); sync(id); if(open.has(id)) loadHelp(id); }
function sync(id){ const it = items[id]; it.li.classList.toggle("open", open.has(id)); it.body.hidden = !open.has(id); }
async function block(id, app, undo){
  const r = await post(undo ? "/unblock-app" : "/block-app", {app:app});
  const it = items[id]; it.blockmsg.replaceChildren();
  if(!r.ok){ it.blockmsg.textContent = "could not "+(undo?"undo":"block")+": "+(r.data.error||r.status); return; }
  if(undo){ it.blockmsg.textContent = "offers in "+app+" again"; it.blockbtn.hidden=false; return; }
  it.blockbtn.hidden = true;
  it.blockmsg.append("no more offers in "+app+" ");
  const u = el("button",{"class":"undo"},"Undo"); u.onclick=(ev)=>{ev.stopPropagation(); block(id, app, true);}; it.blockmsg.appendChild(u);
}
function copyButtons(box){
  for(const pre of box.querySelectorAll("pre")){
    const b = el("button",{"class":"copy"},"Copy");
    b.onclick = async ()=>{ const code = pre.querySelector("code"); try{await navigator.clipboard.writeText((code||pre).innerText); b.textContent="Copied";}catch(e){b.textContent="Copy failed";} };
    pre.prepend(b);
  }
}
function build(o){
  const li = el("li",{"id":"offer-"+o.id});
  const line = el("div",{"class":"line"});
  line.appendChild(el("span",{"class":"app"},o.app_name||"?"));
  const text = el("span",{"class":"text"}); line.appendChild(text);
  const acts = el("span",{"class":"acts"}); line.appendChild(acts);
  const resp = el("span",{"class":"meta response"}); line.appendChild(resp);
  line.onclick = (ev)=>{ if(ev.target.tagName!=="BUTTON") toggle(o.id); };
  li.appendChild(line);
  const body = el("div",{"class":"body"}); body.hidden = true;
  const meta = el("div",{"class":"meta"}); body.appendChild(meta);
  const blockbtn = el("button",{"class":"block-app"},"Not in this app");
  blockbtn.onclick = ()=>block(o.id, o.app_name, false);
  const blockmsg = el("span",{"class":"meta blockmsg"});
  if(o.app_name){ body.appendChild(blockbtn); body.appendChild(blockmsg); }
  const help = el("div",{"class":"help"}); body.appendChild(help);
  li.appendChild(body);
  items[o.id] = {li, text, acts, resp, meta, body, help, blockbtn, blockmsg, built:""};
  return li;
}
function fill(o){
  const it = items[o.id];
  it.li.setAttribute("data-response", o.response||"");
  it.li.className = o.response ? "answered" : "";
  it.text.textContent = o.text;
  const p = o.p_help==null?"":" · p="+o.p_help.toFixed(2);
  it.meta.textContent = o.moment.replace("T"," ")+(o.intention?" · "+o.intention:"")+p;
  it.resp.textContent = o.response ? o.response.replace("_"," ") : "";
  if(o.response){ it.acts.replaceChildren(); }
  else if(!it.acts.childElementCount){
    for(const [k,label] of [["accepted","Accept"],["dismissed","Dismiss"],["not_now","Not now"]]){
      const b = el("button",{"class":k,"data-id":o.id},label); b.onclick=()=>respond(o.id,k); it.acts.appendChild(b);}
  }
  sync(o.id);
}
function turnsView(id, data){
  const it = items[id]; const box = el("div",{});
  if(!data.available){ box.appendChild(el("p",{"class":"meta"},"no help model in this run (--model none)")); }
  for(const t of data.turns){
    const d = el("div",{"class":"turn "+t.role+" "+t.status,"data-turn":t.id});
    if(t.role==="user") d.textContent = t.text;
    else { if(t.reading) d.appendChild(el("div",{"class":"meta reading"},t.reading));
      if(t.status==="queued"){ d.appendChild(el("p",{"class":"meta queued"},t.note||"queued")); box.appendChild(d); continue; }
      const ans = el("div",{}); ans.innerHTML = t.html || (t.status==="streaming" ? "<p class=meta>thinking…</p>" : ""); d.appendChild(ans); copyButtons(d);
      if(t.status==="interrupted") d.appendChild(el("div",{"class":"meta interrupted"},"interrupted: the run stopped while this answer was written"+(t.text?" (its text so far above)":"")));
      if(t.status==="done" && t.first_token_seconds!=null)
        d.appendChild(el("div",{"class":"meta timing"},"first words after "+t.first_token_seconds.toFixed(1)+" s, whole answer "+t.total_seconds.toFixed(1)+" s"+(t.completion_tokens?" · "+t.completion_tokens+" tokens":"")));
    }
    box.appendChild(d);
  }
  const last = data.turns.length ? data.turns[data.turns.length-1] : null;
  if(data.available && last && last.role==="assistant" && (last.status==="interrupted"||last.status==="error") && !data.busy){
    const b = el("button",{"class":"retry"},"Answer again");
    b.onclick = async ()=>{ await post("/respond",{id:id,response:"accepted"}); streaming.add(id); await loadHelp(id); };
    box.appendChild(b);
  }
  if(last && last.role==="assistant" && last.status==="done"){
    const rate = el("div",{"class":"rate"});
    for(const [v,label,cls] of [[1,"Helpful","up"],[-1,"Not helpful","down"]]){
      const b = el("button",{"class":"rate-"+cls+(last.rating===v?" rated":"")},(last.rating===v?"✓ ":"")+label);
      b.onclick = async ()=>{ await post("/rate",{id:id,rating:v}); await loadHelp(id); }; rate.appendChild(b);
    }
    box.appendChild(rate);
  }
  return box;
}
async function loadHelp(id){
  const it = items[id]; if(!it || it.li.getAttribute("data-response")!=="accepted") return;
  const r = await fetch("/help"+q+"&id="+id); if(!r.ok) return;
  const data = await r.json();
  if(data.busy) streaming.add(id); else streaming.delete(id);
  const key = JSON.stringify(data);
  if(key===it.built) return;
  it.built = key;
  let ask = it.help.querySelector(".ask");
  it.help.replaceChildren(turnsView(id, data));
  if(data.available && data.turns.length){
    if(!ask){
      ask = el("form",{"class":"ask"});
      const input = el("input",{"type":"text","name":"q","placeholder":"Ask a follow-up…","maxlength":"2000"});
      const send = el("button",{"type":"submit","class":"ask-send"},"Ask");
      const why = el("span",{"class":"meta why"});
      ask.append(input, send, why);
      ask.onsubmit = async (ev)=>{ ev.preventDefault(); const text=input.value.trim(); if(!text) return;
        const res = await post("/follow-up",{id:id,text:text});
        if(res.ok){ input.value=""; why.textContent=""; streaming.add(id); await loadHelp(id);} else why.textContent = res.data.error||("error "+res.status); };
    }
    it.help.appendChild(ask);
  }
}
async function answer(id, a){ await post("/respond",{question:id,answer:a}); await refresh(); }
function questions(qs){
  const ul = document.getElementById("questions"); ul.replaceChildren();
  for(const x of qs||[]){
    const li = el("li",{"id":"question-"+x.id,"class":"question"});
    li.appendChild(el("span",{"class":"app"},x.app_name||"?"));
    li.appendChild(el("span",{"class":"text"},"Would help have been useful just now? ("+x.moment.replace("T"," ")+")"));
    for(const [k,label] of [["yes","Yes"],["no","No"]]){ const b = el("button",{"class":"answer-"+k,"data-id":x.id},label); b.onclick=()=>answer(x.id,k); li.appendChild(b); }
    ul.appendChild(li);
  }
}
async function refresh(){
  const r = await fetch("/offers"+q);
  if(!r.ok){document.getElementById("status").textContent="error "+r.status;return;}
  const data = await r.json(); const ul = document.getElementById("offers");
  questions(data.questions);
  const order = [];
  for(const o of data.offers){ if(!items[o.id]) build(o); fill(o); order.push(items[o.id].li); }
  for(let i=0;i<order.length;i++){ if(ul.children[i]!==order[i]) ul.insertBefore(order[i], ul.children[i]||null); }
  if(wanted && items[wanted]){ open.add(Number(wanted)); sync(Number(wanted)); items[wanted].li.scrollIntoView(); wanted=null; }
  for(const id of open) await loadHelp(id);
  document.getElementById("status").textContent = data.offers.length+" offer(s)"+(data.regime?" · "+data.regime:"");
}
setInterval(()=>{ for(const id of streaming) loadHelp(id); }, 300);
refresh(); setInterval(refresh, 2000);
"""


def _regime(folder: Any) -> str | None:
    """How the learning decider offers now (``learning/manifest.json``'s ``regime.text``: day one by rank,
    or the cost threshold), ``None`` without one."""
    import json

    from .. import live_files

    try:
        m = json.loads((folder / live_files.LEARNING_DIR / "manifest.json").read_text("utf-8"))
        text = m.get("regime", {}).get("text")
    except (OSError, ValueError, AttributeError):
        return None
    return text if isinstance(text, str) else None


def _markdown() -> Callable[[str], str]:
    """Markdown to HTML with raw HTML escaped (markdown-it-py, CommonMark, ``html`` off: a model's
    ``<script>`` arrives as text; links with ``javascript:`` and the like are refused by its
    ``validateLink``)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    return md.render


class OfferPage:
    """The local page server (a daemon thread, :class:`proagent.serve.LocalServer`) for one
    live folder's ``feedback.db``.

    Args:
        store: the feedback database.
        now: the loop's clock (response times).
        port: TCP port on 127.0.0.1 (0: a free one).

    Raises:
        UsageError: (``--port``) the port cannot be bound.
    """

    def __init__(self, store: FeedbackStore, now: Callable[[], datetime], port: int = 0, help: Any = None) -> None:
        self.store, self.now, self.help = store, now, help
        self._md = _markdown()
        try:
            self._server = srv = LocalServer("proagent-page", port, max_body=MAX_BODY)
        except OSError as e:  # the port is taken (or not ours to bind): one line, as review says it
            raise UsageError("--port", f"{port}: cannot listen on 127.0.0.1 ({e.strerror or e})") from None
        self.token = srv.token
        self.port = srv.port
        page_html = srv.html_page("proagent offers", _BODY, script=_SCRIPT)
        srv.route("GET", "/", lambda req: Response.html(page_html))
        srv.route(
            "GET",
            "/offers",
            lambda req: Response.json(
                {
                    "offers": store.offers(limit=100),
                    "questions": store.questions(open_only=True, limit=5),
                    "regime": _regime(self.folder),
                }
            ),
        )
        srv.route("POST", "/respond", self._respond)
        srv.route("POST", "/block-app", self._block_app)
        srv.route("POST", "/unblock-app", self._unblock_app)
        srv.route("GET", "/blocked-apps", self._blocked)
        srv.route("GET", "/help", self._help)
        srv.route("POST", "/follow-up", self._follow_up)
        srv.route("POST", "/rate", self._rate)
        srv.start()
        if help is not None:
            help.page_url = self.url

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
        app = self._app(req)
        with _stored():
            apps = block_app(self.folder, app)
        return Response.json({"ok": True, "blocked": list(apps)})

    def _unblock_app(self, req: Request) -> Response:
        app = self._app(req)
        with _stored():
            removed = unblock_app(self.folder, app)
            return Response.json({"ok": True, "removed": removed, "blocked": list(blocked_apps(self.folder))})

    def _blocked(self, req: Request) -> Response:
        with _stored():
            return Response.json({"blocked": list(blocked_apps(self.folder))})

    def _respond(self, req: Request) -> Response:
        body = req.json()
        if isinstance(body, dict) and "question" in body:  # a sparse question's answer (--ask-rate)
            qid, answer = _json_id(body.get("question")), body.get("answer")
            if qid is None or not isinstance(answer, str):
                raise HttpError(400, "expected JSON {question: id, answer}; an id is a whole number 1 to 2**63-1")
            with _stored():
                if not self.store.answer_question(qid, answer, self.now(), source="page"):
                    raise HttpError(400, "unknown question or answer")
            return Response.json({"ok": True})
        oid = _json_id(body.get("id")) if isinstance(body, dict) else None
        resp = body.get("response") if isinstance(body, dict) else None
        if oid is None or not isinstance(resp, str):
            raise HttpError(400, "expected JSON {id, response}; an id is a whole number 1 to 2**63-1")
        with _stored():
            if resp == "ignored" or not self.store.respond(oid, resp, self.now(), source="page"):
                raise HttpError(400, "unknown offer or response")
        started = resp == "accepted" and self.help is not None and self.help.accept(oid, source="page")
        return Response.json({"ok": True, "help": bool(started)})

    @staticmethod
    def _id(value: Any) -> int:
        oid = _json_id(value)
        if oid is None:
            raise HttpError(400, "expected an offer id (a whole number 1 to 2**63-1)")
        return oid

    def _help(self, req: Request) -> Response:
        raw = (req.query.get("id") or [None])[0]
        oid = self._id(parse_row_id(raw) if isinstance(raw, str) else None)
        if self.help is None:
            return Response.json({"available": False, "busy": False, "turns": []})
        with _stored():  # a damaged help turn: 409 naming feedback.db, the row and its repair
            turns = self.help.turns(oid)
        for t in turns:
            t["html"] = self._md(t["text"]) if t["role"] == "assistant" else None
        return Response.json({"available": self.help.model is not None, "busy": self.help.busy(oid), "turns": turns})

    def _follow_up(self, req: Request) -> Response:
        body = req.json()
        if not isinstance(body, dict) or not isinstance(body.get("text"), str):
            raise HttpError(400, "expected JSON {id, text}")
        if self.help is None:
            raise HttpError(400, "no help in this run")
        why = self.help.follow_up(self._id(body.get("id")), body["text"], source="page")
        if why is not None:
            raise HttpError(400, why)
        return Response.json({"ok": True})

    def _rate(self, req: Request) -> Response:
        body = req.json()
        rating = body.get("rating") if isinstance(body, dict) else None
        if not isinstance(rating, int) or isinstance(rating, bool) or rating not in (1, -1):
            raise HttpError(400, "expected JSON {id, rating: 1 or -1}")
        if self.help is None or not self.help.rate(self._id(body.get("id")), rating, source="page"):
            raise HttpError(400, "no answer to rate")
        return Response.json({"ok": True})

    @property
    def url(self) -> str:
        """The page's address, with the token."""
        return self._server.url

    def close(self) -> None:
        """Stop serving."""
        self._server.close()
