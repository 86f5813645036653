import pytest
import torch

from wmkit.core.grpo import GRPOArgsError, GRPORunConfig, check_grpo, trl_grpo_config
from wmkit.core.sft import CompletionOnlyCollator, SFTConfig, tokenize_sft_examples, train_sft


def test_completion_only_labels_mask_the_prompt(tiny_lm, small_splits):
    _, tok, _ = tiny_lm
    examples, dropped = tokenize_sft_examples(tok, small_splits["train"][:5], max_length=4096)
    assert dropped == 0
    for ex, t in zip(examples, small_splits["train"][:5]):
        target = [i for i in ex["labels"] if i != -100]
        assert tok.decode(target[:-1]) == t.diff and target[-1] == tok.eos_token_id
        n_prompt = ex["labels"].count(-100)
        assert ex["labels"][:n_prompt] == [-100] * n_prompt  # the mask is a prefix
    batch = CompletionOnlyCollator(tok.pad_token_id)(examples[:3])
    assert batch["input_ids"].shape == batch["labels"].shape == batch["attention_mask"].shape
    _, dropped = tokenize_sft_examples(tok, small_splits["train"][:5], max_length=8)
    assert dropped == 5


def test_sft_lowers_the_loss_and_changes_parameters(tiny_lm, small_splits, tmp_path):
    from wmkit.core.models import build_tiny_model

    _, tok, config = tiny_lm
    model = build_tiny_model(tok, config, seed=0)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    result = train_sft(model, tok, small_splits["train"][:48], small_splits["val"][:8],
                       SFTConfig(output_dir=str(tmp_path), epochs=2, batch_size=8, learning_rate=3e-3,
                                 logging_steps=1, show_progress=False))
    losses = [r["loss"] for r in result.log_history if "loss" in r]
    assert result.steps == 12 and losses[-1] < losses[0]
    assert any("eval_loss" in r for r in result.log_history)
    assert any(not torch.equal(p, before[n]) for n, p in model.named_parameters())


