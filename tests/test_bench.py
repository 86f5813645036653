"""wmkit.bench: statistics on hand-computed cases, the registry, caching/resume, and that a report
row cannot outlive its run record. The experiments here are fakes (instant); the real ones run in
`python -m wmkit bench --profile smoke` and notebook 05."""
import json
import math
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from wmkit import runs, stats
from wmkit.bench import claims as bench_claims
from wmkit.bench import runner as bench
from wmkit.bench import source_key
from wmkit.bench.claims import CLAIMS, Claim, Experiment
from wmkit.bench.source_key import SourceKey
from wmkit.wmrl import experiment as wmrl_experiment

# ---------------------------------------------------------------------------- statistics

def test_t_interval_of_three_values_by_hand():
    # values 1, 2, 3: mean 2, sample std 1, SE 1/sqrt(3); t(0.975, 2 dof) = 4.302653
    s = stats.summarize([1.0, 2.0, 3.0])
    half = 4.302652729749464 / math.sqrt(3)  # 2.484138
    assert s["n"] == 3 and s["mean"] == pytest.approx(2.0) and s["std"] == pytest.approx(1.0)
    assert s["ci_low"] == pytest.approx(2.0 - half, abs=1e-6) and s["ci_low"] == pytest.approx(-0.484138, abs=1e-6)
    assert s["ci_high"] == pytest.approx(4.484138, abs=1e-6)


def test_summary_drops_missing_values_and_has_no_interval_for_one_seed():
    s = stats.summarize([0.5, None, float("nan")])
    assert (s["n"], s["of"], s["mean"], s["std"], s["ci_low"]) == (1, 3, 0.5, 0.0, None)
    assert stats.summarize([])["mean"] is None


@pytest.mark.parametrize("values, direction, threshold, expected", [
    ([1.0, 2.0, 3.0], "higher", 0.0, "inconclusive"),  # interval [-0.48, 4.48] covers 0
    ([1.0, 1.1, 0.9], "higher", 0.0, "reproduced"),  # interval [0.75, 1.25]
    ([-1.0, -2.0, -3.0], "higher", 0.0, "inconclusive"),  # [-4.48, 0.48] covers 0 (was "not reproduced")
    ([-1.0, -1.1, -0.9], "higher", 0.0, "contradicted"),  # [-1.25, -0.75]
    ([0.0, 0.0], "higher", 0.0, "not measured"),  # identical seeds: a zero-width interval
    ([-1.0, -1.1, -0.9], "lower", 0.0, "reproduced"),
    ([-1.0, -2.0, -3.0], "lower", 0.0, "inconclusive"),
    ([0.3], "higher", 0.0, "not measured"),  # one seed: no interval
    ([3.0, 3.2, 2.8], "higher", 1.0, "reproduced"),  # a ratio that must exceed 1
    ([0.9, 0.8, 0.7], "higher", 1.0, "inconclusive"),  # [0.55, 1.05] reaches 1
    ([0.5, 0.6, 0.7], "higher", 1.0, "contradicted"),  # [0.35, 0.85]
    ([], "higher", 0.0, "not measured"),
])
def test_verdict_logic(values, direction, threshold, expected):
    assert stats.verdict(stats.summarize(values), direction, threshold).verdict == expected


def test_verdict_rejects_unknown_direction():
    with pytest.raises(ValueError):
        stats.verdict(stats.summarize([1.0]), "up")


def test_claim_value_reads_fields_and_paired_differences():
    result = {"arms": {"a": {"s": [0.2, 0.6]}, "b": {"s": [0.1, 0.2]}}, "x": {"p": 1.0, "q": 3.0}, "nan": float("nan")}
    assert bench_claims.get_path(result, "arms/a/s/-1") == 0.6 and bench_claims.get_path(result, "arms/c/s") is None
    assert bench_claims.claim_value(Claim("c", "WMRL", "t", "f", "e", "arms/a/s/1", "arms/b/s/1"), result) == pytest.approx(0.4)
    assert bench_claims.claim_value(Claim("c", "WMRL", "t", "f", "e", ("x/p", "x/q")), result) == pytest.approx(2.0)
    assert bench_claims.claim_value(Claim("c", "WMRL", "t", "f", "e", "arms/a/s/1", "arms/zzz"), result) is None
    assert bench_claims.claim_value(Claim("c", "WMRL", "t", "f", "e", "nan"), result) is None


def test_censored_compute_ratio_never_favours_the_claim():
    def arms(real, wmrl, real_total=100.0, wmrl_total=50.0):
        return {"real": {"compute_to_target": [real], "total_cost": [real_total]},
                "WMRL": {"compute_to_target": [wmrl], "total_cost": [wmrl_total]}}
    assert wmrl_experiment.censored_ratio(arms(60.0, 20.0), "real", "WMRL")["ratio"] == pytest.approx(3.0)
    assert wmrl_experiment.censored_ratio(arms(60.0, None), "real", "WMRL")["ratio"] == 0.0  # WMRL never got there
    assert wmrl_experiment.censored_ratio(arms(None, 20.0), "real", "WMRL")["ratio"] == pytest.approx(5.0)  # lower bound
    assert wmrl_experiment.censored_ratio(arms(None, None), "real", "WMRL")["ratio"] is None


# ---------------------------------------------------------------------------- registry

def test_registry_covers_the_issue_and_unmeasured_claims_carry_no_fields():
    ids = {c.id for c in bench_claims.CLAIMS}
    for needed in ("rlvr.changed", "rlvr.unchanged", "rlvr.reward_type", "rlvr.group_size", "rlvr.best_of_k",
                   "rwml.vs_sft", "rwml.forgetting", "rwml.mid_training", "wm_r1.vs_zero_shot",
                   "wm_r1.vs_real_grpo", "wm_r1.vs_simulation", "wm_r1.imagined_calls", "wm_r1.length_reward",
                   "wm_r1.calls_fall", "wm_r1.positive_control", "wm_r1.fidelity", "wmrl.error_floor", "wmrl.compute_research", "wmrl.ablation_both",
                   "wmrl.ablation_debias", "wmrl.ablation_denoise"):
        assert needed in ids
    assert {c.paper for c in bench_claims.CLAIMS} == set(bench_claims.PAPERS)
    assert bench_claims.PAPERS == ("RLVR-World", "RWML", "WM-R1", "WMRL")  # from the packages' registries, in order
    for claim in bench_claims.CLAIMS:
        if claim.experiment is None:
            assert claim.not_measured and claim.value is None
        else:
            assert claim.value and claim.experiment in bench_claims.EXPERIMENTS


@pytest.mark.parametrize("profile", ["smoke", "cpu", "gpu"])
def test_every_experiment_resolves_with_sizes_per_profile(profile):
    for experiment in bench_claims.EXPERIMENTS.values():
        assert callable(bench_claims.resolve(experiment.run))
        config = bench.experiment_config(experiment, profile, 0)
        assert config["sizes"] and len(bench.config_hash(config)) == 64
    assert bench.experiment_config(bench_claims.EXPERIMENTS["wm_r1"], profile, 0)["sizes"]["baselines"] == list(
        __import__("wmkit.wm_r1.experiment", fromlist=["ARMS"]).ARMS)
    # the RWML record is keyed by the world-model sizes and the policy-RL sizes alike
    rwml_sizes = bench.experiment_config(bench_claims.EXPERIMENTS["rwml"], profile, 0)["sizes"]
    assert rwml_sizes["world_model"]["twx_steps"] >= 1 and rwml_sizes["policy"]["grpo"]["max_steps"] >= 1


def test_rwml_agent_claims_read_the_agent_experiment():
    claims = {c.id: c for c in bench_claims.CLAIMS}
    # mid-training: the one model that predicts and acts (rwml_agent), greedy success after policy RL from the
    # RWML model − after the same policy RL from its warm-up (not the models before policy RL)
    acting = {"warm": {"greedy": {"success": 0.5}}, "rwml": {"greedy": {"success": 0.4}},
              "warm_policy_rl": {"greedy": {"success": 0.6}}, "rwml_policy_rl": {"greedy": {"success": 0.7}}}
    assert bench_claims.claim_value(claims["rwml.mid_training"], {"acting": acting}) == pytest.approx(0.1)
    assert claims["rwml.mid_training"].experiment == "rwml_agent"
    # invalid actions: the one model that predicts and acts (rwml_agent), the RWML model − its warm-up, sampled
    agent = {"acting": {"warm": {"sampled": {"invalid_share": 0.25}}, "rwml": {"sampled": {"invalid_share": 0.15}}}}
    assert bench_claims.claim_value(claims["rwml.invalid_actions"], agent) == pytest.approx(-0.10)
    assert claims["rwml.invalid_actions"].direction == "lower" and claims["rwml.invalid_actions"].experiment == "rwml_agent"
    # every claim the kit can now measure: notebook 06 measures the video and repetition claims
    assert {c.id for c in bench_claims.CLAIMS if c.experiment is None} == set()


