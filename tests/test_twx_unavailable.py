"""Without Java 17, TextWorldExpress says why in one sentence instead of failing deep inside py4j."""
import os
import stat

import pytest

from wmkit.envs import twx


def fake_java(folder, script: str):
    """A `java` on PATH that runs `script` (sh) instead of a JVM."""
    path = folder / "java"
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return folder


@pytest.fixture
def unchecked_env(monkeypatch):
    """`twx._env` without its per-process cache, so a test sees this PATH's Java, not an earlier JVM."""
    monkeypatch.setattr(twx, "_env", twx._env.__wrapped__)


def test_missing_java_is_a_clear_reason(tmp_path, monkeypatch, unchecked_env):
    pytest.importorskip("textworld_express")
    monkeypatch.setenv("PATH", str(fake_java(tmp_path, 'echo "java: not found" >&2; exit 127')) + os.pathsep
                       + os.environ["PATH"])
    assert twx.java_major_version() is None
    reason = twx.unavailable_reason()
    assert reason and "Java 17" in reason and "openjdk-17-jre-headless" in reason
    with pytest.raises(twx.TextWorldExpressUnavailable, match="Java 17"):
        twx.reset("sorting", 0)


def test_old_java_is_named(tmp_path, monkeypatch, unchecked_env):
    pytest.importorskip("textworld_express")
    monkeypatch.setenv("PATH", str(fake_java(tmp_path, 'echo \'openjdk version "11.0.2" 2019-01-15\' >&2')) + os.pathsep
                       + os.environ["PATH"])
    assert twx.java_major_version() == 11
    assert "Java 11" in twx.unavailable_reason()


def test_version_strings(tmp_path, monkeypatch):
    for said, major in (('java version "1.8.0_292"', 8), ('openjdk version "17.0.15" 2025-04-15', 17),
                        ('openjdk version "21" 2023-09-19', 21)):
        monkeypatch.setenv("PATH", str(fake_java(tmp_path, f"echo '{said}' >&2")))
        assert twx.java_major_version() == major, said
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert twx.java_major_version() is None


def test_without_java_the_benchmark_says_not_measured_for_the_twx_rows(tmp_path, monkeypatch, unchecked_env):
    """Java hidden: the benchmark's RWML TextWorldExpress experiment is skipped, not failed, and each
    of its rows says "not measured" with the reason (the report only: nothing heavy runs)."""
    pytest.importorskip("textworld_express")
    from wmkit.bench import claims as bench_claims
    from wmkit.bench import runner as bench

    monkeypatch.setenv("PATH", str(fake_java(tmp_path, 'echo "java: not found" >&2; exit 127')) + os.pathsep
                       + os.environ["PATH"])
    reason = bench.unavailable_reason(bench_claims.EXPERIMENTS["rwml"])
    assert reason and "Java 17" in reason
    only_twx = {"rwml": bench_claims.EXPERIMENTS["rwml"]}  # not `only=["rwml"]`: that names the paper, both experiments
    claims = [c for c in bench_claims.CLAIMS if c.experiment == "rwml"]
    result = bench.run_bench("smoke", 1, runs_root=tmp_path / "runs", experiments=only_twx, claims=claims,
                             log=lambda line: None)
    assert result.ran == [] and result.skipped == {"rwml": reason}
    assert claims and all(r["verdict"] == "not measured" and "Java 17" in r["reason"] for r in result.report["rows"])
