"""`wmkit train`: the job registry, config layering, one-line errors, accelerate helpers, vLLM flags."""
from __future__ import annotations

import dataclasses
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from wmkit import experiments, jobs
from wmkit.rlvr_world.config import RLVR

REPO = Path(__file__).resolve().parent.parent
SHIPPED = {"single_gpu", "multi_gpu_ddp", "fsdp", "deepspeed_zero2", "deepspeed_zero3", "cpu_2proc"}


def run_cli(*args):
    """`python -m wmkit ...` in a fresh interpreter."""
    return subprocess.run([sys.executable, "-m", "wmkit", *args], check=False, capture_output=True, text=True,
                          timeout=120, cwd=REPO)


def main_in_process(capsys, *args) -> tuple[int, str, str]:
    """`wmkit.__main__.main` here (argparse errors exit 2 through SystemExit): status, stdout, stderr."""
    from wmkit.__main__ import main

    try:
        status = main(list(args))
    except SystemExit as exit_:
        status = exit_.code
    out = capsys.readouterr()
    return status, out.out, out.err


# ============================================================================ command line


def test_list_names_every_job_without_importing_torch_or_trl():
    code = ("import sys; from wmkit.__main__ import main; rc = main(['train', '--list']); "
            "heavy = [m for m in ('torch', 'trl', 'transformers') if m in sys.modules]; "
            "print('HEAVY', heavy); sys.exit(rc)")
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60,
                         cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert "HEAVY []" in out.stdout
    lines = {line.split()[0]: line for line in out.stdout.splitlines() if line and not line.startswith("HEAVY")}
    assert {"world-model", "wmrl"} <= set(lines)
    assert "notebook 01" in lines["world-model"]


@pytest.mark.parametrize("args, message", [
    (("train", "world-model", "--profile", "smoke", "nonsense=1"), "wmkit: error: unknown key 'nonsense'; valid keys:"),
    (("train", "world-model", "--profile", "smoke", "seed=abc"), "wmkit: error: seed: expected int, got 'abc'"),
    (("train", "world-model", "--profile", "smoke", "epochs=fast"),
     "wmkit: error: world_model.epochs: expected float, got 'fast'"),
    (("train", "world-model", "--profile", "huge"), "wmkit: error: Unknown profile 'huge'"),
    (("train", "no-such-job"), "wmkit: error: unknown job 'no-such-job'; jobs:"),
    (("train", "world-model", "--accelerate-config", "nope"), "wmkit: error: unknown accelerate config 'nope'"),
    (("train", "world-model", "seed"), "wmkit: error: override 'seed' is not key=value"),
])
def test_bad_parameters_exit_2_with_one_line(capsys, args, message):
    status, _, err = main_in_process(capsys, *args)
    assert status == 2
    assert err.strip().startswith(message), err
    assert "\n" not in err.strip()


def test_bad_key_exits_2_with_one_line_from_a_fresh_interpreter():
    out = run_cli("train", "world-model", "--profile", "smoke", "nonsense=1")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("wmkit: error: unknown key 'nonsense'; valid keys: profile, seed, model, envs")
    assert out.stderr.count("\n") == 1


def test_yaml_then_overrides_then_profile_flag(tmp_path, capsys):
    import yaml

    config_file = tmp_path / "job.yaml"
    config_file.write_text("profile: smoke\nseed: 3\nworld_model:\n  epochs: 0.5\n  model:\n    hidden_size: 48\n"
                           "envs: [textgame]\n")
    status, out, err = main_in_process(capsys, "train", "world-model", "--config", str(config_file), "--dry-run",
                                       "seed=5", "num_layers=3")
    assert status == 0, err
    resolved = yaml.safe_load(out)
    assert resolved["profile"] == "smoke" and resolved["seed"] == 5  # override beats the file
    assert resolved["envs"] == ["textgame"]
    assert resolved["world_model"]["epochs"] == 0.5 and resolved["world_model"]["episodes"] == 60  # file, profile
    assert resolved["world_model"]["model"] == {**resolved["world_model"]["model"], "hidden_size": 48,
                                                "num_layers": 3}
    # --profile beats the file's profile: the defaults come from the cpu sizes, the file still applies.
    _, out, _ = main_in_process(capsys, "train", "world-model", "--config", str(config_file), "--profile", "cpu",
                                "--dry-run")
    resolved = yaml.safe_load(out)
    assert resolved["profile"] == "cpu" and resolved["world_model"]["episodes"] == 300
    assert resolved["world_model"]["epochs"] == 0.5 and resolved["seed"] == 3



