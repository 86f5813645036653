"""wmkit.video: MiniGrid frames, the patch tokenizer, the pixel rewards and one tiny seeded run."""
import json

import numpy as np
import pytest

from wmkit.video import frames as fr
from wmkit.video import model as vm
from wmkit.video import tokenizer as vt
from wmkit.video.config import VIDEO


@pytest.fixture(scope="module")
def trajectories():
    return fr.collect_trajectories(6, 5, seed=3)


def test_trajectories_are_deterministic_and_shaped(trajectories):
    again = fr.collect_trajectories(6, 5, seed=3)
    assert trajectories.frames.shape == (6, 6, 48, 48, 3) and trajectories.frames.dtype == np.uint8
    assert trajectories.actions.shape == (6, 5)
    assert np.array_equal(trajectories.frames, again.frames) and trajectories.seeds == again.seeds
    other = fr.collect_trajectories(6, 5, seed=4)
    assert not np.array_equal(trajectories.frames, other.frames)
    changed = trajectories.changed()
    assert changed.shape == (6, 5) and changed.any()


def test_turning_changes_the_picture_and_bumping_a_wall_does_not():
    env = fr._make_env(fr.ENV_ID, 8)
    turned, _ = fr._play(env, 0, [fr.ACTIONS.index("left")])
    assert np.any(turned[0] != turned[1])
    # "pickup" with nothing in front changes nothing
    nothing, _ = fr._play(env, 0, [fr.ACTIONS.index("left"), fr.ACTIONS.index("pickup")])
    assert np.array_equal(nothing[1], nothing[2]) or np.any(nothing[1] != nothing[2])


def test_shipped_format_round_trips_and_detects_other_pixels(trajectories, tmp_path):
    path = fr.write_trajectories(trajectories, tmp_path / "t.jsonl")
    back = fr.load_trajectories(path)
    assert np.array_equal(back.frames, trajectories.frames) and np.array_equal(back.actions, trajectories.actions)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[1]["frames_sha256"] = "0" * 64
    path.write_text("\n".join(json.dumps(r, sort_keys=True) for r in rows) + "\n")
    with pytest.raises(fr.ReplayMismatchError, match="renders differently"):
        fr.load_trajectories(path)


def test_bad_collection_sizes_are_one_clear_error():
    with pytest.raises(ValueError, match="at least 1"):
        fr.collect_trajectories(0, 5)
    with pytest.raises(ValueError, match="training episodes"):
        fr.split_trajectories(fr.collect_trajectories(3, 2), 2, 1)


def test_agent_visible_finds_minigrids_red_agent(trajectories):
    assert fr.agent_visible(trajectories.frames).all()  # every rendered frame shows the agent
    erased = trajectories.frames[0, 0].copy()
    erased[(erased[..., 0] >= 200) & (erased[..., 1] <= 60)] = 0
    assert not fr.agent_visible(erased)
    assert fr.agent_visible(trajectories.frames[:2]).shape == (2, trajectories.frames.shape[1])


def test_agent_kept_flags_an_rl_model_that_erases_the_agent():
    from wmkit.video.experiment import agent_kept

    def seed(before, after):
        return {"mle": {"one_step": {"agent_missing": before}}, "arms": {"all": {"one_step": {"agent_missing": after}}}}

    assert agent_kept([seed(0.0, 0.01), seed(0.1, 0.05)]) is None
    reason = agent_kept([seed(0.0, 0.01), seed(0.0, 0.25)])
    assert "seed 1: +0.25" in reason and "reward hacking" in reason


def test_patch_codebook_by_hand():
    # A 2x4 frame of two 2x2 patches: black left, white right.
    frame = np.zeros((2, 4, 3), np.uint8)
    frame[:, 2:] = 255
    book = vt.fit_codebook(frame[None], codebook_size=4, patch=2)
    assert book.size == 2  # two distinct patches: the codebook is exactly them
    codes = book.encode(frame)
    assert codes.shape == (2,) and codes[0] != codes[1]
    assert np.array_equal(book.decode(codes, 2, 4), frame)
    # a missing code (-1) and an out-of-range code decode to black patches
    assert np.array_equal(book.decode(np.array([-1, 7]), 2, 4), np.zeros_like(frame))
    with pytest.raises(ValueError, match="codes for a"):
        book.decode(np.array([0]), 2, 4)


