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

WMKIT = Path(__file__).resolve().parent.parent / "wmkit"


def test_every_profile_has_every_section():
    assert set(PROFILES) == set(PROFILE_NAMES)
    fields = {f.name for f in dataclasses.fields(Profile)}
    assert set(SECTIONS) <= fields
    for name, profile in PROFILES.items():
        assert profile.name == name
        for section in SECTIONS:
            value = getattr(profile, section)
            assert dataclasses.is_dataclass(value), (name, section)
        for part in ("rlvr", "rwml", "wm_r1", "wmrl"):  # the benchmark's sizes of every part
            assert type(profile.section(f"bench.{part}")) is type(getattr(profile, part)), (name, part)
        assert profile.rwml.world_model == profile.rlvr  # notebook 02's RWML experiment reads rlvr's twx_*
        assert profile.section("bench.rlvr") is profile.bench.rlvr
    with pytest.raises(ValueError, match="no section"):
        PROFILES["smoke"].section("bench.nope")


def test_the_benchmarks_smoke_sizes_are_smaller_and_cpu_gpu_are_the_notebooks():
    smoke = PROFILES["smoke"]
    assert smoke.bench.rlvr.steps < smoke.rlvr.steps and smoke.bench.wm_r1.sft_tasks < smoke.wm_r1.sft_tasks
    assert smoke.bench.wmrl.bandit == PROFILES["cpu"].wmrl.bandit  # the controlled problem at cpu length
    for name in ("cpu", "gpu"):
        profile = PROFILES[name]
        assert (profile.bench.rlvr, profile.bench.wmrl, profile.bench.wm_r1) == (
            profile.rlvr, profile.wmrl, profile.wm_r1)


def test_a_profile_object_passes_through_get_profile():
    assert get_profile(PROFILES["cpu"]) is PROFILES["cpu"]


def test_profiles_imports_no_torch_nor_numpy():
    code = ("import sys, wmkit.profiles as p; p.get_profile('smoke').bench.wm_r1; "
            "heavy = sorted(m for m in ('torch', 'numpy', 'transformers', 'trl') if m in sys.modules); "
            "print(heavy); sys.exit(1 if heavy else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False,
                         cwd=WMKIT.parent)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_shapes_are_the_ones_the_libraries_use():
    from wmkit import profiles
    from wmkit.core import models

    assert models.TinyModelConfig is profiles.TinyModelConfig
    pytest.importorskip("numpy")
    from wmkit.wmrl import method

    assert method.WMRLConfig is profiles.WMRLConfig


# A size table is a module-level dict keyed by profile name, or a name of the old tables. Only
# wmkit/profiles.py may hold one.
_TABLE = re.compile(r"^(SIZES|[A-Z_]*SIZES)\s*[:=]|^\s*def sizes_for\(|^[A-Za-z_]\w*\s*(:[^=]+)?=\s*\{\s*$"
                    r"|[\"'](smoke|cpu|gpu)[\"']\s*:\s*[A-Z]\w*(Sizes|Profile|Config)\(", re.MULTILINE)


def size_tables(text: str) -> list[str]:
    return [m.group(0).strip() for m in _TABLE.finditer(text) if m.group(0).strip() and (
        not m.group(0).rstrip().endswith("{") or re.search(r"[\"'](smoke|cpu|gpu)[\"']\s*:", text[m.end():m.end() + 400]))]


def test_the_size_table_check_catches_a_re_added_table():
    assert size_tables('SIZES: dict[str, X] = {\n    "smoke": X(steps=1),\n}\n')
    assert size_tables('SIZES = {"smoke": 1}\n')
    assert size_tables('_TABLE = {\n    "cpu": PolicySizes(steps=3),\n}\n')
    assert size_tables('def sizes_for(profile_name):\n    return 1\n')
    assert not size_tables('ARMS = ("sft", "wm_r1")\nPAPER = {\n    "gain_7b": 9.0,\n}\n')


# No exception: the benchmark's seeds (wmkit.design's confirmatory blocks) are not sizes of any
# experiment but which seeds its claims are judged on, and they are no table of sizes either.
NOT_SIZES: dict[str, list[str]] = {}


def test_no_module_but_profiles_defines_a_size_table():
    offenders = {}
    for path in sorted(WMKIT.rglob("*.py")):
        if path.name == "profiles.py" and path.parent == WMKIT:
            continue
        found = [t for t in size_tables(path.read_text())
                 if t not in NOT_SIZES.get(str(path.relative_to(WMKIT.parent)), [])]
        if found:
            offenders[str(path.relative_to(WMKIT.parent))] = found
    assert not offenders, f"sizes belong in wmkit/profiles.py: {offenders}"
    assert size_tables((WMKIT / "profiles.py").read_text())  # and the check does see the real one


def test_what_rl_trains_per_profile_is_what_notebook_02_says():
    """Notebook 02: every parameter at smoke and cpu (the from-scratch model), LoRA adapters at gpu."""
    from wmkit.profiles import PROFILES
    from wmkit.rlvr_world.experiment import uses_lora

    assert {name: uses_lora({"model": p.default_model}) for name, p in PROFILES.items()} == {
        "smoke": False, "cpu": False, "gpu": True}
