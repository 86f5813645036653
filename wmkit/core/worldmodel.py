"""World models as sequence models: a question q(s, a) in, a response o(s') out.

A language world model reads the current state and an action (the *prompt*) and writes
what changes (the *target*: a diff in the environment's own format). This module holds
the prompt format, transition datasets and splits, batched prediction, applying predicted
diffs, multi-step rollouts that feed predictions back in, and the evaluation protocol:

* exact-match accuracy of the predicted next state, overall and on *changed* and
  *unchanged* transitions (an unchanged one is an action that changes nothing);
* for screens, the RLVR-World screen-diff F1;
* greedy decoding and sampled decoding at T=1 (pass@1 averaged over n samples), with a
  fixed `max_new_tokens` -- RL can sharpen sampling without moving greedy, so both count;
* two baselines beside every number: "predict no change" (scores 0 on changed transitions
  by construction) and "predict the most frequent diff of this action type".
"""
from __future__ import annotations

import hashlib
import json
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch

from wmkit.envs import SYSTEM_PROMPTS, get_env_module, get_environment  # noqa: F401 (re-exported)
from wmkit.envs.base import Transition
from wmkit.quiet import transient_bar


def prompt_messages(env: str, state: str, action: str) -> list[dict]:
    """The chat messages of q(s, a): a system line saying what to predict (the environment's
    registered system prompt), then state and action."""
    return [
        {"role": "system", "content": get_environment(env).system_prompt},
        {"role": "user", "content": f"State:\n{state}\nAction: {action}"},
    ]


def prompt_text(tokenizer, env: str, state: str, action: str) -> str:
    """q(s, a) rendered with the tokenizer's chat template, ending where the answer starts."""
    return tokenizer.apply_chat_template(prompt_messages(env, state, action), tokenize=False,
                                         add_generation_prompt=True)


def collect_transitions(envs: Sequence[str], episodes: int, seed: int = 0,
                        difficulty: str | None = None) -> list[Transition]:
    """Play `episodes` episodes in each environment and return every transition.

    `difficulty` (a name in `wmkit.envs.textgame.DIFFICULTIES`; None is the full game) sizes the
    text game's world; the other environments have no such knob and ignore it."""
    transitions: list[Transition] = []
    for i, env in enumerate(envs):
        spec = get_environment(env)
        extra = {"difficulty": difficulty} if spec.name == "textgame" and difficulty is not None else {}
        # checked there: each transition carries the name its environment is registered under
        transitions += spec.collect_transitions(episodes, seed=seed + 1000 * i, **extra)
    return transitions


