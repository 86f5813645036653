"""Which token stands right before an element's index, in the tokenizer the SFT start would train?

For each agent screen view (and the form `item "Nora"=3` / `find "Nora"=3.`, written from the
index_in_label text), trains the policy's tokenizer exactly as `experiment.build_policy` does (the
first 200 of the seed's SFT tasks, `sft --balanced --lookup-boost 4 --thought-index`), then takes
the list screen after the first reference step of fresh tasks (5 per list template, tasks whose
second step is a tap) and reports, per screen: the token before each item's index (unique per
line?), and whether the list step's thought has the same token before the same index token.

    PYTHONPATH=$PWD python research/wm_r1_view_tokens.py [--seed 0] [--out runs/control/view_tokens.json]
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from wmkit.core import models
from wmkit.envs import phone
from wmkit.wm_r1.config import WM_R1
from wmkit.wm_r1 import agent as ag
from wmkit.wm_r1 import tasks as wm_tasks

LIST_TEMPLATES = ("open_contact", "open_note", "delete_contact", "open_chat")
_IN_LABEL = re.compile(r'"((?:[^"\\]|\\.)*) ([0-9]+)"')


def equals_form(text: str) -> str:
    """`"Nora 3"` (index_in_label) -> `"Nora"=3`: the index after `=` behind the closing quote."""
    return _IN_LABEL.sub(lambda m: f'"{m[1]}"={m[2]}', text)


def forms():
    """(name, view the text is built in, rewrite of that text)."""
    return [("index_after_label", "index_after_label", lambda t: t),
            ("index_in_label", "index_in_label", lambda t: t),
            ("equals_after_label", "index_in_label", equals_form)]


def token_before_index(tok, text: str, index: int):
    """(token before the index, the index's first token, all tokens) of `text`, whose only
    occurrence of the index as a token of its own is the one meant."""
    tokens = tok.convert_ids_to_tokens(tok(text, add_special_tokens=False)["input_ids"])
    for k in range(1, len(tokens)):
        if tok.convert_tokens_to_string([tokens[k]]).strip() == str(index):
            return tokens[k - 1], tokens[k], tokens
    return None, None, tokens


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-template", type=int, default=5)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    sizes = WM_R1["cpu"]
    train_templates, _ = wm_tasks.task_templates(sizes.max_ref_len)
    sft_tasks = wm_tasks.template_balanced_tasks(2400, 10_000 + args.seed, train_templates,
                                                 {t: 4.0 for t in LIST_TEMPLATES})
    screens = []  # (task, list screen, reference tap)
    for template in LIST_TEMPLATES:
        k = 0
        while sum(s[0].template == template for s in screens) < args.per_template:
            task = phone.make_task(template, 90_000 + k)
            k += 1
            env = phone.PhoneEnv()
            env.reset(task=task)
            reference = phone.reference_solution(task)
            if reference[1].startswith("tap("):
                screens.append((task, env.step(reference[0]).observation, reference[1]))
    report = {}
    for name, view, rewrite in forms():
        corpus = [rewrite(t) for t in wm_tasks.tokenizer_corpus(sft_tasks[:200], True, view)]
        tok = models.train_tokenizer(corpus, sizes.policy.vocab_size, sizes.tokenizer_split)
        rows, unique, same = [], 0, 0
        for task, screen, tap in screens:
            index = int(tap[4:-1])
            befores, target_line = [], None
            for env_line, line in zip(screen.split("\n"), rewrite(ag.agent_screen(screen, view)).split("\n")):
                m = re.match(r"\[(\d+)\] item ", env_line)
                if m:
                    befores.append(token_before_index(tok, line, int(m[1]))[0])
                    target_line = line if int(m[1]) == index else target_line
            line_before, line_index, line_tokens = token_before_index(tok, target_line, index)
            thought = ag.format_turn(rewrite(ag.describe_action(screen, tap, True, view)), action=tap)
            thought_before, thought_index, thought_tokens = token_before_index(tok, thought, index)
            unique += len(set(befores)) == len(befores)
            same += (line_before, line_index) == (thought_before, thought_index)
            rows.append({"template": task.template, "line": target_line, "line_tokens": line_tokens,
                         "thought_tokens": thought_tokens, "before_index": [line_before, thought_before],
                         "index_token": [line_index, thought_index], "befores_on_screen": befores})
        report[name] = {"screens": len(screens), "unique_per_line": unique, "thought_same_as_screen": same,
                        "rows": rows}
        print(f"{name:20s} screens {len(screens)}  token before the index unique per line on {unique}"
              f"  thought's (before, index) tokens = the screen line's on {same}", flush=True)
        print("   e.g.", " ".join(rows[0]["line_tokens"]), " || ", " ".join(rows[0]["thought_tokens"]))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
