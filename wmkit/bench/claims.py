"""The papers' claims and the kit's experiments that measure them.

:data:`EXPERIMENTS` names the one-seed runs (each registered in its paper's ``registry.py``, run by a
function of its ``experiment.py``; see :mod:`wmkit.experiments`);
:data:`CLAIMS` lists each claim with the paper's figure, the experiment and result fields
that give the kit's per-seed value, and the direction that counts as reproduced. A claim
the kit cannot measure says why and never carries a number. :data:`CLAIM_TYPES` gives each
claim its kind (paper claim, paper limitation, kit control) and groups the claims that measure
one paper claim in several ways under a primary measure, whose verdict is the group's.
"""
from __future__ import annotations

import dataclasses
import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from wmkit.bench.design import Design, check_blocks
from wmkit.experiments import REGISTRY, Experiment

PAPERS = ("RLVR-World", "RWML", "WM-R1", "WMRL")

PAPER_CLAIM, LIMITATION, KIT_CONTROL = "paper claim", "paper limitation", "kit control"
CLAIM_KINDS = (PAPER_CLAIM, LIMITATION, KIT_CONTROL)
"""A claim's kind (:attr:`Claim.kind`); the report counts paper claims apart from the other two."""


@dataclass(frozen=True)
class Claim:
    """One claim of a paper and how the kit measures it."""

    id: str
    paper: str
    text: str
    paper_figure: str
    """The paper's headline number or '—' where it gives none."""
    experiment: str | None = None
    """Name in :data:`EXPERIMENTS`; None when the kit cannot measure the claim yet."""
    value: str | tuple[str, ...] | None = None
    """Field path(s) of the experiment's result ('/'-separated, list indices allowed; several: their mean)."""
    minus: str | tuple[str, ...] | None = None
    """Field path(s) subtracted from `value` in the same seed's result (a paired difference)."""
    direction: str = "higher"
    """The kit's value must be above ('higher') or below ('lower') `threshold` to reproduce the claim."""
    threshold: float = 0.0
    kit_label: str = ""
    """What the kit's number is, in words (units included)."""
    not_measured: str = ""
    """Why the kit cannot measure the claim (with `experiment` None)."""
    derive: str | Callable | None = None
    """``derive(result) -> float | None`` (or ``"module:function"``): the kit's number computed from
    one seed's result instead of read from `value` (which then names the raw field it comes from),
    e.g. the log of a censored compute ratio."""
    precondition: str | Callable | None = None
    """``precondition(results) -> str | None`` (or ``"module:function"``): what must hold in the
    per-seed results (seed -> result) for the claim's number to be evidence at all; it returns
    None when it holds, else the reason, and the verdict is then "not measured" (the number is kept)."""
    kind: str = "paper claim"
    """:data:`PAPER_CLAIM` (the paper states it, with a figure or a stated direction), :data:`LIMITATION`
    (the paper states it as a limitation of its method) or :data:`KIT_CONTROL` (the kit's own positive
    control or sanity check: no paper figure). Set for every claim of :data:`CLAIMS` by
    :data:`CLAIM_TYPES`."""
    measures: str | None = None
    """The id of the claim this one measures another way (another decoding, world, metric or regime):
    a sub-row of that claim's group, with its own number and verdict but no vote (see
    :data:`CLAIM_TYPES`). None for the primary measure of a group and for a claim alone."""
    design: Design | None = None
    """The claim's confirmatory test, declared before its confirmatory run (:mod:`wmkit.bench.design`):
    every claim that votes has one; a sub-row has none (it is judged on its primary's seeds)."""


def _resolve(target: str | Any) -> Any:
    if not isinstance(target, str):
        return target
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def get_path(result: Any, path: str) -> Any:
    """``get_path(r, "arms/wm_r1/heldout/success")``; list indices may be negative. None if missing."""
    node = result
    for part in path.split("/"):
        if isinstance(node, dict):
            if part not in node:
                return None
            node = node[part]
        elif isinstance(node, list):
            try:
                node = node[int(part)]
            except (ValueError, IndexError):
                return None
        else:
            return None
    return node


def _field_value(result: dict, paths: str | tuple[str, ...]) -> float | None:
    paths = (paths,) if isinstance(paths, str) else paths
    values = [get_path(result, p) for p in paths]
    if any(not isinstance(v, (int, float)) or isinstance(v, bool) or math.isnan(v) for v in values):
        return None
    return float(sum(values) / len(values))


def claim_value(claim: Claim, result: dict) -> float | None:
    """The kit's number for `claim` in one seed's result (None where a field is missing or NaN)."""
    if claim.derive is not None:
        value = _resolve(claim.derive)(result)
        return None if value is None or math.isnan(value) else float(value)
    value = _field_value(result, claim.value)
    if value is None or claim.minus is None:
        return value
    minus = _field_value(result, claim.minus)
    return None if minus is None else value - minus


