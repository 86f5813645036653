"""Each notebook's method as a loop of boxes and arrows, drawn before any of its code.

One function per notebook, each returning a matplotlib figure (drawn by code, so it lives with the
kit and changes with it). A box is a thing (a model, a verifier, data); an arrow is what flows
between them, labelled. The boxes' words are the notebooks' words.

Matplotlib is imported inside :func:`draw`, so ``import wmkit`` stays light.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# box kinds -> face colour: a model that learns, a fixed judge or environment, data or a number
KIND_COLORS = {"model": "#cfe3f7", "judge": "#f9e0b8", "data": "#e8e8e8", "update": "#d6efd0"}


@dataclass(frozen=True)
class Box:
    name: str
    """The key arrows refer to."""
    text: str
    x: float
    y: float
    kind: str = "data"
    """One of :data:`KIND_COLORS`."""
    width: float = 0.2
    height: float = 0.13


@dataclass(frozen=True)
class Arrow:
    start: str
    end: str
    text: str = ""
    bend: float = 0.0
    """Curvature of the arrow (0: straight; a loop back bends)."""
    dashed: bool = False


@dataclass(frozen=True)
class Diagram:
    title: str
    boxes: Sequence[Box]
    arrows: Sequence[Arrow]
    note: str = ""
    """One line under the drawing: what the loop leaves out or where it is in the notebook."""

    def check(self) -> None:
        names = [b.name for b in self.boxes]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.title}: two boxes share a name")
        missing = ({a.start for a in self.arrows} | {a.end for a in self.arrows}) - set(names)
        if missing:
            raise ValueError(f"{self.title}: arrows to boxes that do not exist: {sorted(missing)}")
        unknown = {b.kind for b in self.boxes} - set(KIND_COLORS)
        if unknown:
            raise ValueError(f"{self.title}: unknown box kinds {sorted(unknown)}")


def draw(diagram: Diagram, size: tuple[float, float] = (10, 4.2)):
    """The figure of `diagram`: rounded boxes coloured by kind, labelled arrows, the title above and
    the note below; a legend of the kinds used."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch

    diagram.check()
    fig, ax = plt.subplots(figsize=size)
    ax.set(xlim=(0, 1), ylim=(0, 1))
    ax.axis("off")
    boxes = {b.name: b for b in diagram.boxes}
    patches = {}
    for b in diagram.boxes:
        patch = FancyBboxPatch((b.x - b.width / 2, b.y - b.height / 2), b.width, b.height,
                               boxstyle="round,pad=0.01,rounding_size=0.02", fc=KIND_COLORS[b.kind], ec="#555555",
                               lw=1.0, mutation_aspect=size[0] / size[1])
        ax.add_patch(patch)
        patches[b.name] = patch
        ax.text(b.x, b.y, b.text, ha="center", va="center", fontsize=8.5, wrap=True)
    for a in diagram.arrows:
        start, end = boxes[a.start], boxes[a.end]
        arrow = FancyArrowPatch((start.x, start.y), (end.x, end.y), patchA=patches[a.start], patchB=patches[a.end],
                                arrowstyle="-|>", mutation_scale=12, lw=1.1, color="#333333",
                                connectionstyle=f"arc3,rad={a.bend}", linestyle="--" if a.dashed else "-",
                                shrinkA=4, shrinkB=4)
        ax.add_patch(arrow)
        if a.text:
            # the label at the middle of the arc: arc3 bends in display units, so the offset of the
            # arc's midpoint, half the control point's, is rescaled by the axes' aspect
            mx, my = (start.x + end.x) / 2, (start.y + end.y) / 2
            dx, dy = end.x - start.x, end.y - start.y
            aspect = size[0] / size[1]
            mx, my = mx + 0.5 * a.bend * dy / aspect, my - 0.5 * a.bend * dx * aspect
            ax.text(mx, my, a.text, ha="center", va="center", fontsize=7.5, color="#222222",
                    bbox={"fc": "white", "ec": "none", "alpha": 0.85, "pad": 1.0})
    used = [k for k in KIND_COLORS if any(b.kind == k for b in diagram.boxes)]
    words = {"model": "learns", "judge": "fixed: judges or executes", "data": "data, a number", "update": "an update"}
    ax.legend(handles=[Patch(fc=KIND_COLORS[k], ec="#555555", label=words[k]) for k in used], loc="lower right",
              fontsize=7, frameon=False, ncol=len(used), bbox_to_anchor=(1.0, -0.08))
    ax.set_title(diagram.title, fontsize=11)
    if diagram.note:
        ax.text(0.0, -0.06, diagram.note, transform=ax.transAxes, fontsize=7.5, style="italic", va="top")
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- one loop per notebook

