"""WM-R1's claims, each with the experiment of :mod:`wmkit.wm_r1.registry` that measures it.

A claim the kit cannot measure says why and never carries a number; a claim that measures another
one a second way names it in ``measures`` (see :class:`wmkit.entries.Claim`).
"""
from __future__ import annotations

from wmkit.design import Design, above, all_of, at_least, success_varied
from wmkit.entries import KIT_CONTROL, LIMITATION, Claim


def ablation_learned(arm: str):
    """GRPO acted on arm `arm` of ``wm_r1_learned_ablations``: some group was mixed (a judged success and
    a failure) and the arm's parameters moved from the start."""
    return all_of(above(f"arms/{arm}/signal_groups", f"the success reward varied within some GRPO group of the "
                                                     f"{arm} arm"),
                  above(f"arms/{arm}/param_change", f"the {arm} arm's GRPO moved its parameters"))


def rung_signal(rung: str):
    """GRPO acted on rung `rung` of a fidelity ladder: some group held both a judged success and a failure."""
    return success_varied(f"rungs/{rung}", f"the success reward varied within some GRPO group of rung {rung}")


CLAIMS = (
    Claim("wm_r1.vs_zero_shot", "WM-R1", "the agent trained only inside the world model beats its zero-shot "
          "start in the real environment (held-out task templates)", "3B: +16.0 over its zero-shot start", "wm_r1",
          "arms/wm_r1/heldout/success", "arms/sft/heldout/success",
          kit_label="Δ simulator success, held-out templates (WM-R1 − SFT start)",
          measures="wm_r1.learned_world_model"),
    Claim("wm_r1.vs_zero_shot_train", "WM-R1", "the same on unseen tasks of the training templates",
          "3B: +16.0 over its zero-shot start", "wm_r1", "arms/wm_r1/train_templates/success",
          "arms/sft/train_templates/success",
          kit_label="Δ simulator success, train templates (WM-R1 − SFT start)",
          measures="wm_r1.learned_world_model"),
    Claim("wm_r1.vs_real_grpo", "WM-R1", "WM-R1 beats GRPO with real-environment transitions",
          "7B AndroidWorld 39.8 vs UI-R1 30.8 (+9.0)", "wm_r1",
          "arms/wm_r1/heldout/success", "arms/grpo_real/heldout/success",
          kit_label="Δ simulator success, held-out (WM-R1 − GRPO in the simulator)",
          measures="wm_r1.learned_vs_simulator"),
    Claim("wm_r1.vs_simulation", "WM-R1", "WM-R1 beats inference-time simulation (best-of-K with the world model)",
          "+8.9 (3B), +11.1 (7B) over Code2World", "wm_r1_learned_ablations", "arms/wm_r1/greedy/success",
          "arms/best_of_k/success",
          kit_label="Δ simulator success, unseen tasks of the learned settings world (WM-R1 greedy − best-of-4 "
                    "from its start with the same world model)",
          precondition=ablation_learned("wm_r1"),
          design=Design(paper_effect=0.089, sesoi=0.0445, sd=0.229, sd_seeds=2,
              conversion="+8.9 points of task success over Code2World (3B; +11.1 at 7B, the smaller taken) = "
                         "+0.089 as a share of tasks",
              sd_source="regime_results/design_seeds_wm_r1_learned_ablations.json seeds 100, 102")),
    Claim("wm_r1.imagined_calls", "WM-R1", "ablation: imagined world-model calls while reasoning help",
          "— (no figure for the calls alone; the no-CoT ablation, −5.2, removes the reasoning)",
          "wm_r1_learned_ablations", "arms/wm_r1/sampled/success", "arms/no_imagine/sampled/success",
          kit_label="Δ simulator success, sampled at T = 1, unseen tasks of the learned settings world (WM-R1 − "
                    "without call_wm; greedy agents make no call when judged)",
          precondition=all_of(
              above("arms/wm_r1/wm_calls_first_last_quarter/0",
                    "the WM-R1 arm called the world model in training (calls per episode, first quarter, above 0)"),
              ablation_learned("wm_r1"), ablation_learned("no_imagine")),
          design=Design(paper_effect=None, sesoi=0.05, sd=0.0244, sd_seeds=2,
              conversion="none: the paper gives no figure for the calls alone (its no-CoT ablation, −5.2, also "
                         "removes the reasoning)",
              sd_source="regime_results/design_seeds_wm_r1_learned_ablations.json seeds 100, 102")),
    Claim("wm_r1.length_reward", "WM-R1", "ablation: the length reward helps", "length reward +3.3",
          "wm_r1_learned_ablations", "arms/wm_r1/sampled/success", "arms/no_length/sampled/success",
          kit_label="Δ simulator success, sampled at T = 1, unseen tasks of the learned settings world (WM-R1 − "
                    "without R_L)",
          precondition=all_of(ablation_learned("wm_r1"), ablation_learned("no_length")),
          design=Design(paper_effect=0.033, sesoi=0.0165, sd=0.0495, sd_seeds=2,
              conversion="+3.3 points of task success without the length reward = +0.033 as a share of tasks",
              sd_source="regime_results/design_seeds_wm_r1_learned_ablations.json seeds 100, 102")),
    Claim("wm_r1.calls_fall", "WM-R1", "world-model calls per trajectory fall during training",
          "~4 → ~2.5 → ~1.8", "wm_r1_calls", "arms/wm_r1/wm_calls_first_last_quarter/0",
          "arms/wm_r1/wm_calls_first_last_quarter/1",
          kit_label="calls/episode in training, first − last quarter of WM-R1's GRPO steps in the learned settings "
                    "world, from a start taught to call before every step but the last (> 0: fell)",
          precondition=all_of(
              at_least("arms/wm_r1/wm_calls_first_last_quarter/0",
                       "the WM-R1 arm called the world model at least once an episode in training (calls per "
                       "episode, first quarter of its GRPO steps, at least 1)", 1.0),
              ablation_learned("wm_r1")),
          design=Design(paper_effect=1.65, sesoi=0.5, sd=0.0471, sd_seeds=2, budget_hours=4.0,
              conversion="the paper's ~4 → ~2.5 → ~1.8 calls per trajectory, read as the start, the middle and the "
                         "end of its training with straight lines between them: a first-quarter mean of 3.625 and "
                         "a last-quarter mean of 1.975, a fall of +1.650 calls per trajectory (one trajectory is one "
                         "episode here; its start-to-end fall, 2.2, gives the same SESOI)",
              sd_source="regime_results/design_seeds_wm_r1_calls.json seeds 100, 101")),
    Claim("wm_r1.positive_control", "WM-R1", "inside an error-free world model (the simulator itself, p = 0) "
          "GRPO raises the agent's success over its SFT start: the method works where fidelity is there",
          "— (the kit's positive control: no paper number)", "wm_r1_ladder",
          "rungs/0/greedy/success", "start/greedy/success",
          kit_label="Δ greedy simulator success, unseen tasks of the training templates (p = 0 − SFT start)",
          kind=KIT_CONTROL,
          precondition=rung_signal("0"),
          design=Design(paper_effect=None, sesoi=0.05, sd=0.005, sd_seeds=3,
              conversion="none: the kit's own control",
              sd_source="executed/cpu/bench/records seeds 0-2")),
    Claim("wm_r1.fidelity", "WM-R1", "WM-R1's gains depend on world-model fidelity (the paper's stated "
          "limitation): the same training inside a world model that errs on 30% of transitions ends lower",
          "— (limitation, no number)", "wm_r1_ladder", "rungs/0/greedy/success", "rungs/0.3/greedy/success",
          kit_label="Δ greedy simulator success, training templates (oracle p = 0 − p = 0.3)",
          kind=LIMITATION, measures="wm_r1.small_world_fidelity"),
    Claim("wm_r1.small_world_control", "WM-R1", "the positive control where the mechanism can act: in the "
          "settings world, from a weaker start, GRPO inside the error-free world model raises success",
          "— (the kit's positive control: no paper number)", "wm_r1_small_world",
          "rungs/0/greedy/success", "start/greedy/success",
          kit_label="Δ greedy simulator success, unseen settings tasks (p = 0 − SFT start)", kind=KIT_CONTROL,
          precondition=rung_signal("0"),
          design=Design(paper_effect=None, sesoi=0.05, sd=0.108, sd_seeds=8,
              conversion="none: the kit's own control",
              sd_source="executed/cpu/bench/records seeds 0-7")),
    Claim("wm_r1.small_world_control_sampled", "WM-R1", "the same, sampled at T = 1",
          "— (the kit's positive control)", "wm_r1_small_world",
          "rungs/0/sampled/success", "start/sampled/success",
          kit_label="Δ sampled (T = 1) simulator success, unseen settings tasks (p = 0 − SFT start)",
          kind=KIT_CONTROL, measures="wm_r1.small_world_control"),
    Claim("wm_r1.small_world_fidelity", "WM-R1", "in the settings world, the same training inside a world model "
          "that errs on 30% of transitions ends lower (the paper's stated limitation; below p = 0.5, where a "
          "flipped success would invert the reward)",
          "— (limitation, no number)", "wm_r1_small_world", "rungs/0/greedy/success", "rungs/0.3/greedy/success",
          kit_label="Δ greedy simulator success, settings tasks (oracle p = 0 − p = 0.3)", kind=LIMITATION,
          precondition=all_of(rung_signal("0"), rung_signal("0.3")),
          design=Design(paper_effect=None, sesoi=0.05, sd=0.0846, sd_seeds=8,
              conversion="none: a limitation the paper states without a number",
              sd_source="executed/cpu/bench/records seeds 0-7")),
    Claim("wm_r1.small_world_reads_instruction", "WM-R1", "in the settings world, GRPO inside the error-free "
          "world model ends above the best policy that ignores the instruction (open Settings, tap one "
          "fixed switch, finish)", "— (the kit's control: no paper number)", "wm_r1_small_world",
          "rungs/0/greedy/success", "instruction_blind/success",
          kit_label="Δ greedy simulator success, settings tasks (p = 0 − best instruction-blind sequence)",
          kind=KIT_CONTROL,
          precondition=rung_signal("0"),
          design=Design(paper_effect=None, sesoi=0.05, sd=0.14, sd_seeds=8,
              conversion="none: the kit's own control",
              sd_source="executed/cpu/bench/records seeds 0-7")),
    Claim("wm_r1.learned_world_model", "WM-R1", "the agent trained only inside a learned world model beats "
          "its SFT start in the real environment (settings world, status-bar phone)",
          "3B: +16.0 over its zero-shot start",
          "wm_r1_learned", "rungs/learned/greedy/success", "start/greedy/success",
          kit_label="Δ greedy simulator success, unseen settings tasks (WM-R1 in the learned model − SFT start)",
          precondition=rung_signal("learned"),
          design=Design(paper_effect=0.16, sesoi=0.05, sd=0.143, sd_seeds=19, budget_hours=4.0,
              conversion="the paper's +16.0 points of success over its zero-shot start (3B) as a share: "
                         "+0.160 (the kit's start is an SFT start)",
              sd_source="executed/cpu/bench/records seeds 0-18")),
    Claim("wm_r1.learned_vs_simulator", "WM-R1", "WM-R1 inside the learned world model beats GRPO with "
          "real-environment transitions (the simulator) at the same number of updates",
          "7B AndroidWorld 39.8 vs UI-R1 30.8 (+9.0)",
          "wm_r1_learned", "rungs/learned/greedy/success", "rungs/0/greedy/success",
          kit_label="Δ greedy simulator success, settings tasks (WM-R1 in the learned model − GRPO on the simulator)",
          precondition=all_of(rung_signal("learned"), rung_signal("0")),
          design=Design(paper_effect=0.09, sesoi=0.045, sd=0.117, sd_seeds=19, budget_hours=4.0,
              conversion="the paper's 39.8 vs 30.8 for UI-R1, RL on real-environment data (7B AndroidWorld), "
                         "as a share: +0.090",
              sd_source="executed/cpu/bench/records seeds 0-18")),
    Claim("wm_r1.learned_reads_instruction", "WM-R1", "WM-R1 inside the learned world model ends above the "
          "best policy that ignores the instruction (open Settings, tap one fixed switch, finish): its gain "
          "is more than learning the path", "— (the kit's control: no paper number)",
          "wm_r1_learned", "rungs/learned/greedy/success", "instruction_blind/success",
          kit_label="Δ greedy simulator success, settings tasks (WM-R1 in the learned model − best "
                    "instruction-blind sequence)", kind=KIT_CONTROL,
          precondition=rung_signal("learned"),
          design=Design(paper_effect=None, sesoi=0.05, sd=0.198, sd_seeds=19, budget_hours=4.0,
              conversion="none: the kit's own control",
              sd_source="executed/cpu/bench/records seeds 0-18")),
)

SCALE_NOTE = ("a tiny policy trained inside a world model learns only where its mechanism can act (a world "
              "whose right taps carry from task to task) and only as far as that world model is faithful")
"""Why the kit, at its scale, reproduces some of WM-R1's claims and not others: in words, without
numbers (the numbers are the report's). Read by :func:`wmkit.bench.cards.result_card`."""