def test_video_claims_read_the_video_experiment():
    claims = {c.id: c for c in bench_claims.CLAIMS}
    result = {"relative_l1_gain": {"all": {"rollout": 0.08, "one_step": 0.02}, "changed": {"rollout": 0.1}},
              "mle": {"one_step": {"copy_rate_changed": 0.5, "agent_missing": 0.0, "exact_changed": 0.1}},
              "arms": {"all": {"one_step": {"copy_rate_changed": 0.2, "agent_missing": 0.01}, "moved": 0.05},
                       "changed": {"one_step": {"copy_rate_changed": 0.1, "agent_missing": 0.3,
                                                "exact_changed": 0.15}, "moved": 0.04}}}
    assert bench_claims.claim_value(claims["rlvr.video"], result) == pytest.approx(0.08)
    assert bench_claims.claim_value(claims["rlvr.video_changed"], result) == pytest.approx(0.1)
    assert bench_claims.claim_value(claims["rlvr.repetition"], result) == pytest.approx(-0.3)
    assert bench_claims.claim_value(claims["rlvr.video_exact_changed"], result) == pytest.approx(0.05)
    assert claims["rlvr.repetition"].direction == "lower"
    # a copy rate that fell by erasing the agent is not less repetition: the precondition says so
    assert bench_claims.precondition_failure(claims["rlvr.repetition"], {0: result, 1: result}) is None
    reason = bench_claims.precondition_failure(claims["rlvr.repetition_changed"], {0: result, 1: result})
    assert reason and "erased the agent" in reason and "seed 0: +0.30" in reason
    # and RL must have moved the model at all (a frozen model repeats what the MLE model repeated)
    frozen = {**result, "arms": {**result["arms"], "all": {**result["arms"]["all"], "moved": 0.0}}}
    assert bench_claims.precondition_failure(claims["rlvr.repetition"], {0: frozen}).startswith(
        "the method did not act")
    # the agent-term and contrast rows: the changed arm kept the agent? the -L1 copy erased it?
    from wmkit.video.experiment import AGENT_TOLERANCE

    result["arms"]["changed_l1"] = {"one_step": {"agent_missing": 0.4}}
    assert bench_claims.claim_value(claims["rlvr.video_agent_kept"], result) == pytest.approx(0.3)
    assert bench_claims.claim_value(claims["rlvr.video_pixel_hacking"], result) == pytest.approx(0.4)
    assert claims["rlvr.video_agent_kept"].threshold == claims["rlvr.video_pixel_hacking"].threshold == AGENT_TOLERANCE
    assert (claims["rlvr.video_agent_kept"].direction, claims["rlvr.video_pixel_hacking"].direction) == ("lower",
                                                                                                         "higher")
    # the changed arm's split: sharper where the picture changes, blurrier where it does not
    result["relative_l1_gain"]["changed"].update({"one_step_changed": 0.12, "one_step_unchanged": -0.5})
    result["mle"]["one_step"]["exact_unchanged"] = 0.97
    result["arms"]["changed"]["one_step"]["exact_unchanged"] = 0.31
    assert bench_claims.claim_value(claims["rlvr.video_changed_steps"], result) == pytest.approx(0.12)
    assert bench_claims.claim_value(claims["rlvr.video_unchanged_cost"], result) == pytest.approx(-0.66)
    assert (claims["rlvr.video_changed_steps"].direction, claims["rlvr.video_unchanged_cost"].direction) == (
        "higher", "lower")


def test_small_world_claims_read_the_small_world_ladder():
    claims = {c.id: c for c in bench_claims.CLAIMS}
    result = {"start": {"greedy": {"success": 0.33}, "sampled": {"success": 0.14}},
              "rungs": {"0": {"greedy": {"success": 0.48}, "sampled": {"success": 0.25}},
                        "0.3": {"greedy": {"success": 0.30}, "sampled": {"success": 0.12}},
                        "0.6": {"greedy": {"success": 0.10}, "sampled": {"success": 0.05}}}}
    assert bench_claims.claim_value(claims["wm_r1.small_world_control"], result) == pytest.approx(0.15)
    assert bench_claims.claim_value(claims["wm_r1.small_world_control_sampled"], result) == pytest.approx(0.11)
    # the fidelity limitation at p = 0.3: below 0.5, where a flipped success would invert the reward
    assert bench_claims.claim_value(claims["wm_r1.small_world_fidelity"], result) == pytest.approx(0.18)
    assert {claims[c].experiment for c in ("wm_r1.small_world_control", "wm_r1.small_world_fidelity")} == {
        "wm_r1_small_world"}


def test_learned_world_model_claims_read_the_learned_rung_against_start_and_simulator():
    claims = {c.id: c for c in bench_claims.CLAIMS}
    result = {"start": {"greedy": {"success": 0.24}},
              "rungs": {"0": {"greedy": {"success": 0.53}}, "learned": {"greedy": {"success": 0.34}}}}
    assert bench_claims.claim_value(claims["wm_r1.learned_world_model"], result) == pytest.approx(0.10)
    assert bench_claims.claim_value(claims["wm_r1.learned_vs_simulator"], result) == pytest.approx(-0.19)
    assert {claims[c].experiment for c in ("wm_r1.learned_world_model", "wm_r1.learned_vs_simulator")} == {
        "wm_r1_learned"}


def test_instruction_blind_claims_subtract_the_blind_baseline_of_the_same_record():
    claims = {c.id: c for c in bench_claims.CLAIMS}
    result = {"instruction_blind": {"switch": 2, "success": 0.2575},
              "rungs": {"0": {"greedy": {"success": 0.53}}, "learned": {"greedy": {"success": 0.2075}}}}
    assert bench_claims.claim_value(claims["wm_r1.learned_reads_instruction"], result) == pytest.approx(-0.05)
    assert bench_claims.claim_value(claims["wm_r1.small_world_reads_instruction"], result) == pytest.approx(0.2725)
    assert claims["wm_r1.learned_reads_instruction"].experiment == "wm_r1_learned"
    assert claims["wm_r1.small_world_reads_instruction"].experiment == "wm_r1_small_world"


def test_select_experiments_by_paper_or_name():
    assert bench.select_experiments(["wm-r1"]) == ["wm_r1", "wm_r1_ladder", "wm_r1_small_world", "wm_r1_learned",
                                                   "wm_r1_learned_ablations", "wm_r1_calls"]
    assert bench.select_experiments(["wm_r1_ladder"]) == ["wm_r1_ladder"]
    assert set(bench.select_experiments(["WMRL", "rwml"])) == {"wmrl_controlled", "wmrl_research", "rwml",
                                                               "rwml_textgame", "rwml_agent"}
    with pytest.raises(ValueError, match="names no paper"):
        bench.select_experiments(["nope"])


# ---------------------------------------------------------------------------- runner: cache, resume, records

@dataclass(frozen=True)
class FakeSizes:
    steps: int = 3


CALLS: list[tuple[str, int]] = []
FAIL_AT: dict[str, int] = {}


def fake_run(profile, seed, runs_root, sizes):
    CALLS.append(("fake", seed))
    if FAIL_AT.get("fake") == seed:
        raise KeyboardInterrupt("simulated interruption")
    return {"after": 0.5 + 0.1 * seed, "before": 0.2, "steps": sizes.steps}


def fake_sizes(profile):
    return FakeSizes(steps=1 if profile.name == "smoke" else 3)


FAKE = {"fake": Experiment("fake", "WMRL", fake_run, fake_sizes, "a fake experiment")}
FAKE_CLAIMS = (Claim("fake.gain", "WMRL", "after beats before", "+1", "fake", "after", "before"),
               Claim("fake.unmeasured", "WMRL", "needs what the kit lacks", "+2", not_measured="no such loop"))


@pytest.fixture
def fresh():
    CALLS.clear()
    FAIL_AT.clear()
    yield
    CALLS.clear()
    FAIL_AT.clear()


def run(tmp_path, seeds, **kw):
    return bench.run_bench("smoke", seeds, runs_root=tmp_path, experiments=FAKE, claims=FAKE_CLAIMS,
                           log=lambda line: None, **kw)


def test_records_are_cached_and_an_interrupted_run_resumes(tmp_path, fresh):
    FAIL_AT["fake"] = 2
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, 3)
    records = sorted((tmp_path / "bench" / "fake").glob("*.json"))
    assert [r.name.split("_")[0] for r in records] == ["seed0", "seed1"]  # no partial record of seed 2
    assert not list((tmp_path / "bench" / "fake").glob("*.tmp*"))
    FAIL_AT.clear()
    CALLS.clear()
    result = run(tmp_path, 3)
    assert CALLS == [("fake", 2)]  # finished seeds are not redone
    assert result.ran == ["fake/seed2"] and result.cached == ["fake/seed0", "fake/seed1"]
    row = result.report["rows"][0]
    assert row["verdict"] == "reproduced" and row["kit"]["values"] == pytest.approx([0.3, 0.4, 0.5])
    assert row["command"] == "python -m wmkit bench --profile smoke --seeds 3 --only fake"
    CALLS.clear()
    run(tmp_path, 3)
    assert CALLS == []
    record = json.loads(records[0].read_text())
    assert record["config"]["sizes"] == {"steps": 1} and record["seed"] == 0 and record["commit"]


def test_a_notebook_takes_two_or_more_records_else_its_own_seed(tmp_path, fresh, monkeypatch):
    monkeypatch.delenv(bench.RECORDS_ENV, raising=False)
    mine = {"seed": 7, "after": 0.9}
    nowhere = tmp_path / "no_shipped_records"
    per_seed, source = bench.seeds_or_this_run(tmp_path, "smoke", "fake", mine, experiments=FAKE, shipped_dir=nowhere)
    assert per_seed == [mine] and source.startswith("this notebook, seed 7 (0 record(s) of this library version")
    run(tmp_path, 1)
    per_seed, source = bench.seeds_or_this_run(tmp_path, "smoke", "fake", mine, experiments=FAKE, shipped_dir=nowhere)
    assert per_seed == [mine] and "1 record(s) of this library version" in source  # one: no interval, and it says so
    run(tmp_path, 3)
    per_seed, source = bench.seeds_or_this_run(tmp_path, "smoke", "fake", mine, experiments=FAKE, shipped_dir=nowhere)
    assert [r["after"] for r in per_seed] == pytest.approx([0.5, 0.6, 0.7])
    assert source.startswith("benchmark records of this library version") and source.endswith("seeds 0-2")
    assert bench.seeds_or_this_run(tmp_path, "smoke", "fake", mine, seeds=[1, 2], experiments=FAKE,
                                   shipped_dir=nowhere)[1].endswith("seeds 1, 2")


def test_without_a_run_or_records_a_notebook_section_is_not_measured_and_never_raises(tmp_path, fresh, monkeypatch):
    """Notebook 03 at cpu in a fresh clone: the learned world model is not trained there (this_run is
    None) and runs/ holds no records; the old code raised AttributeError on None.get."""
    monkeypatch.delenv(bench.RECORDS_ENV, raising=False)
    per_seed, source = bench.seeds_or_this_run(tmp_path, "smoke", "fake", None, experiments=FAKE,
                                               shipped_dir=tmp_path / "none")
    assert per_seed == [] and source.startswith("not measured (") and "not run here" in source


