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
