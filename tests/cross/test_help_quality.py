"""The help-quality set and the benchmark's judging and statistics (issue 44), without a model."""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import help_quality as hq  # noqa: E402


@pytest.fixture(scope="module")
def moments() -> list[dict]:
    return hq.load_moments()


def test_the_set_has_30_moments_of_every_source_with_rubrics(moments: list[dict]) -> None:
    assert len(moments) >= 30
    sources = Counter(m["source"] for m in moments)
    assert set(sources) == {"proactivebench", "desktop_day", "written"}, sources
    assert {m["kind"] for m in moments} >= {"code", "writing", "mail", "spreadsheet"}
    assert sum(m["lang"] == "zh" for m in moments) >= 3
    for m in moments:
        assert 2 <= len(m["rubric"]) <= 5 and m["wrong_if"], m["id"]
        assert m["_checks"], f"{m['id']}: no item is checkable by text"


def test_every_reference_answer_passes_its_own_checks(moments: list[dict]) -> None:
    """A pattern that cannot match a good answer must not enter the set (README: how checked)."""
    for m in moments:
        c = hq.check_answer(m, m["reference"])
        assert c["passed"] == c["checkable"] and not c["wrong"], (m["id"], c)


def test_checks_flag_the_wrong_answers_the_rubric_names(moments: list[dict]) -> None:
    by = {m["id"]: m for m in moments}
    c = hq.check_answer(by["code-py-modulenotfound"], "Run `pip install yaml` in deploy.py's venv.")
    assert c["wrong"] and not c["items"]["pkg"] and not c["items"]["facts"] and c["items"]["where"]
    c = hq.check_answer(by["sheet-q1-total"], "The total is 51,050 (=SUM(B2:B7)).")
    assert not c["items"]["total"] and not c["items"]["formula"]
    c = hq.check_answer(by["web-docs-strptime"], "Use strptime(s, '%d/%m/%Y %H:%m')")
    assert not c["items"]["facts"] and c["wrong"]  # %m (month) where %M (minutes) is meant: case matters


def test_a_bad_record_is_refused_with_its_line(tmp_path: Path, moments: list[dict]) -> None:
    good = {k: v for k, v in moments[-1].items() if not k.startswith("_")}
    for bad, word in (
        ({**good, "rubric": good["rubric"][:1]}, "2-5"),
        ({**good, "rubric": [{**good["rubric"][0], "check": {"any": ["("]}}, *good["rubric"][1:]]}, "bad pattern"),
        ({**good, "source": "elsewhere"}, "source"),
        ({**good, "wrong_if": ""}, "wrong_if"),
    ):
        p = tmp_path / "m.jsonl"
        p.write_text(json.dumps(good) + "\n" + json.dumps({**bad, "id": "other"}) + "\n", "utf-8")
        with pytest.raises(hq.MomentError, match=rf"m\.jsonl:2\b.*{word}"):
            hq.load_moments(p)


def test_a_written_moment_is_live_s_sample_with_its_screen(moments: list[dict]) -> None:
    from proagent.live import help_context

    m = next(x for x in moments if x["id"] == "code-py-typeerror")
    sample, question = hq.sample_of(m)
    ctx = help_context(sample, question, "raw")
    assert "TypeError: unsupported operand" in ctx.text and "python report.py" in ctx.text
    assert ctx.question == "Question: How do I fix this TypeError?"
    msgs, free, budget, asked = hq.help_messages_for(sample, question, "raw", ("screen_chars", "60"))
    assert "Traceback" in msgs[1]["content"] and "TypeError: unsupported" not in msgs[1]["content"]  # 60 characters
    assert budget is None and "TypeError: unsupported" not in free[1]["content"]


