"""The confirmatory design (wmkit.design, wmkit.bench.confirmatory): the power plan on hand
cases, the preconditions that the method acted, the report's confirmatory and exploratory sections,
bench-verify, notebook 05's choice of report, and that no confirmatory seed has been used anywhere.
The experiments here are fakes (instant) on seeds below 100: seeds from 1000 on are reserved for the
confirmatory run, in tests too."""
import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from wmkit import design
from wmkit.bench import claims as bench_claims
from wmkit.bench import confirmatory
from wmkit.bench import runner as bench
from wmkit.bench import verify as bench_verify
from wmkit.bench.claims import Claim, Experiment
from wmkit.design import Design
from wmkit.runs import cpu_model

REPO = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------- the plan, on hand cases

def test_the_planning_sd_is_the_upper_confidence_limit_of_the_exploration_sd():
    # chi2(0.2; 2 dof) = 0.44629: sqrt(2 / 0.44629) = 2.1170; chi2(0.2; 18) = 12.857: sqrt(18 / 12.857) = 1.1832
    assert design.planning_sd(1.0, 3) == pytest.approx(2.1170, abs=1e-4)
    assert design.planning_sd(0.5, 19) == pytest.approx(0.5 * 1.1832, abs=1e-4)
    assert design.planning_sd(1.0, 1000) == pytest.approx(1.0, abs=0.05)  # many seeds: the sd itself


def test_a_claim_gets_the_seeds_for_80_percent_power_capped_by_its_budget():
    # sd 0.1 from 19 seeds -> planning sd 0.11832; SESOI 0.05: effect/sd 0.4226. The normal approximation
    # (1.960 + 0.842)^2 / 0.4226^2 = 44.0 seeds, and the t-distribution's heavier tails add two: 46
    d = Design(0.1, "points / 100", sesoi=0.05, sd=0.1, sd_seeds=19, sd_source="hand", budget_hours=10.0)
    plan = design.plan_claim(d, seconds_per_seed=60.0)
    assert plan.seeds_for_power == 46 and plan.seeds == 46 and not plan.capped and 0.8 <= plan.power < 0.81
    # 1 worker-hour at 600 s a seed buys 6: capped, and the power at 6 seeds is stated
    capped = design.plan_claim(Design(0.1, "x", sesoi=0.05, sd=0.1, sd_seeds=19, sd_source="hand", budget_hours=1.0),
                               seconds_per_seed=600.0)
    assert capped.seeds_in_budget == 6 and capped.seeds == 6 and capped.capped and capped.power < 0.3
    # a huge effect still runs the minimum of 3 seeds
    big = design.plan_claim(Design(None, "none: x", sesoi=1.0, sd=0.01, sd_seeds=3, sd_source="hand"), 1.0)
    assert big.seeds == design.MINIMUM_SEEDS == 3


def test_a_design_names_what_it_lacks_and_the_sesoi_rule_takes_half_the_papers_effect():
    assert set(Design().missing()) == {"conversion", "sesoi", "sd", "sd_seeds", "sd_source"}
    assert Design(pending="set-up being chosen").missing() == []
    assert design.sesoi_by_rule("rate", 0.448) == 0.05 and design.sesoi_by_rule("rate", 0.033) == 0.0165
    assert design.sesoi_by_rule("rate", None) == 0.05 and design.sesoi_by_rule("rate", -0.387) == 0.05
    with pytest.raises(ValueError):
        design.plan_claim(Design(pending="not yet"), 1.0)


# ---------------------------------------------------------------------------- the method acted