def test_codebook_is_lossless_on_minigrid_and_lossy_when_too_small(trajectories):
    book = vt.fit_codebook(trajectories.frames, 32, 8)
    assert vt.reconstruction_error(book, trajectories.frames) == {"l1": 0.0, "exact_frames": 1.0,
                                                                  "frames": trajectories.frames[:, :].reshape(
                                                                      -1, 48, 48, 3).shape[0]}
    small = vt.fit_codebook(trajectories.frames, 3, 8)
    assert small.size == 3
    assert vt.reconstruction_error(small, trajectories.frames)["l1"] > 0


def test_parse_codes_never_raises_and_pads_or_truncates():
    assert vt.parse_codes("v1 v2 v3", 2).tolist() == [1, 2]
    assert vt.parse_codes("v1 junk <next> v4", 4).tolist() == [1, 4, -1, -1]
    assert vt.parse_codes("", 3).tolist() == [-1, -1, -1]
    assert vt.parse_codes("v99999999999 v2", 2).tolist() == [2, -1]  # absurd numbers are skipped
    for garbage in (None, "vv v-1 v1.5 \x00", 12345):
        assert vt.parse_codes(garbage, 2).shape == (2,)


def test_vocabulary_round_trips_a_prompt():
    tok = vt.build_vocabulary(5)
    prompt = vt.prompt_text([[0, 4], [1, 2]], [2, 0])
    assert prompt == "<frame> v0 v4 <act> a_forward <frame> v1 v2 <act> a_left <next>"
    ids = tok(prompt, add_special_tokens=False)["input_ids"]
    assert len(ids) == 11 and tok.unk_token_id not in ids
    assert tok.decode(tok("v3 v1", add_special_tokens=False)["input_ids"] + [tok.eos_token_id],
                      skip_special_tokens=True) == "v3 v1"
    with pytest.raises(ValueError, match="as many actions"):
        vt.prompt_text([[0, 1]], [])


def test_pixel_distances_by_hand():
    a = np.zeros((2, 2, 3), np.uint8)
    b = a.copy()
    b[0, 0, 0] = 255  # one of 12 values differs by the full range
    assert vm.l1_distance(a, b) == pytest.approx(1 / 12)
    assert vm.mse_distance(a, b) == pytest.approx(1 / 12)
    c = a.copy()
    c[...] = 51  # every value off by 0.2
    assert vm.l1_distance(a, c) == pytest.approx(0.2) and vm.mse_distance(a, c) == pytest.approx(0.04)
    assert vm.frame_reward(a, c, "l1") == pytest.approx(-0.2)


def test_ssim_reward_by_hand():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)
    assert vm.ssim(x, x) == pytest.approx(1.0)
    assert vm.frame_reward(x, x, "l1_ssim") == pytest.approx(0.0)
    # SSIM of a frame with its negative is below zero, so (1 - SSIM)/2 > 0.5 and the reward < -L1 - 0.5
    neg = 255 - x
    assert vm.ssim(x, neg) < 0
    assert vm.frame_reward(x, neg, "l1_ssim") < -vm.l1_distance(x, neg) - 0.5