@pytest.mark.parametrize("name, content, message", [
    # issue 40, defect 4: malformed YAML printed a 58-line yaml.parser traceback
    ("bad.yaml", "world_model: [1, 2\n", r"bad\.yaml' is not valid YAML: line 2, column 1: expected ',' or ']'"),
    ("tab.yaml", "seed: 1\n\tepochs: 2\n", r"tab\.yaml' is not valid YAML: line 2, column 1: "),
    ("nul.yaml", "seed: 1\x00\n", r"nul\.yaml' is not valid YAML: character 7: special characters are not allowed \(#x0000\)"),
    ("list.yaml", "- 1\n- 2\n", r"list\.yaml' must hold a mapping of keys to values, not a list"),
    ("text.yaml", "just words\n", r"text\.yaml' must hold a mapping of keys to values, not a str"),
    ("binary.yaml", b"\xff\xfe\x00seed", r"binary\.yaml' is not UTF-8 text"),
    ("missing.yaml", None, r"missing\.yaml' not found"),
    ("folder.yaml", "folder", r"folder\.yaml' is not a file"),
])
def test_bad_config_file_exits_2_with_one_line(tmp_path, capsys, name, content, message):
    import re

    path = tmp_path / name
    if content == "folder":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    status, out, err = main_in_process(capsys, "train", "world-model", "--profile", "smoke", "--config", str(path))
    assert status == 2 and out == "", err
    assert err.count("\n") == 1 and err.startswith("wmkit: error: config file '"), err
    assert re.search(message, err), err
    with pytest.raises(ValueError, match=message):
        jobs.load_yaml(path)


def test_unreadable_config_file_is_one_line(tmp_path, capsys, monkeypatch):
    path = tmp_path / "locked.yaml"
    path.write_text("seed: 1\n")

    def refuse(self, *args, **kwargs):  # chmod 000 does not stop root, so refuse the read here
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_text", refuse)
    monkeypatch.setattr(Path, "read_bytes", refuse)
    status, _, err = main_in_process(capsys, "train", "world-model", "--profile", "smoke", "--config", str(path))
    assert status == 2 and err.count("\n") == 1, err
    assert "locked.yaml' cannot be read: Permission denied" in err, err


def test_options_and_overrides_mix_in_any_order(capsys):
    status, out, err = main_in_process(capsys, "train", "world-model", "seed=2", "--profile", "smoke", "epochs=2",
                                       "--dry-run")
    assert status == 0, err
    assert "seed: 2" in out and "epochs: 2.0" in out


def test_accelerate_config_prints_the_launch_command(capsys):
    status, out, err = main_in_process(capsys, "train", "world-model", "--profile", "smoke", "seed=1",
                                       "--accelerate-config", "cpu_2proc", "--print-launch")
    assert status == 0, err
    line = out.strip()
    assert line.startswith("accelerate launch --config_file ")
    assert line.endswith("configs/accelerate/cpu_2proc.yaml -m wmkit train world-model seed=1 --profile smoke")


# ============================================================================ configs in-process


@dataclass
class _Inner:
    rate: float = 0.1
    steps: int = 10


@dataclass
class _Toy:
    name: str = "x"
    size: int | None = None
    flags: tuple[str, ...] = ("a",)
    on: bool = False
    inner: _Inner = field(default_factory=_Inner)
    other: _Inner = field(default_factory=_Inner)


def test_set_value_types_nesting_and_shortcuts():
    toy = _Toy()
    assert jobs.set_value(toy, "size", 3).size == 3
    assert jobs.set_value(toy, "size", "none").size is None
    assert jobs.set_value(toy, "flags", "b, c").flags == ("b", "c")
    assert jobs.set_value(toy, "inner.rate", 1).inner.rate == 1.0
    assert jobs.set_value(toy, "inner.rate", jobs.parse_override("rate=5e-4")[1]).inner.rate == 5e-4  # YAML: text
    assert jobs.set_value(toy, "inner", {"steps": 4}).inner == _Inner(0.1, 4)
    with pytest.raises(ValueError, match="ambiguous key 'rate': say which of inner.rate, other.rate"):
        jobs.set_value(toy, "rate", 1.0)
    with pytest.raises(ValueError, match="on: expected bool, got 1"):
        jobs.set_value(toy, "on", 1)
    with pytest.raises(ValueError, match="inner.steps: expected int, got 2.5"):
        jobs.set_value(toy, "inner.steps", 2.5)
    with pytest.raises(ValueError, match="unknown key 'inner.nope'"):
        jobs.set_value(toy, "inner.nope", 1)
    assert jobs.parse_override("flags=[b, c]") == ("flags", ["b", "c"])
    assert jobs.parse_override("name=7") == ("name", 7) and jobs.set_value(toy, "name", 7).name == "7"