def test_preconditions_that_the_method_acted_on_hand_records():
    moved = design.above("param_change", "RL moved the parameters")
    assert moved({0: {"param_change": 0.01}, 1: {"param_change": 0.02}}) is None
    reason = moved({0: {"param_change": 0.01}, 1: {"param_change": 0.0}})
    assert reason == 'the method did not act: "RL moved the parameters" fails in seed(s) [1] (param_change = 0)'
    assert "does not say whether the method acted" in moved({0: {}})
    varied = design.reward_varied("zero_std_share", "the reward varied within some group")
    assert varied({0: {"zero_std_share": [1.0, 0.75, 1.0]}}) is None and varied({0: {"zero_std_share": [1.0, 1.0]}})
    assert varied({0: {"zero_std_share": 0.6}}) is None  # one mean share
    mixed = design.success_varied("history", "the judged success varied within a group")
    steps = [{"all_fail_groups": 1.0, "all_success_groups": 0.0}, {"all_fail_groups": 0.5, "all_success_groups": 0.5}]
    assert mixed({0: {"history": steps}}) is not None
    assert mixed({0: {"history": steps + [{"all_fail_groups": 0.5, "all_success_groups": 0.25}]}}) is None
    assert mixed({0: {"history": {"all_fail_groups": 0.36, "all_success_groups": 0.0}}}) is None  # a run's totals
    succeed = design.can_succeed(["a/success", "b/success"], "the policy succeeds at all")
    assert succeed({0: {"a": {"success": 0.0}, "b": {"success": 0.1}}}) is None
    assert "seed(s) [0]" in succeed({0: {"a": {"success": 0.0}, "b": {"success": 0.0}}})
    both = design.all_of(moved, succeed)
    assert "RL moved the parameters" in str(both)
    neither = both({0: {"param_change": 0.0, "a": {"success": 0.0}, "b": {"success": 0.0}},
                    1: {"param_change": 0.0, "a": {"success": 0.0}, "b": {"success": 0.0}}})
    assert neither.startswith('the method did not act: "RL moved the parameters" fails in seed(s) [0, 1] '
                              "(param_change = 0 in each); and \"the policy succeeds at all\" fails")


# ---------------------------------------------------------------------------- seeds named anywhere

@pytest.mark.parametrize("text, seeds", [
    ("seed=3", {3}), ('"seed": 12', {12}), ('"seeds": [0, 1, 2]', {0, 1, 2}), ("--seeds 100-103", {100, 101, 102, 103}),
    ("seeds 3-5 and 9", {3, 4, 5, 9}), ("seed7_src3-abc.json", {7}), ("for s in range(100, 103): run(seed=s)", {100, 101, 102}),
    ("1000 steps, seeds 0-2", {0, 1, 2}), ("seed 0, 2400 SFT tasks", {0}), ("the 2026-12-05 run", set()),
])
def test_seed_mentions_on_hand_texts(text, seeds):
    assert confirmatory.seed_mentions(text) == seeds


def _research_texts():
    for path in sorted((REPO / "research").rglob("*")):
        if path.is_file() and path.suffix in (".py", ".md", ".sh", ".json", ".jsonl", ".txt", ".csv"):
            yield path, path.read_text(errors="replace")


def _notebook_seeds() -> dict[str, set[int]]:
    """notebook -> the integer values of its parameters cell's names that hold a seed (SEED, SEEDS, …)."""
    out = {}
    for path in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.py")):
        text = path.read_text()
        cell = text.split('# %% tags=["parameters"]', 1)[1].split("# %%", 1)[0]
        found = set()
        for node in ast.walk(ast.parse(cell)):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any("SEED" in getattr(t, "id", "").upper() for t in targets) and node.value is not None:
                    found |= {c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant)
                              and isinstance(c.value, int) and not isinstance(c.value, bool)}
        out[path.name] = found
    return out


def test_no_confirmatory_seed_appears_in_research_notebooks_tests_or_the_exploratory_records():
    plans = confirmatory.experiment_plans()
    reserved = {s for p in plans.values() for s in p.seeds}
    assert all(s >= design.RESERVED_FROM for s in reserved)
    for path, text in _research_texts():
        assert not confirmatory.confirmatory_collisions(confirmatory.seed_mentions(text), plans), path
        assert not {s for s in confirmatory.seed_mentions(text) if s >= design.RESERVED_FROM}, (
            f"{path} names a seed from {design.RESERVED_FROM} on: those are the confirmatory run's")
    for name, seeds in _notebook_seeds().items():
        assert seeds and not {s for s in seeds if s >= design.RESERVED_FROM}, name
    for path in sorted((REPO / "tests").glob("*.py")):
        mentioned = confirmatory.seed_mentions(path.read_text())
        assert not confirmatory.confirmatory_collisions(mentioned, plans), path
    records = REPO / "executed" / "cpu" / "bench" / "records"
    for path in sorted(records.glob("*/seed*_*.json")):
        seed = int(path.name.split("_")[0][4:])
        if not confirmatory.is_confirmatory(path.parent.name, seed, plans):  # the exploratory part
            assert seed < design.RESERVED_FROM, path