def test_agent_reward_by_hand():
    """l1_agent on a 4x4 black frame whose agent is 2 red pixels: right, erased, misplaced, half on."""
    truth = np.zeros((4, 4, 3), np.uint8)
    truth[0, 0] = truth[0, 1] = (255, 0, 0)
    erased = np.zeros_like(truth)  # 2 of 48 values off by the full range, no agent pixel left
    misplaced = np.zeros_like(truth)
    misplaced[3, 2] = misplaced[3, 3] = (255, 0, 0)  # 4 of 48 values off, no agent pixel shared
    half = np.zeros_like(truth)
    half[0, 1] = half[1, 1] = (255, 0, 0)  # 2 of 48 values off; agent pixels: 1 shared, 3 in the union
    assert vm.agent_distance(truth, truth) == 0.0 and vm.frame_reward(truth, truth, "l1_agent") == 0.0
    assert vm.agent_distance(erased, truth) == 1.0
    assert vm.frame_reward(erased, truth, "l1_agent") == pytest.approx(-(2 / 48 + 1))
    assert vm.frame_reward(misplaced, truth, "l1_agent") == pytest.approx(-(4 / 48 + 1))
    assert vm.agent_distance(half, truth) == pytest.approx(2 / 3)
    assert vm.frame_reward(half, truth, "l1_agent") == pytest.approx(-(2 / 48 + 2 / 3))
    # The hacking -L1 pays for: erasing beats misplacing by one cell, and beats it under l1_agent too,
    # but by 2/48 against a penalty of 1 -- a guess right a few times in a hundred now beats erasing.
    assert vm.frame_reward(erased, truth, "l1") > vm.frame_reward(misplaced, truth, "l1")
    p_right = 0.05
    guess = p_right * 0.0 + (1 - p_right) * vm.frame_reward(misplaced, truth, "l1_agent")
    assert guess > vm.frame_reward(erased, truth, "l1_agent")
    assert p_right * 0.0 + (1 - p_right) * vm.frame_reward(misplaced, truth, "l1") < vm.frame_reward(erased, truth, "l1")
    # No agent in either frame: nothing to get wrong; an agent drawn where there is none costs 1.
    assert vm.agent_distance(erased, erased) == 0.0 and vm.agent_distance(truth, erased) == 1.0


def test_weighted_agent_rewards_by_hand():
    """The same frames on a 16x16 picture of 8-pixel cells: one cell is a quarter of the frame."""
    truth = np.zeros((16, 16, 3), np.uint8)
    truth[0, 0] = truth[0, 1] = (255, 0, 0)
    erased = np.zeros_like(truth)  # 2 of 768 values off
    misplaced = np.zeros_like(truth)
    misplaced[15, 14] = misplaced[15, 15] = (255, 0, 0)  # 4 of 768 values off
    half = np.zeros_like(truth)
    half[0, 1] = half[1, 1] = (255, 0, 0)
    assert vm.cell_weight(truth, 8) == 0.25 and vm.cell_weight(truth, 64) == 1.0
    cases = {"l1_agent_cell": {"erased": -(2 / 768 + 0.25), "misplaced": -(4 / 768 + 0.25),
                               "half": -(2 / 768 + 0.25 * 2 / 3)},
             "l1_agent_present": {"erased": -(2 / 768 + 0.25), "misplaced": -(4 / 768), "half": -(2 / 768)}}
    for name, expected in cases.items():
        assert vm.frame_reward(truth, truth, name) == 0.0
        for kind, frame in (("erased", erased), ("misplaced", misplaced), ("half", half)):
            assert vm.frame_reward(frame, truth, name) == pytest.approx(expected[kind]), (name, kind)
    # l1_agent_present makes erasing the costliest mistake; under l1 it is the cheapest
    assert vm.frame_reward(erased, truth, "l1_agent_present") < vm.frame_reward(misplaced, truth, "l1_agent_present")
    assert vm.frame_reward(erased, truth, "l1") > vm.frame_reward(misplaced, truth, "l1")
    assert vm.agent_missing(erased, truth) == 1.0 and vm.agent_missing(truth, erased) == 0.0
    with pytest.raises(ValueError, match="cell"):
        vm.cell_weight(truth, 0)


def test_agent_reward_on_minigrid_frames(trajectories):
    """On real frames: the agent cell blanked to the floor colour, and the agent moved to another frame's place."""
    frames = trajectories.frames[0]
    t = next(t for t in range(1, len(frames)) if fr.agent_mask(frames[t]).sum() and
             not np.array_equal(fr.agent_mask(frames[t]), fr.agent_mask(frames[t - 1])))
    erased = frames[t].copy()
    erased[fr.agent_mask(frames[t])] = 0  # MiniGrid's floor is black
    assert not fr.agent_visible(erased)
    assert vm.frame_reward(frames[t], frames[t], "l1_agent") == 0.0
    assert vm.frame_reward(erased, frames[t], "l1_agent") == pytest.approx(-(vm.l1_distance(erased, frames[t]) + 1))
    assert 0 < vm.agent_distance(frames[t - 1], frames[t]) <= 1