def split_by_episode(transitions: Iterable[Transition], fractions=(0.8, 0.1, 0.1)) -> dict[str, list[Transition]]:
    """Train/val/test split by episode id (stable: a hash of the id, not an RNG), so no
    episode straddles two splits and adding episodes never moves old ones."""
    if len(fractions) != 3 or abs(sum(fractions) - 1) > 1e-9 or min(fractions) < 0:
        raise ValueError(f"fractions must be three non-negative numbers summing to 1, not {fractions}")
    splits: dict[str, list[Transition]] = {"train": [], "val": [], "test": []}
    for t in transitions:
        u = int(hashlib.sha256(t.episode.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        name = "train" if u < fractions[0] else "val" if u < fractions[0] + fractions[1] else "test"
        splits[name].append(t)
    return splits


def write_jsonl(transitions: Iterable[Transition], path: str | Path) -> Path:
    """One JSON object per line, keys sorted, so regeneration is byte-identical."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as f:
        for t in transitions:
            f.write(json.dumps(t.to_dict(), sort_keys=True, ensure_ascii=False) + "\n")
    return path


def read_jsonl(path: str | Path) -> list[Transition]:
    with Path(path).open(encoding="utf-8") as f:
        return [Transition(**json.loads(line)) for line in f if line.strip()]


@torch.no_grad()
def generate(model, tokenizer, prompts: Sequence[str], max_new_tokens: int, do_sample: bool = False,
             temperature: float = 1.0, num_samples: int = 1, batch_size: int = 64, seed: int = 0,
             progress: bool = False) -> list[list[str]]:
    """Complete each prompt; returns `num_samples` texts per prompt (greedy: 1).

    Prompts are left-padded so a batch ends where the answers start; generation stops at
    the tokenizer's end-of-turn token or at `max_new_tokens`. Sampling draws from a stream seeded
    with `seed`, and the caller's global random state is left as it was: a world model that
    WM-R1 asks for a next screen must not reset the policy's sampling stream.
    """
    if max_new_tokens < 1:
        raise ValueError("max_new_tokens must be at least 1")
    if not do_sample:
        num_samples = 1
    model.eval()
    device = next(model.parameters()).device
    starts = range(0, len(prompts), batch_size)
    if progress:
        starts = transient_bar(starts, desc="generate")
    outputs: list[list[str]] = []
    old_side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    # fork_rng saves the global CPU (and this device's) random state and restores it on exit
    try:
        with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
            torch.manual_seed(seed)
            for start in starts:
                batch = list(prompts[start:start + batch_size])
                enc = tokenizer(batch, return_tensors="pt", padding=True, add_special_tokens=False).to(device)
                kwargs = dict(max_new_tokens=max_new_tokens, do_sample=do_sample,
                              num_return_sequences=num_samples, pad_token_id=tokenizer.pad_token_id,
                              eos_token_id=tokenizer.eos_token_id)
                if do_sample:
                    kwargs.update(temperature=temperature, top_k=0, top_p=1.0)
                out = model.generate(**enc, **kwargs)
                texts = tokenizer.batch_decode(out[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
                for i in range(len(batch)):
                    outputs.append([t.strip() for t in texts[i * num_samples:(i + 1) * num_samples]])
    finally:
        tokenizer.padding_side = old_side
    return outputs


def predict_diffs(model, tokenizer, queries: Sequence[tuple[str, str, str]], max_new_tokens: int,
                  **generate_kwargs) -> list[list[str]]:
    """Predicted diffs for (env, state, action) queries."""
    prompts = [prompt_text(tokenizer, env, state, action) for env, state, action in queries]
    return generate(model, tokenizer, prompts, max_new_tokens, **generate_kwargs)


def predicted_next_state(env: str, state: str, diff_text: str) -> str | None:
    """Apply a (model-written) diff to `state`; None when it does not parse. Never raises."""
    try:
        return get_env_module(env).apply_diff(state, diff_text)
    except Exception:  # noqa: BLE001 -- model output is untrusted; a bug here must not kill a run
        return None


def is_exact(env: str, state: str, predicted_diff: str, next_state: str) -> bool:
    """True iff applying the predicted diff to `state` gives exactly `next_state`."""
    return predicted_next_state(env, state, predicted_diff) == next_state


def no_change_diff(env: str, state: str) -> str:
    """The 'predict no change' baseline's answer."""
    return get_env_module(env).compute_diff(state, state)


def most_frequent_diffs(train: Iterable[Transition]) -> dict[tuple[str, str], str]:
    """For each (env, action type), the diff text seen most often in training."""
    counts: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for t in train:
        counts[(t.env, t.action_type)][t.diff] += 1
    # most_common breaks ties by first occurrence: deterministic for a fixed dataset order.
    return {key: c.most_common(1)[0][0] for key, c in counts.items()}


def baseline_predictions(test: Sequence[Transition], train: Sequence[Transition]) -> dict[str, list[str]]:
    """Predicted diffs of both baselines for every test transition."""
    frequent = most_frequent_diffs(train)
    return {
        "no_change": [no_change_diff(t.env, t.state) for t in test],
        "most_frequent": [frequent.get((t.env, t.action_type), no_change_diff(t.env, t.state)) for t in test],
    }


@dataclass
class AccuracySummary:
    """Exact-match accuracy split by whether the true transition changed the state, and the
    environment's partial-credit metric (the RLVR-World reward of that task)."""

    overall: float
    changed: float
    unchanged: float
    n: int
    n_changed: int
    partial_metric: str = ""
    """Name of the environment's registered metric: 'task_specific' (text game, 0..1.3), 'f1' (screens)."""
    partial: float = float("nan")
    """Mean partial credit over all transitions."""
    partial_changed: float = float("nan")
    """Mean partial credit over changed transitions."""
    changed_items: list = field(default_factory=list)
    """Exact match of each changed transition (pass@1 over its samples), in test order: what a
    paired comparison with a baseline on the same transitions needs."""
    partial_changed_items: list = field(default_factory=list)
    """Partial credit of each changed transition, in the same order."""

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else float("nan")


def partial_credit(t: Transition, prediction: str) -> tuple[str, float]:
    """(metric name, value) of the environment's registered partial-credit metric: the RLVR-World
    reward of the transition's task (screen-diff F1 for the phone, the task-specific reward for the
    text game, ROUGE-L for TextWorldExpress), partial credit where exact match gives 0. A user's
    metric that raises on the prediction scores it 0, with one warning (`Environment.guarded`)."""
    env = get_environment(t.env)
    return env.metric_name, env.partial_credit(t, prediction)


def summarize(test: Sequence[Transition], predictions: Sequence[Sequence[str]]) -> AccuracySummary:
    """Exact-match accuracy and partial credit (each averaged over the samples of a prompt:
    pass@1), overall and on changed / unchanged transitions."""
    if len(test) != len(predictions):
        raise ValueError(f"{len(test)} transitions but {len(predictions)} predictions")
    exact = [_mean([float(is_exact(t.env, t.state, p, t.next_state)) for p in preds])
             for t, preds in zip(test, predictions)]
    credit = [[partial_credit(t, p) for p in preds] for t, preds in zip(test, predictions)]
    metrics = {name for item in credit for name, _ in item}
    # Partial credit is only averaged within one environment (the metrics differ in scale).
    one_metric = len(metrics) == 1
    partial = [_mean([v for _, v in item]) for item in credit]
    changed = [i for i, t in enumerate(test) if t.changed]
    unchanged = [i for i, t in enumerate(test) if not t.changed]
    return AccuracySummary(
        overall=_mean(exact), changed=_mean([exact[i] for i in changed]),
        unchanged=_mean([exact[i] for i in unchanged]), n=len(test), n_changed=len(changed),
        partial_metric=next(iter(metrics)) if one_metric else "",
        partial=_mean(partial) if one_metric else float("nan"),
        partial_changed=_mean([partial[i] for i in changed]) if one_metric else float("nan"),
        changed_items=[exact[i] for i in changed],
        partial_changed_items=[partial[i] for i in changed] if one_metric else [],
    )


def select_eval_set(test: Sequence[Transition], n: int, seed: int = 0) -> list[Transition]:
    """A fixed random subset of `n` test transitions (all of them if there are fewer)."""
    items = list(test)
    random.Random(seed).shuffle(items)
    return items[:n]


Predictor = Callable[[Sequence[tuple[str, str, str]]], list[str]]


"""Maps a batch of (env, state, action) queries to one predicted diff each."""


def model_predictor(model, tokenizer, max_new_tokens: int, batch_size: int = 64) -> Predictor:
    """Greedy predictions of `model`, as a Predictor."""
    def predict(queries):
        return [o[0] for o in predict_diffs(model, tokenizer, queries, max_new_tokens, batch_size=batch_size)]
    return predict


def rollout_windows(test: Sequence[Transition], k: int, n: int, seed: int = 0) -> list[list[Transition]]:
    """Up to `n` runs of `k` consecutive transitions from distinct test episodes."""
    episodes: dict[str, list[Transition]] = defaultdict(list)
    for t in test:
        episodes[t.episode].append(t)
    rng = random.Random(seed)
    windows = []
    for ep in sorted(episodes):
        steps = sorted(episodes[ep], key=lambda t: t.step)
        if len(steps) >= k:
            start = rng.randrange(len(steps) - k + 1)
            windows.append(steps[start:start + k])
    rng.shuffle(windows)
    return windows[:n]


def rollout_accuracy(predictor: Predictor, windows: Sequence[Sequence[Transition]],
                     unparsed: list[float] | None = None) -> list[float]:
    """Accuracy of k-step open-loop rollouts for k = 1..len(window).

    Each window starts from the true state; the predicted next state is fed back as the
    next input, so errors compound. A diff that does not parse leaves the state as it was, so a
    model that writes garbage scores exactly the no-change baseline's curve: pass a list as
    `unparsed` to get, per k, the share of predictions that did not parse (what tells the two apart).
    Entry k-1 is the share of windows whose predicted state after k steps is exact.
    """
    if not windows:
        return []
    k_max = min(len(w) for w in windows)
    states = [w[0].state for w in windows]
    accuracy = []
    for j in range(k_max):
        queries = [(w[j].env, s, w[j].action) for w, s in zip(windows, states)]
        diffs = predictor(queries)
        applied = [predicted_next_state(w[j].env, s, d) for w, s, d in zip(windows, states, diffs)]
        if unparsed is not None:
            unparsed.append(_mean([float(a is None) for a in applied]))
        states = [a if a is not None else s for a, s in zip(applied, states)]
        accuracy.append(_mean([float(s == w[j].next_state) for w, s in zip(windows, states)]))
    return accuracy


def baseline_predictor(kind: str, train: Sequence[Transition]) -> Predictor:
    """A baseline ('no_change' or 'most_frequent') as a Predictor, for rollouts."""
    if kind == "no_change":
        return lambda queries: [no_change_diff(env, state) for env, state, _ in queries]
    if kind == "most_frequent":
        frequent = most_frequent_diffs(train)

        def predict(queries):
            out = []
            for env, state, action in queries:
                kind_of_action = get_env_module(env).action_type(action)
                out.append(frequent.get((env, kind_of_action), no_change_diff(env, state)))
            return out
        return predict
    raise ValueError(f"Unknown baseline {kind!r}: choose 'no_change' or 'most_frequent'")
