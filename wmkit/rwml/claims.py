"""RWML's claims, each with the experiment of :mod:`wmkit.rwml.registry` that measures it.

A claim the kit cannot measure says why and never carries a number; a claim that measures another
one a second way names it in ``measures`` (see :class:`wmkit.entries.Claim`).
"""
from __future__ import annotations

from wmkit.design import AWAITING_SETUP, Design, above, all_of, between, moved_from, rose
from wmkit.entries import Claim, get_path

RWML_MOVED = above("moved", "RWML's RL moved the model (its parameters and some held-out prediction changed)")
"""The precondition that RWML acted on the kit's text game."""

TWX_MOVED = above("rwml_param_change", "RWML's RL moved the model (relative parameter change above 0)")
"""The precondition that RWML acted on TextWorldExpress: its RL changed the warm-up's parameters."""

AGENT_RWML_ACTED = all_of(
    RWML_MOVED,
    between("first_step_reward_share", "RWML's embedding reward paid some but not every sample in its first GRPO "
                                       "step (its mean strictly between 0 and 1)"))
"""The precondition that RWML acted on the one model that predicts and acts (``rwml_agent``): it moved the
model, and its first GRPO step's reward varied (none or all rewarded leaves every advantage at zero)."""

AGENT_POLICY_ACTED = all_of(
    AGENT_RWML_ACTED,
    rose("acting/warm_policy_rl/greedy/success", "acting/warm/greedy/success",
         "policy RL acted from the warm-up (its greedy success above the warm-up's)"),
    moved_from("reference_nll/rwml_policy_rl", "reference_nll/rwml",
               "the model measured after policy RL from the RWML model is not the RWML model (their expert NLL "
               "differs)"))
"""The precondition of RWML's mid-training claim in ``rwml_agent``: RWML acted, the policy RL both arms
share raised the warm-up's greedy success (a policy RL that does not act from the warm-up compares two
starts, not RWML followed by policy RL with policy RL alone), and what was measured after policy RL from
the RWML model is not the RWML model itself (research/RWML_AGENT.md, section 5: a copy of a model that
TRL's GRPO trained generates with the original's weights, so its arm measured the RWML model, bitwise)."""


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