def precondition_failure(claim: Claim, results: dict[int, dict]) -> str | None:
    """None when `claim` has no precondition or it holds in `results` (seed -> result); else the reason."""
    return None if claim.precondition is None else _resolve(claim.precondition)(results)


def rl_changed_rwml_model(results: dict[int, dict]) -> str | None:
    """Precondition of a "forgets less" claim: RWML's RL moved the model in every seed.

    With an all-zero (or all-one) embedding reward every GRPO group has zero advantage and RL leaves
    the warm-up model exactly where it was; it then "forgets less than SFT" trivially, which is no
    evidence for the claim. A record says so by ``moved`` (the text-game experiment: parameter change
    above zero *and* some held-out prediction changed) or, for the TextWorldExpress experiment, by
    ``rwml_param_change`` (relative L2 change from the warm-up start; moved when above zero)."""
    def moved(r: dict) -> bool | None:
        if isinstance(r.get("moved"), bool):
            return r["moved"]
        change = get_path(r, "rwml_param_change")
        return change > 0 if isinstance(change, (int, float)) else None

    unknown = [s for s, r in sorted(results.items()) if moved(r) is None]
    if unknown:
        return f"the record of seed(s) {unknown} does not say whether RL moved the model (no moved / rwml_param_change)"
    frozen = [s for s, r in sorted(results.items()) if not moved(r)]
    if frozen:
        return (f"RL did not move the model in seed(s) {frozen} (parameters or held-out predictions unchanged "
                "from the warm-up start), so it cannot have forgotten anything: no evidence that RL forgets less")
    return None


EXPERIMENTS: dict[str, Experiment] = {name: e for name, e in REGISTRY.items() if e.role == "bench"}
"""The benchmark's experiments: the entries of role "bench" of :data:`wmkit.experiments.REGISTRY`,
defined beside each paper (``wmkit/<paper>/registry.py``)."""


DEFAULT_BENCH_SEEDS = {"smoke": 2, "cpu": 3, "gpu": 3}
"""Seeds 0..N-1 of every experiment of a profile's benchmark where the profile has no confirmatory
design (:data:`wmkit.bench.confirmatory.DESIGN_PROFILE` has one): a 95% t-interval needs at least two."""


def _rl(mode: str, part: str) -> tuple[str, str]:
    return f"runs/0/after/{mode}/{part}", f"before/{mode}/{part}"