def test_confirmatory_blocks_are_disjoint_and_every_experiment_has_one():
    design.check_blocks()
    assert set(bench.EXPERIMENTS) <= set(design.CONFIRMATORY_BLOCKS)
    for name, plan in confirmatory.experiment_plans().items():
        assert set(plan.seeds) <= set(design.confirmatory_block(name))


# ---------------------------------------------------------------------------- the report's two sections

@dataclass(frozen=True)
class FakeSizes:
    steps: int = 1


def fake_run(profile, seed, runs_root, sizes):
    # seeds below 50: a gain of about 0.2 (exploration); from 50: a gain of about 0.01 (the confirmatory seeds)
    gain = 0.2 + 0.01 * (seed % 3) if seed < 50 else 0.01 + 0.002 * (seed % 3)
    return {"after": 0.2 + gain, "before": 0.2, "moved": seed != 99}


FAKE = {"fake": Experiment("fake", "WMRL", fake_run, lambda profile: FakeSizes(), "a fake experiment")}
ACTED = design.above("moved", "the fake moved")
DESIGNED = (
    Claim("fake.gain", "WMRL", "after beats before", "+0.30", "fake", "after", "before", precondition=ACTED,
          design=Design(0.3, "the paper's points / 100", sesoi=0.05, sd=0.1, sd_seeds=3, sd_source="fake seeds 0-2")),
    Claim("fake.gain_again", "WMRL", "the same, another way", "—", "fake", "after", "before", measures="fake.gain"),
    Claim("fake.later", "WMRL", "a claim whose set-up is being chosen", "+1", "fake", "after", "before",
          precondition=ACTED, design=Design(pending="set-up chosen on exploration seeds")),
)
CONFIRM = {"fake": [50, 51, 52]}


@pytest.fixture
def fake_seconds(monkeypatch):
    monkeypatch.setitem(design.EXPERIMENT_SECONDS, "fake", design.Seconds(1.0, "fake"))


def _records(root, seeds):
    for seed in seeds:
        bench.run_one(FAKE["fake"], "smoke", seed, root, None, "test", log=lambda line: None)


def test_the_headline_counts_the_confirmatory_seeds_alone_and_the_rest_is_exploratory(tmp_path, fake_seconds):
    _records(tmp_path, [0, 1, 2])
    report = bench.build_report(tmp_path, "smoke", [0, 1, 2], claims=DESIGNED, experiments=FAKE, plots=False,
                                confirmatory=CONFIRM)
    rows = {r["id"]: r for r in report["rows"]}
    assert rows["fake.gain"]["verdict"] == "not measured"
    assert rows["fake.gain"]["reason"].startswith("confirmatory run pending (seeds 50-52, none recorded")
    assert rows["fake.later"]["reason"].startswith("awaiting its confirmatory design (set-up chosen")
    assert report["headline"]["text"][0].startswith("No confirmatory evidence exists yet")
    assert report["headline"]["counts"]["paper claim"]["not measured"] == 2
    explored = {r["id"]: r for r in report["exploratory"]["rows"]}
    assert explored["fake.gain"]["verdict"] == "reproduced" and explored["fake.gain"]["seeds"] == [0, 1, 2]
    assert report["exploratory"]["headline"]["text"][0].startswith("Exploratory, not counted: ")
    text = (tmp_path / "report.md").read_text()
    assert text.index("## Confirmatory evidence (counted)") < text.index("## Exploratory (not counted)")
    assert text.count("Multiplicity: ") == 1 and "1 paper claims are tested" in text
    _records(tmp_path, [50, 51])  # an incomplete confirmatory run is not judged
    partial = bench.build_report(tmp_path, "smoke", [0, 1, 2], claims=DESIGNED, experiments=FAKE, plots=False,
                                 confirmatory=CONFIRM)
    assert partial["rows"][0]["reason"] == "confirmatory run pending (2 of 3 seeds recorded at this version)"
    _records(tmp_path, [52])
    full = bench.build_report(tmp_path, "smoke", [0, 1, 2], claims=DESIGNED, experiments=FAKE, plots=False,
                              confirmatory=CONFIRM)
    gain = full["rows"][0]
    # 0.010, 0.012, 0.014: [+0.007, +0.017] on the paper's side, short of its +0.3: reproduced, and says so
    assert gain["seeds"] == [50, 51, 52] and gain["verdict"] == "reproduced" and "smaller than the paper's" in gain[
        "verdict_reason"]
    assert full["headline"]["counts"]["paper claim"]["reproduced"] == 1
    assert full["exploratory"]["rows"][0]["seeds"] == [0, 1, 2]  # the exploratory seeds are not mixed in
    plan = full["confirmatory"]["plan"]
    assert plan["claims"][0]["id"] == "fake.gain" and plan["claims"][0]["confirmatory_seeds"] == [50, 51, 52]
    # reloaded: both sections are checked against their records
    loaded = bench.load_report(tmp_path / "bench.json", FAKE)
    assert loaded["rows"][0]["verdict"] == "reproduced" and loaded["exploratory"]["rows"][0]["verdict"] == "reproduced"


