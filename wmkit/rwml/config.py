"""RWML's configs (notebook 02's RWML sections, ``wmkit run rwml``, the benchmark's ``rwml`` and
``rwml_textgame``) and their values per profile.

:class:`RWMLTextGameSizes` sizes RWML on the kit's own text game, :class:`PolicySizes` the policy RL on
TextWorldExpress; the world-model RL on TextWorldExpress takes RLVR-World's sizes (their ``twx_*``
fields: `wmkit.rlvr_world.config.RLVRSizes`). GRPO knobs: one `wmkit.core.grpo.GRPOArgs` each (``grpo``).
Plain data: no torch.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from wmkit.core.grpo import GRPOArgs
from wmkit.profiles import Profile
from wmkit.rlvr_world.config import BENCH_RLVR, RLVR, RLVRSizes
from wmkit.wm_r1.config import SMALL_WORLD, WM_R1, WMR1Sizes


@dataclass(frozen=True)
class PolicySizes:
    """Sizes of RWML's policy experiment (`wmkit.rwml.policy`) for one profile."""

    games: tuple[str, ...]
    """TextWorldExpress games played (round-robin over episodes); see wmkit.rwml.policy for why Simon Says."""
    bc_episodes: int
    """Train-fold episodes whose states' gold actions make the behaviour-cloning warm-up."""
    rl_episodes: int
    """Further train-fold episodes whose states are the GRPO prompts."""
    random_action_rate: float
    """Chance of a random valid detour before each gold step while collecting states."""
    max_collect_steps: int
    """Steps recorded per collected episode."""
    bc_epochs: float
    """Passes over the warm-up states."""
    bc_learning_rate: float
    """AdamW learning rate of the warm-up (full parameters)."""
    grpo: GRPOArgs
    """GRPO of the policy: G actions sampled per state (``max_completion_length``: the longest action
    sampled or generated, evaluation included)."""
    eval_episodes: int
    """Held-out episodes played greedily per evaluation (round-robin over `games`)."""
    max_episode_steps: int
    """Step cap of an evaluation episode (an invalid action uses a step, as in TWX)."""
    max_observation_chars: int
    """The prompt keeps the last this many characters of the observation (object lists sit at the end)."""


@dataclass(frozen=True)
class RWMLTextGameSizes:
    """RWML on the kit's own text game (`wmkit.rwml.experiment.rwml_textgame_experiment`): the
    regime where the embedding reward is neither all 0 nor all 1 at cpu size (see that module)."""

    difficulty: str
    """World size, a name in `wmkit.envs.textgame.DIFFICULTIES` ("tiny": learnable at cpu size)."""
    seeds: int
    """Seeds notebook 02 runs (warm-up, filter, RL and SFT per seed; the data is the same)."""
    episodes: int
    """Text-game episodes collected (data seed 0, split 80/10/10 by episode; the same data every seed)."""
    warm_fraction: float
    """Share of the training transitions given to the warm-up predictor (RWML: ~10%)."""
    warm_epochs: float
    """SFT epochs of the warm-up predictor on that share."""
    warm_learning_rate: float
    """AdamW learning rate of the warm-up SFT (and of the SFT baseline)."""
    warm_batch_size: int
    """Their batch size (transitions)."""
    tau_transitions: int
    """Validation transitions whose warm-up predictions choose τ."""
    tau_samples: int
    """Samples (T=1) per validation transition for τ, besides the greedy answer."""
    rl_pool: int
    """Transitions of the remaining ~90% scored by the hard-sample filter (the RL and SFT data)."""
    easy_keep_probability: float
    """Chance an easy transition (warm-up predictor already right) survives the hard-sample filter."""
    filter_samples: int
    """Samples (T=1) per transition the filter judges "easy" by (all rewarded 1; 0: the greedy answer)."""
    grpo: GRPOArgs
    """GRPO of RWML (all parameters of the tiny model; ``max_completion_length`` also bounds the warm-up's
    samples for τ and the filter)."""
    sft_epochs: float
    """SFT epochs of the SFT baseline on the filtered transitions."""
    eval_transitions: int
    """Held-out (test) transitions evaluated."""
    eval_samples: int
    """Samples (T=1) per held-out transition for the sampled measures."""
    max_new_tokens: int
    """Generation budget at evaluation."""
    forgetting_eval: int
    """Transitions per kit environment (full text game, phone) in the forgetting check."""
    parallel_runs: int = 1
    """Seeds run at a time, each in its own process with an equal share of the cores
    (`wmkit.core.parallel`); 1: one after another, in this process."""


@dataclass(frozen=True)
class RWMLSizes:
    """RWML: world-model RL, then policy RL on top."""

    world_model: RLVRSizes
    """Sizes of the RWML world-model run on TextWorldExpress (its ``twx_*`` fields: notebook 02's)."""
    policy: PolicySizes
    """Sizes of the policy RL from the base and from the RWML model."""
    textgame: RWMLTextGameSizes
    """Sizes of RWML on the kit's own text game (notebook 02 and the benchmark's rwml_textgame)."""


