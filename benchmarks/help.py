"""The help an accepted offer gives (issue 32, item 6): how close it comes to the reply the person
actually got, and how fast it comes.

At every LLM-use event of a log, at the moment before the person's own query (the live agent's
sample for that event: the earlier events of the window, the screen text of the window in front),
the help (:mod:`proagent.live._help`: the same prompt files and context as ``proagent live``) is
asked three ways:

* **predicted**: the How model's predicted query for the moment, with the moment's context (what
  the person gets after Accept);
* **true**: the person's real query, with the same context (the upper bound: a perfect prediction);
* **context-free**: the predicted query with no screen and no history (what grounding adds).

Each answer is compared with the reply the person actually got (the log's conversation):

* **similarity**: cosine of multilingual-e5-small embeddings (:func:`proagent.live.tasks.reply_similarity`);
* **judge**: a score 1-10 from a judge model with the rubric ``proagent/live/prompts/help_judge.txt``
  (correct, specific to the screen, actionable, answers the real question). The default judge is
  the local 1.5B model: its scores are a weak signal (it rarely uses the whole scale and can prefer
  longer answers); pass a stronger ``--judge`` for figures to quote.

The moments, the similarity and the judge are the inspect task ``proagent/help``'s
(:mod:`proagent.live.tasks`; its ``real`` condition is ``true`` here); this script adds the local
model's streaming, timed.

Timing: seconds from sending the help prompt to its first streamed token and to its end, and the
tokens generated, per condition (the local model streams; the context is evaluated on Accept
here, without the read-ahead ``proagent live`` does while an offer is on screen: ``--read-ahead``
measures that too). The paired difference predicted - context-free is printed with a bootstrap
95% CI (10,000 resamples of the moments).

Data: ``--log`` any log with LLM-use events that record the conversation (``proagent annotate``
output, ProAgentBench's processed database); by default the scripted desktop day's long script
(``tests/scenarios/desktop.py``: three chat questions, a failing Python program, mail and documents
between them), its events rebuilt from the script's planted screen text without running the X
session (no OCR noise: an upper bound on what capture would give).

    python benchmarks/help.py [--log PATH] [--model local/qwen2.5-coder-1.5b] [--judge MODEL]
        [--limit N] [--read-ahead] [--max-tokens N] [--json out.json] [--timeout 3600] [--smoke]
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    apply_smoke,
    guard_network,
    machine_note,
    parse_args,
    percentile,
    render_table,
    watchdog,
    write_result,
)

# --------------------------------------------------------------------------- moments


def scripted_events() -> list[Any]:
    """The long desktop-day script as events (one per run of steps on one window), each with one
    screenshot holding the window's planted text as its OCR text."""
    sys.path.insert(0, str(ROOT / "tests"))
    from scenarios.desktop import LONG, PAGES, TERM_TITLE, _merge

    from proagent.records import Conversation, Event, Screenshot

    traceback = (
        "$ python3 app.py\nTraceback (most recent call last):\n  File \"app.py\", line 13, in <module>\n"
        "    main()\n  File \"app.py\", line 10, in main\n    print(load_profile(session))\n"
        "  File \"app.py\", line 5, in load_profile\n    return {\"name\": session[\"user_name\"], "
        "\"id\": session[\"user_id\"]}\nKeyError: 'user_id'"
    )
    t, events, term, asked = datetime(2026, 12, 3, 9, 0), [], "$", set()
    for i, run in enumerate(_merge(LONG.steps)):
        w = run[0].window
        seconds = sum(s.seconds for s in run)
        typed = "".join(s.type for s in run)
        llm = False
        conv = None
        if w == "term":
            if "python3 app.py" in typed:
                term = traceback
            elif "epoch" in typed:
                term = "\n".join(f"epoch {k}/6 loss 0.{9 - k}1" for k in range(1, 7))
            elif "clear" in typed:
                term = "$ " + typed.split("clear", 1)[1].strip("; \n")
            app, title, text = "xterm", TERM_TITLE, term
        else:
            p = PAGES[w]
            app, title = "chromium", p.window
            if p.is_llm and w not in asked and "\n" in typed:
                asked.add(w)
                llm, conv = True, Conversation((p.query,), (p.reply,), f"User: {p.query}\nAssistant: {p.reply}")
            text = "\n".join([p.title, *p.texts]) if not p.is_llm else f"{p.platform}\n{p.query}"
        shot = Screenshot(
            id=i,
            time=t + timedelta(seconds=1),
            app_name=app,
            window_title=title,
            file_name=f"screen_{i}.png",
            ocr_text=text,
        )
        events.append(
            Event(
                id=str(i + 1),
                user="desk",
                start=t,
                end=t + timedelta(seconds=seconds),
                app_name=app,
                window_title=title,
                summary="",
                screenshots=(shot,),
                is_llm_event=llm,
                conversation=conv,
            )
        )
        t += timedelta(seconds=seconds)
    return events