def test_the_vocabulary_in_a_report_says_smaller_than_the_paper(tmp_path, fake_seconds):
    def tight_run(profile, seed, runs_root, sizes):
        return {"after": 0.2 + [0.01, -0.01, 0.005][seed % 3], "before": 0.2, "moved": True}

    fakes = {"fake": Experiment("fake", "WMRL", tight_run, lambda profile: FakeSizes(), "tight around zero")}
    for seed in (0, 1, 2):
        bench.run_one(fakes["fake"], "smoke", seed, tmp_path, None, "test", log=lambda line: None)
    report = bench.build_report(tmp_path, "smoke", [0, 1, 2], claims=DESIGNED[:1], experiments=fakes, plots=False)
    row = report["rows"][0]
    assert row["verdict"] == "smaller than the paper's effect" and row["paper_effect"] == 0.3
    assert report["headline"]["counts"]["paper claim"]["smaller than the paper's effect"] == 1


# ---------------------------------------------------------------------------- notebook 05's report

def test_notebook_05_skips_a_partial_local_bench_json_and_says_so(tmp_path, fake_seconds):
    """A `bench --only <one experiment>` run leaves a bench.json that covers one experiment: notebook
    05 must show the published report instead, naming what it found and skipped."""
    runs_dir = tmp_path / "runs" / "cpu"
    _records(runs_dir, [0])
    bench.build_report(runs_dir, "cpu", [0], claims=DESIGNED, experiments=FAKE, plots=False,
                       command="python -m wmkit bench --profile cpu --only fake")
    shipped = tmp_path / "executed" / "cpu" / "bench.json"
    path, line = bench.report_for_notebook(runs_dir, "cpu", shipped=lambda: (shipped, f"shipped: {shipped}"))
    assert path == shipped
    assert line.startswith(f"found {runs_dir / 'bench.json'} (made by `python -m wmkit bench --profile cpu --only fake`")
    assert "skipped" in line and line.endswith(f"the published cpu report — shipped: {shipped}")
    # no local report: the published one, one line
    path, line = bench.report_for_notebook(tmp_path / "nowhere", "cpu", shipped=lambda: (shipped, "shipped"))
    assert path == shipped and line == "the published cpu report — shipped"


def test_a_local_bench_json_that_covers_every_claim_at_this_version_is_read(tmp_path):
    runs_dir = tmp_path / "runs" / "smoke"
    claims = (Claim("fake.gain", "WMRL", "after beats before", "+1", "fake", "after", "before"),)
    _records(runs_dir, [0, 1])
    bench.build_report(runs_dir, "smoke", [0, 1], claims=claims, experiments=FAKE, plots=False)
    report = json.loads((runs_dir / "bench.json").read_text())
    assert bench.report_coverage(report, "smoke", FAKE, claims) is None
    path, line = bench.report_for_notebook(runs_dir, "smoke", FAKE, shipped=lambda: (None, "none"), claims=claims)
    assert path == runs_dir / "bench.json" and "covers every claim" in line
    assert bench.report_coverage(report, "smoke", FAKE, claims + (Claim("x.y", "WMRL", "t", "—", "fake", "after"),))