@dataclass(frozen=True)
class RWMLAgentSizes:
    """RWML with one model that predicts and acts (``wmkit.rwml.agent``): the phone's settings world
    of WM-R1's learned set-up, a policy warm-started on both formats, RWML on next-screen
    prediction only, then policy RL from the warm-up and from the RWML model."""

    world: WMR1Sizes
    """The settings world: its ``ladder`` gives the agent's SFT start (``sft_tasks``, ``sft_epochs``),
    the evaluation tasks and the policy RL (``ladder.grpo``); the rest of it the policy's shape and
    episode sizes."""
    episodes: int
    """Collection episodes (``phone.collect_transitions``, status-bar phone) of next-screen data."""
    prediction_context: str
    """What a prediction is given (``wmkit.rwml.agent.PREDICTION_CONTEXTS``): 'screen' (the screen and
    the action) or 'episode' (the agent's own episode so far, then an imagined call of the action: the
    next screen is predicted where the agent reads screens)."""
    prediction_target: str
    """What a prediction writes (``wmkit.rwml.agent.PREDICTION_TARGETS``): 'diff' (the change, as the
    kit's world models write it) or 'screen' (the whole next screen)."""
    warm_fraction: float
    """Share of the training transitions whose next screens the warm-up learns by SFT (RWML: ~10%)."""
    tau_transitions: int
    """Validation transitions whose predictions choose τ (greedy and ``tau_samples`` samples each)."""
    tau_samples: int
    rl_pool: int
    """Training transitions (after the warm-up's) the hard-sample filter scores."""
    filter_samples: int
    """Samples at T = 1 that must all be rewarded for a transition to count as easy."""
    easy_keep_probability: float
    grpo: GRPOArgs
    """RWML's GRPO (next-screen prediction, embedding reward, no task reward; ``max_completion_length``:
    the longest predicted screen, in tokens, also at evaluation)."""
    eval_transitions: int
    """Held-out test transitions whose predictions are measured (greedy and one sample each)."""
    policy_reward: str = "success"
    """Policy RL's reward: 'success' (task success only, as RWML's policy RL) or 'composite'
    (WM-R1's α·R_succ + β·R_L + γ·R_WM)."""
    prediction_repeats: int = 1
    """Times each warm-up prediction example appears in the warm-up SFT (its epochs on predicting,
    against the acting episodes' one pass per epoch)."""
    acting_only_control: bool = False
    """Also train the warm-up without its prediction examples and measure its acting (does predicting
    in the warm-up change acting?)."""


def rwml_sizes(profile: Profile) -> RWMLSizes:
    """RWML's sizes at `profile` (notebook 02, ``wmkit run rwml``)."""
    return RWML[profile.name]


def bench_rwml_sizes(profile: Profile) -> RWMLSizes:
    """The sizes the benchmark's ``rwml`` runs at: the world-model RL at the benchmark's RLVR-World sizes."""
    return BENCH_RWML[profile.name]


def bench_rwml_textgame_sizes(profile: Profile) -> RWMLTextGameSizes:
    """The sizes the benchmark's ``rwml_textgame`` runs at (notebook 02's)."""
    return BENCH_RWML[profile.name].textgame


def bench_rwml_agent_sizes(profile: Profile) -> RWMLAgentSizes:
    """The sizes the benchmark's ``rwml_agent`` runs at."""
    return RWML_AGENT[profile.name]


# ============================================================================ values (not in record keys)

POLICY = {
    "smoke": PolicySizes(
        games=("simonsays",), bc_episodes=4, rl_episodes=3, random_action_rate=0.25, max_collect_steps=6,
        bc_epochs=1.0, bc_learning_rate=2e-3,
        grpo=GRPOArgs(max_steps=1, num_generations=2, prompts_per_step=2, learning_rate=1e-4, max_completion_length=8),
        eval_episodes=3, max_episode_steps=3, max_observation_chars=160),
    "cpu": PolicySizes(
        games=("simonsays",), bc_episodes=200, rl_episodes=150, random_action_rate=0.25, max_collect_steps=12,
        bc_epochs=3.0, bc_learning_rate=2e-3,
        grpo=GRPOArgs(max_steps=30, num_generations=8, prompts_per_step=4, learning_rate=1e-4,
                      max_completion_length=12),
        eval_episodes=30, max_episode_steps=8, max_observation_chars=240),
    "gpu": PolicySizes(
        games=("simonsays",), bc_episodes=1000, rl_episodes=2000, random_action_rate=0.25, max_collect_steps=16,
        bc_epochs=3.0, bc_learning_rate=2e-3,
        grpo=GRPOArgs(max_steps=300, num_generations=8, prompts_per_step=16, learning_rate=1e-4,
                      max_completion_length=16),
        eval_episodes=150, max_episode_steps=10, max_observation_chars=400),
}
"""The policy RL's sizes per profile."""

