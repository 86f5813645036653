"""Tables of the twelfth WM-R1 round (research/WM_R1_LADDER.md section 19): per seed, the bar phone's
2-epoch start, WM-R1 inside the structured-edit world model (`train --learned ...sbedid20...`) and
GRPO on the simulator (`train --p 0`), greedy and sampled on 400 unseen settings tasks; the world
model's judging of the start's own episodes (`fidelity`); then the planned test (19.2: greedy,
WM-R1 inside the learned model − start, seeds 1-3, 95% t-interval, `wmkit.stats.verdict`) and the
figures reported beside it. Section 19.4's world model with the reference paths expanded
(`sbedx60`, seeds 2 and 3, exploratory) has the same tables in research/wm_r1_round13_report.py.

    python research/wm_r1_round12_report.py [ROWS]   (default: research/regime_results/wm_r1_round12.jsonl,
    else runs/control/results.jsonl; the last row of each kind and seed counts)
"""
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from wmkit import stats

TEST_SEEDS = (1, 2, 3)
"""The seeds of the planned test (19.2); seed 0 was seen first."""
START, WORLD_MODEL = "sbqunder2", "sbedid20"


def rows_of(path: Path, world_model: str = WORLD_MODEL, learned_tag: str = "sbq2_editwm") -> dict[tuple[str, int], dict]:
    """(kind, seed) -> the last row of that kind: 'learned' / 'simulator' (train), 'judging' (fidelity)."""
    out = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        if row.get("ckpt", "").rstrip("/").split("/")[-1] != f"{START}_seed{row.get('seed')}":
            continue
        if row["cmd"] == "train" and row.get("tag") == learned_tag and world_model in row.get("learned", ""):
            out[("learned", row["seed"])] = row
        elif row["cmd"] == "train" and row.get("tag") == "sbq2_ctrl" and not row.get("learned"):
            out[("simulator", row["seed"])] = row
        elif row["cmd"] == "fidelity" and f"/{world_model}_seed" in row.get("learned", ""):
            out[("judging", row["seed"])] = row
    return out


def claim(label: str, values: dict[int, float], seeds) -> str:
    chosen = [values[s] for s in seeds if s in values]
    v = stats.verdict(chosen)
    return f"{label}, seeds {[s for s in seeds if s in values]}: {stats.describe(v.summary)} -> {v.text}"


def arms_table(rows: dict, seeds, learned_label: str) -> dict[str, dict[int, float]]:
    """Print per seed the start, WM-R1 inside the learned model and GRPO on the simulator (greedy /
    sampled); return the per-seed differences: 'learned', 'learned_sampled', 'simulator' (each −
    start) and 'learned_minus_simulator' (greedy)."""
    print(f"seed | start (greedy / sampled) | {learned_label} | GRPO on the simulator")
    gain = {"learned": {}, "simulator": {}, "learned_sampled": {}, "learned_minus_simulator": {}}
    for seed in seeds:
        learned, simulator = rows.get(("learned", seed)), rows.get(("simulator", seed))
        start = learned or simulator
        if start is None:
            print(f"{seed:4d} | not run")
            continue
        cells = [f"{row['greedy'][1]:.3f} / {row['sampled'][1]:.3f}" if row else "not run" for row in (learned, simulator)]
        print(f"{seed:4d} | {start['greedy'][0]:.3f} / {start['sampled'][0]:.3f} | {cells[0]} | {cells[1]}")
        if learned:
            gain["learned"][seed] = learned["greedy"][1] - learned["greedy"][0]
            gain["learned_sampled"][seed] = learned["sampled"][1] - learned["sampled"][0]
        if simulator:
            gain["simulator"][seed] = simulator["greedy"][1] - simulator["greedy"][0]
        if learned and simulator:
            gain["learned_minus_simulator"][seed] = learned["greedy"][1] - simulator["greedy"][1]
    return gain


def judging_table(rows: dict, seeds, target: float | None = None) -> None:
    """Print, per seed, the learned world model's judging of the start's own episodes replayed in
    the simulator (`fidelity`'s row), and of the reference solutions; with `target`, whether each
    class and the references reach it (the issue's 0.90)."""
    print("\nseed | exact | agreement | real successes judged a success | real failures judged a failure "
          "| reference judged a success | exact along the reference"
          + (f" | target {target:.2f} each" if target is not None else ""))
    for seed in seeds:
        row = rows.get(("judging", seed))
        if row is None:
            print(f"{seed:4d} | not run")
            continue
        j, ref = row["rows"]["learned"], row["rows"].get("learned_reference", {})
        values = (j["success_judged_on_real_successes"], j["failure_judged_on_real_failures"],
                  ref.get("imagined_success_of_reference", float("nan")))
        met = "" if target is None else (" | met" if all(v >= target for v in values) else " | not met")
        print(f"{seed:4d} | {j['exact']:.3f} | {j['agreement']:.3f} | {values[0]:.3f} (real successes "
              f"{j['real_success'] * j['n']:.0f}) | {values[1]:.3f} | {values[2]:.3f} | "
              f"{ref.get('exact_along_reference', float('nan')):.3f}{met}")


if __name__ == "__main__":
    default = REPO / "research" / "regime_results" / "wm_r1_round12.jsonl"
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else (default if default.exists() else
                                                          REPO / "runs" / "control" / "results.jsonl")
    rows = rows_of(path)
    seeds = sorted({seed for _, seed in rows})
    print(f"rows from {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")
    gain = arms_table(rows, seeds, "WM-R1 inside the edit world model")
    judging_table(rows, seeds)
    print("\nTHE TEST (planned in 19.2):", claim("greedy, WM-R1 inside the learned model − start", gain["learned"], TEST_SEEDS))
    print("beside it, not tested:")
    every = seeds
    for label, key, chosen in (("greedy, WM-R1 (learned) − start, seeds 0-3", "learned", every),
                               ("sampled, WM-R1 (learned) − start", "learned_sampled", TEST_SEEDS),
                               ("greedy, GRPO on the simulator − start (the positive control)", "simulator", TEST_SEEDS),
                               ("greedy, WM-R1 (learned) − GRPO on the simulator, same updates", "learned_minus_simulator",
                                TEST_SEEDS),
                               ("greedy, WM-R1 (learned) − GRPO on the simulator, seeds 0-3", "learned_minus_simulator",
                                every)):
        print("  " + claim(label, gain[key], chosen))

    print("\n19.4 (exploratory), the world model with 60 tasks' reference paths expanded (sbedx60), seeds 2 and 3:\n  ROUND13_SEEDS=2,3 python research/wm_r1_round13_report.py research/regime_results/wm_r1_round12.jsonl")