def test_notebook_05_chooses_its_report_by_coverage_not_by_a_file_existing():
    source = (REPO / "notebooks" / "05_benchmark_reproduction.py").read_text()
    assert "bench.report_for_notebook(run.runs_dir" in source
    assert not re.search(r"if bench_file\.exists\(\)", source)


# ---------------------------------------------------------------------------- bench-verify

def test_verify_reruns_the_cheapest_confirmatory_seed_and_compares_it_with_its_record(tmp_path):
    records = tmp_path / "executed" / "smoke" / "bench" / "records"
    _records(tmp_path / "made", [50, 51, 52])
    records.mkdir(parents=True)
    times = {50: 30.0, 51: 10.0, 52: 20.0}
    for path in (tmp_path / "made" / "bench" / "fake").glob("seed*.json"):
        record = json.loads(path.read_text())
        record["wall_seconds"] = times[record["seed"]]
        (records / "fake").mkdir(exist_ok=True)
        (records / "fake" / path.name).write_text(json.dumps(record))
    lines: list[str] = []
    kwargs = dict(records_dir=records, experiments=FAKE, claims=DESIGNED, confirmatory=CONFIRM, log=lines.append)
    out = bench_verify.verify("smoke", 1, 45, runs_root=tmp_path / "runs", **kwargs)
    assert out["ok"] and out["experiments"]["fake"]["seed"] == 51 and out["experiments"]["fake"]["identical"]
    assert lines[0].startswith("bench-verify plan, profile smoke: 1 experiment(s)") and "seed    51" in lines[1]
    # a record that does not match its rerun on the same CPU kind fails the check
    (shipped,) = (records / "fake").glob("seed51_*.json")
    record = json.loads(shipped.read_text())
    record["result"]["after"] += 0.001
    shipped.write_text(json.dumps(record))
    lines.clear()
    out = bench_verify.verify("smoke", 1, 45, runs_root=tmp_path / "runs2", **kwargs)
    assert not out["ok"] and "DIFFERS" in "\n".join(lines) and "after" in "\n".join(lines)
    # made on another CPU kind: the difference is printed beside the claim's spread over its seeds
    record["cpu"] = {"cpu_model": "Another CPU", "torch_cpu_capability": "AVX2"}
    shipped.write_text(json.dumps(record))
    lines.clear()
    out = bench_verify.verify("smoke", 1, 45, runs_root=tmp_path / "runs3", **kwargs)
    delta, spread = out["experiments"]["fake"]["claims"]["fake.gain"]
    assert out["ok"] and delta == pytest.approx(-0.001) and spread == pytest.approx(0.0016, abs=1e-4)
    assert any("fake.gain" in line and "sd 0.00" in line for line in lines)
    assert cpu_model()  # this machine's kind is the one compared


def test_the_verify_plan_leaves_out_the_longest_experiments_until_it_fits_the_budget(tmp_path):
    plan = bench_verify.VerifyPlan("cpu", 2, 45 * 60, chosen={"a": 1, "b": 2, "c": 3, "d": 4},
                                   seconds={"a": 2000.0, "b": 1500.0, "c": 1000.0, "d": 4000.0})
    assert plan.makespan() == 4500.0  # d alone on one worker, a + b + c on the other
    assert plan.makespan(["a", "b", "c"]) == 2500.0  # a on one, b + c on the other
    fits = bench_verify.plan_verify("smoke", 2, 45, records_dir=tmp_path, experiments={}, confirmatory={})
    assert fits.chosen == {} and fits.left_out == {}


# ---------------------------------------------------------------------------- the claims' own designs

def _by_id():
    from wmkit.bench.claims import CLAIMS

    return {c.id: c for c in CLAIMS}