CLAIMS: tuple[Claim, ...] = (
    # ---------------------------------------------------------------- RLVR-World
    Claim("rlvr.regime_changed", "RLVR-World", "RLVR raises sampled accuracy on changed transitions where the "
          "MLE model can nearly predict them (small text-game world)", "1.5B: +9.6 points on changed",
          "rlvr_regime", "runs/0/after/changed/sampled", "before/changed/sampled",
          kit_label="Δ exact accuracy, changed (sampled), working level"),
    Claim("rlvr.regime_reward", "RLVR-World", "RLVR raises the task-specific reward on changed transitions "
          "where the MLE model can nearly predict them", "text game: +30.7% accuracy", "rlvr_regime",
          "runs/0/after/changed/reward", "before/changed/reward",
          kit_label="Δ task-specific reward of samples, changed (0..1.3), working level"),
    # Compared at the same k: MLE pass@k_max ≥ RLVR pass@1 holds almost whatever RL does, so it would
    # show little; RL that only sharpens leaves pass@k at large k no higher than the MLE model's.
    Claim("rlvr.regime_pass_at_k", "RLVR-World", "limitation: RL sharpens what the model can already do "
          "(at the largest k, RLVR's pass@k is no higher than the MLE model's)", "— (stated limitation)",
          "rlvr_regime", "before/changed/pass_at/-1", "runs/0/after/changed/pass_at/-1", direction="higher",
          threshold=-1e-9,
          kit_label="MLE pass@k_max − RLVR pass@k_max (same k), changed, working level (≥ 0: RL did not extend)"),
    Claim("rlvr.regime_reward_type", "RLVR-World", "a task-specific reward beats the binary check where the "
          "MLE model can nearly predict (small text-game world)", "— (reward ablation; no headline number)",
          "rlvr_regime_ablations", "arms/reward_task_specific/after/changed/sampled",
          "arms/reward_binary/after/changed/sampled",
          kit_label="task-specific − binary-check arm, exact accuracy on changed (sampled), working level"),
    Claim("rlvr.regime_group_size", "RLVR-World", "larger GRPO groups end higher where the MLE model can nearly "
          "predict", "— (group-size ablation; paper runs use G=5)", "rlvr_regime_ablations",
          "arms/reward_exact/after/changed/sampled", "arms/group_4/after/changed/sampled",
          kit_label="G = 8 − G = 4 arm (exact reward), exact accuracy on changed (sampled), working level"),
    Claim("rlvr.changed", "RLVR-World", "RLVR raises accuracy on changed transitions (sampled, T=1), full world",
          "1.5B: +9.6 points on changed", "rlvr_mle_vs_rl", *_rl("sampled", "changed"),
          kit_label="Δ exact accuracy, changed (sampled)"),
    Claim("rlvr.unchanged", "RLVR-World", "RLVR raises accuracy on unchanged transitions (sampled, T=1), full world",
          "1.5B: +44.8 points on unchanged", "rlvr_mle_vs_rl", *_rl("sampled", "unchanged"),
          kit_label="Δ exact accuracy, unchanged (sampled)"),
    Claim("rlvr.changed_greedy", "RLVR-World", "RLVR raises greedy accuracy on changed transitions, full world",
          "1.5B: +9.6 points on changed", "rlvr_mle_vs_rl", *_rl("greedy", "changed"),
          kit_label="Δ exact accuracy, changed (greedy)"),
    Claim("rlvr.partial", "RLVR-World", "RLVR raises the task-specific reward on changed transitions, full world",
          "text game: +30.7% accuracy", "rlvr_mle_vs_rl", *_rl("greedy", "partial_changed"),
          kit_label="Δ task-specific reward, changed (greedy, 0..1.3)"),
    Claim("rlvr.web_f1", "RLVR-World", "RLVR raises screen-diff F1 (web pages in the paper, phone screens here)",
          "web page: +15.1% F1", "rlvr_phone", "arm/after/greedy/partial_changed", "before/greedy/partial_changed",
          kit_label="Δ screen-diff F1, changed (greedy)"),
    Claim("rlvr.reward_type", "RLVR-World", "a task-specific reward beats the binary exact-match reward, full world",
          "— (reward ablation; no headline number)", "rlvr_ablations",
          "rewards/task_specific/after/greedy/partial_changed", "rewards/binary/after/greedy/partial_changed",
          kit_label="task-specific − binary arm, task-specific reward on changed"),
    Claim("rlvr.group_size", "RLVR-World", "larger GRPO groups end higher, full world",
          "— (group-size ablation; paper runs use G=5)", "rlvr_ablations",
          "group_sizes/large/after/greedy/partial_changed", "group_sizes/small/after/greedy/partial_changed",
          kit_label="largest − smallest G, task-specific reward on changed"),
    Claim("rlvr.best_of_k", "RLVR-World", "limitation: the MLE model sampled k times (perfect verifier) "
          "catches up with RLVR's single answer", "— (stated limitation)", "rlvr_ablations",
          "best_of_k/mle_at_k_max", "best_of_k/rlvr_at_1", direction="higher", threshold=-1e-9,
          kit_label="MLE best-of-k_max − RLVR pass@1, changed (≥ 0: caught up)"),
    Claim("rlvr.video", "RLVR-World", "RLVR improves video world models (LPIPS)", "video LPIPS +9.2% relative",
          "rlvr_video", "relative_l1_gain/all/rollout",
          kit_label="relative L1 gain of RLVR over MLE, (L1_MLE − L1_RLVR)/L1_MLE, greedy 8-frame rollouts on "
                    "held-out MiniGrid episodes; RL on every training transition with the profile's reward "
                    "(cpu: l1_agent_present, −(L1 + a missing-agent term), the kit's offline stand-in for "
                    "−(L1 + LPIPS), whose pretrained weights cannot be downloaded here)"),
    Claim("rlvr.video_changed", "RLVR-World", "the same, RL on changed transitions plus a sample of unchanged ones",
          "— (the kit's check: RLVR-World's text-model data recipe on video)", "rlvr_video",
          "relative_l1_gain/changed/rollout",
          kit_label="relative L1 gain of RLVR over MLE, greedy rollouts; RL on changed transitions + 25% unchanged"),
    Claim("rlvr.video_one_step", "RLVR-World", "RLVR improves one-step next-frame prediction", "— (the kit's check)",
          "rlvr_video", "relative_l1_gain/all/one_step",
          kit_label="relative L1 gain of RLVR over MLE, greedy one-step predictions from real frames"),
    Claim("rlvr.repetition", "RLVR-World", "RLVR reduces repetition artefacts in video prediction",
          "repetition 48.6% → 9.9%", "rlvr_video", "arms/all/one_step/copy_rate_changed",
          "mle/one_step/copy_rate_changed", direction="lower",
          kit_label="Δ copy rate: share of held-out steps where the picture changes but the greedy prediction "
                    "repeats the last frame (RLVR − MLE, RL on every transition)",
          precondition="wmkit.video.experiment:agent_kept_all"),
    Claim("rlvr.repetition_changed", "RLVR-World", "the same, RL on changed transitions plus a sample of "
          "unchanged ones", "— (the kit's check)", "rlvr_video", "arms/changed/one_step/copy_rate_changed",
          "mle/one_step/copy_rate_changed", direction="lower",
          kit_label="Δ copy rate (RLVR − MLE), RL on changed transitions + 25% unchanged",
          precondition="wmkit.video.experiment:agent_kept_changed"),
    Claim("rlvr.video_exact_changed", "RLVR-World", "RLVR predicts more of the changing frames exactly",
          "— (the kit's check that a lower copy rate is a right move, not an erased agent)", "rlvr_video",
          "arms/changed/one_step/exact_changed", "mle/one_step/exact_changed",
          kit_label="Δ share of held-out changed steps predicted exactly (greedy), RL on changed + 25% unchanged"),
    Claim("rlvr.video_changed_steps", "RLVR-World", "RL on changed transitions sharpens the frames that change",
          "— (the kit's check)", "rlvr_video",
          "relative_l1_gain/changed/one_step_changed",
          kit_label="relative L1 gain of RLVR over MLE, greedy one-step predictions on the held-out steps whose "
                    "picture changes; RL on changed + 25% unchanged"),
    Claim("rlvr.video_unchanged_cost", "RLVR-World", "the price: the same RL gets the frames that do not change wrong",
          "— (the kit's check; its relative-L1 form is undefined where MLE is exact on them)", "rlvr_video",
          "arms/changed/one_step/exact_unchanged", "mle/one_step/exact_unchanged", direction="lower",
          kit_label="Δ share of held-out unchanged steps predicted exactly (greedy), RL on changed + 25% unchanged"),
    Claim("rlvr.video_agent_kept", "RLVR-World", "the reward's object term keeps the agent in the picture",
          "— (the kit's check: the perceptual term's job, done offline by the kit's agent term)", "rlvr_video",
          "arms/changed/one_step/agent_missing", "mle/one_step/agent_missing", direction="lower",
          threshold=0.02,
          kit_label="Δ share of held-out one-step predictions without the agent (RLVR − MLE), RL on changed "
                    "+ 25% unchanged with the profile's reward; the line is the kit's 2-point tolerance"),
    Claim("rlvr.video_pixel_hacking", "RLVR-World", "a pixel-only reward (−L1) erases the agent: reward hacking",
          "— (the kit's check: why the paper adds a perceptual term to L1)", "rlvr_video",
          "arms/changed_l1/one_step/agent_missing", "mle/one_step/agent_missing", direction="higher",
          threshold=0.02,
          kit_label="Δ share of held-out one-step predictions without the agent (RLVR − MLE), RL on changed "
                    "+ 25% unchanged with −L1 alone (the profile's contrast arm); the line is the kit's 2-point "
                    "tolerance"),
    # ---------------------------------------------------------------- RWML
    Claim("rwml.vs_base", "RWML", "world-model RL without task reward improves on its starting model",
          "+19.6 ALFWorld, +7.9 τ²-Bench (agent success; the kit measures prediction)", "rwml_textgame",
          "quality/rwml/sampled/changed/embedding_reward", "quality/warm/sampled/changed/embedding_reward",
          kit_label="RWML − warm-up predictor, embedding reward rate (cos ≥ τ) on held-out changed text-game "
                    "transitions (sampled at T=1, as GRPO samples; the kit's RLVR protocol)"),
    Claim("rwml.vs_base_all", "RWML", "the same on all held-out transitions (changed and unchanged)",
          "— (the kit's check)", "rwml_textgame",
          "quality/rwml/sampled/embedding_reward", "quality/warm/sampled/embedding_reward",
          kit_label="RWML − warm-up predictor, embedding reward rate, all held-out transitions (sampled)"),
    Claim("rwml.vs_base_exact", "RWML", "the same, judged by exact next states rather than the reward trained on",
          "— (the kit's check that the embedding reward is not gamed)", "rwml_textgame",
          "quality/rwml/sampled/changed/exact", "quality/warm/sampled/changed/exact",
          kit_label="RWML − warm-up predictor, exact next state (held-out changed transitions, sampled)"),
    Claim("rwml.vs_base_greedy", "RWML", "the same, greedy decoding", "— (the kit's check of the decoding)",
          "rwml_textgame", "quality/rwml/greedy/changed/embedding_reward",
          "quality/warm/greedy/changed/embedding_reward",
          kit_label="RWML − warm-up predictor, embedding reward rate, greedy, changed (RL sharpens sampling; "
                    "greedy may not move)"),
    Claim("rwml.vs_sft", "RWML", "embedding-reward RL beats SFT on next observations (same data, same start)",
          "— (paper: RWML > SFT world-model training)", "rwml_textgame",
          "quality/rwml/sampled/changed/embedding_reward", "quality/sft/sampled/changed/embedding_reward",
          kit_label="RWML − SFT, embedding reward rate on held-out changed text-game transitions (sampled)"),
    Claim("rwml.forgetting", "RWML", "RL forgets less than SFT (accuracy kept on tasks it did not train on)",
          "— (paper: RL forgets less than SFT)", "rwml_textgame", "forgetting_mean/rwml", "forgetting_mean/sft",
          kit_label="RWML − SFT, exact accuracy on the kit's full text game and phone (greedy)",
          precondition=rl_changed_rwml_model),
    Claim("rwml.twx_vs_base", "RWML", "the same on TextWorldExpress (third-party game; the contrast regime)",
          "+19.6 ALFWorld, +7.9 τ²-Bench", "rwml",
          "quality/RWML (embedding RL)/embedding_reward", "quality/warm-up (10% SFT)/embedding_reward",
          kit_label="RWML − warm-up predictor, embedding reward on held-out TWX games (not measured when RL did "
                    "not move the model: the reward is 0 for every sample at cpu size)",
          precondition=rl_changed_rwml_model),
    Claim("rwml.twx_vs_sft", "RWML", "embedding-reward RL beats SFT on TextWorldExpress next observations",
          "— (paper: RWML > SFT world-model training)", "rwml",
          "quality/RWML (embedding RL)/embedding_reward", "quality/SFT on next observations/embedding_reward",
          kit_label="RWML − SFT, embedding reward (cos ≥ τ) on held-out TWX games",
          precondition=rl_changed_rwml_model),
    Claim("rwml.mid_training", "RWML", "world-model mid-training, then policy RL, beats policy RL alone",
          "+6.9 ALFWorld, +5.7 τ²-Bench", "rwml",
          "policy/arms/rwml/after/success", "policy/arms/base/after/success",
          kit_label="Δ success, held-out Simon Says games (policy RL from RWML − from base; one-step RL "
                    "after the same BC warm-up)"),
    Claim("rwml.invalid_actions", "RWML", "RWML lowers the share of invalid actions", "59.3% → 39.5%", "rwml",
          "policy/arms/rwml/after/invalid_share", "policy/arms/base/after/invalid_share", direction="lower",
          kit_label="Δ share of invalid actions, held-out Simon Says games (from RWML − from base, after "
                    "policy RL)"),
    # ---------------------------------------------------------------- WM-R1
    Claim("wm_r1.vs_zero_shot", "WM-R1", "the agent trained only inside the world model beats its zero-shot "
          "start in the real environment (held-out task templates)", "3B: 29.5 vs 18.6", "wm_r1",
          "arms/wm_r1/heldout/success", "arms/sft/heldout/success",
          kit_label="Δ simulator success, held-out templates (WM-R1 − SFT start)"),
    Claim("wm_r1.vs_zero_shot_train", "WM-R1", "the same on unseen tasks of the training templates",
          "3B: 29.5 vs 18.6", "wm_r1", "arms/wm_r1/train_templates/success", "arms/sft/train_templates/success",
          kit_label="Δ simulator success, train templates (WM-R1 − SFT start)"),
    Claim("wm_r1.vs_real_grpo", "WM-R1", "WM-R1 beats GRPO with real-environment transitions",
          "7B AndroidWorld 39.8 vs UI-R1 30.8 (+9.0)", "wm_r1",
          "arms/wm_r1/heldout/success", "arms/grpo_real/heldout/success",
          kit_label="Δ simulator success, held-out (WM-R1 − GRPO in the simulator)"),
    Claim("wm_r1.vs_simulation", "WM-R1", "WM-R1 beats inference-time simulation (best-of-K with the world model)",
          "— (baseline comparison)", "wm_r1", "arms/wm_r1/heldout/success", "arms/best_of_k/heldout/success",
          kit_label="Δ simulator success, held-out (WM-R1 − best-of-K)"),
    Claim("wm_r1.imagined_calls", "WM-R1", "ablation: imagined world-model calls while reasoning help",
          "no CoT −5.2 (nearest paper ablation)", "wm_r1",
          "arms/wm_r1/heldout/success", "arms/wm_r1_no_imagine/heldout/success",
          kit_label="Δ simulator success, held-out (with − without call_wm)"),
    Claim("wm_r1.length_reward", "WM-R1", "ablation: the length reward helps", "length reward +3.3", "wm_r1",
          "arms/wm_r1/heldout/success", "arms/wm_r1_no_length/heldout/success",
          kit_label="Δ simulator success, held-out (with − without R_L)"),
    Claim("wm_r1.calls_fall", "WM-R1", "world-model calls per trajectory fall during training",
          "~4 → ~2.5 → ~1.8", "wm_r1", "wm_calls_first", "wm_calls_last",
          kit_label="calls/episode, first − last GRPO step (> 0: fell)"),
    Claim("wm_r1.positive_control", "WM-R1", "inside an error-free world model (the simulator itself, p = 0) "
          "GRPO raises the agent's success over its SFT start: the method works where fidelity is there",
          "— (the kit's positive control: no paper number)", "wm_r1_ladder",
          "rungs/0/greedy/success", "start/greedy/success",
          kit_label="Δ greedy simulator success, unseen tasks of the training templates (p = 0 − SFT start)"),
    Claim("wm_r1.fidelity", "WM-R1", "WM-R1's gains depend on world-model fidelity (the paper's stated "
          "limitation): the same training inside a world model that errs on 60% of transitions ends lower",
          "— (limitation, no number)", "wm_r1_ladder", "rungs/0/greedy/success", "rungs/0.6/greedy/success",
          kit_label="Δ greedy simulator success, training templates (oracle p = 0 − p = 0.6)"),
    Claim("wm_r1.small_world_control", "WM-R1", "the positive control where the mechanism can act: in the "
          "settings world, from a weaker start, GRPO inside the error-free world model raises success",
          "— (the kit's positive control: no paper number)", "wm_r1_small_world",
          "rungs/0/greedy/success", "start/greedy/success",
          kit_label="Δ greedy simulator success, unseen settings tasks (p = 0 − SFT start)"),
    Claim("wm_r1.small_world_control_sampled", "WM-R1", "the same, sampled at T = 1",
          "— (the kit's positive control)", "wm_r1_small_world",
          "rungs/0/sampled/success", "start/sampled/success",
          kit_label="Δ sampled (T = 1) simulator success, unseen settings tasks (p = 0 − SFT start)"),
    Claim("wm_r1.small_world_fidelity", "WM-R1", "in the settings world, the same training inside a world model "
          "that errs on 60% of transitions ends lower (the paper's stated limitation)",
          "— (limitation, no number)", "wm_r1_small_world", "rungs/0/greedy/success", "rungs/0.6/greedy/success",
          kit_label="Δ greedy simulator success, settings tasks (oracle p = 0 − p = 0.6)"),
    Claim("wm_r1.small_world_reads_instruction", "WM-R1", "in the settings world, GRPO inside the error-free "
          "world model ends above the best policy that ignores the instruction (open Settings, tap one "
          "fixed switch, finish)", "— (the kit's control: no paper number)", "wm_r1_small_world",
          "rungs/0/greedy/success", "instruction_blind/success",
          kit_label="Δ greedy simulator success, settings tasks (p = 0 − best instruction-blind sequence)"),
    Claim("wm_r1.learned_world_model", "WM-R1", "the agent trained only inside a learned world model beats "
          "its SFT start in the real environment (settings world, status-bar phone)", "3B: 29.5 vs 18.6",
          "wm_r1_learned", "rungs/learned/greedy/success", "start/greedy/success",
          kit_label="Δ greedy simulator success, unseen settings tasks (WM-R1 in the learned model − SFT start)"),
    Claim("wm_r1.learned_vs_simulator", "WM-R1", "WM-R1 inside the learned world model beats GRPO with "
          "real-environment transitions (the simulator) at the same number of updates",
          "7B AndroidWorld 39.8 vs UI-R1 30.8 (+9.0)",
          "wm_r1_learned", "rungs/learned/greedy/success", "rungs/0/greedy/success",
          kit_label="Δ greedy simulator success, settings tasks (WM-R1 in the learned model − GRPO on the simulator)"),
    Claim("wm_r1.learned_reads_instruction", "WM-R1", "WM-R1 inside the learned world model ends above the "
          "best policy that ignores the instruction (open Settings, tap one fixed switch, finish): its gain "
          "is more than learning the path", "— (the kit's control: no paper number)",
          "wm_r1_learned", "rungs/learned/greedy/success", "instruction_blind/success",
          kit_label="Δ greedy simulator success, settings tasks (WM-R1 in the learned model − best "
                    "instruction-blind sequence)"),
    # ---------------------------------------------------------------- WMRL
    Claim("wmrl.error_floor", "WMRL", "pure world-model RL plateaus at an error floor above real-execution RL",
          "Theorem 3 (permanent floor)", "wmrl_controlled",
          "arms/pure WM/final_gap/mean", "arms/real/final_gap/mean",
          kit_label="final gap to J*, pure WM − real (controlled problem)"),
    Claim("wmrl.closes_gap", "WMRL", "anchored RL ends closer to the optimum than pure world-model RL",
          "Theorem 4 (contracting floor)", "wmrl_controlled",
          "arms/pure WM/final_gap/mean", "arms/WMRL/final_gap/mean",
          kit_label="final gap to J*, pure WM − WMRL (controlled problem)"),
    Claim("wmrl.compute_controlled", "WMRL", "WMRL reaches real-execution quality with less compute",
          "3.1-3.4× less (4B: 883 vs 286 GPU-h)", "wmrl_controlled", "compute_ratio/real_over_wmrl/ratio",
          direction="higher", threshold=0.0, derive="wmkit.wmrl.experiment:record_log_ratio_controlled",
          kit_label="log of compute to target, real / WMRL (controlled; > 0: WMRL cheaper; e^value is the "
                    "ratio; WMRL never reaching it counts as at best 1×)"),
    Claim("wmrl.compute_research", "WMRL", "the same on research tasks executed for real",
          "3.1-3.4× less (4B: 883 vs 286 GPU-h)", "wmrl_research",
          "compute_ratio/learned/real_over_wmrl/ratio", direction="higher", threshold=0.0,
          derive="wmkit.wmrl.experiment:record_log_ratio_research",
          kit_label="log of compute to target in work units (1 per execution), real / WMRL (learned WM, "
                    "build counted; > 0: WMRL cheaper; WMRL never reaching it counts as at best 1×)"),
    Claim("wmrl.final_score", "WMRL", "WMRL's final score is at least real-execution GRPO's",
          "16.4 vs 15.2 (MLE-Dojo)", "wmrl_research", "arms/WMRL (learned)/final/mean", "arms/real/final/mean",
          direction="higher", threshold=-1e-9, kit_label="final expected grade, WMRL − real (learned WM)"),
    Claim("wmrl.ablation_both", "WMRL", "ablation: both corrections beat no correction", "16.4 vs 13.5",
          "wmrl_research", "arms/WMRL (learned)/final/mean", "arms/no correction (learned)/final/mean",
          kit_label="final grade, both − none (learned WM)"),
    Claim("wmrl.ablation_debias", "WMRL", "ablation: debiasing alone helps", "15.7 vs 13.5", "wmrl_research",
          "arms/debias only (learned)/final/mean", "arms/no correction (learned)/final/mean",
          kit_label="final grade, debias only − none (learned WM)"),
    Claim("wmrl.ablation_denoise", "WMRL", "ablation: denoising alone helps", "14.9 vs 13.5", "wmrl_research",
          "arms/denoise only (learned)/final/mean", "arms/no correction (learned)/final/mean",
          kit_label="final grade, denoise only − none (learned WM)"),
    Claim("wmrl.ablation_controlled", "WMRL", "ablation on the controlled problem: both corrections beat none",
          "16.4 vs 13.5", "wmrl_controlled", "arms/no correction/final_gap/mean", "arms/WMRL/final_gap/mean",
          kit_label="final gap to J*, none − both (controlled)"),
    Claim("wmrl.vs_anchors_only", "WMRL", "(kit's control) the world-model groups help beyond the anchors alone",
          "not reported", "wmrl_research", "arms/WMRL (learned)/final/mean", "arms/anchors only/final/mean",
          kit_label="final grade, WMRL − anchors-only (learned WM)"),
)