def test_proactivebench_moments_read_the_real_query_from_the_session(moments: list[dict]) -> None:
    from shared_data import DEV

    m = next(x for x in moments if x["id"] == "pb-code_11-1")
    sample, question = hq.sample_of(m, DEV)
    assert question == "How to capitalize person name in ruby?"
    assert "CheckName.rb" in " ".join(e.summary for e in sample.context)


class _Always:
    """A judge that always picks the answer shown first (the worst position bias), equally sure each time."""

    name = "always-first"

    def choose(self, prompt: str) -> dict:
        return {"choice": "A", "how": "text", "text": "A", "p_first": 0.9}


class _Reads:
    """A judge that picks the answer holding ``word``."""

    name = "reads"

    def __init__(self, word: str) -> None:
        self.word = word

    def choose(self, prompt: str) -> dict:
        a = prompt.split("Answer A:", 1)[1].split("Answer B:", 1)[0]
        return {"choice": "A" if self.word in a else "B", "how": "text", "text": "", "p_first": float(self.word in a)}


class _BiasedReader:
    """A small judge's shape: a strong pull to the first answer shown plus a weaker pull to the answer holding
    ``word``, as a logistic of the two (every choice is A, so no pair's orders agree)."""

    name = "biased"

    def __init__(self, word: str, bias: float = 2.0, signal: float = 0.8) -> None:
        self.word, self.bias, self.signal = word, bias, signal

    def choose(self, prompt: str) -> dict:
        import math

        a = prompt.split("Answer A:", 1)[1].split("Answer B:", 1)[0]
        z = self.bias + (self.signal if self.word in a else -self.signal)
        p = 1 / (1 + math.exp(-z))
        return {"choice": "A" if p >= 0.5 else "B", "how": "logprob", "text": "A", "p_first": p}


def test_a_win_counts_only_when_both_orders_agree(moments: list[dict]) -> None:
    m = moments[0]
    r = hq.judge_pair(_Always(), m, "screen", "q?", "one", "two")
    assert r["verdict"] == "inconsistent" and r["p_x"] == pytest.approx(0.5) and r["debiased"] is None
    assert hq.judge_pair(_Reads("one"), m, "screen", "q?", "one", "two")["verdict"] == "x"
    assert hq.judge_pair(_Reads("two"), m, "screen", "q?", "one", "two")["verdict"] == "y"
    orders = [r["xy"], r["yx"]]
    assert hq.position_bias(orders)["first_share"] == 1.0 and hq.position_bias(orders)["p_first_mean"] == 0.9


def test_averaging_both_orders_cancels_a_judge_s_position_bias(moments: list[dict]) -> None:
    """Wang et al. 2023's balanced position calibration: a judge whose pull to the first answer outweighs
    what it reads picks A in every order (strict: orders disagree), yet its probability averaged over
    both orders follows the answers; its position bias shows as a mean P(first) far above 0.5."""
    m = moments[0]
    for word, want in (("one", "x"), ("two", "y")):
        r = hq.judge_pair(_BiasedReader(word), m, "screen", "q?", "one", "two")
        assert r["xy"]["choice"] == r["yx"]["choice"] == "A" and r["verdict"] == "inconsistent"
        assert r["debiased"] == want and abs(r["p_x"] - 0.5) > 0.05
        assert hq.position_bias([r["xy"], r["yx"]])["p_first_mean"] > 0.8
    assert hq.pair_record({"choice": "A", "p_first": 0.7}, {"choice": None, "p_first": None})["debiased"] is None


def test_label_probabilities_sum_variants_and_bound_a_missing_label() -> None:
    import math

    got = hq.label_logprobs([("A", math.log(0.5)), (" A", math.log(0.1)), ("B", math.log(0.2)), ("<", math.log(0.1))])
    assert got["p_first"] == pytest.approx(0.6 / 0.8) and got["bounded"] == []
    got = hq.label_logprobs([("A", math.log(0.6)), ("<", math.log(0.3)), ("x", math.log(0.05))])
    assert got["bounded"] == ["B"] and got["p_first"] == pytest.approx(0.6 / 0.65)  # B at most the last listed
    assert hq.label_logprobs([("<|im_", -0.1), ("\n", -3.0)])["p_first"] is None  # a model that never says A or B
    old = {"choice": "A", "how": "logprob", "margin": math.log(3)}  # a verdict cached before p_first was kept
    assert hq.Judge._usable(old)["p_first"] == pytest.approx(0.75)
    assert hq.Judge._usable({**old, "margin": 1e9}) is None  # only one label was listed: judge again


