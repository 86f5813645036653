"""Issue 38: should `wmkit.envs.textgame.parse_json_lenient` be replaced by the `json_repair` package
(which RLVR-World's reward code calls: `repair_json(answer)` then `dirtyjson.loads`)?

Runs both parsers on one corpus and prints agreement, disagreements, time per call, what
json_repair returns that the callers cannot use, and the text-game rewards under each parser.
json_repair is not a kit dependency: run with it on the path, e.g.

    python3 -m venv /tmp/jr && /tmp/jr/bin/pip install json_repair==0.64.6
    PYTHONPATH=$PWD:/tmp/jr/lib/python3.11/site-packages python research/compare_json_repair.py \
        [recorded_test_inputs.jsonl] > research/regime_results/json_repair_cpu.json

The corpus: (1) the distinct inputs the kit's tests feed the parser, recorded while
tests/test_textgame.py and tests/test_rewards_textgame.py run (the optional argument; make it with
`PYTHONPATH=$PWD:research REC_OUT=/tmp/rec.jsonl python -m pytest -p record_parser_inputs tests/test_textgame.py
tests/test_rewards_textgame.py`);
(2) 20,000 seeded inputs mirroring tests/test_fuzz_parsers.py's strategies; (3) 6,000 real diffs from
data/textgame_*.jsonl with one model-style mistake each. Rewards: 8 mutated answers per data row.
"""
from __future__ import annotations

import json
import random
import re
import sys
import time
from collections import Counter, defaultdict
from importlib.metadata import version
from pathlib import Path

import json_repair

import wmkit.envs.textgame as tg
import wmkit.rewards.textgame as rt

ROOT = Path(__file__).resolve().parents[1]
rng = random.Random(38)
kit = tg.parse_json_lenient


def jr(text):
    """json_repair behind the callers' contract: a dict or None, never raises."""
    try:
        if not isinstance(text, str):
            return None
        value = json_repair.loads(text)
        return value if isinstance(value, dict) else None
    except Exception:  # noqa: BLE001
        return None


def _rows():
    rows = []
    for name in ("textgame_train.jsonl", "textgame_val.jsonl", "textgame_test.jsonl"):
        with open(ROOT / "data" / name) as f:
            rows += [json.loads(line) for line in f]
    return rows


ROWS = _rows()
DIFFS = [r["diff"] for r in ROWS]
TG_DIFF0 = DIFFS[0]
with open(ROOT / "data" / "phone_train.jsonl") as f:
    PHONE_DIFF0 = json.loads(f.readline())["diff"]
FRAGMENTS = [
    "{", "}", "[", "]", "(", ")", '"', "'", "`", "```", "```json\n", ",", ":", "\\", "\\u12", "\n", " ", "\t",
    "\x00", "\ud800", "\udfff", "\U0001f600", "9" * 50, "-1e999", "NaN", "None", "True", "null", "tap(", "type(",
    "scroll(", "open_app(", "finished()", "Action:", "Thought:", "call_wm(", "call_wm(action='", "New items:",
    "Deleted items:", "Updated items:", "None", "[1] button ", "[99999999999999999999] text ", 'app: x | screen: y',
    '"modified": [', '"removed": [', '"score": {', '"uuid": ', "The final answer is:", "take ", " from ",
    " with ", "put ", " in ", "turn on ", '"model": "mlp"', PHONE_DIFF0[:60], TG_DIFF0[:60],
]
KEYS = ["uuid", "name", "contains", "modified", "removed", "score", "isOpen", "x"]


def any_char():
    r = rng.random()
    if r < 0.6:
        return chr(rng.randint(32, 126))
    return chr(rng.randint(0, 0x7FF)) if r < 0.8 else chr(rng.randint(0, 0x10FFFF))


def rand_text(maxn):
    return "".join(any_char() for _ in range(rng.randint(0, maxn)))


