"""LoRA goes on one way: `wmkit.core.models.add_lora`, before any trainer sees the model."""
import copy
import re
import tempfile
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent



def test_adapters_are_added_only_by_models_add_lora():
    other_ways = []
    for path in sorted((REPO / "wmkit").rglob("*.py")):
        name = path.relative_to(REPO).as_posix()
        if name == "wmkit/core/models.py":
            continue
        text = path.read_text()
        if re.search(r"\bget_peft_model\(|\bpeft_config\s*=", text):
            other_ways.append(name)
    assert not other_ways, f"LoRA added another way than models.add_lora in: {other_ways}"


def test_add_lora_trains_exactly_like_trls_peft_config():
    """The kit's way (a PeftModel from add_lora handed to GRPOTrainer) and TRL's documented way
    (`peft_config=`) give the same run: same logged losses, rewards and KL, same adapter weights.
    (With beta > 0 TRL keeps a frozen copy of a given adapter as the reference; zero-initialised
    LoRA makes that copy the base model, which is the reference of the peft_config way.)"""
    import torch
    from datasets import Dataset
    from transformers import set_seed
    from trl import GRPOConfig, GRPOTrainer

    from wmkit.core import models
    from wmkit.runs import stop_printing_logs

    tokenizer = models.train_tokenizer(["the cat sat on the mat", "a dog ran to the park", "open the box"], vocab_size=300)
    tokenizer.padding_side = "left"
    base = models.build_tiny_model(tokenizer, models.TinyModelConfig(hidden_size=32, num_layers=2, num_heads=2,
                                                                     intermediate_size=64, vocab_size=300), seed=0)

    def reward(completions, **_):
        return [float(len(c) % 3) for c in completions]

    runs = {}
    for way in ("add_lora", "peft_config"):
        set_seed(0)
        with tempfile.TemporaryDirectory() as out, warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            config = GRPOConfig(output_dir=out, num_generations=4, per_device_train_batch_size=4, max_steps=3,
                                learning_rate=1e-2, beta=0.01, max_completion_length=8, use_cpu=True, report_to="none",
                                logging_steps=1, save_strategy="no", disable_tqdm=True, seed=0)
            model = copy.deepcopy(base)
            extra = {}
            if way == "add_lora":
                model = models.add_lora(model, r=8, alpha=16)
            else:
                extra["peft_config"] = models.lora_config(r=8, alpha=16)
            trainer = GRPOTrainer(model=model, args=config, reward_funcs=[reward], processing_class=tokenizer,
                                  train_dataset=Dataset.from_list([{"prompt": "the cat"}] * 12), **extra)
            stop_printing_logs(trainer)
            trainer.train()
        runs[way] = ([(h["loss"], h["reward"], h["kl"]) for h in trainer.state.log_history if "reward" in h],
                     {n: p.detach() for n, p in trainer.model.named_parameters() if p.requires_grad and ".ref." not in n})
    (logs_a, weights_a), (logs_b, weights_b) = runs["add_lora"], runs["peft_config"]
    assert len(logs_a) == 3 and logs_a == logs_b
    assert weights_a.keys() == weights_b.keys() and weights_a
    assert all(torch.equal(weights_a[n], weights_b[n]) for n in weights_a)
    assert any(float(w.abs().max()) > 0 for n, w in weights_a.items() if "lora_B" in n)  # the adapters trained