def test_registering_a_job_is_one_call_and_lazy(monkeypatch, tmp_path):
    monkeypatch.setattr(experiments, "REGISTRY", dict(experiments.REGISTRY))
    jobs.register_job("later", "wmkit.not_written_yet:Config", "wmkit.not_written_yet:run", "a job to come")
    assert "later" in jobs.list_jobs()  # nothing imported to list it
    with pytest.raises(ValueError, match="cannot load 'wmkit.not_written_yet:Config'"):
        jobs.build_config("later")

    @jobs.job("toy", _Toy, "a toy job\nsecond line dropped")
    def run_toy(config):
        return {"name": config.name, "steps": config.inner.steps}

    config_file = tmp_path / "toy.yaml"
    config_file.write_text("name: from-file\ninner: {steps: 2}\n")
    config = jobs.build_config("toy", config_file=config_file, overrides=["inner.steps=7"])
    assert jobs.run_job("toy", config) == {"name": "from-file", "steps": 7}
    assert jobs.get_job("toy").description == "a toy job"
    assert experiments.REGISTRY["train_toy"].role == "train"  # one table: the jobs beside the experiments


def test_one_process_jobs_run_only_on_rank_0(monkeypatch):
    monkeypatch.setattr(experiments, "REGISTRY", dict(experiments.REGISTRY))
    import os

    # Rank 0 runs alone, with the launcher's variables gone (a Trainer inside must not wait for rank 1).
    jobs.register_job("solo", _Toy, lambda config: ("ran", os.environ.get("WORLD_SIZE")), "numpy job",
                      distributed=False)
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    assert jobs.run_job("solo", _Toy()) is None
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("LOCAL_RANK", "0")
    assert jobs.run_job("solo", _Toy()) == ("ran", None)


def test_every_notebook_job_is_registered_with_profile_defaults():
    assert {"world-model", "rlvr", "wm-r1", "wmrl"} <= set(experiments.train_entries())
    rlvr = jobs.build_config("rlvr", profile="smoke", overrides=["max_steps=2", "rlvr.grpo.prompts_per_step=6"])
    assert (rlvr.rlvr.grpo.max_steps, rlvr.rlvr.grpo.prompts_per_step, rlvr.lora) == (2, 6, None)
    assert jobs.default_config("rlvr", "gpu").rlvr == dataclasses.replace(RLVR["gpu"], regime=None)  # notebook 02's
    wm_r1 = jobs.build_config("wm-r1", profile="smoke", overrides=["arms=[wm_r1]", "seed=2"])
    assert (wm_r1.profile, wm_r1.arms, wm_r1.seed) == ("smoke", ("wm_r1",), 2)
    assert not jobs.get_job("wm-r1").distributed and jobs.get_job("rlvr").distributed


def test_trainer_arguments_pass_through_the_command_line():
    """``wmkit train rlvr report_to=tensorboard``: a key the job does not know that names a field of the
    trainer's arguments goes to ``trl_args`` (checked at once); any other unknown key is one clear line."""
    rlvr = jobs.build_config("rlvr", profile="smoke", overrides=["report_to=tensorboard", "trl_args.logging_steps=5",
                                                                 "push_to_hub=false"])
    assert rlvr.trl_args == {"report_to": "tensorboard", "logging_steps": 5, "push_to_hub": False}
    world_model = jobs.build_config("world-model", profile="smoke", overrides=["report_to=none"])
    assert world_model.trl_args == {"report_to": "none"}
    with pytest.raises(ValueError, match="unknown key 'report_too'.*nor is it a field of GRPOConfig"):
        jobs.build_config("rlvr", profile="smoke", overrides=["report_too=wandb"])
    with pytest.raises(ValueError, match="not a field of TrainingArguments"):
        jobs.build_config("world-model", profile="smoke", overrides=["trl_args.beta=0.1"])
    with pytest.raises(ValueError, match="unknown key 'report_to'"):  # a numpy job has no trainer
        jobs.build_config("wmrl", profile="smoke", overrides=["report_to=tensorboard"])