TEXTGAME = {
    "smoke": RWMLTextGameSizes(
        difficulty="tiny", seeds=2, episodes=30, warm_fraction=0.1, warm_epochs=1.0, warm_learning_rate=1e-3,
        warm_batch_size=8,
        tau_transitions=4, tau_samples=2, rl_pool=8, easy_keep_probability=0.1, filter_samples=2,
        grpo=GRPOArgs(max_steps=1, num_generations=2, prompts_per_step=2, learning_rate=3e-4, max_completion_length=16),
        sft_epochs=1.0, eval_transitions=3, eval_samples=1, max_new_tokens=16, forgetting_eval=2),
    # The sampled filter at lr 3e-4 over a pool of 200: the greedy-answer filter and larger steps teach
    # the bias of the rare hard cases or collapse the model. Why: see research/README.md, 'RWML regime'.
    "cpu": RWMLTextGameSizes(
        difficulty="tiny", seeds=3, episodes=200, warm_fraction=0.1, warm_epochs=3.0, warm_learning_rate=1e-3,
        warm_batch_size=8,
        tau_transitions=30, tau_samples=3, rl_pool=200, easy_keep_probability=0.1, filter_samples=4,
        grpo=GRPOArgs(max_steps=30, num_generations=8, prompts_per_step=4, learning_rate=3e-4, max_completion_length=80),
        sft_epochs=2.0, eval_transitions=100, eval_samples=2, max_new_tokens=80, forgetting_eval=20, parallel_runs=2),
    "gpu": RWMLTextGameSizes(
        difficulty="tiny", seeds=3, episodes=1000, warm_fraction=0.1, warm_epochs=3.0, warm_learning_rate=1e-3,
        warm_batch_size=8,
        tau_transitions=200, tau_samples=8, rl_pool=2000, easy_keep_probability=0.1, filter_samples=4,
        grpo=GRPOArgs(max_steps=200, num_generations=8, prompts_per_step=16, learning_rate=3e-4,
                      max_completion_length=96),
        sft_epochs=2.0, eval_transitions=300, eval_samples=4, max_new_tokens=96, forgetting_eval=200),
}
"""RWML on the kit's text game: sizes per profile."""

RWML = {name: RWMLSizes(world_model=RLVR[name], policy=POLICY[name], textgame=TEXTGAME[name]) for name in RLVR}
"""RWML's sizes per profile (notebook 02, ``wmkit run rwml``)."""

BENCH_RWML = {name: RWMLSizes(world_model=BENCH_RLVR[name], policy=POLICY[name], textgame=TEXTGAME[name])
              for name in RLVR}
"""The benchmark's RWML sizes per profile."""

# WM-R1's settings world (its small world, GRPO on the simulator as the policy RL). cpu: 600 acting
# episodes, so that the warm-up's success lies between 0 and its ceiling (2400 gave 0.94 with the
# predictions), 10% of 3000 collection episodes' transitions as predictions, 3 times each, so that
# the warm-up predicts some changed transitions exactly (at 1000 episodes, once each: none, and RWML's
# reward then only ever paid "no change"); RWML at lr 1e-4 over 60 steps (3e-4 over 30 did not raise
# its own reward).
# Why this world and these sizes: see research/README.md, 'RWML agent'.
RWML_AGENT = {
    "smoke": RWMLAgentSizes(
        world=replace(WM_R1["smoke"], ladder=SMALL_WORLD["smoke"]), episodes=12, prediction_context="screen",
        prediction_target="diff", warm_fraction=0.2, tau_transitions=4, tau_samples=1, rl_pool=8, filter_samples=2,
        easy_keep_probability=0.1,
        grpo=GRPOArgs(max_steps=1, num_generations=2, prompts_per_step=2, learning_rate=3e-4, max_completion_length=48),
        eval_transitions=4),
    "cpu": RWMLAgentSizes(
        world=replace(WM_R1["cpu"], ladder=replace(SMALL_WORLD["cpu"], sft_tasks=600)), episodes=3000,
        prediction_context="screen", prediction_target="diff", warm_fraction=0.1, prediction_repeats=3,
        tau_transitions=30, tau_samples=3, rl_pool=200, filter_samples=4, easy_keep_probability=0.1,
        grpo=GRPOArgs(max_steps=60, num_generations=8, prompts_per_step=4, learning_rate=1e-4,
                      max_completion_length=160),
        eval_transitions=100, acting_only_control=True),
    "gpu": RWMLAgentSizes(  # not measured
        world=replace(WM_R1["gpu"], ladder=SMALL_WORLD["gpu"]), episodes=3000, prediction_context="screen",
        prediction_target="diff", warm_fraction=0.1, tau_transitions=200, tau_samples=8, rl_pool=2000,
        filter_samples=4, easy_keep_probability=0.1,
        grpo=GRPOArgs(max_steps=200, num_generations=8, prompts_per_step=16, learning_rate=3e-4,
                      max_completion_length=200),
        eval_transitions=300),
}
"""RWML with one model that predicts and acts: the benchmark's ``rwml_agent`` sizes per profile."""

# ============================================================================ end of values