def moments(events: list[Any]) -> list[tuple[Any, str, str]]:
    """``(sample, true query, reply)`` at every LLM-use event with a recorded reply: the ``help``
    task's moments (:func:`proagent.live.tasks.help_moments`)."""
    from proagent.live.tasks import help_moments

    return help_moments(events)


# --------------------------------------------------------------------------- one answer


def answer(model: Any, messages: list[dict[str, str]]) -> dict[str, Any]:
    """The help for ``messages``, timed: first streamed piece and end (seconds from the call)."""
    first: list[float] = []
    t0 = time.perf_counter()
    usage = model.stream(messages, lambda _: first or first.append(time.perf_counter() - t0))
    return {
        "text": usage["text"],
        "ttft": first[0] if first else None,
        "total": time.perf_counter() - t0,
        "tokens": usage.get("completion_tokens"),
        "prompt_tokens": usage.get("prompt_tokens"),
        "cached_tokens": usage.get("cached_tokens"),
    }


def judge_score(judge: Any, context: str, query: str, reply: str, help_text: str) -> int | None:
    """The judge's 1-10 score (``None`` when its answer names none): the ``help`` task's rubric and
    parser (:func:`proagent.live.tasks.judge_prompt`, :func:`~proagent.live.tasks.parse_judge_score`)."""
    from proagent.live.tasks import judge_prompt, parse_judge_score

    prompt = judge_prompt(context, query, reply, help_text)
    return parse_judge_score(judge.stream([{"role": "user", "content": prompt}], lambda _: None)["text"])


