"""Copy executed notebooks from runs/<profile>/ to executed/<profile>/ for readers of the repository.

    python tools/publish_executed.py cpu 02 03      # the notebooks whose name starts with 02 or 03
    python tools/publish_executed.py cpu --from ../clone/runs/cpu   # a run made in another checkout


Outputs, figures and printed tables are kept; stderr streams (progress bars, library warnings)
are dropped, since they make a notebook megabytes long and say nothing a reader needs. The copy
gets a first markdown cell naming the profile, when papermill executed it, and the commit at
which it was published (the run itself does not record its commit: publish right after running).
Absolute paths of the machine that ran it (the checkout, the runs folder) become paths relative to
the repository root, and the copy is checked with nbformat (every cell has an id) before it is written.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]


def machine_roots(nb: dict, profile: str) -> list[tuple[str, str]]:
    """(absolute path, what it becomes) for the folders of the machine that ran `nb`: its runs
    folder (papermill's RUNS_DIR, else the output's folder) -> runs/<profile>, and the checkout
    that held the notebook (papermill's input_path) and this one -> the repository root."""
    ran = nb.get("metadata", {}).get("papermill", {})
    runs = ran.get("parameters", {}).get("RUNS_DIR") or (
        str(Path(ran["output_path"]).parent) if ran.get("output_path") else None)
    checkouts = {str(REPO)}
    if ran.get("input_path") and Path(ran["input_path"]).is_absolute():
        checkouts.add(str(Path(ran["input_path"]).parents[1]))
    pairs = [(runs.rstrip("/"), f"runs/{profile}")] if runs and Path(runs).is_absolute() else []
    # Longest first, so that a runs folder inside a checkout is replaced before the checkout.
    pairs += [(c.rstrip("/") + "/", "") for c in checkouts]
    return sorted(pairs, key=lambda pair: len(pair[0]), reverse=True)


def without_machine_paths(nb: dict, profile: str) -> dict:
    """`nb` with the absolute paths of `machine_roots` made relative, in every output, source
    and metadata string."""
    text = json.dumps(nb, ensure_ascii=False)
    for absolute, relative in machine_roots(nb, profile):
        text = text.replace(json.dumps(absolute)[1:-1], relative)
    return json.loads(text)


def checked(nb: dict) -> dict:
    """nbformat-valid `nb` (raises nbformat.ValidationError otherwise)."""
    nbformat.validate(nbformat.from_dict(nb))
    return nb


def publish(profile: str, prefixes: list[str], source: Path | None = None) -> list[Path]:
    """Copy runs/<profile>/*.ipynb (or those of `source`, a runs folder of another checkout: the commit
    named is that checkout's HEAD, the code the run used) to executed/<profile>/. The CPU recorded is
    this machine's: publish on the machine that ran them."""
    from wmkit.runs import cpu_model

    source = Path(source) if source else REPO / "runs" / profile
    target = REPO / "executed" / profile
    target.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=source, capture_output=True, check=False,
                            text=True).stdout.strip() or "unknown"
    cpu = cpu_model()
    written = []
    for path in sorted(source.glob("*.ipynb")):
        if prefixes and not any(path.name.startswith(p) for p in prefixes):
            continue
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                cell["outputs"] = [o for o in cell.get("outputs", [])
                                   if not (o.get("output_type") == "stream" and o.get("name") == "stderr")]
        ran = nb.get("metadata", {}).get("papermill", {})
        when = f"executed {ran['end_time'][:16].replace('T', ' ')} UTC in {ran.get('duration', 0):.0f} s, " \
            if ran.get("end_time") else ""
        banner = (f"*Executed copy: profile `{profile}`, {when}on {cpu['cpu_model']}, run at commit `{commit}`, "
                  f"from `runs/{profile}/{path.name}` (stderr streams removed). Run it yourself with "
                  f"`make reproduce PROFILE={profile}`.*")
        nb.setdefault("metadata", {})["wmkit_published"] = {"commit": commit, **cpu}
        # A published copy has no .py source to pair with (the notebooks' pairing would make JupyterLab
        # write executed/<profile>/NN_*.py beside it on save).
        nb["metadata"].pop("jupytext", None)
        nb["cells"].insert(0, {"cell_type": "markdown", "id": "published-banner", "metadata": {}, "source": banner})
        nb = checked(without_machine_paths(nb, profile))
        out = target / path.name
        out.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
        written.append(out)
    return written


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    args = sys.argv[1:]
    runs_from = None
    if "--from" in args:
        at = args.index("--from")
        runs_from, args = Path(args[at + 1]), args[:at] + args[at + 2:]
    for p in publish(args[0], args[1:], runs_from):
        print(f"wrote {p.relative_to(REPO)} ({p.stat().st_size // 1024} KB)")
