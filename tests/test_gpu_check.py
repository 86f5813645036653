"""The one-GPU path: `python -m wmkit gpu-check` (dry run on the CPU, for real where CUDA is), the
bf16 -> fp16 fallback, NF4 quantisation in memory, the gpu profile's pretrained default, QLoRA in
RLVR, and the vLLM request. NF4 on a CPU only at layer widths bitsandbytes' CPU kernels accept
(in_features a multiple of 64, out_features of 32: AMX Xeons reject narrower ones)."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from wmkit.core import models
from wmkit.wm_r1.config import WM_R1

REPO = Path(__file__).resolve().parents[1]


# ============================================================================ gpu-check


def test_cpu_dry_run_measures_every_row_and_writes_json(tmp_path):
    """The command the GPU runs, on tiny shapes and the smoke profile: every row ok, in under a minute."""
    pytest.importorskip("bitsandbytes")
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    out = tmp_path / "check.json"
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "wmkit", "gpu-check", "--cpu-dry-run", "--out", str(out)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    seconds = time.perf_counter() - start
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["dry_run"] and report["compute_dtype"] == "float32"
    rows = {row["name"]: row for row in report["policies"]}
    assert set(rows) == {"tiny-qwen2 lora", "tiny-qwen2 qlora"}
    for row in rows.values():
        assert row["status"] == "ok", row
        assert row["values"]["grpo_step_s"] > 0 and row["values"]["generated_tokens_per_s"] > 0
        assert 0 < row["values"]["trainable_parameters"] < row["values"]["parameters"]
    assert rows["tiny-qwen2 qlora"]["values"]["weights"] == "nf4"
    steps = {row["name"]: row for row in report["profile_steps"]}
    assert list(steps) == ["smoke: world-model SFT step", "smoke: RLVR step", "smoke: WM-R1 step"]
    assert all(row["status"] == "ok" and row["values"]["seconds"] > 0 for row in steps.values()), steps
    assert "tiny-qwen2 qlora" in done.stdout and "done in" in done.stdout
    # "Under a minute" on an idle machine; a loaded 2-core CI box gets some slack.
    assert seconds < 150, f"dry run took {seconds:.0f} s"


def test_out_of_memory_is_a_row_and_the_check_goes_on(tmp_path, monkeypatch):
    from wmkit import gpucheck

    calls = []

    def fake_measure(shape, mode, settings, work_dir):
        calls.append((shape, mode))
        if mode == "qlora":
            err = torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
            err.add_note("stage: GRPO step")
            raise err
        return gpucheck.CheckRow(f"{shape} {mode}", "ok", {"grpo_step_s": 1.0})

    monkeypatch.setattr(gpucheck, "measure_policy", fake_measure)
    settings = gpucheck.GPUCheckSettings(policies=("tiny-qwen2",), device="cpu", profile_steps=False)
    report = gpucheck.run_gpu_check(settings, tmp_path / "r.json", log=lambda line: None)
    assert [row["status"] for row in report["policies"]] == ["ok", "OOM at GRPO step"]
    assert calls == [("tiny-qwen2", "lora"), ("tiny-qwen2", "qlora")]
    assert json.loads((tmp_path / "r.json").read_text())["policies"][1]["status"] == "OOM at GRPO step"


def test_gpu_check_without_cuda_says_to_use_the_dry_run(monkeypatch):
    from wmkit import gpucheck

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="--cpu-dry-run"):
        gpucheck.run_gpu_check(gpucheck.GPUCheckSettings(), log=lambda line: None)
    with pytest.raises(ValueError, match="unknown policy shape"):
        gpucheck.run_gpu_check(gpucheck.GPUCheckSettings(policies=("GPT-5",), device="cpu"), log=lambda line: None)


def test_missing_packages_are_reported_by_name(monkeypatch):
    import importlib.util

    from wmkit import gpucheck

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in ("trl", "bitsandbytes")
                        else real(name, *a))
    assert gpucheck.missing_packages() == ["trl", "bitsandbytes"]
    row = gpucheck.measure_policy("tiny-qwen2", "qlora", gpucheck.GPUCheckSettings.cpu_dry_run(), Path("."))
    assert row.status == "skipped: bitsandbytes not installed (pip install bitsandbytes)"


def test_qwen_shapes_are_the_published_sizes():
    """Parameter counts of the shapes (meta device: no memory) match Qwen2.5's published sizes."""
    from transformers import AutoModelForCausalLM, Qwen2Config

    from wmkit.gpucheck import QWEN25_SHAPES

    published = {"Qwen2.5-0.5B": 0.49e9, "Qwen2.5-1.5B": 1.54e9, "Qwen2.5-3B": 3.09e9, "Qwen2.5-7B": 7.61e9}
    for name, expected in published.items():
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(Qwen2Config(**QWEN25_SHAPES[name]))
        assert abs(models.count_parameters(model) - expected) / expected < 0.02, name