def test_unknown_reward_and_missing_lpips_are_clear_errors():
    a = np.zeros((8, 8, 3), np.uint8)
    with pytest.raises(ValueError, match="Unknown video reward"):
        vm.frame_reward(a, a, "lpips_only")
    if not vm.lpips_available():
        with pytest.raises(RuntimeError, match="lpips package"):
            vm.frame_reward(a, a, "l1_lpips")


def test_video_reward_scores_decoded_completions(trajectories):
    book = vt.fit_codebook(trajectories.frames, 32, 8)
    targets = trajectories.frames[:2, 1]
    reward = vm.VideoReward(book, targets, "l1")
    assert reward.__name__ == "video_l1" and reward.n_codes == 36
    right = vt.frame_text(book.encode(targets[0]))
    truncated = " ".join(right.split()[:10])
    scores = reward([right, truncated, "garbage", [{"role": "assistant", "content": right}]], [0, 0, 1, 0])
    assert scores[0] == 0.0 and scores[3] == 0.0
    assert scores[1] < 0 and scores[2] < 0  # missing patches are black: penalised, not an exception
    # a truncated frame keeps its first 10 patches right: closer than nothing at all
    assert scores[1] > reward(["garbage"], [0])[0]


@pytest.mark.slow
def test_one_tiny_seed_runs_end_to_end(tmp_path):
    from dataclasses import replace

    from wmkit.profiles import get_profile
    from wmkit.video.experiment import paired_table, relative_l1_gain, run_video_seed

    sizes = replace(VIDEO["smoke"], train_episodes=6, steps=4, eval_transitions=4, horizon=2,
                    reward="l1_agent", contrast_reward="l1")
    result = run_video_seed(get_profile("smoke"), 0, str(tmp_path), sizes=sizes)
    assert result["reconstruction"]["l1"] == 0.0
    # the two arms with the reward, and the contrast reward's copy on the changed arm
    assert {k: a["reward"] for k, a in result["arms"].items()} == {"all": "l1_agent", "changed": "l1_agent",
                                                                 "changed_l1": "l1"}
    assert result["arms"]["changed_l1"]["n_rl_transitions"] == result["arms"]["changed"]["n_rl_transitions"]
    for arm in result["arms"].values():
        assert arm["rl_steps"] == sizes.grpo.max_steps and len(arm["reward_curve"]) == sizes.grpo.max_steps
        assert arm["moved"] > 0  # GRPO changed the parameters
    for measured in (result["mle"], *result["arms"].values()):
        assert set(measured["one_step"]["greedy"]) >= {"l1", "mse", "ssim", "exact", "l1_changed", "l1_unchanged"}
        # the changed / unchanged split is a split of the same steps: L1 over all is their weighted mean
        one = measured["one_step"]
        if 0 < one["n_changed"] < one["n"]:
            greedy = one["greedy"]
            assert greedy["l1"] == pytest.approx((greedy["l1_changed"] * one["n_changed"] + greedy["l1_unchanged"]
                                                  * (one["n"] - one["n_changed"])) / one["n"])
            assert 0 <= one["exact_unchanged"] <= 1
        assert 0 <= measured["one_step"]["agent_missing"] <= 1 and 0 <= measured["one_step"]["exact_changed"] <= 1
        assert len(measured["rollout"]["curves"]["agent_missing"]) == 2
        assert len(measured["rollout"]["curves"]["l1"]) == 2
    assert result["pictures"]["mle"].shape[1:] == (2, 48, 48, 3)
    assert result["pictures"]["truth"].shape == result["pictures"]["changed"].shape
    table = paired_table([result, result], "changed")
    assert table["rollout_l1"]["difference"]["n"] == 2 and "copy_rate_changed" in table
    assert len(relative_l1_gain([result])) == 1


