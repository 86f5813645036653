import subprocess
import sys


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "wmkit", *args], capture_output=True, text=True, timeout=120)


def test_unknown_profile_is_one_clear_line():
    out = run_cli("world-model", "--profile", "huge")
    assert out.returncode == 2
    assert out.stderr.strip() == "wmkit: error: Unknown profile 'huge': choose one of auto, smoke, cpu, gpu"


def test_bad_seed_type_is_rejected_by_the_parser():
    out = run_cli("world-model", "--seed", "abc")
    assert out.returncode == 2 and "invalid int value" in out.stderr
