"""The benchmark's confirmatory design: each claim's test, declared before the run that judges it.

A claim that votes (a group's primary measure, :mod:`wmkit.bench.claims`) carries a :class:`Design`
beside its definition, and its :attr:`~wmkit.bench.claims.Claim.precondition` says how the records
show that the method acted (:class:`Acted` and the checks below). A design names:

* the paper's effect converted to the kit's units, with the conversion in words, or None and why;
* a smallest effect of interest (SESOI) in the kit's units, by one rule (:data:`SESOI_RULE`);
* the spread of the claim's per-seed value on exploration seeds (sd, how many seeds, which records);
* a budget of worker-hours for its confirmatory seeds.

From those the code, not a person, gives the claim its seeds (:func:`plan_claim`): the fewest with 80%
power at the SESOI for the kit's two-sided 95% paired t-interval (:func:`wmkit.stats.seeds_for_power`),
the spread taken at the 80% upper confidence limit of the exploration sd (:func:`planning_sd`: a few
exploration seeds understate a spread as often as not, and the count must not rest on a lucky
draw), capped by the budget at the experiment's measured seconds per seed
(:data:`EXPERIMENT_SECONDS`). An experiment runs the most seeds any of its voting claims needs, on
its own block of confirmatory seeds (:data:`CONFIRMATORY_BLOCKS`), from 1000 on: seeds no record,
notebook, study or test has used (``tests/test_design.py`` checks). Every claim of the experiment
is judged on all of them.

A claim whose set-up is still being chosen on exploration seeds has a design with ``pending`` set
(the reason): it reads "not measured" until its design is declared, and takes no seeds.

Each paper's ``claims.py`` declares its designs and preconditions with this module, which imports
only :mod:`wmkit.stats` and :mod:`wmkit.entries` (the benchmark in :mod:`wmkit.bench` reads them).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wmkit.entries import get_path, resolve
from wmkit.stats import paired_t_power, seeds_for_power

RESERVED_FROM = 1000
"""Seeds from here on belong to the confirmatory run: nothing else may use them."""

BLOCK = 100
"""Seeds per experiment's block (:data:`CONFIRMATORY_BLOCKS`): the most one experiment may run."""

POWER = 0.8
"""The power each claim's seed count gives at its SESOI."""

SD_CONFIDENCE = 0.8
"""The one-sided confidence of the upper limit taken for the exploration sd (:func:`planning_sd`)."""

MINIMUM_SEEDS = 3
"""The fewest confirmatory seeds of any claim (one seed has no interval; two, t = 12.7)."""

DEFAULT_BUDGET_HOURS = 2.0
"""A claim's worker-hours for its confirmatory seeds unless its design states another (the whole run
is a resumable job; the per-claim cap keeps one hopeless power computation from taking it over)."""

SESOI_DEFAULTS = {"rate": 0.05, "reward": 0.05, "relative": 0.05, "calls": 0.5, "grade": 0.02,
                  "log_ratio": math.log(1.5)}
"""The smallest effect of interest of each unit (:data:`wmkit.bench.runner.UNITS`), before the paper's
effect is considered: 5 points of a rate, share or reward (the papers' own ablations differ by 3 to
10 points); 5% relative L1; half a world-model call per episode; 0.02 of an expected grade (0..1);
1.5x less compute (a log ratio of ln 1.5)."""

SESOI_RULE = ("the smaller of the unit's default (SESOI_DEFAULTS) and half the paper's effect in the kit's "
              "units: a test powered for half the paper's effect, never for less than a change a reader "
              "of the paper would act on")


AWAITING_SETUP = {
    "rwml.mid_training": "on exploration seeds 103-104 policy RL from the RWML model ran the RWML model's "
                         "weights (a deep copy of a GRPO-trained model kept TRL's patched forward over the "
                         "original; wmkit.core.grpo.train_grpo now removes it); re-run from a fresh load, the "
                         "measure is +0.098 and -0.100 (sd 0.140): 80% power at the SESOI 0.0285 needs 2939 seeds at "
                         "the planning sd (132 at the sd itself; 43 min a seed), where the budget buys 3; "
                         "the spread is policy RL's outcome, not evaluation noise, so a design waits for "
                         "policy RL run until both arms plateau, or several policy-RL seeds a start averaged "
                         "(research/RWML_AGENT.md, section 5)",
}
"""Claim id -> why its design is pending: the claims whose set-up is being chosen on exploration seeds.
Each declares ``Design(pending=AWAITING_SETUP[id])`` until its set-up, and then its design, is declared
(and leaves this table); no other claim may be pending (``tests/test_design.py``)."""