def test_shipped_records_stand_in_for_missing_local_ones_and_name_their_version(tmp_path, fresh, monkeypatch):
    """A fresh clone has no runs/: the records shipped under executed/<profile>/bench/records are read
    (newest per seed, today's configuration), labelled with the library version that made them.
    WMKIT_RECORDS=none ignores them (the tests' no-records branch)."""
    monkeypatch.delenv(bench.RECORDS_ENV, raising=False)
    run(tmp_path / "made", 2)
    shipped = tmp_path / "shipped"
    for path in (tmp_path / "made" / "bench" / "fake").glob("seed*.json"):
        record = json.loads(path.read_text())
        record["code"] = "0123456789abcdef"  # made by another library version, keyed by the git tree (old rule)
        del record["modules"]
        key = bench.short_version(bench.experiment_key(FAKE["fake"]).key)
        assert key in path.name
        target = shipped / "fake" / path.name.replace(key, "0123456789ab")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(record))
    per_seed, source = bench.seeds_or_this_run(tmp_path / "empty", "smoke", "fake", None, experiments=FAKE,
                                               shipped_dir=shipped)
    assert [r["after"] for r in per_seed] == pytest.approx([0.5, 0.6])
    assert source.startswith("records shipped with the kit, seeds 0, 1, library version(s) 0123456789ab")
    assert "the records, keyed by the git tree of wmkit/, do not say which modules" in source
    monkeypatch.setenv(bench.RECORDS_ENV, "none")
    per_seed, source = bench.seeds_or_this_run(tmp_path / "made", "smoke", "fake", {"seed": 0}, experiments=FAKE,
                                               shipped_dir=shipped)
    assert per_seed == [{"seed": 0}] and "records ignored" in source


def test_a_smoke_pass_shows_the_published_profiles_seeds_labelled_as_theirs(tmp_path, fresh, monkeypatch):
    """Notebook 03 on a smoke pass: below two smoke records, the cpu profile's records (here made on
    this machine under runs/cpu) are shown, labelled as the cpu profile's, and the third value says
    so; two smoke records win; with none of either, or with WMKIT_RECORDS=none, the run's own seed."""
    monkeypatch.delenv(bench.RECORDS_ENV, raising=False)
    smoke_dir, mine, nowhere = tmp_path / "smoke", {"seed": 7, "after": 0.9}, tmp_path / "none"
    per_seed, source, shown = bench.seeds_here_or_published(smoke_dir, "smoke", "fake", mine, experiments=FAKE,
                                                            shipped_dir=nowhere, published_shipped_dir=nowhere)
    assert (per_seed, shown) == ([mine], "smoke") and source.startswith("this notebook, seed 7")
    bench.run_bench("cpu", 3, runs_root=tmp_path / "cpu", experiments=FAKE, claims=FAKE_CLAIMS, log=lambda line: None)
    per_seed, source, shown = bench.seeds_here_or_published(smoke_dir, "smoke", "fake", mine, experiments=FAKE,
                                                            shipped_dir=nowhere, published_shipped_dir=nowhere)
    assert shown == "cpu" and len(per_seed) == 3
    assert source.endswith("seeds 0-2; this smoke run's own seed is in the sections above")
    assert source.startswith("the cpu profile's benchmark records of this library version") and "own seed" in source
    run(smoke_dir, 2)
    per_seed, source, shown = bench.seeds_here_or_published(smoke_dir, "smoke", "fake", mine, experiments=FAKE,
                                                            shipped_dir=nowhere, published_shipped_dir=nowhere)
    assert shown == "smoke" and len(per_seed) == 2 and source.startswith("benchmark records of this library version")
    monkeypatch.setenv(bench.RECORDS_ENV, "none")
    per_seed, source, shown = bench.seeds_here_or_published(smoke_dir, "smoke", "fake", mine, experiments=FAKE,
                                                            shipped_dir=nowhere, published_shipped_dir=nowhere)
    assert (per_seed, shown) == ([mine], "smoke") and "records ignored" in source


def test_a_notebook_shows_the_confirmatory_block_by_default_else_labelled_exploration_records(
        tmp_path, fresh, monkeypatch):
    """With no `seeds`, a notebook section asks for the experiment's declared seeds (at cpu, its
    confirmatory block) and, while that block has fewer than two records, shows the other recorded
    seeds labelled as exploration records; a caller that names seeds gets exactly those. (Notebook
    02 once asked for seeds 0-9 by default and missed rwml_agent's confirmatory records.)"""
    monkeypatch.delenv(bench.RECORDS_ENV, raising=False)
    monkeypatch.setattr(bench, "declared_seeds", lambda profile, name: [5, 6] if profile == "cpu" else [0, 1, 2])
    cpu, nowhere = tmp_path / "cpu", tmp_path / "none"
    bench.run_bench("cpu", 3, runs_root=cpu, experiments=FAKE, claims=FAKE_CLAIMS, log=lambda line: None)
    per_seed, source = bench.seeds_or_this_run(cpu, "cpu", "fake", None, experiments=FAKE, shipped_dir=nowhere)
    assert [r["after"] for r in per_seed] == pytest.approx([0.5, 0.6, 0.7])  # fake_run: 0.5 + 0.1 * seed
    assert source.endswith("seeds 0-2 (exploration records: its confirmatory seeds, 5, 6, have fewer than 2 record(s))")
    bench.run_bench("cpu", None, runs_root=cpu, experiments=FAKE, claims=FAKE_CLAIMS, log=lambda line: None)
    per_seed, source = bench.seeds_or_this_run(cpu, "cpu", "fake", None, experiments=FAKE, shipped_dir=nowhere)
    assert [r["after"] for r in per_seed] == pytest.approx([1.0, 1.1]) and source.endswith("seeds 5, 6 (its confirmatory seeds)")
    per_seed, source = bench.seeds_or_this_run(cpu, "cpu", "fake", None, seeds=range(3), experiments=FAKE,
                                               shipped_dir=nowhere)
    assert len(per_seed) == 3 and source.endswith("seeds 0-2")


@dataclass(frozen=True)
class SizesWithAddedField:
    steps: int = 3
    lora_r: int = 8


def test_a_size_field_added_at_its_old_literal_keeps_the_older_records(tmp_path, fresh, monkeypatch):
    """A record made before a size field existed (its config lacks the field) still counts where today's
    value equals the literal the code held (bench.ADDED_SIZE_FIELDS: lora_r was 8); with another value
    it is another configuration and does not."""
    monkeypatch.delenv(bench.RECORDS_ENV, raising=False)
    run(tmp_path / "made", 2)  # FakeSizes: no lora_r field
    shipped = tmp_path / "made" / "bench"
    assert bench.ADDED_SIZE_FIELDS["lora_r"] == 8
    same = {"fake": Experiment("fake", "WMRL", fake_run, lambda profile: SizesWithAddedField(steps=1), "added field")}
    per_seed, source = bench.seeds_or_this_run(tmp_path / "empty", "smoke", "fake", None, experiments=same,
                                               shipped_dir=shipped)
    assert [r["after"] for r in per_seed] == pytest.approx([0.5, 0.6]) and source.startswith("records shipped")
    assert sorted(bench.load_records(tmp_path, "smoke", [0, 1], bench.ANY_VERSION, same, records_dir=shipped)["fake"]) == [0, 1]
    changed = {"fake": Experiment("fake", "WMRL", fake_run,
                                  lambda profile: SizesWithAddedField(steps=1, lora_r=16), "added field, new value")}
    per_seed, source = bench.seeds_or_this_run(tmp_path / "empty", "smoke", "fake", None, experiments=changed,
                                               shipped_dir=shipped)
    assert per_seed == [] and source.startswith("not measured")
    config = bench.experiment_config(same["fake"], "smoke", 0)
    assert bench.config_hashes(config)[0] == bench.config_hash(config) and len(bench.config_hashes(config)) == 2


def test_one_seeds_record_stands_in_for_a_run_when_one_is_asked_for(tmp_path, fresh, monkeypatch):
    """A notebook that reads one seed's record in place of training it asks for minimum=1; the
    default still needs two (an interval); a minimum below 1 is refused."""
    monkeypatch.delenv(bench.RECORDS_ENV, raising=False)
    run(tmp_path, 2)
    per_seed, source = bench.seeds_or_this_run(tmp_path, "smoke", "fake", None, seeds=[1], experiments=FAKE,
                                               minimum=1)
    assert [r["after"] for r in per_seed] == pytest.approx([0.6]) and source.startswith("benchmark records")
    per_seed, source = bench.seeds_or_this_run(tmp_path, "smoke", "fake", None, seeds=[1], experiments=FAKE,
                                               shipped_dir=tmp_path / "none")
    assert per_seed == [] and source.startswith("not measured (1 record(s)")
    with pytest.raises(ValueError, match="minimum must be at least 1"):
        bench.seeds_or_this_run(tmp_path, "smoke", "fake", None, seeds=[0, 1], experiments=FAKE, minimum=0)


def test_seeds_side_by_side_give_the_same_records_and_the_command_says_so(tmp_path, fresh):
    parallel = run(tmp_path / "two", 3, workers=2)
    serial = run(tmp_path / "one", 3)
    assert parallel.ran == serial.ran == ["fake/seed0", "fake/seed1", "fake/seed2"]
    assert parallel.report["rows"][0]["kit"]["values"] == serial.report["rows"][0]["kit"]["values"]
    record = json.loads(next((tmp_path / "two" / "bench" / "fake").glob("seed1_*.json")).read_text())
    assert record["result"]["after"] == pytest.approx(0.6) and record["command"].endswith("--workers 2")
    assert run(tmp_path / "two", 3, workers=2).cached == parallel.ran  # cached, not redone
    with pytest.raises(ValueError, match="--workers"):
        run(tmp_path, 1, workers=0)


def test_unmeasurable_claim_row_has_a_reason_and_no_number(tmp_path, fresh):
    row = run(tmp_path, 1).report["rows"][1]
    assert row["verdict"] == "not measured" and row["reason"] == "no such loop" and row["kit"]["n"] == 0


def test_an_experiment_that_cannot_run_here_is_skipped_and_its_rows_say_why(tmp_path, fresh):
    """An experiment whose `requires` check gives a reason (no Java 17, say) is not run: no record,
    no exception, and its rows are "not measured" with that reason; the others run as usual."""
    def needs_java():
        return "TextWorldExpress needs Java 17; none found"

    def broken_check():
        raise OSError("no such file")

    experiments = {**FAKE, "java_only": Experiment("java_only", "RWML", fake_run, fake_sizes, "needs Java",
                                                   requires=needs_java),
                   "broken": Experiment("broken", "RWML", fake_run, fake_sizes, "check raises", requires=broken_check)}
    claims = (*FAKE_CLAIMS, Claim("java.gain", "RWML", "needs Java", "+1", "java_only", "after", "before"),
              Claim("broken.gain", "RWML", "check raises", "+1", "broken", "after", "before"))
    result = bench.run_bench("smoke", 2, runs_root=tmp_path, experiments=experiments, claims=claims,
                             log=lambda line: None)
    assert CALLS == [("fake", 0), ("fake", 1)]  # only the experiment that can run here ran
    assert set(result.skipped) == {"java_only", "broken"} and "Java 17" in result.skipped["java_only"]
    rows = {r["id"]: r for r in result.report["rows"]}
    assert rows["java.gain"]["verdict"] == "not measured" and rows["java.gain"]["kit"]["n"] == 0
    assert rows["java.gain"]["reason"] == "not run on this machine: TextWorldExpress needs Java 17; none found"
    assert "OSError" in rows["broken.gain"]["reason"]
    assert rows["fake.gain"]["kit"]["n"] == 2
    assert result.report["unavailable"]["java_only"].startswith("TextWorldExpress")
    assert not (tmp_path / "bench" / "java_only").exists()