WORLD_MODEL = Diagram(
    "01 · A world model is a sequence model: q(s, a) → o(s'), trained by MLE",
    [Box("env", "environment\n(text game, phone)", 0.1, 0.75, "judge"),
     Box("pair", "transition\n(s, a, s′)", 0.35, 0.75),
     Box("prompt", "prompt q(s, a)\ntarget: the diff s → s′", 0.62, 0.75),
     Box("wm", "world model\n(a small LM)", 0.88, 0.45, "model"),
     Box("loss", "−log p(diff tokens | q)\nanswer tokens only", 0.62, 0.2, "update"),
     Box("pred", "predicted diff\n→ applied to s", 0.35, 0.2),
     Box("score", "exact match with s′\nchanged / unchanged,\nbaselines", 0.1, 0.2, "judge")],
    [Arrow("env", "pair", "play episodes"), Arrow("pair", "prompt", "tokenize"),
     Arrow("prompt", "wm", "teacher forcing", -0.2), Arrow("wm", "loss", "logits", -0.2),
     Arrow("loss", "wm", "gradient step", -0.35), Arrow("wm", "pred", "generate", 0.25, dashed=True),
     Arrow("pred", "score", "test split")],
    "dashed: evaluation only (greedy and sampled), never a training signal here")

RLVR = Diagram(
    "02 · RLVR: the world model samples, a verifier scores, GRPO raises the better samples",
    [Box("data", "transition (s, a, s′)\nchanged + some unchanged", 0.12, 0.75),
     Box("wm", "world model πθ\n(MLE start, notebook 01)", 0.45, 0.75, "model"),
     Box("samples", "G predicted next\nstates ŝ′₁ … ŝ′_G", 0.8, 0.75),
     Box("verifier", "verifier vs the real s′\nexact · task-specific · F1\nRWML: cos(E(ŝ′), E(s′)) ≥ τ", 0.8, 0.22,
         "judge", 0.26, 0.17),
     Box("adv", "group advantages\nAᵢ = (rᵢ − mean r) / std r", 0.45, 0.22),
     Box("update", "GRPO step (clipped,\nKL to the start)", 0.12, 0.22, "update")],
    [Arrow("data", "wm", "q(s, a)"), Arrow("wm", "samples", "sample at T = 1"),
     Arrow("samples", "verifier", "score each"), Arrow("verifier", "adv", "rewards r₁ … r_G"),
     Arrow("adv", "update", "all equal → no gradient"), Arrow("update", "wm", "new θ", -0.25)],
    "RWML's reward needs no task label: an embedding threshold τ chosen on held-out pairs")

WM_R1 = Diagram(
    "03 · WM-R1: the agent trains entirely inside a world model; the simulator only evaluates",
    [Box("policy", "policy (GUI agent)\nSFT start", 0.12, 0.62, "model"),
     Box("turn", "a turn: Thought …\nAction: tap(4), or\ncall_wm(tap(4))", 0.42, 0.62, "data", 0.2, 0.17),
     Box("wm", "world model: notebook\n01's, a noisy oracle,\nor a learned one", 0.75, 0.62, "judge", 0.22, 0.17),
     Box("judge", "success judged on\nthe predicted screen", 0.75, 0.17, "judge"),
     Box("reward", "R = R_succ + 0.5·R_L\n+ 0.1·R_WM per group", 0.42, 0.17),
     Box("update", "GRPO step\n(scale_rewards=none)", 0.12, 0.17, "update"),
     Box("sim", "real simulator", 0.95, 0.38, "judge", 0.1, 0.11)],
    [Arrow("policy", "turn", "screen, task"), Arrow("turn", "wm", "action or\nimagined call"),
     Arrow("wm", "policy", "next screen (an imagined call: the step is not counted)", 0.28),
     Arrow("wm", "judge", "episode ends"), Arrow("judge", "reward", "per rollout"),
     Arrow("reward", "update", "advantages"), Arrow("update", "policy", "new θ"),
     Arrow("sim", "judge", "evaluation only", 0.0, dashed=True)],
    "the fidelity ladder swaps the world model for the simulator with error p: the method apart from the model")