_P, _L, _K = PAPER_CLAIM, LIMITATION, KIT_CONTROL
CLAIM_TYPES: dict[str, tuple[str, str | None]] = {
    # id: (kind, the id of the primary measure this claim is a sub-row of, or None)
    #
    # Kinds. A paper claim is stated by the paper (a headline number, or a direction in one of its
    # ablations); a paper limitation is stated by the paper about its own method; a kit control is
    # the kit's own check (its figure says "the kit's check/control", or the settings world with no
    # paper figure): it tells whether a measure can be trusted, not whether the paper holds.
    #
    # Groups. Where the kit measures one paper claim several ways, one measure is the primary and
    # the others are sub-rows: the group has one verdict, the primary's. The primary is chosen by
    # design, before any result (a tiny model shows a method's effect only where its mechanism can act,
    # so the kit builds a regime for each; see research/README.md): the measure in the regime built for the
    # claim's mechanism (the small text-game world for RLVR-World and RWML, the settings world with a
    # learned world model for WM-R1, the research tasks executed for real for WMRL's compute), sampled
    # where the paper samples, on the paper's own metric; the full-size world, the third-party game,
    # greedy decoding, other metrics and the other data recipes are its sub-rows. Primary first.
    "rlvr.regime_changed": (_P, None),
    "rlvr.changed": (_P, "rlvr.regime_changed"),
    "rlvr.changed_greedy": (_P, "rlvr.regime_changed"),
    "rlvr.regime_reward": (_P, None),
    "rlvr.partial": (_P, "rlvr.regime_reward"),
    "rlvr.unchanged": (_P, None),
    "rlvr.regime_pass_at_k": (_L, None),
    "rlvr.best_of_k": (_L, "rlvr.regime_pass_at_k"),
    "rlvr.regime_reward_type": (_P, None),
    "rlvr.reward_type": (_P, "rlvr.regime_reward_type"),
    "rlvr.regime_group_size": (_P, None),
    "rlvr.group_size": (_P, "rlvr.regime_group_size"),
    "rlvr.web_f1": (_P, None),
    "rlvr.video": (_P, None),
    "rlvr.video_changed": (_P, "rlvr.video"),
    "rlvr.video_one_step": (_P, "rlvr.video"),
    "rlvr.repetition": (_P, None),
    "rlvr.repetition_changed": (_P, "rlvr.repetition"),
    "rlvr.video_exact_changed": (_K, None),
    "rlvr.video_changed_steps": (_K, None),
    "rlvr.video_unchanged_cost": (_K, None),
    "rlvr.video_agent_kept": (_K, None),
    "rlvr.video_pixel_hacking": (_K, None),
    "rwml.vs_base": (_P, None),
    "rwml.vs_base_all": (_P, "rwml.vs_base"),
    "rwml.vs_base_exact": (_P, "rwml.vs_base"),
    "rwml.vs_base_greedy": (_P, "rwml.vs_base"),
    "rwml.twx_vs_base": (_P, "rwml.vs_base"),
    "rwml.vs_sft": (_P, None),
    "rwml.twx_vs_sft": (_P, "rwml.vs_sft"),
    "rwml.forgetting": (_P, None),
    "rwml.mid_training": (_P, None),
    "rwml.invalid_actions": (_P, None),
    "wm_r1.learned_world_model": (_P, None),
    "wm_r1.vs_zero_shot": (_P, "wm_r1.learned_world_model"),
    "wm_r1.vs_zero_shot_train": (_P, "wm_r1.learned_world_model"),
    "wm_r1.learned_vs_simulator": (_P, None),
    "wm_r1.vs_real_grpo": (_P, "wm_r1.learned_vs_simulator"),
    "wm_r1.vs_simulation": (_P, None),
    "wm_r1.imagined_calls": (_P, None),
    "wm_r1.length_reward": (_P, None),
    "wm_r1.calls_fall": (_P, None),
    "wm_r1.small_world_fidelity": (_L, None),
    "wm_r1.fidelity": (_L, "wm_r1.small_world_fidelity"),
    "wm_r1.positive_control": (_K, None),
    "wm_r1.small_world_control": (_K, None),
    "wm_r1.small_world_control_sampled": (_K, "wm_r1.small_world_control"),
    "wm_r1.small_world_reads_instruction": (_K, None),
    "wm_r1.learned_reads_instruction": (_K, None),
    "wmrl.error_floor": (_P, None),
    "wmrl.closes_gap": (_P, None),
    "wmrl.compute_research": (_P, None),
    "wmrl.compute_controlled": (_P, "wmrl.compute_research"),
    "wmrl.final_score": (_P, None),
    "wmrl.ablation_both": (_P, None),
    "wmrl.ablation_controlled": (_P, "wmrl.ablation_both"),
    "wmrl.ablation_debias": (_P, None),
    "wmrl.ablation_denoise": (_P, None),
    "wmrl.vs_anchors_only": (_K, None),
}
"""Every claim's kind and group (kept apart from :data:`CLAIMS` so that the claims' own lines stay as
they are). The report counts one verdict per group of paper claims: the primary's."""