def sesoi_by_rule(unit: str, paper_effect: float | None) -> float:
    """The SESOI :data:`SESOI_RULE` gives a claim in `unit` with `paper_effect` (None: none)."""
    default = SESOI_DEFAULTS[unit]
    return default if paper_effect is None else min(default, abs(paper_effect) / 2)


@dataclass(frozen=True)
class Design:
    """A claim's confirmatory test, fixed before its confirmatory run (see the module docstring)."""

    paper_effect: float | None = None
    """The paper's effect in the kit's units (the sign of the claim's direction), or None."""
    conversion: str = ""
    """How the paper's figure becomes :attr:`paper_effect`, or why there is none."""
    sesoi: float | None = None
    """The smallest effect of interest, in the kit's units, positive (by :data:`SESOI_RULE`)."""
    sd: float | None = None
    """The sample sd of the claim's per-seed value over its exploration seeds."""
    sd_seeds: int = 0
    """How many exploration seeds gave :attr:`sd`."""
    sd_source: str = ""
    """Which records gave :attr:`sd`: a path, then its seeds, e.g. ``"executed/cpu/bench/records seeds
    0-17"`` (the shipped exploratory records of the claim's experiment) or
    ``"regime_results/design_seeds_rlvr_regime.json seeds 100-104"`` (a values file that
    research/explore_design_seeds.py wrote under research/); research/confirmatory_design.py reads them
    back, and a test checks :attr:`sd` against them."""
    budget_hours: float = DEFAULT_BUDGET_HOURS
    """Worker-hours the claim may spend on confirmatory seeds (a cap on the power computation)."""
    pending: str = ""
    """Non-empty while the claim's set-up is still being chosen: why it has no design yet."""

    def missing(self) -> list[str]:
        """The parts a declared (not pending) design lacks."""
        if self.pending:
            return []
        out = [name for name, ok in (("conversion", bool(self.conversion.strip())),
                                     ("sesoi", self.sesoi is not None and self.sesoi > 0),
                                     ("sd", self.sd is not None and self.sd > 0),
                                     ("sd_seeds", self.sd_seeds >= 2), ("sd_source", bool(self.sd_source.strip())),
                                     ("budget_hours", self.budget_hours > 0)) if not ok]
        return out


def planning_sd(sd: float, n: int, confidence: float = SD_CONFIDENCE) -> float:
    """The `confidence` one-sided upper confidence limit of a normal sd estimated as `sd` from `n`
    values: sd·√((n − 1) / χ²_{1−confidence}(n − 1)). E.g. from 3 seeds, 2.12 sd; from 19, 1.18 sd."""
    from scipy import stats  # here: --help imports this module (through the claims), not scipy

    return float(sd * math.sqrt((n - 1) / stats.chi2.ppf(1 - confidence, n - 1)))


@dataclass(frozen=True)
class ClaimPlan:
    """The seeds a :class:`Design` asks for, and why (:func:`plan_claim`)."""

    sd_planning: float
    seeds_for_power: int
    seeds_in_budget: int
    seeds: int
    power: float
    """The power at the SESOI with :attr:`seeds` (below :data:`POWER` where the budget capped it)."""
    capped: bool