def test_wmrl_job_config_mirrors_its_command_line():
    config = jobs.build_config("wmrl", profile="smoke", overrides=["seeds=2", "check=4"])
    assert (config.profile, config.seeds, config.check) == ("smoke", 2, "4")
    with pytest.raises(ValueError, match="check must be 4, 5 or all"):
        jobs.run_wmrl(jobs.WMRLJob(profile="smoke", check="6"))


# ============================================================================ accelerate


def test_shipped_accelerate_configs_parse_and_are_package_data():
    from accelerate.commands.config.config_args import load_config_from_file

    configs = jobs.accelerate_configs()
    assert set(configs) == SHIPPED
    kinds = {name: load_config_from_file(str(path)).distributed_type.value for name, path in configs.items()}
    assert kinds == {"single_gpu": "NO", "multi_gpu_ddp": "MULTI_GPU", "fsdp": "FSDP", "deepspeed_zero2": "DEEPSPEED",
                     "deepspeed_zero3": "DEEPSPEED", "cpu_2proc": "MULTI_GPU"}
    package_data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    shipped = {p.stem for pattern in package_data["wmkit"] for p in (REPO / "wmkit").glob(pattern)}
    assert shipped >= SHIPPED


def test_launch_command_keeps_or_sets_the_process_count():
    command = jobs.launch_command("world-model", ["seed=1"], "cpu_2proc")
    assert "--num_processes" not in command  # cpu_2proc keeps its own 2
    assert command[-3:] == ["train", "world-model", "seed=1"]
    command = jobs.launch_command("world-model", [], "fsdp", num_processes=8)
    assert command[command.index("--num_processes") + 1] == "8"
    assert jobs.format_command(command).startswith("accelerate launch --config_file ")
    assert jobs.accelerate_config_path(jobs.accelerate_configs()["fsdp"]) == jobs.accelerate_configs()["fsdp"]


def _rank_sum(out_dir):
    """Runs in each launched process: the all-reduced sum of (rank + 1) over the ranks."""
    import torch
    import torch.distributed as dist
    from accelerate import PartialState

    state = PartialState(cpu=True)
    value = torch.tensor([float(state.process_index + 1)])
    if state.num_processes > 1:
        dist.all_reduce(value)
    Path(out_dir, f"rank{state.process_index}").write_text(f"{state.num_processes} {value.item()}")
    return value.item()


def test_notebook_launch_runs_in_process_without_gpus(tmp_path):
    assert jobs.notebook_launch(_rank_sum, tmp_path) == 1.0
    assert (tmp_path / "rank0").read_text() == "1 1.0"


@pytest.mark.slow
def test_notebook_launch_forks_two_cpu_processes_when_forced(tmp_path):
    """The multi-GPU branch (accelerate.notebook_launcher, fork) exercised on CPUs with gloo."""
    from tests.test_distributed import free_port

    script = (f"import sys; sys.path.insert(0, {str(REPO)!r}); from tests.test_jobs import _rank_sum; "
              "from wmkit.jobs import notebook_launch; "
              f"print(notebook_launch(_rank_sum, {str(tmp_path)!r}, num_processes=2, force=True, "
              f"use_port='{free_port()}'))")
    out = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=120,
                         cwd=REPO)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("None")  # results stay in the launched processes
    assert sorted(p.read_text() for p in tmp_path.glob("rank*")) == ["2 3.0", "2 3.0"]


# ============================================================================ vLLM flags


def test_vllm_settings_reach_trl_and_fail_clearly_when_unavailable(tmp_path, monkeypatch):
    import importlib.util

    from wmkit.core.grpo import GRPOArgsError, GRPORunConfig, check_vllm, trl_grpo_config

    config = trl_grpo_config(GRPORunConfig(output_dir=str(tmp_path), num_generations=4, prompts_per_step=2, max_steps=1,
                                           trl_args={"vllm_gpu_memory_utilization": 0.5}), vllm_mode="server")
    assert (config.use_vllm, config.vllm_mode, config.vllm_gpu_memory_utilization) == (False, "server", 0.5)
    with pytest.raises(GRPOArgsError, match="vllm_mode must be 'colocate' or 'server'"):
        check_vllm("remote")
    with pytest.raises(GRPOArgsError, match=r"vllm_gpu_memory_utilization must be in \(0, 1\]"):
        check_vllm("colocate", 0)
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "vllm" else real_find_spec(name, *a))
    with pytest.raises(GRPOArgsError, match="use_vllm=True but vLLM is not installed"):
        check_vllm()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object() if name == "vllm" else real_find_spec(name, *a))
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    with pytest.raises(GRPOArgsError, match="use_vllm=True needs a CUDA GPU"):
        check_vllm()