CLAIMS = tuple(dataclasses.replace(c, kind=CLAIM_TYPES[c.id][0], measures=CLAIM_TYPES[c.id][1])
               if c.id in CLAIM_TYPES else c for c in CLAIMS)


def check_groups(claims) -> None:
    """Each claim has a known kind; a sub-row names a primary in `claims` that is itself no sub-row,
    of the same paper and kind."""
    by_id = {c.id: c for c in claims}
    for c in claims:
        assert c.kind in CLAIM_KINDS, f"{c.id}: kind {c.kind!r} is none of {CLAIM_KINDS}"
        if c.measures is not None:
            primary = by_id.get(c.measures)
            assert primary is not None and primary.measures is None, f"{c.id}: measures {c.measures!r}, no primary"
            assert (primary.paper, primary.kind) == (c.paper, c.kind), f"{c.id}: another paper or kind than {primary.id}"


def _check_registry() -> None:
    ids = [c.id for c in CLAIMS]
    assert len(ids) == len(set(ids)), "claim ids must be unique"
    for c in CLAIMS:
        assert c.paper in PAPERS, c.id
        assert (c.experiment is None) == bool(c.not_measured), c.id
        assert c.experiment is None or (c.experiment in EXPERIMENTS and c.value), c.id
        assert c.id in CLAIM_TYPES, f"{c.id}: give it a kind (and group) in CLAIM_TYPES"
    check_groups(CLAIMS)
    check_blocks()