def plan_claim(design: Design, seconds_per_seed: float) -> ClaimPlan:
    """The seeds of a declared `design` at `seconds_per_seed` worker-seconds a seed: 80% power at its
    SESOI with the planning sd, at least :data:`MINIMUM_SEEDS`, at most what its budget buys (and
    :data:`BLOCK`)."""
    if design.pending or design.missing():
        raise ValueError(f"no plan for a design that is pending or lacks {design.missing()}")
    sd = planning_sd(design.sd, design.sd_seeds)
    wanted = seeds_for_power(design.sesoi, sd, POWER, minimum=MINIMUM_SEEDS, maximum=100_000)
    affordable = max(MINIMUM_SEEDS, min(BLOCK, int(design.budget_hours * 3600 // seconds_per_seed)))
    seeds = min(wanted, affordable)
    return ClaimPlan(sd, wanted, affordable, seeds, paired_t_power(design.sesoi, sd, seeds), seeds < wanted)


# --------------------------------------------------------------------------------- the experiments
CONFIRMATORY_BLOCKS: dict[str, int] = {
    "rlvr_regime": 1000,
    "rlvr_regime_ablations": 1100,
    "rlvr_mle_vs_rl": 1200,
    "rlvr_ablations": 1300,
    "rlvr_phone": 1400,
    "rlvr_video": 1500,
    "rwml_textgame": 1600,
    "rwml": 1700,
    "wm_r1": 1800,
    "wm_r1_ladder": 1900,
    "wm_r1_small_world": 2000,
    "wm_r1_learned": 2100,
    "wmrl_controlled": 2200,
    "wmrl_research": 2300,
    "rwml_agent": 2400,
    "wm_r1_learned_ablations": 2500,
    "wm_r1_calls": 2600,
}
"""experiment -> the first seed of its block of :data:`BLOCK` confirmatory seeds. Blocks never overlap,
and an experiment added later takes the next free block (the next hundred after the last one here)."""


@dataclass(frozen=True)
class Seconds:
    """An experiment's worker-seconds per seed of its confirmatory configuration, and where from: the
    median wall time of its shipped exploratory records, plus what a confirmatory seed adds."""

    shipped: float
    source: str
    added: float = 0.0

    @property
    def seconds(self) -> float:
        return self.shipped + self.added


_SHIPPED = "median wall time of its shipped records (AMD EPYC AVX512, one torch thread)"
_MLE = ", plus the MLE world model each seed now builds (world_model/seconds of the {} records)"
EXPERIMENT_SECONDS: dict[str, Seconds] = {
    "rlvr_regime": Seconds(177.7, _SHIPPED + _MLE.format("rlvr_regime"), added=234.9),
    "rlvr_regime_ablations": Seconds(614.8, _SHIPPED + _MLE.format("rlvr_regime"), added=234.9),
    "rlvr_mle_vs_rl": Seconds(67.2, _SHIPPED + _MLE.format("wm_r1"), added=323.7),
    "rlvr_ablations": Seconds(233.0, _SHIPPED + _MLE.format("wm_r1"), added=323.7),
    "rlvr_phone": Seconds(36.9, _SHIPPED + _MLE.format("wm_r1"), added=323.7),
    "rlvr_video": Seconds(158.9, _SHIPPED),
    "rwml_textgame": Seconds(124.0, _SHIPPED),
    "rwml": Seconds(166.4, _SHIPPED),
    "wm_r1": Seconds(415.6, _SHIPPED),
    "wm_r1_ladder": Seconds(1167.5, _SHIPPED),
    "wm_r1_small_world": Seconds(427.6, _SHIPPED),
    "wm_r1_learned": Seconds(916.0, f"{_SHIPPED} and Intel Xeon AVX512"),
    "wmrl_controlled": Seconds(3.79, _SHIPPED),
    "wmrl_research": Seconds(2.33, f"{_SHIPPED}; its first seed in a process also builds the shared set-up"),
    "rwml_agent": Seconds(2557.4, "no shipped records yet: wall_seconds of "
                          "research/regime_results/rwml_agent/main/seed104.json (AMD EPYC, one torch thread, a shared "
                          "machine), a whole benchmark seed: warm-up, RWML, policy RL from both models, the "
                          "acting-only control (the longer of exploration seeds 103 and 104)"),
    "wm_r1_learned_ablations": Seconds(5557.8, "no shipped records yet: wall_seconds of "
                                       "research/regime_results/wm_r1_ablations/base/seed100.json (Intel Xeon, "
                                       "one torch thread, a shared machine)"),
    "wm_r1_calls": Seconds(3017.2, "no shipped records yet: wall_seconds of "
                           "research/regime_results/wm_r1_ablations/imagine1/seed100.json (AMD EPYC, one torch thread, "
                           "a shared machine), a whole benchmark seed: the edit world model, the SFT start at "
                           "imagine_rate 1.0, its evaluation, WM-R1's GRPO and evaluation (the longer of exploration "
                           "seeds 100 and 101)"),
}
"""experiment -> :class:`Seconds`: what a confirmatory seed costs one worker (one torch thread), from
the shipped records' wall times (a test checks them against the records), plus what a seed of the
confirmatory configuration adds: the RLVR text-game seeds each build their own MLE world model."""


def confirmatory_block(experiment: str) -> range:
    """The whole block of `experiment`'s confirmatory seeds (KeyError for an experiment without one)."""
    first = CONFIRMATORY_BLOCKS[experiment]
    return range(first, first + BLOCK)


def check_blocks(blocks: Mapping[str, int] = CONFIRMATORY_BLOCKS) -> None:
    """Every block starts at or after :data:`RESERVED_FROM` and no two overlap (AssertionError)."""
    spans = sorted((first, name) for name, first in blocks.items())
    for (first, name), (next_first, next_name) in zip(spans, spans[1:] + [(math.inf, "")]):
        assert first >= RESERVED_FROM, f"{name}'s block starts below {RESERVED_FROM}"
        assert first + BLOCK <= next_first, f"{name}'s block overlaps {next_name}'s"


# --------------------------------------------------------------------------------- preconditions
def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Acted:
    """A precondition that the method acted, measured on the records: `test(result) -> (ok, detail)`
    holds in every seed, else the verdict is "not measured: the method did not act: <says> failed in
    seed(s) [...] (<details>)". Called with seed -> result like every precondition
    (:func:`wmkit.bench.claims.precondition_failure`)."""

    says: str
    """What must hold, in words ("RL moved the model: parameter change above 0")."""
    test: Callable[[dict], tuple[bool | None, str]]

    def __call__(self, results: Mapping[int, dict]) -> str | None:
        unknown, failed = [], []
        for seed, result in sorted(results.items()):
            ok, detail = self.test(result)
            if ok is None:
                unknown.append(seed)
            elif not ok:
                failed.append((seed, detail))
        if unknown:
            return (f"the record of seed(s) {unknown} does not say whether the method acted (\"{self.says}\": its "
                    "fields are missing)")
        if failed:
            if len({d for _, d in failed}) == 1:
                details = f"{failed[0][1]}" + (" in each" if len(failed) > 1 else "")
            else:
                details = "; ".join(f"seed {s}: {d}" for s, d in failed[:4]) + ("; …" if len(failed) > 4 else "")
            return (f"the method did not act: \"{self.says}\" fails in seed(s) {[s for s, _ in failed]} "
                    f"({details})")
        return None

    def __str__(self) -> str:
        return self.says


@dataclass(frozen=True)
class _Above:
    """The number at `path` above `floor` (at or above it where `inclusive`) and, where a `ceiling` is
    given, below it (a bool: itself)."""

    path: str
    floor: float
    ceiling: float | None = None
    inclusive: bool = False

    def __call__(self, result: dict) -> tuple[bool | None, str]:
        value = get_path(result, self.path)
        if isinstance(value, bool) and self.ceiling is None:
            return value, f"{self.path} {value}"
        value = _number(value)
        if value is None:
            return None, ""
        inside = ((value >= self.floor if self.inclusive else value > self.floor)
                  and (self.ceiling is None or value < self.ceiling))
        return inside, f"{self.path} = {value:.3g}"


def above(path: str, says: str, floor: float = 0.0) -> Acted:
    """The number (or bool) at `path` is above `floor` (True) in every seed: a parameter change, a
    share of predictions that changed, a ``moved`` flag."""
    return Acted(says, _Above(path, floor))


def at_least(path: str, says: str, floor: float) -> Acted:
    """The number at `path` is at or above `floor` in every seed (the start calls the world model at
    least once an episode)."""
    return Acted(says, _Above(path, floor, inclusive=True))


def between(path: str, says: str, low: float = 0.0, high: float = 1.0) -> Acted:
    """The number at `path` lies strictly between `low` and `high` in every seed: a share of rewarded
    samples that is neither none nor all (either end leaves every GRPO advantage at zero)."""
    return Acted(says, _Above(path, low, high))


@dataclass(frozen=True)
class _VersusStart:
    """The number at `path` against its start's at `start`: above it (`above`), else merely different."""

    path: str
    start: str
    above: bool

    def __call__(self, result: dict) -> tuple[bool | None, str]:
        value, start = _number(get_path(result, self.path)), _number(get_path(result, self.start))
        if value is None or start is None:
            return None, ""
        if self.above:
            return value > start, f"{self.path} = {value:.3g}, not above {self.start} = {start:.3g}"
        return value != start, f"{self.path} = {self.start} = {value:.4g}"


def rose(path: str, start: str, says: str) -> Acted:
    """Training acted in the claim's direction on its own measure: the number at `path` is above its
    start's at `start` in every seed (e.g. policy RL raised its start's success)."""
    return Acted(says, _VersusStart(path, start, above=True))


@dataclass(frozen=True)
class _Varied:
    path: str

    def __call__(self, result: dict) -> tuple[bool | None, str]:
        value = get_path(result, self.path)
        shares = value if isinstance(value, list) else [value]
        shares = [_number(v) for v in shares]
        if not shares or any(v is None for v in shares):
            return None, ""
        return min(shares) < 1.0, f"{self.path}: no group with a reward spread"


def reward_varied(path: str, says: str) -> Acted:
    """GRPO had a signal: at `path` the share of groups whose rewards were all equal (one number, or
    one per step) is below 1 somewhere, so some group's advantages were not all zero."""
    return Acted(says, _Varied(path))


@dataclass(frozen=True)
class _MixedGroups:
    path: str

    def __call__(self, result: dict) -> tuple[bool | None, str]:
        node = get_path(result, self.path)
        steps = node if isinstance(node, list) else [node] if isinstance(node, dict) else None
        if not steps:
            return None, ""
        try:
            mixed = max(1.0 - float(s["all_fail_groups"]) - float(s["all_success_groups"]) for s in steps)
        except (KeyError, TypeError, ValueError):
            return None, ""
        return mixed > 1e-12, f"{self.path}: every group all-fail or all-success"


def success_varied(path: str, says: str) -> Acted:
    """A GUI agent's GRPO had a success signal: in some step (a list of steps at `path`) or in the
    run's totals (a dict), a share of groups held both a success and a failure as its world model
    judged them (1 − all-fail − all-success groups above 0)."""
    return Acted(says, _MixedGroups(path))


def moved_from(path: str, start: str, says: str) -> Acted:
    """The policy moved: its value at `path` differs from its start's at `start` in every seed."""
    return Acted(says, _VersusStart(path, start, above=False))


@dataclass(frozen=True)
class _AnyPositive:
    paths: tuple[str, ...]

    def __call__(self, result: dict) -> tuple[bool | None, str]:
        values = [_number(get_path(result, p)) for p in self.paths]
        if any(v is None for v in values):
            return None, ""
        return max(values) > 0, "success 0 in " + ", ".join(self.paths)


def can_succeed(paths: Sequence[str], says: str) -> Acted:
    """The policy can succeed at all: some of the success rates at `paths` is above 0 in every seed."""
    return Acted(says, _AnyPositive(tuple(paths)))


@dataclass(frozen=True)
class AllOf:
    """Every one of several preconditions (each that fails is in the reason, in order)."""

    parts: tuple[Any, ...] = field(default_factory=tuple)

    def __call__(self, results: Mapping[int, dict]) -> str | None:
        reasons = [r for r in (resolve(part)(results) for part in self.parts) if r]
        if not reasons:
            return None
        lead = "the method did not act: "
        return lead + "; and ".join(r.removeprefix(lead) for r in reasons) if reasons[0].startswith(lead) else (
            "; ".join(reasons))

    def __str__(self) -> str:
        return "; ".join(precondition_text(p) for p in self.parts)


def all_of(*parts) -> AllOf:
    return AllOf(tuple(parts))


def precondition_text(precondition: Any) -> str:
    """A precondition in words: an :class:`Acted`'s `says`, else a function's first docstring line."""
    if precondition is None:
        return "none"
    if isinstance(precondition, (Acted, AllOf)):
        return str(precondition)
    if isinstance(precondition, str):
        precondition = resolve(precondition)
    doc = (getattr(precondition, "__doc__", None) or "").strip().splitlines()
    return doc[0].rstrip(".") if doc else getattr(precondition, "__name__", "a check")
