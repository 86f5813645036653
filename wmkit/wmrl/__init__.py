"""WMRL (Yang et al., 2026): world-model RL with anchored, debiased and denoised rewards."""