@pytest.mark.parametrize("mode", ["lora", "qlora"])
def test_random_policy_is_built_without_the_meta_device_and_trains(mode):
    """The layer-by-layer build: nothing left on the meta device, tied weights tied, NF4 where asked."""
    if mode == "qlora":
        pytest.importorskip("bitsandbytes")
    from wmkit.gpucheck import build_random_policy, random_prompt

    model, tokenizer = build_random_policy("tiny-qwen2", mode, "cpu")
    assert model.lm_head.weight is model.model.embed_tokens.weight
    assert models.is_nf4(model) == (mode == "qlora")
    prompt = random_prompt(12, model.config.vocab_size, __import__("random").Random(0))
    ids = tokenizer(prompt, return_tensors="pt")["input_ids"]
    assert ids.shape == (1, 12)
    peft_model = models.add_lora(model, r=4, alpha=8, quantized=mode == "qlora", gradient_checkpointing=True)
    peft_model.train()
    peft_model(input_ids=ids, labels=ids).loss.backward()
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for n, p in peft_model.named_parameters()
               if "lora_B" in n)  # B starts at zero, so A gets no gradient at first


# ============================================================================ precision


def fake_gpu(monkeypatch, major: int, minor: int, name: str) -> None:
    """torch.cuda as on a GPU of compute capability major.minor, down to what torch's own
    is_bf16_supported reads (it is not mocked): the device properties, and a bf16 tensor that can be
    made, as torch 2.13 can on a T4 by emulation."""
    import types

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: name)
    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda *a: types.SimpleNamespace(major=major, minor=minor, name=name))
    monkeypatch.setattr(torch.version, "hip", None)
    monkeypatch.setattr(torch.cuda, "_check_bf16_tensor_supported", lambda device: True, raising=False)


def test_fp16_where_the_gpu_has_no_bf16_hardware(monkeypatch):
    """A T4 (compute capability 7.5) has no bf16 hardware, though torch's is_bf16_supported() says yes
    there (emulation): the kit computes in fp16 (AMP with a scaler); bf16 from capability 8 on."""
    assert models.compute_dtype("cpu") == torch.float32
    fake_gpu(monkeypatch, 7, 5, "Tesla T4")
    assert torch.cuda.is_bf16_supported(), "torch counts emulation: the case this test is about"
    assert models.compute_dtype() == torch.float16
    assert models.mixed_precision_flags() == {"bf16": False, "fp16": True}
    fake_gpu(monkeypatch, 8, 0, "NVIDIA A100-SXM4-40GB")
    assert models.compute_dtype() == torch.bfloat16
    assert models.mixed_precision_flags() == {"bf16": True, "fp16": False}


def test_auto_runs_the_cpu_profile_on_a_gpu_the_gpu_profile_was_never_timed_on(monkeypatch, capsys):
    from wmkit import profiles

    fake_gpu(monkeypatch, 7, 5, "Tesla T4")
    monkeypatch.setattr(profiles, "_AUTO_NOTE_SHOWN", set())
    assert profiles.GPU_PROFILE_MEASURED_ON == ()  # no measurement yet (the GPU check fills it)
    assert profiles.resolve_profile_name("auto") == "cpu" and profiles.get_profile("auto").name == "cpu"
    said = capsys.readouterr().out.strip().splitlines()
    assert len(said) == 1 and "PROFILE='gpu' opts into it" in said[0] and "Tesla T4" in said[0]
    assert profiles.resolve_profile_name("gpu") == "gpu"  # asked for by name, it is given
    monkeypatch.setattr(profiles, "GPU_PROFILE_MEASURED_ON", ("T4",))
    assert profiles.resolve_profile_name("auto") == "gpu"