PAPER_SCALE_NOTES = {
    "RLVR-World": ("RL sharpens what the MLE model can nearly predict: the kit's tiny models gain where a small "
                   "world puts the right answer within reach, and elsewhere a few seeds cannot tell the change "
                   "from no change"),
    "RWML": ("the embedding reward moves a tiny model on the kit's text game, but the paper's comparisons "
             "with SFT and its downstream policy gains come from models far larger than the kit trains"),
    "WM-R1": ("a tiny policy trained inside a world model learns only where its mechanism can act (a world "
              "whose right taps carry from task to task) and only as far as that world model is faithful"),
    "WMRL": ("the kit's policy is a small softmax on small problems, where the differences between WMRL, its "
             "ablations and real execution are small next to the spread between seeds"),
}
"""Per paper, in words and without numbers (the numbers are the report's): why the kit, at its scale,
reproduces some of the paper's claims and not others. Read by :func:`wmkit.bench.cards.result_card`."""

EXPERIMENT_SCALE_NOTES = {
    "rlvr_video": ("on a tiny next-frame model a pixel reward trades the steps it trains on against the ones it "
                   "rarely sees, and RL removes the repetition artefact only where a seed's MLE model copies "
                   "the last frame"),
}
"""The same, for a card whose claims all come from one experiment that measures a paper's claims in
another medium than the paper's other experiments (RLVR-World's video world model)."""

KIT_SCALE_NOTE = ("the kit reproduces directions and mechanisms with tiny models on a few CPU cores; the "
                  "papers' magnitudes need their scale")
"""The same, for a card of several papers."""