def test_killed_and_resumed_sft_ends_with_the_same_parameters(tiny_lm, small_splits, tmp_path):
    from transformers import TrainerCallback

    from wmkit.core.models import build_tiny_model

    _, tok, config = tiny_lm
    train = small_splits["train"][:48]

    class KillAfterStep6(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step == 6:
                control.should_training_stop = True

    def cfg(folder):
        return SFTConfig(output_dir=str(tmp_path / folder), epochs=2, batch_size=8, learning_rate=3e-3,
                         save_steps=6, show_progress=False)

    uninterrupted = build_tiny_model(tok, config, seed=0)
    train_sft(uninterrupted, tok, train, [], cfg("a"))
    killed = build_tiny_model(tok, config, seed=0)
    train_sft(killed, tok, train, [], cfg("b"), callbacks=[KillAfterStep6()])
    resumed = build_tiny_model(tok, config, seed=0)
    result = train_sft(resumed, tok, train, [], cfg("b"))
    assert result.extra["resumed_from"].endswith("checkpoint-6") and result.steps == 12
    for (name, p), q in zip(uninterrupted.named_parameters(), resumed.parameters()):
        assert torch.allclose(p, q, atol=1e-6), name
    # Asked again, the finished run is loaded from its last checkpoint, not trained a step further.
    rerun = build_tiny_model(tok, config, seed=0)
    again = train_sft(rerun, tok, train, [], cfg("a"))
    assert again.extra["resumed_from"].endswith("checkpoint-12") and again.steps == 12
    for (name, p), q in zip(uninterrupted.named_parameters(), rerun.parameters()):
        assert torch.allclose(p, q, atol=1e-6), name


def test_sft_config_rejects_bad_values():
    with pytest.raises(ValueError, match="learning_rate"):
        SFTConfig(output_dir="x", learning_rate=-1)
    with pytest.raises(ValueError, match="batch_size"):
        SFTConfig(output_dir="x", batch_size="16")


def test_grpo_settings_that_cannot_work_fail_in_one_line():
    with pytest.raises(GRPOArgsError, match="at least 2"):
        check_grpo(GRPORunConfig(output_dir="x", num_generations=1, max_steps=1))
    with pytest.raises(GRPOArgsError, match="must divide prompts_per_step 4"):
        check_grpo(GRPORunConfig(output_dir="x", prompts_per_step=4, prompts_per_micro_batch=3, max_steps=1))
    with pytest.raises(GRPOArgsError, match="scale_rewards"):
        check_grpo(GRPORunConfig(output_dir="x", scale_rewards="std", max_steps=1))
    assert check_grpo(GRPORunConfig(output_dir="x", num_generations=8, prompts_per_step=2, max_steps=1)) == {
        "per_device_train_batch_size": 16, "gradient_accumulation_steps": 1}


def test_grpo_settings_map_onto_trl(tmp_path):
    config = trl_grpo_config(GRPORunConfig(output_dir=str(tmp_path), num_generations=4, prompts_per_step=2,
                                           beta=0.001, scale_rewards="none", max_steps=1))
    assert config.num_generations == 4 and config.beta == 0.001 and config.scale_rewards == "none"
    assert config.per_device_train_batch_size == 8 and config.report_to == []


def test_trl_arguments_pass_through_and_unknown_ones_fail_in_one_line(tmp_path):
    """Any other GRPOConfig / TrainingArguments field reaches TRL as it is; a misspelt one, or one the kit's
    config sets itself, is one ValueError naming it."""
    from wmkit.core.grpo import check_trl_args

    config = GRPORunConfig(output_dir=str(tmp_path), num_generations=2, prompts_per_step=1, max_steps=1,
                           trl_args={"report_to": "tensorboard", "logging_steps": 7, "hub_model_id": "me/wm"})
    trl_config = trl_grpo_config(config, logging_steps=1)  # the pass-through wins over the kit's run settings
    assert (trl_config.report_to, trl_config.logging_steps, trl_config.hub_model_id) == (["tensorboard"], 7, "me/wm")
    with pytest.raises(ValueError, match="unknown TRL argument 'report_too'.*did you mean report_to"):
        check_trl_args({"report_too": "wandb"})
    with pytest.raises(ValueError, match="num_generations is a setting of the kit's config"):
        check_trl_args({"num_generations": 4})
    with pytest.raises(ValueError, match="not a field of TrainingArguments"):
        check_trl_args({"beta": 0.1}, "sft")  # a GRPOConfig field, not the Trainer's
    assert check_trl_args({"report_to": "none"}, "sft") == {"report_to": "none"}


def test_kit_loss_honours_num_items_in_batch_as_transformers_does(tiny_lm, small_splits, tmp_path):
    """The kit's Trainer loss (logits only at targets) equals transformers' own causal-LM loss for
    the same batch and the same `num_items_in_batch`: a mean over the batch's target tokens without
    it, the sum over the whole step's count with it (a step split in micro-batches or processes)."""
    from transformers import TrainingArguments

    from wmkit.core.models import build_tiny_model
    from wmkit.core.sft import _completion_only_trainer_class

    _, tok, config = tiny_lm
    model = build_tiny_model(tok, config, seed=0)
    examples, _ = tokenize_sft_examples(tok, small_splits["train"][:4], max_length=4096)
    batch = CompletionOnlyCollator(tok.pad_token_id)(examples)
    targets = int((batch["labels"][:, 1:] != -100).sum())
    args = TrainingArguments(output_dir=str(tmp_path), use_cpu=True, report_to="none")
    trainer = _completion_only_trainer_class()(model=model, args=args, data_collator=CompletionOnlyCollator(tok.pad_token_id))
    with torch.no_grad():
        reference = model(**batch).loss  # transformers' mean over target tokens
        assert torch.allclose(trainer.compute_loss(model, batch), reference, atol=1e-6)
        for count in (targets, 3 * targets):  # this batch alone; one micro-batch of three
            kit = trainer.compute_loss(model, batch, num_items_in_batch=torch.tensor(count))
            theirs = super(type(trainer), trainer).compute_loss(model, batch, num_items_in_batch=torch.tensor(count))
            assert torch.allclose(kit, theirs, atol=1e-6) and torch.allclose(kit, reference * targets / count, atol=1e-6)


@pytest.mark.parametrize("lora", [None, (4, 8)])
def test_train_grpo_saves_the_final_weights_and_returns_a_plain_trained_model(tiny_lm, tmp_path, lora):
    """The one GRPO run of RLVR and WM-R1: every parameter trained (saved whole in final/) or LoRA
    adapters added, saved in adapter/ and merged back; either way a plain model whose weights moved."""
    import copy

    from datasets import Dataset

    from wmkit.core.grpo import train_grpo

    model, tok, _ = tiny_lm
    policy = copy.deepcopy(model)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    tok.padding_side = "left"
    args = trl_grpo_config(GRPORunConfig(output_dir=str(tmp_path / "checkpoints"), num_generations=2,
                                         prompts_per_step=2, max_steps=2, learning_rate=1e-2, max_completion_length=6),
                           logging_steps=1, save_strategy="no", disable_tqdm=True)
    dataset = Dataset.from_dict({"prompt": ["go north", "take key", "open door", "look"]})
    # A reward that varies within each group: longer completions score higher.
    run = train_grpo(policy, tok, args, dataset, [lambda completions, **kw: [len(c) / 10 for c in completions]],
                     output_dir=tmp_path, lora=lora, show_progress=False)
    assert run.global_step == 2 and any("loss" in row for row in run.log_history)
    assert not hasattr(run.model, "peft_config")  # adapters merged back
    assert (run.adapter_dir is not None) == (lora is not None)
    assert (tmp_path / ("adapter" if lora else "final") / ("adapter_config.json" if lora else "config.json")).exists()
    moved = dict(run.model.named_parameters())
    assert any(not torch.equal(moved[n], p) for n, p in before.items())


@pytest.mark.parametrize("make", ["rlvr", "grpo_run", "wm_r1"])
def test_step_counts_have_no_default(make):
    """A run's optimizer steps come from its paper's config: a config without them is an error, not a
    silent default that no profile uses."""
    from wmkit.core.world_model_rl import RLVRConfig
    from wmkit.wm_r1.method import WMR1Config

    build = {"rlvr": RLVRConfig, "grpo_run": GRPORunConfig, "wm_r1": WMR1Config}[make]
    with pytest.raises(TypeError, match="'max_steps'"):
        build(output_dir="x")


def test_rlvr_and_wm_r1_reach_trl_through_the_one_conversion(tmp_path, monkeypatch):
    """RLVR's and WM-R1's configs are the GRPO knobs plus their own fields: the same shared values
    reach trl.GRPOConfig the same way, through wmkit.core.grpo.trl_grpo_config (train_wm_r1 included)."""
    from wmkit.core import grpo
    from wmkit.core.world_model_rl import RLVRConfig
    from wmkit.wm_r1 import method
    from wmkit.wm_r1 import tasks as wm_tasks

    shared = {"max_steps": 5, "num_generations": 4, "prompts_per_step": 2, "learning_rate": 3e-4,
              "temperature": 0.7, "max_completion_length": 64, "seed": 3}
    rlvr = RLVRConfig(output_dir=str(tmp_path / "rlvr"), **shared)
    wm_r1 = method.WMR1Config(output_dir=str(tmp_path / "wm_r1"), **shared)
    assert isinstance(rlvr, GRPORunConfig) and isinstance(wm_r1, GRPORunConfig)
    assert wm_r1.max_episode_steps == 7 and wm_r1.max_steps == 5  # the episode's budget is not the run's

    built, real = [], grpo.trl_grpo_config

    class Built(Exception):
        pass

    def spy(config, **kwargs):
        built.append(real(config, **kwargs))
        if isinstance(config, method.WMR1Config):
            raise Built
        return built[-1]

    monkeypatch.setattr(method, "trl_grpo_config", spy)
    monkeypatch.setattr("wmkit.core.world_model_rl.trl_grpo_config", spy)
    rlvr.trl_config()
    train, _ = wm_tasks.task_templates(3)
    with pytest.raises(Built):  # train_wm_r1 converts its config through the same function, then stops here
        method.train_wm_r1(wm_r1, torch.nn.Linear(2, 2), None, wm_tasks.unique_tasks(2, 0, train), None)
    for config, settings in zip((rlvr, wm_r1), built):
        assert (settings.max_steps, settings.num_generations, settings.learning_rate, settings.temperature,
                settings.max_completion_length, settings.seed) == (5, 4, 3e-4, 0.7, 64, 3)
        assert (settings.per_device_train_batch_size, settings.gradient_accumulation_steps) == (8, 1)
        assert settings.scale_rewards == config.scale_rewards  # RLVR 'group', WM-R1 'none'
    assert built[0].output_dir == str(tmp_path / "rlvr" / "checkpoints") and not built[1].use_vllm