def test_grpo_config_takes_the_precision_flags(tmp_path, monkeypatch):
    from wmkit.core import grpo

    config = grpo.GRPORunConfig(output_dir=str(tmp_path), num_generations=2, prompts_per_step=1, max_steps=1)
    trl_config = grpo.trl_grpo_config(config)
    assert not trl_config.bf16 and not trl_config.fp16  # a CPU: no mixed precision
    seen = {}
    monkeypatch.setattr(models, "mixed_precision_flags", lambda: seen.setdefault("flags", {"bf16": False,
                                                                                          "fp16": False}))
    grpo.trl_grpo_config(config)
    assert seen, "trl_grpo_config does not ask models.mixed_precision_flags"


# ============================================================================ NF4 in memory, QLoRA in RLVR


def test_quantize_nf4_keeps_the_model_close_and_refuses_narrow_layers(nf4_lm, tiny_lm):
    pytest.importorskip("bitsandbytes")
    import copy

    model, tok, _ = nf4_lm
    ids = torch.tensor([tok("take the knife", add_special_tokens=False)["input_ids"]])
    quantized = models.quantize_nf4(copy.deepcopy(model))
    assert models.is_nf4(quantized) and not models.is_nf4(model)
    assert models.count_parameters(quantized) == models.count_parameters(model)  # 4-bit packing undone
    assert type(quantized.lm_head) is torch.nn.Linear  # the output head stays 16-bit, as in QLoRA
    with torch.no_grad():
        before, after = model(input_ids=ids).logits, quantized(input_ids=ids).logits
    assert torch.isfinite(after).all()
    assert (before.argmax(-1) == after.argmax(-1)).float().mean() > 0.5
    with pytest.raises(ValueError, match="cannot NF4-quantize"):
        models.quantize_nf4(copy.deepcopy(tiny_lm[0]))


@pytest.mark.slow
def test_rlvr_qlora_on_a_16bit_model_trains_a_copy_and_saves_adapters_alone(nf4_lm, small_splits, tmp_path):
    """quantized=True on a 16-bit model (the CUDA default for LoRA runs): GRPO on an NF4 copy, the
    caller's model untouched, adapters saved alone, the result the 16-bit model + merged adapters."""
    pytest.importorskip("bitsandbytes")
    from wmkit.core import world_model_rl as rl

    model, tok, _ = nf4_lm
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    data = rl.rl_transitions([t for t in small_splits["train"] if t.env == "phone"], 0.25, seed=0)
    config = rl.RLVRConfig(output_dir=str(tmp_path / "rl"), num_generations=2, prompts_per_step=2, max_steps=1,
                           learning_rate=5e-2, max_completion_length=8, show_progress=False, quantized=True,
                           resume=False, merge_adapters=True)
    assert config.uses_qlora() and config.uses_gradient_checkpointing()
    result = rl.train_rlvr(model, tok, data, config,
                           reward_funcs=[lambda completions, **kw: [len(c) / 50 for c in completions]])
    assert all(torch.equal(p, before[n]) for n, p in model.named_parameters())
    assert not models.is_nf4(result.model) and not hasattr(result.model, "peft_config")
    adapter = tmp_path / "rl" / models.ADAPTER_FOLDER
    assert (adapter / "adapter_config.json").exists() and (adapter / "adapter_model.safetensors").exists()
    assert not (adapter / "model.safetensors").exists()
    assert (tmp_path / "rl" / "merged" / "model.safetensors").exists()
    moved = sum(float((p - before[n]).abs().sum()) for n, p in result.model.named_parameters() if n in before)
    assert moved > 0


def test_rlvr_quantization_is_automatic_only_with_cuda_and_lora(tmp_path, monkeypatch):
    from wmkit.core import world_model_rl as rl

    config = rl.RLVRConfig(output_dir=str(tmp_path), max_steps=1)
    assert config.quantized is None and not config.uses_qlora()  # a CPU
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert config.uses_qlora() and config.uses_gradient_checkpointing()
    assert not rl.RLVRConfig(output_dir=str(tmp_path), lora=False, max_steps=1).uses_qlora()
    with pytest.raises(ValueError, match="lora=True"):
        rl.RLVRConfig(output_dir=str(tmp_path), lora=False, quantized=True, max_steps=1).check()