def test_arm_plan_adds_the_contrast_reward_and_rejects_bad_ones():
    from dataclasses import replace

    from wmkit.video.experiment import arm_plan, contrast_key

    sizes = replace(VIDEO["smoke"], reward="l1_agent", contrast_reward=None)
    assert [(k, a, s.reward) for k, a, s in arm_plan(sizes)] == [("all", "all", "l1_agent"),
                                                                  ("changed", "changed", "l1_agent")]
    assert contrast_key(sizes) is None
    with_l1 = replace(sizes, contrast_reward="l1")
    assert [(k, a, s.reward) for k, a, s in arm_plan(with_l1)][-1] == ("changed_l1", "changed", "l1")
    with pytest.raises(ValueError, match="Unknown contrast reward"):
        arm_plan(replace(sizes, contrast_reward="lpips_only"))
    with pytest.raises(ValueError, match="must differ"):
        arm_plan(replace(sizes, contrast_reward="l1_agent"))


def test_rl_arms_choose_their_transitions(trajectories):
    from wmkit.video.experiment import rl_items, transitions

    sizes = VIDEO["smoke"]
    book = vt.fit_codebook(trajectories.frames, 32, 8)
    codes = book.encode(trajectories.frames)
    every = rl_items(trajectories, codes, sizes, 0, "all")
    assert sorted(every) == sorted(transitions(codes, trajectories.actions, 1))
    focused = rl_items(trajectories, codes, sizes, 0, "changed")
    changed = int(trajectories.changed().sum())
    assert len(focused) == changed + min(round(sizes.rl_unchanged_ratio * changed), len(every) - changed)
    with pytest.raises(ValueError, match="Unknown RL arm"):
        rl_items(trajectories, codes, sizes, 0, "some")


def test_grpo_by_hand_on_a_group_of_video_rewards(trajectories):
    """Notebook 06's exercise 4: TRL's advantages and second-pass loss for a group whose rewards are
    the video reward of four hand-made predictions, redone in numpy and accepted by the checkers."""
    from wmkit import exercises
    from wmkit.core import grpo_step
    from wmkit.core.world_model_rl import RLVRConfig

    book = vt.fit_codebook(trajectories.frames, 32, 8)
    codes = book.encode(trajectories.frames)
    step, group = vm.hand_made_group(codes[0], trajectories.frames[0])
    assert np.any(trajectories.frames[0, step] != trajectories.frames[0, step - 1])
    rewards = vm.VideoReward(book, trajectories.frames[:1, step], "l1")(group, [0] * 4)
    # right is perfect; repeating the last frame misses at most two of the 36 cells; a cut frame is black after 12 codes
    assert rewards[0] == 0.0 and 0 > rewards[1] > -2 / 36 and rewards[1] > rewards[2] >= rewards[3]
    record = grpo_step.record_grpo_step(rewards=rewards, loss_type=RLVRConfig.loss_type,
                                        scale_rewards=RLVRConfig.scale_rewards)
    advantages = grpo_step.advantages_by_hand(record["rewards"], record["scale_rewards"])
    assert np.allclose(advantages, record["advantages"], atol=1e-4)
    # the std of this group is set by the bad samples: right and repeated end up close together
    assert abs(advantages[0] - advantages[1]) < 0.2 < advantages[1]
    second = record["passes"][1]
    loss = grpo_step.clipped_loss_by_hand(second["old_logps"], second["new_logps"], second["mask"],
                                          grpo_step.advantages_by_hand(second["rewards"], record["scale_rewards"]),
                                          record["epsilon"], record["loss_type"], record["max_completion_length"])
    assert abs(loss - second["loss"]) < 1e-4
    assert exercises.check_grpo_advantages_by_hand(list(advantages), record) is True
    assert exercises.check_grpo_clipped_loss_by_hand(loss, record) is True
    assert exercises.check_grpo_advantages_by_hand(list(np.subtract(rewards, np.mean(rewards))), record) is False


def _selection_job(seed, mle_l1, settings):
    """A run_selection_job result with only the fields the selection reads (made up, hand-checkable)."""
    def measured(l1, missing):
        return {"rollout": {"mean": {"l1": l1}}, "one_step": {"agent_missing": missing}}

    return {"seed": seed, "reward": settings[0][0], "mle": measured(mle_l1, 0.0),
            "settings": [{"reward": r, "learning_rate": lr, "arm": arm, **measured(l1, missing)}
                         for r, lr, arm, l1, missing in settings]}