def test_the_rwml_experiment_declares_its_java_requirement():
    assert bench_claims.EXPERIMENTS["rwml"].requires == "wmkit.envs.twx:unavailable_reason"
    assert bench.unavailable_reason(bench_claims.EXPERIMENTS["rwml_textgame"]) is None  # the kit's own game


def test_a_row_cannot_exist_without_its_run_record(tmp_path, fresh):
    result = run(tmp_path, 2)
    assert result.report["rows"][0]["kit"]["n"] == 2
    bench_json = tmp_path / "bench.json"
    records = sorted((tmp_path / "bench" / "fake").glob("*.json"))
    records[1].unlink()
    # the saved report, loaded again, refuses the number whose record is gone
    loaded = bench.load_report(bench_json)
    assert loaded["rows"][0]["verdict"] == "not measured" and loaded["rows"][0]["kit"]["n"] == 0
    assert "record missing" in loaded["rows"][0]["reason"]
    # a rebuilt report counts only the records on disk
    report = bench.build_report(tmp_path, "smoke", [0, 1], experiments=FAKE, claims=FAKE_CLAIMS, plots=False)
    assert report["rows"][0]["seeds"] == [0] and report["rows"][0]["kit"]["n"] == 1
    assert report["rows"][0]["verdict"] == "not measured" and "one seed" in report["rows"][0]["reason"]
    records[0].unlink()
    report = bench.build_report(tmp_path, "smoke", [0, 1], experiments=FAKE, claims=FAKE_CLAIMS, plots=False)
    row = report["rows"][0]
    assert row["verdict"] == "not measured" and row["kit"]["mean"] is None and row["records"] == []
    assert "not measured" in (tmp_path / "report.md").read_text()


def test_a_report_written_under_the_old_rule_is_judged_again_on_load(tmp_path, fresh):
    run(tmp_path, 3)
    bench_json = tmp_path / "bench.json"
    saved = json.loads(bench_json.read_text())
    saved["rows"][0]["verdict"] = "same direction, not significant"  # an older rule's label
    bench_json.write_text(json.dumps(saved))
    loaded = bench.load_report(bench_json)
    assert loaded["rows"][0]["verdict"] == "reproduced" and loaded["counts"]["reproduced"] == 1
    assert loaded["rows"][1]["verdict"] == "not measured"  # the unmeasurable claim stays so


def test_without_seeds_each_experiment_runs_its_declared_seeds(tmp_path, fresh, monkeypatch):
    monkeypatch.setitem(bench_claims.DEFAULT_BENCH_SEEDS, "smoke", 3)
    lines: list[str] = []
    result = bench.run_bench("smoke", None, runs_root=tmp_path, experiments=FAKE, claims=FAKE_CLAIMS,
                             log=lines.append)
    assert sorted(CALLS) == [("fake", 0), ("fake", 1), ("fake", 2)]
    row = result.report["rows"][0]
    assert row["seeds"] == [0, 1, 2] and row["command"] == "python -m wmkit bench --profile smoke --only fake"
    # one progress line per finished run, with the time left
    done = [line for line in lines if line.startswith("bench: ") and "runs done" in line]
    assert [line.split()[1] for line in done] == ["1/3", "2/3", "3/3"] and done[-1].endswith("about 0 s left")
    with pytest.raises(AssertionError, match="overlaps"):  # confirmatory blocks never overlap
        from wmkit import design

        design.check_blocks({**design.CONFIRMATORY_BLOCKS, "another": design.CONFIRMATORY_BLOCKS["wmrl_research"] + 50})
    with pytest.raises(AssertionError, match="below 1000"):  # and start at the reserved seeds
        design.check_blocks({"early": 999})


def fake_prepare(profile, runs_root, sizes):
    CALLS.append(("prepare", sizes.steps))


def test_what_seeds_share_is_prepared_once_before_they_run(tmp_path, fresh):
    both = {name: Experiment(name, "WMRL", fake_run, fake_sizes, "shares a world model", prepare=fake_prepare)
            for name in ("fake", "fake_too")}
    bench.run_bench("smoke", 2, runs_root=tmp_path, experiments=both, claims=FAKE_CLAIMS, log=lambda line: None)
    assert CALLS[0] == ("prepare", 1) and CALLS.count(("prepare", 1)) == 1 and len(CALLS) == 5
    CALLS.clear()
    bench.run_bench("smoke", 2, runs_root=tmp_path, experiments=both, claims=FAKE_CLAIMS, log=lambda line: None)
    assert CALLS == []  # nothing to run: nothing to prepare


def test_the_plan_runs_nothing_and_estimates_from_the_records_timings(tmp_path, fresh, monkeypatch):
    run(tmp_path, 2)
    for path in (tmp_path / "bench" / "fake").glob("*.json"):  # each seed took 100 s
        record = json.loads(path.read_text())
        path.write_text(json.dumps({**record, "wall_seconds": 100.0}))
    monkeypatch.setitem(bench_claims.DEFAULT_BENCH_SEEDS, "smoke", 5)
    CALLS.clear()
    lines: list[str] = []
    out = bench.run_bench("smoke", None, runs_root=tmp_path, experiments=FAKE, claims=FAKE_CLAIMS,
                          log=lines.append, workers=2, plan_only=True)
    assert CALLS == [] and out.ran == [] and out.report == {}
    assert lines[0] == "bench plan, profile smoke: 3 of 5 (experiment, seed) runs to do, 2 recorded at this library version"
    assert "seeds 0-4" in lines[1] and "to run  3" in lines[1] and "~2 min per seed" in lines[1]
    assert lines[-1].startswith("about 5 min of work: about 2 min with 2 worker(s)")  # 300 s, 150 s


def test_the_estimate_prefers_records_made_on_this_cpu_kind(tmp_path):
    folder = tmp_path / "fake"
    folder.mkdir()
    cpus = [(100, "AMD EPYC", "AVX2"), (300, "AMD EPYC", "AVX2"), (40, "AMD EPYC", "AVX512"),
            (50, "Intel Xeon", None), (10, None, None)]
    for i, (seconds, model, kernels) in enumerate(cpus):
        cpu = {"cpu_model": model, **({"torch_cpu_capability": kernels} if kernels else {})}
        (folder / f"seed{i}_v_c.json").write_text(json.dumps({"wall_seconds": seconds,
                                                              **({"cpu": cpu} if model else {})}))
    assert bench.cpu_kind({"cpu_model": "AMD EPYC", "torch_cpu_capability": "AVX2"}) == "AMD EPYC (AVX2)"
    assert bench.cpu_kind({"cpu_model": "Intel Xeon"}) == "Intel Xeon" and bench.cpu_kind(None) == "not recorded"
    def estimate(names, model, kernels=None):
        return bench.seconds_per_seed(names, [tmp_path], {"cpu_model": model, "torch_cpu_capability": kernels})

    assert estimate(["fake", "none"], "AMD EPYC", "AVX2") == {"fake": 200, "none": None}
    assert estimate(["fake"], "AMD EPYC", "AVX512") == {"fake": 40}
    assert estimate(["fake"], "AMD EPYC", "AVX10") == {"fake": 100}  # same model: 100, 300, 40
    assert estimate(["fake"], "Intel Xeon", "AVX512") == {"fake": 50}
    assert estimate(["fake"], "another CPU") == {"fake": 50}  # no such record: all


def test_ship_replaces_the_published_records_of_the_seeds_it_ran_and_keeps_the_others(tmp_path, fresh):
    repo = published_fake(tmp_path, seeds=(0, 1, 2))
    published = repo / "executed" / "smoke" / "bench" / "records" / "fake"
    stale = published / "seed0_0123456789ab_000000000000.json"  # another version, another config
    stale.write_text("{}")
    before = {p.name for p in published.iterdir()}
    runs_root = tmp_path / "now"
    run(runs_root, 2)
    mine = {p.name for p in (runs_root / "bench" / "fake").glob("*.json")}
    copied = bench.ship_records("smoke", runs_root, {"fake": [0, 1, 5]}, repo=repo, experiments=FAKE,
                                log=lambda line: None)
    assert {p.name for p in copied} == mine  # seed 5 has no record here: nothing to copy
    after = {p.name for p in published.iterdir()}
    assert mine <= after and not stale.exists()
    assert after - mine == {n for n in before if n.startswith("seed2_")}  # seed 2 not asked for: kept


def test_a_changed_config_is_a_new_record(tmp_path, fresh):
    run(tmp_path, 1)
    other = {"fake": Experiment("fake", "WMRL", fake_run, lambda profile: FakeSizes(steps=7), "changed sizes")}
    CALLS.clear()
    bench.run_bench("smoke", 1, runs_root=tmp_path, experiments=other, claims=FAKE_CLAIMS, log=lambda line: None)
    assert CALLS == [("fake", 0)] and len(list((tmp_path / "bench" / "fake").glob("*.json"))) == 2


def test_report_files_and_figures(tmp_path, fresh):
    report = run(tmp_path, 2).report
    text = (tmp_path / "report.md").read_text()
    # smoke declares 2 seeds per experiment: the row's command needs no --seeds
    assert "after beats before" in text and "python -m wmkit bench --profile smoke --only fake" in text
    assert report["machine"]["versions"]["torch"] and report["counts"]["inconclusive"] == 1  # t(1 dof) = 12.7
    assert all(Path(f).exists() for f in report["figures"])