def test_every_claim_that_votes_declares_its_design_and_a_precondition_that_the_method_acted():
    from wmkit.bench.claims import CLAIMS

    for claim in CLAIMS:
        if not confirmatory.votes(claim):
            assert claim.design is None, f"{claim.id}: a sub-row is judged on its primary's design"
            continue
        assert claim.precondition is not None, f"{claim.id}: no precondition that the method acted"
        assert claim.design is not None, f"{claim.id}: no confirmatory design"
        if claim.design.pending:
            assert claim.id in design.AWAITING_SETUP, f"{claim.id}: pending, but not a set-up being chosen"
            continue
        assert not claim.design.missing(), f"{claim.id} lacks {claim.design.missing()}"
        effect = claim.design.paper_effect
        sign = 1 if claim.direction == "higher" else -1
        assert effect is None or sign * (effect - claim.threshold) > 0, f"{claim.id}: paper effect on the wrong side"
        # the conversion is written beside the number: it states it, or says why there is none
        assert (f"{effect:+.3f}" in claim.design.conversion if effect is not None
                else claim.design.conversion.startswith("none: ")), claim.id
        assert claim.design.sesoi == pytest.approx(design.sesoi_by_rule(bench.claim_unit(claim), effect)), claim.id
        assert claim.experiment in design.EXPERIMENT_SECONDS, f"{claim.id}: no seconds per seed for its experiment"
    assert {c.id for c in CLAIMS if c.design is not None and c.design.pending} == set(design.AWAITING_SETUP)


