"""Shared machinery of every paper: models, world-model prompts, SFT, GRPO settings, world-model builds."""
