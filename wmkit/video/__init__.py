"""RLVR-World's video half at a size for 2 CPU cores: MiniGrid frames, a patch tokenizer, a tiny
autoregressive next-frame model trained by MLE and then by GRPO on a pixel reward (notebook 06)."""