def _research_script(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, REPO / "research" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_declared_sd_is_the_one_its_exploration_records_give():
    import statistics

    exploration_values = _research_script("confirmatory_design").exploration_values
    for claim in _by_id().values():
        if claim.design is None or claim.design.pending:
            continue
        values = [v for v in exploration_values(claim).values() if v is not None]
        assert len(values) == claim.design.sd_seeds, claim.id
        assert all(s < design.RESERVED_FROM for s in exploration_values(claim)), claim.id
        assert f"{statistics.stdev(values):.3g}" == f"{claim.design.sd:.3g}", claim.id


def _shipped(experiment: str) -> dict[int, dict]:
    out = {}
    for path in sorted((REPO / "executed" / "cpu" / "bench" / "records" / experiment).glob("seed*_*.json")):
        record = json.loads(path.read_text())
        record["_path"] = str(path)
        if record["seed"] not in out or record["started"] > out[record["seed"]]["started"]:
            out[record["seed"]] = record
    return out


def test_the_invalid_actions_artefact_and_the_agents_that_never_learned_are_not_measured():
    """rwml.invalid_actions read "contradicted" on a policy whose RWML arm never moved (parameter change
    0.0 in every seed) and that never succeeds; WM-R1's agent claims were judged where the world model
    never judged a GRPO group mixed. Their rows must say the method did not act, and why."""
    claims = _by_id()
    # the invalid-actions claim moved to rwml_agent, where RWML moves the one model that predicts and acts
    invalid = claims["rwml.invalid_actions"]
    assert invalid.experiment == "rwml_agent" and not invalid.design.pending
    acted = {"moved": True, "first_step_reward_share": 0.09}
    assert bench_claims.precondition_failure(invalid, {101: acted}) is None
    reason = bench_claims.precondition_failure(invalid, {101: acted, 102: {**acted, "moved": False}})
    assert reason.startswith("the method did not act") and "[102]" in reason, reason
    # so did the mid-training claim, which also needs the policy RL both arms share to act from the warm-up
    mid = claims["rwml.mid_training"]
    assert mid.experiment == "rwml_agent"
    acted = {"moved": True, "first_step_reward_share": 0.31, "reference_nll": {"rwml": 0.1034, "rwml_policy_rl": 0.1101},
             "acting": {"warm": {"greedy": {"success": 0.46}}, "warm_policy_rl": {"greedy": {"success": 0.6}}}}
    assert bench_claims.precondition_failure(mid, {103: acted}) is None
    flat = json.loads(json.dumps(acted))
    flat["acting"]["warm_policy_rl"]["greedy"]["success"] = 0.46  # policy RL left the warm-up's success as it was
    reason = bench_claims.precondition_failure(mid, {103: acted, 104: flat})
    assert reason.startswith("the method did not act") and "[104]" in reason and "policy RL acted" in reason, reason
    every_sample_paid = {**acted, "first_step_reward_share": 1.0}  # all rewarded: every GRPO advantage is zero
    reason = bench_claims.precondition_failure(mid, {103: acted, 104: every_sample_paid})
    assert reason.startswith("the method did not act") and "[104]" in reason and "first GRPO step" in reason, reason
    # the arm measured after policy RL from the RWML model was the RWML model itself (seeds 103-104's artefact)
    same_model = {**acted, "reference_nll": {"rwml": 0.1034, "rwml_policy_rl": 0.1034}}
    reason = bench_claims.precondition_failure(mid, {103: acted, 104: same_model})
    assert reason.startswith("the method did not act") and "[104]" in reason and "is not the RWML model" in reason, reason
    # three claims moved to the set-up where WM-R1 learns, and say there when an arm did not act
    for claim_id, ablation in (("wm_r1.imagined_calls", "no_imagine"), ("wm_r1.length_reward", "no_length"),
                               ("wm_r1.vs_simulation", "wm_r1")):
        claim = claims[claim_id]
        assert claim.experiment == "wm_r1_learned_ablations" and not claim.design.pending, claim_id
        acted = {"arms": {arm: {"signal_groups": 0.9, "param_change": 0.008, "wm_calls_first_last_quarter": [0.2, 0.2],
                                "sampled": {"success": 0.3}} for arm in ("wm_r1", ablation)}}
        assert bench_claims.precondition_failure(claim, {100: acted}) is None
        frozen = json.loads(json.dumps(acted))
        frozen["arms"][ablation]["signal_groups"] = 0.0  # no group mixed: GRPO had no signal in the ablation
        reason = bench_claims.precondition_failure(claim, {100: acted, 102: frozen})
        assert reason.startswith("the method did not act") and "[102]" in reason and ablation in reason, reason
    # calls per episode moved to wm_r1_calls, whose start calls: it needs that start to call at least once an
    # episode in training and WM-R1's GRPO to act
    calls = claims["wm_r1.calls_fall"]
    assert calls.experiment == "wm_r1_calls" and not calls.design.pending
    acted = {"arms": {"wm_r1": {"signal_groups": 0.9, "param_change": 0.008, "wm_calls_first_last_quarter": [1.0, 0.9]}}}
    assert bench_claims.precondition_failure(calls, {100: acted}) is None  # one call an episode is enough
    assert bench_claims.claim_value(calls, acted) == pytest.approx(0.1)
    rare = json.loads(json.dumps(acted))
    rare["arms"]["wm_r1"]["wm_calls_first_last_quarter"] = [0.21, 0.17]  # imagine_rate 0.3's start: too few to fall
    reason = bench_claims.precondition_failure(calls, {100: acted, 102: rare})
    assert reason.startswith("the method did not act") and "[102]" in reason and "at least once" in reason, reason
    frozen = json.loads(json.dumps(acted))
    frozen["arms"]["wm_r1"]["param_change"] = 0.0
    reason = bench_claims.precondition_failure(calls, {100: acted, 101: frozen})
    assert reason.startswith("the method did not act") and "[101]" in reason and "moved its parameters" in reason, reason
    # where the method acted, the same kind of check lets the claim be judged
    row = bench.claim_row(claims["wm_r1.learned_world_model"], _shipped("wm_r1_learned"), "cpu", 19)
    assert row["verdict"] != "not measured"


def test_a_claim_that_reuses_another_claims_samples_does_not_vote():
    claims = _by_id()
    assert claims["rlvr.regime_reward"].measures == "rlvr.regime_changed"  # the same RL runs and samples
    assert not confirmatory.votes(claims["rlvr.regime_reward"])


def test_the_seconds_per_seed_are_the_shipped_records_medians():
    import statistics

    for name, seconds in design.EXPERIMENT_SECONDS.items():
        walls = [r["wall_seconds"] for s, r in _shipped(name).items() if s < design.RESERVED_FROM]
        if not walls:  # an experiment with no shipped records yet: the exploration result its source names
            found = re.search(r"(research/\S+\.json)", seconds.source)
            assert found, f"{name}: no shipped records and no exploration result named"
            assert seconds.shipped == json.loads((REPO / found.group(1)).read_text())["wall_seconds"], name
            continue
        assert seconds.shipped == pytest.approx(statistics.median(walls), abs=0.06), name
        if seconds.added:  # the MLE world model a seed builds, as the named records timed it
            source = re.search(r"world_model/seconds of the (\w+) records", seconds.source).group(1)
            built = {r["result"]["world_model"]["seconds"] for s, r in _shipped(source).items()
                     if s < design.RESERVED_FROM}  # the design's figure: exploration records, not the confirmatory
            assert built == {seconds.added}, name