def test_selection_scores_by_hand_and_skips_settings_that_erase_the_agent():
    from wmkit.video.experiment import choose_setting, selection_table

    jobs = [_selection_job(0, 0.010, [("l1", 3e-4, "all", 0.009, 0.0), ("l1", 3e-4, "changed", 0.008, 0.0),
                                      ("l1_ssim", 3e-4, "all", 0.0095, 0.0), ("l1_ssim", 3e-4, "changed", 0.0095, 0.01)]),
            _selection_job(1, 0.020, [("l1", 3e-4, "all", 0.010, 0.30), ("l1", 3e-4, "changed", 0.018, 0.0),
                                      ("l1_ssim", 3e-4, "all", 0.019, 0.0), ("l1_ssim", 3e-4, "changed", 0.019, 0.0)])]
    table = {row["reward"]: row for row in selection_table(jobs)}
    # l1: gains 0.1, 0.2, 0.5, 0.1 -> mean 0.225, but seed 1's "all" arm lost the agent in 30% more frames
    assert abs(table["l1"]["mean_gain"] - 0.225) < 1e-12 and not table["l1"]["agent_kept"]
    # l1_ssim: gains 0.05, 0.05, 0.05, 0.05; an increase of 0.01 is within the tolerance
    assert abs(table["l1_ssim"]["mean_gain"] - 0.05) < 1e-12 and table["l1_ssim"]["agent_kept"]
    choice = choose_setting(list(table.values()))
    assert (choice["reward"], choice["learning_rate"]) == ("l1_ssim", 3e-4)
    from wmkit.video.experiment import selection_markdown

    markdown = selection_markdown(selection_table(jobs)).splitlines()
    assert markdown[2] == "| `l1`, 3e-4 | +22.5% | no | seed 0: +0.00 / +0.00, seed 1: +0.30 / +0.00 |"
    assert markdown[3] == "| `l1_ssim`, 3e-4 | +5.0% | yes | seed 0: +0.00 / +0.01, seed 1: +0.00 / +0.00 |"
    # when no setting keeps the agent the highest gain is chosen, flagged
    worst = choose_setting([{**table["l1_ssim"], "agent_kept": False}, table["l1"]])
    assert worst["reward"] == "l1" and worst["agent_kept"] is False
    with pytest.raises(ValueError, match="no selection rows"):
        choose_setting([])


def test_a_second_selection_round_joins_the_first_only_from_the_same_mle_models():
    from wmkit.video.experiment import merge_selection_jobs, selection_table

    first = [_selection_job(0, 0.010, [("l1", 3e-4, "all", 0.009, 0.30)]),
             _selection_job(0, 0.010, [("l1_agent", 3e-4, "all", 0.0099, 0.30)])]  # replaced by the rerun
    second = [_selection_job(0, 0.010, [("l1_agent", 3e-4, "all", 0.008, 0.0)])]
    merged = merge_selection_jobs(second, first)
    assert sorted(j["settings"][0]["reward"] for j in merged) == ["l1", "l1_agent"]
    table = {row["reward"]: row for row in selection_table(merged)}
    assert table["l1_agent"]["mean_gain"] == pytest.approx(0.2) and table["l1_agent"]["agent_kept"]
    assert not table["l1"]["agent_kept"]
    other_mle = [_selection_job(0, 0.011, [("l1_agent", 3e-4, "all", 0.008, 0.0)])]
    with pytest.raises(ValueError, match="seed 0"):
        merge_selection_jobs(other_mle, first)


def test_selection_job_rejects_bad_settings(tmp_path):
    from wmkit.profiles import get_profile
    from wmkit.video.experiment import run_selection_job

    with pytest.raises(ValueError, match="Unknown video reward"):
        run_selection_job(get_profile("smoke"), 0, "lpips_only", str(tmp_path))
    with pytest.raises(ValueError, match="learning_rates"):
        run_selection_job(get_profile("smoke"), 0, "l1", str(tmp_path), learning_rates=[0.0])