WMRL = Diagram(
    "04 · WMRL: a few anchor groups executed for real correct the world model's grades",
    [Box("policy", "policy πθ\n(configs)", 0.08, 0.55, "model", 0.13),
     Box("groups", "N groups of\nG experiments", 0.27, 0.55, "data", 0.15),
     Box("exec", "real execution:\nanchor groups (a share\nα, ≥ 1 a step)", 0.5, 0.85, "judge", 0.2, 0.17),
     Box("wm", "world model\ngrades ĝ", 0.5, 0.28, "judge", 0.15),
     Box("debias", "isotonic map f\non anchor pairs (ĝ, g)", 0.72, 0.55, "update", 0.18),
     Box("fuse", "advantages:\nanchors × w,\nothers from f(ĝ)", 0.92, 0.55, "data", 0.15, 0.17)],
    [Arrow("policy", "groups", "sample"), Arrow("groups", "exec", "anchors"),
     Arrow("groups", "wm", "every group"), Arrow("exec", "debias", "g"), Arrow("wm", "debias", "ĝ"),
     Arrow("debias", "fuse", "f(ĝ)"), Arrow("exec", "fuse", "real g", -0.2),
     Arrow("fuse", "policy", "policy-gradient step", -0.5)],
    "anchors only (no world model) is the kit's control: do the world-model groups help beyond the anchors?")

BENCHMARK = Diagram(
    "05 · A claim's verdict: seeds → records → paired differences → interval → one verdict",
    [Box("claim", "a paper's claim\n(direction, line)", 0.1, 0.7),
     Box("runs", "the experiment,\none run per seed", 0.35, 0.7, "model"),
     Box("records", "a record per seed\n(config, code key, CPU)", 0.62, 0.7),
     Box("diff", "per seed: kit value\n(paired difference)", 0.88, 0.7),
     Box("interval", "95% t-interval\nover the seeds", 0.62, 0.22, "judge"),
     Box("verdict", "reproduced · inconclusive\n· contradicted · not measured", 0.25, 0.22, "judge", 0.3)],
    [Arrow("claim", "runs", "measured by"), Arrow("runs", "records", "python -m wmkit bench"),
     Arrow("records", "diff", "claim's fields"), Arrow("diff", "interval", "mean ± t·s/√n"),
     Arrow("interval", "verdict", "where is the line?")],
    "a missing record is 'not measured': no number without the record that made it")

VIDEO = Diagram(
    "06 · A video world model: frames become codes, an LM predicts the next frame's codes",
    [Box("frames", "MiniGrid frames\n(48×48 RGB)", 0.1, 0.72, "judge"),
     Box("codes", "patch codebook:\none code per cell", 0.36, 0.72),
     Box("wm", "world model (tiny LM)\nMLE, then GRPO", 0.64, 0.72, "model"),
     Box("pred", "G sampled next\nframes, decoded", 0.9, 0.45),
     Box("reward", "r = −(L1 + agent term)\nagainst the real frame", 0.64, 0.2, "judge", 0.24),
     Box("update", "GRPO step", 0.3, 0.2, "update")],
    [Arrow("frames", "codes", "k-means patches"), Arrow("codes", "wm", "codes + action"),
     Arrow("wm", "pred", "sample", -0.2), Arrow("pred", "reward", "decode, compare", -0.2),
     Arrow("reward", "update", "group advantages"), Arrow("update", "wm", "new θ", -0.2)],
    "the agent term is the kit's stand-in for LPIPS: −L1 alone pays less for an erased agent than a misplaced one")

NOTEBOOK_DIAGRAMS = {"01": WORLD_MODEL, "02": RLVR, "03": WM_R1, "04": WMRL, "05": BENCHMARK, "06": VIDEO}
"""Each notebook's loop, by the notebook's number."""


def notebook_diagram(number: str):
    """The figure of notebook `number`'s loop ("01" .. "06")."""
    if number not in NOTEBOOK_DIAGRAMS:
        raise ValueError(f"no diagram for notebook {number!r}; there are {', '.join(NOTEBOOK_DIAGRAMS)}")
    return draw(NOTEBOOK_DIAGRAMS[number])
