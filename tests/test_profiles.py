import pytest

from wmkit.profiles import PROFILES, get_profile, resolve_profile_name


def test_auto_resolves_to_a_real_profile():
    assert resolve_profile_name("auto") in ("cpu", "gpu")
    assert resolve_profile_name(" Smoke ") == "smoke"


def test_unknown_profile_and_bad_types_are_clear_errors():
    with pytest.raises(ValueError, match="Unknown profile 'fast'"):
        get_profile("fast")
    with pytest.raises(TypeError):
        get_profile(3)
    with pytest.raises(ValueError, match="Unknown world-model setting"):
        get_profile("smoke", epochz=3)


def test_overrides_apply_and_profiles_grow():
    assert get_profile("smoke", episodes=5).world_model.episodes == 5
    sizes = [PROFILES[n].world_model.episodes for n in ("smoke", "cpu", "gpu")]
    assert sizes == sorted(sizes)


# ---------------------------------------------------------------- one size table

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

from wmkit.profiles import PROFILE_NAMES, SECTIONS, Profile
from wmkit.rlvr_world.config import BENCH_RLVR, RLVR
from wmkit.rwml.config import POLICY, RWML, TEXTGAME
from wmkit.video.config import VIDEO
from wmkit.wm_r1.config import BENCH_WM_R1, WM_R1
from wmkit.wmrl.config import BENCH_WMRL, WMRL

PAPER_TABLES = (RLVR, BENCH_RLVR, POLICY, TEXTGAME, RWML, VIDEO, WM_R1, BENCH_WM_R1, WMRL, BENCH_WMRL)

WMKIT = Path(__file__).resolve().parent.parent / "wmkit"


def test_every_profile_has_every_section_and_every_paper_every_profile():
    assert set(PROFILES) == set(PROFILE_NAMES)
    fields = {f.name for f in dataclasses.fields(Profile)}
    assert set(SECTIONS) <= fields
    for name, profile in PROFILES.items():
        assert profile.name == name
        for section in SECTIONS:
            assert dataclasses.is_dataclass(getattr(profile, section)), (name, section)
    for table in PAPER_TABLES:
        assert set(table) == set(PROFILE_NAMES)
    assert all(RWML[n].world_model is RLVR[n] for n in PROFILE_NAMES)  # notebook 02's RWML reads rlvr's twx_*
    with pytest.raises(ValueError, match="no part"):
        PROFILES["smoke"].section("rlvr")


def test_the_benchmarks_smoke_sizes_are_smaller_and_cpu_gpu_are_the_notebooks():
    assert BENCH_RLVR["smoke"].grpo.max_steps < RLVR["smoke"].grpo.max_steps
    assert BENCH_WM_R1["smoke"].sft_tasks < WM_R1["smoke"].sft_tasks
    assert BENCH_WMRL["smoke"].bandit == WMRL["cpu"].bandit  # the controlled problem at cpu length
    for name in ("cpu", "gpu"):
        assert (BENCH_RLVR[name], BENCH_WMRL[name], BENCH_WM_R1[name]) == (RLVR[name], WMRL[name], WM_R1[name])


def test_a_profile_object_passes_through_get_profile():
    assert get_profile(PROFILES["cpu"]) is PROFILES["cpu"]


def test_profiles_and_the_papers_configs_import_no_torch_nor_numpy():
    code = ("import sys, wmkit.profiles as p, wmkit.rlvr_world.config, wmkit.rwml.config, wmkit.wm_r1.config, "
            "wmkit.wmrl.config, wmkit.video.config; "
            "heavy = sorted(m for m in ('torch', 'numpy', 'transformers', 'trl') if m in sys.modules); "
            "print(heavy); sys.exit(1 if heavy else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False,
                         cwd=WMKIT.parent)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_shapes_are_the_ones_the_libraries_use():
    from wmkit import profiles
    from wmkit.core import models
    from wmkit.wmrl import config, method

    assert models.TinyModelConfig is profiles.TinyModelConfig
    assert method.WMRLConfig is config.WMRLConfig


# A size table is a module-level dict keyed by profile name, or a name of the old tables. Only
# wmkit/profiles.py (what every part shares) and a paper's config.py may hold one, inside a region of
# values (wmkit.bench.source_key: the values reach a record through its config, not its key).
_TABLE = re.compile(r"^(SIZES|[A-Z_]*SIZES)\s*[:=]|^\s*def sizes_for\(|^[A-Za-z_]\w*\s*(:[^=]+)?=\s*\{\s*$"
                    r"|[\"'](smoke|cpu|gpu)[\"']\s*:\s*[A-Z]\w*(Sizes|Profile|Config)\(", re.MULTILINE)
_VALUES = re.compile(r"^# =+ values \(not in record keys\).*?^# =+ end of values", re.MULTILINE | re.DOTALL)


def size_tables(text: str) -> list[str]:
    return [m.group(0).strip() for m in _TABLE.finditer(text) if m.group(0).strip() and (
        not m.group(0).rstrip().endswith("{") or re.search(r"[\"'](smoke|cpu|gpu)[\"']\s*:", text[m.end():m.end() + 400]))]


def test_the_size_table_check_catches_a_re_added_table():
    assert size_tables('SIZES: dict[str, X] = {\n    "smoke": X(steps=1),\n}\n')
    assert size_tables('SIZES = {"smoke": 1}\n')
    assert size_tables('_TABLE = {\n    "cpu": PolicySizes(steps=3),\n}\n')
    assert size_tables('def sizes_for(profile_name):\n    return 1\n')
    assert not size_tables('ARMS = ("sft", "wm_r1")\nPAPER = {\n    "gain_7b": 9.0,\n}\n')


def test_size_tables_are_in_profiles_or_a_papers_config_inside_their_values():
    offenders = {}
    for path in sorted(WMKIT.rglob("*.py")):
        name = str(path.relative_to(WMKIT.parent))
        if name == "wmkit/profiles.py":  # the shared table (and the notebooks' time targets)
            continue
        text = path.read_text()
        in_config = path.name == "config.py" and path.parent.parent == WMKIT
        found = size_tables(_VALUES.sub("", text) if in_config else text)
        if found:
            offenders[name] = found
    assert not offenders, f"sizes belong in a values region of profiles.py or a paper's config.py: {offenders}"
    assert size_tables((WMKIT / "rlvr_world" / "config.py").read_text())  # and the check does see a real one


def test_what_rl_trains_per_profile_is_what_notebook_02_says():
    """Notebook 02: every parameter at smoke and cpu (the from-scratch model), LoRA adapters at gpu."""
    from wmkit.rlvr_world.experiment import uses_lora

    assert {name: uses_lora({"model": p.default_model}) for name, p in PROFILES.items()} == {
        "smoke": False, "cpu": False, "gpu": True}