def test_records_and_reports_name_the_cpu(tmp_path, fresh):
    """A seed's floats depend on the CPU kind, so each record keeps the CPU model and torch's kernel set."""
    report = run(tmp_path, 2).report
    records = [json.loads(p.read_text()) for p in (tmp_path / "bench" / "fake").glob("*.json")]
    assert len(records) == 2 and all(r["cpu"]["cpu_model"] for r in records)
    assert all(r["cpu"] == bench.cpu_model() for r in records)
    import torch
    import transformers

    # and the versions of the packages whose code made the numbers (provenance, not part of the key)
    for record in records:
        assert record["versions"]["torch"] == torch.__version__
        assert record["versions"]["transformers"] == transformers.__version__
        assert record["versions"]["trl"] and record["versions"]["peft"]
    cpu = bench.cpu_model()["cpu_model"]
    kind = bench.cpu_kind(bench.cpu_model())  # the model and torch's kernel set
    assert report["experiments"]["fake"]["cpus"] == [kind] and report["machine"]["cpu_model"] == cpu
    text = (tmp_path / "report.md").read_text()
    assert "| CPU |" in text and f"| {kind} |" in text and f"machine: {report['machine']['platform']}, {cpu}" in text
    assert runs.machine_and_load()["cpu_model"] == cpu  # probes' results files name it the same way


def test_a_failed_precondition_makes_the_row_not_measured_and_keeps_the_number(tmp_path, fresh):
    def moved(results):
        frozen = [s for s, r in results.items() if r["steps"] < 2]
        return f"nothing moved in seeds {frozen}" if frozen else None

    claims = (Claim("fake.gain", "WMRL", "after beats before", "+1", "fake", "after", "before", precondition=moved),)
    report = bench.run_bench("smoke", 3, runs_root=tmp_path, experiments=FAKE, claims=claims, log=lambda line: None).report
    row = report["rows"][0]
    assert row["verdict"] == "not measured" and row["reason"] == "nothing moved in seeds [0, 1, 2]"
    assert row["kit"]["values"] == pytest.approx([0.3, 0.4, 0.5])  # the number stays, the verdict is withheld
    assert "not measured — nothing moved" in (tmp_path / "report.md").read_text()


def test_forgetting_claim_needs_rl_to_have_moved_the_model():
    claim = next(c for c in CLAIMS if c.id == "rwml.forgetting")
    assert bench_claims.precondition_failure(claim, {0: {"rwml_param_change": 0.01}, 1: {"rwml_param_change": 0.02}}) is None
    reason = bench_claims.precondition_failure(claim, {0: {"rwml_param_change": 0.01}, 1: {"rwml_param_change": 0.0}})
    assert "did not move the model in seed(s) [1]" in reason
    assert "does not say" in bench_claims.precondition_failure(claim, {0: {}})
    # the text-game records say "moved" (parameters and held-out predictions changed)
    assert bench_claims.precondition_failure(claim, {0: {"moved": True}, 1: {"moved": True}}) is None
    assert "seed(s) [0]" in bench_claims.precondition_failure(claim, {0: {"moved": False, "param_change": 0.1}})
    assert claim.experiment == "rwml_textgame"
    # every claim that votes has a precondition that the method acted, and these sub-rows keep theirs
    assert {"rwml.twx_vs_base", "rwml.twx_vs_sft", "rlvr.repetition_changed"} <= {c.id for c in CLAIMS if c.precondition}
    assert all(c.precondition for c in CLAIMS if c.measures is None and c.experiment)


def test_the_textworldexpress_rows_say_rl_did_not_move_the_model_not_that_it_forgot():
    """rwml.twx_vs_base and rwml.twx_vs_sft compare predictions, not forgetting: their reason, on
    records whose RWML arm never moved, says the method did not act and names the parameter change."""
    for claim_id in ("rwml.twx_vs_base", "rwml.twx_vs_sft"):
        claim = next(c for c in CLAIMS if c.id == claim_id)
        reason = bench_claims.precondition_failure(claim, {0: {"rwml_param_change": 0.0}, 1: {"rwml_param_change": 0.0}})
        assert reason.startswith("the method did not act") and "rwml_param_change = 0 in each" in reason, reason
        assert "forg" not in reason
        assert bench_claims.precondition_failure(claim, {0: {"rwml_param_change": 0.01}}) is None


def test_parameter_change_of_a_model():
    import torch

    from wmkit.rwml.experiment import parameter_change

    a = torch.nn.Linear(2, 2)
    b = torch.nn.Linear(2, 2)
    b.load_state_dict(a.state_dict())
    assert parameter_change(a, b) == 0.0
    with torch.no_grad():
        b.weight.add_(1.0)
    assert parameter_change(a, b) > 0
    assert parameter_change(a, torch.nn.Linear(3, 3)) is None