def test_qlora_trains_one_group_per_micro_batch_with_the_same_optimizer_step(tmp_path, monkeypatch):
    from wmkit.core import grpo
    from wmkit.core import world_model_rl as rl

    assert grpo.micro_batches(16, 8) == {"per_device_train_batch_size": 128, "gradient_accumulation_steps": 1}
    assert grpo.micro_batches(16, 8, 1) == {"per_device_train_batch_size": 8, "gradient_accumulation_steps": 16}
    with pytest.raises(grpo.GRPOArgsError, match="must divide"):
        grpo.micro_batches(16, 8, 3)
    config = rl.RLVRConfig(output_dir=str(tmp_path), prompts_per_step=16, num_generations=8, max_steps=1)
    assert grpo.check_grpo(config, config.uses_qlora())["per_device_train_batch_size"] == 128  # a CPU: one pass
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    batches = grpo.check_grpo(config, config.uses_qlora())
    assert (batches["per_device_train_batch_size"], batches["gradient_accumulation_steps"]) == (8, 16)  # 128 a step


def test_merge_adapters_refuses_a_4bit_base(nf4_lm, tmp_path):
    pytest.importorskip("bitsandbytes")
    import copy

    with pytest.raises(ValueError, match="16-bit base"):
        models.merge_adapters(models.quantize_nf4(copy.deepcopy(nf4_lm[0])), tmp_path)


# ============================================================================ model choice, vLLM


def test_gpu_profile_defaults_to_the_pretrained_model_and_smollm2_offline(monkeypatch, capsys):
    from wmkit.profiles import PROFILES

    assert PROFILES["gpu"].default_model == models.PRETRAINED
    assert PROFILES["cpu"].default_model == PROFILES["smoke"].default_model == "tiny"
    assert models.resolve_model_name(None, "tiny") == "tiny"
    assert models.resolve_model_name("some/model", models.PRETRAINED) == "some/model"  # MODEL overrides
    monkeypatch.setattr(models, "_cached_on_disk", lambda name: False)
    monkeypatch.setattr(models, "_hub_reachable", lambda *a, **k: False)
    assert models.resolve_model_name(None, models.PRETRAINED) == "smollm2"
    assert "offline" in capsys.readouterr().out
    monkeypatch.setattr(models, "_cached_on_disk", lambda name: name == models.GPU_HUB_MODEL)
    assert models.resolve_model_name(models.PRETRAINED) == models.GPU_HUB_MODEL


def test_vllm_is_off_by_default_and_asking_without_it_fails_in_one_line(monkeypatch, tmp_path):
    import importlib.util

    from wmkit.core import grpo
    from wmkit.core import world_model_rl as rl

    monkeypatch.delenv(grpo.VLLM_ENV, raising=False)
    assert not rl.RLVRConfig(output_dir="x", max_steps=1).use_vllm
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "vllm" else real(name, *a))
    with pytest.raises(grpo.GRPOArgsError, match="vLLM is not installed.*pip install vllm") as error:
        grpo.request_vllm()
    assert "\n" not in str(error.value) and grpo.VLLM_ENV not in os.environ
    monkeypatch.setenv(grpo.VLLM_ENV, "1")  # asked for where it is installed: the configs follow
    assert rl.RLVRConfig(output_dir="x", max_steps=1).use_vllm
    grpo.request_vllm(False)
    assert not grpo.vllm_requested()


def test_command_line_gpu_check_help_and_vllm_flag():
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "wmkit", *args], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=300, check=False)

    done = cli("--help")
    assert done.returncode == 0 and "gpu-check" in done.stdout
    done = cli("gpu-check", "--help")
    assert done.returncode == 0 and "--cpu-dry-run" in done.stdout and "--time-budget" in done.stdout
    done = cli("run", "wmrl", "--profile", "smoke", "--vllm")
    assert done.returncode == 2 and "--vllm not an option of wmrl" in done.stderr
    if importlib.util.find_spec("vllm") is None:
        done = cli("run", "rlvr-world", "--profile", "smoke", "--vllm", "--seeds", "1")
        assert done.returncode == 2 and "vLLM is not installed" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_gpu_check_exits_non_zero_when_a_row_ends_in_an_error(monkeypatch, capsys):
    """Out of memory and skipped rows are measurements (exit 0); a row that raised is not (exit 1,
    one line naming the rows)."""
    from wmkit import __main__ as cli
    from wmkit import gpucheck

    rows = {"policies": [{"name": "tiny-qwen2 lora", "status": "ok"}, {"name": "Qwen2.5-7B lora", "status": "OOM (at step)"}],
            "profile_steps": [{"name": "gpu: SFT step", "status": "skipped: time budget (420 s) spent"}]}
    monkeypatch.setattr(gpucheck, "run_gpu_check", lambda settings, out: rows)
    assert cli.main(["gpu-check", "--cpu-dry-run"]) == 0
    rows["profile_steps"].append({"name": "gpu: RLVR step", "status": "error: RuntimeError: boom"})
    assert cli.main(["gpu-check", "--cpu-dry-run"]) == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        "wmkit: gpu-check: 1 row(s) ended in an error: gpu: RLVR step"]