def test_two_judge_prompts_and_the_rule_that_keeps_one(moments: list[dict]) -> None:
    """Both prompts share all but their last instruction; the one with more pairs whose orders agree leads."""
    m = moments[0]
    a, b = (hq.pair_prompt(m, "screen", "q?", "one", "two", p) for p in ("checklist", "rubric"))
    cut = a.index("Which answer helps")
    assert a[:cut] == b[:cut] and "satisfies more of the checklist" in b[cut:]
    none = {"passed": 0, "checkable": 0, "wrong": False}
    rec = {"rubric_verdict": "x", "judges": {}, "checks": {"context": none, "free": none}, "levers": {}}
    rec["judges"]["reads"] = {
        "checklist": hq.judge_pair(_BiasedReader("one"), m, "s", "q", "one", "two", "checklist"),
        "rubric": hq.judge_pair(_Reads("one"), m, "s", "q", "one", "two", "rubric"),
    }
    s = hq.summarise([rec, rec], ["reads"], [])
    assert s["kept_prompt"] == "rubric" and s["prompts"]["checklist"]["judges"]["reads"]["strict"]["consistent"] == 0
    assert s["judges"]["reads"]["strict"]["wins"] == 2 and s["panel"]["debiased"]["win_rate"] == 1.0
    assert s["judges"]["reads"]["p_x_spread"] == 0.5  # a sure judge; the biased one is only leaning:
    assert 0 < s["prompts"]["checklist"]["judges"]["reads"]["p_x_spread"] < 0.2
    assert s["prompts"]["checklist"]["judges"]["reads"]["debiased"]["wins"] == 2
    rec["judges"]["reads"]["rubric"] = rec["judges"]["reads"]["checklist"]
    assert hq.summarise([rec], ["reads"], [])["kept_prompt"] == "checklist"  # a tie keeps the prompt in place
    rows = hq._rows(s)
    assert [r["prompt"] for r in rows] == ["rubric (kept)"] * 2 + ["checklist"] * 2 + ["-"]


def test_win_rate_interval_kappa_and_panel() -> None:
    s = hq.win_stats(["x"] * 18 + ["y"] * 6 + ["inconsistent"] * 5 + [None])
    assert (s["wins"], s["losses"], s["consistent"], s["inconsistent"], s["unjudged"]) == (18, 6, 24, 5, 1)
    assert s["win_rate"] == 0.75
    lo, hi = s["ci95"]
    assert lo == pytest.approx(0.5506, abs=1e-3) and hi == pytest.approx(0.8800, abs=1e-3)  # Wilson, 18 of 24
    assert hq.win_stats([])["ci95"] is None
    k = hq.kappa(["x", "x", "y", "y", None], ["x", "y", "y", "y", "x"])
    assert k["n"] == 4 and k["kappa"] == pytest.approx(0.5)
    assert hq.panel_verdict(["x", "inconsistent", "x"]) == "x" and hq.panel_verdict(["x", "y", None]) is None


def test_levers_are_checked() -> None:
    assert hq.parse_lever("screen_chars=600") == ("screen_chars", "600")
    for bad in ("screen_chars=lots", "colour=red", "prompt=nope.txt"):
        with pytest.raises(SystemExit, match="Error: --lever"):
            hq.parse_lever(bad)


