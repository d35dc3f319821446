"""A moment with a traceback and planted personal data on screen, and a feedback store holding
offers about it: the shared set-up of the help tests (page, terminal, privacy)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from proagent.live import FeedbackStore
from proagent.records import Event, Sample, Screenshot

T0 = datetime(2026, 12, 3, 9, 0, 0)

PLANTED = {
    "EMAIL": "jane.roe@example.org",
    "PHONE": "+44 20 7946 0958",
    "API_KEY": "sk-proj-4f9XbQ2mT7kLpR8vN3wZ1yH6",
    "IP": "203.0.113.57",
    "CARD": "4111 1111 1111 1111",
}
"""Personal data planted on the screen and in window titles, of the types curate's recognizers find
without spaCy (names need ``en_core_web_sm``): none of it may reach a remote model."""

SCREEN = f"""app.py - editor
def login(request):
    session = request.session
    return session["user_id"]
$ python app.py
Logged in as <{PLANTED['EMAIL']}>, call {PLANTED['PHONE']}, card {PLANTED['CARD']}
export OPENAI_API_KEY={PLANTED['API_KEY']}
Traceback (most recent call last):
  File "app.py", line 42, in <module>
    login(req)
  File "app.py", line 12, in login
    return session["user_id"]
KeyError: 'user_id'
"""


def _event(i: int, app: str, title: str, summary: str, ocr: str = "", seconds: int = 40) -> Event:
    start = T0 + timedelta(seconds=60 * i)
    shot = Screenshot(
        id=i,
        time=start + timedelta(seconds=5),
        app_name=app,
        window_title=title,
        file_name=f"screen_{i}.png",
        ocr_text=ocr,
    )
    return Event(
        id=str(i),
        user="u1",
        start=start,
        end=start + timedelta(seconds=seconds),
        app_name=app,
        window_title=title,
        summary=summary,
        screenshots=(shot,),
    )


def traceback_sample(sid: str = "u1:3:candidate") -> Sample:
    """The moment: editing app.py, then a terminal showing ``KeyError: 'user_id'`` (with PII)."""
    ctx = (
        _event(0, "Firefox", f"Inbox - {PLANTED['EMAIL']} - Mail", "reading mail"),
        _event(1, "Code", "app.py - myapp", "editing the login function of app.py"),
    )
    cur = _event(2, "Terminal", f"deploy@{PLANTED['IP']}: ~/myapp", "running python app.py", SCREEN)
    return Sample(
        id=sid,
        user="u1",
        time=T0 + timedelta(seconds=170),
        label=0,
        split="test",
        kind="candidate",
        context=ctx,
        current=cur,
        window_seconds=300.0,
    )


def store_with_offers(folder: Path, n: int = 2) -> tuple[FeedbackStore, list]:
    """A feedback store with ``n`` offers about :func:`traceback_sample` (the first with a predicted
    query, the others generic)."""
    st = FeedbackStore(folder)
    offers = []
    for i in range(n):
        q = "Why does app.py raise KeyError: 'user_id' after login?" if i == 0 else None
        text = f"Want help with this? “{q}”" if q else "Need a hand with this? (Terminal)"
        offers.append(
            st.add_offer(
                traceback_sample(f"u1:{i}:candidate"),
                text=text,
                query=q,
                intention="Code Programming",
                p_help=0.9,
                notifier="page",
                created_at=T0 + timedelta(minutes=3),
                app_name="Terminal",
            )
        )
    return st, offers


def scripted_reply(messages: list[dict[str, str]]) -> str:
    """An answer that shows it read the screen and the turn it answers (Markdown with a code block)."""
    last = messages[-1]["content"]
    if len([m for m in messages if m["role"] == "user"]) > 1:
        return f"Follow-up on **{last[:40]}**: use `session.get(\"user_id\")` and redirect to the login page."
    err = "KeyError: 'user_id'" if "KeyError: 'user_id'" in last else "no error seen"
    return (
        f"The traceback ends in `{err}`: the session has no `user_id` yet.\n\n"
        "Set it when the login succeeds:\n\n```python\nsession[\"user_id\"] = user.id\n```\n"
    )


def write_capture(folder: Path, t0: datetime, apps: list[tuple[str, str, str]], *, seconds: float = 20.0) -> list[int]:
    """Events written into a capture folder as ``proagent capture`` does (its Store), one screenshot
    each with its OCR row as capture's OCR worker writes it; ``apps``: ``(app, title, screen text)``;
    the last event is left open. Returns the event ids."""
    import hashlib

    from lifetrace_fixtures import tiny_png

    from proagent.capture import Store

    st = Store(folder)
    ids, prev = [], None
    for i, (app, title, ocr) in enumerate(apps):
        t = t0 + timedelta(seconds=seconds * i)
        if prev is not None:
            st.close_event(prev, t)
        eid = st.open_event(app, title, t)
        png = tiny_png(i)
        sid = st.add_screenshot(
            event_id=eid,
            screen_id=0,
            t=t + timedelta(seconds=1),
            data=png,
            ext="png",
            file_hash=hashlib.sha256(png).hexdigest(),
            width=4,
            height=4,
            app=app,
            title=title,
        )
        if ocr:
            st.con.execute(
                "INSERT INTO ocr_results (screenshot_id, text_content, confidence, language, processing_time, "
                "created_at) VALUES (?, ?, 0.9, 'en', 0.1, ?)",
                (sid, ocr, t.isoformat(sep=" ")),
            )
            st.con.execute("UPDATE screenshots SET is_processed = 1 WHERE id = ?", (sid,))
            st.con.commit()
        ids.append(eid)
        prev = eid
    st.close()
    return ids