def test_version_is_the_packages():
    import tomllib

    from wmkit import __main__ as cli
    from wmkit import __version__

    assert __version__ == tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0


# ============================================================================ on a GPU


@pytest.mark.gpu
def test_gpu_check_runs_on_cuda_with_a_small_shape(tmp_path):
    """The real command on this GPU, kept short: the tiny shape in both modes, no profile steps."""
    from wmkit import gpucheck

    settings = gpucheck.GPUCheckSettings(policies=("tiny-qwen2",), profile_steps=False)
    report = gpucheck.run_gpu_check(settings, tmp_path / "gpu.json", log=lambda line: None)
    for row in report["policies"]:
        assert row["status"] == "ok", row
        assert row["values"]["peak_gib"] > 0 and row["values"]["generated_tokens_per_s"] > 0
    assert report["compute_dtype"] in ("bfloat16", "float16")


@pytest.mark.gpu
def test_qlora_weights_on_cuda_are_4bit_and_compute_in_half_precision(nf4_lm):
    pytest.importorskip("bitsandbytes")
    import copy

    model, tok, _ = nf4_lm
    quantized = models.quantize_nf4(copy.deepcopy(model).to("cuda"))
    layer = quantized.model.layers[0].self_attn.q_proj
    assert type(layer).__name__ == "Linear4bit" and layer.compute_dtype == models.compute_dtype()
    ids = torch.tensor([tok("take the knife", add_special_tokens=False)["input_ids"]], device="cuda")
    with torch.no_grad():
        assert torch.isfinite(quantized(input_ids=ids).logits).all()


@pytest.mark.slow
def test_wm_r1_pretrained_policy_trains_qlora_adapters_through_sft_and_grpo(nf4_lm, tmp_path):
    """The GPU path of notebook 03 on a CPU: a saved "pretrained" policy loaded in NF4 gets LoRA
    adapters before the SFT warm start; GRPO trains the same adapters (no second set), keeps them
    apart from the 4-bit weights and saves them alone."""
    pytest.importorskip("bitsandbytes")
    from wmkit.envs import phone
    from wmkit.wm_r1 import agent as ag
    from wmkit.wm_r1 import experiment as wx
    from wmkit.wm_r1 import tasks as wm_tasks
    from wmkit.wm_r1.method import WMR1Config, train_wm_r1

    model, tok, config = nf4_lm
    models.save_model(model, tok, tmp_path / "policy", tiny_config=config)
    sizes = WM_R1["smoke"]
    train, _ = wm_tasks.task_templates(3)
    tasks = wm_tasks.unique_tasks(4, 0, train)
    policy, tokenizer = wx.build_policy(sizes, tasks, 0, str(tmp_path / "policy"), quantization="nf4")
    assert models.is_nf4(policy) and hasattr(policy, "peft_config")
    examples = wm_tasks.sft_examples(tokenizer, tasks, 0.3, 0, 4096)
    lora_before = {n: p.detach().clone() for n, p in policy.named_parameters() if p.requires_grad}
    assert lora_before and all("lora" in n for n in lora_before)
    wx.train_policy_sft(policy, tokenizer, examples, epochs=1, learning_rate=1e-2, batch_size=4, seed=0,
                        progress=False)
    assert any(not torch.equal(p, lora_before[n]) for n, p in policy.named_parameters() if n in lora_before)
    wm = ag.WorldModelSource(lambda pairs: [phone.compute_diff(s, s) for s, _ in pairs])
    run = WMR1Config(output_dir=str(tmp_path / "grpo"), max_steps=1, num_generations=2, prompts_per_step=2,
                     max_episode_steps=2, max_turn_tokens=8, lora=True, show_progress=False)
    result = train_wm_r1(run, policy, tokenizer, tasks, wm)
    assert models.is_nf4(result.model) and hasattr(result.model, "peft_config")
    assert list(result.model.peft_config) == ["default"]  # the SFT's adapters, not a second set
    assert (tmp_path / "grpo" / models.ADAPTER_FOLDER / "adapter_config.json").exists()