def test_live_ratings_come_back_as_how_labels(tmp_path: Path) -> None:
    """A person's Helpful / Not helpful in live (feedback.db) read back as labelled moments, kept 0600."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))
    from help_fixtures import scripted_reply, store_with_offers, traceback_sample

    from proagent.live import LiveHelp, ScriptedHelpModel

    st, offers = store_with_offers(tmp_path)
    help = LiveHelp(st, ScriptedHelpModel(scripted_reply, delay=0.0), lambda: traceback_sample().time)
    for o, r in ((offers[0], 1), (offers[1], -1)):
        assert help.accept(o.id, "test")
        end = time.monotonic() + 20
        while help.busy(o.id):
            assert time.monotonic() < end
            time.sleep(0.02)
        assert help.rate(o.id, r, "test")
    help.close()
    st.close()
    labels = hq.feedback_moments(tmp_path)
    assert [x["rating"] for x in labels] == [1, -1] and all(x["source"] == "feedback" for x in labels)
    assert "KeyError" in labels[0]["answer"] and "Traceback" in labels[0]["screen"] and labels[0]["question"]
    args = hq.argparse.Namespace(from_feedback=tmp_path, work=tmp_path / "work", judge=[], json=tmp_path / "f.json")
    assert hq.from_feedback(args) == 0
    rec = json.loads((tmp_path / "f.json").read_text())["figures"]
    assert (rec["rated"], rec["helpful"]) == (2, 1) and rec["ci95"][0] < 0.5 < rec["ci95"][1]
    kept = (tmp_path / "work" / "feedback_labels.jsonl").read_text().splitlines()
    assert len(kept) == 2 and oct((tmp_path / "work" / "feedback_labels.jsonl").stat().st_mode & 0o777) == "0o600"


def test_rate_hides_the_order_and_stores_the_person_s_choice(tmp_path: Path, monkeypatch, capsys) -> None:  # noqa: ANN001
    """--rate shows the two answers of an answered moment as 1 and 2 (order drawn at random) and keeps
    which system the person chose, 0600; the run then reports judge-human kappa from it."""
    from proagent.cache import DiskCache

    moments = hq.load_moments()
    m = next(x for x in moments if x["id"] == "sheet-div0")
    p = tmp_path / "one.jsonl"
    p.write_text(json.dumps({k: v for k, v in m.items() if not k.startswith("_")}) + "\n", "utf-8")
    work = tmp_path / "work"
    args = hq.argparse.Namespace(
        work=work, model="local/x", model_arg=[], max_tokens=None, send_screen="raw", moments=p, data=tmp_path
    )
    sample, question = hq.sample_of(m)
    msgs, free, _, _ = hq.help_messages_for(sample, question, "raw")
    cache = DiskCache(hq.work_dir(work) / "cache")
    for ms, text in ((msgs, "IN CONTEXT: B5 is 0"), (free, "CONTEXT FREE: check the divisor")):
        cache.set(hq._key("answer", "local/x", {}, 400, ms), json.dumps({"text": text}).encode())
    choices = []

    def pick(prompt: str) -> str:  # the person picks whichever number shows the in-context answer
        out = capsys.readouterr().out
        first = out.split("--- Answer 1 ---", 1)[1].split("--- Answer 2 ---", 1)[0]
        choices.append("IN CONTEXT" in first)
        return "1" if "IN CONTEXT" in first else "2"

    monkeypatch.setattr("builtins.input", pick)
    assert hq.rate(args) == 0
    rated = hq._ratings(work)
    assert [r["verdict"] for r in rated] == ["x"] and len(choices) == 1
    assert oct((work / "ratings.jsonl").stat().st_mode & 0o777) == "0o600"
    rec = {"id": "sheet-div0", "rubric_verdict": "x", "judges": {"j": {"checklist": {"debiased": "y"}}}}
    agree = hq._human_agreement(work, [rec], ["j"])
    assert agree["rated"] == 1 and agree["human_win_rate"]["wins"] == 1