def paired_ci(a: list[float], b: list[float], n: int = 10_000) -> tuple[float, float, float] | None:
    """Mean of a - b over paired moments and its bootstrap 95% CI (percentile method)."""
    import numpy as np

    d = np.array([x - y for x, y in zip(a, b) if x is not None and y is not None], dtype=float)
    if len(d) == 0:
        return None
    rng = np.random.default_rng(0)
    means = d[rng.integers(0, len(d), size=(n, len(d)))].mean(axis=1)
    return float(d.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log", type=Path, default=None, help="a log with LLM-use events and their conversations")
    ap.add_argument("--model", default="local/qwen2.5-coder-1.5b")
    ap.add_argument("--model-arg", action="append", default=[], help="KEY=VALUE (e.g. n_threads=2)")
    ap.add_argument("--judge", default=None, help="judge model (default: --model)")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--read-ahead", action="store_true", help="also time the answer after the prompt was read ahead")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help="the help answer's budget, tokens, of a local model (default: live's)",
    )
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest setting (CI): SmolLM2 on 1 thread answers and judges one moment, answers of 32 tokens",
    )
    args = parse_args(ap, argv, positive=("limit", "max_tokens", "timeout"), existing=("log",))
    if args.smoke:  # explicit values stay (apply_smoke says which)
        # one llama.cpp thread: its threads wait on each other when other work shares the cores
        smoke = {
            "model": "local/smollm2-135m",
            "judge": None,
            "limit": 1,
            "max_tokens": 32,
            "model_arg": ["n_threads=1"],
        }
        apply_smoke(ap, args, smoke, argv)
    guard_network()
    watchdog(args.timeout)
    note, machine = machine_note()
    print(note, flush=True)

    from proagent.live import HowModel, help_context, make_help_model
    from proagent.live._help import LocalHelpModel, context_free_messages, help_messages
    from proagent.live.tasks import reply_similarity

    margs = dict(a.split("=", 1) for a in args.model_arg)
    if args.log is not None:
        from proagent.sources.load import load_events

        events, source = load_events(args.log), str(args.log)
    else:
        events, source = scripted_events(), "tests/scenarios/desktop.py LONG (planted screen text)"
    ms = moments(events)[: args.limit]
    if not ms:
        print(f"no LLM-use event with a recorded reply in {source}", file=sys.stderr)
        return 1
    print(f"{len(ms)} moments from {source}; model {args.model}; judge {args.judge or args.model}", flush=True)
    how = HowModel(args.model, margs)
    helper = (
        LocalHelpModel(args.model, margs, max_tokens=args.max_tokens)
        if args.max_tokens and args.model.startswith("local/")
        else make_help_model(args.model, margs)
    )
    judge = make_help_model(args.judge, {}) if args.judge else helper
    rows: list[dict[str, Any]] = []
    for s, true_q, reply in ms:
        pred = how(s)
        pq = (pred.query or "").strip() or None
        ctx_pred, ctx_true = help_context(s, pq, "raw"), help_context(s, true_q, "raw")
        conds = {
            "predicted": help_messages(ctx_pred),
            "true": help_messages(ctx_true),
            "context-free": context_free_messages(ctx_pred),
        }
        row: dict[str, Any] = {"moment": s.id, "true_query": true_q, "predicted_query": pq}
        for name, msgs in conds.items():
            a = answer(helper, msgs)
            a["similarity"] = reply_similarity(a["text"], reply)
            a["judge"] = judge_score(judge, ctx_true.text, true_q, reply, a["text"])
            row[name] = a
            print(
                f"  {s.id} {name}: sim {a['similarity']:.3f} judge {a['judge']} ttft {a['ttft'] or 0:.1f} s "
                f"total {a['total']:.1f} s {a['tokens']} tokens",
                flush=True,
            )
        if args.read_ahead and hasattr(helper, "prefill"):
            helper.prefill(conds["predicted"])
            a = answer(helper, conds["predicted"])
            row["predicted_read_ahead"] = {k: a[k] for k in ("ttft", "total", "tokens", "cached_tokens")}
            print(
                f"  {s.id} predicted after read-ahead: ttft {a['ttft'] or 0:.2f} s total {a['total']:.1f} s", flush=True
            )
        rows.append(row)

    table = []
    names = ["predicted", "true", "context-free"] + (["predicted_read_ahead"] if args.read_ahead else [])
    for name in names:
        rs = [r[name] for r in rows if name in r]
        sims = [r.get("similarity") for r in rs if r.get("similarity") is not None]
        judges = [r.get("judge") for r in rs if r.get("judge") is not None]
        table.append(
            {
                "condition": name,
                "n": len(rs),
                "similarity": sum(sims) / len(sims) if sims else None,
                "judge": sum(judges) / len(judges) if judges else None,
                "ttft_p50": percentile([r["ttft"] for r in rs if r.get("ttft") is not None], 50),
                "total_p50": percentile([r["total"] for r in rs], 50),
                "tokens": sum(r.get("tokens") or 0 for r in rs) / max(len(rs), 1),
            }
        )
    columns = [
        ("condition", "condition", "s"),
        ("n", "n", "d"),
        ("similarity", "sim to reply", ".3f"),
        ("judge", "judge 1-10", ".1f"),
        ("ttft_p50", "first token p50 s", ".2f"),
        ("total_p50", "whole answer p50 s", ".1f"),
        ("tokens", "tokens", ".0f"),
    ]
    for t in table:
        t["baseline"] = t["condition"] == "context-free"
    print(render_table(table, columns))
    effects = {}
    for metric in ("similarity", "judge"):
        ci = paired_ci([r["predicted"][metric] for r in rows], [r["context-free"][metric] for r in rows])
        effects[metric] = ci
        if ci:
            print(
                f"predicted - context-free, {metric}: {ci[0]:+.3f} (95% CI {ci[1]:+.3f} .. {ci[2]:+.3f}, n={len(rows)})"
            )
    print(
        "similarity: e5 cosine of the help and the reply the person got; judge: "
        f"{args.judge or args.model} with proagent/live/prompts/help_judge.txt (a 1.5B judge is a weak signal)"
    )
    write_result(
        args.json,
        benchmark="help",
        rows=table,
        columns=columns,
        machine=machine,
        baseline="the same model answering without the moment's context (context-free), same moments",
        note=f"model {args.model}, judge {args.judge or args.model} (a 1.5B judge is a weak signal); "
        "similarity: e5 cosine of the help and the reply the person got",
        figures={"source": source, "rows": rows, "effects": effects},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