def json_value(depth=0):
    r = rng.random()
    if depth > 3 or r < 0.5:
        return [None, rng.random() < 0.5, rng.randint(-5, 10), rng.uniform(-1e6, 1e6), rand_text(8)][rng.randrange(5)]
    if r < 0.75:
        return [json_value(depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(KEYS): json_value(depth + 1) for _ in range(rng.randint(0, 5))}


def fuzz(n):
    out = []
    for _ in range(n):
        k = rng.randrange(6)
        if k == 0:
            out.append(("fuzz:text", rand_text(200)))
        elif k == 1:
            out.append(("fuzz:fragments", "".join(rng.choice(FRAGMENTS) if rng.random() < 0.6 else rand_text(4)
                                                   for _ in range(rng.randint(0, 40)))))
        elif k == 2:
            s = rng.choice([TG_DIFF0, PHONE_DIFF0])
            out.append(("fuzz:truncated-real", s[:rng.randint(0, len(s))]))
        elif k == 3:
            out.append(("fuzz:json-dumps", json.dumps(json_value())))
        elif k == 4:
            s = json.dumps(json_value())
            out.append(("fuzz:json-half", s[: len(s) // 2]))
        else:
            d = {rng.choice(["modified", "removed", "score"]): json_value() for _ in range(rng.randint(0, 3))}
            out.append(("fuzz:diff-dict", json.dumps(d)))
    return out


PROSE_BEFORE = ["Sure! Here is the diff:\n", "The final answer is: ", "Let me think. The fridge opens.\n\n",
                "```json\n", "Answer:\n```json\n", "Here's the updated state (only changed objects): "]
PROSE_AFTER = ["", "\n```", " Hope this helps!", "\n\nExplanation: the agent took the carrot.",
               "\n```\nThe fridge is now open.", " {note: done}"]


def _single(s):
    return s.replace('"', "'")


def _python(s):
    return s.replace("true", "True").replace("false", "False").replace("null", "None")


def mutate(s):
    """One model-style mistake in a real diff: (category, text)."""
    k = rng.randrange(12)
    if k == 0:
        return "real:exact", s
    if k == 1:
        return "real:truncated", s[:rng.randint(1, len(s) - 1)]
    if k == 2:
        t = s
        for _ in range(rng.randint(1, 3)):
            t = t.rstrip()
            if t and t[-1] in "}]":
                t = t[:-1]
        return "real:missing-close", t
    if k == 3:
        i = rng.choice([i for i, c in enumerate(s) if c == '"'])
        return "real:missing-quote", s[:i] + s[i + 1:]
    if k == 4:
        return "real:trailing-comma", (s.replace("]", ",]").replace("}", ",}") if rng.random() < 0.5
                                       else s.replace("}", ",}", 1))
    if k == 5:
        return "real:prose", rng.choice(PROSE_BEFORE) + s + rng.choice(PROSE_AFTER)
    if k == 6:
        return "real:single-quotes", _single(s)
    if k == 7:
        return "real:python-literals", _python(s)
    if k == 8:
        return "real:python-repr", _python(_single(s))
    if k == 9:
        return "real:unquoted-keys", re.sub(r'"([A-Za-z_]+)":', r"\1:", s)
    if k == 10:
        return "real:two-objects", s + "\nActually, correction: " + rng.choice(DIFFS)
    t = rng.choice(PROSE_BEFORE) + _python(_single(s))
    return "real:combo-truncated", t[:rng.randint(len(t) // 2, len(t))]


def _canon(value):
    return json.dumps(value, sort_keys=True)


def parsers(corpus):
    rows, raw_types, raises, slow = [], Counter(), Counter(), []
    t_kit = t_jr = 0.0
    for cat, text in corpus:
        start = time.perf_counter()
        a = kit(text)
        t1 = time.perf_counter() - start
        start = time.perf_counter()
        try:
            raw, kind = json_repair.loads(text), None
        except Exception as exc:  # noqa: BLE001
            raw, kind = None, type(exc).__name__
        t2 = time.perf_counter() - start
        t_kit, t_jr = t_kit + t1, t_jr + t2
        if kind:
            raises[kind] += 1
        raw_types[kind and "raises" or (type(raw).__name__ + ("(empty)" if raw in ("", [], {}) else ""))] += 1
        if max(t1, t2) > 0.05:
            slow.append({"category": cat, "chars": len(text), "kit_s": round(t1, 4), "json_repair_s": round(t2, 4)})
        rows.append((cat, text, a, raw if isinstance(raw, dict) else None))
    by_cat = defaultdict(lambda: [0, 0])
    shapes, examples = Counter(), {}
    for cat, text, a, b in rows:
        same = _canon(a) == _canon(b)
        by_cat[cat][0] += 1
        by_cat[cat][1] += same
        if not same:
            shape = f"{cat}: kit {'dict' if a is not None else 'None'}, json_repair {'dict' if b is not None else 'None'}"
            shapes[shape] += 1
            examples.setdefault(shape, {"input": text[:240], "kit": repr(a)[:240], "json_repair": repr(b)[:240]})
    n = len(rows)
    agree = sum(g for _, g in by_cat.values())
    return {"corpus": n, "agree": agree, "agree_rate": round(agree / n, 4),
            "by_category": {c: f"{g}/{t}" for c, (t, g) in sorted(by_cat.items())},
            "us_per_call": {"kit": round(t_kit / n * 1e6, 1), "json_repair": round(t_jr / n * 1e6, 1)},
            "json_repair_raw_types": dict(raw_types), "json_repair_raises": dict(raises),
            "calls_over_50ms": slow, "disagreements": dict(shapes.most_common()), "examples": examples}


def rewards():
    cases = [(*mutate(r["diff"]), r) for r in ROWS for _ in range(8)]

    def run(parser):
        rt.parse_json_lenient = tg.parse_json_lenient = parser
        try:
            return [(rt.textgame_binary_reward(t, r["state"], r["next_state"]),
                     round(rt.textgame_task_specific_reward(t, r["state"], r["next_state"]), 6),
                     tg.apply_diff(r["state"], t) == r["next_state"]) for _, t, r in cases]
        finally:
            rt.parse_json_lenient = tg.parse_json_lenient = kit

    a, b = run(kit), run(jr)
    n = len(cases)
    out = {"answers": n}
    for i, name in enumerate(["binary", "task_specific", "apply_diff_exact"]):
        out[name] = {"differ": sum(x[i] != y[i] for x, y in zip(a, b)),
                     "mean_kit": round(sum(float(x[i]) for x in a) / n, 4),
                     "mean_json_repair": round(sum(float(y[i]) for y in b) / n, 4)}
    by = defaultdict(lambda: [0, 0, 0.0, 0.0])
    for (cat, _, _), x, y in zip(cases, a, b):
        e = by[cat]
        e[0] += 1
        e[1] += x[1] != y[1]
        e[2] += x[1]
        e[3] += y[1]
    out["task_specific_by_category"] = {c: {"n": e[0], "differ": e[1], "mean_kit": round(e[2] / e[0], 3),
                                            "mean_json_repair": round(e[3] / e[0], 3)} for c, e in sorted(by.items())}
    return out


def adversarial():
    size = 64 * 1024
    texts = {"deep { (64 KB)": "{" * size, "deep { (4 KB)": "{" * 4096, "deep [ (64 KB)": "[" * size,
             "object of lists": '{"a":' + "[" * size, "open quote": '{"' + "a" * size,
             "digits": "{" + "9" * size, "commas": '{"a": [' + "1," * (size // 2)}
    out = {}
    for label, text in texts.items():
        row = {}
        for name, fn in (("kit", kit), ("json_repair", json_repair.loads)):
            start = time.perf_counter()
            try:
                fn(text)
                err = ""
            except Exception as exc:  # noqa: BLE001
                err = type(exc).__name__
            row[name] = f"{(time.perf_counter() - start) * 1000:.1f} ms" + (f" ({err})" if err else "")
        out[label] = row
    return out


def main():
    corpus = []
    if len(sys.argv) > 1:
        with open(sys.argv[1]) as f:
            seen = dict.fromkeys(json.loads(line) for line in f)
        corpus += [("tests", s) for s in seen if isinstance(s, str)]
    corpus += fuzz(20000) + [mutate(rng.choice(DIFFS)) for _ in range(6000)]
    result = {"json_repair": version("json_repair"),
              "parsers": parsers(corpus), "rewards": rewards(), "adversarial": adversarial()}
    print(json.dumps(result, indent=1, ensure_ascii=True))


if __name__ == "__main__":
    main()