def test_mle_epochs_comparison_measures_on_validation(tmp_path):
    """research/compare_video_mle_epochs.py: one smoke seed's MLE model at a given epoch count, on validation."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "research" / "compare_video_mle_epochs.py"
    spec = importlib.util.spec_from_file_location("compare_video_mle_epochs", path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    from wmkit.profiles import get_profile

    with pytest.raises(ValueError, match="epochs must be positive"):
        tool.measure_epochs(get_profile("smoke"), 0, 0)
    row = tool.measure_epochs(get_profile("smoke"), 0, 1.0)
    assert row["split"] == "val" and row["epochs"] == 1.0
    assert 0 <= row["one_step"]["agent_missing"] <= 1 and row["rollout"]["mean"]["l1"] >= 0


def test_relative_l1_gain_by_hand_on_each_scope():
    from wmkit.video.experiment import L1_GAIN_SCOPES, relative_l1_gain

    def measured(l1, changed, unchanged, rollout):
        return {"one_step": {"greedy": {"l1": l1, "l1_changed": changed, "l1_unchanged": unchanged}},
                "rollout": {"mean": {"l1": rollout}}}

    run = {"mle": measured(0.002, 0.004, 0.001, 0.010),
           "arms": {"changed": measured(0.0025, 0.003, 0.002, 0.011)}}
    # (MLE - RLVR) / MLE: a quarter better on the changed steps, twice as bad on the others
    assert relative_l1_gain([run], "changed", "one_step_changed") == [pytest.approx(0.25)]
    assert relative_l1_gain([run], "changed", "one_step_unchanged") == [pytest.approx(-1.0)]
    assert relative_l1_gain([run], "changed", "one_step") == [pytest.approx(-0.25)]
    assert relative_l1_gain([run], "changed", "rollout") == [pytest.approx(-0.1)]
    # no changed step held out (the MLE L1 there is None) or an MLE model already exact: no number
    run["mle"]["one_step"]["greedy"]["l1_changed"] = None
    run["mle"]["one_step"]["greedy"]["l1_unchanged"] = 0.0
    assert relative_l1_gain([run], "changed", "one_step_changed") == [None]
    assert relative_l1_gain([run], "changed", "one_step_unchanged") == [None]
    assert set(L1_GAIN_SCOPES) == {"rollout", "one_step", "one_step_changed", "one_step_unchanged"}
    with pytest.raises(ValueError, match="Unknown scope"):
        relative_l1_gain([run], "changed", "two_step")


def test_start_regime_reads_the_mle_models_copy_rate():
    from wmkit.video.experiment import COPYING_THRESHOLD, start_regime

    def result(copy_rate):
        return {"mle": {"one_step": {"copy_rate_changed": copy_rate}}}

    assert COPYING_THRESHOLD == 0.5
    assert start_regime(result(0.88)) == "copying"
    assert start_regime(result(0.5)) == "copying"  # the threshold itself copies
    assert start_regime(result(0.46)) == "moving"
    assert start_regime(result(0.0)) == "moving"
    assert start_regime(result(None)) is None  # no changed held-out step: no regime


def test_ssim_is_scikit_images_7x7_uniform_window_not_wang_et_al_gaussian():
    """wmkit.video.model.ssim says it is scikit-image's default (7x7 uniform window); Wang et al.'s
    11x11 Gaussian gives a different number on the same frames."""
    import numpy as np
    from skimage.metrics import structural_similarity

    from wmkit.video.model import ssim

    a = np.zeros((32, 32, 3), np.uint8)
    a[8:24, 8:24] = 200  # a square; b puts a dark bar across it
    b = a.copy()
    b[10:14, 10:30] = 50
    uniform = structural_similarity(a, b, channel_axis=-1, data_range=255, win_size=7)
    gaussian = structural_similarity(a, b, channel_axis=-1, data_range=255, gaussian_weights=True, sigma=1.5,
                                     use_sample_covariance=False)
    assert ssim(a, b) == pytest.approx(uniform)
    assert abs(ssim(a, b) - gaussian) > 0.02  # 0.817 vs 0.767 here