CLAIMS = (
    Claim("rwml.vs_base", "RWML", "world-model RL without task reward improves on its starting model",
          "+19.6 ALFWorld, +7.9 τ²-Bench (agent success; the kit measures prediction)", "rwml_textgame",
          "quality/rwml/sampled/changed/embedding_reward", "quality/warm/sampled/changed/embedding_reward",
          kit_label="RWML − warm-up predictor, embedding reward rate (cos ≥ τ) on held-out changed text-game "
                    "transitions (sampled at T=1, as GRPO samples; the kit's RLVR protocol)",
          precondition=RWML_MOVED,
          design=Design(paper_effect=None, sesoi=0.05, sd=0.0357, sd_seeds=3,
              conversion="none: the paper's +19.6 (ALFWorld) and +7.9 (τ²-Bench) are agent task success; the "
                         "kit measures next-state prediction",
              sd_source="executed/cpu/bench/records seeds 0-2")),
    Claim("rwml.vs_base_all", "RWML", "the same on all held-out transitions (changed and unchanged)",
          "— (the kit's check)", "rwml_textgame",
          "quality/rwml/sampled/embedding_reward", "quality/warm/sampled/embedding_reward",
          kit_label="RWML − warm-up predictor, embedding reward rate, all held-out transitions (sampled)",
          measures="rwml.vs_base"),
    Claim("rwml.vs_base_exact", "RWML", "the same, judged by exact next states rather than the reward trained on",
          "— (the kit's check that the embedding reward is not gamed)", "rwml_textgame",
          "quality/rwml/sampled/changed/exact", "quality/warm/sampled/changed/exact",
          kit_label="RWML − warm-up predictor, exact next state (held-out changed transitions, sampled)",
          measures="rwml.vs_base"),
    Claim("rwml.vs_base_greedy", "RWML", "the same, greedy decoding", "— (the kit's check of the decoding)",
          "rwml_textgame", "quality/rwml/greedy/changed/embedding_reward",
          "quality/warm/greedy/changed/embedding_reward",
          kit_label="RWML − warm-up predictor, embedding reward rate, greedy, changed (RL sharpens sampling; "
                    "greedy may not move)", measures="rwml.vs_base"),
    Claim("rwml.vs_sft", "RWML", "embedding-reward RL beats SFT on next observations (same data, same start)",
          "— (paper: RWML > SFT world-model training)", "rwml_textgame",
          "quality/rwml/sampled/changed/embedding_reward", "quality/sft/sampled/changed/embedding_reward",
          kit_label="RWML − SFT, embedding reward rate on held-out changed text-game transitions (sampled)",
          precondition=RWML_MOVED,
          design=Design(paper_effect=None, sesoi=0.05, sd=0.0768, sd_seeds=3,
              conversion="none: the paper gives the direction, no number",
              sd_source="executed/cpu/bench/records seeds 0-2")),
    Claim("rwml.forgetting", "RWML", "RL forgets less than SFT (accuracy kept on tasks it did not train on)",
          "— (paper: RL forgets less than SFT)", "rwml_textgame", "forgetting_mean/rwml", "forgetting_mean/sft",
          kit_label="RWML − SFT, exact accuracy on the kit's full text game and phone (greedy)",
          precondition=rl_changed_rwml_model,
          design=Design(paper_effect=None, sesoi=0.05, sd=0.0144, sd_seeds=3,
              conversion="none: the paper gives the direction, no number",
              sd_source="executed/cpu/bench/records seeds 0-2")),
    Claim("rwml.twx_vs_base", "RWML", "the same on TextWorldExpress (third-party game; the contrast regime)",
          "+19.6 ALFWorld, +7.9 τ²-Bench (agent success; the kit measures prediction)", "rwml",
          "quality/RWML (embedding RL)/embedding_reward", "quality/warm-up (10% SFT)/embedding_reward",
          kit_label="RWML − warm-up predictor, embedding reward on held-out TWX games (not measured when RL did "
                    "not move the model: the reward is 0 for every sample at cpu size)",
          precondition=TWX_MOVED, measures="rwml.vs_base"),
    Claim("rwml.twx_vs_sft", "RWML", "embedding-reward RL beats SFT on TextWorldExpress next observations",
          "— (paper: RWML > SFT world-model training)", "rwml",
          "quality/RWML (embedding RL)/embedding_reward", "quality/SFT on next observations/embedding_reward",
          kit_label="RWML − SFT, embedding reward (cos ≥ τ) on held-out TWX games",
          precondition=TWX_MOVED, measures="rwml.vs_sft"),
    Claim("rwml.mid_training", "RWML", "world-model mid-training, then policy RL, beats policy RL alone",
          "+6.9 ALFWorld, +5.7 τ²-Bench", "rwml_agent",
          "acting/rwml_policy_rl/greedy/success", "acting/warm_policy_rl/greedy/success",
          kit_label="Δ greedy success after policy RL, unseen settings tasks (policy RL from the RWML model − the "
                    "same policy RL from its warm-up; one model that predicts and acts)",
          precondition=AGENT_POLICY_ACTED,
          design=Design(pending=AWAITING_SETUP["rwml.mid_training"])),
    Claim("rwml.invalid_actions", "RWML", "RWML lowers the share of invalid actions", "59.3% → 39.5%", "rwml_agent",
          "acting/rwml/sampled/invalid_share", "acting/warm/sampled/invalid_share", direction="lower",
          kit_label="Δ share of failed steps, sampled at T = 1, unseen settings tasks (the RWML model − its warm-up, "
                    "one model that predicts and acts; greedy agents make no failed step)",
          precondition=all_of(
              above("moved", "RWML's RL moved the model (its parameters and some held-out prediction changed)"),
              above("first_step_reward_share", "RWML's embedding reward paid some sample in its first GRPO step "
                                               "(mean reward above 0)")),
          design=Design(paper_effect=-0.198, sesoi=0.05, sd=0.0171, sd_seeds=2,
              conversion="59.3% → 39.5% of actions invalid = -0.198 as a share (the paper's after policy RL; the "
                         "kit compares the RWML model with its warm-up, before policy RL)",
              sd_source="regime_results/design_seeds_rwml_agent.json seeds 101, 102")),
)

SCALE_NOTE = ("the embedding reward moves a tiny model on the kit's text game, but the paper's comparisons with "
              "SFT and its downstream policy gains come from models far larger than the kit trains")
"""Why the kit, at its scale, reproduces some of RWML's claims and not others: in words, without
numbers (the numbers are the report's). Read by :func:`wmkit.bench.cards.result_card`."""