def test_cli_errors_are_one_line(capsys):
    from wmkit.__main__ import main

    assert main(["bench", "--profile", "smoke", "--seeds", "0"]) == 2
    assert main(["bench", "--profile", "smoke", "--only", "nope"]) == 2
    assert main(["bench", "--profile", "smoke", "--ship", "--seeds", "2"]) == 2
    assert main(["bench", "--profile", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(line.startswith("wmkit: error:") for line in err)


def test_records_key_on_the_library_tree_so_a_docs_commit_keeps_them(tmp_path):
    import subprocess

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    (tmp_path / "wmkit").mkdir()
    (tmp_path / "wmkit" / "core.py").write_text("x = 1\n")
    (tmp_path / "README.md").write_text("v1\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "one")
    first, dirty = bench.code_version(tmp_path)
    assert not dirty and len(first) == 40
    (tmp_path / "README.md").write_text("v2\n")
    git("commit", "-qam", "docs only")
    assert bench.code_version(tmp_path) == (first, False)  # a new commit, the same records
    assert bench.head_commit(tmp_path) != first
    (tmp_path / "wmkit" / "core.py").write_text("x = 2\n")
    edited, dirty = bench.code_version(tmp_path)
    assert dirty and edited.startswith(first + "+")  # uncommitted library edits get their own key
    (tmp_path / "wmkit" / "new.py").write_text("y = 1\n")
    assert bench.code_version(tmp_path)[0] != edited  # untracked library files count too
    git("add", ".")
    git("commit", "-qm", "library change")
    changed, dirty = bench.code_version(tmp_path)
    assert not dirty and changed != first and "+" not in changed


def test_saved_report_says_dirty_when_its_records_come_from_edited_code(tmp_path, fresh):
    bench.build_report(tmp_path, "smoke", [0], code="a" * 40 + "+1234abcd", experiments=FAKE, claims=FAKE_CLAIMS,
                       plots=False)
    saved = json.loads((tmp_path / "bench.json").read_text())
    assert saved["dirty"] is True and saved["code"].endswith("+1234abcd")
    # a bench.json from before the "code" field still loads: its commit was the key then
    del saved["code"]
    (tmp_path / "bench.json").write_text(json.dumps(saved))
    assert bench.load_report(tmp_path / "bench.json")["code"] == saved["commit"]


def test_a_report_across_library_versions_takes_the_newest_record_and_names_its_version(tmp_path, fresh, monkeypatch):
    old = SourceKey("src2-" + "a" * 64, (("wmkit.x", "1"), ("wmkit.y", "2")))
    new = SourceKey("src2-" + "b" * 64, (("wmkit.x", "1"), ("wmkit.y", "3")))
    monkeypatch.setattr(bench, "experiment_key", lambda experiment: old)
    run(tmp_path, 2)  # seeds 0 and 1 under the old key
    monkeypatch.setattr(bench, "experiment_key", lambda experiment: new)
    FAIL_AT["fake"] = 1
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, 2)  # the new key redoes seed 0 only
    FAIL_AT.clear()
    this_version = run(tmp_path, 2, report_only=True).report
    assert this_version["rows"][0]["seeds"] == [0]  # by default only this key's records count
    assert this_version["code"] == bench.CURRENT and this_version["experiments"]["fake"]["this_kit"] == "this kit: the same"
    across = run(tmp_path, 2, report_only=True, any_version=True).report
    row = across["rows"][0]
    assert row["seeds"] == [0, 1] and "_src2-bbbbbbbbbbbb_" in row["records"][0] and "_src2-aaaaaaaaaaaa_" in row["records"][1]
    assert across["code"] == bench.ANY_VERSION and across["experiments"]["fake"]["codes"] == [old.key, new.key]
    assert across["experiments"]["fake"]["this_kit"] == "this kit: differs in modules wmkit.y"
    text = (tmp_path / "report.md").read_text()
    assert "whatever library version made it" in text and "`src2-aaaaaaaaaaaa`, `src2-bbbbbbbbbbbb`" in text
    assert "differs in modules wmkit.y" in text
    assert across["command"].endswith("--report-only --any-version")
    # the label is this checkout's relation to the records, computed when the report is read: a kit
    # whose wmkit.x changed after publishing says so, although the saved file says only wmkit.y
    later = SourceKey("src2-" + "c" * 64, (("wmkit.x", "9"), ("wmkit.y", "3")))
    monkeypatch.setattr(bench, "experiment_key", lambda experiment: later)
    read_later = bench.load_report(tmp_path / "bench.json", experiments=FAKE)
    assert read_later["experiments"]["fake"]["this_kit"] == "this kit: differs in modules wmkit.x, wmkit.y"
    monkeypatch.setattr(bench, "experiment_key", lambda experiment: new)
    assert bench.load_report(tmp_path / "bench.json", experiments=FAKE)["experiments"]["fake"]["this_kit"] == \
        "this kit: differs in modules wmkit.y"  # the old key's record still differs in wmkit.y
    with pytest.raises(ValueError, match="only builds a report"):
        run(tmp_path, 2, any_version=True)


def test_pass_at_k_limitation_compares_both_models_at_the_same_k():
    """MLE pass@k_max against RLVR pass@1 would hold almost whatever RL did; the claim compares the
    two models at the same (largest) k."""
    claim = next(c for c in bench_claims.CLAIMS if c.id == "rlvr.regime_pass_at_k")
    mle = [0.10, 0.30, 0.47]
    rlvr = [0.26, 0.40, 0.45]  # sharper at k = 1, lower at k = 3
    result = {"before": {"changed": {"pass_at": mle}}, "runs": [{"after": {"changed": {"pass_at": rlvr}}}]}
    assert bench_claims.claim_value(claim, result) == pytest.approx(0.47 - 0.45)
    extended = {**result, "runs": [{"after": {"changed": {"pass_at": [0.26, 0.45, 0.60]}}}]}
    assert bench_claims.claim_value(claim, extended) == pytest.approx(0.47 - 0.60)  # RL extended reach: < 0


def test_compute_ratios_are_judged_on_the_log_scale():
    def arms(real, wmrl, real_total=100.0, wmrl_total=50.0, anchors=90.0):
        return {"real": {"compute_to_target": [real], "total_cost": [real_total]},
                "anchors only": {"compute_to_target": [anchors], "total_cost": [real_total]},
                "WMRL": {"compute_to_target": [wmrl], "total_cost": [wmrl_total]}}

    log_ratio = wmrl_experiment.log_censored_ratio
    assert log_ratio(arms(60.0, 20.0), "real", "WMRL") == pytest.approx(math.log(3.0))
    assert log_ratio(arms(20.0, 40.0), "real", "WMRL") == pytest.approx(-math.log(2.0))  # 0.5×: as far as 2×
    # WMRL never reached it: its compute to target > its total 50, so the ratio < 30/50; finite, never > 0
    assert log_ratio(arms(30.0, None), "real", "WMRL") == pytest.approx(math.log(30 / 50))
    assert log_ratio(arms(80.0, None), "real", "WMRL") == 0.0  # the bound 80/50 > 1 is capped at 1×
    assert log_ratio(arms(None, None), "real", "WMRL") is None
    # the claims read it, so a seed where WMRL failed pulls the interval down instead of breaking it
    claim = next(c for c in bench_claims.CLAIMS if c.id == "wmrl.compute_controlled")
    assert claim.threshold == 0.0
    assert bench_claims.claim_value(claim, {"arms": arms(60.0, 20.0)}) == pytest.approx(math.log(3.0))
    # judged against the anchors-only control too: the smaller of the two ratios (anchors-only 30: 1.5×)
    assert bench_claims.claim_value(claim, {"arms": arms(60.0, 20.0, anchors=30.0)}) == pytest.approx(math.log(1.5))
    assert bench_claims.claim_value(claim, {"arms": arms(60.0, 20.0, anchors=10.0)}) == pytest.approx(-math.log(2.0))
    # the claim that votes (research tasks, learned world model): the same rule on its own arm's name
    research = next(c for c in bench_claims.CLAIMS if c.id == "wmrl.compute_research")
    learned = {"real": {"compute_to_target": [60.0], "total_cost": [100.0]},
               "anchors only": {"compute_to_target": [15.0], "total_cost": [100.0]},
               "WMRL (learned)": {"compute_to_target": [20.0], "total_cost": [50.0]}}
    assert research.threshold == 0.0 and research.direction == "higher" and research.measures is None
    # real / WMRL is 3×, but the anchors alone reach the target with less: WMRL is not cheaper than both
    assert bench_claims.claim_value(research, {"arms": learned}) == pytest.approx(math.log(15 / 20))
    learned["anchors only"]["compute_to_target"] = [None]  # anchors never reached it: bounded by their total 100
    assert bench_claims.claim_value(research, {"arms": learned}) == pytest.approx(math.log(3.0))
    values = [math.log(3.0), math.log(1.5), math.log(30 / 50)]
    v = stats.verdict(values, claim.direction, claim.threshold)
    assert v.summary["ci_low"] > -math.inf and v.verdict == "inconclusive"


# ---------------------------------------------------------------------------- report figures
def test_every_claim_has_a_unit_and_compute_ratios_are_ratios():
    units = {c.id: bench.claim_unit(c) for c in CLAIMS}
    assert "other" not in units.values(), [i for i, u in units.items() if u == "other"]
    assert units["wmrl.compute_controlled"] == units["wmrl.compute_research"] == "log_ratio"
    assert units["wmrl.final_score"] == "grade" and units["rlvr.video"] == "relative"
    assert units["wm_r1.calls_fall"] == "calls" and units["rlvr.partial"] == "reward"
    assert units["wm_r1.vs_zero_shot"] == units["rwml.vs_base_exact"] == "rate"


def _row(claim_id, values, direction="higher", threshold=0.0):
    claim = next(c for c in CLAIMS if c.id == claim_id)
    judged = stats.verdict(values, direction, threshold)
    return {"id": claim.id, "paper": claim.paper, "claim": claim.text, "kit_label": claim.kit_label,
            "direction": direction, "threshold": threshold, "kit": judged.summary, "verdict": judged.verdict}


def test_forest_figure_gives_each_unit_its_own_axis_with_limits_from_the_data():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def figure(scale):
        rows = [_row("wmrl.final_score", [scale * x for x in (0.01, 0.02, 0.03)]),
                _row("wmrl.ablation_both", [scale * x for x in (-0.01, 0.0, 0.02)]),
                _row("wmrl.compute_research", [math.log(2.0), math.log(3.0), math.log(4.0)]),
                _row("wmrl.compute_controlled", [math.log(0.5), math.log(1.5), math.log(8.0)])]
        return bench.forest_figure(rows, "test")

    fig = figure(1.0)
    axes = fig.axes
    assert [ax.get_xlabel() for ax in axes] == [bench.UNITS["grade"], bench.UNITS["log_ratio"]]
    assert [len(ax.get_yticks()) for ax in axes] == [2, 2]
    grade, ratio = axes
    assert grade.get_xscale() == "linear" and ratio.get_xscale() == "log"
    # ratios drawn as ratios (the line to clear at 1×), the limits just around the data and intervals
    controlled = stats.summarize([math.log(0.5), math.log(1.5), math.log(8.0)])
    low, high = ratio.get_xlim()
    assert math.exp(controlled["ci_low"]) / 2 < low < math.exp(controlled["ci_low"])
    assert math.exp(controlled["ci_high"]) < high < 2 * math.exp(controlled["ci_high"])
    limits = grade.get_xlim()
    wider = figure(10.0).axes[0].get_xlim()
    assert wider[1] - wider[0] > 5 * (limits[1] - limits[0])  # from the data, not fixed
    # the side that reproduces each claim is shaded, one band per row, from its line to the axis edge
    from matplotlib.collections import PolyCollection

    bands = [c for c in grade.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 2 and all(b.get_paths()[0].vertices[:, 0].max() == limits[1] for b in bands)
    plt.close("all")


# ---------------------------------------------------------------------------- record keys (source of the closure)

def _kit_copy(tmp_path: Path) -> Path:
    """A copy of the wmkit package outside any git checkout (as in a wheel or on Colab)."""
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(source_key.PACKAGE_ROOT / "wmkit", root / "wmkit", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _wm_r1_key(root: Path) -> SourceKey:
    return source_key.source_key(source_key.run_module(bench_claims.EXPERIMENTS["wm_r1"].run), root=root)


def test_the_closure_of_an_experiment_holds_its_paper_and_shared_modules_not_another_papers():
    closure = source_key.closure(source_key.run_module(bench_claims.EXPERIMENTS["wm_r1"].run))
    for needed in ("wmkit", "wmkit.wm_r1", "wmkit.wm_r1.experiment", "wmkit.wm_r1.method", "wmkit.wm_r1.agent",
                   "wmkit.core", "wmkit.core.grpo", "wmkit.envs.phone", "wmkit.profiles", "wmkit.runs"):
        assert needed in closure, needed
    assert not [m for m in closure if m.startswith(("wmkit.wmrl", "wmkit.rwml", "wmkit.video", "wmkit.bench"))]
    wmrl = source_key.closure(source_key.run_module(bench_claims.EXPERIMENTS["wmrl_research"].run))
    assert "wmkit.wmrl.method" in wmrl and "wmkit.envs.research" in wmrl
    assert not [m for m in wmrl if m.startswith(("wmkit.wm_r1", "wmkit.rwml", "wmkit.rlvr_world", "wmkit.core"))]
    for name, experiment in bench_claims.EXPERIMENTS.items():  # every registered run module is found
        assert source_key.run_module(experiment.run) in source_key.closure(source_key.run_module(experiment.run))


def test_the_closure_follows_imports_in_function_bodies_relative_imports_and_module_names(tmp_path):
    pkg = tmp_path / "wmkit"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "start.py").write_text(
        "import os\n"
        "from . import near\n"
        "def late():\n"
        "    from wmkit.sub import deep  # only inside a function\n"
        "    return deep\n"
        "TARGET = 'wmkit.named:run'  # a module named by a string, as the registries do\n"
        "DOC = 'see wmkit.unrelated for more'  # prose, not a name\n")
    (pkg / "near.py").write_text("from .sub.deeper import x\n")
    (pkg / "sub" / "deep.py").write_text("")
    (pkg / "sub" / "deeper.py").write_text("x = 1\n")
    (pkg / "named.py").write_text("def run(): ...\n")
    (pkg / "unrelated.py").write_text("")
    (pkg / "unused.py").write_text("")
    assert list(source_key.closure("wmkit.start", tmp_path)) == [
        "wmkit", "wmkit.named", "wmkit.near", "wmkit.start", "wmkit.sub", "wmkit.sub.deep", "wmkit.sub.deeper"]


def test_a_key_survives_edits_outside_the_closure_and_changes_with_edits_inside(tmp_path):
    """On a copy of the package with no git: the same bytes give the same key as the checkout; an
    edit in another paper's method (wmkit/wmrl/method.py, outside WM-R1's closure) or in the
    benchmark leaves WM-R1's key; a line of code in wmkit/wm_r1/method.py changes it, and the module
    hashes say which module differs."""
    root = _kit_copy(tmp_path)
    assert not (root / ".git").exists()
    before = _wm_r1_key(root)
    assert before == _wm_r1_key(source_key.PACKAGE_ROOT) and before.key.startswith(source_key.KEY_PREFIX)
    assert "wmkit.wmrl.method" not in before.module_names()
    for outside in ("wmkit/wmrl/method.py", "wmkit/bench/runner.py", "wmkit/bench/claims.py"):
        path = root / outside
        path.write_text(path.read_text() + "\n_EDITED = 1\n")
    assert _wm_r1_key(root) == before
    inside = root / "wmkit" / "wm_r1" / "method.py"
    inside.write_text(inside.read_text() + "\n# a comment\n")
    assert _wm_r1_key(root) == before  # a comment is not code (tests/test_rekey.py: docstrings, formatting)
    inside.write_text(inside.read_text() + "\n_EDITED = 1\n")
    after = _wm_r1_key(root)
    assert after.key != before.key
    assert source_key.module_differences(before, after) == ["wmkit.wm_r1.method"]
    record = {"code": after.key, "modules": [list(p) for p in after.modules]}
    assert bench.this_kit_label([record], before) == "this kit: differs in modules wmkit.wm_r1.method"
    assert bench.this_kit_label([{"code": before.key, "modules": []}], before) == "this kit: the same"
    assert source_key.module_differences({"code": "a" * 40}, before) is None  # an old record: modules unknown


def test_a_value_in_a_config_table_is_keyed_by_the_config_not_the_source(tmp_path):
    """A WM-R1 size changed in its paper's table (wmkit/wm_r1/config.py) leaves its key (the values are in
    each record's config, and only WM-R1's config changes); code of that module outside the table, and
    code of wmkit/profiles.py, which every experiment imports, still change the key."""
    root = _kit_copy(tmp_path)
    rlvr_start = source_key.run_module(bench_claims.EXPERIMENTS["rlvr_regime"].run)
    before = (_wm_r1_key(root), source_key.source_key(rlvr_start, root=root))
    config = root / "wmkit" / "wm_r1" / "config.py"
    text = config.read_text()
    table = text.index("\nWM_R1 = {")  # inside the table: a value edit
    config.write_text(text[:table] + "\n_UNUSED_VALUE = 3  # an edited value\n" + text[table:])
    assert (_wm_r1_key(root), source_key.source_key(rlvr_start, root=root)) == before
    config.write_text(text.replace("def wm_r1_sizes(", "def wm_r1_sizes_renamed(", 1))  # code
    assert source_key.module_differences(before[0], _wm_r1_key(root)) == ["wmkit.wm_r1.config"]
    config.write_text(re.sub(r"(?m)^(# =+) end of values$", r"\1 the end", text))
    with pytest.raises(ValueError, match="end of values"):
        _wm_r1_key(root)
    config.write_text(text)
    profiles = root / "wmkit" / "profiles.py"
    profiles.write_text(profiles.read_text().replace("def check_seed(", "def check_seed_renamed(", 1))
    assert source_key.module_differences(before[1], source_key.source_key(rlvr_start, root=root)) == ["wmkit.profiles"]


def test_a_record_holds_the_values_of_the_profile_parts_its_run_reads(tmp_path, fresh):
    def reads_world_model(profile, seed, runs_root, sizes):
        return {"after": profile.world_model.episodes + seed, "before": 0.0, "steps": sizes.steps}

    undeclared = {"fake": Experiment("fake", "WMRL", reads_world_model, fake_sizes, "reads a part it does not declare")}
    with pytest.raises(ValueError, match=r"run read the profile's world_model.*reads="):
        bench.run_one(undeclared["fake"], "smoke", 0, tmp_path, None, "test", log=lambda line: None)
    assert not list((tmp_path / "bench").rglob("*.json"))  # no record keyed without the values it used
    declared = Experiment("fake", "WMRL", reads_world_model, fake_sizes, "declares it", reads=("world_model",))
    path, ran = bench.run_one(declared, "smoke", 0, tmp_path, None, "test", log=lambda line: None)
    record = json.loads(path.read_text())
    from wmkit.profiles import get_profile
    assert ran and record["config"]["reads"]["world_model"]["episodes"] == get_profile("smoke").world_model.episodes
    # a record written before configs held their reads is still found among the shipped ones
    without = {k: v for k, v in record["config"].items() if k != "reads"}
    assert bench.config_hash(without) in bench.config_hashes(record["config"])
    # what the seeds share is checked too: a prepare that reads the world model's sizes
    def prepare_reads_world_model(profile, runs_root, sizes):
        return profile.world_model.episodes

    prepared = {"fake": Experiment("fake", "WMRL", fake_run, fake_sizes, "its prepare reads a part",
                                   prepare=prepare_reads_world_model)}
    with pytest.raises(ValueError, match=r"prepare .* read the profile's world_model"):
        bench.run_bench("smoke", 1, runs_root=tmp_path / "prepared", experiments=prepared, claims=FAKE_CLAIMS,
                        log=lambda line: None)
    assert bench.config_hashes(bench.experiment_config(FAKE["fake"], "smoke", 0)) == \
        [bench.config_hash(bench.experiment_config(FAKE["fake"], "smoke", 0))]


def test_every_bench_experiment_declares_parts_that_exist():
    from wmkit.profiles import get_profile

    for name, experiment in bench_claims.EXPERIMENTS.items():
        for part in experiment.reads:
            assert part in bench.PROFILE_PARTS, (name, part)
        assert bench.keyed_parts(experiment) <= bench.PROFILE_PARTS, name
        bench.experiment_config(experiment, "smoke", 0)  # every declared part resolves
    assert "name" not in bench.PROFILE_PARTS and get_profile("smoke").section("default_model")


def test_a_key_reads_through_the_source_reader_and_hashes_the_data_it_names(tmp_path):
    root = _kit_copy(tmp_path)
    start = source_key.run_module(bench_claims.EXPERIMENTS["wm_r1"].run)
    base = source_key.source_key(start, root=root)
    patched = source_key.source_key(
        start, root=root, read=lambda p: p.read_bytes() + (b"\n_EDITED = 1\n" if p.name == "oracle.py" else b""))
    assert source_key.module_differences(base, patched) == ["wmkit.wm_r1.oracle"]
    (root / "data").mkdir()
    (root / "data" / "x.jsonl").write_text("{}\n")
    with_data = source_key.source_key(start, data=["data/x.jsonl"], root=root)
    assert with_data.key != base.key and with_data.data[0][0] == "data/x.jsonl"
    (root / "data" / "x.jsonl").write_text("{\"a\": 1}\n")
    assert source_key.module_differences(with_data, source_key.source_key(start, data=["data/x.jsonl"], root=root)) \
        == ["data:data/x.jsonl"]


def test_a_record_stores_its_key_its_modules_and_its_commit(tmp_path, fresh):
    run(tmp_path, 1)
    path = next((tmp_path / "bench" / "fake").glob("seed0_*.json"))
    record = json.loads(path.read_text())
    key = bench.experiment_key(FAKE["fake"])
    assert record["code"] == key.key and f"_{bench.short_version(key.key)}_" in path.name
    assert record["key_format"] == source_key.KEY_FORMAT and record["commit"]
    assert [tuple(p) for p in record["modules"]] == list(key.modules)
    assert fake_run.__module__ in key.module_names() and "wmkit.bench.runner" in key.module_names()
    assert bench.short_version(key.key) == key.key[:17] and bench.short_version("a" * 40 + "+1234abcd") == "a" * 12 + "+1234abcd"
    assert source_key.is_source_key(key.key) and not source_key.is_source_key("a" * 40)


# ---------------------------------------------------------------------------- kinds, groups, headline

GROUPED_CLAIMS = (
    Claim("fake.a", "WMRL", "after beats before", "+1", "fake", "after", "before"),  # 0.3, 0.4, 0.5: reproduced
    Claim("fake.b", "WMRL", "after clears 0.6", "0.7", "fake", "after", threshold=0.6),  # [0.35, 0.85]: inconclusive
    Claim("fake.a_other_way", "WMRL", "the same, the other way round", "+1", "fake", "before", "after",
          measures="fake.a"),  # contradicted, but a sub-row: no vote
    Claim("fake.c", "WMRL", "needs what the kit lacks", "+2", not_measured="no such loop"),
    Claim("fake.limit", "WMRL", "a stated limitation", "—", "fake", "after", "before", kind="paper limitation"),
    Claim("fake.control", "WMRL", "a positive control", "—", "fake", "after", "before", kind="kit control"),
)


def test_the_headline_counts_one_verdict_per_paper_claim_and_the_chance_false_positives(tmp_path, fresh):
    bench_claims.check_groups(GROUPED_CLAIMS)
    report = bench.run_bench("smoke", 3, runs_root=tmp_path, experiments=FAKE, claims=GROUPED_CLAIMS,
                             log=lambda line: None).report
    rows = {r["id"]: r for r in report["rows"]}
    assert [rows[i]["verdict"] for i in ("fake.a", "fake.b", "fake.a_other_way", "fake.c")] == [
        "reproduced", "inconclusive", "contradicted", "not measured"]
    assert rows["fake.a_other_way"]["group_verdict"] == "reproduced"  # the primary's
    head = report["headline"]
    assert head["counts"]["paper claim"] == {"reproduced": 1, "smaller than the paper's effect": 0, "inconclusive": 1,
                                             "contradicted": 0, "not measured": 1}
    assert head["counts"]["paper limitation"]["reproduced"] == 1 and head["counts"]["kit control"]["reproduced"] == 1
    assert head["paper_claims"] == 3 and head["paper_claims_judged"] == 2 and head["sub_rows"]["paper claim"] == 1
    assert head["expected_false_reproduced"] == pytest.approx(0.05)  # 0.025 x 2 judged paper claims
    assert report["counts"]["contradicted"] == 1  # every row, the sub-row included, is still counted apart
    text = (tmp_path / "report.md").read_text()
    assert ("* 3 paper claims (one verdict each; 1 more row(s) measure them other ways and do not vote): "
            "reproduced 1, smaller than the paper's effect 0, inconclusive 1, contradicted 0, not measured 1") in text
    assert "about 0.05 false \"reproduced\" expected (0.025 x 2), against 1 found" in text
    table = [line for line in text.splitlines() if line.startswith("| WMRL")]
    assert "↳ the same, the other way round" in table[1] and "(sub-row, no vote) contradicted" in table[1]
    assert "**reproduced** (the claim's verdict)" in table[0] and "| kit control |" in table[-1]
    assert "1 group(s) where another measure's verdict differs from the primary's (the table shows both): fake.a." in text
    # a bench.json written before kinds: today's kinds and groups are filled in on load
    saved = json.loads((tmp_path / "bench.json").read_text())
    for row in saved["rows"]:
        del row["kind"], row["measures"]
    del saved["headline"]
    (tmp_path / "bench.json").write_text(json.dumps(saved))
    # (the fake ids are in no registry: each row counts as a paper claim of its own)
    assert bench.load_report(tmp_path / "bench.json")["headline"]["paper_claims"] == 6


def test_every_claim_has_a_kind_and_groups_name_a_primary_of_the_same_paper_and_kind():
    kinds = {c.id: c.kind for c in CLAIMS}
    assert set(kinds.values()) == set(bench_claims.CLAIM_KINDS)
    assert kinds["rwml.vs_base"] == "paper claim" and kinds["wm_r1.small_world_control"] == "kit control"
    assert kinds["rlvr.regime_pass_at_k"] == "paper limitation" and kinds["wm_r1.fidelity"] == "paper limitation"
    for claim in CLAIMS:  # no paper figure (the kit's own check or control): never a paper claim on its own
        if "the kit's control" in claim.paper_figure or "the kit's positive control" in claim.paper_figure:
            assert claim.kind == "kit control", claim.id
    # RWML's one claim over its warm-up, measured four more ways: one group, one vote
    assert {c.id for c in CLAIMS if c.measures == "rwml.vs_base"} == {
        "rwml.vs_base_all", "rwml.vs_base_exact", "rwml.vs_base_greedy", "rwml.twx_vs_base"}
    bench_claims.check_groups(CLAIMS)
    with pytest.raises(AssertionError):
        bench_claims.check_groups((Claim("x", "WMRL", "t", "f", "e", "v", measures="missing"),))


# ---------------------------------------------------------------------------- the published report

def published_fake(tmp_path, seeds=(0, 1, 2)) -> Path:
    """A repository whose executed/smoke/bench/records hold the fake experiment's records of `seeds`,
    and one stale figure; returns the repository root."""
    made = tmp_path / "made"
    run(made, max(seeds) + 1)
    repo = tmp_path / "repo"
    records = repo / "executed" / "smoke" / "bench" / "records" / "fake"
    records.mkdir(parents=True)
    for path in (made / "bench" / "fake").glob("seed*.json"):
        if int(path.name.split("_")[0][4:]) in seeds:
            shutil.copy(path, records / path.name)
    figures = repo / "executed" / "smoke" / "bench" / "figures"
    figures.mkdir(parents=True)
    (figures / "old_partial_report_wmrl.png").write_bytes(b"stale")
    return repo


def test_publish_reads_every_recorded_seed_runs_nothing_and_writes_relative_paths(tmp_path, fresh):
    repo = published_fake(tmp_path, seeds=(0, 1, 2, 4))
    CALLS.clear()
    report = bench.publish_report("smoke", repo=repo, experiments=FAKE, claims=FAKE_CLAIMS, log=lambda line: None)
    assert CALLS == []  # nothing ran
    out = repo / "executed" / "smoke"
    assert sorted(p.name for p in out.iterdir()) == ["bench", "bench.json", "benchmark_report.md"]
    assert sorted(p.name for p in (out / "bench" / "figures").iterdir()) == ["wmrl.png"]  # the stale one removed
    assert report["seeds_per_experiment"] == {"fake": [0, 1, 2, 4]} and report["code"] == bench.ANY_VERSION
    row = report["rows"][0]
    assert row["seeds"] == [0, 1, 2, 4] and row["command"].endswith("--seeds 5 --only fake")
    saved = json.loads((out / "bench.json").read_text())
    assert all(p.startswith("bench/records/fake/seed") for p in saved["rows"][0]["records"])
    assert saved["figures"] == ["bench/figures/wmrl.png"]
    text = (out / "benchmark_report.md").read_text()
    assert "seeds per experiment" in text and "--publish" in text and "![wmrl](bench/figures/wmrl.png)" in text


def test_a_published_report_reads_the_same_in_a_copy_without_git_and_drops_a_row_whose_record_is_gone(tmp_path, fresh):
    repo = published_fake(tmp_path)
    bench.publish_report("smoke", repo=repo, experiments=FAKE, claims=FAKE_CLAIMS, log=lambda line: None)
    clone = tmp_path / "clone"  # a copy of the tree: no .git, another folder
    shutil.copytree(repo / "executed", clone / "executed")
    shutil.rmtree(repo)
    loaded = bench.load_report(clone / "executed" / "smoke" / "bench.json")
    row = loaded["rows"][0]
    assert row["kit"]["n"] == 3 and row["verdict"] != "not measured"
    assert all(Path(p).is_file() and Path(p).is_relative_to(clone) for p in row["records"])
    assert all(Path(f).is_file() for f in loaded["figures"])
    Path(row["records"][1]).unlink()
    row = bench.load_report(clone / "executed" / "smoke" / "bench.json")["rows"][0]
    assert row["verdict"] == "not measured" and "record missing" in row["reason"]


def test_the_shipped_report_is_found_in_a_clone_and_in_an_installed_kit_alike(tmp_path, fresh, monkeypatch):
    """published_dir: the checkout's executed/<profile> in a clone; the package's own copy
    (wmkit/executed/<profile>, package data of the wheel) in an installed kit, which has no checkout."""
    repo = published_fake(tmp_path)
    bench.publish_report("smoke", repo=repo, experiments=FAKE, claims=FAKE_CLAIMS, log=lambda line: None)
    path, where = bench.shipped_report("smoke", repo=repo)
    assert path == repo / "executed" / "smoke" / "bench.json" and where.startswith("shipped with the kit")
    assert bench.published_dir("cpu") == runs.REPO / "executed" / "cpu"  # this checkout
    site_packages = tmp_path / "site-packages"
    shutil.copytree(repo / "executed", site_packages / "wmkit" / "executed")  # what the wheel holds
    monkeypatch.setattr(runs, "REPO", site_packages)
    monkeypatch.setattr(bench, "PACKAGED_EVIDENCE", site_packages / "wmkit" / "executed")
    path, where = bench.shipped_report("smoke")
    assert path == site_packages / "wmkit" / "executed" / "smoke" / "bench.json"
    loaded = bench.load_report(path)
    assert loaded["rows"][0]["kit"]["n"] == 3 and all(Path(p).is_file() for p in loaded["rows"][0]["records"])
    assert bench.shipped_records_dir("smoke") == site_packages / "wmkit" / "executed" / "smoke" / "bench" / "records"
    missing, why = bench.shipped_report("gpu")
    assert missing is None and "ships no published gpu report" in why  # never raises
    with pytest.raises(ValueError, match="publishing the report needs the repository"):
        bench.publish_report("smoke", experiments=FAKE, claims=FAKE_CLAIMS, log=lambda line: None)


def test_the_published_cpu_report_reads_from_a_copy_of_the_tree_without_git(tmp_path):
    """executed/cpu/bench.json, copied with its records and nothing else (no .git, no wmkit/ beside
    it), keeps every number: its paths are relative to its folder."""
    shipped = bench.published_dir("cpu")
    saved = json.loads((shipped / "bench.json").read_text())
    copy = tmp_path / "executed" / "cpu"
    copy.mkdir(parents=True)
    shutil.copy(shipped / "bench.json", copy / "bench.json")
    explored = saved["exploratory"]  # the shipped records so far; the confirmatory section reads its own
    for rel in {p for row in saved["rows"] + explored["rows"] for p in row["records"]}:
        assert not Path(rel).is_absolute()
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(shipped / rel, copy / rel)
    loaded = bench.load_report(copy / "bench.json")
    for section, saved_section in ((loaded, saved), (loaded["exploratory"], explored)):
        assert [r["verdict"] for r in section["rows"]] == [r["verdict"] for r in saved_section["rows"]]
        assert section["headline"]["text"] == saved_section["headline"]["text"]
    assert sum(r["kit"]["n"] > 0 for r in loaded["rows"] + loaded["exploratory"]["rows"]) >= 40
    per = explored["seeds_per_experiment"]
    assert len(per["wm_r1_learned"]) == 19 and len(per["wm_r1_small_world"]) == 8 and len(per["wm_r1"]) == 3


def test_a_fresh_clone_reuses_the_records_shipped_at_this_version_and_reruns_on_request(tmp_path, fresh):
    """`make bench` in a fresh clone (no runs/) copies the shipped records of this version instead of
    rerunning them, runs only the seeds they lack, and reruns everything with --rerun-shipped."""
    repo = published_fake(tmp_path, seeds=(0, 1))
    shipped = repo / "executed" / "smoke" / "bench" / "records"
    CALLS.clear()
    lines: list[str] = []
    fresh_runs = tmp_path / "fresh_clone_runs"
    result = bench.run_bench("smoke", 3, runs_root=fresh_runs, experiments=FAKE, claims=FAKE_CLAIMS,
                             log=lines.append, shipped_dir=shipped)
    assert CALLS == [("fake", 2)]  # seeds 0 and 1 ship at this version
    assert lines[0].endswith("2 recorded at this library version (2 of them shipped with the kit)")
    assert sorted(result.cached) == ["fake/seed0", "fake/seed1"] and result.report["rows"][0]["seeds"] == [0, 1, 2]
    assert {p.name for p in (fresh_runs / "bench" / "fake").glob("seed[01]_*.json")} == {
        p.name for p in (shipped / "fake").iterdir()}
    CALLS.clear()
    bench.run_bench("smoke", 3, runs_root=tmp_path / "verify", experiments=FAKE, claims=FAKE_CLAIMS,
                    log=lambda line: None, shipped_dir=False)
    assert sorted(CALLS) == [("fake", 0), ("fake", 1), ("fake", 2)]
    other = tmp_path / "other_version"  # a shipped record of another version is not reused
    (other / "fake").mkdir(parents=True)
    for path in (shipped / "fake").iterdir():
        shutil.copy(path, other / "fake" / path.name.replace(path.name.split("_")[1], "0123456789ab"))
    CALLS.clear()
    bench.run_bench("smoke", 2, runs_root=tmp_path / "again", experiments=FAKE, claims=FAKE_CLAIMS,
                    log=lambda line: None, shipped_dir=other)
    assert sorted(CALLS) == [("fake", 0), ("fake", 1)]


def test_every_shipped_record_is_found_by_todays_config():
    """The papers' configs moved into their packages (GRPO knobs renamed and nested under ``grpo``); the
    records made before keep being found by today's config (`wmkit.bench.legacy_config`), every one."""
    from wmkit.bench.legacy_config import legacy_config

    records = sorted(bench.published_dir("cpu").glob("bench/records/*/*.json"))
    assert records
    for path in records:
        record = json.loads(path.read_text())
        config = bench.experiment_config(bench_claims.EXPERIMENTS[record["experiment"]], record["profile"], record["seed"])
        assert record["config_hash"] in bench.config_hashes(config), path.name
    old = legacy_config(bench.experiment_config(bench_claims.EXPERIMENTS["wm_r1"], "cpu", 0))["sizes"]
    assert (old["grpo_steps"], old["group_size"], old["ladder"]["grpo_steps"]) == (20, 8, 60) and "grpo" not in old
