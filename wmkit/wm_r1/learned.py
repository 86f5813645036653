"""A learned world model of the settings world, good enough to judge WM-R1's episodes at cpu size.

Notebook 01's world model writes the screen diff and, measured on the agent's transitions, judges
the reference solution a success on 4% of tasks: it has to guess the toggles' values when Settings
opens, because no screen before it shows them. Three changes make a model of notebook 01's cpu shape
judge (why each: see research/README.md, 'WM-R1 ladder', sections 18-20):

1. **The state on the screen**: every task runs on a phone whose screens show a status bar of the
   toggles' values (``phone.with_status_bar``), so the next screen follows from the screen shown.
2. **Values named, not copied**: the model writes a structured edit (``wmkit.envs.phone_edit``)
   where a switch value is "from-bar" or "flipped"; a fixed decoder copies the value. The model
   still predicts every dynamic (which screen opens, which item changes).
3. **The agent's neighbourhood**: besides the collection episodes, every action from every state
   of a few tasks' reference paths (``phone.reference_neighbourhood``), so a tap next to the right
   one is seen, and not judged as the right one.

:func:`train_edit_world_model` trains it (or loads it from its folder, so a rerun resumes), and
:func:`edit_world_model_source` makes it WM-R1's environment: a ``WorldModelSource`` whose
predictions are decoded edits.
"""
from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path

from wmkit.core import build, models
from wmkit.core.sft import SFTConfig, train_sft
from wmkit.core.worldmodel import split_by_episode
from wmkit.envs import phone, phone_edit
from wmkit.wm_r1 import agent as ag
from wmkit.wm_r1.config import WMR1LearnedSizes

COLLECTION_SEED = 70_000
"""Collection episodes of seed s are drawn with seed COLLECTION_SEED + s (apart from the streams of
`wmkit.wm_r1.tasks`: SFT_TASK_SEED, GRPO_TASK_SEED, the evaluation's: never the same worlds)."""
NEIGHBOURHOOD_SEED = 80_000
"""The same for the reference neighbourhood's tasks."""
INFO = "wmkit_learned.json"
"""Beside a trained model: its sizes, data counts, steps and losses (its presence marks a finished run)."""


def edit_transitions(sizes: WMR1LearnedSizes, seed: int, templates: Sequence[str]) -> tuple[dict, int]:
    """({train, val, test}: transitions whose ``diff`` is the structured edit, plain diffs kept):
    ``sizes.episodes`` collection episodes and the reference neighbourhood of
    ``sizes.reference_neighbourhood`` tasks of `templates` on the status-bar phone, split by episode.
    Also returns how many transitions kept their plain diff (``encode_edit`` found no edit whose
    decoding gives the simulator's screen; 0 on every collection measured)."""
    data = split_by_episode(phone.collect_transitions(sizes.episodes, COLLECTION_SEED + seed, templates,
                                                      status_bar=True))
    if sizes.reference_neighbourhood:
        near = split_by_episode(phone.reference_neighbourhood(sizes.reference_neighbourhood,
                                                              NEIGHBOURHOOD_SEED + seed, templates, status_bar=True))
        data = {split: data[split] + near[split] for split in data}
    kept_plain = 0
    for split, rows in data.items():
        edits = [phone_edit.encode_edit(t.state, t.diff) for t in rows]
        kept_plain += sum(e is None for e in edits)
        data[split] = [replace(t, diff=e) if e is not None else t for t, e in zip(rows, edits)]
    return data, kept_plain


def train_edit_world_model(sizes: WMR1LearnedSizes, seed: int, templates: Sequence[str], out_dir: str | Path,
                           progress: bool = False):
    """(model, tokenizer, info): the settings world's edit world model for `seed`, saved in
    `out_dir` (loaded from there when a finished run is found). A from-scratch tokenizer and model
    of ``sizes.model``, trained by the kit's SFT on :func:`edit_transitions`."""
    out_dir = Path(out_dir)
    if (out_dir / INFO).exists() and (out_dir / phone_edit.MARKER).exists():
        model, tokenizer, _ = build.load_world_model(out_dir)
        return model, tokenizer, json.loads((out_dir / INFO).read_text())
    start = time.perf_counter()
    data, kept_plain = edit_transitions(sizes, seed, templates)
    tokenizer = models.train_tokenizer(build.tokenizer_corpus(data["train"]), sizes.model.vocab_size)
    model = models.build_tiny_model(tokenizer, sizes.model, seed=seed)
    config = SFTConfig(output_dir=str(out_dir / "checkpoints"), epochs=sizes.epochs,
                       learning_rate=sizes.learning_rate, batch_size=sizes.batch_size, max_length=sizes.max_length,
                       seed=seed, resume=True, show_progress=progress)
    result = train_sft(model, tokenizer, data["train"], data["val"], config)
    models.save_model(model, tokenizer, out_dir, tiny_config=sizes.model)
    (out_dir / phone_edit.MARKER).write_text(json.dumps({"kept_plain": kept_plain}))
    info = {"seed": seed, "sizes": asdict(sizes), "templates": list(templates), "kept_plain": kept_plain,
            "transitions": {split: len(rows) for split, rows in data.items()}, "steps": result.steps,
            "eval_loss": [round(r["eval_loss"], 4) for r in result.log_history if "eval_loss" in r],
            "seconds": round(time.perf_counter() - start, 1)}
    (out_dir / INFO).write_text(json.dumps(info, indent=1))
    return model, tokenizer, info


def edit_world_model_source(model, tokenizer, max_new_tokens: int) -> ag.WorldModelSource:
    """WM-R1's environment from an edit world model: it predicts an edit for each (screen, action),
    :func:`wmkit.envs.phone_edit.decode_edit` turns it into the screen diff, and the source applies
    that as it would any model's diff (an edit that does not decode leaves the screen unchanged)."""
    model.eval()
    predict_edits = ag.world_model_predictor(model, tokenizer, max_new_tokens)

    def predict_diffs(pairs):
        return [phone_edit.decode_edit(screen, edit) for (screen, _), edit in zip(pairs, predict_edits(pairs))]

    return ag.WorldModelSource(predict_diffs)
